/* Opening the metadata of a redundant level: read the area of every live
 * member, adopt the newest valid superblock and the OR of all bitmaps,
 * refuse a dirty and degraded RAID-5 volume (unless forced), mark the
 * unreachable members stale and the stale ones for rebuild, and write it
 * all back with a new event count (format and protocol in meta.h).  Runs
 * once, inside iraid_open() on its private loop; the resync of the dirty
 * regions follows (sweep.c), then meta_clear_bitmap().
 *
 * States: ALLOCATED (meta_alloc) -> READ (every live member's area) ->
 * ADOPTED (image built) -> CHECKED (dirty and degraded, stale members) ->
 * STAMPED (every block durable on the live members).  A failure at any
 * step returns the error; iraid_open() then frees it all with
 * iraid_meta_close() (meta.c).
 *
 * Ownership: the image and its counters (struct iraid_meta, meta_image.h)
 * belong to the volume (vol->meta) from meta_alloc() on; this file only
 * fills them. */
#include "iraid/meta.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "iraid/internal.h"
#include "iraid/meta_image.h"

/* ---- open ---- */

static int meta_alloc(struct iraid_volume *vol)
{
    struct iraid_meta *meta = calloc(1, sizeof(*meta));
    uint64_t stripes = vol->layout.stripes, min = IRAID_META_MIN_REGION_BYTES / vol->layout.chunk;
    void *image;

    if (!meta)
        return -ENOMEM;
    vol->meta = meta;
    vol->member_stale = meta_member_stale;
    meta->bs = vol->block_size;
    meta->region_stripes = (stripes + IRAID_META_MAX_REGIONS - 1) / IRAID_META_MAX_REGIONS;
    if (meta->region_stripes < min)
        meta->region_stripes = min ? min : 1;
    meta->nregions = (stripes + meta->region_stripes - 1) / meta->region_stripes;
    meta->nblk = (uint32_t)((IRAID_META_BITMAP_OFF + (meta->nregions + 7) / 8 + meta->bs - 1) /
                            meta->bs);
    if (posix_memalign(&image, 64, IRAID_META_BYTES) != 0)
        return -ENOMEM;
    meta->image = image;
    memset(image, 0, IRAID_META_BYTES);
    if (!(meta->gen = calloc(meta->nblk, sizeof(uint64_t))) ||
        !(meta->durable = calloc(meta->nblk, sizeof(uint64_t))) ||
        !(meta->writing = calloc(meta->nblk, sizeof(uint64_t))) ||
        !(meta->active = calloc(meta->nregions, sizeof(uint32_t))) ||
        !(meta->begins = calloc(meta->nregions, sizeof(uint64_t))) ||
        !(meta->last_end = calloc(meta->nregions, sizeof(uint64_t))) ||
        !(meta->set_gen = calloc(meta->nregions, sizeof(uint64_t))) ||
        !(meta->cand = calloc(meta->nregions, sizeof(uint64_t))) ||
        !(meta->cand_begins = calloc(meta->nregions, sizeof(uint64_t))) ||
        !(vol->missed = calloc((meta->nregions + 7) / 8, 1)))
        return -ENOMEM;
    vol->missed_region_stripes = meta->region_stripes;
    return 0;
}

/* Reads the used part of the area from every live member into areas. */
static int meta_read_all(struct iraid_volume *vol, uint8_t *areas, uint64_t len)
{
    struct req_sync w = { 0 };
    struct iraid_req *req = req_new(vol, req_sync_done, &w);

    if (!req)
        return -ENOMEM;
    req->tolerate_down = 1;
    for (uint32_t m = 0; m < vol->nmembers; m++) {
        struct iraid_part *p = part_new(req, m, PART_READ, 0);
        if (!p || part_add_iov(p, areas + m * len, len) < 0) {
            req_free(req);
            return -ENOMEM;
        }
        p->len = len;
    }
    req_launch(req);
    return req_sync_run(vol, &w);
}

/* A new volume may skip its first resync only when the caller vouches
 * for zeroed members and the live members agree: their metadata areas
 * hold nothing at all (no superblock of any kind, no bitmap). */
static int meta_new_is_clean(const struct iraid_volume *vol, const uint8_t *areas, uint64_t len)
{
    if (!vol->assume_clean)
        return 0;
    for (uint32_t m = 0; m < vol->nmembers; m++) {
        const uint8_t *a = areas + m * len;
        if (!member_live(&vol->members[m]))
            continue;
        for (uint64_t i = 0; i < len; i++)
            if (a[i])
                return 0;
    }
    return 1;
}

/* Adopts the newest valid superblock and the OR of all bitmaps; a volume
 * without one is new and entirely dirty (clean when assumed so). */
static void meta_adopt(struct iraid_volume *vol, const uint8_t *areas, uint64_t len)
{
    struct iraid_meta *meta = vol->meta;
    int best = -1, foreign = 0;

    for (uint32_t m = 0; m < vol->nmembers; m++) {
        const uint8_t *a = areas + m * len;
        int match = member_live(&vol->members[m]) ? meta_sb_matches(vol, a) : 0;
        foreign |= match < 0;
        if (match <= 0)
            continue;
        if (best < 0 || meta_get64(a + 48) > meta_get64(areas + (uint64_t)best * len + 48))
            best = (int)m;
        for (uint64_t i = IRAID_META_BITMAP_OFF; i < len; i++)
            meta->image[i] |= a[i];
    }
    if (best < 0) {
        if (!foreign && meta_new_is_clean(vol, areas, len)) {
            log_info("iraid: new volume on zeroed members: assumed clean, no resync");
            return;
        }
        if (foreign)
            log_warn("iraid: members hold a volume of another geometry: initializing anew");
        else
            log_info("iraid: new volume: resyncing all of it");
        for (uint64_t r = 0; r < meta->nregions; r++)
            meta->image[IRAID_META_BITMAP_OFF + r / 8] |= (uint8_t)(1u << (r % 8));
        return;
    }
    meta->events = meta_get64(areas + (uint64_t)best * len + 48);
    meta->stale = meta_get64(areas + (uint64_t)best * len + 56);
}

