/* iRAID requests: one operation on the members, planned into parts (one
 * SCSI command each, to one member), all queued at once so the members
 * work concurrently.  The request completes when its last part does.  A
 * request that needs several rounds (parity: read old data, then write)
 * sets req->next_phase; it runs once every part of the current round
 * succeeded and plans the next round.  Calls only member.c.
 *
 * Request states (implicit in the fields named):
 *
 *   PLANNING     req_new(), parts added (part_new/part_for/part_take)
 *   PLANNING --req_start()/req_launch(): every part queued--> IN_FLIGHT
 *                (linked on vol->inflight, pending = parts not yet done)
 *   PLANNING --a part refused at the first submission--> DONE, silent:
 *                req_start() returns the error, cb never runs
 *   IN_FLIGHT --a part refused in a later round--> DONE with the error
 *   IN_FLIGHT --last part done, status 0, next_phase set--> PLANNING
 *                (the phase plans the next round, then it is submitted)
 *   IN_FLIGHT --last part done otherwise--> DONE
 *   DONE         unlinked, cb(status) unless silent, freed (req_finish)
 *
 *   A part that UNIT ATTENTION refuses is sent again (at most 3 times).
 *   With tolerate_down set, a part that fails because its member went
 *   down counts as done (req->lost counts them); the stripe layer decides
 *   whether the stripe can spare that member.
 *
 * Ownership: a request owns its parts and their iovec arrays, never the
 * data buffers (the caller's, or its owner's).  From req_start() or
 * req_launch() on it belongs to this file, which frees it after cb.  Errors
 * become errno in member_errno() (member.c), the one place for that. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "iraid/internal.h"

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

/* ---- submission and completion ---- */

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
        /* req_submit() may end req itself (an empty round): touch req
         * again only when it refused the round. */
        if (req->status == 0) {
            int rc = req_submit(req);
            if (rc == 0)
                return;
            req->status = rc;
        }
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

/* cfg->observer's view of an acknowledged change (volume.h). */
static void part_observe(const struct iraid_part *p)
{
    const struct iraid_observer *obs = p->req->vol->observer;
    struct iovec *iov = NULL;
    enum iraid_observed what = p->op == PART_WRITE   ? IRAID_OBSERVED_WRITE
                               : p->op == PART_UNMAP ? IRAID_OBSERVED_UNMAP
                                                     : IRAID_OBSERVED_FLUSH;

    if (p->op == PART_WRITE) {
        if (!(iov = calloc((size_t)p->niov, sizeof(*iov)))) {
            log_error("iraid: out of memory observing a write: the observer misses it");
            return;
        }
        for (int i = 0; i < p->niov; i++)
            iov[i] = (struct iovec){ p->iov[i].iov_base, p->iov[i].iov_len };
    }
    obs->acked(obs->user, p->m->idx, what, p->fua, p->member_off,
               p->op == PART_FLUSH ? 0 : p->len, iov, iov ? p->niov : 0);
    free(iov);
}

