/* Unit tests of the QoS scheduler's EDF depth controller
 * (backend/server/qos.c, the paper's feedback over time windows): the
 * controller's rules window by window, no depth limit while no class has
 * an SLO, and on a synthetic store of 1 ms steps the start-up depth, one
 * class alone as fast as fifo, and probing a store whose throughput grows
 * with depth. */
#include "test/qos_test.h"

/* The controller's verdict after a window: overloaded or not, and the
 * depth (a macro, so that a failure names the caller's line). */
#define assert_controller(overloaded_, depth_)                                             \
    do {                                                                                   \
        assert_int_equal(sched.overloaded, (overloaded_));                                 \
        assert_int_equal(sched.depth, (depth_));                                           \
    } while (0)

/* One window of the controller: n requests of class a arrive at the start,
 * each is served alone for service_ms (a store that does one at a time),
 * then the window closes. */
static void one_window(uint32_t a, int n, uint64_t t0, uint64_t service_ms)
{
    uint64_t t = t0;

    for (int k = 0; k < n; k++)
        submit(&sched, k, a, MB, t0);
    for (int k = 0; k < n; k++) {
        struct qos_req *r = qos_next(&sched, t);

        assert_non_null(r);
        t += service_ms * MS;
        qos_done(&sched, r, t);
    }
    qos_tick(&sched, t0 + 1000 * MS);
}

/* A window of a backlogged store: nsub requests of class a arrive at t0
 * (in reqs[base...]),
 * nserve of the waiting ones are served one at a time, service_ms each. */
static void backlog_window(uint32_t a, int base, int nsub, int nserve, uint64_t t0,
                           uint64_t service_ms)
{
    for (int k = 0; k < nsub; k++)
        submit(&sched, base + k, a, MB, t0);
    for (int k = 0; k < nserve; k++) {
        struct qos_req *r = qos_next(&sched, t0 + (uint64_t)k * service_ms * MS);

        assert_non_null(r);
        qos_done(&sched, r, t0 + (uint64_t)(k + 1) * service_ms * MS);
    }
    qos_tick(&sched, t0 + 1000 * MS);
}

/* A window of a store that serves as many requests at once as the depth
 * allows, all of them in service_ms: nsub requests of class a arrive at
 * t0 (in reqs[500...]), then everything waiting is served. */
static void depth_window(uint32_t a, int nsub, uint64_t t0, uint64_t service_ms)
{
    struct qos_req *in[QOS_DEPTH_INF];
    uint64_t t = t0;
    struct qos_req *r;
    int nin;

    for (int k = 0; k < nsub; k++)
        submit(&sched, 500 + k, a, MB, t0);
    do {
        nin = 0;
        while ((r = qos_next(&sched, t)))
            in[nin++] = r;
        t += service_ms * MS;
        for (int k = 0; k < nin; k++)
            qos_done(&sched, in[k], t);
    } while (nin);
    qos_tick(&sched, t0 + 1000 * MS);
}

