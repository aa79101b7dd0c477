/* The I/O node's L1 cache (uCache's L1, the journal paper's section 3): the
 * store's volume blocks (DFSTORE_BLOCK, 64 KiB) kept in memory, LRU
 * (cache/cache.h's "lru" policy), write-back, in front of the iRAID
 * volume.  io.c sends every volume read and write of the store through
 * df_l1_readv/writev and commit.c its flushes through df_l1_flush; they
 * have iraid_readv/writev/flush's contract (iraid/volume.h: 0 and cb
 * exactly once later from the loop, or a negative errno and no cb).
 *
 * Reads within one block: a hit is copied out (completion deferred on the
 * loop); a miss reads the whole block in (a fill) and copies from it when
 * cache/cache.h's admission lets it (the block was missed before, not
 * long ago, and such fills have been paying for themselves in hits),
 * else reads just its bytes past the L1 (a bypass).
 * Writes: the rule (issue 27) is that the L1 never costs a write more
 * volume I/O than no cache would.  A block is tracked in sectors (the
 * volume's block size, 512 bytes or more; l1->sect): per slot a map of
 * holes (sectors whose bytes the slot lacks) and of dirty sectors (bytes
 * the volume lacks).  A write is absorbed when every block it touches is
 * cached (not being filled), or not cached with a free slot for it: the
 * bytes go into the slots, their sectors become valid and dirty, and the
 * write completes from the loop without volume I/O.  A block is never
 * read in to absorb part of it: a write of part of an uncached block
 * takes a slot whose other sectors are holes.  Only a write that would
 * leave part of a sector a hole (not sector-aligned, its edge sector not
 * cached) goes around, as do writes the L1 cannot place (a block being
 * filled, no slot), and those the store marks `through`: those into
 * blocks it has just allocated, whose first write may find the target's
 * backing store full (a thin LUN): their ENOSPC reaches the writer, and
 * the store gives the blocks back, as without the cache; absorbed, the
 * error would come at the next sync and the blocks, mapped, would fail
 * every write-back.  The store marks them so only when the volume does
 * not vouch for the room (iraid_room_for_new_blocks).  A write that goes
 * around updates the cached blocks it touches (their dirty sectors stay
 * dirty).  A write's read of the old edge sectors it keeps (DF_L1_OLD)
 * no longer fills the block: it is read around when not cached, and the
 * write is then absorbed into holes.
 * Reads of a block with holes: a hit when every sector read is valid;
 * else, when no sector read is dirty, the bytes come from the volume (it
 * holds them); else the whole block is read into a buffer and its holes
 * filled from it (the dirty sectors stay the slot's), then the read is
 * served (a merge; when the slot was freed meanwhile, its write-back done,
 * the read goes to the volume).  A block with holes is never demoted to
 * the L2 (its bytes are not whole).
 * Write-back writes dirty sectors, each run of adjacent dirty sectors of
 * adjacent blocks in one volume write: a block all dirty, and a run of
 * such, is written whole as before, so RAID-5 parity still sees whole
 * stripes where the data make them (write-behind waits for a unit dirty
 * in every sector); a half-written block costs one write of its half,
 * what the write would have cost without the cache, and two halves
 * written by two clients go out as one write.  Two runs whose gap is at
 * most a block (CACHE_WB_BRIDGE) of cached clean sectors (no holes) go
 * out as one write, the gap's bytes, which the volume holds already,
 * written again along (cache_sect_bridge): one writer's rewrite of rows
 * that interleave with another's (8 KiB rows, 8 KiB apart) cost a write
 * per row, four a block, with or without the cache; bridged it is one
 * write for a run of blocks.  Holes are never bridged (the slot lacks
 * their bytes).
 *
 * Write-back: a dirty block reaches the volume when it is evicted, when
 * df_l1_flush runs (the store's commit rounds: every sync, within about a
 * second of a write that changed the block map, DF_COMMIT_MS, else once
 * a dirty block is L1_AGE_MS old: df_l1_dirty_young), and when more than 3/4 of
 * the cache is dirty (high watermark), and at once when an absorbed write
 * leaves a whole unit dirty (write-behind: unit_blocks, the largest
 * multiple of the volume's stripe, data only, within L1_RUN_BLOCKS, so a
 * RAID-5 stream goes out as whole stripes while the writer goes on,
 * instead of all at its sync).  Write-backs are gathered: dirty
 * blocks sorted by volume offset go out in runs of adjacent blocks (up to
 * L1_RUN_BLOCKS), so a RAID-5 volume sees whole stripes (no reads of old
 * data or parity).  df_l1_flush completes when every write completed
 * before it reached the volume, then the volume flush: durability is what
 * it was without the cache (a sync returns when its data are durable on
 * the targets); acknowledged writes not yet synced are lost if the I/O
 * node dies, as the sync contract allows.
 *
 * Ordering: one write-back per block at a time, from a copy of the slots
 * (RAID-5 computes parity from the buffer it writes, which must not change
 * meanwhile); a write to a block whose write-back is in flight lands in
 * the slot and makes it dirty again (latest_seq), so the completion leaves
 * it dirty and a later write-back carries the new bytes.  A write that
 * goes to the volume while a write-back of its block is in flight comes
 * after it: iRAID runs the writes of one stripe in order.  Every write
 * into a slot has a sequence number; a flush round started at sequence S
 * waits until each block dirty then has durable_seq >= S or is clean.  The store runs one operation per
 * datafile at a time and a block belongs to one datafile, so no read of a
 * block runs while its write does.
 *
 * Slots (capacity + capacity/8 spare + 4, one 64 KiB buffer each,
 * allocated by df_l1_init):
 *   FREE -> FILLING (a fill in flight) -> VALID
 *   FILLING -> ORPHAN (evicted meanwhile) or STALE (written meanwhile,
 *       or failed) -> FREE when the fill completes
 *   VALID (dirty) -> EVICTING (evicted by the policy while dirty: still
 *       mapped and readable, its write-back in flight) -> FREE once clean
 * A miss or a write that finds no free slot (the spares all evicting)
 * bypasses the cache.
 *
 * Memory: slots x (64 KiB + 100 bytes of state and map) + the policy's 78
 * bytes and the admission's 54 per block at most, plus a context per request in flight, the
 * copies of the write-backs in flight (at most the dirty blocks) and
 * L1_SPARE_COPIES runs kept for them (16 MiB).
 *
 * Read-ahead (df_l1_set_readahead, df_l1_prefetch in l1prefetch.c; the
 * stream detection is readahead.h's): prefetched blocks are L1 slots outside the LRU
 * policy until a read uses them, so a block nobody reads never pushes a
 * hot or dirty one out.  The pool takes ra_cap blocks of the L1's own
 * capacity (the policy keeps capacity - ra_cap), so --cache-l1 still
 * bounds the memory.  A prefetched slot (ra set) is
 *   FILLING (its volume read in flight, at most L1_RA_INFLIGHT blocks per
 *       volume) -> VALID, unread, on the pool's FIFO
 *   VALID unread -> the policy's MRU end when a read uses it (a
 *       readahead hit), FREE when a stream's read (df_l1_readv) uses it
 *       to its last byte (a hit too, and drop-behind: the stream reads it
 *       once, and keeping it would only push out another block and later
 *       DEMOTE this one: a 1 MiB stream's blocks went back to the targets
 *       as 64 KiB DEMOTEs as fast as they came), or LENT instead when
 *       that read is of the whole block and asked for loans (below), or
 *       FREE when dropped unread (readahead_wasted:
 *       the oldest one, unread for L1_RA_STALE_MS, gives way to a new
 *       prefetch when the pool is full; a write to it; a discard)
 *   FILLING -> ORPHAN/STALE as any fill (dropped or written meanwhile);
 *       -> LENT when its fill completes and its one waiting read is such
 *       a stream read (l1_waiter_lend)
 *   LENT (out of the map, the pool and the policy) -> FREE when the loan
 *       is given back (df_l1_loans_return).
 * A write into a prefetched block drops it before anything else (writes
 * only ever update policy blocks).  With read-ahead set up, a read that
 * finds its block FILLING (a prefetch or another read's fill) waits for
 * that fill instead of reading the volume again; the fill's completion
 * copies the bytes to each waiter (or, when the fill failed or the block
 * was written meanwhile, sends the waiter's read to the volume).  A
 * write never runs while a read of its block waits (the store runs one
 * operation per datafile, reads only beside reads), so the waiter's bytes
 * are the block's current ones. */
