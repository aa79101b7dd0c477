/* Whole-file operations that touch every datafile of a file: size, resize,
 * preallocate, sync.  One worker sends a DF_* request to the server of each
 * datafile at once. */
#include "adio/client/client_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* DF_* request for datafile i: arg[i] as the argument, reply in
 * out_value[i], the I/O node's write verifier in out_verf[i] (both may be
 * NULL).  Datafiles whose skip[i] is set (skip may be NULL) are left out.
 * A TRUNCATE or PREALLOC that succeeded counts as a write for the
 * verifier check of the next sync: it too may be lost in a crash. */
static int df_all(struct ipvfs_file *f, uint16_t op, const char *opname, const uint64_t *arg,
                  const uint8_t *skip, uint64_t *out_value, uint64_t *out_verf,
                  struct ipvfs_error *out_err)
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

    if ((rc = client_cap_fresh(f, out_err)) < 0)
        goto free_all;
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
                                     .recv_iov = &iov[3 * k + 2], .recv_cnt = 1,
                                     .cap = &f->cap };
        dfile[k++] = i;
    }
    failed = k ? xfer_run(c, reqs, k) : -1;
    for (uint32_t j = 0; j < k; j++)
        if (!reqs[j].err && (op == IPVFS_OP_DF_TRUNCATE || op == IPVFS_OP_DF_PREALLOC))
            verf_note_write(&f->verf[dfile[j]], rep[j].verifier);
    if (failed >= 0) {
        rc = client_xfer_error(out_err, &reqs[failed], opname, f->path, c);
        goto free_all;
    }
    for (uint32_t j = 0; j < k; j++) {
        if (out_value)
            out_value[dfile[j]] = rep[j].value;
        if (out_verf)
            out_verf[dfile[j]] = rep[j].verifier;
    }
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
    rc = df_all(f, IPVFS_OP_DF_GETSIZE, "get size", NULL, known, sizes, NULL, out_err);
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
    rc = df_all(f, op, opname, arg, NULL, NULL, NULL, out_err);
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

int ipvfs_sync_verf(struct ipvfs_file *f, uint64_t *out_verf, struct ipvfs_error *out_err)
{
    return df_all(f, IPVFS_OP_DF_SYNC, "sync", NULL, NULL, NULL, out_verf, out_err);
}

/* The verifier check of ipvfs_sync_check, for op (sync or close). */
static int check_verifiers(struct ipvfs_file *f, const uint64_t *verf, const char *op,
                           struct ipvfs_error *out_err)
{
    long lost_rank = -1;
    char detail[128];

    /* every datafile's state starts afresh, whatever the first loss */
    for (uint32_t i = 0; i < f->layout.factor; i++)
        if (verf_note_sync(&f->verf[i], verf[i]) && lost_rank < 0)
            lost_rank = client_io_rank(f->client, (f->layout.first_server + i) % f->layout.nio);
    if (lost_rank < 0)
        return 0;
    snprintf(detail, sizeof(detail), "server rank %ld restarted; writes acknowledged since "
             "the last sync may be lost", lost_rank);
    return client_error(out_err, EIO, op, f->path, f->client, lost_rank, detail);
}

int ipvfs_sync_check(struct ipvfs_file *f, const uint64_t *verf, struct ipvfs_error *out_err)
{
    return check_verifiers(f, verf, "sync", out_err);
}

int ipvfs_close_check(struct ipvfs_file *f, struct ipvfs_error *out_err)
{
    uint8_t *skip = calloc(f->layout.factor, 1);
    uint64_t *verf = calloc(f->layout.factor, sizeof(*verf));
    uint32_t unsynced = 0;
    int rc = 0;

    if (!skip || !verf) {
        rc = client_error(out_err, ENOMEM, "close", f->path, NULL, -1, NULL);
        goto free_all;
    }
    for (uint32_t i = 0; i < f->layout.factor; i++) {
        skip[i] = !f->verf[i].unsynced;
        unsynced += !skip[i];
    }
    /* DF_SYNC of the written datafiles only: their dirty blocks leave the
     * I/O nodes' L1 caches now, and the reply carries the verifier */
    if (unsynced)
        rc = df_all(f, IPVFS_OP_DF_SYNC, "close", NULL, skip, NULL, verf, out_err);
    if (unsynced && rc == 0)
        rc = check_verifiers(f, verf, "close", out_err);
free_all:
    free(verf);
    free(skip);
    return rc;
}

int ipvfs_sync(struct ipvfs_file *f, struct ipvfs_error *out_err)
{
    uint64_t *verf = calloc(f->layout.factor, sizeof(*verf));
    int rc;

    if (!verf)
        return client_error(out_err, ENOMEM, "sync", f->path, NULL, -1, NULL);
    rc = ipvfs_sync_verf(f, verf, out_err);
    if (rc == 0)
        rc = ipvfs_sync_check(f, verf, out_err);
    free(verf);
    return rc;
}

int ipvfs_datafile_sizes(struct ipvfs_file *f, uint64_t *out_sizes, struct ipvfs_error *out_err)
{
    return df_all(f, IPVFS_OP_DF_GETSIZE, "get datafile sizes", NULL, NULL, out_sizes, NULL,
                  out_err);
}
