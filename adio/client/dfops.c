/* Whole-file operations that touch every datafile of a file: size, resize,
 * preallocate, sync.  One worker sends a DF_* request to the server of each
 * datafile at once. */
#include "adio/client/client_internal.h"

#include <errno.h>
#include <stdlib.h>

/* DF_* request for datafile i: arg[i] as the argument, reply in value[i].
 * Datafiles whose skip[i] is set (skip may be NULL) are left out. */
static int df_all(struct ipvfs_file *f, uint16_t op, const char *opname, const uint64_t *arg,
                  const uint8_t *skip, uint64_t *out_value, struct ipvfs_error *out_err)
{
    struct ipvfs_client *c = f->client;
    uint32_t n = f->layout.factor, k = 0;
    struct xfer_req *reqs = calloc(n, sizeof(*reqs));
    struct iovec *iov = calloc(3u * n, sizeof(*iov));
    struct ipvfs_df_req *body = calloc(n, sizeof(*body));
    uint32_t *dfile = calloc(n, sizeof(*dfile));
    struct ipvfs_df_rep *rep = calloc(n, sizeof(*rep));
    long failed;
    int rc = 0;

    if (!reqs || !iov || !body || !dfile || !rep) {
        rc = client_error(out_err, ENOMEM, opname, f->path, NULL, -1, NULL);
        goto free_all;
    }
    for (uint32_t i = 0; i < n; i++) {
        long rank = client_io_rank(c, (f->layout.first_server + i) % f->layout.nio);

        if (skip && skip[i])
            continue;
        if (rank < 0) {
            rc = client_error(out_err, ENXIO, opname, f->path, c, -1,
                              "the server map lacks an I/O node of the file");
            goto free_all;
        }
        body[k] = (struct ipvfs_df_req){ .handle = f->entry.handle, .arg = arg ? arg[i] : 0 };
        iov[3 * k + 1] = (struct iovec){ .iov_base = &body[k], .iov_len = sizeof(body[k]) };
        iov[3 * k + 2] = (struct iovec){ .iov_base = &rep[k], .iov_len = sizeof(rep[k]) };
        reqs[k] = (struct xfer_req){ .rank = (uint32_t)rank, .op = op,
                                     .send_iov = &iov[3 * k], .send_cnt = 2,
                                     .recv_iov = &iov[3 * k + 2], .recv_cnt = 1 };
        dfile[k++] = i;
    }
    failed = k ? xfer_run(c, reqs, k) : -1;
    if (failed >= 0) {
        rc = client_xfer_error(out_err, &reqs[failed], opname, f->path, c);
        goto free_all;
    }
    for (uint32_t j = 0; j < k && out_value; j++)
        out_value[dfile[j]] = rep[j].value;
free_all:
    free(rep);
    free(dfile);
    free(body);
    free(iov);
    free(reqs);
    return rc;
}

/* Logical size from per-datafile sizes (entries with skip set ignored). */
static uint64_t size_from(const struct stripe_layout *l, const uint64_t *df_size,
                          const uint8_t *skip)
{
    uint64_t size = 0;

    for (uint32_t i = 0; i < l->factor; i++) {
        uint64_t s = (skip && skip[i]) ? 0 : stripe_file_size(l, i, df_size[i]);

        if (s > size)
            size = s;
    }
    return size;
}

/* Size of the file counting only the datafiles not in known (known may be
 * NULL: all of them).  Shared with the read path (io.c). */
int client_size_except(struct ipvfs_file *f, const uint8_t *known, uint64_t *out_size,
                       struct ipvfs_error *out_err)
{
    uint64_t *sizes = calloc(f->layout.factor, sizeof(*sizes));
    int rc;

    if (!sizes)
        return client_error(out_err, ENOMEM, "get size", f->path, NULL, -1, NULL);
    rc = df_all(f, IPVFS_OP_DF_GETSIZE, "get size", NULL, known, sizes, out_err);
    if (rc == 0)
        *out_size = size_from(&f->layout, sizes, known);
    free(sizes);
    return rc;
}

int ipvfs_get_size(struct ipvfs_file *f, uint64_t *out_size, struct ipvfs_error *out_err)
{
    return client_size_except(f, NULL, out_size, out_err);
}

/* DF_* with each datafile's share of size as the argument. */
static int df_sized(struct ipvfs_file *f, uint16_t op, const char *opname, uint64_t size,
                    struct ipvfs_error *out_err)
{
    uint64_t *arg = calloc(f->layout.factor, sizeof(*arg));
    int rc;

    if (!arg)
        return client_error(out_err, ENOMEM, opname, f->path, NULL, -1, NULL);
    for (uint32_t i = 0; i < f->layout.factor; i++)
        arg[i] = stripe_dfile_size(&f->layout, i, size);
    rc = df_all(f, op, opname, arg, NULL, NULL, out_err);
    free(arg);
    return rc;
}

int ipvfs_resize(struct ipvfs_file *f, uint64_t size, struct ipvfs_error *out_err)
{
    return df_sized(f, IPVFS_OP_DF_TRUNCATE, "resize", size, out_err);
}

int ipvfs_preallocate(struct ipvfs_file *f, uint64_t size, struct ipvfs_error *out_err)
{
    return df_sized(f, IPVFS_OP_DF_PREALLOC, "preallocate", size, out_err);
}

int ipvfs_sync(struct ipvfs_file *f, struct ipvfs_error *out_err)
{
    return df_all(f, IPVFS_OP_DF_SYNC, "sync", NULL, NULL, NULL, out_err);
}

int ipvfs_datafile_sizes(struct ipvfs_file *f, uint64_t *out_sizes, struct ipvfs_error *out_err)
{
    return df_all(f, IPVFS_OP_DF_GETSIZE, "get datafile sizes", NULL, NULL, out_sizes, out_err);
}
