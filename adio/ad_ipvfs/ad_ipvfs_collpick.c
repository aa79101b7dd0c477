/* The inputs of the collective path's decision (ad_ipvfs_choice.h), made
 * the same on every rank:
 *   - each rank counts its own pieces (coll_count_rank) and an
 *     MPI_Allreduce sums bytes, pairs and requests;
 *   - when the ranks' [start, end] ranges interleave (the gathered se of
 *     the caller), rank 0 gathers every rank's pieces (MPI_Gatherv, at
 *     most PICK_SCAN_MAX in all), finds overlap and the merged pair count
 *     (coll_scan_union) and broadcasts the two; with more pieces than
 *     that, overlap counts as possible and nothing merges (a write goes
 *     two-phase, as ROMIO's rule would send it);
 *   - ranges that do not interleave cannot overlap or merge.
 * Every rank then calls the pure coll_choose on identical inputs, so all
 * take the same path.  A forcing hint decides without communication (the
 * cb hints are the same on every rank).  The collectives are nonblocking
 * ones completed by ADIOI_IPVFS_Quiet_wait: a rank done with its list I/O
 * early waits here for the others' at the next call, and must not spin a
 * core the servers need. */
#include "ad_ipvfs.h"
#include "ad_ipvfs_choice.h"

#include <stdlib.h>

/* Pieces rank 0 gathers for the overlap check at most (16 bytes each). */
#define PICK_SCAN_MAX (1u << 18)

/* Sum slots of the Allreduce. */
enum { S_BYTES, S_PAIRS, S_REQS, S_PIECES, S_NOMEM, S_N };

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

static int interleaved(const ADIO_Offset * se, int nprocs)
{
    for (int i = 1; i < nprocs; i++)
        if (se[2 * i] < se[2 * i - 1] && se[2 * i] <= se[2 * i + 1])
            return 1;
    return 0;
}

/* Rank 0's overlap check of everybody's pieces; facts[0] overlap,
 * facts[1] merged pairs, broadcast to all. */
static int scan_all(ADIO_File fd, const struct coll_shape *s, const struct coll_pair *mine,
                    int n, uint64_t total, uint64_t facts[2])
{
    int rank, nprocs, rc, nbytes = n * (int) sizeof(*mine), *counts = NULL, *displs = NULL;
    struct coll_pair *all = NULL;
    MPI_Request req;
    int overlap = 0;

    MPI_Comm_rank(fd->comm, &rank);
    MPI_Comm_size(fd->comm, &nprocs);
    if (rank == 0) {            /* at most PICK_SCAN_MAX pieces: 4 MiB */
        counts = ADIOI_Malloc(2 * (size_t) nprocs * sizeof(int));
        displs = counts + nprocs;
        all = ADIOI_Malloc((total ? total : 1) * sizeof(*all));
    }
    rc = ADIOI_IPVFS_Quiet_wait(MPI_Igather(&nbytes, 1, MPI_INT, counts, 1, MPI_INT, 0,
                                            fd->comm, &req), &req);
    if (rc != MPI_SUCCESS)
        goto free_bufs;
    if (rank == 0) {
        displs[0] = 0;
        for (int i = 1; i < nprocs; i++)
            displs[i] = displs[i - 1] + counts[i - 1];
    }
    rc = ADIOI_IPVFS_Quiet_wait(MPI_Igatherv(mine, nbytes, MPI_BYTE, all, counts, displs,
                                             MPI_BYTE, 0, fd->comm, &req), &req);
    if (rc != MPI_SUCCESS)
        goto free_bufs;
    if (rank == 0) {
        coll_scan_union(s, all, total, &overlap, &facts[1]);
        facts[0] = (uint64_t) overlap;
    }
    rc = ADIOI_IPVFS_Quiet_wait(MPI_Ibcast(facts, 2, MPI_UINT64_T, 0, fd->comm, &req), &req);
  free_bufs:
    if (rank == 0) {
        ADIOI_Free(all);
        ADIOI_Free(counts);
    }
    return rc;
}

static int pick(ADIO_File fd, int writing, const ADIO_Offset * offs, const ADIO_Offset * lens,
                MPI_Count n, const ADIO_Offset * se, int *out_twophase)
{
    struct coll_pair *mine = malloc((n > 0 ? (size_t) n : 1) * sizeof(*mine));
    uint64_t local[S_N] = { 0 }, sum[S_N], facts[2];
    struct coll_rank r;
    struct coll_shape s;
    struct coll_access a;
    size_t k = 0;
    MPI_Request req;
    int nprocs, rc;

    MPI_Comm_size(fd->comm, &nprocs);
    shape_of(fd, nprocs, &s);
    for (MPI_Count i = 0; mine && i < n; i++)
        if (lens[i] > 0)
            mine[k++] = (struct coll_pair) {(uint64_t) offs[i], (uint64_t) lens[i] };
    if (mine && coll_count_rank(&s, mine, k, &r) == 0) {
        local[S_BYTES] = r.bytes;
        local[S_PAIRS] = r.pairs;
        local[S_REQS] = r.requests;
        local[S_PIECES] = k;
    } else {
        local[S_NOMEM] = 1;
    }
    rc = ADIOI_IPVFS_Quiet_wait(MPI_Iallreduce(local, sum, S_N, MPI_UINT64_T, MPI_SUM, fd->comm,
                                               &req), &req);
    if (rc != MPI_SUCCESS)
        goto free_mine;
    facts[0] = 0;
    facts[1] = sum[S_PAIRS];
    if (sum[S_NOMEM]) {
        facts[0] = 1;           /* nothing known: ROMIO's choice, two-phase */
    } else if (interleaved(se, nprocs)) {
        if (sum[S_PIECES] <= PICK_SCAN_MAX)
            rc = scan_all(fd, &s, mine, (int) k, sum[S_PIECES], facts);
        else
            facts[0] = 1;
    }
    a = (struct coll_access) {.bytes = sum[S_BYTES],.pairs_ind = sum[S_PAIRS],
        .requests_ind = sum[S_REQS],.pairs_2p = facts[1],.overlap = (int) facts[0] };
    if (sum[S_NOMEM])
        *out_twophase = 1;
    else
        *out_twophase = coll_choose(&s, &a, &COLL_COST_DEFAULTS, writing, COLL_AUTO) ==
            COLL_TWOPHASE;
  free_mine:
    free(mine);
    return rc;
}

int ADIOI_IPVFS_Coll_pick(ADIO_File fd, int writing, const ADIO_Offset * offs,
                          const ADIO_Offset * lens, MPI_Count n, const ADIO_Offset * se,
                          int *out_twophase)
{
    enum coll_force force = force_of(fd, writing);

    if (fd->atomicity || force == COLL_FORCE_INDEPENDENT) {
        *out_twophase = 0;      /* atomic mode's locks live on the independent path */
        return MPI_SUCCESS;
    }
    if (force == COLL_FORCE_TWOPHASE) {
        *out_twophase = 1;
        return MPI_SUCCESS;
    }
    return pick(fd, writing, offs, lens, n, se, out_twophase);
}
