/* Internals shared by the files of libipvfs-client. */
#ifndef IPVFS_CLIENT_INTERNAL_H
#define IPVFS_CLIENT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include "adio/client/ipvfs_client.h"
#include "common/map.h"
#include "common/proto.h"
#include "common/u64map.h"

/* Internal names stay out of libipvfs-romio.so's exported symbols. */
#pragma GCC visibility push(hidden)

struct ipvfs_client {
    char *map_path;
    struct ipvfs_map map;
    struct stat map_stat;       /* to notice a rewritten map */
    uint32_t client_id;
    int *fds;                   /* per server rank, -1 when not connected */
    struct ipvfs_hello_rep *wins;   /* per rank: its HELLO reply (window); NULL: none yet */
    struct u64map *shown;       /* per rank: capabilities its connection holds
                                 * (handle -> expires_ms << 3 | rights); NULL
                                 * with the key, which needs none */
    uint64_t next_req_id;
    uint64_t sched_rng;         /* random-IOS generator state */
    int connect_ms;
    int request_ms;
    int reconnect_ms;           /* reconnect deadline (retry.h) */
    int refs;
    struct xfer_batch *queue_head;  /* started batches not done (xfer_engine.h) */
    struct xfer_batch *queue_tail;
    struct xfer_engine *engine;     /* while batches run; NULL otherwise */
    struct ipvfs_client *next;  /* registry of clients by map path */
    char qos_class[IPVFS_QOS_NAME_MAX + 1];  /* the application class (qos.c) */
    struct ipvfs_qos_slo qos_slo;  /* the hints' SLO sent with it; rate 0: none */
};

/* One request of a batch run by xfer_run().  The caller fills rank, op,
 * flags, send_iov and recv_iov (and once); send_iov[0] is reserved:
 * xfer_run() points it at hdr.  recv_iov receives the reply body of a
 * successful reply, which must hold exactly that many bytes.  Both iovec
 * arrays are consumed.  When a connection breaks, the engine reconnects
 * and sends its unanswered requests again where retry.h allows it. */
struct xfer_req {
    uint32_t rank;
    uint16_t op;
    uint32_t flags;
    struct iovec *send_iov;
    int send_cnt;
    struct iovec *recv_iov;
    int recv_cnt;
    int once;            /* never send it twice (retry.h), e.g. an exclusive create */
    const struct ipvfs_cap *cap;  /* an I/O node's data request: the file's
                                   * capability, shown once per connection */
    /* filled by xfer_run */
    struct ipvfs_hdr hdr;
    int err;             /* positive errno: server status or transport */
    int transport;       /* err came from the connection, not the server */
    int in_doubt;        /* transport err after it was sent whole: the
                          * server may have done it */
    char msg[256];       /* the server's message or the transport detail */
    int answered;        /* its reply came (xfer_chan.c's bookkeeping) */
    struct xfer_batch *batch;  /* the batch it runs in */
    int setup;           /* made by the engine ahead of its batch's own
                          * requests (xfer_engine.h), not the caller's */
    uint64_t cost;       /* bytes it holds of the server's window */
};

/* Runs a batch: requests to one rank go in order over its connection,
 * pipelined up to the server's window, their replies in any order;
 * different ranks are served at once, driven by poll().
 * Returns the index of the first failed request, or -1 when all succeeded. */
long xfer_run(struct ipvfs_client *c, struct xfer_req *reqs, size_t n);
/* Same, but the client sends one request at a time in batch order (the
 * I/O schedule): request k+1 starts when request k lies whole in its
 * socket buffer; replies are gathered from all servers at once.  A rank
 * waiting for its turn with nothing outstanding is not timed. */
long xfer_run_in_order(struct ipvfs_client *c, struct xfer_req *reqs, size_t n);

/* The same engine, asynchronous (xfer_run is xfer_start then
 * xfer_finish).  xfer_start() queues the batch behind the client's earlier
 * batches and moves what it can without blocking; reqs must stay valid
 * until xfer_finish().  flags: XFER_IN_ORDER as xfer_run_in_order;
 * XFER_BESIDE lets the batch run beside earlier ones that have it too
 * (requests of independent accesses, in any order relative to each
 * other), where it needs no blocking setup (xfer_engine.h); other
 * batches run alone, in the order started.  xfer_test() moves more
 * without blocking (driving every running batch) and returns 1 once b is
 * done; xfer_wait() blocks in poll() until it is.  xfer_finish() waits,
 * frees b and returns as xfer_run.  Returns of xfer_start: 0 or -ENOMEM
 * (nothing queued then).  Every started batch must be finished before
 * the client is put. */
