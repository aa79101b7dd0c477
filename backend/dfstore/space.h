/* Free space of the datafile store: one bit per DFSTORE_BLOCK block of the
 * volume, set while the block is in use.
 *
 * Who sets and clears bits: the store sets one when it allocates a block
 * for a write or prealloc (df_space_alloc) and when it loads the block map
 * at open; it clears one at once only for a block that nothing points to
 * yet (a failed write).  A block unmapped by truncate or remove keeps its
 * bit until the commit round that makes the unmapping durable clears it
 * (commit.c), so no block is reused before its freeing survives a crash. */
#ifndef IPVFS_DFSTORE_SPACE_H
#define IPVFS_DFSTORE_SPACE_H

#include <stdint.h>

struct df_space {
    uint64_t *bitmap;
    uint64_t total_blocks, used_blocks;
    uint64_t alloc_cursor;           /* every block below it is in use */
    uint64_t zero_from;              /* every block at or above it still holds
                                      * the zeros the volume was created with
                                      * (total_blocks: none known to) */
};

/* 0 or -ENOMEM; every block starts free. */
int df_space_init(struct df_space *sp, uint64_t total_blocks);
void df_space_fini(struct df_space *sp);

int df_space_test(const struct df_space *sp, uint64_t b);
void df_space_set(struct df_space *sp, uint64_t b);
void df_space_clear(struct df_space *sp, uint64_t b);
/* Marks the lowest free block used and returns it; the caller checked
 * that one is free (DF_NO_BLOCK, UINT64_MAX, if not). */
uint64_t df_space_alloc(struct df_space *sp);
/* Whether block b (just allocated) still holds the volume's first zeros;
 * from now on it counts as written (so does every block below it). */
int df_space_take_zeroed(struct df_space *sp, uint64_t b);

#endif
