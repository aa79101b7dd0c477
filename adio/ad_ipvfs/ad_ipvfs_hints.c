/* Hints: ROMIO's generic ones plus striping_unit, striping_factor,
 * ipvfs_map and the ipvfs_ data path options.  ROMIO ignores errors of
 * SetInfo at open time, so the values are kept raw here and checked by the
 * open (ad_ipvfs_open.c), which can fail all ranks alike.  After the open,
 * SetInfo applies new ipvfs_ options and reports a malformed one. */
#include "ad_ipvfs.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/size.h"

static const char *const ipvfs_keys[] = {
    "striping_unit", "striping_factor", "ipvfs_map", "ipvfs_io_schedule",
    "ipvfs_schedule_block", "ipvfs_listio", "ipvfs_coll_align", "ipvfs_coll",
    "ipvfs_readahead", "ipvfs_qos_class", "ipvfs_qos_rate", "ipvfs_qos_latency"
};

static const char *const schedule_names[] = {
    [IPVFS_SCHED_HASH] = "hash",[IPVFS_SCHED_FIRST] = "first",[IPVFS_SCHED_RANDOM] = "random"
};

/* Copies the user's values of our keys into fd->info as they are. */
static void keep_raw(ADIO_File fd, MPI_Info users_info)
{
    char value[MPI_MAX_INFO_VAL + 1];
    int flag;

    for (size_t i = 0; i < sizeof(ipvfs_keys) / sizeof(ipvfs_keys[0]); i++) {
        ADIOI_Info_get(users_info, ipvfs_keys[i], MPI_MAX_INFO_VAL, value, &flag);
        if (flag)
            ADIOI_Info_set(fd->info, ipvfs_keys[i], value);
    }
}

static int bad_hint(const char *filename, const char *key, const char *value, const char *want,
                    struct ipvfs_error *out_err)
{
    out_err->code = EINVAL;
    snprintf(out_err->msg, sizeof(out_err->msg),
             "ipvfs: options of %.200s: hint %s=\"%.64s\" is not %s", filename, key, value, want);
    return -EINVAL;
}

/* enable|disable into *out_disabled. */
static int parse_switch(MPI_Info info, const char *filename, const char *key, int *out_disabled,
                        struct ipvfs_error *out_err)
{
    char value[MPI_MAX_INFO_VAL + 1];
    int flag;

    ADIOI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
    if (!flag)
        return 0;
    if (strcmp(value, "enable") && strcmp(value, "disable"))
        return bad_hint(filename, key, value, "enable or disable", out_err);
    *out_disabled = strcmp(value, "disable") == 0;
    return 0;
}

static int parse_schedule(MPI_Info info, const char *filename, enum ipvfs_schedule *out,
                          struct ipvfs_error *out_err)
{
    char value[MPI_MAX_INFO_VAL + 1];
    int flag;

    ADIOI_Info_get(info, "ipvfs_io_schedule", MPI_MAX_INFO_VAL, value, &flag);
    if (!flag)
        return 0;
    for (size_t i = 0; i < sizeof(schedule_names) / sizeof(schedule_names[0]); i++) {
        if (strcmp(value, schedule_names[i]) == 0) {
            *out = (enum ipvfs_schedule) i;
            return 0;
        }
    }
    return bad_hint(filename, "ipvfs_io_schedule", value, "first, random or hash", out_err);
}

/* ipvfs|generic into *out_generic. */
static int parse_coll(MPI_Info info, const char *filename, int *out_generic,
                      struct ipvfs_error *out_err)
{
    char value[MPI_MAX_INFO_VAL + 1];
    int flag;

    ADIOI_Info_get(info, "ipvfs_coll", MPI_MAX_INFO_VAL, value, &flag);
    if (!flag)
        return 0;
    if (strcmp(value, "ipvfs") && strcmp(value, "generic"))
        return bad_hint(filename, "ipvfs_coll", value, "ipvfs or generic", out_err);
    *out_generic = strcmp(value, "generic") == 0;
    return 0;
}

static int parse_block(MPI_Info info, const char *filename, uint64_t * out,
                       struct ipvfs_error *out_err)
{
    char value[MPI_MAX_INFO_VAL + 1];
    uint64_t v;
    int flag;

    ADIOI_Info_get(info, "ipvfs_schedule_block", MPI_MAX_INFO_VAL, value, &flag);
    if (!flag)
        return 0;
    if (size_parse(value, &v) < 0 || v == 0 || v > INT_MAX)
        return bad_hint(filename, "ipvfs_schedule_block", value,
                        "a size from 1 to 2147483647 bytes (" SIZE_RULE ")", out_err);
    *out = v;
    return 0;
}

/* ipvfs_readahead: a size from 0 (off) to IPVFS_MAX_READAHEAD. */
static int parse_readahead(MPI_Info info, const char *filename, struct ipvfs_io_opts *io,
                           struct ipvfs_error *out_err)
{
    char value[MPI_MAX_INFO_VAL + 1];
    uint64_t v;
    int flag;

    ADIOI_Info_get(info, "ipvfs_readahead", MPI_MAX_INFO_VAL, value, &flag);
    if (!flag)
        return 0;
    if (size_parse(value, &v) < 0 || v > IPVFS_MAX_READAHEAD)
        return bad_hint(filename, "ipvfs_readahead", value,
                        "a size from 0 (off) to 1G (" SIZE_RULE ")", out_err);
    io->readahead_set = 1;
    io->readahead = v;
    return 0;
}

