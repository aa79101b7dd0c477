/* Data path: contiguous and list I/O, all through one worker that plans
 * per-server requests (plan.c) and runs them at once (xfer.c). */
#include "adio/client/client_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "adio/client/plan.h"
#include "adio/client/sched.h"

/* What one planned request needs besides its plan entry. */
struct io_slot {
    struct ipvfs_io_req req;
    struct ipvfs_io_rep rep;
    struct iovec *send;
    struct iovec *recv;
};

struct io_batch {
    struct plan plan;
    struct io_slot *slots;
    struct xfer_req *reqs;
};

static void batch_free(struct io_batch *b)
{
    for (size_t i = 0; b->slots && i < b->plan.nreqs; i++) {
        free(b->slots[i].send);
        free(b->slots[i].recv);
    }
    free(b->reqs);
    free(b->slots);
    plan_free(&b->plan);
}

/* The I/O nodes order waiting READs by the client's own heuristic. */
static uint32_t read_order(enum ipvfs_schedule schedule)
{
    switch (schedule) {
    case IPVFS_SCHED_FIRST:
        return IPVFS_READ_ORDER_FIRST;
    case IPVFS_SCHED_RANDOM:
        return IPVFS_READ_ORDER_RANDOM;
    default:
        return IPVFS_READ_ORDER_HASH;
    }
}

/* A READ's flags: the order, and the file's read-ahead when it names one. */
static uint32_t read_flags(const struct ipvfs_io_opts *opts)
{
    return read_order(opts->schedule) |
           (opts->readahead_set ? ipvfs_read_ra_flags(opts->readahead) : 0);
}

/* Wires plan request i into an xfer_req: header, io_req, pairs, and the
 * data iovecs on the sending side for writes, the receiving side for
 * reads. */
static int batch_wire(struct io_batch *b, size_t i, const struct ipvfs_file *f, int writing)
{
    struct plan_req *p = &b->plan.reqs[i];
    struct io_slot *s = &b->slots[i];
    int nsend = 3 + (writing ? p->niov : 0), nrecv = 1 + (writing ? 0 : p->niov);
    long rank = client_io_rank(f->client, p->server);

    if (rank < 0)
        return -ENXIO;
    s->send = calloc((size_t)nsend, sizeof(*s->send));
    s->recv = calloc((size_t)nrecv, sizeof(*s->recv));
    if (!s->send || !s->recv)
        return -ENOMEM;
    s->req = (struct ipvfs_io_req){ .handle = f->entry.handle, .npairs = p->npairs,
                                    .flags = writing ? 0 : read_flags(&f->opts) };
    s->send[1] = (struct iovec){ .iov_base = &s->req, .iov_len = sizeof(s->req) };
    s->send[2] = (struct iovec){ .iov_base = p->pairs, .iov_len = p->npairs * sizeof(*p->pairs) };
    s->recv[0] = (struct iovec){ .iov_base = &s->rep, .iov_len = sizeof(s->rep) };
    memcpy(writing ? s->send + 3 : s->recv + 1, p->iov, (size_t)p->niov * sizeof(*p->iov));
    b->reqs[i] = (struct xfer_req){ .rank = (uint32_t)rank,
                                    .op = writing ? IPVFS_OP_WRITE : IPVFS_OP_READ,
                                    .send_iov = s->send, .send_cnt = nsend,
                                    .recv_iov = s->recv, .recv_cnt = nrecv, .cap = &f->cap };
    return 0;
}

/* Puts the plan's requests into the file's schedule order. */
static int batch_schedule(struct io_batch *b, const struct ipvfs_file *f)
{
    size_t *order = malloc((b->plan.nreqs ? b->plan.nreqs : 1) * sizeof(*order));
    int rc;

    if (!order)
        return -ENOMEM;
    rc = sched_order(&b->plan, f->opts.schedule, f->client->client_id, f->layout.nio,
                     &f->client->sched_rng, order);
    if (rc == 0)
        rc = sched_apply(&b->plan, order);
    free(order);
    return rc;
}

/* A request's runs of adjacent bytes are at most the schedule block b:
 * a large contiguous access goes out in pieces of b that the heuristics
 * order; the short pieces of a noncontiguous one share requests per
 * server (list I/O), up to plan_limits_for()'s bytes. */
