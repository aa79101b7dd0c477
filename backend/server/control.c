/* Control service of every rank: STATUS, SHUTDOWN, SIGTERM/SIGINT, SIGUSR1;
 * of I/O nodes: SCRUB and REBUILD of their iRAID volume.
 *
 * STATUS of an I/O node carries its volume (members' states, rebuild
 * progress) after the client counters, and reports the rank DEGRADED
 * while a member is not UP; srv->state itself stays SERVING (it says what
 * the rank accepts, not how healthy its volume is).
 *
 * SCRUB runs in the background (iraid_scrub): the loop serves on and the
 * reply goes out from the scrub's callback.  One scrub per node at a time
 * (iraid says EBUSY to a second); its requester lives in srv->ctl, so
 * that a requester gone meanwhile (the conn_closed hook forgets it), or a
 * scrub callback that never comes because the volume closed between two
 * stripes, costs nothing: a local stop answers the waiting requester with
 * ECANCELED itself.
 *
 * Cluster shutdown (SHUTDOWN without IPVFS_SHUTDOWN_LOCAL, to rank 0):
 *   1. every other I/O node gets SHUTDOWN|LOCAL (all at once, so that their
 *      final syncs overlap): it syncs and closes its datafile store, closes
 *      its volume (logging out of its targets) and replies;
 *   2. rank 0 does the same for its own I/O node;
 *   3. every target gets SHUTDOWN|LOCAL (all at once): it flushes and stops
 *      its target and replies;
 *   4. rank 0 replies to the requester (EIO and a message if some rank did
 *      not confirm; else 0, with a note naming the ranks that were down
 *      already: not answering, or stayed down), then closes its
 *      connections to the stopped ranks;
 *   5. each stopped rank leaves its loop when that connection closes, so
 *      that all ranks reach the exit barrier (supervise.c) after the requester
 *      has its answer: if a lost rank makes the barrier fail, or MPI abort
 *      the job, the answer is out already.
 * Steps 1 and 3 talk to the other ranks with bounded blocking calls: rank 0
 * serves nothing else while the cluster stops, and each peer answers from
 * its own loop, so nothing waits on rank 0's loop meanwhile.
 *
 * A local stop (SHUTDOWN|LOCAL or a signal) stops this rank's services the
 * same way; a target first waits (bounded) until its I/O node has logged
 * out, so that a cluster-wide signal still lets I/O nodes flush through
 * their targets.
 *
 * Every stop on purpose (a local stop, a cluster stop, a signal) tells the
 * supervisor first (server_note_stopping), so that the exit that follows is
 * no crash to restart from.
 *
 * SIGUSR1 is how mpiexec -disable-auto-cleanup tells the survivors that a
 * rank of the job died; its default action would kill this process.  The
 * supervisor forwards it (and skips the exit barrier that the lost rank
 * could never join); the serving process logs it and serves on. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "backend/iscsi/target.h"
#include "backend/server/control.h"
#include "backend/server/ionode.h"
#include "backend/server/server.h"
#include "common/log.h"
#include "common/wire.h"
#include "iraid/volume.h"

#define PEER_CONNECT_MS      5000
#define PEER_STOP_MS         60000   /* final syncs of one role, all peers together */
#define TARGET_DRAIN_MS      10000   /* how long a stopping target waits for logouts */
#define STOP_GRACE_MS        5000    /* leave the loop even if the requester never reads */
#define SIGNAL_REPEAT_MS     1000    /* a stop signal again within this is the same stop */
#define RELEASE_WAIT_MS      120000  /* a stopped rank waits this long for rank 0's close */
#define MAX_CLIENT_STATS     4096u

/* ---- STATUS ------------------------------------------------------------ */

static uint64_t rss_kib(void)
{
    unsigned long long size, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");

    if (!f)
        return 0;
    if (fscanf(f, "%llu %llu", &size, &resident) != 2)
        resident = 0;
    fclose(f);
    return resident * (uint64_t)sysconf(_SC_PAGESIZE) / 1024u;
}

