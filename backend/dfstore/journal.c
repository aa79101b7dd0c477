/* Journal of the datafile store: LMDB records and the pending-change log
 * (see journal.h).
 *
 * Records: "files" maps a handle (8 bytes, big-endian: LMDB's byte order
 * is then numeric order) to the datafile's size (8 bytes, host order);
 * "blocks" maps handle and file block (16 bytes, big-endian) to the volume
 * block (8 bytes, host order). */
#include "backend/dfstore/journal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/log.h"

#define DF_LMDB_MAPSIZE (4ull << 30)

static int lmdb_errno(int rc, const char *what, uint64_t handle)
{
    int err;

    if (rc == 0)
        return 0;
    if (rc == MDB_MAP_FULL)
        err = -ENOSPC;
    else if (rc == MDB_NOTFOUND)
        err = -ENOENT;
    else if (rc > 0)
        err = -rc;
    else
        err = -EIO;
    log_error("dfstore: %s (datafile %" PRIu64 "): %s", what, handle, mdb_strerror(rc));
    return err;
}

static void be64(uint8_t *out, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        out[i] = (uint8_t)v;
}

static uint64_t from_be64(const uint8_t *in)
{
    uint64_t v = 0;

    for (int i = 0; i < 8; i++)
        v = v << 8 | in[i];
    return v;
}

/* ---- pending-change log ---- */

int df_journal_add(struct df_journal *j, enum df_log_kind kind, uint64_t handle,
                   uint64_t fblock, uint64_t vblock, uint64_t size)
{
    if (j->log_len == j->log_cap) {
        size_t cap = j->log_cap ? 2 * j->log_cap : 256;
        struct df_log_entry *l = realloc(j->log, cap * sizeof(*l));
        if (!l)
            return -ENOMEM;
        j->log = l;
        j->log_cap = cap;
    }
    j->log[j->log_len++] = (struct df_log_entry){ kind, handle, fblock, vblock, size };
    return 0;
}

static int txn_apply(struct df_journal *j, MDB_txn *txn, const struct df_log_entry *e)
{
    uint8_t key[16], sz[8];
    MDB_val k = { 8, key }, v;
    int rc;

    be64(key, e->handle);
    switch (e->kind) {
    case LOG_MAP:
    case LOG_UNMAP:
        be64(key + 8, e->fblock);
        k.mv_size = 16;
        if (e->kind == LOG_UNMAP) {
            rc = mdb_del(txn, j->db_blocks, &k, NULL);
            return rc == MDB_NOTFOUND ? 0 : lmdb_errno(rc, "unmap block", e->handle);
        }
        v = (MDB_val){ sizeof(e->vblock), (void *)&e->vblock };
        return lmdb_errno(mdb_put(txn, j->db_blocks, &k, &v, 0), "map block", e->handle);
    case LOG_SIZE:
        memcpy(sz, &e->size, 8);
        v = (MDB_val){ 8, sz };
        return lmdb_errno(mdb_put(txn, j->db_files, &k, &v, 0), "set size", e->handle);
    default:
        rc = mdb_del(txn, j->db_files, &k, NULL);
        return rc == MDB_NOTFOUND ? 0 : lmdb_errno(rc, "remove", e->handle);
    }
}

int df_journal_commit(struct df_journal *j, size_t n)
{
    MDB_txn *txn;
    int rc;

    if (n == 0)
        return 0;
    if ((rc = lmdb_errno(mdb_txn_begin(j->env, NULL, 0, &txn), "begin commit", 0)) < 0)
        return rc;
    for (size_t i = 0; i < n; i++)
        if ((rc = txn_apply(j, txn, &j->log[i])) < 0)
            goto abort_txn;
    return lmdb_errno(mdb_txn_commit(txn), "commit", 0);

abort_txn:
    mdb_txn_abort(txn);
    return rc;
}

void df_journal_drop(struct df_journal *j, size_t n)
{
    memmove(j->log, j->log + n, (j->log_len - n) * sizeof(*j->log));
    j->log_len -= n;
}

/* ---- open / close ---- */

