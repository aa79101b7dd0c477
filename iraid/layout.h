/* iRAID layout: where a volume byte lives on the members.  Pure, invertible
 * arithmetic with no I/O; test/test_iraid_layout.c checks every level
 * against a brute-force model that deals chunks out stripe by stripe.
 *
 * The volume is cut into data chunks of `chunk` bytes, numbered d = 0, 1, ...
 * A stripe is one chunk-sized row across all members; member offsets of
 * stripe s are [s * chunk, (s + 1) * chunk).
 *
 * RAID-0 (n >= 1): chunk d on member d % n, stripe d / n.
 * RAID-1 (n >= 2): every member holds a full copy; chunk d is at stripe d
 *   on every member.  iraid_layout_map() names member d % n, the copy a
 *   balanced reader uses; any other member holds the same bytes.
 * RAID-5 (n >= 3), left-symmetric rotated parity: stripe s holds n - 1 data
 *   chunks and one parity chunk on member P(s) = (n - 1) - s % n; its data
 *   chunk k (0..n-2) is on member (P(s) + 1 + k) % n, so consecutive data
 *   chunks go round the members without a gap, for example for n = 4:
 *       member:    0    1    2    3
 *       stripe 0:  D0   D1   D2   P
 *       stripe 1:  D4   D5   P    D3
 *       stripe 2:  D8   P    D6   D7
 *       stripe 3:  P    D9   D10  D11
 */
#ifndef IPVFS_IRAID_LAYOUT_H
#define IPVFS_IRAID_LAYOUT_H

#include <stdint.h>

/* iraid_layout_unmap() of a parity chunk. */
#define IRAID_NO_DATA UINT64_MAX

struct iraid_layout {
    int level;               /* 0, 1 or 5 */
    uint32_t nmembers;
    uint64_t chunk;          /* bytes, > 0 */
    uint64_t stripes;        /* stripes per member (member bytes / chunk) */
};

struct iraid_loc {
    uint32_t member;         /* member holding the byte (RAID-1: one copy) */
    uint64_t stripe;
    uint64_t member_off;     /* byte offset on that member */
    uint64_t run;            /* bytes from here to the end of the chunk */
};

/* Fills out for level/nmembers/chunk over members of member_bytes each
 * (the smallest member's size).  Returns 0, or -EINVAL for a level this
 * code does not know, too few members for the level, or a zero chunk. */
int iraid_layout_init(struct iraid_layout *out, int level, uint32_t nmembers, uint64_t chunk,
                      uint64_t member_bytes);

/* Data chunks per stripe: n (RAID-0), 1 (RAID-1), n - 1 (RAID-5). */
uint32_t iraid_layout_data_per_stripe(const struct iraid_layout *l);

/* Usable volume bytes. */
uint64_t iraid_layout_capacity(const struct iraid_layout *l);

/* Member holding the parity chunk of stripe (RAID-5 only). */
uint32_t iraid_layout_parity_member(const struct iraid_layout *l, uint64_t stripe);

/* Volume offset -> location; vol_off must be below the capacity. */
void iraid_layout_map(const struct iraid_layout *l, uint64_t vol_off, struct iraid_loc *out);

/* Member byte -> volume offset, or IRAID_NO_DATA where the member holds
 * parity.  Inverse of iraid_layout_map() (RAID-1: for any member). */
uint64_t iraid_layout_unmap(const struct iraid_layout *l, uint32_t member, uint64_t member_off);

/* Multi-stripe writes (RAID-5): the next run of whole stripes to write as
 * one op.  off and len are volume bytes of a write; when off starts a
 * stripe, returns how many whole stripes from there lie inside
 * [off, off + len), cut so the run stays inside one bitmap region of
 * region_stripes stripes (one write-intent bit) and holds at most
 * max_stripes (bounds the op's parity buffer); 0 when off does not start
 * a stripe or the write does not cover it whole. */
uint64_t iraid_layout_stripe_run(const struct iraid_layout *l, uint64_t off, uint64_t len,
                                 uint64_t region_stripes, uint64_t max_stripes);

/* ---- bitmap recovery of a returning member (md's re-add by bitmap) ---- */

/* Whether a member back after a crash may be resynced from the write-intent
 * bitmap alone: the superblock read back from it holds events within
 * [fail_lo, fail_hi] (from the last superblock written while it was live
 * to the newest before it was marked stale) and does not call the member
 * itself stale.  Anything else is a full rebuild. */
int iraid_resume_by_bitmap(uint64_t events, int self_stale, uint64_t fail_lo, uint64_t fail_hi);

/* Stripes below limit (and below stripes) that lie in regions whose bit is
 * set in map (bit r in byte r / 8, least significant first; region r is
 * stripes [r * region_stripes, (r + 1) * region_stripes)): a bitmap
 * resync's work (limit = stripes) and progress. */
uint64_t iraid_bitmap_stripes_below(const uint8_t *map, uint64_t region_stripes,
                                    uint64_t stripes, uint64_t limit);

#endif
