/* Write planning of the datafile store (see plan.c). */
#ifndef IPVFS_DFSTORE_PLAN_H
#define IPVFS_DFSTORE_PLAN_H

#include <stdint.h>

struct dfstore;
struct df_op;
struct blk_io;

/* Plans a starting write (OP_WRITE): op->value and new_end measured, the
 * writes queued behind it gathered (marked started, op->nfollow), one
 * blk_io per block in op->ios, new blocks allocated.  0 or a negative
 * errno (-ENOMEM, -ENOSPC before any block is taken). */
int df_plan_write(struct df_op *op);
/* Allocates a volume block for each new blk_io of op (nnew of them), or
 * none with -ENOSPC. */
int df_plan_alloc(struct dfstore *ds, struct df_op *op, uint32_t nnew);
/* Does this block need old bytes read first (existing, not sector-exact)? */
int df_plan_needs_rmw(const struct dfstore *ds, const struct blk_io *io);

#endif
