/* ipvfs-server: the state of one rank, shared by its files.
 *
 * Every MPI rank is a supervisor (supervise.c) that does all the MPI work
 * and runs the serving process (serve.c) as its child, restarting it when
 * it dies; the child makes no MPI call.  The struct server below is filled
 * by the supervisor up to the address exchange and copied into each child
 * at fork; the child creates everything else (event loop, stores, target).
 *
 * Files, each calling only those listed below it (no cycle):
 *
 *   main.c     MPI start-up, options, roles, directories, secret, the
 *              listening sockets, address exchange; hands over to:
 *   supervise.c  the rank's supervisor: readiness vote, child restarts,
 *              signals, exit barrier, MPI_Finalize
 *   serve.c    the serving process: set-up, readiness over the link to the
 *              supervisor, teardown; registers the services
 *   control.c  control service: STATUS, SHUTDOWN (cluster-wide and
 *              local), SCRUB, REBUILD, signals
 *   ionode.c   I/O node service: READ WRITE DF_* over dfstore
 *   ionode_store.c  its store and volume: open, local stop, close
 *   qos_svc.c  QoS service: QOS_CLASS QOS_SET QOS_STATUS, the scheduler
 *              (qos.c: the pure policy) that ionode.c puts READ/WRITE through
 *   metasvc.c  metadata service: LOOKUP REMOVE MKDIR READDIR ORPHANS over
 *              metadb, and MPI-IO shared file pointers (SHFP) in memory
 *   locks.c    lock service: byte-range locks for MPI atomic mode
 *   srvconn.c  connection layer: listener, the per-connection state
 *              machine, HELLO, dispatch to the registered services
 *   server.c   helpers of every file: iSCSI names, per-client counters,
 *              the note to the supervisor
 *   topo.c     hwloc core binding (main.c only)
 *   listen.c   which address to listen on, from every rank's host (pure
 *              but for listen_describe_host; main.c only)
 *
 * All state of a serving process lives in the one struct server below,
 * which main() owns and passes (copied by fork) to every service; no file
 * keeps state of its own (the supervisor's own, MPI requests and restart
 * history, is struct supervisor in supervise.c).  A serving process runs
 * on one thread, in callbacks of srv->loop. */
#ifndef IPVFS_SERVER_H
#define IPVFS_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "backend/server/options.h"
#include "backend/server/readq.h"
#include "backend/server/reqorder.h"
#include "common/evloop.h"
#include "common/map.h"
#include "common/proto.h"

struct tgt_server;
struct iraid_volume;
struct dfstore;
struct metadb;
struct conn;
struct link;
struct service;

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

struct qos_sched;

#define SERVER_MAX_SERVICES 8

/* The connection layer's state (srvconn.c). */
struct conn_layer {
    int listen_fd;
    uint16_t port;
    struct link *live;          /* every connection not yet closed */
    struct link *dead;          /* closed, waiting for the loop to free them */
    uint64_t reap_id;           /* the deferred call that frees them */
    uint64_t progress_timer;    /* armed while a request may be BUSY */
    uint64_t held[REQ_POOLS];   /* bytes all connections hold, per pool (reqorder.h) */
    uint32_t nbusy;             /* requests running, all connections */
    int want_wake;              /* a connection waits for bytes to free up */
    const struct service *services[SERVER_MAX_SERVICES];
    size_t nservices;
};

/* The control service's state (control.c). */
struct control_state {
    struct conn *scrub_requester;   /* NULL: gone, or answered already */
    int scrub_running;
    struct conn *probe_requester;   /* REBUILD onto a URL being checked; NULL: gone */
    int probe_running;
    uint32_t probe_member;
    char probe_url[IPVFS_MAX_URL + 1];
    struct conn *local_requester;   /* who sent SHUTDOWN|LOCAL, if anyone */
    struct conn *cluster_requester; /* rank 0: who asked the cluster to stop */
    int cluster_failures;           /* ranks that did not confirm their stop */
    char already_down[512];         /* rank 0: "2 (why), 5 (why)": down at the stop */
    struct conn *leave_on_close;    /* the loop ends when this one closes */
    uint64_t grace_timer;           /* leave even if nobody lets us */
    uint64_t signalled_ms;          /* when a signal asked this rank to stop */
    uint64_t drain_deadline;        /* a stopping target waits this long */
    int *held_fds;                  /* rank 0: connections to stopped ranks */
    int nheld;
};

struct shfp;
struct lock_file;
struct claim;

