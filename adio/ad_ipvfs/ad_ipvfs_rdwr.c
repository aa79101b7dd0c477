/* Contiguous read and write: thin entry points over one worker that
 * honours the file pointers and the status byte count like other drivers. */
#include "ad_ipvfs.h"

static void rdwr_contig(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                        int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                        int writing, int *error_code)
{
    static char myname[] = "ADIOI_IPVFS_RDWR_CONTIG";
    struct ipvfs_file *file = ADIOI_IPVFS_File(fd);
    struct ipvfs_error err;
    MPI_Count type_size;
    uint64_t len, done = 0;
    int rc;

    MPI_Type_size_x(datatype, &type_size);
    len = (uint64_t) count * (uint64_t) type_size;
    if (file_ptr_type == ADIO_INDIVIDUAL)
        offset = fd->fp_ind;
    if (writing)
        rc = ipvfs_write(file, (uint64_t) offset, buf, len, &done, &err);
    else
        rc = ipvfs_read(file, (uint64_t) offset, buf, len, &done, &err);
    if (rc < 0) {
        *error_code = ADIOI_IPVFS_Error(myname, __LINE__, &err);
        return;
    }
    if (file_ptr_type == ADIO_INDIVIDUAL)
        fd->fp_ind += (ADIO_Offset) done;
    fd->fp_sys_posn = offset + (ADIO_Offset) done;
#ifdef HAVE_STATUS_SET_BYTES
    MPIR_Status_set_bytes(status, datatype, (MPI_Count) done);
#endif
    *error_code = MPI_SUCCESS;
}

void ADIOI_IPVFS_ReadContig(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                            int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                            int *error_code)
{
    rdwr_contig(fd, buf, count, datatype, file_ptr_type, offset, status, 0, error_code);
}

void ADIOI_IPVFS_WriteContig(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                             int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                             int *error_code)
{
    /* the worker only reads from buf when writing */
    rdwr_contig(fd, (void *) buf, count, datatype, file_ptr_type, offset, status, 1,
                error_code);
}
