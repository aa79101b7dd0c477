/* common/evloop: timers in deadline order, cancel, many timers, deferred
 * calls (after the current event, before the next poll, outer ones never in
 * a nested run, a round that ran them does not block), fd readiness, and
 * fds removed during their own callback or another fd's, their number
 * reused at once, a stop asked inside a nested wait.  Every wait is
 * bounded: a broken loop fails, never hangs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <unistd.h>

#include "common/evloop.h"

#define MAX_EVENTS 64
#define ROUND_LIMIT 500         /* rounds of at most 10 ms before a test fails */

/* What the callbacks did, in order. */
struct trace {
    int ev[MAX_EVENTS];
    int n;
};

static void trace_add(struct trace *t, int what)
{
    assert_true(t->n < MAX_EVENTS);
    t->ev[t->n++] = what;
}

struct tagged {
    struct trace *trace;
    int tag;
};

static void record_timer(struct evloop *loop, uint64_t id, void *user)
{
    struct tagged *t = user;

    (void)loop;
    (void)id;
    trace_add(t->trace, t->tag);
}

/* Runs rounds until the trace holds n events, ROUND_LIMIT rounds at most. */
static void run_until(struct evloop *loop, const struct trace *t, int n)
{
    for (int i = 0; i < ROUND_LIMIT && t->n < n; i++)
        assert_int_equal(evloop_run_once(loop, 10), 0);
    assert_int_equal(t->n, n);
}

/* ---- timers ---------------------------------------------------------------- */

static void test_timers_deadline_order(void **state)
{
    static const uint64_t delay[] = { 40, 10, 30, 0, 20 };
    struct evloop *loop = evloop_create();
    struct tagged tags[5];
    struct trace t = { 0 };

    (void)state;
    assert_non_null(loop);
    for (int i = 0; i < 5; i++) {
        tags[i] = (struct tagged){ &t, (int)delay[i] };
        assert_true(evloop_add_timer(loop, delay[i], record_timer, &tags[i]) > 0);
    }
    run_until(loop, &t, 5);
    for (int i = 0; i < 5; i++)
        assert_int_equal(t.ev[i], i * 10);
    evloop_destroy(loop);
}

static void test_timer_cancel(void **state)
{
    struct evloop *loop = evloop_create();
    struct tagged a = { 0 }, b = { 0 }, c = { 0 };
    struct trace t = { 0 };
    uint64_t ida, idb, idc;

    (void)state;
    a = (struct tagged){ &t, 1 };
    b = (struct tagged){ &t, 2 };
    c = (struct tagged){ &t, 3 };
    ida = evloop_add_timer(loop, 5, record_timer, &a);
    idb = evloop_add_timer(loop, 1, record_timer, &b);
    idc = evloop_add_timer(loop, 10, record_timer, &c);
    assert_true(ida && idb && idc && ida != idb && idb != idc);
    evloop_del_timer(loop, idb);
    run_until(loop, &t, 2);
    assert_int_equal(t.ev[0], 1);
    assert_int_equal(t.ev[1], 3);
    /* Fired ids, a cancelled one and one never handed out are no-ops, even
     * when a new timer took over the slot of one of them. */
    assert_true(evloop_add_timer(loop, 0, record_timer, &a) > 0);
    evloop_del_timer(loop, ida);
    evloop_del_timer(loop, idb);
    evloop_del_timer(loop, idc);
    evloop_del_timer(loop, idc + 1000);
    run_until(loop, &t, 3);
    evloop_destroy(loop);
}

static void rearm_zero(struct evloop *loop, uint64_t id, void *user)
{
    int *count = user;

    if (++*count < 1000)
        assert_true(evloop_add_timer(loop, 0, rearm_zero, count) > 0);
}

/* A timer that re-arms itself with delay 0 fires once per round, so the
 * loop still polls its fds in between. */
