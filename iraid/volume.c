/* iRAID volume over libiscsi's asynchronous API: members, requests, the
 * event loop, reconnects and the public entry points.  The redundant
 * levels' per-stripe work is in stripe.c, the on-disk metadata in meta.c.
 *
 * Shape: a request (struct iraid_req) is planned into parts, one SCSI
 * command per part, each to one member; all parts are queued at once so
 * members work concurrently, and the request completes when its last part
 * does.  A request that needs several rounds (parity: read old data, then
 * write) sets req->next_phase; it runs once every part of the current
 * round succeeded and plans the next round.
 *
 * Request state machine:
 *   PLANNING --submit ok--> IN_FLIGHT --last part done--> next_phase? --yes--> PLANNING
 *                                                              \--no--> DONE (cb, free)
 *   libiscsi refusing a part cancels the parts already queued; a request
 *   refused at its first submission ends silently (the public call returns
 *   the error and never calls back), a later round ends with the error.
 *   With tolerate_down set, a part that fails because its member went down
 *   counts as done (req->lost counts them); the stripe layer decides
 *   whether the stripe can spare that member.
 *
 * Event loop: each live member's socket is registered on the caller's
 * loop with the events libiscsi asks for.  A 100 ms tick calls
 * iscsi_service(ctx, 0) so libiscsi's command timeouts fire, drives the
 * member state machine (internal.h) and the metadata cleaner.  A session
 * is torn down (tasks cancelled, context destroyed) only outside libiscsi's
 * callbacks: right after iscsi_service() returns, or from the tick. */
#include "iraid/volume.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "iraid/internal.h"
#include "iraid/layout.h"
#include "iraid/meta.h"

/* ---- error translation: the one place SCSI/iSCSI status becomes errno ---- */

static int member_errno(const struct iraid_member *m, const char *what, int status,
                        const struct scsi_task *task, uint64_t lba)
{
    int err = -EIO;
    int key = task ? (int)task->sense.key : 0, ascq = task ? task->sense.ascq : 0;

    switch (status) {
    case SCSI_STATUS_GOOD:
        if (!task || task->residual_status != SCSI_RESIDUAL_UNDERFLOW)
            return 0;
        log_error("iraid: %s %s lba %" PRIu64 ": short transfer (%zu bytes missing)", m->url,
                  what, lba, task->residual);
        return -EIO;
    case SCSI_STATUS_CANCELLED:
        /* Only iraid_close() cancels on purpose; libiscsi cancels the
         * commands of a session it loses: that is an I/O error. */
        if (!m->vol->closing)
            break;
        log_debug("iraid: %s %s lba %" PRIu64 ": cancelled", m->url, what, lba);
        return -ECANCELED;
    case SCSI_STATUS_TIMEOUT:
        err = -ETIMEDOUT;
        break;
    case SCSI_STATUS_BUSY:
    case SCSI_STATUS_TASK_SET_FULL:
    case SCSI_STATUS_RESERVATION_CONFLICT:
        err = -EBUSY;
        break;
    case SCSI_STATUS_CHECK_CONDITION:
        if (key == SCSI_SENSE_ILLEGAL_REQUEST)
            err = ascq == SCSI_SENSE_ASCQ_LBA_OUT_OF_RANGE ? -ERANGE : -EINVAL;
        else if (key == SCSI_SENSE_DATA_PROTECTION)
            err = ascq == 0x2707 /* space allocation failed */ ? -ENOSPC : -EROFS;
        else if (key == SCSI_SENSE_NOT_READY)
            err = ascq == SCSI_SENSE_ASCQ_MEDIUM_NOT_PRESENT ? -ENOMEDIUM : -EIO;
        break;
    default:
        break;
    }
    if (status == SCSI_STATUS_CHECK_CONDITION)
        log_error("iraid: %s %s lba %" PRIu64 ": check condition, sense %s ascq 0x%04x: %s",
                  m->url, what, lba, scsi_sense_key_str(key), ascq, strerror(-err));
    else
        log_error("iraid: %s %s lba %" PRIu64 ": status 0x%x (%s): %s", m->url, what, lba,
                  status, m->iscsi ? iscsi_get_error(m->iscsi) : "no session", strerror(-err));
    return err;
}

/* ---- member states ---- */

int member_live(const struct iraid_member *m)
{
    return m->state == IRAID_MEMBER_UP || m->state == IRAID_MEMBER_REBUILDING;
}

int member_ok(const struct iraid_member *m, uint64_t stripe)
{
    return m->state == IRAID_MEMBER_UP ||
           (m->state == IRAID_MEMBER_REBUILDING && stripe < m->rebuild_next);
}

const char *iraid_member_state_name(enum iraid_member_state state)
{
    switch (state) {
    case IRAID_MEMBER_UP: return "up";
    case IRAID_MEMBER_DOWN: return "down";
    case IRAID_MEMBER_RECONNECTING: return "reconnecting";
    case IRAID_MEMBER_REBUILDING: return "rebuilding";
    }
    return "?";
}

static void member_set_state(struct iraid_member *m, enum iraid_member_state state)
{
    if (m->state != state)
        log_info("iraid: member %u (%s): %s -> %s", m->idx, m->url,
                 iraid_member_state_name(m->state), iraid_member_state_name(state));
    m->state = state;
}

/* ---- event loop integration ---- */

static void member_io(struct evloop *loop, int fd, int events, void *user);

static int iscsi_to_ev(int ev)
{
    return (ev & POLLIN ? EV_READ : 0) | (ev & POLLOUT ? EV_WRITE : 0);
}

static void member_watch(struct iraid_member *m, int force)
{
    struct evloop *loop = m->vol->loop;
    int on = m->iscsi && !m->teardown && m->state != IRAID_MEMBER_DOWN;
    int fd = on ? iscsi_get_fd(m->iscsi) : -1;
    int mask = on ? iscsi_to_ev(iscsi_which_events(m->iscsi)) : 0;

    if (!force && mask && fd == m->fd && fd >= 0 && evloop_mod_fd(loop, fd, mask) == 0)
        return;
    if (m->fd >= 0)
        evloop_del_fd(loop, m->fd);
    m->fd = -1;
    /* Nothing wanted (or no socket): stay off the loop, because epoll
     * reports hang-ups whatever the mask and would spin; the tick looks
     * again. */
    if (fd < 0 || mask == 0)
        return;
    if (evloop_set_fd(loop, fd, mask, member_io, m) < 0) {
        log_warn("iraid: %s: cannot watch fd %d; retrying on the next tick", m->url, fd);
        return;
    }
    m->fd = fd;
}