struct server {
    struct server_opts opts;
    int rank, nranks;
    uint32_t role;              /* enum ipvfs_role bits */
    uint32_t io_index;          /* our I/O node (targets: the one we serve) */
    int target_index;           /* -1 unless a target */
    enum ipvfs_rank_state state;
    char rank_dir[1100];        /* DATA/rank-<r> */
    char host[64];              /* the address published in the map */
    char bind_addr[64];         /* where the sockets listen (listen.h) */
    char node[64];              /* this host's name, for status */
    char cpus[32];              /* the PUs topo_bind() bound us to; "" unbound */
    char cluster[24];           /* names the cluster inside iSCSI names */

    struct evloop *loop;
    int signal_fd;
    struct conn_layer conns;

    struct tgt_server *tgt;     /* target ranks */
    uint16_t iscsi_port;
    int lun_created;            /* target: its LUN file is new in this start */
    int fresh_volume;           /* I/O node: every target's LUN is new */
    struct iraid_volume *vol;   /* I/O nodes */
    struct dfstore *ds;
    FILE *trace;                /* I/O nodes with --trace */
    struct read_order reads;    /* I/O nodes */
    struct qos_sched *qos;      /* I/O nodes: the QoS scheduler (qos_svc.c) */
    uint64_t store_free_us;     /* --store-rate: when the emulated store is free */
    struct metadb *mdb;         /* rank 0 */
    struct shfp *shfps;         /* rank 0: shared file pointers (metasvc.c) */
    struct lock_file *locks;    /* rank 0: files with byte-range locks */
    struct access *challenged;  /* connections between HELLO and AUTH (access.h) */
    int cred_fd;                /* the local credential socket; -1: none */
    struct claim *claims;       /* its clients that have not said their nonce */
    struct control_state ctl;

    uint8_t secret[IPVFS_SECRET_LEN];
    struct ipvfs_map map;       /* every rank's address, after the exchange */

    struct counters total;
    struct client_counters *clients;
    size_t nclients;

    int exit_code;              /* the serving process's exit status */
    int abandon;                /* leave without closing the stores */

    /* Supervision: set by the supervisor before each fork. */
    int link_fd;                /* serving process <-> supervisor; -1: none */
    int iscsi_listen_fd;        /* targets: the portal, bound by the supervisor */
    int vote;                   /* first serving process: the readiness vote waits */
    uint32_t supervisor_pid;
    uint32_t restarts;          /* serving processes started before this one */
    uint64_t started_ms;        /* evloop_now_ms() when this one started */
    uint64_t verifier;          /* this incarnation's verifier: HELLO states it; I/O nodes'
                                 * replies carry it (the write verifier) */
    char last_exit[64];         /* how the previous one ended; "" for the first */
    char down_reason[96];       /* non-empty: the rank stays down, control only */
};

/* ---- server.c -------------------------------------------------------------- */

/* iSCSI names: target k of I/O node io, and this I/O node's initiator. */
void server_target_iqn(const struct server *srv, uint32_t io, uint32_t k, char *out,
                       size_t outlen);
void server_initiator_iqn(const struct server *srv, char *out, size_t outlen);

/* The target ranks' portals take only mutual CHAP with secrets derived
 * from the cluster key (common/auth.h), per target: server_chap() fills
 * *out for a login of this I/O node (srv's io_index) to target_iqn, as the
 * initiator sees it (user/secret: ours; target_user/target_secret: the
 * target's); a target rank serves the same, seen from its side.
 * server_url_chap() does so when url names a target of this cluster and
 * returns 1, else clears *out and returns 0 (an external LUN). */
struct iraid_chap;
void server_chap(const struct server *srv, const char *target_iqn, struct iraid_chap *out);
int server_url_chap(const struct server *srv, const char *url, struct iraid_chap *out);

/* The link between a supervisor and its serving process: a SOCK_SEQPACKET
 * socketpair, one byte per message. */
enum link_msg {
    LINK_SET_UP_OK = 'R',       /* child: set up; waiting for the vote */
    LINK_SET_UP_FAILED = 'F',   /* child: its set-up failed */
    LINK_STOPPING = 'S',        /* child: stopping on purpose */
    LINK_CLUSTER_READY = 'Y',   /* supervisor: every rank is set up */
    LINK_CLUSTER_FAILED = 'N',  /* supervisor: some rank is not */
};

/* Tells the supervisor that this rank is stopping on purpose, so that the
 * serving process's exit is no crash to restart from. */
void server_note_stopping(struct server *srv);

/* The counters of client id, created on first use; NULL without memory. */
struct client_counters *server_client_counters(struct server *srv, uint32_t id);

static inline const char *role_name(uint32_t role)
{
    return (role & IPVFS_ROLE_METADATA) ? "metadata" : (role & IPVFS_ROLE_IO) ? "io" : "target";
}

/* ---- topo.c ---------------------------------------------------------------- */

int topo_bind(struct server *srv);

#endif
