/* Unit tests of an I/O node's READ places (backend/server/readq.c): which
 * READ goes into the store when, under each policy of enum
 * ipvfs_read_order, and which READs ride along with one there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "backend/server/readq.h"

#define MIB (1ull << 20)

static struct read_wait rd(uint32_t client, uint32_t order, uint64_t handle, uint64_t lo,
                           uint64_t hi)
{
    return (struct read_wait){ .handle = handle, .lo = lo, .hi = hi, .first = lo,
                               .order = order, .client_id = client };
}

/* A lone READ goes in at once; with the places taken the next waits, and
 * gets the place the first one leaves. */
static void test_places(void **state)
{
    struct read_order ro;
    struct read_wait a = rd(0, IPVFS_READ_ORDER_FIFO, 1, 0, MIB),
                     b = rd(1, IPVFS_READ_ORDER_FIFO, 1, 8 * MIB, 9 * MIB);

    (void)state;
    readq_init(&ro, 1, 0, 1);
    assert_int_equal(readq_submit(&ro, &a, 10), 1);
    assert_int_equal(a.state, RW_PLACE);
    assert_int_equal(readq_submit(&ro, &b, 20), 0);
    assert_int_equal(b.state, RW_WAITING);
    assert_null(readq_next(&ro, 30));
    readq_leave(&ro, &a, 50);
    assert_int_equal(a.state, RW_OUT);
    assert_int_equal(ro.placed, 1);
    assert_int_equal(ro.place_us, 40);
    assert_int_equal(ro.freed_us, 50);
    assert_ptr_equal(readq_next(&ro, 55), &b);
    assert_int_equal(b.state, RW_PLACE);
    assert_int_equal(ro.handoffs, 1);
    assert_int_equal(ro.handoff_us, 5);
    assert_int_equal(ro.waited, 1);
    assert_int_equal(ro.wait_us, 35);
    assert_null(ro.head);
    assert_null(ro.tail);
    readq_leave(&ro, &b, 60);
    assert_int_equal(ro.in_store, 0);
    assert_null(ro.store);
}

/* Fills one place with a READ of client 9, queues w[0..n) under order,
 * then hands the place on n times and returns the order in which the
 * clients got it. */
static void serve_order(uint32_t order, uint32_t hash_first, struct read_wait *w, int n,
                        uint32_t *out_clients)
{
    struct read_order ro;
    struct read_wait hold = rd(9, order, 2, 100 * MIB, 101 * MIB), *cur = &hold;

    readq_init(&ro, 1, hash_first, 1);
    assert_int_equal(readq_submit(&ro, &hold, 0), 1);
    for (int i = 0; i < n; i++) {
        w[i].order = order;
        assert_int_equal(readq_submit(&ro, &w[i], 1), 0);
    }
    for (int i = 0; i < n; i++) {
        readq_leave(&ro, cur, 2);
        cur = readq_next(&ro, 3);
        assert_non_null(cur);
        out_clients[i] = cur->client_id;
    }
    assert_null(readq_next(&ro, 4));
}

/* Disjoint READs of one datafile, so none rides: each policy's order. */
static void test_policies(void **state)
{
    struct read_wait w[4];
    uint32_t got[4];

    (void)state;
    /* FIFO: as they came */
    for (int i = 0; i < 4; i++)
        w[i] = rd((uint32_t)(3 - i), IPVFS_READ_ORDER_FIFO, 2, (uint64_t)(4 - i) * MIB,
                  (uint64_t)(4 - i) * MIB + 4096);
    serve_order(IPVFS_READ_ORDER_FIFO, 0, w, 4, got);
    assert_int_equal(got[0], 3);
    assert_int_equal(got[3], 0);
    /* FIRST: the lowest first offset */
    serve_order(IPVFS_READ_ORDER_FIRST, 0, w, 4, got);
    assert_int_equal(got[0], 0);
    assert_int_equal(got[1], 1);
    assert_int_equal(got[3], 3);
    /* HASH: clients 0..9 seen (n = 10); turns from client 2 (the I/O
     * node's index) up, modulo n, whatever the arrival order */
    serve_order(IPVFS_READ_ORDER_HASH, 2, w, 4, got);
    assert_int_equal(got[0], 2);
    assert_int_equal(got[1], 3);
    assert_int_equal(got[2], 0);
    assert_int_equal(got[3], 1);
    /* RANDOM: each waiting client once, in some order */
    serve_order(IPVFS_READ_ORDER_RANDOM, 0, w, 4, got);
    assert_int_equal(got[0] + got[1] + got[2] + got[3], 0 + 1 + 2 + 3);
}

