/* The application class a client's requests count for at the I/O nodes'
 * QoS schedulers (common/proto.h, QOS_CLASS; doc/qos.md): chosen when the
 * client is made, sent once on each new connection to an I/O node, right
 * after AUTH (conn.c), and changed by ipvfs_client_set_qos_class
 * (admin.c; the hint ipvfs_qos_class).  Calls nothing of conn.c's. */
#include "adio/client/client_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/size.h"
#include "common/wire.h"

int client_qos_check(const char *name, char *msg, size_t msglen)
{
    size_t len = strlen(name);

    if (len == 0 || len > IPVFS_QOS_NAME_MAX) {
        snprintf(msg, msglen, "a QoS class name has 1 to %u bytes, not %zu", IPVFS_QOS_NAME_MAX,
                 len);
        return -EINVAL;
    }
    for (size_t i = 0; i < len; i++) {
        if (name[i] <= ' ' || name[i] > '~') {
            snprintf(msg, msglen, "a QoS class name holds printable bytes without spaces");
            return -EINVAL;
        }
    }
    return 0;
}

/* The job's name: IPVFS_QOS_CLASS, else Slurm's job, else the Hydra
 * proxy that started this rank (every rank of an mpiexec on one host has
 * it as parent), else this process. */
int client_qos_init(struct ipvfs_client *c, char *msg, size_t msglen)
{
    const char *env = getenv("IPVFS_QOS_CLASS"), *job = getenv("SLURM_JOB_ID");
    char host[64] = "";

    if (env && env[0]) {
        if (client_qos_check(env, msg, msglen) < 0) {
            size_t n = strlen(msg);

            snprintf(msg + n, msglen - n, " (IPVFS_QOS_CLASS)");
            return -EINVAL;
        }
        snprintf(c->qos_class, sizeof(c->qos_class), "%s", env);
        return 0;
    }
    if (gethostname(host, sizeof(host) - 1) < 0)
        snprintf(host, sizeof(host), "unknown");
    host[strcspn(host, ". ")] = '\0';
    if (job && job[0] && client_qos_check(job, msg, msglen) == 0)
        snprintf(c->qos_class, sizeof(c->qos_class), "slurm-%.50s", job);
    else if (getenv("PMI_RANK") && getenv("HYDI_CONTROL_FD"))
        snprintf(c->qos_class, sizeof(c->qos_class), "mpiexec-%ld@%.40s", (long)getppid(), host);
    else
        snprintf(c->qos_class, sizeof(c->qos_class), "pid-%ld@%.40s", (long)getpid(), host);
    return 0;
}

int client_qos_parse_slo(const char *rate, const char *latency, struct ipvfs_qos_slo *out,
                         char *msg, size_t msglen)
{
    double r, l;
    int rc;

    *out = (struct ipvfs_qos_slo){ 0 };
    if (!rate && !latency)
        return 0;
    if (!rate || !latency) {
        snprintf(msg, msglen, "hint %s without %s: an SLO is a rate and a latency",
                 rate ? "ipvfs_qos_rate" : "ipvfs_qos_latency",
                 rate ? "ipvfs_qos_latency" : "ipvfs_qos_rate");
        return -EINVAL;
    }
    /* the I/O nodes check the ranges; positive keeps the conversion defined */
    if ((rc = amount_parse("hint ipvfs_qos_rate", rate, "MB/s", AMOUNT_POSITIVE, &r, msg,
                           msglen)) < 0 ||
        (rc = amount_parse("hint ipvfs_qos_latency", latency, "ms", AMOUNT_POSITIVE, &l, msg,
                           msglen)) < 0)
        return rc;
    *out = (struct ipvfs_qos_slo){ .rate_kbps = (uint64_t)(r * 1000 + 0.5),
                                   .latency_us = (uint64_t)(l * 1000 + 0.5) };
    return 0;
}

int conn_send_qos_class(struct ipvfs_client *c, int fd, char *msg, size_t msglen)
{
    static const uint8_t nul;
    struct iovec body[3] = {
        { .iov_base = c->qos_class, .iov_len = strlen(c->qos_class) },
        { .iov_base = (void *)&nul, .iov_len = 1 },
        { .iov_base = &c->qos_slo, .iov_len = sizeof(c->qos_slo) },
    };
    struct wire_reply rep;
    int rc;

    /* the name, and the hints' SLO after a NUL when there is one */
    rc = wire_call(fd, IPVFS_OP_QOS_CLASS, 0, ++c->next_req_id, body,
                   c->qos_slo.rate_kbps ? 3 : 1, c->request_ms, &rep);
    if (rc < 0) {
        snprintf(msg, msglen, "QOS_CLASS: %s", strerror(-rc));
        return rc;
    }
    if (rep.status) {
        rc = -(int)rep.status;
        snprintf(msg, msglen, "QOS_CLASS: %s", rep.len ? (const char *)rep.body : strerror(-rc));
        /* a refused SLO fails this open, not every later connection of
         * the client (the hints came with one file) */
        c->qos_slo = (struct ipvfs_qos_slo){ 0 };
    }
    wire_reply_free(&rep);
    return rc;
}

const char *ipvfs_client_qos_class(const struct ipvfs_client *c)
{
    return c->qos_class;
}