static uint32_t next_backoff(uint32_t ms)
{
    if (ms < IRAID_BACKOFF_MIN_MS)
        return IRAID_BACKOFF_MIN_MS;
    return ms * 2 > IRAID_BACKOFF_MAX_MS ? IRAID_BACKOFF_MAX_MS : ms * 2;
}

/* The member failed (session broke, a command timed out, a login failed,
 * or it is being replaced).  It leaves the live states at once, so nothing
 * new is sent to it and the planners stop counting on it; its session is
 * dropped by member_teardown() outside libiscsi's callbacks.  Safe to call
 * from anywhere, repeatedly. */
void member_fail(struct iraid_member *m, const char *why)
{
    struct iraid_volume *vol = m->vol;
    int was_live = member_live(m);

    if (m->state == IRAID_MEMBER_DOWN)
        return;
    if (was_live)
        log_error("iraid: member %u (%s) failed: %s", m->idx, m->url, why);
    else
        log_warn("iraid: member %u (%s): reconnect failed: %s", m->idx, m->url, why);
    member_set_state(m, IRAID_MEMBER_DOWN);
    m->teardown = m->iscsi != NULL;
    m->backoff_ms = was_live ? IRAID_BACKOFF_MIN_MS : next_backoff(m->backoff_ms);
    m->retry_at = evloop_now_ms() + m->backoff_ms;
    m->rebuild_next = 0;
    if (vol->meta)
        meta_member_stale(vol, m->idx, 1);
}

/* Drops a failed member's session: commands still queued complete with
 * SCSI_STATUS_CANCELLED (an I/O error for them), then the context goes.
 * Never call it from inside libiscsi. */
static void member_teardown(struct iraid_member *m)
{
    struct iscsi_context *iscsi = m->iscsi;

    if (!m->teardown)
        return;
    m->teardown = 0;
    if (m->fd >= 0)
        evloop_del_fd(m->vol->loop, m->fd);
    m->fd = -1;
    if (!iscsi)
        return;
    iscsi_scsi_cancel_all_tasks(iscsi);
    m->iscsi = NULL;
    iscsi_destroy_context(iscsi);
}

static void member_service(struct iraid_member *m, int revents)
{
    if (m->iscsi && !m->teardown && m->state != IRAID_MEMBER_DOWN &&
        iscsi_service(m->iscsi, revents) < 0)
        member_fail(m, iscsi_get_error(m->iscsi));
    if (m->teardown)
        member_teardown(m);
    else
        member_watch(m, revents == 0);
}

static void member_io(struct evloop *loop, int fd, int events, void *user)
{
    int revents = (events & EV_READ ? POLLIN : 0) | (events & EV_WRITE ? POLLOUT : 0) |
                  (events & EV_ERROR ? POLLERR | POLLHUP : 0);

    member_service(user, revents);
}

/* ---- reconnect ---- */

static struct iscsi_context *member_context(struct iraid_member *m, struct iscsi_url **url)
{
    struct iraid_volume *vol = m->vol;
    struct iscsi_context *iscsi = iscsi_create_context(vol->iqn);

    if (!iscsi) {
        log_error("iraid: %s: cannot create an iSCSI context", m->url);
        return NULL;
    }
    if (!(*url = iscsi_parse_full_url(iscsi, m->url))) {
        log_error("iraid: bad member URL %s: %s", m->url, iscsi_get_error(iscsi));
        iscsi_destroy_context(iscsi);
        return NULL;
    }
    m->lun = (*url)->lun;
    iscsi_set_targetname(iscsi, (*url)->target);
    iscsi_set_session_type(iscsi, ISCSI_SESSION_NORMAL);
    iscsi_set_header_digest(iscsi, ISCSI_HEADER_DIGEST_NONE);
    iscsi_set_noautoreconnect(iscsi, 1);
    /* libiscsi counts whole seconds; round up so a short timeout stays > 0. */
    iscsi_set_timeout(iscsi, (vol->timeout_ms + 999) / 1000);
    return iscsi;
}

static void member_returned(struct iraid_member *m)
{
    struct iraid_volume *vol = m->vol;

    m->backoff_ms = 0;
    m->epoch++;
    if (!vol->meta) {
        member_set_state(m, IRAID_MEMBER_UP);
        return;
    }
    m->rebuild_next = 0;
    member_set_state(m, IRAID_MEMBER_REBUILDING);
    vol->rebuild_retry_at = evloop_now_ms();
}

/* REBUILDING -> UP: every stripe rebuilt and flushed. */
void member_rebuilt(struct iraid_member *m)
{
    member_set_state(m, IRAID_MEMBER_UP);
    m->rebuild_next = 0;
    meta_member_stale(m->vol, m->idx, 0);
}

static void reconnect_capacity_done(struct iscsi_context *iscsi, int status, void *data,
                                    void *priv)
{
    struct iraid_member *m = priv;
    struct scsi_task *task = data;
    struct scsi_readcapacity16 *rc16 = NULL;
    struct iraid_volume *vol = m->vol;
    uint64_t need = vol->data_off + vol->layout.stripes * vol->layout.chunk;

    if (status == SCSI_STATUS_GOOD)
        rc16 = scsi_datain_unmarshall(task);
    if (!rc16)
        member_fail(m, "READ CAPACITY failed after login");
    else if (rc16->block_length != vol->block_size ||
             (rc16->returned_lba + 1) * rc16->block_length < need)
        member_fail(m, "returned with another block size or too small");
    else if (m->state == IRAID_MEMBER_RECONNECTING) {
        /* a member down since iraid_open() never had its geometry set */
        m->nblocks = rc16->returned_lba + 1;
        m->block_size = rc16->block_length;
        member_returned(m);
    }
    scsi_free_scsi_task(task);
}

static void reconnect_done(struct iscsi_context *iscsi, int status, void *data, void *priv)
{
    struct iraid_member *m = priv;

    if (m->state != IRAID_MEMBER_RECONNECTING)
        return;
    if (status != SCSI_STATUS_GOOD) {
        member_fail(m, iscsi_get_error(iscsi));
        return;
    }
    if (!iscsi_readcapacity16_task(iscsi, m->lun, reconnect_capacity_done, m))
        member_fail(m, "cannot queue READ CAPACITY");
}

/* DOWN -> RECONNECTING: an asynchronous login on a fresh context; the
 * tick gives up on it at the deadline. */
static void member_reconnect(struct iraid_member *m)
{
    struct iscsi_url *url;

    if (!(m->iscsi = member_context(m, &url))) {
        m->retry_at = evloop_now_ms() + (m->backoff_ms = next_backoff(m->backoff_ms));
        return;
    }
    member_set_state(m, IRAID_MEMBER_RECONNECTING);
    m->deadline = evloop_now_ms() + (uint64_t)m->vol->timeout_ms;
    if (iscsi_full_connect_async(m->iscsi, url->portal, url->lun, reconnect_done, m) != 0)
        member_fail(m, iscsi_get_error(m->iscsi));
    iscsi_destroy_url(url);
    if (m->teardown)
        member_teardown(m);
    else
        member_watch(m, 1);
}

