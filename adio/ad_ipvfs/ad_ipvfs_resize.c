/* MPI_File_set_size: one rank truncates every datafile and broadcasts the
 * outcome, so all ranks succeed or fail alike. */
#include "ad_ipvfs.h"

#include <string.h>

void ADIOI_IPVFS_Resize(ADIO_File fd, ADIO_Offset size, int *error_code)
{
    static char myname[] = "ADIOI_IPVFS_RESIZE";
    struct ipvfs_error err;
    int rank, root = fd->hints->ranklist[0];

    memset(&err, 0, sizeof(err));
    MPI_Comm_rank(fd->comm, &rank);
    if (rank == root)
        (void) ipvfs_resize(ADIOI_IPVFS_File(fd), (uint64_t) size, &err);
    MPI_Bcast(&err, (int) sizeof(err), MPI_BYTE, root, fd->comm);
    *error_code = err.code ? ADIOI_IPVFS_Error(myname, __LINE__, &err) : MPI_SUCCESS;
}
