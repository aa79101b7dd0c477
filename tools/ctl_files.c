/* ipvfs-ctl stat, mv and df: thin users of the client library's attribute,
 * rename and statfs calls (adio/client/attr.c).  Also the parser of ipvfs: paths that
 * cp (ctl_cp.c) shares. */
#include "tools/ctl_files.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CTL_PREFIX "ipvfs:"
/* stat lists datafiles of files striped over at most this many I/O nodes. */
#define CTL_MAX_DATAFILES_SHOWN 1024

int ctl_ipvfs_path(const char *text, int plain_ok, char *out, size_t out_len)
{
    size_t n = 0;

    if (strncmp(text, CTL_PREFIX, strlen(CTL_PREFIX)) == 0)
        text += strlen(CTL_PREFIX);
    else if (!plain_ok)
        return 0;
    if (text[0] != '/')
        return -1;
    for (const char *p = text; *p; p++) {
        if (*p == '/' && n > 0 && out[n - 1] == '/')
            continue;
        if (n + 2 > out_len)
            return -1;
        out[n++] = *p;
    }
    if (n > 1 && out[n - 1] == '/')
        n--;
    out[n] = '\0';
    return 1;
}

static int say_fail(const char *what, const char *path, const struct ipvfs_error *err)
{
    fprintf(stderr, "ipvfs-ctl: %s %s: %s\n", what, path, err->msg);
    return 1;
}

static void print_time(const char *label, int64_t ns)
{
    time_t secs = (time_t)(ns / 1000000000);
    char buf[64];
    struct tm tm;

    if (!gmtime_r(&secs, &tm) || strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm) == 0)
        snprintf(buf, sizeof(buf), "%lld s", (long long)secs);
    printf("%s %s.%09lld UTC\n", label, buf, (long long)(ns % 1000000000));
}

static void mode_string(uint32_t type, uint32_t mode, char out[11])
{
    static const char rwx[] = "rwxrwxrwx";

    out[0] = type == IPVFS_TYPE_DIR ? 'd' : '-';
    for (int i = 0; i < 9; i++)
        out[1 + i] = (mode & (0400u >> i)) ? rwx[i] : '-';
    if (mode & 04000)
        out[3] = (mode & 0100) ? 's' : 'S';
    if (mode & 02000)
        out[6] = (mode & 010) ? 's' : 'S';
    if (mode & 01000)
        out[9] = (mode & 01) ? 't' : 'T';
    out[10] = '\0';
}

/* Which I/O node (and rank, host, port) holds each datafile, and its size. */
static int print_layout(struct ipvfs_client *c, const char *path, const struct ipvfs_entry *e)
{
    const struct ipvfs_map *map = ipvfs_client_map(c);
    uint64_t sizes[CTL_MAX_DATAFILES_SHOWN];
    struct ipvfs_error err;
    struct ipvfs_file *f;
    int rc;

    printf("Stripe: unit %llu, factor %u, first I/O node %u, handle %llu\n",
           (unsigned long long)e->stripe_unit, e->stripe_factor, e->first_server,
           (unsigned long long)e->handle);
    if (e->stripe_factor > CTL_MAX_DATAFILES_SHOWN)
        return 0;
    if ((rc = ipvfs_file_open(c, path, &(struct ipvfs_open_args){ .access = IPVFS_OPEN_STAT },
                              &f, &err)) < 0)
        return say_fail("stat", path, &err);
    rc = ipvfs_datafile_sizes(f, sizes, &err);
    ipvfs_file_close(f);
    if (rc < 0)
        return say_fail("stat", path, &err);
    for (uint32_t i = 0; i < e->stripe_factor; i++) {
        uint32_t io = (e->first_server + i) % map->nio;
        const struct ipvfs_map_rank *r = ipvfs_map_io_node(map, io);

        printf("Datafile %u: I/O node %u (rank %u, %s:%u), %llu bytes\n", i, io,
               r ? r->rank : 0, r ? r->host : "?", r ? r->port : 0,
               (unsigned long long)sizes[i]);
    }
    return 0;
}

