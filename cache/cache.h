/* cache/: uCache, the two-level block cache of the iPVFS journal paper
 * (section 3: LRU in the I/O node, L1; an exclusive policy in its targets,
 * L2), as pure policy code: no I/O, no sockets, no clocks.  The live I/O
 * node and targets and the simulator ipvfs-cachesim link this same code.
 *
 * Blocks are CACHE_BLOCK_SIZE (64 KiB, the stripe unit) and named by a
 * 64-bit key, cache_key(object, block): the object is a datafile or a
 * volume, the block its 64 KiB block number.  One struct cache is one
 * level of one node (an I/O node's L1, one target's L2); which node a
 * block belongs to is the caller's business (striping, common/layout.h).
 *
 * Policies sit behind one operations table, struct cache_ops:
 *   "lru"     LRU.  The paper's L1, and the inclusive L2 baseline: a read
 *             from above is kept (the target's page cache does that),
 *             offers of clean evicted blocks are ignored.
 *   "demote"  Exclusive L2 (Wong and Wilkes, "My Cache or Yours? Making
 *             Storage more Exclusive", USENIX ATC 2002): a read marked
 *             CACHE_DPO ("do not retain", SBC's DPO bit) that hits gives
 *             the block up to L1 and drops it here, a miss is not kept;
 *             a clean block L1 evicts is demoted into L2 at its MRU end.
 *   "mq"      Multi-Queue (Zhou, Philbin and Li, "The Multi-Queue
 *             Replacement Algorithm for Second Level Buffer Caches",
 *             USENIX ATC 2001), inclusive: CACHE_MQ_QUEUES LRU queues by
 *             access frequency (queue floor(log2 f)), a block not accessed
 *             for CACHE_MQ_LIFETIME x capacity accesses falls one queue, and
 *             a history queue (Qout, as many entries as the cache has
 *             blocks) remembers the frequency of evicted blocks.
 *   "demote-mq"  Exclusive like "demote" (the same DPO reads and
 *             demotes), replacing like "mq": L2 learns a block's frequency
 *             from L1's misses (its history, 4 entries per cache block,
 *             keeps it while the block is up in L1), and admits a block
 *             offered down only if its queue is at least that of the block
 *             it would push out.  Our combination of the two papers above,
 *             in the spirit of the paper's frequency-based FBER.
 * The paper's own L2 policy, FBER (Ou et al., MASCOTS 2005), is not
 * described in the journal paper well enough to rebuild; not here.
 *
 * Every operation is O(1): a u64map from key to entry, intrusive doubly
 * linked lists of entry indices (MQ also looks at the head of each of its 8
 * queues per access).  All memory is allocated by cache_init(): entries
 * for capacity blocks (plus as many history entries for MQ) and a map
 * reserved for all of them, so no operation allocates or fails.
 * Metadata per cached block: CACHE_ENTRY_BYTES for the entry plus at most
 * 2 x 4/3 x 17 bytes of map slots (the table is the power of two above
 * 4/3 of the entries), 32 + 46 = 78 bytes at worst (0.12% of 64 KiB);
 * MQ doubles it for its history, DEMOTE-MQ multiplies it by 5.  The block data are the caller's.
 *
 * Contract of the operations (what the caller of a level does):
 *   access(c, key, flags, out)   a read, or with CACHE_DIRTY a write of the
 *       block at this level.  Returns 1 on a hit, 0 on a miss.  Whether a
 *       miss (and a hit) stays cached is the policy's: LRU and MQ keep
 *       both; DEMOTE with CACHE_DPO keeps neither.  A block that had to go
 *       to make room is reported in *out (out->valid).
 *   store(c, key, out)   a block written down from the level above (a
 *       write-back or write-through: the data come with it, so this is no
 *       hit or miss).  Every policy keeps it (clean: data below it are as
 *       durable as the level below makes them), but DEMOTE-MQ only when
 *       admitted as for a demote.
 *   demote(c, key, out)  a clean block the level above evicted is offered.
 *       Returns 1 if kept (DEMOTE; DEMOTE-MQ when admitted), 0 if ignored
 *       (LRU, MQ: the data need not even be sent).
 * out->valid = 0 when nothing was evicted.  At most one block is evicted
 * per operation.  Dirty state is tracked per block: CACHE_DIRTY on access
 * sets it, cache_set_clean() clears it (after a flush), and an evicted
 * dirty block comes out with out->dirty = 1 (the caller must write it
 * down). */
