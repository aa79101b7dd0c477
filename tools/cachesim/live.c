/* tools/cachesim/live.c: the replay of a version-2 or 3 trace (cachesim.h):
 * the I/O node's L1 exactly as backend/dfstore/l1cache.c runs it, and the
 * targets' L2s under it as backend/iscsi/l2cache.c runs them, both on the
 * cache/ policies the servers link.
 *
 * The trace says what arrived (R, W, D, P) and when the volume I/O the L1
 * started completed (V, S, C, X); this file decides everything else: hits,
 * misses, bypasses, evictions, which slot a block takes, what goes down to
 * the L2 (DPO fills, bypass reads, demotes) and what the L2 keeps.  The
 * live L1 names slots in its completions; this replay allocates slots the
 * same way (a stack of free slots, capacity + capacity/8 + 4 of them), so a
 * completion of a slot the replay does not have in flight means the two
 * diverged, and the replay stops with that line.
 *
 * Volume to member: iRAID's layout (iraid/layout.h) over the header's
 * level, members and chunk; each member's data start 64 KiB in (iRAID's
 * metadata, RAID-1/5).  Each piece of a volume read within one chunk is one
 * READ at its member's target: served from the L2 if every 64 KiB block it
 * touches is cached (each accessed), else from the store (its whole blocks
 * accessed).  Writes themselves change no L2 policy state (l2cache.c:
 * write-through updates of cached blocks), but on RAID-5 a write that is
 * no whole stripe first reads old data and parity (read-modify-write) or
 * the untouched rows (reconstruct-write), whichever reads less, as
 * iraid/raid5.c picks for a volume with every member up: those member
 * reads (without DPO) are modelled.  The volume's writes are the L1's W
 * events it did not absorb and its write-backs (S events, one volume write
 * per run).  What is not modelled, because the trace does not say it: a
 * degraded volume, an L2 fill skipped because a write of an overlapping
 * range raced the read, and a DEMOTE refused because such a write was in
 * flight at the target. */
#include "tools/cachesim/cachesim.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/u64map.h"
#include "iraid/layout.h"

#define LIVE_MAX_LINE 256
#define LIVE_NONE UINT32_MAX
/* iRAID's metadata at the start of each RAID-1/5 member (iraid/meta.h). */
#define LIVE_META_BYTES (64u << 10)
/* The L1's sectors: the volume's block size, which the trace does not
 * carry; iRAID volumes over the project's targets have 512-byte blocks. */
#define LIVE_SECT 512u
#define LIVE_NSECT (CACHE_BLOCK_SIZE / LIVE_SECT)
/* Blocks in one write-back run at most (l1cache.h's L1_RUN_BLOCKS is 32). */
#define LIVE_RUN_MAX 64u
/* Members of a volume (the header is refused above it). */
#define IRAID_LIVE_MAX_MEMBERS 64

enum { SLOT_FREE, SLOT_FILLING, SLOT_VALID, SLOT_ORPHAN, SLOT_STALE, SLOT_EVICTING };

struct live_slot {
    uint64_t vb;
    uint64_t latest_seq, wb_seq;
    uint8_t state, dirty, wb;
    uint8_t admitted;               /* filled by an R miss cache_admit let in */
    struct cache_smap holes, dmap;  /* l1cache.c's sectors (LIVE_SECT bytes) */
};

struct live {
    struct live_config cfg;
    /* L1 */
    struct cache l1;
    struct cache_admit admit;       /* version 3: R misses fill only if admitted */
    uint64_t capacity;              /* blocks; 0 = off */
    uint32_t nslots;
    struct live_slot *slots;
    uint32_t *free_slots;
    uint64_t nfree;
    struct u64map slot_of;
    uint64_t wseq;
    /* L2: one per member (target) */
    struct cache *l2;
    int dpo;                        /* the L2s take DEMOTE: fills carry DPO */
    struct iraid_layout vol;
    uint64_t data_off;
    uint64_t run_vb, run_n;         /* the write-back run being announced (S) */
    struct cache_smap run_dmap[LIVE_RUN_MAX];   /* its blocks' dirty sectors at S */
    struct cache_smap run_holes[LIVE_RUN_MAX];  /* and their holes */
    struct live_result *res;
};

