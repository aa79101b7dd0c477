/* Datafile store internals shared by its files; nothing here is API (see
 * dfstore.h for the contract).
 *
 * Files, each calling only those below it:
 *   open.c     open (loading the journal), settings, counters, close
 *   dfstore.c  operations: submission, per-datafile FIFOs, delivery of
 *              completions, metadata updates after I/O
 *   io.c       the volume I/O of one operation, issued in rounds
 *   plan.c     write planning: pieces, blocks, placement (runs per region,
 *              space.h), write gathering
 *   commit.c   commit rounds (volume flush, then journal commit)
 *   unmap.c    discards of the blocks a commit freed (unmap.h)
 *   journal.c  pending-change log and the LMDB records
 *   space.c    free-space bitmap and the placement rule
 *   readahead.c  sequential streams per datafile, prefetched into the L1
 *              when a read starts (readahead.h)
 *   l1cache.c  the L1 cache (write-back) that io.c's volume reads and
 *              writes and commit.c's flushes go through (l1cache.h)
 *   l1prefetch.c  the L1's read-ahead pool: prefetches into its slots
 * Upward, only through function pointers given at setup: io.c reports a
 * finished round to op->round_done, commit.c a finished commit round to
 * round_done, journal.c stored records to the loader at open.
 *
 * Memory holds the truth while running: per datafile its size and a hash
 * of file block -> volume block (struct datafile, owned by the store's
 * `files` map), plus the bitmap of volume blocks in use (space.c).  Every
 * metadata change is also appended to the journal's pending log, and only
 * after the data it points to was written (a MAP is logged when the write
 * of its block completed).
 *
 * Invariant that makes zero-fill cheap: bytes of an allocated block at or
 * past the datafile's size are zero.  New blocks are written whole (zeros
 * around the data); shrinking truncate zeroes the tail of the block that
 * holds the new end.
 *
 * Operations (struct df_op, owned by the store from submission until its
 * callback returned): each datafile has a FIFO of operations and runs one
 * at a time (the head), except that reads queued right behind a running
 * read run with it (they change nothing); a read that finishes before an
 * earlier one is held (df_op.finished) until that one is delivered, so
 * operations on one datafile complete in order and a read-modify-write
 * never races another write of the same datafile; one operation sends all
 * its block I/O at once.  Writes queued
 * behind a starting write ride along with it (write gathering, plan.c):
 * the leader does the block I/O of all of them, so that the rows two
 * clients write into the same blocks become one volume write instead of
 * one per row; all complete, in order, when the leader's I/O is done.
 * dfstore_sync(0) waits in a global list (all operations in submission
 * order) until everything submitted before it is done.  Completions are
 * delivered from a zero-delay timer, never inside the submitting call.
 *
 * Phases of an operation (df_op.started): NONE while queued; starting
 * sets READ (for any kind: "started"); a write-like operation with block
 * I/O then goes to RMW_READ (reading the old sectors a read-modify-write
 * keeps) if it needs one, and WRITE.  A write gathered into a leader's
 * group is set to WRITE and waits for the leader. */
#ifndef IPVFS_DFSTORE_INTERNAL_H
#define IPVFS_DFSTORE_INTERNAL_H

#include <stdint.h>
#include <sys/uio.h>

#include "backend/dfstore/commit.h"
#include "backend/dfstore/dfstore.h"
#include "backend/dfstore/journal.h"
#include "backend/dfstore/l1cache.h"
#include "backend/dfstore/readahead.h"
#include "backend/dfstore/space.h"
#include "backend/dfstore/unmap.h"
#include "common/u64map.h"

#define DF_MAX_SIZE (1ull << 50)          /* largest datafile (1 PiB) */
/* No volume block: also what a block map lookup of a hole gives. */
#define DF_NO_BLOCK U64MAP_NONE

/* Vectors in one volume write of a gathered block: writev takes at most
 * IOV_MAX (1024) and iSCSI adds its own. */
#define GATHER_MAX_IOV 256

enum op_kind { OP_WRITE, OP_READ, OP_TRUNCATE, OP_PREALLOC, OP_REMOVE, OP_SYNC };

