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
 *   two-phase   = R_2p * req + P_2p * pair + B * xchg + rounds * round
 * P_ind: the (offset, length) pairs the ranks' list requests carry, runs
 *   cut at stripe units and at the schedule block b; R_ind: their list
 *   requests (per rank and I/O node, IPVFS_MAX_PAIRS pairs and
 *   IPVFS_MAX_IO_BYTES each);
 * P_2p: the pairs left when adjacent pieces of different ranks merge at
 *   the aggregators, cut the same way; R_2p: rounds times the I/O nodes
 *   (or aggregators, if more) plus one per IPVFS_MAX_PAIRS pairs;
 * B: all ranks' bytes, moved once between ranks (pack, Alltoallv, sort);
 * rounds: two-phase rounds, ceil(B / (aggregators * cb_buffer_size)).
 *
 * Calibration: struct coll_costs holds the per-request, per-pair,
 * per-byte-exchanged and per-round costs.  COLL_COST_DEFAULTS are the
 * figures of benchmarks/collective-choice.sh on the development host
 * (2 cores, loopback TCP; see benchmarks/results/collective-choice.txt for
 * the run): a list request round trip ~150 us, a pair at the I/O node and
 * target ~2 us, the exchange ~3 ns per byte (mpi-tile-io 2x2 x 32 B: the
 * two-phase write took ~0.4 s more than the independent one for 128 MiB),
 * a round's Alltoall/Alltoallv ~100 us.  The break-even piece size is
 * then pair / xchg ~ 700 bytes: pieces much smaller than that that merge
 * at the aggregators go two-phase, larger ones independent. */
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

/* Costs in microseconds (xchg_us: per byte). */
struct coll_costs {
    double req_us, pair_us, xchg_us, round_us;
};
#define COLL_COST_DEFAULTS ((struct coll_costs) { 150.0, 2.0, 0.003, 100.0 })

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

/* The model's estimates in microseconds (for the rule and for tests). */
double coll_cost_independent(const struct coll_access *a, const struct coll_costs *c);
double coll_cost_twophase(const struct coll_shape *s, const struct coll_access *a,
                          const struct coll_costs *c);

/* The rule above. */
enum coll_path coll_choose(const struct coll_shape *s, const struct coll_access *a,
                           const struct coll_costs *c, int writing, enum coll_force force);

#endif