/* ---- the L2 ---- */

/* One READ of [moff, moff + len) at member m's target (l2cache.c). */
static void target_read(struct live *lv, uint32_t m, uint64_t moff, uint64_t len, int dpo)
{
    struct cache *c = &lv->l2[m];
    uint64_t lo = moff / CACHE_BLOCK_SIZE, hi = (moff + len - 1) / CACHE_BLOCK_SIZE + 1;
    unsigned flags = dpo ? CACHE_DPO : 0;
    struct cache_victim v;

    for (uint64_t b = lo; b < hi; b++) {
        if (cache_contains(c, cache_key(m, b)))
            continue;
        /* a miss: from the store, and only its whole blocks go to the
         * policy */
        lo = (moff + CACHE_BLOCK_SIZE - 1) / CACHE_BLOCK_SIZE;
        hi = (moff + len) / CACHE_BLOCK_SIZE;
        break;
    }
    for (uint64_t b = lo; b < hi; b++)
        (void)cache_access(c, cache_key(m, b), flags, &v);
}

/* Volume bytes [off, off + len) read from the targets, chunk by chunk. */
static void volume_read(struct live *lv, uint64_t off, uint64_t len, int dpo)
{
    while (lv->l2 && len > 0) {
        struct iraid_loc loc;
        uint64_t n;

        iraid_layout_map(&lv->vol, off, &loc);
        n = loc.run < len ? loc.run : len;
        target_read(lv, loc.member, lv->data_off + loc.member_off, n, dpo && lv->dpo);
        off += n;
        len -= n;
    }
}

/* RAID-5: the member reads of a write of [lo[k], hi[k]) of each data chunk
 * k of stripe s (rows [rlo, rhi)) that is no whole stripe. */
static void raid5_write_reads(struct live *lv, uint64_t s, const uint64_t *lo, const uint64_t *hi,
                              uint64_t rlo, uint64_t rhi)
{
    uint32_t per = iraid_layout_data_per_stripe(&lv->vol);
    uint64_t chunk = lv->vol.chunk, base = lv->data_off + s * chunk;
    int64_t rmw = (int64_t)(rhi - rlo), rcw = 0;
    int full = 1;

    for (uint32_t k = 0; k < per; k++) {
        full &= lo[k] == 0 && hi[k] == chunk;
        rmw += (int64_t)(hi[k] - lo[k]);
        rcw += (int64_t)((rhi - rlo) - (hi[k] - lo[k]));
    }
    if (full)
        return;
    for (uint32_t k = 0; k < per; k++) {
        struct iraid_loc loc;
        uint32_t mk;

        iraid_layout_map(&lv->vol, (s * per + k) * chunk, &loc);
        mk = loc.member;
        if (rcw >= rmw && lo[k] < hi[k]) {
            target_read(lv, mk, base + lo[k], hi[k] - lo[k], 0);
        } else if (rcw < rmw && lo[k] == hi[k]) {
            target_read(lv, mk, base + rlo, rhi - rlo, 0);
        } else if (rcw < rmw) {
            if (rlo < lo[k])
                target_read(lv, mk, base + rlo, lo[k] - rlo, 0);
            if (hi[k] < rhi)
                target_read(lv, mk, base + hi[k], rhi - hi[k], 0);
        }
    }
    if (rcw >= rmw)
        target_read(lv, iraid_layout_parity_member(&lv->vol, s), base + rlo, rhi - rlo, 0);
}

