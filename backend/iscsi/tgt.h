/* Internals of the embedded iSCSI target, shared by its source files.
 *
 * Layers, bottom-up.  A file calls only files listed above it (its own
 * layer's or a lower one's); scripts/check-call-graph.sh checks it on the
 * built objects (test/t_callgraph.sh).
 *
 *   leaves
 *     chap.c            CHAP responses (MD5 from nettle), checked in constant time
 *     order.c           per-LUN write ordering: ORWRITE holds its range alone
 *   backing I/O
 *     store.c           the asynchronous I/O engine of the stores (io_uring,
 *                       worker-thread fallback)
 *     store_fd.c        the file and block stores (on the engine)
 *     store_mem.c       the memory store
 *     store_disk.c      the emulated disk: a file store with a disk's
 *                       service times (a benchmark and test feature)
 *     store_lun.c       the store table, LUN open/close, the read mapping
 *     l2cache.c         the L2 cache of uCache (--cache-l2) in front of the
 *                       stores, write-through, cache/ policies
 *   connection and task objects
 *     conn.c            connection lifetime (close, references), tasks, freeing
 *                       a transmit queue
 *   SCSI commands (scsi.h: what the scsi*.c files share)
 *     scsi_task.c       sense data, replies, completion, a command's backing I/O
 *     scsi_pr.c         persistent reservations (PERSISTENT RESERVE IN/OUT), in
 *                       memory per LUN, and the commands they forbid to a nexus
 *     scsi_rw.c         READ, WRITE, ORWRITE, VERIFY, SYNCHRONIZE CACHE
 *     scsi_provision.c  WRITE SAME, UNMAP, GET LBA STATUS
 *     scsi_info.c       INQUIRY/VPD, MODE SENSE, READ CAPACITY, REPORT LUNS,
 *                       RESERVE/RELEASE, REQUEST SENSE
 *     scsi_ops.c        the SCSI operations table, its lookup, REPORT
 *                       SUPPORTED OPERATION CODES (which reports it)
 *     scsi.c            SCSI command entry (table checks, prepare, execute)
 *   iSCSI PDUs (conn.h: what conn.c, conn_tx.c, ffp.c and conn_rx.c share)
 *     conn_tx.c         transmit queue, batching, responses (Data-In, SCSI
 *                       Response, Reject)
 *     login.c           login phases, key negotiation, CHAP, SendTargets
 *     ffp.c             full feature phase PDUs (SCSI command, Data-Out, R2T,
 *                       NOP, TMF, logout, text), CmdSN window, the PDU table
 *     conn_rx.c         PDU receive state machine, dispatch by opcode
 *   server
 *     server.c          portal, accept, connection creation and socket
 *                       events, public entry points (target.h)
 *
 * A lower file reaches a higher one only through a function pointer that
 * the higher side set:
 *   store.c's completion rounds   -> struct tgt_aio_hooks, conn_tx.c's
 *                                    batch (server.c gives it to
 *                                    tgt_aio_create())
 *   a SCSI command's end          -> srv->scsi_up->task_complete,
 *                                    conn_tx.c's tgt_task_complete() (set
 *                                    by tgt_server_create())
 *   conn.c closing a connection   -> c->login_free, login.c's (set with
 *   during login                     the login state)
 *
 * Everything runs on the thread of the caller's evloop.
 *
 * Connection state machine (struct tgt_conn.state):
 *
 *   LOGIN --(login reaches full feature stage)--> FULL
 *   LOGIN --(login reject sent)-----------------> LOGOUT
 *   FULL  --(logout response queued)------------> LOGOUT
 *   LOGIN/FULL/LOGOUT --(protocol error, EOF, socket error,
 *                        logout response written, target shutdown)--> CLOSED
 *
 * CLOSED is the cleanup state: the socket is closed and unregistered and
 * queued PDUs are dropped at once; tasks without backing I/O in flight are
 * freed; tasks whose backing I/O is in flight are marked aborted and hold a
 * reference on the connection, which is freed when the last reference goes.
 * Each connection is a whole session (MaxConnections=1).
 *
 * Ownership: the server owns connections (list srv->conns) and LUNs; a
 * connection owns its tasks and its transmit queue; a task owns its data
 * buffer; a queued PDU that points into a task's buffer holds a reference on
 * the task (task->tx_refs) so the buffer outlives the send.
 *
 * Reads from the page cache: file and block LUNs are mapped read-only
 * (lun->map).  A READ whose whole range is in the page cache (mincore), on
 * a connection without data digest, reads nothing into a buffer: the task
 * completes at once with data_in_mapped set and its Data-In PDUs point into
 * the mapping, so the socket send is the only copy and many PDUs still go
 * out in one sendmsg().  Where the transport offers sendfile (sockets),
 * such a PDU's data is sent from the LUN's descriptor instead: the socket
 * takes the page cache's pages without copying them (over loopback the
 * receiver's copy is then the only one), at the cost of one more system
 * call per data segment.  Such a PDU holds no task reference: the mapping
 * and the descriptor outlive every connection (LUNs close after
 * connections at shutdown).
 * The bytes sent are those in the page cache at send time, which differs
 * from a buffered read only for a write racing the READ, whose order SCSI
 * leaves open.  Ranges not in the page cache take the buffered path
 * (io_uring), so the event loop does not wait for the disk.
 */