static void member_tick(struct iraid_member *m)
{
    uint64_t now = evloop_now_ms();

    member_service(m, 0);
    if (m->state == IRAID_MEMBER_RECONNECTING && now >= m->deadline) {
        member_fail(m, "login timed out");
        member_teardown(m);
    }
    if (m->state == IRAID_MEMBER_DOWN && !m->teardown && now >= m->retry_at)
        member_reconnect(m);
}

static void volume_tick(struct evloop *loop, uint64_t timer_id, void *user)
{
    struct iraid_volume *vol = user;

    for (uint32_t i = 0; i < vol->nmembers; i++)
        member_tick(&vol->members[i]);
    if (vol->meta) {
        meta_tick(vol);
        rebuild_kick(vol);
    }
    vol->timer = evloop_add_timer(loop, IRAID_TICK_MS, volume_tick, vol);
    if (!vol->timer)
        log_error("iraid: cannot re-arm the service timer: command timeouts stop firing");
}

/* ---- requests and parts ---- */

struct iraid_req *req_new(struct iraid_volume *vol, iraid_cb cb, void *user)
{
    struct iraid_req *req = calloc(1, sizeof(*req));

    if (!req)
        return NULL;
    req->vol = vol;
    req->cb = cb;
    req->user = user;
    return req;
}

void req_free(struct iraid_req *req)
{
    for (uint32_t i = 0; i < req->nparts; i++)
        free(req->parts[i].iov);
    free(req->parts);
    free(req);
}

static void req_reset_parts(struct iraid_req *req)
{
    for (uint32_t i = 0; i < req->nparts; i++)
        free(req->parts[i].iov);
    req->nparts = 0;
}

struct iraid_part *part_new(struct iraid_req *req, uint32_t member, enum part_op op,
                            uint64_t member_off)
{
    struct iraid_part *p;

    if (req->nparts == req->parts_cap) {
        uint32_t cap = req->parts_cap ? 2 * req->parts_cap : 8;
        p = realloc(req->parts, cap * sizeof(*p));
        if (!p)
            return NULL;
        req->parts = p;
        req->parts_cap = cap;
    }
    p = &req->parts[req->nparts++];
    *p = (struct iraid_part){ .req = req, .m = &req->vol->members[member], .op = op,
                              .member_off = member_off };
    return p;
}

/* The part of this member that ends where member_off starts and has room
 * for len more bytes, or a new one: contiguous runs become one command. */
struct iraid_part *part_for(struct iraid_req *req, uint32_t member, enum part_op op,
                            uint64_t member_off, uint64_t len)
{
    for (uint32_t i = req->nparts; i-- > 0;) {
        struct iraid_part *p = &req->parts[i];
        if (p->m->idx == member && p->op == op && p->member_off + p->len == member_off &&
            p->len + len <= IRAID_MAX_PART)
            return p;
    }
    return part_new(req, member, op, member_off);
}

int part_add_iov(struct iraid_part *p, void *base, size_t len)
{
    if (p->niov && (char *)p->iov[p->niov - 1].iov_base + p->iov[p->niov - 1].iov_len == base) {
        p->iov[p->niov - 1].iov_len += len;
        return 0;
    }
    if (p->niov == p->iov_cap) {
        int cap = p->iov_cap ? 2 * p->iov_cap : 4;
        struct scsi_iovec *iov = realloc(p->iov, (size_t)cap * sizeof(*iov));
        if (!iov)
            return -ENOMEM;
        p->iov = iov;
        p->iov_cap = cap;
    }
    p->iov[p->niov++] = (struct scsi_iovec){ .iov_base = base, .iov_len = len };
    return 0;
}

void cursor_skip(struct iov_cursor *cur, uint64_t len)
{
    while (len > 0) {
        size_t n = cur->iov[cur->i].iov_len - cur->off;
        if (n > len)
            n = len;
        len -= n;
        cur->off += n;
        if (cur->off == cur->iov[cur->i].iov_len) {
            cur->i++;
            cur->off = 0;
        }
    }
}

/* Copies len bytes between the caller's buffers (from the cursor on) and
 * buf, in the direction to_buf says, and advances the cursor. */
void cursor_copy(struct iov_cursor *cur, uint8_t *buf, uint64_t len, int to_buf)
{
    while (len > 0) {
        const struct iovec *v = &cur->iov[cur->i];
        size_t n = v->iov_len - cur->off;
        uint8_t *p = (uint8_t *)v->iov_base + cur->off;

        if (n > len)
            n = len;
        if (to_buf)
            memcpy(buf, p, n);
        else
            memcpy(p, buf, n);
        buf += n;
        len -= n;
        cursor_skip(cur, n);
    }
}

/* Moves len bytes of the caller's buffers, from the cursor on, into p. */
int part_take(struct iraid_part *p, struct iov_cursor *cur, uint64_t len)
{
    p->len += len;
    while (len > 0) {
        const struct iovec *v = &cur->iov[cur->i];
        size_t n = v->iov_len - cur->off;
        int rc;

        if (n > len)
            n = len;
        if (n > 0 && (rc = part_add_iov(p, (char *)v->iov_base + cur->off, n)) < 0)
            return rc;
        len -= n;
        cursor_skip(cur, n);
    }
    return 0;
}

static void req_link(struct iraid_req *req)
{
    struct iraid_volume *vol = req->vol;

    req->next = vol->inflight;
    if (vol->inflight)
        vol->inflight->prev = req;
    vol->inflight = req;
}

static void req_finish(struct iraid_req *req)
{
    struct iraid_volume *vol = req->vol;

    if (req->prev)
        req->prev->next = req->next;
    else
        vol->inflight = req->next;
    if (req->next)
        req->next->prev = req->prev;
    if (!req->silent)
        req->cb(vol, req->status, req->user);
    req_free(req);
}

static int req_submit(struct iraid_req *req);

/* Every part of the current round is done: plan the next round, or end. */
static void req_round_done(struct iraid_req *req)
{
    if (req->status == 0 && req->next_phase) {
        void (*phase)(struct iraid_req *) = req->next_phase;
        req->next_phase = NULL;
        req_reset_parts(req);
        phase(req);
        if (req->status == 0 && (req->status = req_submit(req)) == 0)
            return;
    }
    req_finish(req);
}

#define PART_UA_RETRIES 3

static struct scsi_task *part_queue(struct iraid_part *p);

/* A UNIT ATTENTION (the target was reset or restarted, its capacity or
 * mode changed...) reports an event to this initiator instead of running
 * the command: send the command again, a few times at most.  Returns 1
 * when it was sent again (its callback comes later). */
