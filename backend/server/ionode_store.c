/* The I/O node's datafile store and the iRAID volume under it: opening
 * them at start (members' URLs and CHAP, the trace, read-ahead), the L1's
 * figures for STATUS, the local stop (a final sync, then close) and the
 * close.  The requests they serve are ionode.c's. */
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

/* READ places of the store (srv->reads.places): --read-places per
 * member, or auto: one READ per target at once keeps every member busy
 * while the target is on this host, and the rest wait and are ordered;
 * a member elsewhere (another host's target rank, an external LUN) gets
 * two, because a READ holds its place while its data crosses the link
 * and the target's disk would idle meanwhile: the second READ's disk
 * time overlaps that transfer (doc/launching.md, --read-places). */
static uint32_t read_places(const struct server *srv)
{
    uint32_t nt = srv->opts.nt, first = srv->io_index * (1 + nt) + 1, places = 0;

    if (srv->opts.read_places)
        return (nt ? nt : 1) * srv->opts.read_places;
    for (uint32_t k = 0; k < nt; k++) {
        const char *host = srv->map.ranks[first + k].host;
        int here = !server_member_url(&srv->opts, srv->io_index, k) &&
                   strcmp(host, srv->host) == 0;

        places += here ? 1 : 2;
    }
    return places ? places : 1;
}

void ionode_trace_close(struct server *srv)
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
        ionode_trace_close(srv);
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
    if ((rc = setup_readahead(srv)) < 0 || (rc = trace_open(srv)) < 0 ||
        (rc = qos_svc_open(srv)) < 0)
        goto close_store;
    readq_init(&srv->reads, read_places(srv), srv->io_index,
               ((uint64_t)srv->rank + 1) * 0x9E3779B97F4A7C15ull);
    log_info("I/O node %u: RAID-%d volume of %llu MiB over %u targets, L1 cache %llu MiB, "
             "read-ahead %llu KiB, %u READs in the store at once", srv->io_index,
             srv->opts.raid, (unsigned long long)(iraid_size(srv->vol) >> 20), nt,
             (unsigned long long)(srv->opts.cache_l1 >> 20),
             (unsigned long long)(srv->opts.cache_l1 ? srv->opts.readahead >> 10 : 0),
             srv->reads.places);
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

/* Logs how long READs held their places, how long a freed place stayed
 * free while READs waited, how long READs waited for a place and how long
 * the I/O node took from a READ's request to its reply
 * (benchmarks/model-calibrate.sh and model-places.sh read them), then
 * clears the counters: ionode_close runs again at teardown (serve.c) after a
 * stop, and the figures belong in the log once. */
static void log_place_times(struct read_order *ro, uint32_t io_index)
{
    if (ro->placed)
        log_info("I/O node %u: %llu READs held a place in the store for %.4f ms on average",
                 io_index, (unsigned long long)ro->placed, ro->place_us / 1e3 / ro->placed);
    if (ro->handoffs)
        log_info("I/O node %u: a place freed while READs waited was taken again after %.4f ms "
                 "on average (%llu times)", io_index, ro->handoff_us / 1e3 / ro->handoffs,
                 (unsigned long long)ro->handoffs);
    if (ro->waited)
        log_info("I/O node %u: %llu READs waited for a place %.4f ms on average", io_index,
                 (unsigned long long)ro->waited, ro->wait_us / 1e3 / ro->waited);
    if (ro->rode)
        log_info("I/O node %u: %llu READs rode along with a READ in the store", io_index,
                 (unsigned long long)ro->rode);
    if (ro->replied)
        log_info("I/O node %u: %llu READs were answered %.4f ms after they came in on average",
                 io_index, (unsigned long long)ro->replied, ro->reply_us / 1e3 / ro->replied);
    ro->placed = ro->place_us = 0;
    ro->handoffs = ro->handoff_us = 0;
    ro->waited = ro->wait_us = 0;
    ro->rode = 0;
    ro->replied = ro->reply_us = 0;
}

/* Runs outside the volume's callbacks (a timer, or the end of main): the
 * store's final sync and the clean mark run the loop until they are done. */
void ionode_close(struct server *srv)
{
    int rc;

    ionode_trace_close(srv);
    log_place_times(&srv->reads, srv->io_index);
    if (srv->ds) {
        dfstore_close(srv->ds);
        srv->ds = NULL;
    }
    /* what still waits for the store gets ESHUTDOWN */
    qos_svc_close(srv);
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