#ifndef IPVFS_DFSTORE_L1CACHE_H
#define IPVFS_DFSTORE_L1CACHE_H

#include <stdint.h>
#include <stdio.h>
#include <sys/uio.h>

#include "cache/cache.h"
#include "common/evloop.h"
#include "common/u64map.h"
#include "iraid/volume.h"

/* A read or write of this many bytes or more is a stream (df_l1_readv,
 * df_l1_writev): two blocks, what a server gets of a 256 KiB MPI call
 * over two I/O nodes. */
#define DF_L1_STREAM_MIN (128u << 10)
/* Blocks in one gathered write-back (and in one prefetch read). */
#define L1_RUN_BLOCKS 32
/* Prefetched blocks in flight per volume at most (1 MiB, as many as
 * L1_RQ_DEPTH reads past the cache of a block each): the rest of a window
 * is asked for by the stream's next read.  With 8 MiB, 2 x 2 tiles of
 * 1 MiB rows on one host spent 3.7 times the I/O node's CPU receiving the
 * targets' data (copies from socket buffers that no longer sat in the
 * processor's cache) and read slower than --cache-l1 0 (issue 27). */
#define L1_RA_INFLIGHT 16u
/* A full pool's oldest unread block gives way to a new prefetch only once
 * it waited this long (its reader is gone, or seeked): younger ones are
 * other streams' next blocks, and dropping them would only waste reads. */
