/* MPI_File_sync (collective): once every rank's writes have returned, one
 * rank syncs every datafile; the outcome is broadcast, and when it is
 * success the data is durable on all ranks' return. */
#include "ad_ipvfs.h"

#include <string.h>

void ADIOI_IPVFS_Flush(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_IPVFS_FLUSH";
    struct ipvfs_error err;
    int rank, root = fd->hints->ranklist[0];

    memset(&err, 0, sizeof(err));
    MPI_Comm_rank(fd->comm, &rank);
    /* the barrier orders everyone's completed writes before the sync */
    MPI_Barrier(fd->comm);
    if (rank == root)
        (void) ipvfs_sync(ADIOI_IPVFS_File(fd), &err);
    MPI_Bcast(&err, (int) sizeof(err), MPI_BYTE, root, fd->comm);
    *error_code = err.code ? ADIOI_IPVFS_Error(myname, __LINE__, &err) : MPI_SUCCESS;
}
