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
 * Strided streams (issue 27): a read of several pairs is walked pair by
 * pair.  A pair that starts past the stream's end by a skip holding a
 * whole store block (DFSTORE_BLOCK) nobody asked for is a jump: the
 * stream's run (the bytes read back to back since its last jump) ended
 * there, and the jump gives its pattern, runs of the last run's length
 * every stride (from the last run's start to the new one's).  A pattern
 * that the next jump repeats is confirmed; from then on the window counts
 * only the pattern's bytes, and a top-up asks for the blocks of the
 * pattern's runs ahead (at most DF_RA_RANGES of them a read), never the
 * skips between them: in a 2 x 2 tile of 1 MiB rows each reader's half
 * of a datafile is 512 KiB read, 512 KiB skipped, and a window over the
 * skips prefetched the other reader's blocks (40% of the blocks read, at
 * half the throughput of --cache-l1 0).  A stream whose pattern is not
 * confirmed, or that jumps somewhere else (the pattern changed: it is
 * learned again, what lies ahead is forgotten), asks for nothing.  A read
 * that starts where a confirmed pattern's next run starts continues the
 * stream, as one that starts where its last read ended.  Skips within a
 * block cost nothing extra (the block is read anyway) and count as
 * contiguous.
 *
 * Prefetching (df_ra_read): the wanted ranges' blocks that hold data
 * (mapped, below the datafile's size) go to the L1 (df_l1_prefetch, which
 * bounds memory and blocks in flight and never lets an unread prefetch
 * evict anything: l1cache.h); where the L1 stops, the stream's next read
 * goes on.  Only called when the read starts, that is while no write of
 * the datafile runs: a write queued later finds the blocks being filled
 * or prefetched and drops them (l1cache.h), so no prefetch returns bytes
 * a write replaced.
 *
 * The I/O node passes a limit of 0 for a READ that starts while others
 * wait for a place in the store (backend/server/ionode.c, read_start):
 * read-ahead only fills the time the store would otherwise idle.
 *
 * df_ra_feed and df_ra_advance are pure (no I/O; test_dfstore_readahead). */
#ifndef IPVFS_DFSTORE_READAHEAD_H
#define IPVFS_DFSTORE_READAHEAD_H

#include <stdint.h>

#include "common/proto.h"

#define DF_RA_STREAMS 4
#define DF_RA_GAP (128u << 10)
#define DF_RA_MIN (128u << 10)

/* Ranges asked for by one read at most (a strided stream's runs). */
#define DF_RA_RANGES 16

struct df_ra_stream {
    uint64_t next;               /* where its next read is expected */
    uint64_t ahead;              /* prefetched (asked for) up to here */
    uint64_t window;             /* bytes (of the pattern); 0: not (yet) sequential */
    uint64_t seen;               /* bytes its reads brought so far */
    uint64_t used;               /* tick of its last read; 0: unused */
    uint64_t run;                /* where its current run started */
    uint64_t stride, len;        /* pattern: runs of len every stride from run
                                  * (stride 0: contiguous) */
    int confirmed;               /* the last jump repeated the pattern */
};

/* Per datafile, zeroed at creation. */
struct df_ra {
    struct df_ra_stream s[DF_RA_STREAMS];
    uint64_t tick;
};

/* What a read asks to prefetch: n datafile ranges [from, to), ascending. */
struct df_ra_want {
    uint32_t n;
    struct {
        uint64_t from, to;
    } r[DF_RA_RANGES];
};

/* One read of pairs[0..n) (in the order sent) with window limit max.
 * Returns the stream it belongs to (DF_RA_STREAMS: none); *want: the
 * datafile ranges to prefetch now. */
unsigned df_ra_feed(struct df_ra *ra, const struct ipvfs_pair *pairs, uint32_t n, uint64_t max,
                    struct df_ra_want *want);
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
