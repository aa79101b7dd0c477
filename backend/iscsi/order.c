/* Write ordering on a LUN: ORWRITE reads, merges and writes back its
 * blocks with two asynchronous backing I/Os, so another write to the same
 * blocks must neither land between them nor run beside them.  Writers take
 * a range here before their backing I/O starts: ORWRITE exclusively, the
 * other writers shared.  A writer that conflicts with an active one, or
 * with an earlier waiting one (no overtaking, so ORWRITE does not starve),
 * waits in the LUN's FIFO and runs when the conflicting task leaves.
 * While no exclusive task is active or waiting, shared writers are only
 * linked in (no scan), so plain writes pay O(1).
 * READs do not take part: each block they return is either before or
 * after the ORWRITE, as for any write racing a read.
 */
#include "config.h"

#include "backend/iscsi/tgt.h"

static int overlap(const struct tgt_task *a, const struct tgt_task *b)
{
    return a->ord_lba < b->ord_lba + b->ord_n && b->ord_lba < a->ord_lba + a->ord_n;
}

static int conflicts(const struct tgt_task *a, const struct tgt_task *b)
{
    return (a->ord_excl || b->ord_excl) && overlap(a, b);
}

/* Whether t conflicts with an active task or a waiting one before it
 * (stop: first waiter not to look at, NULL for all). */
static int blocked(const struct tgt_lun *l, const struct tgt_task *t, const struct tgt_task *stop)
{
    for (const struct tgt_task *a = l->ord_active; a; a = a->ord_next)
        if (conflicts(a, t))
            return 1;
    for (const struct tgt_task *w = l->ord_wait_head; w && w != stop; w = w->ord_next)
        if (conflicts(w, t))
            return 1;
    return 0;
}

static void link_active(struct tgt_lun *l, struct tgt_task *t)
{
    t->ord_state = ORD_ACTIVE;
    t->ord_prev = NULL;
    t->ord_next = l->ord_active;
    if (l->ord_active)
        l->ord_active->ord_prev = t;
    l->ord_active = t;
}

static void unlink_task(struct tgt_lun *l, struct tgt_task *t)
{
    struct tgt_task **head = t->ord_state == ORD_ACTIVE ? &l->ord_active : &l->ord_wait_head;

    if (t->ord_prev)
        t->ord_prev->ord_next = t->ord_next;
    else
        *head = t->ord_next;
    if (t->ord_next)
        t->ord_next->ord_prev = t->ord_prev;
    else if (t->ord_state == ORD_WAITING)
        l->ord_wait_tail = t->ord_prev;
    t->ord_next = t->ord_prev = NULL;
}

/* Starts every waiter that no longer conflicts.  Running one may end
 * tasks (memory store: synchronously), which calls back into leave(): the
 * walk then restarts instead of nesting. */
static void wake(struct tgt_lun *l)
{
    if (l->ord_walking) {
        l->ord_again = 1;
        return;
    }
    l->ord_walking = 1;
    do {
        struct tgt_task *w;
        l->ord_again = 0;
        for (w = l->ord_wait_head; w; w = w->ord_next)
            if (!blocked(l, w, w))
                break;
        if (w) {
            unlink_task(l, w);
            link_active(l, w);
            w->ord_run(w);   /* may free w */
            l->ord_again = 1;
        }
    } while (l->ord_again);
    l->ord_walking = 0;
}

void tgt_order_run(struct tgt_task *t, uint64_t lba, uint64_t n, int excl,
                   void (*run)(struct tgt_task *t))
{
    struct tgt_lun *l = t->lun;

    t->ord_lba = lba;
    t->ord_n = n;
    t->ord_excl = excl;
    t->ord_run = run;
    if (excl)
        l->ord_nexcl++;
    if ((!excl && l->ord_nexcl == 0) || !blocked(l, t, NULL)) {
        link_active(l, t);
        run(t);
        return;
    }
    t->ord_state = ORD_WAITING;
    t->ord_next = NULL;
    t->ord_prev = l->ord_wait_tail;
    if (l->ord_wait_tail)
        l->ord_wait_tail->ord_next = t;
    else
        l->ord_wait_head = t;
    l->ord_wait_tail = t;
}

void tgt_order_leave(struct tgt_task *t)
{
    struct tgt_lun *l = t->lun;

    if (t->ord_state == ORD_NONE)
        return;
    unlink_task(l, t);
    t->ord_state = ORD_NONE;
    if (t->ord_excl)
        l->ord_nexcl--;
    if (l->ord_wait_head)
        wake(l);
}
