/* iRAID layout: map/unmap against a brute-force model that deals data
 * chunks out to the members stripe by stripe, plus the textbook
 * left-symmetric table for four members. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "iraid/layout.h"

#define PARITY (-1)
#define STRIPES 23

static const uint64_t chunks[] = { 512, 4096, 65536 };

/* model[stripe * n + member] = data chunk number there, or PARITY. */
static int64_t *build_model(int level, uint32_t n)
{
    int64_t *model = calloc((size_t)STRIPES * n, sizeof(*model));
    int64_t d = 0;
    uint32_t parity = n - 1;

    assert_non_null(model);
    for (uint64_t s = 0; s < STRIPES; s++) {
        int64_t *row = model + s * n;
        if (level == 0) {
            for (uint32_t m = 0; m < n; m++)
                row[m] = d++;
        } else if (level == 1) {
            for (uint32_t m = 0; m < n; m++)
                row[m] = d;
            d++;
        } else {
            /* Parity walks backwards from the last member; data starts
             * right after it and wraps round. */
            row[parity] = PARITY;
            for (uint32_t k = 1; k < n; k++)
                row[(parity + k) % n] = d++;
            parity = parity == 0 ? n - 1 : parity - 1;
        }
    }
    return model;
}

static void check_level(int level, uint32_t nmin)
{
    for (uint32_t n = nmin; n <= 6; n++)
        for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
            uint64_t chunk = chunks[c];
            struct iraid_layout l;
            int64_t *model = build_model(level, n);

            assert_int_equal(iraid_layout_init(&l, level, n, chunk, STRIPES * chunk + 17), 0);
            assert_int_equal(l.stripes, STRIPES);
            for (uint64_t s = 0; s < STRIPES; s++)
                for (uint32_t m = 0; m < n; m++) {
                    int64_t want = model[s * n + m];
                    for (uint64_t in = 0; in < chunk; in += chunk / 4 + 3) {
                        uint64_t moff = s * chunk + in;
                        uint64_t v = iraid_layout_unmap(&l, m, moff);
                        struct iraid_loc loc;

                        if (want == PARITY) {
                            assert_int_equal(v, IRAID_NO_DATA);
                            assert_int_equal(iraid_layout_parity_member(&l, s), m);
                            continue;
                        }
                        assert_int_equal(v, (uint64_t)want * chunk + in);
                        iraid_layout_map(&l, v, &loc);
                        assert_int_equal(loc.stripe, s);
                        assert_int_equal(loc.member_off, moff);
                        assert_int_equal(loc.run, chunk - in);
                        /* RAID-1 names one copy; every copy matches. */
                        if (level != 1)
                            assert_int_equal(loc.member, m);
                        else
                            assert_int_equal(model[s * n + loc.member], want);
                    }
                }
            assert_int_equal(iraid_layout_capacity(&l),
                             STRIPES * chunk * (level == 0 ? n : level == 1 ? 1 : n - 1));
            free(model);
        }
}

static void test_raid0(void **state) { check_level(0, 1); }
static void test_raid1(void **state) { check_level(1, 2); }
static void test_raid5(void **state) { check_level(5, 3); }

static void test_left_symmetric_table(void **state)
{
    static const int table[4][4] = {
        { 0, 1, 2, PARITY }, { 4, 5, PARITY, 3 }, { 8, PARITY, 6, 7 }, { PARITY, 9, 10, 11 },
    };
    struct iraid_layout l;

    assert_int_equal(iraid_layout_init(&l, 5, 4, 4096, 4 * 4096), 0);
    for (uint32_t s = 0; s < 4; s++)
        for (uint32_t m = 0; m < 4; m++) {
            uint64_t v = iraid_layout_unmap(&l, m, s * 4096);
            if (table[s][m] == PARITY)
                assert_int_equal(v, IRAID_NO_DATA);
            else
                assert_int_equal(v, (uint64_t)table[s][m] * 4096);
        }
}

