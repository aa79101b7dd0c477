/* Unit tests of the I/O node's QoS scheduler (backend/server/qos.c; the
 * policy is in qos.h): SLO and name checks, the exact orders of FIFO,
 * DSFQ and EDF on synthetic arrivals, the credit and its refill, the
 * feedback controller's depth, and that no class starves. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/server/qos.h"

#define MB 1000000u
#define MS 1000u   /* microseconds */

static struct qos_sched sched;    /* large: not on the stack */
static struct qos_req reqs[4096];

static uint32_t add_class(struct qos_sched *s, const char *name, double rate, double lat)
{
    char msg[200];

    assert_int_equal(qos_set(s, name, rate, lat, msg, sizeof(msg)), 0);
    return qos_lookup(s, name, strlen(name));
}

static struct qos_req *submit(struct qos_sched *s, int i, uint32_t cls, uint64_t bytes,
                              uint64_t now)
{
    reqs[i] = (struct qos_req){ .cls = cls, .bytes = bytes };
    qos_submit(s, &reqs[i], now);
    return &reqs[i];
}

/* Dispatches what the scheduler lets start now, writing the classes' names'
 * first letters into out; returns how many. */
static int drain(struct qos_sched *s, uint64_t now, char *out, struct qos_req **started)
{
    struct qos_req *r;
    int n = 0;

    while ((r = qos_next(s, now))) {
        out[n] = s->cls[r->cls].name[0];
        if (started)
            started[n] = r;
        n++;
    }
    out[n] = 0;
    return n;
}

static void test_slo_checks(void **state)
{
    char msg[200];

    (void)state;
    qos_init(&sched, QOS_TWO_LEVEL, 1000);
    assert_int_equal(qos_check_slo(40, 100, msg, sizeof(msg)), 0);
    assert_int_equal(qos_check_slo(-1, 100, msg, sizeof(msg)), -EINVAL);
    assert_non_null(strstr(msg, "rate -1 MB/s"));
    assert_int_equal(qos_check_slo(0, 100, msg, sizeof(msg)), -EINVAL);
    assert_int_equal(qos_check_slo(NAN, 100, msg, sizeof(msg)), -EINVAL);
    assert_int_equal(qos_check_slo(INFINITY, 100, msg, sizeof(msg)), -EINVAL);
    /* 40 GB/s written as 40e9 "MB/s": a unit mistake */
    assert_int_equal(qos_check_slo(40e9, 100, msg, sizeof(msg)), -EINVAL);
    assert_int_equal(qos_check_slo(40, 0, msg, sizeof(msg)), -EINVAL);
    assert_non_null(strstr(msg, "latency 0 ms"));
    assert_int_equal(qos_check_slo(40, -5, msg, sizeof(msg)), -EINVAL);
    /* 100 ms written as 100e6 (ns): more than an hour */
    assert_int_equal(qos_check_slo(40, 100e6, msg, sizeof(msg)), -EINVAL);
    assert_int_equal(qos_set(&sched, "", 40, 100, msg, sizeof(msg)), -EINVAL);
    assert_int_equal(qos_set(&sched, "a b", 40, 100, msg, sizeof(msg)), -EINVAL);
    assert_int_equal(qos_set(&sched, "app1", 0, 100, msg, sizeof(msg)), -EINVAL);
    assert_int_equal(sched.ncls, 1);   /* nothing made by the refusals */
    assert_int_equal(qos_check_name("x123456789x123456789x123456789x123456789x123456789"
                                    "x123456789x123", 64, msg, sizeof(msg)), -EINVAL);
}

/* Unknown classes fall into the default class; the table has a bound. */
static void test_classes(void **state)
{
    char name[16], msg[200];
    uint32_t a;

    (void)state;
    qos_init(&sched, QOS_DSFQ, 1000);
    a = add_class(&sched, "app1", 40, 100);
    assert_int_equal(a, 1);
    assert_int_equal(qos_lookup(&sched, "app2", 4), 0);
    assert_int_equal(qos_lookup(&sched, "app", 3), 0);
    assert_int_equal(add_class(&sched, "app1", 50, 80), 1);   /* an update */
    assert_true(sched.cls[1].rate_mbps == 50);
    assert_int_equal(add_class(&sched, "default", 5, 1000), 0);
    for (int i = 2; i < QOS_MAX_CLASSES; i++) {
        snprintf(name, sizeof(name), "c%d", i);
        add_class(&sched, name, 1, 100);
    }
    assert_int_equal(qos_set(&sched, "onemore", 1, 100, msg, sizeof(msg)), -ENOSPC);
}

