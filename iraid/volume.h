/* iRAID: one block volume over iSCSI LUNs (RAID-0 striping, RAID-1
 * mirroring, RAID-5 with left-symmetric rotated parity), driven through
 * libiscsi's asynchronous API on the caller's event loop.
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
 * - The process must ignore SIGPIPE (ipvfs-server does): libiscsi writes
 *   to the members' sockets with writev(), so a target that dies under a
 *   write would otherwise kill the caller instead of failing the member.
 *
 * Errors (refinements):
 * - Submission: -EINVAL for a NULL cb, zero length, an offset or length
 *   that is not a block multiple, or a range past iraid_size(); -EIO when
 *   a member the request needs is down; -ENOMEM.
 * - Completion: -EIO (I/O error, lost session), -ETIMEDOUT (no answer
 *   within cfg->timeout_ms), -ENOSPC (thin target out of space), -EROFS,
 *   -EBUSY, -ERANGE (LBA out of range), -ECANCELED (only from iraid_close).
 *   Every error is logged once with the member URL and LBA.
 * - A READ that a live member fails (a medium error: the member answers,
 *   so it stays up) is, for RAID-1/5 user reads, served again from the
 *   other members (mirror, or reconstruction from data and parity) and
 *   logged and counted (iraid_status.read_repairs), and the rows it
 *   failed are written back to it from what the others gave, under the
 *   stripe's lock (md's read repair: a disk remaps a bad sector on write;
 *   iraid_status.read_rewrites); a member that fails that write is
 *   failed, and rebuilt in full when it returns.  -EIO only when the other members cannot supply it
 *   (another member missing, or their reads fail too).  A partial-stripe
 *   write whose reads fail on a member still up is retried (up to 3 times,
 *   a tick apart: a breaking session is reported before its member is
 *   marked down); a member that keeps failing those reads fails the write
 *   with -EIO.
 * - A member whose session breaks, or that sends nothing for
 *   cfg->timeout_ms while it owes answers (its commands in flight, and a
 *   NOP-Out sent after IRAID_PING_AFTER_MS of silence), is marked down:
 *   its commands in flight fail with -EIO at once.  A member that answers
 *   the NOP-Outs is slow, not dead (a disk behind on writeback, a
 *   filesystem frozen for a snapshot): its commands may take up to
 *   cfg->cmd_timeout_ms, past which the command fails and the member is
 *   marked down as well.  RAID-0: requests touching it fail with -EIO.
 *   RAID-1/5: reads reconstruct its data from the others and writes go on
 *   without it (degraded); a request needing data that no live member holds (two
 *   members missing in RAID-5, every mirror in RAID-1) fails with -EIO,
 *   never with wrong data.
 * - Reconnect: a down member is logged in again from the event loop with
 *   backoff (0.2 s doubling to 5 s), asynchronously and bounded by
 *   cfg->timeout_ms, never blocking the loop; libiscsi's own automatic
 *   reconnect stays off (it would hold commands past their timeouts).  A
 *   returning member of RAID-1/5 is brought up to date in the background,
 *   under each stripe's lock, so writes meanwhile stay consistent;
 *   iraid_get_status() shows the progress.  A member that went down while
 *   current (a crashed target restarted on its old store) and whose
 *   superblock's events prove it left no earlier than the volume started
 *   to record what it missed is resynced from the bitmap: only the regions
 *   written since it went down (or unflushed then) are recomputed, and it
 *   is current elsewhere at once.  Any other member (new or replaced LUN,
 *   a member that was itself being rebuilt, an I/O node restarted since)
 *   is rebuilt in full: every stripe recomputed from the others.
 * - iraid_open(): -EINVAL for a bad config (unknown level, too few members
 *   for the level, members with different block sizes, chunk not a block
 *   multiple), else the login or READ CAPACITY error.  RAID-1/5 open with
 *   up to `redundancy` members unreachable (degraded; they are retried),
 *   except RAID-5 dirty and degraded: -EUCLEAN unless
 *   cfg->start_dirty_degraded (see there).
 *
 * RAID-1/5 consistency (the write hole): the first IRAID_META_BYTES of
 * every member hold a superblock and a write-intent bitmap (format in
 * iraid/meta.h); stripes are addressed after it and iraid_size() excludes
 * it.  A region's bit is durably set before any write to it and cleared
 * lazily after a flush once the region is idle; iraid_open() resyncs
 * (recomputes parity from data, or copies the first mirror) every dirty
 * region before it returns, so no stripe's parity silently disagrees with
 * its data after a crash.  Concurrent writes to one stripe are serialized
 * (a per-stripe lock, FIFO).  A volume without a superblock is new and is
 * resynced entirely, unless cfg->assume_clean says its members are zeros.
 */
