/* iRAID internals: the structures every file of iraid/ shares, and each
 * file's internal functions, listed bottom-up (a file calls only those
 * above it; volume.c's comment lists the layers).  Nothing here is API;
 * see volume.h for the contracts.  The state machines are described at
 * the top of the file that drives them: members in member.c, requests in
 * request.c, stripe ops in stripe.c, user I/O in io.c, sweeps in sweep.c,
 * the metadata in meta.c (and meta_open.c), the volume in volume.c.
 *
 * Commands go only to live members (UP, REBUILDING).  A REBUILDING member
 * holds current data only below rebuild_next (in stripes): the stripe
 * planner treats it as missing at and above that stripe, for reads and for
 * writes alike; the rebuild sweep takes each stripe's lock before it
 * rebuilds it, so a write never races with the rebuild of its stripe. */
#ifndef IPVFS_IRAID_INTERNAL_H
#define IPVFS_IRAID_INTERNAL_H

#include <stdint.h>
#include <sys/uio.h>

#include <iscsi/iscsi.h>
#include <iscsi/scsi-lowlevel.h>

#include "iraid/layout.h"
#include "iraid/volume.h"

#define IRAID_TICK_MS 100
#define IRAID_DEFAULT_TIMEOUT_MS 10000
/* Liveness (member.c, member_check_alive): a member that owes answers and
 * has sent nothing for IRAID_PING_AFTER_MS gets a NOP-Out; one silent for
 * the volume's timeout_ms is down.  A command of a member that keeps
 * answering may take up to cmd_timeout_ms (iraid_config; default below:
 * Linux's SCSI command timeout) before it fails with ETIMEDOUT. */
#define IRAID_PING_AFTER_MS 1000
#define IRAID_DEFAULT_CMD_TIMEOUT_MS 30000
#define IRAID_DEFAULT_IQN "iqn.2024-01.org.ipvfs:initiator"
/* One SCSI command moves at most this much (CDB lengths are 32-bit). */
#define IRAID_MAX_PART (16u << 20)
/* A multi-stripe RAID-5 write op covers at most this many bytes per
 * member: its parity buffer (plus one stripe of scratch) is bounded by it. */
#define IRAID_MULTI_MAX_BYTES (1u << 20)
#define IRAID_BACKOFF_MIN_MS 200
#define IRAID_BACKOFF_MAX_MS 5000
/* req_new_flush(): every member rather than one. */
#define IRAID_ALL_MEMBERS UINT32_MAX

enum part_op { PART_READ, PART_WRITE, PART_FLUSH, PART_DEMOTE, PART_UNMAP };

/* uCache's DEMOTE of the embedded target (defined, with its argument, in
 * backend/iscsi/target.h: a vendor opcode laid out as WRITE(16), and the
 * vendor VPD page whose byte 4 bit 0 says the target's L2 takes it). */
#define IRAID_OP_DEMOTE 0xc0
#define IRAID_VPD_UCACHE 0xc0

/* What a REBUILDING member's rebuild covers (md's bitmap-based recovery):
 * UNDECIDED until its superblock is read back (sweep.c), then BITMAP when
 * meta_member_resume_ok() proves it missed only the regions of vol->missed
 * (member_ok() then trusts it outside them), else FULL (every stripe). */
enum rebuild_mode { REBUILD_FULL, REBUILD_UNDECIDED, REBUILD_BITMAP };

