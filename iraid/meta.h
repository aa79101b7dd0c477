/* On-disk format of the iRAID metadata area (RAID-1 and RAID-5 only; a
 * RAID-0 volume keeps nothing on its members but data).
 *
 * Every member reserves its first IRAID_META_BYTES; stripe 0 starts right
 * after it.  Every current member holds the same bytes there.  All
 * integers are little-endian.
 *
 *   offset 0:  superblock, written as one device block (it fits in 512)
 *       0   char[8]  magic "iRAIDv1\0"
 *       8   u32      level (1 or 5)
 *       12  u32      nmembers
 *       16  u32      block size of the members
 *       20  u32      reserved, 0
 *       24  u64      chunk (bytes)
 *       32  u64      stripes (per member)
 *       40  u64      region_stripes: stripes covered by one bitmap bit
 *       48  u64      events: incremented on every superblock write; at open
 *                    the valid superblock with the most events wins
 *       56  u64      stale mask: bit i set = member i is missing or being
 *                    rebuilt; its data must not be trusted until a rebuild
 *                    completes
 *       64  u32      CRC32C (ISA-L crc32_iscsi, seed 0) of bytes 0..63
 *   offset IRAID_META_BITMAP_OFF: write-intent bitmap
 *       bit r (byte r / 8, bit r % 8, least significant first) set =
 *       region r, stripes [r * region_stripes, (r + 1) * region_stripes),
 *       may hold a stripe whose parity (RAID-5) or mirrors (RAID-1)
 *       disagree with its data.  Written in whole device blocks.
 *
 * Protocol: a bit is set and written with FUA to every live member before
 * any write to its region is issued; it is cleared, after a SYNCHRONIZE
 * CACHE of every member, once the region has seen no write for
 * IRAID_META_LINGER_MS.  At open, the bitmaps of all valid superblocks are
 * ORed and every dirty region is resynced before I/O is accepted; RAID-5
 * dirty regions with a member missing or stale cannot be, and the open is
 * refused unless forced (iraid_config.start_dirty_degraded).  A
 * superblock that is missing, corrupt, or describes another geometry makes
 * the volume new: every region is dirty (the first open resyncs it all).
 * The stale mask is written (FUA) before a write that skipped a missing
 * member completes, so a member that missed writes is never trusted after
 * a restart. */
#ifndef IPVFS_IRAID_META_H
#define IPVFS_IRAID_META_H

#define IRAID_META_BYTES (64u << 10)
#define IRAID_META_BITMAP_OFF 4096u
#define IRAID_META_MAX_REGIONS ((IRAID_META_BYTES - IRAID_META_BITMAP_OFF) * 8u)
#define IRAID_META_SB_BYTES 68u
#define IRAID_META_MAGIC "iRAIDv1"
/* A region covers at least this much of each member, so a sequential
 * writer sets a bit only every few MiB. */
#define IRAID_META_MIN_REGION_BYTES (4u << 20)
#define IRAID_META_LINGER_MS 1000

#endif
