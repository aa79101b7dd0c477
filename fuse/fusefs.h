/* ipvfs-fuse: iPVFS as a FUSE file system (libfuse3, high-level API), over
 * the same client library as the ROMIO driver (adio/client).
 *
 * Files of this folder, called one way only:
 *   main.c  options, mount, signals (libfuse's): the program
 *   ops.c   the operations table (struct fuse_operations)
 *   pool.c  the client pool
 *
 * Threading contract.  libfuse runs operations on several threads at once
 * (its multithreaded loop), and a client of the library is not
 * thread-safe.  The pool holds FUSEFS_CLIENTS unshared clients
 * (ipvfs_client_new); an operation takes one (waiting on a condition
 * variable while all are busy), uses it alone, and gives it back.  An open
 * file is its metadata entry (struct fusefs_handle), not a client's file:
 * each read or write attaches the entry to the client it holds
 * (ipvfs_file_attach, no server contact).  So up to FUSEFS_CLIENTS
 * requests run in parallel, each with its own connections, and each one
 * spreads over the I/O nodes as the library does.
 *
 * Consistency (close-to-open, as NFS): every open drops the kernel's
 * cached pages of the file (keep_cache off), since an MPI program
 * elsewhere may have changed it without changing mtime or size; inside an
 * open the page cache serves re-reads.  Attributes and names are not
 * cached by default (attr_timeout, entry_timeout and negative_timeout
 * 0; -o to change), yet a read sends no GETATTR first (auto_inval_data
 * off: open already dropped the pages).  Writes go to the servers when
 * the kernel sends them (before close returns: flush); -o direct_io
 * bypasses the page cache. */
#ifndef IPVFS_FUSE_FUSEFS_H
#define IPVFS_FUSE_FUSEFS_H

#define FUSE_USE_VERSION 312

#include <fuse.h>
#include <pthread.h>
#include <stdint.h>

#include "adio/client/ipvfs_client.h"

#define FUSEFS_CLIENTS   8
#define FUSEFS_MAX_IO    (1u << 20)   /* max_read, max_write */
#define FUSEFS_READAHEAD_KB 8192u     /* root mounts: see main.c */
#define FUSEFS_MAX_BACKGROUND 32u     /* async requests (readahead) in flight */
#define FUSEFS_CLIENT_ID 0xfffff000u  /* + pool slot: HELLO's client id */

struct fusefs_pool {
    pthread_mutex_t lock;
    pthread_cond_t freed;
    struct ipvfs_client *clients[FUSEFS_CLIENTS];
    int busy[FUSEFS_CLIENTS];
};

/* The mount's state, libfuse's private_data. */
struct fusefs {
    const char *map_path;
    struct fusefs_pool pool;
};

/* An open file (fi->fh). */
struct fusefs_handle {
    struct ipvfs_entry entry;
    struct ipvfs_cap cap;     /* granted at open (the mount holds the key: unused
                               * then, but kept so a keyless mount works) */
    int written;          /* a write since the last flush: mtime is due */
    char path[];
};

/* pool.c */
int fusefs_pool_init(struct fusefs_pool *pool, const char *map_path, struct ipvfs_error *out_err);
void fusefs_pool_destroy(struct fusefs_pool *pool);
/* Takes a free client (waits for one); give it back with fusefs_pool_put. */
struct ipvfs_client *fusefs_pool_get(struct fusefs_pool *pool);
void fusefs_pool_put(struct fusefs_pool *pool, struct ipvfs_client *client);

/* ops.c */
extern const struct fuse_operations fusefs_ops;

#endif