static void test_fifo_order(void **state)
{
    char order[64];
    uint32_t a, b;

    (void)state;
    qos_init(&sched, QOS_FIFO, 1000);
    a = add_class(&sched, "A", 40, 100);
    b = add_class(&sched, "B", 10, 10);
    submit(&sched, 0, a, MB, 0);
    submit(&sched, 1, b, MB, 1);
    submit(&sched, 2, a, MB, 2);
    submit(&sched, 3, b, MB, 3);
    assert_int_equal(drain(&sched, 3, order, NULL), 4);
    assert_string_equal(order, "ABAB");
}

/* Weights 2:1, both backlogged with 1 MB requests from time 0: start tags
 * A 0 .05 .1 .15 .2 .25, B 0 .1 .2; the least goes first, ties to the
 * older; at most QOS_DSFQ_DEPTH in the store. */
static void test_dsfq_order(void **state)
{
    struct qos_req *started[16];
    char order[64];
    uint32_t a, b;
    int i = 0;

    (void)state;
    qos_init(&sched, QOS_DSFQ, 1000);
    a = add_class(&sched, "A", 20, 100);
    b = add_class(&sched, "B", 10, 100);
    for (int k = 0; k < 6; k++)
        submit(&sched, i++, a, MB, 0);
    for (int k = 0; k < 3; k++)
        submit(&sched, i++, b, MB, 0);
    assert_int_equal(drain(&sched, 0, order, started), QOS_DSFQ_DEPTH);
    assert_string_equal(order, "ABAABAAB");
    qos_done(&sched, started[0], 10 * MS);
    assert_int_equal(drain(&sched, 10 * MS, order, NULL), 1);
    assert_string_equal(order, "A");
    /* a class arriving later starts at the virtual time: it owes nothing
     * for its idle past and gains nothing from it */
    submit(&sched, i++, add_class(&sched, "C", 10, 100), MB, 11 * MS);
    assert_true(reqs[i - 1].start_tag == sched.vtime);
    assert_true(sched.vtime == 0.25);
}

/* EDF below: the earlier deadline first, whatever the arrival order. */
static void test_edf_order(void **state)
{
    char order[64];
    uint32_t a, b;
    int i = 0;

    (void)state;
    qos_init(&sched, QOS_TWO_LEVEL, 1000);
    a = add_class(&sched, "A", 40, 100);
    b = add_class(&sched, "B", 20, 300);
    sched.depth = 8;
    for (int k = 0; k < 3; k++)
        submit(&sched, i++, b, MB, 0);
    for (int k = 0; k < 3; k++)
        submit(&sched, i++, a, MB, 1 * MS);
    /* B's deadlines 300 ms, A's 101 ms */
    assert_int_equal(drain(&sched, 1 * MS, order, NULL), 6);
    assert_string_equal(order, "AAABBB");
}

/* EDF counts a deadline from when the request conforms to its class's
 * rate (a bucket of one bound's worth): B (1 MB/s, 100 ms) sends 5 MB at
 * once, A (40 MB/s, 100 ms) 3 MB a millisecond later.  B's first conforms
 * at once, its others at 1 s intervals: A's go before them, "BAAABBBB"
 * (by arrival + bound alone, B's five would all go first). */
static void test_edf_conforming(void **state)
{
    char order[16];
    uint32_t a, b;

    (void)state;
    qos_init(&sched, QOS_TWO_LEVEL, 1000);
    a = add_class(&sched, "A", 40, 100);
    b = add_class(&sched, "B", 1, 100);
    sched.depth = 8;
    qos_tick(&sched, 0);
    for (int k = 0; k < 5; k++)
        submit(&sched, k, b, MB, 0);
    for (int k = 5; k < 8; k++)
        submit(&sched, k, a, MB, 1 * MS);
    assert_int_equal(drain(&sched, 1 * MS, order, NULL), 8);
    assert_string_equal(order, "BAAABBBB");
}