#define XFER_IN_ORDER 1u
#define XFER_BESIDE 2u
struct xfer_batch;
struct xfer_engine;
int xfer_start(struct ipvfs_client *c, struct xfer_req *reqs, size_t n, unsigned flags,
               struct xfer_batch **out_batch);
int xfer_test(struct xfer_batch *b);
void xfer_wait(struct xfer_batch *b);
long xfer_finish(struct xfer_batch *b);

/* Re-reads the map when its file changed since it was read (a restarted
 * cluster listens on new ports); that closes every connection, so call it
 * only before taking connections for a batch.  The number of I/O nodes must
 * stay the same (open files depend on it): -ESTALE otherwise. */
int conn_refresh(struct ipvfs_client *c, char *msg, size_t msglen);
/* A new client of the cluster map_path names, outside the registry (one
 * reference): reads the map, keeps the limits of the environment.  The
 * one setup of shared (ipvfs_client_get) and unshared (ipvfs_client_new)
 * clients; 0 or -errno with out_err filled. */
int client_make(const char *map_path, uint32_t client_id, struct ipvfs_client **out_client,
                struct ipvfs_error *out_err);
/* The verifier rank's HELLO stated on the current connection; 0: none. */
uint64_t conn_verifier(const struct ipvfs_client *c, uint32_t rank);

/* mapsrc.c: the map from spec, a file or HOST:PORT of the metadata rank
 * (with the key from IPVFS_KEY); out_st: the file's stat, zeros for
 * HOST:PORT.  Returns 0 or -errno with the reason in msg. */
int client_map_load(const char *spec, int connect_ms, int request_ms, struct ipvfs_map *out,
                    struct stat *out_st, char *msg, size_t msglen);
/* Whether the map may have changed since st (HOST:PORT: always asked again). */
int client_map_changed(const char *spec, const struct stat *st);
/* Whether spec is HOST:PORT. */
int client_map_remote(const char *spec);
/* 1 when rank has a live cached connection (a dead one is dropped). */
int conn_cached(struct ipvfs_client *c, uint32_t rank);
/* A connected, greeted socket for rank (opened now if needed).  On failure
 * returns -errno and writes the detail into msg. */
int conn_get(struct ipvfs_client *c, uint32_t rank, char *msg, size_t msglen);
/* Same with explicit limits for the connect and for each wait of HELLO
 * (conn_get uses the client's connect_ms and request_ms). */
int conn_get_within(struct ipvfs_client *c, uint32_t rank, int connect_ms, int hello_ms,
                    char *msg, size_t msglen);
/* Orphans (files removed by clients that died before deleting their
 * datafiles) that one ipvfs_remove cleans up besides its own file. */
#define IPVFS_CLIENT_ORPHANS_PER_REMOVE 4u
/* Environment variable name as a positive number of milliseconds, else dflt. */
int client_env_ms(const char *name, int dflt);
/* The window rank's HELLO stated (common/proto.h): at most *out_reqs
 * requests and *out_bytes bytes (bodies and READ data) in flight on its
 * connection, a lone request always; 1 and 0 before a HELLO. */
void conn_window(const struct ipvfs_client *c, uint32_t rank, uint32_t *out_reqs,
                 uint64_t *out_bytes);
/* Shows cap to rank's connection fd unless it holds it already (CAP,
 * blocking: call it only while no request is in flight on fd).  0 or
 * -errno with the server's reason in msg. */
int conn_show_cap(struct ipvfs_client *c, uint32_t rank, int fd, const struct ipvfs_cap *cap,
                  char *msg, size_t msglen);
/* Whether rank's connection holds cap already (no CAP needed). */
int conn_cap_held(const struct ipvfs_client *c, uint32_t rank, const struct ipvfs_cap *cap);
/* Records that rank's connection holds cap (its CAP was answered, or is
 * on the connection ahead of every request that needs it): the value
 * recorded, for conn_cap_unmark, or 0 without memory (nothing recorded). */
