/* The datafile store's placement rule (backend/dfstore/space.h, issue 27):
 * a datafile's blocks go to the volume by file offset, one aligned run of
 * DF_RUN_BLOCKS volume blocks per region, whatever order they are first
 * written in; the fallbacks when a slot is taken, when no whole run is
 * free, and when runs are off; the reserve given back and given up; the
 * per-block first-zeros record.  Every expected block is worked out by
 * hand in the comments (R = DF_RUN_BLOCKS = 32). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "backend/dfstore/space.h"

#define R DF_RUN_BLOCKS

static struct df_space sp;

static int setup_128(void **state)
{
    (void)state;
    return df_space_init(&sp, 128);
}

static int teardown(void **state)
{
    (void)state;
    df_space_fini(&sp);
    return 0;
}

/* The 3 x 3 tile order: a datafile block holds two 32 KiB rows, and the
 * first client to write touches blocks 0, 2, 3, 5, 6 of a region (two of
 * every three), the next ones 1 and 4.  First touch used to give them
 * volume blocks 0, 1, 2, 3, 4, then 5 and 6: file blocks 1 and 2 apart.
 * By offset, every file block lands on its own volume block. */
static void test_first_touch_order_does_not_matter(void **state)
{
    const uint64_t order[] = { 0, 2, 3, 5, 6, 1, 4 };
    uint64_t run = DF_NO_RUN;

    (void)state;
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
        assert_int_equal(df_space_place(&sp, &run, order[i]), order[i]);
    assert_int_equal(run, 0);
    assert_int_equal(sp.used_blocks, 7);
    /* the rest of the run is held for the region, free for every count */
    assert_true(df_space_reserved(&sp, 7));
    assert_true(df_space_reserved(&sp, 31));
    assert_false(df_space_reserved(&sp, 32));
    assert_false(df_space_reserved(&sp, 4));
}

/* A second region (of this datafile or another) gets the next whole run;
 * file block 37 is slot 5 of region 1, so run 32 + 5. */
static void test_regions_get_their_own_runs(void **state)
{
    uint64_t a0 = DF_NO_RUN, b0 = DF_NO_RUN, a1 = DF_NO_RUN;

    (void)state;
    assert_int_equal(df_space_place(&sp, &a0, 0), 0);
    assert_int_equal(df_space_place(&sp, &b0, 3), 35);      /* run 32, slot 3 */
    assert_int_equal(b0, 32);
    assert_int_equal(df_space_place(&sp, &a1, R + 5), 69);  /* run 64, slot 5 */
    assert_int_equal(a1, 64);
    assert_int_equal(df_space_place(&sp, &a0, 1), 1);
}

/* A run is aligned and wholly free: one block used inside run 0 (say by a
 * file placed before runs) sends the region to run 32. */
static void test_run_is_aligned_and_wholly_free(void **state)
{
    uint64_t run = DF_NO_RUN;

    (void)state;
    df_space_set(&sp, 17);
    assert_int_equal(df_space_place(&sp, &run, 2), 34);
    assert_int_equal(run, 32);
}

/* The slot is in use (an unmapping not yet committed still holds it):
 * the lowest free block that no run reserved.  Runs 0 and 32 are
 * reserved, so that is 64. */
static void test_slot_taken_falls_back_to_lowest_unreserved(void **state)
{
    uint64_t a = DF_NO_RUN, b = DF_NO_RUN;

    (void)state;
    assert_int_equal(df_space_place(&sp, &a, 0), 0);
    assert_int_equal(df_space_place(&sp, &b, 0), 32);
    df_space_set(&sp, 7);
    assert_int_equal(df_space_place(&sp, &a, 7), 64);
    assert_int_equal(a, 0);                                 /* the run stays */
    assert_int_equal(df_space_place(&sp, &a, 8), 8);
}

/* 64 blocks, two runs, both reserved: a third region finds no whole run
 * and no unreserved free block, so it takes the lowest free block at all
 * (1, from run 0's reserve); run 0's owner then finds slot 1 taken and
 * falls back the same way (2). */
static void test_reserve_gives_way_when_space_runs_short(void **state)
{
    uint64_t a = DF_NO_RUN, b = DF_NO_RUN, c = DF_NO_RUN;

    (void)state;
    df_space_fini(&sp);
    assert_int_equal(df_space_init(&sp, 64), 0);
    assert_int_equal(df_space_place(&sp, &a, 0), 0);
    assert_int_equal(df_space_place(&sp, &b, 0), 32);
    assert_int_equal(df_space_place(&sp, &c, 0), 1);
    assert_int_equal(c, DF_NO_RUN);
    assert_false(df_space_reserved(&sp, 1));
    assert_int_equal(df_space_place(&sp, &a, 1), 2);
    /* every block can still be used: fill the volume */
    for (uint64_t i = sp.used_blocks; i < 64; i++)
        assert_int_not_equal(df_space_place(&sp, &c, i), UINT64_MAX);
    assert_int_equal(sp.used_blocks, 64);
    assert_int_equal(df_space_place(&sp, &c, 0), UINT64_MAX);
}