/* The one place iraid's member states become the wire's. */
static uint32_t wire_member_state(enum iraid_member_state st)
{
    switch (st) {
    case IRAID_MEMBER_UP: return IPVFS_MEMBER_UP;
    case IRAID_MEMBER_RECONNECTING: return IPVFS_MEMBER_RECONNECTING;
    case IRAID_MEMBER_REBUILDING: return IPVFS_MEMBER_REBUILDING;
    case IRAID_MEMBER_DOWN: break;
    }
    return IPVFS_MEMBER_DOWN;
}

/* Volume section of an I/O node's STATUS (proto.h): vs, then one
 * ipvfs_member_status per member into ms (room for IRAID_MAX_MEMBERS).
 * Returns the member count, 0 when this rank has no open volume. */
static uint32_t fill_volume_status(struct server *srv, struct ipvfs_volume_status *vs,
                                   struct ipvfs_member_status *ms)
{
    struct iraid_status st;

    if (!srv->vol || iraid_get_status(srv->vol, &st) < 0)
        return 0;
    *vs = (struct ipvfs_volume_status){ .level = (uint32_t)st.level, .nmembers = st.nmembers,
                                        .missing = st.missing, .scrubbing = st.scrubbing != 0,
                                        .size = st.size, .chunk = st.chunk,
                                        .dirty_regions = st.dirty_regions,
                                        .scrub_done = st.scrub_done,
                                        .scrub_total = st.scrub_total,
                                        .full_stripe_writes = st.writes.full_stripe,
                                        .rmw_writes = st.writes.rmw,
                                        .rcw_writes = st.writes.rcw,
                                        .degraded_writes = st.writes.degraded };
    for (uint32_t i = 0; i < st.nmembers; i++) {
        const struct iraid_member_status *m = &st.member[i];
        ms[i] = (struct ipvfs_member_status){ .index = i, .state = wire_member_state(m->state),
                                              .done_bytes = m->rebuilt * st.chunk,
                                              .total_bytes = m->total * st.chunk };
        snprintf(ms[i].url, sizeof(ms[i].url), "%s", m->url);
        if (m->state == IRAID_MEMBER_REBUILDING) {
            vs->rebuild_done += ms[i].done_bytes;
            vs->rebuild_total += ms[i].total_bytes;
        }
    }
    return st.nmembers;
}

/* Serving, but with a volume member not UP. */
static int volume_degraded(struct server *srv)
{
    struct iraid_status st;

    return srv->vol && iraid_get_status(srv->vol, &st) == 0 && st.missing > 0;
}

static void fill_status(struct server *srv, struct ipvfs_status_rep *out)
{
    memset(out, 0, sizeof(*out));
    out->rank = (uint32_t)srv->rank;
    out->role = srv->role;
    out->pid = (uint32_t)getpid();
    out->state = srv->state;
    if (srv->state == IPVFS_STATE_SERVING && volume_degraded(srv))
        out->state = IPVFS_STATE_DEGRADED;
    out->requests = srv->total.requests;
    out->bytes_in = srv->total.bytes_in;
    out->bytes_out = srv->total.bytes_out;
    if (srv->tgt) {   /* a target serves its I/O node over iSCSI, not over our protocol */
        struct tgt_stats ts;

        tgt_server_stats(srv->tgt, &ts);
        out->requests += ts.commands;
        out->bytes_in += ts.bytes_written;
        out->bytes_out += ts.bytes_read;
    }
    out->rss_kib = rss_kib();
    snprintf(out->host, sizeof(out->host), "%s", srv->host);
    out->supervisor_pid = srv->supervisor_pid;
    out->restarts = srv->restarts;
    out->uptime_ms = evloop_now_ms() - srv->started_ms;
    snprintf(out->last_exit, sizeof(out->last_exit), "%s", srv->last_exit);
    snprintf(out->reason, sizeof(out->reason), "%s", srv->down_reason);
    snprintf(out->node, sizeof(out->node), "%s", srv->node);
    snprintf(out->cpus, sizeof(out->cpus), "%s", srv->cpus);
}

/* A target rank's L2 section of STATUS (proto.h). */
static struct ipvfs_l2_status target_l2_status(struct server *srv)
{
    struct tgt_stats ts;

    tgt_server_stats(srv->tgt, &ts);
    return (struct ipvfs_l2_status){ .capacity = ts.l2_capacity, .resident = ts.l2_resident,
                                     .hits = ts.l2_hits, .misses = ts.l2_misses,
                                     .dropped = ts.l2_dropped, .demotes = ts.l2_demotes,
                                     .evictions = ts.l2_evictions };
}