#define L1_RA_STALE_MS 1000u
/* Reads past the cache in flight per volume at most before more wait to
 * be coalesced (l1coalesce.c), and the most one coalesced read carries. */
#define L1_RQ_DEPTH 16u
#define L1_RQ_MAX_BYTES (1u << 20)
#define L1_RQ_MAX_IOV 256
/* Clean blocks one absorbed write of a stream's small piece may evict at
 * most (df_l1_writev; a piece under half a block touches one or two). */
#define L1_ABSORB_EVICT 4u
/* Copy buffers of whole runs kept for the next write-back (a fresh 2 MiB
 * buffer costs 512 page faults and their zeroing each time). */
#define L1_SPARE_COPIES 8

struct df_l1_stats {
    uint64_t capacity;          /* blocks; 0 = off */
    uint64_t resident;          /* blocks cached now */
    uint64_t dirty;             /* blocks dirty now */
    uint64_t hits, misses;      /* reads within one block */
    uint64_t bypasses;          /* reads not cached (spanning, no slot, no memory) */
    uint64_t evictions;
    uint64_t write_updates;     /* cached blocks a write updated or added */
    uint64_t writes_absorbed;   /* writes completed without volume I/O */
    uint64_t writebacks;        /* blocks written back */
    uint64_t writeback_ios;     /* volume writes that carried them */
    uint64_t flushes;           /* flush rounds */
    uint64_t demotes;           /* clean evictions handed to the targets' L2
                                 * (iraid_demote) */
    uint64_t readahead_blocks;  /* blocks prefetched (volume reads issued) */
    uint64_t readahead_hits;    /* of them, used by a read */
    uint64_t readahead_wasted;  /* of them, dropped unread */
    uint64_t readahead_lent;    /* of the hits, slots lent to the reader */
};

