/* Close: drops the file; connections stay cached for other files.  A rank
 * whose writes since the last sync may have been lost in an I/O node's
 * restart gets the write verifier's error.
 *
 * Delete-on-close: ROMIO's ADIO_Close calls this first and then, on
 * ranklist[0] only, ADIO_Delete, which reaches ADIOI_IPVFS_Delete without
 * hints: a file whose cluster was named by the ipvfs_map hint alone would
 * stay.  So the rank that ROMIO deletes on removes the file here, through
 * the file's own client, and leaves a note that makes ROMIO's following
 * delete of that name a no-op (ad_ipvfs_delete.c). */
#include "ad_ipvfs.h"

#include <errno.h>

static void remove_at_close(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_IPVFS_CLOSE";
    struct ipvfs_file *file = ADIOI_IPVFS_File(fd);
    struct ipvfs_error err;
    int myrank;

    MPI_Comm_rank(fd->comm, &myrank);
    if (myrank != fd->hints->ranklist[0])
        return;
    if (ipvfs_remove(file->client, file->path, &err) < 0) {
        *error_code = ADIOI_IPVFS_Error(myname, __LINE__, &err);
        return;
    }
    ADIOI_IPVFS_Note_removed(fd->filename);
}

/* A rank that wrote since its last sync syncs the datafiles it wrote (the
 * I/O nodes' L1 caches hold them dirty until then or until their
 * write-back), and writes that an I/O node's restart may have lost fail
 * the close (the write verifier, as MPI_File_sync checks it).  Each rank
 * answers for its own writes, without a collective call: ROMIO may close
 * on some ranks only. */
static void sync_written(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_IPVFS_CLOSE";
    struct ipvfs_error err;

    if (ipvfs_close_check(ADIOI_IPVFS_File(fd), &err) < 0 && *error_code == MPI_SUCCESS)
        *error_code = ADIOI_IPVFS_Error(myname, __LINE__, &err);
}

/* mtime: each rank that wrote since the last sync sends one SETATTR
 * MTIME_NOW (the metadata rank keeps mtime; the I/O nodes never tell it).
 * One small request per writing rank and close, none per write; so during
 * a write stat shows the time of the last close or sync.  A file removed
 * meanwhile by another process is no error. */
static void touch_written(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_IPVFS_CLOSE";
    struct ipvfs_setattr_req req = { .valid = IPVFS_SETATTR_MTIME_NOW };
    struct ipvfs_file *file = ADIOI_IPVFS_File(fd);
    struct ipvfs_error err;

    if (ipvfs_setattr(file->client, file->path, &req, NULL, &err) < 0 && err.code != ENOENT &&
        *error_code == MPI_SUCCESS)
        *error_code = ADIOI_IPVFS_Error(myname, __LINE__, &err);
}

void ADIOI_IPVFS_Close(ADIO_File fd, int *error_code)
{
    int wrote;

    /* requests the program left unfinished (MPI_Request_free) end here,
     * before their file goes */
    if (fd->fs_ptr)
        ADIOI_IPVFS_Nbq_drain(&((struct ADIOI_IPVFS_fs *) fd->fs_ptr)->nbq);
    wrote = ipvfs_file_unsynced(ADIOI_IPVFS_File(fd));
    *error_code = MPI_SUCCESS;
    sync_written(fd, error_code);
    if (fd->access_mode & ADIO_DELETE_ON_CLOSE)
        remove_at_close(fd, error_code);
    else if (wrote)
        touch_written(fd, error_code);
    ipvfs_file_close(ADIOI_IPVFS_File(fd));
    if (fd->fs_ptr)
        ADIOI_Free(fd->fs_ptr);
    fd->fs_ptr = NULL;
}
