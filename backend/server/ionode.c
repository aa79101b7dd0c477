/* I/O node service: READ WRITE DF_* onto the datafile store (dfstore.h),
 * which lives on this node's iRAID volume over its target ranks.
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
 * common/proto.h): at most srv->reads.places of them are in the store; a
 * READ that finds a free place and nobody waiting starts at once, the
 * others wait in srv->reads, and each completion gives its place to the
 * waiting READ the policy picks.  A waiting READ is in one of two states:
 * WAITING (queued, counted nowhere) and IN_STORE (in_store set, counted in
 * srv->reads.in_store until io_done). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backend/dfstore/dfstore.h"
#include "backend/iscsi/target.h"
#include "backend/server/ionode.h"
#include "backend/server/server.h"
#include "common/log.h"
#include "iraid/volume.h"

/* A member that answers nothing for this long (not even a NOP-Out) is
 * marked down and the volume goes on degraded; one that answers but is
 * slow gets iRAID's command timeout (IRAID_DEFAULT_CMD_TIMEOUT_MS, 30 s).
 * Shorter than the clients' request timeout (IPVFS_CLIENT_REQUEST_MS), so
 * a write across a hung target still completes for the client instead of
 * failing there first. */
#define IONODE_ISCSI_TIMEOUT_MS 5000

/* A READ of many pairs lying close together (a tile, a strided view) is
 * read from the store as its covering span, then the pairs are picked out:
 * one volume access instead of one per pair.  Used when the span is at
 * most IONODE_SIEVE_FACTOR times the requested bytes (or at most
 * IONODE_SIEVE_SLACK bytes) and the pairs ascend without overlapping.
 * Reads only: a write never touches bytes it was not given. */
#define IONODE_SIEVE_FACTOR 4u
#define IONODE_SIEVE_SLACK (64u << 10)

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
    uint32_t order;             /* enum ipvfs_read_order the client named */
    uint64_t ra_max;            /* read-ahead window (DFSTORE_RA_DEFAULT: --readahead) */
    uint32_t client_id;
    int in_store;               /* counted in read_order.in_store */
    struct io_op *next_wait;
};

/* The iSCSI URL of each member, and its login's CHAP: its target rank's
 * LUN, with the CHAP derived from the key, or the external LUN --member
 * names, without.  -EHOSTDOWN when a target rank did not start. */
static int member_urls(struct server *srv, char (*urls)[512], const char **url_ptrs,
                       struct iraid_chap *chap)
{
    uint32_t nt = srv->opts.nt, first = srv->io_index * (1 + nt) + 1;

    for (uint32_t k = 0; k < nt; k++) {
        const struct ipvfs_map_rank *t = &srv->map.ranks[first + k];
        const char *ext = server_member_url(&srv->opts, srv->io_index, k);
        char iqn[256];
        url_ptrs[k] = urls[k];
        if (ext) {
            /* --member: the target rank of this slot stays a spare */
            snprintf(urls[k], 512, "%s", ext);
            memset(&chap[k], 0, sizeof(chap[k]));
            log_info("member %u is external: %s (rank %u is a spare)", k, ext, first + k);
            continue;
        }
        server_target_iqn(srv, srv->io_index, k, iqn, sizeof(iqn));
        server_chap(srv, iqn, &chap[k]);
        snprintf(urls[k], 512, "iscsi://%s:%u/%s/0", t->host, t->iscsi_port, iqn);
        if (t->iscsi_port == 0) {
            log_error("target %u of this I/O node (rank %u) did not start", k, first + k);
            return -EHOSTDOWN;
        }
    }
    return 0;
}

static void trace_close(struct server *srv)
{
    if (srv->ds)
        dfstore_set_trace(srv->ds, NULL);
    if (srv->trace && fclose(srv->trace) != 0)
        log_error("I/O node %u: closing the trace failed: %s", srv->io_index, strerror(errno));
    srv->trace = NULL;
}

/* --readahead fills the L1: without one it has nowhere to go (said once,
 * at start, and read-ahead stays off). */
