/* The inputs of the collective path's decision (ad_ipvfs_choice.h), made
 * the same on every rank:
 *   - each rank counts its own pieces (coll_count_rank); one
 *     MPI_Iallgather brings every rank every rank's (start, end, bytes,
 *     pairs, list requests, pieces, and the wall time of the previous
 *     call decided here), so every rank sums the same figures and notes
 *     the same slowest time into the file's calibration (struct
 *     ADIOI_IPVFS_coll_timing; ADIOI_IPVFS_Coll_done stops the clock);
 *   - when two ranks' [start, end] ranges interleave
 *     (coll_ranges_interleave: any two ranks, not only neighbours), every
 *     rank needs all pieces: when each rank's pieces are one arithmetic
 *     progression (coll_as_prog: rows, segments) the first allgather
 *     carried it and each rank expands them, else an MPI_Iallgatherv
 *     brings every rank all pieces (at most PICK_SCAN_MAX
 *     in all) and each finds overlap and the merged pair count
 *     (coll_scan_union) on the same input; with more pieces than that,
 *     overlap counts as possible and nothing merges (a write goes
 *     two-phase, as ROMIO's rule would send it);
 *   - ranges that do not interleave cannot overlap or merge: one
 *     collective per call, as ROMIO's own rule needs;
 *   - reads skip the scan (overlap changes nothing for them; the model
 *     gets two-phase's best case, the union merged into one run), and
 *     the PICK_READ_REUSE collective reads after a decision (not after an
 *     exploration, ad_ipvfs_choice.h step 3a) take it again without any
 *     communication: each such sync point costs every rank
 *     the slowest one's time per call, which for many small calls was a
 *     third of the time here.  A collective read with no read decision
 *     to reuse that follows a write decided independent (not as an
 *     exploration) takes that decision as a read's (writing an access
 *     and reading it back pays no exchange on the read; a write that
 *     overlapped or went two-phase passes nothing on).  Every rank makes
 *     the same collective calls on a file in the same order, so the per-file count (fs->coll_read_*)
 *     is the same on every rank, and a stale choice for a read costs
 *     speed, never correctness.  Writes decide at every call: a write
 *     may overlap where the previous one did not;
 *   - but a write that follows a write of the file decided independent
 *     (not as an exploration) runs its list I/O while the exchange is
 *     under way (Coll_pick_begin's *out_speculate): the decision then
 *     costs the rank no wait of its own, only the wait for the slowest
 *     rank to enter the call.  Each rank waiting for the others' first
 *     allgather before its own I/O made collective-choice.sh's ior-strided
 *     writes (256 calls of 64 KiB per rank) 0.77x those of forced
 *     independent I/O, with a call's p50 of 750 us against 230 us.  When
 *     such a write decides two-phase after all (it overlaps, or the model
 *     says so), the two-phase write writes all its bytes again after every
 *     rank's list I/O returned, so the result is two-phase's.
 * Every rank then calls the pure coll_choose on identical inputs, so all
 * take the same path.  A forcing hint or atomic mode decides without
 * communication (the same on every rank).  The collectives are nonblocking
 * ones completed by ADIOI_IPVFS_Quiet_wait: a rank done with its list I/O
 * early waits here for the others at the next call, and must not spin a
 * core the servers need. */
#include "ad_ipvfs.h"
#include "ad_ipvfs_choice.h"

#include <stdlib.h>

/* Pieces allgathered for the overlap check at most (16 bytes each: 4 MiB
 * to every rank); with more, overlap counts as possible. */
#define PICK_SCAN_MAX (1u << 18)

/* Collective reads after a decision that take it without communication. */
#define PICK_READ_REUSE 15

/* One rank's slots in the first Iallgather. */
enum {
    S_START, S_END, S_LAST_US,
    S_POFF, S_PSTRIDE, S_PLEN, S_PN,    /* its pieces as a progression; S_PN -1: not one */
    S_BYTES, S_PAIRS, S_REQS, S_PIECES, S_NOMEM, S_N    /* summed over the ranks */
};

static enum coll_force force_of(ADIO_File fd, int writing)
{
    int hint = writing ? fd->hints->cb_write : fd->hints->cb_read;

    if (hint == ADIOI_HINT_ENABLE)
        return COLL_FORCE_TWOPHASE;
    if (hint == ADIOI_HINT_DISABLE)
        return COLL_FORCE_INDEPENDENT;
    return COLL_AUTO;
}

