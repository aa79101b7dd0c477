/* Fcntl: file size, preallocation (MPI_File_preallocate calls it on one
 * rank), atomicity (not supported: said clearly). */
#include "ad_ipvfs.h"

#include <errno.h>
#include <stdio.h>

static void set_atomicity(ADIO_File fd, int atomicity, int *error_code)
{
    static char myname[] = "ADIOI_IPVFS_FCNTL";
    struct ipvfs_error err;

    if (!atomicity) {
        fd->atomicity = 0;
        *error_code = MPI_SUCCESS;
        return;
    }
    err.code = ENOTSUP;
    snprintf(err.msg, sizeof(err.msg),
             "ipvfs: atomic mode of %s failed: iPVFS does not support MPI atomic mode",
             fd->filename);
    *error_code = ADIOI_IPVFS_Error(myname, __LINE__, &err);
}

void ADIOI_IPVFS_Fcntl(ADIO_File fd, int flag, ADIO_Fcntl_t * fcntl_struct, int *error_code)
{
    static char myname[] = "ADIOI_IPVFS_FCNTL";
    struct ipvfs_file *file = ADIOI_IPVFS_File(fd);
    struct ipvfs_error err;
    uint64_t size;

    switch (flag) {
        case ADIO_FCNTL_GET_FSIZE:
            if (ipvfs_get_size(file, &size, &err) < 0) {
                *error_code = ADIOI_IPVFS_Error(myname, __LINE__, &err);
                return;
            }
            fcntl_struct->fsize = (ADIO_Offset) size;
            *error_code = MPI_SUCCESS;
            return;
        case ADIO_FCNTL_SET_DISKSPACE:
            if (ipvfs_preallocate(file, (uint64_t) fcntl_struct->diskspace, &err) < 0)
                *error_code = ADIOI_IPVFS_Error(myname, __LINE__, &err);
            else
                *error_code = MPI_SUCCESS;
            return;
        case ADIO_FCNTL_SET_ATOMICITY:
            set_atomicity(fd, fcntl_struct->atomicity, error_code);
            return;
        default:
            *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname,
                                               __LINE__, MPI_ERR_ARG, "**flag", "**flag %d",
                                               flag);
            return;
    }
}
