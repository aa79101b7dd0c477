/* Collective reads and writes (ReadStridedColl, WriteStridedColl): our
 * two-phase I/O, with file domains that follow the stripe layout.
 *
 * Every rank lists its access as (file offset, length) pieces in view
 * order (ADIOI_Calc_my_off_len, which also moves the individual file
 * pointer), its data being the user's buffer or, for a noncontiguous
 * memory type, a packed copy of it.  Pieces are cut where a stripe unit or
 * a round ends (adio/client/colldom.h): the first cb_nodes ranks of
 * ROMIO's ranklist are the aggregators, each owning whole datafiles (or
 * rows of one), so an aggregator talks to as few I/O nodes as possible,
 * and a round brings an aggregator at most cb_buffer_size distinct bytes.
 * Per round an MPI_Alltoall of counts, an MPI_Alltoallv of (offset,
 * length) pairs and one of the data move each rank's pieces to their
 * aggregator, which sorts them and hands them to list I/O as they are: no
 * read-modify-write of holes, so bytes nobody writes stay untouched.
 * Reads go the other way; requests of several ranks for the same bytes
 * are read once.
 *
 * Errors are collective: any rank's failure (an allocation, a server)
 * stops the rounds at the next check, and every rank returns the error of
 * the lowest failing rank.  Whether a call goes two-phase or each rank
 * does its own list I/O is decided per call, the same on every rank, by
 * ADIOI_IPVFS_Coll_pick_begin/end (ad_ipvfs_collpick.c; the rule, its cost model and
 * calibration in ad_ipvfs_choice.h): romio_cb_write/read=enable forces
 * two-phase, =disable independent, and atomic mode, whose byte-range
 * locks live there, goes independent.  The hint
 * ipvfs_coll=generic gives ROMIO's generic two-phase code instead (for
 * comparisons); the nonblocking collectives are always ROMIO's. */
#include "ad_ipvfs.h"
#include "adio_extern.h"

#include "adio/client/colldom.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bytes per aggregator per round at most: MPI counts are ints. */
#define COLL_MAX_CB (1u << 30)

/* One piece of a rank's access: inside one stripe unit and one round. */
struct piece {
    uint64_t off;
    uint64_t len;
    uint64_t pos;               /* where its data lies in the rank's data */
    uint64_t round;             /* absolute, then relative to the aggregator's first */
    uint32_t agg;
};

/* A piece at the aggregator, with where its data lies there. */
struct agg_piece {
    uint64_t off;
    uint64_t len;
    char *mem;
};

/* Per-round buffers; counts and displacements are per rank. */
struct round_bufs {
    int *meta_out, *meta_in;    /* (pieces, bytes) to and from each rank */
    int *pc_out, *pd_out, *dc_out, *dd_out;     /* pairs and data we send */
    int *pc_in, *pd_in, *dc_in, *dd_in; /* pairs and data we receive */
    uint64_t *pairs_out, *pairs_in;
    char *data_out, *data_in;
};

struct coll_op {
    ADIO_File fd;
    int writing;
    int nprocs, rank;
    struct coll_domain dom;
    struct piece *pieces;
    size_t npieces;
    char *data;                 /* the rank's data in view order */
    char *packed;               /* data when it is a packed copy */
    uint64_t nrounds;
    int failed;
    int short_read;
    struct ipvfs_error err;
    struct round_bufs rb;
};

/* Records the rank's first failure; the steps then go on to the next
 * agreement (agree_errors), where every rank learns of it. */
static void op_fail(struct coll_op *op, int code, const char *what)
{
    if (!op->failed) {
        op->failed = 1;
        op->err.code = code;
        snprintf(op->err.msg, sizeof(op->err.msg), "ipvfs: collective %s of %.200s: %s",
                 op->writing ? "write" : "read", op->fd->filename, what);
    }
}

/* MPI failures end the call at once: the communicator cannot be trusted
 * for the collective error agreement any more. */
