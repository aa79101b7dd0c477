/* Unit tests of ipvfs-server's option parser (backend/server/options.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/server/options.h"

static char err[512];

static int parse(struct server_opts *o, const char *const *args)
{
    char *argv[40];
    int argc = 0;

    argv[argc++] = (char *)"ipvfs-server";
    for (; *args; args++)
        argv[argc++] = (char *)*args;
    argv[argc] = NULL;
    return server_opts_parse(argc, argv, o, err, sizeof(err));
}

static void test_defaults(void **state)
{
    static const char *const args[] = { "--data", "/tmp/x", NULL };
    struct server_opts o;

    (void)state;
    assert_int_equal(parse(&o, args), 0);
    assert_int_equal(o.nio, 1);
    assert_int_equal(o.nt, 2);
    assert_int_equal(o.target_size, 4ull << 30);
    assert_int_equal(o.stripe_unit, 65536);
    assert_int_equal(o.chunk_size, 65536);
    assert_string_equal(o.listen, "auto");
    assert_string_equal(o.map_path, "/tmp/x/ipvfs.map");
    assert_string_equal(o.log_dir, "/tmp/x/log");
    assert_int_equal(o.log_size, 16ull << 20);
    assert_int_equal(o.no_bind, 0);
    assert_int_equal(o.cache_l1, 64ull << 20);
    assert_int_equal(o.read_places, 0); /* auto */
}

/* --read-places: auto (0) or 1 to 16; the last one given counts. */
static void test_read_places(void **state)
{
    static const char *const two[] = { "--data", "/d", "--read-places", "2", NULL };
    static const char *const back[] = { "--data", "/d", "--read-places", "16", "--read-places",
                                        "auto", NULL };
    struct server_opts o;

    (void)state;
    assert_int_equal(parse(&o, two), 0);
    assert_int_equal(o.read_places, 2);
    assert_int_equal(parse(&o, back), 0);
    assert_int_equal(o.read_places, 0);
}

static void test_all_options(void **state)
{
    static const char *const args[] = { "--io-nodes", "3", "--targets-per-io=4", "--raid", "5",
                                        "--data", "/d", "--target-size", "1G", "--listen",
                                        "0.0.0.0", "--map", "/m", "--stripe-unit", "1M",
                                        "--chunk-size", "128K", "--no-bind", "--log-dir", "/l",
                                        "--log-size", "1M", "--cache-l1", "0", "--meta-port", "3334",
                                        "--read-places", "2", NULL };
    struct server_opts o;

    (void)state;
    assert_int_equal(parse(&o, args), 0);
    assert_int_equal(o.nio, 3);
    assert_int_equal(o.nt, 4);
    assert_int_equal(o.raid, 5);
    assert_int_equal(o.target_size, 1ull << 30);
    assert_int_equal(o.stripe_unit, 1 << 20);
    assert_int_equal(o.chunk_size, 128 << 10);
    assert_string_equal(o.map_path, "/m");
    assert_string_equal(o.log_dir, "/l");
    assert_int_equal(o.log_size, 1 << 20);
    assert_int_equal(o.no_bind, 1);
    assert_int_equal(o.cache_l1, 0);
    assert_int_equal(o.meta_port, 3334);
    assert_int_equal(o.read_places, 2);
}

/* --cache-l1: whole 64 KiB blocks, at most half of the machine's memory;
 * --trace: a path; the messages name the option. */
static void test_cache_l1(void **state)
{
    static const char *const ok[] = { "--data", "/d", "--cache-l1", "8M", "--trace", "/t/x",
                                      NULL };
    const char *const *const bad[] = {
        (const char *const[]){ "--data", "/d", "--cache-l1", "12Q", NULL },
        (const char *const[]){ "--data", "/d", "--cache-l1", "1000", NULL },
        (const char *const[]){ "--data", "/d", "--cache-l1", "-1", NULL },
        (const char *const[]){ "--data", "/d", "--cache-l1", "2T", NULL },
        (const char *const[]){ "--data", "/d", "--cache-l1", "99999999999T", NULL },
        (const char *const[]){ "--data", "/d", "--trace", "", NULL },
    };
    struct server_opts o;

    (void)state;
    assert_int_equal(parse(&o, ok), 0);
    assert_int_equal(o.cache_l1, 8u << 20);
    assert_string_equal(o.trace_path, "/t/x");
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(parse(&o, bad[i]), -EINVAL);
        assert_true(strstr(err, "--cache-l1") || strstr(err, "--trace"));
    }
}

/* --cache-l2 as --cache-l1 (0 = off, the default); --cache-l2-policy a
 * cache/ policy name. */
