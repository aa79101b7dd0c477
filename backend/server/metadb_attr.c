/* Attributes and renames of the namespace: GETATTR, SETATTR, RENAME over
 * the records of metadb.c (through metadb_internal.h; nothing there calls
 * back here).  Each mutation is one durable LMDB write transaction, like
 * the rest of metadb. */
#include <errno.h>
#include <string.h>

#include "backend/server/metadb.h"
#include "backend/server/metadb_internal.h"

static void fill_attr(const struct md_rec *rec, struct ipvfs_attr *out)
{
    memset(out, 0, sizeof(*out));
    md_fill_entry(rec, 0, &out->entry);
    out->mode = rec->mode;
    out->uid = rec->uid;
    out->gid = rec->gid;
    out->atime_ns = rec->atime_ns;
    out->mtime_ns = rec->mtime_ns;
    out->ctime_ns = rec->ctime_ns;
}

/* The record of a checked path other than "/", its parent id and where
 * its last component starts.  -ENOENT comes with a message. */
static int find(struct metadb *db, MDB_txn *txn, const struct perm_cred *cred, const char *path,
                size_t len, uint64_t *out_parent, size_t *out_last, struct md_rec *out_dir,
                struct md_rec *out, char *msg, size_t msglen)
{
    int rc;

    if ((rc = md_walk_parents(db, txn, cred, path, len, NULL, out_parent, out_dir, msg,
                              msglen)) < 0)
        return rc;
    md_last_component(path, len, out_last);
    rc = md_get_rec(db, txn, *out_parent, path + *out_last, len - *out_last, out, msg, msglen);
    if (rc == -ENOENT)
        return md_say(msg, msglen, -ENOENT, "no such file or directory: %.*s", (int)len, path);
    return rc;
}

int metadb_getattr(struct metadb *db, const struct perm_cred *cred, const char *path, size_t len,
                   struct ipvfs_attr *out, char *msg, size_t msglen)
{
    struct md_rec rec;
    uint64_t parent;
    MDB_txn *txn;
    size_t last;
    int rc;

    if ((rc = metadb_check_path(path, len, msg, msglen)) < 0)
        return rc;
    md_root_rec(&rec);
    if (len > 1) {
        if ((rc = md_begin(db, 0, &txn, msg, msglen)) < 0)
            return rc;
        rc = find(db, txn, cred, path, len, &parent, &last, NULL, &rec, msg, msglen);
        mdb_txn_abort(txn);
        if (rc < 0)
            return rc;
    }
    fill_attr(&rec, out);
    return 0;
}

static void apply_setattr(const struct ipvfs_setattr_req *req, struct md_rec *rec)
{
    int64_t now = metadb_now_ns();

    if (req->valid & IPVFS_SETATTR_MODE)
        rec->mode = req->mode;
    if (req->valid & IPVFS_SETATTR_UID)
        rec->uid = req->uid;
    if (req->valid & IPVFS_SETATTR_GID)
        rec->gid = req->gid;
    if (req->valid & IPVFS_SETATTR_ATIME)
        rec->atime_ns = req->atime_ns;
    if (req->valid & IPVFS_SETATTR_MTIME)
        rec->mtime_ns = req->mtime_ns;
    if (req->valid & IPVFS_SETATTR_ATIME_NOW)
        rec->atime_ns = now;
    if (req->valid & IPVFS_SETATTR_MTIME_NOW)
        rec->mtime_ns = now;
    rec->ctime_ns = now;
}

/* perm.h's rules for each field req changes; *io_mode gets the mode to
 * store (chmod by a non-member drops S_ISGID). */
static int may_setattr(const struct perm_cred *cred, const struct md_rec *rec,
                       const struct ipvfs_setattr_req *req, uint32_t *io_mode, const char *path,
                       size_t len, char *msg, size_t msglen)
{
    uint32_t v = req->valid;
    struct perm_obj o;
    int rc = 0;

    if (!cred)
        return 0;
    md_obj(rec, &o);
    if (v & IPVFS_SETATTR_MODE)
        rc = perm_chmod(cred, &o, req->mode, io_mode);
    if (rc == 0 && (v & (IPVFS_SETATTR_UID | IPVFS_SETATTR_GID)))
        rc = perm_chown(cred, &o, !!(v & IPVFS_SETATTR_UID), req->uid,
                        !!(v & IPVFS_SETATTR_GID), req->gid);
    if (rc == 0 && (v & (IPVFS_SETATTR_ATIME | IPVFS_SETATTR_MTIME)))
        rc = perm_utimes(cred, &o, 1);
    if (rc == 0 && (v & (IPVFS_SETATTR_ATIME_NOW | IPVFS_SETATTR_MTIME_NOW)))
        rc = perm_utimes(cred, &o, 0);
    return rc < 0 ? md_deny(rc, cred, "change the attributes of", path, len, msg, msglen) : 0;
}

