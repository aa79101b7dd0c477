/* iRAID stripe ops of the redundant levels (RAID-1, RAID-5): the lock,
 * the rounds and the retries of one stripe's work, whatever the work is.
 * A stripe op serves one stripe: a user read or write's share of it
 * (io.c), or one stripe of a sweep (sweep.c).  What to read, compute and
 * write is the level's (raid1.c, raid5.c, through vol->ops); the
 * write-intent bitmap is meta.c's (the meta_intent calls).
 *
 * States of a stripe op:
 *
 *   sop_start --stripe busy--> WAITING behind the holder (FIFO)
 *   sop_start --stripe free--> LOCKED
 *   WAITING --holder finished, lock handed over--> LOCKED
 *   LOCKED --write, unmap--> INTENT: meta_intent_begin (wait for the region's bit)
 *   LOCKED or INTENT done --> RUN: level's sop_plan (reads, or writes at
 *       once), or the op's own plan (an unmap: unmap.c)
 *   RUN --reads done--> RUN write phase: sop_after_read (compute, plan writes)
 *   RUN --read phase failed, a member lost--> RUN again (at most 3 times)
 *   RUN --a live member failed a read--> RUN again, reading around it
 *       --done--> REWRITE (those rows written back to it) --> FINISH
 *   RUN --write's reads failed on a live member--> RETRY (a tick) --> RUN
 *   RUN --write done, stripe degraded--> SB_WAIT (stale mask durable)
 *   any --done, error, or the volume closing--> FINISH: intent end, lock
 *       to the next waiter, done callback, freed (sop_finish)
 *   any --done while the op it follows (sop_order) is not finished-->
 *       PARKED: lock held, status kept --that op finished, or the volume
 *       closing--> FINISH
 *
 * Multi-stripe ops and the lock order: an op locks stripes [stripe,
 * stripe + nstripes) (nstripes > 1 only for RAID-5: a WRITE of whole
 * stripes, io.c, an UNMAP of them, unmap.c, and a sweep's REBUILD or
 * SCRUB, sweep.c).  It takes its whole
 * range at once or none of it: the loop is single-threaded, so
 * sop_acquire() sees every holder, and an op that overlaps an older op
 * (holding or waiting; op->seq is the start order) waits behind it
 * holding nothing.  A waiter handed the lock when
 * its holder ends is checked again and queued (with the waiters behind
 * it, in order) behind the first older op that still overlaps.  Only
 * holders hold, holders never wait for a lock, and an op waits only for
 * older ones, so there is no cycle: overlapping requests cannot deadlock,
 * and overlapping ops run in the order they started (disjoint ones pass).
 *
 * Cleanup: iraid_close() cancels every command first; sop_cancel_waiting()
 * then finishes what still holds a lock (waiting for metadata or for a
 * retry tick) with -ECANCELED, and the waiters behind end as they get it.
 *
 * Ownership: vol->active lists the lock holders, each holder its waiters
 * (wait_next).  An op owns its row buffers (buf, nd, par), never the
 * caller's bytes (cur).  It is freed by sop_finish() right after done().
 *
 * The lock makes every read-compute-write of one stripe atomic with
 * respect to the others (parity never sees two writers), and makes the
 * rebuild of a stripe atomic with respect to writes to it.  Whether a
 * member holds current data for a stripe is member_ok(), decided at plan
 * time while the lock is held.  In the write phase, parts lost with their
 * member are tolerated: the parity written alongside stays consistent with
 * the data written, so the stripe is degraded, not wrong. */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "iraid/internal.h"

#define SOP_MAX_RETRIES 3

/* ---- rows and buffers of a stripe op ---- */

static uint64_t member_pos(const struct iraid_volume *vol, uint64_t stripe, uint64_t in_chunk)
{
    return vol->data_off + stripe * vol->layout.chunk + in_chunk;
}


/* Last stripe of op: a REBUILDING member is missing at and above its
 * rebuild_next, so the last stripe is the one missing the most members. */
uint64_t sop_last(const struct stripe_op *op)
{
    return op->stripe + op->nstripes - 1;
}

/* Members a READ op cannot use: missing ones and the one it avoids. */
static uint32_t op_missing(const struct stripe_op *op)
{
    uint32_t n = stripe_missing(op->vol, sop_last(op));

    return n + (op->avoid >= 0 && member_ok(&op->vol->members[op->avoid], op->stripe));
}

