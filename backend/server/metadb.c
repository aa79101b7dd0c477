#include "backend/server/metadb.h"

#include <errno.h>
#include <lmdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "backend/server/metadb_internal.h"
#include "common/log.h"

#define METADB_MAP_SIZE (1ull << 30) /* sparse; a namespace of millions of names */

int md_say(char *msg, size_t msglen, int err, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, msglen, fmt, ap);
    va_end(ap);
    return err;
}

/* The one place LMDB's error space becomes errno, with context. */
int md_fail(int rc, const char *what, char *msg, size_t msglen)
{
    int err;

    if (rc > 0)
        err = -rc; /* LMDB passes system errors through as positive errno */
    else if (rc == MDB_MAP_FULL || rc == MDB_TXN_FULL)
        err = -ENOSPC;
    else if (rc == MDB_NOTFOUND)
        err = -ENOENT;
    else if (rc == MDB_KEYEXIST)
        err = -EEXIST;
    else
        err = -EIO;
    log_error("metadata store: %s: %s", what, mdb_strerror(rc));
    return md_say(msg, msglen, err, "metadata store: %s: %s", what, mdb_strerror(rc));
}

void md_make_key(struct md_key *k, uint64_t parent, const char *name, size_t nlen)
{
    for (int i = 0; i < 8; i++)
        k->bytes[i] = (uint8_t)(parent >> (56 - 8 * i));
    memcpy(k->bytes + 8, name, nlen);
    k->len = 8 + nlen;
}

int metadb_check_path(const char *path, size_t len, char *msg, size_t msglen)
{
    size_t start, i;

    if (len == 0 || path[0] != '/')
        return md_say(msg, msglen, -EINVAL, "path must be absolute (start with '/')");
    if (len >= IPVFS_MAX_PATH)
        return md_say(msg, msglen, -ENAMETOOLONG, "path longer than %u bytes", IPVFS_MAX_PATH - 1);
    if (memchr(path, '\0', len))
        return md_say(msg, msglen, -EINVAL, "path contains a NUL byte");
    if (len == 1)
        return 0;
    for (start = 1; start <= len; start = i + 1) {
        for (i = start; i < len && path[i] != '/'; i++)
            ;
        if (i == start)
            return md_say(msg, msglen, -EINVAL, "path has an empty component");
        if ((i - start == 1 && path[start] == '.') ||
            (i - start == 2 && path[start] == '.' && path[start + 1] == '.'))
            return md_say(msg, msglen, -EINVAL, "path has a '.' or '..' component");
        if (i - start > METADB_NAME_MAX)
            return md_say(msg, msglen, -ENAMETOOLONG, "a path component is longer than %u bytes",
                       METADB_NAME_MAX);
    }
    return 0;
}

void md_last_component(const char *path, size_t len, size_t *out_start)
{
    size_t i = len;

    while (path[i - 1] != '/')
        i--;
    *out_start = i;
}

static int get_u64(MDB_txn *txn, MDB_dbi dbi, const char *name, uint64_t dflt, uint64_t *out,
                   char *msg, size_t msglen)
{
    MDB_val k = { strlen(name), (void *)name }, v;
    int rc = mdb_get(txn, dbi, &k, &v);

    if (rc == MDB_NOTFOUND) {
        *out = dflt;
        return 0;
    }
    if (rc != 0)
        return md_fail(rc, "reading counters", msg, msglen);
    if (v.mv_size != sizeof(uint64_t))
        return md_say(msg, msglen, -EIO, "metadata store: counter '%s' is corrupt", name);
    memcpy(out, v.mv_data, sizeof(*out));
    return 0;
}

static int put_u64(MDB_txn *txn, MDB_dbi dbi, const char *name, uint64_t value, char *msg,
                   size_t msglen)
{
    MDB_val k = { strlen(name), (void *)name }, v = { sizeof(value), &value };
    int rc = mdb_put(txn, dbi, &k, &v, 0);

    return rc ? md_fail(rc, "writing counters", msg, msglen) : 0;
}

static int alloc_handle(struct metadb *db, MDB_txn *txn, uint64_t *out, char *msg,
                        size_t msglen)
{
    uint64_t next;
    int rc;

    if ((rc = get_u64(txn, db->info, "next_handle", 1, &next, msg, msglen)) < 0)
        return rc;
    *out = next;
    return put_u64(txn, db->info, "next_handle", next + 1, msg, msglen);
}

