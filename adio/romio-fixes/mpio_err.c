/*
 * iPVFS's error glue for the standalone ROMIO, replacing
 * mpi-io/glue/default/mpio_err.c (see 05-glue-errhandlers.patch).
 *
 * ROMIO reports an error by calling MPIO_Err_create_code with an error class
 * and message keys such as "**iobaddisp" or "**io %s" plus arguments.  The
 * default glue printed the raw key to stderr and returned the bare class, so
 * MPI_Error_string gave only the class's text.  Here each distinct message
 * becomes a real MPI error code of that class (MPI_Add_error_code) whose
 * string (MPI_Add_error_string) is the key's text from MPICH's errnames.txt
 * (ipvfs-fixes/errmsg_table.c, generated at build time), with the arguments
 * filled in; MPI_Error_string is interposed to show it (see there).
 * MPIO_Err_return_file runs the file's error handler, user handlers made by
 * MPI_File_create_errhandler included.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE     /* RTLD_NEXT */
#endif
#include "mpioimpl.h"
#include "adio_extern.h"
#include "ipvfs_fixes.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_key(const void *key, const void *elem)
{
    return strcmp((const char *) key, ((const struct ipvfs_errmsg *) elem)->key);
}

const char *ipvfs_errmsg_text(const char *key)
{
    const struct ipvfs_errmsg *m;

    if (key == NULL)
        return NULL;
    m = bsearch(key, ipvfs_errmsgs, ipvfs_nerrmsgs, sizeof(ipvfs_errmsgs[0]), cmp_key);
    return m ? m->text : NULL;
}

#define MAX_ARGS 8
#define ARG_LEN 256

/* Fills TEXT's conversions (%s, %d, ... in the order the specific key
 * "**name %s %d" lists them) with the caller's arguments.  Returns 0 when
 * the key lists a conversion this formatter does not know; nothing is
 * consumed from AP then, and the caller falls back to the generic text. */
static int format_specific(char *out, size_t len, const char *key, const char *text, va_list ap)
{
    char args[MAX_ARGS][ARG_LEN];
    char conv[MAX_ARGS];
    int nargs = 0, i;
    const char *p;
    size_t o = 0;

    for (p = strchr(key, '%'); p != NULL; p = strchr(p + 1, '%')) {
        if (nargs == MAX_ARGS)
            return 0;
        switch (p[1]) {
            case 's':
            case 'd':
            case 'i':
            case 'x':
            case 'p':
            case 'L':
                conv[nargs++] = p[1];
                break;
            default:
                return 0;
        }
    }
    for (i = 0; i < nargs; i++) {
        switch (conv[i]) {
            case 's':{
                    const char *s = va_arg(ap, const char *);
                    snprintf(args[i], ARG_LEN, "%s", s ? s : "(null)");
                    break;
                }
            case 'd':
            case 'i':
                snprintf(args[i], ARG_LEN, "%d", va_arg(ap, int));
                break;
            case 'x':
                snprintf(args[i], ARG_LEN, "%x", va_arg(ap, unsigned int));
                break;
            case 'p':
                snprintf(args[i], ARG_LEN, "%p", va_arg(ap, void *));
                break;
            case 'L':
                snprintf(args[i], ARG_LEN, "%lld", va_arg(ap, long long));
                break;
        }
    }
    /* copy TEXT, replacing its conversions in order */
    i = 0;
    for (p = text; *p != '\0' && o + 1 < len; p++) {
        const char *add = NULL;
        char one[2] = { 0, 0 };
        if (p[0] == '%' && p[1] == '%') {
            one[0] = '%';
            add = one;
            p++;
        } else if (p[0] == '%' && p[1] != '\0') {
            add = (i < nargs) ? args[i] : "";
            i++;
            p++;
        } else {
            one[0] = *p;
            add = one;
        }
        while (*add != '\0' && o + 1 < len)
            out[o++] = *add++;
    }
    out[o] = '\0';
    return 1;
}

/* Error codes made so far, one per (class, message).  When the table is
 * full the oldest code of the same class gets the new text (MPI lets
 * MPI_Add_error_string replace a code's string), so a program that makes
 * many distinct errors cannot exhaust MPICH's dynamic codes. */