struct iraid_member {
    struct iraid_volume *vol;
    uint32_t idx;
    char *url;
    struct iraid_chap chap;        /* its logins' CHAP (user "": none) */
    struct iscsi_context *iscsi;   /* NULL while DOWN */
    int lun;
    int fd;                        /* registered on the loop, or -1 */
    uint64_t flush_id;             /* member_kick's deferred write, or 0 */
    uint64_t nblocks;
    uint32_t block_size;
    enum iraid_member_state state;
    int teardown;                  /* failed: drop the session outside libiscsi */
    uint64_t retry_at;             /* DOWN: next login attempt (ms) */
    uint64_t deadline;             /* RECONNECTING: give up at (ms) */
    uint64_t heard_ms;             /* live: the target last sent something, or
                                    * its session last owed nothing */
    int pinging;                   /* a NOP-Out of ours is in flight */
    uint32_t backoff_ms;
    uint64_t rebuild_next;         /* REBUILDING: stripes below are current */
    uint32_t epoch;                /* bumped on every return: stale sweeps stop */
    enum rebuild_mode rebuild_mode; /* REBUILDING: what the rebuild covers */
    /* When it went DOWN it held every write the others did, except those
     * the write-intent bitmap covers (it was UP, or resyncing from the
     * bitmap): its return may be resynced from the bitmap (meta.c proves it). */
    int missed_ok;
    /* Its target's L2 takes DEMOTE (VPD page IRAID_VPD_UCACHE, asked at
     * iraid_open): reads for the I/O node's L1 carry DPO, and blocks
     * the L1 evicts are demoted to it. */
    int ucache;
    /* The same page's room (target.h), asked at iraid_open: room_known
     * when its target said how many bytes its backing store has free
     * (room_free) and how many of the LUN it may still allocate there
     * (room_unalloc); iraid_room_for_new_blocks() sums them. */
    int room_known;
    uint64_t room_free, room_unalloc;
    /* READ CAPACITY(16) says LBPME and LBPRZ: it takes UNMAP and reads
     * unmapped blocks as zeros (what unmap.c needs to keep parity right). */
    int unmap_zeroes;
};

struct iraid_part {
    struct iraid_req *req;
    struct iraid_member *m;
    struct scsi_task *task;        /* set while queued in libiscsi */
    enum part_op op;
    int fua;
    uint64_t member_off;           /* bytes, from the member's first byte */
    uint64_t len;                  /* bytes */
    struct scsi_iovec *iov;
    int niov, iov_cap;
    int ua_retries;                /* sent again after UNIT ATTENTION */
};

struct iraid_req {
    struct iraid_volume *vol;
    struct iraid_req *prev, *next; /* the volume's in-flight list */
    iraid_cb cb;
    void *user;
    int status;
    int silent;                    /* failed submission: never call cb */
    int tolerate_down;             /* a part lost with its member is no error */
    int lost;                      /* parts tolerated that way */
    uint32_t pending;              /* parts queued and not yet done */
    struct iraid_part *parts;
    uint32_t nparts, parts_cap;
    void (*next_phase)(struct iraid_req *req);
    void *owner;                   /* the stripe op or meta write it serves */
    /* Where part_done records the index of a member whose READ failed
     * while it stays live (a medium error: the member answers, so it is
     * not failed), or NULL.  User reads retry that range from the others. */
    int *read_err_member;
    int dpo;                       /* READ parts carry DPO (IRAID_READ_DPO) */
};

struct iov_cursor {
    const struct iovec *iov;
    int iovcnt;
    int i;
    size_t off;                    /* inside iov[i] */
};

/* A user read or write of a redundant level, served stripe by stripe. */
struct iraid_io {
    struct iraid_volume *vol;
    iraid_cb cb;
    void *user;
    int status;
    int write;
    int submitting;                /* inside the public call: defer cb */
    uint32_t pending;              /* stripe ops (or the direct read) left */
    uint64_t off, len;
    struct iovec *iov;             /* copy of the caller's array */
    int iovcnt;
    int read_err;                  /* direct read: member with a read error, or -1 */
    int dpo;                       /* IRAID_READ_DPO: the direct read carries DPO */
    uint64_t timer;                /* deferred completion */
    struct iraid_io *dnext;        /* vol->deferred */
};

/* A stripe write's claim on its region of the write-intent bitmap, and
 * its place among the metadata's waiters.  meta.c owns every field but
 * ready, which the owner sets: meta.c calls it once the metadata waited
 * for is durable (status 0) or could not be written (the error). */
