/* Byte-range locks for MPI atomic mode: LOCK and UNLOCK on the metadata
 * rank (contract at IPVFS_OP_LOCK in common/proto.h).
 *
 * Waiting: the metadata rank answers LOCK only when it grants the lock, so
 * the client simply waits for the reply in poll (xfer_run), with the lock
 * wait limit in place of the request limit for that one call.  The limit
 * is generous (IPVFS_CLIENT_LOCK_MS, 5 minutes, or $IPVFS_LOCK_TIMEOUT_MS)
 * because a holder may legitimately be moving gigabytes; a holder that
 * dies releases its locks at once (its connection closes), so only a live
 * but stuck holder makes waiters reach the limit.  Reaching it drops the
 * connection, which withdraws the request on the server. */
#include "adio/client/client_internal.h"

#include <errno.h>
#include <stdlib.h>

static long metadata_rank(const struct ipvfs_client *c)
{
    const struct ipvfs_map_rank *r = ipvfs_map_metadata(&c->map);

    return r ? (long)r->rank : -1;
}

static int lock_wait_ms(void)
{
    return client_env_ms("IPVFS_LOCK_TIMEOUT_MS", IPVFS_CLIENT_LOCK_MS);
}

/* One LOCK or UNLOCK request; waits up to wait_ms for the reply. */
static int lock_call(struct ipvfs_file *f, uint16_t op, const char *opname, uint64_t offset,
                     uint64_t len, int exclusive, int wait_ms, struct ipvfs_error *out_err)
{
    struct ipvfs_client *c = f->client;
    struct ipvfs_lock_req body = { .handle = f->entry.handle, .offset = offset, .len = len,
                                   .exclusive = exclusive ? 1u : 0u,
                                   .meta_verifier = f->meta_verifier };
    struct iovec send[2] = { { 0 }, { .iov_base = &body, .iov_len = sizeof(body) } };
    struct xfer_req req = { .op = op, .send_iov = send, .send_cnt = 2 };
    long rank = metadata_rank(c);
    int saved_ms = c->request_ms;
    long failed;

    if (rank < 0)
        return client_error(out_err, ENXIO, opname, f->path, c, -1,
                            "the server map names no metadata rank");
    req.rank = (uint32_t)rank;
    c->request_ms = wait_ms;
    failed = xfer_run(c, &req, 1);
    c->request_ms = saved_ms;
    if (failed < 0)
        return 0;
    if (req.transport && req.err == ETIMEDOUT)
        return client_error(out_err, ETIMEDOUT, opname, f->path, c, rank,
                            "not granted within the lock wait limit (IPVFS_LOCK_TIMEOUT_MS)");
    return client_xfer_error(out_err, &req, opname, f->path, c);
}

int ipvfs_lock(struct ipvfs_file *f, uint64_t offset, uint64_t len, int exclusive,
               struct ipvfs_error *out_err)
{
    int wait_ms = lock_wait_ms();

    /* the connection may have to be opened first: never below the usual limit */
    if (wait_ms < f->client->request_ms)
        wait_ms = f->client->request_ms;
    return lock_call(f, IPVFS_OP_LOCK, "lock", offset, len, exclusive, wait_ms, out_err);
}

int ipvfs_unlock(struct ipvfs_file *f, uint64_t offset, uint64_t len, int exclusive,
                 struct ipvfs_error *out_err)
{
    return lock_call(f, IPVFS_OP_UNLOCK, "unlock", offset, len, exclusive,
                     f->client->request_ms, out_err);
}