static void handle_status(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body)
{
    struct ipvfs_member_status ms[IRAID_MAX_MEMBERS];
    struct server *srv = conn_server(c);
    uint32_t n = srv->nclients < MAX_CLIENT_STATS ? (uint32_t)srv->nclients : MAX_CLIENT_STATS;
    size_t len = sizeof(struct ipvfs_status_rep) + 8 + n * sizeof(struct ipvfs_client_stat);
    struct ipvfs_volume_status vs;
    struct ipvfs_client_stat *cs;
    uint32_t nm = fill_volume_status(srv, &vs, ms);
    struct ipvfs_l1_status l1 = ionode_l1_status(srv);
    struct ipvfs_l2_status l2 = target_l2_status(srv);
    size_t vlen = nm ? sizeof(vs) + nm * sizeof(ms[0]) + sizeof(l1) : srv->tgt ? sizeof(l2) : 0;
    uint8_t *rep;
    uint32_t head[2] = { n, 0 };

    if (hdr->body_len != 0) {
        conn_reply_err(c, EINVAL, "STATUS takes no body");
        return;
    }
    if (!(rep = malloc(len + vlen))) {
        conn_reply_err(c, ENOMEM, "out of memory");
        return;
    }
    if (nm) {
        memcpy(rep + len, &vs, sizeof(vs));
        memcpy(rep + len + sizeof(vs), ms, nm * sizeof(ms[0]));
        memcpy(rep + len + sizeof(vs) + nm * sizeof(ms[0]), &l1, sizeof(l1));
    } else if (vlen) {
        memcpy(rep + len, &l2, sizeof(l2));
    }
    fill_status(srv, (struct ipvfs_status_rep *)rep);
    memcpy(rep + sizeof(struct ipvfs_status_rep), head, sizeof(head));
    cs = (struct ipvfs_client_stat *)(rep + sizeof(struct ipvfs_status_rep) + 8);
    for (uint32_t i = 0; i < n; i++)
        cs[i] = (struct ipvfs_client_stat){
            .client_id = srv->clients[i].client_id,
            .requests = srv->clients[i].c.requests,
            .bytes_in = srv->clients[i].c.bytes_in,
            .bytes_out = srv->clients[i].c.bytes_out,
            .reads_waited = srv->clients[i].reads_waited,
            .last_wait_seq = srv->clients[i].last_wait_seq,
        };
    conn_reply(c, 0, rep, len + vlen);
}

/* ---- SCRUB and REBUILD (I/O nodes) -------------------------------------- */

/* Answers the scrub's requester, if it is still there. */
static void scrub_answer(struct server *srv, int status, uint64_t mismatches, uint64_t skipped)
{
    struct conn *c = srv->ctl.scrub_requester;
    struct ipvfs_scrub_rep *rep;

    srv->ctl.scrub_requester = NULL;
    if (!c)
        return;
    if (status < 0) {
        conn_reply_err(c, -status, "scrub failed: %s", strerror(-status));
    } else if (!(rep = malloc(sizeof(*rep)))) {
        conn_reply_err(c, ENOMEM, "out of memory");
    } else {
        *rep = (struct ipvfs_scrub_rep){ .mismatches = mismatches, .skipped = skipped };
        conn_reply(c, 0, rep, sizeof(*rep));
    }
}

static void scrub_done(struct iraid_volume *vol, int status, uint64_t mismatches,
                       uint64_t skipped, void *user)
{
    struct server *srv = user;

    srv->ctl.scrub_running = 0;
    if (status == 0)
        log_info("scrub: %llu stripes disagree, %llu skipped",
                 (unsigned long long)mismatches, (unsigned long long)skipped);
    scrub_answer(srv, status, mismatches, skipped);
}

