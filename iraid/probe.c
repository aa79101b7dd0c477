/* iRAID: checking a replacement LUN without blocking the loop
 * (iraid_probe_member_async, contract in volume.h).
 *
 * A probe is a session of its own, never a member: libiscsi's
 * asynchronous login (iscsi_full_connect_async) and READ CAPACITY(16) on
 * the volume's loop, under one deadline (the volume's timeout) that also
 * covers a connect nobody answers (a blackholed address, a listener that
 * never speaks iSCSI).
 *
 * States of a probe:
 *
 *   CONNECTING --login done--> CAPACITY (READ CAPACITY queued)
 *   CONNECTING or CAPACITY --error, service failure, deadline--> ENDED
 *   CAPACITY --answer--> ENDED (result filled in)
 *   ENDED --deferred call--> session dropped, fd and timer off the loop,
 *          cb(status, result), freed
 *   any --iraid_close()--> ended at once with -ECANCELED (probe_cancel_all)
 *
 * Why ENDED waits for a deferred call: a probe usually ends inside one of
 * libiscsi's callbacks, where its context must not be destroyed.  The
 * session is dropped without a logout: it held no commands and no
 * reservation, and a logout would need one more exchange (and deadline)
 * with a target that may be misbehaving.
 *
 * Ownership: the volume lists its probes (vol->probes) until each has
 * called back; a probe owns its context and copy of the URL. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "iraid/internal.h"

struct iraid_probe_op {
    struct iraid_member m;         /* a member-shaped session, idx UINT32_MAX */
    iraid_probe_cb cb;
    void *user;
    struct iraid_probe result;
    int status;
    int ended;
    uint64_t deadline_timer, end_call;
    struct iraid_probe_op *next;   /* vol->probes */
};

static void probe_watch(struct iraid_probe_op *p);

static void probe_unlink(struct iraid_probe_op *p)
{
    struct iraid_probe_op **pp = &p->m.vol->probes;

    while (*pp && *pp != p)
        pp = &(*pp)->next;
    if (*pp)
        *pp = p->next;
}

/* Off the loop, session dropped, cb, freed: never inside libiscsi. */
static void probe_finish(struct iraid_probe_op *p)
{
    struct evloop *loop = p->m.vol->loop;

    probe_unlink(p);
    if (p->m.fd >= 0)
        evloop_del_fd(loop, p->m.fd);
    if (p->deadline_timer)
        evloop_del_timer(loop, p->deadline_timer);
    if (p->end_call)
        evloop_del_timer(loop, p->end_call);
    if (p->m.iscsi)
        iscsi_destroy_context(p->m.iscsi);
    p->cb(p->m.vol, p->status, &p->result, p->user);
    free(p->m.url);
    free(p);
}

static void probe_end_call(struct evloop *loop, uint64_t id, void *user)
{
    struct iraid_probe_op *p = user;

    p->end_call = 0;
    probe_finish(p);
}

/* Records how the probe ended (the first end wins) and has it finish
 * from the loop. */
static void probe_end(struct iraid_probe_op *p, int status, const char *why)
{
    if (p->ended)
        return;
    p->ended = 1;
    p->status = status;
    if (why)
        snprintf(p->result.why, sizeof(p->result.why), "%s", why);
    if (!(p->end_call = evloop_defer(p->m.vol->loop, probe_end_call, p)))
        log_error("iraid: probe of %s: no memory to end it; the deadline will", p->m.url);
}

static void probe_capacity_done(struct iscsi_context *iscsi, int status, void *data, void *priv)
{
    struct iraid_probe_op *p = priv;
    struct scsi_task *task = data;
    struct scsi_readcapacity16 *rc16 = NULL;
    int rc = member_errno(&p->m, "read capacity", status, task, 0);

    if (rc == 0 && !(rc16 = scsi_datain_unmarshall(task)))
        rc = -EIO;
    if (rc16 && rc16->block_length == 0)
        rc = -EIO;
    if (rc < 0) {
        probe_end(p, rc, "READ CAPACITY(16) failed or gave no usable answer");
    } else {
        p->result.bytes = (rc16->returned_lba + 1) * rc16->block_length;
        p->result.block_size = rc16->block_length;
        p->result.fits = p->result.block_size == p->result.need_block_size &&
                         p->result.bytes >= p->result.need_bytes;
        probe_end(p, 0, NULL);
    }
    if (task)
        scsi_free_scsi_task(task);
}