static int setup_readahead(struct server *srv)
{
    int rc;

    if (srv->opts.readahead == 0)
        return 0;
    if (srv->opts.cache_l1 == 0) {
        log_warn("--readahead %llu ignored: read-ahead fills the L1 cache, and --cache-l1 is 0",
                 (unsigned long long)srv->opts.readahead);
        return 0;
    }
    if ((rc = dfstore_set_readahead(srv->ds, srv->opts.readahead)) < 0)
        log_error("cannot set up read-ahead of %llu KiB: %s",
                  (unsigned long long)(srv->opts.readahead >> 10), strerror(-rc));
    return rc;
}

/* --trace: I/O node N appends to TRACE.ioN (a restarted serving process
 * goes on where the last one stopped, after a new header line).  Version 2
 * of the format (tools/cachesim/cachesim.h): a header naming the volume
 * and cache configuration, the requests as they arrive, and the L1's
 * events (dfstore_set_trace), which ipvfs-cachesim replays exactly. */
static int trace_open(struct server *srv)
{
    char path[sizeof(srv->opts.trace_path) + 16];
    struct iraid_status st;
    int rc;

    if (!srv->opts.trace_path[0])
        return 0;
    snprintf(path, sizeof(path), "%s.io%u", srv->opts.trace_path, srv->io_index);
    if (!(srv->trace = fopen(path, "a"))) {
        rc = -errno;
        log_error("cannot open the trace file %s: %s", path, strerror(errno));
        return rc;
    }
    if ((rc = iraid_get_status(srv->vol, &st)) < 0 ||
        fprintf(srv->trace, "#ipvfs-trace 3 io=%u raid=%d members=%u chunk=%llu l1=%llu l2=%llu "
                "l2_policy=%s ra=%llu\n", srv->io_index, st.level, st.nmembers,
                (unsigned long long)st.chunk, (unsigned long long)srv->opts.cache_l1,
                (unsigned long long)srv->opts.cache_l2,
                srv->opts.cache_l2_policy[0] ? srv->opts.cache_l2_policy
                                             : TGT_L2_DEFAULT_POLICY,
                (unsigned long long)(srv->opts.cache_l1 ? srv->opts.readahead : 0)) < 0 ||
        fflush(srv->trace) != 0) {
        rc = rc < 0 ? rc : -EIO;
        log_error("cannot write the trace file %s: %s", path, strerror(-rc));
        trace_close(srv);
        return rc;
    }
    dfstore_set_trace(srv->ds, srv->trace);
    log_info("I/O node %u: tracing READ/WRITE to %s", srv->io_index, path);
    return 0;
}

