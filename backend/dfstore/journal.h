/* Journal of the datafile store: the LMDB environment that keeps block
 * maps and sizes (DIR/dfstore.mdb), and the log of changes not yet
 * committed to it.
 *
 * An entry goes through two states: PENDING (appended by the store once
 * the data it points to is written, kept in memory in order) and
 * COMMITTED (written with the entries before it in one LMDB transaction
 * by df_journal_commit, then dropped from the log by df_journal_drop).
 * When to commit is the commit path's decision (commit.c): it flushes the
 * volume first, so a committed entry never points at data that is not
 * durable.  The journal owns the environment and the log; it knows
 * nothing of datafiles: at open it hands the stored records to the
 * store's loader.  This file is the one place LMDB codes become errno. */
#ifndef IPVFS_DFSTORE_JOURNAL_H
#define IPVFS_DFSTORE_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include <lmdb.h>

enum df_log_kind { LOG_MAP, LOG_UNMAP, LOG_SIZE, LOG_REMOVE };

struct df_log_entry {
    enum df_log_kind kind;
    uint64_t handle, fblock, vblock, size;
};

struct df_journal {
    MDB_env *env;
    MDB_dbi db_files, db_blocks;
    struct df_log_entry *log;        /* pending entries, oldest first */
    size_t log_len, log_cap;
};

/* Called for each stored record at open (all datafiles, then all blocks);
 * a negative return stops the open with that error. */
struct df_journal_loader {
    int (*file)(void *ctx, uint64_t handle, uint64_t size);
    int (*block)(void *ctx, uint64_t handle, uint64_t fblock, uint64_t vblock);
};

/* Creates dir if missing, opens or creates DIR/dfstore.mdb and loads its
 * records through ld; 0 or a negative errno (-EUCLEAN: malformed record). */
int df_journal_open(struct df_journal *j, const char *dir, const struct df_journal_loader *ld,
                    void *ctx);
/* Closes the environment; pending entries are dropped. */
void df_journal_close(struct df_journal *j);

/* Appends a pending entry; 0 or -ENOMEM. */
int df_journal_add(struct df_journal *j, enum df_log_kind kind, uint64_t handle,
                   uint64_t fblock, uint64_t vblock, uint64_t size);
/* Writes the first n pending entries in one transaction; they stay in the
 * log (for the caller to look at) until df_journal_drop(j, n). */
int df_journal_commit(struct df_journal *j, size_t n);
void df_journal_drop(struct df_journal *j, size_t n);

#endif