int64_t metadb_now_ns(void)
{
    struct timespec ts;

    if (clock_gettime(CLOCK_REALTIME, &ts) < 0)
        return 0;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A stored record of either format: format 1 (before owners and times)
 * reads as mode 0644 or 0755, owner 0:0, times 0. */
static int decode_rec(const MDB_val *v, struct md_rec *out)
{
    if (v->mv_size == sizeof(*out)) {
        memcpy(out, v->mv_data, sizeof(*out));
        return 0;
    }
    if (v->mv_size != MD_REC_V1_SIZE)
        return -EIO;
    memset(out, 0, sizeof(*out));
    memcpy(out, v->mv_data, MD_REC_V1_SIZE);
    out->mode = out->type == IPVFS_TYPE_DIR ? 0755 : 0644;
    return 0;
}

int md_get_rec(struct metadb *db, MDB_txn *txn, uint64_t parent, const char *name,
            size_t nlen, struct md_rec *out, char *msg, size_t msglen)
{
    struct md_key key;
    MDB_val k, v;
    int rc;

    md_make_key(&key, parent, name, nlen);
    k = (MDB_val){ key.len, key.bytes };
    rc = mdb_get(txn, db->ns, &k, &v);
    if (rc == MDB_NOTFOUND)
        return -ENOENT;
    if (rc != 0)
        return md_fail(rc, "reading the namespace", msg, msglen);
    if (decode_rec(&v, out) < 0)
        return md_say(msg, msglen, -EIO, "metadata store: a namespace record is corrupt");
    return 0;
}

int md_put_rec(struct metadb *db, MDB_txn *txn, uint64_t parent, const char *name,
                   size_t nlen, const struct md_rec *rec, char *msg, size_t msglen)
{
    struct md_key key;
    MDB_val k, v = { sizeof(*rec), (void *)rec };
    int rc;

    md_make_key(&key, parent, name, nlen);
    k = (MDB_val){ key.len, key.bytes };
    rc = mdb_put(txn, db->ns, &k, &v, 0);
    return rc ? md_fail(rc, "updating the namespace", msg, msglen) : 0;
}

int md_touch_parent(struct metadb *db, MDB_txn *txn, const char *path, size_t len, char *msg,
                    size_t msglen)
{
    struct md_rec rec;
    uint64_t grand;
    size_t last, plen;
    int rc;

    md_last_component(path, len, &last);
    plen = last - 1;   /* the directory's path: up to the slash before the name */
    if (plen == 0)
        return 0;      /* "/" has no record; its times stay */
    if ((rc = md_walk_parents(db, txn, NULL, path, plen, NULL, &grand, NULL, msg, msglen)) < 0)
        return rc;
    md_last_component(path, plen, &last);
    if ((rc = md_get_rec(db, txn, grand, path + last, plen - last, &rec, msg, msglen)) < 0)
        return rc;
    rec.mtime_ns = rec.ctime_ns = metadb_now_ns();
    return md_put_rec(db, txn, grand, path + last, plen - last, &rec, msg, msglen);
}

/* Sets a new record's owner, mode and times (now). */
static void stamp(struct md_rec *rec, const struct metadb_owner *owner, uint32_t mode)
{
    rec->mode = mode & 07777;
    rec->uid = owner->uid;
    rec->gid = owner->gid;
    rec->atime_ns = rec->mtime_ns = rec->ctime_ns = metadb_now_ns();
}

static int new_dir(struct metadb *db, MDB_txn *txn, uint64_t parent, const char *name,
                   size_t nlen, const struct metadb_owner *owner, uint32_t mode,
                   uint64_t *out_id, char *msg, size_t msglen)
{
    struct md_rec rec = { .type = IPVFS_TYPE_DIR };
    int rc;

    stamp(&rec, owner, mode);

    if ((rc = alloc_handle(db, txn, &rec.handle, msg, msglen)) < 0)
        return rc;
    *out_id = rec.handle;
    return md_put_rec(db, txn, parent, name, nlen, &rec, msg, msglen);
}

/* A missing parent made on the way gets the new name's owner, mode 0755
 * and the read bits of mode (a 0644 file's parents stay listable). */
static uint32_t parent_mode(uint32_t mode)
{
    return 0755 | (mode & 0444);
}

int md_walk_parents(struct metadb *db, MDB_txn *txn, const struct perm_cred *cred,
                    const char *path, size_t len, const struct metadb_owner *create,
                    uint64_t *out_parent, struct md_rec *out_dir, char *msg, size_t msglen)
{
    struct md_rec dir, rec;
    uint64_t id = 0;
    size_t start, i, last;
    int rc;

    md_root_rec(&dir);
    md_last_component(path, len, &last);
    for (start = 1; start < last; start = i + 1) {
        for (i = start; path[i] != '/'; i++)
            ;
        if ((rc = md_allow(cred, &dir, PERM_X, "search", path, start, msg, msglen)) < 0)
            return rc;
        rc = md_get_rec(db, txn, id, path + start, i - start, &rec, msg, msglen);
        if (rc == -ENOENT && create &&
            (rc = md_allow(cred, &dir, PERM_W, "make directories in", path, start, msg,
                           msglen)) == 0) {
            rc = new_dir(db, txn, id, path + start, i - start, create,
                         parent_mode(create->mode), &rec.handle, msg, msglen);
            if (rc == 0)
                rc = md_get_rec(db, txn, id, path + start, i - start, &rec, msg, msglen);
        } else if (rc == -ENOENT && !create)
            return md_say(msg, msglen, -ENOENT, "no such directory: %.*s", (int)i, path);
        else if (rc == 0 && rec.type != IPVFS_TYPE_DIR)
            return md_say(msg, msglen, -ENOTDIR, "not a directory: %.*s", (int)i, path);
        if (rc < 0)
            return rc;
        id = rec.handle;
        dir = rec;
    }
    if ((rc = md_allow(cred, &dir, PERM_X, "search", path, last ? last : 1, msg, msglen)) < 0)
        return rc;
    *out_parent = id;
    if (out_dir)
        *out_dir = dir;
    return 0;
}

void md_fill_entry(const struct md_rec *rec, int created, struct ipvfs_entry *out)
{
    memset(out, 0, sizeof(*out));
    out->handle = rec->handle;
    out->stripe_unit = rec->stripe_unit;
    out->stripe_factor = rec->stripe_factor;
    out->first_server = rec->first_server;
    out->type = rec->type;
    out->created = (uint32_t)created;
}

int md_commit(MDB_txn *txn, char *msg, size_t msglen)
{
    int rc = mdb_txn_commit(txn);

    return rc ? md_fail(rc, "committing", msg, msglen) : 0;
}

int md_begin(struct metadb *db, int write, MDB_txn **out, char *msg, size_t msglen)
{
    int rc = mdb_txn_begin(db->env, NULL, write ? 0 : MDB_RDONLY, out);

    return rc ? md_fail(rc, "starting a transaction", msg, msglen) : 0;
}

static int check_layout(const struct metadb *db, uint32_t factor, uint64_t unit, char *msg,
                        size_t msglen)
{
    if (factor > db->nio)
        return md_say(msg, msglen, -EINVAL, "stripe factor %u exceeds the %u I/O nodes", factor,
                   db->nio);
    if (unit > (1ull << 30))
        return md_say(msg, msglen, -EINVAL, "stripe unit %llu exceeds 1 GiB",
                   (unsigned long long)unit);
    return 0;
}

static int create_file(struct metadb *db, MDB_txn *txn, uint64_t parent, const char *name,
                       size_t nlen, uint32_t factor, uint64_t unit,
                       const struct metadb_owner *owner, struct md_rec *out, char *msg,
                       size_t msglen)
{
    int rc;

    memset(out, 0, sizeof(*out));
    out->type = IPVFS_TYPE_FILE;
    stamp(out, owner, owner->mode);
    out->stripe_factor = factor ? factor : db->nio;
    out->stripe_unit = unit ? unit : db->default_unit;
    if ((rc = alloc_handle(db, txn, &out->handle, msg, msglen)) < 0)
        return rc;
    /* Handles grow by one per file, so this spreads first datafiles evenly. */
    out->first_server = (uint32_t)(out->handle % db->nio);
    return md_put_rec(db, txn, parent, name, nlen, out, msg, msglen);
}

/* The rights a LOOKUP asks for, as perm.h bits. */
static unsigned lookup_want(uint32_t flags)
{
    return (flags & IPVFS_LOOKUP_READ ? PERM_R : 0) | (flags & IPVFS_LOOKUP_WRITE ? PERM_W : 0);
}

int metadb_lookup(struct metadb *db, const struct perm_cred *cred, const char *path, size_t len,
                  uint32_t flags, uint32_t factor, uint64_t unit, const struct metadb_owner *owner,
                  struct ipvfs_entry *out, char *msg, size_t msglen)
{
    int create = !!(flags & IPVFS_LOOKUP_CREATE), rc;
    struct md_rec rec, dir;
    MDB_txn *txn;
    uint64_t parent;
    size_t last;

    if ((rc = metadb_check_path(path, len, msg, msglen)) < 0 ||
        (rc = check_layout(db, factor, unit, msg, msglen)) < 0)
        return rc;
    if (len == 1) {
        md_root_rec(&rec);
        md_fill_entry(&rec, 0, out);
        if (create)
            return md_say(msg, msglen, -EISDIR, "/ is a directory");
        return md_allow(cred, &rec, lookup_want(flags), "open", path, len, msg, msglen);
    }
    if ((rc = md_begin(db, create, &txn, msg, msglen)) < 0)
        return rc;
    if ((rc = md_walk_parents(db, txn, cred, path, len, create ? owner : NULL, &parent, &dir, msg,
                              msglen)) < 0)
        goto abort_txn;
    md_last_component(path, len, &last);
    rc = md_get_rec(db, txn, parent, path + last, len - last, &rec, msg, msglen);
    if (rc == 0 && create && (flags & IPVFS_LOOKUP_EXCL))
        rc = md_say(msg, msglen, -EEXIST, "%.*s already exists", (int)len, path);
    else if (rc == 0 && create && rec.type == IPVFS_TYPE_DIR)
        rc = md_say(msg, msglen, -EISDIR, "%.*s is a directory", (int)len, path);
    else if (rc == -ENOENT && !create)
        rc = md_say(msg, msglen, -ENOENT, "no such file: %.*s", (int)len, path);
    else if (rc == -ENOENT) {
        /* the creator gets the rights it asked for, whatever the mode */
        if ((rc = md_allow(cred, &dir, PERM_W, "create files in", path, last, msg, msglen)) < 0 ||
            (rc = create_file(db, txn, parent, path + last, len - last, factor, unit, owner,
                              &rec, msg, msglen)) < 0 ||
            (rc = md_touch_parent(db, txn, path, len, msg, msglen)) < 0)
            goto abort_txn;
        if ((rc = md_commit(txn, msg, msglen)) < 0)
            return rc;
        md_fill_entry(&rec, 1, out);
        return 0;
    } else if (rc == 0)
        rc = md_allow(cred, &rec, lookup_want(flags), "open", path, len, msg, msglen);
    if (rc == 0)
        md_fill_entry(&rec, 0, out);
abort_txn:
    mdb_txn_abort(txn);
    return rc;
}

int metadb_mkdir(struct metadb *db, const struct perm_cred *cred, const char *path, size_t len,
                 const struct metadb_owner *owner, char *msg, size_t msglen)
{
    struct md_rec rec, dir;
    MDB_txn *txn;
    uint64_t parent, id;
    size_t last;
    int rc;

    if ((rc = metadb_check_path(path, len, msg, msglen)) < 0)
        return rc;
    if (len == 1)
        return md_say(msg, msglen, -EEXIST, "/ already exists");
    if ((rc = md_begin(db, 1, &txn, msg, msglen)) < 0)
        return rc;
    if ((rc = md_walk_parents(db, txn, cred, path, len, owner, &parent, &dir, msg, msglen)) < 0)
        goto abort_txn;
    md_last_component(path, len, &last);
    rc = md_get_rec(db, txn, parent, path + last, len - last, &rec, msg, msglen);
    if (rc == 0)
        rc = md_say(msg, msglen, -EEXIST, "%.*s already exists", (int)len, path);
    if (rc != -ENOENT)
        goto abort_txn;
    if ((rc = md_allow(cred, &dir, PERM_W, "make directories in", path, last, msg, msglen)) < 0 ||
        (rc = new_dir(db, txn, parent, path + last, len - last, owner, owner->mode, &id, msg,
                      msglen)) < 0 ||
        (rc = md_touch_parent(db, txn, path, len, msg, msglen)) < 0)
        goto abort_txn;
    return md_commit(txn, msg, msglen);
abort_txn:
    mdb_txn_abort(txn);
    return rc;
}

int md_has_children(struct metadb *db, MDB_txn *txn, uint64_t id, char *msg, size_t msglen)
{
    struct md_key key;
    MDB_cursor *cur;
    MDB_val k, v;
    int rc;

    if ((rc = mdb_cursor_open(txn, db->ns, &cur)) != 0)
        return md_fail(rc, "opening a cursor", msg, msglen);
    md_make_key(&key, id, "", 0);
    k = (MDB_val){ key.len, key.bytes };
    rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
    if (rc == MDB_NOTFOUND)
        rc = 0;
    else if (rc != 0)
        rc = md_fail(rc, "scanning a directory", msg, msglen);
    else
        rc = k.mv_size >= 8 && memcmp(k.mv_data, key.bytes, 8) == 0;
    mdb_cursor_close(cur);
    return rc;
}

static void orphan_key(uint64_t handle, uint8_t out[8])
{
    for (int i = 0; i < 8; i++)
        out[i] = (uint8_t)(handle >> (56 - 8 * i));
}

int md_put_orphan(struct metadb *db, MDB_txn *txn, const struct ipvfs_entry *e, char *msg,
                      size_t msglen)
{
    uint8_t kb[8];
    MDB_val k = { sizeof(kb), kb }, v = { sizeof(*e), (void *)e };
    int rc;

    orphan_key(e->handle, kb);
    rc = mdb_put(txn, db->orphans, &k, &v, 0);
    return rc ? md_fail(rc, "recording an orphan", msg, msglen) : 0;
}

int metadb_orphans(struct metadb *db, uint64_t done, uint32_t max, struct ipvfs_entry *out,
                   uint32_t *out_n, char *msg, size_t msglen)
{
    uint8_t kb[8];
    MDB_val k = { sizeof(kb), kb }, v;
    MDB_cursor *cur;
    MDB_txn *txn;
    int rc, mrc;

    *out_n = 0;
    if ((rc = md_begin(db, done != 0, &txn, msg, msglen)) < 0)
        return rc;
    if (done) {
        orphan_key(done, kb);
        mrc = mdb_del(txn, db->orphans, &k, NULL);
        if (mrc != 0 && mrc != MDB_NOTFOUND) {   /* not found: another client was first */
            rc = md_fail(mrc, "forgetting an orphan", msg, msglen);
            goto abort_txn;
        }
    }
    if ((mrc = mdb_cursor_open(txn, db->orphans, &cur)) != 0) {
        rc = md_fail(mrc, "listing orphans", msg, msglen);
        goto abort_txn;
    }
    for (mrc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); mrc == 0 && *out_n < max;
         mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT))
        if (v.mv_size == sizeof(*out))
            memcpy(&out[(*out_n)++], v.mv_data, sizeof(*out));
    mdb_cursor_close(cur);
    if (done)
        return md_commit(txn, msg, msglen);
    mdb_txn_abort(txn);
    return 0;