#define MAX_CODES 256
static struct {
    int errclass, code;
    unsigned long stamp;
    char msg[MPI_MAX_ERROR_STRING];
} codes[MAX_CODES];
static int ncodes;
static unsigned long next_stamp;
static pthread_mutex_t codes_lock = PTHREAD_MUTEX_INITIALIZER;

static int code_for(int errclass, const char *msg)
{
    int i, code = errclass, oldest = -1;

    if (pthread_mutex_lock(&codes_lock) != 0)
        return errclass;
    for (i = 0; i < ncodes; i++) {
        if (codes[i].errclass == errclass && strcmp(codes[i].msg, msg) == 0) {
            code = codes[i].code;
            goto out;
        }
        if (codes[i].errclass == errclass &&
            (oldest < 0 || codes[i].stamp < codes[oldest].stamp))
            oldest = i;
    }
    if (ncodes < MAX_CODES) {
        if (MPI_Add_error_code(errclass, &code) != MPI_SUCCESS) {
            code = errclass;
            goto out;
        }
        i = ncodes++;
        codes[i].errclass = errclass;
        codes[i].code = code;
    } else if (oldest >= 0) {
        i = oldest;
        code = codes[i].code;
    } else {
        goto out;       /* full, and no code of this class to reuse */
    }
    snprintf(codes[i].msg, sizeof(codes[i].msg), "%s", msg);
    codes[i].stamp = next_stamp++;
    /* MPICH records the text but does not show it (see PMPI_Error_string) */
    if (MPI_Add_error_string(code, codes[i].msg) != MPI_SUCCESS) {
        codes[i].msg[0] = '\0';         /* never matches again */
        code = errclass;
    }
  out:
    pthread_mutex_unlock(&codes_lock);
    return code;
}

/* Copies the text of one of our codes into S; 0 when CODE is not ours. */
static int code_text(int code, char *s)
{
    int i, found = 0;

    if (pthread_mutex_lock(&codes_lock) != 0)
        return 0;
    for (i = 0; i < ncodes && !found; i++) {
        if (codes[i].code == code && codes[i].msg[0] != '\0') {
            memcpy(s, codes[i].msg, sizeof(codes[i].msg));
            found = 1;
        }
    }
    pthread_mutex_unlock(&codes_lock);
    return found;
}

/* MPI_Error_string, interposed.  MPICH (4.0) gives a code added to a
 * predefined class by MPI_Add_error_code no mark that it is dynamic, so its
 * MPI_Error_string decodes such a code as one of MPICH's own and prints an
 * unrelated text, ignoring MPI_Add_error_string (MPI_Error_class is right).
 * So this library answers for its own codes and passes every other code to
 * the next MPI_Error_string, libmpich's. */
#pragma weak MPI_Error_string = PMPI_Error_string
int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
    static int (*next) (int, char *, int *);

    if (string != NULL && resultlen != NULL && code_text(errorcode, string)) {
        *resultlen = (int) strlen(string);
        return MPI_SUCCESS;
    }
    if (next == NULL)
        next = (int (*)(int, char *, int *)) dlsym(RTLD_NEXT, "PMPI_Error_string");
    if (next == NULL) {
        if (string != NULL && resultlen != NULL) {
            snprintf(string, MPI_MAX_ERROR_STRING, "error code %d (no MPI_Error_string: %s)",
                     errorcode, dlerror());
            *resultlen = (int) strlen(string);
        }
        return MPI_ERR_INTERN;
    }
    return next(errorcode, string, resultlen);
}

/* The last predefined error class.  MPICH's MPI_ERR_LASTCODE is its last
 * error *code*, far above the classes; the standard only promises that the
 * predefined classes lie between MPI_SUCCESS and MPI_ERR_LASTCODE. */
#ifdef MPICH_ERR_LAST_CLASS
#define LAST_CLASS MPICH_ERR_LAST_CLASS
#else
#define LAST_CLASS MPI_ERR_LASTCODE
#endif

/* ROMIO and its drivers report errors in MPI's predefined classes.  Any
 * other value would make MPI_Add_error_code build a code that MPICH
 * rejects in MPI_Add_error_string, whose fatal error handler ends the job
 * (or a code of an unrelated class), so it becomes MPI_ERR_IO. */