struct l1_slot {
    uint64_t vb;                /* volume block */
    uint64_t latest_seq;        /* of the last write into it */
    uint64_t durable_seq;       /* covered by a completed write-back */
    uint64_t dirty_ms;          /* when it last became dirty (evloop_now_ms) */
    uint8_t state;
    uint8_t dirty;
    uint8_t wb;                 /* a write-back in flight */
    uint8_t in_round;           /* counted by the running flush round */
    uint8_t ra;                 /* prefetched, unread: in the pool, not the policy */
    uint8_t admitted;           /* filled by a small read's miss (cache_admit) */
    uint32_t ra_prev, ra_next;  /* the pool's FIFO (UINT32_MAX ends it) */
    uint64_t ra_ms;             /* when it was prefetched (CLOCK_MONOTONIC) */
    uint32_t gen;               /* counts the slot's allocations: a merge read
                                 * finds out whether it still holds its block */
    struct cache_smap holes;    /* sectors whose bytes the slot lacks (none
                                 * once filled, or written whole) */
    struct cache_smap dmap;     /* dirty sectors (set only while dirty) */
};

struct l1_wait;                 /* a read waiting for a fill */

struct l1_flush;                /* a waiting df_l1_flush */

/* Loans (zero-copy stream reads).  A stream's read of a whole prefetched
 * block (the read drops it anyway: drop-behind) may take the slot itself
 * instead of a copy of its bytes: the slot leaves the map at once (state
 * LENT: no write, eviction or discard can reach it), the read completes
 * with its destination untouched, and the caller sends the bytes from
 * the slot and gives it back (df_l1_loans_return), which frees it.  A
 * caller asks for loans by passing a struct df_l1_loans, zeroed, to
 * df_l1_readv; the L1 appends one loan per lent block; the caller owns
 * them from then on, also when its read fails.  At most L1_LEND_MAX of the
 * L1's slots are lent at a time (beyond, reads copy).  The slots' memory
 * belongs to a lender that outlives df_l1_fini while loans are out: a
 * loan given back after the store closed frees it with the last one. */
struct df_l1_lender;
struct df_l1_loan {
    uint8_t *dst;               /* where the read would have copied the block */
    const uint8_t *src;         /* the block's bytes (DFSTORE_BLOCK of them) */
    uint32_t slot;
};
struct df_l1_loans {
    struct df_l1_lender *lender;    /* set with the first loan */
    struct df_l1_loan *v;           /* malloc'd, n used of cap */
    uint32_t n, cap;
};
#define L1_LEND_MAX(l1) ((l1)->capacity / 8)
/* Gives every loan of loans back to its L1 (or frees the slots' memory
 * after the L1 closed) and empties loans.  Any thread state: none. */
void df_l1_loans_return(struct df_l1_loans *loans);
/* Copies each lent block to its dst, then gives the loans back: for a
 * caller that cannot send from the slots after all. */
void df_l1_loans_settle(struct df_l1_loans *loans);

