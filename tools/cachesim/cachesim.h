/* tools/cachesim/: ipvfs-cachesim, the trace-driven simulator of the
 * journal paper's section 5.2: the same block accesses played against
 *   PVFS:   S servers, each one LRU level of pvfs_bytes;
 *   uCache: S / (1 + T) I/O nodes (rounded down: never more memory than
 *           PVFS), each an L1 LRU of l1_bytes in front of T targets, each
 *           an L2 of l2_bytes under the chosen policy (cache/cache.h).
 * Both link cache/ (the policies the live servers run), 64 KiB blocks.
 *
 * Block mapping: a file's byte goes to an I/O node by the project's
 * striping (common/layout.h: 64 KiB unit, over every I/O node of the
 * configuration, starting at node file % nio), and within an I/O node to
 * a target by iRAID's layout (iraid/layout.h: RAID-0 below 3 targets,
 * RAID-5 from 3), the datafile's block b at volume chunk
 * (file << 24) + b (each datafile contiguous on the volume).
 *
 * uCache protocol per block, as the live I/O node would run it: an L1
 * access (a write dirties the block); on a miss, a read from the block's
 * target with DPO (the fill of a partial write too, so writes count like
 * reads); then L1's victim, if any, goes down: stored if dirty
 * (write-back), offered as a demote if clean.  Hit ratios: l1 = L1
 * hits / accesses, l2 = L2 hits / L2 reads (L1 misses), cumulative =
 * (L1 + L2 hits) / accesses, pvfs = PVFS hits / accesses.
 *
 * Trace format (--trace FILE), one access per line, fields separated by
 * blanks, '#' starts a comment, blank lines are skipped:
 *     CLIENT FILE OFFSET LENGTH OP
 * CLIENT and FILE are decimal numbers (FILE < 2^24), OFFSET and LENGTH
 * bytes (0 < LENGTH <= 1 GiB, OFFSET + LENGTH <= 2^50), OP is r or w.
 * Every 64 KiB block the byte range touches is one access.  A malformed
 * line is refused with its line number.  Lines that start with a capital
 * letter are version-2/3 events (below), which this request model skips.
 *
 * Version 3 (what a live I/O node's --trace writes, one file per I/O
 * node; version 2, the same lines, was written by I/O nodes whose L1
 * filled every R miss, and is replayed so): a header line
 *   #ipvfs-trace 3 io=N raid=L members=M chunk=BYTES l1=BYTES l2=BYTES l2_policy=P ra=BYTES
 * (the volume's iRAID level, members and chunk, the server's --cache-l1,
 * --cache-l2 per target, --cache-l2-policy and --readahead (0 when the L1
 * is off); the replay refuses ra > 0: the read-ahead pool beside the L1
 * is not modelled, record with --readahead 0; a new header in mid-file is
 * a restarted I/O node), the requests as they arrive (the lines above,
 * FILE the datafile handle modulo 2^24), and the L1's events, volume
 * offsets in bytes (backend/dfstore/l1cache.h, df_l1_set_trace):
 *     R OFF LEN      a volume read through the L1; a miss of less than
 *                    a block fills only when cache/cache.h's admission
 *                    lets it (version 3; version 2 filled every miss, and
 *                    wrote the store's read-modify-write reads as R)
 *     M OFF LEN      the store's read of old bytes a write keeps (read-
 *                    modify-write): a miss reads past the L1 (the write is
 *                    absorbed around it; before issue 27 a miss filled)
 *     B OFF LEN      a stream's volume read (DF_L1_STREAM_MIN): a miss
 *                    reads past the L1, no fill
 *     W OFF LEN T    a volume write, T 1 when it must go through
 *     U OFF LEN T    a stream's volume write (l1cache.h, DF_L1_STREAM_MIN on
 *                    a volume without parity): through, and whole blocks
 *                    not cached stay out of the L1
 *     P OFF LEN      a read-ahead fill of the blocks of the range not
 *                    cached (none while the L1 has no read-ahead)
 *     D VB           volume block VB discarded (its file removed)
 *     V SLOT OK      a fill into L1 slot SLOT completed (OK 1) or failed
 *     S SLOT K       a write-back of SLOT's block started, block K (from 0)
 *                    of one volume write of adjacent blocks
 *     C SLOT OK      that write-back completed (OK 1) or failed
 *     X OFF LEN      a write that went to the volume failed
 * --trace on such a file replays the events (--replay live, its default):
 * live.c models the L1 and the targets' L2s as the servers run them, and
 * prints their counters as ipvfs-ctl stats counts them; --replay requests
 * plays the request lines through the model above instead.
 *
 * Synthetic workloads (--workload NAME), modelled on the paper's Table 1;
 * each request is one client reading or writing a run of blocks of one
 * file chosen by a Zipf law over files (ranks in a random order), all
 * deterministic from --seed; file sizes are log-uniform:
 *   cello92  4 clients sharing 10.4 GB of files of 1 to 64 blocks, Zipf
 *            1.3, runs of 1-8 blocks at random places, 30% writes; the
 *            popularity ranks drift by 5 files every 2000 requests (a
 *            timesharing system's working set moves); 500,000 requests;
 *            6 servers, L1 24 MB + L2 12 MB vs PVFS 16 MB;
 *   httpd    7 clients sharing 524 MB of files of 1 to 16 blocks, Zipf
 *            1.2, whole files, reads only, static popularity; 200,000
 *            requests; 6 servers, 24 MB + 12 MB vs 16 MB;
 *   db2      8 clients each on its own eighth of 5.2 GB (tables of 64 to
 *            4096 blocks), Zipf 0.3 over tables, each request the next
 *            8-64 blocks of a scan of its table (wrapping): reuse
 *            distances as long as the tables; 10% writes; 100,000
 *            requests (3.4 million block accesses); 39 servers (the
 *            paper's 40 is no multiple of 3: 13 I/O nodes x 3 = 39 nodes
 *            for both), 256 MB + 64 MB vs 128 MB.
 * The parameters live in workload.c's table, one row per workload. */