/* Member's rows as read: nstripes chunks in a row, as on the member. */
uint8_t *sop_mbuf(const struct stripe_op *op, uint32_t member)
{
    return op->buf + (uint64_t)member * op->vol->layout.chunk * op->nstripes;
}

int sop_read_rows(struct iraid_req *req, struct stripe_op *op, uint32_t member, uint64_t lo,
                     uint64_t hi)
{
    struct iraid_part *p;

    if (lo >= hi)
        return 0;
    if (!(p = part_new(req, member, PART_READ, member_pos(op->vol, op->stripe, lo))))
        return -ENOMEM;
    p->len = hi - lo;
    return part_add_iov(p, sop_mbuf(op, member) + lo, hi - lo);
}

int sop_write_rows(struct iraid_req *req, struct stripe_op *op, uint32_t member,
                      uint8_t *rows, uint64_t lo, uint64_t hi)
{
    struct iraid_part *p;

    if (lo >= hi)
        return 0;
    if (!(p = part_new(req, member, PART_WRITE, member_pos(op->vol, op->stripe, lo))))
        return -ENOMEM;
    p->len = hi - lo;
    return part_add_iov(p, rows, hi - lo);
}

/* Part moving the caller's bytes straight to or from member. */
int sop_direct_rows(struct iraid_req *req, struct stripe_op *op, uint32_t member,
                       enum part_op opc, struct iov_cursor *cur, uint64_t lo, uint64_t hi)
{
    struct iraid_part *p = part_new(req, member, opc, member_pos(op->vol, op->stripe, lo));

    if (!p)
        return -ENOMEM;
    return part_take(p, cur, hi - lo);
}

int sop_buffers(struct stripe_op *op)
{
    uint64_t chunk = op->vol->layout.chunk, n = op->vol->nmembers;
    void *mem;

    if (op->buf)
        return 0;
    if (posix_memalign(&mem, 64, (op->nstripes + 1) * n * chunk) != 0)
        return -ENOMEM;
    op->buf = mem;
    op->nd = op->buf + op->nstripes * n * chunk;
    op->par = op->nd + (n - 1) * chunk;
    return 0;
}

/* ---- stripe op machinery ---- */

static void sop_resume(struct stripe_op *op, int status);

/* meta.c: the metadata the op waited for is durable (or failed). */
static void sop_meta_ready(struct meta_intent *mi, int status)
{
    sop_resume((struct stripe_op *)((char *)mi - offsetof(struct stripe_op, intent)), status);
}

struct stripe_op *sop_new(struct iraid_volume *vol, enum sop_kind kind, uint64_t stripe,
                                 sop_done_fn done, void *user)
{
    struct stripe_op *op = calloc(1, sizeof(*op));

    if (!op)
        return NULL;
    op->vol = vol;
    op->kind = kind;
    op->stripe = stripe;
    op->nstripes = 1;
    op->done = done;
    op->user = user;
    op->xmember = -1;
    op->src = -1;
    op->read_err = -1;
    op->avoid = -1;
    op->intent.ready = sop_meta_ready;
    return op;
}

static void sop_free(struct stripe_op *op)
{
    free(op->buf);
    free(op);
}

static void sop_acquire(struct stripe_op *op);

/* Releases the stripe lock to the next waiter, reports, frees; then
 * finishes the op ordered after this one if it was parked.  An op done
 * before the op it follows parks instead, holding its lock (sop_order),
 * except when the volume closes: then every op ends as it comes. */
static void sop_finish(struct stripe_op *op, int status)
{
    struct iraid_volume *vol = op->vol;
    struct stripe_op *next = op->wait_next, *then = op->then;

    if (op->after && !vol->closing) {
        op->parked = 1;
        op->parked_status = status;
        return;
    }
    if (op->after)
        op->after->then = NULL;
    if (then)
        then->after = NULL;
    if (op->intent.in_region)
        meta_intent_end(vol, &op->intent);
    if (op->prev)
        op->prev->next = op->next;
    else
        vol->active = op->next;
    if (op->next)
        op->next->prev = op->prev;
    op->done(op, status);
    sop_free(op);
    if (next)
        sop_acquire(next);
    if (then && then->parked)
        sop_finish(then, then->parked_status);
}

static void sop_complete(struct stripe_op *op)
{
    sop_finish(op, 0);
}

static void sop_run(struct stripe_op *op);

static void sop_retry_timer(struct evloop *loop, uint64_t id, void *user)
{
    struct stripe_op *op = user;

    op->retry_timer = 0;
    sop_run(op);
}

