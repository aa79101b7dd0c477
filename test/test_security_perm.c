/* The POSIX permission rules of the metadata rank (backend/server/perm.c),
 * on hand-checked cases: what Linux answers a process with that uid, gid
 * and groups for a name of that mode and owner; then the same rules along
 * the paths of a real namespace (metadb with a credential). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/server/metadb.h"
#include "backend/server/perm.h"

static const struct perm_cred alice = { .uid = 1001, .gid = 1001, .ngroups = 1, .groups = { 50 } };
static const struct perm_cred bob = { .uid = 1002, .gid = 1002, .ngroups = 2,
                                      .groups = { 1001, 60 } };
static const struct perm_cred carol = { .uid = 1003, .gid = 1003 };
static const struct perm_cred root = { .uid = 0, .gid = 0 };

static struct perm_obj file(uint32_t mode, uint32_t uid, uint32_t gid)
{
    return (struct perm_obj){ .mode = mode, .uid = uid, .gid = gid };
}

static struct perm_obj dir(uint32_t mode, uint32_t uid, uint32_t gid)
{
    return (struct perm_obj){ .mode = mode, .uid = uid, .gid = gid, .is_dir = 1 };
}

static void test_access_classes(void **state)
{
    struct perm_obj f640 = file(0640, 1001, 1001), f604 = file(0604, 1001, 1001);

    (void)state;
    /* owner, then group (a supplementary one for bob), then others */
    assert_int_equal(perm_access(&alice, &f640, PERM_R | PERM_W), 0);
    assert_int_equal(perm_access(&bob, &f640, PERM_R), 0);
    assert_int_equal(perm_access(&bob, &f640, PERM_W), -EACCES);
    assert_int_equal(perm_access(&carol, &f640, PERM_R), -EACCES);
    /* the first class that matches decides, even when a later one would
     * allow more: a group member of a 0604 file may not read it */
    assert_int_equal(perm_access(&bob, &f604, PERM_R), -EACCES);
    assert_int_equal(perm_access(&carol, &f604, PERM_R), 0);
    struct perm_obj f060 = file(0060, 1001, 1001);
    assert_int_equal(perm_access(&alice, &f060, PERM_R), -EACCES);
    /* asking for nothing is always allowed */
    assert_int_equal(perm_access(&carol, &f640, 0), 0);
}

static void test_root(void **state)
{
    struct perm_obj none = file(0000, 1001, 1001), exe = file(0100, 1001, 1001);
    struct perm_obj d = dir(0000, 1001, 1001);

    (void)state;
    assert_int_equal(perm_access(&root, &none, PERM_R | PERM_W), 0);
    /* root executes only what someone may, but searches every directory */
    assert_int_equal(perm_access(&root, &none, PERM_X), -EACCES);
    assert_int_equal(perm_access(&root, &exe, PERM_X), 0);
    assert_int_equal(perm_access(&root, &d, PERM_X | PERM_R | PERM_W), 0);
}

static void test_sticky(void **state)
{
    struct perm_obj tmp = dir(01777, 0, 0), open_dir = dir(0777, 0, 0);
    struct perm_obj alices = file(0644, 1001, 1001), ro = dir(0755, 1001, 1001);
    struct perm_obj bobs_sticky = dir(01777, 1002, 1002);

    (void)state;
    assert_int_equal(perm_unlink(&alice, &tmp, &alices), 0);
    assert_int_equal(perm_unlink(&bob, &tmp, &alices), -EPERM);
    assert_int_equal(perm_unlink(&bob, &open_dir, &alices), 0);
    /* the directory's owner may remove anything in it */
    assert_int_equal(perm_unlink(&bob, &bobs_sticky, &alices), 0);
    assert_int_equal(perm_unlink(&root, &tmp, &alices), 0);
    /* no write on the directory: EACCES before any sticky rule */
    assert_int_equal(perm_unlink(&bob, &ro, &alices), -EACCES);
    assert_int_equal(perm_unlink(&alice, &ro, &alices), 0);
}

static void test_chmod_chown(void **state)
{
    struct perm_obj f = file(0644, 1001, 1001), other_group = file(0644, 1001, 70);
    uint32_t mode;

    (void)state;
    assert_int_equal(perm_chmod(&alice, &f, 02755, &mode), 0);
    assert_int_equal(mode, 02755u);
    /* a non-member's chmod drops S_ISGID (Linux does the same) */
    assert_int_equal(perm_chmod(&alice, &other_group, 02755, &mode), 0);
    assert_int_equal(mode, 0755u);
    assert_int_equal(perm_chmod(&bob, &f, 0777, &mode), -EPERM);
    assert_int_equal(perm_chmod(&root, &other_group, 02755, &mode), 0);
    assert_int_equal(mode, 02755u);
    /* only root gives a file away; the owner changes its group to its own */
    assert_int_equal(perm_chown(&alice, &f, 1, 1002, 0, 0), -EPERM);
    assert_int_equal(perm_chown(&alice, &f, 1, 1001, 1, 50), 0);
    assert_int_equal(perm_chown(&alice, &f, 0, 0, 1, 60), -EPERM);
    assert_int_equal(perm_chown(&bob, &f, 0, 0, 1, 1001), -EPERM);
    assert_int_equal(perm_chown(&root, &f, 1, 1002, 1, 60), 0);
}