static void handle_scrub(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body)
{
    struct server *srv = conn_server(c);
    int rc;

    if (hdr->body_len != 0) {
        conn_reply_err(c, EINVAL, "SCRUB takes no body");
        return;
    }
    if (srv->state != IPVFS_STATE_SERVING || !srv->vol) {
        conn_reply_err(c, EAGAIN, "I/O node %u is not serving", srv->io_index);
        return;
    }
    if (srv->ctl.scrub_running) {
        conn_reply_err(c, EBUSY, "a scrub of I/O node %u is running", srv->io_index);
        return;
    }
    /* Armed before the call: when no stripe needs I/O (every one skipped)
     * iraid_scrub runs scrub_done before it returns. */
    srv->ctl.scrub_running = 1;
    srv->ctl.scrub_requester = c;
    log_info("scrub of I/O node %u starting", srv->io_index);
    if ((rc = iraid_scrub(srv->vol, scrub_done, srv)) < 0) {
        srv->ctl.scrub_running = 0;
        srv->ctl.scrub_requester = NULL;
        conn_reply_err(c, -rc, "cannot scrub: %s",
                       rc == -EOPNOTSUPP ? "RAID-0 has no redundancy to check" : strerror(-rc));
    }
}

/* Takes the member out and rebuilds it (onto url when it is another LUN),
 * and answers c. */
static void rebuild_start(struct server *srv, struct conn *c, uint32_t member, const char *url)
{
    struct iraid_chap chap;
    int rc;

    /* a target rank of this cluster takes our derived CHAP, another LUN none */
    rc = iraid_replace_member(srv->vol, member, url,
                              server_url_chap(srv, url, &chap) ? &chap : NULL);
    explicit_bzero(&chap, sizeof(chap));
    if (rc < 0) {
        conn_reply_err(c, -rc, "cannot rebuild member %u: %s", member,
                       rc == -EOPNOTSUPP ? "RAID-0 has no redundancy to rebuild from"
                       : rc == -EBUSY    ? "another member is missing or still rebuilding"
                                         : strerror(-rc));
        return;
    }
    log_info("rebuild of member %u requested onto %s", member, url);
    conn_reply(c, 0, NULL, 0);
}

/* The replacement was checked (iraid_probe_member_async): it must have
 * logged in and be able to hold a member.  A requester gone meanwhile
 * gets nothing rebuilt: nobody would hear how it went. */
static void probe_done(struct iraid_volume *vol, int status, const struct iraid_probe *pr,
                       void *user)
{
    struct server *srv = user;
    struct control_state *ctl = &srv->ctl;
    struct conn *c = ctl->probe_requester;

    ctl->probe_requester = NULL;
    ctl->probe_running = 0;
    if (!c) {
        log_warn("rebuild onto %s: the requester left during the check; nothing done",
                 ctl->probe_url);
    } else if (status < 0) {
        log_warn("rebuild onto %s refused: %s (%s)", ctl->probe_url, strerror(-status), pr->why);
        conn_reply_err(c, -status, "cannot log in to %s or read its capacity: %s (%s)",
                       ctl->probe_url, strerror(-status), pr->why);
    } else if (!pr->fits) {
        conn_reply_err(c, ENOSPC,
                       "%s holds %llu bytes in %u-byte blocks; a member needs %llu bytes in "
                       "%u-byte blocks", ctl->probe_url, (unsigned long long)pr->bytes,
                       pr->block_size, (unsigned long long)pr->need_bytes,
                       pr->need_block_size);
    } else if (srv->state != IPVFS_STATE_SERVING || srv->vol != vol) {
        conn_reply_err(c, EAGAIN, "I/O node %u stopped serving during the check",
                       srv->io_index);
    } else {
        rebuild_start(srv, c, ctl->probe_member, ctl->probe_url);
    }
}

/* REBUILD with a URL: the replacement is checked first, on the loop (the
 * I/O node goes on serving); probe_done answers. */
