/* libipvfs-client: the client side of the iPVFS wire protocol, used by the
 * ROMIO driver ad_ipvfs (and by anything else that wants to read and write
 * iPVFS files without MPI-IO).
 *
 * Contract
 * - A client (struct ipvfs_client) stands for one cluster, found through its
 *   server map.  ipvfs_client_get() shares one client per map path inside a
 *   process (reference counted); ipvfs_client_put() drops a reference.
 * - Connections to server ranks are opened lazily, on the first request that
 *   needs them, and start with HELLO carrying the map's secret.  Before
 *   connecting the client re-reads the map when the file changed, so a
 *   restarted cluster (new ports, same --data) is found again.
 * - A server rank whose serving process died is restarted by its
 *   supervisor on the same port: a connection that breaks (reset, closed;
 *   or a cached one found closed) is reconnected with backoff, and the
 *   requests that were in flight on it are sent again where that is safe,
 *   all within IPVFS_CLIENT_RECONNECT_MS (30 s; IPVFS_RECONNECT_MS) from
 *   the break; the rules per operation are in adio/client/retry.h.  A
 *   refused connect (nobody holds the port: the rank is gone) and a request
 *   timeout (a hung server) are never retried.  A reconnect blocks the
 *   calling thread for its connect and HELLO.
 * - Writes are acknowledged before they are durable; a server restart may
 *   lose them, which the write verifier reveals at the next sync: see
 *   ipvfs_sync().
 * - Time limits: connecting gives up after 8 s without an answer (a host
 *   whose link is down for a moment is tried again meanwhile), a request
 *   after 8 s without progress (IPVFS_CLIENT_CONNECT_MS, IPVFS_CLIENT_REQUEST_MS); the
 *   environment variable IPVFS_TIMEOUT_MS (positive integer,
 *   milliseconds) replaces both.  A dead or stuck server therefore gives an
 *   error within those limits, never a hang.
 * - Every call is synchronous except the ipvfs_aio_* family (see there):
 *   when it returns, the servers have answered every request it sent (or
 *   the connection to them is closed).  The synchronous data calls are
 *   ipvfs_aio_start() followed by ipvfs_aio_finish().  Data moves straight
 *   from and into the caller's buffers (no staging copy).  Requests to
 *   different I/O nodes are in flight at once.
 * - Asynchronous accesses (ipvfs_aio_start) of one client move side by
 *   side: their requests share the connections, each server's window
 *   and the time limits, and are sent and answered in any order relative
 *   to each other.  Every other call is served in the order it was made:
 *   it starts when the accesses started before it are done (driving them
 *   meanwhile), and accesses started after it wait for it.
 * - Every function returns 0 or a negative errno value.  On failure it fills
 *   *out_err (when not NULL) with the positive errno and a message naming the
 *   operation, the file and, where one was involved, the server rank.
 * - A client and its files are not thread-safe; ROMIO serializes MPI-IO
 *   calls (its global critical section), and other users must too.  A
 *   multithreaded program gives each thread its own client at a time
 *   (ipvfs_client_new(); ipvfs_file_attach() rebinds an entry to it):
 *   different clients share nothing and run in parallel.
 */
#ifndef IPVFS_CLIENT_H
#define IPVFS_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "common/layout.h"
#include "common/map.h"
#include "common/proto.h"
#include "common/wire.h"

/* Default limits (IPVFS_TIMEOUT_MS overrides both): a connect, and a request
 * whose server sends nothing for this long.  A hung server rank is then
 * reported within 8 s (the connect of a hung process still succeeds: its
 * kernel accepts; the HELLO is what times out), and so is a host that is
 * gone (its connect gets no answer); a link down for a few seconds is
 * waited out (the kernel's SYN retransmissions, common/net.h).  A healthy I/O node answers
 * well within them; one waiting on a hung iRAID member takes the volume's
 * member timeout first (IONODE_ISCSI_TIMEOUT_MS, shorter than these). */
#define IPVFS_CLIENT_CONNECT_MS 8000
#define IPVFS_CLIENT_REQUEST_MS 8000

struct ipvfs_client;

