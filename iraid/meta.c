/* Superblock and write-intent bitmap of the redundant levels while the
 * volume runs (format and protocol in meta.h; the image and its
 * generations in meta_image.h; opening it in meta_open.c).  Calls only
 * request.c and member.c: whoever waits on it hands it a callback.
 *
 * A metadata block: CLEAN (durable == gen) --changed--> DIRTY (gen bumped)
 *   --meta_write_block--> WRITING (one FUA write to every live member)
 *   --written--> CLEAN, or DIRTY again if it changed meanwhile (written
 *   again at once); a failed write fails every waiter with the error.
 * A region's bit: set (and written) by the first write to the region
 *   (meta_intent_begin; the write waits until it is durable), cleared by
 *   the tick once the region saw no write for IRAID_META_LINGER_MS and a
 *   flush made its writes durable (never inside iraid_open: the resync
 *   of the regions adopted dirty has not made them consistent yet), or
 *   at once by meta_mark_clean().
 *   A sequential stream sets the next region's bit ahead, in the
 *   background (meta_intent_ahead), so that it never waits for a FUA
 *   bitmap write; such a bit is cleared as any other once it lingered.
 * A waiter: a stripe op (struct meta_intent, on meta->waiters) or a
 *   callback (struct meta_sb_waiter: meta_sb_wait, meta_mark_clean) waits
 *   until the blocks it needs reach their generation, then its callback
 *   runs once with 0 or the error.
 * Cleanup: iraid_close() stops the writes (vol->closing), takes the
 *   stripe ops off the list (meta_cancel_waiter), then iraid_meta_close()
 *   calls the remaining callbacks with -ECANCELED and frees it all.
 *
 * Ownership: vol->meta owns the image and its counters; each block write
 * owns a copy of its block (struct meta_write); waiters stay their
 * owners'. */
#include "iraid/meta.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <isa-l/crc.h>

#include "common/log.h"
#include "iraid/internal.h"
#include "iraid/meta_image.h"

/* Waits until block blk of the metadata is durable at generation need
 * (meta_sb_wait: the superblock; meta_mark_clean: bitmap blocks). */
struct meta_sb_waiter {
    uint32_t blk;
    uint64_t need;
    iraid_cb cb;
    void *user;
    struct meta_sb_waiter *next;
};

struct meta_write {
    struct iraid_volume *vol;
    uint32_t blk;
    uint64_t gen;
    uint64_t events;               /* block 0: the superblock's events */
    uint8_t *copy;
};

/* ---- encoding and decoding ---- */

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

void meta_sb_encode(const struct iraid_volume *vol, uint8_t *sb)
{
    const struct iraid_meta *meta = vol->meta;

    memset(sb, 0, IRAID_META_SB_BYTES);
    memcpy(sb, IRAID_META_MAGIC, sizeof(IRAID_META_MAGIC));
    put32(sb + 8, (uint32_t)vol->layout.level);
    put32(sb + 12, vol->nmembers);
    put32(sb + 16, vol->block_size);
    put64(sb + 24, vol->layout.chunk);
    put64(sb + 32, vol->layout.stripes);
    put64(sb + 40, meta->region_stripes);
    put64(sb + 48, meta->events);
    put64(sb + 56, meta->stale);
    put32(sb + 64, crc32_iscsi(sb, 64, 0));
}

