/* I/O node service: READ WRITE DF_* onto the datafile store (dfstore.h),
 * which lives on this node's iRAID volume over its target ranks (opened,
 * stopped and closed in ionode_store.c).
 *
 * Every handler checks the body against body_len, then submits one dfstore
 * operation whose completion (a loop callback) sends the reply.  The pairs
 * and WRITE data point into the request body, which the connection keeps
 * until the reply is written; READ data lands directly in the reply buffer
 * after its struct ipvfs_io_rep.
 *
 * Durability: a WRITE is answered once its data is on the volume; the
 * store's block map that makes it reachable is committed later (DF_SYNC or
 * the background commit), so every reply carries this incarnation's write
 * verifier (srv->verifier, drawn in serve.c) and clients see a restart in
 * between (common/proto.h).
 *
 * READs are ordered across connections (enum ipvfs_read_order in
 * common/proto.h): readq.h keeps srv->reads, the store's places and the
 * READs waiting for one, and says which READ goes in when; each one it
 * lets in starts here (read_start), and its completion tells it (io_finish)
 * and hands the freed place on once the store's callback has returned.
 *
 * Before all that, every READ and WRITE goes through the QoS scheduler
 * (srv->qos, qos.h; --qos): qos_pump starts what it lets through (a READ
 * then meets the ordering above), and each completion tells it and pumps
 * again.  With fifo it lets everything through at once and only
 * measures. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/dfstore/dfstore.h"
#include "backend/server/ionode.h"
#include "backend/server/qos.h"
#include "backend/server/server.h"
#include "common/log.h"
#include "iraid/volume.h"

/* A READ of many pairs lying close together (a tile, a strided view) is
 * read from the store as its covering span, then the pairs are picked out:
 * one volume access instead of one per pair.  Used when the span is at
 * most IONODE_SIEVE_FACTOR times the requested bytes (or at most
 * IONODE_SIEVE_SLACK bytes), the pairs ascend without overlapping, and
 * no gap between two of them holds a whole store block (DFSTORE_BLOCK):
 * the store reads the pieces on either side block by block anyway, and
 * such a block only adds a volume read nobody asked for (1 MiB tile rows
 * came as pieces of 256 KiB with 512 KiB of the other reader's between
 * them, and each reader's span read both readers' rows; issue 27).
 * Only without the L1 and for pieces under IONODE_SIEVE_PIECE_MAX on
 * average: the L1 reads a small piece's whole block and keeps it for the
 * neighbour's piece, so a span read through it only copies twice the
 * bytes (2 x 2 tiles of 8 KiB rows read 0.6x as fast), and pieces of
 * half a block cost a command each either way, the span reading the
 * other half for nothing (32 KiB rows: 0.6-0.8x).  At most twice the
 * bytes: 4 x 1 tiles of 8 KiB rows (a span four times the rank's bytes)
 * read 0.75x as fast sieved once READs came in 2 MiB (IPVFS_LIST_READ_BYTES,
 * whose spans fit where 8 MiB ones' did not).
 * Tiny pieces with tiny gaps (both under IONODE_SIEVE_TINY on average)
 * are sieved whatever the L1 and the factor: there the store's cost is
 * per piece, not per byte (4 x 1 tiles one 32-byte element wide,
 * each rank's pieces a quarter of the span, read at 3 MiB/s unsieved
 * against 117 sieved before the factor fell to 2).
 * Reads only: a write never touches bytes it was not given. */
#define IONODE_SIEVE_FACTOR 2u
#define IONODE_SIEVE_SLACK (64u << 10)
#define IONODE_SIEVE_PIECE_MAX (DFSTORE_BLOCK / 4)
#define IONODE_SIEVE_TINY 1024u

/* One request in flight in the store (or, a READ, waiting for a place:
 * see struct read_order and enum ipvfs_read_order). */
