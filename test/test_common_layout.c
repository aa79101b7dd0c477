/* Striping arithmetic: map/unmap round trips and datafile sizes against a
 * brute-force model that walks the file byte by byte (unit by unit). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/layout.h"

static const uint64_t units[] = { 1, 7, 512, 65536 };
static const uint32_t factors[] = { 1, 2, 3, 5 };

static void test_round_trip(void **state)
{
    (void)state;
    for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++)
        for (size_t f = 0; f < sizeof(factors) / sizeof(factors[0]); f++) {
            struct stripe_layout l = { units[u], factors[f], 1, factors[f] + 1 };
            for (uint64_t off = 0; off < 40 * units[u]; off += units[u] / 3 + 1) {
                struct stripe_pos p;
                stripe_map(&l, off, &p);
                assert_true(p.dfile < l.factor);
                assert_int_equal(p.server, (l.first_server + p.dfile) % l.nio);
                assert_true(p.run >= 1 && p.run <= l.unit);
                assert_int_equal(stripe_unmap(&l, p.dfile, p.df_offset), off);
            }
        }
}

/* Brute force: datafile sizes for a file of size s, by mapping every unit. */
static void test_sizes_match_model(void **state)
{
    (void)state;
    for (size_t u = 1; u < 3; u++)
        for (size_t f = 0; f < sizeof(factors) / sizeof(factors[0]); f++) {
            struct stripe_layout l = { units[u], factors[f], 0, factors[f] };
            for (uint64_t s = 0; s < 12 * units[u]; s += units[u] / 5 + 1) {
                uint64_t model[5] = { 0 }, back = 0;
                for (uint64_t off = 0; off < s; off++) {
                    struct stripe_pos p;
                    stripe_map(&l, off, &p);
                    if (p.df_offset + 1 > model[p.dfile])
                        model[p.dfile] = p.df_offset + 1;
                }
                for (uint32_t d = 0; d < l.factor; d++) {
                    uint64_t fs;
                    assert_int_equal(stripe_dfile_size(&l, d, s), model[d]);
                    fs = stripe_file_size(&l, d, model[d]);
                    back = fs > back ? fs : back;
                }
                assert_int_equal(back, s);
            }
        }
}

static void test_large_offsets(void **state)
{
    struct stripe_layout l = { 65536, 4, 2, 4 };
    uint64_t off = (5ull << 32) + 12345;
    struct stripe_pos p;

    (void)state;
    stripe_map(&l, off, &p);
    assert_int_equal(stripe_unmap(&l, p.dfile, p.df_offset), off);
    assert_int_equal(stripe_dfile_size(&l, p.dfile, off + 1), p.df_offset + 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_sizes_match_model),
        cmocka_unit_test(test_large_offsets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