uint32_t meta_get32(const uint8_t *p)
{
    uint32_t v = 0;

    for (int i = 3; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

uint64_t meta_get64(const uint8_t *p)
{
    uint64_t v = 0;

    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

int meta_sb_matches(const struct iraid_volume *vol, const uint8_t *sb)
{
    if (memcmp(sb, IRAID_META_MAGIC, sizeof(IRAID_META_MAGIC)) != 0 ||
        meta_get32(sb + 64) != crc32_iscsi((unsigned char *)sb, 64, 0))
        return 0;
    if (meta_get32(sb + 8) != (uint32_t)vol->layout.level ||
        meta_get32(sb + 12) != vol->nmembers || meta_get32(sb + 16) != vol->block_size ||
        meta_get64(sb + 24) != vol->layout.chunk || meta_get64(sb + 32) != vol->layout.stripes ||
        meta_get64(sb + 40) != vol->meta->region_stripes)
        return -1;
    return 1;
}

static int bit_get(const struct iraid_meta *meta, uint64_t r)
{
    return meta->image[IRAID_META_BITMAP_OFF + r / 8] >> (r % 8) & 1;
}

static uint32_t bit_put(struct iraid_meta *meta, uint64_t r, int on)
{
    uint8_t *b = &meta->image[IRAID_META_BITMAP_OFF + r / 8];
    uint32_t blk = (uint32_t)((IRAID_META_BITMAP_OFF + r / 8) / meta->bs);

    *b = (uint8_t)(on ? *b | 1u << (r % 8) : *b & ~(1u << (r % 8)));
    meta->gen[blk]++;
    return blk;
}

/* ---- waiters ---- */

static int waiter_ready(const struct iraid_meta *meta, const struct meta_intent *mi)
{
    return meta->durable[0] >= mi->need_sb && meta->durable[mi->bm_blk] >= mi->need_bm;
}

/* Completes the meta_sb_wait() callers whose superblock is durable now (all
 * of them, with the error, when status < 0).  Detached first, as below. */
static void meta_release_sb_waiters(struct iraid_volume *vol, int status)
{
    struct iraid_meta *meta = vol->meta;
    struct meta_sb_waiter *ready = NULL, **pp = &meta->sb_waiters;

    while (*pp) {
        struct meta_sb_waiter *w = *pp;
        if (status < 0 || meta->durable[w->blk] >= w->need) {
            *pp = w->next;
            w->next = ready;
            ready = w;
        } else {
            pp = &w->next;
        }
    }
    while (ready) {
        struct meta_sb_waiter *w = ready;
        ready = w->next;
        w->cb(vol, status, w->user);
        free(w);
    }
}

static int meta_block_wait(struct iraid_volume *vol, uint32_t blk, uint64_t need, iraid_cb cb,
                           void *user)
{
    struct iraid_meta *meta = vol->meta;
    struct meta_sb_waiter *w;

    if (meta->durable[blk] >= need)
        return 1;
    if (!(w = calloc(1, sizeof(*w))))
        return -ENOMEM;
    *w = (struct meta_sb_waiter){ .blk = blk, .need = need, .cb = cb, .user = user,
                                  .next = meta->sb_waiters };
    meta->sb_waiters = w;
    return 0;
}

int meta_sb_wait(struct iraid_volume *vol, iraid_cb cb, void *user)
{
    return meta_block_wait(vol, 0, vol->meta->stale_gen, cb, user);
}

/* Resumes the waiters whose blocks are durable now (all of them, with the
 * error, when status < 0).  Detached first: resuming may queue new ones. */
static void meta_release(struct iraid_volume *vol, int status)
{
    struct iraid_meta *meta = vol->meta;
    struct meta_intent *ready = NULL, **tail = &ready, **pp = &meta->waiters;

    while (*pp) {
        struct meta_intent *mi = *pp;
        if (status < 0 || waiter_ready(meta, mi)) {
            *pp = mi->next;
            mi->next = NULL;
            *tail = mi;
            tail = &mi->next;
        } else {
            pp = &mi->next;
        }
    }
    while (ready) {
        struct meta_intent *mi = ready;
        ready = mi->next;
        mi->next = NULL;
        mi->ready(mi, status);
    }
    meta_release_sb_waiters(vol, status);
}

static int meta_wait(struct iraid_volume *vol, struct meta_intent *mi)
{
    struct iraid_meta *meta = vol->meta;

    if (waiter_ready(meta, mi))
        return 0;
    mi->next = meta->waiters;
    meta->waiters = mi;
    return 1;
}

void meta_cancel_waiter(struct iraid_volume *vol, struct meta_intent *mi)
{
    struct meta_intent **pp;

    if (!vol->meta)
        return;
    for (pp = &vol->meta->waiters; *pp; pp = &(*pp)->next)
        if (*pp == mi) {
            *pp = mi->next;
            return;
        }
}

/* ---- block writes ---- */

int meta_any_live(const struct iraid_volume *vol)
{
    for (uint32_t i = 0; i < vol->nmembers; i++)
        if (member_live(&vol->members[i]))
            return 1;
    return 0;
}

static void meta_written(struct iraid_volume *vol, int status, void *user)
{
    struct meta_write *mw = user;
    struct iraid_meta *meta = vol->meta;
    uint32_t blk = mw->blk;

    meta->writing[blk] = 0;
    if (status == 0 && !meta_any_live(vol))
        status = -EIO;
    if (status == 0 && mw->gen > meta->durable[blk])
        meta->durable[blk] = mw->gen;
    if (status == 0 && blk == 0 && mw->events > meta->events_durable)
        meta->events_durable = mw->events;
    free(mw->copy);
    free(mw);
    if (vol->closing)
        return;
    if (status < 0) {
        log_error("iraid: metadata block %u not written: %s", blk, strerror(-status));
        meta_release(vol, status);
        return;
    }
    meta_release(vol, 0);
    meta_write_block(vol, blk);
}

/* Writes block blk of the image (FUA) to every live member, unless it is
 * durable already or a write of it is in flight (that one's end writes it
 * again if it changed). */
void meta_write_block(struct iraid_volume *vol, uint32_t blk)
{
    struct iraid_meta *meta = vol->meta;
    struct meta_write *mw;
    struct iraid_req *req;
    void *copy;

    if (meta->writing[blk] || meta->gen[blk] == meta->durable[blk] || vol->closing)
        return;
    if (!(mw = calloc(1, sizeof(*mw))) || posix_memalign(&copy, 64, meta->bs) != 0)
        goto fail;
    *mw = (struct meta_write){ .vol = vol, .blk = blk, .gen = meta->gen[blk], .copy = copy,
                               .events = blk == 0 ? meta_get64(meta->image + 48) : 0 };
    memcpy(copy, meta->image + (uint64_t)blk * meta->bs, meta->bs);
    if (!(req = req_new(vol, meta_written, mw)))
        goto free_copy;
    req->tolerate_down = 1;
    for (uint32_t m = 0; m < vol->nmembers; m++) {
        struct iraid_part *p = part_new(req, m, PART_WRITE, (uint64_t)blk * meta->bs);
        if (!p || part_add_iov(p, copy, meta->bs) < 0)
            goto free_req;
        p->len = meta->bs;
        p->fua = 1;
    }
    meta->writing[blk] = mw->gen;
    req_launch(req);
    return;

free_req:
    req_free(req);
free_copy:
    free(copy);
fail:
    free(mw);
    log_error("iraid: out of memory writing metadata block %u", blk);
    meta_release(vol, -ENOMEM);
}

/* ---- intent ---- */

/* Bit of region r + 1 set ahead when a write of region r looks like part
 * of an ascending stream (the previous intent began in r too, and this
 * one is past r's middle): by the time the stream gets there the bit is
 * durable, and its first write there does not wait (md tunes its bitmap
 * chunk for the same cost).  Nobody waits for this write.  A bit set
 * without a write behind it is never wrong for write-hole protection: it
 * only adds a region to a resync after a crash; the tick clears it after
 * IRAID_META_LINGER_MS if the stream does not come (last_end = now). */
static void meta_intent_ahead(struct iraid_volume *vol, uint64_t r, uint64_t stripe)
{
    struct iraid_meta *meta = vol->meta;
    uint64_t next = r + 1;
    int stream = meta->last_region == r + 1 &&
                 stripe % meta->region_stripes >= meta->region_stripes / 2;

    meta->last_region = r + 1;
    if (!stream || next >= meta->nregions || bit_get(meta, next))
        return;
    meta->set_gen[next] = meta->gen[bit_put(meta, next, 1)];
    meta->last_end[next] = evloop_now_ms();
    meta_write_block(vol, (uint32_t)((IRAID_META_BITMAP_OFF + next / 8) / meta->bs));
}

int meta_intent_begin(struct iraid_volume *vol, struct meta_intent *mi, uint64_t stripe)
{
    struct iraid_meta *meta = vol->meta;
    uint64_t r = stripe / meta->region_stripes;

    mi->region = (uint32_t)r;
    mi->in_region = 1;
    meta->active[r]++;
    meta->begins[r]++;
    mi->bm_blk = (uint32_t)((IRAID_META_BITMAP_OFF + r / 8) / meta->bs);
    /* A member that cannot take this write misses it: its return resyncs
     * the region.  Planned at the same moment, under the stripe's lock. */
    if (stripe_missing(vol, stripe) > 0)
        vol->missed[r / 8] |= (uint8_t)(1u << (r % 8));
    if (!bit_get(meta, r)) {
        bit_put(meta, r, 1);
        meta->set_gen[r] = meta->gen[mi->bm_blk];
        meta_write_block(vol, mi->bm_blk);
    }
    meta_intent_ahead(vol, r, stripe);
    mi->need_bm = meta->set_gen[r];
    mi->need_sb = meta->stale_gen;
    return meta_wait(vol, mi);
}

void meta_intent_end(struct iraid_volume *vol, struct meta_intent *mi)
{
    struct iraid_meta *meta = vol->meta;

    meta->active[mi->region]--;
    meta->last_end[mi->region] = evloop_now_ms();
    mi->in_region = 0;
}

int meta_wait_sb(struct iraid_volume *vol, struct meta_intent *mi)
{
    mi->bm_blk = 0;
    mi->need_bm = 0;
    mi->need_sb = vol->meta->stale_gen;
    return meta_wait(vol, mi);
}

/* A member going stale may have lost the writes of every region whose
 * bit is set now (in flight, or not yet flushed there): they join the
 * missed regions, and the events its own superblock can hold are noted.
 * Once no member is stale, nothing is missed any more. */
static void meta_note_missed(struct iraid_volume *vol, uint32_t member, int newly)
{
    struct iraid_meta *meta = vol->meta;

    for (uint64_t r = 0; r < meta->nregions; r++)
        if (bit_get(meta, r))
            vol->missed[r / 8] |= (uint8_t)(1u << (r % 8));
    if (newly) {
        meta->fail_lo[member] = meta->events_durable;
        meta->fail_hi[member] = meta->events;
    }
}

void meta_member_stale(struct iraid_volume *vol, uint32_t member, int stale)
{
    struct iraid_meta *meta = vol->meta;
    uint64_t mask = stale ? meta->stale | 1ull << member : meta->stale & ~(1ull << member);

    if (stale)
        meta_note_missed(vol, member, mask != meta->stale);
    else if (mask == 0)
        memset(vol->missed, 0, (meta->nregions + 7) / 8);
    if (mask == meta->stale)
        return;
    meta->stale = mask;
    meta->events++;
    meta_sb_encode(vol, meta->image);
    meta->stale_gen = ++meta->gen[0];
    meta_write_block(vol, 0);
}

/* md re-adds a device by its bitmap only when the device's event count
 * shows it left after the bitmap started to track what it missed.  Here:
 * the superblock read back from the returning member is this volume's
 * and its events lie between the last superblock written while it was
 * live and the newest before it was marked stale (a restarted target on
 * its old backing store).  Anything else (a new or foreign LUN, an older
 * copy, a member that was itself being fully rebuilt) is a full rebuild. */
int meta_member_resume_ok(struct iraid_volume *vol, uint32_t member, const uint8_t *sb)
{
    struct iraid_meta *meta = vol->meta;
    struct iraid_member *m = &vol->members[member];
    uint64_t ev;

    if (!m->missed_ok || !(meta->stale >> member & 1) || meta_sb_matches(vol, sb) != 1)
        return 0;
    ev = meta_get64(sb + 48);
    return iraid_resume_by_bitmap(ev, (int)(meta_get64(sb + 56) >> member & 1),
                                  meta->fail_lo[member], meta->fail_hi[member]);
}

uint64_t meta_dirty_regions(const struct iraid_volume *vol)
{
    uint64_t n = 0;

    for (uint64_t r = 0; r < vol->meta->nregions; r++)
        n += bit_get(vol->meta, r);
    return n;
}

uint64_t meta_region_stripes(const struct iraid_volume *vol)
{
    return vol->meta->region_stripes;
}

int meta_region_dirty_stripe(const struct iraid_volume *vol, uint64_t stripe)
{
    return bit_get(vol->meta, stripe / vol->meta->region_stripes);
}

int meta_missed_stripe(const struct iraid_volume *vol, uint64_t stripe)
{
    uint64_t r = stripe / vol->meta->region_stripes;

    return vol->missed[r / 8] >> (r % 8) & 1;
}

uint64_t meta_missed_regions(const struct iraid_volume *vol)
{
    uint64_t n = 0;

    for (uint64_t r = 0; r < vol->meta->nregions; r++)
        n += vol->missed[r / 8] >> (r % 8) & 1;
    return n;
}

uint64_t meta_missed_stripes_below(const struct iraid_volume *vol, uint64_t limit)
{
    return iraid_bitmap_stripes_below(vol->missed, vol->meta->region_stripes, vol->layout.stripes,
                                      limit);
}

/* ---- lazy clearing ---- */

/* The flush made every write before it durable: the candidate regions that
 * saw no write since can lose their bits. */
static void meta_clean_flushed(struct iraid_volume *vol, int status, void *user)
{
    struct iraid_meta *meta = vol->meta;
    uint32_t first = UINT32_MAX, last = 0;

    meta->cleaning = 0;
    if (status < 0 || vol->closing)
        return;
    for (uint64_t i = 0; i < meta->ncand; i++) {
        uint64_t r = meta->cand[i];
        uint32_t blk;
        if (meta->active[r] || meta->begins[r] != meta->cand_begins[i] || !bit_get(meta, r))
            continue;
        blk = bit_put(meta, r, 0);
        first = blk < first ? blk : first;
        last = blk > last ? blk : last;
    }
    for (uint32_t b = first; b <= last && first != UINT32_MAX; b++)
        meta_write_block(vol, b);
}

void meta_tick(struct iraid_volume *vol)
{
    struct iraid_meta *meta = vol->meta;
    uint64_t now = evloop_now_ms();
    struct iraid_req *req;

    /* The dirty regions adopted at open are made consistent by the resync
     * that follows (sweep.c), one stripe after another, in stripe ops
     * that are no writes of a region (no intent): to this clock those
     * regions have been idle since ever, and the open's own waits run this
     * tick.  Clearing a bit there before the resync is through would make
     * it skip the rest of that region, whose stripes a crash may have
     * torn: so nothing is cleared until iraid_open is done. */
    if (meta->cleaning || now < meta->next_clean || vol->closing || vol->opening)
        return;
    meta->next_clean = now + IRAID_META_LINGER_MS / 2;
    meta->ncand = 0;
    for (uint64_t r = 0; r < meta->nregions; r++)
        if (bit_get(meta, r) && !meta->active[r] && now >= meta->last_end[r] + IRAID_META_LINGER_MS) {
            meta->cand[meta->ncand] = r;
            meta->cand_begins[meta->ncand++] = meta->begins[r];
        }
    if (meta->ncand == 0 ||
        !(req = req_new_flush(vol, IRAID_ALL_MEMBERS, meta_clean_flushed, NULL)))
        return;
    req->tolerate_down = 1;
    meta->cleaning = 1;
    req_launch(req);
}

/* ---- flush: iraid_flush() of a redundant level ---- */

struct flush_wait {
    iraid_cb cb;
    void *user;
};

/* A member lost during the flush may not have made its earlier writes
 * durable; the flush may report them durable only once the superblock
 * that marks that member stale is on the others, or a crash now would
 * let a restart trust it (a degraded write waits the same way). */
static void flush_parts_done(struct iraid_volume *vol, int status, void *user)
{
    struct flush_wait fw = *(struct flush_wait *)user;
    int rc;

    free(user);
    /* members lost during the flush: it holds only if the rest can stand for them */
    if (status == 0 && members_not_live(vol) > vol_redundancy(vol))
        status = -EIO;
    if (status == 0 && !vol->closing) {
        if ((rc = meta_sb_wait(vol, fw.cb, fw.user)) == 0)
            return;
        if (rc < 0)
            status = rc;
    }
    fw.cb(vol, status, fw.user);
}

/* The live members flush (a member lost meanwhile is no error while the
 * others can stand for it), then the superblock is waited for (above).
 * Returns 0, or -EIO (too many members missing), -ENOMEM, or the
 * submission error; cb never runs then. */
int meta_flush(struct iraid_volume *vol, iraid_cb cb, void *user)
{
    struct flush_wait *fw;
    struct iraid_req *req;
    int rc;

    if (members_not_live(vol) > vol_redundancy(vol))
        return -EIO;
    if (!(fw = malloc(sizeof(*fw))))
        return -ENOMEM;
    *fw = (struct flush_wait){ .cb = cb, .user = user };
    if (!(req = req_new_flush(vol, IRAID_ALL_MEMBERS, flush_parts_done, fw))) {
        rc = -ENOMEM;
        goto free_wait;
    }
    req->tolerate_down = 1;
    /* A failed submission never calls back, so fw is still ours then. */
    if ((rc = req_start(req)) < 0)
        goto free_wait;
    return 0;
free_wait:
    free(fw);
    return rc;
}

/* ---- clean close ----
 *
 * meta_mark_clean: FLUSHING (meta_flush of the live members) -> clear
 * the bits of idle regions -> WRITING (each changed bitmap block waited
 * for in turn until durable) -> cb.  The lazy clearing above waits
 * IRAID_META_LINGER_MS for a region to go quiet, so without this a clean
 * close right after writes would leave their bits set, and a degraded
 * RAID-5 volume would then be refused at the next open (-EUCLEAN). */

struct meta_clean {
    iraid_cb cb;
    void *user;
    uint32_t next, last;           /* bitmap blocks still to wait for */
    uint64_t *need;                /* per block: generation to be durable */
};

static void clean_finish(struct iraid_volume *vol, struct meta_clean *mc, int status)
{
    iraid_cb cb = mc->cb;
    void *user = mc->user;

    free(mc->need);
    free(mc);
    cb(vol, status, user);
}

static void clean_block_durable(struct iraid_volume *vol, int status, void *user);

/* Waits for the changed blocks one after another; a block already durable
 * is passed at once. */
static void clean_wait_next(struct iraid_volume *vol, struct meta_clean *mc)
{
    int rc;

    for (; mc->next <= mc->last; mc->next++) {
        rc = meta_block_wait(vol, mc->next, mc->need[mc->next], clean_block_durable, mc);
        if (rc < 0) {
            clean_finish(vol, mc, rc);
            return;
        }
        if (rc == 0) {
            /* (re)issues the write unless one is in flight: its end
             * writes the newer generation */
            meta_write_block(vol, mc->next);
            return;
        }
    }
    clean_finish(vol, mc, 0);
}

static void clean_block_durable(struct iraid_volume *vol, int status, void *user)
{
    struct meta_clean *mc = user;

    if (status < 0) {
        clean_finish(vol, mc, status);
        return;
    }
    mc->next++;
    clean_wait_next(vol, mc);
}

/* Every write completed before the flush is durable, and a region with no
 * write in progress has all its stripes consistent: its bit can go. */
static void clean_flushed(struct iraid_volume *vol, int status, void *user)
{
    struct meta_clean *mc = user;
    struct iraid_meta *meta = vol->meta;
    uint32_t first = UINT32_MAX, last = 0;

    if (status < 0 || vol->closing) {
        clean_finish(vol, mc, status < 0 ? status : -ECANCELED);
        return;
    }
    for (uint64_t r = 0; r < meta->nregions; r++) {
        uint32_t blk;
        if (!bit_get(meta, r) || meta->active[r])
            continue;
        blk = bit_put(meta, r, 0);
        first = blk < first ? blk : first;
        last = blk > last ? blk : last;
        mc->need[blk] = meta->gen[blk];
    }
    if (first == UINT32_MAX) {
        clean_finish(vol, mc, 0);
        return;
    }
    mc->next = first;
    mc->last = last;
    clean_wait_next(vol, mc);
}

int meta_mark_clean(struct iraid_volume *vol, iraid_cb cb, void *user)
{
    struct meta_clean *mc = calloc(1, sizeof(*mc));
    int rc;

    if (!mc || !(mc->need = calloc(vol->meta->nblk, sizeof(uint64_t)))) {
        free(mc);
        return -ENOMEM;
    }
    mc->cb = cb;
    mc->user = user;
    if ((rc = meta_flush(vol, clean_flushed, mc)) < 0) {
        free(mc->need);
        free(mc);
    }
    return rc;
}

/* ---- close ---- */

void iraid_meta_close(struct iraid_volume *vol)
{
    struct iraid_meta *meta = vol->meta;

    if (!meta)
        return;
    while (meta->sb_waiters) {
        struct meta_sb_waiter *w = meta->sb_waiters;
        meta->sb_waiters = w->next;
        w->cb(vol, -ECANCELED, w->user);
        free(w);
    }
    free(meta->image);
    free(meta->gen);
    free(meta->durable);
    free(meta->writing);
    free(meta->active);
    free(meta->begins);
    free(meta->last_end);
    free(meta->set_gen);
    free(meta->cand);
    free(meta->cand_begins);
    free(meta);
    free(vol->missed);
    vol->missed = NULL;
    vol->meta = NULL;
    vol->member_stale = NULL;
}