static void test_cache_l2(void **state)
{
    static const char *const ok[] = { "--data", "/d", "--cache-l2", "8M", "--cache-l2-policy",
                                      "demote-mq", NULL };
    static const char *const dflt[] = { "--data", "/d", NULL };
    const char *const *const bad[] = {
        (const char *const[]){ "--data", "/d", "--cache-l2", "12Q", NULL },
        (const char *const[]){ "--data", "/d", "--cache-l2", "1000", NULL },
        (const char *const[]){ "--data", "/d", "--cache-l2", "-1", NULL },
        (const char *const[]){ "--data", "/d", "--cache-l2", "2T", NULL },
        (const char *const[]){ "--data", "/d", "--cache-l2-policy", "fifo", NULL },
        (const char *const[]){ "--data", "/d", "--cache-l2-policy", "", NULL },
    };
    struct server_opts o;

    (void)state;
    assert_int_equal(parse(&o, dflt), 0);
    assert_int_equal(o.cache_l2, 0);
    assert_string_equal(o.cache_l2_policy, "");
    assert_int_equal(parse(&o, ok), 0);
    assert_int_equal(o.cache_l2, 8u << 20);
    assert_string_equal(o.cache_l2_policy, "demote-mq");
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(parse(&o, bad[i]), -EINVAL);
        assert_non_null(strstr(err, "--cache-l2"));
    }
}

/* --emulate-disk (model_emulate: the emulated disk of the model's
 * validation): off by default, the papers' disk by name, anything else
 * refused with the option's name and the known disk. */
static void test_model_emulate_disk(void **state)
{
    static const char *const ok[] = { "--data", "/d", "--emulate-disk", "st318452lw", NULL };
    static const char *const dflt[] = { "--data", "/d", NULL };
    const char *const *const bad[] = {
        (const char *const[]){ "--data", "/d", "--emulate-disk", "floppy", NULL },
        (const char *const[]){ "--data", "/d", "--emulate-disk", "", NULL },
        (const char *const[]){ "--data", "/d", "--emulate-disk", "ST318452LW", NULL },
    };
    struct server_opts o;

    (void)state;
    assert_int_equal(parse(&o, dflt), 0);
    assert_string_equal(o.emulate_disk, "");
    assert_int_equal(parse(&o, ok), 0);
    assert_string_equal(o.emulate_disk, "st318452lw");
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(parse(&o, bad[i]), -EINVAL);
        assert_non_null(strstr(err, "--emulate-disk"));
        assert_non_null(strstr(err, "st318452lw"));
    }
}

/* --qos-slo FILE: read at parse time (a bad line stops the server before
 * it starts, naming the file and line), kept as an absolute path;
 * --qos-internal MIN:MAX: off by default, bad ranges refused; --qos is
 * two-level by default. */