static void test_bad_config(void **state)
{
    struct iraid_layout l;

    assert_int_equal(iraid_layout_init(&l, 0, 0, 4096, 1 << 20), -22);
    assert_int_equal(iraid_layout_init(&l, 1, 1, 4096, 1 << 20), -22);
    assert_int_equal(iraid_layout_init(&l, 5, 2, 4096, 1 << 20), -22);
    assert_int_equal(iraid_layout_init(&l, 6, 4, 4096, 1 << 20), -22);
    assert_int_equal(iraid_layout_init(&l, 0, 2, 0, 1 << 20), -22);
}

/* A returning member is resynced from the bitmap only with events inside
 * the range it could hold when it went down, and not stale by its own
 * superblock. */
static void test_resume_by_bitmap(void **state)
{
    (void)state;
    assert_true(iraid_resume_by_bitmap(7, 0, 7, 7));
    assert_true(iraid_resume_by_bitmap(6, 0, 6, 7));
    assert_true(iraid_resume_by_bitmap(7, 0, 6, 7));
    assert_false(iraid_resume_by_bitmap(5, 0, 6, 7));   /* an older copy */
    assert_false(iraid_resume_by_bitmap(8, 0, 6, 7));   /* marked stale already */
    assert_false(iraid_resume_by_bitmap(7, 1, 6, 7));   /* stale by its own word */
    assert_false(iraid_resume_by_bitmap(0, 0, 7, 6));   /* nothing recorded */
}

/* Stripes in set regions below a limit, against counting stripe by stripe. */
static void test_bitmap_stripes(void **state)
{
    const uint8_t map[2] = { 0x25, 0x81 };   /* regions 0, 2, 5, 8, 15 */

    (void)state;
    for (uint64_t rs = 1; rs <= 5; rs++)
        for (uint64_t stripes = 0; stripes <= 16 * rs; stripes += rs / 2 + 1)
            for (uint64_t limit = 0; limit <= stripes + 3; limit++) {
                uint64_t want = 0;
                for (uint64_t st = 0; st < limit && st < stripes; st++)
                    want += map[st / rs / 8] >> (st / rs % 8) & 1;
                assert_int_equal(iraid_bitmap_stripes_below(map, rs, stripes, limit), want);
            }
    assert_int_equal(iraid_bitmap_stripes_below(map, 0, 10, 10), 0);
}

/* Whole-stripe runs of a RAID-5 write, against a stripe-by-stripe model;
 * and on every member the run is one contiguous range that holds, stripe
 * by stripe, either parity (one member per stripe) or the write's bytes. */
static void test_stripe_run(void **state)
{
    (void)state;
    for (uint32_t n = 3; n <= 5; n++) {
        struct iraid_layout l;
        const uint64_t chunk = 1024, sb = (n - 1) * chunk;

        assert_int_equal(iraid_layout_init(&l, 5, n, chunk, 64 * chunk), 0);
        for (uint64_t rs = 1; rs <= 7; rs += 3)
            for (uint64_t off = 0; off < 20 * sb; off += 512)
                for (uint64_t len = 512; len <= 12 * sb; len += 512) {
                    uint64_t want = 0, got = iraid_layout_stripe_run(&l, off, len, rs, 4);
                    for (uint64_t s = off / sb; off % sb == 0 && want < 4 &&
                         (s + 1) * sb <= off + len && (s == off / sb || s % rs != 0); s++)
                        want++;
                    assert_int_equal(got, want);
                    for (uint64_t s = off / sb; s < off / sb + got; s++) {
                        uint32_t parity = 0;
                        for (uint32_t m = 0; m < n; m++) {
                            uint64_t v = iraid_layout_unmap(&l, m, s * chunk);
                            parity += v == IRAID_NO_DATA;
                            assert_true(v == IRAID_NO_DATA ||
                                        (v >= off && v + chunk <= off + got * sb));
                        }
                        assert_int_equal(parity, 1);
                    }
                }
        assert_int_equal(iraid_layout_stripe_run(&l, 0, 8 * sb, 0, 4), 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_raid0),
        cmocka_unit_test(test_raid1),
        cmocka_unit_test(test_raid5),
        cmocka_unit_test(test_left_symmetric_table),
        cmocka_unit_test(test_bad_config),
        cmocka_unit_test(test_resume_by_bitmap),
        cmocka_unit_test(test_bitmap_stripes),
        cmocka_unit_test(test_stripe_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