/* Runs op again after a tick, holding its stripe lock meanwhile: a read
 * that failed on a member whose session is breaking reaches us before
 * that member is marked down (member_service does so once libiscsi
 * returns), so an immediate retry would plan the same reads again. */
static int sop_retry_later(struct stripe_op *op)
{
    op->retry_timer = evloop_add_timer(op->vol->loop, IRAID_TICK_MS, sop_retry_timer, op);
    return op->retry_timer ? 0 : -ENOMEM;
}

static void sop_next_phase(struct iraid_req *req)
{
    struct stripe_op *op = req->owner;
    int rc = op->vol->ops->sop_after_read(op, req);

    if (rc < 0)
        req->status = rc;
}

/* REWRITE ended: the read it served is good whatever happened here.  A
 * member that cannot take its own rows back is failed (as md does), and
 * rebuilt in full when it returns: the bitmap knows nothing of a bad
 * sector. */
static void sop_rewritten(struct iraid_volume *vol, int status, void *user)
{
    struct stripe_op *op = user;
    struct iraid_member *m = &vol->members[op->avoid];

    if (status == 0) {
        vol->read_rewrites++;
        log_info("iraid: stripe %" PRIu64 ": rows member %d (%s) failed to read were written "
                 "back to it", op->stripe, op->avoid, m->url);
    } else if (!vol->closing && member_live(m)) {
        member_fail(m, "writing back the rows it failed to read failed");
        m->missed_ok = 0;
    }
    sop_finish(op, 0);
}

/* After a read served around op->avoid: its rows go back to it, still
 * under the stripe's lock (no write to the stripe comes between).  0 when
 * the rewrite is under way (sop_rewritten finishes the op). */
static int sop_rewrite(struct stripe_op *op)
{
    struct iraid_volume *vol = op->vol;
    struct iraid_req *req;

    op->rewriting = 1;
    if (!vol->ops->sop_repair || !member_live(&vol->members[op->avoid]) ||
        !(req = req_new(vol, sop_rewritten, op)))
        return -1;
    req->owner = op;
    if (vol->ops->sop_repair(op, req) < 0 || req->nparts == 0) {
        req_free(req);
        return -1;
    }
    req_launch(req);
    return 0;
}

/* A round ended.  A read-phase failure caused by a member going down is
 * retried with the new set of members (nothing was written yet); a write
 * that left the stripe degraded completes only once the superblock saying
 * so is durable. */
static void sop_io_done(struct iraid_volume *vol, int status, void *user)
{
    struct stripe_op *op = user;
    uint32_t missing = stripe_missing(vol, sop_last(op));

    /* A live member failed a read of this stripe (medium error): read
     * around it once, from the mirror or by reconstruction. */
    if (status < 0 && !vol->closing && op->kind == SOP_READ && op->read_err >= 0 &&
        op->avoid < 0 && member_ok(&vol->members[op->read_err], op->stripe) &&
        missing + 1 <= vol_redundancy(vol)) {
        op->avoid = op->read_err;
        vol->read_repairs++;
        log_warn("iraid: stripe %" PRIu64 ": member %d (%s) failed a read (%s); serving it "
                 "from the other members", op->stripe, op->avoid, vol->members[op->avoid].url,
                 strerror(-status));
        sop_run(op);
        return;
    }
    if (status < 0 && !vol->closing && op->phase == 0 && missing > 0 &&
        missing <= vol_redundancy(vol) && op->retries++ < SOP_MAX_RETRIES) {
        log_warn("iraid: stripe %" PRIu64 ": %s; retrying without the missing member",
                 op->stripe, strerror(-status));
        sop_run(op);
        return;
    }
    /* A write's reads failed on a member still up: it is most likely
     * failing (see sop_retry_later); a read error of its own persists and
     * fails the write after the retries.  Nothing was written yet. */
    if (status < 0 && !vol->closing && op->kind == SOP_WRITE && op->phase == 0 &&
        op->read_err >= 0 && op->retries++ < SOP_MAX_RETRIES) {
        log_warn("iraid: stripe %" PRIu64 ": reading member %d before writing failed (%s); "
                 "retrying", op->stripe, op->read_err, strerror(-status));
        if (sop_retry_later(op) == 0)
            return;
    }
    if (status == 0 && op->kind == SOP_READ && op->avoid >= 0 && !op->rewriting &&
        !vol->closing && sop_rewrite(op) == 0)
        return;
    if (status == 0 && missing > vol_redundancy(vol) && op->kind == SOP_WRITE)
        status = -EIO;
    if (status == 0 && missing > 0 && op->kind == SOP_WRITE) {
        op->resume = sop_complete;
        if (meta_wait_sb(vol, &op->intent))
            return;
    }
    sop_finish(op, status);
}

