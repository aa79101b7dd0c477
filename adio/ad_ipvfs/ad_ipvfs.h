/* ad_ipvfs: the ROMIO driver for iPVFS (file names "ipvfs:/path").
 *
 * The driver is a thin layer over libipvfs-client (adio/client/
 * ipvfs_client.h).  Contiguous accesses go straight to the client;
 * noncontiguous ones (derived memory types, file views) are flattened into
 * list I/O here (ad_ipvfs_strided.c).  A collective call goes either each
 * rank's own list I/O or two-phase, chosen per call and the same on every
 * rank (ad_ipvfs_collpick.c gathers the access, ad_ipvfs_choice.h states
 * the rule: hints romio_cb_write/read=enable force two-phase, =disable
 * independent; overlapping writes go two-phase; else a calibrated cost
 * model).  Two-phase is our own code (ad_ipvfs_coll.c): the aggregators'
 * file domains follow the stripe layout (each aggregator talks to its own
 * I/O nodes), rounds are bounded by cb_buffer_size, and aggregators use
 * list I/O without read-modify-write.  The nonblocking collectives do not
 * choose (ROMIO's two-phase, below).  With ipvfs_coll=generic it is ROMIO's two-phase code
 * (ADIOI_GEN_*StridedColl) with file domains aligned to the file's stripe
 * unit (fd->hints->striping_unit, see ad_ipvfs_hints.c).  Nonblocking
 * independent calls (MPI_File_iread, _iwrite and their _at forms) return
 * an MPI generalized request that sends the access in bounded pieces as
 * MPI_Test and MPI_Wait progress it, and that MPI_Cancel cancels while
 * none has left ("Nonblocking independent I/O" below, ad_ipvfs_ireq.c; in
 * atomic mode they block, as ROMIO does for contiguous ones); the
 * collective ones
 * (MPI_File_iread_all...) are ROMIO's nonblocking two-phase state machine,
 * progressed by MPI_Test/MPI_Wait.
 *
 * Hints (MPI_Info; read when the file is opened; ROMIO's cb_nodes,
 * cb_buffer_size and romio_cb_write/read act as described above):
 *   ipvfs_map        path of the server map; overrides $IPVFS_MAP.
 *   striping_unit    bytes per stripe unit; 0 means the cluster default.
 *                    Only used when the open creates the file.
 *   striping_factor  number of I/O nodes to stripe over; 0 means all of
 *                    them, and so do values above their number.  Only used
 *                    when the open creates the file.
 *   ipvfs_io_schedule     first | random | hash (default hash): the order
 *                    in which a rank sends its pieces to the I/O nodes
 *                    (enum ipvfs_schedule in ipvfs_client.h).
 *   ipvfs_schedule_block  b, a size (default 262144; "256K" as in
 *                    common/size.h): the longest run of
 *                    adjacent bytes one request carries: a large contiguous
 *                    access goes out in pieces of b that the heuristic
 *                    orders; the short pieces of a noncontiguous access
 *                    share one list request per server (at most
 *                    IPVFS_MAX_PAIRS pairs and IPVFS_MAX_IO_BYTES).
 *   ipvfs_readahead  a size from 0 to 1G ("4M"): the sequential read-ahead
 *                    window the I/O nodes use for this file's reads (0 =
 *                    none); unset, each I/O node's --readahead applies
 *                    (a server started with --readahead 0 reads no
 *                    file ahead).  Sent with every READ, in 64 KiB units
 *                    rounded up.
 *   ipvfs_qos_class  the application class this process's READs and
 *                    WRITEs count for at the I/O nodes' QoS schedulers
 *                    (1 to 63 printable bytes, no spaces; overrides
 *                    $IPVFS_QOS_CLASS and the job's default; doc/qos.md).
 *   ipvfs_qos_rate   the class's SLO throughput in MB/s, with
 *                    ipvfs_qos_latency (both or neither): set at each
 *                    I/O node where the class has none (doc/mpi.md).
 *   ipvfs_qos_latency  the class's SLO bound on p95 latency, in ms.
 *   ipvfs_listio     enable (default) | disable: disable sends a
 *                    noncontiguous access one contiguous piece per round
 *                    trip (the way without list I/O; for comparisons).
 *   ipvfs_coll       ipvfs (default) | generic: generic gives ROMIO's
 *                    two-phase code for the blocking collectives instead
 *                    of ours (for comparisons).
 *   ipvfs_coll_align enable (default) | disable: disable gives ROMIO's
 *                    two-phase (generic, and the nonblocking collectives)
 *                    even, unaligned file domains (for comparisons).
 * A striping value that is not an integer from 0 to INT_MAX, and a value
 * of the ipvfs_ keys above that is not one of the listed ones (for
 * ipvfs_schedule_block: a size from 1 to INT_MAX bytes; for
 * ipvfs_readahead: a size from 0 to 1G), fails
 * MPI_File_open (or MPI_File_set_info/set_view) with MPI_ERR_ARG and a
 * message naming the hint.  The ipvfs_ keys may change after the open.  After the open,
 * MPI_File_get_info reports the file's actual striping_unit and
 * striping_factor, the ipvfs_map and the ipvfs_ keys in effect; a handle
 * opened with striping_factor=0 on a file striped over all I/O nodes
 * reports 0, the setting in effect as the user wrote it (ROMIO's
 * file_info test expects that echo).
 *
 * Semantics: MPI_File_sync is durable when it returns (DF_SYNC on every
 * datafile).  Shared file pointers live on the metadata rank
 * (ad_ipvfs_sharedfp.c, with adio/romio-fixes/06-ipvfs-shared-fp.patch);
 * atomic mode takes byte-range locks there around every access
 * (ad_ipvfs_lock.c).  MPI_File_delete finds the
 * cluster through $IPVFS_MAP (it takes no hints); MPI_MODE_DELETE_ON_CLOSE
 * removes through the file's own cluster (ad_ipvfs_close.c).  Deleting a file that
 * others still have open removes its data at once (no POSIX
 * unlink-after-close semantics; MPI leaves this implementation-defined).
 *
 * Errors: every failure of the client library goes through
 * ADIOI_IPVFS_Error(), which picks the MPI error class and prints the
 * library's message (what, which file, which server, why). */
