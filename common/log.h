/* Logging for every iPVFS program.
 *
 * Lines go to stderr as "ipvfs[<ident>] <level>: message".  The ident names
 * the process's role ("io0", "target1.2", "ctl"); set it once at start.
 * IPVFS_LOG=debug|info|warn|error picks the threshold (default info).
 *
 * A program may send its lines to a file instead (ipvfs_log_to_file: the
 * server ranks, so that mpiexec's output, whose write failures end the
 * whole job, stays small): each line then starts with the UTC time
 * ("2026-01-02T03:04:05.678Z ipvfs[io0] info: ..."), the file is bounded
 * (renamed to PATH.1 when the next line would pass max_bytes, the older
 * .1 dropped: two files at most), and a line the file cannot take (a full
 * disk) is counted and dropped, never fatal.  Only ipvfs_log_console()
 * lines (the start-up line, fatal errors), and error lines while
 * ipvfs_log_console_errors() is on, then also reach stderr. */
#ifndef IPVFS_LOG_H
#define IPVFS_LOG_H

#include <stdint.h>

enum ipvfs_log_level { IPVFS_LOG_DEBUG, IPVFS_LOG_INFO, IPVFS_LOG_WARN, IPVFS_LOG_ERROR };

void ipvfs_log_set_ident(const char *ident);
void ipvfs_log(enum ipvfs_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* From now on lines go to the file at path (appended, created 0644),
 * rotated at max_bytes (at least 1024).  0, -EINVAL, or open()'s -errno. */
int ipvfs_log_to_file(const char *path, uint64_t max_bytes);
/* With a file sink: whether error lines also reach stderr (a server's
 * start-up, whose errors are fatal; off once it serves). */
void ipvfs_log_console_errors(int on);
/* A line for the file and stderr both. */
void ipvfs_log_console(enum ipvfs_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define log_console_info(...)  ipvfs_log_console(IPVFS_LOG_INFO, __VA_ARGS__)
#define log_console_error(...) ipvfs_log_console(IPVFS_LOG_ERROR, __VA_ARGS__)
#define log_debug(...) ipvfs_log(IPVFS_LOG_DEBUG, __VA_ARGS__)
#define log_info(...)  ipvfs_log(IPVFS_LOG_INFO, __VA_ARGS__)
#define log_warn(...)  ipvfs_log(IPVFS_LOG_WARN, __VA_ARGS__)
#define log_error(...) ipvfs_log(IPVFS_LOG_ERROR, __VA_ARGS__)

#endif
