/* Nonblocking noncontiguous read and write (IreadStrided, IwriteStrided):
 * list I/O batches started by the strided worker and returned as one
 * generalized request (ad_ipvfs_ireq.c).  In atomic mode the access
 * blocks under its lock and returns a completed request, as ROMIO does
 * for contiguous accesses (ADIOI_FAKE_* calls the table's atomic entry
 * points). */
#include "ad_ipvfs.h"

static void irdwr_strided(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                          int file_ptr_type, ADIO_Offset offset, MPI_Request * request,
                          int writing, int *error_code)
{
    struct ADIOI_IPVFS_ireq *r = ADIOI_IPVFS_Ireq_new();

    if (!r) {
        *error_code = MPI_ERR_NO_MEM;
        return;
    }
    ADIOI_IPVFS_Rdwr_strided(fd, buf, count, datatype, file_ptr_type, offset, NULL, r, writing,
                             error_code);
    if (*error_code == MPI_SUCCESS)
        *error_code = ADIOI_IPVFS_Ireq_post(r, request);
    if (*error_code != MPI_SUCCESS)
        ADIOI_IPVFS_Ireq_free(r);
}

void ADIOI_IPVFS_IreadStrided(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                              int file_ptr_type, ADIO_Offset offset, MPI_Request * request,
                              int *error_code)
{
    if (fd->atomicity)
        ADIOI_FAKE_IreadStrided(fd, buf, count, datatype, file_ptr_type, offset, request,
                                error_code);
    else
        irdwr_strided(fd, buf, count, datatype, file_ptr_type, offset, request, 0, error_code);
}

void ADIOI_IPVFS_IwriteStrided(ADIO_File fd, const void *buf, int count,
                               MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                               MPI_Request * request, int *error_code)
{
    if (fd->atomicity)
        ADIOI_FAKE_IwriteStrided(fd, buf, count, datatype, file_ptr_type, offset, request,
                                 error_code);
    else
        /* the worker only reads from buf when writing */
        irdwr_strided(fd, (void *) buf, count, datatype, file_ptr_type, offset, request, 1,
                      error_code);
}