/* The credit counts requests, as many as the EDF depth (8 here): DSFQ
 * chooses which requests enter EDF, EDF orders them, and a request EDF
 * starts in the store gives its credit back at once.  B (16 MB/s, 300
 * ms) sends 12 requests of 1 MB at time 0, then A (32 MB/s, 100 ms) 12
 * (rates whose tags are exact in binary, so ties are ties).  Start tags
 * in 1/32 s: A k, B 2k (ties to the older: B's); EDF deadlines: A's 100 +
 * 31.25 k ms, B's 300 + 62.5 k ms (conformance).  DSFQ's order is B0 A0
 * A1 B1 A2 A3 B2 A4 A5 B3 ...; the empty store takes 8 as EDF takes them,
 * EDF refilled by each start: A0..A6 (deadlines up to 287.5 ms), then B0
 * (300) before A7 (318.75); then 8 wait in EDF and 8 above, the credit
 * spent, though EDF could take them.  The store then completes one each
 * 10 ms and EDF picks the earliest of its 8; each start lets the next by
 * tag down (16 refills: 8 in the first drain, 8 after).  The paper's
 * credit (the sum of the rates per window, 48 MB) never binds: EDF gets
 * all 24 at once and none waits above. */
static void test_credit(void **state)
{
    struct qos_req *started[48], *r;
    char order[48];
    uint32_t a, b;
    int n = 0;

    (void)state;
    qos_init(&sched, QOS_TWO_LEVEL, 1000);
    a = add_class(&sched, "A", 32, 100);
    b = add_class(&sched, "B", 16, 300);
    sched.depth = 8;
    for (int k = 0; k < 12; k++)
        submit(&sched, k, b, MB, 0);
    for (int k = 12; k < 24; k++)
        submit(&sched, k, a, MB, 0);
    n = drain(&sched, 0, order, started);
    assert_int_equal(n, 8);
    assert_string_equal(order, "AAAAAAAB");
    /* the credit binds: 8 in EDF, 8 wait above */
    assert_true(sched.credit <= 0);
    assert_int_equal(sched.nlower, 8);
    assert_int_equal(sched.nupper, 8);
    /* the store completes one request each 10 ms, the oldest first */
    for (int t = 1, done = 0; done < 24; t++) {
        qos_done(&sched, started[done++], (uint64_t)t * 10 * MS);
        while ((r = qos_next(&sched, (uint64_t)t * 10 * MS))) {
            order[n] = sched.cls[r->cls].name[0];
            started[n++] = r;
        }
        /* EDF never holds more than one credit's worth */
        assert_true(sched.nlower <= 8);
    }
    order[n] = 0;
    assert_int_equal(n, 24);
    /* here EDF's conformance deadlines advance at the classes' rates, so
     * EDF's order over a window of 8 is EDF's over all */
    assert_string_equal(order, "AAAAAAABAABAABABBBBBBBBB");
    assert_int_equal(sched.refills, 16);

    /* B's bound 3 s: EDF alone over everything would start A's 24 before
     * any B ("A" x 24, "B" x 12); DSFQ still chooses what enters EDF, 2 A
     * to 1 B (B0 A0 A1 B1 ...), so a B starts once EDF's 8 are all B's
     * (B7 enters 22nd, after A0..A13: the 15th start), and from then on
     * the rates' 2:1 until A's run out */
    qos_init(&sched, QOS_TWO_LEVEL, 1000);
    a = add_class(&sched, "A", 32, 100);
    b = add_class(&sched, "B", 16, 3000);
    sched.depth = 8;
    for (int k = 0; k < 12; k++)
        submit(&sched, k, b, MB, 0);
    for (int k = 12; k < 36; k++)
        submit(&sched, k, a, MB, 0);
    n = drain(&sched, 0, order, started);
    for (int t = 1, done = 0; done < 36; t++) {
        qos_done(&sched, started[done++], (uint64_t)t * 10 * MS);
        while ((r = qos_next(&sched, (uint64_t)t * 10 * MS))) {
            order[n] = sched.cls[r->cls].name[0];
            started[n++] = r;
        }
    }
    order[n] = 0;
    assert_string_equal(order, "AAAAAAAAAAAAAABAABAABAABAABAABBBBBBB");
}

