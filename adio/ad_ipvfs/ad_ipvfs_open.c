/* Collective open: rank 0 of the communicator looks the file up (creating
 * it if asked) and broadcasts the entry with the outcome, so every rank
 * opens the same file or fails with the same error. */
#include "ad_ipvfs.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What rank 0 broadcasts. */
struct open_result {
    struct ipvfs_error err;
    struct ipvfs_entry entry;
    struct ipvfs_cap cap;       /* what the metadata rank granted this open */
    uint64_t size;              /* for MPI_MODE_APPEND: where pointers start */
    uint64_t meta_verifier;     /* the metadata rank's incarnation at this open */
    struct ADIOI_IPVFS_opts opts;       /* from the ipvfs_ hints */
};

/* Parses the raw hint key from fd->info: 0 when absent or "0" (the cluster
 * default); -EINVAL with a message when it is not an integer in
 * 0..INT_MAX. */
static int hint_value(ADIO_File fd, const char *key, uint64_t * out_value,
                      struct ipvfs_error *out_err)
{
    char value[MPI_MAX_INFO_VAL + 1], *end;
    unsigned long long v;
    int flag;

    *out_value = 0;
    ADIOI_Info_get(fd->info, key, MPI_MAX_INFO_VAL, value, &flag);
    if (!flag)
        return 0;
    errno = 0;
    v = strtoull(value, &end, 10);
    if (errno || end == value || *end || value[0] == '-' || v > INT_MAX) {
        out_err->code = EINVAL;
        snprintf(out_err->msg, sizeof(out_err->msg),
                 "ipvfs: open of %.200s failed: hint %s=\"%.64s\" is not an integer from 0 "
                 "to %d", fd->filename, key, value, INT_MAX);
        return -EINVAL;
    }
    *out_value = v;
    return 0;
}

/* Open arguments from the access mode and the striping hints; a factor
 * above the number of I/O nodes falls back to all of them. */
static int open_args(ADIO_File fd, const struct ipvfs_client *client,
                     struct ipvfs_open_args *out_args, struct ipvfs_error *out_err)
{
    uint64_t unit, factor;

    if (hint_value(fd, "striping_unit", &unit, out_err) < 0 ||
        hint_value(fd, "striping_factor", &factor, out_err) < 0)
        return -EINVAL;
    if (factor > ipvfs_client_nio(client))
        factor = ipvfs_client_nio(client);
    memset(out_args, 0, sizeof(*out_args));
    out_args->create = (fd->access_mode & ADIO_CREATE) != 0;
    out_args->excl = (fd->access_mode & ADIO_EXCL) != 0;
    out_args->stripe_unit = unit;
    out_args->stripe_factor = (uint32_t) factor;
    /* A created file is owned by the creating rank's user; MPI's
     * "permissions" (fd->perm) give its mode, else the library's 0644. */
    if (fd->perm != ADIO_PERM_NULL)
        out_args->mode = (uint32_t) fd->perm & 07777u;
    /* the rights the metadata rank checks and grants, as open(2)'s flags */
    out_args->access = (fd->access_mode & ADIO_RDONLY) ? IPVFS_OPEN_READ
        : (fd->access_mode & ADIO_WRONLY) ? IPVFS_OPEN_WRITE : IPVFS_OPEN_READ | IPVFS_OPEN_WRITE;
    return 0;
}

static const char *map_hint(ADIO_File fd, char *buf, size_t len)
{
    int flag;

    ADIOI_Info_get(fd->info, "ipvfs_map", (int) len - 1, buf, &flag);
    return ipvfs_client_map_path(flag ? buf : NULL);
}

/* Rank 0's part: look up (or create) and, for APPEND, find the size. */
static void open_on_root(ADIO_File fd, const char *map_path, struct open_result *out_res)
{
    struct ipvfs_client *client;
    struct ipvfs_file *file;
    struct ipvfs_open_args args;

    if (ipvfs_client_get(map_path, (uint32_t) ADIOI_IPVFS_Client_id(), &client,
                         &out_res->err) < 0)
        return;
    if (open_args(fd, client, &args, &out_res->err) < 0 ||
        ADIOI_IPVFS_Parse_opts(fd->info, fd->filename, &out_res->opts, &out_res->err) < 0)
        goto put_client;
    if (ipvfs_file_open(client, fd->filename, &args, &file, &out_res->err) < 0)
        goto put_client;
    out_res->entry = file->entry;
    out_res->cap = file->cap;
    out_res->meta_verifier = file->meta_verifier;
    if (fd->access_mode & ADIO_APPEND)
        (void) ipvfs_get_size(file, &out_res->size, &out_res->err);
    ipvfs_file_close(file);
  put_client:
    ipvfs_client_put(client);
}