#ifndef IPVFS_CACHE_H
#define IPVFS_CACHE_H

#include <stdint.h>

#include "common/u64map.h"

#define CACHE_BLOCK_SIZE (64u << 10)
#define CACHE_BLOCK_SHIFT 16
/* Keys pack an object number below 2^24 and a block number below 2^40. */
#define CACHE_OBJECT_BITS 24
#define CACHE_BLOCK_BITS 40
#define CACHE_MQ_QUEUES 8
#define CACHE_MQ_LIFETIME 2
/* Bytes of one entry (checked by a static assertion in core.c). */
#define CACHE_ENTRY_BYTES 32
/* Lists an entry can be on: the MQ queues, MQ's history, the free list. */
#define CACHE_NLISTS (CACHE_MQ_QUEUES + 2)

/* access() flags */
#define CACHE_DIRTY 1u  /* a write: the block now differs from the level below */
#define CACHE_DPO 2u    /* a read that the level need not retain (SBC DPO) */

struct cache;

struct cache_victim {
    int valid;          /* 1 when a block was evicted */
    int dirty;          /* it was dirty: the caller writes it down */
    uint64_t key;
};

struct cache_ops {
    const char *name;
    unsigned history;   /* history entries kept per cache block (MQ: 1) */
    int (*access)(struct cache *c, uint64_t key, unsigned flags, struct cache_victim *out);
    void (*store)(struct cache *c, uint64_t key, struct cache_victim *out);
    int (*demote)(struct cache *c, uint64_t key, struct cache_victim *out);
};

/* Per-level counters (reads and writes through access(); stores; demotes). */
struct cache_stats {
    uint64_t hits, misses;          /* access() */
    uint64_t stores;                /* store() */
    uint64_t demotes_kept, demotes_ignored;
    uint64_t dropped;               /* DPO hits dropped (DEMOTE) */
    uint64_t evictions, dirty_evictions;
};

/* An intrusive list of entries, by index; CACHE_NIL ends it. */
#define CACHE_NIL UINT32_MAX
struct cache_list {
    uint32_t head, tail;            /* head: least recently used */
    uint64_t len;
};

/* One entry.  list is the list it is on (for MQ: its queue or history). */
struct cache_ent {
    uint64_t key;
    uint64_t expire;                /* MQ: access count when it falls a queue */
    uint32_t prev, next;
    uint32_t freq;                  /* MQ: accesses seen (kept in history) */
    uint8_t list;
    uint8_t dirty;
    uint16_t pad;
};

/* One cache level of one node.  Fields are for the policy files; callers
 * use the functions below and read stats, capacity and resident. */
struct cache {
    const struct cache_ops *ops;
    uint64_t capacity;              /* blocks */
    uint64_t resident;              /* blocks cached now */
    uint64_t clock;                 /* accesses so far (MQ's time) */
    uint32_t nents;                 /* capacity (+ history for MQ) */
    struct cache_ent *ents;
    struct cache_list lists[CACHE_NLISTS];
    struct u64map map;              /* key -> entry index */
    struct cache_stats stats;
};

/* The policy named name ("lru", "demote", "mq"), or NULL. */
const struct cache_ops *cache_policy_find(const char *name);
/* Names of all policies, NULL-terminated, in a fixed order. */
extern const char *const cache_policy_names[];

static inline uint64_t cache_key(uint32_t object, uint64_t block)
{
    return ((uint64_t)object << CACHE_BLOCK_BITS) | (block & ((1ull << CACHE_BLOCK_BITS) - 1));
}

/* Sets up c for ops over capacity blocks (> 0, below 2^31).  0, -EINVAL
 * for a bad capacity, -ENOMEM. */
int cache_init(struct cache *c, const struct cache_ops *ops, uint64_t capacity);
void cache_fini(struct cache *c);

/* Through the ops table (see the contract above). */
int cache_access(struct cache *c, uint64_t key, unsigned flags, struct cache_victim *out);
void cache_store(struct cache *c, uint64_t key, struct cache_victim *out);
int cache_demote(struct cache *c, uint64_t key, struct cache_victim *out);

/* 1 if key is cached (not merely remembered in MQ's history); touches
 * nothing. */