#define MPI_TRY(call) do { int mrc_ = (call); if (mrc_ != MPI_SUCCESS) return mrc_; } while (0)

/* Collectives complete without spinning: see ADIOI_IPVFS_Quiet_wait. */
static int quiet_wait(int rc, MPI_Request *req)
{
    return ADIOI_IPVFS_Quiet_wait(rc, req);
}

/* ---- the decision ----------------------------------------------------- */

static void run_independent(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                            int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                            int writing, int *error_code)
{
    int buf_contig, file_contig;

    ADIOI_Datatype_iscontig(datatype, &buf_contig);
    ADIOI_Datatype_iscontig(fd->filetype, &file_contig);
    if (buf_contig && file_contig) {
        if (file_ptr_type == ADIO_EXPLICIT_OFFSET)
            offset = fd->disp + (ADIO_Offset) fd->etype_size * offset;
        if (writing)
            ADIO_WriteContig(fd, buf, count, datatype, file_ptr_type, offset, status,
                             error_code);
        else
            ADIO_ReadContig(fd, buf, count, datatype, file_ptr_type, offset, status, error_code);
    } else if (writing) {
        ADIO_WriteStrided(fd, buf, count, datatype, file_ptr_type, offset, status, error_code);
    } else {
        ADIO_ReadStrided(fd, buf, count, datatype, file_ptr_type, offset, status, error_code);
    }
}

/* ---- pieces ------------------------------------------------------------- */

static void setup_domain(struct coll_op *op)
{
    const struct ipvfs_file *f = ADIOI_IPVFS_File(op->fd);
    int cb = op->fd->hints->cb_buffer_size;

    op->dom.unit = f->layout.unit;
    op->dom.factor = f->layout.factor;
    op->dom.naggs = (uint32_t) (op->fd->hints->cb_nodes > 0 ? op->fd->hints->cb_nodes : 1);
    if (op->dom.naggs > (uint32_t) op->nprocs)
        op->dom.naggs = (uint32_t) op->nprocs;
    op->dom.cb = cb > 0 ? (uint64_t) cb : f->layout.unit;
    if (op->dom.cb > COLL_MAX_CB)
        op->dom.cb = COLL_MAX_CB;
}

static size_t count_pieces(const struct coll_op *op, const ADIO_Offset * offs,
                           const ADIO_Offset * lens, MPI_Count n)
{
    size_t total = 0;

    for (MPI_Count i = 0; i < n; i++) {
        uint64_t off = (uint64_t) offs[i], left = (uint64_t) lens[i];

        while (left > 0) {
            uint32_t agg;
            uint64_t round, take = coll_domain_piece(&op->dom, off, left, &agg, &round);

            off += take;
            left -= take;
            total++;
        }
    }
    return total;
}

static int build_pieces(struct coll_op *op, const ADIO_Offset * offs, const ADIO_Offset * lens,
                        MPI_Count n)
{
    uint64_t pos = 0;
    size_t k = 0;

    op->npieces = count_pieces(op, offs, lens, n);
    op->pieces = malloc((op->npieces ? op->npieces : 1) * sizeof(*op->pieces));
    if (!op->pieces) {
        op_fail(op, ENOMEM, "out of memory for the piece list");
        return -ENOMEM;
    }
    for (MPI_Count i = 0; i < n; i++) {
        uint64_t off = (uint64_t) offs[i], left = (uint64_t) lens[i];

        while (left > 0) {
            struct piece *p = &op->pieces[k++];

            p->off = off;
            p->pos = pos;
            p->len = coll_domain_piece(&op->dom, off, left, &p->agg, &p->round);
            off += p->len;
            pos += p->len;
            left -= p->len;
        }
    }
    return 0;
}

