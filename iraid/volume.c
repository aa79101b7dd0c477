/* iRAID volume over libiscsi's asynchronous API.
 *
 * Shape: a request (struct iraid_req) is planned by the RAID level's ops
 * into parts, one SCSI command per part, each to one member; all parts are
 * queued at once so members work concurrently, and the request completes
 * when its last part does.  A level that needs several rounds (parity:
 * read old data, then write) sets req->next_phase; it runs once every part
 * of the current round succeeded and plans the next round.
 *
 * Request state machine:
 *   PLANNING --submit ok--> IN_FLIGHT --last part done--> next_phase? --yes--> PLANNING
 *                                                              \--no--> DONE (cb, free)
 *   libiscsi refusing a part cancels the parts already queued; a request
 *   refused at its first submission ends silently (the public call returns
 *   the error and never calls back), a later round ends with the error.
 *
 * Event loop: each member's socket is registered on the caller's loop with
 * the events libiscsi asks for; after every iscsi_service() the
 * registration is refreshed because libiscsi may reconnect on a new fd.  A
 * 100 ms timer calls iscsi_service(ctx, 0) so libiscsi's command timeouts
 * fire, and re-registers each socket from scratch in case a reconnect
 * reused the same fd number (epoll forgets a closed fd on its own). */
#include "iraid/volume.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include <iscsi/iscsi.h>
#include <iscsi/scsi-lowlevel.h>

#include "common/log.h"
#include "iraid/layout.h"

#define IRAID_TICK_MS 100
#define IRAID_DEFAULT_TIMEOUT_MS 10000
#define IRAID_DEFAULT_IQN "iqn.2024-01.org.ipvfs:initiator"
/* One SCSI command moves at most this much (CDB lengths are 32-bit). */
#define IRAID_MAX_PART (16u << 20)

enum part_op { PART_READ, PART_WRITE, PART_FLUSH };

struct iraid_member {
    struct iraid_volume *vol;
    uint32_t idx;
    char *url;
    struct iscsi_context *iscsi;
    int lun;
    int fd;                      /* registered on the loop, or -1 */
    uint64_t nblocks;
    uint32_t block_size;
    int down;                    /* connection lost: every command fails */
};

struct iraid_part {
    struct iraid_req *req;
    struct iraid_member *m;
    struct scsi_task *task;      /* set while queued in libiscsi */
    enum part_op op;
    uint64_t member_off;         /* bytes */
    uint64_t len;                /* bytes */
    struct scsi_iovec *iov;
    int niov, iov_cap;
};

struct iraid_req {
    struct iraid_volume *vol;
    struct iraid_req *prev, *next;   /* the volume's in-flight list */
    iraid_cb cb;
    void *user;
    int status;
    int silent;                      /* failed submission: never call cb */
    uint32_t pending;                /* parts queued and not yet done */
    struct iraid_part *parts;
    uint32_t nparts, parts_cap;
    void (*next_phase)(struct iraid_req *req);
};

/* Per-level planning: fill req's parts for one request (first round). */
struct iov_cursor {
    const struct iovec *iov;
    int iovcnt;
    int i;
    size_t off;                      /* inside iov[i] */
};

struct iraid_level_ops {
    const char *name;
    int (*plan_read)(struct iraid_req *req, uint64_t off, uint64_t len, struct iov_cursor *cur);
    int (*plan_write)(struct iraid_req *req, uint64_t off, uint64_t len, struct iov_cursor *cur);
};

struct iraid_volume {
    struct evloop *loop;
    const struct iraid_level_ops *ops;
    struct iraid_layout layout;
    struct iraid_member *members;
    uint32_t nmembers;
    uint32_t block_size;
    uint64_t timer;
    struct iraid_req *inflight;
    int closing;                 /* in iraid_close(): cancels are ECANCELED */
};

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

/* ---- event loop integration ---- */

static void member_io(struct evloop *loop, int fd, int events, void *user);

static int iscsi_to_ev(int ev)
{
    return (ev & POLLIN ? EV_READ : 0) | (ev & POLLOUT ? EV_WRITE : 0);
}

