/* Close: drops the file; connections stay cached for other files. */
#include "ad_ipvfs.h"

void ADIOI_IPVFS_Close(ADIO_File fd, int *error_code)
{
    ipvfs_file_close(ADIOI_IPVFS_File(fd));
    if (fd->fs_ptr)
        ADIOI_Free(fd->fs_ptr);
    fd->fs_ptr = NULL;
    *error_code = MPI_SUCCESS;
}