struct meta_intent {
    uint32_t region;
    int in_region;                 /* counted in the region's active writes */
    uint32_t bm_blk;               /* metadata block and generations waited for */
    uint64_t need_bm, need_sb;
    struct meta_intent *next;      /* meta's list of waiters */
    void (*ready)(struct meta_intent *mi, int status);
};

enum sop_kind { SOP_READ, SOP_WRITE, SOP_RESYNC, SOP_SCRUB, SOP_REBUILD, SOP_UNMAP };

struct stripe_op;
typedef void (*sop_done_fn)(struct stripe_op *op, int status);

struct stripe_op {
    struct iraid_volume *vol;
    enum sop_kind kind;
    uint64_t stripe;
    uint64_t nstripes;             /* stripes locked from stripe on: 1, or a
                                    * multi-stripe WRITE or UNMAP of whole
                                    * RAID-5 stripes, or a RAID-5 sweep's
                                    * REBUILD or SCRUB */
    uint64_t seq;                  /* start order (vol->sop_seq): lock order */
    struct iov_cursor cur;         /* READ/WRITE: caller's bytes of this op */
    uint64_t lo[IRAID_MAX_MEMBERS], hi[IRAID_MAX_MEMBERS]; /* per data index, in-chunk */
    uint64_t rlo, rhi;             /* rows touched: union of [lo, hi) */
    uint32_t target;               /* REBUILD: the member rebuilt */
    int mode;                      /* level's plan for this round */
    int phase;                     /* 0 reading, 1 writing */
    int retries;
    int xmember;                   /* READ: member reconstructed, or -1 */
    int src;                       /* RAID-1 REBUILD/RESYNC: the copy its plan
                                    * read, or -1 */
    int read_err;                  /* member whose read failed this round, or -1 */
    uint64_t retry_timer;          /* WRITE: a deferred retry (sop_retry_later) */
    int avoid;                     /* READ: live member treated as missing (its read
                                    * failed: reconstructed instead), or -1 */
    int rewriting;                 /* READ: writing avoid's rows back (REWRITE) */
    struct iov_cursor xcur;        /* READ: where its bytes go */
    void (*resume)(struct stripe_op *op);
    uint64_t mismatches;           /* SCRUB */
    uint8_t *buf;                  /* nmembers x nstripes chunks: rows as
                                    * read (sop_mbuf) */
    uint8_t *nd;                   /* data chunks as they will be (RAID-5) */
    uint8_t *par;                  /* new parity rows (RAID-5) */
    sop_done_fn done;
    void *user;
    /* A plan of the op's own (SOP_UNMAP: unmap.c, above stripe.c), used
     * instead of the level's sop_plan; NULL for every other kind. */
    int (*plan)(struct stripe_op *op, struct iraid_req *req);
    struct stripe_op *prev, *next; /* vol->active: holders of a stripe lock */
    struct stripe_op *wait_next;   /* queued behind this holder */
    /* Ordered completion (sop_order): after is an older op this one must
     * not finish before, then the op that must not finish before this
     * one; parked: done first, its lock kept and status held until after
     * finishes. */
    struct stripe_op *after, *then;
    int parked, parked_status;
    int skipped;                   /* RESYNC/SCRUB: a member missing, nothing done */
    struct meta_intent intent;     /* WRITE: the region's bit; degraded: the stale mask */
};

/* Per-level behaviour.  RAID-0 plans reads and writes straight into parts;
 * the redundant levels read straight only while every member is UP and do
 * everything else through stripe ops. */
struct iraid_level_ops {
    const char *name;
    int (*plan_read)(struct iraid_req *req, uint64_t off, uint64_t len, struct iov_cursor *cur);
    int (*plan_write)(struct iraid_req *req, uint64_t off, uint64_t len, struct iov_cursor *cur);
    /* Stripe ops: plan the first round (reads, or writes when none are
     * needed) into req; after_read plans the next round. */
    int (*sop_plan)(struct stripe_op *op, struct iraid_req *req);
    int (*sop_after_read)(struct stripe_op *op, struct iraid_req *req);
    /* A READ op served around op->avoid (its read failed): plan writing
     * the rows read from the others back to op->avoid (md's read repair). */
    int (*sop_repair)(struct stripe_op *op, struct iraid_req *req);
};

