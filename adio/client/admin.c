/* Administrative calls: one blocking request to one server rank, for the
 * ops that the file calls do not cover (ipvfs-ctl's STATUS, SHUTDOWN,
 * SCRUB, REBUILD, READDIR, MKDIR).  They share the client's connections
 * with the request engine (xfer.c) and speak through common/wire.c.
 *
 * ipvfs_admin_call() reconnects and sends again after a lost connection
 * (a serving process restarted by its supervisor) by the rules of
 * retry.h, as the request engine does: within the reconnect deadline,
 * with its backoff, an op in doubt only where sending it twice is
 * harmless (STATUS, READDIR...; never SHUTDOWN, SCRUB, REBUILD, MKDIR in
 * doubt).  ipvfs_admin_send()/_recv() leave that to their caller. */
#include "adio/client/client_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "adio/client/retry.h"
#include "common/wire.h"

const struct ipvfs_map *ipvfs_client_map(const struct ipvfs_client *c)
{
    return &c->map;
}

/* The op's name for messages ("request 42" for ops without one here). */
static const char *op_name(uint16_t op, char *buf, size_t len)
{
    switch (op) {
    case IPVFS_OP_STATUS: return "STATUS";
    case IPVFS_OP_SHUTDOWN: return "SHUTDOWN";
    case IPVFS_OP_SCRUB: return "SCRUB";
    case IPVFS_OP_REBUILD: return "REBUILD";
    case IPVFS_OP_READDIR: return "READDIR";
    case IPVFS_OP_MKDIR: return "MKDIR";
    case IPVFS_OP_REMOVE: return "REMOVE";
    case IPVFS_OP_ORPHANS: return "ORPHANS";
    case IPVFS_OP_QOS_SET: return "QOS_SET";
    case IPVFS_OP_QOS_STATUS: return "QOS_STATUS";
    default:
        snprintf(buf, len, "request %u", op);
        return buf;
    }
}

/* The one worker.  With out_req_id it sends (connecting first when
 * needed) and stores the request's id; with out it waits for the reply to
 * *req_id.  Both: a whole call.  *out_in_doubt (when given) tells whether
 * a failure came after the request was sent whole (retry.h). */
static int admin_xchg(struct ipvfs_client *c, uint32_t rank, uint16_t op, uint32_t flags,
                      const struct iovec *body, int cnt, int timeout_ms, uint64_t *req_id,
                      int sending, struct wire_reply *out, struct ipvfs_error *out_err,
                      int *out_in_doubt)
{
    char name[32], msg[256] = "";
    const char *opname = op_name(op, name, sizeof(name));
    int fd, rc;

    if (out)
        memset(out, 0, sizeof(*out));
    if (out_in_doubt)
        *out_in_doubt = !sending;
    if (c->queue_head)
        return client_error(out_err, EBUSY, opname, NULL, c, rank,
                            "an asynchronous access holds the connections");
    if (sending) {
        fd = conn_get_within(c, rank, timeout_ms, timeout_ms, msg, sizeof(msg));
        if (fd < 0)
            return client_error(out_err, -fd, opname, NULL, c, rank, msg);
        *req_id = ++c->next_req_id;
        if ((rc = wire_send(fd, op, flags, *req_id, body, cnt, timeout_ms)) < 0) {
            conn_drop(c, rank);
            return client_error(out_err, -rc, opname, NULL, c, rank, "sending the request");
        }
        if (out_in_doubt)
            *out_in_doubt = 1;
    }
    if (!out)
        return 0;
    if (rank >= c->map.nranks || c->fds[rank] < 0)
        return client_error(out_err, ENOTCONN, opname, NULL, c, rank,
                            "no request of this client is outstanding there");
    if ((rc = wire_recv(c->fds[rank], op, *req_id, timeout_ms, out)) < 0) {
        conn_drop(c, rank);
        return client_error(out_err, -rc, opname, NULL, c, rank,
                            rc == -EPROTO ? "malformed reply" : "waiting for the reply");
    }
    return 0;
}

int ipvfs_admin_send(struct ipvfs_client *c, uint32_t rank, uint16_t op, uint32_t flags,
                     const struct iovec *body, int cnt, int timeout_ms, uint64_t *out_req_id,
                     struct ipvfs_error *out_err)
{
    return admin_xchg(c, rank, op, flags, body, cnt, timeout_ms, out_req_id, 1, NULL, out_err,
                      NULL);
}