struct df_l1 {
    struct evloop *loop;
    struct iraid_volume *vol;
    uint64_t capacity;          /* blocks; 0 = off */
    uint32_t unit_blocks;       /* write-behind unit (whole stripes); 0: none */
    uint32_t sect, nsect;       /* sector bytes (the volume's block size), per block */
    uint64_t stream_grain;      /* a stream's write that covers whole multiples
                                 * of it goes through (df_l1_writev); 0: none */
    uint32_t nslots;
    struct cache policy;
    struct cache_admit admit;   /* which small reads' misses fill */
    uint8_t *data;              /* nslots x DFSTORE_BLOCK (the lender's) */
    struct df_l1_lender *lender;    /* owns data; counts the slots lent */
    struct l1_slot *slots;
    uint32_t *free_slots;       /* stack */
    uint64_t nfree;
    struct u64map slot_of;      /* volume block -> slot (FILLING, VALID, EVICTING) */
    uint64_t wseq;              /* absorbed writes so far */
    uint64_t ndirty;
    int round_state;            /* IDLE, WRITING (write-backs), FLUSHING (the volume) */
    uint64_t round_seq;         /* the running round waits for writes up to this */
    uint64_t round_pending;     /* blocks it still waits for */
    int round_status;           /* its first error */
    struct l1_flush *round_waiters, *next_waiters;
    int watermark_pass;         /* a deferred write-back pass is queued */
    uint64_t inflight;          /* fills, write-backs, writes and deferred
                                 * completions not yet completed */
    /* read-ahead (ra_cap 0: off) */
    uint64_t ra_cap;            /* pool blocks (taken from capacity) */
    uint64_t ra_held;           /* prefetched unread blocks, filling ones too */
    uint64_t ra_inflight;       /* prefetched blocks being read */
    uint32_t ra_head, ra_tail;  /* FIFO, head oldest */
    struct l1_wait **waiters;   /* per slot: reads waiting for its fill */
    uint8_t *spare_copies[L1_SPARE_COPIES];  /* run-sized, free */
    uint32_t nspare_copies;
    struct df_l1_stats stats;
    /* reads past the cache (l1coalesce.c): waiting, oldest first, found by
     * where they start and end; in flight */
    struct l1_rq *rq_head, *rq_tail;
    struct u64map rq_at, rq_end;
    uint64_t rq_queued;
    uint32_t rq_inflight;
    struct {
        uint64_t volume_reads;  /* volume reads they went out in */
        uint64_t coalesced;     /* of the reads, those that rode along */
    } stats_rq;
    FILE *trace;                /* --trace: events for ipvfs-cachesim; NULL: none */
};

/* Sets up l1 over vol with bytes of cache (rounded down to blocks; 0 =
 * off, every call passes through).  0, -EINVAL (2^31 blocks or more),
 * -ENOMEM. */
int df_l1_init(struct df_l1 *l1, struct evloop *loop, struct iraid_volume *vol, uint64_t bytes);
/* Frees everything; nothing may be in flight and nothing dirty (a flush
 * completed after the last write). */
void df_l1_fini(struct df_l1 *l1);
/* how: DF_L1_STREAM, a part of a large read or write (DF_L1_STREAM_MIN
 * bytes or more): a block not cached is read from the volume straight
 * into iov, not filled into the L1 (a fill costs a copy out, and the
 * eviction of another block, a DEMOTE to the L2); cached blocks, read-
 * ahead's included, are hits.  DF_L1_OLD, a write's read of the old bytes
 * it keeps (read-modify-write): a miss reads just those bytes past the L1
 * (the write then lands in the L1 around them: "Writes" above).  Neither:
 * a plain read; a miss of less than a block fills only when cache/cache.h's
 * admission lets it. */
#define DF_L1_STREAM 1u
#define DF_L1_OLD 2u
/* loans: NULL, or where a stream's read of whole prefetched blocks takes
 * them without a copy (see "Loans" above). */
int df_l1_readv(struct df_l1 *l1, uint64_t off, const struct iovec *iov, int niov, unsigned how,
                struct df_l1_loans *loans, iraid_cb cb, void *user);