int ionode_open(struct server *srv)
{
    uint32_t nt = srv->opts.nt;
    char urls[64][512], initiator[256], dir[1200];
    const char *url_ptrs[64];
    struct iraid_chap *chap;
    struct iraid_config cfg;
    int rc;

    if (!(chap = calloc(nt, sizeof(*chap))))
        return -ENOMEM;
    if ((rc = member_urls(srv, urls, url_ptrs, chap)) < 0) {
        free(chap);
        return rc;
    }
    server_initiator_iqn(srv, initiator, sizeof(initiator));
    cfg = (struct iraid_config){
        .level = srv->opts.raid,
        .nmembers = nt,
        .urls = url_ptrs,
        .chap = chap,
        .chunk_size = srv->opts.chunk_size,
        .initiator_iqn = initiator,
        .timeout_ms = IONODE_ISCSI_TIMEOUT_MS,
        .assume_clean = srv->fresh_volume,
        .start_dirty_degraded = srv->opts.start_dirty_degraded,
    };
    rc = iraid_open(srv->loop, &cfg, &srv->vol);
    explicit_bzero(chap, nt * sizeof(*chap));
    free(chap);
    if (rc < 0) {
        log_error("cannot open the RAID-%d volume over %u targets: %s", srv->opts.raid, nt,
                  strerror(-rc));
        return rc;
    }
    snprintf(dir, sizeof(dir), "%s/dfstore", srv->rank_dir);
    if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
        rc = -errno;
        log_error("cannot create %s: %s", dir, strerror(errno));
        goto close_volume;
    }
    /* a new volume is zeros: new blocks then need no zero-fill */
    rc = srv->fresh_volume ? dfstore_open_zeroed(srv->loop, srv->vol, dir, &srv->ds)
                           : dfstore_open(srv->loop, srv->vol, dir, &srv->ds);
    if (rc < 0) {
        log_error("cannot open the datafile store in %s: %s", dir, strerror(-rc));
        goto close_volume;
    }
    if ((rc = dfstore_set_l1(srv->ds, srv->opts.cache_l1)) < 0) {
        log_error("cannot set up an L1 cache of %llu MiB: %s",
                  (unsigned long long)(srv->opts.cache_l1 >> 20), strerror(-rc));
        goto close_store;
    }
    if ((rc = setup_readahead(srv)) < 0 || (rc = trace_open(srv)) < 0)
        goto close_store;
    /* one READ per target at once keeps every member busy; more wait
     * and are ordered */
    srv->reads = (struct read_order){ .places = nt ? nt : 1, .nclients = 1,
                                      .hash_next = srv->io_index,
                                      .rng = ((uint64_t)srv->rank + 1) * 0x9E3779B97F4A7C15ull };
    log_info("I/O node %u: RAID-%d volume of %llu MiB over %u targets, L1 cache %llu MiB, "
             "read-ahead %llu KiB", srv->io_index, srv->opts.raid,
             (unsigned long long)(iraid_size(srv->vol) >> 20), nt,
             (unsigned long long)(srv->opts.cache_l1 >> 20),
             (unsigned long long)(srv->opts.cache_l1 ? srv->opts.readahead >> 10 : 0));
    return 0;
close_store:
    dfstore_close(srv->ds);
    srv->ds = NULL;
close_volume:
    iraid_close(srv->vol);
    srv->vol = NULL;
    return rc;
}

struct ipvfs_l1_status ionode_l1_status(struct server *srv)
{
    struct dfstore_stats st;

    if (!srv->ds)
        return (struct ipvfs_l1_status){ 0 };
    dfstore_stats(srv->ds, &st);
    return (struct ipvfs_l1_status){
        .capacity = st.l1.capacity, .resident = st.l1.resident, .hits = st.l1.hits,
        .misses = st.l1.misses, .bypasses = st.l1.bypasses, .evictions = st.l1.evictions,
        .write_updates = st.l1.write_updates, .dirty = st.l1.dirty,
        .writes_absorbed = st.l1.writes_absorbed, .writebacks = st.l1.writebacks,
        .writeback_ios = st.l1.writeback_ios, .flushes = st.l1.flushes,
        .demotes = st.l1.demotes,
        .readahead_blocks = st.l1.readahead_blocks, .readahead_hits = st.l1.readahead_hits,
        .readahead_wasted = st.l1.readahead_wasted,
    };
}

/* Runs outside the volume's callbacks (a timer, or the end of main): the
 * store's final sync and the clean mark run the loop until they are done. */
void ionode_close(struct server *srv)
{
    int rc;

    trace_close(srv);
    if (srv->ds) {
        dfstore_close(srv->ds);
        srv->ds = NULL;
    }
    if (srv->vol) {
        /* Clears the write-intent bits of the last second's writes too, so
         * that the next start finds the volume clean even if a member is
         * missing then (a dirty degraded RAID-5 volume would be refused). */
        if ((rc = iraid_mark_clean_sync(srv->vol)) < 0)
            log_warn("I/O node %u: volume not marked clean (%s): the next start resyncs "
                     "the regions written last", srv->io_index, strerror(-rc));
        iraid_close(srv->vol);
        srv->vol = NULL;
    }
}

/* ---- local stop: sync, then close store and volume ---------------------- */

struct stop_ctx {
    struct server *srv;
    void (*done)(struct server *srv, int status);
    int status;
    unsigned retries;           /* final syncs tried again (stop_wait_member) */
};

