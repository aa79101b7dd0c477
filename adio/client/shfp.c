/* MPI-IO shared file pointers: SHFP on the metadata rank (contract at
 * IPVFS_OP_SHFP in common/proto.h).  The client only carries the request;
 * the pointer's whole state is on the server, so every rank of an open
 * instance sees the same pointer without talking to the others. */
#include "adio/client/client_internal.h"

#include <errno.h>

static long metadata_rank(const struct ipvfs_client *c)
{
    const struct ipvfs_map_rank *r = ipvfs_map_metadata(&c->map);

    return r ? (long)r->rank : -1;
}

int ipvfs_shfp(struct ipvfs_file *f, uint64_t instance, enum ipvfs_shfp_op op, int64_t value,
               int64_t *out_previous, struct ipvfs_error *out_err)
{
    struct ipvfs_client *c = f->client;
    struct ipvfs_shfp_req body = { .handle = f->entry.handle, .instance = instance,
                                   .op = (uint32_t)op, .value = value,
                                   .meta_verifier = f->meta_verifier };
    struct ipvfs_shfp_rep rep;
    struct iovec send[2] = { { 0 }, { .iov_base = &body, .iov_len = sizeof(body) } };
    struct iovec recv = { .iov_base = &rep, .iov_len = sizeof(rep) };
    struct xfer_req req = { .op = IPVFS_OP_SHFP, .send_iov = send, .send_cnt = 2,
                            .recv_iov = &recv, .recv_cnt = 1 };
    long rank = metadata_rank(c);

    if (rank < 0)
        return client_error(out_err, ENXIO, "shared file pointer", f->path, c, -1,
                            "the server map names no metadata rank");
    req.rank = (uint32_t)rank;
    if (xfer_run(c, &req, 1) >= 0)
        return client_xfer_error(out_err, &req, "shared file pointer", f->path, c);
    if (out_previous)
        *out_previous = rep.previous;
    return 0;
}