/* A region that goes away gives its unused reserve back: the next region
 * gets its run again (32); blocks of the run in use are left alone. */
static void test_unreserve_returns_the_run(void **state)
{
    uint64_t a = DF_NO_RUN, b = DF_NO_RUN, c = DF_NO_RUN;

    (void)state;
    assert_int_equal(df_space_place(&sp, &a, 0), 0);
    assert_int_equal(df_space_place(&sp, &b, 4), 36);
    df_space_clear(&sp, 36);                                /* removed, committed */
    df_space_unreserve_run(&sp, 32);
    assert_false(df_space_reserved(&sp, 33));
    assert_int_equal(df_space_place(&sp, &c, 9), 41);
    assert_int_equal(c, 32);
    /* a run with a block in use: that block stays used, not reserved */
    df_space_unreserve_run(&sp, 0);
    assert_true(df_space_test(&sp, 0));
    assert_false(df_space_reserved(&sp, 1));
}

/* Runs off (the targets do not vouch for room): lowest free first,
 * reserved or not, as before runs: 1, then 2 (run 0 reserves 1..31). */
static void test_no_runs_is_lowest_free_first(void **state)
{
    uint64_t a = DF_NO_RUN;

    (void)state;
    assert_int_equal(df_space_place(&sp, &a, 0), 0);
    assert_int_equal(df_space_place(&sp, NULL, 40), 1);
    assert_int_equal(df_space_place(&sp, NULL, 41), 2);
    df_space_clear(&sp, 1);
    assert_int_equal(df_space_place(&sp, NULL, 42), 1);
    assert_int_equal(df_space_place(&sp, NULL, 43), 3);
}

/* The last run is partial on a 40-block volume: it is never reserved, its
 * blocks go to the fallback (32, lowest unreserved). */
static void test_partial_run_at_the_end_is_not_a_run(void **state)
{
    uint64_t a = DF_NO_RUN, b = DF_NO_RUN;

    (void)state;
    df_space_fini(&sp);
    assert_int_equal(df_space_init(&sp, 40), 0);
    assert_int_equal(df_space_place(&sp, &a, 3), 3);
    assert_int_equal(df_space_place(&sp, &b, 3), 32);
    assert_int_equal(b, DF_NO_RUN);
    assert_int_equal(df_space_place(&sp, &b, 4), 33);
}

/* Runs found again in the block map at open: reserving one leaves its
 * used blocks alone and holds the free ones, so the fallback of another
 * datafile skips them (first unreserved free: 32). */
static void test_reserve_run_at_open(void **state)
{
    uint64_t run = 0;

    (void)state;
    df_space_set(&sp, 0);
    df_space_set(&sp, 2);
    df_space_reserve_run(&sp, 0);
    assert_false(df_space_reserved(&sp, 0));
    assert_true(df_space_reserved(&sp, 1));
    assert_int_equal(df_space_alloc(&sp), 32);
    assert_int_equal(df_space_place(&sp, &run, 1), 1);
}

/* First zeros, per block: on a volume new at open, blocks 5 and 3 are
 * handed out in that order; 3 still holds its zeros although 5 went
 * first (a watermark would have said no); a block handed out again
 * (freed, reused) does not; without zero_known none does. */
static void test_zeroed_per_block(void **state)
{
    (void)state;
    sp.zero_known = 1;
    assert_true(df_space_take_zeroed(&sp, 5));
    assert_true(df_space_take_zeroed(&sp, 3));
    assert_false(df_space_take_zeroed(&sp, 5));
    assert_false(df_space_take_zeroed(&sp, 128));          /* past the end */
    sp.zero_known = 0;
    assert_false(df_space_take_zeroed(&sp, 7));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_first_touch_order_does_not_matter, setup_128, teardown),
        cmocka_unit_test_setup_teardown(test_regions_get_their_own_runs, setup_128, teardown),
        cmocka_unit_test_setup_teardown(test_run_is_aligned_and_wholly_free, setup_128, teardown),
        cmocka_unit_test_setup_teardown(test_slot_taken_falls_back_to_lowest_unreserved, setup_128,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_reserve_gives_way_when_space_runs_short, setup_128,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_unreserve_returns_the_run, setup_128, teardown),
        cmocka_unit_test_setup_teardown(test_no_runs_is_lowest_free_first, setup_128, teardown),
        cmocka_unit_test_setup_teardown(test_partial_run_at_the_end_is_not_a_run, setup_128,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_reserve_run_at_open, setup_128, teardown),
        cmocka_unit_test_setup_teardown(test_zeroed_per_block, setup_128, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