/* Members the superblock calls stale are rebuilt; members unreachable now
 * become stale. */
static int meta_apply_stale(struct iraid_volume *vol)
{
    struct iraid_meta *meta = vol->meta;
    uint32_t missing = 0;

    for (uint32_t m = 0; m < vol->nmembers; m++) {
        struct iraid_member *mb = &vol->members[m];
        if (!member_live(mb))
            meta->stale |= 1ull << m;
        else if (meta->stale >> m & 1) {
            log_warn("iraid: member %u (%s) missed writes: rebuilding it", m, mb->url);
            member_needs_rebuild(mb);
        }
        missing += meta->stale >> m & 1;
    }
    if (missing > vol_redundancy(vol)) {
        log_error("iraid: %u members are missing or stale: cannot open", missing);
        return -EIO;
    }
    return 0;
}

/* Writes every used block (superblock with events + 1) and waits. */
static int meta_write_all(struct iraid_volume *vol)
{
    struct iraid_meta *meta = vol->meta;

    meta->events++;
    meta_sb_encode(vol, meta->image);
    for (uint32_t b = 0; b < meta->nblk; b++) {
        meta->gen[b]++;
        meta_write_block(vol, b);
    }
    meta->stale_gen = meta->gen[0];
    for (;;) {
        int pending = 0, writing = 0, rc;
        for (uint32_t b = 0; b < meta->nblk; b++) {
            pending |= meta->durable[b] < meta->gen[b];
            writing |= meta->writing[b] != 0;
        }
        if (!pending)
            break;
        if (!writing)
            return -EIO;
        if ((rc = evloop_run_once(vol->loop, -1)) < 0 && rc != -EINTR)
            return rc;
    }
    return meta_any_live(vol) ? 0 : -EIO;
}

/* A RAID-5 stripe with a member missing or stale cannot be resynced:
 * parity is then the only copy of that member's data, and a write the
 * crash tore made parity disagree with the data, so the member's data
 * would be reconstructed silently wrong.  Clearing the bits anyway (as a
 * resync that skipped those stripes would) hides that, so refuse, as md
 * does without start_dirty_degraded.  A stale member rebuilds from stripe
 * 0, so any member unreachable or stale leaves every dirty stripe
 * unresyncable.  Runs before meta_apply_stale() records the unreachable
 * ones as stale: a refused open must not make a member stale that missed
 * nothing, or its return could never clear the refusal. */
static int meta_check_dirty_degraded(struct iraid_volume *vol)
{
    uint64_t dirty = meta_dirty_regions(vol);
    uint32_t not_up = 0;

    if (vol->layout.level != 5 || dirty == 0)
        return 0;
    for (uint32_t m = 0; m < vol->nmembers; m++)
        not_up += !member_live(&vol->members[m]) || (vol->meta->stale >> m & 1);
    if (not_up == 0 || not_up > vol_redundancy(vol))
        return 0;  /* too many missing: meta_apply_stale() says so */
    if (!vol->start_dirty_degraded) {
        log_error("iraid: the volume is dirty (%" PRIu64 " region(s) may hold a write torn by a "
                  "crash) and %u member(s) are missing or stale, so those regions cannot be "
                  "resynced and the missing data there may be wrong: refusing to start; bring "
                  "the member(s) back, or force it (ipvfs-server --start-dirty-degraded)",
                  dirty, not_up);
        return -EUCLEAN;
    }
    log_warn("iraid: starting dirty and degraded as forced: %" PRIu64 " region(s) not resynced, "
             "the missing member's data there may be wrong", dirty);
    return 0;
}

/* After the resync (sweep.c) made every dirty region consistent and
 * flushed it: the whole bitmap is cleared and written. */
int meta_clear_bitmap(struct iraid_volume *vol)
{
    struct iraid_meta *meta = vol->meta;

    memset(meta->image + IRAID_META_BITMAP_OFF, 0, IRAID_META_BYTES - IRAID_META_BITMAP_OFF);
    return meta_write_all(vol);
}

/* Called by iraid_open on a private loop: read, adopt, stamp (the resync
 * of dirty regions follows: sweep_resync_dirty()). */
int iraid_meta_open(struct iraid_volume *vol)
{
    uint64_t len;
    uint8_t *areas;
    int rc;

    if ((rc = meta_alloc(vol)) < 0)
        return rc;
    len = (uint64_t)vol->meta->nblk * vol->meta->bs;
    if (!(areas = calloc(vol->nmembers, len)))
        return -ENOMEM;
    rc = meta_read_all(vol, areas, len);
    if (rc == 0)
        meta_adopt(vol, areas, len);
    free(areas);
    if (rc < 0 || (rc = meta_check_dirty_degraded(vol)) < 0 || (rc = meta_apply_stale(vol)) < 0)
        return rc;
    return meta_write_all(vol);
}