/* df_l1_writev's stream: part of a large write (the store's
 * DF_L1_STREAM_MIN bytes or more).  A volume write of it of half a block
 * or more, on a volume without parity (RAID-0, RAID-1), and on RAID-5 when
 * it covers whole stripes, goes through to the volume as a `through`
 * write does, and whole blocks it finds
 * uncached stay out of the L1: a stream's blocks are seldom read back
 * while cached, and taking them costs a copy in and a copy out for the
 * write-back, 20% of a 1 MiB stream's throughput on the 2-core
 * development host.  Cached blocks take its bytes as any write's.  Other
 * RAID-5 streams are absorbed as before: the L1 gathers them into whole
 * stripes (no reads of old data or parity).  A stream's volume write of
 * less than half a block (a tile's 8 KiB row, one of many pieces of one
 * large request) is absorbed as any small write (issue 27), while the
 * policy has room for its uncached blocks, or evicts only clean ones for
 * them (at most L1_ABSORB_EVICT a write, the policy's next victims, idle
 * and clean: forgetting them costs no volume I/O): written
 * through, the rows of two writers that interleave in a block cost the
 * targets a command each, four to eight a block (96-128 per MiB) with or
 * without the cache; absorbed, the rows meet in the slots and go back as
 * whole blocks in runs (2x2 tiles of 8 KiB rows: 8208 commands -> 80 for
 * 64 MiB written; first write 1.18x, rewrite 1.76x --cache-l1 0).  From
 * half a block up the copies in and out cost more than the commands
 * saved: 32 KiB rows absorbed wrote their first write 0.76x as fast as
 * --cache-l1 0 (3 of 3 rounds), 24 -> 1.3 commands per MiB.  And a cache
 * too small for the rows (3x3 tiles of 8 KiB rows, 72 MiB per I/O node
 * over a 64 MiB L1) evicted blocks whose rows were not all there yet:
 * first write 0.72x, though 122 -> 48 commands per MiB: a dirty victim
 * stops the absorbing.  Clean victims do not: with free room alone, the
 * same rows written after another file had filled the cache with clean
 * blocks were never absorbed (93.7 commands per MiB, 0.78x). */
int df_l1_writev(struct df_l1 *l1, uint64_t off, const struct iovec *iov, int niov, int through,
                 int stream, iraid_cb cb, void *user);
/* Writes back every block dirty now (gathered), then flushes the volume;
 * cb gets the first error. */
int df_l1_flush(struct df_l1 *l1, iraid_cb cb, void *user);
/* Volume block vb no longer holds anything of value (the store unmapped
 * it: a remove or truncate, freed at its commit): its cached bytes, dirty
 * ones too, are dropped, never written back.  A write-back of it already
 * in flight completes, but its failure no longer fails a flush.  Without
 * this, the dirty blocks of a file removed from a full disk would fail
 * every flush, the commit that frees them included. */
void df_l1_discard(struct df_l1 *l1, uint64_t vb);
void df_l1_get_stats(const struct df_l1 *l1, struct df_l1_stats *out);
/* --trace (the server's option): from now on every event that decides
 * what the cache holds is appended to trace as one line, in the volume
 * event format of ipvfs-cachesim (tools/cachesim/cachesim.h, trace
 * version 3), so that the simulator can replay this cache and the
 * targets' L2 below it exactly:
 *   R OFF LEN      df_l1_readv
 *   B OFF LEN      the same, a stream's (not filled on a miss: bypass)
 *   M OFF LEN      the same, a write's read of old bytes (DF_L1_OLD)
 *   W OFF LEN T    df_l1_writev, T 1 when `through`
 *   U OFF LEN T    the same, a stream that goes through (stream_grain),
 *                  whole blocks left uncached
 *   V SLOT OK      a fill into SLOT completed (OK 1) or failed (OK 0)
 *   S SLOT K       a write-back of SLOT's block started, the K-th block
 *                  (from 0) of one volume write of adjacent blocks
 *   C SLOT OK      that write-back completed (OK 1) or failed (OK 0)
 *   X OFF LEN      a write that went to the volume failed
 *   D VB           df_l1_discard
 *   P OFF LEN      reserved for read-ahead fills (not sent by this file)
 * Completions carry slot numbers: the replay allocates slots as this file
 * does, so a mismatch shows that it lost track.  The caller owns trace,
 * flushes it, and calls with NULL before closing it.  Writing ignores
 * errors (the caller checks ferror). */
void df_l1_set_trace(struct df_l1 *l1, FILE *trace);
/* Sets up read-ahead with a pool of up to max_blocks blocks, at most a
 * quarter of the L1 (taken from the policy's capacity).  Before the first
 * operation: -EBUSY once anything is cached or in flight, -EINVAL when
 * the L1 is off, -ENOMEM (read-ahead then stays off). */
