/* The target's L2 of uCache (issue 13): a sized cache of 64 KiB blocks in
 * front of the backing stores, run by the cache/ policy code that the
 * simulator ipvfs-cachesim links too.
 *
 * Every backing io of a LUN enters here (tgt_io_submit); without an L2 it
 * goes straight to the store.  With one (struct tgt_l2, srv->l2, shared
 * by the target's LUNs; blocks keyed cache_key(LUN, offset / 64 KiB)):
 *   READ   served from memory when every 64 KiB block it touches is
 *          cached (the callback runs before tgt_io_submit returns, as for
 *          the memory store); otherwise read from the store, and each
 *          whole block of the range is then offered to the policy as an
 *          access (a miss, or a hit on a block already here), with
 *          CACHE_DPO when the READ had SBC's DPO bit: under "demote" a
 *          DPO hit gives the block up (the I/O node keeps it) and a DPO
 *          miss is not kept.  Partial blocks of a miss are not cached.
 *   WRITE  write-through: the store write (FUA or not, as asked) is
 *          acknowledged only by the store; at its completion the cached
 *          blocks it overlaps take the new bytes.  Writes allocate
 *          nothing: a block written by the I/O node stays in its L1.
 *   PUNCH  (UNMAP, WRITE SAME with UNMAP) drops the blocks it overlaps.
 *   FLUSH  straight to the store (fdatasync): the L2 holds no dirty data.
 * So SYNCHRONIZE CACHE and FUA mean what they meant without an L2.
 *
 * A read from the store is not offered to the policy when a write of an
 * overlapping range was in flight, or started, while it was (its bytes
 * may predate the write; the write's own completion updated what was
 * cached); likewise a DEMOTE is ignored when a write of an overlapping
 * range was in flight, or started, since it arrived.  Writes to other
 * ranges do not matter: checking any write (wgen moved) skipped most of
 * RAID-5's read-modify-write reads, since the stripe before's writes are
 * in flight, and so at random, which ipvfs-cachesim cannot replay.
 * The writes are remembered in a ring of the last L2_WRITE_LOG (start and
 * end generations); when the ring no longer covers the DEMOTE's arrival,
 * it is ignored too (conservative).  Writes to other blocks no longer
 * cost a DEMOTE: with the I/O node's write-behind a write is nearly
 * always in flight somewhere.
 *
 * Memory: capacity x 64 KiB of block data (one anonymous mapping, page
 * aligned, so stores opened with O_DIRECT could read into it) plus the
 * policy's metadata (cache.h) and 12 bytes of slot map per block.
 */
#include "config.h"

#include "backend/iscsi/tgt.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cache/cache.h"
#include "common/log.h"
#include "common/size.h"
#include "common/u64map.h"

#define L2_BS CACHE_BLOCK_SIZE
/* Writes remembered for the DEMOTE race check: far more than a target
 * has in flight (its sessions' queue depths). */
#define L2_WRITE_LOG 1024u

struct l2_write {
    uint64_t seq;           /* which write (1, 2, ...); 0: unused */
    int lun;
    uint64_t off, len;
    uint64_t start_gen;     /* wgen when it started */
    uint64_t end_gen;       /* wgen when it ended; 0 while in flight */
};

struct tgt_l2 {
    struct cache c;
    uint8_t *data;          /* capacity blocks */
    struct u64map slots;    /* key -> index of its block in data */
    uint32_t *free;         /* free slot indices (a stack) */
    uint32_t nfree;
    uint64_t wgen;          /* bumped at every write start and end */
    uint32_t writes_busy;   /* writes and punches in flight */
    uint64_t demotes_raced; /* DEMOTEs ignored: an overlapping write raced */
    struct l2_write wlog[L2_WRITE_LOG];  /* write seq % L2_WRITE_LOG */
    uint64_t wseq;          /* writes started */
    uint64_t partial;       /* blocks of a missed READ not wholly read */
};

/* ---- slots ---- */

static void slot_release(struct tgt_l2 *l2, uint64_t key)
{
    uint64_t s = u64map_get(&l2->slots, key);

    if (s == U64MAP_NONE)
        return;
    u64map_del(&l2->slots, key);
    l2->free[l2->nfree++] = (uint32_t)s;
}

/* Brings the slot map in line with the policy after an operation on key
 * that may have evicted victim: data for a block the policy now holds
 * come from src (NULL: nothing to copy, the block must already be here). */