#ifndef AD_IPVFS_H_INCLUDED
#define AD_IPVFS_H_INCLUDED

#include "adio.h"

#include "adio/client/ipvfs_client.h"

#include "ad_ipvfs_choice.h"

/* Pairs (and iovecs) per list I/O batch of a noncontiguous access. */
#define ADIOI_IPVFS_LIST_MAX IPVFS_MAX_PAIRS

/* Driver options from the hints (besides the client's ipvfs_io_opts). */
struct ADIOI_IPVFS_opts {
    struct ipvfs_io_opts io;
    int piecewise;              /* ipvfs_listio=disable */
    int coll_unaligned;         /* ipvfs_coll_align=disable */
    int coll_generic;           /* ipvfs_coll=generic */
};

/* A file's queue of nonblocking requests (ad_ipvfs_ireq.c; the window
 * and the requests' states: "Nonblocking independent I/O" below). */
struct ADIOI_IPVFS_ireq;
struct ADIOI_IPVFS_nbq {
    struct ADIOI_IPVFS_ireq *head;      /* in post order */
    unsigned out_pieces;        /* started and unfinished */
    uint64_t out_bytes;         /* their bytes */
};

/* The collective decision's online calibration (ad_ipvfs_choice.h): the
 * file's calibration, and the timing of the last call decided by
 * exchange (the same flags on every rank: all make the same calls). */
struct ADIOI_IPVFS_coll_timing {
    struct coll_calib cal[2];   /* [writing] */
    int pending;                /* a decided call is running: time it */
    int have;                   /* last_us holds its time, for the next exchange */
    int explored;               /* the last decision explored (not to be reused) */
    int writing;                /* its direction, path and model */
    enum coll_path path;
    double model_us;
    double t0;                  /* MPI_Wtime at its decision (at its start when
                                 * its I/O ran during the decision) */
    double last_us;             /* its wall time on this rank */
};

/* What fd->fs_ptr points to while the file is open. */
struct ADIOI_IPVFS_fs {
    struct ipvfs_file *file;
    struct ADIOI_IPVFS_opts opts;
    int factor_all;             /* get_info shows striping_factor 0 (ADIOI_IPVFS_Factor_all) */
    int coll_read_twophase;     /* the last collective read's choice (ad_ipvfs_collpick.c) */
    int coll_read_left;         /* collective reads that take it again */
    int coll_read_inherit;      /* the next read may take the last write's choice */
    int coll_write_spec;        /* the next write may run its list I/O during its
                                 * decision (ad_ipvfs_collpick.c) */
    struct ADIOI_IPVFS_nbq nbq; /* its nonblocking requests (ad_ipvfs_ireq.c) */
    struct ADIOI_IPVFS_coll_timing coll_time;   /* ad_ipvfs_collpick.c */
};

static inline struct ipvfs_file *ADIOI_IPVFS_File(ADIO_File fd)
{
    return fd->fs_ptr ? ((struct ADIOI_IPVFS_fs *) fd->fs_ptr)->file : NULL;
}