struct iraid_sweep {
    struct iraid_volume *vol;
    enum sop_kind kind;
    uint64_t next, end;            /* stripes */
    uint32_t target;               /* REBUILD */
    uint32_t epoch;                /* REBUILD: the target's epoch at start */
    uint64_t timer;                /* next step */
    int running;
    int status;
    uint64_t mismatches, skipped;
    uint64_t done;                 /* stripes completed */
    uint32_t inflight;             /* ops started and not yet done */
    struct stripe_op *last;        /* the newest of them, or NULL */
    double pace_at_ms;             /* paced: when the next stripe may start */
    iraid_scrub_cb cb;
    void *user;
    int (*want)(const struct iraid_volume *vol, uint64_t stripe); /* NULL: every stripe */
    void (*finished)(struct iraid_volume *vol, struct iraid_sweep *sw);
};

struct iraid_meta;

struct iraid_volume {
    struct evloop *loop;
    const struct iraid_level_ops *ops;
    struct iraid_layout layout;
    struct iraid_member *members;
    uint32_t nmembers;
    uint32_t block_size;
    uint64_t data_off;             /* member bytes before stripe 0 (metadata) */
    int timeout_ms;
    int cmd_timeout_ms;
    char *iqn;
    uint64_t timer;
    struct iraid_req *inflight;
    struct stripe_op *active;
    uint64_t sop_seq;              /* stripe ops started so far */
    int closing;                   /* in iraid_close(): cancels are ECANCELED */
    struct iraid_meta *meta;       /* NULL for RAID-0 */
    int assume_clean;              /* cfg->assume_clean, for the first open */
    int start_dirty_degraded;      /* cfg->start_dirty_degraded */
    struct iraid_sweep rebuild, scrub, resync;
    struct iraid_sweep_pace pace;  /* iraid_set_sweep_pace(); rate NULL: none */
    uint64_t rebuild_retry_at;     /* 0: no rebuild wanted */
    uint64_t read_repairs;         /* stripe reads served around a member's read error */
    uint64_t read_rewrites;        /* ...whose rows were then written back to it */
    struct iraid_write_counts writes;  /* RAID-5 stripe writes by mode (raid5.c) */
    struct iraid_io *deferred;     /* completions waiting for their timer */
    /* Regions written while some member was stale (RAID-1/5), one bit each
     * of missed_region_stripes stripes, least significant first; what a
     * member back after a crash missed.  meta.c owns it (sets bits, clears
     * it when no member is stale); member.c reads it in member_ok(). */
    uint8_t *missed;
    uint64_t missed_region_stripes;
    int rebuild_probe;             /* a returning member's superblock being read */
    /* meta_member_stale() while the metadata is open, else NULL: member.c
     * sits below meta.c and reports a failed member through it. */
    void (*member_stale)(struct iraid_volume *vol, uint32_t member, int stale);
    struct iraid_probe_op *probes; /* replacement LUNs being checked (probe.c) */
    const struct iraid_observer *observer; /* cfg->observer, or NULL */
    /* Inside iraid_open until the dirty regions adopted from the members
     * are resynced (volume.c): their bits must stay (meta_tick). */
    int opening;
};

/* ---- member.c: member sessions and states ---- */
/* A fresh context for m->url (sets m->lun), not connected; NULL (logged)
 * on a bad URL or no memory.  *url is the caller's to destroy. */
struct iscsi_context *member_context(struct iraid_member *m, struct iscsi_url **url);
int member_errno(const struct iraid_member *m, const char *what, int status,
                 const struct scsi_task *task, uint64_t lba);
