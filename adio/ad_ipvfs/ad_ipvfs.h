/* ad_ipvfs: the ROMIO driver for iPVFS (file names "ipvfs:/path").
 *
 * The driver is a thin layer over libipvfs-client (adio/client/
 * ipvfs_client.h): ROMIO's generic code does strided, collective and
 * nonblocking I/O on top of the contiguous operations here.
 *
 * Hints (MPI_Info; read when the file is opened):
 *   ipvfs_map        path of the server map; overrides $IPVFS_MAP.
 *   striping_unit    bytes per stripe unit; 0 means the cluster default.
 *                    Only used when the open creates the file.
 *   striping_factor  number of I/O nodes to stripe over; 0 means all of
 *                    them, and so do values above their number.  Only used
 *                    when the open creates the file.
 * A value that is not an integer from 0 to INT_MAX fails MPI_File_open with
 * MPI_ERR_ARG and a message naming the hint.  After the open,
 * MPI_File_get_info reports the file's actual striping_unit and
 * striping_factor and the ipvfs_map in effect.
 *
 * Semantics: MPI_File_sync is durable when it returns (DF_SYNC on every
 * datafile).  Atomic mode and shared file pointers are not supported and
 * say so (MPI_ERR_UNSUPPORTED_OPERATION).  MPI_File_delete finds the
 * cluster through $IPVFS_MAP (it takes no hints).  Deleting a file that
 * others still have open removes its data at once (no POSIX
 * unlink-after-close semantics; MPI leaves this implementation-defined).
 *
 * Errors: every failure of the client library goes through
 * ADIOI_IPVFS_Error(), which picks the MPI error class and prints the
 * library's message (what, which file, which server, why). */
#ifndef AD_IPVFS_H_INCLUDED
#define AD_IPVFS_H_INCLUDED

#include "adio.h"

#include "adio/client/ipvfs_client.h"

/* fd->fs_ptr of an open file. */
static inline struct ipvfs_file *ADIOI_IPVFS_File(ADIO_File fd)
{
    return (struct ipvfs_file *) fd->fs_ptr;
}

/* The one translation of a client error into an MPI error code. */
int ADIOI_IPVFS_Error(const char *myname, int line, const struct ipvfs_error *err);

/* The MPI_COMM_WORLD rank, our client id in HELLO. */
int ADIOI_IPVFS_Client_id(void);

/* After a successful open: fd->info shows the hints in effect. */
void ADIOI_IPVFS_Show_hints(ADIO_File fd, const char *map_path);

void ADIOI_IPVFS_Open(ADIO_File fd, int *error_code);
void ADIOI_IPVFS_OpenColl(ADIO_File fd, int rank, int access_mode, int *error_code);
void ADIOI_IPVFS_Close(ADIO_File fd, int *error_code);
void ADIOI_IPVFS_ReadContig(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                            int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                            int *error_code);
void ADIOI_IPVFS_WriteContig(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                             int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                             int *error_code);
void ADIOI_IPVFS_Fcntl(ADIO_File fd, int flag, ADIO_Fcntl_t * fcntl_struct, int *error_code);
void ADIOI_IPVFS_SetInfo(ADIO_File fd, MPI_Info users_info, int *error_code);
void ADIOI_IPVFS_Flush(ADIO_File fd, int *error_code);
void ADIOI_IPVFS_Resize(ADIO_File fd, ADIO_Offset size, int *error_code);
void ADIOI_IPVFS_Delete(const char *filename, int *error_code);
int ADIOI_IPVFS_Feature(ADIO_File fd, int flag);

#endif