static void member_watch(struct iraid_member *m, int force)
{
    struct evloop *loop = m->vol->loop;
    int fd = m->down ? -1 : iscsi_get_fd(m->iscsi);
    int mask = m->down ? 0 : iscsi_to_ev(iscsi_which_events(m->iscsi));

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

/* The session broke.  libiscsi's automatic reconnect is off (it would
 * hold commands without their timeouts while it retries), so the member is
 * marked down and its commands fail with -EIO now; later commands to it
 * fail at once. */
static void member_down(struct iraid_member *m)
{
    if (m->down)
        return;
    log_error("iraid: member %u (%s) is down: %s", m->idx, m->url, iscsi_get_error(m->iscsi));
    m->down = 1;
    member_watch(m, 1);
    iscsi_scsi_cancel_all_tasks(m->iscsi);
}

static void member_service(struct iraid_member *m, int revents)
{
    if (m->down)
        return;
    if (iscsi_service(m->iscsi, revents) < 0) {
        member_down(m);
        return;
    }
    member_watch(m, revents == 0);
}

static void member_io(struct evloop *loop, int fd, int events, void *user)
{
    int revents = (events & EV_READ ? POLLIN : 0) | (events & EV_WRITE ? POLLOUT : 0) |
                  (events & EV_ERROR ? POLLERR | POLLHUP : 0);

    member_service(user, revents);
}

static void volume_tick(struct evloop *loop, uint64_t timer_id, void *user)
{
    struct iraid_volume *vol = user;

    for (uint32_t i = 0; i < vol->nmembers; i++)
        member_service(&vol->members[i], 0);
    vol->timer = evloop_add_timer(loop, IRAID_TICK_MS, volume_tick, vol);
    if (!vol->timer)
        log_error("iraid: cannot re-arm the service timer: command timeouts stop firing");
}

/* ---- requests and parts ---- */

static struct iraid_req *req_new(struct iraid_volume *vol, iraid_cb cb, void *user)
{
    struct iraid_req *req = calloc(1, sizeof(*req));

    if (!req)
        return NULL;
    req->vol = vol;
    req->cb = cb;
    req->user = user;
    return req;
}

static void req_free(struct iraid_req *req)
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

static struct iraid_part *part_new(struct iraid_req *req, uint32_t member, enum part_op op,
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
static struct iraid_part *part_for(struct iraid_req *req, uint32_t member, enum part_op op,
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

static int part_add_iov(struct iraid_part *p, void *base, size_t len)
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

/* Moves len bytes of the caller's buffers, from the cursor on, into p. */
static int part_take(struct iraid_part *p, struct iov_cursor *cur, uint64_t len)
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
        cur->off += n;
        if (cur->off == v->iov_len) {
            cur->i++;
            cur->off = 0;
        }
    }
    return 0;
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

static void part_done(struct iscsi_context *iscsi, int status, void *command_data, void *priv)
{
    struct iraid_part *p = priv;
    struct iraid_req *req = p->req;
    static const char *const what[] = { "read", "write", "flush" };
    int rc = member_errno(p->m, what[p->op], status, p->task, p->member_off / p->m->block_size);

    scsi_free_scsi_task(p->task);
    p->task = NULL;
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
                                      0, 0, 0, part_done, p, p->iov, p->niov);
    default:
        return iscsi_synchronizecache16_task(m->iscsi, m->lun, 0, 0, 0, 0, part_done, p);
    }
}

/* Queues every planned part and returns 0; the parts complete later.  If
 * libiscsi refuses one, the parts already queued are cancelled (their
 * callbacks run inside this call, libiscsi cancels locally and at once),
 * so on a negative return nothing of req is in flight and the caller ends
 * it.  The extra pending count keeps a cancelled round from completing
 * before this function is done with req. */
