/* The size parser every option and argument uses (common/size.c): the
 * documented rule, its units and suffixes, and refusals of garbage and of
 * values that do not fit 64 bits; and the amount parser of the QoS SLOs:
 * one fixed unit, optional, never converted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "common/size.h"

static void test_accepted(void **state)
{
    static const struct {
        const char *text;
        uint64_t bytes;
    } cases[] = {
        { "0", 0 },
        { "512", 512 },
        { "512B", 512 },
        { "512b", 512 },
        { "64K", 64ull << 10 },
        { "64k", 64ull << 10 },
        { "64KB", 64ull << 10 },
        { "64KiB", 64ull << 10 },
        { "64kib", 64ull << 10 },
        { "512M", 512ull << 20 },
        { "1MiB", 1ull << 20 },
        { "1G", 1ull << 30 },
        { "4g", 4ull << 30 },
        { "2T", 2ull << 40 },
        { "16777215T", 16777215ull << 40 },
        { "18446744073709551615", UINT64_MAX },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint64_t v = 1;

        assert_int_equal(size_parse(cases[i].text, &v), 0);
        assert_true(v == cases[i].bytes);
    }
}

static void test_garbage(void **state)
{
    static const char *const cases[] = {
        "", "-1", "+1", " 1", "1 ", "0x10", "12X", "1KK", "1iB", "1Bi", "K", "1.5G",
        "1P", "1E", "64KiBB", "1 K", "1K ",
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint64_t v = 42;

        assert_int_equal(size_parse(cases[i], &v), -EINVAL);
        assert_true(v == 42);   /* untouched on failure */
    }
    assert_int_equal(size_parse(NULL, &(uint64_t){ 0 }), -EINVAL);
}

static void test_overflow(void **state)
{
    static const char *const cases[] = {
        "18446744073709551616", "99999999999999999999999", "16777216T", "99999999999T",
        "17179869184G", "17592186044416M", "18014398509481984K",
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint64_t v = 42;

        assert_int_equal(size_parse(cases[i], &v), -ERANGE);
        assert_true(v == 42);
    }
}

static void test_amount(void **state)
{
    static const struct {
        const char *text;
        int flags;
        double want;            /* < -1e9: refused */
        const char *reason;
    } cases[] = {
        { "40", AMOUNT_POSITIVE, 40, NULL },
        { "40MB/s", AMOUNT_POSITIVE, 40, NULL },
        { "2.5MB/s", 0, 2.5, NULL },
        { "-5", 0, -5, NULL },  /* the caller checks its range */
        { "-5", AMOUNT_POSITIVE, -2e9, "rate '-5' must be more than 0" },
        { "0MB/s", AMOUNT_POSITIVE, -2e9, "rate '0MB/s' must be more than 0" },
        { "2e12", AMOUNT_POSITIVE, -2e9, "rate '2e12' is absurdly large (in MB/s)" },
        { "40GB/s", 0, -2e9, "rate '40GB/s': unknown unit 'GB/s' (it is in MB/s)" },
        { "40 MB/s", 0, -2e9, "unknown unit ' MB/s'" },
        { "40MB", 0, -2e9, "unknown unit 'MB'" },
        { "forty", 0, -2e9, "rate 'forty' is not a number" },
        { "", 0, -2e9, "rate '' is not a number" },
        { "nan", 0, -2e9, "is not a number" },
        { "inf", 0, -2e9, "is not a number" },
        { "1e999", 0, -2e9, "is not a number" },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char msg[128] = "";
        double v = 42;
        int rc = amount_parse("rate", cases[i].text, "MB/s", cases[i].flags, &v, msg, sizeof(msg));

        if (cases[i].want > -1e9) {
            assert_int_equal(rc, 0);
            assert_true(v == cases[i].want);
        } else {
            assert_int_equal(rc, -EINVAL);
            assert_true(v == 42);
            assert_non_null(strstr(msg, cases[i].reason));
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accepted),
        cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_overflow),
        cmocka_unit_test(test_amount),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
