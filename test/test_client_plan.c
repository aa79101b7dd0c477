/* Unit tests of the client's request splitting (adio/client/plan.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adio/client/plan.h"
#include "adio/client/sched.h"

static const struct plan_limits big = { 1u << 30, 1u << 20, 0 };

static char buf[1 << 16];

/* Finds the plan requests of server s, in order. */
static size_t reqs_of(const struct plan *p, uint32_t s, const struct plan_req **out, size_t max)
{
    size_t n = 0;

    for (size_t i = 0; i < p->nreqs && n < max; i++)
        if (p->reqs[i].server == s)
            out[n++] = &p->reqs[i];
    return n;
}

/* A contiguous access over two servers: one request each, the units of a
 * server coalesced into one datafile pair, memory segments kept apart. */
static void contiguous_two_servers(void **state)
{
    struct stripe_layout l = { .unit = 4, .factor = 2, .first_server = 0, .nio = 2 };
    struct ipvfs_extent e = { .offset = 0, .len = 16 };
    struct iovec m = { .iov_base = buf, .iov_len = 16 };
    const struct plan_req *r[4];
    struct plan p;

    assert_int_equal(plan_build(&l, &e, 1, &m, 1, &big, &p), 0);
    assert_int_equal(p.nreqs, 2);
    assert_int_equal(reqs_of(&p, 0, r, 4), 1);
    assert_int_equal(r[0]->npairs, 1);
    assert_int_equal(r[0]->pairs[0].offset, 0);
    assert_int_equal(r[0]->pairs[0].len, 8);
    assert_int_equal(r[0]->niov, 2);
    assert_ptr_equal(r[0]->iov[0].iov_base, buf);
    assert_ptr_equal(r[0]->iov[1].iov_base, buf + 8);
    assert_int_equal(reqs_of(&p, 1, r, 4), 1);
    assert_int_equal(r[0]->bytes, 8);
    assert_ptr_equal(r[0]->iov[0].iov_base, buf + 4);
    assert_ptr_equal(r[0]->iov[1].iov_base, buf + 12);
    plan_free(&p);
}

/* Odd offset and length, a rotated first server, a factor below nio. */
static void odd_offsets_rotated(void **state)
{
    struct stripe_layout l = { .unit = 10, .factor = 2, .first_server = 2, .nio = 3 };
    struct ipvfs_extent e = { .offset = 7, .len = 15 };  /* bytes 7..21 */
    struct iovec m = { .iov_base = buf, .iov_len = 15 };
    const struct plan_req *r[4];
    struct plan p;

    assert_int_equal(plan_build(&l, &e, 1, &m, 1, &big, &p), 0);
    assert_int_equal(p.nreqs, 2);
    assert_int_equal(reqs_of(&p, 1, r, 4), 0);
    /* unit 0 (bytes 0..9) and unit 2 (20..29) are datafile 0 on server 2 */
    assert_int_equal(reqs_of(&p, 2, r, 4), 1);
    assert_int_equal(r[0]->npairs, 1);   /* 7..9 and 20..21 touch in the datafile */
    assert_int_equal(r[0]->pairs[0].offset, 7);
    assert_int_equal(r[0]->pairs[0].len, 5);
    assert_int_equal(r[0]->niov, 2);
    assert_int_equal(r[0]->iov[0].iov_len, 3);
    assert_ptr_equal(r[0]->iov[1].iov_base, buf + 13);
    /* unit 1 (10..19) is datafile 1 on server 0 */
    assert_int_equal(reqs_of(&p, 0, r, 4), 1);
    assert_int_equal(r[0]->pairs[0].offset, 0);
    assert_int_equal(r[0]->pairs[0].len, 10);
    assert_ptr_equal(r[0]->iov[0].iov_base, buf + 3);
    plan_free(&p);
}

