/* Unit tests of ipvfs-ctl's iPVFS path parser (tools/ctl_files.c:
 * ctl_ipvfs_path): the ipvfs: prefix, plain paths where allowed, repeated
 * and trailing slashes, relative paths and overlong ones refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "tools/ctl_files.h"

static void parses(const char *text, int plain_ok, int want_rc, const char *want)
{
    char out[64];

    assert_int_equal(ctl_ipvfs_path(text, plain_ok, out, sizeof(out)), want_rc);
    if (want)
        assert_string_equal(out, want);
}

static void test_prefix_and_slashes(void **state)
{
    (void)state;
    parses("ipvfs:/a/b", 0, 1, "/a/b");
    parses("ipvfs:/a//b/", 0, 1, "/a/b");
    parses("ipvfs:///", 0, 1, "/");
    parses("ipvfs:/", 0, 1, "/");
    parses("ipvfs:/sp ace/é", 0, 1, "/sp ace/é");
    parses("/a/b/", 1, 1, "/a/b");
}

static void test_local_and_bad(void **state)
{
    char big[200];

    (void)state;
    parses("/a/b", 0, 0, NULL);          /* a local path where both kinds are possible */
    parses("local/file", 0, 0, NULL);
    parses("ipvfs:relative", 0, -1, NULL);
    parses("relative", 1, -1, NULL);
    memset(big, 'x', sizeof(big));
    memcpy(big, "ipvfs:/", 7);
    big[sizeof(big) - 1] = '\0';
    parses(big, 0, -1, NULL);             /* does not fit the 64-byte output */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prefix_and_slashes),
        cmocka_unit_test(test_local_and_bad),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