static void sop_run(struct stripe_op *op)
{
    struct iraid_volume *vol = op->vol;
    struct iraid_req *req;
    int rc;

    op->phase = 0;
    if (vol->closing) {
        sop_finish(op, -ECANCELED);
        return;
    }
    if (op_missing(op) > vol_redundancy(vol) ||
        (op->kind == SOP_REBUILD && !member_live(&vol->members[op->target]))) {
        log_error("iraid: stripe %" PRIu64 ": too many members missing", op->stripe);
        sop_finish(op, -EIO);
        return;
    }
    if (!(req = req_new(vol, sop_io_done, op))) {
        sop_finish(op, -ENOMEM);
        return;
    }
    req->owner = op;
    op->read_err = -1;
    req->read_err_member = &op->read_err;
    if ((rc = (op->plan ? op->plan : vol->ops->sop_plan)(op, req)) < 0) {
        req_free(req);
        sop_finish(op, rc);
        return;
    }
    if (op->phase == 0)
        req->next_phase = sop_next_phase;
    req_launch(req);
}

static void sop_resume(struct stripe_op *op, int status)
{
    if (status < 0)
        sop_finish(op, status);
    else
        op->resume(op);
}

static void sop_locked(struct stripe_op *op)
{
    if (op->vol->closing) {
        sop_finish(op, -ECANCELED);
        return;
    }
    op->resume = sop_run;
    /* A multi-stripe op lies inside one bitmap region (io.c cuts it so):
     * one bit, and the missed mark from its most degraded stripe.  An
     * unmap changes the stripe on every member like a write: a crash in
     * the middle must leave its region dirty for the resync. */
    if ((op->kind == SOP_WRITE || op->kind == SOP_UNMAP) &&
        meta_intent_begin(op->vol, &op->intent, sop_last(op)))
        return;
    sop_run(op);
}

static int sop_overlap(const struct stripe_op *a, const struct stripe_op *b)
{
    return a->stripe < b->stripe + b->nstripes && b->stripe < a->stripe + a->nstripes;
}

/* Locks op's whole range, or queues op (and the waiters behind it, in
 * order) at the end of the chain holding an older op it overlaps, be it
 * the holder or a waiter: overlapping ops run in the order they started,
 * whatever their ranges. */
static void sop_acquire(struct stripe_op *op)
{
    struct iraid_volume *vol = op->vol;

    for (struct stripe_op *h = vol->active; h; h = h->next)
        for (struct stripe_op *w = h; w; w = w->wait_next)
            if (w->seq < op->seq && sop_overlap(w, op)) {
                while (w->wait_next)
                    w = w->wait_next;
                w->wait_next = op;
                return;
            }
    op->prev = NULL;
    op->next = vol->active;
    if (vol->active)
        vol->active->prev = op;
    vol->active = op;
    sop_locked(op);
}

/* later, not started yet, finishes (its done callback, its lock
 * released) no earlier than earlier, started and not finished, which has
 * no other op ordered after it: a sweep's ops report in order, so the
 * stripes below the rebuild's mark stay those rebuilt while the next op's
 * reads overlap the last one's writes. */
void sop_order(struct stripe_op *later, struct stripe_op *earlier)
{
    later->after = earlier;
    earlier->then = later;
}

/* Takes the lock of op's stripes (or queues behind a holder) and runs op. */
void sop_start(struct stripe_op *op)
{
    op->seq = ++op->vol->sop_seq;
    op->wait_next = NULL;
    sop_acquire(op);
}

/* iraid_close: every libiscsi command is cancelled already; what is left
 * are ops waiting for metadata.  Finishing a holder hands the lock to its
 * waiters, which end at once because the volume is closing. */
void sop_cancel_waiting(struct iraid_volume *vol)
{
    while (vol->active) {
        struct stripe_op *op = vol->active;
        meta_cancel_waiter(vol, &op->intent);
        if (op->retry_timer)
            evloop_del_timer(vol->loop, op->retry_timer);
        sop_finish(op, -ECANCELED);
    }
}