abort_txn:
    mdb_txn_abort(txn);
    return rc;
}

int metadb_remove(struct metadb *db, const struct perm_cred *cred, const char *path, size_t len,
                  int allow_dir, struct ipvfs_entry *out, char *msg, size_t msglen)
{
    struct md_rec rec, dir;
    struct md_key key;
    MDB_txn *txn;
    uint64_t parent;
    size_t last;
    MDB_val k;
    int rc;

    if ((rc = metadb_check_path(path, len, msg, msglen)) < 0)
        return rc;
    if (len == 1)
        return md_say(msg, msglen, -EBUSY, "/ cannot be removed");
    if ((rc = md_begin(db, 1, &txn, msg, msglen)) < 0)
        return rc;
    if ((rc = md_walk_parents(db, txn, cred, path, len, NULL, &parent, &dir, msg, msglen)) < 0)
        goto abort_txn;
    md_last_component(path, len, &last);
    rc = md_get_rec(db, txn, parent, path + last, len - last, &rec, msg, msglen);
    if (rc == -ENOENT)
        rc = md_say(msg, msglen, -ENOENT, "no such file or directory: %.*s", (int)len, path);
    if (rc == 0)
        rc = md_may_unlink(cred, &dir, &rec, path, len, msg, msglen);
    if (rc == 0 && rec.type == IPVFS_TYPE_DIR && !allow_dir)
        rc = md_say(msg, msglen, -EISDIR, "%.*s is a directory", (int)len, path);
    if (rc == 0 && rec.type == IPVFS_TYPE_DIR &&
        (rc = md_has_children(db, txn, rec.handle, msg, msglen)) == 1)
        rc = md_say(msg, msglen, -ENOTEMPTY, "directory %.*s is not empty", (int)len, path);
    if (rc < 0)
        goto abort_txn;
    md_make_key(&key, parent, path + last, len - last);
    k = (MDB_val){ key.len, key.bytes };
    if ((rc = mdb_del(txn, db->ns, &k, NULL)) != 0) {
        rc = md_fail(rc, "removing a name", msg, msglen);
        goto abort_txn;
    }
    md_fill_entry(&rec, 0, out);
    if ((rec.type == IPVFS_TYPE_FILE && (rc = md_put_orphan(db, txn, out, msg, msglen)) < 0) ||
        (rc = md_touch_parent(db, txn, path, len, msg, msglen)) < 0)
        goto abort_txn;
    if ((rc = md_commit(txn, msg, msglen)) < 0)
        return rc;
    return 0;
abort_txn:
    mdb_txn_abort(txn);
    return rc;
}