struct io_op {
    struct conn *c;
    struct server *srv;
    uint16_t op;
    uint64_t handle;
    uint64_t bytes;     /* payload of the pairs */
    uint8_t *rep;       /* READ: io_rep + data, handed to conn_reply */
    /* a sieved READ: the span read and the pairs to pick from it (they
     * point into the request body, kept until the reply is sent) */
    uint8_t *sieve;
    struct ipvfs_pair span;
    const struct ipvfs_pair *pairs;
    uint32_t npairs;
    /* READ ordering */
    const struct ipvfs_pair *rd_pairs;  /* what to read: pairs, or the span */
    uint32_t rd_npairs;
    uint8_t *rd_buf;
    struct df_l1_loans loans;   /* blocks the L1 lent instead of copying */
    struct read_wait rw;        /* its place in srv->reads (readq.h) */
    uint64_t ra_max;            /* read-ahead window (DFSTORE_RA_DEFAULT: --readahead) */
    uint64_t new_us;            /* when the request came in */
    const uint8_t *wr_data;     /* WRITE: the data of pairs/npairs */
    struct qos_req q;           /* its place in the QoS scheduler */
};

/* ---- requests ----------------------------------------------------------- */

static struct io_op *new_op(struct conn *c, uint16_t op, uint64_t handle)
{
    struct io_op *o = calloc(1, sizeof(*o));

    if (!o) {
        conn_reply_err(c, ENOMEM, "out of memory");
        return NULL;
    }
    o->c = c;
    o->srv = conn_server(c);
    o->op = op;
    o->handle = handle;
    o->new_us = qos_svc_now_us();
    return o;
}

static int store_ready(struct conn *c)
{
    if (conn_server(c)->ds)
        return 1;
    conn_reply_err(c, ESHUTDOWN, "I/O node is stopping");
    return 0;
}

/* A READ or WRITE body, checked: its pairs point into the body. */
struct io_body {
    struct ipvfs_io_req req;
    const struct ipvfs_pair *pairs;
    uint64_t bytes;             /* the pairs' total length */
    uint64_t lo, hi;            /* the smallest range that holds every pair */
};

/* Checks an io body and measures its pairs into *out. */
static int check_io(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body,
                    int writing, struct io_body *out)
{
    struct ipvfs_io_req *out_req = &out->req;
    const struct ipvfs_pair *pairs;
    uint64_t total = 0, want, lo = UINT64_MAX, hi = 0;

    if (hdr->body_len < sizeof(*out_req)) {
        conn_reply_err(c, EINVAL, "I/O body shorter than its header");
        return -EINVAL;
    }
    memcpy(out_req, body, sizeof(*out_req));
    if (out_req->handle == 0 || out_req->npairs > IPVFS_MAX_PAIRS) {
        conn_reply_err(c, EINVAL, "handle 0 or %u pairs (at most %u)", out_req->npairs,
                       IPVFS_MAX_PAIRS);
        return -EINVAL;
    }
    want = sizeof(*out_req) + (uint64_t)out_req->npairs * sizeof(*pairs);
    if (hdr->body_len < want) {
        conn_reply_err(c, EINVAL, "%u pairs do not fit in a %llu-byte body", out_req->npairs,
                       (unsigned long long)hdr->body_len);
        return -EINVAL;
    }
    pairs = (const struct ipvfs_pair *)(body + sizeof(*out_req));
    for (uint32_t i = 0; i < out_req->npairs; i++) {
        if (pairs[i].len > IPVFS_MAX_IO_BYTES || pairs[i].offset > (UINT64_MAX >> 1) ||
            (total += pairs[i].len) > IPVFS_MAX_IO_BYTES) {
            conn_reply_err(c, EINVAL, "pair %u (offset %llu, length %llu) is out of range", i,
                           (unsigned long long)pairs[i].offset,
                           (unsigned long long)pairs[i].len);
            return -EINVAL;
        }
        if (pairs[i].offset < lo)
            lo = pairs[i].offset;
        if (pairs[i].offset + pairs[i].len > hi)
            hi = pairs[i].offset + pairs[i].len;
    }
    if (hdr->body_len != want + (writing ? total : 0)) {
        conn_reply_err(c, EINVAL, "body of %llu bytes disagrees with %u pairs of %llu bytes",
                       (unsigned long long)hdr->body_len, out_req->npairs,
                       (unsigned long long)total);
        return -EINVAL;
    }
    out->pairs = pairs;
    out->bytes = total;
    out->lo = lo;
    out->hi = hi;
    return 0;
}

