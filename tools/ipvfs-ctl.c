/* ipvfs-ctl: the administrator's client of a running iPVFS cluster.
 *
 *   ipvfs-ctl [--map FILE] COMMAND [ARGS]
 *
 * The map comes from --map or $IPVFS_MAP.  A thin user of libipvfs-client
 * (adio/client/ipvfs_client.h): the namespace commands mkdir, rm and gc,
 * and stat, mv and cp (ctl_files.c, ctl_cp.c), are the library's own calls (with the client's time limits, IPVFS_TIMEOUT_MS);
 * the others are its blocking administrative calls, which share one
 * deadline, CTL_REACH_MS from the start (only the wait for SHUTDOWN's
 * reply, which covers the cluster's final sync, may take longer), so an
 * unreachable or stuck cluster is reported within that time.  SCRUB's
 * replies may take CTL_SCRUB_MS: the I/O nodes read their whole volumes
 * first.
 *
 * Exit status: 0 success, 1 failure (message on stderr), 2 usage error. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adio/client/ipvfs_client.h"
#include "common/evloop.h"
#include "tools/ctl_files.h"
#include "common/log.h"

#define CTL_REACH_MS    10000   /* every call but SHUTDOWN's reply, all together */
#define CTL_SHUTDOWN_MS 180000  /* the whole cluster syncing and stopping */
#define CTL_SCRUB_MS    3600000 /* every I/O node reading its whole volume */
#define CTL_MAX_MEMBERS 64
#define CTL_CLIENT_ID   0xffffffffu

struct ctl {
    struct ipvfs_client *client;
    const struct ipvfs_map *map;
    uint64_t reach_deadline;
};