static void test_timer_rearm_waits_a_round(void **state)
{
    struct evloop *loop = evloop_create();
    int count = 0;

    (void)state;
    assert_true(evloop_add_timer(loop, 0, rearm_zero, &count) > 0);
    assert_int_equal(evloop_run_once(loop, 100), 0);
    assert_int_equal(count, 1);
    assert_int_equal(evloop_run_once(loop, 100), 0);
    assert_int_equal(count, 2);
    evloop_destroy(loop);
}

#define MANY 20000

/* The loop reads the clock inside evloop_add_timer: a deadline is known to
 * lie between the clock read before the call and after it (plus delay). */
struct many {
    uint64_t deadline_lo[MANY], deadline_hi[MANY];
    uint64_t ids[MANY];
    uint8_t fired[MANY];
    uint64_t last_lo;           /* the latest firing's earliest deadline */
    int nfired;
    int misordered;
};

static struct many *many_of;

static void many_fire(struct evloop *loop, uint64_t id, void *user)
{
    size_t i = (size_t)(uintptr_t)user;

    (void)loop;
    assert_int_equal(id, many_of->ids[i]);
    if (many_of->deadline_hi[i] < many_of->last_lo)
        many_of->misordered++;
    many_of->last_lo = many_of->deadline_lo[i];
    many_of->fired[i]++;
    many_of->nfired++;
}

/* Random deadlines and cancels: every survivor fires once, in order. */
static void test_many_timers(void **state)
{
    struct evloop *loop = evloop_create();
    struct many *m = calloc(1, sizeof(*m));
    int cancelled = 0;

    (void)state;
    assert_non_null(m);
    many_of = m;
    srand(7);
    for (size_t i = 0; i < MANY; i++) {
        uint64_t delay = (uint64_t)(rand() % 30);
        m->deadline_lo[i] = evloop_now_ms() + delay;
        m->ids[i] = evloop_add_timer(loop, delay, many_fire, (void *)(uintptr_t)i);
        m->deadline_hi[i] = evloop_now_ms() + delay;
        assert_true(m->ids[i] > 0);
    }
    for (size_t i = 0; i < MANY; i += 3) {
        evloop_del_timer(loop, m->ids[i]);
        m->fired[i] = 2;        /* must stay as it is */
        cancelled++;
    }
    for (int r = 0; r < ROUND_LIMIT && m->nfired < MANY - cancelled; r++)
        assert_int_equal(evloop_run_once(loop, 10), 0);
    assert_int_equal(m->nfired, MANY - cancelled);
    assert_int_equal(m->misordered, 0);
    for (size_t i = 0; i < MANY; i++)
        assert_int_equal(m->fired[i], i % 3 == 0 ? 2 : 1);
    evloop_destroy(loop);
    free(m);
}

/* ---- deferred calls --------------------------------------------------------- */

struct pipe_cb {
    struct trace *trace;
    int tag;
    int fds[2];
    int defer_tag;              /* > 0: defer a call with this tag */
    struct tagged deferred;
    int other_read_fd;          /* >= 0: delete and close it */
    int calls;
};

static void make_pipe(struct pipe_cb *p, struct trace *t, int tag)
{
    *p = (struct pipe_cb){ .trace = t, .tag = tag, .other_read_fd = -1 };
    assert_int_equal(pipe(p->fds), 0);
    assert_int_equal(write(p->fds[1], "x", 1), 1);
}

static void close_pipe(struct evloop *loop, struct pipe_cb *p)
{
    evloop_del_fd(loop, p->fds[0]);
    if (p->fds[0] >= 0)
        close(p->fds[0]);
    close(p->fds[1]);
}

static void on_pipe(struct evloop *loop, int fd, int events, void *user)
{
    struct pipe_cb *p = user;
    int before;

    assert_true(events & EV_READ);
    p->calls++;
    trace_add(p->trace, p->tag);
    if (p->defer_tag) {
        p->deferred = (struct tagged){ p->trace, p->defer_tag };
        before = p->trace->n;
        assert_true(evloop_defer(loop, record_timer, &p->deferred) > 0);
        assert_int_equal(p->trace->n, before);      /* not run from inside */
    }
    if (p->other_read_fd >= 0) {
        evloop_del_fd(loop, p->other_read_fd);
        close(p->other_read_fd);
    }
    (void)fd;
}

