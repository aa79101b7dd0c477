/* Logging for every iPVFS program (contract in log.h).
 *
 * One logger per process: the API is called from everywhere without a
 * context, so its state is one struct here (log_state), not one passed
 * in.  A file sink (ipvfs_log_to_file) may be shared by processes that
 * fork after opening it (a server rank's supervisor and its serving
 * process): every line is one write() to an O_APPEND descriptor, so lines
 * never interleave, and the one that finds the file full renames it to
 * .1 and reopens; the others notice at their next line that the name now
 * points to another file and only reopen (a rotation racing another in the
 * same instant may drop the older .1 early: the bound holds either way). */
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct log_state {
    char ident[64];
    int threshold;             /* -1: not read from IPVFS_LOG yet */
    int fd;                    /* the file sink, or -1: stderr */
    char path[1200];
    uint64_t max_bytes;        /* per file */
    int console_errors;        /* error lines reach stderr as well */
    uint64_t dropped;          /* lines the file sink failed to take */
    int dropped_errno;
};

static struct log_state log_state = { .ident = "ipvfs", .threshold = -1, .fd = -1 };

static const char *const level_names[] = { "debug", "info", "warn", "error" };

void ipvfs_log_set_ident(const char *ident)
{
    snprintf(log_state.ident, sizeof(log_state.ident), "%s", ident);
}

static int threshold(void)
{
    if (log_state.threshold < 0) {
        const char *env = getenv("IPVFS_LOG");
        log_state.threshold = IPVFS_LOG_INFO;
        for (int i = 0; env && i < 4; i++)
            if (strcmp(env, level_names[i]) == 0)
                log_state.threshold = i;
    }
    return log_state.threshold;
}

/* ---- the file sink ---- */

int ipvfs_log_to_file(const char *path, uint64_t max_bytes)
{
    struct log_state *L = &log_state;
    int fd;

    if (strlen(path) >= sizeof(L->path) - 2 || max_bytes < 1024)
        return -EINVAL;
    if ((fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644)) < 0)
        return -errno;
    if (L->fd >= 0)
        close(L->fd);
    L->fd = fd;
    snprintf(L->path, sizeof(L->path), "%s", path);
    L->max_bytes = max_bytes;
    return 0;
}

/* Before a line of len bytes: a full file becomes path.1 and a new one is
 * started; if it cannot be renamed it is emptied (the bound comes first).
 * A file renamed by a process sharing it (the supervisor and its serving
 * process) is left at once, full or not, so lines stay in time order.
 * Failures leave the old descriptor in place. */
static void sink_rotate(struct log_state *L, size_t len)
{
    char old[sizeof(L->path) + 2];
    struct stat fst, pst;
    int fd, ours;

    if (fstat(L->fd, &fst) < 0)
        return;
    ours = stat(L->path, &pst) == 0 && pst.st_ino == fst.st_ino && pst.st_dev == fst.st_dev;
    if (ours && (uint64_t)fst.st_size + len <= L->max_bytes)
        return;
    if (ours) {
        snprintf(old, sizeof(old), "%s.1", L->path);
        if (rename(L->path, old) < 0) {
            if (ftruncate(L->fd, 0) < 0)
                L->dropped_errno = errno;
            return;
        }
    }
    if ((fd = open(L->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644)) < 0)
        return;
    /* same descriptor number, so a concurrent writer never sees it closed */
    if (dup3(fd, L->fd, O_CLOEXEC) < 0)
        L->dropped_errno = errno;
    close(fd);
}

static void sink_write(struct log_state *L, const char *line, size_t len)
{
    char note[128];
    ssize_t n;

    sink_rotate(L, len + sizeof(note));
    /* A full disk or a failing file costs lines, never the process. */
    if (L->dropped) {
        int k = snprintf(note, sizeof(note), "ipvfs[%s] warn: %llu log line(s) lost: %s\n",
                         L->ident, (unsigned long long)L->dropped, strerror(L->dropped_errno));
        if (write(L->fd, note, (size_t)k) == k)
            L->dropped = 0;
    }
    n = write(L->fd, line, len);
    if (n != (ssize_t)len) {
        L->dropped++;
        L->dropped_errno = n < 0 ? errno : EIO;
    }
}

/* ---- lines ---- */

static void emit(enum ipvfs_log_level level, int console, const char *fmt, va_list ap)
{
    struct log_state *L = &log_state;
    char line[1100];
    struct timespec ts;
    struct tm tm;
    int n, body;

    if ((int)level < threshold())
        return;
    /* the file's lines carry the time: each rank has its own file */
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    n = (int)strftime(line, 32, "%Y-%m-%dT%H:%M:%S", &tm);
    n += snprintf(line + n, sizeof(line) - (size_t)n, ".%03ldZ ", ts.tv_nsec / 1000000);
    body = n;
    n += snprintf(line + n, sizeof(line) - (size_t)n, "ipvfs[%s] %s: ", L->ident,
                  level_names[level]);
    vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    strncat(line, "\n", sizeof(line) - strlen(line) - 1);
    if (L->fd >= 0)
        sink_write(L, line, strlen(line));
    /* One fputs per line keeps lines of concurrent ranks from interleaving. */
    if (L->fd < 0 || console || (level == IPVFS_LOG_ERROR && L->console_errors))
        fputs(line + body, stderr);
}

void ipvfs_log_console_errors(int on)
{
    log_state.console_errors = on;
}

void ipvfs_log(enum ipvfs_log_level level, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    emit(level, 0, fmt, ap);
    va_end(ap);
}

void ipvfs_log_console(enum ipvfs_log_level level, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    emit(level, 1, fmt, ap);
    va_end(ap);
}