#ifndef IPVFS_TGT_INTERNAL_H
#define IPVFS_TGT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "backend/iscsi/target.h"
#include "backend/iscsi/iscsi_pdu.h"

#define TGT_BLOCK_SIZE       512u
#define TGT_MAX_LUNS         64
/* Largest data segment we accept in one PDU (declared as our
 * MaxRecvDataSegmentLength) and the limit during login. */
#define TGT_MAX_RECV_DSL     262144u
#define TGT_LOGIN_MAX_DSL    8192u
#define TGT_MAX_BURST        16776192u
#define TGT_MAX_OUT_R2T      4u
/* Largest SCSI transfer of one command (Block Limits VPD): 32 MiB.
 * With no MAXIMUM WRITE SAME LENGTH (scsi.h) initiators write and unmap
 * 65536-block ranges in one command (libiscsi's WriteSame16.Unmap). */
#define TGT_MAX_XFER_BLOCKS  65536u
#define TGT_CMD_WINDOW       128u
#define TGT_MAX_TEXT         65536u

struct tgt_server;
struct tgt_conn;
struct tgt_task;
struct tgt_lun;
struct tgt_pr;
struct tgt_scsi_upcalls;

/* ---- asynchronous backing I/O (store.c) ---- */

/* TGT_IO_WRITEBACK starts the kernel's writeback of [off, off + len) of a
 * buffered descriptor and waits for nothing (sync_file_range with
 * SYNC_FILE_RANGE_WRITE): it makes nothing durable.  store_fd.c issues it
 * itself (write-behind, tgt_lun's wb_*); nobody else submits it. */
enum tgt_io_op { TGT_IO_READ, TGT_IO_WRITE, TGT_IO_FLUSH, TGT_IO_PUNCH, TGT_IO_WRITEBACK };

struct tgt_io;
/* Called once per submitted io with 0 or a negative errno, always on the
 * loop thread.  File and block stores call it from the loop, never inside
 * tgt_io_submit(); the memory store calls it before tgt_io_submit()
 * returns, so a submitter must not touch the io or its owner after
 * submitting. */
typedef void (*tgt_io_done_fn)(struct tgt_io *io, int err);

struct tgt_io {
    enum tgt_io_op op;
    int fua;               /* write through to stable storage */
    int dpo;               /* a READ with SBC's DPO bit: the L2 need not keep it */
    uint8_t *buf;
    uint64_t off;
    size_t len;
    size_t done;           /* bytes completed so far (short transfers) */
    struct tgt_lun *lun;
    tgt_io_done_fn cb;
    /* Private to the engine (store.c) while the io is in flight. */
    struct tgt_io *next;   /* pool queue link */
    int fd;                /* descriptor a pool worker runs it on */
    int res;               /* a pool worker's result */
    tgt_io_done_fn store_cb; /* a buffered WRITE's own callback (store_fd.c) */
    /* Private to l2cache.c while the io is in flight; fd (which of the
     * LUN's descriptors ran it, -1: none) is read there after it. */
    tgt_io_done_fn l2_cb;
    uint64_t l2_gen;
    /* Private to store_disk.c while the io is in flight. */
    tgt_io_done_fn disk_cb;
    uint64_t disk_due_ns;  /* its emulated completion, CLOCK_MONOTONIC */
    int disk_res;
    struct tgt_io *disk_next;
};

/* A backing-store template.  open() fills lun->size (and private fields);
 * submit() starts one io; flush() makes completed writes durable, blocking. */
