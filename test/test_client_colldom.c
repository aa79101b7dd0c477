/* Unit tests of the collective file domains (adio/client/colldom.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "adio/client/colldom.h"

/* Every aggregator's units, walked in file order, have the indices 0, 1,
 * 2, ... without gaps or repeats, and one aggregator sees one datafile
 * when A divides F or F divides A. */
static void check_domains(uint32_t factor, uint32_t naggs, uint64_t nunits)
{
    struct coll_domain d = { .unit = 16, .factor = factor, .naggs = naggs, .cb = 16 };
    uint64_t next[64] = { 0 };
    int64_t df_of[64];

    for (uint32_t a = 0; a < 64; a++)
        df_of[a] = -1;
    for (uint64_t u = 0; u < nunits; u++) {
        uint32_t agg;
        uint64_t idx;

        coll_domain_unit(&d, u, &agg, &idx);
        assert_true(agg < naggs);
        assert_int_equal(idx, next[agg]);
        next[agg]++;
        if (factor % naggs == 0 || naggs % factor == 0) {
            uint64_t per = naggs <= factor ? factor / naggs : 1;

            if (per == 1) {
                if (df_of[agg] < 0)
                    df_of[agg] = (int64_t) (u % factor);
                assert_int_equal(df_of[agg], u % factor);
            }
        }
    }
}

static void domains_are_dense(void **state)
{
    (void) state;
    check_domains(4, 4, 400);
    check_domains(4, 2, 400);
    check_domains(4, 3, 400);
    check_domains(2, 4, 400);
    check_domains(3, 7, 400);
    check_domains(1, 1, 50);
    check_domains(5, 1, 50);
}

/* Pieces stop at unit ends and round ends, and a round never holds more
 * than cb bytes of one aggregator. */
static void pieces_respect_rounds(void **state)
{
    struct coll_domain d = { .unit = 64, .factor = 2, .naggs = 2, .cb = 48 };
    uint64_t per_round[2][64] = { { 0 } };
    uint64_t off = 5, end = 64 * 40 + 7;

    (void) state;
    while (off < end) {
        uint32_t agg;
        uint64_t round, n = coll_domain_piece(&d, off, end - off, &agg, &round);

        assert_true(n >= 1 && n <= end - off);
        assert_int_equal(off / d.unit, (off + n - 1) / d.unit);
        assert_int_equal(agg, off / d.unit % 2);
        assert_true(round < 64);
        per_round[agg][round] += n;
        assert_true(per_round[agg][round] <= d.cb);
        off += n;
    }
}

/* cb larger than a unit: a round spans several units of the aggregator,
 * in file order (units 0, 2, 4, ... for aggregator 0 of 2). */
static void round_spans_units(void **state)
{
    struct coll_domain d = { .unit = 10, .factor = 2, .naggs = 2, .cb = 30 };
    uint32_t agg;
    uint64_t round;

    (void) state;
    assert_int_equal(coll_domain_piece(&d, 0, 100, &agg, &round), 10);
    assert_int_equal(agg, 0);
    assert_int_equal(round, 0);
    assert_int_equal(coll_domain_piece(&d, 40, 5, &agg, &round), 5);
    assert_int_equal(agg, 0);
    assert_int_equal(round, 0);         /* unit 4 is aggregator 0's third */
    coll_domain_piece(&d, 60, 5, &agg, &round);
    assert_int_equal(round, 1);         /* its fourth */
    coll_domain_piece(&d, 35, 5, &agg, &round);
    assert_int_equal(agg, 1);
    assert_int_equal(round, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(domains_are_dense),
        cmocka_unit_test(pieces_respect_rounds),
        cmocka_unit_test(round_spans_units),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
