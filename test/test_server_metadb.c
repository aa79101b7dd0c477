/* Unit tests of the metadata rank's namespace store (backend/server/metadb.c):
 * path checks, create with parents, EXCL, layouts, READDIR, REMOVE rules,
 * persistence across a reopen, and refusal of a different I/O node count. */
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

#include "backend/server/metadb.h"

struct fixture {
    char dir[256];
    struct metadb *db;
};

static char msg[512];

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));

    snprintf(f->dir, sizeof(f->dir), "%s/test_server_metadb.XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    assert_non_null(mkdtemp(f->dir));
    assert_int_equal(metadb_open(f->dir, 4, 65536, &f->db, msg, sizeof(msg)), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    char cmd[300];

    metadb_close(f->db);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

static int lookup(struct metadb *db, const char *path, uint32_t flags, uint32_t factor,
                  uint64_t unit, struct ipvfs_entry *e)
{
    return metadb_lookup(db, path, strlen(path), flags, factor, unit, e, msg, sizeof(msg));
}

static void test_check_path(void **state)
{
    static const char *const bad[] = { "", "a/b", "//", "/a//b", "/a/", "/./a", "/a/..",
                                       "relative" };
    char longname[300];

    (void)state;
    assert_int_equal(metadb_check_path("/", 1, msg, sizeof(msg)), 0);
    assert_int_equal(metadb_check_path("/a/b.c/..d", 10, msg, sizeof(msg)), 0);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(metadb_check_path(bad[i], strlen(bad[i]), msg, sizeof(msg)), -EINVAL);
    assert_int_equal(metadb_check_path("/a\0b", 4, msg, sizeof(msg)), -EINVAL);
    memset(longname, 'x', sizeof(longname));
    longname[0] = '/';
    assert_int_equal(metadb_check_path(longname, sizeof(longname), msg, sizeof(msg)),
                     -ENAMETOOLONG);
}

static void test_create_with_parents(void **state)
{
    struct fixture *f = *state;
    struct ipvfs_entry e, again, dir;

    assert_int_equal(lookup(f->db, "/a/b/c", 0, 0, 0, &e), -ENOENT);
    assert_int_equal(lookup(f->db, "/a/b/c", IPVFS_LOOKUP_CREATE, 0, 0, &e), 0);
    assert_int_equal(e.created, 1);
    assert_int_equal(e.type, IPVFS_TYPE_FILE);
    assert_int_equal(e.stripe_factor, 4);
    assert_int_equal(e.stripe_unit, 65536);
    assert_true(e.first_server < 4);
    assert_int_equal(lookup(f->db, "/a/b/c", IPVFS_LOOKUP_CREATE, 0, 0, &again), 0);
    assert_int_equal(again.created, 0);
    assert_int_equal(again.handle, e.handle);
    assert_int_equal(lookup(f->db, "/a/b/c", IPVFS_LOOKUP_CREATE | IPVFS_LOOKUP_EXCL, 0, 0,
                            &again), -EEXIST);
    assert_int_equal(lookup(f->db, "/a/b", 0, 0, 0, &dir), 0);
    assert_int_equal(dir.type, IPVFS_TYPE_DIR);
    assert_int_equal(lookup(f->db, "/a/b", IPVFS_LOOKUP_CREATE, 0, 0, &dir), -EISDIR);
    assert_int_equal(lookup(f->db, "/a/b/c/d", IPVFS_LOOKUP_CREATE, 0, 0, &dir), -ENOTDIR);
    assert_int_equal(lookup(f->db, "/", IPVFS_LOOKUP_CREATE, 0, 0, &dir), -EISDIR);
}

static void test_layouts(void **state)
{
    struct fixture *f = *state;
    struct ipvfs_entry e1, e2;

    assert_int_equal(lookup(f->db, "/f", IPVFS_LOOKUP_CREATE, 5, 0, &e1), -EINVAL);
    assert_non_null(strstr(msg, "exceeds"));
    assert_int_equal(lookup(f->db, "/f", IPVFS_LOOKUP_CREATE, 0, (1ull << 30) + 1, &e1),
                     -EINVAL);
    assert_int_equal(lookup(f->db, "/f", IPVFS_LOOKUP_CREATE, 2, 1 << 20, &e1), 0);
    assert_int_equal(e1.stripe_factor, 2);
    assert_int_equal(e1.stripe_unit, 1 << 20);
    assert_int_equal(lookup(f->db, "/g", IPVFS_LOOKUP_CREATE, 0, 0, &e2), 0);
    assert_int_not_equal(e1.handle, e2.handle);
    assert_int_not_equal(e1.first_server, e2.first_server);
}

static void test_mkdir_readdir_remove(void **state)
{
    struct fixture *f = *state;
    struct ipvfs_entry e;
    uint32_t count, head[2];
    size_t len, pos;
    void *body;
    int seen = 0;

    assert_int_equal(metadb_mkdir(f->db, "/d/e", 4, msg, sizeof(msg)), 0);
    assert_int_equal(metadb_mkdir(f->db, "/d/e", 4, msg, sizeof(msg)), -EEXIST);
    assert_int_equal(lookup(f->db, "/d/file", IPVFS_LOOKUP_CREATE, 0, 0, &e), 0);
    assert_int_equal(lookup(f->db, "/d/e/deep", IPVFS_LOOKUP_CREATE, 0, 0, &e), 0);
    assert_int_equal(metadb_readdir(f->db, "/d", 2, IPVFS_MAX_BODY, &body, &len, msg,
                                    sizeof(msg)), 0);
    memcpy(&count, body, sizeof(count));
    assert_int_equal(count, 2);
    for (pos = 4; pos < len;) {
        memcpy(head, (uint8_t *)body + pos, sizeof(head));
        pos += sizeof(head);
        if (head[1] == 1 && memcmp((uint8_t *)body + pos, "e", 1) == 0)
            seen |= head[0] == IPVFS_TYPE_DIR ? 1 : 0;
        if (head[1] == 4 && memcmp((uint8_t *)body + pos, "file", 4) == 0)
            seen |= head[0] == IPVFS_TYPE_FILE ? 2 : 0;
        pos += head[1];
    }
    free(body);
    assert_int_equal(seen, 3);
    assert_int_equal(metadb_readdir(f->db, "/d/file", 7, IPVFS_MAX_BODY, &body, &len, msg,
                                    sizeof(msg)), -ENOTDIR);
    assert_int_equal(metadb_readdir(f->db, "/d", 2, 10, &body, &len, msg, sizeof(msg)), -E2BIG);
    assert_int_equal(metadb_remove(f->db, "/d/e", 4, 0, &e, msg, sizeof(msg)), -EISDIR);
    assert_int_equal(metadb_remove(f->db, "/d/e", 4, 1, &e, msg, sizeof(msg)), -ENOTEMPTY);
    assert_int_equal(metadb_remove(f->db, "/d/e/deep", 9, 0, &e, msg, sizeof(msg)), 0);
    assert_int_equal(e.type, IPVFS_TYPE_FILE);
    assert_int_equal(metadb_remove(f->db, "/d/e", 4, 1, &e, msg, sizeof(msg)), 0);
    assert_int_equal(e.type, IPVFS_TYPE_DIR);
    assert_int_equal(metadb_remove(f->db, "/d/e", 4, 1, &e, msg, sizeof(msg)), -ENOENT);
    assert_int_equal(metadb_remove(f->db, "/", 1, 1, &e, msg, sizeof(msg)), -EBUSY);
    assert_int_equal(metadb_readdir(f->db, "/", 1, IPVFS_MAX_BODY, &body, &len, msg,
                                    sizeof(msg)), 0);
    memcpy(&count, body, sizeof(count));
    assert_int_equal(count, 1);
    free(body);
}

static void test_persistence(void **state)
{
    struct fixture *f = *state;
    struct ipvfs_entry e, after, next;
    struct metadb *other;

    assert_int_equal(lookup(f->db, "/keep/me", IPVFS_LOOKUP_CREATE, 3, 4096, &e), 0);
    metadb_close(f->db);
    assert_int_equal(metadb_open(f->dir, 2, 65536, &other, msg, sizeof(msg)), -EINVAL);
    assert_non_null(strstr(msg, "--io-nodes 4"));
    assert_int_equal(metadb_open(f->dir, 4, 65536, &f->db, msg, sizeof(msg)), 0);
    assert_int_equal(lookup(f->db, "/keep/me", 0, 0, 0, &after), 0);
    assert_int_equal(after.handle, e.handle);
    assert_int_equal(after.stripe_factor, 3);
    assert_int_equal(after.stripe_unit, 4096);
    assert_int_equal(lookup(f->db, "/new", IPVFS_LOOKUP_CREATE, 0, 0, &next), 0);
    assert_true(next.handle > e.handle);
}

/* A removed file stays an orphan until its remover says its datafiles are
 * gone, across a reopen (a remover that died); directories never are. */
static void test_orphans(void **state)
{
    struct fixture *f = *state;
    struct ipvfs_entry a, b, got[4], e;
    uint32_t n;

    assert_int_equal(lookup(f->db, "/o/a", IPVFS_LOOKUP_CREATE, 2, 4096, &a), 0);
    assert_int_equal(lookup(f->db, "/o/b", IPVFS_LOOKUP_CREATE, 0, 0, &b), 0);
    assert_int_equal(metadb_orphans(f->db, 0, 4, got, &n, msg, sizeof(msg)), 0);
    assert_int_equal(n, 0);
    assert_int_equal(metadb_remove(f->db, "/o/a", 4, 0, &e, msg, sizeof(msg)), 0);
    assert_int_equal(metadb_remove(f->db, "/o/b", 4, 0, &e, msg, sizeof(msg)), 0);
    assert_int_equal(metadb_remove(f->db, "/o", 2, 1, &e, msg, sizeof(msg)), 0);
    metadb_close(f->db);
    assert_int_equal(metadb_open(f->dir, 4, 65536, &f->db, msg, sizeof(msg)), 0);
    assert_int_equal(metadb_orphans(f->db, 0, 4, got, &n, msg, sizeof(msg)), 0);
    assert_int_equal(n, 2);
    assert_int_equal(got[0].handle, a.handle);
    assert_int_equal(got[0].stripe_factor, 2);
    assert_int_equal(got[0].stripe_unit, 4096);
    assert_int_equal(got[1].handle, b.handle);
    assert_int_equal(metadb_orphans(f->db, a.handle, 1, got, &n, msg, sizeof(msg)), 0);
    assert_int_equal(n, 1);
    assert_int_equal(got[0].handle, b.handle);
    /* a second cleaner of the same file is no error */
    assert_int_equal(metadb_orphans(f->db, a.handle, 4, got, &n, msg, sizeof(msg)), 0);
    assert_int_equal(metadb_orphans(f->db, b.handle, 4, got, &n, msg, sizeof(msg)), 0);
    assert_int_equal(n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_path),
        cmocka_unit_test_setup_teardown(test_create_with_parents, setup, teardown),
        cmocka_unit_test_setup_teardown(test_layouts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mkdir_readdir_remove, setup, teardown),
        cmocka_unit_test_setup_teardown(test_persistence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_orphans, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