static int part_retry_unit_attention(struct iraid_part *p, int status)
{
    struct scsi_task *old = p->task;

    if (status != SCSI_STATUS_CHECK_CONDITION || !old ||
        old->sense.key != SCSI_SENSE_UNIT_ATTENTION || p->ua_retries >= PART_UA_RETRIES ||
        p->req->vol->closing || !p->m->iscsi)
        return 0;
    log_info("iraid: %s: unit attention (ascq 0x%04x), sending the command again", p->m->url,
             old->sense.ascq);
    p->ua_retries++;
    p->task = part_queue(p);
    if (!p->task) {
        p->task = old;   /* not queued: the caller fails the part with this status */
        return 0;
    }
    scsi_free_scsi_task(old);
    return 1;
}

static void part_done(struct iscsi_context *iscsi, int status, void *command_data, void *priv)
{
    struct iraid_part *p = priv;
    struct iraid_req *req = p->req;
    static const char *const what[] = { "read", "write", "flush" };
    int rc;

    if (part_retry_unit_attention(p, status))
        return;
    rc = member_errno(p->m, what[p->op], status, p->task, (p->member_off) / p->m->block_size);

    scsi_free_scsi_task(p->task);
    p->task = NULL;
    /* An unanswered command means the target stopped answering: the
     * member is failed like a broken session (its session is dropped after
     * libiscsi returns). */
    if (rc == -ETIMEDOUT && !req->vol->closing)
        member_fail(p->m, "command timed out");
    /* A redundant write that a live member refuses leaves that member
     * behind the others: fail it (it is rebuilt when it returns) rather
     * than leave a stripe that disagrees.  A refused flush likewise: what
     * it held may not be durable there, so the others must stand for it
     * (a target dying under a flush answers with an error before its
     * session is seen lost). */
    if (rc < 0 && rc != -ECANCELED && req->tolerate_down &&
        (p->op == PART_WRITE || p->op == PART_FLUSH) && !req->vol->closing && member_live(p->m))
        member_fail(p->m, p->op == PART_WRITE ? "write error" : "flush error");
    if (rc < 0 && rc != -ECANCELED && p->op == PART_READ && req->read_err_member &&
        !req->vol->closing && member_live(p->m))
        *req->read_err_member = (int)p->m->idx;
    if (rc < 0 && req->tolerate_down && !req->vol->closing && !member_live(p->m)) {
        req->lost++;
        rc = 0;
    }
    if (rc < 0 && req->status == 0)
        req->status = rc;
    if (--req->pending == 0)
        req_round_done(req);
}

static struct scsi_task *part_queue(struct iraid_part *p)
{
    struct iraid_member *m = p->m;
    uint64_t lba = p->member_off / m->block_size;
    uint32_t len = (uint32_t)p->len;

    switch (p->op) {
    case PART_READ:
        return iscsi_read16_iov_task(m->iscsi, m->lun, lba, len, (int)m->block_size, 0, 0, 0, 0,
                                     0, part_done, p, p->iov, p->niov);
    case PART_WRITE:
        return iscsi_write16_iov_task(m->iscsi, m->lun, lba, NULL, len, (int)m->block_size, 0, 0,
                                      p->fua, 0, 0, part_done, p, p->iov, p->niov);
    default:
        return iscsi_synchronizecache16_task(m->iscsi, m->lun, 0, 0, 0, 0, part_done, p);
    }
}

/* Queues every planned part and returns 0; the parts complete later.  If
 * libiscsi refuses one, the parts already queued are cancelled (their
 * callbacks run inside this call, libiscsi cancels locally and at once),
 * so on a negative return nothing of req is in flight and the caller ends
 * it.  The extra pending count keeps a cancelled round from completing
 * before this function is done with req.  A part for a member that is not
 * live fails the round with -EIO, or is skipped under tolerate_down. */
static int req_submit(struct iraid_req *req)
{
    struct iraid_volume *vol = req->vol;
    uint32_t queued;
    int rc = 0;

    req->pending = req->nparts + 1;
    for (queued = 0; queued < req->nparts; queued++) {
        struct iraid_part *p = &req->parts[queued];
        if (!member_live(p->m) || p->m->teardown) {
            if (req->tolerate_down) {
                req->lost++;
                req->pending--;
                continue;
            }
            log_error("iraid: member %u (%s) is %s", p->m->idx, p->m->url,
                      iraid_member_state_name(p->m->state));
            rc = -EIO;
            break;
        }
        if (!(p->task = part_queue(p))) {
            log_error("iraid: %s: cannot queue a command: %s", p->m->url,
                      iscsi_get_error(p->m->iscsi));
            rc = -ENOMEM;
            break;
        }
    }
    if (rc < 0) {
        req->pending -= req->nparts - queued;
        for (uint32_t i = 0; i < queued; i++)
            if (req->parts[i].task)
                iscsi_scsi_cancel_task(req->parts[i].m->iscsi, req->parts[i].task);
        req->pending--;
        return rc;
    }
    for (uint32_t i = 0; i < vol->nmembers; i++)
        if (!vol->members[i].teardown)
            member_watch(&vol->members[i], 0);
    /* Only an empty round gets here with nothing pending. */
    if (--req->pending == 0)
        req_round_done(req);
    return 0;
}

void req_launch(struct iraid_req *req)
{
    req_link(req);
    if ((req->status = req_submit(req)) < 0)
        req_finish(req);
}

/* ---- RAID-0 (and the redundant levels' reads while all members are up) ---- */

/* Striped placement: each chunk from the member iraid_layout_map names. */
static int plan_striped(struct iraid_req *req, uint64_t off, uint64_t len, struct iov_cursor *cur,
                        enum part_op op)
{
    const struct iraid_volume *vol = req->vol;

    while (len > 0) {
        struct iraid_loc loc;
        struct iraid_part *p;
        uint64_t n;
        int rc;

        iraid_layout_map(&vol->layout, off, &loc);
        n = loc.run < len ? loc.run : len;
        p = part_for(req, loc.member, op, vol->data_off + loc.member_off, n);
        if (!p)
            return -ENOMEM;
        if ((rc = part_take(p, cur, n)) < 0)
            return rc;
        off += n;
        len -= n;
    }
    return 0;
}

int iraid_striped_read(struct iraid_req *req, uint64_t off, uint64_t len, struct iov_cursor *cur)
{
    return plan_striped(req, off, len, cur, PART_READ);
}

static int raid0_write(struct iraid_req *req, uint64_t off, uint64_t len, struct iov_cursor *cur)
{
    return plan_striped(req, off, len, cur, PART_WRITE);
}

static const struct iraid_level_ops raid0_ops = { "raid0", iraid_striped_read, raid0_write,
                                                  NULL, NULL };