/* A volume write of [off, off + len), stripe by stripe (iraid/io.c). */
static void volume_write(struct live *lv, uint64_t off, uint64_t len)
{
    uint32_t per = iraid_layout_data_per_stripe(&lv->vol);
    uint64_t chunk = lv->vol.chunk, sbytes = per * chunk, end = off + len;

    while (lv->l2 && lv->vol.level == 5 && off < end) {
        uint64_t s = off / sbytes, base = s * sbytes;
        uint64_t stop = end < base + sbytes ? end : base + sbytes, rlo = chunk, rhi = 0;
        uint64_t lo[IRAID_LIVE_MAX_MEMBERS], hi[IRAID_LIVE_MAX_MEMBERS];

        for (uint32_t k = 0; k < per; k++) {
            uint64_t cb = base + k * chunk, l = off > cb ? off - cb : 0;
            uint64_t h = stop < cb + chunk ? (stop > cb ? stop - cb : 0) : chunk;
            lo[k] = l < h ? l : 0;
            hi[k] = l < h ? h : 0;
            if (l < h && l < rlo)
                rlo = l;
            if (l < h && h > rhi)
                rhi = h;
        }
        raid5_write_reads(lv, s, lo, hi, rlo, rhi);
        off = stop;
    }
}

/* A clean block L1 evicted, handed to its target (iraid_demote). */
static void volume_demote(struct live *lv, uint64_t vb)
{
    struct iraid_loc loc;
    struct cache_victim v;

    if (!lv->l2 || !lv->dpo)
        return;     /* no target takes DEMOTE: iraid_demote sends nothing */
    lv->res->l1_demotes++;
    iraid_layout_map(&lv->vol, vb * CACHE_BLOCK_SIZE, &loc);
    (void)cache_demote(&lv->l2[loc.member],
                       cache_key(loc.member, (lv->data_off + loc.member_off) / CACHE_BLOCK_SIZE),
                       &v);
}

/* ---- the L1's slots (l1cache.c's, line for line) ---- */

static uint32_t slot_find(const struct live *lv, uint64_t vb)
{
    uint64_t s = u64map_get(&lv->slot_of, vb);

    return s == U64MAP_NONE ? LIVE_NONE : (uint32_t)s;
}

static void slot_free(struct live *lv, uint32_t slot)
{
    lv->slots[slot] = (struct live_slot){ .state = SLOT_FREE };
    lv->free_slots[lv->nfree++] = slot;
}

static void block_forget(struct live *lv, uint64_t vb, uint8_t state)
{
    uint32_t s = slot_find(lv, vb);

    if (s == LIVE_NONE)
        return;
    u64map_del(&lv->slot_of, vb);
    cache_remove(&lv->l1, vb);
    if (lv->slots[s].state == SLOT_FILLING)
        lv->slots[s].state = state;
    else
        slot_free(lv, s);
}

/* A dirty victim stays (EVICTING) until its write-back (S, C) completes. */
static void victim_out(struct live *lv, uint64_t vb)
{
    uint32_t s = slot_find(lv, vb);

    lv->res->l1_evictions++;
    if (s == LIVE_NONE)
        return;
    if (lv->slots[s].dirty) {
        lv->slots[s].state = SLOT_EVICTING;
        return;
    }
    if (lv->slots[s].state == SLOT_VALID && !cache_smap_any(&lv->slots[s].holes, 0, LIVE_NSECT))
        volume_demote(lv, vb);
    block_forget(lv, vb, SLOT_ORPHAN);
}

static uint32_t block_add(struct live *lv, uint64_t vb, uint8_t state)
{
    struct cache_victim v;
    uint32_t slot;

    (void)cache_access(&lv->l1, vb, 0, &v);
    if (v.valid)
        victim_out(lv, v.key);
    if (lv->nfree == 0) {
        cache_remove(&lv->l1, vb);
        return LIVE_NONE;
    }
    slot = lv->free_slots[--lv->nfree];
    lv->slots[slot] = (struct live_slot){ .vb = vb, .state = state };
    (void)u64map_put(&lv->slot_of, vb, slot);   /* reserved for every slot */
    return slot;
}

static void block_touch(struct live *lv, uint32_t slot)
{
    struct cache_victim v;

    if (lv->slots[slot].state == SLOT_VALID)
        (void)cache_access(&lv->l1, lv->slots[slot].vb, 0, &v);
}

/* ---- the L1's operations ---- */

static void bypass(struct live *lv, uint64_t off, uint64_t len)
{
    lv->res->l1_bypasses++;
    volume_read(lv, off, len, 0);
}