struct tgt_store_ops {
    const char *name;
    int (*open)(struct tgt_lun *lun, const struct tgt_lun_config *cfg);
    void (*close)(struct tgt_lun *lun);
    void (*submit)(struct tgt_lun *lun, struct tgt_io *io);
    int (*flush)(struct tgt_lun *lun);
    /* Optional: complete at once every io held back (the emulated disk
     * holds completed ios until their emulated time); called before the
     * engine is destroyed, after which nothing is held any more. */
    void (*drain)(struct tgt_lun *lun);
    /* Provisioning of the extent that starts at block lba: sets *mapped
     * and *nblocks (>= 1, up to the end of the LUN).  NULL: every block
     * is mapped (the store cannot tell). */
    int (*lba_status)(struct tgt_lun *lun, uint64_t lba, uint64_t *nblocks, int *mapped);
};

const struct tgt_store_ops *tgt_store_lookup(enum tgt_backing kind);
/* The entries of store_lun.c's table: the file and block stores (store_fd.c)
 * and the memory store (store_mem.c). */
extern const struct tgt_store_ops tgt_file_store;
extern const struct tgt_store_ops tgt_block_store;
extern const struct tgt_store_ops tgt_mem_store;
/* The emulated disk (store_disk.c) over a file, for a FILE LUN whose
 * config names a disk (lun->disk holds its state). */
extern const struct tgt_store_ops tgt_disk_store;

/* The descriptor engine.  io_uring is the first choice; without a ring,
 * or when the environment sets IPVFS_TARGET_NO_URING=1, a pool of worker
 * threads runs the blocking syscalls (the pool also takes what a full ring
 * refuses).  The loop thread submits; workers only run pread/pwrite/
 * fdatasync/fallocate on the io and queue it back.  The ring and the
 * workers signal one eventfd registered on srv->loop, and its handler runs
 * the callbacks there, on the loop thread, in the loop.  The submitter owns
 * the io and its buffer; the engine only links it while it is in flight.
 * Create and destroy run on the loop thread. */
struct tgt_aio;
/* What the engine calls of the layer above: round_begin() and round_end()
 * bracket each round of completion callbacks (conn_tx.c's batch, so that
 * the ios and responses the callbacks start go out together). */
struct tgt_aio_hooks {
    void (*round_begin)(struct tgt_server *srv);
    void (*round_end)(struct tgt_server *srv);
};
int tgt_aio_create(struct tgt_server *srv, const struct tgt_aio_hooks *hooks,
                   struct tgt_aio **out);
/* Waits for every io in flight (running its callback, which may submit
 * more, on the calling thread), joins the workers, then frees the engine. */
void tgt_aio_destroy(struct tgt_aio *aio);
/* "io_uring" or "thread pool", for the log. */
const char *tgt_aio_name(const struct tgt_aio *aio);

/* Brackets a round of completion callbacks run outside the engine (the
 * emulated disk's timer), as the engine's own are (struct tgt_aio_hooks). */
void tgt_aio_round_begin(struct tgt_aio *aio);
void tgt_aio_round_end(struct tgt_aio *aio);

/* Inside a batch, ring submissions wait for the end of the outermost one
 * (tgt_batch_end() in conn_tx.c brackets them). */
void tgt_aio_batch_begin(struct tgt_aio *aio);
void tgt_aio_batch_end(struct tgt_aio *aio);

/* l2cache.c: the L2 between the SCSI commands and the stores (its
 * header comment says what it does to each io). */
struct tgt_l2;
/* Starts io on io->lun, through the L2 if any, then its store (see
 * tgt_io_done_fn: a READ served by the L2 completes inline). */
void tgt_io_submit(struct tgt_io *io);
/* Sets up srv->l2: bytes (whole 64 KiB blocks) under the cache/ policy
 * named policy (NULL: TGT_L2_DEFAULT_POLICY).  0 or a negative errno,
 * logged. */
int tgt_l2_create(struct tgt_server *srv, uint64_t bytes, const char *policy);
/* Adds the L2's counters to out (nothing without an L2). */
void tgt_l2_stats(const struct tgt_server *srv, struct tgt_stats *out);
/* The L2's write generation now (0 without an L2): a DEMOTE takes it
 * when its command arrives, before its Data-Out. */
