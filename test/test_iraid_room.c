/* iraid_room_for_new_blocks(): whether the members' targets vouch that
 * writes into blocks never written cannot fail for want of backing space
 * (iraid/volume.h), on hand-made members: every target must have said,
 * and each disk's free bytes must cover what all the members together may
 * still allocate, plus 64 MiB. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "iraid/internal.h"

#define MIB (1ull << 20)

static struct iraid_member members[3];
static struct iraid_volume vol = { .members = members, .nmembers = 3 };

/* Every member known, free and unallocated bytes as given. */
static void set_all(uint64_t free_bytes, uint64_t unalloc)
{
    memset(members, 0, sizeof(members));
    for (int i = 0; i < 3; i++)
        members[i] = (struct iraid_member){ .room_known = 1, .room_free = free_bytes,
                                            .room_unalloc = unalloc };
}

static void test_room_plenty(void **state)
{
    (void)state;
    set_all(70000 * MIB, 1024 * MIB);
    assert_int_equal(iraid_room_for_new_blocks(&vol), 1);
}

static void test_room_unknown_member(void **state)
{
    (void)state;
    set_all(70000 * MIB, 1024 * MIB);
    members[1].room_known = 0;          /* tgtd, a block device */
    assert_int_equal(iraid_room_for_new_blocks(&vol), 0);
}

/* Members may share one disk: 3 x 400 MiB to come do not fit in 1 GiB
 * free, though each alone would. */
static void test_room_shared_disk(void **state)
{
    (void)state;
    set_all(1024 * MIB, 400 * MIB);
    assert_int_equal(iraid_room_for_new_blocks(&vol), 0);
}

static void test_room_margin(void **state)
{
    (void)state;
    set_all(3 * 100 * MIB + 64 * MIB, 100 * MIB);
    assert_int_equal(iraid_room_for_new_blocks(&vol), 1);
    members[2].room_free -= 1;
    assert_int_equal(iraid_room_for_new_blocks(&vol), 0);
}

/* Memory LUNs have nothing left to allocate: their own free bytes do not
 * matter, a file member's must cover the others' too. */
static void test_room_memory_luns(void **state)
{
    (void)state;
    set_all(0, 0);
    assert_int_equal(iraid_room_for_new_blocks(&vol), 1);
    members[0] = (struct iraid_member){ .room_known = 1, .room_free = 100 * MIB,
                                        .room_unalloc = 16 * MIB };
    assert_int_equal(iraid_room_for_new_blocks(&vol), 1);
    members[0].room_free = 79 * MIB;
    assert_int_equal(iraid_room_for_new_blocks(&vol), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_room_plenty),
        cmocka_unit_test(test_room_unknown_member),
        cmocka_unit_test(test_room_shared_disk),
        cmocka_unit_test(test_room_margin),
        cmocka_unit_test(test_room_memory_luns),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