/* Two fds ready in one round: the call deferred by the first callback runs
 * right after it, before the second fd's callback. */
static void test_defer_after_current_event(void **state)
{
    struct evloop *loop = evloop_create();
    struct pipe_cb a, b;
    struct trace t = { 0 };

    (void)state;
    make_pipe(&a, &t, 1);
    make_pipe(&b, &t, 2);
    a.defer_tag = 10;
    b.defer_tag = 20;
    assert_int_equal(evloop_set_fd(loop, a.fds[0], EV_READ, on_pipe, &a), 0);
    assert_int_equal(evloop_set_fd(loop, b.fds[0], EV_READ, on_pipe, &b), 0);
    assert_int_equal(evloop_run_once(loop, 1000), 0);
    assert_int_equal(t.n, 4);
    assert_int_equal(t.ev[1], t.ev[0] * 10);
    assert_int_equal(t.ev[3], t.ev[2] * 10);
    close_pipe(loop, &a);
    close_pipe(loop, &b);
    evloop_destroy(loop);
}

static void defer_from_timer(struct evloop *loop, uint64_t id, void *user)
{
    struct tagged *t = user;

    (void)id;
    trace_add(t->trace, 1);
    assert_true(evloop_defer(loop, record_timer, t) > 0);
}

static void defer_again(struct evloop *loop, uint64_t id, void *user)
{
    struct tagged *t = user;

    (void)id;
    trace_add(t->trace, t->tag);
    t->tag++;
    assert_true(evloop_defer(loop, record_timer, t) > 0);
}

/* A timer's deferred call runs in the timer's round, before the loop polls
 * again; a call pending when the loop is about to poll keeps it from
 * waiting. */
static void test_defer_before_next_poll(void **state)
{
    struct evloop *loop = evloop_create();
    struct trace t = { 0 };
    struct tagged d = { &t, 2 };
    uint64_t start;

    (void)state;
    assert_true(evloop_add_timer(loop, 0, defer_from_timer, &d) > 0);
    assert_int_equal(evloop_run_once(loop, 1000), 0);
    assert_int_equal(t.n, 2);
    assert_int_equal(t.ev[1], 2);

    t.n = 0;
    d.tag = 5;
    assert_true(evloop_defer(loop, defer_again, &d) > 0);
    start = evloop_now_ms();
    assert_int_equal(evloop_run_once(loop, 3000), 0);
    assert_int_equal(t.n, 1);
    assert_true(evloop_now_ms() - start < 1000);
    assert_int_equal(evloop_run_once(loop, 0), 0);
    assert_int_equal(t.n, 2);
    assert_int_equal(t.ev[1], 6);
    evloop_destroy(loop);
}

struct redefer {
    struct trace *trace;
    int left;
};

static void redefer(struct evloop *loop, uint64_t id, void *user)
{
    struct redefer *r = user;

    (void)id;
    if (r->left-- > 0)
        assert_true(evloop_defer(loop, redefer, r) > 0);
}

/* A call that defers itself again lets the fds run in between. */
static void test_defer_chain_does_not_starve(void **state)
{
    struct evloop *loop = evloop_create();
    struct trace t = { 0 };
    struct redefer r = { &t, 1000000 };
    struct pipe_cb a;

    (void)state;
    make_pipe(&a, &t, 1);
    assert_int_equal(evloop_set_fd(loop, a.fds[0], EV_READ, on_pipe, &a), 0);
    assert_true(evloop_defer(loop, redefer, &r) > 0);
    assert_int_equal(evloop_run_once(loop, 1000), 0);
    assert_int_equal(a.calls, 1);
    assert_true(r.left > 1000000 - 10);
    close_pipe(loop, &a);
    evloop_destroy(loop);
}