static int batch_build(struct io_batch *b, const struct ipvfs_file *f, int writing,
                       const struct ipvfs_extent *ext, size_t next, const struct iovec *mem,
                       int memcnt)
{
    struct plan_limits limits = plan_limits_for(f->opts.block, writing);
    int rc;

    rc = plan_build(&f->layout, ext, next, mem, memcnt, &limits, &b->plan);
    if (rc == 0)
        rc = batch_schedule(b, f);
    if (rc < 0)
        return rc;
    b->slots = calloc(b->plan.nreqs ? b->plan.nreqs : 1, sizeof(*b->slots));
    b->reqs = calloc(b->plan.nreqs ? b->plan.nreqs : 1, sizeof(*b->reqs));
    if (!b->slots || !b->reqs)
        return -ENOMEM;
    for (size_t i = 0; i < b->plan.nreqs && rc == 0; i++)
        rc = batch_wire(b, i, f, writing);
    return rc;
}

/* Bytes of the extents that lie before size. */
static uint64_t bytes_before(const struct ipvfs_extent *ext, size_t next, uint64_t size)
{
    uint64_t sum = 0;

    for (size_t i = 0; i < next; i++) {
        if (ext[i].offset >= size)
            continue;
        sum += size - ext[i].offset < ext[i].len ? size - ext[i].offset : ext[i].len;
    }
    return sum;
}

/* How many bytes a finished read got before the end of the file.  The
 * replies prove the file reaches at least max(implied sizes); only when the
 * access goes past that are the other datafiles asked for their sizes. */
static int read_count(struct ipvfs_file *f, const struct io_batch *b,
                      const struct ipvfs_extent *ext, size_t next, uint64_t *out_bytes,
                      struct ipvfs_error *out_err)
{
    const struct stripe_layout *l = &f->layout;
    uint64_t known = 0, end = 0, rest = 0;
    uint8_t *seen;
    int rc;

    for (size_t i = 0; i < next; i++)
        if (ext[i].len && ext[i].offset + ext[i].len > end)
            end = ext[i].offset + ext[i].len;
    seen = calloc(l->factor, 1);
    if (!seen)
        return client_error(out_err, ENOMEM, "read", f->path, NULL, -1, NULL);
    for (size_t i = 0; i < b->plan.nreqs; i++) {
        uint32_t dfile = client_dfile_of(f, b->plan.reqs[i].server);
        uint64_t s = stripe_file_size(l, dfile, b->slots[i].rep.df_size);

        seen[dfile] = 1;
        if (s > known)
            known = s;
    }
    rc = 0;
    if (known < end)
        rc = client_size_except(f, seen, &rest, out_err);
    if (rc == 0)
        *out_bytes = bytes_before(ext, next, known > rest ? known : rest);
    free(seen);
    return rc;
}

static int check_replies(struct ipvfs_file *f, const struct io_batch *b, int writing,
                         struct ipvfs_error *out_err)
{
    for (size_t i = 0; i < b->plan.nreqs; i++) {
        if (b->slots[i].rep.bytes != b->plan.reqs[i].bytes)
            return client_error(out_err, EIO, writing ? "write" : "read", f->path, f->client,
                                b->reqs[i].rank, "the server moved fewer bytes than asked");
    }
    return 0;
}

/* A posted access: its plan and wired requests, a copy of its file
 * extents (a read's byte count needs them at the end; the data itself is
 * never copied), and the engine batch moving it. */
struct ipvfs_aio {
    struct ipvfs_file *f;
    int writing;
    struct io_batch b;
    struct ipvfs_extent *ext;
    size_t next;
    struct xfer_batch *xb;     /* NULL for an access of no request */
};

static void aio_free(struct ipvfs_aio *a)
{
    batch_free(&a->b);
    free(a->ext);
    free(a);
}

int ipvfs_aio_start(struct ipvfs_file *f, int writing, const struct ipvfs_extent *ext,
                    size_t next, const struct iovec *mem, int memcnt, struct ipvfs_aio **out_aio,
                    struct ipvfs_error *out_err)
{
    const char *op = writing ? "write" : "read";
    struct ipvfs_aio *a = calloc(1, sizeof(*a));
    int rc;

