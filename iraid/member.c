/* iRAID member management: one iSCSI session per member (login, the
 * event loop's view of its socket, failure, reconnect with backoff) and
 * the counts the planners ask (how many members are live, up, current for
 * a stripe).  Below every other iRAID file but layout.c: it calls none of
 * them (a failure reaches the metadata through vol->member_stale).
 *
 * Member states (struct iraid_member.state; volume.h names them):
 *
 *   (open)  login and READ CAPACITY good --> UP; else DOWN, retried
 *   UP --session breaks / silent / command times out / replace--> DOWN
 *   REBUILDING --session breaks / silent / command times out / replace--> DOWN
 *   DOWN --retry time reached (tick)--> RECONNECTING   (async login started)
 *   RECONNECTING --login and READ CAPACITY good--> REBUILDING (RAID-1/5;
 *                rebuild_mode UNDECIDED if it went down current but for
 *                the bitmap's regions, else FULL; sweep.c decides)
 *                                              \-> UP (RAID-0: nothing to rebuild)
 *   RECONNECTING --login fails, deadline passes, capacity too small--> DOWN
 *                                              (backoff doubles, at most 5 s)
 *   REBUILDING --every stripe rebuilt and flushed (sweep.c)--> UP
 *   (open, meta_open.c) UP, but the superblock calls it stale --> REBUILDING
 *
 * "Silent": it owes answers and has sent nothing for the volume's
 * timeout_ms, a NOP-Out included (member_check_alive); a command times
 * out after cmd_timeout_ms, which only a member that keeps answering the
 * NOP-Outs (slow, not dead) reaches.
 *
 * Cleanup: DOWN with teardown set means "session still to drop";
 * member_teardown() cancels its commands and destroys the context, never
 * from inside libiscsi (right after iscsi_service() returns, or from the
 * tick).  iraid_close() logs every member out (members_logout()).
 *
 * Ownership: the volume owns the members array; each member owns its URL
 * copy and its libiscsi context (NULL while DOWN).  Only this file
 * changes a member's state, except for the REBUILDING -> UP step, which
 * the rebuild sweep asks for through member_rebuilt(). */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "iraid/internal.h"


/* ---- error translation: the one place SCSI/iSCSI status becomes errno ---- */

/* libiscsi names most sense keys but not MEDIUM ERROR (0x3, a disk's
 * unreadable sector) nor 0xf: it returns NULL for those. */
static const char *sense_key_name(int key)
{
    const char *name = scsi_sense_key_str(key);

    if (name)
        return name;
    return key == SCSI_SENSE_MEDIUM_ERROR ? "MEDIUM ERROR" : "unnamed";
}

int member_errno(const struct iraid_member *m, const char *what, int status,
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
                  m->url, what, lba, sense_key_name(key), ascq, strerror(-err));
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

/* A member resynced from the bitmap missed nothing outside the missed
 * regions: it is current there from the moment that is proven. */
