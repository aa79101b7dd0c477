/* Write planning of the datafile store (see plan.c). */
#ifndef IPVFS_DFSTORE_PLAN_H
#define IPVFS_DFSTORE_PLAN_H

#include <stdint.h>

struct dfstore;
struct datafile;
struct df_op;
struct blk_io;

/* Plans a starting write (OP_WRITE): op->value and new_end measured, the
 * writes queued behind it gathered (marked started, op->nfollow), one
 * blk_io per block in op->ios, new blocks allocated.  0 or a negative
 * errno (-ENOMEM, -ENOSPC before any block is taken). */
int df_plan_write(struct df_op *op);
/* Places a volume block for each new blk_io of op (nnew of them; by file
 * offset, space.h), or none with -ENOSPC. */
int df_plan_alloc(struct dfstore *ds, struct df_op *op, uint32_t nnew);
/* Gives back the unused reserve of df's regions from the one holding
 * first_fblock on, when that one starts there (truncate, remove: 0), and
 * forgets their runs. */
void df_plan_drop_runs(struct dfstore *ds, struct datafile *df, uint64_t first_fblock);
/* At open: a block of the map that sits where its region's run would put
 * it names that run (0 or -ENOMEM); df_plan_runs_loaded then reserves the
 * free blocks of every run so found. */
int df_plan_note_run(struct datafile *df, uint64_t fblock, uint64_t vblock);
void df_plan_runs_loaded(struct dfstore *ds);
/* Does this block need old bytes read first (existing, not sector-exact)? */
int df_plan_needs_rmw(const struct dfstore *ds, const struct blk_io *io);

#endif
