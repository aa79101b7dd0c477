/* MPI_File_sync (collective): once every rank's writes have returned, one
 * rank syncs every datafile; the outcome and the I/O nodes' write
 * verifiers are broadcast, every rank checks its own writes since the last
 * sync against them (a changed verifier: an I/O node restarted and may have
 * lost them, common/proto.h), and all ranks return the same outcome: the
 * lowest rank's error.  On success the data is durable on all ranks'
 * return, and the file's mtime is set when any rank wrote since the last
 * sync.
 *
 * Its collectives complete without spinning (ADIOI_IPVFS_Quiet_wait): the
 * others wait for the root's sync, which takes as long as the I/O nodes'
 * write-backs and the targets' flushes, and a rank spinning in MPI
 * meanwhile takes a core from the very servers doing them.  An MPI
 * failure ends the sync with that error on the rank that saw it. */
#include "ad_ipvfs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* A failed MPI call of the sync as its error (EIO, MPI's words): 0 when
 * rc is MPI_SUCCESS, else -1. */
static int mpi_failed(int rc, struct ipvfs_error *out_err)
{
    char why[MPI_MAX_ERROR_STRING];
    int len = 0;

    if (rc == MPI_SUCCESS)
        return 0;
    if (MPI_Error_string(rc, why, &len) != MPI_SUCCESS)
        snprintf(why, sizeof(why), "MPI error %d", rc);
    out_err->code = EIO;
    snprintf(out_err->msg, sizeof(out_err->msg), "MPI_File_sync: exchange between ranks failed: %s",
             why);
    return -1;
}

/* MPI_Bcast and MPI_Allreduce completed by ADIOI_IPVFS_Quiet_wait; a
 * failure becomes the sync's error (mpi_failed): 0 or -1. */
static int quiet_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
                       struct ipvfs_error *out_err)
{
    MPI_Request mreq;

    return mpi_failed(ADIOI_IPVFS_Quiet_wait(MPI_Ibcast(buf, count, type, root, comm, &mreq),
                                             &mreq), out_err);
}

static int quiet_allreduce(const int *in, int *out, MPI_Op op, MPI_Comm comm,
                           struct ipvfs_error *out_err)
{
    MPI_Request mreq;

    return mpi_failed(ADIOI_IPVFS_Quiet_wait(MPI_Iallreduce(in, out, 1, MPI_INT, op, comm, &mreq),
                                             &mreq), out_err);
}

/* The sync and its verifiers, on root; the sync's error on every rank.
 * When any rank wrote since the last sync, root also sets the file's
 * mtime (one SETATTR per sync, see ad_ipvfs_close.c). */
static void sync_at_root(struct ipvfs_file *file, MPI_Comm comm, int root, int any_wrote,
                         uint64_t *verf, struct ipvfs_error *out_err)
{
    struct ipvfs_setattr_req req = { .valid = IPVFS_SETATTR_MTIME_NOW };
    int rank;

    MPI_Comm_rank(comm, &rank);
    if (rank == root && ipvfs_sync_verf(file, verf, out_err) == 0 && any_wrote &&
        ipvfs_setattr(file->client, file->path, &req, NULL, out_err) < 0 &&
        out_err->code == ENOENT)
        memset(out_err, 0, sizeof(*out_err));   /* removed meanwhile: no mtime to keep */
    if (quiet_bcast(out_err, (int) sizeof(*out_err), MPI_BYTE, root, comm, out_err) < 0)
        return;
    if (!out_err->code)
        (void) quiet_bcast(verf, (int) file->layout.factor, MPI_UINT64_T, root, comm, out_err);
}

/* Every rank checks its writes; the lowest rank that found a loss tells
 * the others. */
static void check_everywhere(struct ipvfs_file *file, MPI_Comm comm, const uint64_t *verf,
                             struct ipvfs_error *out_err)
{
    int rank, nprocs, mine, first;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nprocs);
    mine = ipvfs_sync_check(file, verf, out_err) < 0 ? rank : nprocs;
    if (quiet_allreduce(&mine, &first, MPI_MIN, comm, out_err) < 0)
        return;
    if (first < nprocs)
        (void) quiet_bcast(out_err, (int) sizeof(*out_err), MPI_BYTE, first, comm, out_err);
}

void ADIOI_IPVFS_Flush(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_IPVFS_FLUSH";
    struct ipvfs_file *file = ADIOI_IPVFS_File(fd);
    struct ipvfs_error err;
    uint64_t *verf = ADIOI_Calloc(file->layout.factor, sizeof(*verf));
    int wrote = ipvfs_file_unsynced(file), any_wrote;

    memset(&err, 0, sizeof(err));
    /* as a barrier, orders everyone's completed writes before the sync */
    if (quiet_allreduce(&wrote, &any_wrote, MPI_MAX, fd->comm, &err) == 0)
        sync_at_root(file, fd->comm, fd->hints->ranklist[0], any_wrote, verf, &err);
    if (!err.code)
        check_everywhere(file, fd->comm, verf, &err);
    ADIOI_Free(verf);
    *error_code = err.code ? ADIOI_IPVFS_Error(myname, __LINE__, &err) : MPI_SUCCESS;
}
