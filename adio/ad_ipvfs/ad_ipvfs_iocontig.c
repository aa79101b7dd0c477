/* Nonblocking contiguous read and write (IreadContig, IwriteContig): the
 * access is started and a generalized request returned at once
 * (ad_ipvfs_ireq.c); MPI_Test/MPI_Wait move the data.  ROMIO calls these
 * only outside atomic mode (it locks and blocks in atomic mode itself). */
#include "ad_ipvfs.h"

#include <errno.h>
#include <stdio.h>

static void irdwr_contig(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                         int file_ptr_type, ADIO_Offset offset, MPI_Request * request,
                         int writing, int *error_code)
{
    static char myname[] = "ADIOI_IPVFS_IRDWR_CONTIG";
    struct ipvfs_file *file = ADIOI_IPVFS_File(fd);
    struct ADIOI_IPVFS_ireq *r;
    struct ipvfs_aio *aio;
    struct ipvfs_error err;
    struct ipvfs_extent ext;
    struct iovec mem;
    MPI_Count type_size;
    uint64_t unused;

    MPI_Type_size_x(datatype, &type_size);
    if (file_ptr_type == ADIO_INDIVIDUAL)
        offset = fd->fp_ind;
    ext = (struct ipvfs_extent) {.offset = (uint64_t) offset,
        .len = (uint64_t) count * (uint64_t) type_size };
    mem = (struct iovec) {.iov_base = buf,.iov_len = (size_t) ext.len };
    r = ADIOI_IPVFS_Ireq_new();
    if (!r) {
        err.code = ENOMEM;
        snprintf(err.msg, sizeof(err.msg), "ipvfs: %s of %.200s failed: out of memory",
                 writing ? "write" : "read", fd->filename);
        *error_code = ADIOI_IPVFS_Error(myname, __LINE__, &err);
        return;
    }
    if (ipvfs_aio_start(file, writing, &ext, 1, &mem, 1, &aio, &err) < 0) {
        *error_code = ADIOI_IPVFS_Error(myname, __LINE__, &err);
        goto free_ireq;
    }
    if (ADIOI_IPVFS_Ireq_add(r, aio) < 0) {
        /* not handed over: finish it here; the call fails with ENOMEM
         * whatever the access's own result */
        (void) ipvfs_aio_finish(aio, &unused, &err);
        *error_code = MPI_ERR_NO_MEM;
        goto free_ireq;
    }
    *error_code = ADIOI_IPVFS_Ireq_post(r, request);
    if (*error_code != MPI_SUCCESS)
        goto free_ireq;
    /* MPI moves the individual pointer by the amount requested */
    if (file_ptr_type == ADIO_INDIVIDUAL)
        fd->fp_ind += (ADIO_Offset) ext.len;
    fd->fp_sys_posn = -1;
    return;

  free_ireq:
    ADIOI_IPVFS_Ireq_free(r);
}

void ADIOI_IPVFS_IreadContig(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                             int file_ptr_type, ADIO_Offset offset, MPI_Request * request,
                             int *error_code)
{
    irdwr_contig(fd, buf, count, datatype, file_ptr_type, offset, request, 0, error_code);
}

void ADIOI_IPVFS_IwriteContig(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                              int file_ptr_type, ADIO_Offset offset, MPI_Request * request,
                              int *error_code)
{
    /* the worker only reads from buf when writing */
    irdwr_contig(fd, (void *) buf, count, datatype, file_ptr_type, offset, request, 1,
                 error_code);
}