static int piece_order(const void *a, const void *b)
{
    const struct piece *x = a, *y = b;

    if (x->round != y->round)
        return x->round < y->round ? -1 : 1;
    if (x->agg != y->agg)
        return x->agg < y->agg ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* The lowest failing rank, or nprocs; with the error it had on every
 * rank.  Also agrees on "some read came up short" (min of !short). */
static int agree_errors(struct coll_op *op, int *any_short)
{
    int mine[2] = { op->failed ? op->rank : op->nprocs, !op->short_read }, all[2];
    MPI_Request req;

    MPI_TRY(quiet_wait(MPI_Iallreduce(mine, all, 2, MPI_INT, MPI_MIN, op->fd->comm, &req),
                       &req));
    if (all[0] < op->nprocs) {
        MPI_TRY(quiet_wait(MPI_Ibcast(&op->err, (int) sizeof(op->err), MPI_BYTE, all[0],
                                      op->fd->comm, &req), &req));
        op->failed = 1;
    }
    if (any_short)
        *any_short = !all[1];
    return MPI_SUCCESS;
}

/* Every aggregator's first and last round over all ranks; the rounds run
 * from each aggregator's first, so round t is everyone's (t+1)-th. */
static int agree_rounds(struct coll_op *op)
{
    uint32_t na = op->dom.naggs;
    int64_t *mm = malloc(2 * na * sizeof(*mm)), *all = malloc(2 * na * sizeof(*all));
    int local_ok = mm && all, ok;
    MPI_Request req;

    MPI_TRY(quiet_wait(MPI_Iallreduce(&local_ok, &ok, 1, MPI_INT, MPI_MIN, op->fd->comm, &req),
                       &req));
    if (!ok) {
        free(mm);
        free(all);
        op_fail(op, ENOMEM, "out of memory for the round table");
        return agree_errors(op, NULL);
    }
    for (uint32_t a = 0; a < na; a++) {
        mm[a] = INT64_MAX;      /* min of the first rounds */
        mm[na + a] = INT64_MAX; /* min of minus the last rounds */
    }
    for (size_t i = 0; i < op->npieces; i++) {
        const struct piece *p = &op->pieces[i];

        if ((int64_t) p->round < mm[p->agg])
            mm[p->agg] = (int64_t) p->round;
        if (-(int64_t) p->round < mm[na + p->agg])
            mm[na + p->agg] = -(int64_t) p->round;
    }
    MPI_TRY(quiet_wait(MPI_Iallreduce(mm, all, (int) (2 * na), MPI_INT64_T, MPI_MIN,
                                      op->fd->comm, &req), &req));
    op->nrounds = 0;
    for (uint32_t a = 0; a < na; a++)
        if (all[a] != INT64_MAX && (uint64_t) (-all[na + a] - all[a] + 1) > op->nrounds)
            op->nrounds = (uint64_t) (-all[na + a] - all[a] + 1);
    for (size_t i = 0; i < op->npieces; i++)
        op->pieces[i].round -= (uint64_t) all[op->pieces[i].agg];
    qsort(op->pieces, op->npieces, sizeof(*op->pieces), piece_order);
    free(all);
    free(mm);
    return MPI_SUCCESS;
}

/* ---- one round ---------------------------------------------------------- */

static int rb_alloc(struct round_bufs *rb, int nprocs)
{
    int **arrays[] = { &rb->meta_out, &rb->meta_in, &rb->pc_out, &rb->pd_out, &rb->dc_out,
        &rb->dd_out, &rb->pc_in, &rb->pd_in, &rb->dc_in, &rb->dd_in
    };

    for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++) {
        *arrays[i] = calloc((size_t) nprocs * 2, sizeof(int));
        if (!*arrays[i])
            return -ENOMEM;
    }
    return 0;
}

static void rb_free(struct round_bufs *rb)
{
    free(rb->meta_out);
    free(rb->meta_in);
    free(rb->pc_out);
    free(rb->pd_out);
    free(rb->dc_out);
    free(rb->dd_out);
    free(rb->pc_in);
    free(rb->pd_in);
    free(rb->dc_in);
    free(rb->dd_in);
    free(rb->pairs_out);
    free(rb->pairs_in);
    free(rb->data_out);
    free(rb->data_in);
}