int ipvfs_admin_recv(struct ipvfs_client *c, uint32_t rank, uint16_t op, uint64_t req_id,
                     int timeout_ms, struct wire_reply *out, struct ipvfs_error *out_err)
{
    return admin_xchg(c, rank, op, 0, NULL, 0, timeout_ms, &req_id, 0, out, out_err, NULL);
}

static int64_t admin_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Whether a call that failed with err (positive errno) goes again, and
 * after how long (ms, into *out_delay_ms).  lost_ms: when the connection
 * broke, or -1 while it had not (then only a lost connection counts; on
 * later attempts a reconnect that failed may be tried again too). */
static int admin_may_retry(const struct ipvfs_client *c, uint16_t op, int err, int in_doubt,
                           int64_t lost_ms, unsigned attempt, int *out_delay_ms)
{
    /* In doubt, the connection stood and the request went out: only its
     * loss counts (a hung server's timeout does not).  Else the connect,
     * HELLO or send failed: after a loss, as a reconnect attempt. */
    int lost = in_doubt || lost_ms < 0 ? retry_after_lost(err) : retry_reconnect_again(err);

    if (!lost || !retry_request_again(op, 0, in_doubt))
        return 0;
    *out_delay_ms = retry_delay_ms(attempt, lost_ms < 0 ? 0 : admin_now_ms() - lost_ms,
                                   c->reconnect_ms);
    return *out_delay_ms >= 0;
}

int ipvfs_admin_call(struct ipvfs_client *c, uint32_t rank, uint16_t op, uint32_t flags,
                     const struct iovec *body, int cnt, int timeout_ms, struct wire_reply *out,
                     struct ipvfs_error *out_err)
{
    int64_t lost_ms = -1;
    unsigned attempt = 0;

    for (;;) {
        uint64_t req_id;
        int in_doubt, delay_ms, rc;
        struct timespec ts;

        rc = admin_xchg(c, rank, op, flags, body, cnt, timeout_ms, &req_id, 1, out, out_err,
                        &in_doubt);
        if (rc == 0 || !admin_may_retry(c, op, -rc, in_doubt, lost_ms, attempt, &delay_ms))
            return rc;
        if (lost_ms < 0)
            lost_ms = admin_now_ms();
        attempt++;
        ts = (struct timespec){ .tv_sec = delay_ms / 1000, .tv_nsec = delay_ms % 1000 * 1000000L };
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
            ;
    }
}

/* The hints ipvfs_qos_class, ipvfs_qos_rate and ipvfs_qos_latency (qos.c
 * has their rules); name NULL keeps the class. */
static int set_qos(struct ipvfs_client *c, const char *name, const char *rate,
                   const char *latency, struct ipvfs_error *out_err)
{
    struct ipvfs_qos_slo slo;
    char msg[256];
    int rc;

    if (name && client_qos_check(name, msg, sizeof(msg)) < 0)
        return client_error(out_err, EINVAL, "hint ipvfs_qos_class", NULL, NULL, -1, msg);
    if (client_qos_parse_slo(rate, latency, &slo, msg, sizeof(msg)) < 0)
        return client_error(out_err, EINVAL, "QoS hints", NULL, NULL, -1, msg);
    if ((!name || strcmp(name, c->qos_class) == 0) && !slo.rate_kbps)
        return 0;
    if (name)
        snprintf(c->qos_class, sizeof(c->qos_class), "%s", name);
    c->qos_slo = slo;
    /* connections open now carry the new name from here on; while an
     * asynchronous access holds them, those keep the old one */
    if (c->queue_head)
        return 0;
    for (uint32_t r = 0; r < c->map.nranks; r++) {
        if (!(c->map.ranks[r].role & IPVFS_ROLE_IO) || !conn_cached(c, r))
            continue;
        if ((rc = conn_send_qos_class(c, c->fds[r], msg, sizeof(msg))) < 0) {
            conn_drop(c, r);
            return client_error(out_err, -rc, "QoS hints", NULL, c, r, msg);
        }
    }
    return 0;
}

int ipvfs_client_set_qos_class(struct ipvfs_client *c, const char *name,
                               struct ipvfs_error *out_err)
{
    return set_qos(c, name, NULL, NULL, out_err);
}

int ipvfs_client_set_qos(struct ipvfs_client *c, const char *name, const char *rate,
                         const char *latency, struct ipvfs_error *out_err)
{
    return set_qos(c, name, rate, latency, out_err);
}
