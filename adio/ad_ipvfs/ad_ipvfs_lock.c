/* Atomic mode (MPI_File_set_atomicity): while fd->atomicity is set, every
 * read and write of the driver holds a byte-range lock of the metadata rank
 * (LOCK/UNLOCK, common/proto.h) over the bytes it touches: exclusive for
 * writes, shared for reads; a strided access locks its whole extent, from
 * its first to its last byte.  So two accesses that overlap never
 * interleave, which is what MPI's atomic mode asks for.
 *
 * These four entry points wrap the real ones (ad_ipvfs_rdwr.c,
 * ad_ipvfs_strided.c) in the operations table, so every path into the
 * driver (independent, nonblocking, shared-pointer, the two-phase
 * aggregators) is covered in one place.  A lock is held only inside one
 * call, never across MPI communication, so collective calls cannot
 * deadlock on it.  Outside atomic mode they only forward. */
#include "ad_ipvfs.h"

/* Byte range [first, last] of a contiguous access (offset in bytes). */
static void contig_bounds(ADIO_File fd, int count, MPI_Datatype datatype, int file_ptr_type,
                          ADIO_Offset offset, ADIO_Offset * first, ADIO_Offset * last)
{
    MPI_Count type_size;

    MPI_Type_size_x(datatype, &type_size);
    *first = file_ptr_type == ADIO_INDIVIDUAL ? fd->fp_ind : offset;
    *last = *first + (ADIO_Offset) count * (ADIO_Offset) type_size - 1;
}

/* Byte range [first, last] of a strided access (offset in etypes); empty
 * (last < first) when it moves no bytes. */
static void strided_bounds(ADIO_File fd, int count, MPI_Datatype datatype, int file_ptr_type,
                           ADIO_Offset offset, ADIO_Offset * first, ADIO_Offset * last)
{
    MPI_Count type_size, filetype_size;

    MPI_Type_size_x(datatype, &type_size);
    MPI_Type_size_x(fd->filetype, &filetype_size);
    *first = 0;
    *last = -1;
    /* ROMIO's bounds code asserts a filetype with bytes */
    if (count <= 0 || type_size == 0 || filetype_size == 0)
        return;
    ADIOI_Calc_bounds(fd, count, datatype, file_ptr_type, offset, first, last);
}

/* Takes the lock when atomic mode needs one: 1 when taken, 0 when none was
 * needed, -1 with *error_code set when it could not be taken. */
static int lock_extent(ADIO_File fd, ADIO_Offset first, ADIO_Offset last, int exclusive,
                       int *error_code)
{
    static char myname[] = "ADIOI_IPVFS_LOCK";
    struct ipvfs_error err;

    if (!fd->atomicity || last < first)
        return 0;
    if (ipvfs_lock(ADIOI_IPVFS_File(fd), (uint64_t) first, (uint64_t) (last - first + 1),
                   exclusive, &err) < 0) {
        *error_code = ADIOI_IPVFS_Error(myname, __LINE__, &err);
        return -1;
    }
    return 1;
}

/* Releases it; an unlock failure is reported only when the access itself
 * succeeded (a failed access may have taken the connection, and so the
 * lock, with it). */
static void unlock_extent(ADIO_File fd, ADIO_Offset first, ADIO_Offset last, int exclusive,
                          int *error_code)
{
    static char myname[] = "ADIOI_IPVFS_UNLOCK";
    struct ipvfs_error err;

    if (ipvfs_unlock(ADIOI_IPVFS_File(fd), (uint64_t) first, (uint64_t) (last - first + 1),
                     exclusive, &err) < 0 && *error_code == MPI_SUCCESS)
        *error_code = ADIOI_IPVFS_Error(myname, __LINE__, &err);
}

void ADIOI_IPVFS_Atomic_ReadContig(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                                   int file_ptr_type, ADIO_Offset offset,
                                   ADIO_Status * status, int *error_code)
{
    ADIO_Offset first, last;
    int locked;

    contig_bounds(fd, count, datatype, file_ptr_type, offset, &first, &last);
    if ((locked = lock_extent(fd, first, last, 0, error_code)) < 0)
        return;
    ADIOI_IPVFS_ReadContig(fd, buf, count, datatype, file_ptr_type, offset, status, error_code);
    if (locked)
        unlock_extent(fd, first, last, 0, error_code);
}

void ADIOI_IPVFS_Atomic_WriteContig(ADIO_File fd, const void *buf, int count,
                                    MPI_Datatype datatype, int file_ptr_type,
                                    ADIO_Offset offset, ADIO_Status * status, int *error_code)
{
    ADIO_Offset first, last;
    int locked;

    contig_bounds(fd, count, datatype, file_ptr_type, offset, &first, &last);
    if ((locked = lock_extent(fd, first, last, 1, error_code)) < 0)
        return;
    ADIOI_IPVFS_WriteContig(fd, buf, count, datatype, file_ptr_type, offset, status,
                            error_code);
    if (locked)
        unlock_extent(fd, first, last, 1, error_code);
}

void ADIOI_IPVFS_Atomic_ReadStrided(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                                    int file_ptr_type, ADIO_Offset offset,
                                    ADIO_Status * status, int *error_code)
{
    ADIO_Offset first, last;
    int locked;

    strided_bounds(fd, count, datatype, file_ptr_type, offset, &first, &last);
    if ((locked = lock_extent(fd, first, last, 0, error_code)) < 0)
        return;
    ADIOI_IPVFS_ReadStrided(fd, buf, count, datatype, file_ptr_type, offset, status,
                            error_code);
    if (locked)
        unlock_extent(fd, first, last, 0, error_code);
}

void ADIOI_IPVFS_Atomic_WriteStrided(ADIO_File fd, const void *buf, int count,
                                     MPI_Datatype datatype, int file_ptr_type,
                                     ADIO_Offset offset, ADIO_Status * status, int *error_code)
{
    ADIO_Offset first, last;
    int locked;

    strided_bounds(fd, count, datatype, file_ptr_type, offset, &first, &last);
    if ((locked = lock_extent(fd, first, last, 1, error_code)) < 0)
        return;
    ADIOI_IPVFS_WriteStrided(fd, buf, count, datatype, file_ptr_type, offset, status,
                             error_code);
    if (locked)
        unlock_extent(fd, first, last, 1, error_code);
}
