/* Unit tests of the collective path's decision (adio/ad_ipvfs/
 * ad_ipvfs_choice.c): exact decisions on hand-made accesses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "adio/ad_ipvfs/ad_ipvfs_choice.h"

#define KIB 1024ull
#define MIB (1024ull * 1024ull)

/* 2 I/O nodes, 64 KiB units and b, 2 aggregators of 16 MiB. */
static const struct coll_shape shape = {
    .unit = 64 * KIB,.block = 64 * KIB,.cb = 16 * MIB,.factor = 2,.naggs = 2
};

/* Counts nranks ranks' pieces, made by piece(rank, k, &pair), into an
 * access summary as ad_ipvfs_collpick.c does. */
static struct coll_access summarize_on(const struct coll_shape *sh, int nranks, size_t per_rank,
                                       void (*piece)(int, size_t, struct coll_pair *))
{
    struct coll_pair *all = malloc((size_t) nranks * per_rank * sizeof(*all));
    struct coll_access a = { 0 };

    assert_non_null(all);
    for (int r = 0; r < nranks; r++) {
        struct coll_rank cr;

        for (size_t k = 0; k < per_rank; k++)
            piece(r, k, &all[(size_t) r * per_rank + k]);
        assert_int_equal(coll_count_rank(sh, &all[(size_t) r * per_rank], per_rank, &cr), 0);
        a.bytes += cr.bytes;
        a.pairs_ind += cr.pairs;
        a.requests_ind += cr.requests;
    }
    coll_scan_union(sh, all, (size_t) nranks * per_rank, &a.overlap, &a.pairs_2p);
    free(all);
    return a;
}

static struct coll_access summarize(int nranks, size_t per_rank,
                                    void (*piece)(int, size_t, struct coll_pair *))
{
    return summarize_on(&shape, nranks, per_rank, piece);
}

/* mpi-tile-io, 2x2 tiles of 1024x1024 elements of 32 bytes: each rank
 * writes 1024 rows of 32 KiB; a file row is 64 KiB. */
static void tile_piece(int r, size_t k, struct coll_pair *p)
{
    p->off = ((uint64_t) (r / 2) * 1024 + k) * 64 * KIB + (uint64_t) (r % 2) * 32 * KIB;
    p->len = 32 * KIB;
}

/* 32-byte pieces of 4 ranks taking turns (IOR strided with a tiny block). */
static void tiny_piece(int r, size_t k, struct coll_pair *p)
{
    p->off = (uint64_t) k * 128 + (uint64_t) r * 32;
    p->len = 32;
}

/* 64 ranks, one 512-byte piece in each of 8 stripe units (8 I/O nodes):
 * rank r's pieces lie side by side with rank r + 1's. */
static void spread_piece(int r, size_t k, struct coll_pair *p)
{
    p->off = (uint64_t) k * 64 * KIB + (uint64_t) r * 512;
    p->len = 512;
}

/* Every rank writes the same 4 KiB pieces. */
static void same_piece(int r, size_t k, struct coll_pair *p)
{
    (void) r;
    p->off = (uint64_t) k * 8 * KIB;
    p->len = 4 * KIB;
}

static void test_tile_goes_independent(void **state)
{
    const struct coll_costs c = COLL_COST_DEFAULTS;
    struct coll_access a = summarize(4, 1024, tile_piece);

    (void) state;
    assert_int_equal(a.bytes, 128 * MIB);
    assert_int_equal(a.pairs_ind, 4096);
    /* per rank: 2 I/O nodes, 16 MiB each: 2 requests of 8 MiB each */
    assert_int_equal(a.requests_ind, 16);
    assert_int_equal(a.overlap, 0);
    /* the union is the whole 128 MiB, cut at 64 KiB */
    assert_int_equal(a.pairs_2p, 2048);
    assert_int_equal(coll_choose(&shape, &a, &c, 1, COLL_AUTO), COLL_INDEPENDENT);
    assert_int_equal(coll_choose(&shape, &a, &c, 0, COLL_AUTO), COLL_INDEPENDENT);
    assert_int_equal(coll_choose(&shape, &a, &c, 1, COLL_FORCE_TWOPHASE), COLL_TWOPHASE);
}

/* 32-byte pieces: merging saves pairs, but here a pair costs less at the
 * I/O node (pair_us) than two-phase spends on a piece (piece_us), so they
 * go independent; where a pair costs more (slow media), two-phase. */