static const struct iraid_level_ops *ops_for_level(int level)
{
    switch (level) {
    case 0: return &raid0_ops;
    case 1: return &iraid_raid1_ops;
    case 5: return &iraid_raid5_ops;
    default: return NULL;
    }
}

/* Members a volume can lose and still hold every byte. */
uint32_t vol_redundancy(const struct iraid_volume *vol)
{
    switch (vol->layout.level) {
    case 1: return vol->nmembers - 1;
    case 5: return 1;
    default: return 0;
    }
}

static uint32_t members_not_live(const struct iraid_volume *vol)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < vol->nmembers; i++)
        n += !member_live(&vol->members[i]);
    return n;
}

/* Members that cannot stand in for a lost one: DOWN, RECONNECTING, and
 * REBUILDING (current only below its rebuild_next). */
static uint32_t members_not_up(const struct iraid_volume *vol)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < vol->nmembers; i++)
        n += vol->members[i].state != IRAID_MEMBER_UP;
    return n;
}

static int all_members_up(const struct iraid_volume *vol)
{
    for (uint32_t i = 0; i < vol->nmembers; i++)
        if (vol->members[i].state != IRAID_MEMBER_UP)
            return 0;
    return 1;
}

/* ---- user requests of the redundant levels ---- */

static void io_complete(struct iraid_io *io)
{
    io->cb(io->vol, io->status, io->user);
    free(io->iov);
    free(io);
}

static void io_undefer(struct iraid_io *io)
{
    struct iraid_io **pp = &io->vol->deferred;

    while (*pp != io)
        pp = &(*pp)->dnext;
    *pp = io->dnext;
}

static void io_deferred(struct evloop *loop, uint64_t timer_id, void *user)
{
    io_undefer(user);
    io_complete(user);
}

/* One piece of io (a stripe op, or the direct read) ended.  The caller's
 * callback never runs inside the public call that submitted io. */
void io_piece_done(struct iraid_io *io, int status)
{
    if (status < 0 && io->status == 0)
        io->status = status;
    if (--io->pending > 0)
        return;
    if (io->submitting && !io->vol->closing &&
        (io->timer = evloop_add_timer(io->vol->loop, 0, io_deferred, io))) {
        io->dnext = io->vol->deferred;
        io->vol->deferred = io;
        return;
    }
    io_complete(io);
}

/* The direct read (every member was UP) failed: if a member went down
 * meanwhile, or a live one failed a read, serve it again stripe by stripe,
 * reconstructing (a stripe op that meets the read error again reads
 * around that member). */
static void io_direct_done(struct iraid_volume *vol, int status, void *user)
{
    struct iraid_io *io = user;

    if (status < 0 && !vol->closing && (!all_members_up(vol) || io->read_err >= 0) &&
        members_not_live(vol) <= vol_redundancy(vol)) {
        log_warn("iraid: read %" PRIu64 "+%" PRIu64 " failed (%s); retrying degraded", io->off,
                 io->len, strerror(-status));
        /* The direct piece stays counted while the stripe ops are
         * submitted (none can end io meanwhile); its end then leaves io to
         * them.  (It was counted twice here: a retried read never ended.) */
        if (io_submit_stripes(io) == 0) {
            io_piece_done(io, 0);
            return;
        }
    }
    io_piece_done(io, status);
}

static int io_direct_read(struct iraid_io *io)
{
    struct iov_cursor cur = { .iov = io->iov, .iovcnt = io->iovcnt };
    struct iraid_req *req = req_new(io->vol, io_direct_done, io);
    int rc;

    if (!req)
        return -ENOMEM;
    io->read_err = -1;
    req->read_err_member = &io->read_err;
    if ((rc = iraid_striped_read(req, io->off, io->len, &cur)) < 0) {
        req_free(req);
        return rc;
    }
    io->pending = 1;
    req_launch(req);
    return 0;
}

static int redundant_rw(struct iraid_volume *vol, int write, uint64_t offset,
                        const struct iovec *iov, int iovcnt, uint64_t len, iraid_cb cb,
                        void *user)
{
    struct iraid_io *io;
    int rc;

    if (members_not_live(vol) > vol_redundancy(vol)) {
        log_error("iraid: %u members missing: the volume cannot serve", members_not_live(vol));
        return -EIO;
    }
    if (!(io = calloc(1, sizeof(*io))))
        return -ENOMEM;
    *io = (struct iraid_io){ .vol = vol, .cb = cb, .user = user, .write = write, .off = offset,
                             .len = len, .iovcnt = iovcnt, .submitting = 1 };
    if (!(io->iov = malloc((size_t)iovcnt * sizeof(*iov)))) {
        rc = -ENOMEM;
        goto free_io;
    }
    memcpy(io->iov, iov, (size_t)iovcnt * sizeof(*iov));
    rc = !write && all_members_up(vol) ? io_direct_read(io) : io_submit_stripes(io);
    if (rc < 0)
        goto free_iov;
    io->submitting = 0;
    if (io->pending == 0)
        io_complete(io);
    return 0;

free_iov:
    free(io->iov);
free_io:
    free(io);
    return rc;
}

/* ---- public I/O ---- */

/* First submission from a public entry point: a refused request ends here
 * without calling the user back. */
static int req_start(struct iraid_req *req)
{
    int rc;

    req_link(req);
    if ((rc = req_submit(req)) < 0) {
        req->silent = 1;
        req_finish(req);
    }
    return rc;
}

static int volume_rw(struct iraid_volume *vol, int write, uint64_t offset,
                     const struct iovec *iov, int iovcnt, iraid_cb cb, void *user)
{
    struct iov_cursor cur = { .iov = iov, .iovcnt = iovcnt };
    struct iraid_req *req;
    uint64_t len = 0;
    int rc;

    if (!vol || !cb || iovcnt < 0 || (iovcnt > 0 && !iov))
        return -EINVAL;
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].iov_len;
    if (len == 0 || offset % vol->block_size || len % vol->block_size ||
        offset > iraid_size(vol) || len > iraid_size(vol) - offset)
        return -EINVAL;
    if (vol->closing)
        return -ECANCELED;
    if (!vol->ops->plan_write)
        return redundant_rw(vol, write, offset, iov, iovcnt, len, cb, user);
    if (!(req = req_new(vol, cb, user)))
        return -ENOMEM;
    rc = write ? vol->ops->plan_write(req, offset, len, &cur)
               : vol->ops->plan_read(req, offset, len, &cur);
    if (rc < 0) {
        req_free(req);
        return rc;
    }
    return req_start(req);
}

int iraid_readv(struct iraid_volume *vol, uint64_t offset, const struct iovec *iov, int iovcnt,
                iraid_cb cb, void *user)
{
    return volume_rw(vol, 0, offset, iov, iovcnt, cb, user);
}

