/* Discards of the datafile store: volume blocks whose freeing the journal
 * has committed are UNMAPped on the volume (iraid_unmap), so the targets'
 * thin backing files shrink when datafiles are removed or truncated.
 *
 * Why only after the commit: until the commit that frees a block is
 * durable, a crash brings back the block map that points to it, so its
 * bytes must stay.  Why the block stays in use meanwhile: a block reused
 * while its UNMAP is in flight could lose the new bytes to it, so commit.c
 * hands freed blocks here instead of clearing their bits in the space
 * bitmap, and this file clears them when their UNMAP has ended (whatever
 * its status: a failed discard only costs the space it would have freed).
 *
 * Aligning: iRAID frees only whole stripes on RAID-1/5 (its granularity).
 * A run of freed blocks is widened to the granularity's boundaries where
 * the blocks beside it are free already (a file removed earlier, blocks
 * never used), claimed in the space bitmap for the time of the UNMAP so
 * that nothing is allocated there meanwhile; a stripe that still holds a
 * used block is left mapped (the volume skips it).
 *
 * States of a queued block: QUEUED (df_unmap_queue, bit still set) ->
 * IN FLIGHT (df_unmap_start: one iraid_unmap per run) -> FREE (bit
 * cleared in the UNMAP's callback).  A volume that cannot unmap
 * (granularity 0) frees queued blocks at once in df_unmap_start.
 *
 * Ownership: the store owns the struct; it holds the runs in flight until
 * their callbacks; the space bitmap and the volume are the store's.
 * Close: wait while df_unmap_busy() (running the loop), then
 * df_unmap_fini(). */
#ifndef IPVFS_DFSTORE_UNMAP_H
#define IPVFS_DFSTORE_UNMAP_H

#include <stddef.h>
#include <stdint.h>

#include "iraid/volume.h"

struct df_space;

struct df_unmap {
    struct iraid_volume *vol;
    struct df_space *space;
    uint64_t *queued;                /* freed blocks; [first, nqueued) not sent yet */
    size_t first, nqueued, cap;
    uint64_t gran;                   /* volume's unmap granularity, in blocks */
    uint32_t inflight;               /* iraid_unmap calls not yet back */
    uint64_t blocks_unmapped;        /* blocks sent to the volume */
};

void df_unmap_init(struct df_unmap *u, struct iraid_volume *vol, struct df_space *space);
void df_unmap_fini(struct df_unmap *u);
/* A block the committed journal no longer references; it stays used until
 * its UNMAP ends.  0, or -ENOMEM (the block is then freed at once). */
int df_unmap_queue(struct df_unmap *u, uint64_t vblock);
/* Sends the queued blocks to the volume, in runs, a few at a time (the
 * rest as those end). */
void df_unmap_start(struct df_unmap *u);
/* Nonzero while blocks are queued or in flight. */
int df_unmap_busy(const struct df_unmap *u);

/* Pure: the run [lo, hi) of freed blocks widened to multiples of gran
 * blocks where every block added is free (is_free), within total blocks;
 * *out_lo, *out_hi get the result (the run itself when it cannot grow). */
void df_unmap_widen(uint64_t lo, uint64_t hi, uint64_t gran, uint64_t total,
                    int (*is_free)(const void *ctx, uint64_t b), const void *ctx,
                    uint64_t *out_lo, uint64_t *out_hi);

#endif