static int range_dirty(const struct live *lv, uint64_t off, uint64_t len)
{
    for (uint64_t vb = off / CACHE_BLOCK_SIZE; vb * CACHE_BLOCK_SIZE < off + len; vb++) {
        uint32_t s = slot_find(lv, vb);
        if (s != LIVE_NONE && lv->slots[s].dirty)
            return 1;
    }
    return 0;
}

/* R (stream 0), B (stream 1: a miss is no fill, a bypass) and M (old 1:
 * a miss is no fill either: the write is absorbed around the old sectors).
 * A block with holes: the read is a hit, a bypass, or a merge (a miss
 * that reads the whole block, DPO, and fills the holes; the live L1 fills
 * them when the read completes, the replay at once). */
static void op_read(struct live *lv, uint64_t off, uint64_t len, int stream, int old)
{
    uint64_t vb = off / CACHE_BLOCK_SIZE;
    uint32_t s;
    int gated;

    if (lv->capacity == 0)
        return volume_read(lv, off, len, 0);
    if ((off + len - 1) / CACHE_BLOCK_SIZE != vb) {
        if (!range_dirty(lv, off, len))     /* else refused: no I/O at all */
            bypass(lv, off, len);
        return;
    }
    s = slot_find(lv, vb);
    gated = lv->cfg.version >= 3 && !stream && !old && len < CACHE_BLOCK_SIZE;
    if (s == LIVE_NONE && (stream || old || (gated && !cache_admit(&lv->admit, vb))))
        return bypass(lv, off, len);
    if (s == LIVE_NONE) {
        if ((s = block_add(lv, vb, SLOT_FILLING)) == LIVE_NONE)
            return bypass(lv, off, len);
        if (gated) {
            lv->slots[s].admitted = 1;
            cache_admit_filled(&lv->admit);
        }
        lv->res->l1_misses++;
        return volume_read(lv, vb * CACHE_BLOCK_SIZE, CACHE_BLOCK_SIZE, 1);
    }
    if (lv->slots[s].state == SLOT_FILLING)
        return bypass(lv, off, len);
    switch (cache_sect_read(&lv->slots[s].holes, &lv->slots[s].dmap, LIVE_SECT,
                            off % CACHE_BLOCK_SIZE, len)) {
    case CACHE_READ_AROUND:
        return bypass(lv, off, len);
    case CACHE_READ_MERGE:
        lv->res->l1_misses++;
        memset(&lv->slots[s].holes, 0, sizeof(lv->slots[s].holes));
        block_touch(lv, s);
        return volume_read(lv, vb * CACHE_BLOCK_SIZE, CACHE_BLOCK_SIZE, 1);
    case CACHE_READ_HIT:
        break;
    }
    block_touch(lv, s);
    if (lv->slots[s].admitted)
        cache_admit_hit(&lv->admit);
    lv->res->l1_hits++;
}

/* P: read-ahead fills of the blocks of [off, off + len) not cached. */
static void op_prefetch(struct live *lv, uint64_t off, uint64_t len)
{
    for (uint64_t vb = off / CACHE_BLOCK_SIZE; lv->capacity && vb * CACHE_BLOCK_SIZE < off + len;
         vb++) {
        if (slot_find(lv, vb) != LIVE_NONE || block_add(lv, vb, SLOT_FILLING) == LIVE_NONE)
            continue;
        lv->res->l1_prefetches++;
        volume_read(lv, vb * CACHE_BLOCK_SIZE, CACHE_BLOCK_SIZE, 1);
    }
}

static int absorbable(const struct live *lv, uint64_t off, uint64_t len)
{
    uint64_t need = 0;

    if ((off + len - 1) / CACHE_BLOCK_SIZE - off / CACHE_BLOCK_SIZE + 1 > lv->capacity / 2)
        return 0;
    for (uint64_t vb = off / CACHE_BLOCK_SIZE; vb * CACHE_BLOCK_SIZE < off + len; vb++) {
        uint32_t s = slot_find(lv, vb);
        uint64_t in = vb * CACHE_BLOCK_SIZE < off ? off - vb * CACHE_BLOCK_SIZE : 0;
        uint64_t end = (vb + 1) * CACHE_BLOCK_SIZE < off + len ? CACHE_BLOCK_SIZE
                                                               : off + len - vb * CACHE_BLOCK_SIZE;
        if (s != LIVE_NONE && lv->slots[s].state == SLOT_FILLING)
            return 0;
        if (!cache_sect_fits(s == LIVE_NONE ? NULL : &lv->slots[s].holes, LIVE_SECT, in, end - in))
            return 0;
        if (s == LIVE_NONE)
            need++;
    }
    return need <= lv->nfree;
}