uint64_t tgt_l2_gen(const struct tgt_server *srv);
/* DEMOTE (target.h) of len bytes at byte off of lun from buf, whose
 * command arrived at generation gen: its whole blocks are offered to the
 * policy.  Ignored when a write started or ended since gen, or is in
 * flight (a write sent after the DEMOTE may have run while its Data-Out
 * was on the way: the bytes may be older than it).  Blocks kept. */
uint32_t tgt_l2_demote(struct tgt_lun *lun, uint64_t off, const uint8_t *buf, size_t len,
                       uint64_t gen);
/* 1 when srv has an L2 whose policy keeps demoted blocks. */
int tgt_l2_takes_demotes(const struct tgt_server *srv);
/* Logs the counters and frees the L2 (no io may be in flight). */
void tgt_l2_destroy(struct tgt_server *srv);
/* Used by stores: run io on fd through the server's engine. */
void tgt_aio_submit(struct tgt_aio *aio, int fd, struct tgt_io *io);

struct tgt_lun {
    struct tgt_server *srv;
    int index;
    const struct tgt_store_ops *ops;
    int fd;                  /* file and block stores */
    int dfd;                 /* the same opened with O_DIRECT, or -1 */
    int direct;              /* O_DIRECT was asked for (an L2): buffered
                              * I/O on fd drops its pages (l2cache.c) */
    uint64_t fadvise_failed; /* posix_fadvise(DONTNEED) refusals */
    uint8_t *map;            /* read-only mapping of fd: READ data is
                              * sent from it when cached; NULL: none */
    uint8_t *mem;            /* memory store */
    struct tgt_disk *disk;   /* emulated disk (store_disk.c), NULL: none */
    uint64_t size;           /* bytes, a multiple of the block size */
    uint64_t nblocks;
    uint32_t block_size;
    int can_punch;           /* UNMAP / WRITE SAME with UNMAP supported */
    /* Write-behind (store_fd.c): bytes of buffered WRITEs completed since
     * the last writeback start and the span they cover; the io that
     * starts writeback (one at a time: wb_busy); counters for the log. */
    uint64_t wb_bytes, wb_lo, wb_hi;
    int wb_busy, wb_off;
    struct tgt_io wb_io;
    uint64_t wb_starts, wb_started_bytes;
    char serial[24];
    uint8_t naa[16];         /* NAA type 6 identifier */
    struct tgt_conn *reserved_by; /* RESERVE(6) holder, NULL when free */
    struct tgt_pr *pr;       /* persistent reservations (scsi_pr.c), NULL:
                              * no registration ever made */
    /* Write ordering (order.c): writers with backing I/O started, and
     * writers waiting for an overlapping exclusive one (ORWRITE). */
    struct tgt_task *ord_active, *ord_wait_head, *ord_wait_tail;
    uint32_t ord_nexcl;      /* exclusive tasks active or waiting */
    int ord_walking, ord_again;
};

struct tgt_auth {
    char *user, *secret, *mutual_user, *mutual_secret;
    int discovery;           /* CHAP for discovery sessions too */
};

struct tgt_server {
    struct evloop *loop;
    char *iqn;
    char *portal_host;
    uint16_t port;
    int listen_fd;
    struct tgt_lun luns[TGT_MAX_LUNS];
    int nluns;
    struct tgt_auth auth;
    struct tgt_conn *conns;  /* every connection not yet freed */
    uint16_t next_tsih;
    uint32_t next_ttt;
    struct tgt_aio *aio;
    struct tgt_l2 *l2;       /* the L2 cache (l2cache.c), NULL: none */
    const struct tgt_scsi_upcalls *scsi_up;   /* set by tgt_server_create() */
    struct tgt_stats stats;
    /* Batch of one loop turn (tgt_batch_begin): connections whose
     * responses wait for its end, each holding a reference. */
    int batch;
    struct tgt_conn *tx_pending;
};

/* ---- connections (conn.c, conn_rx.c, conn_tx.c, ffp.c) ---- */

enum tgt_conn_state { CONN_LOGIN, CONN_FULL, CONN_LOGOUT, CONN_CLOSED };

/* How a connection moves bytes: the socket, or a memory feeder in the fuzz
 * harness.  Both return bytes moved, 0 on end of stream (recv), or a
 * negative errno (-EAGAIN when nothing can move now). */
/* How a connection moves bytes: each returns bytes moved or -errno
 * (-EAGAIN when the socket is full or dry).  sendv's more: more data
 * follows at once (a file segment: MSG_MORE, so a header does not go out
 * alone).  sendfile (NULL: not offered) sends len bytes of fd from off
 * straight from the page cache, without a copy into the socket. */