/* Growable reply body for READDIR. */
struct dirbuf {
    uint8_t *data;
    size_t len, cap;
};

static int dirbuf_add(struct dirbuf *b, const void *p, size_t n, uint64_t max)
{
    uint8_t *grown;
    size_t cap;

    if (b->len + n > max)
        return -E2BIG;
    if (b->len + n > b->cap) {
        cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n)
            cap *= 2;
        if (!(grown = realloc(b->data, cap)))
            return -ENOMEM;
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

static int list_dir(struct metadb *db, MDB_txn *txn, uint64_t id, uint64_t max,
                    struct dirbuf *b, char *msg, size_t msglen)
{
    uint32_t count = 0, head[2];
    struct md_rec rec;
    struct md_key key;
    MDB_cursor *cur;
    MDB_val k, v;
    int rc;

    if ((rc = dirbuf_add(b, &count, sizeof(count), max)) < 0)
        return md_say(msg, msglen, rc, "directory listing failed");
    if ((rc = mdb_cursor_open(txn, db->ns, &cur)) != 0)
        return md_fail(rc, "opening a cursor", msg, msglen);
    md_make_key(&key, id, "", 0);
    k = (MDB_val){ key.len, key.bytes };
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); rc == 0;
         rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        if (k.mv_size < 8 || memcmp(k.mv_data, key.bytes, 8) != 0)
            break;
        if (decode_rec(&v, &rec) < 0) {
            mdb_cursor_close(cur);
            return md_say(msg, msglen, -EIO, "metadata store: a namespace record is corrupt");
        }
        head[0] = rec.type;
        head[1] = (uint32_t)(k.mv_size - 8);
        if (dirbuf_add(b, head, sizeof(head), max) < 0 ||
            dirbuf_add(b, (uint8_t *)k.mv_data + 8, head[1], max) < 0) {
            mdb_cursor_close(cur);
            return md_say(msg, msglen, -E2BIG, "directory too large to list in one reply");
        }
        count++;
    }
    mdb_cursor_close(cur);
    if (rc != 0 && rc != MDB_NOTFOUND)
        return md_fail(rc, "scanning a directory", msg, msglen);
    memcpy(b->data, &count, sizeof(count));
    return 0;
}

