/* When the datafile store's background timer starts a commit round
 * (df_commit_due, backend/dfstore/commit.h; issue 27), on cases worked out
 * by hand: pending block map entries wait while the L1's dirty blocks are
 * all young and one has holes (writers still filling blocks), never when
 * an entry frees blocks or a dirty block is old; data alone waits while
 * it is young, as before. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "backend/dfstore/commit.h"

static void test_small_commit_due(void **state)
{
    (void)state;
    /*                       entries frees dirty young partial_young */
    assert_false(df_commit_due(0, 0, 0, 0, 0));     /* nothing to do */
    assert_true(df_commit_due(5, 0, 1, 1, 0));      /* map entries, blocks whole */
    assert_false(df_commit_due(5, 0, 1, 1, 1));     /* map entries, blocks still filling */
    assert_true(df_commit_due(5, 1, 1, 1, 1));      /* an unmap or removal pending */
    assert_true(df_commit_due(5, 0, 1, 0, 0));      /* a dirty block is old */
    assert_true(df_commit_due(5, 0, 0, 0, 0));      /* entries, the L1 clean */
    assert_false(df_commit_due(0, 0, 1, 1, 1));     /* data alone, young */
    assert_false(df_commit_due(0, 0, 1, 1, 0));
    assert_true(df_commit_due(0, 0, 1, 0, 0));      /* data alone, old */
    assert_false(df_commit_due(0, 0, 0, 1, 0));     /* young L1 data, nothing new written */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_commit_due),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