static void check_replacement(struct conn *c, struct server *srv, uint32_t member,
                              const char *url)
{
    struct control_state *ctl = &srv->ctl;
    struct iraid_chap chap;
    int rc;

    if (server_check_iscsi_url(url) < 0) {
        conn_reply_err(c, EINVAL, "'%s' is not iscsi://HOST[:PORT]/IQN/LUN", url);
        return;
    }
    if (ctl->probe_running) {
        conn_reply_err(c, EBUSY, "I/O node %u is checking %s for another rebuild",
                       srv->io_index, ctl->probe_url);
        return;
    }
    snprintf(ctl->probe_url, sizeof(ctl->probe_url), "%s", url);
    ctl->probe_member = member;
    ctl->probe_requester = c;
    ctl->probe_running = 1;
    rc = iraid_probe_member_async(srv->vol, url, server_url_chap(srv, url, &chap) ? &chap : NULL,
                                  probe_done, srv);
    explicit_bzero(&chap, sizeof(chap));
    if (rc < 0) {
        ctl->probe_requester = NULL;
        ctl->probe_running = 0;
        conn_reply_err(c, -rc, "cannot log in to %s: %s", url, strerror(-rc));
    }
}

static void handle_rebuild(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body)
{
    struct server *srv = conn_server(c);
    struct ipvfs_rebuild_req req;
    struct iraid_status st;
    char url[IPVFS_MAX_URL + 1];

    if (hdr->body_len < sizeof(req)) {
        conn_reply_err(c, EINVAL, "REBUILD body is %llu bytes, less than %zu",
                       (unsigned long long)hdr->body_len, sizeof(req));
        return;
    }
    memcpy(&req, body, sizeof(req));
    if (req.url_len > IPVFS_MAX_URL || hdr->body_len != sizeof(req) + req.url_len) {
        conn_reply_err(c, EINVAL, "REBUILD body of %llu bytes disagrees with a %u-byte URL "
                       "(at most %u)", (unsigned long long)hdr->body_len, req.url_len,
                       IPVFS_MAX_URL);
        return;
    }
    if (srv->state != IPVFS_STATE_SERVING || !srv->vol || iraid_get_status(srv->vol, &st) < 0) {
        conn_reply_err(c, EAGAIN, "I/O node %u is not serving", srv->io_index);
        return;
    }
    if (req.member >= st.nmembers) {
        conn_reply_err(c, EINVAL, "member %u: the volume has members 0 to %u", req.member,
                       st.nmembers - 1);
        return;
    }
    memcpy(url, body + sizeof(req), req.url_len);
    url[req.url_len] = '\0';
    if (req.url_len == 0)
        rebuild_start(srv, c, req.member, st.member[req.member].url);
    else if (strlen(url) != req.url_len)
        conn_reply_err(c, EINVAL, "the URL holds a NUL byte");
    else
        check_replacement(c, srv, req.member, url);
}

/* ---- leaving the loop --------------------------------------------------- */

/* Rank 0: closing these tells the stopped ranks to leave (step 5). */
static void release_peers(struct control_state *ctl)
{
    for (int i = 0; i < ctl->nheld; i++)
        close(ctl->held_fds[i]);
    free(ctl->held_fds);
    ctl->held_fds = NULL;
    ctl->nheld = 0;
}

static void leave_loop(struct server *srv, void *arg)
{
    evloop_del_timer(srv->loop, srv->ctl.grace_timer);
    srv->ctl.grace_timer = 0;
    srv->ctl.leave_on_close = NULL;
    release_peers(&srv->ctl);
    evloop_stop(srv->loop);
}

static void grace_expired(struct evloop *loop, uint64_t id, void *user)
{
    struct server *srv = user;

    srv->ctl.grace_timer = 0;
    log_warn("the stop did not complete in time (reply not collected, or no release "
             "from rank 0); leaving anyway");
    leave_loop(srv, NULL);
}

/* Replies to c (NULL: nobody asked), then leaves the loop: once the reply
 * is out, or with wait_for_close once c closes (step 5).  msg is the
 * error's text, or with status 0 a note for the requester ("" for none). */
static void reply_and_leave(struct server *srv, struct conn *c, int status, const char *msg,
                            int wait_for_close)
{
    char *note;

    srv->ctl.grace_timer = evloop_add_timer(srv->loop,
                                            wait_for_close ? RELEASE_WAIT_MS : STOP_GRACE_MS,
                                            grace_expired, srv);
    if (!srv->ctl.grace_timer)
        log_warn("no memory for the stop's time limit: waiting without one");
    if (!c) {
        leave_loop(srv, NULL);
        return;
    }
    if (wait_for_close)
        srv->ctl.leave_on_close = c;    /* see control_conn_closed */
    else
        conn_on_reply_sent(c, leave_loop, NULL);
    if (status)
        conn_reply_err(c, status, "%s", msg);
    else if (msg[0] && (note = strdup(msg)))
        conn_reply(c, 0, note, strlen(note) + 1);
    else
        conn_reply(c, 0, NULL, 0);
}