#ifndef IPVFS_IRAID_VOLUME_H
#define IPVFS_IRAID_VOLUME_H

#include <stdint.h>
#include <sys/uio.h>

#include "common/evloop.h"

#define IRAID_DEFAULT_CHUNK (64u << 10)
#define IRAID_MAX_MEMBERS 32
/* cfg->level: RAID-5 for 3 or more members, RAID-1 for 2, RAID-0 for 1. */
#define IRAID_LEVEL_DEFAULT (-1)

/* CHAP of one member's logins (RFC 7143 11.1.4, 12.1.3): the name and
 * secret this initiator answers the target's challenge with, and, for
 * mutual CHAP, the name and secret the target must answer ours with.
 * Empty strings: none (target_user empty: one-way).  Kept out of the URL,
 * which status and the logs show. */
#define IRAID_CHAP_MAX 256
struct iraid_chap {
    char user[IRAID_CHAP_MAX];
    char secret[IRAID_CHAP_MAX];
    char target_user[IRAID_CHAP_MAX];
    char target_secret[IRAID_CHAP_MAX];
};

struct iraid_config {
    int level;                 /* 0, 1, 5 or IRAID_LEVEL_DEFAULT */
    uint32_t nmembers;
    const char *const *urls;   /* iscsi://host:port/iqn/lun, one per member */
    const struct iraid_chap *chap; /* one per member, or NULL: no CHAP */
    uint64_t chunk_size;       /* bytes per chunk on one member; 0: default */
    const char *initiator_iqn;
    int timeout_ms;            /* silence of a member owing answers, and a login */
    int cmd_timeout_ms;        /* one command of a member that answers; 0: 30 s */
    /* RAID-1/5: the caller vouches that every member is brand new and all
     * zeros (e.g. sparse files it has just created), so mirrors and parity
     * already agree.  Honoured only when no member holds any superblock
     * and every live member's metadata area reads as zeros; the first open
     * then skips the whole-volume resync (md's --assume-clean).  A volume
     * that has a superblock is always opened by its own bitmap, dirty
     * regions resynced.  Lying here leaves parity wrong: scrub finds it. */
    int assume_clean;
    /* RAID-5 only (md's start_dirty_degraded).  A volume that is dirty
     * (write-intent bits set: the last run may have torn a partial-stripe
     * write) while a member is missing or stale cannot be resynced: parity
     * is the only copy of the missing member's data, and a torn write made
     * it disagree, so that member's data in those stripes would read back
     * silently wrong.  iraid_open() therefore refuses with -EUCLEAN and a
     * logged explanation; bring the member back (it is resynced, then
     * rebuilt) or set this to accept the risk: the dirty stripes are then
     * left as they are and their bits cleared.  RAID-1 resyncs from a live
     * mirror and never needs it. */
    int start_dirty_degraded;
    /* What reaches the members, for a block-level crash-state checker
     * (test/test_iraid_crashlog.c records it, as Linux's dm-log-writes does);
     * NULL: nothing is observed.  Not copied: it must outlive the volume. */
    const struct iraid_observer *observer;
};

/* Called once for every WRITE, UNMAP and SYNCHRONIZE CACHE that a member
 * acknowledged with GOOD status, in the order the acknowledgements
 * arrive, before anything waiting for it goes on: so a command issued
 * only after another's completion is always observed after it, and every
 * prefix of the sequence is a state the members may hold after a crash.
 * off and len are the member's bytes (from its first byte, the metadata
 * area included); iov holds a WRITE's data (NULL, 0 otherwise), valid
 * only during the call; fua: the WRITE had FUA set. */