static void test_defer_cancel(void **state)
{
    struct evloop *loop = evloop_create();
    struct trace t = { 0 };
    struct tagged a = { &t, 1 }, b = { &t, 2 };
    uint64_t ida;

    (void)state;
    ida = evloop_defer(loop, record_timer, &a);
    assert_true(ida > 0);
    assert_true(evloop_defer(loop, record_timer, &b) > 0);
    evloop_del_timer(loop, ida);
    assert_int_equal(evloop_run_once(loop, 0), 0);
    assert_int_equal(t.n, 1);
    assert_int_equal(t.ev[0], 2);
    evloop_destroy(loop);
}

/* A synchronous waiter (while (!done) evloop_run_once(loop, -1)) whose
 * condition a deferred call completes at the start of a round sees it at
 * once: the round that ran the call only polls, it does not block until
 * the next timer (here 5 s away: a loop that blocks fails the bound). */
static void test_deferred_completion_ends_wait(void **state)
{
    struct evloop *loop = evloop_create();
    struct trace t = { 0 };
    struct tagged done = { &t, 1 }, far = { &t, 99 };
    uint64_t start;

    (void)state;
    assert_true(evloop_add_timer(loop, 5000, record_timer, &far) > 0);
    assert_true(evloop_defer(loop, record_timer, &done) > 0);
    start = evloop_now_ms();
    while (t.n == 0)
        assert_int_equal(evloop_run_once(loop, -1), 0);
    assert_int_equal(t.ev[0], 1);
    assert_true(evloop_now_ms() - start < 2500);
    /* With nothing deferred the next round waits again (no spin): a
     * 50 ms bound is honoured. */
    start = evloop_now_ms();
    assert_int_equal(evloop_run_once(loop, 50), 0);
    assert_int_equal(t.n, 1);
    assert_true(evloop_now_ms() - start >= 50);
    evloop_destroy(loop);
}

struct nested {
    struct trace *trace;
    struct tagged inner, outer;
};

/* A timer that defers one call of each kind, then waits in a nested run:
 * the plain one runs inside it, the outer one only after this returns. */
static void nest_timer(struct evloop *loop, uint64_t id, void *user)
{
    struct nested *n = user;

    (void)id;
    assert_true(evloop_defer_outer(loop, record_timer, &n->outer) > 0);
    assert_true(evloop_defer(loop, record_timer, &n->inner) > 0);
    assert_int_equal(evloop_run_once(loop, 0), 0);
    assert_int_equal(evloop_run_once(loop, 0), 0);
    trace_add(n->trace, 3);
}

static void test_defer_outer_waits_for_nested_run(void **state)
{
    struct evloop *loop = evloop_create();
    struct trace t = { 0 };
    struct nested n = { &t, { &t, 1 }, { &t, 2 } };

    (void)state;
    assert_true(evloop_add_timer(loop, 0, nest_timer, &n) > 0);
    run_until(loop, &t, 3);
    assert_int_equal(t.ev[0], 1);
    assert_int_equal(t.ev[1], 3);
    assert_int_equal(t.ev[2], 2);
    evloop_destroy(loop);
}

/* ---- fds ---------------------------------------------------------------------- */

struct fd_seen {
    int events;
    int calls;
};

static void note_fd(struct evloop *loop, int fd, int events, void *user)
{
    struct fd_seen *s = user;

    (void)loop;
    (void)fd;
    s->events |= events;
    s->calls++;
}