static int usage(void)
{
    fputs("usage: ipvfs-ctl [--map FILE] COMMAND\n"
          "  status [--json]   role, pid, host and state of every rank\n"
          "  stats [--json]    requests and bytes served, per rank and per client, and\n"
          "                    each I/O node's L1 cache\n"
          "  shutdown          sync and stop the whole cluster\n"
          "  scrub             verify parity/mirrors of every I/O node's volume;\n"
          "                    exit status 1 when any stripe disagrees\n"
          "  rebuild IO MEMBER [URL]\n"
          "                    rebuild member MEMBER of I/O node IO's volume: onto the\n"
          "                    same LUN, or onto the replacement LUN URL\n"
          "                    (iscsi://HOST[:PORT]/IQN/LUN, at least a member's size)\n"
          "  ls PATH           list a directory\n"
          "  mkdir PATH        make a directory (and missing parents)\n"
          "  rm PATH           remove a file (with its datafiles) or an empty directory\n"
          "  gc                delete the datafiles of removed files whose remover died\n"
          "  stat PATH...      size, type, mode, owner, times and stripe layout\n"
          "                    (which I/O node holds which datafile)\n"
          "  mv [-f] SRC DST   rename; an existing DST is refused unless -f, which\n"
          "                    replaces it as rename(2) does\n"
          "  chmod MODE PATH...  set the permission bits (octal)\n"
          "  chown UID[:GID] PATH...  set the owner and group (numeric; root only,\n"
          "                    but an owner may give a file to a group of its own)\n"
          "  cp [-r] [-f] SRC DST\n"
          "                    copy a file (-r: a tree); each side ipvfs:/PATH, a local\n"
          "                    path or - (standard input/output); an existing DST is\n"
          "                    refused unless -f.  Size and holes are kept\n"
          "  df                size, used and free MiB of each I/O node's datafile\n"
          "                    store, and the total (what df shows on the mount)\n"
          "  qos set CLASS --rate MBPS --latency MS\n"
          "                    the SLO of application class CLASS at every I/O node:\n"
          "                    throughput MB/s, 95th percentile latency bound ms\n"
          "  qos status [--json]\n"
          "                    each I/O node's QoS scheduler and classes in the last\n"
          "                    window: issue and served rate, p95, SLO met, EDF depth,\n"
          "                    DSFQ credit\n"
          "The map is --map FILE or $IPVFS_MAP.\n",
          stderr);
    return 2;
}

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int fail(const char *fmt, ...)
{
    va_list ap;

    fputs("ipvfs-ctl: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 1;
}

static int reach_left(const struct ctl *ctl)
{
    uint64_t now = evloop_now_ms();

    return now >= ctl->reach_deadline ? 1 : (int)(ctl->reach_deadline - now);
}

/* One request to rank with a body of up to two parts; the reply lands in
 * *out (free it).  Prints the library's message and returns -errno when
 * the call failed; a server's refusal is in out->status. */
static int call(struct ctl *ctl, uint32_t rank, uint16_t op, uint32_t flags, const void *h1,
                size_t l1, const void *h2, size_t l2, int timeout_ms, struct wire_reply *out)
{
    struct iovec body[2] = { { (void *)h1, l1 }, { (void *)h2, l2 } };
    struct ipvfs_error err;
    int rc;

    rc = ipvfs_admin_call(ctl->client, rank, op, flags, body, 2, timeout_ms, out, &err);
    if (rc < 0)
        fprintf(stderr, "ipvfs-ctl: %s\n", err.msg);
    return rc;
}

/* "Reason (server's message)" for a refused request. */
static const char *why(const struct wire_reply *r, char *buf, size_t len)
{
    if (r->len > 0 && r->body[0])
        snprintf(buf, len, "%s (%s)", strerror((int)r->status), (const char *)r->body);
    else
        snprintf(buf, len, "%s", strerror((int)r->status));
    return buf;
}

/* ---- status and stats ---------------------------------------------------- */

struct rank_status {
    int reachable;
    struct ipvfs_status_rep st;
    uint32_t nclients;
    struct ipvfs_client_stat *clients;
    int has_volume;                 /* I/O nodes: the section after the clients */
    struct ipvfs_volume_status vol;
    struct ipvfs_member_status *members;
    struct ipvfs_l1_status l1;      /* I/O nodes: after the members */
    int has_l2;                     /* target ranks: the section after the clients */
    struct ipvfs_l2_status l2;
};

/* The volume section (proto.h) in the len bytes at p, if it is there whole. */
static void parse_volume(const uint8_t *p, uint64_t len, struct rank_status *out)
{
    struct ipvfs_volume_status vs;

    if (len < sizeof(vs))
        return;
    memcpy(&vs, p, sizeof(vs));
    if (vs.nmembers == 0 || vs.nmembers > CTL_MAX_MEMBERS ||
        len != sizeof(vs) + vs.nmembers * sizeof(*out->members) + sizeof(out->l1) ||
        !(out->members = malloc(vs.nmembers * sizeof(*out->members))))
        return;
    memcpy(out->members, p + sizeof(vs), vs.nmembers * sizeof(*out->members));
    memcpy(&out->l1, p + sizeof(vs) + vs.nmembers * sizeof(*out->members), sizeof(out->l1));
    for (uint32_t i = 0; i < vs.nmembers; i++)
        out->members[i].url[sizeof(out->members[i].url) - 1] = '\0';
    out->vol = vs;
    out->has_volume = 1;
}

static int fetch_status(struct ctl *ctl, uint32_t rank, struct rank_status *out)
{
    struct wire_reply rep;
    uint32_t head[2];
    int rc;

    memset(out, 0, sizeof(*out));
    rc = call(ctl, rank, IPVFS_OP_STATUS, 0, NULL, 0, NULL, 0, reach_left(ctl), &rep);
    if (rc < 0)
        return rc;
    if (rep.status != 0 || rep.len < sizeof(out->st)) {
        fprintf(stderr, "ipvfs-ctl: rank %u: STATUS: %s\n", rank,
                rep.status ? strerror((int)rep.status) : "malformed reply");
        wire_reply_free(&rep);
        return -EPROTO;
    }
    memcpy(&out->st, rep.body, sizeof(out->st));
    out->st.host[sizeof(out->st.host) - 1] = '\0';
    out->st.node[sizeof(out->st.node) - 1] = '\0';
    out->st.cpus[sizeof(out->st.cpus) - 1] = '\0';
    out->st.last_exit[sizeof(out->st.last_exit) - 1] = '\0';
    out->st.reason[sizeof(out->st.reason) - 1] = '\0';
    if (rep.len >= sizeof(out->st) + sizeof(head)) {
        uint64_t clients_end;
        memcpy(head, rep.body + sizeof(out->st), sizeof(head));
        clients_end = sizeof(out->st) + sizeof(head) + (uint64_t)head[0] * sizeof(*out->clients);
        if (rep.len >= clients_end &&
            (out->clients = malloc(head[0] * sizeof(*out->clients) + 1))) {
            out->nclients = head[0];
            memcpy(out->clients, rep.body + sizeof(out->st) + sizeof(head),
                   head[0] * sizeof(*out->clients));
        }
        if (rep.len == clients_end + sizeof(out->l2) && (out->st.role & IPVFS_ROLE_TARGET) &&
            !(out->st.role & IPVFS_ROLE_IO)) {
            memcpy(&out->l2, rep.body + clients_end, sizeof(out->l2));
            out->has_l2 = 1;
        } else if (rep.len > clients_end) {
            parse_volume(rep.body + clients_end, rep.len - clients_end, out);
        }
    }
    wire_reply_free(&rep);
    out->reachable = 1;
    return 0;
}

static const char *state_name(uint32_t state)
{
    switch (state) {
    case IPVFS_STATE_STARTING: return "starting";
    case IPVFS_STATE_SERVING: return "serving";
    case IPVFS_STATE_DEGRADED: return "degraded";
    case IPVFS_STATE_STOPPING: return "stopping";
    case IPVFS_STATE_DOWN: return "down";
    default: return "unknown";
    }
}

static const char *member_state_name(uint32_t state)
{
    switch (state) {
    case IPVFS_MEMBER_UP: return "up";
    case IPVFS_MEMBER_DOWN: return "down";
    case IPVFS_MEMBER_RECONNECTING: return "reconnecting";
    case IPVFS_MEMBER_REBUILDING: return "rebuilding";
    default: return "unknown";
    }
}

static const char *role_name(uint32_t role)
{
    return (role & IPVFS_ROLE_METADATA) ? "metadata" : (role & IPVFS_ROLE_IO) ? "io" : "target";
}

/* Prints s as a JSON string. */
static void json_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            printf("\\%c", ch);
        else if (ch < 0x20)
            printf("\\u%04x", ch);
        else
            putchar(ch);
    }
    putchar('"');
}

