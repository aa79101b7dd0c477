/* Internals shared by metadb.c (the namespace core: records, paths,
 * LOOKUP, MKDIR, REMOVE, READDIR, orphans) and metadb_attr.c (GETATTR,
 * SETATTR, RENAME), which calls into metadb.c and never the other way.
 * Not for other files: metadb.h is the namespace's interface. */
#ifndef IPVFS_SERVER_METADB_INTERNAL_H
#define IPVFS_SERVER_METADB_INTERNAL_H

#include <lmdb.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/server/metadb.h"
#include "backend/server/perm.h"

/* "/" has no record: it reads as a world-writable sticky directory (as
 * /tmp), owned by root, so every user of the cluster can make names at
 * the top and none can remove another's. */
#define METADB_ROOT_MODE 01777u

/* Record format kept in "info" under "format" (see check_format). */
#define METADB_FORMAT 2u

struct metadb {
    MDB_env *env;
    MDB_dbi ns;
    MDB_dbi info;
    MDB_dbi orphans;   /* handle (8 bytes BE) -> struct ipvfs_entry */
    uint32_t nio;
    uint64_t default_unit;
};

/* The value stored for each name.  Format 1 records end after
 * first_server and a zero word (MD_REC_V1_SIZE bytes); format 2 added the
 * mode in that word, the owner and the times. */
struct md_rec {
    uint32_t type;
    uint32_t stripe_factor;
    uint64_t handle;
    uint64_t stripe_unit;
    uint32_t first_server;
    uint32_t mode;          /* permission bits */
    uint32_t uid;
    uint32_t gid;
    int64_t atime_ns;
    int64_t mtime_ns;
    int64_t ctime_ns;
};
#define MD_REC_V1_SIZE 32u

/* A "ns" key: parent id (big-endian, so one directory's names sort
 * together) followed by the component name. */
struct md_key {
    uint8_t bytes[8 + METADB_NAME_MAX];
    size_t len;
};

int md_say(char *msg, size_t msglen, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int md_fail(int rc, const char *what, char *msg, size_t msglen);
int64_t metadb_now_ns(void);
void md_make_key(struct md_key *k, uint64_t parent, const char *name, size_t nlen);
/* Splits a checked path (not "/") into its last component. */
void md_last_component(const char *path, size_t len, size_t *out_start);
int md_begin(struct metadb *db, int write, MDB_txn **out, char *msg, size_t msglen);
int md_commit(MDB_txn *txn, char *msg, size_t msglen);
/* Reads the record of (parent, name): 0, -ENOENT (quietly) or an error. */
int md_get_rec(struct metadb *db, MDB_txn *txn, uint64_t parent, const char *name, size_t nlen,
            struct md_rec *out, char *msg, size_t msglen);
int md_put_rec(struct metadb *db, MDB_txn *txn, uint64_t parent, const char *name, size_t nlen,
            const struct md_rec *rec, char *msg, size_t msglen);
/* Walks every component of path but the last, making missing directories
 * owned by create when it is not NULL.  *out_parent is the id of the last
 * one's directory, *out_dir (when not NULL) its record.  With a cred,
 * every directory walked needs search permission, and one that gets a
 * new directory write permission too (perm.h). */
int md_walk_parents(struct metadb *db, MDB_txn *txn, const struct perm_cred *cred,
                    const char *path, size_t len, const struct metadb_owner *create,
                    uint64_t *out_parent, struct md_rec *out_dir, char *msg, size_t msglen);
/* The record "/" reads as. */
void md_root_rec(struct md_rec *out);
/* perm_access of cred (NULL: a holder of the key, allowed) on rec; a
 * refusal says what verb was refused on which path, for whom. */
int md_allow(const struct perm_cred *cred, const struct md_rec *rec, unsigned want,
             const char *verb, const char *path, size_t len, char *msg, size_t msglen);
/* A refusal of perm.h (rc -EACCES or -EPERM) as md_allow words it. */
int md_deny(int rc, const struct perm_cred *cred, const char *verb, const char *path, size_t len,
            char *msg, size_t msglen);
void md_obj(const struct md_rec *rec, struct perm_obj *out);
/* perm_unlink of rec from its directory dir, worded as md_allow. */
int md_may_unlink(const struct perm_cred *cred, const struct md_rec *dir,
                  const struct md_rec *rec, const char *path, size_t len, char *msg,
                  size_t msglen);
void md_fill_entry(const struct md_rec *rec, int created, struct ipvfs_entry *out);
/* A name was added to or removed from the directory holding path (checked,
 * not "/"): the directory's mtime and ctime become now, as POSIX asks.
 * "/" has no record, so its times stay; directories made on the way by
 * md_walk_parents do not touch their own parents. */
int md_touch_parent(struct metadb *db, MDB_txn *txn, const char *path, size_t len, char *msg,
                    size_t msglen);
/* 1 if directory id has any entry, 0 if none, or an error. */
int md_has_children(struct metadb *db, MDB_txn *txn, uint64_t id, char *msg, size_t msglen);
/* Records a removed file whose datafiles still exist (same transaction as
 * the removal of its name, so a crash loses neither). */
int md_put_orphan(struct metadb *db, MDB_txn *txn, const struct ipvfs_entry *e, char *msg,
               size_t msglen);

#endif
