/* iRAID background sweeps: the rebuild of a returning or replaced member,
 * scrub, and the resync of dirty regions at open.  A sweep walks the
 * stripes in order, two stripe ops at a time (stripe.c: each under the
 * lock of its stripes, so writes meanwhile stay consistent; a RAID-5
 * rebuild's or scrub's op takes a run of stripes, sweep_run); the next op
 * starts from a zero timer, never from an op's callback.
 *
 * States of a sweep (struct iraid_sweep; vol->rebuild, scrub, resync):
 *
 *   IDLE --sweep_start()--> RUNNING (running = 1; ops started until
 *           sweep_window() of them are in flight, each reporting after the
 *           one before: sop_order)
 *   RUNNING --an op done, more stripes--> STEP (timer) --> RUNNING
 *   RUNNING --past the end, an error, or the volume closing, and no op
 *           in flight--> IDLE,
 *           then finished(): rebuild_finished, sweep_report (scrub's cb),
 *           resync_finished (iraid_open waits on running itself)
 *   rebuild: IDLE --tick, a member REBUILDING, retry time reached
 *           (rebuild_kick)--> RUNNING --done--> FLUSH of the target
 *           --flushed--> member UP, its stale bit cleared;
 *           a failure or a stale epoch retries 1 s later from the tick;
 *           a member whose rebuild_mode is UNDECIDED first goes through
 *           PROBE (its superblock read back, vol->rebuild_probe set):
 *           meta_member_resume_ok() picks BITMAP (the sweep visits only
 *           the missed regions, md's bitmap recovery) or FULL
 *
 * Cleanup: iraid_close() ends the running op through sop_cancel_waiting()
 * (finished() then runs with -ECANCELED) and deletes the step timers
 * (sweep_cancel_timers).
 *
 * Ownership: the sweeps live in the volume; each holds at most
 * SWEEP_WINDOW stripe ops (the newest in sw->last), which point back at
 * it (op->user). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "iraid/internal.h"

static void sweep_step(struct iraid_volume *vol, struct iraid_sweep *sw);

static void sweep_timer(struct evloop *loop, uint64_t id, void *user)
{
    struct iraid_sweep *sw = user;

    sw->timer = 0;
    sweep_step(sw->vol, sw);
}

/* After an op of nstripes stripes done: how long the next one waits for
 * the pace (iraid_set_sweep_pace), in ms.  Each stripe's chunk takes
 * chunk / rate; an op slower than its share is not paid back by a burst:
 * the pace clock never lags now by more than one op. */
static uint64_t sweep_pace_delay(struct iraid_volume *vol, struct iraid_sweep *sw,
                                 uint64_t nstripes)
{
    double now = (double)evloop_now_ms(), step;
    uint64_t rate, bytes = vol->layout.chunk * nstripes;

    if (!vol->pace.rate)
        return 0;
    if (vol->pace.done)
        vol->pace.done(vol->pace.user, bytes);
    if (!(rate = vol->pace.rate(vol->pace.user))) {
        sw->pace_at_ms = now;
        return 0;
    }
    step = (double)bytes * 1000.0 / (double)rate;
    if (sw->pace_at_ms < now - step)
        sw->pace_at_ms = now - step;
    sw->pace_at_ms += step;
    return sw->pace_at_ms > now ? (uint64_t)(sw->pace_at_ms - now) : 0;
}

void iraid_set_sweep_pace(struct iraid_volume *vol, const struct iraid_sweep_pace *pace)
{
    vol->pace = pace ? *pace : (struct iraid_sweep_pace){ 0 };
}

/* Ops a sweep keeps started at once: two, so that the next run's reads
 * overlap the last one's writes (a rebuild then moves at about the rate
 * of the slower of the two, not their sum); one when paced, whose rate
 * then decides.  sop_order makes them report in order. */
#define SWEEP_WINDOW 2

static uint32_t sweep_window(const struct iraid_volume *vol)
{
    return vol->pace.rate ? 1 : SWEEP_WINDOW;
}

/* The sweep stops once its last op is done and no step is due:
 * finished() runs then. */
static void sweep_end(struct iraid_volume *vol, struct iraid_sweep *sw)
{
    if (sw->status == 0 && vol->closing)
        sw->status = -ECANCELED;
    if (sw->inflight > 0 || sw->timer)
        return;
    sw->running = 0;
    sw->finished(vol, sw);
}