struct tgt_transport {
    ssize_t (*recv)(struct tgt_conn *c, void *buf, size_t len);
    ssize_t (*sendv)(struct tgt_conn *c, const struct iovec *iov, int iovcnt, int more);
    ssize_t (*sendfile)(struct tgt_conn *c, int fd, uint64_t off, size_t len);
};

struct tgt_params {
    uint32_t peer_mrdsl;     /* initiator's MaxRecvDataSegmentLength */
    uint32_t max_burst;
    uint32_t first_burst;
    uint32_t max_r2t;
    int immediate_data;
    int initial_r2t;
    int header_digest;
    int data_digest;
};

struct tgt_txpdu {
    struct tgt_txpdu *next;
    uint8_t hdr[ISCSI_BHS_LEN + ISCSI_DIGEST_LEN];
    uint8_t trailer[3 + ISCSI_DIGEST_LEN];
    struct iovec iov[3];     /* header, data (file_fd >= 0: its length
                              * only), padding and digest */
    int iovcnt;
    int iov_pos;             /* first iov not fully sent */
    int file_fd;             /* data sent by sendfile from here, or -1 */
    uint64_t file_off;       /* its next byte */
    struct tgt_task *task;   /* buffer owner, or NULL */
    uint8_t *owned;          /* data freed after sending */
    int close_after;         /* logout/login reject: close when written */
};

enum rx_phase { RX_BHS, RX_AHS, RX_DATA, RX_TRAILER };

struct tgt_login;

struct tgt_conn {
    struct tgt_server *srv;
    struct tgt_conn *next, *prev;
    int fd;
    const struct tgt_transport *tp;
    void *tp_user;
    enum tgt_conn_state state;
    int refs;
    char peer[64];

    /* session: one connection per session */
    int discovery;
    uint8_t isid[6];
    uint16_t tsih;
    uint16_t cid;
    char initiator[224];
    uint32_t exp_cmdsn, max_cmdsn, stat_sn;
    struct tgt_params p;
    int digests_on;              /* negotiated digests apply (full feature) */
    struct tgt_login *login;     /* login.c's state until full feature */
    /* Frees login (set by login.c with it: conn.c, below login.c, calls
     * it when the connection closes during login). */
    void (*login_free)(struct tgt_conn *c);
    uint64_t ua_reset;       /* LUNs with a pending reset unit attention */
    uint16_t ua_pr[TGT_MAX_LUNS]; /* per LUN: ASC of a pending persistent
                                   * reservation unit attention, 0: none */

    /* receive state machine */
    enum rx_phase rx_phase;
    uint8_t rx_bhs[ISCSI_BHS_LEN];
    uint8_t rx_ahs[1024 + ISCSI_DIGEST_LEN];
    uint8_t rx_trailer[3 + ISCSI_DIGEST_LEN];
    uint32_t rx_need, rx_have;   /* bytes of the current phase */
    uint32_t rx_dlen;            /* data segment length of current PDU */
    uint8_t *rx_dst;             /* where data goes; NULL: discard */
    uint32_t rx_keep;            /* bytes stored at rx_dst, rest discarded */
    uint8_t *rx_seg;             /* owned buffer for non-SCSI data */
    uint32_t rx_seg_cap;
    uint32_t rx_crc;             /* running data digest */
    struct tgt_task *rx_task;    /* task the data belongs to */
    uint8_t rx_stage[65536];     /* read-ahead of small PDUs */
    uint32_t rx_stage_pos, rx_stage_end;
    int in_rx;                   /* batching: tx waits for the end of rx */
    uint64_t rx_resume_timer;    /* rx_defer(): holds a reference on c */

    /* transmit queue */
    struct tgt_txpdu *tx_head, *tx_tail;
    int tx_blocked;              /* waiting for EV_WRITE */
    struct tgt_conn *tx_next;    /* on srv->tx_pending */
    int tx_queued;

    struct tgt_task *tasks;
    uint32_t ntasks;
};

/* Whether Data-In of c may point into a LUN's mapping (no data digest):
 * the digest would be computed at queueing time over bytes that a later
 * write may change before they are sent. */
static inline int tgt_conn_send_mapped_ok(const struct tgt_conn *c)
{
    return !(c->p.data_digest && c->digests_on);
}

/* ---- tasks ---- */