static void write_into(struct live *lv, uint64_t off, uint64_t len, int absorb, int add)
{
    for (uint64_t vb = off / CACHE_BLOCK_SIZE; vb * CACHE_BLOCK_SIZE < off + len; vb++) {
        uint32_t s = slot_find(lv, vb);
        if (s != LIVE_NONE && lv->slots[s].state == SLOT_VALID)
            block_touch(lv, s);
    }
    for (uint64_t done = 0; done < len;) {
        uint64_t vb = (off + done) / CACHE_BLOCK_SIZE, in = (off + done) % CACHE_BLOCK_SIZE;
        uint64_t n = CACHE_BLOCK_SIZE - in < len - done ? CACHE_BLOCK_SIZE - in : len - done;
        uint32_t s = slot_find(lv, vb);

        if (s != LIVE_NONE && lv->slots[s].state == SLOT_FILLING) {
            block_forget(lv, vb, SLOT_STALE);
            s = LIVE_NONE;
        }
        if (s != LIVE_NONE) {
            block_touch(lv, s);
        } else if (add && (n == CACHE_BLOCK_SIZE || absorb) &&
                   (s = block_add(lv, vb, SLOT_VALID)) != LIVE_NONE) {
            cache_smap_set(&lv->slots[s].holes, 0, LIVE_NSECT);
        }
        if (s != LIVE_NONE) {
            int dirty = absorb || lv->slots[s].dirty;
            cache_sect_write(&lv->slots[s].holes, &lv->slots[s].dmap, LIVE_SECT, in, n, dirty);
            if (dirty) {
                lv->slots[s].dirty = 1;
                lv->slots[s].latest_seq = ++lv->wseq;
            }
        }
        done += n;
    }
}

/* W (stream 0) and U (stream 1: through, and no whole blocks added). */
static void op_write(struct live *lv, uint64_t off, uint64_t len, int through, int stream)
{
    if (lv->capacity == 0)
        return volume_write(lv, off, len);
    if (!through && !stream && absorbable(lv, off, len)) {
        write_into(lv, off, len, 1, 1);
        lv->res->l1_writes_absorbed++;
        return;
    }
    volume_write(lv, off, len);
    write_into(lv, off, len, 0, !stream);
}

/* X: a write to the volume failed: its clean cached blocks go. */
static void op_write_failed(struct live *lv, uint64_t off, uint64_t len)
{
    for (uint64_t vb = off / CACHE_BLOCK_SIZE; vb * CACHE_BLOCK_SIZE < off + len; vb++) {
        uint32_t s = slot_find(lv, vb);
        if (s != LIVE_NONE && !lv->slots[s].dirty)
            block_forget(lv, vb, SLOT_STALE);
    }
}

static void op_discard(struct live *lv, uint64_t vb)
{
    uint32_t s = lv->capacity ? slot_find(lv, vb) : LIVE_NONE;

    if (s == LIVE_NONE)
        return;
    lv->slots[s].dirty = 0;
    memset(&lv->slots[s].dmap, 0, sizeof(lv->slots[s].dmap));
    if (lv->slots[s].wb)
        return;
    if (lv->slots[s].state == SLOT_EVICTING) {
        u64map_del(&lv->slot_of, vb);
        slot_free(lv, s);
    } else {
        block_forget(lv, vb, SLOT_STALE);
    }
}

/* V, S, C: completions and write-back starts; -1 when the replay does not
 * have slot in a state that allows it (the replay diverged). */
static int op_fill_done(struct live *lv, uint32_t slot, int ok)
{
    struct live_slot *s = &lv->slots[slot];

    if (s->state != SLOT_FILLING && s->state != SLOT_ORPHAN && s->state != SLOT_STALE)
        return -1;
    if (s->state != SLOT_FILLING) {
        slot_free(lv, slot);
    } else if (ok) {
        s->state = SLOT_VALID;
    } else {
        block_forget(lv, s->vb, SLOT_STALE);
        slot_free(lv, slot);
    }
    return 0;
}