/* A final sync that failed while a member was logging in again (a target
 * that was stopped or restarted a moment ago) is tried again for up to
 * STOP_SYNC_RETRIES x STOP_SYNC_RETRY_MS: the L1's dirty blocks and the
 * store's last commit would be lost for a member a second away from being
 * back.  Well inside the cluster's 30 s stop barrier. */
#define STOP_SYNC_RETRIES   20
#define STOP_SYNC_RETRY_MS  500

static void stop_synced(int status, uint64_t value, void *user);

static int member_reconnecting(const struct iraid_volume *vol)
{
    struct iraid_status st;

    if (!vol || iraid_get_status(vol, &st) < 0)
        return 0;
    for (uint32_t i = 0; i < st.nmembers; i++)
        if (st.member[i].state == IRAID_MEMBER_RECONNECTING)
            return 1;
    return 0;
}

static void stop_retry(struct evloop *loop, uint64_t id, void *user)
{
    struct stop_ctx *s = user;
    int rc;

    if ((rc = dfstore_sync(s->srv->ds, 0, stop_synced, s)) < 0)
        stop_synced(rc, 0, s);
}

/* Returns 1 when the final sync goes again later (a member is coming
 * back), 0 when the failure stands. */
static int stop_wait_member(struct stop_ctx *s)
{
    if (s->retries >= STOP_SYNC_RETRIES || !member_reconnecting(s->srv->vol))
        return 0;
    if (s->retries++ == 0)
        log_info("I/O node %u: final sync waits for a member logging in again (%u s at most)",
                 s->srv->io_index, STOP_SYNC_RETRIES * STOP_SYNC_RETRY_MS / 1000);
    return evloop_add_timer(s->srv->loop, STOP_SYNC_RETRY_MS, stop_retry, s) != 0;
}

/* Runs from the outermost loop level, outside any store callback and any
 * nested run, so closing (which runs the loop itself) is safe. */
static void stop_close(struct evloop *loop, uint64_t id, void *user)
{
    struct stop_ctx *s = user;

    ionode_close(s->srv);
    log_info("I/O node %u stopped (%s)", s->srv->io_index,
             s->status ? strerror(-s->status) : "synced");
    s->done(s->srv, s->status);
    free(s);
}

static void stop_synced(int status, uint64_t value, void *user)
{
    struct stop_ctx *s = user;

    (void)value;
    if (status < 0 && stop_wait_member(s))
        return;
    s->status = status;
    if (status < 0)
        log_error("final sync of the datafile store failed: %s", strerror(-status));
    if (!evloop_defer_outer(s->srv->loop, stop_close, s))
        stop_close(s->srv->loop, 0, s);
}

void ionode_stop(struct server *srv, void (*done)(struct server *srv, int status))
{
    struct stop_ctx *s = calloc(1, sizeof(*s));
    int rc;

    if (!s) {
        ionode_close(srv);
        done(srv, -ENOMEM);
        return;
    }
    *s = (struct stop_ctx){ .srv = srv, .done = done };
    if (!srv->ds) {
        stop_synced(0, 0, s);
        return;
    }
    if ((rc = dfstore_sync(srv->ds, 0, stop_synced, s)) < 0)
        stop_synced(rc, 0, s);
}

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
    return o;
}

static int store_ready(struct conn *c)
{
    if (conn_server(c)->ds)
        return 1;
    conn_reply_err(c, ESHUTDOWN, "I/O node is stopping");
    return 0;
}

/* Checks an io body; on success *out_pairs points into it and *out_bytes is
 * the pairs' total length. */
static int check_io(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body,
                    int writing, struct ipvfs_io_req *out_req,
                    const struct ipvfs_pair **out_pairs, uint64_t *out_bytes)
{
    const struct ipvfs_pair *pairs;
    uint64_t total = 0, want;

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
    }
    if (hdr->body_len != want + (writing ? total : 0)) {
        conn_reply_err(c, EINVAL, "body of %llu bytes disagrees with %u pairs of %llu bytes",
                       (unsigned long long)hdr->body_len, out_req->npairs,
                       (unsigned long long)total);
        return -EINVAL;
    }
    *out_pairs = pairs;
    *out_bytes = total;
    return 0;
}

