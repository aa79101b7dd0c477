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
 */
#ifndef IPVFS_DFSTORE_H
#define IPVFS_DFSTORE_H

#include <stdint.h>

#include "common/evloop.h"
#include "common/proto.h"
#include "iraid/volume.h"

#define DFSTORE_BLOCK (64u << 10)

struct dfstore;
typedef void (*dfstore_cb)(int status, uint64_t value, void *user);

struct dfstore_stats {
    uint64_t datafiles;
    uint64_t blocks_used;
    uint64_t blocks_total;
};

int dfstore_open(struct evloop *loop, struct iraid_volume *vol, const char *dir,
                 struct dfstore **out);
void dfstore_close(struct dfstore *ds);

/* data holds the bytes of all pairs, back to back, in pair order. */
int dfstore_write(struct dfstore *ds, uint64_t handle, const struct ipvfs_pair *pairs,
                  uint32_t npairs, const void *data, dfstore_cb cb, void *user);
/* out receives the bytes of all pairs, back to back; holes and bytes past
 * the end read as zeros. */
int dfstore_read(struct dfstore *ds, uint64_t handle, const struct ipvfs_pair *pairs,
                 uint32_t npairs, void *out, dfstore_cb cb, void *user);
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

#endif