static void json_services(uint32_t role)
{
    const char *sep = "";

    printf("\"services\": [");
    if (role & IPVFS_ROLE_METADATA) {
        printf("\"metadata\"");
        sep = ", ";
    }
    if (role & IPVFS_ROLE_IO) {
        printf("%s\"io\"", sep);
        sep = ", ";
    }
    if (role & IPVFS_ROLE_TARGET)
        printf("%s\"target\"", sep);
    putchar(']');
}

/* Bytes of one member's stripes: what a full rebuild of it covers.  A
 * member resynced from the write-intent bitmap reports fewer (proto.h). */
static uint64_t member_full_bytes(const struct ipvfs_volume_status *v)
{
    uint32_t data = v->level == 5 && v->nmembers > 1 ? v->nmembers - 1 : 1;

    return v->size / data;
}

/* "bitmap" or "full" for a member REBUILDING, else NULL. */
static const char *member_resync_kind(const struct ipvfs_volume_status *v,
                                      const struct ipvfs_member_status *m)
{
    if (m->state != IPVFS_MEMBER_REBUILDING)
        return NULL;
    return m->total_bytes < member_full_bytes(v) ? "bitmap" : "full";
}

static void json_volume(const struct rank_status *rs)
{
    const struct ipvfs_volume_status *v = &rs->vol;

    printf(", \"volume\": {\"level\": %u, \"size\": %llu, \"chunk\": %llu, "
           "\"missing\": %u, \"dirty_regions\": %llu, \"members\": [",
           v->level, (unsigned long long)v->size, (unsigned long long)v->chunk, v->missing,
           (unsigned long long)v->dirty_regions);
    for (uint32_t i = 0; i < v->nmembers; i++) {
        const struct ipvfs_member_status *m = &rs->members[i];
        printf("%s{\"index\": %u, \"state\": \"%s\", \"url\": ", i ? ", " : "", m->index,
               member_state_name(m->state));
        json_str(m->url);
        printf(", \"done_bytes\": %llu, \"total_bytes\": %llu",
               (unsigned long long)m->done_bytes, (unsigned long long)m->total_bytes);
        if (member_resync_kind(v, m))
            printf(", \"resync\": \"%s\"", member_resync_kind(v, m));
        putchar('}');
    }
    printf("], \"rebuild\": {\"active\": %s, \"done_bytes\": %llu, \"total_bytes\": %llu}, "
           "\"scrub\": {\"active\": %s, \"done_stripes\": %llu, \"total_stripes\": %llu}}",
           v->rebuild_total ? "true" : "false", (unsigned long long)v->rebuild_done,
           (unsigned long long)v->rebuild_total, v->scrubbing ? "true" : "false",
           (unsigned long long)v->scrub_done, (unsigned long long)v->scrub_total);
}

static void print_status_json(const struct ctl *ctl, const struct rank_status *rs)
{
    const struct ipvfs_map *m = ctl->map;

    printf("{\"nio\": %u, \"nt\": %u, \"raid\": %u, \"stripe_unit\": %llu, \"ranks\": [", m->nio,
           m->nt, m->raid_level, (unsigned long long)m->stripe_unit);
    for (uint32_t i = 0; i < m->nranks; i++) {
        const struct ipvfs_map_rank *r = &m->ranks[i];
        printf("%s\n  {\"rank\": %u, \"role\": \"%s\", ", i ? "," : "", i, role_name(r->role));
        json_services(r->role);
        /* The map names the rank's supervisor (the MPI process); the
         * serving process's pid is known only from its own answer. */
        if (rs[i].reachable)
            printf(", \"pid\": %u, \"host\": ", rs[i].st.pid);
        else
            printf(", \"pid\": null, \"supervisor_pid\": %u, \"host\": ", r->pid);
        json_str(r->host);
        printf(", \"port\": %u, \"io_index\": %u", r->port, r->io_index);
        if (r->target_index >= 0)
            printf(", \"target_index\": %d, \"iscsi_port\": %u", r->target_index, r->iscsi_port);
        printf(", \"state\": \"%s\"",
               rs[i].reachable ? state_name(rs[i].st.state) : "unreachable");
        if (rs[i].reachable) {
            const struct ipvfs_status_rep *s = &rs[i].st;
            printf(", \"supervisor_pid\": %u, \"restarts\": %u, \"uptime_s\": %.1f, "
                   "\"last_exit\": ", s->supervisor_pid, s->restarts, (double)s->uptime_ms / 1e3);
            json_str(s->last_exit);
            printf(", \"node\": ");
            json_str(s->node);
            printf(", \"cpus\": ");
            json_str(s->cpus);
            if (s->reason[0]) {
                printf(", \"reason\": ");
                json_str(s->reason);
            }
        }
        if (rs[i].has_volume)
            json_volume(&rs[i]);
        putchar('}');
    }
    printf("\n]}\n");
}

