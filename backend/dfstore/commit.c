/* Commit path of the datafile store (see commit.h). */
#include "backend/dfstore/commit.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "backend/dfstore/journal.h"
#include "backend/dfstore/space.h"
#include "backend/dfstore/unmap.h"
#include "common/log.h"

#define DF_COMMIT_MS 1000

/* Commits the entries the finished flush covers; their unmapped blocks
 * are free from now on. */
static int commit_entries(struct df_commit *c)
{
    struct df_journal *j = c->journal;
    int rc = df_journal_commit(j, c->flush_mark);

    if (rc < 0)
        return rc;
    /* The freeing is durable: those blocks may be discarded, and reused
     * once that is done. */
    for (size_t i = 0; i < c->flush_mark; i++) {
        if (j->log[i].kind != LOG_UNMAP)
            continue;
        if (!c->unmap)
            df_space_clear(c->space, j->log[i].vblock);
        else if (df_unmap_queue(c->unmap, j->log[i].vblock) < 0)
            log_warn("dfstore: no memory to queue a discard: volume block %" PRIu64
                     " stays allocated on the targets", j->log[i].vblock);
    }
    df_journal_drop(j, c->flush_mark);
    if (c->unmap)
        df_unmap_start(c->unmap);
    return 0;
}

static void flush_done(struct iraid_volume *vol, int status, void *user)
{
    struct df_commit *c = user;
    int waiting;

    if (status == 0)
        status = commit_entries(c);
    else
        log_error("dfstore: volume flush failed (%s); metadata not committed",
                  strerror(-status));
    c->state = COMMIT_IDLE;
    c->gen_done = c->gen_issued;
    waiting = c->round_done(c->ctx, status);
    if (c->again || waiting) {
        c->again = 0;
        df_commit_start(c);
    }
}

void df_commit_start(struct df_commit *c)
{
    int rc;

    if (c->state != COMMIT_IDLE) {
        c->again = 1;
        return;
    }
    c->state = COMMIT_FLUSHING;
    c->flush_mark = c->journal->log_len;
    c->dirty = 0;
    c->gen_issued++;
    if ((rc = df_l1_flush(c->l1, flush_done, c)) < 0) {
        log_error("dfstore: cannot start a volume flush: %s", strerror(-rc));
        c->state = COMMIT_IDLE;
        c->gen_done = c->gen_issued;
        c->dirty = 1;
        /* No new round for syncs still waiting: the flush would fail again
         * at once; the timer retries, since dirty is set. */
        (void)c->round_done(c->ctx, rc);
    }
}

int df_commit_due(size_t entries, int frees, int dirty, int young, int partial_young)
{
    if (entries > 0 && (frees || !partial_young))
        return 1;
    return dirty && !young;
}

/* Whether the pending entries free blocks (an unmap, a removal): those
 * are not held back, a full store waits for them. */
static int journal_frees(const struct df_journal *j)
{
    for (size_t i = 0; i < j->log_len; i++)
        if (j->log[i].kind == LOG_UNMAP || j->log[i].kind == LOG_REMOVE)
            return 1;
    return 0;
}

static void commit_tick(struct evloop *loop, uint64_t timer_id, void *user)
{
    struct df_commit *c = user;
    int young = df_l1_dirty_young(c->l1);

    if (df_commit_due(c->journal->log_len, journal_frees(c->journal), c->dirty, young,
                      young && df_l1_partial_young(c->l1)))
        df_commit_start(c);
    if (!(c->timer = evloop_add_timer(loop, DF_COMMIT_MS, commit_tick, c)))
        log_error("dfstore: cannot re-arm the commit timer: background commits stop");
}

int df_commit_init(struct df_commit *c, struct evloop *loop, struct df_l1 *l1,
                   struct df_journal *journal, struct df_space *space,
                   int (*round_done)(void *ctx, int status), void *ctx)
{
    *c = (struct df_commit){ .loop = loop, .l1 = l1, .journal = journal, .space = space,
                             .round_done = round_done, .ctx = ctx };
    if (!(c->timer = evloop_add_timer(loop, DF_COMMIT_MS, commit_tick, c)))
        return -ENOMEM;
    return 0;
}

void df_commit_fini(struct df_commit *c)
{
    evloop_del_timer(c->loop, c->timer);
}