int metadb_setattr(struct metadb *db, const struct perm_cred *cred, const char *path, size_t len,
                   const struct ipvfs_setattr_req *req, struct ipvfs_attr *out, char *msg,
                   size_t msglen)
{
    struct ipvfs_setattr_req eff = *req;
    struct md_rec rec;
    uint64_t parent;
    MDB_txn *txn;
    size_t last;
    int rc;

    if ((rc = metadb_check_path(path, len, msg, msglen)) < 0)
        return rc;
    if (req->valid & ~IPVFS_SETATTR_ALL)
        return md_say(msg, msglen, -EINVAL, "SETATTR fields %#x unknown", req->valid);
    if ((req->valid & IPVFS_SETATTR_MODE) && (req->mode & ~07777u))
        return md_say(msg, msglen, -EINVAL, "mode %#o has bits beyond 07777", req->mode);
    if (len == 1)
        return md_say(msg, msglen, -EPERM, "the attributes of / cannot change");
    if ((rc = md_begin(db, 1, &txn, msg, msglen)) < 0)
        return rc;
    if ((rc = find(db, txn, cred, path, len, &parent, &last, NULL, &rec, msg, msglen)) < 0 ||
        (rc = may_setattr(cred, &rec, req, &eff.mode, path, len, msg, msglen)) < 0)
        goto abort_txn;
    apply_setattr(&eff, &rec);
    if ((rc = md_put_rec(db, txn, parent, path + last, len - last, &rec, msg, msglen)) < 0)
        goto abort_txn;
    if ((rc = md_commit(txn, msg, msglen)) < 0)
        return rc;
    fill_attr(&rec, out);
    return 0;
abort_txn:
    mdb_txn_abort(txn);
    return rc;
}

/* Deletes the name (parent, name). */
static int del_name(struct metadb *db, MDB_txn *txn, uint64_t parent, const char *name,
                    size_t nlen, char *msg, size_t msglen)
{
    struct md_key key;
    MDB_val k;
    int rc;

    md_make_key(&key, parent, name, nlen);
    k = (MDB_val){ key.len, key.bytes };
    rc = mdb_del(txn, db->ns, &k, NULL);
    return rc ? md_fail(rc, "removing a name", msg, msglen) : 0;
}

/* rename(2)'s rules for an existing target dst of a source src: 0 when
 * dst may be replaced, else the refusal. */
static int may_replace(struct metadb *db, MDB_txn *txn, const struct md_rec *src,
                       const struct md_rec *dst, uint32_t flags, const char *path, size_t len,
                       char *msg, size_t msglen)
{
    int rc;

    if (flags & IPVFS_RENAME_NOREPLACE)
        return md_say(msg, msglen, -EEXIST, "%.*s already exists", (int)len, path);
    if (src->type == IPVFS_TYPE_FILE && dst->type == IPVFS_TYPE_DIR)
        return md_say(msg, msglen, -EISDIR, "%.*s is a directory", (int)len, path);
    if (src->type == IPVFS_TYPE_DIR && dst->type != IPVFS_TYPE_DIR)
        return md_say(msg, msglen, -ENOTDIR, "%.*s is not a directory", (int)len, path);
    if (dst->type == IPVFS_TYPE_DIR &&
        (rc = md_has_children(db, txn, dst->handle, msg, msglen)) != 0)
        return rc < 0 ? rc : md_say(msg, msglen, -ENOTEMPTY, "directory %.*s is not empty",
                                    (int)len, path);
    return 0;
}