/* The write-back run announced so far goes to the volume: one write per
 * run of adjacent dirty sectors, joined across short clean gaps
 * (l1writeback.c). */
static void run_issue(struct live *lv)
{
    const struct cache_smap *maps[LIVE_RUN_MAX], *holes[LIVE_RUN_MAX];
    struct cache_run runs[LIVE_RUN_MAX * (LIVE_NSECT / 2 + 1)];
    uint32_t n;

    for (uint64_t i = 0; i < lv->run_n; i++) {
        maps[i] = &lv->run_dmap[i];
        holes[i] = &lv->run_holes[i];
    }
    n = cache_sect_runs(maps, (uint32_t)lv->run_n, LIVE_NSECT, LIVE_SECT, runs,
                        LIVE_RUN_MAX * (LIVE_NSECT / 2 + 1));
    if (n != UINT32_MAX)
        n = cache_sect_bridge(runs, n, holes, (uint32_t)lv->run_n, LIVE_SECT, CACHE_WB_BRIDGE);
    for (uint32_t r = 0; r < n && n != UINT32_MAX; r++)
        volume_write(lv, lv->run_vb * CACHE_BLOCK_SIZE + runs[r].start,
                     runs[r].end - runs[r].start);
    lv->run_n = 0;
}

/* S: block k of a write-back run (k = 0 starts one). */
static int op_wb_start(struct live *lv, uint32_t slot, uint64_t k)
{
    struct live_slot *s = &lv->slots[slot];

    if (!s->dirty || s->wb || slot_find(lv, s->vb) != slot)
        return -1;
    if (k == 0)
        run_issue(lv);
    else if (k != lv->run_n || s->vb != lv->run_vb + k || k >= LIVE_RUN_MAX)
        return -1;
    if (k == 0)
        lv->run_vb = s->vb;
    lv->run_holes[lv->run_n] = s->holes;
    lv->run_dmap[lv->run_n++] = s->dmap;
    s->wb = 1;
    s->wb_seq = s->latest_seq;
    return 0;
}

static int op_wb_done(struct live *lv, uint32_t slot, int ok)
{
    struct live_slot *s = &lv->slots[slot];

    if (!s->wb)
        return -1;
    s->wb = 0;
    if (ok && s->dirty && s->latest_seq == s->wb_seq) {
        s->dirty = 0;
        memset(&s->dmap, 0, sizeof(s->dmap));
    }
    if (s->state == SLOT_EVICTING && !s->dirty) {
        u64map_del(&lv->slot_of, s->vb);
        slot_free(lv, slot);
    }
    return 0;
}

/* ---- set-up ---- */

static void l1_fini(struct live *lv)
{
    if (lv->admit.ring)
        cache_admit_fini(&lv->admit);
    cache_fini(&lv->l1);
    u64map_free(&lv->slot_of);
    free(lv->slots);
    free(lv->free_slots);
    lv->slots = NULL;
    lv->free_slots = NULL;
    lv->capacity = 0;
}

/* A fresh L1 (also after a header in mid-trace: the I/O node restarted,
 * its memory is gone); 0 or -1 with err. */
static int l1_init(struct live *lv, char *err, size_t errlen)
{
    uint64_t n = lv->cfg.l1_bytes / CACHE_BLOCK_SIZE, ns = n + n / 8 + 4;

    l1_fini(lv);
    lv->slot_of = (struct u64map){ 0 };
    if (n == 0)
        return 0;
    if (n >= (1ull << 31) || cache_init(&lv->l1, cache_policy_find("lru"), n) < 0 ||
        cache_admit_init(&lv->admit, (uint32_t)n) < 0)
        goto fail;
    lv->capacity = n;
    lv->nslots = (uint32_t)ns;
    lv->slots = calloc(ns, sizeof(*lv->slots));
    lv->free_slots = calloc(ns, sizeof(*lv->free_slots));
    if (!lv->slots || !lv->free_slots || u64map_reserve(&lv->slot_of, ns) < 0)
        goto fail;
    for (uint64_t i = 0; i < ns; i++)
        lv->free_slots[i] = (uint32_t)(ns - 1 - i);
    lv->nfree = ns;
    lv->wseq = 0;
    return 0;
fail:
    l1_fini(lv);
    snprintf(err, errlen, "no memory for an L1 of %" PRIu64 " bytes", lv->cfg.l1_bytes);
    return -1;
}

