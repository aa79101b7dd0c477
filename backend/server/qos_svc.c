/* The QoS service of an I/O node: QOS_CLASS, QOS_SET and QOS_STATUS
 * (common/proto.h), and the life of the node's scheduler (srv->qos: the
 * policy of qos.h, chosen by --qos), which ionode.c drives with every READ
 * and WRITE.  SLOs set here last as long as the serving process. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/server/ionode.h"
#include "backend/server/qos.h"
#include "backend/server/server.h"
#include "common/log.h"
#include "iraid/volume.h"

static_assert(IPVFS_QOS_NAME_MAX == QOS_NAME_MAX, "class names: wire and policy agree");
static_assert(IPVFS_QOS_MAX_CLASSES == QOS_MAX_CLASSES, "classes: wire and policy agree");
static_assert((int)IPVFS_QOS_TWO_LEVEL == (int)QOS_TWO_LEVEL && (int)IPVFS_QOS_DSFQ == (int)QOS_DSFQ,
              "policies: wire and policy agree");

uint64_t qos_svc_now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* The pace of iRAID's rebuild and scrub: the class "internal". */
static uint64_t internal_rate(void *user)
{
    struct server *srv = user;

    return srv->qos ? (uint64_t)(qos_internal_rate(srv->qos, qos_svc_now_us()) * 1e6) : 0;
}

static void internal_done(void *user, uint64_t bytes)
{
    struct server *srv = user;

    if (srv->qos)
        qos_internal_done(srv->qos, bytes, qos_svc_now_us());
}

int qos_svc_open(struct server *srv)
{
    enum qos_policy policy = QOS_FIFO;

    /* options.c let only the three names through */
    (void)qos_policy_parse(srv->opts.qos, &policy);
    if (!(srv->qos = malloc(sizeof(*srv->qos)))) {
        log_error("I/O node %u: no memory for the QoS scheduler", srv->io_index);
        return -ENOMEM;
    }
    qos_init(srv->qos, policy, srv->opts.qos_window_ms);
    if (srv->opts.qos_internal_min > 0) {
        char msg[200];
        int rc = qos_set_internal(srv->qos, srv->opts.qos_internal_min,
                                  srv->opts.qos_internal_max, msg, sizeof(msg));

        if (rc < 0) {
            log_error("I/O node %u: --qos-internal %s", srv->io_index, msg);
            free(srv->qos);
            srv->qos = NULL;
            return rc;
        }
        if (srv->vol)
            iraid_set_sweep_pace(srv->vol, &(struct iraid_sweep_pace){
                                     .rate = internal_rate, .done = internal_done,
                                     .user = srv });
    }
    if (srv->opts.qos_slo[0]) {
        char msg[300];
        int rc = qos_load_slo(srv->qos, srv->opts.qos_slo, msg, sizeof(msg));

        if (rc < 0) {
            log_error("I/O node %u: --qos-slo %s", srv->io_index, msg);
            free(srv->qos);
            srv->qos = NULL;
            return rc;
        }
        log_info("I/O node %u: %u QoS class(es) from %s", srv->io_index, srv->qos->ncls - 1,
                 srv->opts.qos_slo);
    }
    log_info("I/O node %u: QoS %s, windows of %u ms", srv->io_index, qos_policy_name(policy),
             srv->opts.qos_window_ms);
    return 0;
}

void qos_svc_close(struct server *srv)
{
    struct qos_req *r;

    if (srv->vol)
        iraid_set_sweep_pace(srv->vol, NULL);
    while (srv->qos && (r = qos_take_any(srv->qos)))
        r->start(r);
    free(srv->qos);
    srv->qos = NULL;
}

uint32_t qos_svc_class(struct conn *c)
{
    const char *name = conn_access(c)->qos_class;

    return qos_lookup(conn_server(c)->qos, name, strlen(name));
}

static int qos_ready(struct conn *c)
{
    if (conn_server(c)->qos)
        return 1;
    conn_reply_err(c, ESHUTDOWN, "I/O node is stopping");
    return 0;
}

/* A hint's SLO (after the name and a NUL): set for a class that has none
 * here, so that an administrator's or the file's stays. */
static int class_slo(struct server *srv, const char *name, const uint8_t *tail, char *msg,
                     size_t msglen)
{
    struct ipvfs_qos_slo slo;
    uint32_t i = qos_lookup(srv->qos, name, strlen(name));
    double rate, latency;
    int rc;

    memcpy(&slo, tail, sizeof(slo));
    rate = (double)slo.rate_kbps / 1000;
    latency = (double)slo.latency_us / 1000;
    if ((rc = qos_check_slo(rate, latency, msg, msglen)) < 0)
        return rc;
    if ((i != 0 || strcmp(name, srv->qos->cls[0].name) == 0) && srv->qos->cls[i].rate_mbps > 0)
        return 0;
    if ((rc = qos_set(srv->qos, name, rate, latency, msg, msglen)) < 0)
        return rc;
    log_info("I/O node %u: QoS class %s: %.3f MB/s, p95 %.3f ms (a client's hint)",
             srv->io_index, name, rate, latency);
    return 0;
}