static int valid_class(int error_class)
{
    return error_class > MPI_SUCCESS && error_class <= LAST_CLASS;
}

int MPIO_Err_create_code(int lastcode, int fatal, const char fcname[],
                         int line, int error_class, const char generic_msg[],
                         const char specific_msg[], ...)
{
    char msg[MPI_MAX_ERROR_STRING], why[MPI_MAX_ERROR_STRING];
    const char *text;
    int done = 0;

    (void) fatal;
    (void) line;
    if (error_class == MPI_SUCCESS)
        return MPI_SUCCESS;
    if (specific_msg != NULL && (text = ipvfs_errmsg_text(specific_msg)) != NULL) {
        va_list ap;
        va_start(ap, specific_msg);
        done = format_specific(msg, sizeof(msg), specific_msg, text, ap);
        va_end(ap);
    }
    if (!done) {
        text = ipvfs_errmsg_text(generic_msg);
        if (text == NULL || *text == '\0') /* no text: show the key without its stars */
            text = generic_msg ? generic_msg + strspn(generic_msg, "*") : "I/O error";
        snprintf(msg, sizeof(msg), "%s", text);
    }
    /* the failure below this one, where ROMIO passes it on (07-shared-fp-
     * errors.patch): its text says why ("Could not access shared file
     * pointer" alone does not) */
    if (lastcode != MPI_SUCCESS && code_text(lastcode, why)) {
        size_t n = strlen(msg);
        snprintf(msg + n, sizeof(msg) - n, ": %s", why);
    }
    /* name the MPI function, as MPICH's error stack does */
    if (fcname != NULL && strlen(msg) + strlen(fcname) + 8 < sizeof(msg)) {
        size_t n = strlen(msg);
        while (n > 0 && msg[n - 1] == ' ')
            msg[--n] = '\0';
        snprintf(msg + n, sizeof(msg) - n, " (in %s)", fcname);
    }
    if (!valid_class(error_class)) {
        /* keep the message; say what was wrong for whoever debugs the driver */
        size_t n = strlen(msg);
        snprintf(msg + n, sizeof(msg) - n, " [reported with error class %d, not an MPI error"
                 " class]", error_class);
        error_class = MPI_ERR_IO;
    }
    return code_for(error_class, msg);
}

/* MPI_ERRORS_ARE_FATAL / MPI_ERRORS_ABORT: say what happened, then abort. */
static void abort_with(MPI_Comm comm, int error_code)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;

    if (MPI_Error_string(error_code, s, &len) != MPI_SUCCESS)
        snprintf(s, sizeof(s), "error code %d", error_code);
    fprintf(stderr, "MPI-IO: fatal error: %s\n", s);
    MPI_Abort(comm, 1);
}

int MPIO_Err_return_file(MPI_File mpi_fh, int error_code)
{
    MPI_Errhandler eh = ADIOI_DFLT_ERR_HANDLER;
    MPI_Comm comm = MPI_COMM_WORLD;
    MPI_File_errhandler_function *fn;

    if (mpi_fh != MPI_FILE_NULL) {
        ADIO_File fh = MPIO_File_resolve(mpi_fh);
        eh = fh->err_handler;
        if (eh == MPI_ERRORS_ABORT)
            comm = fh->comm;
    }
    if (eh == MPI_ERRORS_RETURN)
        return error_code;
    fn = ipvfs_errh_function(eh);
    if (fn == NULL) {
        abort_with(comm, error_code);
        return error_code;
    }
    fn(&mpi_fh, &error_code);
    return error_code;
}

int MPIO_Err_return_comm(MPI_Comm mpi_comm, int error_code)
{
    MPI_Errhandler eh;

    if (MPI_Comm_get_errhandler(mpi_comm, &eh) != MPI_SUCCESS) {
        abort_with(MPI_COMM_WORLD, error_code);
        return error_code;
    }
    if (eh != MPI_ERRORS_RETURN)
        MPI_Comm_call_errhandler(mpi_comm, error_code);
    if (eh != MPI_ERRORS_RETURN && eh != MPI_ERRORS_ARE_FATAL && eh != MPI_ERRORS_ABORT)
        MPI_Errhandler_free(&eh);
    return error_code;
}