static int l2_init(struct live *lv, char *err, size_t errlen)
{
    uint64_t n = lv->cfg.l2_bytes / CACHE_BLOCK_SIZE;
    const struct cache_ops *ops = lv->cfg.l2_policy;

    if (iraid_layout_init(&lv->vol, lv->cfg.raid, lv->cfg.members, lv->cfg.chunk,
                          1ull << 50) < 0) {
        snprintf(err, errlen, "no iRAID layout for RAID-%d over %u members with %" PRIu64
                 "-byte chunks", lv->cfg.raid, lv->cfg.members, lv->cfg.chunk);
        return -1;
    }
    lv->data_off = lv->cfg.raid == 0 ? 0 : LIVE_META_BYTES;
    lv->dpo = strcmp(ops->name, "demote") == 0 || strcmp(ops->name, "demote-mq") == 0;
    if (n == 0)
        return 0;
    if (!(lv->l2 = calloc(lv->cfg.members, sizeof(*lv->l2))))
        goto fail;
    for (uint32_t m = 0; m < lv->cfg.members; m++)
        if (cache_init(&lv->l2[m], ops, n) < 0)
            goto fail;
    return 0;
fail:
    snprintf(err, errlen, "no memory for L2s of %" PRIu64 " bytes", lv->cfg.l2_bytes);
    return -1;
}

static void l2_fini(struct live *lv)
{
    for (uint32_t m = 0; lv->l2 && m < lv->cfg.members; m++)
        cache_fini(&lv->l2[m]);
    free(lv->l2);
    lv->l2 = NULL;
}

/* ---- the trace ---- */

int live_header(const char *line, struct live_config *out)
{
    char policy[32];
    unsigned long long chunk, l1, l2, ra;
    unsigned version, io, members;
    int raid, n = 0;

    if (sscanf(line, "#ipvfs-trace %u io=%u raid=%d members=%u chunk=%llu l1=%llu l2=%llu "
               "l2_policy=%31s ra=%llu%n", &version, &io, &raid, &members, &chunk, &l1, &l2,
               policy, &ra, &n) != 9 ||
        line[n] != '\0' || version < 2 || version > 3 || members == 0 || members > 64 ||
        chunk == 0 || !(out->l2_policy = cache_policy_find(policy)))
        return -1;
    out->version = version;
    out->raid = raid;
    out->members = members;
    out->chunk = chunk;
    out->l1_bytes = l1;
    out->l2_bytes = l2;
    out->readahead = ra;
    return 0;
}

/* One event line (not a header, comment or request); 0 or -1. */
static int live_event(struct live *lv, const char *line)
{
    unsigned long long a = 0, b = 0;
    unsigned c = 0;
    char op, extra;
    int n = sscanf(line, "%c %llu %llu %u %c", &op, &a, &b, &c, &extra);
    int want = op == 'W' || op == 'U' ? 4 : op == 'D' ? 2 : op && strchr("RBMPXVCS", op) ? 3 : 0;

    if (want == 0 || n != want || (strchr("RBMWUPX", op) &&
        (b == 0 || a + b < a)) || c > 1 || ((op == 'V' || op == 'C') && b > 1))
        return -1;
    if ((op == 'V' || op == 'S' || op == 'C') && a >= lv->nslots)
        return -1;
    if (op != 'S')
        run_issue(lv);
    switch (op) {
    case 'R': op_read(lv, a, b, 0, 0); return 0;
    case 'B': op_read(lv, a, b, 1, 0); return 0;
    case 'M': op_read(lv, a, b, 0, 1); return 0;
    case 'W': op_write(lv, a, b, (int)c, 0); return 0;
    case 'U': op_write(lv, a, b, (int)c, 1); return 0;
    case 'P': op_prefetch(lv, a, b); return 0;
    case 'X': op_write_failed(lv, a, b); return 0;
    case 'D': op_discard(lv, a); return 0;
    case 'V': return op_fill_done(lv, (uint32_t)a, (int)b);
    case 'S': return op_wb_start(lv, (uint32_t)a, b);
    default: return op_wb_done(lv, (uint32_t)a, (int)b);
    }
}

