/* Nonblocking contiguous read and write (IreadContig, IwriteContig): the
 * access is planned as one run of bytes and queued as a generalized
 * request that sends it in bounded pieces (ADIOI_IPVFS_Irdwr,
 * ad_ipvfs_iostrided.c; the window in ad_ipvfs.h); MPI_Test/MPI_Wait move
 * the data.  ROMIO calls these only outside atomic mode (it locks and
 * blocks in atomic mode itself). */
#include "ad_ipvfs.h"

void ADIOI_IPVFS_IreadContig(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                             int file_ptr_type, ADIO_Offset offset, MPI_Request * request,
                             int *error_code)
{
    ADIOI_IPVFS_Irdwr(fd, buf, count, datatype, file_ptr_type, offset, 1, 0, request,
                      error_code);
}

void ADIOI_IPVFS_IwriteContig(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                              int file_ptr_type, ADIO_Offset offset, MPI_Request * request,
                              int *error_code)
{
    /* the planner only reads from buf when writing */
    ADIOI_IPVFS_Irdwr(fd, (void *) buf, count, datatype, file_ptr_type, offset, 1, 1, request,
                      error_code);
}