/* ipvfs_qos_class: the application class of the client's requests at the
 * I/O nodes; ipvfs_qos_rate and ipvfs_qos_latency: its SLO where it has
 * none (ipvfs_client_set_qos; the same hints on every rank, so every rank
 * fails alike on a bad value). */
static int qos_hint(ADIO_File fd, struct ipvfs_client *client, struct ipvfs_error *out_err)
{
    static const char *const keys[] = { "ipvfs_qos_class", "ipvfs_qos_rate",
                                        "ipvfs_qos_latency" };
    char value[3][MPI_MAX_INFO_VAL + 1];
    int flag[3] = { 0, 0, 0 };

    for (int i = 0; i < 3 && fd->info; i++)
        ADIOI_Info_get(fd->info, (char *)keys[i], MPI_MAX_INFO_VAL, value[i], &flag[i]);
    if (!flag[0] && !flag[1] && !flag[2])
        return 0;
    return ipvfs_client_set_qos(client, flag[0] ? value[0] : NULL, flag[1] ? value[1] : NULL,
                                flag[2] ? value[2] : NULL, out_err);
}

void ADIOI_IPVFS_Open(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_IPVFS_OPEN";
    struct open_result res;
    struct ipvfs_client *client;
    struct ipvfs_file *file;
    struct ADIOI_IPVFS_fs *fs;
    char hint[MPI_MAX_INFO_VAL + 1];
    const char *map_path = map_hint(fd, hint, sizeof(hint));
    int rank;

    memset(&res, 0, sizeof(res));
    res.opts.io.schedule = IPVFS_SCHED_HASH;
    res.opts.io.block = IPVFS_DEFAULT_SCHED_BLOCK;
    MPI_Comm_rank(fd->comm, &rank);
    if (rank == 0)
        open_on_root(fd, map_path, &res);
    MPI_Bcast(&res, (int) sizeof(res), MPI_BYTE, 0, fd->comm);
    if (res.err.code) {
        *error_code = ADIOI_IPVFS_Error(myname, __LINE__, &res.err);
        return;
    }
    if (ipvfs_client_get(map_path, (uint32_t) ADIOI_IPVFS_Client_id(), &client, &res.err) < 0) {
        *error_code = ADIOI_IPVFS_Error(myname, __LINE__, &res.err);
        return;
    }
    if (qos_hint(fd, client, &res.err) < 0) {
        ipvfs_client_put(client);
        *error_code = ADIOI_IPVFS_Error(myname, __LINE__, &res.err);
        return;
    }
    if (ipvfs_file_attach(client, fd->filename, &res.entry, &res.cap, &file, &res.err) < 0) {
        ipvfs_client_put(client);
        *error_code = ADIOI_IPVFS_Error(myname, __LINE__, &res.err);
        return;
    }
    ipvfs_client_put(client);   /* the file holds its own reference */
    file->meta_verifier = res.meta_verifier;
    fs = ADIOI_Calloc(1, sizeof(*fs));
    fs->file = file;
    fd->fs_ptr = fs;
    fd->fd_sys = -1;
    fs->factor_all = ADIOI_IPVFS_Factor_all(fd);
    if (ADIOI_IPVFS_Apply_opts(fd, &res.opts, &res.err) < 0) {
        /* rank 0 checked the values: only a broken broadcast gets here */
        ipvfs_file_close(file);
        ADIOI_Free(fs);
        fd->fs_ptr = NULL;
        *error_code = ADIOI_IPVFS_Error(myname, __LINE__, &res.err);
        return;
    }
    if (fd->access_mode & ADIO_APPEND)
        fd->fp_ind = fd->fp_sys_posn = (ADIO_Offset) res.size;
    ADIOI_IPVFS_Show_hints(fd, map_path);
    *error_code = MPI_SUCCESS;
}

/* ROMIO's scalable OpenColl opens WRONLY files RDWR first (for data
 * sieving's read-modify-write) and retries a failure with the caller's
 * mode.  iPVFS servers do not restrict access by mode, so the retry could
 * only fail again, doubling the wait on a dead server: one try here. */
void ADIOI_IPVFS_OpenColl(ADIO_File fd, int rank, int access_mode, int *error_code)
{
    fd->access_mode = access_mode;
    ADIOI_IPVFS_Open(fd, error_code);
    fd->is_open = 1;
}