static void test_fd_readiness(void **state)
{
    struct evloop *loop = evloop_create();
    struct fd_seen r = { 0 }, w = { 0 };
    int fds[2];

    (void)state;
    assert_int_equal(pipe(fds), 0);
    assert_int_equal(evloop_set_fd(loop, fds[0], EV_READ, note_fd, &r), 0);
    assert_int_equal(evloop_set_fd(loop, fds[1], EV_WRITE, note_fd, &w), 0);
    assert_int_equal(evloop_run_once(loop, 1000), 0);
    assert_int_equal(r.calls, 0);               /* nothing to read yet */
    assert_int_equal(w.events, EV_WRITE);
    assert_int_equal(evloop_mod_fd(loop, fds[1], 0), 0);
    assert_int_equal(write(fds[1], "x", 1), 1);
    w.calls = 0;
    assert_int_equal(evloop_run_once(loop, 1000), 0);
    assert_int_equal(r.events, EV_READ);
    assert_int_equal(w.calls, 0);               /* quiet with mask 0 */
    evloop_del_fd(loop, fds[1]);
    close(fds[1]);
    r = (struct fd_seen){ 0 };
    assert_int_equal(evloop_run_once(loop, 1000), 0);
    assert_true(r.events & EV_ERROR);           /* hang-up */
    assert_true(r.events & EV_READ);
    evloop_del_fd(loop, fds[0]);
    close(fds[0]);
    evloop_destroy(loop);
}

static void close_self(struct evloop *loop, int fd, int events, void *user)
{
    struct fd_seen *s = user;

    s->events |= events;
    s->calls++;
    evloop_del_fd(loop, fd);
    close(fd);
}

/* The data stays unread: a callback still registered would run again. */
static void test_fd_removed_in_own_callback(void **state)
{
    struct evloop *loop = evloop_create();
    struct fd_seen s = { 0 };
    int fds[2];

    (void)state;
    assert_int_equal(pipe(fds), 0);
    assert_int_equal(write(fds[1], "x", 1), 1);
    assert_int_equal(evloop_set_fd(loop, fds[0], EV_READ, close_self, &s), 0);
    for (int i = 0; i < 5; i++)
        assert_int_equal(evloop_run_once(loop, 20), 0);
    assert_int_equal(s.calls, 1);
    close(fds[1]);
    evloop_destroy(loop);
}

/* Both fds ready in one round; whichever runs first removes and closes the
 * other, whose event was collected already: it must not be delivered. */
static void test_fd_removed_by_other_callback(void **state)
{
    struct evloop *loop = evloop_create();
    struct pipe_cb a, b, *survivor, *removed;
    struct trace t = { 0 };

    (void)state;
    make_pipe(&a, &t, 1);
    make_pipe(&b, &t, 2);
    a.other_read_fd = b.fds[0];
    b.other_read_fd = a.fds[0];
    assert_int_equal(evloop_set_fd(loop, a.fds[0], EV_READ, on_pipe, &a), 0);
    assert_int_equal(evloop_set_fd(loop, b.fds[0], EV_READ, on_pipe, &b), 0);
    assert_int_equal(evloop_run_once(loop, 1000), 0);
    assert_int_equal(a.calls + b.calls, 1);
    survivor = a.calls ? &a : &b;
    removed = a.calls ? &b : &a;
    survivor->other_read_fd = -1;
    removed->fds[0] = -1;
    for (int i = 0; i < 3; i++)
        assert_int_equal(evloop_run_once(loop, 20), 0);
    assert_int_equal(survivor->calls, 4);       /* its data stays unread */
    assert_int_equal(removed->calls, 0);
    close_pipe(loop, &a);
    close_pipe(loop, &b);
    evloop_destroy(loop);
}

struct reuse {
    struct evloop *loop;
    struct reuse *other;
    int fds[2];
    int calls;
    int fresh[2];               /* the pipe that took the other's number */
    struct fd_seen fresh_seen;
};

/* Closes the other pipe's read end and takes its number for a new, empty
 * pipe registered at once. */
static void close_other_and_reuse(struct evloop *loop, int fd, int events, void *user)
{
    struct reuse *r = user, *o = r->other;
    int old = o->fds[0];

    r->calls++;
    if (old < 0)
        return;
    evloop_del_fd(loop, old);
    close(old);
    o->fds[0] = -1;
    assert_int_equal(pipe(r->fresh), 0);
    assert_int_equal(r->fresh[0], old);         /* lowest free number */
    assert_int_equal(evloop_set_fd(loop, r->fresh[0], EV_READ, note_fd, &r->fresh_seen), 0);
}