/* A class within its share gets in at the next start, not after a batch:
 * B (16 MB/s) keeps 12 waiting, the depth is 4, the store completes one
 * request each 10 ms; after the first completion (the store and EDF hold
 * 4 each) A (32 MB/s, 100 ms) sends one request.  Its start tag is DSFQ's
 * virtual time, below B's next, and its deadline the earliest: the first
 * start after its arrival gives a credit back and A comes down, the
 * second starts it, behind 3 in the store.  With the credit refilled only
 * once EDF had emptied (and the store was below 0.9 L), A waited above
 * for the batch of B's that the first completion let down: the 4th. */
static void test_credit_share(void **state)
{
    struct qos_req *started[32], *r, *ra;
    char order[32];
    uint32_t a, b;
    int n, t, done = 0, starts = 0;

    (void)state;
    qos_init(&sched, QOS_TWO_LEVEL, 1000);
    a = add_class(&sched, "A", 32, 100);
    b = add_class(&sched, "B", 16, 300);
    sched.depth = 4;
    for (int k = 0; k < 12; k++)
        submit(&sched, k, b, MB, 0);
    n = drain(&sched, 0, order, started);
    assert_int_equal(n, 4);
    qos_done(&sched, started[done++], 10 * MS);
    while ((r = qos_next(&sched, 10 * MS)))
        started[n++] = r;
    assert_int_equal(n, 5);
    ra = submit(&sched, 12, a, MB, 15 * MS);
    assert_null(qos_next(&sched, 15 * MS));
    assert_int_equal(ra->where, QOS_UPPER);
    for (t = 2; ra->where != QOS_STORE && t < 20; t++) {
        qos_done(&sched, started[done++], (uint64_t)t * 10 * MS);
        while ((r = qos_next(&sched, (uint64_t)t * 10 * MS))) {
            started[n++] = r;
            starts++;
        }
    }
    assert_int_equal(ra->where, QOS_STORE);
    assert_ptr_equal(started[n - 1], ra);
    assert_int_equal(starts, 2);
}

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
    assert_int_equal(sched.overloaded, 0);
    assert_int_equal(sched.depth, 8);
    /* 8 requests of 30 ms: p95 240 ms (missed), mean wait 105 ms: E < 0,
     * L_RT = 1 < Lmin = 8: overloaded; N = 8 = X, so max(1, 8) = 8 */
    one_window(a, 8, 1000 * MS, 30);
    assert_int_equal(sched.cls[a].last.met, 0);
    assert_int_equal(sched.overloaded, 1);
    assert_int_equal(sched.depth, 8);
    /* a window that completes nothing while requests wait: infinite depth */
    submit(&sched, 0, a, MB, 2000 * MS);
    assert_non_null(qos_next(&sched, 2000 * MS));
    qos_tick(&sched, 3000 * MS);
    assert_int_equal(sched.overloaded, 1);
    assert_int_equal(sched.depth, QOS_DEPTH_INF);
    /* it completes in the next window (p95 1001 ms, missed) and nothing
     * else comes: L_RT = 64 * 100 / 1001 = 6.4, Lmin = 0, Lbar = 0 -> 1:
     * underloaded, L_RT > Lbar: Lbar, raised to QOS_DEPTH_MIN (no demand,
     * no depth) */
    qos_done(&sched, &reqs[0], 3001 * MS);
    qos_tick(&sched, 4000 * MS);
    assert_int_equal(sched.overloaded, 0);
    assert_int_equal(sched.depth, QOS_DEPTH_MIN);
    /* a light window: 2 requests of 5 ms: p95 10, waits 0 and 5: L_RT =
     * 2 * 97.5 / 10 = 19.5 >= Lmin = 2 * 2 / 2 = 2, > Lbar = 2: depth 2 */
    one_window(a, 2, 4000 * MS, 5);
    assert_int_equal(sched.overloaded, 0);
    assert_int_equal(sched.depth, 2);
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
    assert_int_equal(sched.overloaded, 1);
    assert_int_equal(sched.depth, 2);
    for (int k = 0; k < 60; k++)
        submit(&sched, k, a, MB, 6000 * MS);
    for (int k = 0; k < 40; k++) {
        struct qos_req *r = qos_next(&sched, 6000 * MS + (uint64_t)k * 25 * MS);

        assert_non_null(r);
        qos_done(&sched, r, 6000 * MS + (uint64_t)(k + 1) * 25 * MS);
    }
    qos_tick(&sched, 7000 * MS);
    assert_int_equal(sched.overloaded, 1);
    assert_int_equal(sched.depth, 3);
    assert_int_equal(sched.lcap, 2);
    assert_true(sched.xcap == 39);
    /* at depth 3 it completes 40 (one at a time): the probe gained
     * nothing, and at capacity more depth adds only latency: the depth
     * the bound allows, L_RT = 1, raised to QOS_DEPTH_MIN */
    backlog_window(a, 100, 40, 40, 7000 * MS, 25);
    assert_int_equal(sched.overloaded, 1);
    assert_int_equal(sched.depth, 2);
    /* a store that did 40 a window completes 20 at depth 2 (it serves
     * more at once): the depth that reached its capacity, 2 x 40 / 20 =
     * 4, but not past the least depth known to reach
     * it, 2, in this window; that one fell short, so it is raised to 4
     * for the next */
    backlog_window(a, 200, 40, 20, 8000 * MS, 50);
    assert_int_equal(sched.overloaded, 1);
    assert_int_equal(sched.depth, 2);
    assert_int_equal(sched.lcap, 4);
    /* at depth 2 it completes 40 again: capacity needs no more than 2 */
    backlog_window(a, 300, 40, 40, 9000 * MS, 25);
    assert_int_equal(sched.lcap, 2);
    assert_int_equal(sched.overloaded, 1);
    assert_int_equal(sched.depth, 2);
    /* the 40 left waiting served, as many at once as the depth allows:
     * nothing left or due, so not overloaded; at capacity (41 of 40), so
     * however long they waited the depth does not grow: L_RT = 1, raised
     * to QOS_DEPTH_MIN */
    depth_window(a, 0, 10000 * MS, 5);
    assert_int_equal(sched.overloaded, 0);
    assert_int_equal(sched.depth, 2);
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
    assert_int_equal(sched.overloaded, 0);
    assert_int_equal(sched.depth, 4);
    depth_window(a, 8, 12000 * MS, 30);
    assert_int_equal(sched.cls[a].last.met, 1);
    assert_int_equal(sched.overloaded, 0);
    assert_int_equal(sched.depth, 4);
    /* the same with every bound kept (10 ms each: p95 40 ms): the depth
     * does not shrink (L_RT would propose less, Lbar = L) */
    one_window(a, 4, 13000 * MS, 10);
    assert_int_equal(sched.cls[a].last.met, 1);
    assert_int_equal(sched.overloaded, 0);
    assert_int_equal(sched.depth, 4);
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