/* ---- local stop --------------------------------------------------------- */

/* Who sent SHUTDOWN|LOCAL, if anyone (srv->ctl.local_requester): the rank
 * leaves once that requester closes the connection (step 5),
 * RELEASE_WAIT_MS at most. */
static void local_stopped(struct server *srv, int status)
{
    struct conn *c = srv->ctl.local_requester;
    char note[128] = "";

    log_info("rank %d stopped", srv->rank);
    srv->ctl.local_requester = NULL;
    /* A rank that stayed down says so: rank 0 names it to the requester. */
    if (srv->down_reason[0])
        snprintf(note, sizeof(note), "stayed down: %s", srv->down_reason);
    reply_and_leave(srv, c, status < 0 ? -status : 0,
                    status < 0 ? "local stop failed; see the server log" : note, 1);
}

static void target_drain(struct evloop *loop, uint64_t id, void *user)
{
    struct server *srv = user;
    struct tgt_stats st;
    int rc;

    tgt_server_stats(srv->tgt, &st);
    if (st.sessions > 0 && evloop_now_ms() < srv->ctl.drain_deadline &&
        evloop_add_timer(loop, 50, target_drain, srv))
        return;
    if (st.sessions > 0)
        log_warn("stopping the target with %u sessions still logged in", st.sessions);
    rc = tgt_server_flush(srv->tgt);
    if (rc < 0)
        log_error("final flush of the target failed: %s", strerror(-rc));
    tgt_server_destroy(srv->tgt);
    srv->tgt = NULL;
    local_stopped(srv, rc);
}

void control_local_stop(struct server *srv)
{
    server_note_stopping(srv);
    srv->state = IPVFS_STATE_STOPPING;
    scrub_answer(srv, -ECANCELED, 0, 0);
    if (srv->role & IPVFS_ROLE_IO) {
        ionode_stop(srv, local_stopped);
    } else if (srv->tgt) {
        srv->ctl.drain_deadline = evloop_now_ms() + TARGET_DRAIN_MS;
        target_drain(srv->loop, 0, srv);
    } else {
        local_stopped(srv, 0);
    }
}

/* ---- cluster shutdown (rank 0) ----------------------------------------- */

/* Reads the reply to op (sent with req_id op), keepalives skipped and the
 * protocol version checked (common/wire.h); 0 or -errno (the reply's
 * status included).  A successful reply's note (text body), if any, goes
 * into note ("" when none). */
static int peer_recv(int fd, uint16_t op, int timeout_ms, char *note, size_t note_len)
{
    struct wire_reply rep;
    int rc = wire_recv(fd, op, op, timeout_ms, &rep);

    note[0] = '\0';
    if (rc < 0)
        return rc;
    rc = rep.status ? -(int)rep.status : 0;
    if (rc == 0 && rep.len > 0)
        snprintf(note, note_len, "%.*s", (int)rep.len, (const char *)rep.body);
    wire_reply_free(&rep);
    return rc;
}

/* Rank 0: a rank that was down when the cluster stopped, for the reply. */
static void note_down(struct control_state *ctl, int rank, const char *why)
{
    size_t used = strlen(ctl->already_down);

    log_warn("rank %d was down at the cluster stop: %s", rank, why);
    snprintf(ctl->already_down + used, sizeof(ctl->already_down) - used, "%s%d (%s)",
             used ? ", " : "", rank, why);
}

/* Connects to a rank, says HELLO and sends SHUTDOWN|LOCAL; returns the
 * socket to read the reply from, or -errno. */
