/* The server map (common/map.c): what ipvfs_map_write writes reads back
 * the same (mode 0600, no temporary left), and malformed maps are refused
 * with a message naming the file and what is wrong. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/map.h"

#define SECRET_HEX "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"

static char dir[256], path[300];

static int setup(void **state)
{
    const char *tmp = getenv("TMPDIR");

    (void)state;
    snprintf(dir, sizeof(dir), "%s/test_common_map.XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof(path), "%s/ipvfs.map", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(path);
    return rmdir(dir);
}

static void write_text(const char *text)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

/* A cluster of 2 I/O nodes x 2 targets: rank 0 METADATA|IO. */
static void sample(struct ipvfs_map *m, struct ipvfs_map_rank *ranks)
{
    memset(m, 0, sizeof(*m));
    for (int i = 0; i < IPVFS_SECRET_LEN; i++)
        m->secret[i] = (uint8_t)(0xA0 + i);
    m->nio = 2;
    m->nt = 2;
    m->raid_level = 5;
    m->stripe_unit = 65536;
    m->nranks = 6;
    m->ranks = ranks;
    for (uint32_t r = 0; r < 6; r++) {
        int io = r < 2;

        ranks[r] = (struct ipvfs_map_rank){
            .rank = r, .role = r == 0 ? IPVFS_ROLE_METADATA | IPVFS_ROLE_IO
                              : io ? IPVFS_ROLE_IO : IPVFS_ROLE_TARGET,
            .io_index = io ? r : (r - 2) / 2, .target_index = io ? -1 : (int32_t)((r - 2) % 2),
            .port = (uint16_t)(40000 + r), .iscsi_port = io ? 0 : (uint16_t)(50000 + r),
            .pid = 1000 + r,
        };
        snprintf(ranks[r].host, sizeof(ranks[r].host), "node%u.example", r);
    }
}

static void test_round_trip(void **state)
{
    struct ipvfs_map_rank ranks[6];
    struct ipvfs_map m, back;
    struct stat st;
    struct dirent *de;
    char err[512] = "";
    DIR *d;
    int files = 0;

    (void)state;
    sample(&m, ranks);
    assert_int_equal(ipvfs_map_write(path, &m), 0);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_non_null(d = opendir(dir));
    while ((de = readdir(d)))
        files += de->d_name[0] != '.';
    closedir(d);
    assert_int_equal(files, 1);   /* the temporary was renamed */
    assert_int_equal(ipvfs_map_read(path, &back, err, sizeof(err)), 0);
    assert_memory_equal(back.secret, m.secret, IPVFS_SECRET_LEN);
    assert_int_equal(back.nio, 2);
    assert_int_equal(back.nt, 2);
    assert_int_equal(back.raid_level, 5);
    assert_int_equal(back.stripe_unit, 65536);
    assert_int_equal(back.nranks, 6);
    for (uint32_t r = 0; r < 6; r++) {
        assert_int_equal(back.ranks[r].rank, r);
        assert_int_equal(back.ranks[r].role, ranks[r].role);
        assert_int_equal(back.ranks[r].io_index, ranks[r].io_index);
        assert_int_equal(back.ranks[r].target_index, ranks[r].target_index);
        assert_string_equal(back.ranks[r].host, ranks[r].host);
        assert_int_equal(back.ranks[r].port, ranks[r].port);
        assert_int_equal(back.ranks[r].iscsi_port, ranks[r].iscsi_port);
        assert_int_equal(back.ranks[r].pid, ranks[r].pid);
    }
    assert_ptr_equal(ipvfs_map_metadata(&back), &back.ranks[0]);
    assert_ptr_equal(ipvfs_map_io_node(&back, 1), &back.ranks[1]);
    assert_null(ipvfs_map_io_node(&back, 2));
    ipvfs_map_free(&back);
    assert_null(back.ranks);
}

/* Comments and blank lines are fine; ranks may come in any order. */
static void test_comments_and_order(void **state)
{
    struct ipvfs_map m;
    char err[512];

    (void)state;
    write_text("ipvfs-map 1\n# a comment\n\nsecret " SECRET_HEX "\n"
               "layout 1 1 0 4096\n"
               "rank 1 4 0 0 h 2 3260 11\n"
               "rank 0 3 0 - h 1 0 10\n");
    assert_int_equal(ipvfs_map_read(path, &m, err, sizeof(err)), 0);
    assert_int_equal(m.secret[31], 0x1f);
    assert_int_equal(m.ranks[0].target_index, -1);
    assert_int_equal(m.ranks[1].target_index, 0);
    ipvfs_map_free(&m);
}