static void print_volume_text(uint32_t io, const struct rank_status *rs)
{
    const struct ipvfs_volume_status *v = &rs->vol;

    printf("  I/O node %u volume: RAID-%u, %u members, %llu MiB, %u missing", io, v->level,
           v->nmembers, (unsigned long long)(v->size >> 20), v->missing);
    if (v->rebuild_total)
        printf(", rebuilding %.1f%%", 100.0 * (double)v->rebuild_done / (double)v->rebuild_total);
    if (v->scrubbing && v->scrub_total)
        printf(", scrubbing %.1f%%", 100.0 * (double)v->scrub_done / (double)v->scrub_total);
    putchar('\n');
    for (uint32_t i = 0; i < v->nmembers; i++) {
        const struct ipvfs_member_status *m = &rs->members[i];
        printf("    member %u %-12s %s", i, member_state_name(m->state), m->url);
        if (member_resync_kind(v, m))
            printf("  (%s resync %.1f%% of %llu MiB)", member_resync_kind(v, m),
                   m->total_bytes ? 100.0 * (double)m->done_bytes / (double)m->total_bytes : 100.0,
                   (unsigned long long)(m->total_bytes >> 20));
        putchar('\n');
    }
}

static void print_status_text(const struct ctl *ctl, const struct rank_status *rs)
{
    const struct ipvfs_map *m = ctl->map;

    printf("cluster: %u I/O nodes x %u targets, RAID-%u, stripe unit %llu\n", m->nio, m->nt,
           m->raid_level, (unsigned long long)m->stripe_unit);
    printf("%-5s %-12s %-8s %-22s %-11s %8s %9s  %s\n", "RANK", "ROLE", "PID", "ADDRESS",
           "STATE", "RESTARTS", "UPTIME_S", "LAST EXIT");
    for (uint32_t i = 0; i < m->nranks; i++) {
        const struct ipvfs_map_rank *r = &m->ranks[i];
        const struct ipvfs_status_rep *s = &rs[i].st;
        char addr[96];
        char pid[16] = "-";
        if (rs[i].reachable)
            snprintf(pid, sizeof(pid), "%u", s->pid);
        snprintf(addr, sizeof(addr), "%s:%u", r->host, r->port);
        printf("%-5u %-12s %-8s %-22s %-11s", i,
               r->role & IPVFS_ROLE_METADATA ? "metadata+io" : role_name(r->role), pid, addr,
               rs[i].reachable ? state_name(s->state) : "unreachable");
        if (rs[i].reachable)
            printf(" %8u %9.1f  %s", s->restarts, (double)s->uptime_ms / 1e3,
                   s->last_exit[0] ? s->last_exit : "-");
        putchar('\n');
        if (rs[i].reachable && s->reason[0])
            printf("      rank %u is down: %s\n", i, s->reason);
    }
    for (uint32_t i = 0; i < m->nranks; i++)
        if (rs[i].has_volume)
            print_volume_text(m->ranks[i].io_index, &rs[i]);
}

static double l1_hit_ratio(const struct ipvfs_l1_status *l)
{
    uint64_t reads = l->hits + l->misses + l->bypasses;

    return reads ? (double)l->hits / (double)reads : 0.0;
}

static void print_l1_json(const struct ipvfs_l1_status *l)
{
    printf(", \"l1\": {\"capacity_bytes\": %llu, \"resident_bytes\": %llu, \"hits\": %llu, "
           "\"misses\": %llu, \"bypasses\": %llu, \"evictions\": %llu, "
           "\"write_updates\": %llu, \"hit_ratio\": %.4f, \"dirty_bytes\": %llu, "
           "\"writes_absorbed\": %llu, \"writebacks\": %llu, \"writeback_ios\": %llu, "
           "\"flushes\": %llu, \"demotes\": %llu, \"readahead_blocks\": %llu, "
           "\"readahead_hits\": %llu, \"readahead_wasted\": %llu}",
           (unsigned long long)(l->capacity << 16), (unsigned long long)(l->resident << 16),
           (unsigned long long)l->hits, (unsigned long long)l->misses,
           (unsigned long long)l->bypasses, (unsigned long long)l->evictions,
           (unsigned long long)l->write_updates, l1_hit_ratio(l),
           (unsigned long long)(l->dirty << 16), (unsigned long long)l->writes_absorbed,
           (unsigned long long)l->writebacks, (unsigned long long)l->writeback_ios,
           (unsigned long long)l->flushes, (unsigned long long)l->demotes,
           (unsigned long long)l->readahead_blocks, (unsigned long long)l->readahead_hits,
           (unsigned long long)l->readahead_wasted);
}