/* An op done (in start order: sop_order).  The next one starts from a
 * timer, never from here: ops that finish without I/O would otherwise
 * recurse.  A next-round timer rather than evloop_defer: the clients' I/O
 * gets its turn between two ops of a rebuild or scrub. */
static void sweep_op_done(struct stripe_op *op, int status)
{
    struct iraid_sweep *sw = op->user;
    struct iraid_volume *vol = op->vol;
    struct iraid_member *t = &vol->members[sw->target];
    uint64_t delay = 0;

    sw->inflight--;
    if (sw->last == op)
        sw->last = NULL;
    if (status < 0) {
        if (sw->status == 0)
            sw->status = status;
    } else if (sw->status == 0) {
        /* every op before this one succeeded: the run is done */
        sw->mismatches += op->mismatches;
        sw->skipped += op->skipped;
        sw->done += op->nstripes;
        /* Still holding the lock: writers planning after this see the
         * run as current on the target. */
        if (sw->kind == SOP_REBUILD) {
            if (t->epoch == sw->epoch && t->state == IRAID_MEMBER_REBUILDING)
                t->rebuild_next = op->stripe + op->nstripes;
            else
                sw->status = -ESTALE;
        }
        delay = sweep_pace_delay(vol, sw, op->nstripes);
    }
    if (sw->status < 0 || vol->closing) {
        if (sw->timer)
            evloop_del_timer(vol->loop, sw->timer);
        sw->timer = 0;
        sweep_end(vol, sw);
    } else if (!sw->timer && !(sw->timer = evloop_add_timer(vol->loop, delay, sweep_timer, sw))) {
        sw->status = -ENOMEM;
        sweep_end(vol, sw);
    }
}

/* Whether the sweep does anything to stripe: one its filter wants (a
 * bitmap resync's missed regions), and for scrub one with every member. */
static int sweep_wants(const struct iraid_volume *vol, const struct iraid_sweep *sw,
                       uint64_t stripe)
{
    return (!sw->want || sw->want(vol, stripe)) &&
           (sw->kind != SOP_SCRUB || stripe_missing(vol, stripe) == 0);
}

/* Stripes the next op takes from sw->next on: a rebuild or scrub takes a
 * run of wanted stripes of up to IRAID_MULTI_MAX_BYTES a member, so that
 * each member reads (and the rebuilt one writes) one command of them
 * instead of one per chunk, as md's resync reads ahead: on four emulated
 * disks a RAID-5 rebuild took 37 s for 256 MiB a member at one command a
 * chunk.  A resync takes one stripe (RAID-5 rewrites the parity of
 * its stripe; RAID-1 copies its first current member). */
static uint64_t sweep_run(const struct iraid_volume *vol, const struct iraid_sweep *sw)
{
    uint64_t max = IRAID_MULTI_MAX_BYTES / vol->layout.chunk, n = 1;

    if (vol->layout.level == 0 || (sw->kind != SOP_REBUILD && sw->kind != SOP_SCRUB))
        return 1;
    while (n < max && sw->next + n < sw->end && sweep_wants(vol, sw, sw->next + n))
        n++;
    return n;
}

/* Starts ops until the window is full or the stripes run out; each
 * started while another is in flight reports after it (sop_order). */
static void sweep_step(struct iraid_volume *vol, struct iraid_sweep *sw)
{
    struct stripe_op *op;

    while (sw->status == 0 && !vol->closing && sw->inflight < sweep_window(vol)) {
        while (sw->next < sw->end && !sweep_wants(vol, sw, sw->next)) {
            sw->skipped += sw->kind == SOP_SCRUB;
            sw->next++;
        }
        if (sw->next >= sw->end)
            break;
        if (!(op = sop_new(vol, sw->kind, sw->next, sweep_op_done, sw))) {
            sw->status = -ENOMEM;
            break;
        }
        op->target = sw->target;
        op->nstripes = sweep_run(vol, sw);
        sw->next += op->nstripes;
        if (sw->last)
            sop_order(op, sw->last);
        sw->last = op;
        sw->inflight++;
        sop_start(op);   /* may be done (and freed) before it returns */
    }
    if (sw->inflight == 0 || sw->status < 0 || vol->closing)
        sweep_end(vol, sw);
}