/* A map that names its key file (the public map ipvfs-server writes):
 * the key is read when this process may read the file, and a map without
 * a readable key is no error (its reader proves who it is instead). */
static void test_key_file(void **state)
{
    char keyfile[sizeof(path) + 8], text[700], err[512];
    uint8_t key[IPVFS_SECRET_LEN];
    struct ipvfs_map m;
    FILE *f;

    (void)state;
    snprintf(keyfile, sizeof(keyfile), "%s.key", path);
    for (int i = 0; i < IPVFS_SECRET_LEN; i++)
        key[i] = (uint8_t)(0xa0 + i);
    assert_non_null(f = fopen(keyfile, "w"));
    assert_int_equal(fwrite(key, 1, sizeof(key), f), sizeof(key));
    assert_int_equal(fclose(f), 0);
    snprintf(text, sizeof(text), "ipvfs-map 1\nkey %s\nlayout 1 0 0 4096\nrank 0 3 0 - h 1 0 1\n",
             keyfile);
    write_text(text);
    assert_int_equal(ipvfs_map_read(path, &m, err, sizeof(err)), 0);
    assert_int_equal(m.have_key, 1);
    assert_memory_equal(m.secret, key, sizeof(key));
    assert_string_equal(m.key_path, keyfile);
    ipvfs_map_free(&m);
    /* a key file one may not read, or that is gone: no key, no error */
    assert_int_equal(unlink(keyfile), 0);
    assert_int_equal(ipvfs_map_read(path, &m, err, sizeof(err)), 0);
    assert_int_equal(m.have_key, 0);
    ipvfs_map_free(&m);
    /* ipvfs_map_write of a map that names its key: public, no secret in it */
    m.key_path[0] = '\0';
    {
        struct ipvfs_map_rank r = { .rank = 0, .role = 3, .target_index = -1, .host = "h",
                                    .port = 1, .pid = 1 };
        struct ipvfs_map w = { .nio = 1, .stripe_unit = 4096, .nranks = 1, .ranks = &r };
        struct stat st;
        char back[700];
        size_t n;

        memset(w.secret, 0x5a, sizeof(w.secret));
        snprintf(w.key_path, sizeof(w.key_path), "%s", keyfile);
        assert_int_equal(ipvfs_map_write(path, &w), 0);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0644);
        assert_non_null(f = fopen(path, "r"));
        n = fread(back, 1, sizeof(back) - 1, f);
        back[n] = '\0';
        assert_int_equal(fclose(f), 0);
        assert_null(strstr(back, "secret"));
        assert_non_null(strstr(back, keyfile));
    }
    /* and without any key line */
    write_text("ipvfs-map 1\nlayout 1 0 0 4096\nrank 0 3 0 - h 1 0 1\n");
    assert_int_equal(ipvfs_map_read(path, &m, err, sizeof(err)), 0);
    assert_int_equal(m.have_key, 0);
    ipvfs_map_free(&m);
}