int df_l1_set_readahead(struct df_l1 *l1, uint64_t max_blocks);
/* Prefetches the volume blocks vbs[0..n) (in the order given; a run of
 * adjacent ones goes out in one volume read) into the pool, skipping blocks already cached or
 * being filled.  Asynchronous, nothing to wait for: a read finds them.
 * Returns how many of vbs it dealt with (issued or skipped): less than n
 * when the in-flight bound or the pool (its oldest block still filling)
 * stops it; 0 when read-ahead is off. */
uint32_t df_l1_prefetch(struct df_l1 *l1, const uint64_t *vbs, uint32_t n);

/* ---- internals: the slots (l1_slot_find, l1_block_forget: l1pool.c; the
 * rest l1cache.c's), for l1prefetch.c and l1writeback.c ---- */

enum { SLOT_FREE, SLOT_FILLING, SLOT_VALID, SLOT_ORPHAN, SLOT_STALE, SLOT_EVICTING, SLOT_LENT };
static inline uint8_t *l1_slot_data(struct df_l1 *l1, uint32_t slot)
{
    return l1->data + (size_t)slot * CACHE_BLOCK_SIZE;
}
/* The slot of volume block vb (FILLING, VALID, EVICTING), or U64MAP_NONE. */
uint64_t l1_slot_find(const struct df_l1 *l1, uint64_t vb);
/* Takes a clean block out of the map, the policy and the pool; its slot
 * is freed, or, while a fill is in flight, left in state (ORPHAN or
 * STALE) for the fill's completion to free. */
void l1_block_forget(struct df_l1 *l1, uint64_t vb, uint8_t state);
/* A read uses prefetched slot: out of the pool, into the policy. */
void l1_ra_promote(struct df_l1 *l1, uint32_t slot);
/* A fill of slot completed: its waiting reads move onto list with the
 * bytes copied (valid) or to be read from the volume; l1_waiters_finish
 * then completes them (after the slot's own state changed). */
struct l1_wait *l1_waiters_copy(struct df_l1 *l1, uint32_t slot, int valid,
                                struct l1_wait *list);
void l1_waiters_finish(struct df_l1 *l1, struct l1_wait *list);

/* ---- internals: l1coalesce.c, the reads past the cache ---- */

struct l1_rq;
/* iraid_readv's contract; the read may wait to go out with its neighbours. */
int l1_vol_readv(struct df_l1 *l1, uint64_t off, const struct iovec *iov, int niov, iraid_cb cb,
                 void *user);
/* Sends waiting reads while fewer than L1_RQ_DEPTH are in flight. */
void l1_rq_pump(struct df_l1 *l1);

/* ---- internals: between l1cache.c and l1writeback.c (l1_trace: l1pool.c) ---- */

enum { ROUND_IDLE, ROUND_WRITING, ROUND_FLUSHING };
/* --trace's event (df_l1_set_trace); nothing when not tracing. */
__attribute__((format(printf, 2, 3)))
void l1_trace(struct df_l1 *l1, const char *fmt, ...);
/* Writes back slots[0..n) (adjacent volume blocks, each dirty, none with
 * a write-back in flight): their dirty sectors, each run of adjacent
 * ones in one volume write. */
void l1_wb_issue(struct df_l1 *l1, const uint32_t *slots, uint32_t n);
/* Writes back every dirty block without a write-back in flight, sorted
 * and gathered into runs of adjacent blocks. */
void l1_wb_pass(struct df_l1 *l1);
/* The running flush round flushes the volume once its blocks are done. */
void l1_round_check(struct df_l1 *l1);

/* ---- internals: l1pool.c, the leaf helpers of the other l1*.c ---- */