enum iraid_observed { IRAID_OBSERVED_WRITE, IRAID_OBSERVED_UNMAP, IRAID_OBSERVED_FLUSH };
struct iraid_observer {
    void (*acked)(void *user, uint32_t member, enum iraid_observed what, int fua, uint64_t off,
                  uint64_t len, const struct iovec *iov, int iovcnt);
    void *user;
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

/* uCache's exclusive caching (issue 13) with members whose target has an
 * L2 that takes DEMOTE (the embedded target's vendor command, see
 * backend/iscsi/target.h; asked once per member at iraid_open):
 * - iraid_readv_flags() with IRAID_READ_DPO: a read whose blocks the
 *   caller keeps (the I/O node's L1); the straight member READs to such
 *   members carry SBC's DPO bit, so their L2 gives the blocks up.  Reads
 *   that go stripe by stripe (a member down) carry none.
 * - iraid_demote(): a clean block the caller evicts is handed to the L2 of
 *   the members that hold its data chunks (parity is never demoted), from
 *   a copy of buf, without waiting and without a callback: a hint, whose
 *   failure changes nothing but a later hit.  1 when it went down to at
 *   least one member, 0 when no member takes it (or none is live),
 *   -EINVAL for a range iraid_readv() refuses, -ECANCELED when closing,
 *   -ENOMEM.
 * Against other targets (tgtd, an external LUN) both are plain reads and
 * nothing. */
#define IRAID_READ_DPO 1u
int iraid_readv_flags(struct iraid_volume *vol, uint64_t offset, const struct iovec *iov,
                      int iovcnt, unsigned flags, iraid_cb cb, void *user);
int iraid_demote(struct iraid_volume *vol, uint64_t offset, const void *buf, size_t len);

/* Whether a write to blocks never written cannot fail for want of space
 * on a thin member: every member's target told at iraid_open (the uCache
 * VPD page) how much its backing store has free and how much of its LUN
 * is not yet allocated there, and each member's free bytes cover what all
 * the members together could still allocate, plus 64 MiB (members may
 * share one disk).  Then a caller may hold such writes back (the I/O
 * node's L1) and write them later without a new ENOSPC.  0 against tgtd,
 * an external LUN or a block device (not known), and when space is short;
 * it is not asked again after open, so a disk that other programs fill
 * afterwards can still fail a later write; a member replaced since open
 * (iraid_replace_member) makes it 0 until the next open. */
int iraid_room_for_new_blocks(const struct iraid_volume *vol);

/* Discard: UNMAPs the members' blocks under [offset, offset + len), so a
 * thin target frees their space; the caller no longer needs those bytes
 * (they read as zeros, or as they were where nothing was unmapped).
 * RAID-0 unmaps all of it; RAID-1/5 only the stripes wholly inside it
 * whose members are all current, each under the stripe's lock and
 * write-intent bit, so mirrors and parity stay consistent (iraid/unmap.c
 * says why partial and degraded stripes are left alone).  cb runs once,
 * as for a write, with 0 or the first error (a stripe whose unmap failed
 * on some member is resynced before cb).  Submission: -EINVAL as for a
 * write, -EOPNOTSUPP when some member did not report LBPME and LBPRZ at
 * login (it might not take UNMAP, or not read zeros after it), -EIO when
 * too many members are missing, -ENOMEM. */
int iraid_unmap(struct iraid_volume *vol, uint64_t offset, uint64_t len, iraid_cb cb,
                void *user);
/* Bytes of the smallest range iraid_unmap() frees whole when aligned to
 * it: the block size (RAID-0), a stripe's data (RAID-1/5); 0 when it would
 * refuse with -EOPNOTSUPP. */
uint64_t iraid_unmap_granularity(const struct iraid_volume *vol);

/* Clean close (md's clean shutdown).  Flushes every live member, then
 * clears the write-intent bit of every region with no write in progress,
 * however recent its last write (the lazy clearing waits
 * IRAID_META_LINGER_MS), and writes the bitmap (FUA) to every live member.
 * cb runs once: 0 when the flush and the bitmap writes succeeded, so the
 * next iraid_open() finds those regions clean (no resync; a degraded
 * RAID-5 volume opens without start_dirty_degraded); else the error, and
 * bits not yet durably cleared count as set.  Meant for after the last
 * write and before iraid_close(); a write submitted meanwhile sets its bit
 * again.  RAID-0 keeps no bitmap: only the flush.  Returns 0, or the
 * submission error of iraid_flush() (-EINVAL, -EIO, -ENOMEM) and never
 * calls cb then. */
int iraid_mark_clean(struct iraid_volume *vol, iraid_cb cb, void *user);
int iraid_mark_clean_sync(struct iraid_volume *vol);

int iraid_read_sync(struct iraid_volume *vol, uint64_t offset, void *buf, uint64_t len);
int iraid_write_sync(struct iraid_volume *vol, uint64_t offset, const void *buf, uint64_t len);
int iraid_flush_sync(struct iraid_volume *vol);

/* ---- health, scrub, member replacement ---- */

enum iraid_member_state {
    IRAID_MEMBER_UP,
    IRAID_MEMBER_DOWN,          /* failed; login retried with backoff */
    IRAID_MEMBER_RECONNECTING,  /* login in progress */
    IRAID_MEMBER_REBUILDING,    /* back, being rebuilt from the others */
};

struct iraid_member_status {
    char url[256];              /* truncated if longer */
    enum iraid_member_state state;
    uint64_t rebuilt, total;    /* REBUILDING: stripes done of total */
    int bitmap;                 /* REBUILDING: resynced from the write-intent
                                 * bitmap; total counts only the stripes of
                                 * the regions it missed */
};

/* RAID-5 stripe writes since open, one per stripe by how it was written
 * (a stripe planned again after a member failed counts again): FULL reads
 * nothing; RMW reads the old data and parity; RCW reads the untouched
 * rows; degraded ones write around a missing member (no parity, or the
 * missing chunk reconstructed first).  Zero for RAID-0 and RAID-1. */
struct iraid_write_counts {
    uint64_t full_stripe;
    uint64_t rmw;
    uint64_t rcw;
    uint64_t degraded;
};

struct iraid_status {
    int level;
    uint32_t nmembers;
    uint64_t size;              /* iraid_size() */
    uint64_t chunk;
    uint32_t missing;           /* members not UP */
    uint64_t dirty_regions;     /* write-intent bits set now */
    int scrubbing;
    uint64_t scrub_done, scrub_total;  /* stripes */
    uint64_t read_rewrites;     /* of those, rows written back to that member */
    uint64_t read_repairs;      /* stripe reads that a live member failed (medium
                                 * error), served from the others instead */
    struct iraid_write_counts writes;
    struct iraid_member_status member[IRAID_MAX_MEMBERS];
};

const char *iraid_member_state_name(enum iraid_member_state state);

/* Fills out; never fails for a valid volume (-EINVAL for NULLs). */
int iraid_get_status(const struct iraid_volume *vol, struct iraid_status *out);

/* Verifies every stripe whose members are all current: RAID-5 parity
 * against the data, RAID-1 mirrors against the first.  Runs in the
 * background, one stripe at a time under the stripe's lock; cb runs once
 * with 0 (or the first I/O error), the count of stripes that disagree and
 * the count skipped because a member was missing.  Nothing is repaired.
 * Returns 0, -EBUSY while a scrub runs, -EOPNOTSUPP for RAID-0. */
typedef void (*iraid_scrub_cb)(struct iraid_volume *vol, int status, uint64_t mismatches,
                               uint64_t skipped, void *user);
int iraid_scrub(struct iraid_volume *vol, iraid_scrub_cb cb, void *user);

/* The pace of the background sweeps, rebuild and scrub (md's
 * sync_speed_min/max, decided by the caller: the I/O node's QoS class
 * "internal").  After each stripe a sweep tells done(user, bytes) the
 * stripe's chunk bytes (its progress over one member) and asks
 * rate(user) how many such bytes per second it may have now: the next
 * stripe starts when that pace allows (0: at once).  The resync inside
 * iraid_open() runs before a pace can be set and is never paced.  NULL
 * or a pace without rate: unpaced (the default).  Copied. */
struct iraid_sweep_pace {
    uint64_t (*rate)(void *user);
    void (*done)(void *user, uint64_t bytes);
    void *user;
};
void iraid_set_sweep_pace(struct iraid_volume *vol, const struct iraid_sweep_pace *pace);
int iraid_scrub_sync(struct iraid_volume *vol, uint64_t *mismatches, uint64_t *skipped);

/* Takes member idx out (as if it failed) and logs in to url instead, with
 * chap (NULL: none); once the login succeeds the new member is rebuilt
 * from the others.  Returns
 * 0, -EINVAL (bad index or URL), -EOPNOTSUPP for RAID-0, -EBUSY when
 * another member is not UP (down, reconnecting, or still rebuilding) and
 * the volume cannot lose one more, -ENOMEM. */
int iraid_replace_member(struct iraid_volume *vol, uint32_t idx, const char *url,
                         const struct iraid_chap *chap);

/* What a LUN offers against what a member of this volume needs. */
struct iraid_probe {
    uint64_t bytes;            /* capacity of the LUN */
    uint32_t block_size;
    uint64_t need_bytes;       /* metadata area and every stripe's chunk */
    uint32_t need_block_size;  /* the members' */
    int fits;                  /* same block size and bytes >= need_bytes */
    char why[160];             /* a failed probe: what failed, for people */
};

typedef void (*iraid_probe_cb)(struct iraid_volume *vol, int status,
                               const struct iraid_probe *probe, void *user);

/* Logs in to url (with chap, NULL: none), reads its capacity and drops the
 * session: whether it can
 * replace a member (check it before iraid_replace_member(), which would
 * otherwise retry a LUN that is too small forever, the old member already
 * out).  Asynchronous on the volume's loop, which goes on serving: cb runs
 * once, later, from the loop, with 0 and probe filled, or -ECONNREFUSED
 * (the connect or login failed), -ETIMEDOUT (no login and READ CAPACITY
 * within cfg->timeout_ms in all, e.g. an address that never answers), the
 * READ CAPACITY error, or -ECANCELED (iraid_close(), inside it); probe->why
 * says more then.  Returns 0, or -EINVAL (NULLs, a bad URL), -ECANCELED
 * (closing), -ECONNREFUSED (cannot start the connect), -ENOMEM; cb is
 * never called then. */
int iraid_probe_member_async(struct iraid_volume *vol, const char *url,
                             const struct iraid_chap *chap, iraid_probe_cb cb, void *user);

#endif