static void test_tiny_pieces(void **state)
{
    const struct coll_costs c = COLL_COST_DEFAULTS;
    struct coll_costs slow = COLL_COST_DEFAULTS;
    struct coll_access a = summarize(4, 32768, tiny_piece);

    (void) state;
    slow.pair_us = 5.0;
    assert_int_equal(a.bytes, 4 * MIB);
    assert_int_equal(a.pairs_ind, 131072);
    /* per rank 16384 pairs per I/O node: one request each */
    assert_int_equal(a.requests_ind, 8);
    assert_int_equal(a.overlap, 0);
    assert_int_equal(a.pairs_2p, 64);
    assert_int_equal(coll_choose(&shape, &a, &c, 1, COLL_AUTO), COLL_INDEPENDENT);
    assert_int_equal(coll_choose(&shape, &a, &slow, 1, COLL_AUTO), COLL_TWOPHASE);
    assert_int_equal(coll_choose(&shape, &a, &slow, 0, COLL_AUTO), COLL_TWOPHASE);
    assert_int_equal(coll_choose(&shape, &a, &slow, 1, COLL_FORCE_INDEPENDENT),
                     COLL_INDEPENDENT);
}

/* Online calibration: an observation sets its path's scale (observed
 * over modelled), later ones average in, short calls and absurd ratios
 * do not move it far.  The tiny pieces, with pairs at 1.2 us, go
 * independent by less than COLL_EXPLORE; measured 3x slower than modelled, two-phase (not measured yet, and
 * now close) is explored once; measured 4x slower still, independent
 * stays; measured fast, two-phase wins.  A clear win is never explored. */
static void test_calibration(void **state)
{
    struct coll_costs c = COLL_COST_DEFAULTS;
    struct coll_calib cal = COLL_CALIB_INIT;
    struct coll_access a = summarize(4, 32768, tiny_piece);
    double ind = coll_cost_full(&shape, &a, &c, COLL_INDEPENDENT);
    double tp = coll_cost_full(&shape, &a, &c, COLL_TWOPHASE);
    int explore = -1;

    (void) state;
    c.pair_us = 1.2;
    ind = coll_cost_full(&shape, &a, &c, COLL_INDEPENDENT);
    tp = coll_cost_full(&shape, &a, &c, COLL_TWOPHASE);
    assert_true(tp - ind > coll_cost_twophase(&shape, &a, &c) -
                coll_cost_independent(&a, &c) - 1e-6);
    coll_calib_note(&cal, COLL_INDEPENDENT, 1000.0, COLL_CALIB_MIN_US / 2);
    assert_int_equal(cal.samples[COLL_INDEPENDENT], 0);
    coll_calib_note(&cal, COLL_INDEPENDENT, 1000.0, 4000.0);
    assert_int_equal(cal.samples[COLL_INDEPENDENT], 1);
    assert_true(cal.scale[COLL_INDEPENDENT] > 3.999 && cal.scale[COLL_INDEPENDENT] < 4.001);
    coll_calib_note(&cal, COLL_INDEPENDENT, 1000.0, 2000.0);
    assert_true(cal.scale[COLL_INDEPENDENT] > 2.999 && cal.scale[COLL_INDEPENDENT] < 3.001);
    coll_calib_note(&cal, COLL_TWOPHASE, 1000.0, 1e12);
    assert_true(cal.scale[COLL_TWOPHASE] == COLL_CALIB_CLAMP);

    cal = COLL_CALIB_INIT;
    assert_true(tp > ind && tp < COLL_EXPLORE * ind);
    assert_int_equal(coll_choose_cal(&shape, &a, &c, &cal, 1, COLL_AUTO, NULL), COLL_INDEPENDENT);
    for (unsigned i = 0; i < COLL_EXPLORE_AFTER; i++) {
        assert_int_equal(coll_choose_cal(&shape, &a, &c, &cal, 1, COLL_AUTO, NULL),
                         COLL_INDEPENDENT);
        coll_calib_note(&cal, COLL_INDEPENDENT, ind, 3.0 * ind);
    }
    assert_int_equal(coll_choose_cal(&shape, &a, &c, &cal, 1, COLL_AUTO, &explore),
                     COLL_TWOPHASE);
    assert_int_equal(explore, 1);
    assert_int_equal(coll_choose_cal(&shape, &a, &c, &cal, 1, COLL_FORCE_INDEPENDENT, NULL),
                     COLL_INDEPENDENT);
    coll_calib_note(&cal, COLL_TWOPHASE, tp, 4.0 * tp);
    assert_int_equal(coll_choose_cal(&shape, &a, &c, &cal, 1, COLL_AUTO, NULL), COLL_INDEPENDENT);
    for (int i = 0; i < 6; i++)
        coll_calib_note(&cal, COLL_TWOPHASE, tp, tp);
    assert_int_equal(coll_choose_cal(&shape, &a, &c, &cal, 1, COLL_AUTO, NULL), COLL_TWOPHASE);
    assert_int_equal(coll_choose_cal(&shape, &a, &c, NULL, 1, COLL_AUTO, NULL), COLL_INDEPENDENT);
}