static inline int ADIOI_IPVFS_Piecewise(ADIO_File fd)
{
    return ((struct ADIOI_IPVFS_fs *) fd->fs_ptr)->opts.piecewise;
}

static inline int ADIOI_IPVFS_Coll_generic(ADIO_File fd)
{
    return ((struct ADIOI_IPVFS_fs *) fd->fs_ptr)->opts.coll_generic;
}

/* Reads the ipvfs_ option keys present in info over *opts (the others
 * keep their value).  -EINVAL with a message naming the hint when a
 * value is malformed (*opts unchanged then). */
int ADIOI_IPVFS_Parse_opts(MPI_Info info, const char *filename, struct ADIOI_IPVFS_opts *opts,
                           struct ipvfs_error *out_err);

/* Makes opts the file's options (client and driver) and shows them in
 * fd->info; the stripe alignment of collective file domains follows. */
int ADIOI_IPVFS_Apply_opts(ADIO_File fd, const struct ADIOI_IPVFS_opts *opts,
                           struct ipvfs_error *out_err);

/* The one translation of a client error into an MPI error code. */
int ADIOI_IPVFS_Error(const char *myname, int line, const struct ipvfs_error *err);

/* The MPI_COMM_WORLD rank, our client id in HELLO. */
int ADIOI_IPVFS_Client_id(void);

/* 1 when get_info is to show striping_factor as 0 (fs->factor_all): the
 * raw hint is 0 and the file is striped over all I/O nodes.  The open
 * asks before Apply_opts, which replaces the raw hints in fd->info. */
int ADIOI_IPVFS_Factor_all(ADIO_File fd);

/* After a successful open: fd->info shows the hints in effect. */
void ADIOI_IPVFS_Show_hints(ADIO_File fd, const char *map_path);

void ADIOI_IPVFS_Open(ADIO_File fd, int *error_code);
void ADIOI_IPVFS_OpenColl(ADIO_File fd, int rank, int access_mode, int *error_code);
void ADIOI_IPVFS_Close(ADIO_File fd, int *error_code);
void ADIOI_IPVFS_ReadContig(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                            int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                            int *error_code);
void ADIOI_IPVFS_WriteContig(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                             int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                             int *error_code);
void ADIOI_IPVFS_ReadStrided(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                             int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                             int *error_code);
void ADIOI_IPVFS_WriteStrided(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                              int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                              int *error_code);
void ADIOI_IPVFS_ReadStridedColl(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                                 int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                                 int *error_code);
void ADIOI_IPVFS_WriteStridedColl(ADIO_File fd, const void *buf, int count,
                                  MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                  ADIO_Status * status, int *error_code);
void ADIOI_IPVFS_Fcntl(ADIO_File fd, int flag, ADIO_Fcntl_t * fcntl_struct, int *error_code);
void ADIOI_IPVFS_SetInfo(ADIO_File fd, MPI_Info users_info, int *error_code);
void ADIOI_IPVFS_Flush(ADIO_File fd, int *error_code);
void ADIOI_IPVFS_Resize(ADIO_File fd, ADIO_Offset size, int *error_code);
/* Poll-function pacing (ad_ipvfs_pace.c): Pace_poll at the start of a
 * poll function naps when it is called in a loop; Pace_done at its end. */
struct ADIOI_IPVFS_pace {
    double last_poll;           /* MPI_Wtime when the last poll returned */
    long nap_ns;                /* next nap of a polling loop */
};
void ADIOI_IPVFS_Pace_poll(struct ADIOI_IPVFS_pace *p);
void ADIOI_IPVFS_Pace_done(struct ADIOI_IPVFS_pace *p);
/* Completes the nonblocking collective that rc (its start's return code)
 * started as *req, napping between MPI_Tests; returns an MPI code. */
int ADIOI_IPVFS_Quiet_wait(int rc, MPI_Request * req);

void ADIOI_IPVFS_Delete(const char *filename, int *error_code);
/* Close removed filename for delete-on-close: the next Delete of it passes. */
void ADIOI_IPVFS_Note_removed(const char *filename);
int ADIOI_IPVFS_Feature(ADIO_File fd, int flag);