static void test_malformed(void **state)
{
    static const struct {
        const char *text;
        const char *why;   /* in the message */
    } cases[] = {
        { "", "incomplete" },
        { "ipvfs-map 2\nsecret " SECRET_HEX "\n", "line 1" },
        { "ipvfs-map 1\nsecret 0011\nlayout 1 0 0 4096\nrank 0 3 0 - h 1 0 1\n", "line 2" },
        { "ipvfs-map 1\nsecret " SECRET_HEX "zz\n", "line 2" },
        { "ipvfs-map 1\nsecret " SECRET_HEX "\nlayout 0 0 0 4096\n", "line 3" },
        { "ipvfs-map 1\nsecret " SECRET_HEX "\nlayout 1 0 0 0\n", "line 3" },
        { "ipvfs-map 1\nsecret " SECRET_HEX "\nlayout 1 0 0\n", "line 3" },
        { "ipvfs-map 1\nsecret " SECRET_HEX "\nlayout 1 0 0 4096\nlayout 1 0 0 4096\n",
          "line 4" },
        { "ipvfs-map 1\nsecret " SECRET_HEX "\nrank 0 3 0 - h 1 0 1\n", "line 3" },
        { "ipvfs-map 1\nsecret " SECRET_HEX "\nlayout 1 0 0 4096\nrank 1 3 0 - h 1 0 1\n",
          "line 4" },
        { "ipvfs-map 1\nsecret " SECRET_HEX "\nlayout 1 0 0 4096\nrank 0 3 0 - h 0 0 1\n",
          "line 4" },
        { "ipvfs-map 1\nsecret " SECRET_HEX "\nlayout 1 0 0 4096\nrank 0 3 0 - h 70000 0 1\n",
          "line 4" },
        { "ipvfs-map 1\nsecret " SECRET_HEX "\nlayout 1 0 0 4096\nrank 0 0 0 - h 1 0 1\n",
          "line 4" },
        { "ipvfs-map 1\nsecret " SECRET_HEX "\nlayout 1 0 0 4096\nrank 0 8 0 - h 1 0 1\n",
          "line 4" },
        { "ipvfs-map 1\nsecret " SECRET_HEX "\nlayout 1 0 0 4096\nrank 0 3 0 - h 1 0\n",
          "line 4" },
        { "ipvfs-map 1\nsecret " SECRET_HEX "\nlayout 1 0 0 4096\nport 0\n", "line 4" },
        { "ipvfs-map 1\nsecret " SECRET_HEX "\nlayout 1 1 0 4096\nrank 0 3 0 - h 1 0 1\n",
          "incomplete" },   /* rank 1 missing */
        { "ipvfs-map 1\nkey relative/secret\nlayout 1 0 0 4096\nrank 0 3 0 - h 1 0 1\n",
          "line 2" },
        { "ipvfs-map 1\nsecret " SECRET_HEX "\n", "incomplete" },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ipvfs_map m;
        char err[512] = "";

        write_text(cases[i].text);
        if (ipvfs_map_read(path, &m, err, sizeof(err)) != -EINVAL)
            fail_msg("case %zu read without error", i);
        if (!strstr(err, path) || !strstr(err, cases[i].why))
            fail_msg("case %zu: message \"%s\" lacks \"%s\"", i, err, cases[i].why);
        assert_null(m.ranks);
    }
}

static void test_missing_file(void **state)
{
    struct ipvfs_map m;
    char err[512] = "";

    (void)state;
    unlink(path);
    assert_int_equal(ipvfs_map_read(path, &m, err, sizeof(err)), -ENOENT);
    assert_non_null(strstr(err, path));
}

static void test_hex(void **state)
{
    uint8_t in[3] = { 0x00, 0xab, 0xff }, out[3];
    char hex[7];

    (void)state;
    ipvfs_hex_encode(in, 3, hex);
    assert_string_equal(hex, "00abff");
    assert_int_equal(ipvfs_hex_decode("00ABff", out, 3), 0);
    assert_memory_equal(out, in, 3);
    assert_int_equal(ipvfs_hex_decode("00abf", out, 3), -EINVAL);
    assert_int_equal(ipvfs_hex_decode("00abfg", out, 3), -EINVAL);
}

/* The text MAP hands out (ipvfs_map_format without the secret) carries no
 * byte of the secret, parses back the same but for the secret, and is
 * refused where a secret is needed. */
static void test_public_text(void **state)
{
    struct ipvfs_map_rank ranks[6];
    struct ipvfs_map m, back;
    char hex[2 * IPVFS_SECRET_LEN + 1], err[256];
    size_t len;
    char *text;

    (void)state;
    sample(&m, ranks);
    assert_int_equal(ipvfs_map_format(&m, 0, &text, &len), 0);
    assert_int_equal(strlen(text), len);
    ipvfs_hex_encode(m.secret, IPVFS_SECRET_LEN, hex);
    assert_null(strstr(text, hex));
    assert_null(strstr(text, "secret"));
    assert_int_equal(ipvfs_map_parse(text, "the map from h:1", 1, &back, err, sizeof(err)),
                     -EINVAL);
    assert_non_null(strstr(err, "the map from h:1: incomplete"));
    assert_int_equal(ipvfs_map_parse(text, "the map from h:1", 0, &back, err, sizeof(err)), 0);
    assert_int_equal(back.nranks, m.nranks);
    assert_int_equal(back.nio, m.nio);
    assert_memory_equal(back.ranks, m.ranks, m.nranks * sizeof(*m.ranks));
    ipvfs_map_free(&back);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_comments_and_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_key_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_file, setup, teardown),
        cmocka_unit_test(test_hex),
        cmocka_unit_test(test_public_text),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