static void sweep_report(struct iraid_volume *vol, struct iraid_sweep *sw)
{
    log_info("iraid: scrub done: %" PRIu64 " stripes disagree, %" PRIu64 " skipped%s%s",
             sw->mismatches, sw->skipped, sw->status < 0 ? ": " : "",
             sw->status < 0 ? strerror(-sw->status) : "");
    sw->cb(vol, sw->status, sw->mismatches, sw->skipped, sw->user);
}

static void rebuild_flushed(struct iraid_volume *vol, int status, void *user)
{
    struct iraid_member *t = user;

    if (status == 0 && t->state == IRAID_MEMBER_REBUILDING && t->epoch == vol->rebuild.epoch) {
        log_info("iraid: member %u (%s) is current again: %s, %" PRIu64 " stripes written",
                 t->idx, t->url, t->rebuild_mode == REBUILD_BITMAP ? "resynced from the bitmap"
                 : "rebuilt in full", vol->rebuild.done);
        member_rebuilt(t);
        meta_member_stale(vol, t->idx, 0);
        return;
    }
    if (!vol->closing)
        vol->rebuild_retry_at = evloop_now_ms() + 1000;
}

static void rebuild_finished(struct iraid_volume *vol, struct iraid_sweep *sw)
{
    struct iraid_member *t = &vol->members[sw->target];
    struct iraid_req *req;

    if (sw->status < 0) {
        if (!vol->closing) {
            log_warn("iraid: rebuild of member %u stopped at stripe %" PRIu64 ": %s",
                     t->idx, sw->next, strerror(-sw->status));
            vol->rebuild_retry_at = evloop_now_ms() + 1000;
        }
        return;
    }
    /* Current on the target only once its cache is on its medium. */
    if (!(req = req_new_flush(vol, t->idx, rebuild_flushed, t))) {
        vol->rebuild_retry_at = evloop_now_ms() + 1000;
        return;
    }
    req_launch(req);
}

static void rebuild_start(struct iraid_volume *vol, struct iraid_member *t)
{
    int bitmap = t->rebuild_mode == REBUILD_BITMAP;

    if (bitmap)
        log_info("iraid: resyncing member %u (%s) from the write-intent bitmap: %" PRIu64
                 " of %" PRIu64 " stripes (%" PRIu64 " region(s)), from stripe %" PRIu64,
                 t->idx, t->url, meta_missed_stripes_below(vol, vol->layout.stripes),
                 vol->layout.stripes, meta_missed_regions(vol), t->rebuild_next);
    else
        log_info("iraid: rebuilding member %u (%s) from stripe %" PRIu64 " of %" PRIu64, t->idx,
                 t->url, t->rebuild_next, vol->layout.stripes);
    vol->rebuild = (struct iraid_sweep){ .kind = SOP_REBUILD, .next = t->rebuild_next,
                                         .end = vol->layout.stripes, .target = t->idx,
                                         .epoch = t->epoch, .finished = rebuild_finished,
                                         .want = bitmap ? meta_missed_stripe : NULL };
    sweep_start(vol, &vol->rebuild);
}

/* Reading a returning member's superblock back (rebuild_mode UNDECIDED). */
struct rebuild_probe {
    struct iraid_member *t;
    uint32_t epoch;
    uint8_t *sb;                   /* one device block */
};

static void rebuild_probed(struct iraid_volume *vol, int status, void *user)
{
    struct rebuild_probe *pr = user;
    struct iraid_member *t = pr->t;

    vol->rebuild_probe = 0;
    if (!vol->closing && t->epoch == pr->epoch && t->state == IRAID_MEMBER_REBUILDING &&
        t->rebuild_mode == REBUILD_UNDECIDED) {
        if (status == 0 && meta_member_resume_ok(vol, t->idx, pr->sb))
            t->rebuild_mode = REBUILD_BITMAP;
        else {
            log_warn("iraid: member %u (%s) came back but %s: rebuilding all of it", t->idx,
                     t->url, status < 0 ? "its superblock cannot be read"
                     : "its superblock does not prove it missed only the bitmap's regions");
            t->rebuild_mode = REBUILD_FULL;
        }
        vol->rebuild_retry_at = evloop_now_ms();
    }
    free(pr->sb);
    free(pr);
}

