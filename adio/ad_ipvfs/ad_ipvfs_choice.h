/* Which way a collective read or write goes: pure arithmetic, no MPI and
 * no I/O (ad_ipvfs_choice.c; unit-tested by test/test_adio_collchoice.c).
 * Internal to the driver folder: ad_ipvfs_collpick.c gathers the inputs.
 *
 * The rule (coll_choose), per call, the same on every rank because every
 * rank gets the same struct coll_access (see ad_ipvfs_collpick.c):
 *   1. a forcing hint wins: romio_cb_write/read=enable two-phase,
 *      =disable independent;
 *   2. a write whose ranks' pieces overlap (or may overlap: too many
 *      pieces to check) goes two-phase: its aggregator writes the
 *      overlapping pieces in rank order, so each byte ends up with the
 *      data of the highest rank that wrote it (ROMIO's result too), where
 *      independent list requests would race;
 *   3. otherwise the cheaper of the two by the cost model below; a tie
 *      goes independent (no data exchange, no synchronisation).
 *
 * The cost model counts what differs between the two ways (the bytes
 * written or read at the targets are the same):
 *   independent = R_ind * req + P_ind * pair
 *   two-phase   = R_2p * req + P_2p * pair + P_ind * piece + B * xchg
 *                 + rounds * round
 * P_ind: the (offset, length) pairs the ranks' list requests carry, runs
 *   cut at stripe units and at the schedule block b; R_ind: their list
 *   requests (per rank and I/O node, IPVFS_MAX_PAIRS pairs and
 *   IPVFS_MAX_IO_BYTES each);
 * P_2p: the pairs left when adjacent pieces of different ranks merge at
 *   the aggregators, cut the same way; R_2p: rounds times the I/O nodes
 *   (or aggregators, if more) plus one per IPVFS_MAX_PAIRS pairs;
 * piece: what two-phase spends on each of the ranks' pieces (its pair in
 *   the Alltoallv, the aggregator's sort and iovec);
 * B: all ranks' bytes, moved once between ranks (pack, Alltoallv);
 * rounds: two-phase rounds, ceil(B / (aggregators * cb_buffer_size)).
 * So two-phase pays when merging saves more pairs and requests than it
 * costs to move the bytes and pieces: many ranks with a few small pieces
 * each on many I/O nodes (R_ind >> R_2p), or pieces whose pair costs more
 * at the I/O node than in the exchange (pair > piece: slow media, seeks).
 * Overlapping writes go two-phase regardless (rule 2).
 *
 * Calibration: struct coll_costs holds the per-request, per-pair,
 * per-piece, per-byte-exchanged and per-round costs.  COLL_COST_DEFAULTS
 * come from a --quick run of benchmarks/collective-choice.sh, forced
 * two-phase against forced independent on the development host (2 cores
 * shared by 4 client and 4 server ranks, loopback TCP, targets in the page
 * cache; the full run in benchmarks/results/collective-choice.txt checks
 * the resulting choices), writes, which cost more than reads: narrow-32B (65536 pieces of 32 bytes, 2 MiB) took 63 ms
 * independent, so pair ~0.9 us, and 92 ms two-phase, so piece ~1.3 us
 * after the exchange; the tiles (16 MiB, long rows) gave the exchange
 * ~3.5 ns per byte; req 150 us and round 100 us are one list request's and
 * one round's round trips.  With piece > pair nothing merges its way to a
 * win here unless requests dominate; the constants are no online
 * measurement; the online calibration below corrects them on the
 * running system.
 *
 * Online calibration (struct coll_calib, one per open file and
 * direction, the same on every rank).  The full model of a path adds
 * B * byte, the moving of the bytes at the servers (the same for both
 * paths, so it changes no static decision: byte 0.002 us, ~500 MiB/s,
 * the tiles' independent writes), which makes a call's model comparable
 * with its wall time.  Each call decided by exchange is timed on every
 * rank from the decision to its return; the next decision's allgather
 * carries that time and every rank takes the slowest rank's (the call's
 * real duration), so all ranks note the same observation.
 * coll_calib_note keeps, per path, scale = observed / modelled, clamped to
 * [1/16, 16] and averaged with the previous value (weight 1/2: the load
 * moves); calls shorter than COLL_CALIB_MIN_US are timer and scheduling
 * noise and change nothing.  The rule's step 3 then compares the scaled
 * models, scale(path) * model(path), where a path not measured yet takes
 * the other path's scale (no bias from a load that slows both), and
 *   3a. exploration: when exactly one path has been measured, at least
 *       COLL_EXPLORE_AFTER times, and the other's scaled model is within
 *       COLL_EXPLORE times the measured one's, the call takes the
 *       unmeasured path once, so that both are measured (once per file
 *       and direction, and only in a file with several calls, where one
 *       slower call is a small part: the tiles' 2 calls per file never
 *       explore; clear wins are never explored);
 *   3b. otherwise the cheaper scaled model.
 * So on a host whose servers or exchanges cost other than the constants
 * say, close decisions follow the measured times of both ways on the
 * running system; the constants stay the starting point. */
#ifndef AD_IPVFS_CHOICE_H_INCLUDED
#define AD_IPVFS_CHOICE_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

enum coll_path {
    COLL_INDEPENDENT,
    COLL_TWOPHASE
};

enum coll_force {
    COLL_AUTO,                  /* romio_cb_write/read=automatic (default) */
    COLL_FORCE_TWOPHASE,        /* =enable */
    COLL_FORCE_INDEPENDENT      /* =disable */
};