/* Grows *buf to n bytes (at least 1). */
static int grow(void *buf, size_t n)
{
    void *p = realloc(*(void **) buf, n ? n : 1);

    if (!p)
        return -ENOMEM;
    *(void **) buf = p;
    return 0;
}

/* Lays out what this rank sends in round pieces [lo, hi): per aggregator
 * its pairs and (writes) its data, packed in aggregator order. */
static int plan_sends(struct coll_op *op, size_t lo, size_t hi)
{
    struct round_bufs *rb = &op->rb;
    uint64_t bytes = 0;

    memset(rb->meta_out, 0, 2 * (size_t) op->nprocs * sizeof(int));
    for (size_t i = lo; i < hi; i++) {
        int dest = op->fd->hints->ranklist[op->pieces[i].agg];

        rb->meta_out[2 * dest]++;
        rb->meta_out[2 * dest + 1] += (int) op->pieces[i].len;
        bytes += op->pieces[i].len;
    }
    if (grow(&rb->pairs_out, 2 * (hi - lo) * sizeof(uint64_t)) < 0 ||
        grow(&rb->data_out, (size_t) bytes) < 0) {
        op_fail(op, ENOMEM, "out of memory for a round's send buffers");
        return -ENOMEM;
    }
    for (int r = 0, pairs = 0, data = 0; r < op->nprocs; r++) {
        rb->pc_out[r] = 2 * rb->meta_out[2 * r];
        rb->dc_out[r] = rb->meta_out[2 * r + 1];
        rb->pd_out[r] = pairs;
        rb->dd_out[r] = data;
        pairs += rb->pc_out[r];
        data += rb->dc_out[r];
    }
    return 0;
}

/* Fills the pairs and (writes) the data of the send buffers. */
static void pack_sends(struct coll_op *op, size_t lo, size_t hi)
{
    struct round_bufs *rb = &op->rb;
    int *pfill = rb->pc_in, *dfill = rb->dc_in;   /* scratch until the meta exchange */

    memcpy(pfill, rb->pd_out, (size_t) op->nprocs * sizeof(int));
    memcpy(dfill, rb->dd_out, (size_t) op->nprocs * sizeof(int));
    for (size_t i = lo; i < hi; i++) {
        const struct piece *p = &op->pieces[i];
        int dest = op->fd->hints->ranklist[p->agg];

        rb->pairs_out[pfill[dest]++] = p->off;
        rb->pairs_out[pfill[dest]++] = p->len;
        if (op->writing)
            memcpy(rb->data_out + dfill[dest], op->data + p->pos, p->len);
        dfill[dest] += (int) p->len;
    }
}

/* After the counts came in: the receive layout, by source rank. */
static void plan_receives(struct coll_op *op, size_t *out_npairs)
{
    struct round_bufs *rb = &op->rb;
    uint64_t pairs = 0, data = 0;

    for (int r = 0; r < op->nprocs; r++) {
        rb->pc_in[r] = 2 * rb->meta_in[2 * r];
        rb->dc_in[r] = rb->meta_in[2 * r + 1];
        rb->pd_in[r] = (int) pairs;
        rb->dd_in[r] = (int) data;
        pairs += (uint64_t) rb->pc_in[r];
        data += (uint64_t) rb->dc_in[r];
    }
    *out_npairs = (size_t) (pairs / 2);
    if (pairs > INT_MAX || data > INT_MAX)
        op_fail(op, EOVERFLOW, "overlapping accesses bring one aggregator more than 2 GiB "
                "in a round");
    else if (grow(&rb->pairs_in, (size_t) pairs * sizeof(uint64_t)) < 0 ||
             grow(&rb->data_in, (size_t) data) < 0)
        op_fail(op, ENOMEM, "out of memory for a round's receive buffers");
}

