/* Datafile store of one I/O node.
 *
 * Each file striped onto this I/O node has one datafile here, named by the
 * file's 64-bit handle.  Datafile bytes live on the node's iRAID volume,
 * allocated in blocks (DFSTORE_BLOCK bytes); which volume block holds which
 * datafile block, and each datafile's size, live in an LMDB environment
 * under the node's data directory.
 *
 * Crash safety (what a restart finds):
 * - Data reaches the volume before any metadata that points to it is
 *   committed, so a crash never exposes another file's old bytes or
 *   garbage: a block is zero-filled where it was not written.
 * - Blocks freed by truncate/remove are reused only after the commit that
 *   frees them, so a crash never makes two datafiles share a block.
 * - dfstore_sync() completes once data and metadata of every datafile are
 *   durable (volume flush, then LMDB commit).  Metadata is also committed
 *   in the background (after a volume flush) at least once a second while
 *   there are changes.
 *
 * Async contract: operations taking a callback return 0 and call cb exactly
 * once later, from a callback of the loop given to dfstore_open(), with
 * status 0 or a negative errno, and value = bytes moved (read/write) or the
 * datafile size after the operation (others).  On a non-zero return cb is
 * never called.  Buffers stay the caller's and must live until cb runs.
 * Operations on one datafile complete in submission order.
 * dfstore_close() waits for what is in flight (running the loop), commits,
 * and frees the store; the volume stays the caller's.
 *
 * Refinements:
 * - The LMDB environment is the file DIR/dfstore.mdb (plus its -lock
 *   file); DIR is created if missing.  dfstore_open() fails with -EUCLEAN
 *   if the stored block map points past the volume or shares a block.
 * - Handle 0 is not a datafile: write/read/truncate/prealloc/remove with
 *   it get -EINVAL.  Writing, truncating or preallocating a missing
 *   datafile creates it; reading one reads zeros; removing one succeeds.
 * - Pairs: at most IPVFS_MAX_PAIRS and IPVFS_MAX_IO_BYTES in total
 *   (-EINVAL); ends past 2^50 get -EFBIG.  Zero-length pairs are allowed.
 *   Overlapping pairs of one write: the later pair's bytes win.
 * - dfstore_prealloc() gives every hole below size a zeroed block; the
 *   size becomes max(size, current size).
 * - A write or prealloc needing more new blocks than are free fails with
 *   -ENOSPC before touching anything.  Blocks freed by truncate/remove
 *   count as free only after the commit that frees them (the next sync,
 *   or the background commit within about a second) and their discard
 *   on the volume (UNMAP, so thin targets shrink: unmap.h);
 *   dfstore_stats() counts them as used until then.
 * - A failed volume flush or LMDB commit fails the syncs waiting for it
 *   with that error; the changes stay pending and are retried.
 * - Write gathering: writes queued on one datafile behind a starting write
 *   join its volume I/O when no two of their bytes overlap (and the free
 *   blocks surely suffice); they still complete in submission order, all
 *   with the group's status.  Overlapping writes stay apart, in order.
 * - Reads queued right behind a running read of the same datafile run
 *   with it (their volume I/O overlaps); they still complete in order,
 *   and the next write-like operation starts after the last of them.
 * - Placement (space.h): a datafile's blocks are placed by file offset,
 *   not in the order clients first write them.  Each aligned 2 MiB region
 *   of a datafile (DF_RUN_BLOCKS blocks) gets a run of as many free,
 *   aligned volume blocks when its first block is placed, and file block
 *   fb goes to run + fb % DF_RUN_BLOCKS; so blocks adjacent in the
 *   datafile are adjacent on the volume whoever writes them first, and the
 *   rows of several clients read or written at once merge into few volume
 *   commands.  Where that slot is taken or no whole run is free: the
 *   lowest free block not reserved, then the lowest free one.  The
 *   reserve is held in memory only (never journaled, free for every
 *   count), given back by truncate and remove and given up to whoever
 *   needs the space; a restart rebuilds the runs from the block map.  A
 *   volume that does not vouch for its targets' room
 *   (iraid_room_for_new_blocks) keeps lowest free first.
 * - Never call dfstore_close() from a dfstore callback.
 */
#ifndef IPVFS_DFSTORE_H
#define IPVFS_DFSTORE_H

#include <stdint.h>
#include <stdio.h>

#include "common/evloop.h"
#include "common/proto.h"
#include "backend/dfstore/l1cache.h"
#include "iraid/volume.h"

#define DFSTORE_BLOCK (64u << 10)

struct dfstore;
typedef void (*dfstore_cb)(int status, uint64_t value, void *user);