/* A clear win (the tiles: independent far cheaper) is never explored. */
static void test_no_exploring_clear_wins(void **state)
{
    const struct coll_costs c = COLL_COST_DEFAULTS;
    struct coll_calib cal = COLL_CALIB_INIT;
    struct coll_access a = summarize(4, 1024, tile_piece);
    double ind = coll_cost_full(&shape, &a, &c, COLL_INDEPENDENT);

    (void) state;
    assert_true(coll_cost_full(&shape, &a, &c, COLL_TWOPHASE) > COLL_EXPLORE * ind);
    for (unsigned i = 0; i < 2 * COLL_EXPLORE_AFTER; i++)
        coll_calib_note(&cal, COLL_INDEPENDENT, ind, 2.0 * ind);
    assert_int_equal(coll_choose_cal(&shape, &a, &c, &cal, 1, COLL_AUTO, NULL), COLL_INDEPENDENT);
    assert_int_equal(coll_choose_cal(&shape, &a, &c, &cal, 0, COLL_AUTO, NULL), COLL_INDEPENDENT);
}

/* coll_scan_progs gives what the scan of the expanded pieces gives, on
 * random sets of progressions: overlapping or not, adjacent, equal
 * offsets, ranks with no pieces, one piece, up to 9 ranks (a heap of
 * more than one level); and sets whose strides all look alike (its
 * one-stride answer): pieces apart, overlapping, joining the next
 * stride's, columns tiling the stride whole or with one left out, in
 * strides of 64 KiB multiples and in narrow ones (32-byte columns, a
 * stride no multiple of the grain: one run throughout, or, one left out,
 * the heap). */
static void test_scan_progs(void **state)
{
    enum { MAXK = 9, MAXN = 16 };
    struct coll_prog g[MAXK];
    struct coll_pair *all = malloc(MAXK * MAXN * sizeof(*all));
    unsigned char scratch[COLL_SCAN_PROGS_SCRATCH(MAXK)];
    uint64_t x = 2463534242ull, p1, p2;
    int ov1, ov2, overlapping = 0, disjoint = 0;

    (void) state;
    assert_non_null(all);
    for (int round = 0; round < 2000; round++) {
        size_t k, total = 0;

        uint64_t n, S, base, shape_kind;

        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        k = 1 + x % MAXK;
        shape_kind = (x >> 40) % 4;
        n = 2 + (x >> 8) % (MAXN - 1);
        S = (1 + (x >> 16) % 2) * 64 * KIB;
        base = (x >> 24) % 4 * 64 * KIB + (x >> 48) % 3 * 4096;
        for (size_t i = 0; i < k; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            if (shape_kind == 0) {          /* anything */
                g[i].n = x % 5 == 0 ? 0 : 1 + (x >> 8) % MAXN;
                g[i].len = 1 + (x >> 16) % 96;
                g[i].stride = g[i].len + (x >> 24) % 4 * 32;   /* 0: back to back */
                g[i].off = (x >> 32) % 4096;
            } else if (shape_kind == 1) {   /* every stride alike: scan_periodic */
                g[i] = (struct coll_prog) { base + (x >> 8) % (S / 2), S, 1 + (x >> 24) % (S / 2),
                                            x % 7 == 0 ? 0 : n };
            } else {                        /* columns that tile the stride, maybe one left out */
                uint64_t St = shape_kind == 2 ? S : 32 * k + (x >> 32) % 3 * 8;   /* narrow */

                g[i] = (struct coll_prog) { base + i * (St / k), St, St / k,
                                            (x >> 8) % 4 == 0 ? 0 : n };
                if (i == k - 1)
                    g[i].len = St - i * (St / k);
            }
            coll_prog_expand(&g[i], &all[total]);
            total += g[i].n;
        }
        coll_scan_union(&shape, all, total, &ov1, &p1);
        coll_scan_progs(&shape, g, k, scratch, &ov2, &p2);
        assert_int_equal(ov1, ov2);
        assert_int_equal(p1, p2);
        overlapping += ov1;
        disjoint += !ov1 && total > 0;
    }
    assert_true(overlapping > 100 && disjoint > 100);   /* both kinds were tried */
    free(all);
}