static void part_done(struct iscsi_context *iscsi, int status, void *command_data, void *priv)
{
    struct iraid_part *p = priv;
    struct iraid_req *req = p->req;
    static const char *const what[] = { "read", "write", "flush", "demote", "unmap" };
    int rc;

    if (part_retry_unit_attention(p, status))
        return;
    rc = member_errno(p->m, what[p->op], status, p->task, (p->member_off) / p->m->block_size);

    scsi_free_scsi_task(p->task);
    p->task = NULL;
    if (rc == 0 && req->vol->observer &&
        (p->op == PART_WRITE || p->op == PART_UNMAP || p->op == PART_FLUSH))
        part_observe(p);
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

/* DEMOTE (IRAID_OP_DEMOTE) of the part's data: a hint, so a refusal by
 * libiscsi just fails the part. */
static struct scsi_task *demote_queue(struct iraid_part *p)
{
    struct iraid_member *m = p->m;
    uint64_t lba = p->member_off / m->block_size;
    uint32_t n = (uint32_t)(p->len / m->block_size);
    uint8_t cdb[16] = { IRAID_OP_DEMOTE };
    struct scsi_task *t;

    for (int i = 0; i < 8; i++)
        cdb[2 + i] = (uint8_t)(lba >> (56 - 8 * i));
    for (int i = 0; i < 4; i++)
        cdb[10 + i] = (uint8_t)(n >> (24 - 8 * i));
    if (!(t = scsi_create_task(16, cdb, SCSI_XFER_WRITE, (int)p->len)))
        return NULL;
    scsi_task_set_iov_out(t, p->iov, p->niov);
    if (iscsi_scsi_command_async(m->iscsi, m->lun, t, part_done, NULL, p) < 0) {
        scsi_free_scsi_task(t);
        return NULL;
    }
    return t;
}

static struct scsi_task *part_queue(struct iraid_part *p)
{
    struct iraid_member *m = p->m;
    uint64_t lba = p->member_off / m->block_size;
    uint32_t len = (uint32_t)p->len;

    switch (p->op) {
    case PART_READ:
        return iscsi_read16_iov_task(m->iscsi, m->lun, lba, len, (int)m->block_size, 0,
                                     p->req->dpo && m->ucache, 0, 0, 0, part_done, p, p->iov,
                                     p->niov);
    case PART_DEMOTE:
        return demote_queue(p);
    case PART_WRITE:
        return iscsi_write16_iov_task(m->iscsi, m->lun, lba, NULL, len, (int)m->block_size, 0, 0,
                                      p->fua, 0, 0, part_done, p, p->iov, p->niov);
    case PART_UNMAP: {
        /* libiscsi copies the descriptor into the task's parameter list */
        struct unmap_list range = { .lba = lba, .num = len / m->block_size };
        return iscsi_unmap_task(m->iscsi, m->lun, 0, 0, &range, 1, part_done, p);
    }
    default:
        return iscsi_synchronizecache16_task(m->iscsi, m->lun, 0, 0, 0, 0, part_done, p);
    }
}

/* Queues every planned part and returns 0; the parts complete later.  If
 * libiscsi refuses one, the parts already queued are cancelled (their
 * callbacks run inside this call, libiscsi cancels locally and at once),
 * so on a negative return nothing of req is in flight and the caller ends
 * it.  On 0 the round may have completed inside this call (nothing to
 * queue) and req be freed: the caller must not touch req after a 0.  The
 * extra pending count keeps a cancelled round from completing before this
 * function is done with req.  A part for a member that is not live fails
 * the round with -EIO, or is skipped under tolerate_down. */
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
            member_kick(&vol->members[i]);
    /* Only an empty round gets here with nothing pending. */
    if (--req->pending == 0)
        req_round_done(req);
    return 0;
}

void req_launch(struct iraid_req *req)
{
    int rc;

    req_link(req);
    /* On 0, req may already be ended and freed (an empty round). */
    if ((rc = req_submit(req)) < 0) {
        req->status = rc;
        req_finish(req);
    }
}

/* First submission from a public entry point: a refused request ends here
 * without calling the user back. */
int req_start(struct iraid_req *req)
{
    int rc;

    req_link(req);
    if ((rc = req_submit(req)) < 0) {
        req->silent = 1;
        req_finish(req);
    }
    return rc;
}

/* The one way to build a SYNCHRONIZE CACHE request: a part for every
 * member, or for member only when it is not IRAID_ALL_MEMBERS.  Not
 * submitted; the caller sets tolerate_down as it needs and submits it
 * (req_start() or req_launch()).  NULL when out of memory. */
struct iraid_req *req_new_flush(struct iraid_volume *vol, uint32_t member, iraid_cb cb,
                                void *user)
{
    struct iraid_req *req = req_new(vol, cb, user);

    if (!req)
        return NULL;
    for (uint32_t m = 0; m < vol->nmembers; m++)
        if ((member == IRAID_ALL_MEMBERS || m == member) && !part_new(req, m, PART_FLUSH, 0)) {
            req_free(req);
            return NULL;
        }
    return req;
}

/* ---- synchronous waits of iraid_open (on its private loop) ---- */

void req_sync_done(struct iraid_volume *vol, int status, void *user)
{
    struct req_sync *w = user;

    w->done = 1;
    w->status = status;
}

/* Runs the loop until w is done; an error of the loop itself ends the
 * wait with that error. */
int req_sync_run(struct iraid_volume *vol, struct req_sync *w)
{
    while (!w->done) {
        int rc = evloop_run_once(vol->loop, -1);
        if (rc < 0 && rc != -EINTR)
            return rc;
    }
    return w->status;
}