int iraid_writev(struct iraid_volume *vol, uint64_t offset, const struct iovec *iov, int iovcnt,
                 iraid_cb cb, void *user)
{
    return volume_rw(vol, 1, offset, iov, iovcnt, cb, user);
}

struct flush_wait {
    iraid_cb cb;
    void *user;
};

/* A member lost during the flush may not have made its earlier writes
 * durable; the flush may report them durable only once the superblock
 * that marks that member stale is on the others, or a crash now would
 * let a restart trust it (a degraded write waits the same way). */
static void flush_parts_done(struct iraid_volume *vol, int status, void *user)
{
    struct flush_wait fw = *(struct flush_wait *)user;
    int rc;

    free(user);
    /* members lost during the flush: it holds only if the rest can stand for them */
    if (status == 0 && members_not_live(vol) > vol_redundancy(vol))
        status = -EIO;
    if (status == 0 && !vol->closing) {
        if ((rc = meta_sb_wait(vol, fw.cb, fw.user)) == 0)
            return;
        if (rc < 0)
            status = rc;
    }
    fw.cb(vol, status, fw.user);
}

/* RAID-0 needs every member; the redundant levels flush the live ones. */
int iraid_flush(struct iraid_volume *vol, iraid_cb cb, void *user)
{
    struct flush_wait *fw = NULL;
    struct iraid_req *req;
    int rc;

    if (!vol || !cb)
        return -EINVAL;
    if (vol->meta && members_not_live(vol) > vol_redundancy(vol))
        return -EIO;
    if (vol->meta) {
        if (!(fw = malloc(sizeof(*fw))))
            return -ENOMEM;
        *fw = (struct flush_wait){ .cb = cb, .user = user };
    }
    if (!(req = fw ? req_new(vol, flush_parts_done, fw) : req_new(vol, cb, user))) {
        rc = -ENOMEM;
        goto free_wait;
    }
    req->tolerate_down = vol->meta != NULL;
    for (uint32_t m = 0; m < vol->nmembers; m++)
        if (!part_new(req, m, PART_FLUSH, 0)) {
            req_free(req);
            rc = -ENOMEM;
            goto free_wait;
        }
    /* A failed submission never calls back, so fw is still ours then. */
    if ((rc = req_start(req)) < 0)
        goto free_wait;
    return 0;
free_wait:
    free(fw);
    return rc;
}

int iraid_mark_clean(struct iraid_volume *vol, iraid_cb cb, void *user)
{
    if (!vol || !cb)
        return -EINVAL;
    return vol->meta ? meta_mark_clean(vol, cb, user) : iraid_flush(vol, cb, user);
}

uint64_t iraid_size(const struct iraid_volume *vol)
{
    return iraid_layout_capacity(&vol->layout);
}

uint32_t iraid_block_size(const struct iraid_volume *vol)
{
    return vol->block_size;
}

/* ---- synchronous variants ---- */

struct sync_wait {
    int done;
    int status;
    uint64_t mismatches, skipped;
};

static void sync_done(struct iraid_volume *vol, int status, void *user)
{
    struct sync_wait *w = user;

    w->done = 1;
    w->status = status;
}

static void cancel_all(struct iraid_volume *vol)
{
    for (uint32_t i = 0; i < vol->nmembers; i++)
        if (vol->members[i].iscsi)
            iscsi_scsi_cancel_all_tasks(vol->members[i].iscsi);
}

static int sync_wait(struct iraid_volume *vol, int rc, struct sync_wait *w)
{
    if (rc < 0)
        return rc;
    while (!w->done) {
        rc = evloop_run_once(vol->loop, -1);
        if (rc < 0 && rc != -EINTR) {
            /* The loop is broken: nothing would ever complete w. */
            log_error("iraid: event loop failed (%s): cancelling all commands", strerror(-rc));
            cancel_all(vol);
        }
    }
    return w->status;
}

int iraid_read_sync(struct iraid_volume *vol, uint64_t offset, void *buf, uint64_t len)
{
    struct iovec iov = { .iov_base = buf, .iov_len = len };
    struct sync_wait w = { 0 };

    return sync_wait(vol, iraid_readv(vol, offset, &iov, 1, sync_done, &w), &w);
}

int iraid_write_sync(struct iraid_volume *vol, uint64_t offset, const void *buf, uint64_t len)
{
    struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
    struct sync_wait w = { 0 };

    return sync_wait(vol, iraid_writev(vol, offset, &iov, 1, sync_done, &w), &w);
}

int iraid_flush_sync(struct iraid_volume *vol)
{
    struct sync_wait w = { 0 };

    return sync_wait(vol, iraid_flush(vol, sync_done, &w), &w);
}

int iraid_mark_clean_sync(struct iraid_volume *vol)
{
    struct sync_wait w = { 0 };

    return sync_wait(vol, iraid_mark_clean(vol, sync_done, &w), &w);
}

/* ---- health, scrub, replacement ---- */

int iraid_get_status(const struct iraid_volume *vol, struct iraid_status *out)
{
    if (!vol || !out)
        return -EINVAL;
    memset(out, 0, sizeof(*out));
    out->level = vol->layout.level;
    out->nmembers = vol->nmembers;
    out->size = iraid_size(vol);
    out->chunk = vol->layout.chunk;
    out->dirty_regions = vol->meta ? meta_dirty_regions(vol) : 0;
    out->scrubbing = vol->scrub.running;
    out->scrub_done = vol->scrub.next;
    out->scrub_total = vol->scrub.end;
    out->read_repairs = vol->read_repairs;
    for (uint32_t i = 0; i < vol->nmembers; i++) {
        const struct iraid_member *m = &vol->members[i];
        struct iraid_member_status *ms = &out->member[i];

        snprintf(ms->url, sizeof(ms->url), "%s", m->url);
        ms->state = m->state;
        ms->total = vol->layout.stripes;
        ms->rebuilt = m->state == IRAID_MEMBER_UP ? ms->total
                      : m->state == IRAID_MEMBER_REBUILDING ? m->rebuild_next : 0;
        out->missing += m->state != IRAID_MEMBER_UP;
    }
    return 0;
}

static void scrub_sync_done(struct iraid_volume *vol, int status, uint64_t mismatches,
                            uint64_t skipped, void *user)
{
    struct sync_wait *w = user;

    w->mismatches = mismatches;
    w->skipped = skipped;
    sync_done(vol, status, user);
}

