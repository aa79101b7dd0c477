/*
 * File error handlers for the standalone ROMIO:
 * MPI_File_create_errhandler, MPI_File_set_errhandler,
 * MPI_File_get_errhandler and MPI_File_call_errhandler (and PMPI_ names).
 *
 * libmpich has these calls, but they work on the file objects of MPICH's
 * own built-in ROMIO, not on ours; ROMIO's mpi-io/set_errh.c accepts only
 * the predefined handlers.  So the preloaded library provides them here:
 *
 * - A file error handler is an MPICH errhandler object made with
 *   MPI_Comm_create_errhandler, so that MPI_Errhandler_free (libmpich)
 *   works on it; a registry maps its handle to the user's file function,
 *   which MPIO_Err_return_file (mpio_err.c) calls with the MPI_File.
 * - MPICH frees the object, and may reuse the handle, once nothing refers
 *   to it.  While files (or the default for MPI_FILE_NULL) use a handler,
 *   one private communicator (split from MPI_COMM_SELF) holds it as its
 *   error handler, which keeps MPICH's reference; MPI_File_get_errhandler
 *   hands out a new reference with MPI_Comm_get_errhandler on it.
 */

#include "mpioimpl.h"
#include "adio_extern.h"
#include "ipvfs_fixes.h"

#include <pthread.h>
#include <stdlib.h>

#if defined(HAVE_WEAK_SYMBOLS) && defined(HAVE_PRAGMA_WEAK)
#pragma weak MPI_File_create_errhandler = PMPI_File_create_errhandler
#pragma weak MPI_File_set_errhandler = PMPI_File_set_errhandler
#pragma weak MPI_File_get_errhandler = PMPI_File_get_errhandler
#pragma weak MPI_File_call_errhandler = PMPI_File_call_errhandler
#else
#error "libipvfs-romio.so needs #pragma weak for its MPI_ and PMPI_ names"
#endif

struct errh_entry {
    MPI_Errhandler eh;
    MPI_File_errhandler_function *fn;
    int refs;                   /* files (and the default) using it */
    MPI_Comm holder;            /* holds MPICH's reference while refs > 0 */
    struct errh_entry *next;
};

static struct errh_entry *registry;
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;

static int is_predefined(MPI_Errhandler eh)
{
    return eh == MPI_ERRORS_RETURN || eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_ABORT;
}

/* Caller holds registry_lock. */
static struct errh_entry *find(MPI_Errhandler eh)
{
    struct errh_entry *e;

    for (e = registry; e != NULL; e = e->next)
        if (e->eh == eh)
            return e;
    return NULL;
}

MPI_File_errhandler_function *ipvfs_errh_function(MPI_Errhandler eh)
{
    struct errh_entry *e;
    MPI_File_errhandler_function *fn = NULL;

    if (is_predefined(eh) || pthread_mutex_lock(&registry_lock) != 0)
        return NULL;
    e = find(eh);
    if (e != NULL)
        fn = e->fn;
    pthread_mutex_unlock(&registry_lock);
    return fn;
}

void ipvfs_errh_acquire(MPI_Errhandler eh)
{
    struct errh_entry *e;

    if (is_predefined(eh) || pthread_mutex_lock(&registry_lock) != 0)
        return;
    e = find(eh);
    if (e != NULL && e->refs++ == 0) {
        if (MPI_Comm_split(MPI_COMM_SELF, 0, 0, &e->holder) != MPI_SUCCESS) {
            e->holder = MPI_COMM_NULL;
        } else if (MPI_Comm_set_errhandler(e->holder, eh) != MPI_SUCCESS) {
            MPI_Comm_free(&e->holder);
            e->holder = MPI_COMM_NULL;
        }
    }
    pthread_mutex_unlock(&registry_lock);
}

void ipvfs_errh_release(MPI_Errhandler eh)
{
    struct errh_entry *e;

    if (is_predefined(eh) || pthread_mutex_lock(&registry_lock) != 0)
        return;
    e = find(eh);
    if (e != NULL && e->refs > 0 && --e->refs == 0 && e->holder != MPI_COMM_NULL) {
        /* drops MPICH's reference; the entry stays until MPICH hands the
         * same handle out again for a new file handler */
        MPI_Comm_free(&e->holder);
        e->holder = MPI_COMM_NULL;
    }
    pthread_mutex_unlock(&registry_lock);
}

static int arg_error(const char *myname, int line, int errclass, const char *key)
{
    int code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, line,
                                    errclass, key, 0);
    return MPIO_Err_return_file(MPI_FILE_NULL, code);
}