struct ipvfs_error {
    int code;          /* positive errno, 0 when no error */
    char msg[512];     /* for people: what failed, where, why */
};

/* Order in which a client sends the pieces of one access to the I/O nodes
 * (the Clusterfile heuristics).  The data each I/O node gets is cut into
 * requests of at most the schedule block b (and, for a READ of many short pieces,
 * IPVFS_LIST_READ_BYTES);
 * then
 *   FIRST   sends them in the order the access names its bytes (file
 *           offset order for MPI file views);
 *   RANDOM  picks, for each next request, a random I/O node among those
 *           with requests left, and sends that node's next one;
 *   HASH    at step j sends to I/O node (client_id + j) mod nio, skipping
 *           nodes that have nothing left.
 * A client sends one request at a time: the next request starts when the
 * previous one lies whole in the socket buffer (its reply may still be
 * outstanding, so I/O nodes work in parallel).  READ requests go out in
 * the same order and name the heuristic; a server runs a connection's
 * requests of different bytes at once and answers each when it is done
 * (tagged replies, at most its window in flight), and among READs of
 * different clients waiting at an I/O node it picks the next by the same
 * heuristic, server side (enum ipvfs_read_order in common/proto.h). */
enum ipvfs_schedule {
    IPVFS_SCHED_HASH = 0,
    IPVFS_SCHED_FIRST = 1,
    IPVFS_SCHED_RANDOM = 2,
};

/* The piece size of a large contiguous access (hint ipvfs_schedule_block).
 * 256 KiB since replies are tagged and a connection carries several
 * requests: pieces then flow through the I/O node concurrently (cut-
 * through), and larger ones cost less CPU.  benchmarks/transport-pieces.sh
 * on a quiet machine, sequential 1 MiB calls, 64K -> 256K -> 1M: RAID-0
 * reads 1139 -> 1437 -> 1601 MiB/s, RAID-5 reads 1021 -> 1564 -> 1780,
 * RAID-5 writes 240 -> 278 -> 228 (1 MiB leaves one piece per I/O node
 * and call: nothing to overlap), RAID-0 writes 369 -> 376 -> 414.  On a
 * busy machine (load 4-14, medians of 6 rounds, results/transport-pieces-
 * busy.csv) 256K against 64K: reads 1.35x (RAID-0) and 1.21x (RAID-5) at
 * 0.3 s/GiB less CPU, writes equal within the noise; 1M no better than
 * 256K but for RAID-5 reads (1.15x).  One size for reads and writes: a
 * larger one for reads only would gain them about a tenth. */
#define IPVFS_DEFAULT_SCHED_BLOCK (256u << 10)

/* The most data one READ of a noncontiguous access carries (its many
 * short pairs travel together: list I/O).  An I/O node replies to a READ
 * once all of its pairs are read, so a request is the unit that overlaps
 * the store's work with the wire: with one 8 MiB request per server and
 * rank, the last replies crossed the wire after the store was done, and
 * 2 x 2 tiles of 32 KiB rows read at 0.7x the speed of 1 MiB rows
 * (issue 27).  2 MiB keeps several requests per server in flight while
 * their pieces still arrive together to be coalesced into few volume
 * reads (l1coalesce.c).  WRITEs stay at the protocol's 8 MiB: the store
 * gathers the rows of writes that wait together (backend/dfstore/plan.c);
 * 2 MiB ones rewrote 32 KiB rows 1.12-1.17x as fast but 1 MiB rows at
 * 0.88-1.03x and 4 x 1 tiles' first writes at 0.90x
 * (benchmarks/results/small-io-s17-w2*). */
#define IPVFS_LIST_READ_BYTES (2u << 20)

/* Per-file data path options; ipvfs_file_attach() sets the defaults. */
struct ipvfs_io_opts {
    enum ipvfs_schedule schedule;  /* default HASH */
    uint64_t block;                /* schedule block b in bytes, > 0; default 256 KiB */
    /* READs name this read-ahead window to the I/O nodes (0: none for
     * this file; up to IPVFS_MAX_READAHEAD, sent in 64 KiB units rounded
     * up); readahead_set 0: each I/O node's --readahead applies. */
    int readahead_set;
    uint64_t readahead;
};