static void handle_class(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body)
{
    struct access *a = conn_access(c);
    const uint8_t *nul = hdr->body_len ? memchr(body, 0, hdr->body_len) : NULL;
    size_t len = nul ? (size_t)(nul - body) : hdr->body_len;
    char name[QOS_NAME_MAX + 1], msg[200];
    int rc;

    if (!qos_ready(c))
        return;
    if (nul && hdr->body_len != len + 1 + sizeof(struct ipvfs_qos_slo)) {
        conn_reply_err(c, EINVAL, "QOS_CLASS: %llu bytes after the name's NUL, not an SLO "
                       "of %zu", (unsigned long long)(hdr->body_len - len - 1),
                       sizeof(struct ipvfs_qos_slo));
        return;
    }
    if (qos_check_name((const char *)body, len, msg, sizeof(msg)) < 0) {
        conn_reply_err(c, EINVAL, "QOS_CLASS: %s", msg);
        return;
    }
    memcpy(name, body, len);
    name[len] = '\0';
    if (nul && (rc = class_slo(conn_server(c), name, nul + 1, msg, sizeof(msg))) < 0) {
        conn_reply_err(c, -rc, "QOS_CLASS: %s", msg);
        return;
    }
    memcpy(a->qos_class, name, len + 1);
    conn_reply(c, 0, NULL, 0);
}

static void handle_set(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body)
{
    struct server *srv = conn_server(c);
    char name[QOS_NAME_MAX + 1], msg[200];
    struct ipvfs_qos_set_req req;
    int rc;

    if (!qos_ready(c))
        return;
    if (hdr->body_len < sizeof(req)) {
        conn_reply_err(c, EINVAL, "QOS_SET body shorter than its header");
        return;
    }
    memcpy(&req, body, sizeof(req));
    if (hdr->body_len != sizeof(req) + (uint64_t)req.name_len) {
        conn_reply_err(c, EINVAL, "QOS_SET body of %llu bytes disagrees with a %u-byte name",
                       (unsigned long long)hdr->body_len, req.name_len);
        return;
    }
    if (qos_check_name((const char *)body + sizeof(req), req.name_len, msg, sizeof(msg)) < 0) {
        conn_reply_err(c, EINVAL, "QOS_SET: %s", msg);
        return;
    }
    memcpy(name, body + sizeof(req), req.name_len);
    name[req.name_len] = '\0';
    rc = qos_set(srv->qos, name, (double)req.rate_kbps / 1000, (double)req.latency_us / 1000,
                 msg, sizeof(msg));
    if (rc < 0) {
        conn_reply_err(c, -rc, "QOS_SET: %s", msg);
        return;
    }
    log_info("I/O node %u: QoS class %s: %.3f MB/s, p95 %.3f ms", srv->io_index, name,
             (double)req.rate_kbps / 1000, (double)req.latency_us / 1000);
    conn_reply(c, 0, NULL, 0);
}

static void handle_status(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body)
{
    struct qos_sched *s = conn_server(c)->qos;
    struct ipvfs_qos_class_status *cs;
    struct ipvfs_qos_status_rep *rep;
    size_t len;

    (void)body;
    if (!qos_ready(c))
        return;
    if (hdr->body_len != 0) {
        conn_reply_err(c, EINVAL, "QOS_STATUS request body is %llu bytes, not 0",
                       (unsigned long long)hdr->body_len);
        return;
    }
    /* an idle node's windows close here */
    qos_tick(s, qos_svc_now_us());
    len = sizeof(*rep) + s->ncls * sizeof(*cs);
    if (!(rep = calloc(1, len))) {
        conn_reply_err(c, ENOMEM, "out of memory");
        return;
    }
    *rep = (struct ipvfs_qos_status_rep){
        .policy = (uint32_t)s->policy, .nclasses = s->ncls,
        .depth = s->depth == UINT32_MAX ? 0 : s->depth, .outstanding = s->outstanding,
        .queued = s->nupper + s->nlower, .overloaded = (uint32_t)s->overloaded,
        .window_ms = s->window_us / 1000, .credit_mreq = (int64_t)(s->credit * 1000),
        .refills = s->refills, .windows = s->windows,
    };
    cs = (struct ipvfs_qos_class_status *)(rep + 1);
    for (uint32_t i = 0; i < s->ncls; i++) {
        const struct qos_class *k = &s->cls[i];

        memcpy(cs[i].name, k->name, sizeof(cs[i].name));
        cs[i].rate_kbps = (uint64_t)(k->rate_mbps * 1000);
        cs[i].latency_us = (uint64_t)(k->latency_ms * 1000);
        cs[i].issue_kbps = (uint64_t)(k->last.issue_mbps * 1000);
        cs[i].served_kbps = (uint64_t)(k->last.served_mbps * 1000);
        cs[i].p95_us = (uint64_t)(k->last.p95_ms * 1000);
        cs[i].met = k->last.met;
        cs[i].queued = k->queued;
        cs[i].windows = k->windows;
        cs[i].windows_met = k->windows_met;
        cs[i].requests = k->requests;
        if (s->internal && i == s->internal)
            cs[i].max_kbps = (uint64_t)(s->internal_max_mbps * 1000);
    }
    conn_reply(c, 0, rep, len);
}

static const struct op_entry qos_ops[] = {
    { IPVFS_OP_QOS_CLASS, IPVFS_ROLE_IO, handle_class, "QOS_CLASS" },
    { IPVFS_OP_QOS_SET, IPVFS_ROLE_IO, handle_set, "QOS_SET" },
    { IPVFS_OP_QOS_STATUS, IPVFS_ROLE_IO, handle_status, "QOS_STATUS" },
    { 0, 0, NULL, NULL },
};

const struct service qos_service = { .name = "QoS", .ops = qos_ops };