/* Whether a READ of n pairs, bytes in all over a span of span bytes, is
 * better sieved (see IONODE_SIEVE_*). */
static int sieve_pays(const struct server *srv, uint32_t n, uint64_t bytes, uint64_t span)
{
    if (span > IPVFS_MAX_IO_BYTES)
        return 0;
    if (bytes / n < IONODE_SIEVE_TINY && (span - bytes) / n < IONODE_SIEVE_TINY)
        return 1;
    return !srv->opts.cache_l1 && bytes / n < IONODE_SIEVE_PIECE_MAX &&
           (span <= IONODE_SIEVE_SLACK || span / IONODE_SIEVE_FACTOR <= bytes);
}

/* The covering span of pairs when sieving pays. */
static int sieve_span(const struct server *srv, const struct ipvfs_pair *pairs, uint32_t n,
                      uint64_t bytes, struct ipvfs_pair *out)
{
    uint64_t end = pairs[0].offset + pairs[0].len, span;

    /* with the L1 only tiny pieces may pay: most READs stop here */
    if (n < 2 || (srv->opts.cache_l1 && bytes / n >= IONODE_SIEVE_TINY))
        return 0;
    for (uint32_t i = 1; i < n; i++) {
        if (pairs[i].offset < end)
            return 0;
        if ((end + DFSTORE_BLOCK - 1) / DFSTORE_BLOCK < pairs[i].offset / DFSTORE_BLOCK)
            return 0;
        end = pairs[i].offset + pairs[i].len;
    }
    span = end - pairs[0].offset;
    if (!sieve_pays(srv, n, bytes, span))
        return 0;
    *out = (struct ipvfs_pair){ .offset = pairs[0].offset, .len = span };
    return 1;
}

/* Copies the pairs of a sieved READ out of the span into the reply. */
static void sieve_pick(struct io_op *o)
{
    uint8_t *dst = o->rep + sizeof(struct ipvfs_io_rep);

    for (uint32_t i = 0; i < o->npairs; i++) {
        memcpy(dst, o->sieve + (o->pairs[i].offset - o->span.offset), o->pairs[i].len);
        dst += o->pairs[i].len;
    }
}

static void loans_back(struct server *srv, void *arg)
{
    (void)srv;
    df_l1_loans_return(arg);
    free(arg);
}

static int by_dst(const void *a, const void *b)
{
    const struct df_l1_loan *x = a, *y = b;

    return x->dst < y->dst ? -1 : x->dst > y->dst;
}

/* Replies to a READ of len bytes (o->rep) whose lent blocks go out from
 * the L1's slots, not copied (dfstore_read_lend); they go back once the
 * reply is written or dropped.  0, or -ENOMEM with nothing done. */
static int reply_lent(struct io_op *o, size_t len)
{
    struct df_l1_loans *held = malloc(sizeof(*held));
    /* [0] the reply header, then the runs between the loans and the loans */
    struct iovec *iov = malloc((2 * (size_t)o->loans.n + 2) * sizeof(*iov));
    uint8_t *at = o->rep;
    int n = 1;

    if (!held || !iov) {
        free(iov);
        free(held);
        return -ENOMEM;
    }
    qsort(o->loans.v, o->loans.n, sizeof(*o->loans.v), by_dst);
    for (uint32_t i = 0; i < o->loans.n; i++) {
        iov[n++] = (struct iovec){ at, (size_t)(o->loans.v[i].dst - at) };
        iov[n++] = (struct iovec){ (void *)o->loans.v[i].src, DFSTORE_BLOCK };
        at = o->loans.v[i].dst + DFSTORE_BLOCK;
    }
    iov[n++] = (struct iovec){ at, (size_t)(o->rep + len - at) };
    *held = o->loans;
    o->loans = (struct df_l1_loans){ 0 };
    conn_on_reply_sent(o->c, loans_back, held);
    conn_reply_iov(o->c, 0, o->rep, iov, n);
    return 0;
}