int member_live(const struct iraid_member *m);
int member_ok(const struct iraid_member *m, uint64_t stripe);
void member_watch(struct iraid_member *m, int force);
/* Commands were queued on m: libiscsi writes them once the loop's running
 * callback returns (outside libiscsi), and the socket is watched for
 * writing only if they do not all fit (member.c). */
void member_kick(struct iraid_member *m);
void member_fail(struct iraid_member *m, const char *why);
void member_rebuilt(struct iraid_member *m);
void member_needs_rebuild(struct iraid_member *m);
void member_tick(struct iraid_member *m);
uint32_t vol_redundancy(const struct iraid_volume *vol);
uint32_t members_not_live(const struct iraid_volume *vol);
uint32_t members_not_up(const struct iraid_volume *vol);
int all_members_up(const struct iraid_volume *vol);
uint32_t stripe_missing(const struct iraid_volume *vol, uint64_t stripe);
void members_cancel_all(struct iraid_volume *vol);
int members_login(struct iraid_volume *vol, const struct iraid_config *cfg, int level);
void members_logout(struct iraid_volume *vol);

/* ---- request.c: requests, parts, cursors ---- */
struct iraid_req *req_new(struct iraid_volume *vol, iraid_cb cb, void *user);
void req_free(struct iraid_req *req);
struct iraid_part *part_new(struct iraid_req *req, uint32_t member, enum part_op op,
                            uint64_t member_off);
struct iraid_part *part_for(struct iraid_req *req, uint32_t member, enum part_op op,
                            uint64_t member_off, uint64_t len);
int part_add_iov(struct iraid_part *p, void *base, size_t len);
int part_take(struct iraid_part *p, struct iov_cursor *cur, uint64_t len);
void cursor_skip(struct iov_cursor *cur, uint64_t len);
void cursor_copy(struct iov_cursor *cur, uint8_t *buf, uint64_t len, int to_buf);
/* Queues an internal request; on failure it completes it (cb with the
 * error) before returning, so the caller only ever waits for cb. */
void req_launch(struct iraid_req *req);
/* First submission from a public entry point: on failure req ends without
 * calling cb and the error is returned. */
int req_start(struct iraid_req *req);
struct iraid_req *req_new_flush(struct iraid_volume *vol, uint32_t member, iraid_cb cb,
                                void *user);
/* iraid_open()'s waits on its private loop: req_sync_done as the cb, user
 * a struct req_sync; req_sync_run() runs the loop until it is done. */
struct req_sync {
    int done;
    int status;
};
void req_sync_done(struct iraid_volume *vol, int status, void *user);
int req_sync_run(struct iraid_volume *vol, struct req_sync *w);

/* ---- raid0.c ---- */
extern const struct iraid_level_ops iraid_raid0_ops;
int iraid_striped_read(struct iraid_req *req, uint64_t off, uint64_t len,
                       struct iov_cursor *cur);
/* Plans DEMOTE parts of the data chunks of [off, off + len) (no parity). */
int iraid_striped_demote(struct iraid_req *req, uint64_t off, uint64_t len,
                         struct iov_cursor *cur);

/* ---- meta.c: superblock and write-intent bitmap (RAID-1/5) ---- */
void iraid_meta_close(struct iraid_volume *vol);
/* Write intent of a write to stripe: 0 when it may write now; 1 when mi
 * was queued and mi->ready runs once the metadata it needs is durable. */
int meta_intent_begin(struct iraid_volume *vol, struct meta_intent *mi, uint64_t stripe);
void meta_intent_end(struct iraid_volume *vol, struct meta_intent *mi);
/* 0 when the superblock is durable, else mi is queued as above. */
int meta_wait_sb(struct iraid_volume *vol, struct meta_intent *mi);
void meta_cancel_waiter(struct iraid_volume *vol, struct meta_intent *mi);
/* The same for a caller without a stripe op: 1 when the superblock (stale
 * mask) as of now is durable already (cb is not called); 0 when queued:
 * cb runs once later, with 0 or the metadata write's error, or with
 * -ECANCELED from iraid_close(); -ENOMEM. */