/* Both read ends ready in one round; the first callback closes the other
 * and a new empty pipe gets its number: the event collected for the old
 * fd must not reach the new registration. */
static void test_fd_number_reused_in_round(void **state)
{
    struct evloop *loop = evloop_create();
    struct reuse a = { 0 }, b = { 0 }, *first;

    (void)state;
    a.other = &b;
    b.other = &a;
    assert_int_equal(pipe(a.fds), 0);
    assert_int_equal(pipe(b.fds), 0);
    assert_int_equal(write(a.fds[1], "x", 1), 1);
    assert_int_equal(write(b.fds[1], "x", 1), 1);
    assert_int_equal(evloop_set_fd(loop, a.fds[0], EV_READ, close_other_and_reuse, &a), 0);
    assert_int_equal(evloop_set_fd(loop, b.fds[0], EV_READ, close_other_and_reuse, &b), 0);
    assert_int_equal(evloop_run_once(loop, 1000), 0);
    assert_int_equal(a.calls + b.calls, 1);
    first = a.calls ? &a : &b;
    assert_int_equal(first->fresh_seen.calls, 0);
    assert_int_equal(evloop_run_once(loop, 20), 0);
    assert_int_equal(first->fresh_seen.calls, 0);  /* still nothing to read */
    evloop_del_fd(loop, first->fds[0]);
    evloop_del_fd(loop, first->fresh[0]);
    close(first->fds[0]);
    close(first->fds[1]);
    close(first->fresh[0]);
    close(first->fresh[1]);
    close(first->other->fds[1]);
    evloop_destroy(loop);
}

/* ---- stop ------------------------------------------------------------------ */

static void stop_call(struct evloop *loop, uint64_t id, void *user)
{
    (void)id;
    trace_add(user, 1);
    evloop_stop(loop);
}

static void late_timer(struct evloop *loop, uint64_t id, void *user)
{
    (void)id;
    trace_add(user, 2);
    evloop_stop(loop);
}

/* A deferred call that stops the loop at the start of a round ends
 * evloop_run at once: the round must not go on to wait for events (with
 * nothing else pending it would wait forever; here the 2 s timer stands
 * for forever and must not be what ends the run). */
static void test_stop_from_deferred_call(void **state)
{
    struct evloop *loop = evloop_create();
    struct trace t = { 0 };
    uint64_t start;

    (void)state;
    assert_true(evloop_add_timer(loop, 2000, late_timer, &t) > 0);
    assert_true(evloop_defer(loop, stop_call, &t) > 0);
    start = evloop_now_ms();
    assert_int_equal(evloop_run(loop), 0);
    assert_int_equal(t.n, 1);
    assert_int_equal(t.ev[0], 1);
    assert_true(evloop_now_ms() - start < 2500);
    evloop_destroy(loop);
}

/* A stop from an fd callback skips the rest of the round; evloop_run
 * returns, and the loop dispatches again afterwards. */
static void test_stop_then_run_again(void **state)
{
    struct evloop *loop = evloop_create();
    struct trace t = { 0 };
    struct tagged a = { &t, 7 };

    (void)state;
    assert_true(evloop_add_timer(loop, 0, stop_call, &t) > 0);
    assert_int_equal(evloop_run(loop), 0);
    assert_int_equal(t.n, 1);
    assert_true(evloop_defer(loop, record_timer, &a) > 0);
    run_until(loop, &t, 2);
    assert_int_equal(t.ev[1], 7);
    evloop_destroy(loop);
}

/* A stop asked from inside a nested wait (a store waiting in
 * evloop_run_once for its I/O, while a signal's callback, dispatched by
 * that nested run, stops the loop): the nested run goes on dispatching, so
 * the wait ends when its I/O is done; then the stop ends evloop_run.
 * Before, every later nested round returned at once, dispatching nothing:
 * the wait spun forever. */
