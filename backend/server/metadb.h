/* The namespace of the metadata rank, kept in LMDB.
 *
 * Layout: every directory has an id (the root's is 0).  The "ns" database
 * maps (parent id as 8 big-endian bytes, component name) to a record: type,
 * handle (a directory's handle is its id), stripe unit, factor and first
 * server, mode, owner and times (record format 2; "info"'s "format" says
 * which; format 1 records, without mode, owner and times, are still read,
 * and a newer format is refused with EPROTONOSUPPORT).  Keying by parent id keeps keys short (LMDB limits keys to 511
 * bytes; a component is at most 255) and makes READDIR one range scan.  The
 * "info" database keeps the next handle and the I/O node count the
 * namespace was made for.
 *
 * Every mutation is one write transaction, committed (durably: LMDB's
 * default sync mode) before the call returns, so a reply sent afterwards
 * never reports a change a crash could lose.
 *
 * Permissions: every call that takes a cred applies perm.h's rules for
 * that user (search on each directory of a path, and what the call needs
 * besides); a NULL cred is a holder of the cluster key and is trusted.
 *
 * Errors: calls return 0 or a negative errno and, on failure, a message for
 * the user in msg (the protocol sends it as the reply body).  Pure code over
 * LMDB, no event loop, no MPI: unit-tested in test/test_server_metadb.c. */
#ifndef IPVFS_SERVER_METADB_H
#define IPVFS_SERVER_METADB_H

#include <stddef.h>
#include <stdint.h>

#include "backend/server/perm.h"
#include "common/proto.h"

#define METADB_NAME_MAX 255u

struct metadb;

/* Owner and permission bits given to names made by a call. */
struct metadb_owner {
    uint32_t mode;
    uint32_t uid;
    uint32_t gid;
};

/* Opens (creating) the namespace in directory dir, for a cluster of nio
 * I/O nodes whose default stripe unit is default_unit.  A namespace made
 * for another nio is refused (its files' layouts would name missing
 * servers). */
int metadb_open(const char *dir, uint32_t nio, uint64_t default_unit, struct metadb **out,
                char *msg, size_t msglen);
void metadb_close(struct metadb *db);

/* Checks an absolute path of len bytes (no NUL): starts with '/', no empty,
 * "." or ".." component, no NUL byte, components of at most
 * METADB_NAME_MAX bytes, shorter than IPVFS_MAX_PATH.  "/" is valid. */
int metadb_check_path(const char *path, size_t len, char *msg, size_t msglen);

/* LOOKUP: flags IPVFS_LOOKUP_CREATE / _EXCL / _READ / _WRITE (the
 * rights to check: what a creator asked for is granted); factor 0 means every I/O
 * node, unit 0 the default.  Creating makes missing parent directories;
 * owner (used only when creating) gives the new names' owner and mode. */
int metadb_lookup(struct metadb *db, const struct perm_cred *cred,
                  const char *path, size_t len, uint32_t flags,
                  uint32_t factor, uint64_t unit, const struct metadb_owner *owner,
                  struct ipvfs_entry *out, char *msg, size_t msglen);
/* MKDIR: makes the directory and any missing parents; EEXIST if the path
 * already exists. */
int metadb_mkdir(struct metadb *db, const struct perm_cred *cred,
                  const char *path, size_t len,
                 const struct metadb_owner *owner, char *msg, size_t msglen);
/* REMOVE: a file, or with allow_dir an empty directory (EISDIR without);
 * *out receives what was removed. */
int metadb_remove(struct metadb *db, const struct perm_cred *cred,
                  const char *path, size_t len, int allow_dir,
                  struct ipvfs_entry *out, char *msg, size_t msglen);
/* Orphans: REMOVE of a file records it (handle and layout) in the same
 * transaction; its datafiles are the remover's to delete, after which it
 * calls metadb_orphans with done = the handle.  A remover that dies first
 * leaves the record, and the next remover cleans it up: metadb_orphans
 * forgets done (0: nothing; an unknown handle is no error, two cleaners
 * may race) and returns up to max records in *out (*out_n of them). */
int metadb_orphans(struct metadb *db, uint64_t done, uint32_t max, struct ipvfs_entry *out,
                   uint32_t *out_n, char *msg, size_t msglen);
/* READDIR: *out_body (malloc'd, the caller's) receives the reply body of
 * proto.h: uint32 count, then per entry uint32 type, uint32 name_len, name.
 * The body is kept under max_body bytes (E2BIG otherwise). */
int metadb_readdir(struct metadb *db, const struct perm_cred *cred,
                  const char *path, size_t len, uint64_t max_body,
                   void **out_body, size_t *out_len, char *msg, size_t msglen);

/* GETATTR of a file or directory ("/" too: mode 0755, owner 0:0). */
int metadb_getattr(struct metadb *db, const struct perm_cred *cred,
                  const char *path, size_t len, struct ipvfs_attr *out,
                   char *msg, size_t msglen);
/* SETATTR (proto.h): applies req's valid fields, sets ctime, returns the
 * result in *out. */
int metadb_setattr(struct metadb *db, const struct perm_cred *cred,
                  const char *path, size_t len,
                   const struct ipvfs_setattr_req *req, struct ipvfs_attr *out, char *msg,
                   size_t msglen);
/* RENAME (proto.h), flags IPVFS_RENAME_NOREPLACE.  A replaced file is
 * recorded as an orphan and returned in *out (out->replaced 1). */
int metadb_rename(struct metadb *db, const struct perm_cred *cred,
                  const char *src, size_t src_len, const char *dst,
                  size_t dst_len, uint32_t flags, struct ipvfs_rename_rep *out, char *msg,
                  size_t msglen);

#endif
