/* Fcntl: file size, preallocation (MPI_File_preallocate calls it on one
 * rank), atomicity. */
#include "ad_ipvfs.h"

/* The flag is all: while it is set, the entry points of ad_ipvfs_lock.c
 * lock what each access touches. */
static void set_atomicity(ADIO_File fd, int atomicity, int *error_code)
{
    fd->atomicity = atomicity ? 1 : 0;
    *error_code = MPI_SUCCESS;
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