struct nested_wait {
    int sig[2];                 /* a pipe standing for the signalfd */
    int done;                   /* the awaited I/O completed */
    int rounds;                 /* nested rounds the wait took */
};

static void signal_fd_cb(struct evloop *loop, int fd, int events, void *user)
{
    char c;

    (void)events;
    (void)user;
    assert_int_equal(read(fd, &c, 1), 1);
    evloop_stop(loop);
}

static void io_done(struct evloop *loop, uint64_t id, void *user)
{
    (void)loop;
    (void)id;
    ((struct nested_wait *)user)->done = 1;
}

static void store_waits(struct evloop *loop, uint64_t id, void *user)
{
    struct nested_wait *w = user;

    (void)id;
    assert_int_equal(write(w->sig[1], "s", 1), 1);      /* the signal arrives */
    assert_true(evloop_add_timer(loop, 20, io_done, w) > 0);
    while (!w->done && w->rounds < ROUND_LIMIT) {
        assert_int_equal(evloop_run_once(loop, 10), 0);
        w->rounds++;
    }
}

/* The store's wait, started from a timer inside evloop_run (inside_run)
 * or called directly after the run ended (a teardown's): either way the
 * signal's stop must not cut it short. */
static void wait_survives_stop(int inside_run)
{
    struct evloop *loop = evloop_create();
    struct nested_wait w = { .done = 0 };

    assert_int_equal(pipe(w.sig), 0);
    assert_int_equal(evloop_set_fd(loop, w.sig[0], EV_READ, signal_fd_cb, &w), 0);
    if (inside_run) {
        assert_true(evloop_add_timer(loop, 0, store_waits, &w) > 0);
        assert_int_equal(evloop_run(loop), 0);
    } else {
        store_waits(loop, 0, &w);
    }
    assert_int_equal(w.done, 1);
    assert_true(w.rounds < 50);
    evloop_del_fd(loop, w.sig[0]);
    close(w.sig[0]);
    close(w.sig[1]);
    evloop_destroy(loop);
}

static void test_stop_inside_nested_wait(void **state)
{
    (void)state;
    wait_survives_stop(1);
}

static void test_stop_inside_wait_after_run(void **state)
{
    (void)state;
    wait_survives_stop(0);
}

/* Pending timers and deferred calls are freed, never called. */
static void test_destroy_with_pending(void **state)
{
    struct evloop *loop = evloop_create();
    struct trace t = { 0 };
    struct tagged a = { &t, 1 };

    (void)state;
    assert_true(evloop_add_timer(loop, 0, record_timer, &a) > 0);
    assert_true(evloop_add_timer(loop, 100000, record_timer, &a) > 0);
    assert_true(evloop_defer(loop, record_timer, &a) > 0);
    evloop_destroy(loop);
    assert_int_equal(t.n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timers_deadline_order),
        cmocka_unit_test(test_timer_cancel),
        cmocka_unit_test(test_timer_rearm_waits_a_round),
        cmocka_unit_test(test_many_timers),
        cmocka_unit_test(test_defer_after_current_event),
        cmocka_unit_test(test_defer_before_next_poll),
        cmocka_unit_test(test_defer_chain_does_not_starve),
        cmocka_unit_test(test_defer_cancel),
        cmocka_unit_test(test_deferred_completion_ends_wait),
        cmocka_unit_test(test_defer_outer_waits_for_nested_run),
        cmocka_unit_test(test_fd_readiness),
        cmocka_unit_test(test_fd_removed_in_own_callback),
        cmocka_unit_test(test_fd_removed_by_other_callback),
        cmocka_unit_test(test_fd_number_reused_in_round),
        cmocka_unit_test(test_stop_from_deferred_call),
        cmocka_unit_test(test_stop_inside_nested_wait),
        cmocka_unit_test(test_stop_inside_wait_after_run),
        cmocka_unit_test(test_stop_then_run_again),
        cmocka_unit_test(test_destroy_with_pending),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