static void shape_of(ADIO_File fd, int nprocs, struct coll_shape *out)
{
    const struct ipvfs_file *f = ADIOI_IPVFS_File(fd);
    const struct ADIOI_IPVFS_fs *fs = fd->fs_ptr;
    int cb = fd->hints->cb_buffer_size, naggs = fd->hints->cb_nodes;

    out->unit = f->layout.unit;
    out->factor = f->layout.factor;
    out->block = fs->opts.io.block;
    out->naggs = (uint32_t) (naggs > 0 ? (naggs < nprocs ? naggs : nprocs) : 1);
    out->cb = cb > 0 ? (uint64_t) cb : f->layout.unit;
}

/* The sums over the ranks (S_BYTES...) of the gathered slots, the
 * slowest rank's S_LAST_US, and whether their [start, end] ranges interleave (coll_ranges_interleave). */
static int sum_up(const int64_t *all, int nprocs, int64_t sum[S_N])
{
    int64_t *se = ADIOI_Malloc(2 * (size_t) nprocs * sizeof(*se));
    int hit;

    for (int k = 0; k < S_N; k++)
        sum[k] = 0;
    for (int i = 0; i < nprocs; i++) {
        for (int k = S_BYTES; k < S_N; k++)
            sum[k] += all[i * S_N + k];
        if (all[i * S_N + S_LAST_US] > sum[S_LAST_US])
            sum[S_LAST_US] = all[i * S_N + S_LAST_US];
        se[2 * i] = all[i * S_N + S_START];
        se[2 * i + 1] = all[i * S_N + S_END];
    }
    hit = coll_ranges_interleave(se, (size_t) nprocs) != 0;
    ADIOI_Free(se);
    return hit;
}

/* Overlap and merged pairs from the progressions of the first allgather
 * (each rank's pieces are one), without expanding them. */
static void scan_progs(const struct coll_shape *s, const int64_t *all, int nprocs,
                       struct coll_access *a)
{
    struct coll_prog *g = ADIOI_Malloc((size_t) nprocs * sizeof(*g));
    void *scratch = ADIOI_Malloc(COLL_SCAN_PROGS_SCRATCH((size_t) nprocs));

    for (int i = 0; i < nprocs; i++) {
        const int64_t *v = &all[i * S_N];

        g[i] = (struct coll_prog) {(uint64_t) v[S_POFF], (uint64_t) v[S_PSTRIDE],
            (uint64_t) v[S_PLEN], (uint64_t) v[S_PN] };
    }
    coll_scan_progs(s, g, (size_t) nprocs, scratch, &a->overlap, &a->pairs_2p);
    ADIOI_Free(scratch);
    ADIOI_Free(g);
}

/* Every rank gets every rank's pieces and finds overlap and the merged
 * pair count (the same inputs everywhere, so the same facts).  When every
 * rank's pieces are one progression, the first allgather brought them
 * already: no second collective, no second wait for the slowest rank. */
static int scan_all(ADIO_File fd, const struct coll_shape *s, const struct coll_pair *mine,
                    int nmine, const int64_t *all, int nprocs, uint64_t total,
                    struct coll_access *a)
{
    int *counts, *displs;
    struct coll_pair *every;
    MPI_Request req;
    int rc, regular = 1;

    for (int i = 0; i < nprocs; i++)
        regular = regular && all[i * S_N + S_PN] >= 0;
    if (regular) {              /* every rank's pieces are in the first allgather */
        scan_progs(s, all, nprocs, a);
        return MPI_SUCCESS;
    }
    counts = ADIOI_Malloc(2 * (size_t) nprocs * sizeof(int));
    displs = counts + nprocs;
    every = ADIOI_Malloc((total ? total : 1) * sizeof(*every));
    for (int i = 0; i < nprocs; i++) {
        counts[i] = (int) all[i * S_N + S_PIECES] * (int) sizeof(*every);
        displs[i] = i ? displs[i - 1] + counts[i - 1] : 0;
    }
    rc = ADIOI_IPVFS_Quiet_wait(MPI_Iallgatherv(mine, nmine * (int) sizeof(*mine), MPI_BYTE,
                                                every, counts, displs, MPI_BYTE, fd->comm,
                                                &req), &req);
    if (rc == MPI_SUCCESS)
        coll_scan_union(s, every, total, &a->overlap, &a->pairs_2p);
    ADIOI_Free(every);
    ADIOI_Free(counts);
    return rc;
}

/* The previous decided call's time, the slowest rank's (every rank got
 * the same figure), goes into the file's calibration. */