uint64_t conn_cap_mark(struct ipvfs_client *c, uint32_t rank, const struct ipvfs_cap *cap);
/* Takes back what conn_cap_mark recorded (val), as its CAP failed; a
 * later record of the same file stays. */
void conn_cap_unmark(struct ipvfs_client *c, uint32_t rank, const struct ipvfs_cap *cap,
                     uint64_t val);
/* Renews f's capability (a LOOKUP of its path for the same rights) once
 * less than a quarter of its life is left; nothing for a client with the
 * key.  0, or -errno (ESTALE: the path now names another file). */
int client_cap_fresh(struct ipvfs_file *f, struct ipvfs_error *out_err);
/* qos.c: picks c's QoS class (IPVFS_QOS_CLASS, else the job's): 0, or
 * -EINVAL with the reason when IPVFS_QOS_CLASS is no valid name; and
 * names it on fd, a new connection to an I/O node (QOS_CLASS): 0 or
 * -errno with the reason. */
int client_qos_init(struct ipvfs_client *c, char *msg, size_t msglen);
/* 0 when name is a valid class name, else -EINVAL with the reason. */
int client_qos_check(const char *name, char *msg, size_t msglen);
/* The hints ipvfs_qos_rate (MB/s, "MB/s" optional) and ipvfs_qos_latency
 * (ms, "ms" optional), both or neither (NULL): 0 and *out (zeros for
 * neither), or -EINVAL with the reason naming the hint.  The I/O nodes
 * check the ranges. */
int client_qos_parse_slo(const char *rate, const char *latency, struct ipvfs_qos_slo *out,
                         char *msg, size_t msglen);
int conn_send_qos_class(struct ipvfs_client *c, int fd, char *msg, size_t msglen);
/* Closes rank's connection (after a transport failure). */
void conn_drop(struct ipvfs_client *c, uint32_t rank);

/* The one place that turns an errno and its context into a message.
 * rank < 0 when no server was involved; detail may be NULL.  Returns
 * -code for convenience. */
int client_error(struct ipvfs_error *out_err, int code, const char *op, const char *path,
                 const struct ipvfs_client *c, long rank, const char *detail);
/* Same, taking code, rank and detail from a failed xfer_req. */
int client_xfer_error(struct ipvfs_error *out_err, const struct xfer_req *r, const char *op,
                      const char *path, const struct ipvfs_client *c);

/* Logical size counting only the datafiles whose known[i] is 0 (known
 * NULL: all of them). */
int client_size_except(struct ipvfs_file *f, const uint8_t *known, uint64_t *out_size,
                       struct ipvfs_error *out_err);

/* Write verifiers of one datafile's I/O node, seen by this process since
 * its last sync of the file (common/proto.h, "Write verifier"). */
struct file_verf {
    uint64_t verifier;   /* of the replies to the writes since the last sync */
    uint8_t unsynced;    /* writes acknowledged since the last sync */
    uint8_t changed;     /* one of them came from another incarnation */
};
/* Pure state changes (verf.c): a write acknowledged with verifier v; and a
 * sync whose reply carried v, which resets the state and returns 1 when
 * the writes since the last sync may be lost (the verifier changed). */
void verf_note_write(struct file_verf *s, uint64_t v);
int verf_note_sync(struct file_verf *s, uint64_t v);
/* Datafile index of I/O node `server` in f's layout. */
uint32_t client_dfile_of(const struct ipvfs_file *f, uint32_t server);
/* Server rank of the metadata rank, or -1 when the map has none. */
long client_meta_rank(const struct ipvfs_client *c);
/* After a file's name went away (REMOVE, RENAME over it): deletes its
 * datafiles, then one batch of orphans (all of them with all_orphans). */
int client_settle_removed(struct ipvfs_client *c, const char *path,
                          const struct ipvfs_entry *entry, const struct ipvfs_cap *cap,
                          int all_orphans, struct ipvfs_error *out_err);

/* Server rank of I/O node io_index, or -1 when the map has none. */
long client_io_rank(const struct ipvfs_client *c, uint32_t io_index);

#pragma GCC visibility pop

#endif