int iraid_scrub(struct iraid_volume *vol, iraid_scrub_cb cb, void *user)
{
    if (!vol || !cb)
        return -EINVAL;
    if (!vol->meta)
        return -EOPNOTSUPP;
    if (vol->scrub.running)
        return -EBUSY;
    vol->scrub = (struct iraid_sweep){ .kind = SOP_SCRUB, .end = vol->layout.stripes, .cb = cb,
                                       .user = user };
    sweep_start(vol, &vol->scrub);
    return 0;
}

int iraid_scrub_sync(struct iraid_volume *vol, uint64_t *mismatches, uint64_t *skipped)
{
    struct sync_wait w = { 0 };
    int rc = sync_wait(vol, iraid_scrub(vol, scrub_sync_done, &w), &w);

    if (mismatches)
        *mismatches = w.mismatches;
    if (skipped)
        *skipped = w.skipped;
    return rc;
}

int iraid_replace_member(struct iraid_volume *vol, uint32_t idx, const char *url)
{
    struct iraid_member *m;
    char *copy;

    if (!vol || !url || idx >= vol->nmembers)
        return -EINVAL;
    if (!vol->meta)
        return -EOPNOTSUPP;
    m = &vol->members[idx];
    /* A REBUILDING member is live but not yet redundant: its stripes above
     * rebuild_next exist only as parity/mirror on the others.  Taking one
     * more member out then leaves stripes no one can rebuild (each rebuild
     * would need the other's missing data and retry forever). */
    if (members_not_up(vol) - (m->state != IRAID_MEMBER_UP) >= vol_redundancy(vol))
        return -EBUSY;
    if (!(copy = strdup(url)))
        return -ENOMEM;
    member_fail(m, "replaced");
    member_teardown(m);
    log_info("iraid: member %u: %s replaced by %s", idx, m->url, copy);
    free(m->url);
    m->url = copy;
    m->retry_at = evloop_now_ms();
    return 0;
}

/* ---- open / close ---- */

static int member_capacity(struct iraid_member *m)
{
    struct scsi_task *task = iscsi_readcapacity16_sync(m->iscsi, m->lun);
    struct scsi_readcapacity16 *rc16;
    int rc;

    if (!task)
        return member_errno(m, "read capacity", SCSI_STATUS_ERROR, NULL, 0);
    if (task->status != SCSI_STATUS_GOOD) {
        rc = member_errno(m, "read capacity", task->status, task, 0);
        goto free_task;
    }
    rc16 = scsi_datain_unmarshall(task);
    if (!rc16 || rc16->block_length == 0) {
        log_error("iraid: %s: unreadable READ CAPACITY(16) data", m->url);
        rc = -EIO;
        goto free_task;
    }
    m->nblocks = rc16->returned_lba + 1;
    m->block_size = rc16->block_length;
    rc = 0;
free_task:
    scsi_free_scsi_task(task);
    return rc;
}

/* Synchronous login bounded by the timeout (used only by iraid_open). */
static int member_login(struct iraid_member *m)
{
    struct iscsi_url *url;
    int rc;

    if (!(m->iscsi = member_context(m, &url)))
        return -EINVAL;
    if (iscsi_full_connect_sync(m->iscsi, url->portal, url->lun) != 0) {
        rc = member_errno(m, "login", SCSI_STATUS_ERROR, NULL, 0);
        goto destroy_url;
    }
    iscsi_destroy_url(url);
    if ((rc = member_capacity(m)) < 0)
        goto logout;
    m->state = IRAID_MEMBER_UP;
    return 0;

logout:
    iscsi_logout_sync(m->iscsi);
    goto destroy_context;
destroy_url:
    iscsi_destroy_url(url);
destroy_context:
    iscsi_destroy_context(m->iscsi);
    m->iscsi = NULL;
    return rc;
}

int iraid_probe_member(struct iraid_volume *vol, const char *url, struct iraid_probe *out)
{
    struct iraid_member probe = { .vol = vol, .idx = UINT32_MAX, .url = (char *)url, .fd = -1 };
    int rc;

    if (!vol || !url || !out)
        return -EINVAL;
    if ((rc = member_login(&probe)) < 0)
        return rc;
    *out = (struct iraid_probe){ .bytes = probe.nblocks * probe.block_size,
                                 .block_size = probe.block_size,
                                 .need_bytes = vol->data_off +
                                               vol->layout.stripes * vol->layout.chunk,
                                 .need_block_size = vol->block_size };
    out->fits = out->block_size == out->need_block_size && out->bytes >= out->need_bytes;
    if (iscsi_logout_sync(probe.iscsi) != 0)
        log_warn("iraid: %s: logout: %s", url, iscsi_get_error(probe.iscsi));
    iscsi_destroy_context(probe.iscsi);
    return 0;
}

static void member_logout(struct iraid_member *m)
{
    if (m->fd >= 0)
        evloop_del_fd(m->vol->loop, m->fd);
    m->fd = -1;
    if (m->iscsi) {
        if (m->state == IRAID_MEMBER_UP && iscsi_logout_sync(m->iscsi) != 0)
            log_warn("iraid: %s: logout: %s", m->url, iscsi_get_error(m->iscsi));
        iscsi_destroy_context(m->iscsi);
        m->iscsi = NULL;
    }
}

static int resolve_level(const struct iraid_config *cfg)
{
    if (cfg->level != IRAID_LEVEL_DEFAULT)
        return cfg->level;
    return cfg->nmembers >= 3 ? 5 : cfg->nmembers == 2 ? 1 : 0;
}

static int check_config(const struct iraid_config *cfg)
{
    if (!cfg->urls || cfg->nmembers == 0 || cfg->nmembers > IRAID_MAX_MEMBERS)
        return -EINVAL;
    for (uint32_t i = 0; i < cfg->nmembers; i++)
        if (!cfg->urls[i])
            return -EINVAL;
    if (!ops_for_level(resolve_level(cfg))) {
        log_error("iraid: RAID level %d is not supported (supported: 0, 1, 5)", cfg->level);
        return -EINVAL;
    }
    return 0;
}

/* Block sizes of the live members must agree; the volume spans the
 * smallest, less the metadata area of the redundant levels. */
static int volume_geometry(struct iraid_volume *vol, int level, uint64_t chunk)
{
    uint64_t member_bytes = UINT64_MAX;
    int rc;

    vol->block_size = 0;
    for (uint32_t i = 0; i < vol->nmembers; i++) {
        struct iraid_member *m = &vol->members[i];
        if (!member_live(m))
            continue;
        if (!vol->block_size)
            vol->block_size = m->block_size;
        if (m->block_size != vol->block_size) {
            log_error("iraid: %s has %u-byte blocks, others have %u", m->url, m->block_size,
                      vol->block_size);
            return -EINVAL;
        }
        if (m->nblocks * m->block_size < member_bytes)
            member_bytes = m->nblocks * m->block_size;
    }
    if (chunk % vol->block_size || (level != 0 && IRAID_META_BYTES % vol->block_size)) {
        log_error("iraid: chunk %" PRIu64 " is not a multiple of the %u-byte block", chunk,
                  vol->block_size);
        return -EINVAL;
    }
    vol->data_off = level == 0 ? 0 : IRAID_META_BYTES;
    member_bytes = member_bytes > vol->data_off ? member_bytes - vol->data_off : 0;
    if ((rc = iraid_layout_init(&vol->layout, level, vol->nmembers, chunk, member_bytes)) < 0)
        return rc;
    if (iraid_size(vol) == 0) {
        log_error("iraid: members smaller than one %" PRIu64 "-byte chunk", chunk);
        return -ENOSPC;
    }
    return 0;
}