int metadb_readdir(struct metadb *db, const struct perm_cred *cred, const char *path, size_t len,
                   uint64_t max_body, void **out_body, size_t *out_len, char *msg,
                   size_t msglen)
{
    struct dirbuf b = { NULL, 0, 0 };
    struct md_rec rec;
    MDB_txn *txn;
    uint64_t parent;
    size_t last;
    int rc;

    if ((rc = metadb_check_path(path, len, msg, msglen)) < 0)
        return rc;
    if ((rc = md_begin(db, 0, &txn, msg, msglen)) < 0)
        return rc;
    md_root_rec(&rec);
    if (len > 1) {
        if ((rc = md_walk_parents(db, txn, cred, path, len, NULL, &parent, NULL, msg, msglen)) < 0)
            goto abort_txn;
        md_last_component(path, len, &last);
        rc = md_get_rec(db, txn, parent, path + last, len - last, &rec, msg, msglen);
        if (rc == -ENOENT)
            rc = md_say(msg, msglen, -ENOENT, "no such directory: %.*s", (int)len, path);
        else if (rc == 0 && rec.type != IPVFS_TYPE_DIR)
            rc = md_say(msg, msglen, -ENOTDIR, "not a directory: %.*s", (int)len, path);
        if (rc < 0)
            goto abort_txn;
    }
    if ((rc = md_allow(cred, &rec, PERM_R, "list", path, len, msg, msglen)) < 0)
        goto abort_txn;
    if ((rc = list_dir(db, txn, rec.handle, max_body, &b, msg, msglen)) < 0) {
        free(b.data);
        goto abort_txn;
    }
    *out_body = b.data;
    *out_len = b.len;
abort_txn:
    mdb_txn_abort(txn);
    return rc;
}

