/* iRAID: one block volume striped (later with parity) over iSCSI LUNs,
 * driven through libiscsi's asynchronous API on the caller's event loop.
 *
 * Contract:
 * - iraid_open() logs in to every member synchronously (each login bounded
 *   by cfg->timeout_ms) and registers the members' sockets on loop.  After
 *   that all I/O is asynchronous: submission returns at once and the
 *   callback runs later from a callback of that loop, exactly once, with 0
 *   or a negative errno.  A submission that fails returns the error and
 *   never calls the callback.
 * - Requests to different members are in flight at the same time.
 * - Offsets and lengths are in bytes and must be multiples of
 *   iraid_block_size(); buffers described by iov stay the caller's and must
 *   stay valid until the callback runs.
 * - iraid_flush() completes when every member has made all writes
 *   completed before the call durable (SYNCHRONIZE CACHE).
 * - iraid_close() fails the requests still in flight with -ECANCELED
 *   (callbacks run inside the call), logs out of every member and frees
 *   the volume.
 * - The _sync variants run the loop (evloop_run_once) until their request
 *   completes; never call them from a callback of the same loop.
 * - Never call iraid_close() from a callback of this volume's requests
 *   (libiscsi is still inside its service routine there).
 *
 * Errors (refinements):
 * - Submission: -EINVAL for a NULL cb, zero length, an offset or length
 *   that is not a block multiple, or a range past iraid_size(); -EIO when
 *   a member the request needs is down; -ENOMEM.
 * - Completion: -EIO (I/O error, lost session), -ETIMEDOUT (no answer
 *   within cfg->timeout_ms), -ENOSPC (thin target out of space), -EROFS,
 *   -EBUSY, -ERANGE (LBA out of range), -ECANCELED (only from iraid_close).
 *   Every error is logged once with the member URL and LBA.
 * - A member whose session breaks is marked down: its commands in flight
 *   fail with -EIO at once and later ones are refused (no automatic
 *   reconnect: libiscsi's would hold commands past their timeouts).
 * - iraid_open(): -EOPNOTSUPP for level 5 until parity lands, -EINVAL for
 *   a bad config (unknown level, too few members for the level, members
 *   with different block sizes, chunk not a block multiple), else the
 *   login or READ CAPACITY error.
 */
#ifndef IPVFS_IRAID_VOLUME_H
#define IPVFS_IRAID_VOLUME_H

#include <stdint.h>
#include <sys/uio.h>

#include "common/evloop.h"

#define IRAID_DEFAULT_CHUNK (64u << 10)

struct iraid_config {
    int level;                 /* 0, 1 or 5 (0 only until parity lands) */
    uint32_t nmembers;
    const char *const *urls;   /* iscsi://host:port/iqn/lun, one per member */
    uint64_t chunk_size;       /* bytes per chunk on one member; 0: default */
    const char *initiator_iqn;
    int timeout_ms;            /* per command and per login */
};

struct iraid_volume;
typedef void (*iraid_cb)(struct iraid_volume *vol, int status, void *user);

int iraid_open(struct evloop *loop, const struct iraid_config *cfg, struct iraid_volume **out);
void iraid_close(struct iraid_volume *vol);

uint64_t iraid_size(const struct iraid_volume *vol);       /* usable bytes */
uint32_t iraid_block_size(const struct iraid_volume *vol); /* bytes */

int iraid_readv(struct iraid_volume *vol, uint64_t offset, const struct iovec *iov, int iovcnt,
                iraid_cb cb, void *user);
int iraid_writev(struct iraid_volume *vol, uint64_t offset, const struct iovec *iov, int iovcnt,
                 iraid_cb cb, void *user);
int iraid_flush(struct iraid_volume *vol, iraid_cb cb, void *user);

int iraid_read_sync(struct iraid_volume *vol, uint64_t offset, void *buf, uint64_t len);
int iraid_write_sync(struct iraid_volume *vol, uint64_t offset, const void *buf, uint64_t len);
int iraid_flush_sync(struct iraid_volume *vol);

#endif
