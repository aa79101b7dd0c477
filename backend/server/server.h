/* ipvfs-server internals shared by its service files.
 *
 *   main.c     MPI start-up, roles, readiness, teardown, MPI_Finalize
 *   topo.c     hwloc core binding
 *   srvconn.c  listener and the per-connection state machine, HELLO,
 *              counters, dispatch through the ops table
 *   metasvc.c  metadata service (LOOKUP REMOVE MKDIR READDIR) over metadb,
 *              and MPI-IO shared file pointers (SHFP) in memory
 *   locks.c    byte-range locks for MPI atomic mode (LOCK UNLOCK)
 *   ionode.c   I/O node service (READ WRITE DF_*) over dfstore
 *   control.c  STATUS, SHUTDOWN (cluster-wide and local), signals
 *
 * Everything runs on one thread, in callbacks of srv->loop. */
#ifndef IPVFS_SERVER_H
#define IPVFS_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "backend/server/options.h"
#include "common/evloop.h"
#include "common/map.h"
#include "common/proto.h"

struct tgt_server;
struct iraid_volume;
struct dfstore;
struct metadb;
struct conn;

/* Request and byte counters, per rank and per client id. */
struct counters {
    uint64_t requests;
    uint64_t bytes_in;
    uint64_t bytes_out;
};

struct client_counters {
    uint32_t client_id;
    struct counters c;
    uint64_t reads_waited;      /* READs served after waiting (ionode.c) */
    uint64_t last_wait_seq;     /* read_order.served of the latest of them */
};

struct io_op;

/* Server-side READ ordering of an I/O node (ionode.c; policies in
 * common/proto.h, enum ipvfs_read_order). */
struct read_order {
    struct io_op *head, *tail;  /* waiting READs, oldest first */
    uint32_t in_store;          /* READs in the store now */
    uint32_t places;            /* at most this many at once */
    uint32_t nclients;          /* one more than the largest client id seen */
    uint32_t hash_next;         /* HASH: the client whose turn it is */
    uint64_t served;            /* waiting READs served so far */
    uint64_t rng;               /* RANDOM's generator */
};

struct server {
    struct server_opts opts;
    int rank, nranks;
    uint32_t role;              /* enum ipvfs_role bits */
    uint32_t io_index;          /* our I/O node (targets: the one we serve) */
    int target_index;           /* -1 unless a target */
    enum ipvfs_rank_state state;
    char rank_dir[1100];        /* DATA/rank-<r> */
    char host[64];              /* published in the map */
    char cluster[24];           /* names the cluster inside iSCSI names */

    struct evloop *loop;
    int listen_fd;
    uint16_t port;
    int signal_fd;

    struct tgt_server *tgt;     /* target ranks */
    uint16_t iscsi_port;
    int lun_created;            /* target: its LUN file is new in this start */
    int fresh_volume;           /* I/O node: every target's LUN is new */
    struct iraid_volume *vol;   /* I/O nodes */
    struct dfstore *ds;
    struct metadb *mdb;         /* rank 0 */

    uint8_t secret[IPVFS_SECRET_LEN];
    struct ipvfs_map map;       /* every rank's address, after the exchange */

    struct counters total;
    struct read_order reads;    /* I/O nodes */
    struct client_counters *clients;
    size_t nclients;

    int exit_code;              /* what main returns */
    int abandon;                /* leave without closing the stores */
    int peer_lost;              /* mpiexec said a rank died (SIGUSR1) */
};

/* ---- connections (srvconn.c) ------------------------------------------- */

int conn_listen(struct server *srv);
/* Closes every connection (failing nothing in flight: call after the
 * stores are closed) and the listener. */
void conn_close_all(struct server *srv);

/* How a handler finishes a request: exactly one conn_reply* per request,
 * either before the handler returns or later from an async completion.
 * conn_reply takes ownership of body (malloc'd, or NULL with len 0).  The
 * request body given to the handler stays valid until the reply is sent. */
void conn_reply(struct conn *c, uint32_t status, void *body, size_t len);
/* Error reply: status is a positive errno; the message (printf format) is
 * logged and sent as the NUL-terminated body. */
void conn_reply_err(struct conn *c, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* After this request's reply is written (or the connection dies), run cb. */
void conn_on_reply_sent(struct conn *c, void (*cb)(struct server *srv, void *arg), void *arg);
/* When the connection goes away (peer closed, error, teardown), run cb. */
void conn_on_close(struct conn *c, void (*cb)(struct server *srv, void *arg), void *arg);
/* Closes the connection after the reply instead of reading the next one. */
void conn_close_after_reply(struct conn *c);
struct server *conn_server(const struct conn *c);
/* Counters of the connection's client (set by HELLO). */
void conn_count_bytes(struct conn *c, uint64_t in, uint64_t out);
/* The client id HELLO named, and its counters (NULL without memory). */
uint32_t conn_client_id(const struct conn *c);
struct client_counters *conn_client_counters(struct conn *c);

/* Handler of one op.  hdr and body (body_len bytes) are the request. */
typedef void (*op_handler)(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body);

struct op_entry {
    uint16_t op;
    uint32_t roles;             /* which ranks serve it (enum ipvfs_role bits) */
    op_handler handler;
    const char *name;
};

/* Ops tables of the service files; srvconn.c dispatches through them. */
extern const struct op_entry meta_ops[];
extern const struct op_entry ionode_ops[];
extern const struct op_entry control_ops[];

/* ---- services ---------------------------------------------------------- */

int meta_service_open(struct server *srv);
void meta_service_close(struct server *srv);

int ionode_open(struct server *srv);
/* Async local stop of the I/O node: syncs and closes the datafile store,
 * then the volume; calls done from a loop callback, exactly once. */
void ionode_stop(struct server *srv, void (*done)(struct server *srv, int status));
/* Synchronous close for teardown paths (nothing may be in flight). */
void ionode_close(struct server *srv);

/* Signals (signalfd) and the local stop of any role. */
int control_signals(struct server *srv);
/* Stops this rank's services from inside the loop (stores synced and
 * closed, target flushed and destroyed), then leaves the loop. */
void control_local_stop(struct server *srv);
void control_fill_status(struct server *srv, struct ipvfs_status_rep *out);

/* ---- misc -------------------------------------------------------------- */

int topo_bind(struct server *srv);

/* iSCSI names (main.c): target k of I/O node io, and I/O node initiators. */
void server_target_iqn(const struct server *srv, uint32_t io, uint32_t k, char *out,
                       size_t outlen);
void server_initiator_iqn(const struct server *srv, char *out, size_t outlen);

static inline const char *role_name(uint32_t role)
{
    return (role & IPVFS_ROLE_METADATA) ? "metadata" : (role & IPVFS_ROLE_IO) ? "io" : "target";
}

#endif