static void rebuild_probe(struct iraid_volume *vol, struct iraid_member *t)
{
    struct rebuild_probe *pr = calloc(1, sizeof(*pr));
    struct iraid_part *p;
    struct iraid_req *req;
    void *sb = NULL;

    if (!pr || posix_memalign(&sb, 64, vol->block_size) != 0)
        goto retry;
    *pr = (struct rebuild_probe){ .t = t, .epoch = t->epoch, .sb = sb };
    if (!(req = req_new(vol, rebuild_probed, pr)))
        goto retry;
    if (!(p = part_new(req, t->idx, PART_READ, 0)) || part_add_iov(p, sb, vol->block_size) < 0) {
        req_free(req);
        goto retry;
    }
    p->len = vol->block_size;
    vol->rebuild_probe = 1;
    req_launch(req);
    return;
retry:
    free(sb);
    free(pr);
    vol->rebuild_retry_at = evloop_now_ms() + 1000;
}

/* From the tick: start (or restart) the rebuild of a REBUILDING member;
 * one whose rebuild is undecided has its superblock read first. */
void rebuild_kick(struct iraid_volume *vol)
{
    struct iraid_member *t = NULL;

    if (vol->rebuild.running || vol->rebuild_probe || !vol->rebuild_retry_at ||
        evloop_now_ms() < vol->rebuild_retry_at)
        return;
    vol->rebuild_retry_at = 0;
    for (uint32_t i = 0; i < vol->nmembers && !t; i++)
        if (vol->members[i].state == IRAID_MEMBER_REBUILDING)
            t = &vol->members[i];
    if (!t)
        return;
    if (t->rebuild_mode == REBUILD_UNDECIDED)
        rebuild_probe(vol, t);
    else
        rebuild_start(vol, t);
}

void sweep_start(struct iraid_volume *vol, struct iraid_sweep *sw)
{
    sw->vol = vol;
    sw->running = 1;
    sw->status = 0;
    if (!sw->finished)
        sw->finished = sweep_report;
    sweep_step(vol, sw);
}

/* iraid_close(): after sop_cancel_waiting() no sweep waits for an op. */
void sweep_cancel_timers(struct iraid_volume *vol)
{
    for (struct iraid_sweep *sw = &vol->rebuild; sw <= &vol->resync; sw++)
        if (sw->timer) {
            evloop_del_timer(vol->loop, sw->timer);
            sw->timer = 0;
        }
}

/* ---- scrub ---- */

int iraid_scrub(struct iraid_volume *vol, iraid_scrub_cb cb, void *user)
{
    if (!vol || !cb)
        return -EINVAL;
    if (!vol->meta)
        return -EOPNOTSUPP;
    if (vol->scrub.running)
        return -EBUSY;
    vol->scrub = (struct iraid_sweep){ .kind = SOP_SCRUB, .end = vol->layout.stripes, .cb = cb,
                                       .user = user };
    sweep_start(vol, &vol->scrub);
    return 0;
}

/* ---- resync at open ---- */

/* The open-time resync is waited for by sweep_resync_dirty itself. */
static void resync_finished(struct iraid_volume *vol, struct iraid_sweep *sw)
{
}

/* iraid_open(), on its private loop, once the metadata is read: resyncs
 * every dirty region, flushes, and writes the bitmap cleared. */
int sweep_resync_dirty(struct iraid_volume *vol)
{
    uint64_t dirty = meta_dirty_regions(vol);
    struct req_sync w = { 0 };
    struct iraid_req *req;
    int rc;

    if (dirty == 0)
        return 0;
    log_info("iraid: resyncing %" PRIu64 " dirty region(s) of %" PRIu64 " stripes", dirty,
             meta_region_stripes(vol));
    vol->resync = (struct iraid_sweep){ .kind = SOP_RESYNC, .end = vol->layout.stripes,
                                        .want = meta_region_dirty_stripe,
                                        .finished = resync_finished };
    sweep_start(vol, &vol->resync);
    while (vol->resync.running)
        if ((rc = evloop_run_once(vol->loop, -1)) < 0 && rc != -EINTR)
            return rc;
    if (vol->resync.status < 0)
        return vol->resync.status;
    /* Resynced stripes are clean once on the media. */
    if (!(req = req_new_flush(vol, IRAID_ALL_MEMBERS, req_sync_done, &w)))
        return -ENOMEM;
    req->tolerate_down = 1;
    req_launch(req);
    if ((rc = req_sync_run(vol, &w)) < 0)
        return rc;
    return meta_clear_bitmap(vol);
}