#ifndef IPVFS_CACHESIM_H
#define IPVFS_CACHESIM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cache/cache.h"

struct sim_req {
    uint32_t client;
    uint32_t file;
    uint64_t offset, length;    /* bytes */
    int write;
};

struct sim_config {
    uint32_t servers;           /* nodes in all (S) */
    uint32_t targets;           /* per I/O node (T), >= 1 */
    uint64_t l1_bytes, l2_bytes, pvfs_bytes;
    const struct cache_ops *l2_policy;
};

struct sim_result {
    uint64_t accesses;          /* block accesses */
    uint64_t pvfs_hits;
    uint64_t l1_hits, l2_reads, l2_hits;
    uint64_t demotions, writebacks;
    uint32_t io_nodes;
};

struct sim;

/* Checks cfg and sets up every cache level.  NULL with a message in err
 * (a bad configuration, or out of memory). */
struct sim *sim_new(const struct sim_config *cfg, char *err, size_t errlen);
void sim_free(struct sim *s);
/* Plays one request. */
void sim_play(struct sim *s, const struct sim_req *r);
void sim_result(const struct sim *s, struct sim_result *out);

/* A synthetic workload: its defaults (the paper's configuration for it)
 * and the paper's figures, from Tables 2-4, for its two server counts. */
struct wl_paper {
    uint32_t servers;           /* ours (equal memory for both systems) */
    uint32_t paper_servers;     /* the paper's row */
    double pvfs, l1, l2, cumulative;
};
struct wl_info {
    const char *name;
    uint32_t servers, targets;
    uint64_t l1_bytes, l2_bytes, pvfs_bytes;
    uint64_t requests;          /* default trace length */
    struct wl_paper paper[2];
};
struct wl;

/* The workload named name, or NULL. */
const struct wl_info *wl_find(const char *name);
/* A generator of requests requests of the named workload from seed.  NULL
 * on an unknown name or out of memory. */
struct wl *wl_new(const char *name, uint64_t requests, uint64_t seed);
void wl_free(struct wl *w);
/* The next request; 0 at the end. */
int wl_next(struct wl *w, struct sim_req *out);

/* Version-2 traces (live.c). */
struct live_config {
    unsigned version;                   /* of the trace: 2 or 3 */
    int raid;
    uint32_t members;
    uint64_t chunk;
    uint64_t l1_bytes, l2_bytes;        /* l2_bytes per target */
    uint64_t readahead;                 /* --readahead; replayed only when 0 */
    const struct cache_ops *l2_policy;
};
struct live_result {
    uint64_t l1_hits, l1_misses, l1_bypasses;   /* as ipvfs-ctl stats counts */
    uint64_t l1_evictions, l1_demotes, l1_writes_absorbed, l1_prefetches;
    uint64_t l2_hits, l2_misses, l2_demotes_kept;  /* all targets */
};
/* Parses a version-2 or 3 header line (no newline); 0 or -1. */
int live_header(const char *line, struct live_config *out);
/* Replays a version-2 trace from in; the L2's size and policy may be
 * overridden (nonzero l2_bytes, non-NULL l2_policy in overrides; the L1's
 * cannot be: its events name its slots).  0, or -1 with a message naming
 * the line in err. */
int live_replay(FILE *in, const struct live_config *overrides, struct live_config *out_cfg,
                struct live_result *out, char *err, size_t errlen);

/* Reads the next access of a trace (format above) from in.  1 with a
 * request, 0 at the end, -1 with a message naming the line in err. */
int trace_next(FILE *in, uint64_t *io_lineno, struct sim_req *out, char *err, size_t errlen);
/* Writes r as one trace line; 0 or -1 (errno set). */
int trace_write(FILE *out, const struct sim_req *r);

#endif
