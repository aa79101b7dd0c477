/* Commit path of the datafile store: rounds that make the journal's
 * pending entries durable, for syncs and in the background.
 *
 * States (struct df_commit.state):
 *   IDLE --df_commit_start--> FLUSHING --flush ok--> (LMDB txn) --> IDLE
 *                                  \--flush failed--> IDLE (the error is reported)
 * A round flushes the volume first (through the L1 cache, which writes its
 * dirty blocks back before the volume flush: l1cache.h), then commits the entries that were
 * pending when the flush was issued (flush_mark), so committed metadata
 * never points at data that is not durable; after the transaction the
 * blocks those entries unmapped are discarded on the volume and then
 * become free (unmap.h, space.h).  A start while a
 * round runs sets `again`: another round follows.  Rounds are numbered:
 * gen_issued counts rounds started, gen_done rounds finished (also when
 * failed); a sync waits for the first round issued after it became ready.
 * A timer starts a round every DF_COMMIT_MS while there are pending
 * entries or unflushed data (`dirty`, set by the store after a write),
 * unless that data is only dirty L1 blocks younger than L1_AGE_MS
 * (df_l1_dirty_young): those wait for their age.  Pending entries that
 * only map blocks or set sizes wait too while the L1's dirty blocks are
 * young and one of them has holes (df_l1_partial_young): writers are
 * still filling blocks, and the round, which must write the data of the
 * blocks it maps first, would write each such block back in pieces and
 * again once whole (3 x 3 tiles of 8 KiB rows, ranks out of step: 1852
 * volume writes for 2304 blocks instead of 48 runs, issue 27).  So a
 * block map waits at most L1_AGE_MS, as unsynced data may (a sync starts
 * its round at once); entries that free blocks never wait.  The rule is
 * df_commit_due's (pure; test_small_commit).
 *
 * Who owns what: the commit path owns its state and timer; it uses the
 * volume, journal and space it was given.  At the end of every round it
 * calls round_done(ctx, status) (the store wakes its syncs there); a
 * non-zero return asks for another round (syncs still wait for a later
 * one).  round_done may also run from inside df_commit_start when the
 * flush cannot even be started. */
#ifndef IPVFS_DFSTORE_COMMIT_H
#define IPVFS_DFSTORE_COMMIT_H

#include <stddef.h>
#include <stdint.h>

#include "common/evloop.h"
#include "backend/dfstore/l1cache.h"

struct df_journal;
struct df_space;
struct df_unmap;

enum df_commit_state { COMMIT_IDLE, COMMIT_FLUSHING };

struct df_commit {
    struct evloop *loop;
    struct df_l1 *l1;                /* the volume, behind the L1 */
    struct df_journal *journal;
    struct df_space *space;
    /* Where blocks freed by a round go (discarded, then free: unmap.h);
     * NULL: free at once.  The store sets it after df_commit_init. */
    struct df_unmap *unmap;
    int (*round_done)(void *ctx, int status);
    void *ctx;
    enum df_commit_state state;
    int again;
    int dirty;                       /* data written since the last flush */
    uint64_t gen_issued, gen_done;   /* commit rounds */
    size_t flush_mark;               /* log entries covered by this round */
    uint64_t timer;
};

/* Arms the background timer; 0 or -ENOMEM. */
int df_commit_init(struct df_commit *c, struct evloop *loop, struct df_l1 *l1,
                   struct df_journal *journal, struct df_space *space,
                   int (*round_done)(void *ctx, int status), void *ctx);
/* Disarms the timer; call when the state is IDLE. */
void df_commit_fini(struct df_commit *c);
/* Starts a round, or asks for one more after the running one. */
void df_commit_start(struct df_commit *c);
/* Whether the background timer starts a round: entries pending in the
 * journal (frees: one of them frees blocks), data written since the last
 * round (dirty), every dirty L1 block younger than L1_AGE_MS (young), and
 * one of them with holes besides (partial_young).  Pure. */
int df_commit_due(size_t entries, int frees, int dirty, int young, int partial_young);

#endif
