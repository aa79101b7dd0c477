/* ipvfs-ctl qos: the I/O nodes' QoS classes (common/proto.h's QOS_SET and
 * QOS_STATUS; the policy is backend/server/qos.h, doc/qos.md).
 *
 *   qos set CLASS --rate MBPS --latency MS   the SLO of CLASS at every I/O node
 *   qos status [--json]                      each I/O node's scheduler and classes
 *
 * One blocking administrative call per I/O node, each limited by
 * CTL_QOS_MS. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adio/client/ipvfs_client.h"
#include "common/size.h"
#include "common/wire.h"
#include "tools/ctl_files.h"

#define CTL_QOS_MS 10000

static const char *const policy_names[] = { "fifo", "dsfq", "two-level" };

static int qos_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int qos_fail(const char *fmt, ...)
{
    va_list ap;

    fputs("ipvfs-ctl: qos ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 1;
}

static int qos_usage(void)
{
    fputs("usage: ipvfs-ctl qos set CLASS --rate MBPS --latency MS\n"
          "       ipvfs-ctl qos status [--json]\n", stderr);
    return 2;
}

/* One SLO amount of qos set (the server checks the ranges); -1 with a
 * message otherwise. */
static int set_amount(const char *what, const char *text, const char *unit, double *out)
{
    char msg[256];

    if (amount_parse(what, text, unit, AMOUNT_POSITIVE, out, msg, sizeof(msg)) < 0)
        return qos_fail("set: %s", msg);
    return 0;
}

/* "Reason (server's message)" for a refused request. */
static const char *refusal(const struct wire_reply *r, char *buf, size_t len)
{
    if (r->len > 0 && r->body[0])
        snprintf(buf, len, "%s (%s)", strerror((int)r->status), (const char *)r->body);
    else
        snprintf(buf, len, "%s", strerror((int)r->status));
    return buf;
}

static int qos_set(struct ipvfs_client *client, int argc, char **argv)
{
    const struct ipvfs_map *map = ipvfs_client_map(client);
    double rate = 0, latency = 0;
    struct ipvfs_qos_set_req req;
    const char *name;
    char buf[400];
    int rc = 0;

    if (argc != 7)
        return qos_usage();
    name = argv[2];
    for (int i = 3; i < 7; i += 2) {
        if (strcmp(argv[i], "--rate") == 0) {
            if (set_amount("rate", argv[i + 1], "MB/s", &rate) != 0)
                return 1;
        } else if (strcmp(argv[i], "--latency") == 0) {
            if (set_amount("latency", argv[i + 1], "ms", &latency) != 0)
                return 1;
        } else {
            return qos_usage();
        }
    }
    if (rate == 0 || latency == 0)
        return qos_usage();
    if (strlen(name) == 0 || strlen(name) > IPVFS_QOS_NAME_MAX)
        return qos_fail("set: a class name has 1 to %u bytes", IPVFS_QOS_NAME_MAX);
    req = (struct ipvfs_qos_set_req){ .rate_kbps = (uint64_t)llround(rate * 1000),
                                      .latency_us = (uint64_t)llround(latency * 1000),
                                      .name_len = (uint32_t)strlen(name) };
    for (uint32_t io = 0; io < map->nio; io++) {
        const struct ipvfs_map_rank *r = ipvfs_map_io_node(map, io);
        struct iovec body[2] = { { &req, sizeof(req) }, { (void *)name, req.name_len } };
        struct wire_reply rep;
        struct ipvfs_error err;

        if (!r)
            continue;
        if (ipvfs_admin_call(client, r->rank, IPVFS_OP_QOS_SET, 0, body, 2, CTL_QOS_MS, &rep,
                             &err) < 0)
            return qos_fail("set: I/O node %u: %s", io, err.msg);
        if (rep.status)
            rc = qos_fail("set: I/O node %u: %s", io, refusal(&rep, buf, sizeof(buf)));
        wire_reply_free(&rep);
        if (rc)
            return rc;
    }
    printf("class %s: %g MB/s, p95 within %g ms, at %u I/O node(s)\n", name, rate, latency,
           map->nio);
    return 0;
}

static void json_name(const char *s)
{
    putchar('"');
    for (; *s; s++)
        printf(*s == '"' || *s == '\\' ? "\\%c" : "%c", *s);
    putchar('"');
}

