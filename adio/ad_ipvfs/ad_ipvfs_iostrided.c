/* Nonblocking noncontiguous read and write (IreadStrided, IwriteStrided),
 * and the part all nonblocking independent calls share (ADIOI_IPVFS_Irdwr):
 * the access is planned (ad_ipvfs_strided.c) and queued as a generalized
 * request that sends it in bounded pieces (ad_ipvfs_ireq.c).  In atomic
 * mode the access blocks under its lock and returns a completed request,
 * as ROMIO does for contiguous accesses (ADIOI_FAKE_* calls the table's
 * atomic entry points). */
#include "ad_ipvfs.h"

void ADIOI_IPVFS_Irdwr(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                       int file_ptr_type, ADIO_Offset offset, int contig, int writing,
                       MPI_Request * request, int *error_code)
{
    static char myname[] = "ADIOI_IPVFS_IRDWR";
    struct ADIOI_IPVFS_fs *fs = fd->fs_ptr;
    struct ADIOI_IPVFS_ireq *r;
    struct ipvfs_error err;
    uint64_t total;
    void *plan;

    if (ADIOI_IPVFS_Plan_new(fd, buf, count, datatype, file_ptr_type, offset, contig, writing,
                             &plan, &total, &err) < 0) {
        *error_code = ADIOI_IPVFS_Error(myname, __LINE__, &err);
        return;
    }
    r = ADIOI_IPVFS_Ireq_new(&ADIOI_IPVFS_Plan_ops, plan, total);
    if (!r) {
        ADIOI_IPVFS_Plan_ops.free(plan);
        *error_code = MPI_ERR_NO_MEM;
        return;
    }
    *error_code = ADIOI_IPVFS_Ireq_post(r, &fs->nbq, request);
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
        ADIOI_IPVFS_Irdwr(fd, buf, count, datatype, file_ptr_type, offset, 0, 0, request,
                          error_code);
}

void ADIOI_IPVFS_IwriteStrided(ADIO_File fd, const void *buf, int count,
                               MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                               MPI_Request * request, int *error_code)
{
    if (fd->atomicity)
        ADIOI_FAKE_IwriteStrided(fd, buf, count, datatype, file_ptr_type, offset, request,
                                 error_code);
    else
        /* the planner only reads from buf when writing */
        ADIOI_IPVFS_Irdwr(fd, (void *) buf, count, datatype, file_ptr_type, offset, 0, 1,
                          request, error_code);
}