/* The byte limit splits a request, even inside one stripe unit. */
static void byte_limit_splits(void **state)
{
    struct stripe_layout l = { .unit = 100, .factor = 1, .first_server = 0, .nio = 1 };
    struct plan_limits lim = { 30, 100, 0 };
    struct ipvfs_extent e = { .offset = 5, .len = 70 };
    struct iovec m = { .iov_base = buf, .iov_len = 70 };
    struct plan p;

    assert_int_equal(plan_build(&l, &e, 1, &m, 1, &lim, &p), 0);
    assert_int_equal(p.nreqs, 3);
    assert_int_equal(p.reqs[0].bytes, 30);
    assert_int_equal(p.reqs[1].bytes, 30);
    assert_int_equal(p.reqs[2].bytes, 10);
    assert_int_equal(p.reqs[1].pairs[0].offset, 35);
    assert_ptr_equal(p.reqs[2].iov[0].iov_base, buf + 60);
    plan_free(&p);
}

/* The run limit (schedule block b) cuts a contiguous access into requests
 * of b bytes, while short pieces with gaps share one request however many
 * bytes they add up to; a long piece after short ones fills the request's
 * run room first, then goes on in new requests. */
static void run_limit_cuts_runs_only(void **state)
{
    struct stripe_layout l = { .unit = 1000, .factor = 1, .first_server = 0, .nio = 1 };
    struct plan_limits lim = { 1000, 100, 40 };
    struct ipvfs_extent contig = { 0, 100 };
    struct ipvfs_extent rows[6] = { { 0, 30 }, { 50, 30 }, { 100, 30 }, { 150, 30 },
                                    { 200, 30 }, { 300, 90 } };
    struct iovec m = { .iov_base = buf, .iov_len = 100 };
    struct plan p;

    assert_int_equal(plan_build(&l, &contig, 1, &m, 1, &lim, &p), 0);
    assert_int_equal(p.nreqs, 3);
    assert_int_equal(p.reqs[0].bytes, 40);
    assert_int_equal(p.reqs[1].pairs[0].offset, 40);
    assert_int_equal(p.reqs[2].bytes, 20);
    plan_free(&p);
    m.iov_len = 240;
    assert_int_equal(plan_build(&l, rows, 6, &m, 1, &lim, &p), 0);
    assert_int_equal(p.nreqs, 3);
    assert_int_equal(p.reqs[0].npairs, 6);      /* five rows + 40 bytes of the long piece */
    assert_int_equal(p.reqs[0].bytes, 190);
    assert_int_equal(p.reqs[0].pairs[5].len, 40);
    assert_int_equal(p.reqs[1].pairs[0].offset, 340);
    assert_int_equal(p.reqs[1].bytes, 40);
    assert_int_equal(p.reqs[2].bytes, 10);
    assert_ptr_equal(p.reqs[2].iov[0].iov_base, buf + 230);
    plan_free(&p);
}

/* The rows of one rank of 2 x 2 tiles (1024 rows of 32 KiB, 16 MiB for
 * the rank, interleaving with its neighbour's) over two servers with
 * 64 KiB stripe units, with the limits the client uses: a READ goes to
 * each server as requests of IPVFS_LIST_READ_BYTES, so that their replies
 * overlap the store's work (issue 27); a WRITE as one request of 8 MiB. */
static void small_tile_rows_request_sizes(void **state)
{
    enum { ROWS = 512, ROW = 32 << 10 };
    struct stripe_layout l = { .unit = 64 << 10, .factor = 2, .first_server = 0, .nio = 2 };
    struct ipvfs_extent *rows = calloc(ROWS, sizeof(*rows));
    char *mem = malloc((size_t)ROWS * ROW);
    struct iovec m = { .iov_base = mem, .iov_len = (size_t)ROWS * ROW };
    struct plan_limits rd = plan_limits_for(256 << 10, 0), wr = plan_limits_for(256 << 10, 1);
    const struct plan_req *r[16];
    struct plan p;

    assert_non_null(rows);
    assert_non_null(mem);
    for (size_t i = 0; i < ROWS; i++)
        rows[i] = (struct ipvfs_extent){ .offset = i * 2 * ROW, .len = ROW };
    assert_int_equal(plan_build(&l, rows, ROWS, &m, 1, &rd, &p), 0);
    for (uint32_t s = 0; s < 2; s++) {
        size_t n = reqs_of(&p, s, r, 16);

        assert_int_equal(n, (ROWS / 2) * (uint64_t)ROW / IPVFS_LIST_READ_BYTES);
        for (size_t i = 0; i < n; i++) {
            assert_int_equal(r[i]->bytes, IPVFS_LIST_READ_BYTES);
            assert_int_equal(r[i]->npairs, IPVFS_LIST_READ_BYTES / ROW);
        }
    }
    plan_free(&p);
    assert_int_equal(plan_build(&l, rows, ROWS, &m, 1, &wr, &p), 0);
    assert_int_equal(p.nreqs, 2);
    assert_int_equal(p.reqs[0].bytes, IPVFS_MAX_IO_BYTES);
    assert_int_equal(p.reqs[0].npairs, 256);
    plan_free(&p);
    free(mem);
    free(rows);
}

