/* The datafile store's discard alignment (backend/dfstore/unmap.h,
 * df_unmap_widen): a run of freed blocks grows to the volume's unmap
 * granularity only over blocks that are free, never past the volume, and
 * is left alone otherwise; checked against a brute-force model over every
 * run and free pattern of a small volume. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "backend/dfstore/unmap.h"

#define TOTAL 10

static int is_free(const void *ctx, uint64_t b)
{
    return (int)(*(const unsigned *)ctx >> b & 1);
}

/* The model: the head grows to the boundary below lo when every block
 * between is free; the tail likewise up to the boundary above hi, when
 * that boundary is inside the volume. */
static void model(uint64_t lo, uint64_t hi, uint64_t g, unsigned freemask, uint64_t *out_lo,
                  uint64_t *out_hi)
{
    uint64_t a = lo / g * g, b = (hi + g - 1) / g * g;
    int ok = 1;

    for (uint64_t x = a; x < lo; x++)
        ok &= (int)(freemask >> x & 1);
    *out_lo = ok ? a : lo;
    ok = b <= TOTAL;
    for (uint64_t x = hi; ok && x < b; x++)
        ok &= (int)(freemask >> x & 1);
    *out_hi = ok ? b : hi;
}

static void test_widen_model(void **state)
{
    (void)state;
    for (uint64_t g = 1; g <= 4; g++)
        for (uint64_t lo = 0; lo < TOTAL; lo++)
            for (uint64_t hi = lo + 1; hi <= TOTAL; hi++)
                for (unsigned mask = 0; mask < 1u << TOTAL; mask++) {
                    unsigned freemask = mask & ~(((1u << hi) - 1) & ~((1u << lo) - 1));
                    uint64_t wl, wh, ml, mh;

                    df_unmap_widen(lo, hi, g, TOTAL, is_free, &freemask, &wl, &wh);
                    model(lo, hi, g, freemask, &ml, &mh);
                    assert_int_equal(wl, ml);
                    assert_int_equal(wh, mh);
                }
}

/* RAID-5 over 3 members with 64 KiB chunks: a stripe is 2 blocks. */
static void test_widen_examples(void **state)
{
    unsigned all_free = ~0u, none = 0;
    uint64_t lo, hi;

    (void)state;
    df_unmap_widen(3, 4, 2, TOTAL, is_free, &all_free, &lo, &hi);   /* neighbour 2 free */
    assert_int_equal(lo, 2);
    assert_int_equal(hi, 4);
    df_unmap_widen(3, 4, 2, TOTAL, is_free, &none, &lo, &hi);       /* 2 in use: as is */
    assert_int_equal(lo, 3);
    assert_int_equal(hi, 4);
    df_unmap_widen(2, 5, 2, TOTAL, is_free, &all_free, &lo, &hi);   /* tail to 6 */
    assert_int_equal(lo, 2);
    assert_int_equal(hi, 6);
    df_unmap_widen(8, 9, 4, TOTAL, is_free, &all_free, &lo, &hi);   /* 12 is past the end */
    assert_int_equal(lo, 8);
    assert_int_equal(hi, 9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_widen_model),
        cmocka_unit_test(test_widen_examples),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