static int load_files(struct df_journal *j, MDB_txn *txn, const struct df_journal_loader *ld,
                      void *ctx)
{
    MDB_cursor *cur;
    MDB_val k, v;
    int rc;

    if ((rc = lmdb_errno(mdb_cursor_open(txn, j->db_files, &cur), "open cursor", 0)) < 0)
        return rc;
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
         rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        uint64_t size;
        if (k.mv_size != 8 || v.mv_size != 8) {
            log_error("dfstore: malformed datafile record");
            rc = -EUCLEAN;
            goto close_cursor;
        }
        memcpy(&size, v.mv_data, 8);
        if ((rc = ld->file(ctx, from_be64(k.mv_data), size)) < 0)
            goto close_cursor;
    }
    rc = rc == MDB_NOTFOUND ? 0 : lmdb_errno(rc, "scan datafiles", 0);
close_cursor:
    mdb_cursor_close(cur);
    return rc;
}

static int load_blocks(struct df_journal *j, MDB_txn *txn, const struct df_journal_loader *ld,
                       void *ctx)
{
    MDB_cursor *cur;
    MDB_val k, v;
    int rc;

    if ((rc = lmdb_errno(mdb_cursor_open(txn, j->db_blocks, &cur), "open cursor", 0)) < 0)
        return rc;
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
         rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        uint64_t vb;
        if (k.mv_size != 16 || v.mv_size != 8) {
            log_error("dfstore: malformed block record");
            rc = -EUCLEAN;
            goto close_cursor;
        }
        memcpy(&vb, v.mv_data, 8);
        if ((rc = ld->block(ctx, from_be64(k.mv_data), from_be64((uint8_t *)k.mv_data + 8),
                            vb)) < 0)
            goto close_cursor;
    }
    rc = rc == MDB_NOTFOUND ? 0 : lmdb_errno(rc, "scan blocks", 0);
close_cursor:
    mdb_cursor_close(cur);
    return rc;
}

int df_journal_open(struct df_journal *j, const char *dir, const struct df_journal_loader *ld,
                    void *ctx)
{
    char path[4096];
    MDB_txn *txn;
    int rc;

    *j = (struct df_journal){ 0 };
    if (snprintf(path, sizeof(path), "%s/dfstore.mdb", dir) >= (int)sizeof(path))
        return -ENAMETOOLONG;
    if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
        rc = -errno;
        log_error("dfstore: cannot create %s: %s", dir, strerror(errno));
        return rc;
    }
    if ((rc = lmdb_errno(mdb_env_create(&j->env), "create environment", 0)) < 0)
        return rc;
    if ((rc = lmdb_errno(mdb_env_set_maxdbs(j->env, 4), "set maxdbs", 0)) < 0 ||
        (rc = lmdb_errno(mdb_env_set_mapsize(j->env, DF_LMDB_MAPSIZE), "set mapsize", 0)) < 0 ||
        (rc = lmdb_errno(mdb_env_open(j->env, path, MDB_NOSUBDIR, 0600), path, 0)) < 0)
        goto close_env;
    if ((rc = lmdb_errno(mdb_txn_begin(j->env, NULL, 0, &txn), "begin open", 0)) < 0)
        goto close_env;
    if ((rc = lmdb_errno(mdb_dbi_open(txn, "files", MDB_CREATE, &j->db_files), "files", 0)) < 0 ||
        (rc = lmdb_errno(mdb_dbi_open(txn, "blocks", MDB_CREATE, &j->db_blocks), "blocks", 0)) < 0 ||
        (rc = load_files(j, txn, ld, ctx)) < 0 || (rc = load_blocks(j, txn, ld, ctx)) < 0)
        goto abort_txn;
    if ((rc = lmdb_errno(mdb_txn_commit(txn), "commit open", 0)) < 0)
        goto close_env;
    return 0;

abort_txn:
    mdb_txn_abort(txn);
close_env:
    mdb_env_close(j->env);
    j->env = NULL;
    return rc;
}

void df_journal_close(struct df_journal *j)
{
    mdb_env_close(j->env);
    free(j->log);
    *j = (struct df_journal){ 0 };
}