/* Costs in microseconds (xchg_us, byte_us: per byte). */
struct coll_costs {
    double req_us, pair_us, piece_us, xchg_us, round_us, byte_us;
};
#define COLL_COST_DEFAULTS ((struct coll_costs) { 150.0, 0.9, 1.3, 0.0035, 100.0, 0.002 })

/* How requests are cut: the file's stripe unit and factor (I/O nodes),
 * the schedule block b, and the two-phase aggregators and cb_buffer_size. */
struct coll_shape {
    uint64_t unit, block, cb;
    uint32_t factor, naggs;
};

/* One rank's access, as its list requests would carry it. */
struct coll_rank {
    uint64_t bytes, pairs, requests;
};

/* The whole call's access, summed over the ranks. */
struct coll_access {
    uint64_t bytes;             /* B */
    uint64_t pairs_ind, requests_ind;   /* P_ind, R_ind */
    uint64_t pairs_2p;          /* P_2p */
    int overlap;                /* 1: two ranks' pieces share a byte (or unknown) */
};

/* One (offset, length) piece of a rank's access, length > 0. */
struct coll_pair {
    uint64_t off, len;
};

/* The pairs of [off, off + len) once cut at stripe units and at b. */
uint64_t coll_cut_pairs(const struct coll_shape *s, uint64_t off, uint64_t len);

/* Counts one rank's n pieces (file order not needed) into *out: pairs and
 * list requests per I/O node.  -1 when out of memory (*out unchanged). */
int coll_count_rank(const struct coll_shape *s, const struct coll_pair *p, size_t n,
                    struct coll_rank *out);

/* Sorts all ranks' n pieces by offset and finds whether any two share a
 * byte (*out_overlap) and how many pairs their union cuts into
 * (*out_pairs: adjacent pieces merge, as at the aggregators). */
void coll_scan_union(const struct coll_shape *s, struct coll_pair *p, size_t n,
                     int *out_overlap, uint64_t *out_pairs);

/* A rank's pieces as one arithmetic progression: n pieces of len bytes
 * at off + i * stride (strided rows, IOR's segments, the narrow tiles),
 * so that ranks can tell each other their pieces in four numbers. */
struct coll_prog {
    uint64_t off, stride, len, n;
};

/* 1 when the n pieces p (in file order, len > 0) are one progression
 * (n 0 or 1 always are), filling *out; else 0. */
int coll_as_prog(const struct coll_pair *p, size_t n, struct coll_prog *out);

/* The g->n pieces of progression g, into out. */
void coll_prog_expand(const struct coll_prog *g, struct coll_pair *out);

/* coll_scan_union's answer for the pieces of the k progressions g (ranks
 * with nothing: n 0), merged as they are generated: no array of every
 * piece and no sort (a 4-rank call of 65536 32-byte pieces per rank spent
 * 13-18 ms per rank in expanding and sorting them, a fifth of its time);
 * when every stride looks alike (same count and stride, the first pieces
 * within one stride: tiles, narrow columns) one stride answers for all.
 * scratch: COLL_SCAN_PROGS_SCRATCH(k) bytes of the caller's (so that no
 * rank can decide otherwise for want of memory). */
#define COLL_SCAN_PROGS_SCRATCH(k) ((k) * sizeof(struct coll_pair))
void coll_scan_progs(const struct coll_shape *s, const struct coll_prog *g, size_t k,
                     void *scratch, int *out_overlap, uint64_t *out_pairs);

/* Whether the ranks' byte ranges share or interleave: se holds nranks
 * (first, last) byte pairs, an empty access having last < first.  Any two
 * ranks count, not only neighbours (a rank with nothing to do in between
 * hides nothing).  0 disjoint, 1 not, -1 out of memory. */
int coll_ranges_interleave(const int64_t *se, size_t nranks);

/* The model's estimates in microseconds (for the rule and for tests). */
double coll_cost_independent(const struct coll_access *a, const struct coll_costs *c);
double coll_cost_twophase(const struct coll_shape *s, const struct coll_access *a,
                          const struct coll_costs *c);

/* A path's full model (with the B * byte term), in microseconds. */
double coll_cost_full(const struct coll_shape *s, const struct coll_access *a,
                      const struct coll_costs *c, enum coll_path path);

/* The online calibration (see above), indexed by enum coll_path. */
struct coll_calib {
    double scale[2];            /* measured / modelled time */
    uint32_t samples[2];        /* observations taken */
};
#define COLL_CALIB_INIT ((struct coll_calib) { { 1.0, 1.0 }, { 0, 0 } })
#define COLL_CALIB_MIN_US 500.0
#define COLL_CALIB_CLAMP 16.0
#define COLL_EXPLORE 1.25
#define COLL_EXPLORE_AFTER 3u

/* One observation: a call that went path, modelled at model_us
 * (coll_cost_full), took observed_us. */
void coll_calib_note(struct coll_calib *cal, enum coll_path path, double model_us,
                     double observed_us);

/* The rule above, with calibration cal (NULL: the constants alone);
 * *out_explore (may be NULL) 1 when the answer is step 3a's exploration,
 * a one-off that must not be reused for later calls. */
enum coll_path coll_choose_cal(const struct coll_shape *s, const struct coll_access *a,
                               const struct coll_costs *c, const struct coll_calib *cal,
                               int writing, enum coll_force force, int *out_explore);
enum coll_path coll_choose(const struct coll_shape *s, const struct coll_access *a,
                           const struct coll_costs *c, int writing, enum coll_force force);

#endif