int ADIOI_IPVFS_Parse_opts(MPI_Info info, const char *filename, struct ADIOI_IPVFS_opts *opts,
                           struct ipvfs_error *out_err)
{
    struct ADIOI_IPVFS_opts o = *opts;

    if (info == MPI_INFO_NULL)
        return 0;
    if (parse_schedule(info, filename, &o.io.schedule, out_err) < 0 ||
        parse_block(info, filename, &o.io.block, out_err) < 0 ||
        parse_readahead(info, filename, &o.io, out_err) < 0 ||
        parse_switch(info, filename, "ipvfs_listio", &o.piecewise, out_err) < 0 ||
        parse_switch(info, filename, "ipvfs_coll_align", &o.coll_unaligned, out_err) < 0 ||
        parse_coll(info, filename, &o.coll_generic, out_err) < 0)
        return -EINVAL;
    *opts = o;
    return 0;
}

/* After the open, fd->info shows what is in effect, whatever later calls
 * ask: a file's striping never changes.  ROMIO's two-phase code aligns
 * its file domains to hints->striping_unit when it is above 0. */
static void show_in_effect(ADIO_File fd)
{
    const struct ADIOI_IPVFS_fs *fs = fd->fs_ptr;
    const struct ipvfs_file *f = fs->file;
    char value[32];

    snprintf(value, sizeof(value), "%llu", (unsigned long long) f->entry.stripe_unit);
    ADIOI_Info_set(fd->info, "striping_unit", value);
    snprintf(value, sizeof(value), "%u", fs->factor_all ? 0 : f->entry.stripe_factor);
    ADIOI_Info_set(fd->info, "striping_factor", value);
    ADIOI_Info_set(fd->info, "ipvfs_io_schedule", schedule_names[f->opts.schedule]);
    snprintf(value, sizeof(value), "%llu", (unsigned long long) f->opts.block);
    ADIOI_Info_set(fd->info, "ipvfs_schedule_block", value);
    ADIOI_Info_set(fd->info, "ipvfs_listio", fs->opts.piecewise ? "disable" : "enable");
    if (f->opts.readahead_set) {
        snprintf(value, sizeof(value), "%llu", (unsigned long long) f->opts.readahead);
        ADIOI_Info_set(fd->info, "ipvfs_readahead", value);
    }
    ADIOI_Info_set(fd->info, "ipvfs_coll_align", fs->opts.coll_unaligned ? "disable" : "enable");
    ADIOI_Info_set(fd->info, "ipvfs_coll", fs->opts.coll_generic ? "generic" : "ipvfs");
    fd->hints->striping_unit = fs->opts.coll_unaligned ? 0 : (int) f->entry.stripe_unit;
    fd->hints->striping_factor = (int) f->entry.stripe_factor;
}

int ADIOI_IPVFS_Apply_opts(ADIO_File fd, const struct ADIOI_IPVFS_opts *opts,
                           struct ipvfs_error *out_err)
{
    struct ADIOI_IPVFS_fs *fs = fd->fs_ptr;
    int rc = ipvfs_file_set_opts(fs->file, &opts->io, out_err);

    if (rc < 0)
        return rc;
    fs->opts = *opts;
    show_in_effect(fd);
    return 0;
}

void ADIOI_IPVFS_SetInfo(ADIO_File fd, MPI_Info users_info, int *error_code)
{
    static char myname[] = "ADIOI_IPVFS_SETINFO";
    struct ADIOI_IPVFS_fs *fs = fd->fs_ptr;
    struct ADIOI_IPVFS_opts opts;
    struct ipvfs_error err = { 0 };

    ADIOI_GEN_SetInfo(fd, users_info, error_code);
    if (*error_code != MPI_SUCCESS)
        return;
    if (!fs) {
        if (users_info != MPI_INFO_NULL)
            keep_raw(fd, users_info);
        return;
    }
    opts = fs->opts;
    if (ADIOI_IPVFS_Parse_opts(users_info, fd->filename, &opts, &err) < 0 ||
        ADIOI_IPVFS_Apply_opts(fd, &opts, &err) < 0) {
        *error_code = ADIOI_IPVFS_Error(myname, __LINE__, &err);
        show_in_effect(fd);
    }
}

/* Called by the open before Apply_opts, while fd->info still holds the
 * user's raw striping_factor (keep_raw).  The value 0 means "all I/O
 * nodes"; when the file is striped over all of them, 0 is the setting in
 * effect, and get_info says so as the user wrote it (ROMIO's file_info test
 * creates a file with striping_factor=0 and expects get_info to give 0
 * back).  fd->hints keeps the real count for ROMIO's own code. */
int ADIOI_IPVFS_Factor_all(ADIO_File fd)
{
    const struct ipvfs_file *f = ADIOI_IPVFS_File(fd);
    char value[MPI_MAX_INFO_VAL + 1], *end;
    int flag;

    ADIOI_Info_get(fd->info, "striping_factor", MPI_MAX_INFO_VAL, value, &flag);
    return flag && value[0] != '\0' && strtoull(value, &end, 10) == 0 && *end == '\0' &&
        f->entry.stripe_factor == ipvfs_client_nio(f->client);
}

void ADIOI_IPVFS_Show_hints(ADIO_File fd, const char *map_path)
{
    ADIOI_Info_set(fd->info, "ipvfs_map", map_path);
    show_in_effect(fd);
}
