/* Logging for every iPVFS program.
 *
 * Lines go to stderr as "ipvfs[<ident>] <level>: message".  The ident names
 * the process's role ("io0", "target1.2", "ctl"); set it once at start.
 * IPVFS_LOG=debug|info|warn|error picks the threshold (default info). */
#ifndef IPVFS_LOG_H
#define IPVFS_LOG_H

enum ipvfs_log_level { IPVFS_LOG_DEBUG, IPVFS_LOG_INFO, IPVFS_LOG_WARN, IPVFS_LOG_ERROR };

void ipvfs_log_set_ident(const char *ident);
void ipvfs_log(enum ipvfs_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define log_debug(...) ipvfs_log(IPVFS_LOG_DEBUG, __VA_ARGS__)
#define log_info(...)  ipvfs_log(IPVFS_LOG_INFO, __VA_ARGS__)
#define log_warn(...)  ipvfs_log(IPVFS_LOG_WARN, __VA_ARGS__)
#define log_error(...) ipvfs_log(IPVFS_LOG_ERROR, __VA_ARGS__)

#endif