static void print_node(uint32_t io, uint32_t rank, const struct ipvfs_qos_status_rep *st,
                       const struct ipvfs_qos_class_status *cs, int json, int first)
{
    const char *policy = st->policy < 3 ? policy_names[st->policy] : "?";

    if (json) {
        printf("%s{\"io\":%u,\"rank\":%u,\"policy\":\"%s\",\"window_ms\":%llu,"
               "\"edf_depth\":%u,\"outstanding\":%u,\"queued\":%u,\"overloaded\":%s,"
               "\"dsfq_credit\":%.3f,\"refills\":%llu,\"windows\":%llu,\"classes\":[",
               first ? "" : ",", io, rank, policy, (unsigned long long)st->window_ms,
               st->depth, st->outstanding, st->queued, st->overloaded ? "true" : "false",
               (double)st->credit_mreq / 1000, (unsigned long long)st->refills,
               (unsigned long long)st->windows);
        for (uint32_t i = 0; i < st->nclasses; i++) {
            printf("%s{\"name\":", i ? "," : "");
            json_name(cs[i].name);
            printf(",\"rate_mbps\":%.3f,\"latency_ms\":%.3f,\"issue_mbps\":%.3f,"
                   "\"served_mbps\":%.3f,\"p95_ms\":%.3f,\"slo_met\":%s,\"queued\":%u,"
                   "\"windows\":%llu,\"windows_met\":%llu,\"requests\":%llu,\"max_mbps\":",
                   (double)cs[i].rate_kbps / 1000, (double)cs[i].latency_us / 1000,
                   (double)cs[i].issue_kbps / 1000, (double)cs[i].served_kbps / 1000,
                   (double)cs[i].p95_us / 1000,
                   cs[i].met < 0 ? "null" : cs[i].met ? "true" : "false", cs[i].queued,
                   (unsigned long long)cs[i].windows, (unsigned long long)cs[i].windows_met,
                   (unsigned long long)cs[i].requests);
            /* a rate without a bound: the class internal, MIN:MAX */
            if (cs[i].rate_kbps && !cs[i].latency_us)
                printf("%.3f}", (double)cs[i].max_kbps / 1000);
            else
                printf("null}");
        }
        printf("]}");
        return;
    }
    printf("I/O node %u (rank %u): %s, window %llu ms", io, rank, policy,
           (unsigned long long)st->window_ms);
    if (st->policy == 2 && !st->depth)
        /* no class has an SLO: fifo's unbounded depth (qos.h) */
        printf(", EDF depth unbounded (no SLO)");
    else if (st->policy == 2)
        printf(", EDF depth %u%s, DSFQ credit %.1f requests", st->depth,
               st->overloaded ? " (overloaded)" : "", (double)st->credit_mreq / 1000);
    printf(", %u in the store, %u waiting\n", st->outstanding, st->queued);
    printf("  %-24s %9s %9s %9s %9s %9s %-4s %s\n", "CLASS", "SLO MB/s", "SLO ms", "issue",
           "served", "p95 ms", "met", "windows met");
    for (uint32_t i = 0; i < st->nclasses; i++) {
        char slo_rate[32] = "-", slo_lat[16] = "-";

        if (cs[i].rate_kbps && cs[i].latency_us) {
            snprintf(slo_rate, sizeof(slo_rate), "%.1f", (double)cs[i].rate_kbps / 1000);
            snprintf(slo_lat, sizeof(slo_lat), "%.1f", (double)cs[i].latency_us / 1000);
        } else if (cs[i].rate_kbps) {
            /* the class internal: no bound, MIN:MAX as --qos-internal
             * takes them (MAX 0: unlimited) */
            snprintf(slo_rate, sizeof(slo_rate), "%g:%g", (double)cs[i].rate_kbps / 1000,
                     (double)cs[i].max_kbps / 1000);
        }
        printf("  %-24s %9s %9s %9.1f %9.1f %9.1f %-4s %llu/%llu\n", cs[i].name, slo_rate,
               slo_lat, (double)cs[i].issue_kbps / 1000, (double)cs[i].served_kbps / 1000,
               (double)cs[i].p95_us / 1000,
               cs[i].met < 0 ? "-" : cs[i].met ? "yes" : "no",
               (unsigned long long)cs[i].windows_met, (unsigned long long)cs[i].windows);
    }
}

static int qos_status(struct ipvfs_client *client, int json)
{
    const struct ipvfs_map *map = ipvfs_client_map(client);
    int rc = 0, shown = 0;
    char buf[400];

    if (json)
        printf("{\"io_nodes\":[");
    for (uint32_t io = 0; io < map->nio; io++) {
        const struct ipvfs_map_rank *r = ipvfs_map_io_node(map, io);
        const struct ipvfs_qos_status_rep *st;
        struct wire_reply rep;
        struct ipvfs_error err;

        if (!r)
            continue;
        if (ipvfs_admin_call(client, r->rank, IPVFS_OP_QOS_STATUS, 0, NULL, 0, CTL_QOS_MS, &rep,
                             &err) < 0) {
            rc = qos_fail("status: I/O node %u: %s", io, err.msg);
            continue;
        }
        st = (const struct ipvfs_qos_status_rep *)rep.body;
        if (rep.status) {
            rc = qos_fail("status: I/O node %u: %s", io, refusal(&rep, buf, sizeof(buf)));
        } else if (rep.len < sizeof(*st) || st->nclasses > IPVFS_QOS_MAX_CLASSES ||
                   rep.len != sizeof(*st) + st->nclasses * sizeof(struct ipvfs_qos_class_status)) {
            rc = qos_fail("status: I/O node %u: a malformed reply of %zu bytes", io,
                          (size_t)rep.len);
        } else {
            print_node(io, r->rank, st, (const struct ipvfs_qos_class_status *)(st + 1), json,
                       !shown++);
        }
        wire_reply_free(&rep);
    }
    if (json)
        printf("]}\n");
    return rc;
}

int ctl_qos(struct ipvfs_client *client, int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "set") == 0)
        return qos_set(client, argc, argv);
    if (argc >= 2 && strcmp(argv[1], "status") == 0 &&
        (argc == 2 || (argc == 3 && strcmp(argv[2], "--json") == 0)))
        return qos_status(client, argc == 3);
    return qos_usage();
}