/* An open iPVFS file.  The fields are read-only for users (opts: set it
 * through ipvfs_file_set_opts()). */
struct file_verf;
struct ipvfs_file {
    struct ipvfs_client *client;
    struct ipvfs_entry entry;     /* as the metadata rank returned it */
    struct stripe_layout layout;  /* derived from entry and the map */
    struct ipvfs_io_opts opts;
    struct file_verf *verf;       /* per datafile: write verifiers since the
                                   * last sync (client-internal) */
    uint64_t meta_verifier;       /* the metadata rank's verifier when the file
                                   * was opened (ipvfs_file_open sets it; an
                                   * attached file takes its opener's): its
                                   * shared pointers and locks fail with
                                   * ESTALE after a restart of that rank */
    struct ipvfs_cap cap;         /* what the metadata rank granted at open
                                   * (zero: none, with the key) */
    int64_t cap_ms;               /* when it came (CLOCK_REALTIME ms): it is
                                   * renewed once 3/4 of its life are gone */
    char path[];                  /* absolute path inside iPVFS */
};

/* One contiguous range of a file, in logical file offsets. */
struct ipvfs_extent {
    uint64_t offset;
    uint64_t len;
};

/* The map path to use: hint_map when not NULL or empty, else $IPVFS_MAP.
 * NULL when neither names one. */
const char *ipvfs_client_map_path(const char *hint_map);

/* Finds or creates the client for map_path (the map is read and checked
 * now; no server is contacted yet).  client_id goes into HELLO (for
 * per-client counters; the MPI rank).  ipvfs_client_put() releases it. */
int ipvfs_client_get(const char *map_path, uint32_t client_id,
                     struct ipvfs_client **out_client, struct ipvfs_error *out_err);
void ipvfs_client_put(struct ipvfs_client *client);

/* An unshared client (private.c): like ipvfs_client_get() but never found
 * by another get, so that threads can each drive their own (a client is
 * not thread-safe; see the contract above).  ipvfs_client_put() frees it. */
int ipvfs_client_new(const char *map_path, uint32_t client_id,
                     struct ipvfs_client **out_client, struct ipvfs_error *out_err);

/* The application class the client's requests count for at the I/O
 * nodes' QoS schedulers (doc/qos.md): IPVFS_QOS_CLASS, else the job's
 * (Slurm's job id, else the mpiexec, else the process), until set here
 * (the hint ipvfs_qos_class; EINVAL for a bad name).  Connections open
 * now name it at once unless an asynchronous access holds them. */
int ipvfs_client_set_qos_class(struct ipvfs_client *client, const char *name,
                               struct ipvfs_error *out_err);
/* The same with an SLO (the hints ipvfs_qos_rate, MB/s, and
 * ipvfs_qos_latency, ms at the 95th percentile; both or neither NULL):
 * sent with the name, it becomes the class's SLO at each I/O node where
 * the class has none (doc/qos.md).  name NULL keeps the class.  EINVAL,
 * naming the hint, for a malformed value or an I/O node's refusal. */
int ipvfs_client_set_qos(struct ipvfs_client *client, const char *name, const char *rate,
                         const char *latency, struct ipvfs_error *out_err);
const char *ipvfs_client_qos_class(const struct ipvfs_client *client);

/* Number of I/O nodes of the cluster (from the map). */
uint32_t ipvfs_client_nio(const struct ipvfs_client *client);

/* The server map the client read (valid until the client is put; a later
 * call may replace it when the map file changed). */
const struct ipvfs_map *ipvfs_client_map(const struct ipvfs_client *client);

/* Arguments of ipvfs_file_open().  stripe_unit 0 and stripe_factor 0 mean
 * the cluster defaults; they, mode and owner only matter when the file is
 * created. */