uint64_t l1_iov_len(const struct iovec *iov, int niov);
/* From vol's level, chunk and members: the write-behind unit in blocks
 * (its whole stripes, data only, in the largest run a write-back carries;
 * 0 when a stripe is no whole number of blocks or larger than a run) and
 * the stream grain (what a stream's write must cover whole to go past the
 * L1: 1 without parity, a stripe's data on RAID-5, whose parity then
 * comes from its own bytes).  Both 0 when the status is not known. */
void l1_volume_shape(const struct iraid_volume *vol, uint32_t *out_unit_blocks,
                     uint64_t *out_stream_grain);
/* Copies src into the buffers of iov, in order, until they are full. */
void l1_copy_out(const struct iovec *iov, int niov, const uint8_t *src);
/* Copies len bytes of the iov stream, from byte skip on, to dst. */
void l1_copy_in(uint8_t *dst, const struct iovec *iov, int niov, uint64_t skip, uint64_t len);
/* A buffer for a write-back copy of n blocks (a spare one for a whole
 * run), NULL when out of memory; l1_copy_put gives it back. */
uint8_t *l1_copy_get(struct df_l1 *l1, uint32_t n);
void l1_copy_put(struct df_l1 *l1, uint8_t *copy, uint32_t n);
void l1_slot_free(struct df_l1 *l1, uint32_t slot);
/* The slots' memory and its lender (df_l1_init, df_l1_fini): 0 or -ENOMEM. */
int l1_lender_open(struct df_l1 *l1, uint64_t nslots);
void l1_lender_close(struct df_l1 *l1);
/* Lends prefetched slot (VALID, or FILLING with its fill just done) to a
 * read of the whole block into iov, appending the loan to loans: 1 when
 * lent (the slot is LENT, out of the pool and the map), 0 when the read
 * must copy (no loans asked for, not one whole block, L1_LEND_MAX
 * reached, no memory). */
int l1_lend(struct df_l1 *l1, uint32_t slot, const struct iovec *iov, int niov,
            struct df_l1_loans *loans);
/* The fill of prefetched slot completed well: when its one waiting read
 * asked for loans and takes it (l1_lend), that read moves onto *list as
 * served and 1 is returned; else 0 and nothing changed. */
int l1_waiter_lend(struct df_l1 *l1, uint32_t slot, struct l1_wait **list);
/* Takes slot out of the read-ahead pool, counted as a readahead hit
 * (used) or wasted; nothing for a slot not in it. */
void l1_ra_unlink(struct df_l1 *l1, uint32_t slot, int used);
/* Queues a read of the block in slot (FILLING) behind its fill; out of
 * memory, the read goes to the volume itself.  0 or iraid_readv's error.
 * loans: NULL, or a stream's read to the block's end that may take the
 * slot (l1_waiter_lend). */
int l1_wait_fill(struct df_l1 *l1, uint32_t slot, uint64_t off, const struct iovec *iov, int niov,
                 struct df_l1_loans *loans, iraid_cb cb, void *user);
/* Age (L1_AGE_MS) a dirty block may reach before the store's background
 * commit writes it back when nothing else asks for a round. */
#define L1_AGE_MS 5000
/* Nonzero when the cache holds dirty blocks and none of them is
 * L1_AGE_MS old yet: a background commit with no metadata to commit may
 * wait (commit.c), so that stripes still being filled are written whole
 * later rather than read-modify-written now.  O(slots). */
int df_l1_dirty_young(const struct df_l1 *l1);
/* Nonzero when every dirty block is younger than L1_AGE_MS and one of
 * them has holes: writes are still filling blocks (rows of several
 * writers meeting in them), and writing them back now would write each
 * such block twice, in pieces (commit.c).  O(slots). */
int df_l1_partial_young(const struct df_l1 *l1);
/* Nonzero while anything of the cache is in flight or queued (wait for 0
 * before df_l1_fini; a write-back after an eviction may outlive a flush). */
int df_l1_busy(const struct df_l1 *l1);

#endif