/* The first header: the configuration, with the caller's overrides. */
static int live_setup(struct live *lv, const char *line, const struct live_config *ov,
                      char *err, size_t errlen)
{
    if (live_header(line, &lv->cfg) < 0) {
        snprintf(err, errlen, "line 1: not a version-2 or 3 header (#ipvfs-trace 3 io=N "
                 "raid=L members=N chunk=B l1=B l2=B l2_policy=P ra=B)");
        return -1;
    }
    /* the read-ahead pool lives beside the L1's policy, with its own aging:
     * not modelled, so such a trace cannot be replayed exactly */
    if (lv->cfg.readahead) {
        snprintf(err, errlen, "line 1: recorded with read-ahead (ra=%llu); the replay models "
                 "the L1 without it: record with --readahead 0",
                 (unsigned long long)lv->cfg.readahead);
        return -1;
    }
    if (ov->l2_policy)
        lv->cfg.l2_policy = ov->l2_policy;
    if (ov->l2_bytes)
        lv->cfg.l2_bytes = ov->l2_bytes;
    return l2_init(lv, err, errlen) < 0 || l1_init(lv, err, errlen) < 0 ? -1 : 0;
}

static int live_line(struct live *lv, char *line, uint64_t lineno, char *err, size_t errlen)
{
    struct live_config again;

    if (strncmp(line, "#ipvfs-trace", 12) == 0) {
        /* a restarted I/O node: same volume, a fresh L1 */
        if (live_header(line, &again) < 0 || again.members != lv->cfg.members ||
            again.raid != lv->cfg.raid || again.chunk != lv->cfg.chunk ||
            again.version != lv->cfg.version) {
            snprintf(err, errlen, "line %" PRIu64 ": a header for another volume", lineno);
            return -1;
        }
        lv->cfg.l1_bytes = again.l1_bytes;
        return l1_init(lv, err, errlen);
    }
    if (line[0] < 'A' || line[0] > 'Z')
        return 0;       /* a comment, blank, or a request (the events say it all) */
    if (live_event(lv, line) == 0)
        return 0;
    snprintf(err, errlen, "line %" PRIu64 ": '%.40s' is no valid event here (malformed, or a "
             "completion of a slot the replay has not in flight: the trace is not from this "
             "L1)", lineno, line);
    return -1;
}

int live_replay(FILE *in, const struct live_config *overrides, struct live_config *out_cfg,
                struct live_result *out, char *err, size_t errlen)
{
    struct live lv = { .res = out };
    char line[LIVE_MAX_LINE + 2];
    uint64_t lineno = 0;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    while (rc == 0 && fgets(line, sizeof(line), in)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (++lineno == 1)
            rc = live_setup(&lv, line, overrides, err, errlen);
        else
            rc = live_line(&lv, line, lineno, err, errlen);
    }
    if (rc == 0)
        run_issue(&lv);
    if (rc == 0 && ferror(in)) {
        snprintf(err, errlen, "reading the trace after line %" PRIu64 ": %s", lineno,
                 strerror(errno));
        rc = -1;
    }
    if (rc == 0 && lineno == 0) {
        snprintf(err, errlen, "an empty trace");
        rc = -1;
    }
    for (uint32_t m = 0; rc == 0 && lv.l2 && m < lv.cfg.members; m++) {
        out->l2_hits += lv.l2[m].stats.hits;
        out->l2_misses += lv.l2[m].stats.misses;
        out->l2_demotes_kept += lv.l2[m].stats.demotes_kept;
    }
    *out_cfg = lv.cfg;
    l1_fini(&lv);
    l2_fini(&lv);
    return rc;
}