/* The pair limit splits a request; touching pairs merge instead. */
static void pair_limit_splits(void **state)
{
    struct stripe_layout l = { .unit = 1000, .factor = 1, .first_server = 0, .nio = 1 };
    struct plan_limits lim = { 1000, 2, 0 };
    struct ipvfs_extent e[5] = { { 0, 1 }, { 2, 1 }, { 3, 1 }, { 6, 1 }, { 9, 1 } };
    struct iovec m = { .iov_base = buf, .iov_len = 5 };
    struct plan p;

    assert_int_equal(plan_build(&l, e, 5, &m, 1, &lim, &p), 0);
    assert_int_equal(p.nreqs, 2);
    assert_int_equal(p.reqs[0].npairs, 2);
    assert_int_equal(p.reqs[0].pairs[1].offset, 2);
    assert_int_equal(p.reqs[0].pairs[1].len, 2);
    assert_int_equal(p.reqs[0].niov, 1);       /* memory stays one segment */
    assert_int_equal(p.reqs[0].iov[0].iov_len, 3);
    assert_int_equal(p.reqs[1].npairs, 2);
    assert_int_equal(p.reqs[1].pairs[0].offset, 6);
    plan_free(&p);
}

/* Scattered memory, offsets beyond 2^32 and the sum of bytes per server. */
static void scattered_memory_high_offsets(void **state)
{
    struct stripe_layout l = { .unit = 65536, .factor = 4, .first_server = 1, .nio = 4 };
    uint64_t base = (5ull << 32) + 12345;
    struct ipvfs_extent e[2] = { { base, 100000 }, { base + 300000, 50000 } };
    struct iovec m[3] = { { buf, 1 }, { buf + 10, 60000 }, { buf + 1, 89999 } };
    uint64_t total = 0;
    struct plan p;

    assert_int_equal(plan_build(&l, e, 2, m, 3, &big, &p), 0);
    for (size_t i = 0; i < p.nreqs; i++) {
        uint64_t iovsum = 0, pairsum = 0;

        for (int k = 0; k < p.reqs[i].niov; k++)
            iovsum += p.reqs[i].iov[k].iov_len;
        for (uint32_t k = 0; k < p.reqs[i].npairs; k++) {
            pairsum += p.reqs[i].pairs[k].len;
            assert_true(p.reqs[i].pairs[k].offset >= (1ull << 32) / 4);
        }
        assert_int_equal(iovsum, p.reqs[i].bytes);
        assert_int_equal(pairsum, p.reqs[i].bytes);
        total += p.reqs[i].bytes;
    }
    assert_int_equal(total, 150000);
    plan_free(&p);
}

static void length_mismatch_is_einval(void **state)
{
    struct stripe_layout l = { .unit = 4, .factor = 1, .first_server = 0, .nio = 1 };
    struct ipvfs_extent e = { .offset = 0, .len = 10 };
    struct iovec shortm = { .iov_base = buf, .iov_len = 9 };
    struct iovec longm = { .iov_base = buf, .iov_len = 11 };
    struct ipvfs_extent wrap = { .offset = UINT64_MAX - 2, .len = 10 };
    struct plan p;

    assert_int_equal(plan_build(&l, &e, 1, &shortm, 1, &big, &p), -EINVAL);
    plan_free(&p);
    assert_int_equal(plan_build(&l, &e, 1, &longm, 1, &big, &p), -EINVAL);
    plan_free(&p);
    assert_int_equal(plan_build(&l, &wrap, 1, &longm, 1, &big, &p), -EINVAL);
    plan_free(&p);
}