enum tgt_dir { DIR_NONE, DIR_READ, DIR_WRITE };

struct tgt_r2t {
    uint32_t ttt;
    uint32_t offset, len, received;
    uint32_t datasn;
    int active;
};

struct tgt_task {
    struct tgt_conn *conn;
    struct tgt_task *next, *prev;
    struct tgt_lun *lun;     /* NULL when the LUN does not exist */
    uint8_t lun_raw[8];
    uint32_t itt, cmdsn, edtl;
    uint8_t cdb[16];
    uint8_t flags;
    int immediate;

    /* decoded by scsi_prepare() */
    enum tgt_dir dir;
    uint64_t lba;
    uint32_t nblocks;
    uint32_t xfer;           /* SPDTL: bytes the CDB transfers */
    int fua;
    int dpo;                 /* READ with DPO: see struct tgt_io */

    /* data */
    uint8_t *buf;
    uint32_t buf_len;
    uint32_t want;           /* Data-Out bytes we keep */
    uint32_t got;
    uint32_t unsol_got;      /* immediate + unsolicited bytes seen */
    uint32_t unsol_datasn;
    int unsol_done;
    uint32_t r2t_next;       /* next offset to solicit */
    uint32_t r2tsn;
    struct tgt_r2t r2t[TGT_MAX_OUT_R2T];
    int data_ready;

    /* result */
    uint8_t status;
    uint8_t sense[32];
    uint8_t sense_len;
    uint32_t data_len;       /* Data-In bytes produced */
    int data_in_mapped;      /* Data-In is sent from lun->map at lba */
    int aborted;
    int linked;              /* on conn->tasks (counts in ntasks) */
    int io_busy;
    int tx_refs;
    int holds;               /* task_hold(): kept while responses are queued */
    void (*cont)(struct tgt_task *t); /* next step after backing I/O */
    uint64_t cur_lba;        /* progress of multi-step commands */
    uint32_t left;
    int stage;
    uint8_t *aux;            /* second buffer (verify compare) */
    uint64_t l2_gen;         /* DEMOTE: tgt_l2_gen() at its arrival */
    struct tgt_io io;

    /* write ordering (order.c) */
    enum { ORD_NONE, ORD_ACTIVE, ORD_WAITING } ord_state;
    int ord_excl;
    uint64_t ord_lba, ord_n;
    struct tgt_task *ord_next, *ord_prev;
    void (*ord_run)(struct tgt_task *t);
};

/* ==== Functions by file, bottom-up (the layers at the top of this file):
 * a file calls only what is declared above its own section. ==== */

/* chap.c */
/* MD5 (RFC 1321) of the concatenation of nparts byte strings. */
void tgt_md5(const uint8_t *const *parts, const size_t *lens, int nparts, uint8_t out[16]);
/* The CHAP response MD5(id || secret || challenge) (RFC 1994 4.1). */
void tgt_chap_response(uint8_t id, const char *secret, const uint8_t *chal, size_t clen,
                       uint8_t out[16]);
/* 1 when got is that response, 0 when not; takes the same time either way. */
int tgt_chap_check(uint8_t id, const char *secret, const uint8_t *chal, size_t clen,
                   const uint8_t got[16]);

/* order.c: overlapping writes against ORWRITE.  tgt_order_run() runs
 * run(t) now or once the exclusive (excl) or shared range [lba, lba+n)
 * no longer conflicts; tgt_order_leave() ends t's part (idempotent). */
void tgt_order_run(struct tgt_task *t, uint64_t lba, uint64_t n, int excl,
                   void (*run)(struct tgt_task *t));
void tgt_order_leave(struct tgt_task *t);

/* store_lun.c (the engine and the stores are declared with struct tgt_io above) */
int tgt_lun_open(struct tgt_server *srv, struct tgt_lun *lun, const struct tgt_lun_config *cfg);
/* 1 when len bytes at off are all in the page cache of lun->fd. */
int tgt_lun_cached(const struct tgt_lun *lun, uint64_t off, size_t len);
/* Completes at once what the store holds back (its drain), before the
 * engine is destroyed. */
void tgt_lun_drain(struct tgt_lun *lun);
/* Flushes, unmaps and closes the store (the LUN's SCSI state, such as its
 * persistent reservations, is the caller's: scsi_pr_free()). */
void tgt_lun_close(struct tgt_lun *lun);

