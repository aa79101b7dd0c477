/* The one place where client errors become MPI error codes. */
#include "ad_ipvfs.h"

#include <errno.h>

static int error_class(int code)
{
    switch (code) {
        case ENOENT:
        case ENOTDIR:
            return MPI_ERR_NO_SUCH_FILE;
        case EEXIST:
            return MPI_ERR_FILE_EXISTS;
        case EACCES:
        case EPERM:
            return MPI_ERR_ACCESS;
        case ENOSPC:
            return MPI_ERR_NO_SPACE;
        case EDQUOT:
            return MPI_ERR_QUOTA;
        case EROFS:
            return MPI_ERR_READ_ONLY;
        case ENOTSUP:
            return MPI_ERR_UNSUPPORTED_OPERATION;
        case ENAMETOOLONG:
        case EISDIR:
            return MPI_ERR_BAD_FILE;
        case EINVAL:
            return MPI_ERR_ARG;
        case EBUSY:
            return MPI_ERR_FILE_IN_USE;
        default:
            return MPI_ERR_IO;
    }
}

/* "**fail %s" is MPICH's message key whose text is just its argument, so
 * MPI_Error_string shows the client's message as it is. */
int ADIOI_IPVFS_Error(const char *myname, int line, const struct ipvfs_error *err)
{
    return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, line,
                                error_class(err->code), "**io", "**fail %s", err->msg);
}

int ADIOI_IPVFS_Client_id(void)
{
    int rank = 0;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}
