/* The L1's volume reads past the cache (bypasses, and every read when the
 * L1 is off), coalesced (issue 27): at most L1_RQ_DEPTH of them in flight
 * per volume; the rest wait in a queue, and when one completes the oldest
 * waiting read goes out together with the waiting reads that continue it
 * on the volume, on either side, as one volume read (up to L1_RQ_MAX_BYTES
 * and L1_RQ_MAX_IOV vectors).  Tile rows of several clients that lie side
 * by side, read at once, so reach the targets as one command each few
 * instead of one each.  A read that finds fewer than L1_RQ_DEPTH in flight
 * and nobody waiting goes out at once: a lone reader waits for nothing.
 *
 * Why this is safe to hold back: the store runs a datafile's reads only
 * beside reads (never beside its writes), and the L1 reads past itself
 * only bytes it holds no dirty copy of, so no write can pass a waiting
 * read of the same bytes.  Contract: iraid_readv's (0 and cb exactly once
 * later from the loop, or a negative errno and no cb); a read that waited
 * and whose volume read could not start gets the error in its cb. */
#include "backend/dfstore/l1cache.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

struct l1_rq {
    struct l1_rq *prev, *next;      /* the queue, oldest first */
    struct l1_rq *gnext;            /* the next of its group, by offset */
    uint64_t off, len;
    iraid_cb cb;
    void *user;
    int niov;
    struct iovec iov[];
};

/* One volume read of a group of reads, adjacent, by offset. */
struct rq_group {
    struct df_l1 *l1;
    struct l1_rq *first;
    struct iovec *iov;
};

static uint64_t key_of(const struct l1_rq *r) { return (uint64_t)(uintptr_t)r; }

static void rq_unlink(struct df_l1 *l1, struct l1_rq *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        l1->rq_head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        l1->rq_tail = r->prev;
    if (u64map_get(&l1->rq_at, r->off) == key_of(r))
        u64map_del(&l1->rq_at, r->off);
    if (u64map_get(&l1->rq_end, r->off + r->len) == key_of(r))
        u64map_del(&l1->rq_end, r->off + r->len);
    l1->rq_queued--;
}

static void group_done(struct iraid_volume *vol, int status, void *user)
{
    struct rq_group *g = user;
    struct df_l1 *l1 = g->l1;
    struct l1_rq *r = g->first;

    l1->rq_inflight--;
    free(g->iov);
    free(g);
    while (r) {
        struct l1_rq *next = r->gnext;
        r->cb(vol, status, r->user);
        free(r);
        r = next;
    }
    l1_rq_pump(l1);
}

/* Sends the group first.. (linked by gnext, by offset) as one volume read. */
static int group_issue(struct df_l1 *l1, struct l1_rq *first, int niov)
{
    struct rq_group *g = malloc(sizeof(*g));
    struct iovec *iov = malloc((size_t)niov * sizeof(*iov));
    int n = 0, rc = -ENOMEM;

    if (g && iov) {
        for (struct l1_rq *r = first; r; r = r->gnext) {
            memcpy(iov + n, r->iov, (size_t)r->niov * sizeof(*iov));
            n += r->niov;
        }
        *g = (struct rq_group){ l1, first, iov };
        rc = iraid_readv(l1->vol, first->off, iov, n, group_done, g);
    }
    if (rc < 0) {
        free(iov);
        free(g);
        return rc;
    }
    l1->rq_inflight++;
    l1->stats_rq.volume_reads++;
    for (struct l1_rq *r = first->gnext; r; r = r->gnext)
        l1->stats_rq.coalesced++;
    return 0;
}

void l1_rq_pump(struct df_l1 *l1)
{
    while (l1->rq_head && l1->rq_inflight < L1_RQ_DEPTH) {
        struct l1_rq *h = l1->rq_head, *first, *last, *r;
        uint64_t bytes = h->len, v;
        int niov = h->niov, rc;

        rq_unlink(l1, h);
        h->gnext = NULL;
        first = last = h;
        /* the waiting reads that continue it, after and before */
        while ((v = u64map_get(&l1->rq_at, last->off + last->len)) != U64MAP_NONE &&
               bytes + (r = (struct l1_rq *)(uintptr_t)v)->len <= L1_RQ_MAX_BYTES &&
               niov + r->niov <= L1_RQ_MAX_IOV) {
            rq_unlink(l1, r);
            r->gnext = NULL;
            last->gnext = r;
            last = r;
            bytes += r->len;
            niov += r->niov;
        }
        while ((v = u64map_get(&l1->rq_end, first->off)) != U64MAP_NONE &&
               bytes + (r = (struct l1_rq *)(uintptr_t)v)->len <= L1_RQ_MAX_BYTES &&
               niov + r->niov <= L1_RQ_MAX_IOV) {
            rq_unlink(l1, r);
            r->gnext = first;
            first = r;
            bytes += r->len;
            niov += r->niov;
        }
        if ((rc = group_issue(l1, first, niov)) < 0) {
            /* every read of the group has waited: its cb gets the error */
            log_error("dfstore: cannot start a volume read of %llu bytes: %s",
                      (unsigned long long)bytes, strerror(-rc));
            for (r = first; r;) {
                struct l1_rq *next = r->gnext;
                r->cb(l1->vol, rc, r->user);
                free(r);
                r = next;
            }
        }
    }
}

int l1_vol_readv(struct df_l1 *l1, uint64_t off, const struct iovec *iov, int niov, iraid_cb cb,
                 void *user)
{
    struct l1_rq *r;
    uint64_t len = l1_iov_len(iov, niov);
    int rc;

    if (!cb || len == 0 || niov > L1_RQ_MAX_IOV)
        return iraid_readv(l1->vol, off, iov, niov, cb, user);
    if (!(r = malloc(sizeof(*r) + (size_t)niov * sizeof(*iov))))
        return -ENOMEM;
    *r = (struct l1_rq){ .off = off, .len = len, .cb = cb, .user = user, .niov = niov };
    memcpy(r->iov, iov, (size_t)niov * sizeof(*iov));
    if (!l1->rq_head && l1->rq_inflight < L1_RQ_DEPTH) {
        if ((rc = group_issue(l1, r, niov)) < 0)
            free(r);
        return rc;
    }
    /* A put that fails only leaves r unfindable by its neighbours. */
    if (u64map_get(&l1->rq_at, off) == U64MAP_NONE)
        (void)u64map_put(&l1->rq_at, off, key_of(r));
    if (u64map_get(&l1->rq_end, off + len) == U64MAP_NONE)
        (void)u64map_put(&l1->rq_end, off + len, key_of(r));
    r->prev = l1->rq_tail;
    if (l1->rq_tail)
        l1->rq_tail->next = r;
    else
        l1->rq_head = r;
    l1->rq_tail = r;
    l1->rq_queued++;
    return 0;
}