/* The volume's RAID-5 stripe writes by mode (all zero for RAID-0/1). */
static void print_iraid_json(const struct ipvfs_volume_status *v)
{
    printf(", \"iraid\": {\"level\": %u, \"full_stripe_writes\": %llu, \"rmw_writes\": %llu, "
           "\"reconstruct_writes\": %llu, \"degraded_writes\": %llu}", v->level,
           (unsigned long long)v->full_stripe_writes, (unsigned long long)v->rmw_writes,
           (unsigned long long)v->rcw_writes, (unsigned long long)v->degraded_writes);
}

static void print_l2_json(const struct ipvfs_l2_status *l)
{
    uint64_t n = l->hits + l->misses;

    printf(", \"l2\": {\"capacity_bytes\": %llu, \"resident_bytes\": %llu, \"hits\": %llu, "
           "\"misses\": %llu, \"hit_ratio\": %.4f, \"dropped\": %llu, \"demotes\": %llu, "
           "\"evictions\": %llu}", (unsigned long long)(l->capacity << 16),
           (unsigned long long)(l->resident << 16), (unsigned long long)l->hits,
           (unsigned long long)l->misses, n ? (double)l->hits / (double)n : 0.0,
           (unsigned long long)l->dropped, (unsigned long long)l->demotes,
           (unsigned long long)l->evictions);
}

static void print_stats_json(const struct ctl *ctl, const struct rank_status *rs)
{
    uint64_t req = 0, in = 0, out = 0;

    printf("{\"ranks\": [");
    for (uint32_t i = 0; i < ctl->map->nranks; i++) {
        const struct ipvfs_status_rep *s = &rs[i].st;
        printf("%s\n  {\"rank\": %u, \"role\": \"%s\", \"reachable\": %s", i ? "," : "", i,
               role_name(ctl->map->ranks[i].role), rs[i].reachable ? "true" : "false");
        if (rs[i].reachable) {
            printf(", \"requests\": %llu, \"bytes_in\": %llu, \"bytes_out\": %llu, "
                   "\"bytes\": %llu, \"rss_kib\": %llu, \"clients\": [",
                   (unsigned long long)s->requests, (unsigned long long)s->bytes_in,
                   (unsigned long long)s->bytes_out,
                   (unsigned long long)(s->bytes_in + s->bytes_out),
                   (unsigned long long)s->rss_kib);
            for (uint32_t k = 0; k < rs[i].nclients; k++) {
                const struct ipvfs_client_stat *c = &rs[i].clients[k];
                printf("%s{\"client_id\": %u, \"requests\": %llu, \"bytes_in\": %llu, "
                       "\"bytes_out\": %llu, \"reads_waited\": %llu, \"last_wait_seq\": %llu}",
                       k ? ", " : "", c->client_id, (unsigned long long)c->requests,
                       (unsigned long long)c->bytes_in, (unsigned long long)c->bytes_out,
                       (unsigned long long)c->reads_waited,
                       (unsigned long long)c->last_wait_seq);
            }
            putchar(']');
            if (rs[i].has_volume) {
                print_l1_json(&rs[i].l1);
                print_iraid_json(&rs[i].vol);
            }
            if (rs[i].has_l2)
                print_l2_json(&rs[i].l2);
            req += s->requests;
            in += s->bytes_in;
            out += s->bytes_out;
        }
        putchar('}');
    }
    printf("\n], \"total\": {\"requests\": %llu, \"bytes_in\": %llu, \"bytes_out\": %llu}}\n",
           (unsigned long long)req, (unsigned long long)in, (unsigned long long)out);
}