static void test_controller(void **state)
{
    uint32_t a;

    (void)state;
    qos_init(&sched, QOS_TWO_LEVEL, 1000);
    a = add_class(&sched, "A", 40, 100);
    sched.depth = 8;
    qos_tick(&sched, 0);
    /* 4 requests of 10 ms each, served one after the other: p95 40 ms,
     * EDF waits 0 10 20 30 (mean 15).  L_RT = 8 (100 - 15) / 40 = 17;
     * N = 4 = X: Lbar = 8; Lmin = 4 * 8 / 4 = 8; underloaded; L_RT > Lbar:
     * the depth becomes Lbar = 8 */
    one_window(a, 4, 0, 10);
    assert_int_equal(sched.cls[a].last.met, 1);
    assert_true(fabs(sched.cls[a].last.p95_ms - 40) < 1e-3);
    assert_true(fabs(sched.cls[a].last.wait_ms - 15) < 1e-3);
    assert_controller(0, 8);
    /* 8 requests of 30 ms: p95 240 ms (missed), mean wait 105 ms: E < 0,
     * L_RT = 1 < Lmin = 8: overloaded; N = 8 = X, so max(1, 8) = 8 */
    one_window(a, 8, 1000 * MS, 30);
    assert_int_equal(sched.cls[a].last.met, 0);
    assert_controller(1, 8);
    /* a window that completes nothing while requests wait: infinite depth */
    submit(&sched, 0, a, MB, 2000 * MS);
    assert_non_null(qos_next(&sched, 2000 * MS));
    qos_tick(&sched, 3000 * MS);
    assert_controller(1, QOS_DEPTH_INF);
    /* it completes in the next window (p95 1001 ms, missed) and nothing
     * else comes: L_RT = 64 * 100 / 1001 = 6.4, Lmin = 0, Lbar = 0 -> 1:
     * underloaded, L_RT > Lbar: Lbar, raised to QOS_DEPTH_MIN (no demand,
     * no depth) */
    qos_done(&sched, &reqs[0], 3001 * MS);
    qos_tick(&sched, 4000 * MS);
    assert_controller(0, QOS_DEPTH_MIN);
    /* a light window: 2 requests of 5 ms: p95 10, waits 0 and 5: L_RT =
     * 2 * 97.5 / 10 = 19.5 >= Lmin = 2 * 2 / 2 = 2, > Lbar = 2: depth 2 */
    one_window(a, 2, 4000 * MS, 5);
    assert_controller(0, 2);
    /* 40 requests at once, 20 ms each, one at a time: p95 about 800 ms,
     * E < 0 so L_RT = 1 < Lmin = 40 * 2 / 40 = 2: overloaded, N = X:
     * max(L_RT, Lmin) = 2 (the store was empty 200 ms of the window: its
     * capacity is still unknown).  Then 60 at once of which 40 are
     * served, 25 ms each, the store kept busy: N = 20 waiting + 60
     * arrived = 80 > X = 40 with the capacity unknown.  The paper opens
     * the depth to 64 there; here it is a probe, by half: 3, and the
     * capacity is 39 a window (the 40th completes as it ends), reached
     * at depth 2 */
    one_window(a, 40, 5000 * MS, 20);
    assert_controller(1, 2);
    for (int k = 0; k < 60; k++)
        submit(&sched, k, a, MB, 6000 * MS);
    for (int k = 0; k < 40; k++) {
        struct qos_req *r = qos_next(&sched, 6000 * MS + (uint64_t)k * 25 * MS);

        assert_non_null(r);
        qos_done(&sched, r, 6000 * MS + (uint64_t)(k + 1) * 25 * MS);
    }
    qos_tick(&sched, 7000 * MS);
    assert_controller(1, 3);
    assert_int_equal(sched.lcap, 2);
    assert_true(sched.xcap == 39);
    /* at depth 3 it completes 40 (one at a time): the probe gained
     * nothing, and at capacity more depth adds only latency: the depth
     * the bound allows, L_RT = 1, raised to QOS_DEPTH_MIN */
    backlog_window(a, 100, 40, 40, 7000 * MS, 25);
    assert_controller(1, 2);
    /* a store that did 40 a window completes 20 at depth 2 (it serves
     * more at once): the depth that reached its capacity, 2 x 40 / 20 =
     * 4, but not past the least depth known to reach
     * it, 2, in this window; that one fell short, so it is raised to 4
     * for the next */
    backlog_window(a, 200, 40, 20, 8000 * MS, 50);
    assert_controller(1, 2);
    assert_int_equal(sched.lcap, 4);
    /* at depth 2 it completes 40 again: capacity needs no more than 2 */
    backlog_window(a, 300, 40, 40, 9000 * MS, 25);
    assert_int_equal(sched.lcap, 2);
    assert_controller(1, 2);
    /* the 40 left waiting served, as many at once as the depth allows:
     * nothing left or due, so not overloaded; at capacity (41 of 40), so
     * however long they waited the depth does not grow: L_RT = 1, raised
     * to QOS_DEPTH_MIN */
    depth_window(a, 0, 10000 * MS, 5);
    assert_controller(0, 2);
    /* not overloaded, far below the store's capacity: 8 requests at once,
     * served two at a time (the depth), 30 ms each: p95 120 ms > 100,
     * missed, though the store alone took 30 ms (within the bound): the
     * depth made A wait, so it doubles to 4, past Lcap = 2, which bounds
     * an overloaded store only (fifo, unbounded, would have met the
     * bound; a controller that read the whole latency as the store's
     * would keep or shrink the depth).  At 4 the same 8 keep the bound
     * (p95 60 ms) and the depth stays */
    depth_window(a, 8, 11000 * MS, 30);
    assert_int_equal(sched.cls[a].last.met, 0);
    assert_true(fabs(sched.cls[a].last.store_p95_ms - 30) < 1e-3);
    assert_controller(0, 4);
    depth_window(a, 8, 12000 * MS, 30);
    assert_int_equal(sched.cls[a].last.met, 1);
    assert_controller(0, 4);
    /* the same with every bound kept (10 ms each: p95 40 ms): the depth
     * does not shrink (L_RT would propose less, Lbar = L) */
    one_window(a, 4, 13000 * MS, 10);
    assert_int_equal(sched.cls[a].last.met, 1);
    assert_controller(0, 4);
    /* no class with an SLO served: no latency to keep, infinite depth */
    qos_init(&sched, QOS_TWO_LEVEL, 1000);
    a = add_class(&sched, "A", 40, 100);
    one_window(0, 4, 0, 10);
    assert_int_equal(sched.depth, QOS_DEPTH_INF);
}