static int peer_stop_send(struct server *srv, uint32_t rank)
{
    const struct ipvfs_map_rank *r = &srv->map.ranks[rank];
    char msg[256];
    int fd, rc;

    fd = wire_connect(r->host, r->port, srv->secret, (uint32_t)srv->rank, IPVFS_OP_HELLO,
                      PEER_CONNECT_MS, PEER_CONNECT_MS, msg, sizeof(msg));
    if (fd < 0) {
        log_error("cannot reach rank %u at %s:%u to stop it: %s", rank, r->host, r->port, msg);
        return fd;
    }
    rc = wire_send(fd, IPVFS_OP_SHUTDOWN, IPVFS_SHUTDOWN_LOCAL, IPVFS_OP_SHUTDOWN, NULL, 0,
                   PEER_CONNECT_MS);
    if (rc < 0) {
        log_error("cannot ask rank %u to stop: %s", rank, strerror(-rc));
        close(fd);
        return rc;
    }
    return fd;
}

/* Stops every other rank having one of roles, all at once (their final
 * syncs overlap), and waits for each confirmation, PEER_STOP_MS at most in
 * all.  Returns how many did not confirm.  A rank that cannot be reached
 * (its serving process crashed and waits to restart, or the whole rank is
 * gone) was down already: nothing of it to stop, so no failure; it is
 * named in the reply (already_down), like a rank that stayed down.  Its
 * supervisor leaves with the others' exit barrier (supervise.c). */
static int peers_stop(struct server *srv, uint32_t roles)
{
    struct control_state *ctl = &srv->ctl;
    uint64_t deadline;
    int *fds, failures = 0, rc;
    char note[128];

    if (!(fds = malloc((size_t)srv->nranks * sizeof(*fds))) ||
        (!ctl->held_fds && !(ctl->held_fds = malloc((size_t)srv->nranks * sizeof(*fds))))) {
        free(fds);
        log_error("out of memory");
        return srv->nranks;
    }
    for (int r = 0; r < srv->nranks; r++) {
        fds[r] = -1;
        if (r != srv->rank && (srv->map.ranks[r].role & roles) &&
            (fds[r] = peer_stop_send(srv, (uint32_t)r)) < 0)
            note_down(ctl, r, "not answering: crashed, or waiting to restart");
    }
    deadline = evloop_now_ms() + PEER_STOP_MS;
    for (int r = 0; r < srv->nranks; r++) {
        uint64_t now = evloop_now_ms();
        if (fds[r] < 0)
            continue;
        rc = peer_recv(fds[r], IPVFS_OP_SHUTDOWN, now < deadline ? (int)(deadline - now) : 1,
                       note, sizeof(note));
        if (rc == 0 && note[0])
            note_down(ctl, r, note);
        if (rc < 0) {
            log_error("rank %d did not confirm its stop: %s", r, strerror(-rc));
            failures++;
            close(fds[r]);
        } else {
            log_info("rank %d stopped", r);
            ctl->held_fds[ctl->nheld++] = fds[r]; /* closed by release_peers() */
        }
    }
    free(fds);
    return failures;
}

static void cluster_io_stopped(struct server *srv, int status)
{
    struct control_state *ctl = &srv->ctl;
    struct conn *c = ctl->cluster_requester;
    char msg[640];

    if (status < 0)
        ctl->cluster_failures++;
    ctl->cluster_failures += peers_stop(srv, IPVFS_ROLE_TARGET);
    if (ctl->cluster_failures)
        snprintf(msg, sizeof(msg), "%d ranks did not stop cleanly; see the server log",
                 ctl->cluster_failures);
    else if (ctl->already_down[0])
        snprintf(msg, sizeof(msg), "already down: %s", ctl->already_down);
    else
        msg[0] = '\0';
    log_info("cluster stopped%s", ctl->cluster_failures ? " with errors" : "");
    ctl->cluster_requester = NULL;
    reply_and_leave(srv, c, ctl->cluster_failures ? EIO : 0, msg, 0);
}

static void cluster_stop(struct server *srv, struct conn *c)
{
    log_info("cluster shutdown requested");
    server_note_stopping(srv);
    srv->state = IPVFS_STATE_STOPPING;
    srv->ctl.cluster_requester = c;
    srv->ctl.cluster_failures += peers_stop(srv, IPVFS_ROLE_IO);
    ionode_stop(srv, cluster_io_stopped);
}