static void test_utimes_owner(void **state)
{
    struct perm_obj f = file(0664, 1001, 1001), g = file(0644, 1001, 1001);

    (void)state;
    assert_int_equal(perm_utimes(&alice, &f, 1), 0);
    assert_int_equal(perm_utimes(&bob, &f, 1), -EPERM);
    assert_int_equal(perm_utimes(&bob, &f, 0), 0);        /* a writer: to now */
    assert_int_equal(perm_utimes(&bob, &g, 0), -EACCES);
    assert_int_equal(perm_utimes(&carol, &f, 0), -EACCES);
    /* what a user creates is its own, in one of its groups */
    assert_int_equal(perm_owner(&bob, 1002, 1002), 0);
    assert_int_equal(perm_owner(&bob, 1002, 1001), 0);
    assert_int_equal(perm_owner(&bob, 1001, 1002), -EPERM);
    assert_int_equal(perm_owner(&bob, 1002, 70), -EPERM);
    assert_int_equal(perm_owner(&root, 1001, 1001), 0);
}

/* A namespace as root (NULL: the key) made it: /home 0755 root's,
 * /home/alice 0700 alice's, alice's file in it; then each user's calls. */
static void test_namespace_walks(void **state)
{
    const struct metadb_owner root_dir = { .mode = 0755 }, alice_dir = { 0700, 1001, 1001 },
                              alice_file = { 0644, 1001, 1001 }, bob_dir = { 0755, 1002, 1002 };
    struct ipvfs_setattr_req chmod = { .valid = IPVFS_SETATTR_MODE, .mode = 0666 };
    char dir[256], msg[512], cmd[300];
    struct ipvfs_rename_rep rep;
    struct ipvfs_entry e;
    struct ipvfs_attr a;
    struct metadb *db;
    size_t len;
    void *list;

    (void)state;
    snprintf(dir, sizeof(dir), "%s/test_security_perm.XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    assert_non_null(mkdtemp(dir));
    assert_int_equal(metadb_open(dir, 2, 65536, &db, msg, sizeof(msg)), 0);
    assert_int_equal(metadb_mkdir(db, NULL, "/home", 5, &root_dir, msg, sizeof(msg)), 0);
    assert_int_equal(metadb_mkdir(db, NULL, "/home/alice", 11, &alice_dir, msg, sizeof(msg)), 0);
    /* alice creates in her directory, asking to write */
    assert_int_equal(metadb_lookup(db, &alice, "/home/alice/f", 13,
                                   IPVFS_LOOKUP_CREATE | IPVFS_LOOKUP_WRITE, 0, 0, &alice_file,
                                   &e, msg, sizeof(msg)), 0);
    assert_int_equal(e.created, 1);
    /* bob: no search in /home/alice, even for a 0644 file; no list of it */
    assert_int_equal(metadb_lookup(db, &bob, "/home/alice/f", 13, IPVFS_LOOKUP_READ, 0, 0,
                                   &alice_file, &e, msg, sizeof(msg)), -EACCES);
    assert_non_null(strstr(msg, "uid 1002 may not search"));
    assert_int_equal(metadb_getattr(db, &bob, "/home/alice/f", 13, &a, msg, sizeof(msg)), -EACCES);
    assert_int_equal(metadb_readdir(db, &bob, "/home/alice", 11, IPVFS_MAX_BODY, &list, &len,
                                    msg, sizeof(msg)), -EACCES);
    assert_int_equal(metadb_readdir(db, &alice, "/home/alice", 11, IPVFS_MAX_BODY, &list, &len,
                                    msg, sizeof(msg)), 0);
    free(list);
    /* bob may not make names in root's /home, nor parents on the way */
    assert_int_equal(metadb_mkdir(db, &bob, "/home/bob", 9, &bob_dir, msg, sizeof(msg)), -EACCES);
    assert_int_equal(metadb_lookup(db, &bob, "/home/bob/x/f", 13, IPVFS_LOOKUP_CREATE, 0, 0,
                                   &bob_dir, &e, msg, sizeof(msg)), -EACCES);
    /* alice moves her file to the sticky root; bob can neither remove,
     * rename nor chmod it there; root can */
    assert_int_equal(metadb_rename(db, &alice, "/home/alice/f", 13, "/f", 2, 0, &rep, msg,
                                   sizeof(msg)), 0);
    assert_int_equal(metadb_remove(db, &bob, "/f", 2, 0, &e, msg, sizeof(msg)), -EPERM);
    assert_int_equal(metadb_rename(db, &bob, "/f", 2, "/g", 2, 0, &rep, msg, sizeof(msg)),
                     -EPERM);
    assert_int_equal(metadb_setattr(db, &bob, "/f", 2, &chmod, &a, msg, sizeof(msg)), -EPERM);
    assert_int_equal(metadb_setattr(db, &alice, "/f", 2, &chmod, &a, msg, sizeof(msg)), 0);
    assert_int_equal(a.mode, 0666u);
    assert_int_equal(metadb_lookup(db, &bob, "/f", 2, IPVFS_LOOKUP_READ | IPVFS_LOOKUP_WRITE, 0,
                                   0, &alice_file, &e, msg, sizeof(msg)), 0);
    assert_int_equal(metadb_remove(db, &root, "/f", 2, 0, &e, msg, sizeof(msg)), 0);
    metadb_close(db);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_access_classes), cmocka_unit_test(test_root),
        cmocka_unit_test(test_sticky),         cmocka_unit_test(test_chmod_chown),
        cmocka_unit_test(test_utimes_owner),   cmocka_unit_test(test_namespace_walks),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