static void test_qos_options(void **state)
{
    static const char *const dflt[] = { "--data", "/d", NULL };
    const char *const *const bad_internal[] = {
        (const char *const[]){ "--data", "/d", "--qos-internal", "5", NULL },
        (const char *const[]){ "--data", "/d", "--qos-internal", "0:10", NULL },
        (const char *const[]){ "--data", "/d", "--qos-internal", "10:5", NULL },
        (const char *const[]){ "--data", "/d", "--qos-internal", "5:x", NULL },
        (const char *const[]){ "--data", "/d", "--qos-internal", "-1:0", NULL },
        (const char *const[]){ "--data", "/d", "--qos-internal", "5:", NULL },
    };
    char good[] = "/tmp/test_server_options.XXXXXX", bad[] = "/tmp/test_server_options.XXXXXX";
    const char *ok[] = { "--data", "/d", "--qos-slo", good, "--qos-internal", "5:50", NULL };
    const char *no[] = { "--data", "/d", "--qos-slo", bad, NULL };
    const char *none[] = { "--data", "/d", "--qos-slo", "/nonexistent/slo", NULL };
    struct server_opts o;
    FILE *f;
    int fd;

    (void)state;
    assert_int_equal(parse(&o, dflt), 0);
    assert_string_equal(o.qos, "two-level");
    assert_string_equal(o.qos_slo, "");
    assert_true(o.qos_internal_min == 0);
    assert_true((fd = mkstemp(good)) >= 0);
    assert_non_null(f = fdopen(fd, "w"));
    fputs("app1 40MB/s 100ms\n", f);
    assert_int_equal(fclose(f), 0);
    assert_true((fd = mkstemp(bad)) >= 0);
    assert_non_null(f = fdopen(fd, "w"));
    fputs("app1 40MB/s 100ms\napp2 -20 300\n", f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(parse(&o, (const char *const *)ok), 0);
    assert_string_equal(o.qos_slo, good);
    assert_true(o.qos_internal_min == 5 && o.qos_internal_max == 50);
    assert_int_equal(parse(&o, (const char *const *)no), -EINVAL);
    assert_non_null(strstr(err, "--qos-slo"));
    assert_non_null(strstr(err, ":2: rate -20 MB/s"));
    assert_int_equal(parse(&o, (const char *const *)none), -EINVAL);
    assert_non_null(strstr(err, "/nonexistent/slo"));
    unlink(good);
    unlink(bad);
    for (size_t i = 0; i < sizeof(bad_internal) / sizeof(bad_internal[0]); i++) {
        assert_int_equal(parse(&o, bad_internal[i]), -EINVAL);
        assert_non_null(strstr(err, "--qos-internal"));
    }
}

static void test_errors(void **state)
{
    const char *const *const cases[] = {
        (const char *const[]){ NULL },
        (const char *const[]){ "--data", "/d", "--raid", "2", NULL },
        (const char *const[]){ "--data", "/d", "--io-nodes", "0", NULL },
        (const char *const[]){ "--data", "/d", "--io-nodes", "two", NULL },
        (const char *const[]){ "--data", "/d", "--stripe-unit", "2G", NULL },
        (const char *const[]){ "--data", "/d", "--target-size", "1000", NULL },
        (const char *const[]){ "--data", "/d", "--target-size", "1X", NULL },
        (const char *const[]){ "--data", "/d", "--target-size", "99999999999T", NULL },
        (const char *const[]){ "--data", "/d", "--bogus", NULL },
        (const char *const[]){ "--data", "/d", "stray", NULL },
        (const char *const[]){ "--data", NULL },
        (const char *const[]){ "--data", "", NULL },
        (const char *const[]){ "--data", "/d", "--log-size", "1K", NULL },
        (const char *const[]){ "--data", "/d", "--log-size", "lots", NULL },
        (const char *const[]){ "--data", "/d", "--log-dir", "", NULL },
        (const char *const[]){ "--data", "/d", "--read-places", "0", NULL },
        (const char *const[]){ "--data", "/d", "--read-places", "17", NULL },
        (const char *const[]){ "--data", "/d", "--read-places", "two", NULL },
        (const char *const[]){ "--data", "/d", "--read-places", "Auto", NULL },
        (const char *const[]){ "--data", "/d", "--member", "0:2", NULL },
        (const char *const[]){ "--data", "/d", "--member", "x:0=iscsi://h/i/0", NULL },
        (const char *const[]){ "--data", "/d", "--member", "0:0=http://h/i/0", NULL },
        (const char *const[]){ "--data", "/d", "--member", "0:0=iscsi://h/i", NULL },
        (const char *const[]){ "--data", "/d", "--member", "0:0=iscsi://h//1", NULL },
        (const char *const[]){ "--data", "/d", "--member", "0:0=iscsi://h/i/256", NULL },
        (const char *const[]){ "--data", "/d", "--member", "1:0=iscsi://h/i/0", NULL },
        (const char *const[]){ "--data", "/d", "--member", "0:2=iscsi://h/i/0", NULL },
        (const char *const[]){ "--data", "/d", "--member", "0:1=iscsi://h/i/0", "--member",
                               "0:1=iscsi://h/j/0", NULL },
    };
    struct server_opts o;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(parse(&o, cases[i]), -EINVAL);
        assert_true(strlen(err) > 0);
    }
}

/* --member: external LUNs by (I/O node, member); the others stay NULL. */
static void test_members(void **state)
{
    static const char *const args[] = { "--data", "/d", "--io-nodes", "2", "--targets-per-io",
                                         "4", "--member", "1:3=iscsi://127.0.0.1:3260/iqn.x:t/1",
                                         "--member", "0:0=iscsi://h/i/0", NULL };
    struct server_opts o;

    (void)state;
    assert_int_equal(parse(&o, args), 0);
    assert_int_equal(o.next, 2);
    assert_string_equal(server_member_url(&o, 1, 3), "iscsi://127.0.0.1:3260/iqn.x:t/1");
    assert_string_equal(server_member_url(&o, 0, 0), "iscsi://h/i/0");
    assert_null(server_member_url(&o, 0, 3));
    assert_null(server_member_url(&o, 1, 0));
    assert_non_null(strstr(server_usage(), "--member IO:K=URL"));
}

static void test_help(void **state)
{
    static const char *const args[] = { "--help", NULL };
    struct server_opts o;

    (void)state;
    assert_int_equal(parse(&o, args), 0);
    assert_int_equal(o.help, 1);
    assert_non_null(strstr(server_usage(), "--targets-per-io"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_all_options),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_cache_l1),
        cmocka_unit_test(test_cache_l2),
        cmocka_unit_test(test_model_emulate_disk),
        cmocka_unit_test(test_members),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_qos_options),
        cmocka_unit_test(test_read_places),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