static void calibrate(struct ADIOI_IPVFS_coll_timing *t, int64_t slowest_us)
{
    if (t->have)
        coll_calib_note(&t->cal[t->writing], t->path, t->model_us, (double) slowest_us);
    t->have = 0;
}

/* Starts timing this call (from t0), with the model's figures for its
 * path. */
static void time_call(struct ADIOI_IPVFS_coll_timing *t, const struct coll_shape *s,
                      const struct coll_access *a, int writing, int twophase, double t0)
{
    t->writing = writing;
    t->path = twophase ? COLL_TWOPHASE : COLL_INDEPENDENT;
    t->model_us = coll_cost_full(s, a, &COLL_COST_DEFAULTS, t->path);
    t->pending = 1;
    t->t0 = t0;
}

/* A decision under way: the rank's figures, posted in the first
 * Iallgather by Coll_pick_begin, decided by Coll_pick_end. */
struct ADIOI_IPVFS_pick {
    int writing;
    int speculate;              /* the caller may run its list I/O meanwhile */
    double t0;                  /* the call's start */
    struct coll_pair *mine;     /* its pieces (NULL: out of memory) */
    size_t k;
    struct coll_shape s;
    int64_t local[S_N];
    int64_t *all;
    MPI_Request req;
};

/* The rank's figures into the first allgather's slots, and the allgather
 * posted. */
static int pick_post(ADIO_File fd, struct ADIOI_IPVFS_pick *p, const ADIO_Offset * offs,
                     const ADIO_Offset * lens, MPI_Count n, ADIO_Offset start, ADIO_Offset end)
{
    struct ADIOI_IPVFS_fs *fs = fd->fs_ptr;
    int64_t *local = p->local;
    struct coll_rank r;
    struct coll_prog g;
    int nprocs;

    MPI_Comm_size(fd->comm, &nprocs);
    shape_of(fd, nprocs, &p->s);
    p->mine = malloc((n > 0 ? (size_t) n : 1) * sizeof(*p->mine));
    for (MPI_Count i = 0; p->mine && i < n; i++)
        if (lens[i] > 0)
            p->mine[p->k++] = (struct coll_pair) {(uint64_t) offs[i], (uint64_t) lens[i] };
    local[S_START] = (int64_t) start;
    local[S_END] = (int64_t) end;
    local[S_LAST_US] = fs->coll_time.have ? (int64_t) fs->coll_time.last_us : 0;
    if (p->mine && coll_count_rank(&p->s, p->mine, p->k, &r) == 0) {
        local[S_BYTES] = (int64_t) r.bytes;
        local[S_PAIRS] = (int64_t) r.pairs;
        local[S_REQS] = (int64_t) r.requests;
        local[S_PIECES] = (int64_t) p->k;
        local[S_PN] = -1;
        if (coll_as_prog(p->mine, p->k, &g)) {
            local[S_POFF] = (int64_t) g.off;
            local[S_PSTRIDE] = (int64_t) g.stride;
            local[S_PLEN] = (int64_t) g.len;
            local[S_PN] = (int64_t) g.n;
        }
    } else {
        local[S_NOMEM] = 1;
    }
    p->all = ADIOI_Malloc((size_t) nprocs * S_N * sizeof(*p->all));
    return MPI_Iallgather(local, S_N, MPI_INT64_T, p->all, S_N, MPI_INT64_T, fd->comm, &p->req);
}