static int req_submit(struct iraid_req *req)
{
    struct iraid_volume *vol = req->vol;
    uint32_t queued;
    int rc = 0;

    req->pending = req->nparts + 1;
    for (queued = 0; queued < req->nparts; queued++) {
        struct iraid_part *p = &req->parts[queued];
        if (p->m->down) {
            log_error("iraid: member %u (%s) is down", p->m->idx, p->m->url);
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
        member_watch(&vol->members[i], 0);
    /* Only an empty round gets here with nothing pending. */
    if (--req->pending == 0)
        req_round_done(req);
    return 0;
}

/* ---- RAID levels ---- */

/* Striped placement, used by RAID-0 for everything and by RAID-1 for
 * reads (each chunk from the copy iraid_layout_map names). */
static int plan_striped(struct iraid_req *req, uint64_t off, uint64_t len, struct iov_cursor *cur,
                        enum part_op op)
{
    const struct iraid_layout *l = &req->vol->layout;

    while (len > 0) {
        struct iraid_loc loc;
        struct iraid_part *p;
        uint64_t n;
        int rc;

        iraid_layout_map(l, off, &loc);
        n = loc.run < len ? loc.run : len;
        p = part_for(req, loc.member, op, loc.member_off, n);
        if (!p)
            return -ENOMEM;
        if ((rc = part_take(p, cur, n)) < 0)
            return rc;
        off += n;
        len -= n;
    }
    return 0;
}

static int raid0_read(struct iraid_req *req, uint64_t off, uint64_t len, struct iov_cursor *cur)
{
    return plan_striped(req, off, len, cur, PART_READ);
}

static int raid0_write(struct iraid_req *req, uint64_t off, uint64_t len, struct iov_cursor *cur)
{
    return plan_striped(req, off, len, cur, PART_WRITE);
}

/* RAID-1: every member gets the same bytes at the same offset. */
static int raid1_write(struct iraid_req *req, uint64_t off, uint64_t len, struct iov_cursor *cur)
{
    struct iov_cursor start = *cur;

    for (uint32_t m = 0; m < req->vol->nmembers; m++) {
        struct iov_cursor c = start;
        for (uint64_t done = 0; done < len;) {
            uint64_t n = len - done < IRAID_MAX_PART ? len - done : IRAID_MAX_PART;
            struct iraid_part *p = part_new(req, m, PART_WRITE, off + done);
            int rc;

            if (!p)
                return -ENOMEM;
            if ((rc = part_take(p, &c, n)) < 0)
                return rc;
            done += n;
        }
    }
    return 0;
}

static const struct iraid_level_ops level_ops[] = {
    { "raid0", raid0_read, raid0_write },
    { "raid1", raid0_read, raid1_write },
};

static const struct iraid_level_ops *ops_for_level(int level)
{
    switch (level) {
    case 0: return &level_ops[0];
    case 1: return &level_ops[1];
    default: return NULL;
    }
}

/* ---- public I/O ---- */

static void req_link(struct iraid_req *req)
{
    struct iraid_volume *vol = req->vol;

    req->next = vol->inflight;
    if (vol->inflight)
        vol->inflight->prev = req;
    vol->inflight = req;
}

/* First submission from a public entry point: a refused request ends here
 * without calling the user back. */
static int req_start(struct iraid_req *req)
{
    int rc = req_submit(req);

    if (rc < 0) {
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
    if (!(req = req_new(vol, cb, user)))
        return -ENOMEM;
    rc = write ? vol->ops->plan_write(req, offset, len, &cur)
               : vol->ops->plan_read(req, offset, len, &cur);
    if (rc < 0)
        goto free_req;
    req_link(req);
    return req_start(req);

free_req:
    req_free(req);
    return rc;
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

int iraid_flush(struct iraid_volume *vol, iraid_cb cb, void *user)
{
    struct iraid_req *req;

    if (!vol || !cb)
        return -EINVAL;
    if (!(req = req_new(vol, cb, user)))
        return -ENOMEM;
    for (uint32_t m = 0; m < vol->nmembers; m++)
        if (!part_new(req, m, PART_FLUSH, 0)) {
            req_free(req);
            return -ENOMEM;
        }
    req_link(req);
    return req_start(req);
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

static int member_login(struct iraid_member *m, const struct iraid_config *cfg)
{
    const char *iqn = cfg->initiator_iqn ? cfg->initiator_iqn : IRAID_DEFAULT_IQN;
    int timeout_ms = cfg->timeout_ms > 0 ? cfg->timeout_ms : IRAID_DEFAULT_TIMEOUT_MS;
    struct iscsi_url *url;
    int rc;

    if (!(m->iscsi = iscsi_create_context(iqn))) {
        log_error("iraid: %s: cannot create an iSCSI context", m->url);
        return -ENOMEM;
    }
    if (!(url = iscsi_parse_full_url(m->iscsi, m->url))) {
        log_error("iraid: bad member URL %s: %s", m->url, iscsi_get_error(m->iscsi));
        rc = -EINVAL;
        goto destroy_context;
    }
    m->lun = url->lun;
    iscsi_set_targetname(m->iscsi, url->target);
    iscsi_set_session_type(m->iscsi, ISCSI_SESSION_NORMAL);
    iscsi_set_header_digest(m->iscsi, ISCSI_HEADER_DIGEST_NONE);
    iscsi_set_noautoreconnect(m->iscsi, 1);
    /* libiscsi counts whole seconds; round up so a short timeout stays > 0. */
    iscsi_set_timeout(m->iscsi, (timeout_ms + 999) / 1000);
    if (iscsi_full_connect_sync(m->iscsi, url->portal, url->lun) != 0) {
        rc = member_errno(m, "login", SCSI_STATUS_ERROR, NULL, 0);
        goto destroy_url;
    }
    iscsi_destroy_url(url);
    if ((rc = member_capacity(m)) < 0)
        goto logout;
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

static void member_logout(struct iraid_member *m)
{
    if (m->fd >= 0)
        evloop_del_fd(m->vol->loop, m->fd);
    m->fd = -1;
    if (m->iscsi) {
        if (!m->down && iscsi_logout_sync(m->iscsi) != 0)
            log_warn("iraid: %s: logout: %s", m->url, iscsi_get_error(m->iscsi));
        iscsi_destroy_context(m->iscsi);
        m->iscsi = NULL;
    }
}

static int check_config(const struct iraid_config *cfg)
{
    if (!cfg->urls || cfg->nmembers == 0)
        return -EINVAL;
    for (uint32_t i = 0; i < cfg->nmembers; i++)
        if (!cfg->urls[i])
            return -EINVAL;
    if (!ops_for_level(cfg->level)) {
        log_error("iraid: RAID level %d is not supported (supported: 0, 1)", cfg->level);
        return cfg->level == 5 ? -EOPNOTSUPP : -EINVAL;
    }
    return 0;
}

/* Block sizes must agree; the volume spans the smallest member. */
static int volume_geometry(struct iraid_volume *vol, const struct iraid_config *cfg)
{
    uint64_t chunk = cfg->chunk_size ? cfg->chunk_size : IRAID_DEFAULT_CHUNK;
    uint64_t member_bytes = UINT64_MAX;
    int rc;

    vol->block_size = vol->members[0].block_size;
    for (uint32_t i = 0; i < vol->nmembers; i++) {
        struct iraid_member *m = &vol->members[i];
        if (m->block_size != vol->block_size) {
            log_error("iraid: %s has %u-byte blocks, %s has %u", m->url, m->block_size,
                      vol->members[0].url, vol->block_size);
            return -EINVAL;
        }
        if (m->nblocks * m->block_size < member_bytes)
            member_bytes = m->nblocks * m->block_size;
    }
    if (chunk % vol->block_size) {
        log_error("iraid: chunk %" PRIu64 " is not a multiple of the %u-byte block", chunk,
                  vol->block_size);
        return -EINVAL;
    }
    if ((rc = iraid_layout_init(&vol->layout, cfg->level, vol->nmembers, chunk, member_bytes)) < 0)
        return rc;
    if (iraid_size(vol) == 0) {
        log_error("iraid: members smaller than one %" PRIu64 "-byte chunk", chunk);
        return -ENOSPC;
    }
    return 0;
}

int iraid_open(struct evloop *loop, const struct iraid_config *cfg, struct iraid_volume **out)
{
    struct iraid_volume *vol;
    uint32_t i = 0;
    int rc;

    if (!loop || !cfg || !out)
        return -EINVAL;
    if ((rc = check_config(cfg)) < 0)
        return rc;
    if (!(vol = calloc(1, sizeof(*vol))))
        return -ENOMEM;
    vol->loop = loop;
    vol->ops = ops_for_level(cfg->level);
    vol->nmembers = cfg->nmembers;
    if (!(vol->members = calloc(cfg->nmembers, sizeof(*vol->members)))) {
        rc = -ENOMEM;
        goto free_vol;
    }
    for (i = 0; i < cfg->nmembers; i++) {
        struct iraid_member *m = &vol->members[i];
        *m = (struct iraid_member){ .vol = vol, .idx = i, .fd = -1 };
        if (!(m->url = strdup(cfg->urls[i]))) {
            rc = -ENOMEM;
            goto logout_members;
        }
        if ((rc = member_login(m, cfg)) < 0) {
            free(m->url);
            goto logout_members;
        }
    }
    if ((rc = volume_geometry(vol, cfg)) < 0)
        goto logout_members;
    if (!(vol->timer = evloop_add_timer(loop, IRAID_TICK_MS, volume_tick, vol))) {
        rc = -ENOMEM;
        goto logout_members;
    }
    for (i = 0; i < vol->nmembers; i++)
        member_watch(&vol->members[i], 1);
    log_info("iraid: %s volume over %u members, chunk %" PRIu64 ", %" PRIu64 " bytes",
             vol->ops->name, vol->nmembers, vol->layout.chunk, iraid_size(vol));
    *out = vol;
    return 0;

logout_members:
    while (i-- > 0) {
        member_logout(&vol->members[i]);
        free(vol->members[i].url);
    }
    free(vol->members);
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
    if (vol->timer)
        evloop_del_timer(vol->loop, vol->timer);
    for (uint32_t i = 0; i < vol->nmembers; i++) {
        member_logout(&vol->members[i]);
        free(vol->members[i].url);
    }
    free(vol->members);
    free(vol);
}