/* Nonblocking independent I/O (ad_ipvfs_ireq.c): MPI_File_iread/iwrite
 * and their _at forms, contiguous or not, as generalized requests sent in
 * bounded pieces.
 *
 * Window: each open file has one queue of nonblocking requests (struct
 * ADIOI_IPVFS_nbq in its fs); at most ADIOI_IPVFS_NB_PIECES pieces and
 * ADIOI_IPVFS_NB_BYTES bytes of them are started and unfinished at a
 * time, each piece at most ADIOI_IPVFS_NB_PIECE bytes (and one list batch
 * of ADIOI_IPVFS_LIST_MAX pairs).  So the client's buffers and the bytes
 * in flight stay bounded whatever the size of the access, and a request
 * posted behind a large one waits in the queue with nothing sent.  The
 * piece count is there to bound the client's bookkeeping, not the
 * servers' load: the request engine keeps each server's own window
 * (xfer_engine.h), so pieces beyond it wait on the channel, and the count
 * must not be below what the servers of a file serve at once (8 a
 * connection): at 4 a program posting 64 KiB reads on one handle stopped
 * at 626 reads/s, where 64 keeps up at 893 (2 x 4 emulated disks,
 * benchmarks/client-queue.sh --handles 1 --shape 2x4).
 *
 * States of a request (struct ADIOI_IPVFS_ireq):
 *   QUEUED    posted, no piece started (the window is taken by earlier
 *             requests of the file);
 *   STARTED   some pieces handed to the client, more to plan;
 *   PLANNED   every piece started (or a failure stopped the planning),
 *             some unfinished;
 *   DONE      every started piece finished; it leaves the queue, and the
 *             next MPI_Test/MPI_Wait completes it (MPI_Grequest_complete)
 *             with the byte count and the first error;
 *   CANCELLED MPI_Cancel in QUEUED: it leaves the queue at once and
 *             completes with MPI_Test_cancelled true and no bytes moved.
 * MPI_Cancel in any later state does nothing: the request completes
 * normally, all of it (the standard allows that; bytes on the wire cannot
 * be taken back, and a half-done write would be neither outcome).
 * Transitions happen only inside the I* call (its pieces start at once
 * when the window has room), MPI_Test (poll: finishes what the sockets
 * completed and starts the next pieces, never blocks), MPI_Wait (blocks
 * on the file's oldest unfinished piece, then as MPI_Test) and the file's
 * close, which drives every queued request to DONE first.  The pieces of
 * a file's requests start in post order, oldest request first.
 *
 * Ownership: Ireq_new takes the plan (ops->free frees it with the
 * request; NULL return: the caller still owns it).  Ireq_post starts the
 * MPI request and queues it (an MPI code; on failure the ireq is still
 * the caller's, to free with Ireq_free).  After a successful post MPI
 * owns it.  Ireq_free drives what it started to the end and frees it. */
#define ADIOI_IPVFS_NB_PIECE (4u << 20)
#define ADIOI_IPVFS_NB_PIECES 64u
#define ADIOI_IPVFS_NB_BYTES (16u << 20)

/* A request's planner: start_next starts the next piece of the access in
 * order, at most max_bytes (ipvfs_aio_start), giving *out_aio and its
 * bytes *out_bytes (> 0); 0, or a negative errno with *out_err filled and
 * nothing started.  It is only called while bytes are left. */
struct ADIOI_IPVFS_plan_ops {
    int (*start_next)(void *plan, uint64_t max_bytes, struct ipvfs_aio **out_aio,
                      uint64_t *out_bytes, struct ipvfs_error *out_err);
    void (*free)(void *plan);
};

struct ADIOI_IPVFS_ireq *ADIOI_IPVFS_Ireq_new(const struct ADIOI_IPVFS_plan_ops *ops, void *plan,
                                              uint64_t total);
int ADIOI_IPVFS_Ireq_post(struct ADIOI_IPVFS_ireq *r, struct ADIOI_IPVFS_nbq *q,
                          MPI_Request * request);
void ADIOI_IPVFS_Ireq_free(struct ADIOI_IPVFS_ireq *r);
/* Drives every request of q to DONE (the file's close). */
void ADIOI_IPVFS_Nbq_drain(struct ADIOI_IPVFS_nbq *q);

/* Plans a nonblocking access (ad_ipvfs_strided.c): with contig the file
 * side is count * datatype bytes from byte offset (the Contig entry
 * points; offset ignored for the individual pointer), else the file view
 * from offset in etypes.  Moves the individual pointer past the access.
 * *out_plan (for ADIOI_IPVFS_Plan_ops) and its bytes *out_total; -ENOMEM
 * with *out_err filled. */
extern const struct ADIOI_IPVFS_plan_ops ADIOI_IPVFS_Plan_ops;
int ADIOI_IPVFS_Plan_new(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                         int file_ptr_type, ADIO_Offset offset, int contig, int writing,
                         void **out_plan, uint64_t *out_total, struct ipvfs_error *out_err);
/* The I* entry points' common part (ad_ipvfs_iostrided.c). */
void ADIOI_IPVFS_Irdwr(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                       int file_ptr_type, ADIO_Offset offset, int contig, int writing,
                       MPI_Request * request, int *error_code);