static void read_next(struct server *srv);
static void read_next_deferred(struct evloop *loop, uint64_t id, void *user);
static void qos_pump(struct server *srv);
static void qos_pump_deferred(struct evloop *loop, uint64_t id, void *user);
static void io_finish(int status, void *user);

static void held_done(struct evloop *loop, uint64_t id, void *user)
{
    io_finish(0, user);
}

/* The store's completion.  With --store-rate (a benchmark's slow store)
 * a successful one is held until a store serving one request at a time
 * at that rate would have finished it. */
static void io_done(int status, uint64_t value, void *user)
{
    struct io_op *o = user;
    struct server *srv = o->srv;
    uint64_t now, start;

    if (srv->opts.store_rate_mbps && status >= 0 && o->bytes) {
        now = qos_svc_now_us();
        start = srv->store_free_us > now ? srv->store_free_us : now;
        srv->store_free_us = start + o->bytes / srv->opts.store_rate_mbps;
        if (srv->store_free_us >= now + 1000 &&
            evloop_add_timer(srv->loop, (srv->store_free_us - now) / 1000, held_done, o))
            return;
    }
    io_finish(status, o);
}

/* The reply of a READ or WRITE whose store I/O is done. */
static void io_finish(int status, void *user)
{
    struct io_op *o = user;
    struct server *srv = o->srv;
    struct ipvfs_io_rep *rep;

    if (o->q.where == QOS_STORE && srv->qos) {
        qos_done(srv->qos, &o->q, qos_svc_now_us());
        /* as below: what may start now starts once this callback returned */
        if (!evloop_defer(srv->loop, qos_pump_deferred, srv))
            qos_pump(srv);
    }

    if (o->rw.state == RW_PLACE || o->rw.state == RW_RIDER) {
        readq_leave(&srv->reads, &o->rw, qos_svc_now_us());
        /* the freed place goes to a waiting READ once this store callback
         * has returned; failing that, right now */
        if (!evloop_defer(srv->loop, read_next_deferred, srv))
            read_next(srv);
    }

    if (o->sieve && status >= 0)
        sieve_pick(o);
    free(o->sieve);
    if (status < 0) {
        df_l1_loans_return(&o->loans);
        free(o->rep);
        conn_reply_err(o->c, -status, "%s of handle %llu failed: %s",
                       o->op == IPVFS_OP_READ ? "READ" : "WRITE",
                       (unsigned long long)o->handle, strerror(-status));
        free(o);
        return;
    }
    if (!o->rep && !(o->rep = malloc(sizeof(*rep)))) {
        df_l1_loans_return(&o->loans);
        conn_reply_err(o->c, ENOMEM, "out of memory");
        free(o);
        return;
    }
    rep = (struct ipvfs_io_rep *)o->rep;
    rep->bytes = o->bytes;
    rep->df_size = o->srv->ds ? dfstore_size(o->srv->ds, o->handle) : 0;
    rep->verifier = o->srv->verifier;
    if (o->op == IPVFS_OP_READ) {
        conn_count_bytes(o->c, 0, o->bytes);
        srv->reads.replied++;
        srv->reads.reply_us += qos_svc_now_us() - o->new_us;
    } else {
        conn_count_bytes(o->c, o->bytes, 0);
    }
    if (o->loans.n && reply_lent(o, sizeof(*rep) + o->bytes) == 0) {
        free(o);
        return;
    }
    df_l1_loans_settle(&o->loans);      /* none, or no memory to send them */
    conn_reply(o->c, 0, o->rep, sizeof(*rep) + (o->op == IPVFS_OP_READ ? o->bytes : 0));
    free(o);
}