static void empty_access_plans_nothing(void **state)
{
    struct stripe_layout l = { .unit = 4, .factor = 1, .first_server = 0, .nio = 1 };
    struct ipvfs_extent e = { .offset = 123, .len = 0 };
    struct iovec m = { .iov_base = buf, .iov_len = 0 };
    struct plan p;

    assert_int_equal(plan_build(&l, &e, 1, &m, 1, &big, &p), 0);
    assert_int_equal(p.nreqs, 0);
    plan_free(&p);
}

/* Round trip: every planned byte maps back to the right file offset. */
static void round_trip_matches_layout(void **state)
{
    struct stripe_layout l = { .unit = 7, .factor = 3, .first_server = 1, .nio = 4 };
    struct plan_limits lim = { 11, 3, 0 };
    struct ipvfs_extent e = { .offset = 5, .len = 200 };
    struct iovec m = { .iov_base = buf, .iov_len = 200 };
    struct plan p;
    uint8_t hit[200] = { 0 };

    assert_int_equal(plan_build(&l, &e, 1, &m, 1, &lim, &p), 0);
    for (size_t i = 0; i < p.nreqs; i++) {
        const struct plan_req *r = &p.reqs[i];
        uint32_t dfile = (r->server + l.nio - l.first_server) % l.nio;
        int k = 0;
        size_t koff = 0;

        assert_true(r->bytes <= lim.max_bytes);
        assert_true(r->npairs <= lim.max_pairs);
        for (uint32_t j = 0; j < r->npairs; j++) {
            for (uint64_t b = 0; b < r->pairs[j].len; b++) {
                uint64_t off = stripe_unmap(&l, dfile, r->pairs[j].offset + b);
                char *mp = (char *)r->iov[k].iov_base + koff;

                assert_int_equal(mp - buf, off - 5);
                hit[off - 5]++;
                if (++koff == r->iov[k].iov_len) {
                    k++;
                    koff = 0;
                }
            }
        }
    }
    for (int b = 0; b < 200; b++)
        assert_int_equal(hit[b], 1);
    plan_free(&p);
}

/* ---- schedules (adio/client/sched.c) ------------------------------------ */

/* A contiguous 4-server access cut into blocks: 4 requests per server. */
static void sched_plan(struct plan *p)
{
    static char big[1 << 12];
    struct stripe_layout l = { .unit = 64, .factor = 4, .first_server = 0, .nio = 4 };
    struct plan_limits lim = { 64, 1000, 0 };
    struct ipvfs_extent e = { .offset = 0, .len = 1024 };
    struct iovec m = { .iov_base = big, .iov_len = 1024 };

    assert_int_equal(plan_build(&l, &e, 1, &m, 1, &lim, p), 0);
    assert_int_equal(p->nreqs, 16);
}

/* Checks order is a permutation that keeps each server's plan order. */
static void assert_valid_order(const struct plan *p, const size_t *order)
{
    uint8_t seen[64] = { 0 };
    long last[8];

    for (int s = 0; s < 8; s++)
        last[s] = -1;
    for (size_t k = 0; k < p->nreqs; k++) {
        uint32_t s = p->reqs[order[k]].server;

        assert_true(order[k] < p->nreqs);
        assert_int_equal(seen[order[k]]++, 0);
        assert_true((long)order[k] > last[s]);
        last[s] = (long)order[k];
    }
}

/* first-IOS keeps file-offset (plan) order. */
static void sched_first_is_plan_order(void **state)
{
    struct plan p;
    size_t order[16];
    uint64_t rng = 1;

    sched_plan(&p);
    assert_int_equal(sched_order(&p, IPVFS_SCHED_FIRST, 3, 4, &rng, order), 0);
    for (size_t k = 0; k < 16; k++)
        assert_int_equal(order[k], k);
    plan_free(&p);
}