/* A flood of A (2 requests per ms, its SLO 40 MB/s) against one request of
 * B every 100 ms, a store that completes one request per ms: every request
 * of B is served, none waits more than a second, and B gets at least its
 * request rate. */
static void test_no_starvation(void **state)
{
    static struct qos_req *inflight[QOS_DEPTH_INF * 2];
    int ninflight = 0, next = 0, b_sent = 0, b_served = 0;
    uint64_t worst_b = 0;
    char order[QOS_DEPTH_INF * 2 + 1];
    struct qos_req *started[QOS_DEPTH_INF * 2];
    uint32_t a, b;

    (void)state;
    for (int pol = QOS_DSFQ; pol <= QOS_TWO_LEVEL; pol++) {
        qos_init(&sched, (enum qos_policy)pol, 1000);
        a = add_class(&sched, "A", 40, 100);
        b = add_class(&sched, "B", 1, 10000);
        ninflight = next = b_sent = b_served = 0;
        worst_b = 0;
        for (uint64_t ms = 0; ms < 3000; ms++) {
            uint64_t now = ms * MS;
            int n;

            if (ninflight > 0) {
                struct qos_req *r = inflight[0];

                memmove(inflight, inflight + 1, (size_t)--ninflight * sizeof(*inflight));
                if (r->cls == b) {
                    b_served++;
                    if (now - r->arrive_us > worst_b)
                        worst_b = now - r->arrive_us;
                }
                qos_done(&sched, r, now);
                r->bytes = 0;   /* the slot is free again */
            }
            for (int k = 0; k < 2 + (ms % 100 == 0); k++) {
                int slot;

                for (slot = next; reqs[slot % 4096].bytes; slot++)
                    ;
                next = slot + 1;
                submit(&sched, slot % 4096, k == 2 ? b : a, MB, now);
                b_sent += k == 2;
            }
            n = drain(&sched, now, order, started);
            for (int k = 0; k < n; k++)
                inflight[ninflight++] = started[k];
        }
        assert_int_equal(b_sent, 30);
        assert_in_range(b_served, 29, 30);
        assert_true(worst_b < 1000 * MS);
        memset(reqs, 0, sizeof(reqs));
    }
}