struct dfstore_stats {
    uint64_t datafiles;
    uint64_t blocks_used;
    uint64_t blocks_total;
    uint64_t writes;            /* write operations submitted */
    uint64_t writes_gathered;   /* of them, rode along with an earlier one */
    uint64_t reads_overlapped;  /* reads started while an earlier read of
                                 * their datafile was still running */
    uint64_t zero_fill_bytes;   /* zeros written around the data of new
                                 * blocks (from the store's zero buffer) */
    struct df_l1_stats l1;      /* the L1 cache (capacity 0: off) */
};

int dfstore_open(struct evloop *loop, struct iraid_volume *vol, const char *dir,
                 struct dfstore **out);
/* The same, for a volume the caller vouches is all zeros (its members
 * created in this start): a new block that was never handed out since is
 * written over its written sectors only, not whole with zeros (the
 * zero-fill cost first writes 1.5x the bytes of rewrites).  Honoured only
 * for a store with no block in use. */
int dfstore_open_zeroed(struct evloop *loop, struct iraid_volume *vol, const char *dir,
                        struct dfstore **out);
void dfstore_close(struct dfstore *ds);

/* data holds the bytes of all pairs, back to back, in pair order. */
int dfstore_write(struct dfstore *ds, uint64_t handle, const struct ipvfs_pair *pairs,
                  uint32_t npairs, const void *data, dfstore_cb cb, void *user);
/* out receives the bytes of all pairs, back to back; holes and bytes past
 * the end read as zeros. */
int dfstore_read(struct dfstore *ds, uint64_t handle, const struct ipvfs_pair *pairs,
                 uint32_t npairs, void *out, dfstore_cb cb, void *user);
/* The same with the read-ahead window limit ra_max in bytes (0: no
 * read-ahead for this read; DFSTORE_RA_DEFAULT: the store's, as
 * dfstore_read).  See backend/dfstore/readahead.h. */
#define DFSTORE_RA_DEFAULT UINT64_MAX
int dfstore_read_ra(struct dfstore *ds, uint64_t handle, const struct ipvfs_pair *pairs,
                    uint32_t npairs, uint64_t ra_max, void *out, dfstore_cb cb, void *user);
/* The same, letting the L1 lend the read whole prefetched blocks instead
 * of copying them into out (l1cache.h, "Loans"): loans (zeroed by the
 * caller) gets one loan per block left uncopied in out.  From the call on,
 * the caller owns them, whatever the status: it sends (or copies) each
 * from its src, then gives them back with df_l1_loans_return (or copies
 * them all with df_l1_loans_settle); that may come after dfstore_close. */
int dfstore_read_lend(struct dfstore *ds, uint64_t handle, const struct ipvfs_pair *pairs,
                      uint32_t npairs, uint64_t ra_max, void *out, struct df_l1_loans *loans,
                      dfstore_cb cb, void *user);
int dfstore_truncate(struct dfstore *ds, uint64_t handle, uint64_t size, dfstore_cb cb,
                     void *user);
int dfstore_prealloc(struct dfstore *ds, uint64_t handle, uint64_t size, dfstore_cb cb,
                     void *user);
int dfstore_remove(struct dfstore *ds, uint64_t handle, dfstore_cb cb, void *user);
/* handle 0: every datafile. */
int dfstore_sync(struct dfstore *ds, uint64_t handle, dfstore_cb cb, void *user);

/* Current size of a datafile (0 if it does not exist); never blocks. */
uint64_t dfstore_size(const struct dfstore *ds, uint64_t handle);
void dfstore_stats(const struct dfstore *ds, struct dfstore_stats *out);

/* Puts an L1 cache of bytes (rounded down to DFSTORE_BLOCK; 0 = none, the
 * default) in front of the volume: uCache's L1, write-back, written back
 * by every commit round (so dfstore_sync's durability is unchanged) and
 * under pressure (backend/dfstore/l1cache.h).  Writes into blocks the
 * store allocates for them go through to the volume, so that a thin
 * target out of space fails the write itself, unless the volume vouches
 * for the room (iraid_room_for_new_blocks): then they are written whole
 * (zeros around the data) and stay in the L1 too.  Call it before
 * the first operation: -EBUSY while operations are pending, -EINVAL for
 * 2^31 blocks or more, -ENOMEM (the store then has no cache). */
int dfstore_set_l1(struct dfstore *ds, uint64_t bytes);
/* The server's --trace: the L1's events go to trace (l1cache.h's
 * df_l1_set_trace: the caller owns, flushes and closes it; NULL stops).
 * Call it after dfstore_set_l1. */
void dfstore_set_trace(struct dfstore *ds, FILE *trace);
/* Sequential read-ahead into the L1 with a window of up to bytes per
 * stream (0 = off, the default): sets up the L1's read-ahead pool (a
 * quarter of it).  After dfstore_set_l1 and before the first operation:
 * -EINVAL without an L1, -EBUSY, -ENOMEM. */
int dfstore_set_readahead(struct dfstore *ds, uint64_t bytes);

#endif
