/* SLOs from a file the I/O nodes read at start (--qos-slo FILE,
 * doc/qos.md): one class a line, "CLASS RATE LATENCY", RATE in MB/s
 * (a bare number or with "MB/s"), LATENCY the p95 bound in ms (bare or
 * with "ms"); "#" starts a comment, blank lines are skipped.  The same
 * checks as ipvfs-ctl qos set (qos_check_name, qos_check_slo); a class
 * named twice is refused, since which line should win is a guess. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/server/qos.h"
#include "common/size.h"

#define QOS_CONF_LINE_MAX 512

int qos_parse_slo_line(const char *line, char *name, double *rate, double *latency, char *msg,
                       size_t msglen)
{
    char buf[QOS_CONF_LINE_MAX], *word[4], *save = NULL;
    int n = 0, rc;

    if (strlen(line) >= sizeof(buf)) {
        snprintf(msg, msglen, "line longer than %d bytes", QOS_CONF_LINE_MAX - 1);
        return -EINVAL;
    }
    strcpy(buf, line);
    buf[strcspn(buf, "#\r\n")] = '\0';
    for (char *w = strtok_r(buf, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
        if (n == 3) {
            snprintf(msg, msglen, "'%s' after the latency: a line is CLASS RATE LATENCY", w);
            return -EINVAL;
        }
        word[n++] = w;
    }
    if (n == 0)
        return 0;
    if (n < 3) {
        snprintf(msg, msglen, "a line is CLASS RATE LATENCY (e.g. app1 40MB/s 100ms), not %d "
                 "word%s", n, n == 1 ? "" : "s");
        return -EINVAL;
    }
    if ((rc = qos_check_name(word[0], strlen(word[0]), msg, msglen)) < 0 ||
        (rc = amount_parse("rate", word[1], "MB/s", 0, rate, msg, msglen)) < 0 ||
        (rc = amount_parse("latency", word[2], "ms", 0, latency, msg, msglen)) < 0 ||
        (rc = qos_check_slo(*rate, *latency, msg, msglen)) < 0)
        return rc;
    memcpy(name, word[0], strlen(word[0]) + 1);
    return 1;
}

int qos_load_slo(struct qos_sched *s, const char *path, char *msg, size_t msglen)
{
    char line[QOS_CONF_LINE_MAX + 1], name[QOS_NAME_MAX + 1], why[200];
    double rate, latency;
    unsigned lineno = 0;
    int rc = 0;
    FILE *f;

    if (!(f = fopen(path, "r"))) {
        rc = -errno;
        snprintf(msg, msglen, "%s: %s", path, strerror(-rc));
        return rc;
    }
    while (rc == 0 && fgets(line, sizeof(line), f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            snprintf(why, sizeof(why), "line longer than %d bytes", QOS_CONF_LINE_MAX - 1);
            rc = -EINVAL;
        } else if ((rc = qos_parse_slo_line(line, name, &rate, &latency, why, sizeof(why))) == 1) {
            rc = 0;
            if (qos_lookup(s, name, strlen(name)) != 0 ||
                (strcmp(name, s->cls[0].name) == 0 && s->cls[0].rate_mbps > 0)) {
                snprintf(why, sizeof(why), "class %s is named twice", name);
                rc = -EINVAL;
            } else {
                rc = qos_set(s, name, rate, latency, why, sizeof(why));
            }
        }
        if (rc < 0)
            snprintf(msg, msglen, "%s:%u: %s", path, lineno, why);
    }
    if (rc == 0 && ferror(f)) {
        rc = -EIO;
        snprintf(msg, msglen, "%s: read error", path);
    }
    fclose(f);
    return rc;
}