static void print_stats_text(const struct ctl *ctl, const struct rank_status *rs)
{
    printf("%-5s %-9s %12s %16s %16s %10s\n", "RANK", "ROLE", "REQUESTS", "BYTES_IN",
           "BYTES_OUT", "RSS_KIB");
    for (uint32_t i = 0; i < ctl->map->nranks; i++) {
        const struct ipvfs_status_rep *s = &rs[i].st;
        if (!rs[i].reachable) {
            printf("%-5u %-9s unreachable\n", i, role_name(ctl->map->ranks[i].role));
            continue;
        }
        printf("%-5u %-9s %12llu %16llu %16llu %10llu\n", i, role_name(ctl->map->ranks[i].role),
               (unsigned long long)s->requests, (unsigned long long)s->bytes_in,
               (unsigned long long)s->bytes_out, (unsigned long long)s->rss_kib);
    }
    for (uint32_t i = 0; i < ctl->map->nranks; i++) {
        const struct ipvfs_l2_status *l = &rs[i].l2;
        if (rs[i].has_l2 && l->capacity)
            printf("rank %u L2 cache: %llu of %llu MiB used, %llu hits, %llu misses, %llu "
                   "dropped (DPO), %llu demoted, %llu evictions\n", i,
                   (unsigned long long)(l->resident >> 4), (unsigned long long)(l->capacity >> 4),
                   (unsigned long long)l->hits, (unsigned long long)l->misses,
                   (unsigned long long)l->dropped, (unsigned long long)l->demotes,
                   (unsigned long long)l->evictions);
    }
    for (uint32_t i = 0; i < ctl->map->nranks; i++) {
        const struct ipvfs_l1_status *l = &rs[i].l1;
        const struct ipvfs_volume_status *v = &rs[i].vol;
        if (!rs[i].has_volume)
            continue;
        if (v->level == 5)
            printf("rank %u RAID-5 stripe writes: %llu full, %llu read-modify-write, %llu "
                   "reconstruct-write, %llu degraded\n", i,
                   (unsigned long long)v->full_stripe_writes, (unsigned long long)v->rmw_writes,
                   (unsigned long long)v->rcw_writes, (unsigned long long)v->degraded_writes);
        if (l->capacity == 0) {
            printf("rank %u L1 cache: off\n", i);
            continue;
        }
        printf("rank %u L1 cache: %llu of %llu MiB used, %llu MiB dirty, hit ratio %.3f (%llu "
               "hits, %llu misses, %llu bypasses), %llu evictions, %llu writes absorbed, %llu "
               "blocks written back in %llu writes, %llu flushes, %llu demoted, %llu blocks read "
               "ahead (%llu read, %llu wasted)\n", i,
               (unsigned long long)(l->resident >> 4), (unsigned long long)(l->capacity >> 4),
               (unsigned long long)(l->dirty >> 4), l1_hit_ratio(l), (unsigned long long)l->hits,
               (unsigned long long)l->misses, (unsigned long long)l->bypasses,
               (unsigned long long)l->evictions, (unsigned long long)l->writes_absorbed,
               (unsigned long long)l->writebacks, (unsigned long long)l->writeback_ios,
               (unsigned long long)l->flushes, (unsigned long long)l->demotes,
               (unsigned long long)l->readahead_blocks, (unsigned long long)l->readahead_hits,
               (unsigned long long)l->readahead_wasted);
    }
}

static int cmd_status(struct ctl *ctl, int stats, int json)
{
    struct rank_status *rs = calloc(ctl->map->nranks, sizeof(*rs));
    uint32_t down = 0;

    if (!rs)
        return fail("out of memory");
    for (uint32_t i = 0; i < ctl->map->nranks; i++)
        if (fetch_status(ctl, i, &rs[i]) < 0)
            down++;
    if (stats)
        json ? print_stats_json(ctl, rs) : print_stats_text(ctl, rs);
    else
        json ? print_status_json(ctl, rs) : print_status_text(ctl, rs);
    for (uint32_t i = 0; i < ctl->map->nranks; i++) {
        free(rs[i].clients);
        free(rs[i].members);
    }
    free(rs);
    if (down == ctl->map->nranks)
        return fail("the cluster is unreachable (no rank answered)");
    if (down)
        return fail("%u of %u ranks did not answer", down, ctl->map->nranks);
    return 0;
}

/* ---- shutdown and namespace commands ------------------------------------ */

static int cmd_shutdown(struct ctl *ctl)
{
    struct wire_reply rep;
    struct ipvfs_error err;
    uint64_t req_id;
    char buf[640];
    int rc;

    if (ipvfs_admin_send(ctl->client, 0, IPVFS_OP_SHUTDOWN, 0, NULL, 0, reach_left(ctl), &req_id,
                         &err) < 0)
        return fail("cannot reach the cluster: %s", err.msg);
    if (ipvfs_admin_recv(ctl->client, 0, IPVFS_OP_SHUTDOWN, req_id, CTL_SHUTDOWN_MS, &rep,
                         &err) < 0)
        return fail("shutdown: no reply from rank 0: %s", err.msg);
    rc = rep.status ? fail("shutdown: %s", why(&rep, buf, sizeof(buf))) : 0;
    /* every rank that was up stopped; the note names those that were not */
    if (rc == 0 && rep.len > 0 && memchr(rep.body, '\0', rep.len) && rep.body[0])
        printf("cluster stopped; %s\n", (const char *)rep.body);
    else if (rc == 0)
        printf("cluster stopped\n");
    wire_reply_free(&rep);
    return rc;
}

/* ---- volume commands: scrub, rebuild ------------------------------------ */

struct scrub_call {
    long rank;          /* -1 when the request could not be sent */
    uint64_t req_id;
    struct ipvfs_error err;
};

