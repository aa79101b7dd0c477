/* Unit tests of the metadata rank's namespace store (backend/server/metadb.c,
 * metadb_attr.c): path checks, create with parents, EXCL, layouts, READDIR,
 * REMOVE rules, persistence across a reopen, refusal of a different I/O
 * node count, owners, modes and times, SETATTR, RENAME's POSIX rules,
 * directory times on changes of their names, and
 * namespaces of record format 1 (read) and of a newer format (refused). */
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

#include <lmdb.h>

#include "backend/server/metadb.h"

struct fixture {
    char dir[256];
    struct metadb *db;
};

static char msg[512];
static const struct metadb_owner owner = { .mode = 0640, .uid = 1234, .gid = 567 };

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
    return metadb_lookup(db, NULL, path, strlen(path), flags, factor, unit, &owner, e, msg,
                         sizeof(msg));
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

    assert_int_equal(metadb_mkdir(f->db, NULL, "/d/e", 4, &owner, msg, sizeof(msg)), 0);
    assert_int_equal(metadb_mkdir(f->db, NULL, "/d/e", 4, &owner, msg, sizeof(msg)), -EEXIST);
    assert_int_equal(lookup(f->db, "/d/file", IPVFS_LOOKUP_CREATE, 0, 0, &e), 0);
    assert_int_equal(lookup(f->db, "/d/e/deep", IPVFS_LOOKUP_CREATE, 0, 0, &e), 0);
    assert_int_equal(metadb_readdir(f->db, NULL, "/d", 2, IPVFS_MAX_BODY, &body, &len, msg,
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
    assert_int_equal(metadb_readdir(f->db, NULL, "/d/file", 7, IPVFS_MAX_BODY, &body, &len, msg,
                                    sizeof(msg)), -ENOTDIR);
    assert_int_equal(metadb_readdir(f->db, NULL, "/d", 2, 10, &body, &len, msg, sizeof(msg)), -E2BIG);
    assert_int_equal(metadb_remove(f->db, NULL, "/d/e", 4, 0, &e, msg, sizeof(msg)), -EISDIR);
    assert_int_equal(metadb_remove(f->db, NULL, "/d/e", 4, 1, &e, msg, sizeof(msg)), -ENOTEMPTY);
    assert_int_equal(metadb_remove(f->db, NULL, "/d/e/deep", 9, 0, &e, msg, sizeof(msg)), 0);
    assert_int_equal(e.type, IPVFS_TYPE_FILE);
    assert_int_equal(metadb_remove(f->db, NULL, "/d/e", 4, 1, &e, msg, sizeof(msg)), 0);
    assert_int_equal(e.type, IPVFS_TYPE_DIR);
    assert_int_equal(metadb_remove(f->db, NULL, "/d/e", 4, 1, &e, msg, sizeof(msg)), -ENOENT);
    assert_int_equal(metadb_remove(f->db, NULL, "/", 1, 1, &e, msg, sizeof(msg)), -EBUSY);
    assert_int_equal(metadb_readdir(f->db, NULL, "/", 1, IPVFS_MAX_BODY, &body, &len, msg,
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
    assert_int_equal(metadb_remove(f->db, NULL, "/o/a", 4, 0, &e, msg, sizeof(msg)), 0);
    assert_int_equal(metadb_remove(f->db, NULL, "/o/b", 4, 0, &e, msg, sizeof(msg)), 0);
    assert_int_equal(metadb_remove(f->db, NULL, "/o", 2, 1, &e, msg, sizeof(msg)), 0);
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

static int getattr(struct metadb *db, const char *path, struct ipvfs_attr *a)
{
    return metadb_getattr(db, NULL, path, strlen(path), a, msg, sizeof(msg));
}

static int rename_(struct metadb *db, const char *src, const char *dst, uint32_t flags,
                   struct ipvfs_rename_rep *rep)
{
    return metadb_rename(db, NULL, src, strlen(src), dst, strlen(dst), flags, rep, msg, sizeof(msg));
}

/* Create sets owner, mode and times; parents made on the way get 0755 plus
 * the read bits; SETATTR changes what valid names and ctime. */
static void test_attrs(void **state)
{
    struct fixture *f = *state;
    struct ipvfs_setattr_req req = { 0 };
    struct ipvfs_attr a, b;
    struct ipvfs_entry e;

    assert_int_equal(lookup(f->db, "/p/q/file", IPVFS_LOOKUP_CREATE, 0, 0, &e), 0);
    assert_int_equal(getattr(f->db, "/p/q/file", &a), 0);
    assert_int_equal(a.entry.type, IPVFS_TYPE_FILE);
    assert_int_equal(a.entry.handle, e.handle);
    assert_int_equal(a.mode, 0640);
    assert_int_equal(a.uid, 1234);
    assert_int_equal(a.gid, 567);
    assert_true(a.mtime_ns > 0 && a.mtime_ns == a.ctime_ns && a.atime_ns == a.mtime_ns);
    assert_int_equal(getattr(f->db, "/p", &b), 0);
    assert_int_equal(b.entry.type, IPVFS_TYPE_DIR);
    assert_int_equal(b.mode, 0755);
    assert_int_equal(b.uid, 1234);
    assert_int_equal(getattr(f->db, "/", &b), 0);
    assert_int_equal(b.mode, 01777);
    assert_int_equal(getattr(f->db, "/p/nope", &b), -ENOENT);

    req.valid = IPVFS_SETATTR_MODE | IPVFS_SETATTR_MTIME | IPVFS_SETATTR_GID;
    req.mode = 0600;
    req.mtime_ns = 42;
    req.gid = 9;
    assert_int_equal(metadb_setattr(f->db, NULL, "/p/q/file", 9, &req, &b, msg, sizeof(msg)), 0);
    assert_int_equal(b.mode, 0600);
    assert_int_equal(b.mtime_ns, 42);
    assert_int_equal(b.gid, 9);
    assert_int_equal(b.uid, 1234);
    assert_true(b.ctime_ns >= a.ctime_ns);
    assert_int_equal(getattr(f->db, "/p/q/file", &a), 0);
    assert_int_equal(a.mtime_ns, 42);
    req.valid = IPVFS_SETATTR_MTIME_NOW;
    assert_int_equal(metadb_setattr(f->db, NULL, "/p/q/file", 9, &req, &b, msg, sizeof(msg)), 0);
    assert_true(b.mtime_ns > 42);
    req.valid = IPVFS_SETATTR_MODE;
    req.mode = 010000;
    assert_int_equal(metadb_setattr(f->db, NULL, "/p/q/file", 9, &req, &b, msg, sizeof(msg)),
                     -EINVAL);
    req.valid = 0x1000;
    assert_int_equal(metadb_setattr(f->db, NULL, "/p/q/file", 9, &req, &b, msg, sizeof(msg)),
                     -EINVAL);
    req.valid = IPVFS_SETATTR_MODE;
    req.mode = 0700;
    assert_int_equal(metadb_setattr(f->db, NULL, "/", 1, &req, &b, msg, sizeof(msg)), -EPERM);
    assert_int_equal(metadb_setattr(f->db, NULL, "/zz", 3, &req, &b, msg, sizeof(msg)), -ENOENT);
}

/* rename(2)'s rules: move, NOREPLACE, replace a file (an orphan), types,
 * non-empty directories, under itself, missing parents, a no-op. */
static void test_rename(void **state)
{
    struct fixture *f = *state;
    struct ipvfs_rename_rep rep;
    struct ipvfs_entry a, b, e, got[4];
    struct ipvfs_attr at;
    uint32_t n;

    assert_int_equal(lookup(f->db, "/d/a", IPVFS_LOOKUP_CREATE, 0, 0, &a), 0);
    assert_int_equal(lookup(f->db, "/d/b", IPVFS_LOOKUP_CREATE, 0, 0, &b), 0);
    assert_int_equal(rename_(f->db, "/d/a", "/d/b", IPVFS_RENAME_NOREPLACE, &rep), -EEXIST);
    assert_int_equal(rename_(f->db, "/d/a", "/d/b", 0, &rep), 0);
    assert_int_equal(rep.replaced, 1);
    assert_int_equal(rep.entry.handle, b.handle);
    assert_int_equal(metadb_orphans(f->db, 0, 4, got, &n, msg, sizeof(msg)), 0);
    assert_int_equal(n, 1);
    assert_int_equal(got[0].handle, b.handle);
    assert_int_equal(lookup(f->db, "/d/a", 0, 0, 0, &e), -ENOENT);
    assert_int_equal(lookup(f->db, "/d/b", 0, 0, 0, &e), 0);
    assert_int_equal(e.handle, a.handle);
    /* directories: a file moves into another tree, a tree moves whole */
    assert_int_equal(metadb_mkdir(f->db, NULL, "/x/y", 4, &owner, msg, sizeof(msg)), 0);
    assert_int_equal(rename_(f->db, "/d/b", "/x/y/file", 0, &rep), 0);
    assert_int_equal(rep.replaced, 0);
    assert_int_equal(rename_(f->db, "/x", "/d/x2", 0, &rep), 0);
    assert_int_equal(lookup(f->db, "/d/x2/y/file", 0, 0, 0, &e), 0);
    assert_int_equal(e.handle, a.handle);
    assert_int_equal(rename_(f->db, "/d", "/d/x2/y/in", 0, &rep), -EINVAL);
    assert_int_equal(rename_(f->db, "/d/x2/y/file", "/d/x2", 0, &rep), -EISDIR);
    assert_int_equal(metadb_mkdir(f->db, NULL, "/empty", 6, &owner, msg, sizeof(msg)), 0);
    assert_int_equal(rename_(f->db, "/d/x2", "/empty", 0, &rep), 0);
    assert_int_equal(lookup(f->db, "/empty/y/file", 0, 0, 0, &e), 0);
    assert_int_equal(metadb_mkdir(f->db, NULL, "/full/sub", 9, &owner, msg, sizeof(msg)), 0);
    assert_int_equal(rename_(f->db, "/d", "/full", 0, &rep), -ENOTEMPTY);
    assert_int_equal(rename_(f->db, "/empty", "/empty/y/file", 0, &rep), -EINVAL);
    assert_int_equal(rename_(f->db, "/full/sub", "/empty/y/file", 0, &rep), -ENOTDIR);
    assert_int_equal(rename_(f->db, "/empty/y/file", "/nodir/file", 0, &rep), -ENOENT);
    assert_int_equal(rename_(f->db, "/missing", "/m2", 0, &rep), -ENOENT);
    assert_int_equal(rename_(f->db, "/empty/y/file", "/empty/y/file", 0, &rep), 0);
    assert_int_equal(rename_(f->db, "/", "/r", 0, &rep), -EBUSY);
    assert_int_equal(getattr(f->db, "/empty/y/file", &at), 0);
    assert_int_equal(at.mode, 0640);
}

/* mtime of directory path set back to 1 (SETATTR); its ctime after. */
static int64_t age_dir(struct metadb *db, const char *path)
{
    struct ipvfs_setattr_req req = { .valid = IPVFS_SETATTR_MTIME, .mtime_ns = 1 };
    struct ipvfs_attr a;

    assert_int_equal(metadb_setattr(db, NULL, path, strlen(path), &req, &a, msg, sizeof(msg)), 0);
    assert_int_equal(a.mtime_ns, 1);
    return a.ctime_ns;
}

/* The directory's mtime is now (set back to 1 before), its ctime not older. */
static void assert_dir_changed(struct metadb *db, const char *path, int64_t old_ctime)
{
    struct ipvfs_attr a;

    assert_int_equal(getattr(db, path, &a), 0);
    assert_true(a.mtime_ns > 1);
    assert_true(a.ctime_ns >= old_ctime && a.ctime_ns == a.mtime_ns);
}

/* Making, removing and renaming names change their directories' times:
 * create, mkdir, remove, rename inside one and across two. */
static void test_dir_times(void **state)
{
    struct fixture *f = *state;
    struct ipvfs_rename_rep rep;
    struct ipvfs_entry e;
    struct ipvfs_attr a;
    int64_t c, c2;

    assert_int_equal(metadb_mkdir(f->db, NULL, "/d/e", 4, &owner, msg, sizeof(msg)), 0);
    c = age_dir(f->db, "/d");
    assert_int_equal(lookup(f->db, "/d/f", IPVFS_LOOKUP_CREATE, 0, 0, &e), 0);
    assert_dir_changed(f->db, "/d", c);
    c = age_dir(f->db, "/d");
    assert_int_equal(metadb_mkdir(f->db, NULL, "/d/g", 4, &owner, msg, sizeof(msg)), 0);
    assert_dir_changed(f->db, "/d", c);
    c = age_dir(f->db, "/d");
    assert_int_equal(rename_(f->db, "/d/f", "/d/f2", 0, &rep), 0);
    assert_dir_changed(f->db, "/d", c);
    c = age_dir(f->db, "/d");
    c2 = age_dir(f->db, "/d/e");
    assert_int_equal(rename_(f->db, "/d/f2", "/d/e/f3", 0, &rep), 0);
    assert_dir_changed(f->db, "/d", c);
    assert_dir_changed(f->db, "/d/e", c2);
    c2 = age_dir(f->db, "/d/e");
    assert_int_equal(metadb_remove(f->db, NULL, "/d/e/f3", 7, 0, &e, msg, sizeof(msg)), 0);
    assert_dir_changed(f->db, "/d/e", c2);
    /* opening an existing name (with create too) changes nothing */
    (void)age_dir(f->db, "/d");
    assert_int_equal(lookup(f->db, "/d/h", IPVFS_LOOKUP_CREATE, 0, 0, &e), 0);
    (void)age_dir(f->db, "/d");
    assert_int_equal(lookup(f->db, "/d/h", 0, 0, 0, &e), 0);
    assert_int_equal(lookup(f->db, "/d/h", IPVFS_LOOKUP_CREATE, 0, 0, &e), 0);
    assert_int_equal(getattr(f->db, "/d", &a), 0);
    assert_int_equal(a.mtime_ns, 1);
}

/* A namespace of record format 1 (before owners and times) is read with
 * default modes; one of a newer format is refused. */
static void test_formats(void **state)
{
    struct fixture *f = *state;
    struct ipvfs_entry e;
    struct ipvfs_attr a;
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi ns, info;
    MDB_val k, v;
    uint8_t key[9] = { 0, 0, 0, 0, 0, 0, 0, 0, 'o' };
    uint32_t rec[8] = { IPVFS_TYPE_FILE, 2, 77, 0, 4096, 0, 1, 0 };  /* format 1, 32 bytes */
    uint64_t format = 1;

    metadb_close(f->db);
    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_set_maxdbs(env, 3), 0);
    assert_int_equal(mdb_env_set_mapsize(env, 1ull << 30), 0);
    assert_int_equal(mdb_env_open(env, f->dir, 0, 0600), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, "ns", 0, &ns), 0);
    assert_int_equal(mdb_dbi_open(txn, "info", 0, &info), 0);
    k = (MDB_val){ sizeof(key), key };
    v = (MDB_val){ sizeof(rec), rec };
    assert_int_equal(mdb_put(txn, ns, &k, &v, 0), 0);
    k = (MDB_val){ 6, "format" };
    v = (MDB_val){ sizeof(format), &format };
    assert_int_equal(mdb_put(txn, info, &k, &v, 0), 0);
    assert_int_equal(mdb_txn_commit(txn), 0);
    mdb_env_close(env);

    assert_int_equal(metadb_open(f->dir, 4, 65536, &f->db, msg, sizeof(msg)), 0);
    assert_int_equal(getattr(f->db, "/o", &a), 0);
    assert_int_equal(a.entry.handle, 77);
    assert_int_equal(a.entry.stripe_factor, 2);
    assert_int_equal(a.entry.stripe_unit, 4096);
    assert_int_equal(a.entry.first_server, 1);
    assert_int_equal(a.mode, 0644);
    assert_int_equal(a.uid, 0);
    assert_int_equal(a.mtime_ns, 0);
    assert_int_equal(lookup(f->db, "/o", 0, 0, 0, &e), 0);
    assert_int_equal(e.handle, 77);
    metadb_close(f->db);
    f->db = NULL;

    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_set_maxdbs(env, 3), 0);
    assert_int_equal(mdb_env_set_mapsize(env, 1ull << 30), 0);
    assert_int_equal(mdb_env_open(env, f->dir, 0, 0600), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, "info", 0, &info), 0);
    format = 3;
    k = (MDB_val){ 6, "format" };
    v = (MDB_val){ sizeof(format), &format };
    assert_int_equal(mdb_put(txn, info, &k, &v, 0), 0);
    assert_int_equal(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
    assert_int_equal(metadb_open(f->dir, 4, 65536, &f->db, msg, sizeof(msg)), -EPROTONOSUPPORT);
    assert_non_null(strstr(msg, "newer"));
    f->db = NULL;
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
        cmocka_unit_test_setup_teardown(test_attrs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rename, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dir_times, setup, teardown),
        cmocka_unit_test_setup_teardown(test_formats, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