/* The record format: 1 before owners and times (still read), 2 now.  A
 * namespace written by a newer format is refused rather than misread. */
static int check_format(struct metadb *db, MDB_txn *txn, char *msg, size_t msglen)
{
    uint64_t format;
    int rc;

    if ((rc = get_u64(txn, db->info, "format", 1, &format, msg, msglen)) < 0)
        return rc;
    if (format > METADB_FORMAT)
        return md_say(msg, msglen, -EPROTONOSUPPORT,
                   "the namespace has format %llu, newer than this server's %u: "
                   "start it with a newer iPVFS", (unsigned long long)format, METADB_FORMAT);
    return put_u64(txn, db->info, "format", METADB_FORMAT, msg, msglen);
}

static int open_dbs(struct metadb *db, char *msg, size_t msglen)
{
    uint64_t nio;
    MDB_txn *txn;
    int rc;

    if ((rc = md_begin(db, 1, &txn, msg, msglen)) < 0)
        return rc;
    if ((rc = mdb_dbi_open(txn, "ns", MDB_CREATE, &db->ns)) != 0 ||
        (rc = mdb_dbi_open(txn, "info", MDB_CREATE, &db->info)) != 0 ||
        (rc = mdb_dbi_open(txn, "orphans", MDB_CREATE, &db->orphans)) != 0) {
        rc = md_fail(rc, "opening its databases", msg, msglen);
        goto abort_txn;
    }
    if ((rc = get_u64(txn, db->info, "nio", db->nio, &nio, msg, msglen)) < 0)
        goto abort_txn;
    if (nio != db->nio) {
        rc = md_say(msg, msglen, -EINVAL,
                 "the namespace was made for %llu I/O nodes, not %u: start with --io-nodes %llu",
                 (unsigned long long)nio, db->nio, (unsigned long long)nio);
        goto abort_txn;
    }
    if ((rc = put_u64(txn, db->info, "nio", nio, msg, msglen)) < 0 ||
        (rc = check_format(db, txn, msg, msglen)) < 0)
        goto abort_txn;
    return md_commit(txn, msg, msglen);
abort_txn:
    mdb_txn_abort(txn);
    return rc;
}

