/* MPI_File_sync (collective): once every rank's writes have returned, one
 * rank syncs every datafile; the outcome and the I/O nodes' write
 * verifiers are broadcast, every rank checks its own writes since the last
 * sync against them (a changed verifier: an I/O node restarted and may have
 * lost them, common/proto.h), and all ranks return the same outcome: the
 * lowest rank's error.  On success the data is durable on all ranks'
 * return, and the file's mtime is set when any rank wrote since the last
 * sync. */
#include "ad_ipvfs.h"

#include <errno.h>
#include <string.h>

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
    MPI_Bcast(out_err, (int) sizeof(*out_err), MPI_BYTE, root, comm);
    if (!out_err->code)
        MPI_Bcast(verf, (int) file->layout.factor, MPI_UINT64_T, root, comm);
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
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first < nprocs)
        MPI_Bcast(out_err, (int) sizeof(*out_err), MPI_BYTE, first, comm);
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
    MPI_Allreduce(&wrote, &any_wrote, 1, MPI_INT, MPI_MAX, fd->comm);
    sync_at_root(file, fd->comm, fd->hints->ranklist[0], any_wrote, verf, &err);
    if (!err.code)
        check_everywhere(file, fd->comm, verf, &err);
    ADIOI_Free(verf);
    *error_code = err.code ? ADIOI_IPVFS_Error(myname, __LINE__, &err) : MPI_SUCCESS;
}