int cache_contains(const struct cache *c, uint64_t key);
/* 1 if key is cached and dirty. */
int cache_is_dirty(const struct cache *c, uint64_t key);
/* The keys of an "lru" cache's n least recently used blocks, its next
 * victims, oldest first, into keys; returns how many it holds of them
 * (fewer than n when it holds fewer blocks).  Touches nothing. */
uint32_t cache_lru_oldest(const struct cache *c, uint32_t n, uint64_t *keys);
/* Marks a cached block clean (its data reached the level below). */
void cache_set_clean(struct cache *c, uint64_t key);
/* Forgets key (invalidation); its dirty data, if any, are the caller's. */
void cache_remove(struct cache *c, uint64_t key);

/* Admission of the fills a small read's miss would start (the I/O node's
 * L1 fills whole 64 KiB blocks; a 4 KiB read that misses would move 16
 * times its bytes, and push a block out for one that may never be read
 * again).  Two rules, both pure and deterministic, so the live L1 and
 * its replay (tools/cachesim/live.c) decide alike:
 *   reuse  the ghost queue of 2Q (Johnson and Shasha, "2Q: A Low Overhead
 *          High Performance Buffer Management Replacement Algorithm",
 *          VLDB 1994): a key's first miss is refused and remembered (its
 *          read goes to the level below for just its bytes); a miss of a
 *          key remembered may fill.  The last cap refusals are
 *          remembered, FIFO.
 *   yield  fills must pay: the hits served by blocks such fills brought
 *          are counted per epoch of CACHE_ADMIT_EPOCH fills; when an
 *          epoch's hits were fewer than CACHE_ADMIT_YIELD per fill, the
 *          next epoch fills only every CACHE_ADMIT_SAMPLE-th miss the
 *          reuse rule passes (the rest are remembered again), which keeps
 *          the yield measured; an epoch at the yield opens the gate.
 * Why 4 hits, measured on the development host (2 x 2 RAID-0 on tmpfs,
 * 4 ranks reading a file per process of twice the L1's size in 4 KiB
 * pieces at random places, benchmarks/transport.sh's rand case): filling
 * every miss got 1.35 hits per fill and a p99 latency 1.4x that with no
 * L1; admission on reuse alone 1.35 hits, p99 1.2x; with a yield of 2,
 * 4.4 hits per fill and 1.15x; with 4, 6.8 hits, 4% of the reads filling,
 * 1.05-1.13x at 1.05-1.1x the reads per second and the same hit ratio
 * (a third); 8 measured no better than 4.  Answering the read first and
 * filling after it (off the read's path) measured the same: the fills
 * cost through the CPU they take, not through the reader's wait.
 * Memory: cap x (8 bytes of ring + at most 2 x 4/3 x 17 bytes of map),
 * all taken by cache_admit_init; no operation allocates or fails. */
#define CACHE_ADMIT_EPOCH 256u
#define CACHE_ADMIT_YIELD 4u
#define CACHE_ADMIT_SAMPLE 16u

struct cache_admit {
    uint32_t cap;                   /* refusals remembered at most */
    uint64_t seq;                   /* refusals so far */
    uint64_t *ring;                 /* [cap]: key of refusal seq at seq % cap */
    struct u64map map;              /* key -> seq of its latest refusal */
    uint32_t epoch_fills, epoch_hits;
    int shut;                       /* the last epoch fell short of the yield */
    uint64_t sample;                /* misses the reuse rule passed while shut */
    /* counters */
    uint64_t fills, fill_hits;      /* cache_admit_filled, cache_admit_hit */
    uint64_t refused, gated;        /* by the reuse rule, by the yield rule */
};

/* Sets up a for cap keys (> 0).  0, -EINVAL, -ENOMEM. */
int cache_admit_init(struct cache_admit *a, uint32_t cap);
void cache_admit_fini(struct cache_admit *a);
/* A small read missed key: 1 when it may fill the block (the caller then
 * calls cache_admit_filled if it did), 0 when it reads past the level. */
int cache_admit(struct cache_admit *a, uint64_t key);
/* A fill cache_admit allowed was started. */
void cache_admit_filled(struct cache_admit *a);
/* A read hit a block that such a fill brought. */
void cache_admit_hit(struct cache_admit *a);

