/*
 * Interfaces between iPVFS's replacement sources for the standalone ROMIO
 * (adio/romio-fixes/, built into libromio by scripts/build-romio.sh).
 */
#ifndef IPVFS_FIXES_H_INCLUDED
#define IPVFS_FIXES_H_INCLUDED

#include "adio.h"

/* Error message texts, generated at build time from MPICH's errnames.txt
 * (ipvfs-fixes/errmsg_table.c), sorted by key (strcmp order). */
struct ipvfs_errmsg {
    const char *key;            /* "**iobaddisp" or "**io %s" */
    const char *text;           /* "Invalid displacement argument" */
};
extern const struct ipvfs_errmsg ipvfs_errmsgs[];
extern const size_t ipvfs_nerrmsgs;

/* The text for KEY, or NULL when the table has none. */
const char *ipvfs_errmsg_text(const char *key);

/* File error handlers (file_errhandler.c).  Handles of user handlers stay
 * valid while a file (or the default for MPI_FILE_NULL) uses them: acquire
 * when a handler is installed, release when it is replaced or the file goes
 * away.  Predefined handlers need neither. */
void ipvfs_errh_acquire(MPI_Errhandler eh);
void ipvfs_errh_release(MPI_Errhandler eh);

/* The function of a handler made by MPI_File_create_errhandler, or NULL. */
MPI_File_errhandler_function *ipvfs_errh_function(MPI_Errhandler eh);

#endif /* IPVFS_FIXES_H_INCLUDED */
