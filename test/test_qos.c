/* Unit tests of the I/O node's QoS scheduler (backend/server/qos.c; the
 * policy is in qos.h): SLO and name checks, the exact orders of FIFO,
 * DSFQ and EDF on synthetic arrivals, the credit and its refill, that no
 * class starves, SLO files and the internal class.  The feedback
 * controller's depth is test_qos_depth.c's. */
#include "test/qos_test.h"

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
        cmocka_unit_test(test_no_starvation),
        cmocka_unit_test(test_slo_file),      cmocka_unit_test(test_internal),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