struct ipvfs_open_args {
    int create;               /* create when missing */
    int excl;                 /* with create: fail with EEXIST if it exists */
    uint64_t stripe_unit;
    uint32_t stripe_factor;
    uint32_t mode;            /* permission bits (07777 mask); 0: 0644 */
    int owner_set;            /* 0: the owner is geteuid():getegid() */
    uint32_t uid;
    uint32_t gid;
    unsigned access;          /* IPVFS_OPEN_* rights to ask for; 0: read and write */
};
/* The rights an open asks the metadata rank for (its permission check and
 * the capability the I/O nodes check: common/proto.h).  STAT asks for
 * none: sizes only. */
#define IPVFS_OPEN_READ  0x1u
#define IPVFS_OPEN_WRITE 0x2u
#define IPVFS_OPEN_STAT  0x4u

/* LOOKUP (optionally creating) path, an absolute path; on success *out_file
 * holds the file (free it with ipvfs_file_close()).  Directories give
 * EISDIR. */
int ipvfs_file_open(struct ipvfs_client *client, const char *path,
                    const struct ipvfs_open_args *args,
                    struct ipvfs_file **out_file, struct ipvfs_error *out_err);

/* Builds a file from an entry and capability another process looked up
 * (no server contact): the collective open broadcasts them.  cap may be
 * NULL for a client that holds the cluster key.  Checks that the entry
 * fits the cluster (EINVAL if not). */
int ipvfs_file_attach(struct ipvfs_client *client, const char *path,
                      const struct ipvfs_entry *entry, const struct ipvfs_cap *cap,
                      struct ipvfs_file **out_file, struct ipvfs_error *out_err);

/* Replaces the file's data path options: EINVAL (nothing changed) for an
 * unknown schedule, a block of 0 or a read-ahead over IPVFS_MAX_READAHEAD. */
int ipvfs_file_set_opts(struct ipvfs_file *file, const struct ipvfs_io_opts *opts,
                        struct ipvfs_error *out_err);

/* Frees the file and drops its reference on the client. */
void ipvfs_file_close(struct ipvfs_file *file);

/* REMOVE on the metadata rank, then DF_REMOVE of the file's datafiles on
 * its I/O nodes.  A datafile that is already gone is not an error.  A
 * remover that dies in between leaves an orphan (see IPVFS_OP_ORPHANS in
 * common/proto.h); every remove then deletes the datafiles of a few
 * orphans too (best effort: what fails stays listed for the next one). */
int ipvfs_remove(struct ipvfs_client *client, const char *path, struct ipvfs_error *out_err);

/* ipvfs_remove with flags: */
#define IPVFS_RM_DIR         0x1u  /* an empty directory may go too */
#define IPVFS_RM_ALL_ORPHANS 0x2u  /* then clean orphans as ipvfs_gc does; fail
                                      when the metadata rank cannot list them */
int ipvfs_remove_flags(struct ipvfs_client *client, const char *path, unsigned flags,
                       struct ipvfs_error *out_err);

/* Deletes the datafiles of orphans, batch after batch, until none is left
 * or a batch makes no progress (an I/O node down); *out_left gets the
 * number still left then. */
int ipvfs_gc(struct ipvfs_client *client, uint32_t *out_left, struct ipvfs_error *out_err);

/* Logical size: DF_GETSIZE on every datafile, the largest size implied. */
int ipvfs_get_size(struct ipvfs_file *file, uint64_t *out_size, struct ipvfs_error *out_err);

/* Sets the logical size (shrinks or grows, growing reads as zeros):
 * DF_TRUNCATE of each datafile to its share of size. */
int ipvfs_resize(struct ipvfs_file *file, uint64_t size, struct ipvfs_error *out_err);

/* Allocates storage for the first size bytes; grows the file to size when
 * it is shorter, never shrinks it. */
int ipvfs_preallocate(struct ipvfs_file *file, uint64_t size, struct ipvfs_error *out_err);

/* Size of each datafile (out_sizes: stripe factor entries, datafile i
 * first), by DF_GETSIZE. */
int ipvfs_datafile_sizes(struct ipvfs_file *file, uint64_t *out_sizes,
                         struct ipvfs_error *out_err);