static int agg_piece_order(const void *a, const void *b)
{
    const struct agg_piece *x = a, *y = b;

    if (x->off != y->off)
        return x->off < y->off ? -1 : 1;
    return x->mem < y->mem ? -1 : x->mem > y->mem;
}

/* The received pieces, sorted by file offset, data in data_in. */
static struct agg_piece *agg_pieces(struct coll_op *op, size_t n)
{
    struct agg_piece *ap = malloc((n ? n : 1) * sizeof(*ap));
    char *mem = op->rb.data_in;

    if (!ap)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        ap[i] = (struct agg_piece) {.off = op->rb.pairs_in[2 * i],.len =
                op->rb.pairs_in[2 * i + 1],.mem = mem };
        mem += ap[i].len;
    }
    qsort(ap, n, sizeof(*ap), agg_piece_order);
    return ap;
}

/* Extents and iovecs of sorted pieces, each run that continues the last
 * one merged. */
static void to_lists(const struct agg_piece *ap, size_t n, struct ipvfs_extent *ext,
                     size_t *next, struct iovec *iov, int *niov)
{
    *next = 0;
    *niov = 0;
    for (size_t i = 0; i < n; i++) {
        struct ipvfs_extent *e = *next ? &ext[*next - 1] : NULL;
        struct iovec *v = *niov ? &iov[*niov - 1] : NULL;

        if (e && e->offset + e->len == ap[i].off)
            e->len += ap[i].len;
        else
            ext[(*next)++] = (struct ipvfs_extent) {.offset = ap[i].off,.len = ap[i].len };
        if (v && (char *) v->iov_base + v->iov_len == ap[i].mem)
            v->iov_len += ap[i].len;
        else
            iov[(*niov)++] = (struct iovec) {.iov_base = ap[i].mem,.iov_len = ap[i].len };
    }
}

static int has_overlap(const struct agg_piece *ap, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (ap[i].off < ap[i - 1].off + ap[i - 1].len)
            return 1;
    return 0;
}

/* Reads pieces that overlap: the union once into a staging buffer, then
 * each piece from there. */
static int read_union(struct coll_op *op, const struct agg_piece *ap, size_t n,
                      struct ipvfs_extent *ext, uint64_t *want, uint64_t *got)
{
    uint64_t *at = malloc(n * sizeof(*at)), size = 0, end = 0;
    size_t next = 0;
    struct iovec v;
    char *stage;
    int rc;

    for (size_t i = 0; i < n; i++) {
        if (next && ap[i].off <= end) {
            if (ap[i].off + ap[i].len > end) {
                ext[next - 1].len += ap[i].off + ap[i].len - end;
                size += ap[i].off + ap[i].len - end;
                end = ap[i].off + ap[i].len;
            }
        } else {
            ext[next++] = (struct ipvfs_extent) {.offset = ap[i].off,.len = ap[i].len };
            size += ap[i].len;
            end = ap[i].off + ap[i].len;
        }
        if (at)
            at[i] = size - (end - ap[i].off);
    }
    stage = malloc(size ? size : 1);
    if (!at || !stage) {
        free(at);
        free(stage);
        op_fail(op, ENOMEM, "out of memory for a read's staging buffer");
        return -ENOMEM;
    }
    v = (struct iovec) {.iov_base = stage,.iov_len = size };
    *want = size;
    rc = ipvfs_read_list(ADIOI_IPVFS_File(op->fd), ext, next, &v, 1, got, &op->err);
    for (size_t i = 0; rc == 0 && i < n; i++)
        memcpy(ap[i].mem, stage + at[i], ap[i].len);
    free(at);
    free(stage);
    return rc;
}

