/* Shared file pointers: kept by the metadata rank (SHFP in
 * common/proto.h) instead of in ROMIO's hidden file, which needs fcntl
 * locks.  adio/romio-fixes/06-ipvfs-shared-fp.patch routes
 * ADIO_Get_shared_fp / ADIO_Set_shared_fp here and calls the release from
 * MPI_File_close.
 *
 * A pointer belongs to one open instance (MPI: one MPI_File_open).  The
 * instance is named by a hash of fd->shared_fp_fname, which rank 0 builds
 * at every open and broadcasts, so every rank of the instance computes the
 * same name; the patch makes the name unique per open (pid, time, serial
 * number), so two opens of the same file (even in one process, within one
 * second) get different pointers.  A pointer starts at 0 on the
 * server on first use, as the hidden file would. */
#include "ad_ipvfs.h"

#include <string.h>

/* 64-bit FNV-1a of the instance's shared_fp_fname. */
static uint64_t instance_of(ADIO_File fd)
{
    const unsigned char *s = (const unsigned char *) fd->shared_fp_fname;
    uint64_t h = 0xcbf29ce484222325ull;

    while (*s) {
        h ^= *s++;
        h *= 0x100000001b3ull;
    }
    return h;
}

/* One SHFP call, its error turned into an MPI error code. */
static void shfp_call(ADIO_File fd, enum ipvfs_shfp_op op, int64_t value, int64_t * previous,
                      int *error_code)
{
    static char myname[] = "ADIOI_IPVFS_SHARED_FP";
    struct ipvfs_error err;

    if (ipvfs_shfp(ADIOI_IPVFS_File(fd), instance_of(fd), op, value, previous, &err) < 0) {
        *error_code = ADIOI_IPVFS_Error(myname, __LINE__, &err);
        return;
    }
    *error_code = MPI_SUCCESS;
}

void ADIOI_IPVFS_Get_shared_fp(ADIO_File fd, ADIO_Offset incr, ADIO_Offset * shared_fp,
                               int *error_code)
{
    int64_t previous = 0;

    shfp_call(fd, IPVFS_SHFP_FETCH_ADD, (int64_t) incr, &previous, error_code);
    if (*error_code == MPI_SUCCESS)
        *shared_fp = (ADIO_Offset) previous;
}

void ADIOI_IPVFS_Set_shared_fp(ADIO_File fd, ADIO_Offset offset, int *error_code)
{
    shfp_call(fd, IPVFS_SHFP_SET, (int64_t) offset, NULL, error_code);
}

/* Collective (MPI_File_close, after its barrier): one rank tells the server.
 * A failure is not the close's failure: the pointer's random name can
 * never be used again, so all it costs is a few bytes on the metadata rank
 * until it restarts. */
void ADIOI_IPVFS_Release_shared_fp(ADIO_File fd)
{
    int rank, error_code;

    MPI_Comm_rank(fd->comm, &rank);
    if (rank == 0 && ADIOI_IPVFS_File(fd))
        shfp_call(fd, IPVFS_SHFP_RELEASE, 0, NULL, &error_code);
}