/* Asks I/O node io to scrub; the reply is collected by scrub_collect. */
static void scrub_send(struct ctl *ctl, uint32_t io, struct scrub_call *sc)
{
    const struct ipvfs_map_rank *r = ipvfs_map_io_node(ctl->map, io);

    sc->rank = -1;
    if (!r) {
        snprintf(sc->err.msg, sizeof(sc->err.msg), "the map names no I/O node %u", io);
        return;
    }
    if (ipvfs_admin_send(ctl->client, r->rank, IPVFS_OP_SCRUB, 0, NULL, 0, reach_left(ctl),
                         &sc->req_id, &sc->err) == 0)
        sc->rank = r->rank;
}

/* Prints I/O node io's verdict; 0 clean, 1 mismatches or failure. */
static int scrub_collect(struct ctl *ctl, uint32_t io, struct scrub_call *sc, uint64_t deadline)
{
    struct ipvfs_scrub_rep sr;
    struct wire_reply rep;
    char buf[640];
    uint64_t now = evloop_now_ms();

    if (sc->rank < 0) {
        fprintf(stderr, "ipvfs-ctl: scrub: I/O node %u: %s\n", io, sc->err.msg);
        return 1;
    }
    if (ipvfs_admin_recv(ctl->client, (uint32_t)sc->rank, IPVFS_OP_SCRUB, sc->req_id,
                         now < deadline ? (int)(deadline - now) : 1, &rep, &sc->err) < 0) {
        fprintf(stderr, "ipvfs-ctl: scrub: I/O node %u: no answer: %s\n", io, sc->err.msg);
        return 1;
    }
    if (rep.status || rep.len != sizeof(sr)) {
        fprintf(stderr, "ipvfs-ctl: scrub: I/O node %u: %s\n", io,
                rep.status ? why(&rep, buf, sizeof(buf)) : "malformed reply");
        wire_reply_free(&rep);
        return 1;
    }
    memcpy(&sr, rep.body, sizeof(sr));
    wire_reply_free(&rep);
    printf("I/O node %u: %llu mismatches, %llu stripes skipped\n", io,
           (unsigned long long)sr.mismatches, (unsigned long long)sr.skipped);
    return sr.mismatches > 0;
}

/* Every I/O node scrubs at once; each verdict is printed as it comes. */
static int cmd_scrub(struct ctl *ctl)
{
    struct scrub_call *sc = calloc(ctl->map->nio, sizeof(*sc));
    uint64_t deadline;
    int bad = 0;

    if (!sc)
        return fail("out of memory");
    for (uint32_t io = 0; io < ctl->map->nio; io++)
        scrub_send(ctl, io, &sc[io]);
    deadline = evloop_now_ms() + CTL_SCRUB_MS;
    for (uint32_t io = 0; io < ctl->map->nio; io++)
        bad += scrub_collect(ctl, io, &sc[io], deadline);
    free(sc);
    return bad ? fail("scrub: %d of %u I/O nodes found mismatches or failed", bad,
                      ctl->map->nio)
               : 0;
}

static int parse_index(const char *text, uint32_t *out)
{
    char *end;
    unsigned long v;

    errno = 0;
    v = strtoul(text, &end, 10);
    if (text[0] < '0' || text[0] > '9' || *end || errno || v > UINT32_MAX)
        return -EINVAL;
    *out = (uint32_t)v;
    return 0;
}

static int cmd_rebuild(struct ctl *ctl, const char *io_text, const char *member_text,
                       const char *url)
{
    struct ipvfs_rebuild_req req = { 0 };
    const struct ipvfs_map_rank *r;
    struct wire_reply rep;
    char buf[640];
    size_t url_len = url ? strlen(url) : 0;
    uint32_t io;
    int rc;

    if (parse_index(io_text, &io) < 0 || parse_index(member_text, &req.member) < 0)
        return usage();
    if (url_len > IPVFS_MAX_URL)
        return fail("rebuild: URL longer than %u bytes", IPVFS_MAX_URL);
    if (url && strncmp(url, "iscsi://", 8) != 0)
        return fail("rebuild: '%s' is not iscsi://HOST[:PORT]/IQN/LUN", url);
    if (!(r = ipvfs_map_io_node(ctl->map, io)))
        return fail("rebuild: no I/O node %u (the cluster has %u)", io, ctl->map->nio);
    req.url_len = (uint32_t)url_len;
    if (call(ctl, r->rank, IPVFS_OP_REBUILD, 0, &req, sizeof(req), url, url_len, reach_left(ctl),
             &rep) < 0)
        return fail("rebuild: no reply from I/O node %u", io);
    rc = rep.status ? fail("rebuild: %s", why(&rep, buf, sizeof(buf))) : 0;
    wire_reply_free(&rep);
    if (rc == 0)
        printf("I/O node %u: rebuilding member %u%s%s (see status)\n", io, req.member,
               url ? " onto " : "", url ? url : "");
    return rc;
}

/* One entry of ls: directories end in '/'. */
static int ls_entry(void *arg, const char *name, uint32_t type)
{
    (void)arg;
    return printf("%s%s\n", name, type == IPVFS_TYPE_DIR ? "/" : "") < 0;
}

