/* df_plan_leaves_gaps (backend/dfstore/plan.h), on hand-checked pair
 * lists: which writes may wait for another writer's rows (issue 27). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "backend/dfstore/dfstore.h"
#include "backend/dfstore/plan.h"

#define K 1024ull
#define N(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))

static void test_one_range_never(void **state)
{
    const struct ipvfs_pair mid[] = { { 48 * K, 100 * K } };
    const struct ipvfs_pair whole[] = { { 0, 128 * K } };

    (void)state;
    assert_false(df_plan_leaves_gaps(NULL, 0));
    assert_false(df_plan_leaves_gaps(mid, N(mid)));       /* ends inside blocks */
    assert_false(df_plan_leaves_gaps(whole, N(whole)));
}

static void test_rows_with_holes_inside_blocks(void **state)
{
    const struct ipvfs_pair halves[] = { { 0, 32 * K }, { 64 * K, 32 * K } };
    const struct ipvfs_pair inside[] = { { 0, 16 * K }, { 48 * K, 16 * K } };
    const struct ipvfs_pair next_mid[] = { { 0, 64 * K }, { 80 * K, 48 * K } };
    const struct ipvfs_pair backwards[] = { { 64 * K, 32 * K }, { 0, 32 * K } };

    (void)state;
    assert_true(df_plan_leaves_gaps(halves, N(halves)));  /* 32 KiB rows, 64 KiB apart */
    assert_true(df_plan_leaves_gaps(inside, N(inside)));
    assert_true(df_plan_leaves_gaps(next_mid, N(next_mid)));
    assert_true(df_plan_leaves_gaps(backwards, N(backwards)));
}

static void test_touching_or_block_aligned_holes_do_not_count(void **state)
{
    const struct ipvfs_pair touching[] = { { 0, 20 * K }, { 20 * K, 30 * K }, { 50 * K, 14 * K } };
    const struct ipvfs_pair aligned[] = { { 0, 64 * K }, { 128 * K, 64 * K } };
    const struct ipvfs_pair empty_between[] = { { 0, 32 * K }, { 5 * K, 0 }, { 32 * K, 32 * K } };

    (void)state;
    assert_false(df_plan_leaves_gaps(touching, N(touching)));
    assert_false(df_plan_leaves_gaps(aligned, N(aligned)));   /* whole blocks, a block apart */
    assert_false(df_plan_leaves_gaps(empty_between, N(empty_between)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_range_never),
        cmocka_unit_test(test_rows_with_holes_inside_blocks),
        cmocka_unit_test(test_touching_or_block_aligned_holes_do_not_count),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