/* hash-IOS: with equal work per server, step j of client i goes to server
 * (i + j) mod n, for every client id. */
static void sched_hash_steps(void **state)
{
    struct plan p;
    size_t order[16];
    uint64_t rng = 1;

    sched_plan(&p);
    for (uint32_t i = 0; i < 9; i++) {
        assert_int_equal(sched_order(&p, IPVFS_SCHED_HASH, i, 4, &rng, order), 0);
        assert_valid_order(&p, order);
        for (size_t j = 0; j < 16; j++)
            assert_int_equal(p.reqs[order[j]].server, (i + j) % 4);
    }
    plan_free(&p);
}

/* hash-IOS with uneven work: a step whose server is done is skipped, so
 * the servers still come in cyclic order from i. */
static void sched_hash_skips_finished(void **state)
{
    struct stripe_layout l = { .unit = 10, .factor = 3, .first_server = 0, .nio = 3 };
    struct plan_limits lim = { 10, 100, 0 };
    struct ipvfs_extent e = { .offset = 0, .len = 40 };  /* servers 0,1,2,0 */
    struct iovec m = { .iov_base = buf, .iov_len = 40 };
    struct plan p;
    size_t order[4];
    uint64_t rng = 1;

    assert_int_equal(plan_build(&l, &e, 1, &m, 1, &lim, &p), 0);
    assert_int_equal(sched_order(&p, IPVFS_SCHED_HASH, 1, 3, &rng, order), 0);
    assert_valid_order(&p, order);
    assert_int_equal(p.reqs[order[0]].server, 1);
    assert_int_equal(p.reqs[order[1]].server, 2);
    assert_int_equal(p.reqs[order[2]].server, 0);
    assert_int_equal(p.reqs[order[3]].server, 0);
    plan_free(&p);
}

/* random-IOS gives valid orders, and different seeds different ones. */
static void sched_random_valid(void **state)
{
    struct plan p;
    size_t a[16], b[16];
    uint64_t r1 = 11, r2 = 12345;

    sched_plan(&p);
    assert_int_equal(sched_order(&p, IPVFS_SCHED_RANDOM, 0, 4, &r1, a), 0);
    assert_int_equal(sched_order(&p, IPVFS_SCHED_RANDOM, 0, 4, &r2, b), 0);
    assert_valid_order(&p, a);
    assert_valid_order(&p, b);
    assert_true(memcmp(a, b, sizeof(a)) != 0);
    plan_free(&p);
}

/* sched_apply permutes the requests and keeps their contents. */
static void sched_apply_permutes(void **state)
{
    struct plan p;
    size_t order[16];
    struct ipvfs_pair first[16];
    uint64_t rng = 5;

    sched_plan(&p);
    for (size_t i = 0; i < 16; i++)
        first[i] = p.reqs[i].pairs[0];
    assert_int_equal(sched_order(&p, IPVFS_SCHED_HASH, 2, 4, &rng, order), 0);
    assert_int_equal(sched_apply(&p, order), 0);
    for (size_t k = 0; k < 16; k++) {
        assert_int_equal(p.reqs[k].pairs[0].offset, first[order[k]].offset);
        assert_int_equal(p.reqs[k].server, (2 + k) % 4);
    }
    plan_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(contiguous_two_servers),
        cmocka_unit_test(odd_offsets_rotated),
        cmocka_unit_test(byte_limit_splits),
        cmocka_unit_test(pair_limit_splits),
        cmocka_unit_test(run_limit_cuts_runs_only),
        cmocka_unit_test(small_tile_rows_request_sizes),
        cmocka_unit_test(scattered_memory_high_offsets),
        cmocka_unit_test(length_mismatch_is_einval),
        cmocka_unit_test(empty_access_plans_nothing),
        cmocka_unit_test(round_trip_matches_layout),
        cmocka_unit_test(sched_first_is_plan_order),
        cmocka_unit_test(sched_hash_steps),
        cmocka_unit_test(sched_hash_skips_finished),
        cmocka_unit_test(sched_random_valid),
        cmocka_unit_test(sched_apply_permutes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