/* No class with an SLO (a server on the default two-level where nobody
 * set one, internal work paced or not): no latency to keep, so every
 * request starts as it comes, as with fifo.  Twice 100 requests of the
 * default class, more than QOS_DEPTH_INF, submitted before any starts:
 * all start at once, in arrival order, and the depth stays unbounded over
 * the windows that complete them (the controller does not run).  The
 * first SLO starts the depth control at QOS_DEPTH_MIN.  Before: the depth
 * was 2 from the start, so 2 of the 100 started. */
static void test_no_slo_depth(void **state)
{
    struct qos_req *started[128];
    char order[128], msg[200];
    uint32_t a;

    (void)state;
    qos_init(&sched, QOS_TWO_LEVEL, 1000);
    assert_int_equal(qos_set_internal(&sched, 1, 0, msg, sizeof(msg)), 0);
    qos_tick(&sched, 0);
    for (int w = 0; w < 2; w++) {
        uint64_t t0 = (uint64_t)w * 1000 * MS;

        for (int i = 0; i < 100; i++)
            submit(&sched, i, 0, MB, t0 + (uint64_t)i);
        if (drain(&sched, t0 + 100, order, started) != 100)
            fail_msg("window %d: %zu of 100 started (depth %u)", w, strlen(order), sched.depth);
        for (int i = 0; i < 100; i++)
            assert_ptr_equal(started[i], &reqs[i]);
        /* served one after the other, 9 ms each: the window is busy */
        for (int i = 0; i < 100; i++)
            qos_done(&sched, &reqs[i], t0 + 100 + 9 * MS * (uint64_t)(i + 1));
        qos_tick(&sched, t0 + 1000 * MS);
        assert_int_equal(sched.depth, UINT32_MAX);
        assert_int_equal(sched.overloaded, 0);
    }
    a = add_class(&sched, "A", 40, 100);
    assert_int_equal(sched.depth, QOS_DEPTH_MIN);
    for (int i = 0; i < 5; i++)
        submit(&sched, i, a, MB, 2000 * MS + (uint64_t)i);
    assert_int_equal(drain(&sched, 2000 * MS + 5, order, NULL), QOS_DEPTH_MIN);
    /* a second SLO does not restart the control */
    sched.depth = 5;
    add_class(&sched, "B", 10, 300);
    assert_int_equal(sched.depth, 5);
}

/* A store on a synthetic clock of 1 ms steps, closer to the benchmarks'
 * than the windows above: it serves as many requests at once as it has
 * units (1: one at a time, as --store-rate), service_ms each, in the
 * order they were started, and a request it is handed
 * begins handoff_ms later at the earliest (the reply's send and the next
 * request's dispatch through the I/O node's event loop), so at depth 1 it
 * idles that long between requests.  Each class has writers with one
 * request in flight each, issuing one every period_ms (0: as soon as the
 * previous completes; a late one goes when the previous completes), the
 * writers of a class spread over one period. */