    if (!a)
        return client_error(out_err, ENOMEM, op, f->path, f->client, -1, NULL);
    if ((rc = client_cap_fresh(f, out_err)) < 0) {
        free(a);
        return rc;
    }
    a->f = f;
    a->writing = writing;
    a->next = next;
    a->ext = malloc((next ? next : 1) * sizeof(*a->ext));
    if (!a->ext) {
        rc = client_error(out_err, ENOMEM, op, f->path, f->client, -1, NULL);
        goto free_aio;
    }
    if (next)
        memcpy(a->ext, ext, next * sizeof(*ext));
    rc = batch_build(&a->b, f, writing, ext, next, mem, memcnt);
    if (rc == 0 && a->b.plan.nreqs)
        rc = xfer_start(f->client, a->b.reqs, a->b.plan.nreqs, XFER_IN_ORDER | XFER_BESIDE,
                        &a->xb);
    if (rc < 0) {
        rc = client_error(out_err, -rc, op, f->path, f->client, -1,
                          rc == -EINVAL ? "file and memory sides differ in length" : NULL);
        goto free_aio;
    }
    *out_aio = a;
    return 0;

free_aio:
    aio_free(a);
    return rc;
}

int ipvfs_aio_test(struct ipvfs_aio *a)
{
    return !a->xb || xfer_test(a->xb);
}

void ipvfs_aio_wait(struct ipvfs_aio *a)
{
    if (a->xb)
        xfer_wait(a->xb);
}

/* The results of a finished batch: errors, short replies, byte count. */
static int aio_result(struct ipvfs_aio *a, long failed, uint64_t *out_bytes,
                      struct ipvfs_error *out_err)
{
    struct ipvfs_file *f = a->f;
    int rc;

    /* every acknowledged write counts for the next sync's verifier check,
     * also when another request of the access failed */
    for (size_t i = 0; a->writing && i < a->b.plan.nreqs; i++)
        if (!a->b.reqs[i].err)
            verf_note_write(&f->verf[client_dfile_of(f, a->b.plan.reqs[i].server)],
                            a->b.slots[i].rep.verifier);
    if (failed >= 0)
        return client_xfer_error(out_err, &a->b.reqs[failed], a->writing ? "write" : "read",
                                 f->path, f->client);
    rc = check_replies(f, &a->b, a->writing, out_err);
    if (rc < 0)
        return rc;
    if (!a->writing)
        return read_count(f, &a->b, a->ext, a->next, out_bytes, out_err);
    *out_bytes = 0;
    for (size_t i = 0; i < a->b.plan.nreqs; i++)
        *out_bytes += a->b.plan.reqs[i].bytes;
    return 0;
}

int ipvfs_aio_finish(struct ipvfs_aio *a, uint64_t *out_bytes, struct ipvfs_error *out_err)
{
    long failed = a->xb ? xfer_finish(a->xb) : -1;
    int rc;

    a->xb = NULL;
    rc = aio_result(a, failed, out_bytes, out_err);
    aio_free(a);
    return rc;
}

/* The synchronous calls: post, then wait for the result. */
static int io_list(struct ipvfs_file *f, int writing, const struct ipvfs_extent *ext,
                   size_t next, const struct iovec *mem, int memcnt, uint64_t *out_bytes,
                   struct ipvfs_error *out_err)
{
    struct ipvfs_aio *a;
    int rc = ipvfs_aio_start(f, writing, ext, next, mem, memcnt, &a, out_err);

    return rc < 0 ? rc : ipvfs_aio_finish(a, out_bytes, out_err);
}

int ipvfs_read_list(struct ipvfs_file *f, const struct ipvfs_extent *ext, size_t next,
                    const struct iovec *mem, int memcnt, uint64_t *out_bytes,
                    struct ipvfs_error *out_err)
{
    return io_list(f, 0, ext, next, mem, memcnt, out_bytes, out_err);
}

int ipvfs_write_list(struct ipvfs_file *f, const struct ipvfs_extent *ext, size_t next,
                     const struct iovec *mem, int memcnt, uint64_t *out_bytes,
                     struct ipvfs_error *out_err)
{
    return io_list(f, 1, ext, next, mem, memcnt, out_bytes, out_err);
}

int ipvfs_read(struct ipvfs_file *f, uint64_t offset, void *buf, uint64_t len,
               uint64_t *out_bytes, struct ipvfs_error *out_err)
{
    struct ipvfs_extent ext = { .offset = offset, .len = len };
    struct iovec mem = { .iov_base = buf, .iov_len = (size_t)len };

    return io_list(f, 0, &ext, 1, &mem, 1, out_bytes, out_err);
}

int ipvfs_write(struct ipvfs_file *f, uint64_t offset, const void *buf, uint64_t len,
                uint64_t *out_bytes, struct ipvfs_error *out_err)
{
    struct ipvfs_extent ext = { .offset = offset, .len = len };
    struct iovec mem = { .iov_base = (void *)buf, .iov_len = (size_t)len };

    return io_list(f, 1, &ext, 1, &mem, 1, out_bytes, out_err);
}