/* The aggregator's I/O of the round's n pieces (data in data_in). */
static void agg_io(struct coll_op *op, size_t n)
{
    struct agg_piece *ap;
    struct ipvfs_extent *ext;
    struct iovec *iov;
    uint64_t want = 0, got = 0;
    size_t next;
    int niov, rc;

    if (n == 0 || op->failed)
        return;
    ap = agg_pieces(op, n);
    ext = malloc(n * sizeof(*ext));
    iov = malloc(n * sizeof(*iov));
    if (!ap || !ext || !iov) {
        op_fail(op, ENOMEM, "out of memory for an aggregator's list");
        goto free_lists;
    }
    if (!op->writing && has_overlap(ap, n)) {
        rc = read_union(op, ap, n, ext, &want, &got);
    } else {
        to_lists(ap, n, ext, &next, iov, &niov);
        for (size_t i = 0; i < next; i++)
            want += ext[i].len;
        if (op->writing)
            rc = ipvfs_write_list(ADIOI_IPVFS_File(op->fd), ext, next, iov, niov, &got,
                                  &op->err);
        else
            rc = ipvfs_read_list(ADIOI_IPVFS_File(op->fd), ext, next, iov, niov, &got,
                                 &op->err);
    }
    if (rc < 0)
        op->failed = 1;
    else if (got < want)
        op->short_read = 1;
  free_lists:
    free(ap);
    free(ext);
    free(iov);
}

/* A read's data came back in data_out: into the rank's data. */
static void unpack_reads(struct coll_op *op, size_t lo, size_t hi)
{
    struct round_bufs *rb = &op->rb;
    int *dfill = rb->dc_out;    /* the counts are spent */

    memcpy(dfill, rb->dd_out, (size_t) op->nprocs * sizeof(int));
    for (size_t i = lo; i < hi; i++) {
        const struct piece *p = &op->pieces[i];
        int src = op->fd->hints->ranklist[p->agg];

        memcpy(op->data + p->pos, rb->data_out + dfill[src], p->len);
        dfill[src] += (int) p->len;
    }
}

static int run_round(struct coll_op *op, size_t lo, size_t hi)
{
    struct round_bufs *rb = &op->rb;
    MPI_Comm comm = op->fd->comm;
    size_t npairs = 0;
    MPI_Request req;

    if (plan_sends(op, lo, hi) == 0)
        pack_sends(op, lo, hi);
    MPI_TRY(quiet_wait(MPI_Ialltoall(rb->meta_out, 2, MPI_INT, rb->meta_in, 2, MPI_INT, comm,
                                     &req), &req));
    plan_receives(op, &npairs);
    MPI_TRY(agree_errors(op, NULL));
    if (op->failed)
        return MPI_SUCCESS;
    MPI_TRY(quiet_wait(MPI_Ialltoallv(rb->pairs_out, rb->pc_out, rb->pd_out, MPI_UINT64_T,
                                      rb->pairs_in, rb->pc_in, rb->pd_in, MPI_UINT64_T, comm,
                                      &req), &req));
    if (op->writing) {
        MPI_TRY(quiet_wait(MPI_Ialltoallv(rb->data_out, rb->dc_out, rb->dd_out, MPI_BYTE,
                                          rb->data_in, rb->dc_in, rb->dd_in, MPI_BYTE, comm,
                                          &req), &req));
        agg_io(op, npairs);
        return MPI_SUCCESS;
    }
    agg_io(op, npairs);
    MPI_TRY(quiet_wait(MPI_Ialltoallv(rb->data_in, rb->dc_in, rb->dd_in, MPI_BYTE,
                                      rb->data_out, rb->dc_out, rb->dd_out, MPI_BYTE, comm,
                                      &req), &req));
    unpack_reads(op, lo, hi);
    return MPI_SUCCESS;
}

static int run_rounds(struct coll_op *op)
{
    size_t lo = 0;

    if (rb_alloc(&op->rb, op->nprocs) < 0)
        op_fail(op, ENOMEM, "out of memory for the round tables");
    MPI_TRY(agree_errors(op, NULL));
    for (uint64_t t = 0; t < op->nrounds && !op->failed; t++) {
        size_t hi = lo;

        while (hi < op->npieces && op->pieces[hi].round == t)
            hi++;
        MPI_TRY(run_round(op, lo, hi));
        lo = hi;
    }
    return MPI_SUCCESS;
}