/* Both paths checked, neither "/", not the same. */
static int rename_txn(struct metadb *db, MDB_txn *txn, const struct perm_cred *cred,
                      const char *src, size_t src_len, const char *dst, size_t dst_len,
                      uint32_t flags, struct ipvfs_rename_rep *out, char *msg, size_t msglen)
{
    struct md_rec srec, drec, sdir, ddir;
    uint64_t sparent, dparent;
    size_t slast, dlast;
    int rc;

    if ((rc = find(db, txn, cred, src, src_len, &sparent, &slast, &sdir, &srec, msg, msglen)) < 0 ||
        (rc = md_may_unlink(cred, &sdir, &srec, src, src_len, msg, msglen)) < 0)
        return rc;
    if ((rc = md_walk_parents(db, txn, cred, dst, dst_len, NULL, &dparent, &ddir, msg,
                              msglen)) < 0)
        return rc;
    md_last_component(dst, dst_len, &dlast);
    if ((rc = md_allow(cred, &ddir, PERM_W, "rename into", dst, dlast, msg, msglen)) < 0)
        return rc;
    /* a directory that changes parent rewrites its ".." (Linux asks write on it) */
    if (srec.type == IPVFS_TYPE_DIR && sparent != dparent &&
        (rc = md_allow(cred, &srec, PERM_W, "move", src, src_len, msg, msglen)) < 0)
        return rc;
    rc = md_get_rec(db, txn, dparent, dst + dlast, dst_len - dlast, &drec, msg, msglen);
    if (rc < 0 && rc != -ENOENT)
        return rc;
    if (rc == 0) {
        if ((rc = may_replace(db, txn, &srec, &drec, flags, dst, dst_len, msg, msglen)) < 0 ||
            (rc = md_may_unlink(cred, &ddir, &drec, dst, dst_len, msg, msglen)) < 0 ||
            (rc = del_name(db, txn, dparent, dst + dlast, dst_len - dlast, msg, msglen)) < 0)
            return rc;
        if (drec.type == IPVFS_TYPE_FILE) {
            md_fill_entry(&drec, 0, &out->entry);
            out->replaced = 1;
            if ((rc = md_put_orphan(db, txn, &out->entry, msg, msglen)) < 0)
                return rc;
        }
    }
    if ((rc = del_name(db, txn, sparent, src + slast, src_len - slast, msg, msglen)) < 0)
        return rc;
    srec.ctime_ns = metadb_now_ns();
    if ((rc = md_put_rec(db, txn, dparent, dst + dlast, dst_len - dlast, &srec, msg, msglen)) < 0)
        return rc;
    /* both directories' entries changed (the same one twice is harmless) */
    if ((rc = md_touch_parent(db, txn, src, src_len, msg, msglen)) < 0)
        return rc;
    return md_touch_parent(db, txn, dst, dst_len, msg, msglen);
}

int metadb_rename(struct metadb *db, const struct perm_cred *cred, const char *src,
                  size_t src_len, const char *dst, size_t dst_len, uint32_t flags,
                  struct ipvfs_rename_rep *out, char *msg, size_t msglen)
{
    struct ipvfs_attr ignored;
    MDB_txn *txn;
    int rc;

    memset(out, 0, sizeof(*out));
    if ((rc = metadb_check_path(src, src_len, msg, msglen)) < 0 ||
        (rc = metadb_check_path(dst, dst_len, msg, msglen)) < 0)
        return rc;
    if (flags & ~IPVFS_RENAME_NOREPLACE)
        return md_say(msg, msglen, -EINVAL, "RENAME flags %#x unknown", flags);
    if (src_len == 1 || dst_len == 1)
        return md_say(msg, msglen, -EBUSY, "/ cannot be renamed or replaced");
    if (src_len == dst_len && memcmp(src, dst, src_len) == 0)
        return metadb_getattr(db, cred, src, src_len, &ignored, msg, msglen);
    /* Paths are canonical (no ".", "..", links): a prefix test suffices. */
    if (dst_len > src_len && memcmp(dst, src, src_len) == 0 && dst[src_len] == '/')
        return md_say(msg, msglen, -EINVAL, "cannot move %.*s under itself", (int)src_len, src);
    if ((rc = md_begin(db, 1, &txn, msg, msglen)) < 0)
        return rc;
    if ((rc = rename_txn(db, txn, cred, src, src_len, dst, dst_len, flags, out, msg,
                         msglen)) < 0) {
        mdb_txn_abort(txn);
        memset(out, 0, sizeof(*out));
        return rc;
    }
    return md_commit(txn, msg, msglen);
}