/* Sector maps: which sectors of one cached block hold a given property
 * (the I/O node's L1 keeps two per block, valid and dirty, and its replay
 * in tools/cachesim/live.c the same).  A block is CACHE_BLOCK_SIZE bytes
 * of 512-byte sectors at the finest (CACHE_SECTORS_MAX of them); a level
 * whose sectors are larger (a volume of 4 KiB blocks) uses the first
 * CACHE_BLOCK_SIZE / size bits.  Ranges are of sectors, [lo, hi), with
 * lo <= hi <= CACHE_SECTORS_MAX; pure bit arithmetic, no allocation. */
#define CACHE_SECTORS_MAX (CACHE_BLOCK_SIZE / 512u)

struct cache_smap {
    uint64_t w[CACHE_SECTORS_MAX / 64];
};

void cache_smap_set(struct cache_smap *m, uint32_t lo, uint32_t hi);
void cache_smap_clear(struct cache_smap *m, uint32_t lo, uint32_t hi);
/* Nonzero when every sector of [lo, hi) is set (an empty range: 1). */
int cache_smap_all(const struct cache_smap *m, uint32_t lo, uint32_t hi);
/* Nonzero when some sector of [lo, hi) is set. */
int cache_smap_any(const struct cache_smap *m, uint32_t lo, uint32_t hi);
/* Clears in m the sectors set in other. */
void cache_smap_andnot(struct cache_smap *m, const struct cache_smap *other);
/* The first run of set sectors that starts at or after from and ends
 * before n: 1 and [*lo, *hi), or 0 when none. */
int cache_smap_next_run(const struct cache_smap *m, uint32_t n, uint32_t from, uint32_t *lo,
                        uint32_t *hi);

/* The I/O node's L1 rules on its blocks' sectors (backend/dfstore/
 * l1cache.h, "Writes"), shared with its replay.  Sectors are sect bytes;
 * in and n are bytes of one block (in + n at most its size).
 * cache_sect_fits: whether a write of [in, in + n) into a block whose
 * holes are *holes (NULL: a block not cached, all holes) leaves no sector
 * written in part that is a hole. */
int cache_sect_fits(const struct cache_smap *holes, uint32_t sect, uint64_t in, uint64_t n);
/* A write of [in, in + n): the sectors it covers whole are no holes;
 * dirty: every sector it touches that is no hole is dirty. */
void cache_sect_write(struct cache_smap *holes, struct cache_smap *dmap, uint32_t sect,
                      uint64_t in, uint64_t n, int dirty);
/* A read of [in, in + n): a hit (no hole), around the cache (holes, none
 * dirty: the volume holds it all), or a merge (holes and dirty sectors). */
enum cache_sect_read { CACHE_READ_HIT, CACHE_READ_AROUND, CACHE_READ_MERGE };
enum cache_sect_read cache_sect_read(const struct cache_smap *holes,
                                     const struct cache_smap *dmap, uint32_t sect, uint64_t in,
                                     uint64_t n);
/* The volume writes of a write-back of n adjacent blocks whose dirty
 * sectors are *dmaps[i]: byte ranges from the first block's start, each a
 * run of adjacent dirty sectors (across blocks), in order, into runs[0..
 * max); their count, UINT32_MAX when more than max. */
struct cache_run {
    uint64_t start, end;
};
uint32_t cache_sect_runs(const struct cache_smap *const *dmaps, uint32_t n, uint32_t nsect,
                         uint32_t sect, struct cache_run *runs, uint32_t max);
/* Joins runs[0..nruns) (cache_sect_runs's, of the same n blocks) across
 * each gap of at most bridge bytes whose sectors all hold the volume's
 * bytes (no hole in *holes[i]): one write of the run, the gap's clean
 * bytes written again along, instead of two (issue 27: a rewrite of 8 KiB
 * rows that interleave with another writer's went back as four 8 KiB
 * writes per block, where one write of 56 KiB does).  Returns the new
 * count; bridge 0 joins nothing. */
#define CACHE_WB_BRIDGE CACHE_BLOCK_SIZE   /* the L1's bridge (l1writeback.c) */
uint32_t cache_sect_bridge(struct cache_run *runs, uint32_t nruns,
                           const struct cache_smap *const *holes, uint32_t n, uint32_t sect,
                           uint64_t bridge);

#endif