/* ---- the whole call ----------------------------------------------------- */

/* Bytes of this rank's pieces that lie before the end of the file, when
 * some read came up short: one rank asks for the size, all learn it. */
static int bytes_before_eof(struct coll_op *op, uint64_t *out_bytes)
{
    struct {
        int rc;
        uint64_t size;
        struct ipvfs_error err;
    } s = { 0 };
    uint64_t n = 0;
    MPI_Request req;

    if (op->rank == 0)
        s.rc = ipvfs_get_size(ADIOI_IPVFS_File(op->fd), &s.size, &s.err);
    MPI_TRY(quiet_wait(MPI_Ibcast(&s, (int) sizeof(s), MPI_BYTE, 0, op->fd->comm, &req),
                       &req));
    if (s.rc < 0) {
        op->failed = 1;
        op->err = s.err;
        return MPI_SUCCESS;
    }
    for (size_t i = 0; i < op->npieces; i++) {
        const struct piece *p = &op->pieces[i];

        if (p->off < s.size)
            n += s.size - p->off < p->len ? s.size - p->off : p->len;
    }
    *out_bytes = n;
    return MPI_SUCCESS;
}

/* The rank's data: the user's buffer, or a packed copy for a
 * noncontiguous memory type. */
static void setup_data(struct coll_op *op, void *buf, int count, MPI_Datatype datatype,
                       uint64_t total)
{
    int contig, pos = 0;

    ADIOI_Datatype_iscontig(datatype, &contig);
    if (contig || total == 0) {
        op->data = buf;
        return;
    }
    if (total > INT_MAX) {
        op_fail(op, EOVERFLOW, "a noncontiguous memory type holds more than 2 GiB");
        return;
    }
    op->packed = malloc(total);
    if (!op->packed) {
        op_fail(op, ENOMEM, "out of memory for packing the memory type");
        return;
    }
    op->data = op->packed;
    if (op->writing &&
        MPI_Pack(buf, count, datatype, op->packed, (int) total, &pos, op->fd->comm) != MPI_SUCCESS)
        op_fail(op, EINVAL, "MPI_Pack of the memory type failed");
}

static void finish_data(struct coll_op *op, void *buf, int count, MPI_Datatype datatype,
                        uint64_t total)
{
    int pos = 0;

    if (op->writing || !op->packed || op->failed)
        return;
    if (MPI_Unpack(op->packed, (int) total, &pos, buf, count, datatype, op->fd->comm) !=
        MPI_SUCCESS)
        op_fail(op, EINVAL, "MPI_Unpack into the memory type failed");
}

/* Two-phase I/O of the pieces; returns an MPI error code for MPI failures,
 * else MPI_SUCCESS with op->failed/op->err set by what went wrong. */
static int two_phase(struct coll_op *op, void *buf, int count, MPI_Datatype datatype,
                     const ADIO_Offset * offs, const ADIO_Offset * lens, MPI_Count n,
                     uint64_t total, uint64_t *io_bytes)
{
    int any_short = 0;

    setup_domain(op);
    if (build_pieces(op, offs, lens, n) == 0)
        setup_data(op, buf, count, datatype, total);
    MPI_TRY(agree_errors(op, NULL));
    if (op->failed)
        return MPI_SUCCESS;
    MPI_TRY(agree_rounds(op));
    if (op->failed)
        return MPI_SUCCESS;
    MPI_TRY(run_rounds(op));
    finish_data(op, buf, count, datatype, total);
    MPI_TRY(agree_errors(op, &any_short));
    *io_bytes = total;
    if (!op->failed && any_short && !op->writing)
        MPI_TRY(bytes_before_eof(op, io_bytes));
    return MPI_SUCCESS;
}

static void free_op(struct coll_op *op)
{
    rb_free(&op->rb);
    free(op->pieces);
    free(op->packed);
}