/* conn.c (conn.h: what only the connection files call) */
void tgt_conn_close(struct tgt_conn *c, const char *why);
void tgt_conn_put(struct tgt_conn *c);
/* Aborts c's tasks on lun (NULL: on every LUN). */
void tgt_conn_abort_tasks(struct tgt_conn *c, const struct tgt_lun *lun);

/* ---- the SCSI layer (scsi*.c; scsi.h: what its files share) ---- */

/* What the SCSI layer calls of the connection layer above it, which
 * tgt_server_create() sets (srv->scsi_up): the scsi*.c files never call
 * conn_tx.c, ffp.c or login.c directly. */
struct tgt_scsi_upcalls {
    /* The command has its status (and its Data-In in t->buf or the LUN's
     * mapping): send the response and let the task go.  It may close the
     * connection and free t. */
    void (*task_complete)(struct tgt_task *t);
};

/* scsi_task.c: CHECK CONDITION with this sense key and ASC/ASCQ. */
void scsi_set_sense(struct tgt_task *t, uint8_t key, uint16_t asc);
/* scsi_pr.c: frees the LUN's persistent reservations (at LUN close). */
void scsi_pr_free(struct tgt_lun *lun);
/* scsi.c */
/* Decodes the CDB: sets dir, xfer, lba, nblocks, or a CHECK CONDITION.
 * Returns 0 when the command may proceed to data transfer/execution. */
int scsi_prepare(struct tgt_task *t);
/* Executes a prepared command whose Data-Out (if any) is in t->buf.
 * Ends, perhaps later (after backing I/O), in srv->scsi_up->task_complete(). */
void scsi_execute(struct tgt_task *t);
int scsi_lun_init(struct tgt_lun *lun);
/* SPDTL > EDTL on a block write: cut it to the whole blocks of EDTL.
 * Returns -1 when the command cannot be cut. */
int scsi_clip_write(struct tgt_task *t);

/* ---- the iSCSI layer ---- */

/* conn_tx.c */
/* A batch spans one event's work (a receive run, a round of backing io
 * completions): the backing ios it starts go to the kernel in one
 * submission and each connection's responses in one send, at the end of
 * the outermost batch.  Batches nest. */
void tgt_batch_begin(struct tgt_server *srv);
void tgt_batch_end(struct tgt_server *srv);
void tgt_conn_tx(struct tgt_conn *c);
/* Queue a PDU with header h (48 bytes) and optional data (copied when
 * owned is NULL and task is NULL). Returns 0 or -ENOMEM. */
int tgt_conn_queue(struct tgt_conn *c, const uint8_t *h, const void *data, uint32_t dlen,
                   struct tgt_task *task, int copy);
/* The same for a Data-In whose dlen bytes are sent from fd at off by the
 * transport's sendfile (which c->tp must offer; no data digest: the
 * bytes are read at send time).  fd must stay open until the PDU is
 * sent or dropped. */
int tgt_conn_queue_file(struct tgt_conn *c, const uint8_t *h, int fd, uint64_t off, uint32_t dlen);
/* StatSN (advanced when advance), ExpCmdSN and MaxCmdSN of a response. */
void tgt_conn_fill_sn(struct tgt_conn *c, uint8_t *h, int advance);
/* Sends the response of a command that has its status (ffp.c calls it;
 * the SCSI files reach it through srv->scsi_up->task_complete). */
void tgt_task_complete(struct tgt_task *t);

/* login.c */
int tgt_login_pdu(struct tgt_conn *c, const uint8_t *bhs, const uint8_t *data, uint32_t dlen);
int tgt_text_pdu(struct tgt_conn *c, const uint8_t *bhs, const uint8_t *data, uint32_t dlen);
/* Local address of the connection as "host:port" for TargetAddress. */
void tgt_conn_local_addr(const struct tgt_conn *c, char *buf, size_t len);

/* ffp.c: see conn.h (tgt_pdu_ops[]) */

/* conn_rx.c */
/* Runs the receive state machine over everything available. */
void tgt_conn_rx(struct tgt_conn *c);
/* Sets the receive state machine to wait for a first header (a new
 * connection). */
void tgt_conn_rx_start(struct tgt_conn *c);

/* server.c (and target.h's entry points) */
/* A new connection on fd, registered on the loop when fd >= 0; tp NULL:
 * the socket transport. */
int tgt_conn_create(struct tgt_server *srv, int fd, const struct tgt_transport *tp,
                    void *tp_user, struct tgt_conn **out);

#endif