/* ---- READ ordering ----------------------------------------------------- */

static void read_start(struct io_op *o)
{
    struct server *srv = o->srv;
    uint64_t ra;
    int rc;

    if (!srv->ds) {
        io_done(-ESHUTDOWN, 0, o);
        return;
    }
    /* READs still waiting for a place: the store is busy with reads that
     * clients wait for, and read-ahead would only compete with them (and
     * cost copies: issue 27); a window the file's hint set still holds */
    ra = o->ra_max == DFSTORE_RA_DEFAULT && srv->reads.head ? 0 : o->ra_max;
    /* a sieved read picks its pairs out of the span: no loans */
    rc = dfstore_read_lend(srv->ds, o->handle, o->rd_pairs, o->rd_npairs, ra, o->rd_buf,
                           o->sieve ? NULL : &o->loans, io_done, o);
    if (rc < 0)
        io_done(rc, 0, o);
}

static struct io_op *op_of_wait(struct read_wait *w)
{
    return (struct io_op *)(void *)((char *)w - offsetof(struct io_op, rw));
}

/* Starts every waiting READ readq lets into the store now, and counts
 * each for its client (what shows the order: stats --json). */
static void read_next(struct server *srv)
{
    struct read_wait *w;

    while ((w = readq_next(&srv->reads, qos_svc_now_us()))) {
        struct io_op *o = op_of_wait(w);
        struct client_counters *cc = conn_client_counters(o->c);

        if (cc) {
            cc->reads_waited++;
            cc->last_wait_seq = srv->reads.served;
        }
        read_start(o);
    }
}

static void read_next_deferred(struct evloop *loop, uint64_t id, void *user)
{
    read_next(user);
}

/* Starts the READ now when readq lets it in, else queues it; a READ that
 * went in may take waiting ones along as riders. */
static void read_submit(struct io_op *o)
{
    struct server *srv = o->srv;

    if (readq_submit(&srv->reads, &o->rw, qos_svc_now_us())) {
        read_start(o);
        read_next(srv);
    }
}

/* ---- QoS ------------------------------------------------------------- */

/* Starts a READ or WRITE the scheduler let through. */
static void rw_start(struct io_op *o)
{
    int rc;

    if (o->op == IPVFS_OP_READ) {
        read_submit(o);
        return;
    }
    rc = o->srv->ds ? dfstore_write(o->srv->ds, o->handle, o->pairs, o->npairs, o->wr_data,
                                    io_done, o)
                    : -ESHUTDOWN;
    if (rc < 0)
        io_done(rc, 0, o);
}

static struct io_op *op_of(struct qos_req *r)
{
    return (struct io_op *)(void *)((char *)r - offsetof(struct io_op, q));
}

/* The store is going away (qos_svc_close): r starts, and fails. */
static void qos_start(struct qos_req *r)
{
    rw_start(op_of(r));
}

static void qos_pump(struct server *srv)
{
    struct qos_req *r;

    while (srv->qos && (r = qos_next(srv->qos, qos_svc_now_us())))
        rw_start(op_of(r));
}

static void qos_pump_deferred(struct evloop *loop, uint64_t id, void *user)
{
    qos_pump(user);
}

static void qos_submit_op(struct io_op *o, struct conn *c)
{
    struct server *srv = o->srv;

    if (!srv->qos) {
        rw_start(o);
        return;
    }
    o->q = (struct qos_req){ .cls = qos_svc_class(c), .bytes = o->bytes, .start = qos_start };
    qos_submit(srv->qos, &o->q, qos_svc_now_us());
    qos_pump(srv);
}

/* --trace: one line per pair of each READ/WRITE, as it arrives, in
 * ipvfs-cachesim's format (tools/cachesim/cachesim.h): CLIENT FILE OFFSET
 * LENGTH r|w, FILE the datafile handle modulo 2^24 (two handles may share
 * a number there), OFFSET the datafile offset.  One I/O node's datafiles
 * are files striped over one node, so the trace replays with
 * --servers 1+NT --targets NT.  Flushed per request, so a crash loses no
 * line; a write error stops the tracing (logged). */