int PMPI_File_create_errhandler(MPI_File_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    static const char myname[] = "MPI_FILE_CREATE_ERRHANDLER";
    struct errh_entry *e;
    MPI_Errhandler eh;
    int err;

    if (fn == NULL || errhandler == NULL)
        return arg_error(myname, __LINE__, MPI_ERR_ARG, "**nullptr");
    /* an MPICH errhandler object that owns the handle; MPICH never calls its
     * function (the holder communicators never see an error) */
    err = MPI_Comm_create_errhandler((MPI_Comm_errhandler_function *) (void (*)(void)) fn, &eh);
    if (err != MPI_SUCCESS)
        return MPIO_Err_return_file(MPI_FILE_NULL, err);
    if (pthread_mutex_lock(&registry_lock) != 0) {
        MPI_Errhandler_free(&eh);
        return arg_error(myname, __LINE__, MPI_ERR_INTERN, "**fail");
    }
    e = find(eh);       /* a freed handle that MPICH handed out again */
    if (e == NULL) {
        e = calloc(1, sizeof(*e));
        if (e == NULL) {
            pthread_mutex_unlock(&registry_lock);
            MPI_Errhandler_free(&eh);
            return arg_error(myname, __LINE__, MPI_ERR_NO_MEM, "**nomem");
        }
        e->eh = eh;
        e->holder = MPI_COMM_NULL;
        e->next = registry;
        registry = e;
    }
    e->fn = fn;
    pthread_mutex_unlock(&registry_lock);
    *errhandler = eh;
    return MPI_SUCCESS;
}

int PMPI_File_set_errhandler(MPI_File mpi_fh, MPI_Errhandler errhandler)
{
    static const char myname[] = "MPI_FILE_SET_ERRHANDLER";
    int error_code = MPI_SUCCESS;
    MPI_Errhandler old;
    ADIO_File fh;

    if (!is_predefined(errhandler) && ipvfs_errh_function(errhandler) == NULL) {
        error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                          MPI_ERR_ARG, "**errhandnotfile", 0);
        return MPIO_Err_return_file(mpi_fh, error_code);
    }
    if (mpi_fh == MPI_FILE_NULL) {
        ipvfs_errh_acquire(errhandler);
        old = ADIOI_DFLT_ERR_HANDLER;
        ADIOI_DFLT_ERR_HANDLER = errhandler;
        ipvfs_errh_release(old);
        return MPI_SUCCESS;
    }
    fh = MPIO_File_resolve(mpi_fh);
    MPIO_CHECK_FILE_HANDLE(fh, myname, error_code);
    ipvfs_errh_acquire(errhandler);
    old = fh->err_handler;
    fh->err_handler = errhandler;
    ipvfs_errh_release(old);
  fn_exit:
    return error_code;
}

int PMPI_File_get_errhandler(MPI_File mpi_fh, MPI_Errhandler *errhandler)
{
    static const char myname[] = "MPI_FILE_GET_ERRHANDLER";
    int error_code = MPI_SUCCESS;
    struct errh_entry *e;
    MPI_Errhandler eh;
    ADIO_File fh;

    if (errhandler == NULL)
        return arg_error(myname, __LINE__, MPI_ERR_ARG, "**nullptr");
    if (mpi_fh == MPI_FILE_NULL) {
        eh = ADIOI_DFLT_ERR_HANDLER;
    } else {
        fh = MPIO_File_resolve(mpi_fh);
        MPIO_CHECK_FILE_HANDLE(fh, myname, error_code);
        eh = fh->err_handler;
    }
    *errhandler = eh;
    if (is_predefined(eh) || pthread_mutex_lock(&registry_lock) != 0)
        goto fn_exit;
    /* the caller gets a reference of its own (MPI_Errhandler_free it) */
    e = find(eh);
    if (e != NULL && e->holder != MPI_COMM_NULL &&
        MPI_Comm_get_errhandler(e->holder, errhandler) != MPI_SUCCESS)
        *errhandler = eh;
    pthread_mutex_unlock(&registry_lock);
  fn_exit:
    return error_code;
}

int PMPI_File_call_errhandler(MPI_File mpi_fh, int errorcode)
{
    static const char myname[] = "MPI_FILE_CALL_ERRHANDLER";
    int error_code = MPI_SUCCESS;
    ADIO_File fh;

    if (mpi_fh != MPI_FILE_NULL) {
        fh = MPIO_File_resolve(mpi_fh);
        MPIO_CHECK_FILE_HANDLE(fh, myname, error_code);
    }
    /* runs the handler; its verdict is not this call's result */
    (void) MPIO_Err_return_file(mpi_fh, errorcode);
  fn_exit:
    return error_code;
}