/* DF_SYNC of every datafile: when it returns 0, all data written before it
 * (by anyone) survives a crash of the servers.  It fails with EIO ("server
 * rank N restarted; writes acknowledged since the last sync may be lost")
 * when an I/O node restarted since this process's writes to the file that
 * it acknowledged after the last sync (the write verifier changed); the
 * file's verifier state starts afresh then, so later writes and syncs
 * work.  ipvfs_sync is ipvfs_sync_verf then ipvfs_sync_check. */
int ipvfs_sync(struct ipvfs_file *file, struct ipvfs_error *out_err);

/* The sync alone: DF_SYNC of every datafile; out_verf (NULL, or
 * file->layout.factor entries) gets each datafile's I/O node's verifier.
 * Checks nothing and changes no state of the file. */
int ipvfs_sync_verf(struct ipvfs_file *file, uint64_t *out_verf, struct ipvfs_error *out_err);

/* At close: syncs the datafiles that this process wrote since its last
 * sync (DF_SYNC to their I/O nodes only, so their dirty cached blocks are
 * written to the targets) and fails with EIO as ipvfs_sync when one of
 * those I/O nodes restarted since (or with the transport's error when one
 * cannot be reached).  0 at once, with no request, when there were no
 * such writes. */
int ipvfs_close_check(struct ipvfs_file *file, struct ipvfs_error *out_err);
/* 1 when this process wrote to the file since its last sync (or open),
 * else 0: whether its close or sync owes the file an mtime (ad_ipvfs). */
int ipvfs_file_unsynced(const struct ipvfs_file *file);

/* The check alone, after a sync made by any process (verf: its
 * ipvfs_sync_verf result, which must have started after this process's
 * writes to the file completed): EIO as ipvfs_sync when this process's
 * writes since its last check may be lost.  Either way they count as
 * synced afterwards.  For collective syncs (ad_ipvfs: one rank syncs, all
 * check). */
int ipvfs_sync_check(struct ipvfs_file *file, const uint64_t *verf,
                     struct ipvfs_error *out_err);

/* Contiguous I/O of len bytes at offset (any sizes, 64-bit).  Reads store
 * in *out_bytes the bytes that lie before the end of the file (the rest of
 * buf is zero-filled); writes store len. */
int ipvfs_read(struct ipvfs_file *file, uint64_t offset, void *buf, uint64_t len,
               uint64_t *out_bytes, struct ipvfs_error *out_err);
int ipvfs_write(struct ipvfs_file *file, uint64_t offset, const void *buf, uint64_t len,
                uint64_t *out_bytes, struct ipvfs_error *out_err);

/* List I/O: one request per I/O node for every b bytes (the schedule
 * block) of data it gets, carrying many pairs (at most IPVFS_MAX_PAIRS;
 * pairs that touch in the datafile are merged), sent in the schedule's
 * order (see enum ipvfs_schedule).  The file side is next extents (in the order given; they may be
 * unsorted, but overlapping write extents land in an unspecified order),
 * the memory side memcnt iovecs; both must hold the same number of bytes
 * (EINVAL otherwise).  Bytes are paired up in order.  *out_bytes as for
 * ipvfs_read/ipvfs_write (for reads: the bytes of the extents that lie
 * before the end of the file). */
int ipvfs_read_list(struct ipvfs_file *file, const struct ipvfs_extent *ext, size_t next,
                    const struct iovec *mem, int memcnt,
                    uint64_t *out_bytes, struct ipvfs_error *out_err);
int ipvfs_write_list(struct ipvfs_file *file, const struct ipvfs_extent *ext, size_t next,
                     const struct iovec *mem, int memcnt,
                     uint64_t *out_bytes, struct ipvfs_error *out_err);