static void slot_sync(struct tgt_l2 *l2, uint64_t key, const struct cache_victim *victim,
                      const uint8_t *src)
{
    uint64_t s;

    if (victim->valid)
        slot_release(l2, victim->key);
    if (!cache_contains(&l2->c, key)) {
        slot_release(l2, key);
        return;
    }
    s = u64map_get(&l2->slots, key);
    if (s != U64MAP_NONE || !src)
        return;
    /* resident <= capacity = slots, and the map was reserved for all. */
    s = l2->free[--l2->nfree];
    if (u64map_put(&l2->slots, key, s) < 0) {
        l2->free[l2->nfree++] = (uint32_t)s;
        cache_remove(&l2->c, key);
        return;
    }
    memcpy(l2->data + s * L2_BS, src, L2_BS);
}

static uint8_t *slot_data(struct tgt_l2 *l2, uint64_t key)
{
    uint64_t s = u64map_get(&l2->slots, key);

    return s == U64MAP_NONE ? NULL : l2->data + s * L2_BS;
}

/* ---- the io paths ---- */

static uint64_t lun_key(const struct tgt_io *io, uint64_t block)
{
    return cache_key((uint32_t)io->lun->index, block);
}

/* Serves io from the cache when every block it touches is here. */
static int read_hit(struct tgt_l2 *l2, struct tgt_io *io)
{
    uint64_t first = io->off / L2_BS, last = (io->off + io->len - 1) / L2_BS;
    unsigned flags = io->dpo ? CACHE_DPO : 0;

    for (uint64_t b = first; b <= last; b++)
        if (!slot_data(l2, lun_key(io, b)))
            return 0;
    for (uint64_t b = first; b <= last; b++) {
        uint64_t key = lun_key(io, b), lo = b * L2_BS, hi = lo + L2_BS;
        uint64_t from = io->off > lo ? io->off : lo;
        uint64_t to = io->off + io->len < hi ? io->off + io->len : hi;
        struct cache_victim v = { 0 };

        memcpy(io->buf + (from - io->off), slot_data(l2, key) + (from - lo), to - from);
        cache_access(&l2->c, key, flags, &v);
        slot_sync(l2, key, &v, NULL);
    }
    return 1;
}

/* A read from the store: its whole blocks go to the policy. */
static void read_fill(struct tgt_l2 *l2, struct tgt_io *io)
{
    uint64_t first = (io->off + L2_BS - 1) / L2_BS, end = (io->off + io->len) / L2_BS;
    unsigned flags = io->dpo ? CACHE_DPO : 0;

    l2->partial += (io->off % L2_BS != 0) + ((io->off + io->len) % L2_BS != 0);
    for (uint64_t b = first; b < end; b++) {
        uint64_t key = lun_key(io, b);
        struct cache_victim v = { 0 };

        cache_access(&l2->c, key, flags, &v);
        slot_sync(l2, key, &v, io->buf + (b * L2_BS - io->off));
    }
}

/* A finished write updates the cached blocks it overlaps; a punch drops
 * them. */
static void write_apply(struct tgt_l2 *l2, struct tgt_io *io)
{
    uint64_t first = io->off / L2_BS, last = (io->off + io->len - 1) / L2_BS;

    for (uint64_t b = first; b <= last; b++) {
        uint64_t key = lun_key(io, b), lo = b * L2_BS, hi = lo + L2_BS;
        uint64_t from = io->off > lo ? io->off : lo;
        uint64_t to = io->off + io->len < hi ? io->off + io->len : hi;
        uint8_t *d = slot_data(l2, key);

        if (!d)
            continue;
        if (io->op == TGT_IO_PUNCH) {
            cache_remove(&l2->c, key);
            slot_release(l2, key);
        } else {
            memcpy(d + (from - lo), io->buf + (from - io->off), to - from);
        }
    }
}

/* Buffered I/O of a LUN that wanted O_DIRECT leaves the pages to the
 * kernel's cache, which would be a hidden third level: drop them. */
static void drop_pages(struct tgt_io *io)
{
    if (io->lun->direct && io->fd >= 0 && io->fd == io->lun->fd && io->len &&
        posix_fadvise(io->fd, (off_t)io->off, (off_t)io->len, POSIX_FADV_DONTNEED) != 0)
        io->lun->fadvise_failed++;
}