/* The covering span of pairs when sieving pays (see IONODE_SIEVE_*). */
static int sieve_span(const struct ipvfs_pair *pairs, uint32_t n, uint64_t bytes,
                      struct ipvfs_pair *out)
{
    uint64_t end = pairs[0].offset + pairs[0].len, span;

    if (n < 2)
        return 0;
    for (uint32_t i = 1; i < n; i++) {
        if (pairs[i].offset < end)
            return 0;
        end = pairs[i].offset + pairs[i].len;
    }
    span = end - pairs[0].offset;
    if (span > IPVFS_MAX_IO_BYTES ||
        (span > IONODE_SIEVE_SLACK && span / IONODE_SIEVE_FACTOR > bytes))
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

static void io_done(int status, uint64_t value, void *user)
{
    struct io_op *o = user;
    struct server *srv = o->srv;
    struct ipvfs_io_rep *rep;

    if (o->in_store) {
        srv->reads.in_store--;
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
    if (o->op == IPVFS_OP_READ)
        conn_count_bytes(o->c, 0, o->bytes);
    else
        conn_count_bytes(o->c, o->bytes, 0);
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
    int rc;

    if (!srv->ds) {
        io_done(-ESHUTDOWN, 0, o);
        return;
    }
    o->in_store = 1;
    srv->reads.in_store++;
    /* a sieved read picks its pairs out of the span: no loans */
    rc = dfstore_read_lend(srv->ds, o->handle, o->rd_pairs, o->rd_npairs, o->ra_max, o->rd_buf,
                           o->sieve ? NULL : &o->loans, io_done, o);
    if (rc < 0)
        io_done(rc, 0, o);
}

static uint64_t rng_next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* Whether a is to be served before b (both waiting) under policy. */
static int read_before(const struct read_order *ro, uint32_t policy, uint32_t target,
                       const struct io_op *a, const struct io_op *b)
{
    switch (policy) {
    case IPVFS_READ_ORDER_FIRST:
        return a->rd_pairs[0].offset < b->rd_pairs[0].offset;
    case IPVFS_READ_ORDER_HASH:
        return (a->client_id + ro->nclients - target) % ro->nclients <
               (b->client_id + ro->nclients - target) % ro->nclients;
    case IPVFS_READ_ORDER_RANDOM:
        return a->client_id == target && b->client_id != target;
    default:
        return 0;
    }
}

/* RANDOM: a client drawn evenly among those waiting. */
static uint32_t random_client(struct read_order *ro)
{
    uint32_t n = 0, k;
    struct io_op *o;

    for (o = ro->head; o; o = o->next_wait)
        n++;
    k = (uint32_t)(rng_next(&ro->rng) % n);
    for (o = ro->head; k; o = o->next_wait)
        k--;
    /* an op drawn evenly is a client weighted by its waiting READs (a
     * connection may have several waiting since protocol 5) */
    return o->client_id;
}

/* Takes the READ the oldest waiting one's policy serves next out of the
 * queue (the oldest wins ties, so each policy is FIFO among equals). */
static struct io_op *read_pick(struct read_order *ro)
{
    uint32_t policy = ro->head->order, target = ro->hash_next % ro->nclients;
    struct io_op **best = &ro->head, **pp, *o;

    if (policy == IPVFS_READ_ORDER_RANDOM)
        target = random_client(ro);
    for (pp = &ro->head->next_wait; *pp; pp = &(*pp)->next_wait)
        if (read_before(ro, policy, target, *pp, *best))
            best = pp;
    o = *best;
    *best = o->next_wait;
    if (ro->tail == o) {
        ro->tail = NULL;
        for (struct io_op *t = ro->head; t; t = t->next_wait)
            ro->tail = t;
    }
    o->next_wait = NULL;
    if (policy == IPVFS_READ_ORDER_HASH)
        ro->hash_next = (o->client_id + 1) % ro->nclients;
    return o;
}

/* Gives free places to waiting READs, in the order of their policy, and
 * counts each for its client (what shows the order: stats --json). */
static void read_next(struct server *srv)
{
    struct read_order *ro = &srv->reads;

    while (ro->head && ro->in_store < ro->places) {
        struct io_op *o = read_pick(ro);
        struct client_counters *cc = conn_client_counters(o->c);

        ro->served++;
        if (cc) {
            cc->reads_waited++;
            cc->last_wait_seq = ro->served;
        }
        read_start(o);
    }
}

static void read_next_deferred(struct evloop *loop, uint64_t id, void *user)
{
    read_next(user);
}

/* Starts the READ now when a place is free and nobody waits, else queues
 * it behind the others. */
static void read_submit(struct io_op *o)
{
    struct read_order *ro = &o->srv->reads;

    /* the largest id (ipvfs-ctl's) would wrap n to 0, a division by zero
     * in HASH: it takes part in the round robin modulo the others' n */
    if (o->client_id >= ro->nclients && o->client_id != UINT32_MAX)
        ro->nclients = o->client_id + 1;
    if (!ro->head && ro->in_store < ro->places) {
        read_start(o);
        return;
    }
    if (ro->tail)
        ro->tail->next_wait = o;
    else
        ro->head = o;
    ro->tail = o;
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
        trace_close(srv);
    }
}

static void handle_rw(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body)
{
    int writing = hdr->op == IPVFS_OP_WRITE, rc;
    const struct ipvfs_pair *pairs;
    struct ipvfs_io_req req;
    struct io_op *o;
    uint64_t bytes;

    if (!store_ready(c) || check_io(c, hdr, body, writing, &req, &pairs, &bytes) < 0)
        return;
    if (!writing && ((req.flags & ~IPVFS_READ_FLAGS_KNOWN) ||
                     (uint64_t)(req.flags >> IPVFS_READ_RA_SHIFT) * IPVFS_READ_RA_UNIT >
                         IPVFS_MAX_READAHEAD)) {
        conn_reply_err(c, EINVAL, "READ flags %#x unknown, or a read-ahead window over %llu MiB",
                       req.flags, (unsigned long long)(IPVFS_MAX_READAHEAD >> 20));
        return;
    }
    if (!(o = new_op(c, hdr->op, req.handle)))
        return;
    o->bytes = bytes;
    trace_request(o->srv, conn_client_id(c), req.handle, pairs, req.npairs, writing);
    if (req.npairs == 0) {
        io_done(0, 0, o);
        return;
    }
    if (writing) {
        rc = dfstore_write(o->srv->ds, req.handle, pairs, req.npairs,
                           (const uint8_t *)(pairs + req.npairs), io_done, o);
    } else {
        if (!(o->rep = malloc(sizeof(struct ipvfs_io_rep) + bytes))) {
            free(o);
            conn_reply_err(c, ENOMEM, "no memory for a %llu-byte READ",
                           (unsigned long long)bytes);
            return;
        }
        if (sieve_span(pairs, req.npairs, bytes, &o->span) &&
            (o->sieve = malloc(o->span.len))) {
            o->pairs = pairs;
            o->npairs = req.npairs;
            o->rd_pairs = &o->span;
            o->rd_npairs = 1;
            o->rd_buf = o->sieve;
        } else {
            o->rd_pairs = pairs;
            o->rd_npairs = req.npairs;
            o->rd_buf = o->rep + sizeof(struct ipvfs_io_rep);
        }
        o->order = req.flags & IPVFS_READ_ORDER_MASK;
        o->ra_max = req.flags & IPVFS_READ_RA_SET
                        ? (uint64_t)(req.flags >> IPVFS_READ_RA_SHIFT) * IPVFS_READ_RA_UNIT
                        : DFSTORE_RA_DEFAULT;
        o->client_id = conn_client_id(c);
        read_submit(o);
        return;
    }
    if (rc < 0)
        io_done(rc, 0, o);
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