/* The tile case: client 0 holds both places with READs of its rows; the
 * READ of client 1 whose rows lie between them rides along, one of
 * another datafile or of rows elsewhere waits, and riders leave without
 * freeing a place. */
static void test_riders(void **state)
{
    struct read_order ro;
    struct read_wait a0 = rd(0, IPVFS_READ_ORDER_HASH, 5, 0, 4 * MIB),
                     a1 = rd(0, IPVFS_READ_ORDER_HASH, 5, 4 * MIB, 8 * MIB),
                     b0 = rd(1, IPVFS_READ_ORDER_HASH, 5, 32768, 4 * MIB + 32768),
                     other = rd(1, IPVFS_READ_ORDER_HASH, 6, 0, 4 * MIB),
                     far = rd(2, IPVFS_READ_ORDER_HASH, 5, 64 * MIB, 68 * MIB),
                     touch = rd(3, IPVFS_READ_ORDER_HASH, 5, 8 * MIB, 9 * MIB);

    (void)state;
    readq_init(&ro, 2, 0, 1);
    assert_int_equal(readq_submit(&ro, &a0, 0), 1);
    assert_int_equal(readq_submit(&ro, &a1, 0), 1);
    assert_int_equal(readq_submit(&ro, &other, 1), 0);
    assert_int_equal(readq_submit(&ro, &far, 1), 0);
    /* only touching a READ's end is no overlap */
    assert_int_equal(readq_submit(&ro, &touch, 1), 0);
    assert_int_equal(readq_submit(&ro, &b0, 2), 1);
    assert_int_equal(b0.state, RW_RIDER);
    assert_int_equal(ro.in_store, 2);
    assert_int_equal(ro.riding, 1);
    assert_int_equal(ro.rode, 1);
    assert_null(readq_next(&ro, 3));
    /* a rider leaving frees no place */
    readq_leave(&ro, &b0, 4);
    assert_int_equal(ro.in_store, 2);
    assert_int_equal(ro.freed_us, 0);
    assert_int_equal(ro.placed, 0);
    assert_null(readq_next(&ro, 5));
    /* a place freed goes by the policy: HASH's turn from client 0 on */
    readq_leave(&ro, &a0, 6);
    assert_ptr_equal(readq_next(&ro, 7), &other);
    assert_int_equal(other.state, RW_PLACE);
    assert_null(readq_next(&ro, 8));
    readq_leave(&ro, &a1, 9);
    readq_leave(&ro, &other, 9);
    assert_non_null(readq_next(&ro, 10));
    assert_non_null(readq_next(&ro, 10));
    assert_null(ro.head);
}

/* A waiting READ rides with one that goes in after it came; at most
 * `places` ride at once. */
static void test_rider_cap(void **state)
{
    struct read_order ro;
    struct read_wait hold = rd(0, IPVFS_READ_ORDER_FIFO, 5, 100 * MIB, 101 * MIB),
                     lead = rd(0, IPVFS_READ_ORDER_FIFO, 5, 0, 4 * MIB), r[3];

    (void)state;
    readq_init(&ro, 1, 0, 1);
    assert_int_equal(readq_submit(&ro, &hold, 0), 1);
    assert_int_equal(readq_submit(&ro, &lead, 0), 0);
    for (int i = 0; i < 3; i++) {
        r[i] = rd((uint32_t)i + 1, IPVFS_READ_ORDER_FIFO, 5, (uint64_t)(i + 1) * 4096, 4 * MIB);
        assert_int_equal(readq_submit(&ro, &r[i], 1), 0);
    }
    readq_leave(&ro, &hold, 2);
    assert_ptr_equal(readq_next(&ro, 3), &lead);
    assert_ptr_equal(readq_next(&ro, 3), &r[0]);
    assert_int_equal(r[0].state, RW_RIDER);
    assert_null(readq_next(&ro, 3));
    assert_int_equal(ro.riding, 1);
    assert_ptr_equal(ro.tail, &r[2]);
    readq_leave(&ro, &r[0], 4);
    assert_ptr_equal(readq_next(&ro, 5), &r[1]);
    assert_int_equal(ro.waited, 3);
    assert_int_equal(ro.served, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_places),
        cmocka_unit_test(test_policies),
        cmocka_unit_test(test_riders),
        cmocka_unit_test(test_rider_cap),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