int metadb_open(const char *dir, uint32_t nio, uint64_t default_unit, struct metadb **out,
                char *msg, size_t msglen)
{
    struct metadb *db;
    int rc;

    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return md_say(msg, msglen, -errno, "cannot create %s: %s", dir, strerror(errno));
    if (!(db = calloc(1, sizeof(*db))))
        return md_say(msg, msglen, -ENOMEM, "out of memory");
    db->nio = nio;
    db->default_unit = default_unit;
    if ((rc = mdb_env_create(&db->env)) != 0) {
        rc = md_fail(rc, "creating the environment", msg, msglen);
        goto free_db;
    }
    if ((rc = mdb_env_set_mapsize(db->env, METADB_MAP_SIZE)) != 0 ||
        (rc = mdb_env_set_maxdbs(db->env, 3)) != 0 ||
        (rc = mdb_env_open(db->env, dir, 0, 0600)) != 0) {
        rc = md_fail(rc, dir, msg, msglen);
        goto close_env;
    }
    if ((rc = open_dbs(db, msg, msglen)) < 0)
        goto close_env;
    *out = db;
    return 0;
close_env:
    mdb_env_close(db->env);
free_db:
    free(db);
    return rc;
}

void metadb_close(struct metadb *db)
{
    if (!db)
        return;
    mdb_env_close(db->env);
    free(db);
}
