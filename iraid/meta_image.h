/* The in-memory metadata of a redundant volume (vol->meta), shared by
 * meta.c (intent, waiters, block writes, cleaning, close) and meta_open.c
 * (reading and stamping it at open).  No other file includes it: the rest
 * of iraid/ reaches the metadata through the meta_* calls of internal.h.
 *
 * The metadata area is one image; each device block of it has a
 * generation (gen: bumped on every change), the generation last made
 * durable on every live member (durable), and the generation being
 * written (writing: one write per block at a time; a block changed
 * meanwhile is written again when that write ends). */
#ifndef IPVFS_IRAID_META_IMAGE_H
#define IPVFS_IRAID_META_IMAGE_H

#include <stdint.h>

#include "iraid/internal.h"

struct iraid_meta {
    uint32_t bs;                   /* device block: the unit of writes */
    uint32_t nblk;                 /* blocks in use: superblock and bitmap */
    uint8_t *image;
    uint64_t *gen, *durable, *writing;
    uint64_t region_stripes, nregions;
    uint32_t *active;              /* per region: writes in progress */
    uint64_t *begins;              /* per region: writes ever begun */
    uint64_t *last_end;            /* per region: ms of the last write's end */
    uint64_t *set_gen;             /* per region: generation that set its bit */
    uint64_t last_region;          /* region of the last intent begun, + 1 (0: none) */
    uint64_t events, stale, stale_gen;
    uint64_t events_durable;       /* events of the last superblock written */
    /* Per member, set when it went stale: the events its own superblock
     * may hold (fail_lo: written while it was live; fail_hi: the newest
     * before it was marked stale).  meta_member_resume_ok() checks them. */
    uint64_t fail_lo[IRAID_MAX_MEMBERS], fail_hi[IRAID_MAX_MEMBERS];
    struct meta_intent *waiters;   /* stripe ops waiting for durable blocks */
    struct meta_sb_waiter *sb_waiters; /* meta_sb_wait() */
    int cleaning;
    uint64_t next_clean;
    uint64_t *cand, *cand_begins, ncand;
};

void meta_sb_encode(const struct iraid_volume *vol, uint8_t *sb);
uint32_t meta_get32(const uint8_t *p);
uint64_t meta_get64(const uint8_t *p);
/* 1: a valid superblock of this volume's geometry; 0: not ours;
 * -1: valid but of another geometry. */
int meta_sb_matches(const struct iraid_volume *vol, const uint8_t *sb);
/* Writes block blk of the image (FUA) to every live member unless it is
 * durable already or being written. */
void meta_write_block(struct iraid_volume *vol, uint32_t blk);
int meta_any_live(const struct iraid_volume *vol);

#endif