/* Whether this collective call goes two-phase (*out_twophase 1) or each
 * rank's own list I/O (0), the same answer on every rank
 * (ad_ipvfs_collpick.c, the rule in ad_ipvfs_choice.h), in two steps.
 * Coll_pick_begin: offs/lens are the rank's n file pieces, start/end its
 * first and last byte (end < start: nothing), as ADIOI_Calc_my_off_len
 * gives them.  When a hint, atomic mode or an earlier read's decision
 * decides, *out_pick is NULL and *out_twophase the answer, with no
 * communication.  Else *out_pick is a decision under way (its exchange
 * posted) that the caller must pass to Coll_pick_end, which completes the
 * exchange (collective over fd->comm), sets *out_twophase and frees it;
 * *out_speculate 1 then says the caller may run the rank's own list I/O
 * in between (a write, after a write of the file went that way): its
 * result stands when the answer is 0; when it is 1, the two-phase write
 * that follows writes every byte again, so overlapping pieces still end
 * with the highest rank's data.  Both return an MPI code (a failed MPI
 * call); after a failed begin there is nothing to end. */
struct ADIOI_IPVFS_pick;
int ADIOI_IPVFS_Coll_pick_begin(ADIO_File fd, int writing, const ADIO_Offset * offs,
                                const ADIO_Offset * lens, MPI_Count n, ADIO_Offset start,
                                ADIO_Offset end, struct ADIOI_IPVFS_pick **out_pick,
                                int *out_twophase, int *out_speculate);
int ADIOI_IPVFS_Coll_pick_end(ADIO_File fd, struct ADIOI_IPVFS_pick *pick, int *out_twophase);
/* At the end of every collective read or write: times the call for the
 * calibration when Coll_pick decided it by exchange. */
void ADIOI_IPVFS_Coll_done(ADIO_File fd);

/* The blocking noncontiguous worker (ad_ipvfs_strided.c). */
void ADIOI_IPVFS_Rdwr_strided(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                              int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                              int writing, int *error_code);

void ADIOI_IPVFS_IreadContig(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                             int file_ptr_type, ADIO_Offset offset, MPI_Request * request,
                             int *error_code);
void ADIOI_IPVFS_IwriteContig(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                              int file_ptr_type, ADIO_Offset offset, MPI_Request * request,
                              int *error_code);
void ADIOI_IPVFS_IreadStrided(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                              int file_ptr_type, ADIO_Offset offset, MPI_Request * request,
                              int *error_code);
void ADIOI_IPVFS_IwriteStrided(ADIO_File fd, const void *buf, int count,
                               MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                               MPI_Request * request, int *error_code);

/* Nonblocking collectives (ad_ipvfs_icoll.c): ROMIO's generic state
 * machine behind our generalized request.  They return at once with
 * *request started (or *error_code set and *request MPI_REQUEST_NULL);
 * MPI_Test does one step, MPI_Wait steps with naps between (no spinning);
 * the status carries the byte count, MPI_Wait the error code. */
void ADIOI_IPVFS_IreadStridedColl(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                                  int file_ptr_type, ADIO_Offset offset, MPI_Request * request,
                                  int *error_code);
void ADIOI_IPVFS_IwriteStridedColl(ADIO_File fd, const void *buf, int count,
                                   MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                   MPI_Request * request, int *error_code);

/* Atomic mode (ad_ipvfs_lock.c): the table's read and write entry points;
 * they lock while fd->atomicity is set and call the ones above. */
void ADIOI_IPVFS_Atomic_ReadContig(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                                   int file_ptr_type, ADIO_Offset offset,
                                   ADIO_Status * status, int *error_code);
void ADIOI_IPVFS_Atomic_WriteContig(ADIO_File fd, const void *buf, int count,
                                    MPI_Datatype datatype, int file_ptr_type,
                                    ADIO_Offset offset, ADIO_Status * status, int *error_code);
void ADIOI_IPVFS_Atomic_ReadStrided(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                                    int file_ptr_type, ADIO_Offset offset,
                                    ADIO_Status * status, int *error_code);
void ADIOI_IPVFS_Atomic_WriteStrided(ADIO_File fd, const void *buf, int count,
                                     MPI_Datatype datatype, int file_ptr_type,
                                     ADIO_Offset offset, ADIO_Status * status, int *error_code);
/* Shared file pointers (ad_ipvfs_sharedfp.c) are declared in ROMIO's
 * adioi_fs_proto.h by 06-ipvfs-shared-fp.patch: the common code calls them. */

#endif