/* Whether a write of [off, off + len) of lun was in flight at gen or
 * started since (see the header comment): the check of a DEMOTE and of a
 * READ's fill. */
static int write_raced(const struct tgt_l2 *l2, int lun, uint64_t off, uint64_t len,
                       uint64_t gen)
{
    if (l2->writes_busy >= L2_WRITE_LOG)
        return 1;
    for (uint32_t i = 0; i < L2_WRITE_LOG; i++) {
        const struct l2_write *w = &l2->wlog[i];

        if (w->seq == 0 || w->lun != lun || w->off >= off + len || off >= w->off + w->len)
            continue;
        if (w->end_gen == 0 || w->end_gen > gen)
            return 1;
    }
    /* the oldest write still remembered started after gen: older ones
     * that ended after gen may be gone */
    return l2->wseq > L2_WRITE_LOG &&
           l2->wlog[(l2->wseq + 1) % L2_WRITE_LOG].start_gen > gen;
}

static void l2_io_done(struct tgt_io *io, int err)
{
    struct tgt_l2 *l2 = io->lun->srv->l2;

    io->cb = io->l2_cb;
    if (err == 0 && l2) {
        if (io->op == TGT_IO_READ &&
            !write_raced(l2, io->lun->index, io->off, io->len, io->l2_gen))
            read_fill(l2, io);
        else if (io->op != TGT_IO_READ)
            write_apply(l2, io);
    }
    if (l2 && io->op != TGT_IO_READ) {
        struct l2_write *w = &l2->wlog[io->l2_gen % L2_WRITE_LOG];

        l2->wgen++;
        l2->writes_busy--;
        if (w->seq == io->l2_gen)
            w->end_gen = l2->wgen;
    }
    drop_pages(io);
    io->cb(io, err);
}

static void submit(struct tgt_io *io)
{
    struct tgt_l2 *l2 = io->lun->srv->l2;

    io->fd = -1;
    if (io->op == TGT_IO_FLUSH || io->len == 0 || (!l2 && !io->lun->direct)) {
        io->lun->ops->submit(io->lun, io);
        return;
    }
    if (l2 && io->op == TGT_IO_READ && read_hit(l2, io)) {
        io->done = io->len;
        io->cb(io, 0);
        return;
    }
    io->l2_gen = l2 ? l2->wgen : 0;
    if (l2 && io->op != TGT_IO_READ) {
        l2->wgen++;
        l2->writes_busy++;
        io->l2_gen = ++l2->wseq;        /* a write's: its place in wlog */
        l2->wlog[io->l2_gen % L2_WRITE_LOG] = (struct l2_write){
            .seq = io->l2_gen, .lun = io->lun->index, .off = io->off, .len = io->len,
            .start_gen = l2->wgen };
    }
    io->l2_cb = io->cb;
    io->cb = l2_io_done;
    io->lun->ops->submit(io->lun, io);
}

void tgt_io_submit(struct tgt_io *io)
{
    submit(io);
}

uint64_t tgt_l2_gen(const struct tgt_server *srv)
{
    return srv->l2 ? srv->l2->wgen : 0;
}

uint32_t tgt_l2_demote(struct tgt_lun *lun, uint64_t off, const uint8_t *buf, size_t len,
                       uint64_t gen)
{
    struct tgt_l2 *l2 = lun->srv->l2;
    uint64_t first = (off + L2_BS - 1) / L2_BS, end = (off + len) / L2_BS;
    uint32_t kept = 0;

    if (!l2)
        return 0;
    if (write_raced(l2, lun->index, off, len, gen)) {
        l2->demotes_raced++;
        return 0;
    }
    for (uint64_t b = first; b < end; b++) {
        uint64_t key = cache_key((uint32_t)lun->index, b);
        struct cache_victim v = { 0 };

        kept += (uint32_t)cache_demote(&l2->c, key, &v);
        slot_sync(l2, key, &v, buf + (b * L2_BS - off));
    }
    return kept;
}

int tgt_l2_takes_demotes(const struct tgt_server *srv)
{
    const char *name = srv->l2 ? srv->l2->c.ops->name : "";

    return strcmp(name, "demote") == 0 || strcmp(name, "demote-mq") == 0;
}

/* ---- options ---- */

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -EINVAL;
}