struct sim_app {
    uint32_t cls;
    int writers;
    uint64_t period_ms;
};

struct sim_out {
    uint32_t depth[32];               /* after each window's close */
    int met[32][4];                   /* each app's verdict in that window */
    uint64_t served[4];
    uint64_t total[32];               /* completions by each window's end */
    int windows;
};

static void simulate(const struct sim_app *app, int napp, uint64_t dur_ms, int units,
                     uint64_t service_ms, uint64_t handoff_ms, struct sim_out *out)
{
    uint64_t next_issue[32] = { 0 }, finish[QOS_DEPTH_INF * 2] = { 0 }, unit_free[8] = { 0 };
    int owner[32], busy[32] = { 0 }, inq[QOS_DEPTH_INF * 2], nq = 0, w = 0;
    struct qos_req *r;

    memset(out, 0, sizeof(*out));
    for (int i = 0; i < napp; i++)
        for (int k = 0; k < app[i].writers; k++) {
            /* spread over one period, as qos-load.py's writers */
            next_issue[w] = app[i].period_ms * (uint64_t)k / (uint64_t)app[i].writers;
            owner[w++] = i;
        }
    assert_true(w <= 32);
    qos_tick(&sched, 0);
    for (uint64_t t = 0; t <= dur_ms; t++) {
        qos_tick(&sched, t * MS);
        if (t && t % 1000 == 0 && out->windows < 32) {
            out->depth[out->windows] = sched.depth;
            for (int i = 0; i < napp; i++)
                out->met[out->windows][i] = sched.cls[app[i].cls].last.met;
            for (int i = 0; i < napp; i++)
                out->total[out->windows] += out->served[i];
            out->windows++;
        }
        while (nq && finish[0] <= t) {
            int k = inq[0];

            qos_done(&sched, &reqs[k], t * MS);
            out->served[owner[k]]++;
            busy[k] = 0;
            if (next_issue[k] < t)
                next_issue[k] = t;
            memmove(inq, inq + 1, (size_t)--nq * sizeof(*inq));
            memmove(finish, finish + 1, (size_t)nq * sizeof(*finish));
        }
        for (int k = 0; k < w; k++) {
            if (busy[k] || next_issue[k] > t)
                continue;
            submit(&sched, k, app[owner[k]].cls, MB, t * MS);
            busy[k] = 1;
            next_issue[k] = t + app[owner[k]].period_ms;
        }
        while ((r = qos_next(&sched, t * MS))) {
            int u = 0;
            uint64_t begin;

            /* the unit free first; begins and so finishes in start order */
            for (int k = 1; k < units; k++)
                if (unit_free[k] < unit_free[u])
                    u = k;
            begin = t + handoff_ms > unit_free[u] ? t + handoff_ms : unit_free[u];
            inq[nq] = (int)(r - reqs);
            finish[nq++] = unit_free[u] = begin + service_ms;
        }
    }
}

/* Start-up: A (8 MB/s, 500 ms) issues 5 MB/s from 4 writers, within its
 * 2:1 share of a store of 10 requests a second (one at a time, 100 ms
 * each); B (4 MB/s, 1500 ms) keeps 8 writers behind (over its share).
 * The store's capacity is not known yet.  The depth starts at
 * QOS_DEPTH_MIN = 2; the first window keeps the store busy with the
 * capacity unknown, so it probes by half, to 3; the next completes no
 * more (10 a window), so the probe is undone and the depth stays 2: A
 * waits behind at most 2 in the store and keeps its bound in every
 * window (300-500 ms).  Before (depth 8 at start, grown to Lbar with
 * the capacity unknown): 14, 8, 3, 1, 1, ... and A missed its bound in
 * windows 2-6 (5 of 8), waiting behind B's backlog in the store as with
 * fifo (as on the benchmark: 8, 11, 15, 21 and App1's first misses). */