/* Completes the allgather and decides, the same on every rank. */
static int pick_decide(ADIO_File fd, struct ADIOI_IPVFS_pick *p, int *out_twophase)
{
    struct ADIOI_IPVFS_fs *fs = fd->fs_ptr;
    int64_t sum[S_N];
    struct coll_access a = { 0 };
    int nprocs, rc, interleave, writing = p->writing;

    MPI_Comm_size(fd->comm, &nprocs);
    fs->coll_time.explored = 0;
    if ((rc = ADIOI_IPVFS_Quiet_wait(MPI_SUCCESS, &p->req)) != MPI_SUCCESS)
        return rc;
    interleave = sum_up(p->all, nprocs, sum);
    a = (struct coll_access) {.bytes = (uint64_t) sum[S_BYTES],
        .pairs_ind = (uint64_t) sum[S_PAIRS],.requests_ind = (uint64_t) sum[S_REQS],
        .pairs_2p = (uint64_t) sum[S_PAIRS],.overlap = 0 };
    if (sum[S_NOMEM]) {         /* nothing known: ROMIO's choice */
        *out_twophase = 1;
        return MPI_SUCCESS;
    }
    if (interleave && !writing) {
        /* overlap does not matter to a read: no scan, the fewest pairs
         * the union could merge into (two-phase's best case) */
        uint64_t least = coll_cut_pairs(&p->s, 0, a.bytes);

        a.pairs_2p = least < a.pairs_ind ? least : a.pairs_ind;
    } else if (interleave && (uint64_t) sum[S_PIECES] <= PICK_SCAN_MAX) {
        rc = scan_all(fd, &p->s, p->mine, (int) p->k, p->all, nprocs, (uint64_t) sum[S_PIECES],
                      &a);
    } else if (interleave) {
        a.overlap = 1;
    }
    calibrate(&fs->coll_time, sum[S_LAST_US]);
    *out_twophase = coll_choose_cal(&p->s, &a, &COLL_COST_DEFAULTS,
                                    &fs->coll_time.cal[writing != 0], writing, COLL_AUTO,
                                    &fs->coll_time.explored) == COLL_TWOPHASE;
    time_call(&fs->coll_time, &p->s, &a, writing != 0, *out_twophase,
              p->speculate ? p->t0 : MPI_Wtime());
    return rc;
}

int ADIOI_IPVFS_Coll_pick_begin(ADIO_File fd, int writing, const ADIO_Offset * offs,
                                const ADIO_Offset * lens, MPI_Count n, ADIO_Offset start,
                                ADIO_Offset end, struct ADIOI_IPVFS_pick **out_pick,
                                int *out_twophase, int *out_speculate)
{
    struct ADIOI_IPVFS_fs *fs = fd->fs_ptr;
    enum coll_force force = force_of(fd, writing);
    struct ADIOI_IPVFS_pick *p;
    int rc;

    *out_pick = NULL;
    *out_speculate = 0;
    if (fd->atomicity || force == COLL_FORCE_INDEPENDENT) {
        *out_twophase = 0;      /* atomic mode's locks live on the independent path */
        return MPI_SUCCESS;
    }
    if (force == COLL_FORCE_TWOPHASE) {
        *out_twophase = 1;
        return MPI_SUCCESS;
    }
    if (!writing && fs->coll_read_left > 0) {
        fs->coll_read_left--;
        *out_twophase = fs->coll_read_twophase;
        return MPI_SUCCESS;
    }
    if (!writing && fs->coll_read_inherit) {
        /* the first read after a write decided independent (not as an
         * exploration) reads back the same way, without an exchange */
        fs->coll_read_inherit = 0;
        fs->coll_read_twophase = 0;
        fs->coll_read_left = PICK_READ_REUSE - 1;
        *out_twophase = 0;
        return MPI_SUCCESS;
    }
    p = ADIOI_Calloc(1, sizeof(*p));
    p->writing = writing;
    p->speculate = writing && fs->coll_write_spec;
    p->t0 = MPI_Wtime();
    if ((rc = pick_post(fd, p, offs, lens, n, start, end)) != MPI_SUCCESS) {
        ADIOI_Free(p->all);
        free(p->mine);
        ADIOI_Free(p);
        return rc;
    }
    *out_speculate = p->speculate;
    *out_pick = p;
    return MPI_SUCCESS;
}

int ADIOI_IPVFS_Coll_pick_end(ADIO_File fd, struct ADIOI_IPVFS_pick *p, int *out_twophase)
{
    struct ADIOI_IPVFS_fs *fs = fd->fs_ptr;
    int rc = pick_decide(fd, p, out_twophase);

    if (p->writing && rc == MPI_SUCCESS) {
        fs->coll_read_inherit = !*out_twophase && !fs->coll_time.explored;
        fs->coll_write_spec = fs->coll_read_inherit;
    }
    if (!p->writing && rc == MPI_SUCCESS) {
        fs->coll_read_twophase = *out_twophase;
        /* an exploration is a one-off: the next read decides again */
        fs->coll_read_left = fs->coll_time.explored ? 0 : PICK_READ_REUSE;
    }
    ADIOI_Free(p->all);
    free(p->mine);
    ADIOI_Free(p);
    return rc;
}

void ADIOI_IPVFS_Coll_done(ADIO_File fd)
{
    struct ADIOI_IPVFS_coll_timing *t = &((struct ADIOI_IPVFS_fs *) fd->fs_ptr)->coll_time;

    if (!t->pending)
        return;
    t->last_us = (MPI_Wtime() - t->t0) * 1e6;
    t->pending = 0;
    t->have = 1;
}