static void probe_login_done(struct iscsi_context *iscsi, int status, void *data, void *priv)
{
    struct iraid_probe_op *p = priv;

    if (p->ended)
        return;
    if (status != SCSI_STATUS_GOOD) {
        probe_end(p, -ECONNREFUSED, iscsi_get_error(iscsi));
        return;
    }
    if (!iscsi_readcapacity16_task(iscsi, p->m.lun, probe_capacity_done, p))
        probe_end(p, -ENOMEM, "cannot queue READ CAPACITY(16)");
}

static void probe_io(struct evloop *loop, int fd, int events, void *user)
{
    struct iraid_probe_op *p = user;
    int revents = (events & EV_READ ? POLLIN : 0) | (events & EV_WRITE ? POLLOUT : 0) |
                  (events & EV_ERROR ? POLLERR | POLLHUP : 0);

    if (!p->ended && iscsi_service(p->m.iscsi, revents) < 0)
        probe_end(p, -ECONNREFUSED, iscsi_get_error(p->m.iscsi));
    if (!p->ended)
        probe_watch(p);
}

/* The socket on the loop with what libiscsi waits for (its fd changes
 * while it connects). */
static void probe_watch(struct iraid_probe_op *p)
{
    struct evloop *loop = p->m.vol->loop;
    int fd = iscsi_get_fd(p->m.iscsi), ev = iscsi_which_events(p->m.iscsi);
    int mask = (ev & POLLIN ? EV_READ : 0) | (ev & POLLOUT ? EV_WRITE : 0);

    if (fd == p->m.fd && fd >= 0 && mask && evloop_mod_fd(loop, fd, mask) == 0)
        return;
    if (p->m.fd >= 0)
        evloop_del_fd(loop, p->m.fd);
    p->m.fd = -1;
    if (fd < 0 || mask == 0)
        return;
    if (evloop_set_fd(loop, fd, mask, probe_io, p) < 0) {
        probe_end(p, -ENOMEM, "cannot watch the socket");
        return;
    }
    p->m.fd = fd;
}

static void probe_deadline(struct evloop *loop, uint64_t id, void *user)
{
    struct iraid_probe_op *p = user;
    char why[96];

    p->deadline_timer = 0;
    if (p->ended) {                /* ended, but its deferred call had no memory */
        probe_finish(p);
        return;
    }
    snprintf(why, sizeof(why), "no login and READ CAPACITY within %d ms", p->m.vol->timeout_ms);
    probe_end(p, -ETIMEDOUT, why);
}

int iraid_probe_member_async(struct iraid_volume *vol, const char *url,
                             const struct iraid_chap *chap, iraid_probe_cb cb, void *user)
{
    struct iraid_probe_op *p;
    struct iscsi_url *u;
    int rc = -ENOMEM;

    if (!vol || !url || !cb)
        return -EINVAL;
    if (vol->closing)
        return -ECANCELED;
    if (!(p = calloc(1, sizeof(*p))))
        return -ENOMEM;
    p->m = (struct iraid_member){ .vol = vol, .idx = UINT32_MAX, .fd = -1 };
    p->cb = cb;
    p->user = user;
    p->result = (struct iraid_probe){
        .need_bytes = vol->data_off + vol->layout.stripes * vol->layout.chunk,
        .need_block_size = vol->block_size };
    if (!(p->m.url = strdup(url)))
        goto free_probe;
    if (chap)
        p->m.chap = *chap;
    if (!(p->m.iscsi = member_context(&p->m, &u))) {
        rc = -EINVAL;
        goto free_url;
    }
    if (iscsi_full_connect_async(p->m.iscsi, u->portal, u->lun, probe_login_done, p) != 0) {
        log_error("iraid: probe of %s: %s", url, iscsi_get_error(p->m.iscsi));
        iscsi_destroy_url(u);
        rc = -ECONNREFUSED;
        goto destroy_context;
    }
    iscsi_destroy_url(u);
    if (!(p->deadline_timer = evloop_add_timer(vol->loop, (uint64_t)vol->timeout_ms,
                                               probe_deadline, p)))
        goto destroy_context;
    p->next = vol->probes;
    vol->probes = p;
    probe_watch(p);
    return 0;

destroy_context:
    if (p->m.fd >= 0)
        evloop_del_fd(vol->loop, p->m.fd);
    iscsi_destroy_context(p->m.iscsi);
free_url:
    free(p->m.url);
free_probe:
    free(p);
    return rc;
}

void probe_cancel_all(struct iraid_volume *vol)
{
    while (vol->probes) {
        struct iraid_probe_op *p = vol->probes;
        if (!p->ended) {
            p->ended = 1;
            p->status = -ECANCELED;
            snprintf(p->result.why, sizeof(p->result.why), "the volume is closing");
        }
        probe_finish(p);
    }
}
