/* iRAID volume lifecycle: open, the service tick, flush, clean close,
 * status, and close; the synchronous variants of the public calls.  The
 * top of the folder: it calls the other files, none of them calls it.
 *
 * Files of iraid/, each calling only those listed before it (checked by
 * scripts/check-call-graph.sh):
 *   layout.c   placement arithmetic, pure
 *   member.c   member sessions and states: login, fail, reconnect
 *   request.c  requests: parts, rounds, completion
 *   raid0.c    RAID-0 planning (and straight reads of the others)
 *   meta.c     superblock and write-intent bitmap (RAID-1/5) at run time
 *   meta_open.c  reading and stamping them at open
 *   stripe.c   stripe ops: per-stripe lock, rounds, retries
 *   raid1.c, raid5.c   what a stripe op of each level reads and writes
 *   io.c       user reads and writes
 *   unmap.c    discards (iraid_unmap)
 *   probe.c    checking a replacement LUN (iraid_probe_member_async)
 *   sweep.c    rebuild, scrub, resync at open
 *   volume.c   this file
 * Lower files reach higher ones only through function pointers the higher
 * ones hand down: vol->ops (levels), done callbacks, vol->member_stale.
 *
 * Volume states:
 *
 *   OPENING  iraid_open(): members logged in (member.c), geometry fixed;
 *            RAID-1/5: on a private loop the metadata is read and written
 *            (meta_open.c) and dirty regions resynced (sweep.c); then the
 *            members' sockets and the tick move to the caller's loop
 *   OPENING --any step fails--> unwound in reverse, freed, error returned
 *   OPEN     requests (io.c), sweeps, the tick every IRAID_TICK_MS
 *   OPEN --iraid_close()--> CLOSING (vol->closing): every command
 *            cancelled (callbacks with -ECANCELED), stripe ops, sweep
 *            timers and deferred completions ended, members logged out,
 *            metadata freed, then the volume
 *
 * Ownership: the caller owns the loop; the volume owns its members (and
 * their sessions), its metadata, the tick timer, and every request, stripe
 * op and deferred completion until it calls back. */
#include "iraid/volume.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "iraid/internal.h"
#include "iraid/layout.h"
#include "iraid/meta.h"

/* ---- the service tick ---- */

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

static const struct iraid_level_ops *ops_for_level(int level)
{
    switch (level) {
    case 0: return &iraid_raid0_ops;
    case 1: return &iraid_raid1_ops;
    case 5: return &iraid_raid5_ops;
    default: return NULL;
    }
}

/* ---- flush, clean close, size ---- */

/* RAID-0 needs every member; the redundant levels flush the live ones
 * and wait for the superblock (meta_flush). */
int iraid_flush(struct iraid_volume *vol, iraid_cb cb, void *user)
{
    struct iraid_req *req;

    if (!vol || !cb)
        return -EINVAL;
    if (vol->meta)
        return meta_flush(vol, cb, user);
    if (!(req = req_new_flush(vol, IRAID_ALL_MEMBERS, cb, user)))
        return -ENOMEM;
    return req_start(req);
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

static int sync_wait(struct iraid_volume *vol, int rc, struct sync_wait *w)
{
    if (rc < 0)
        return rc;
    while (!w->done) {
        rc = evloop_run_once(vol->loop, -1);
        if (rc < 0 && rc != -EINTR) {
            /* The loop is broken: nothing would ever complete w. */
            log_error("iraid: event loop failed (%s): cancelling all commands", strerror(-rc));
            members_cancel_all(vol);
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

/* ---- room on thin members ---- */

#define ROOM_MARGIN (64ull << 20)

int iraid_room_for_new_blocks(const struct iraid_volume *vol)
{
    uint64_t unalloc = 0;

    for (uint32_t i = 0; i < vol->nmembers; i++) {
        if (!vol->members[i].room_known)
            return 0;
        unalloc += vol->members[i].room_unalloc;
    }
    for (uint32_t i = 0; i < vol->nmembers; i++)
        if (vol->members[i].room_free < unalloc + ROOM_MARGIN &&
            vol->members[i].room_unalloc > 0)
            return 0;
    return 1;
}

/* ---- status and scrub ---- */

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
    out->read_rewrites = vol->read_rewrites;
    out->writes = vol->writes;
    for (uint32_t i = 0; i < vol->nmembers; i++) {
        const struct iraid_member *m = &vol->members[i];
        struct iraid_member_status *ms = &out->member[i];

        snprintf(ms->url, sizeof(ms->url), "%s", m->url);
        ms->state = m->state;
        ms->total = vol->layout.stripes;
        ms->rebuilt = m->state == IRAID_MEMBER_UP ? ms->total
                      : m->state == IRAID_MEMBER_REBUILDING ? m->rebuild_next : 0;
        if (m->state == IRAID_MEMBER_REBUILDING && m->rebuild_mode == REBUILD_BITMAP) {
            ms->bitmap = 1;
            ms->total = meta_missed_stripes_below(vol, vol->layout.stripes);
            ms->rebuilt = meta_missed_stripes_below(vol, m->rebuild_next);
        }
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

/* ---- open / close ---- */

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
    vol->opening = 1;
    if ((rc = volume_attach(vol, priv)) == 0 && (rc = iraid_meta_open(vol)) == 0 &&
        (rc = sweep_resync_dirty(vol)) == 0)
        rc = volume_attach(vol, loop);
    vol->opening = 0;
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
    vol->cmd_timeout_ms = cfg->cmd_timeout_ms > 0 ? cfg->cmd_timeout_ms
                                                  : IRAID_DEFAULT_CMD_TIMEOUT_MS;
    if (vol->cmd_timeout_ms < vol->timeout_ms)
        vol->cmd_timeout_ms = vol->timeout_ms;
    vol->assume_clean = cfg->assume_clean != 0;
    vol->start_dirty_degraded = cfg->start_dirty_degraded != 0;
    vol->observer = cfg->observer;
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
    if ((rc = members_login(vol, cfg, level)) < 0)
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
    members_logout(vol);
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
    members_cancel_all(vol);
    sop_cancel_waiting(vol);
    sweep_cancel_timers(vol);
    io_cancel_deferred(vol);
    probe_cancel_all(vol);
    if (vol->timer)
        evloop_del_timer(vol->loop, vol->timer);
    members_logout(vol);
    iraid_meta_close(vol);
    free(vol->members);
    free(vol->iqn);
    free(vol);
}