int tgt_cache_l2_parse(const char *arg, uint64_t *out_bytes, char *err, size_t errlen)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t half = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page / 2 : UINT64_MAX;
    uint64_t v;
    int rc = size_parse(arg, &v);

    if (rc < 0)
        return fail(err, errlen, "--cache-l2: '%s' is not a size (" SIZE_RULE ")", arg);
    if (v % L2_BS)
        return fail(err, errlen, "--cache-l2: %s is not a whole number of 64 KiB blocks", arg);
    if (v > half || v / L2_BS >= (1ull << 31))
        return fail(err, errlen, "--cache-l2: %s is more than half of this machine's memory "
                    "(%llu MiB)", arg, (unsigned long long)(half >> 20));
    *out_bytes = v;
    return 0;
}

int tgt_cache_l2_policy_check(const char *name, char *err, size_t errlen)
{
    if (cache_policy_find(name))
        return 0;
    return fail(err, errlen, "--cache-l2-policy: '%s' is none of lru, demote, mq, demote-mq",
                name);
}

/* ---- life cycle ---- */

int tgt_l2_create(struct tgt_server *srv, uint64_t bytes, const char *policy)
{
    const struct cache_ops *ops = cache_policy_find(policy ? policy : TGT_L2_DEFAULT_POLICY);
    uint64_t cap = bytes / L2_BS;
    struct tgt_l2 *l2;
    int rc;

    if (!ops || cap == 0 || cap >= (1ull << 31) || bytes % L2_BS) {
        log_error("target: --cache-l2 %llu bytes, policy %s: want whole 64 KiB blocks and one "
                  "of lru, demote, mq, demote-mq", (unsigned long long)bytes,
                  policy ? policy : "(default)");
        return -EINVAL;
    }
    l2 = calloc(1, sizeof(*l2));
    if (!l2)
        return -ENOMEM;
    rc = cache_init(&l2->c, ops, cap);
    if (rc < 0)
        goto undo_alloc;
    rc = -ENOMEM;
    l2->data = mmap(NULL, cap * L2_BS, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (l2->data == MAP_FAILED)
        goto undo_cache;
    l2->free = malloc(cap * sizeof(*l2->free));
    if (!l2->free || u64map_reserve(&l2->slots, cap) < 0)
        goto undo_slots;
    for (uint64_t i = 0; i < cap; i++)
        l2->free[i] = (uint32_t)(cap - 1 - i);
    l2->nfree = (uint32_t)cap;
    srv->l2 = l2;
    log_info("target: L2 cache of %llu MiB (%llu blocks of 64 KiB), policy %s",
             (unsigned long long)(bytes >> 20), (unsigned long long)cap, ops->name);
    return 0;
undo_slots:
    u64map_free(&l2->slots);
    free(l2->free);
    munmap(l2->data, cap * L2_BS);
undo_cache:
    cache_fini(&l2->c);
undo_alloc:
    free(l2);
    log_error("target: cannot set up the L2 cache of %llu bytes: %s",
              (unsigned long long)bytes, strerror(-rc));
    return rc;
}

void tgt_l2_stats(const struct tgt_server *srv, struct tgt_stats *out)
{
    const struct tgt_l2 *l2 = srv->l2;

    if (!l2)
        return;
    out->l2_capacity = l2->c.capacity;
    out->l2_resident = l2->c.resident;
    out->l2_hits = l2->c.stats.hits;
    out->l2_misses = l2->c.stats.misses;
    out->l2_dropped = l2->c.stats.dropped;
    out->l2_demotes = l2->c.stats.demotes_kept;
    out->l2_evictions = l2->c.stats.evictions;
}

void tgt_l2_destroy(struct tgt_server *srv)
{
    struct tgt_l2 *l2 = srv->l2;

    if (!l2)
        return;
    log_info("target: L2 cache %s: %llu hits, %llu misses, %llu dropped (DPO), %llu demoted, "
             "%llu evicted, %llu partial blocks not cached, %llu demotes raced a write",
             l2->c.ops->name,
             (unsigned long long)l2->c.stats.hits, (unsigned long long)l2->c.stats.misses,
             (unsigned long long)l2->c.stats.dropped,
             (unsigned long long)l2->c.stats.demotes_kept,
             (unsigned long long)l2->c.stats.evictions, (unsigned long long)l2->partial,
             (unsigned long long)l2->demotes_raced);
    munmap(l2->data, l2->c.capacity * L2_BS);
    cache_fini(&l2->c);
    u64map_free(&l2->slots);
    free(l2->free);
    free(l2);
    srv->l2 = NULL;
}