/* Progressions: the tiny pieces of each rank are one (32 bytes every
 * 128); their expansion gives the pieces back, and the union scan of the
 * expanded ranks finds what the scan of the pieces finds.  Uneven
 * lengths, uneven or backward steps are no progression; 0 and 1 piece
 * are. */
static void test_progressions(void **state)
{
    enum { PER = 4096 };
    struct coll_pair *mine = malloc(4 * PER * sizeof(*mine)), *back = malloc(4 * PER *
                                                                          sizeof(*back));
    struct coll_prog g;
    int ov1, ov2;
    uint64_t p1, p2;

    (void) state;
    assert_non_null(mine);
    assert_non_null(back);
    for (int r = 0; r < 4; r++) {
        for (size_t k = 0; k < PER; k++)
            tiny_piece(r, k, &mine[(size_t) r * PER + k]);
        assert_int_equal(coll_as_prog(&mine[(size_t) r * PER], PER, &g), 1);
        assert_int_equal(g.n, PER);
        assert_int_equal(g.len, 32);
        assert_int_equal(g.stride, 128);
        coll_prog_expand(&g, &back[(size_t) r * PER]);
    }
    assert_memory_equal(mine, back, 4 * PER * sizeof(*mine));
    coll_scan_union(&shape, mine, 4 * PER, &ov1, &p1);
    coll_scan_union(&shape, back, 4 * PER, &ov2, &p2);
    assert_int_equal(ov1, 0);
    assert_int_equal(ov1, ov2);
    assert_int_equal(p1, p2);
    /* a rank shifted by 16 bytes overlaps its neighbour: found as well */
    assert_int_equal(coll_as_prog(&mine[PER], PER, &g), 1);
    g.off += 16;
    coll_prog_expand(&g, &back[PER]);
    coll_scan_union(&shape, back, 4 * PER, &ov2, &p2);
    assert_int_equal(ov2, 1);

    mine[3].len = 31;
    assert_int_equal(coll_as_prog(mine, PER, &g), 0);
    mine[3].len = 32;
    mine[5].off += 1;
    assert_int_equal(coll_as_prog(mine, PER, &g), 0);
    assert_int_equal(coll_as_prog(mine, 1, &g), 1);
    assert_int_equal(g.n, 1);
    assert_int_equal(coll_as_prog(mine, 0, &g), 1);
    assert_int_equal(g.n, 0);
    back[0] = (struct coll_pair) {1000, 10};
    back[1] = (struct coll_pair) {500, 10};
    assert_int_equal(coll_as_prog(back, 2, &g), 0);
    free(mine);
    free(back);
}

/* Many ranks with a little data on every I/O node: 512 list requests
 * independent, 9 two-phase. */
static void test_many_small_requests(void **state)
{
    const struct coll_costs c = COLL_COST_DEFAULTS;
    const struct coll_shape wide = {
        .unit = 64 * KIB,.block = 64 * KIB,.cb = 16 * MIB,.factor = 8,.naggs = 8
    };
    struct coll_access a = summarize_on(&wide, 64, 8, spread_piece);

    (void) state;
    assert_int_equal(a.bytes, 256 * KIB);
    assert_int_equal(a.requests_ind, 512);
    assert_int_equal(a.pairs_2p, 8);
    assert_int_equal(a.overlap, 0);
    assert_int_equal(coll_choose(&wide, &a, &c, 1, COLL_AUTO), COLL_TWOPHASE);
    assert_int_equal(coll_choose(&wide, &a, &c, 0, COLL_AUTO), COLL_TWOPHASE);
}

/* Overlapping writes go two-phase whatever the costs; reads need not. */
static void test_overlap(void **state)
{
    const struct coll_costs c = COLL_COST_DEFAULTS;
    struct coll_access a = summarize(4, 64, same_piece);

    (void) state;
    assert_int_equal(a.overlap, 1);
    assert_int_equal(a.pairs_2p, 64);
    assert_int_equal(coll_choose(&shape, &a, &c, 1, COLL_AUTO), COLL_TWOPHASE);
    assert_int_equal(coll_choose(&shape, &a, &c, 0, COLL_AUTO), COLL_INDEPENDENT);
    assert_int_equal(coll_choose(&shape, &a, &c, 1, COLL_FORCE_INDEPENDENT), COLL_INDEPENDENT);
}

/* Pieces that touch but do not share a byte are no overlap; one byte
 * shared is. */