/* ---- Asynchronous list I/O ------------------------------------------
 * ipvfs_aio_start() plans the access as ipvfs_read_list/ipvfs_write_list
 * do, queues it on the client and sends what the sockets take without
 * blocking, then returns.  No thread works behind the caller's back: the
 * access moves only inside ipvfs_aio_test(), ipvfs_aio_wait(),
 * ipvfs_aio_finish() and every other call on the same client (each of
 * them drives every access of the client that is moving).  An access
 * starts moving at once beside the ones moving already, unless it needs
 * a new connection (a blocking exchange): then it waits until those are
 * done.  A capability a connection does not hold yet goes ahead of the
 * access on that connection, without waiting.
 *
 * Ownership: the caller's data buffers (the iovecs' memory) must stay
 * valid, and for writes unchanged, until ipvfs_aio_test() returned 1 or
 * ipvfs_aio_wait()/ipvfs_aio_finish() returned.  The ext and mem arrays
 * themselves are copied by the start call and may be freed at once.  The
 * file must stay open, and its client referenced, until the access is
 * finished.
 *
 * Lifetime: each started access is freed by exactly one ipvfs_aio_finish(),
 * which waits for it if needed (there is no cancel: a request on the wire
 * cannot be taken back) and reports its result as the synchronous call
 * would: 0 with *out_bytes, or a negative errno with *out_err filled;
 * transport failures and time limits (IPVFS_TIMEOUT_MS) show up here,
 * never in the start call.  ipvfs_aio_start() fails only for a bad
 * argument or lack of memory; nothing is queued then.  ipvfs_aio_test()
 * returns 1 when the access is complete (its result ready; never blocks),
 * else 0.  ipvfs_aio_wait() blocks in poll(2) on the client's sockets until
 * it is complete. */
struct ipvfs_aio;

int ipvfs_aio_start(struct ipvfs_file *file, int writing, const struct ipvfs_extent *ext,
                    size_t next, const struct iovec *mem, int memcnt,
                    struct ipvfs_aio **out_aio, struct ipvfs_error *out_err);
int ipvfs_aio_test(struct ipvfs_aio *aio);
void ipvfs_aio_wait(struct ipvfs_aio *aio);
int ipvfs_aio_finish(struct ipvfs_aio *aio, uint64_t *out_bytes, struct ipvfs_error *out_err);

/* ---- Names and attributes outside MPI-IO (attr.c) ----------------------
 * For tools and the FUSE mount: attributes (GETATTR, SETATTR), rename,
 * mkdir and directory listings, all served by the metadata rank (see
 * struct ipvfs_attr in common/proto.h for what is kept, and when mtime
 * changes).  Paths are absolute, as for ipvfs_file_open(). */

/* What stat(2) needs: the metadata rank's attributes and, for files, the
 * size from the datafiles (0 for directories). */
struct ipvfs_stat {
    struct ipvfs_attr attr;
    uint64_t size;
};
int ipvfs_getattr(struct ipvfs_client *client, const char *path, struct ipvfs_attr *out_attr,
                  struct ipvfs_error *out_err);
int ipvfs_stat_path(struct ipvfs_client *client, const char *path, struct ipvfs_stat *out_stat,
                    struct ipvfs_error *out_err);
/* SETATTR with req's valid fields (req->path_len is filled in here);
 * out_attr (may be NULL) gets the attributes after the change. */
int ipvfs_setattr(struct ipvfs_client *client, const char *path,
                  const struct ipvfs_setattr_req *req, struct ipvfs_attr *out_attr,
                  struct ipvfs_error *out_err);
/* rename(2) in the namespace (flags IPVFS_RENAME_NOREPLACE: EEXIST over an
 * existing name); a file replaced by it loses its datafiles, as by
 * ipvfs_remove. */
int ipvfs_rename(struct ipvfs_client *client, const char *src, const char *dst, uint32_t flags,
                 struct ipvfs_error *out_err);
/* MKDIR owned by geteuid():getegid() with permission bits mode. */
int ipvfs_mkdir(struct ipvfs_client *client, const char *path, uint32_t mode,
                struct ipvfs_error *out_err);
/* Lists directory path: calls each(arg, name, type) for every entry (name
 * NUL-terminated, type enum ipvfs_type) in name order; a nonzero return of
 * each stops the listing and is returned. */
typedef int (*ipvfs_dir_fn)(void *arg, const char *name, uint32_t type);
int ipvfs_readdir(struct ipvfs_client *client, const char *path, ipvfs_dir_fn each, void *arg,
                  struct ipvfs_error *out_err);