static void rdwr_coll(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                      int file_ptr_type, ADIO_Offset offset, ADIO_Status * status, int writing,
                      int *error_code)
{
    static char myname[] = "ADIOI_IPVFS_RDWR_COLL";
    struct coll_op op = {.fd = fd,.writing = writing };
    ADIO_Offset *offs = NULL, *lens = NULL, start, end, orig_fp = fd->fp_ind, calc_fp;
    MPI_Count size, n = 0;
    uint64_t total, io_bytes = 0;
    struct ADIOI_IPVFS_pick *pick;
    int mrc, nacc = 0, twophase = 0, speculate = 0;

    MPI_Comm_size(fd->comm, &op.nprocs);
    MPI_Comm_rank(fd->comm, &op.rank);
    MPI_Type_size_x(datatype, &size);
    total = (uint64_t) count * (uint64_t) size;
    ADIOI_Calc_my_off_len(fd, count, datatype, file_ptr_type, offset, &offs, &lens, &start,
                          &end, &nacc);
    n = nacc;
    calc_fp = fd->fp_ind;
    mrc = ADIOI_IPVFS_Coll_pick_begin(fd, writing, offs, lens, n, start, end, &pick, &twophase,
                                      &speculate);
    if (mrc == MPI_SUCCESS && speculate) {
        fd->fp_ind = orig_fp;
        run_independent(fd, buf, count, datatype, file_ptr_type, offset, status, writing,
                        error_code);
    }
    if (mrc == MPI_SUCCESS && pick)
        mrc = ADIOI_IPVFS_Coll_pick_end(fd, pick, &twophase);
    if (mrc != MPI_SUCCESS) {
        *error_code = mrc;
        goto free_lists;
    }
    if (!twophase) {
        if (!speculate) {
            fd->fp_ind = orig_fp;
            run_independent(fd, buf, count, datatype, file_ptr_type, offset, status, writing,
                            error_code);
        }
        goto free_lists;
    }
    fd->fp_ind = calc_fp;       /* where the list I/O, if it ran, left it too */
    mrc = two_phase(&op, buf, count, datatype, offs, lens, n, total, &io_bytes);
    *error_code = mrc != MPI_SUCCESS ? mrc : op.failed ?
        ADIOI_IPVFS_Error(myname, __LINE__, &op.err) : MPI_SUCCESS;
    fd->fp_sys_posn = -1;       /* ROMIO's convention: unknown after strided I/O */
#ifdef HAVE_STATUS_SET_BYTES
    if (*error_code == MPI_SUCCESS)
        MPIR_Status_set_bytes(status, datatype, (MPI_Count) io_bytes);
#endif
    free_op(&op);
  free_lists:
    ADIOI_IPVFS_Coll_done(fd);
    ADIOI_Free(offs);
}

void ADIOI_IPVFS_ReadStridedColl(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                                 int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                                 int *error_code)
{
    if (ADIOI_IPVFS_Coll_generic(fd) || fd->hints->cb_pfr != ADIOI_HINT_DISABLE)
        ADIOI_GEN_ReadStridedColl(fd, buf, count, datatype, file_ptr_type, offset, status,
                                  error_code);
    else
        rdwr_coll(fd, buf, count, datatype, file_ptr_type, offset, status, 0, error_code);
}

void ADIOI_IPVFS_WriteStridedColl(ADIO_File fd, const void *buf, int count,
                                  MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                  ADIO_Status * status, int *error_code)
{
    if (ADIOI_IPVFS_Coll_generic(fd) || fd->hints->cb_pfr != ADIOI_HINT_DISABLE)
        ADIOI_GEN_WriteStridedColl(fd, buf, count, datatype, file_ptr_type, offset, status,
                                   error_code);
    else                        /* the worker only reads from buf when writing */
        rdwr_coll(fd, (void *) buf, count, datatype, file_ptr_type, offset, status, 1,
                  error_code);
}
