/* Sequential read-ahead of the datafile store (issue 14): each datafile
 * keeps up to DF_RA_STREAMS read streams (several clients may read one
 * datafile, each sequentially); a read that starts within DF_RA_GAP of
 * where a stream's last read ended continues it, any other read starts a
 * new stream in place of the least recently used one (a seek: that
 * stream's window is reset, and what it had not yet asked for is never
 * asked for).
 *
 * Window (as Linux's): a stream's second read opens a window of
 * DF_RA_MIN bytes (or the limit, if smaller) past its end when it is
 * evidence of a sequential reader: it starts exactly where the stream's
 * last read ended, or the stream's reads have brought at least DF_RA_MIN
 * bytes (pieces of one large read that arrive slightly out of order).
 * Small random reads that happen to land within the gap of a stream do
 * neither (4 KiB reads at random offsets opened a window on 1.6-3% of
 * reads, and each filled two 64 KiB blocks nobody read).  Each further
 * read of an open stream doubles it up to the limit (the read's own
 * limit: the file's hint ipvfs_readahead, or the server's --readahead).
 * The window is topped up (blocks from where the last prefetch ended to
 * the read's end plus the window) once less than half of it lies
 * prefetched ahead of the read, so prefetches go out in runs of at least
 * half a window, not one block per read.  A limit of 0 turns read-ahead
 * off for that read (its streams are left as they are).
 *
 * Prefetching (df_ra_read): the window's blocks that hold data (mapped,
 * below the datafile's size) go to the L1 (df_l1_prefetch, which bounds
 * memory and blocks in flight and never lets an unread prefetch evict
 * anything: l1cache.h); where the L1 stops, the stream's next read goes
 * on.  Only called when the read starts, that is while no write of the
 * datafile runs: a write queued later finds the blocks being filled or
 * prefetched and drops them (l1cache.h), so no prefetch returns bytes a
 * write replaced.
 *
 * df_ra_feed and df_ra_advance are pure (no I/O; test_dfstore_readahead). */
#ifndef IPVFS_DFSTORE_READAHEAD_H
#define IPVFS_DFSTORE_READAHEAD_H

#include <stdint.h>

#include "common/proto.h"

#define DF_RA_STREAMS 4
#define DF_RA_GAP (128u << 10)
#define DF_RA_MIN (128u << 10)

struct df_ra_stream {
    uint64_t next;               /* where its next read is expected */
    uint64_t ahead;              /* prefetched (asked for) up to here */
    uint64_t window;             /* bytes; 0: not (yet) sequential */
    uint64_t seen;               /* bytes its reads brought so far */
    uint64_t used;               /* tick of its last read; 0: unused */
};

/* Per datafile, zeroed at creation. */
struct df_ra {
    struct df_ra_stream s[DF_RA_STREAMS];
    uint64_t tick;
};

/* One read of [off, end) with window limit max.  Returns the stream it
 * belongs to; *out_from, *out_to: the datafile range to prefetch now
 * (empty when *out_from >= *out_to). */
unsigned df_ra_feed(struct df_ra *ra, uint64_t off, uint64_t end, uint64_t max,
                    uint64_t *out_from, uint64_t *out_to);
/* The caller asked for stream i's blocks up to datafile offset upto (the
 * L1 may stop short of what df_ra_feed gave). */
void df_ra_advance(struct df_ra *ra, unsigned i, uint64_t upto);

struct dfstore;
struct datafile;
/* A read of df started (no write of df runs): feeds it to df's streams
 * and prefetches what they want into the L1. */
void df_ra_read(struct dfstore *ds, struct datafile *df, const struct ipvfs_pair *pairs,
                uint32_t npairs, uint64_t max);

#endif