/* Free space (df): out_io[i] gets I/O node i's DF_STATFS reply, for the
 * map's nio I/O nodes (asked all at once); the first failure is returned. */
int ipvfs_statfs(struct ipvfs_client *client, struct ipvfs_statfs_rep *out_io,
                 struct ipvfs_error *out_err);

/* ---- MPI-IO shared file pointers and atomic-mode locks (shfp.c, lock.c) --
 * Both are served by the metadata rank; see IPVFS_OP_SHFP and IPVFS_OP_LOCK
 * in common/proto.h for the server side of the contract. */

/* Lock wait limit: how long ipvfs_lock() waits for a grant before it gives
 * up with ETIMEDOUT (the environment variable IPVFS_LOCK_TIMEOUT_MS,
 * positive milliseconds, replaces it; never below the request limit). */
#define IPVFS_CLIENT_LOCK_MS 300000

/* SHFP op on the shared file pointer of open instance `instance` of file:
 * SET, FETCH_ADD or RELEASE with value; *out_previous (may be NULL) gets
 * the pointer's value before the op.  EINVAL when the pointer would leave
 * [0, INT64_MAX]. */
int ipvfs_shfp(struct ipvfs_file *file, uint64_t instance, enum ipvfs_shfp_op op, int64_t value,
               int64_t *out_previous, struct ipvfs_error *out_err);

/* Takes a byte-range lock on [offset, offset + len) of file (len > 0),
 * exclusive or shared, waiting for it as long as the lock wait limit.  The
 * lock belongs to the client's connection to the metadata rank: it goes
 * away with ipvfs_unlock() or when that connection closes (a process that
 * dies, a transport failure).  A caller must not ask for a lock that
 * overlaps one it holds: it would wait for itself. */
int ipvfs_lock(struct ipvfs_file *file, uint64_t offset, uint64_t len, int exclusive,
               struct ipvfs_error *out_err);
/* Releases a lock taken with the same offset, len and exclusive. */
int ipvfs_unlock(struct ipvfs_file *file, uint64_t offset, uint64_t len, int exclusive,
                 struct ipvfs_error *out_err);

/* ---- Administration (admin.c) -----------------------------------------
 * One blocking request to server rank `rank`, for ops the calls above do
 * not cover (STATUS, SHUTDOWN, SCRUB, REBUILD, READDIR, MKDIR; see
 * common/proto.h for bodies and replies).  body: cnt iovecs (at most 16)
 * sent after the header.
 *
 * The request goes over the client's connection to the rank, opened and
 * greeted first when there is none (the connect and each wait of HELLO
 * limited by timeout_ms, not the client's own limits).  timeout_ms bounds
 * each wait for progress; keepalives restart it, so a slow request (a
 * SCRUB, a SHUTDOWN's final sync) may take longer in all.  EBUSY while an
 * asynchronous access is moving.  A transport failure or a malformed reply
 * closes the connection and fails the call.
 *
 * A server's refusal is no failure of the call: it returns 0 with
 * out->status set and the server's message (if any) as out->body.  On
 * success out->body is the caller's to free with wire_reply_free().
 *
 * ipvfs_admin_send() and ipvfs_admin_recv() split a call so that requests
 * to several ranks run at once (at most one outstanding per rank); the
 * receive takes the id the send stored in *out_req_id. */
int ipvfs_admin_call(struct ipvfs_client *client, uint32_t rank, uint16_t op, uint32_t flags,
                     const struct iovec *body, int cnt, int timeout_ms, struct wire_reply *out,
                     struct ipvfs_error *out_err);
int ipvfs_admin_send(struct ipvfs_client *client, uint32_t rank, uint16_t op, uint32_t flags,
                     const struct iovec *body, int cnt, int timeout_ms, uint64_t *out_req_id,
                     struct ipvfs_error *out_err);
int ipvfs_admin_recv(struct ipvfs_client *client, uint32_t rank, uint16_t op, uint64_t req_id,
                     int timeout_ms, struct wire_reply *out, struct ipvfs_error *out_err);

#endif