static void trace_request(struct server *srv, uint32_t client, uint64_t handle,
                          const struct ipvfs_pair *pairs, uint32_t npairs, int writing)
{
    for (uint32_t i = 0; srv->trace && i < npairs; i++)
        if (pairs[i].len && fprintf(srv->trace, "%u %llu %llu %llu %c\n", client,
                                    (unsigned long long)(handle & 0xffffffu),
                                    (unsigned long long)pairs[i].offset,
                                    (unsigned long long)pairs[i].len, writing ? 'w' : 'r') < 0)
            break;
    if (srv->trace && (ferror(srv->trace) || fflush(srv->trace) != 0)) {
        log_error("I/O node %u: writing the trace failed (%s): tracing stops", srv->io_index,
                  strerror(errno));
        ionode_trace_close(srv);
    }
}

static void handle_rw(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body)
{
    int writing = hdr->op == IPVFS_OP_WRITE;
    struct io_body b;
    struct io_op *o;

    if (!store_ready(c) || check_io(c, hdr, body, writing, &b) < 0)
        return;
    if (!writing && ((b.req.flags & ~IPVFS_READ_FLAGS_KNOWN) ||
                     (uint64_t)(b.req.flags >> IPVFS_READ_RA_SHIFT) * IPVFS_READ_RA_UNIT >
                         IPVFS_MAX_READAHEAD)) {
        conn_reply_err(c, EINVAL, "READ flags %#x unknown, or a read-ahead window over %llu MiB",
                       b.req.flags, (unsigned long long)(IPVFS_MAX_READAHEAD >> 20));
        return;
    }
    if (!(o = new_op(c, hdr->op, b.req.handle)))
        return;
    o->bytes = b.bytes;
    trace_request(o->srv, conn_client_id(c), b.req.handle, b.pairs, b.req.npairs, writing);
    if (b.req.npairs == 0) {
        io_done(0, 0, o);
        return;
    }
    if (writing) {
        o->pairs = b.pairs;
        o->npairs = b.req.npairs;
        o->wr_data = (const uint8_t *)(b.pairs + b.req.npairs);
        qos_submit_op(o, c);
        return;
    } else {
        if (!(o->rep = malloc(sizeof(struct ipvfs_io_rep) + b.bytes))) {
            free(o);
            conn_reply_err(c, ENOMEM, "no memory for a %llu-byte READ",
                           (unsigned long long)b.bytes);
            return;
        }
        if (sieve_span(o->srv, b.pairs, b.req.npairs, b.bytes, &o->span) &&
            (o->sieve = malloc(o->span.len))) {
            o->pairs = b.pairs;
            o->npairs = b.req.npairs;
            o->rd_pairs = &o->span;
            o->rd_npairs = 1;
            o->rd_buf = o->sieve;
        } else {
            o->rd_pairs = b.pairs;
            o->rd_npairs = b.req.npairs;
            o->rd_buf = o->rep + sizeof(struct ipvfs_io_rep);
        }
        o->rw = (struct read_wait){ .handle = b.req.handle, .lo = b.lo, .hi = b.hi,
                                    .first = o->rd_pairs[0].offset,
                                    .order = b.req.flags & IPVFS_READ_ORDER_MASK,
                                    .client_id = conn_client_id(c) };
        o->ra_max = b.req.flags & IPVFS_READ_RA_SET
                        ? (uint64_t)(b.req.flags >> IPVFS_READ_RA_SHIFT) * IPVFS_READ_RA_UNIT
                        : DFSTORE_RA_DEFAULT;
        qos_submit_op(o, c);
        return;
    }
}