int member_ok(const struct iraid_member *m, uint64_t stripe)
{
    const struct iraid_volume *vol = m->vol;
    uint64_t r;

    if (m->state == IRAID_MEMBER_UP)
        return 1;
    if (m->state != IRAID_MEMBER_REBUILDING)
        return 0;
    if (stripe < m->rebuild_next)
        return 1;
    if (m->rebuild_mode != REBUILD_BITMAP)
        return 0;
    r = stripe / vol->missed_region_stripes;
    return !(vol->missed[r / 8] >> (r % 8) & 1);
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

void member_watch(struct iraid_member *m, int force)
{
    struct evloop *loop = m->vol->loop;
    int on = m->iscsi && !m->teardown && m->state != IRAID_MEMBER_DOWN;
    int fd = on ? iscsi_get_fd(m->iscsi) : -1;
    int mask = on ? iscsi_to_ev(iscsi_which_events(m->iscsi)) : 0;

    if (m->flush_id && mask)
        mask = (mask & ~EV_WRITE) | EV_READ;  /* member_flush writes them */

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
        m->missed_ok = m->state == IRAID_MEMBER_UP || m->rebuild_mode != REBUILD_FULL;
    if (was_live)
        log_error("iraid: member %u (%s) failed: %s", m->idx, m->url, why);
    else
        log_warn("iraid: member %u (%s): reconnect failed: %s", m->idx, m->url, why);
    member_set_state(m, IRAID_MEMBER_DOWN);
    m->teardown = m->iscsi != NULL;
    m->backoff_ms = was_live ? IRAID_BACKOFF_MIN_MS : next_backoff(m->backoff_ms);
    m->retry_at = evloop_now_ms() + m->backoff_ms;
    m->rebuild_next = 0;
    if (vol->member_stale)
        vol->member_stale(vol, m->idx, 1);
}

/* Cancels a pending member_flush (the member's session or volume goes). */
static void member_unkick(struct iraid_member *m)
{
    if (m->flush_id)
        evloop_del_timer(m->vol->loop, m->flush_id);
    m->flush_id = 0;
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
    member_unkick(m);
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
    if (revents & POLLIN)
        m->heard_ms = evloop_now_ms();
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

static void member_flush(struct evloop *loop, uint64_t id, void *user)
{
    struct iraid_member *m = user;

    (void)loop;
    (void)id;
    m->flush_id = 0;
    member_service(m, POLLOUT);
}

/* Writing at once saves what arming EV_WRITE costs for every command (an
 * epoll_ctl each way and a loop round: 3.5 epoll_ctl calls per 4 KiB read
 * at an I/O node, with the replies'); only a logged-in session is written
 * this way (during login, POLLOUT means the connect completed).  The write
 * runs after the loop's callback now running returns, so outside
 * libiscsi (commands are queued from its callbacks), and in nested runs
 * too (a sync wait inside a callback, such as the final sync at
 * shutdown, must see its commands written: evloop_defer_outer would hold
 * them until the outer callback returns). */
void member_kick(struct iraid_member *m)
{
    if (m->flush_id)
        return;
    if (!m->iscsi || m->teardown || m->state == IRAID_MEMBER_DOWN ||
        !iscsi_is_logged_in(m->iscsi) ||
        !(m->flush_id = evloop_defer(m->vol->loop, member_flush, m)))
        member_watch(m, 0);
}

/* ---- reconnect ---- */

struct iscsi_context *member_context(struct iraid_member *m, struct iscsi_url **url)
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
    if ((m->chap.user[0] &&
         iscsi_set_initiator_username_pwd(iscsi, m->chap.user, m->chap.secret) < 0) ||
        (m->chap.target_user[0] &&
         iscsi_set_target_username_pwd(iscsi, m->chap.target_user, m->chap.target_secret) < 0)) {
        log_error("iraid: %s: cannot set CHAP: %s", m->url, iscsi_get_error(iscsi));
        iscsi_destroy_url(*url);
        iscsi_destroy_context(iscsi);
        return NULL;
    }
    iscsi_set_targetname(iscsi, (*url)->target);
    iscsi_set_session_type(iscsi, ISCSI_SESSION_NORMAL);
    iscsi_set_header_digest(iscsi, ISCSI_HEADER_DIGEST_NONE);
    iscsi_set_noautoreconnect(iscsi, 1);
    /* libiscsi counts whole seconds; round up so a short timeout stays > 0. */
    iscsi_set_timeout(iscsi, (vol->timeout_ms + 999) / 1000);
    return iscsi;
}

/* A session just logged in (and its capacity read) for I/O: its commands
 * get the long command timeout from now on (login and READ CAPACITY had
 * the short one: a target that does not answer those is not there), and
 * the liveness watch starts afresh. */
static void member_session_up(struct iraid_member *m)
{
    /* libiscsi counts whole seconds */
    iscsi_set_timeout(m->iscsi, (m->vol->cmd_timeout_ms + 999) / 1000);
    m->heard_ms = evloop_now_ms();
    m->pinging = 0;
}

static void member_returned(struct iraid_member *m)
{
    struct iraid_volume *vol = m->vol;

    member_session_up(m);
    m->backoff_ms = 0;
    m->epoch++;
    if (!vol->meta) {
        member_set_state(m, IRAID_MEMBER_UP);
        return;
    }
    m->rebuild_next = 0;
    /* sweep.c reads its superblock back first: a bitmap resync if it
     * proves what it missed, else a full rebuild */
    m->rebuild_mode = m->missed_ok ? REBUILD_UNDECIDED : REBUILD_FULL;
    member_set_state(m, IRAID_MEMBER_REBUILDING);
    vol->rebuild_retry_at = evloop_now_ms();
}

/* REBUILDING -> UP: every stripe rebuilt and flushed (the rebuild sweep
 * then clears the member's stale bit). */
void member_rebuilt(struct iraid_member *m)
{
    member_set_state(m, IRAID_MEMBER_UP);
    m->rebuild_next = 0;
    m->rebuild_mode = REBUILD_FULL;
}

/* UP -> REBUILDING at open: the superblock says the member missed writes.
 * Not logged as a transition: the metadata code says why. */
void member_needs_rebuild(struct iraid_member *m)
{
    m->state = IRAID_MEMBER_REBUILDING;
    m->rebuild_next = 0;
    m->rebuild_mode = REBUILD_FULL;
    m->epoch++;
    m->vol->rebuild_retry_at = evloop_now_ms();
}

/* Whether the member's target has an L2 that takes DEMOTE, and the room
 * left on its backing store: its answer to the vendor VPD page
 * (backend/iscsi/target.h), task NULL or refused when it had none.  Any
 * other target refuses the page or answers something else: no exclusive
 * caching with it, and its room is not known.  Asked at every login
 * (iraid_open, and each return: a replacement LUN, or a target restarted
 * on another backing store, answers anew). */
static void member_take_vpd(struct iraid_member *m, const struct scsi_task *task)
{
    int ok = task && task->status == SCSI_STATUS_GOOD && task->datain.size >= 5 &&
             task->datain.data[1] == IRAID_VPD_UCACHE;

    m->ucache = ok && (task->datain.data[4] & 1);
    m->room_known = ok && task->datain.size >= 24 && (task->datain.data[4] & 2);
    if (m->room_known) {
        m->room_free = scsi_get_uint64(task->datain.data + 8);
        m->room_unalloc = scsi_get_uint64(task->datain.data + 16);
    }
    if (m->ucache)
        log_info("iraid: %s: its L2 takes DEMOTE: reads for the L1 carry DPO", m->url);
}

/* The last step of a return: the vendor VPD page (member_take_vpd).  A
 * target that refuses it (CHECK CONDITION) returns all the same, with no
 * room known; a session lost meanwhile fails the member. */
static void reconnect_vpd_done(struct iscsi_context *iscsi, int status, void *data, void *priv)
{
    struct iraid_member *m = priv;
    struct scsi_task *task = data;

    (void)iscsi;
    if (m->state == IRAID_MEMBER_RECONNECTING) {
        if (status != SCSI_STATUS_GOOD && status != SCSI_STATUS_CHECK_CONDITION) {
            member_fail(m, "INQUIRY failed after login");
        } else {
            member_take_vpd(m, status == SCSI_STATUS_GOOD ? task : NULL);
            member_returned(m);
        }
    }
    scsi_free_scsi_task(task);
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
        m->unmap_zeroes = rc16->lbpme && rc16->lbprz;
        if (!iscsi_inquiry_task(iscsi, m->lun, 1, IRAID_VPD_UCACHE, 255, reconnect_vpd_done, m))
            member_fail(m, "cannot queue INQUIRY");
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

/* Whether bytes from the target sit unread in the socket: after a stall
 * of this process's own loop (a slow fsync of the metadata), the
 * answers are there before the loop has read them. */
static int answer_waiting(const struct iraid_member *m)
{
    struct pollfd p = { .fd = iscsi_get_fd(m->iscsi), .events = POLLIN };

    return p.fd >= 0 && poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

static void ping_done(struct iscsi_context *iscsi, int status, void *data, void *priv)
{
    struct iraid_member *m = priv;

    (void)iscsi;
    (void)data;
    m->pinging = 0;
    if (status == SCSI_STATUS_GOOD)
        m->heard_ms = evloop_now_ms();
}

/* A live member's session owes answers (commands or a NOP-Out in flight
 * or queued) and its target has sent nothing for IRAID_PING_AFTER_MS: ask
 * with a NOP-Out (immediate: no CmdSN window holds it back); still nothing
 * once the silence reaches the volume's timeout_ms: the member is down.
 * A target whose disk is slow answers and keeps its member. */
static void member_check_alive(struct iraid_member *m, uint64_t now)
{
    char why[96];

    if (!member_live(m) || !m->iscsi || m->teardown)
        return;
    if (!m->pinging && iscsi_queue_length(m->iscsi) == 0 &&
        iscsi_out_queue_length(m->iscsi) == 0) {
        m->heard_ms = now;      /* owes nothing: silence is fine */
        return;
    }
    if (now - m->heard_ms < IRAID_PING_AFTER_MS)
        return;
    if (!m->pinging) {
        if (iscsi_nop_out_async(m->iscsi, ping_done, NULL, 0, m) == 0) {
            m->pinging = 1;
            member_kick(m);
        }
        return;
    }
    if (now - m->heard_ms < (uint64_t)m->vol->timeout_ms)
        return;
    if (answer_waiting(m)) {
        m->heard_ms = now;      /* our loop was slow, not the target */
        return;
    }
    snprintf(why, sizeof(why), "silent for %" PRIu64 " ms with commands in flight, "
             "a NOP-Out unanswered", now - m->heard_ms);
    member_fail(m, why);
    member_teardown(m);
}

void member_tick(struct iraid_member *m)
{
    uint64_t now = evloop_now_ms();

    member_service(m, 0);
    member_check_alive(m, now);
    if (m->state == IRAID_MEMBER_RECONNECTING && now >= m->deadline) {
        member_fail(m, "login timed out");
        member_teardown(m);
    }
    if (m->state == IRAID_MEMBER_DOWN && !m->teardown && now >= m->retry_at)
        member_reconnect(m);
}

/* ---- counts the planners ask ---- */

/* Members a volume can lose and still hold every byte. */
uint32_t vol_redundancy(const struct iraid_volume *vol)
{
    switch (vol->layout.level) {
    case 1: return vol->nmembers - 1;
    case 5: return 1;
    default: return 0;
    }
}

uint32_t members_not_live(const struct iraid_volume *vol)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < vol->nmembers; i++)
        n += !member_live(&vol->members[i]);
    return n;
}

/* Members that cannot stand in for a lost one: DOWN, RECONNECTING, and
 * REBUILDING (current only below its rebuild_next). */
uint32_t members_not_up(const struct iraid_volume *vol)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < vol->nmembers; i++)
        n += vol->members[i].state != IRAID_MEMBER_UP;
    return n;
}