/* The library's listing (ipvfs_readdir), the one the mount uses. */
static int cmd_ls(struct ctl *ctl, const char *path)
{
    struct ipvfs_error err;
    int rc = ipvfs_readdir(ctl->client, path, ls_entry, NULL, &err);

    if (rc < 0)
        return fail("ls %s: %s", path, err.msg);
    return rc ? fail("ls %s: cannot write the listing", path) : 0;
}

static int cmd_mkdir(struct ctl *ctl, const char *path)
{
    struct ipvfs_error err;

    if (ipvfs_mkdir(ctl->client, path, 0755, &err) < 0)
        return fail("mkdir %s: %s", path, err.msg);
    return 0;
}

/* The orphan clean-up is the library's (ipvfs_gc, ipvfs_remove_flags). */
static int cmd_gc(struct ctl *ctl)
{
    struct ipvfs_error err;
    uint32_t left;

    if (ipvfs_gc(ctl->client, &left, &err) < 0)
        return fail("%s", err.msg);
    if (left > 0)
        return fail("%u removed file(s) still have datafiles (an I/O node down?)", left);
    printf("no removed file has datafiles left\n");
    return 0;
}

static int cmd_rm(struct ctl *ctl, const char *path)
{
    struct ipvfs_error err;

    if (ipvfs_remove_flags(ctl->client, path, IPVFS_RM_DIR | IPVFS_RM_ALL_ORPHANS, &err) < 0)
        return fail("rm %s: %s", path, err.msg);
    return 0;
}

/* ---- main ------------------------------------------------------------------ */

static int run(struct ctl *ctl, int argc, char **argv)
{
    char path[IPVFS_MAX_PATH + 1];
    const char *cmd = argv[0];
    int json = argc == 2 && strcmp(argv[1], "--json") == 0;

    if ((strcmp(cmd, "status") == 0 || strcmp(cmd, "stats") == 0) && (argc == 1 || json))
        return cmd_status(ctl, strcmp(cmd, "stats") == 0, json);
    if (strcmp(cmd, "shutdown") == 0 && argc == 1)
        return cmd_shutdown(ctl);
    if (strcmp(cmd, "scrub") == 0 && argc == 1)
        return cmd_scrub(ctl);
    if (strcmp(cmd, "rebuild") == 0 && (argc == 3 || argc == 4))
        return cmd_rebuild(ctl, argv[1], argv[2], argc == 4 ? argv[3] : NULL);
    if (strcmp(cmd, "gc") == 0 && argc == 1)
        return cmd_gc(ctl);
    if (strcmp(cmd, "stat") == 0)
        return ctl_stat(ctl->client, argc, argv);
    if (strcmp(cmd, "mv") == 0)
        return ctl_mv(ctl->client, argc, argv);
    if (strcmp(cmd, "chmod") == 0)
        return ctl_chmod(ctl->client, argc, argv);
    if (strcmp(cmd, "chown") == 0)
        return ctl_chown(ctl->client, argc, argv);
    if (strcmp(cmd, "cp") == 0)
        return ctl_cp(ctl->client, argc, argv);
    if (strcmp(cmd, "df") == 0)
        return ctl_df(ctl->client, argc, argv);
    if (strcmp(cmd, "qos") == 0)
        return ctl_qos(ctl->client, argc, argv);
    if (argc != 2 || (strcmp(cmd, "ls") != 0 && strcmp(cmd, "mkdir") != 0 &&
                      strcmp(cmd, "rm") != 0))
        return usage();
    /* PATH or ipvfs:/PATH, as cp, stat and mv take it */
    if (ctl_ipvfs_path(argv[1], 1, path, sizeof(path)) != 1)
        return fail("%s %s: the path must be absolute (/dir/file or ipvfs:/dir/file)", cmd,
                    argv[1]);
    if (strcmp(cmd, "ls") == 0)
        return cmd_ls(ctl, path);
    return strcmp(cmd, "mkdir") == 0 ? cmd_mkdir(ctl, path) : cmd_rm(ctl, path);
}

int main(int argc, char **argv)
{
    const char *map_path = getenv("IPVFS_MAP");
    struct ctl ctl = { .client = NULL };
    struct ipvfs_error err;
    int i = 1, rc;

    ipvfs_log_set_ident("ctl");
    signal(SIGPIPE, SIG_IGN);
    if (i + 1 < argc && strcmp(argv[i], "--map") == 0) {
        map_path = argv[i + 1];
        i += 2;
    }
    if (i >= argc || strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
        return usage();
    if (!map_path || !*map_path)
        return fail("no server map: use --map FILE or set IPVFS_MAP") + 1;
    if (ipvfs_client_get(map_path, CTL_CLIENT_ID, &ctl.client, &err) < 0)
        return fail("%s", err.msg);
    ctl.map = ipvfs_client_map(ctl.client);
    ctl.reach_deadline = evloop_now_ms() + CTL_REACH_MS;
    rc = run(&ctl, argc - i, argv + i);
    ipvfs_client_put(ctl.client);
    return rc;
}