static void df_done(int status, uint64_t value, void *user)
{
    struct io_op *o = user;
    struct ipvfs_df_rep *rep;

    if (status < 0) {
        conn_reply_err(o->c, -status, "datafile operation %u on handle %llu failed: %s", o->op,
                       (unsigned long long)o->handle, strerror(-status));
    } else if (!(rep = malloc(sizeof(*rep)))) {
        conn_reply_err(o->c, ENOMEM, "out of memory");
    } else {
        rep->value = value;
        rep->verifier = o->srv->verifier;
        conn_reply(o->c, 0, rep, sizeof(*rep));
    }
    free(o);
}

static void handle_df(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body)
{
    struct dfstore *ds = conn_server(c)->ds;
    struct ipvfs_df_req req;
    struct io_op *o;
    int rc;

    if (!store_ready(c))
        return;
    if (hdr->body_len != sizeof(req)) {
        conn_reply_err(c, EINVAL, "datafile request body is %llu bytes, not %zu",
                       (unsigned long long)hdr->body_len, sizeof(req));
        return;
    }
    memcpy(&req, body, sizeof(req));
    if (req.handle == 0 && hdr->op != IPVFS_OP_DF_SYNC) {
        conn_reply_err(c, EINVAL, "handle 0 names no datafile");
        return;
    }
    if (!(o = new_op(c, hdr->op, req.handle)))
        return;
    switch (hdr->op) {
    case IPVFS_OP_DF_GETSIZE:
        df_done(0, dfstore_size(ds, req.handle), o);
        return;
    case IPVFS_OP_DF_TRUNCATE:
        rc = dfstore_truncate(ds, req.handle, req.arg, df_done, o);
        break;
    case IPVFS_OP_DF_SYNC:
        rc = dfstore_sync(ds, req.handle, df_done, o);
        break;
    case IPVFS_OP_DF_REMOVE:
        rc = dfstore_remove(ds, req.handle, df_done, o);
        break;
    default:
        rc = dfstore_prealloc(ds, req.handle, req.arg, df_done, o);
        break;
    }
    if (rc < 0)
        df_done(rc, 0, o);
}

/* DF_STATFS: the store's block counts, at once (no volume I/O). */
static void handle_statfs(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body)
{
    struct ipvfs_statfs_rep *rep;
    struct dfstore_stats st;

    (void)body;
    if (!store_ready(c))
        return;
    if (hdr->body_len != 0) {
        conn_reply_err(c, EINVAL, "DF_STATFS request body is %llu bytes, not 0",
                       (unsigned long long)hdr->body_len);
        return;
    }
    if (!(rep = malloc(sizeof(*rep)))) {
        conn_reply_err(c, ENOMEM, "out of memory");
        return;
    }
    dfstore_stats(conn_server(c)->ds, &st);
    rep->total_bytes = st.blocks_total * DFSTORE_BLOCK;
    rep->free_bytes = (st.blocks_total - st.blocks_used) * DFSTORE_BLOCK;
    rep->datafiles = st.datafiles;
    conn_reply(c, 0, rep, sizeof(*rep));
}

static const struct op_entry ionode_ops[] = {
    { IPVFS_OP_READ, IPVFS_ROLE_IO, handle_rw, "READ" },
    { IPVFS_OP_WRITE, IPVFS_ROLE_IO, handle_rw, "WRITE" },
    { IPVFS_OP_DF_GETSIZE, IPVFS_ROLE_IO, handle_df, "DF_GETSIZE" },
    { IPVFS_OP_DF_TRUNCATE, IPVFS_ROLE_IO, handle_df, "DF_TRUNCATE" },
    { IPVFS_OP_DF_SYNC, IPVFS_ROLE_IO, handle_df, "DF_SYNC" },
    { IPVFS_OP_DF_REMOVE, IPVFS_ROLE_IO, handle_df, "DF_REMOVE" },
    { IPVFS_OP_DF_PREALLOC, IPVFS_ROLE_IO, handle_df, "DF_PREALLOC" },
    { IPVFS_OP_DF_STATFS, IPVFS_ROLE_IO, handle_statfs, "DF_STATFS" },
    { 0, 0, NULL, NULL },
};

const struct service ionode_service = { .name = "I/O node", .ops = ionode_ops };