static int stat_one(struct ipvfs_client *c, const char *text)
{
    char path[IPVFS_MAX_PATH + 1], mode[11];
    struct ipvfs_error err;
    struct ipvfs_stat st;
    const struct ipvfs_attr *a = &st.attr;

    if (ctl_ipvfs_path(text, 1, path, sizeof(path)) != 1) {
        fprintf(stderr, "ipvfs-ctl: stat %s: not an iPVFS path (ipvfs:/PATH or /PATH)\n", text);
        return 1;
    }
    if (ipvfs_stat_path(c, path, &st, &err) < 0)
        return say_fail("stat", path, &err);
    mode_string(a->entry.type, a->mode, mode);
    printf("  File: %s\n  Type: %s\n  Size: %llu\n  Mode: %04o (%s)\n Owner: uid %u gid %u\n",
           path, a->entry.type == IPVFS_TYPE_DIR ? "directory" : "regular file",
           (unsigned long long)st.size, a->mode, mode, a->uid, a->gid);
    print_time("Access:", a->atime_ns);
    print_time("Modify:", a->mtime_ns);
    print_time("Change:", a->ctime_ns);
    if (a->entry.type != IPVFS_TYPE_FILE)
        return 0;
    return print_layout(c, path, &a->entry);
}

int ctl_stat(struct ipvfs_client *c, int argc, char **argv)
{
    int rc = 0;

    if (argc < 2) {
        fputs("usage: ipvfs-ctl stat PATH...\n", stderr);
        return 2;
    }
    for (int i = 1; i < argc; i++)
        rc |= stat_one(c, argv[i]);
    return rc;
}

/* mv(1)'s rule: a DST that is a directory receives SRC under its name. */
static int mv_target(struct ipvfs_client *c, const char *src, char *dst, size_t dst_len)
{
    const char *base = strrchr(src, '/') + 1;
    struct ipvfs_error err;
    struct ipvfs_attr a;
    size_t n = strlen(dst);

    if (ipvfs_getattr(c, dst, &a, &err) < 0 || a.entry.type != IPVFS_TYPE_DIR)
        return 0;
    if (n + 1 + strlen(base) + 1 > dst_len)
        return -1;
    snprintf(dst + n, dst_len - n, "%s%s", n > 1 ? "/" : "", base);
    return 0;
}

int ctl_mv(struct ipvfs_client *c, int argc, char **argv)
{
    char src[IPVFS_MAX_PATH + 1], dst[IPVFS_MAX_PATH + 1];
    int force = argc == 4 && strcmp(argv[1], "-f") == 0;
    struct ipvfs_error err;

    if (argc != 3 + force) {
        fputs("usage: ipvfs-ctl mv [-f] SRC DST\n", stderr);
        return 2;
    }
    if (ctl_ipvfs_path(argv[1 + force], 1, src, sizeof(src)) != 1 ||
        ctl_ipvfs_path(argv[2 + force], 1, dst, sizeof(dst)) != 1) {
        fputs("ipvfs-ctl: mv: both paths must be iPVFS paths (ipvfs:/PATH or /PATH)\n", stderr);
        return 1;
    }
    if (strcmp(src, "/") != 0 && mv_target(c, src, dst, sizeof(dst)) < 0) {
        fprintf(stderr, "ipvfs-ctl: mv: %s: target path too long\n", dst);
        return 1;
    }
    if (ipvfs_rename(c, src, dst, force ? 0 : IPVFS_RENAME_NOREPLACE, &err) < 0) {
        if (err.code == EEXIST && !force)
            fprintf(stderr, "ipvfs-ctl: mv %s: %s exists (-f replaces it)\n", src, dst);
        else
            say_fail("mv", src, &err);
        return 1;
    }
    return 0;
}

/* A number in base (8: a mode, 10: an id) up to max, the whole word. */
static int parse_num(const char *text, int base, unsigned long max, uint32_t *out)
{
    unsigned long v;
    char *end;

    errno = 0;
    v = strtoul(text, &end, base);
    if (!text[0] || *end || errno || v > max || text[0] == '-')
        return -1;
    *out = (uint32_t)v;
    return 0;
}

/* chmod and chown: one SETATTR per path, as the metadata rank's
 * permission rules allow (doc/security.md). */