static void test_startup_depth(void **state)
{
    static const uint32_t want[] = { 3, 2, 2, 2, 2, 2, 2, 2 };
    struct sim_out o;
    uint32_t a, b;

    (void)state;
    qos_init(&sched, QOS_TWO_LEVEL, 1000);
    a = add_class(&sched, "A", 8, 500);
    b = add_class(&sched, "B", 4, 1500);
    assert_int_equal(sched.depth, QOS_DEPTH_MIN);
    simulate((const struct sim_app[]){ { a, 4, 800 }, { b, 8, 0 } }, 2, 8000, 1, 100, 0, &o);
    assert_int_equal(o.windows, 8);
    for (int k = 0; k < o.windows; k++) {
        if (o.depth[k] != want[k] || o.met[k][0] != 1)
            fail_msg("window %d: depth %u (want %u), A met %d", k, o.depth[k], want[k],
                     o.met[k][0]);
    }
    /* A got what it issued (5 a second, less the writers' spread) */
    assert_in_range(o.served[0], 38, 40);
}

/* One class alone must not be throttled: 8 writers behind, an SLO it
 * cannot keep (8 x 100 ms > 500 ms) so every window is overloaded at the
 * store's capacity, and a hand-off of 7 ms between a completion and the
 * next request's start.  fifo keeps 8 in the store, which never idles.
 * two-level settled at depth 1 (the depth the bound allows), where the
 * store idled 7 ms of every 107: 93% of fifo over windows 6-11 (the
 * benchmark's rate store: 92.3%).  With the depth at least QOS_DEPTH_MIN
 * = 2 the next request waits in the store, which does not idle: as many
 * as fifo. */
static void test_one_class_depth(void **state)
{
    struct sim_out fifo, two;
    uint64_t nf, nt;
    uint32_t a;

    (void)state;
    qos_init(&sched, QOS_FIFO, 1000);
    a = add_class(&sched, "A", 8, 500);
    simulate((const struct sim_app[]){ { a, 8, 0 } }, 1, 12000, 1, 100, 7, &fifo);
    qos_init(&sched, QOS_TWO_LEVEL, 1000);
    a = add_class(&sched, "A", 8, 500);
    simulate((const struct sim_app[]){ { a, 8, 0 } }, 1, 12000, 1, 100, 7, &two);
    assert_int_equal(two.windows, 12);
    for (int k = 0; k < two.windows; k++)
        assert_true(two.depth[k] >= QOS_DEPTH_MIN);
    /* settled: windows 6-11 */
    nf = fifo.total[11] - fifo.total[5];
    nt = two.total[11] - two.total[5];
    if (nt * 100 < nf * 98)
        fail_msg("two-level completed %llu, fifo %llu", (unsigned long long)nt,
                 (unsigned long long)nf);
}

/* A store whose throughput grows with depth (4 units, 100 ms each: 20 a
 * window at depth 2, 40 from depth 4 on), one class with 16 writers
 * behind and a loose bound (2 s, kept): the depth grows by half while
 * each window completes more than the store ever had (3, 5), and stops
 * once it does not (8 completes 40, as 5 did): back to 5, the least
 * depth at which the 40 were seen.  Without the probe (growth only once
 * the capacity is known and never past the depth that reached it) it
 * would stay at 2: half of fifo. */
static void test_probe_depth(void **state)
{
    static const uint32_t want[] = { 3, 5, 8, 5, 5, 5 };
    struct sim_out o;
    uint32_t a;

    (void)state;
    qos_init(&sched, QOS_TWO_LEVEL, 1000);
    a = add_class(&sched, "A", 40, 2000);
    simulate((const struct sim_app[]){ { a, 16, 0 } }, 1, 6000, 4, 100, 0, &o);
    for (int k = 0; k < o.windows; k++) {
        if (o.depth[k] != want[k])
            fail_msg("window %d: depth %u (want %u)", k, o.depth[k], want[k]);
    }
    /* the last three windows at the store's 40 */
    assert_int_equal(o.total[5] - o.total[2], 120);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_controller),      cmocka_unit_test(test_no_slo_depth),
        cmocka_unit_test(test_startup_depth),   cmocka_unit_test(test_one_class_depth),
        cmocka_unit_test(test_probe_depth),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