enum { PHASE_NONE, PHASE_RMW_READ, PHASE_WRITE, PHASE_READ };

struct datafile {
    uint64_t handle;
    uint64_t size;
    int exists;                      /* has a record (committed or pending) */
    struct u64map blocks;            /* file block -> volume block */
    struct u64map runs;              /* region (file block / DF_RUN_BLOCKS) -> its
                                      * volume run's first block (space.h) */
    struct df_op *head, *tail;       /* FIFO; head is running */
    struct df_ra ra;                 /* its read streams (readahead.h) */
};

/* One volume block an operation writes or reads. */
struct blk_io {
    struct df_op *op;
    uint64_t fblock, vblock;
    int is_new;
    int zeroed;                      /* new, and still the volume's first zeros:
                                      * only the written sectors go out */
    int gather;                      /* pieces in order, written in place */
    uint32_t first, npieces;         /* into op->pieces */
    uint32_t lo, hi;                 /* in-block byte range written */
    uint8_t *buf;                    /* bounce: RMW span or merged pieces */
    uint8_t *edge;                   /* head/tail sectors for one piece */
    struct iovec iov[3];
    int niov;
};

struct piece {
    uint64_t fblock;
    uint32_t in_off, len;
    uint32_t order;
    const uint8_t *data;
};

struct df_op {
    struct dfstore *ds;
    struct datafile *df;             /* NULL: sync of every datafile */
    enum op_kind kind;
    struct df_op *next;              /* datafile FIFO */
    struct df_op *gprev, *gnext;     /* global list, submission order */
    struct df_op *done_next;         /* delivery list */
    const struct ipvfs_pair *pairs;
    uint32_t npairs;
    int stream;                      /* read/write of DF_L1_STREAM_MIN bytes or more */
    const uint8_t *wdata;
    uint8_t *rdata;
    struct df_l1_loans *loans;       /* read: the caller's, or NULL (copies) */
    uint64_t arg;                    /* truncate/prealloc size */
    uint64_t ra_max;                 /* read: read-ahead window limit, 0 = off */
    dfstore_cb cb;
    void *user;
    int started;
    int finished;                    /* read done, waiting for the ones before it */
    int status;
    uint64_t value;
    uint32_t pending;                /* volume requests in flight */
    void (*round_done)(struct df_op *op);  /* io.c: the round finished */
    struct piece *pieces;
    struct blk_io *ios;
    uint32_t nios;
    uint64_t new_end;                /* write: end of the furthest byte */
    struct iovec *wiov;              /* write: the volume write being built */
    int wn, wcap;
    uint64_t woff, wend;             /* its volume range */
    uint64_t need_gen;               /* sync: commit round to wait for */
    uint32_t nfollow;                /* write leader: followers behind it */
};

struct dfstore {
    struct evloop *loop;
    struct iraid_volume *vol;
    uint32_t vbs;                    /* volume block size */
    struct df_journal journal;
    struct df_space space;
    struct df_commit commit;
    struct u64map files;             /* handle -> struct datafile * */
    uint64_t writes;                 /* write operations submitted */
    uint64_t writes_gathered;        /* followers taken into write groups */
    uint64_t reads_overlapped;       /* reads started behind a running read */
    uint64_t zero_fill_bytes;        /* zeros written into new blocks */
    uint64_t deliver_timer;
    struct df_op *gfirst, *glast;    /* unfinished operations */
    struct df_op *done_first, *done_last;
    uint8_t *zeros;                  /* DFSTORE_BLOCK zero bytes, never written */
    uint8_t *discard;                /* sink for unwanted sector bytes */
    struct df_l1 l1;                 /* in front of vol for io.c */
    struct df_unmap unmap;           /* freed blocks on their way back */
    uint64_t ra_default;             /* read-ahead window limit of plain reads */
};

/* dfstore.c, for open.c: datafile handle's state, made empty when new
 * (NULL without memory); commit.c's report of a finished commit round. */
struct datafile *df_get(struct dfstore *ds, uint64_t handle);
int df_commit_round_done(void *user, int status);

#endif