static void handle_shutdown(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body)
{
    struct server *srv = conn_server(c);

    if (hdr->body_len != 0 || (hdr->flags & ~(uint32_t)IPVFS_SHUTDOWN_LOCAL)) {
        conn_reply_err(c, EINVAL, "SHUTDOWN takes no body and only the LOCAL flag");
    } else if (srv->state == IPVFS_STATE_STOPPING) {
        conn_reply_err(c, EALREADY, "rank %d is already stopping", srv->rank);
    } else if (hdr->flags & IPVFS_SHUTDOWN_LOCAL) {
        log_info("local stop requested");
        srv->ctl.local_requester = c;
        control_local_stop(srv);
    } else if (srv->rank != 0) {
        conn_reply_err(c, EINVAL, "cluster shutdown goes to rank 0, not rank %d", srv->rank);
    } else if (srv->state != IPVFS_STATE_SERVING && srv->state != IPVFS_STATE_DOWN) {
        /* A rank 0 that stays down still stops the others. */
        conn_reply_err(c, EAGAIN, "the cluster is still starting");
    } else {
        cluster_stop(srv, c);
    }
}

static const struct op_entry control_ops[] = {
    { IPVFS_OP_STATUS, IPVFS_ROLE_METADATA | IPVFS_ROLE_IO | IPVFS_ROLE_TARGET, handle_status,
      "STATUS" },
    { IPVFS_OP_SHUTDOWN, IPVFS_ROLE_METADATA | IPVFS_ROLE_IO | IPVFS_ROLE_TARGET,
      handle_shutdown, "SHUTDOWN" },
    { IPVFS_OP_SCRUB, IPVFS_ROLE_IO, handle_scrub, "SCRUB" },
    { IPVFS_OP_REBUILD, IPVFS_ROLE_IO, handle_rebuild, "REBUILD" },
    { 0, 0, NULL, NULL },
};

/* A requester that goes away is never answered; the one whose close tells
 * a stopped rank to leave (step 5) ends the loop. */
static void control_conn_closed(struct server *srv, struct conn *c)
{
    struct control_state *ctl = &srv->ctl;

    if (c == ctl->scrub_requester)
        ctl->scrub_requester = NULL;
    if (c == ctl->probe_requester)
        ctl->probe_requester = NULL;
    if (c == ctl->local_requester)
        ctl->local_requester = NULL;
    if (c == ctl->cluster_requester)
        ctl->cluster_requester = NULL;
    if (c == ctl->leave_on_close)
        leave_loop(srv, NULL);
}

const struct service control_service = {
    .name = "control", .ops = control_ops, .conn_closed = control_conn_closed,
};

/* ---- signals ------------------------------------------------------------ */

static void on_signal(struct evloop *loop, int fd, int events, void *user)
{
    struct server *srv = user;
    struct signalfd_siginfo si;

    if (read(fd, &si, sizeof(si)) != (ssize_t)sizeof(si))
        return;
    if (si.ssi_signo == SIGUSR1) {
        log_warn("mpiexec reports that a rank of the job is gone; serving on");
        return;
    }
    if (srv->state == IPVFS_STATE_STOPPING &&
        evloop_now_ms() - srv->ctl.signalled_ms < SIGNAL_REPEAT_MS) {
        /* One stop delivered twice: a batch system signals every process
         * of the step (this one and its supervisor, which passes its copy
         * on), as scancel does. */
        log_debug("signal %u again while stopping: the same stop", si.ssi_signo);
        return;
    }
    if (srv->state == IPVFS_STATE_STOPPING) {
        /* Asked again, later: the stores may have work in flight that
         * cannot finish outside the loop: leave them to their crash
         * recovery. */
        log_warn("signal %u while stopping: leaving now without closing the stores",
                 si.ssi_signo);
        srv->abandon = 1;
        evloop_stop(loop);
        return;
    }
    log_info("signal %u: stopping this rank", si.ssi_signo);
    srv->ctl.signalled_ms = evloop_now_ms();
    control_local_stop(srv);
}

int control_signals(struct server *srv)
{
    sigset_t set;

    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGUSR1);
    srv->signal_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (srv->signal_fd < 0) {
        log_error("signalfd: %s", strerror(errno));
        return -errno;
    }
    if (evloop_set_fd(srv->loop, srv->signal_fd, EV_READ, on_signal, srv) < 0) {
        log_error("cannot watch signals");
        close(srv->signal_fd);
        srv->signal_fd = -1;
        return -EIO;
    }
    return 0;
}