/* Writes text to a new temporary file; its path in path (PATH_MAX). */
static void slo_file(char *path, const char *text)
{
    FILE *f;

    snprintf(path, 64, "/tmp/test_qos_slo.XXXXXX");
    int fd = mkstemp(path);

    assert_true(fd >= 0);
    assert_non_null(f = fdopen(fd, "w"));
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

/* SLOs from a file (--qos-slo): a good file sets its classes; each bad
 * line is refused with the file, the line number and the reason. */
static void test_slo_file(void **state)
{
    static const struct {
        const char *text, *reason;
    } bad[] = {
        { "app1 40 100\napp2 -5 300\n", ":2: rate -5 MB/s" },
        { "app1 0MB/s 100ms\n", ":1: rate 0 MB/s" },
        { "app1 40GB/s 100ms\n", "unknown unit 'GB/s'" },
        { "app1 40 100s\n", "unknown unit 's'" },
        { "app1 40 0.01\n", "latency 0.01 ms" },
        { "app1 nan 100\n", "'nan' is not a number" },
        { "app1 40 MB/s 100\n", "after the latency" },
        { "app1 40\n", "not 2 words" },
        { "app1 forty 100\n", "'forty' is not a number" },
        { "# two\napp1 40 100\n\napp1 20 300\n", ":4: class app1 is named twice" },
    };
    char path[64], msg[300];
    uint32_t i;

    (void)state;
    qos_init(&sched, QOS_TWO_LEVEL, 1000);
    slo_file(path, "# the paper's\napp1 40MB/s 100ms  # on-off\n\n\tapp2\t20 300\n"
                   "default 5 1000\n");
    assert_int_equal(qos_load_slo(&sched, path, msg, sizeof(msg)), 0);
    unlink(path);
    assert_int_equal(sched.ncls, 3);
    i = qos_lookup(&sched, "app1", 4);
    assert_true(i > 0 && sched.cls[i].rate_mbps == 40 && sched.cls[i].latency_ms == 100);
    i = qos_lookup(&sched, "app2", 4);
    assert_true(i > 0 && sched.cls[i].rate_mbps == 20 && sched.cls[i].latency_ms == 300);
    assert_true(sched.cls[0].rate_mbps == 5);
    for (size_t k = 0; k < sizeof(bad) / sizeof(*bad); k++) {
        qos_init(&sched, QOS_TWO_LEVEL, 1000);
        slo_file(path, bad[k].text);
        msg[0] = 0;
        assert_int_equal(qos_load_slo(&sched, path, msg, sizeof(msg)), -EINVAL);
        unlink(path);
        if (!strstr(msg, bad[k].reason) || strncmp(msg, path, strlen(path)) != 0)
            fail_msg("'%s': message '%s' lacks '%s'", bad[k].text, msg, bad[k].reason);
    }
    qos_init(&sched, QOS_TWO_LEVEL, 1000);
    assert_int_equal(qos_load_slo(&sched, "/nonexistent/slo", msg, sizeof(msg)), -ENOENT);
    assert_non_null(strstr(msg, "/nonexistent/slo: No such file"));
}

/* Internal work (--qos-internal): a class clients cannot name or set,
 * outside the credit, min MB/s while applications have requests (or had
 * in this window or the last), max otherwise; bad ranges refused. */
static void test_internal(void **state)
{
    static const double bad[][2] = { { 0, 10 }, { -1, 10 }, { 10, 5 }, { 5, -1 },
                                     { NAN, 10 }, { 5, INFINITY }, { 2e6, 0 } };
    char msg[200];
    uint32_t a, in;
    double credit;

    (void)state;
    qos_init(&sched, QOS_TWO_LEVEL, 1000);
    a = add_class(&sched, "A", 40, 100);
    for (size_t k = 0; k < sizeof(bad) / sizeof(*bad); k++) {
        assert_int_equal(qos_set_internal(&sched, bad[k][0], bad[k][1], msg, sizeof(msg)),
                         -EINVAL);
        assert_non_null(strstr(msg, "internal work"));
    }
    assert_int_equal(sched.ncls, 2);
    assert_true(qos_internal_rate(&sched, 0) == 0);      /* none: unpaced */
    qos_tick(&sched, 0);
    credit = sched.credit;
    assert_int_equal(qos_set_internal(&sched, 5, 50, msg, sizeof(msg)), 0);
    in = sched.internal;
    assert_int_equal(in, 2);
    assert_string_equal(sched.cls[in].name, QOS_INTERNAL_NAME);
    /* clients naming it fall into default; nobody sets it as an SLO */
    assert_int_equal(qos_lookup(&sched, "internal", 8), 0);
    assert_int_equal(qos_set(&sched, "internal", 10, 100, msg, sizeof(msg)), -EINVAL);
    assert_non_null(strstr(msg, "--qos-internal"));
    /* idle: max; a request of A: min, while it waits, is served, and for
     * the rest of its window and the next */
    assert_true(qos_internal_rate(&sched, 10 * MS) == 50);
    submit(&sched, 0, a, MB, 20 * MS);
    assert_true(qos_internal_rate(&sched, 20 * MS) == 5);
    qos_done(&sched, qos_next(&sched, 20 * MS), 30 * MS);
    assert_true(qos_internal_rate(&sched, 500 * MS) == 5);
    assert_true(qos_internal_rate(&sched, 1500 * MS) == 5);
    assert_true(qos_internal_rate(&sched, 2500 * MS) == 50);
    /* its bytes show as the class's issue and served rate; its min is
     * not in the credit (it never queues here) */
    qos_internal_done(&sched, 3 * MB, 2600 * MS);
    qos_tick(&sched, 3000 * MS);
    assert_true(fabs(sched.cls[in].last.served_mbps - 3) < 1e-9);
    assert_int_equal(sched.cls[in].last.met, -1);
    assert_true(sched.credit == credit);
    /* changing the pace keeps the one class */
    assert_int_equal(qos_set_internal(&sched, 1, 0, msg, sizeof(msg)), 0);
    assert_int_equal(sched.internal, in);
    assert_int_equal(sched.ncls, 3);
    assert_true(qos_internal_rate(&sched, 3100 * MS) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slo_checks),    cmocka_unit_test(test_classes),
        cmocka_unit_test(test_fifo_order),    cmocka_unit_test(test_dsfq_order),
        cmocka_unit_test(test_edf_order),     cmocka_unit_test(test_edf_conforming),
        cmocka_unit_test(test_credit),
        cmocka_unit_test(test_credit_share),
        cmocka_unit_test(test_controller),    cmocka_unit_test(test_no_slo_depth),
        cmocka_unit_test(test_startup_depth),
        cmocka_unit_test(test_one_class_depth), cmocka_unit_test(test_probe_depth),
        cmocka_unit_test(test_no_starvation),
        cmocka_unit_test(test_slo_file),      cmocka_unit_test(test_internal),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