static int setattr_all(struct ipvfs_client *c, const char *cmd, struct ipvfs_setattr_req *req,
                       int argc, char **argv)
{
    char path[IPVFS_MAX_PATH + 1];
    struct ipvfs_error err;
    int rc = 0;

    for (int i = 2; i < argc; i++) {
        if (ctl_ipvfs_path(argv[i], 1, path, sizeof(path)) != 1) {
            fprintf(stderr, "ipvfs-ctl: %s %s: the path must be absolute (/dir/file or "
                    "ipvfs:/dir/file)\n", cmd, argv[i]);
            rc = 1;
        } else if (ipvfs_setattr(c, path, req, NULL, &err) < 0) {
            rc = say_fail(cmd, path, &err);
        }
    }
    return rc ? 1 : 0;
}

int ctl_chmod(struct ipvfs_client *c, int argc, char **argv)
{
    struct ipvfs_setattr_req req = { .valid = IPVFS_SETATTR_MODE };

    if (argc < 3 || parse_num(argv[1], 8, 07777, &req.mode) < 0) {
        fputs("usage: ipvfs-ctl chmod MODE PATH...  (MODE in octal, 0 to 7777)\n", stderr);
        return 2;
    }
    return setattr_all(c, "chmod", &req, argc, argv);
}

int ctl_chown(struct ipvfs_client *c, int argc, char **argv)
{
    struct ipvfs_setattr_req req = { 0 };
    char *colon = argc >= 2 ? strchr(argv[1], ':') : NULL;
    int bad = argc < 3;

    if (!bad && colon) {
        *colon = '\0';
        bad = parse_num(colon + 1, 10, UINT32_MAX - 1, &req.gid) < 0;
        req.valid |= IPVFS_SETATTR_GID;
    }
    if (!bad && argv[1][0]) {
        bad = parse_num(argv[1], 10, UINT32_MAX - 1, &req.uid) < 0;
        req.valid |= IPVFS_SETATTR_UID;
    }
    if (bad || !req.valid) {
        fputs("usage: ipvfs-ctl chown UID[:GID]|:GID PATH...  (numeric ids)\n", stderr);
        return 2;
    }
    return setattr_all(c, "chown", &req, argc, argv);
}

/* One line of df: MiB (2^20 bytes), rounded down; use% rounded up, as df(1). */
static void df_line(const char *name, uint64_t total, uint64_t free_bytes, uint64_t files)
{
    uint64_t used = total - free_bytes;

    printf("%-8s %12llu %12llu %12llu %4llu%% %10llu\n", name,
           (unsigned long long)(total >> 20), (unsigned long long)(used >> 20),
           (unsigned long long)(free_bytes >> 20),
           (unsigned long long)(total ? (used * 100 + total - 1) / total : 0),
           (unsigned long long)files);
}

int ctl_df(struct ipvfs_client *c, int argc, char **argv)
{
    uint32_t nio = ipvfs_client_map(c)->nio;
    struct ipvfs_statfs_rep *io, sum = { 0 };
    struct ipvfs_error err;
    char name[16];

    (void)argv;
    if (argc != 1) {
        fputs("usage: ipvfs-ctl df\n", stderr);
        return 2;
    }
    if (!(io = calloc(nio ? nio : 1, sizeof(*io)))) {
        fputs("ipvfs-ctl: df: out of memory\n", stderr);
        return 1;
    }
    if (ipvfs_statfs(c, io, &err) < 0) {
        fprintf(stderr, "ipvfs-ctl: df: %s\n", err.msg);
        free(io);
        return 1;
    }
    printf("%-8s %12s %12s %12s %5s %10s\n", "io_node", "size_MiB", "used_MiB", "free_MiB",
           "use%", "datafiles");
    for (uint32_t i = 0; i < nio; i++) {
        snprintf(name, sizeof(name), "%u", i);
        df_line(name, io[i].total_bytes, io[i].free_bytes, io[i].datafiles);
        sum.total_bytes += io[i].total_bytes;
        sum.free_bytes += io[i].free_bytes;
        sum.datafiles += io[i].datafiles;
    }
    df_line("total", sum.total_bytes, sum.free_bytes, sum.datafiles);
    free(io);
    return 0;
}