/* Logs in to every member.  A redundant level opens with up to its
 * redundancy of members unreachable (they start DOWN and are retried);
 * returns the first login error otherwise. */
static int volume_login(struct iraid_volume *vol, const struct iraid_config *cfg, int level)
{
    uint32_t missing = 0;
    int first_err = 0;

    for (uint32_t i = 0; i < vol->nmembers; i++) {
        struct iraid_member *m = &vol->members[i];
        int rc;

        *m = (struct iraid_member){ .vol = vol, .idx = i, .fd = -1,
                                    .state = IRAID_MEMBER_DOWN };
        if (!(m->url = strdup(cfg->urls[i])))
            return -ENOMEM;
        if ((rc = member_login(m)) < 0) {
            missing++;
            if (!first_err)
                first_err = rc;
            m->retry_at = evloop_now_ms() + (m->backoff_ms = IRAID_BACKOFF_MIN_MS);
        }
    }
    if (missing == 0)
        return 0;
    if (level == 0 || missing > (level == 1 ? vol->nmembers - 1 : 1))
        return first_err;
    log_warn("iraid: opening degraded: %u of %u members unreachable", missing, vol->nmembers);
    return 0;
}

static void volume_logout(struct iraid_volume *vol)
{
    for (uint32_t i = 0; i < vol->nmembers; i++) {
        member_logout(&vol->members[i]);
        free(vol->members[i].url);
    }
}

/* Moves the members' sockets and the tick from one loop to another. */
static int volume_attach(struct iraid_volume *vol, struct evloop *loop)
{
    if (vol->timer)
        evloop_del_timer(vol->loop, vol->timer);
    vol->timer = 0;
    for (uint32_t i = 0; i < vol->nmembers; i++) {
        struct iraid_member *m = &vol->members[i];
        if (m->fd >= 0)
            evloop_del_fd(vol->loop, m->fd);
        m->fd = -1;
    }
    vol->loop = loop;
    if (!(vol->timer = evloop_add_timer(loop, IRAID_TICK_MS, volume_tick, vol)))
        return -ENOMEM;
    for (uint32_t i = 0; i < vol->nmembers; i++)
        member_watch(&vol->members[i], 1);
    return 0;
}

/* The metadata (and the resync of dirty regions) is handled on a private
 * loop, so the caller's other event sources never run inside iraid_open. */
static int volume_start(struct iraid_volume *vol, struct evloop *loop)
{
    struct evloop *priv;
    int rc;

    if (vol->layout.level == 0)
        return volume_attach(vol, loop);
    if (!(priv = evloop_create()))
        return -ENOMEM;
    vol->loop = priv;
    if ((rc = volume_attach(vol, priv)) == 0 && (rc = iraid_meta_open(vol)) == 0)
        rc = volume_attach(vol, loop);
    if (rc < 0 && vol->loop == priv) {
        if (vol->timer)
            evloop_del_timer(priv, vol->timer);
        vol->timer = 0;
        for (uint32_t i = 0; i < vol->nmembers; i++)
            if (vol->members[i].fd >= 0)
                evloop_del_fd(priv, vol->members[i].fd);
        for (uint32_t i = 0; i < vol->nmembers; i++)
            vol->members[i].fd = -1;
        vol->loop = loop;
    }
    evloop_destroy(priv);
    return rc;
}

int iraid_open(struct evloop *loop, const struct iraid_config *cfg, struct iraid_volume **out)
{
    uint64_t chunk;
    struct iraid_volume *vol;
    int rc, level;

    if (!loop || !cfg || !out)
        return -EINVAL;
    if ((rc = check_config(cfg)) < 0)
        return rc;
    level = resolve_level(cfg);
    chunk = cfg->chunk_size ? cfg->chunk_size : IRAID_DEFAULT_CHUNK;
    if (!(vol = calloc(1, sizeof(*vol))))
        return -ENOMEM;
    vol->loop = loop;
    vol->ops = ops_for_level(level);
    vol->nmembers = cfg->nmembers;
    vol->timeout_ms = cfg->timeout_ms > 0 ? cfg->timeout_ms : IRAID_DEFAULT_TIMEOUT_MS;
    vol->assume_clean = cfg->assume_clean != 0;
    vol->start_dirty_degraded = cfg->start_dirty_degraded != 0;
    if (!(vol->iqn = strdup(cfg->initiator_iqn ? cfg->initiator_iqn : IRAID_DEFAULT_IQN))) {
        rc = -ENOMEM;
        goto free_vol;
    }
    if (!(vol->members = calloc(cfg->nmembers, sizeof(*vol->members)))) {
        rc = -ENOMEM;
        goto free_iqn;
    }
    for (uint32_t i = 0; i < vol->nmembers; i++)
        vol->members[i].fd = -1;
    if ((rc = volume_login(vol, cfg, level)) < 0)
        goto logout_members;
    if ((rc = volume_geometry(vol, level, chunk)) < 0)
        goto logout_members;
    if ((rc = volume_start(vol, loop)) < 0)
        goto close_meta;
    log_info("iraid: %s volume over %u members, chunk %" PRIu64 ", %" PRIu64 " bytes",
             vol->ops->name, vol->nmembers, vol->layout.chunk, iraid_size(vol));
    *out = vol;
    return 0;

close_meta:
    iraid_meta_close(vol);
logout_members:
    volume_logout(vol);
    free(vol->members);
free_iqn:
    free(vol->iqn);
free_vol:
    free(vol);
    return rc;
}

void iraid_close(struct iraid_volume *vol)
{
    if (!vol)
        return;
    vol->closing = 1;
    cancel_all(vol);
    sop_cancel_waiting(vol);
    while (vol->deferred) {
        struct iraid_io *io = vol->deferred;
        vol->deferred = io->dnext;
        evloop_del_timer(vol->loop, io->timer);
        io_complete(io);
    }
    if (vol->timer)
        evloop_del_timer(vol->loop, vol->timer);
    volume_logout(vol);
    iraid_meta_close(vol);
    free(vol->members);
    free(vol->iqn);
    free(vol);
}
