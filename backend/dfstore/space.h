/* Free space of the datafile store: one bit per DFSTORE_BLOCK block of the
 * volume, set while the block is in use, and where a datafile's new
 * blocks go on the volume (the placement rule).
 *
 * Who sets and clears bits: the store sets one when it places a block
 * for a write or prealloc (df_space_place, df_space_alloc) and when it
 * loads the block map at open; it clears one at once only for a block
 * that nothing points to yet (a failed write).  A block unmapped by
 * truncate or remove keeps its bit until the commit round that makes the
 * unmapping durable clears it (commit.c), so no block is reused before its
 * freeing survives a crash.
 *
 * Placement rule (issue 27): a datafile's blocks are placed by file
 * offset, not by first touch.  The file is cut into aligned regions of
 * DF_RUN_BLOCKS blocks (2 MiB); the first block placed in a region
 * reserves a run of DF_RUN_BLOCKS free volume blocks (aligned, the lowest
 * wholly free one), and file block fb of the region goes to volume block
 * run + fb % DF_RUN_BLOCKS.  So blocks next to each other in the datafile
 * are next to each other on the volume whoever writes them first: rows of
 * several clients that share blocks (a 3 x 3 tile of 32 KiB rows) lie side
 * by side, and their reads and writes merge into few volume commands.
 * Fallback, in order: the block's slot is in use (taken by another file
 * when space ran short, or still held by an unmapping not yet committed),
 * or no wholly free run is left: the lowest block that is free and not
 * reserved; none: the lowest free block at all, reserved or not (the
 * reserve gives way when space runs short, so every free block can still
 * be used).  A reservation is only a hint kept in memory: it is not in the
 * journal, a reserved block counts as free (used_blocks, the store's
 * ENOSPC checks), and a crash or restart simply forgets it (the store
 * rebuilds what it can from the block map at open).  The store returns a
 * run's unused reserve when the region goes (truncate below it, remove).
 * Without runs (run == NULL: the volume does not vouch that its targets
 * have room for every block, iraid_room_for_new_blocks) the rule is the
 * old one, lowest free block first: on a thin target a block used before
 * costs no new backing space, so a full backing disk gets room back from
 * removed files.
 *
 * Zeros: a volume that was new at open (zero_known) still holds its first
 * zeros in every block never handed out since; df_space_take_zeroed tells
 * per block (a run leaves holes below blocks it handed out, so one
 * watermark would not do). */
#ifndef IPVFS_DFSTORE_SPACE_H
#define IPVFS_DFSTORE_SPACE_H

#include <stdint.h>

/* Blocks of a datafile region, and of the volume run reserved for it;
 * divides 64 (one bitmap word holds whole runs). */
#define DF_RUN_BLOCKS 32u
/* No run reserved (what a datafile's map of runs gives for a region). */
#define DF_NO_RUN UINT64_MAX

struct df_space {
    uint64_t *bitmap;                /* in use */
    uint64_t *reserved;              /* free, held for a datafile region's run */
    uint64_t *handed;                /* handed out since open (not first zeros) */
    uint64_t total_blocks, used_blocks;
    uint64_t free_cursor;            /* every block below it is in use */
    uint64_t alloc_cursor;           /* every block below it is in use or reserved */
    uint64_t run_cursor;             /* every run below it holds a used or reserved block */
    int zero_known;                  /* the volume was new at open */
};

/* 0 or -ENOMEM; every block starts free. */
int df_space_init(struct df_space *sp, uint64_t total_blocks);
void df_space_fini(struct df_space *sp);

int df_space_test(const struct df_space *sp, uint64_t b);
/* Marks b used (it may be reserved: the reservation stays, a hint). */
void df_space_set(struct df_space *sp, uint64_t b);
void df_space_clear(struct df_space *sp, uint64_t b);
int df_space_reserved(const struct df_space *sp, uint64_t b);
/* Marks the lowest free block that is not reserved used and returns it,
 * else the lowest free one (its reservation dropped); the caller checked
 * that one is free (DF_NO_RUN, UINT64_MAX, if not). */
uint64_t df_space_alloc(struct df_space *sp);
/* The placement rule above: marks the volume block for file block fb used
 * and returns it.  *run is the region's run (DF_NO_RUN: none yet; set
 * here when one is reserved); run NULL: lowest free first.  The caller
 * checked that a block is free. */
uint64_t df_space_place(struct df_space *sp, uint64_t *run, uint64_t fb);
/* Drops the reservation of the free blocks of the run at base (a region
 * that went away); blocks in use are left alone. */
void df_space_unreserve_run(struct df_space *sp, uint64_t base);
/* Reserves the free blocks of the run at base that nobody reserved (a run
 * found again in the block map at open). */
void df_space_reserve_run(struct df_space *sp, uint64_t base);
/* Whether block b (just placed) still holds the volume's first zeros;
 * from now on it counts as written. */
int df_space_take_zeroed(struct df_space *sp, uint64_t b);

#endif