int meta_sb_wait(struct iraid_volume *vol, iraid_cb cb, void *user);
/* iraid_flush() of a redundant level: the one flush that leaves the
 * metadata consistent with what it reports durable. */
int meta_flush(struct iraid_volume *vol, iraid_cb cb, void *user);
/* iraid_mark_clean() of a redundant level (contract in volume.h). */
int meta_mark_clean(struct iraid_volume *vol, iraid_cb cb, void *user);
void meta_member_stale(struct iraid_volume *vol, uint32_t member, int stale);
void meta_tick(struct iraid_volume *vol);
uint64_t meta_dirty_regions(const struct iraid_volume *vol);
uint64_t meta_region_stripes(const struct iraid_volume *vol);
int meta_region_dirty_stripe(const struct iraid_volume *vol, uint64_t stripe);
/* Bitmap resync of a returning member: whether the superblock sb read back
 * from it proves it missed only the writes vol->missed covers; stripes of
 * vol->missed in total and below a limit (progress). */
int meta_member_resume_ok(struct iraid_volume *vol, uint32_t member, const uint8_t *sb);
int meta_missed_stripe(const struct iraid_volume *vol, uint64_t stripe);
uint64_t meta_missed_stripes_below(const struct iraid_volume *vol, uint64_t limit);
uint64_t meta_missed_regions(const struct iraid_volume *vol);

/* ---- meta_open.c: reading and stamping the metadata at open ---- */
int iraid_meta_open(struct iraid_volume *vol);
int meta_clear_bitmap(struct iraid_volume *vol);

/* ---- stripe.c: stripe ops ---- */
struct stripe_op *sop_new(struct iraid_volume *vol, enum sop_kind kind, uint64_t stripe,
                          sop_done_fn done, void *user);
void sop_start(struct stripe_op *op);
void sop_order(struct stripe_op *later, struct stripe_op *earlier);
uint64_t sop_last(const struct stripe_op *op);
void sop_cancel_waiting(struct iraid_volume *vol);
/* For the levels' plans: member's chunk of the op's row buffer, buffers
 * allocated on first use, and parts moving rows [lo, hi) of the stripe. */
uint8_t *sop_mbuf(const struct stripe_op *op, uint32_t member);
int sop_buffers(struct stripe_op *op);
int sop_read_rows(struct iraid_req *req, struct stripe_op *op, uint32_t member, uint64_t lo,
                  uint64_t hi);
int sop_write_rows(struct iraid_req *req, struct stripe_op *op, uint32_t member,
                   uint8_t *rows, uint64_t lo, uint64_t hi);
int sop_direct_rows(struct iraid_req *req, struct stripe_op *op, uint32_t member,
                    enum part_op opc, struct iov_cursor *cur, uint64_t lo, uint64_t hi);

/* ---- raid1.c, raid5.c ---- */
extern const struct iraid_level_ops iraid_raid1_ops, iraid_raid5_ops;

/* ---- io.c: user reads and writes (iraid_readv/iraid_writev) ---- */
void io_cancel_deferred(struct iraid_volume *vol);
/* One piece of io ended: the last one calls io->cb (deferred to the loop
 * while io->submitting), then frees io (and io->iov). */
void io_piece_done(struct iraid_io *io, int status);

/* ---- probe.c: iraid_probe_member_async ---- */
/* iraid_close(): every probe still running calls back with -ECANCELED. */
void probe_cancel_all(struct iraid_volume *vol);

/* ---- sweep.c: rebuild, scrub, resync ---- */
void sweep_start(struct iraid_volume *vol, struct iraid_sweep *sw);
void rebuild_kick(struct iraid_volume *vol);
void sweep_cancel_timers(struct iraid_volume *vol);
int sweep_resync_dirty(struct iraid_volume *vol);

#endif