int all_members_up(const struct iraid_volume *vol)
{
    for (uint32_t i = 0; i < vol->nmembers; i++)
        if (vol->members[i].state != IRAID_MEMBER_UP)
            return 0;
    return 1;
}

uint32_t stripe_missing(const struct iraid_volume *vol, uint64_t stripe)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < vol->nmembers; i++)
        n += !member_ok(&vol->members[i], stripe);
    return n;
}

/* Cancels every command in flight (their callbacks run inside the call). */
void members_cancel_all(struct iraid_volume *vol)
{
    for (uint32_t i = 0; i < vol->nmembers; i++)
        if (vol->members[i].iscsi)
            iscsi_scsi_cancel_all_tasks(vol->members[i].iscsi);
}

/* ---- replacement ---- */

int iraid_replace_member(struct iraid_volume *vol, uint32_t idx, const char *url,
                         const struct iraid_chap *chap)
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
    m->missed_ok = 0;   /* asked for: a full rebuild, whatever the LUN holds */
    m->room_known = 0;  /* not known until the new LUN answers (reconnect_vpd_done) */
    log_info("iraid: member %u: %s replaced by %s", idx, m->url, copy);
    free(m->url);
    m->url = copy;
    if (chap)
        m->chap = *chap;
    else
        memset(&m->chap, 0, sizeof(m->chap));
    m->retry_at = evloop_now_ms();
    return 0;
}

/* ---- login and logout ---- */

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
    m->unmap_zeroes = rc16->lbpme && rc16->lbprz;
    rc = 0;
free_task:
    scsi_free_scsi_task(task);
    return rc;
}

static void member_probe_ucache(struct iraid_member *m)
{
    struct scsi_task *task = iscsi_inquiry_sync(m->iscsi, m->lun, 1, IRAID_VPD_UCACHE, 255);

    member_take_vpd(m, task);
    if (task)
        scsi_free_scsi_task(task);
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
    member_probe_ucache(m);
    member_session_up(m);
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

static void member_logout(struct iraid_member *m)
{
    member_unkick(m);
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

/* Logs in to every member.  A redundant level opens with up to its
 * redundancy of members unreachable (they start DOWN and are retried);
 * returns the first login error otherwise. */
int members_login(struct iraid_volume *vol, const struct iraid_config *cfg, int level)
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
        if (cfg->chap)
            m->chap = cfg->chap[i];
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

void members_logout(struct iraid_volume *vol)
{
    for (uint32_t i = 0; i < vol->nmembers; i++) {
        member_logout(&vol->members[i]);
        free(vol->members[i].url);
    }
}