static void test_scan_union(void **state)
{
    struct coll_pair p[3] = { {100, 50}, {0, 100}, {150, 10} };
    struct coll_pair q[2] = { {0, 101}, {100, 10} };
    int overlap;
    uint64_t pairs;

    (void) state;
    coll_scan_union(&shape, p, 3, &overlap, &pairs);
    assert_int_equal(overlap, 0);
    assert_int_equal(pairs, 1);
    coll_scan_union(&shape, q, 2, &overlap, &pairs);
    assert_int_equal(overlap, 1);
    assert_int_equal(pairs, 1);
    coll_scan_union(&shape, q, 0, &overlap, &pairs);
    assert_int_equal(overlap, 0);
    assert_int_equal(pairs, 0);
}

static void test_cut_and_count(void **state)
{
    struct coll_pair *p = malloc(20000 * sizeof(*p));
    struct coll_rank r;

    (void) state;
    assert_int_equal(coll_cut_pairs(&shape, 0, 64 * KIB), 1);
    assert_int_equal(coll_cut_pairs(&shape, 1, 64 * KIB), 2);
    assert_int_equal(coll_cut_pairs(&shape, 0, 1 * MIB), 16);
    assert_int_equal(coll_cut_pairs(&shape, 5, 0), 0);
    /* 20000 pieces on I/O node 0: two requests (16384 pairs each) */
    assert_non_null(p);
    for (size_t k = 0; k < 20000; k++)
        p[k] = (struct coll_pair) { k * 2, 1 };
    assert_int_equal(coll_count_rank(&shape, p, 20000, &r), 0);
    assert_int_equal(r.pairs, 20000);
    assert_int_equal(r.bytes, 20000);
    assert_int_equal(r.requests, 2);
    free(p);
}

/* Interleaving between any two ranks, empty accesses (last < first)
 * ignored: rank 1 with nothing to do must not hide ranks 0 and 2. */
static void test_ranges(void **state)
{
    const int64_t apart[] = { 0, 99, 100, 199, 200, 299 };
    const int64_t hidden[] = { 0, 99, 0, -1, 50, 60 };
    const int64_t far[] = { 0, 99, 500, 599, 200, 299, 90, 95 };
    const int64_t touch[] = { 0, 100, 100, 200 };
    const int64_t empty[] = { 5, 4, 5, 4 };

    (void) state;
    assert_int_equal(coll_ranges_interleave(apart, 3), 0);
    assert_int_equal(coll_ranges_interleave(hidden, 3), 1);
    assert_int_equal(coll_ranges_interleave(far, 4), 1);
    assert_int_equal(coll_ranges_interleave(touch, 2), 1);
    assert_int_equal(coll_ranges_interleave(empty, 2), 0);
}

/* The union sort: sorted runs (one per rank) merge, and so does any
 * order (more runs than the merge takes go to qsort). */
static void test_sort_runs(void **state)
{
    enum { N = 5000 };
    struct coll_pair *p = malloc(N * sizeof(*p));
    int overlap;
    uint64_t pairs;

    (void) state;
    assert_non_null(p);
    for (int order = 0; order < 3; order++) {
        for (size_t k = 0; k < N; k++) {
            size_t v = order == 0 ? k % 715 * 7 + k / 715 :    /* 7 runs, interleaved */
                order == 1 ? N - 1 - k :        /* N runs */
                0;              /* scrambled, below */

            p[k] = (struct coll_pair) { (uint64_t) v * 10, 10 };
        }
        if (order == 2) /* a permutation: gcd(7919, N) = 1 */
            for (size_t k = 0; k < N; k++)
                p[k].off = (uint64_t) ((k * 7919u) % N) * 10;
        coll_scan_union(&shape, p, N, &overlap, &pairs);
        for (size_t k = 1; k < N; k++)
            assert_true(p[k - 1].off < p[k].off);
        assert_int_equal(overlap, 0);
        if (order != 0)
            assert_int_equal(pairs, 1);
    }
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tile_goes_independent),
        cmocka_unit_test(test_tiny_pieces),
        cmocka_unit_test(test_calibration),
        cmocka_unit_test(test_no_exploring_clear_wins),
        cmocka_unit_test(test_progressions),
        cmocka_unit_test(test_many_small_requests),
        cmocka_unit_test(test_overlap),
        cmocka_unit_test(test_scan_union),
        cmocka_unit_test(test_scan_progs),
        cmocka_unit_test(test_cut_and_count),
        cmocka_unit_test(test_ranges),
        cmocka_unit_test(test_sort_runs),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
