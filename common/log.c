#include "common/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char log_ident[64] = "ipvfs";
static int log_threshold = -1;

static const char *const level_names[] = { "debug", "info", "warn", "error" };

void ipvfs_log_set_ident(const char *ident)
{
    snprintf(log_ident, sizeof(log_ident), "%s", ident);
}

static int threshold(void)
{
    if (log_threshold < 0) {
        const char *env = getenv("IPVFS_LOG");
        log_threshold = IPVFS_LOG_INFO;
        for (int i = 0; env && i < 4; i++)
            if (strcmp(env, level_names[i]) == 0)
                log_threshold = i;
    }
    return log_threshold;
}

void ipvfs_log(enum ipvfs_log_level level, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    int n;

    if ((int)level < threshold())
        return;
    n = snprintf(line, sizeof(line), "ipvfs[%s] %s: ", log_ident, level_names[level]);
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    va_end(ap);
    /* One fputs per line keeps lines of concurrent ranks from interleaving. */
    strncat(line, "\n", sizeof(line) - strlen(line) - 1);
    fputs(line, stderr);
}
