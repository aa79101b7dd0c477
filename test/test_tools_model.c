/* tools/model/: the queuing model against values worked out by hand.
 *
 * M/M/1: W = T / (1 - lambda T).  M/G/1 (Pollaczek-Khinchine):
 * W = lambda E(T^2) / (2 (1 - lambda E(T))) + E(T).  Then whole
 * configurations of the papers' equations, each term written out in the
 * comments, and the saturation rate and the splits of N. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tools/model/model.h"

#define CLOSE(a, b, tol) assert_true(fabs((double)(a) - (double)(b)) <= (tol) * fabs((double)(b)))

static void test_model_mm1(void **state)
{
    (void)state;
    /* T = 1 ms at 500/s: rho 0.5, W = 1 / 0.5 = 2 ms. */
    CLOSE(model_mm1(1e-3, 500), 2e-3, 1e-12);
    /* T = 4 ms at 200/s: rho 0.8, W = 4 / 0.2 = 20 ms. */
    CLOSE(model_mm1(4e-3, 200), 20e-3, 1e-12);
    /* No load: the service time itself; at rho >= 1: saturated. */
    CLOSE(model_mm1(3e-3, 0), 3e-3, 1e-12);
    assert_true(model_mm1(1e-3, 1000) < 0);
    assert_true(model_mm1(1e-3, 2000) < 0);
}

static void test_model_mg1_pollaczek_khinchine(void **state)
{
    (void)state;
    /* E(T) 10 ms, E(T^2) 2e-4 s^2 (variance 1e-4), 50/s: rho 0.5,
     * W = 50 * 2e-4 / (2 * 0.5) + 0.01 = 0.01 + 0.01 = 20 ms. */
    CLOSE(model_mg1(10e-3, 2e-4, 50), 20e-3, 1e-12);
    /* Deterministic service (E(T^2) = E(T)^2 = 1e-4) at rho 0.5: M/D/1,
     * W = 50 * 1e-4 / 1 + 0.01 = 15 ms. */
    CLOSE(model_mg1(10e-3, 1e-4, 50), 15e-3, 1e-12);
    /* Exponential service (E(T^2) = 2 E(T)^2) is M/M/1: 4 ms at 200/s,
     * 200 * 3.2e-5 / (2 * 0.2) + 0.004 = 0.016 + 0.004 = 20 ms. */
    CLOSE(model_mg1(4e-3, 2 * 16e-6, 200), 20e-3, 1e-12);
    CLOSE(model_mg1(4e-3, 2 * 16e-6, 200), model_mm1(4e-3, 200), 1e-12);
    assert_true(model_mg1(10e-3, 2e-4, 100) < 0);
}

static void test_model_disk_preset(void **state)
{
    struct model_disk d;
    double mean, second;

    (void)state;
    model_disk_preset(&d);
    /* 64 KiB: 3.8 + 2 + 65536 / 51e6 s = 5.8 ms + 1.28502 ms. */
    model_disk_moments(&d, 65536, &mean, &second);
    CLOSE(mean, 5.8e-3 + 65536 / 51e6, 1e-12);
    /* positioning variance: 3.8^2 (225/192 - 1) + 2^2 / 3 ms^2
     * = 2.481875 + 1.333333 = 3.815208 ms^2. */
    CLOSE(d.pos_var, 3.815208333e-6, 1e-9);
    CLOSE(second, 3.815208333e-6 + mean * mean, 1e-9);
}

/* PVFS, N = 4, 64 KiB requests at 100/s, hit 0.5, the paper's machine.
 *   P_i = min(ceil(64K / 64K) / 4, 1) = 0.25; piece L_ip / Nio = 16384 B
 *   T_ionet = 16384 / 75e6 = 0.218453 ms at 25/s: W = 0.219650 ms
 *   T_ioc = 16384 / 500e6 = 0.032768 ms at 25/s: W = 0.032795 ms
 *   disk: lambda_i = 0.5 * 0.25 * 100 = 12.5/s, E(T) = 5.8 ms + 16384 /
 *   51e6 = 6.121255 ms, E(T^2) = 3.815208e-6 + 6.121255e-3^2 =
 *   4.128497e-5; W_disk = 12.5 * 4.128497e-5 / (2 (1 - 12.5 * 6.121255e-3))
 *   + 6.121255e-3 = 6.400665 ms
 *   T = 0.219650 + 0.032795 + 0.5 * 6.400665 = 3.452780 ms */
static void test_model_pvfs_by_hand(void **state)
{
    struct model_params p;
    struct model_config c = { .nio = 4, .nt = 0, .size = 65536, .h_io = 0.5 };
    struct model_terms t;

    (void)state;
    model_params_paper(&p);
    assert_int_equal(model_eval(MODEL_LCN2005, &p, &c, 100, &t), 0);
    CLOSE(t.p_i, 0.25, 1e-12);
    CLOSE(t.lambda_i, 12.5, 1e-12);
    CLOSE(t.w_disk, 6.400665e-3, 1e-6);
    CLOSE(t.total, 3.452780e-3, 1e-6);
    /* The journal's variant differs only by W_node: with T_node 0, none. */
    assert_int_equal(model_eval(MODEL_JOURNAL, &p, &c, 100, &t), 0);
    CLOSE(t.total, 3.452780e-3, 1e-6);
}

/* iPVFS 2 x (1 + 1), 64 KiB at 100/s, h_ioc = h_tc = 0.5, T_node 1 ms.
 *   P_i = 0.5; L_ir = L_ip / Nio = 32768 B; lambda_i = 0.5 * 0.5 * 100 = 25
 *   P_ij = min(ceil(32768 / 65536) / 1, 1) = 1; target piece 32768 B;
 *   lambda_ij = 0.5 * 25 = 12.5
 *   disk E(T) = 5.8 ms + 32768 / 51e6 = 6.442510 ms; W_disk = 6.750576 ms
 *   W_tnet = 0.436907 / (1 - 25 * 0.436907e-3) = 0.441733 ms; W_tc =
 *   0.065536 / (1 - 25 * 0.065536e-3) = 0.065643 ms
 *   LCN: W_iRAID = 0.441733 + 0.065643 + 0.5 * 6.750576 + 1 = 4.882663 ms;
 *   W_ionet, W_ioc at 50/s: 0.446783, 0.065751 ms;
 *   T = 0.446783 + 0.065751 + 0.5 * 4.882663 + 1 = 3.953747 ms
 *   Journal: W_node = 1 / (1 - 25 * 1e-3) = 1.025641 ms at both levels:
 *   T = 3.953747 + 0.5 * 0.025641 + 0.025641 = 3.992209 ms */
static void test_model_ipvfs_by_hand(void **state)
{
    struct model_params p;
    struct model_config c = { .nio = 2, .nt = 1, .size = 65536, .h_io = 0.5, .h_t = 0.5 };
    struct model_terms t;

    (void)state;
    model_params_paper(&p);
    p.t_node = 1e-3;
    assert_int_equal(model_eval(MODEL_LCN2005, &p, &c, 100, &t), 0);
    CLOSE(t.lambda_ij, 12.5, 1e-12);
    CLOSE(t.w_disk, 6.750576e-3, 1e-6);
    CLOSE(t.w_iraid, 4.882663e-3, 1e-6);
    CLOSE(t.total, 3.953747e-3, 1e-6);
    assert_int_equal(model_eval(MODEL_JOURNAL, &p, &c, 100, &t), 0);
    CLOSE(t.total, 3.992209e-3, 1e-6);
}

/* The same iPVFS at T_node 0: the disk saturates first, at
 * lambda_ij E(T) = 1, lambda_ij = 0.125 lambda: 1 / (0.125 * 6.442510e-3)
 * = 1241.75/s; past it model_eval says saturated. */
static void test_model_saturation(void **state)
{
    struct model_params p;
    struct model_config c = { .nio = 2, .nt = 1, .size = 65536, .h_io = 0.5, .h_t = 0.5 };
    struct model_terms t;
    double s;

    (void)state;
    model_params_paper(&p);
    s = model_saturation(MODEL_LCN2005, &p, &c);
    CLOSE(s, 1241.752, 1e-5);
    assert_int_equal(model_eval(MODEL_LCN2005, &p, &c, s * 0.99, &t), 0);
    assert_true(t.rho_max < 1 && t.rho_max > 0.98);
    assert_int_equal(model_eval(MODEL_LCN2005, &p, &c, s * 1.01, &t), 1);
    assert_true(isinf(t.total));
}

/* The corrected variant sends a 64 KiB request whole to one I/O node and
 * one target: 2 x (1 + 2) at 100/s, h 0: P_i 0.5, P_ij 0.5, one disk sees
 * 25/s of 64 KiB (E(T) = 7.085020 ms).  Its I/O node lets 2 reads into
 * the iRAID at once, each holding its place through a target, s =
 * 65536 / 500e6 + 7.085020e-3 = 7.216092 ms, and the I/O node's
 * receiving link, s_l = 65536 / 75e6 = 0.873813 ms.  MVA with 2 inside:
 * X(1) = 1 / (s + s_l) = 123.6108/s, Q_t(1) = s X(1) / 2 = 0.445994,
 * Q_l(1) = s_l X(1) = 0.108013; R_t(2) = s (1 + Q_t(1)) = 10.434423 ms,
 * R_l(2) = s_l (1 + Q_l(1)) = 0.968196 ms, X(2) = 2 / (R_t + R_l) =
 * 175.3983/s per I/O node if the target's service were exponential.
 * It is not: the disk's positioning varies by Var(pos) = 3.815208e-6 s^2
 * only, cs2 = Var / s^2 = 0.073268, and a read finding the other at its
 * target waits the residual s (1 + cs2) / 2 of it, U(1) = X(1) s / 2 =
 * 0.445994: R_t(2) = s (1 + Q_t(1)) - U(1) s (1 - cs2) / 2 = 8.943157 ms,
 * X(2) = 2 / (8.943157 + 0.968196 ms) = 201.7888/s per I/O node by
 * Reiser's recursion (model_iraid_throughput_g).  The corrected variant
 * solves the network exactly (iraid_exact.c, test_model_iraid_exact):
 * X(2) = 191.435778/s, 5.1% less; each I/O node sees lambda / 2:
 * saturation 382.871567/s, below the 4 disks' 564.57/s and the papers'
 * piece sizes' more still. */
static void test_model_corrected_pieces(void **state)
{
    struct model_params p;
    struct model_config c = { .nio = 2, .nt = 2, .size = 65536 };
    struct model_terms t;

    (void)state;
    model_params_paper(&p);
    assert_int_equal(model_eval(MODEL_CORRECTED, &p, &c, 100, &t), 0);
    CLOSE(t.piece_io, 65536, 1e-12);
    CLOSE(t.piece_t, 65536, 1e-12);
    CLOSE(t.lambda_ij, 25, 1e-12);
    assert_int_equal(t.iraid_fes, 1);
    CLOSE(model_saturation(MODEL_CORRECTED, &p, &c), 382.871567, 1e-6);
    CLOSE(model_saturation(MODEL_CORRECTED, &p, &c),
          2 * model_iraid_exact_x(2, 2, 7.216092e-3, 0.073268, 0.873813e-3, 0, 200000), 1e-6);
    CLOSE(model_iraid_throughput(2, 2, 7.216092e-3, 0, 0.873813e-3, 0), 175.3983, 1e-6);
    CLOSE(model_iraid_throughput_g(2, 2, 7.216092e-3, 0.073268, 0, 0.873813e-3, 0), 201.7888,
          1e-6);
    assert_true(model_saturation(MODEL_LCN2005, &p, &c) >
                model_saturation(MODEL_CORRECTED, &p, &c));
}

/* Mean value analysis and the flow-equivalent server by hand.
 *   X(1, k) = 1 / s; X(2, 2) = 2 / (1.5 s); X(5, 5) = 5 / (1.8 s).
 *   One place over one target is M/M/1: 4 ms at 100/s, 4 / 0.6 ms.
 *   Two places over two targets, s = 6 ms, lambda 200: mu(1) = 166.667,
 *   mu(n >= 2) = 222.222, r = 0.9; pi = 1, 1.2, then 1.08 r^m:
 *   sum 1 + 1.2 + 1.08 / 0.1 = 13, sum n pi = 1.2 + 1.08 (2 / 0.1 +
 *   0.9 / 0.01) = 120; E(N) = 120 / 13, W = E(N) / 200 = 46.1538 ms. */
static void test_model_flow_equivalent_iraid(void **state)
{
    (void)state;
    CLOSE(model_iraid_throughput(1, 4, 0.005, 0, 0, 0), 200, 1e-12);
    CLOSE(model_iraid_throughput(2, 2, 0.006, 0, 0, 0), 2 / (1.5 * 0.006), 1e-12);
    CLOSE(model_iraid_throughput(5, 5, 0.006, 0, 0, 0), 5 / (1.8 * 0.006), 1e-12);
    CLOSE(model_fes_residence(100, 1, 1, 0.004, 0, 0, 0), 0.004 / 0.6, 1e-12);
    CLOSE(model_fes_residence(100, 1, 1, 0.004, 0, 0, 0), model_mm1(0.004, 100), 1e-12);
    CLOSE(model_fes_residence(200, 2, 2, 0.006, 0, 0, 0), 120.0 / 13 / 200, 1e-12);
    assert_true(model_fes_residence(2 / (1.5 * 0.006), 2, 2, 0.006, 0, 0, 0) < 0);
}

/* The same with a target's service of squared coefficient of variation
 * cs2 (the emulated disk's is about 0.07, an exponential's 1).
 *   One place over one target is M/G/1, Pollaczek-Khinchine: s = 4 ms,
 *   deterministic (cs2 0) at 100/s, rho 0.4: W = 4 + 100 * 16e-6 /
 *   (2 * 0.6) s = 5.333333 ms (M/M/1: 6.666667 ms); cs2 0.5: E(T^2) =
 *   24e-6 s^2, W = 4 + 2 = 6 ms.
 *   Two places over two targets, s = 6 ms, cs2 0: X(1) = 166.6667/s,
 *   U(1) = Q(1) = 0.5; R(2) = s (1 + 0.5) - 0.5 s / 2 = 7.5 ms, X(2) =
 *   2 / 7.5 ms = 266.6667/s (exponential: 9 ms, 222.2222/s).  At 200/s:
 *   pi = 1, 1.2, then 0.9 r^m with r = 200 / 266.6667 = 0.75; sum 1 +
 *   1.2 + 0.9 / 0.25 = 5.8, in places 1.2 + 0.9 * 2 / 0.25 = 8.4,
 *   waiting 0.9 * 0.75 / 0.0625 = 10.8, halved ((1 + 0) / 2): W =
 *   (8.4 + 5.4) / 5.8 / 200 = 11.896552 ms.
 *   With a link the cycle s + s_l varies by s only: s 4, s_l 1 ms, one
 *   place, cs2 1, at 100/s: cycle 5 ms, rho 0.5, cs2c = 16 / 25, the
 *   chain's wait 5 * 0.5 / 0.5 = 5 ms times (1 + 0.64) / 2: W = 5 + 4.1 =
 *   9.1 ms. */
static void test_model_general_service(void **state)
{
    (void)state;
    CLOSE(model_fes_residence_g(100, 1, 1, 4e-3, 0, 0, 0, 0), 5.333333e-3, 1e-6);
    CLOSE(model_fes_residence_g(100, 1, 1, 4e-3, 0, 0, 0, 0), model_mg1(4e-3, 16e-6, 100), 1e-12);
    CLOSE(model_fes_residence_g(100, 1, 1, 4e-3, 0.5, 0, 0, 0), 6e-3, 1e-12);
    CLOSE(model_fes_residence_g(100, 1, 1, 4e-3, 1, 0, 0, 0), model_mm1(4e-3, 100), 1e-12);
    CLOSE(model_iraid_throughput_g(2, 2, 6e-3, 0, 0, 0, 0), 2 / 7.5e-3, 1e-12);
    CLOSE(model_iraid_throughput_g(2, 2, 6e-3, 1, 0, 0, 0), model_iraid_throughput(2, 2, 6e-3, 0, 0, 0),
          1e-12);
    CLOSE(model_fes_residence_g(200, 2, 2, 6e-3, 0, 0, 0, 0), 11.896552e-3, 1e-6);
    assert_true(model_fes_residence_g(2 / 7.5e-3, 2, 2, 6e-3, 0, 0, 0, 0) < 0);
    CLOSE(model_fes_residence_g(100, 1, 1, 4e-3, 1, 0, 1e-3, 0), 9.1e-3, 1e-9);
}

/* A shaped link (emulated hosts at 40 Mbit/s, 5e6 B/s): 1 x (1 + 5),
 * T_node 0, h 0, the papers' disk and memory.  s = 65536 / 500e6 +
 * 7.085020e-3 = 7.216092 ms at a target, s_l = 65536 / 5e6 = 13.1072 ms
 * on the I/O node's receiving link; MVA over 5 targets and the link:
 *   j 1: R_t 7.216092, R_l 13.107200 ms, X 49.204627/s
 *   j 2: R_t 7.728529, R_l 21.560491 ms, X 68.284977/s
 *   j 3: R_t 7.977740, R_l 32.404375 ms, X 74.290315/s
 *   j 4: R_t 8.071442, R_l 44.660572 ms, X 75.855248/s
 *   j 5: R_t 8.099719, R_l 57.510969 ms, X 76.207096/s
 * with an exponential target; with the preset disk's cs2 = 0.073268
 * (test_model_corrected_pieces), R_t(j) = s (1 + Q_t) - U s (1 - cs2) / 2:
 *   j 2: R_t 7.491082, R_l 21.560491 ms, X 68.843088/s
 *   j 3: R_t 7.628158, R_l 32.562096 ms, X 74.644963/s
 *   j 5: R_t 7.691356, R_l 57.889611 ms, X 76.241633/s
 * and solved exactly (the network's Markov chain, iraid_exact.c):
 * X(2) 69.133243, X(5) 76.265893/s.  The places' throughput X(5) =
 * 76.2659/s lies below the sending link's 1 / 13.1072 ms = 76.2939/s:
 * it is the saturation.  Nothing queues at
 * rate 0: T = the sending hop, both copies and the iRAID's s + s_l
 * = 13.1072 + 0.131072 + 7.216092 + 13.1072 = 33.561564 ms.  With
 * 10 Gbit/s links (s_l = 0.052429 ms) the same split saturates at its
 * places' 435.274512/s (Reiser's recursion: 451.5800; exponential:
 * 384.148/s, near 5 / (1.8 s) = 384.94/s of no link at all): the link
 * rate decides. */
static void test_model_corrected_shaped_link(void **state)
{
    struct model_params p;
    struct model_config c = { .nio = 1, .nt = 5, .size = 65536 };
    struct model_terms t;

    (void)state;
    model_params_paper(&p);
    p.bw_net = 5e6;
    CLOSE(model_iraid_throughput(1, 5, 7.216092e-3, 0, 13.1072e-3, 0), 49.204627, 1e-6);
    CLOSE(model_iraid_throughput(3, 5, 7.216092e-3, 0, 13.1072e-3, 0), 74.290315, 1e-6);
    CLOSE(model_iraid_throughput_g(5, 5, 7.216092e-3, 0.073268, 0, 13.1072e-3, 0), 76.241633,
          1e-6);
    CLOSE(model_iraid_exact_x(2, 5, 7.216092e-3, 0.073268, 13.1072e-3, 0, 200000), 69.133243,
          1e-6);
    CLOSE(model_saturation(MODEL_CORRECTED, &p, &c), 76.265893, 1e-6);
    assert_int_equal(model_eval(MODEL_CORRECTED, &p, &c, 0, &t), 0);
    CLOSE(t.total, 33.561564e-3, 1e-6);
    assert_int_equal(model_eval(MODEL_CORRECTED, &p, &c, 76.3, &t), 1);
    p.bw_net = 1.25e9;
    CLOSE(model_saturation(MODEL_CORRECTED, &p, &c), 435.274512, 1e-6);
}

/* --read-places: two READ places per target (what ipvfs-server's auto
 * gives a target on another host).  3 x (1 + 1) over 5e6 B/s links as
 * below, s = 7.216092 ms at the target (cs2 0.073268), s_l = 13.1072 ms
 * on the I/O node's receiving link; MVA of two reads over the target
 * and the link:
 *   j 1: R_t 7.216092, R_l 13.107200 ms, X 49.204627/s
 *   j 2: R_t = s (1 + 0.355064) - 0.355064 s (1 - cs2) / 2 = 8.591046,
 *        R_l = 13.1072 (1 + 0.644936) = 21.560491 ms, X 66.331611/s
 * below the sending link's 76.29/s (Reiser's recursion); exactly (the
 * chain, iraid_exact.c) X(2) = 67.311194/s: 3 I/O nodes saturate at
 * 201.933584/s (the recursion: 198.994832), against 147.6139/s with one
 * place (0 and 1 alike). */
static void test_model_read_places(void **state)
{
    struct model_params p;
    struct model_config c = { .nio = 3, .nt = 1, .size = 65536 };

    (void)state;
    model_params_paper(&p);
    p.bw_net = 5e6;
    CLOSE(model_saturation(MODEL_CORRECTED, &p, &c), 147.6139, 1e-6);
    c.read_places = 1;
    CLOSE(model_saturation(MODEL_CORRECTED, &p, &c), 147.6139, 1e-6);
    c.read_places = 2;
    CLOSE(model_saturation(MODEL_CORRECTED, &p, &c), 201.933584, 1e-6);
    CLOSE(model_iraid_throughput_g(2, 1, 7.216092e-3, 0.073268, 0, 13.1072e-3, 0), 66.331611,
          1e-6);
    /* the papers' variants have no places */
    c.read_places = 1;
    double lcn = model_saturation(MODEL_LCN2005, &p, &c);
    c.read_places = 2;
    CLOSE(model_saturation(MODEL_LCN2005, &p, &c), lcn, 1e-12);
}

/* Which link is slow decides the best split of 6 nodes (T_node 0, h 0,
 * the papers' disk and memory, s = 7.216092 ms at a target as above).
 * I/O nodes' links 5e6 B/s, targets' the same (bw_tnet 0): 3 x (1 + 1)
 * has one place per I/O node, X(1) = 1 / (s + 13.1072 ms) = 49.204627/s
 * (its sending link's 76.29/s is not reached): 147.6139/s, against
 * 76.2416/s for 1 x (1 + 5) (above).  I/O nodes' links 1.25e9, targets'
 * 2.5e6 B/s: a target's link is a queue of its own, s_tx = 65536 /
 * 2.5e6 - 65536 / 1.25e9 = 26.161971 ms, after s at the same target,
 * and the I/O node's link s_l = 0.052429 ms; MVA over 5 targets:
 *   j 1: R_t 7.216092, R_x 26.161971, R_l 0.052429 ms, X 29.912811/s
 *   j 2: R_t 7.527616, R_x 30.256728, R_l 0.052511 ms, X 52.858515/s
 *   j 5: X 96.610654/s
 * with an exponential target, and with the disk's cs2 = 0.073268:
 *   j 2: R_t 7.383266, R_x 30.256728, R_l 0.052511 ms, X 53.060946/s
 *   j 5: R_t 7.747499, R_x 43.643929, R_l 0.052665 ms, X 97.192888/s
 * while 3 x (1 + 1) gets 3 / (s + s_tx + s_l) = 89.738434/s: five places
 * overlap one target's disk with another's link, one place cannot.  (With
 * the targets' links slow the recursion above stays: the exact chain has
 * no queue per target's link; with the I/O node's link alone 1 x (1 + 5)
 * is the chain's 76.265893/s, test_model_corrected_shaped_link.) */
static void test_model_corrected_best_split_follows_links(void **state)
{
    struct model_params p;
    struct model_config c15 = { .nio = 1, .nt = 5, .size = 65536 };
    struct model_config c31 = { .nio = 3, .nt = 1, .size = 65536 };

    (void)state;
    model_params_paper(&p);
    p.bw_net = 5e6;
    CLOSE(model_saturation(MODEL_CORRECTED, &p, &c31), 147.6139, 1e-6);
    CLOSE(model_saturation(MODEL_CORRECTED, &p, &c15), 76.265893, 1e-6);
    p.bw_net = 1.25e9;
    p.bw_tnet = 2.5e6;
    CLOSE(model_iraid_throughput(2, 5, 7.216092e-3, 26.1619712e-3, 0.0524288e-3, 0), 52.858515, 1e-6);
    CLOSE(model_saturation(MODEL_CORRECTED, &p, &c15), 97.192888, 1e-6);
    CLOSE(model_saturation(MODEL_CORRECTED, &p, &c31), 89.738434, 1e-6);
    /* a target's link faster than the I/O node's adds no queue */
    p.bw_net = 5e6;
    p.bw_tnet = 1e9;
    CLOSE(model_saturation(MODEL_CORRECTED, &p, &c15), 76.265893, 1e-6);
}

/* The calibrated place time: 3 x (1 + 1), the papers' machine, T_node
 * 2 ms of which T_place = 3 ms of the two nodes' 4 ms lies inside the
 * place (model-calibrate.sh measures it).  s_t = 0.131072 + 3 +
 * 7.085020 = 10.216092 ms, s_l = 0.873813 ms: one place, X(1) =
 * 1 / 11.089905 ms = 90.172 /s per I/O node, 270.5164/s in all.  At rate
 * 0: T_ionet 0.873813 + T_ioc 0.131072 + the place 11.089905 + the I/O
 * node's T_node 2 less the 1 ms of it inside the place = 13.094790 ms.
 * A 2 ms hand-off (the place idle before the next read takes it) adds
 * to each cycle, not to a read's own time at rate 0. */
static void test_model_corrected_place_time(void **state)
{
    struct model_params p;
    struct model_config c = { .nio = 3, .nt = 1, .size = 65536 };
    struct model_terms t;

    (void)state;
    model_params_paper(&p);
    p.t_node = 2e-3;
    p.t_place = 3e-3;
    CLOSE(model_saturation(MODEL_CORRECTED, &p, &c), 270.5164, 1e-6);
    assert_int_equal(model_eval(MODEL_CORRECTED, &p, &c, 0, &t), 0);
    CLOSE(t.total, 13.094790e-3, 1e-6);
    /* a hand-off of 2 ms before a freed place takes the next read: one
     * cycle 13.089905 ms, 3 / 13.089905 ms = 229.1842/s; none at rate 0 */
    p.t_handoff = 2e-3;
    CLOSE(model_saturation(MODEL_CORRECTED, &p, &c), 3 / 13.089905e-3, 1e-6);
    CLOSE(model_iraid_throughput(1, 1, 10.216092e-3, 0, 0.873813e-3, 2e-3), 76.39476, 1e-5);
    /* the hand-off only where reads wait: one place at 50/s, mu(1) =
     * 1 / 11.089905 ms = 90.1721 (nobody waiting), past it mu = 76.3947:
     * pi(1) = 50 / 90.1721 = 0.554495, tail r = 50 / 76.3947 = 0.654495;
     * sum 1 + 0.554495 / (1 - r) = 2.604885, E(n) = 0.554495 / (1 - r)^2
     * = 4.645043, W = E(n) / sum / 50 = 35.66410 ms (no hand-off: M/M/1,
     * 1 / (90.1721 - 50) = 24.8930 ms) */
    CLOSE(model_fes_residence(50, 1, 1, 10.216092e-3, 0, 0.873813e-3, 2e-3), 35.66410e-3, 1e-5);
    CLOSE(model_fes_residence(50, 1, 1, 10.216092e-3, 0, 0.873813e-3, 0), 24.8930e-3, 1e-4);
    assert_int_equal(model_eval(MODEL_CORRECTED, &p, &c, 0, &t), 0);
    CLOSE(t.total, 13.094790e-3, 1e-6);
    p.t_handoff = 0;
    p.t_place = -1;   /* the target's T_node only: 4 ms - 2 ms = 2 ms inside */
    CLOSE(model_saturation(MODEL_CORRECTED, &p, &c), 3 / 10.089905e-3, 1e-6);
    assert_int_equal(model_eval(MODEL_CORRECTED, &p, &c, 0, &t), 0);
    CLOSE(t.total, 13.094790e-3, 1e-6);
}

/* Client processes that each serve their requests one at a time: the
 * setup above (3 x (1 + 1), T_node 2, T_place 3 ms) at 100/s.  The
 * servers: P_i lambda = 33.3333/s at an I/O node, W_ionet = 0.873813 +
 * 0.029127 0.873813 / (2 (1 - 0.029127)) = 0.886921 ms (M/D/1), the
 * request's wait on the way in the same 0.013108 ms (the links are
 * alike), W_ioc = 0.131647 ms, W_node_io = 2 / (1 - 0.066667) - 1 =
 * 1.142857 ms; one place, s_t = 10.216092 ms, cs2
 * = 3.815208e-6 / s_t^2 = 0.036555, X(1) = 90.1721/s, rho = 0.369663,
 * cs2c = cs2 s_t^2 / (s_t + s_l)^2 = 0.031021: W_iRAID = (rho + rho^2 /
 * (1 - rho) (1 + cs2c) / 2) / 33.3333 = 14.442643 ms; T_s = 16.617176
 * ms.  Four clients: rho_c = 100 T_s / 4 = 0.415429; T_s less its time
 * at rate 0 (13.094790 ms, above) is Q = 3.522386 ms of queueing, c_s^2
 * = Q^2 (2 / 0.369663 - 1) / T_s^2 = 0.198166, W_client = T_s rho_c (1 +
 * c_s^2) / (2 (1 - rho_c)) = 7.074645 ms (M/M/1's would be 11.809119),
 * T = 23.691821 ms.  The clients
 * saturate where lambda T_s(lambda) = 4, below the places' 270.52/s;
 * the papers' variants have no client queue. */
static void test_model_client_queue(void **state)
{
    struct model_params p;
    struct model_config c = { .nio = 3, .nt = 1, .size = 65536 };
    struct model_terms t;
    double sat;

    (void)state;
    model_params_paper(&p);
    p.t_node = 2e-3;
    p.t_place = 3e-3;
    assert_int_equal(model_eval(MODEL_CORRECTED, &p, &c, 100, &t), 0);
    CLOSE(t.w_iraid, 14.442643e-3, 1e-6);
    CLOSE(t.total, 16.617176e-3, 1e-6);
    assert_true(t.w_client == 0);
    c.clients = 4;
    assert_int_equal(model_eval(MODEL_CORRECTED, &p, &c, 100, &t), 0);
    CLOSE(t.cs2_client, 0.198166, 1e-5);
    CLOSE(t.w_client, 7.074645e-3, 1e-6);
    CLOSE(t.total, 23.691821e-3, 1e-6);
    sat = model_saturation(MODEL_CORRECTED, &p, &c);
    assert_true(sat > 100 && sat < 270.5164);
    assert_int_equal(model_eval(MODEL_CORRECTED, &p, &c, sat * 0.999, &t), 0);
    assert_int_equal(model_eval(MODEL_CORRECTED, &p, &c, sat * 1.001, &t), 1);
    assert_true(isinf(t.total));
    /* there the servers' own time makes rho_c = sat T_s(sat) / 4 = 1 */
    c.clients = 0;
    assert_int_equal(model_eval(MODEL_CORRECTED, &p, &c, sat, &t), 0);
    CLOSE(sat * t.total / 4, 1, 1e-6);
    c.clients = 4;
    assert_int_equal(model_eval(MODEL_LCN2005, &p, &c, 100, &t), 0);
    assert_true(t.w_client == 0);
}

/* The hops of emulated hosts (benchmarks/model-hops-report.py): 3 x (1
 * + 1) on 5e6 B/s links, two READ places per target, T_node 0, h 0, 12
 * client processes, 90/s (30/s per I/O node).  By hand:
 *   the sending link, M/D/1: T_ionet = 13.1072 ms, rho = 0.393216,
 *     W_ionet = 13.1072 + rho 13.1072 / (2 (1 - rho)) = 17.354148 ms
 *     (M/M/1's 21.601097);
 *   the request's way in, behind the targets' pieces on the receiving
 *     link: 30 0.0131072^2 / (2 (1 - 0.393216)) = 4.246948 ms;
 *   W_ioc = 0.131072 / (1 - 30 0.000131072) = 0.131589 ms;
 *   the iRAID, s = 7.216092 ms (cs2 0.073268), s_l = 13.1072 ms: X(1) =
 *     49.204627, X(2) = 67.311194/s (the exact chain,
 *     test_model_read_places); pi(1) = 30 / X(1) = 0.609699, pi(2) =
 *     pi(1) 30 / X(2) = 0.271737, tail r = 30 / X(2) = 0.445691; cs2c =
 *     cs2 s^2 / (s + s_l)^2 = 0.009237: W_iRAID = (pi(1) + 2 pi(2) / (1
 *     - r) + pi(2) r / (1 - r)^2 (1 + cs2c) / 2) / (1 + pi(1) + pi(2) /
 *     (1 - r)) / 30 = 28.398728 ms (28.809565 with Reiser's X(2),
 *     66.331612);
 *   T_s = 50.131413 ms; at rate 0, T_0 = 13.1072 + 0.131072 + s + s_l =
 *     33.561564 ms; Q = 16.569849 ms; the busiest server queue is the
 *     iRAID, rho = r: c_s^2 = Q^2 (2 / r - 1) / T_s^2 = 0.380996;
 *   rho_c = 90 T_s / 12 = 0.375986, W_client = T_s rho_c (1 + c_s^2) /
 *     (2 (1 - rho_c)) = 20.856865 ms; T = 70.988278 ms (independently
 *     re-computed in Python from these equations). */
static void test_model_hosts_hops(void **state)
{
    struct model_params p;
    struct model_config c = { .nio = 3, .nt = 1, .size = 65536, .read_places = 2, .clients = 12 };
    struct model_terms t;

    (void)state;
    model_params_paper(&p);
    p.bw_net = 5e6;
    assert_int_equal(model_eval(MODEL_CORRECTED, &p, &c, 90, &t), 0);
    CLOSE(t.w_ionet, 17.354148e-3, 1e-6);
    CLOSE(t.w_reqin, 4.246948e-3, 1e-6);
    CLOSE(t.w_ioc, 0.131589e-3, 1e-5);
    CLOSE(t.w_iraid, 28.398728e-3, 1e-6);
    CLOSE(t.cs2_client, 0.380996, 1e-5);
    CLOSE(t.w_client, 20.856865e-3, 1e-6);
    CLOSE(t.total, 70.988278e-3, 1e-6);
    /* at rate 0 nothing waits: no way-in wait, no client queue */
    assert_int_equal(model_eval(MODEL_CORRECTED, &p, &c, 0, &t), 0);
    CLOSE(t.total, 33.561564e-3, 1e-6);
    assert_true(t.w_reqin == 0 && t.w_client == 0);
    /* the papers' variants keep their M/M/1 links and no way in */
    assert_int_equal(model_eval(MODEL_LCN2005, &p, &c, 90, &t), 0);
    assert_true(t.w_reqin == 0);
    CLOSE(t.w_ionet, model_mm1(t.t_ionet, 30), 1e-12);   /* P_i lambda = 90 / 3 */
}

/* More reads than targets (--read-places 2): Reiser's residual let the
 * MVA pass the busiest station's capacity.  Two reads, one target,
 * deterministic service s = 10 ms, no links:
 *   j 1: R 10 ms, X 100/s, Q 1, U 1
 *   j 2: R = s (1 + 1) - 1 s (1 - 0) / 2 = 15 ms, X = 2 / 15 ms = 133.3/s
 * past 1 / s = 100/s, which a target busy all the time serves: cut to
 * 100/s (R 20 ms, Q 2); three reads: j 3: R = 3 s - s / 2 = 25 ms, X 120,
 * cut to 100 (uncut, from j 2's 133.3: 128.6/s).  Below the bound
 * nothing changes: two reads, two targets, X(2) = 2 / 12.5 ms = 160/s
 * (bound 200/s).  Whole model: 1 x (1 + 1), two places, links and
 * copies free (1e12 B/s: 65536 B take 6.5536e-8 s), T_node = T_place =
 * 1 ms, the papers' disk (E(T) 7.085020 ms).  With two places per
 * target the place's 1 ms is a delay outside the target's queue (a read
 * is in its node time while the other is on the disk): s_t = copy +
 * disk = 7.085085 ms, X(2) by the recursion 175/s, cut to 1 / s_t =
 * 141.141564/s (the disk's own 1 / E(T) is 141.142870/s: without the
 * cut that decided; with T_place in the target's queue, s_t 8.085085
 * ms, it was 123.684535/s).  The corrected variant now solves it
 * exactly (iraid_exact.c, the 1 ms an exponential delay): 141.107094/s,
 * the saturation, a little under 1 / s_t: the target idles only when
 * one read's delay outlasts the other's whole service (s_t = 7 delays,
 * Erlang-like), about e^-7 of the cycles. */
static void test_model_iraid_bound(void **state)
{
    struct model_params p;
    struct model_config c = { .nio = 1, .nt = 1, .size = 65536, .read_places = 2 };

    (void)state;
    CLOSE(model_iraid_throughput_g(2, 1, 0.01, 0, 0, 0, 0), 100.0, 1e-9);
    CLOSE(model_iraid_throughput_g(3, 1, 0.01, 0, 0, 0, 0), 100.0, 1e-9);
    CLOSE(model_iraid_throughput_g(2, 2, 0.01, 0, 0, 0, 0), 160.0, 1e-9);
    /* exponential service: the exact MVA never passes the bound */
    CLOSE(model_iraid_throughput(2, 1, 0.01, 0, 0, 0), 100.0, 1e-9);
    model_params_paper(&p);
    p.bw_net = p.bw_cache = 1e12;
    p.t_node = p.t_place = 1e-3;
    CLOSE(model_saturation(MODEL_CORRECTED, &p, &c), 141.107094, 1e-7);
    assert_true(model_saturation(MODEL_CORRECTED, &p, &c) < 1 / 7.085085e-3);
}

/* The iRAID's closed network solved exactly (iraid_exact.c), by hand.
 * Exponential service, two targets of s = 10 ms and the I/O node's link
 * of s_l = 5 ms: every station's demand is 5 ms (a target is visited
 * half the time), so exact MVA gives X(n) = n / (5 ms (3 + n - 1)):
 *   n 1: R = 10 + 5 = 15 ms, X 66.666667/s, Q 1/3 at each station;
 *   n 2: R = 10 (4/3) + 5 (4/3) = 20 ms, X 100/s, Q 2/3 each;
 *   n 3: R = 10 (5/3) + 5 (5/3) = 25 ms, X 120/s.
 * One read: X = 1 / (s + s_l + delay) whatever the service's variance.
 * Erlang-2 service (cs2 0.5, mean s; each phase at rate mu = 2 / s), two
 * reads on two targets, nothing else: states A (both served apart, both
 * in phase 1), B (apart, phases 1 and 2), C (apart, both in 2), D and E
 * (both at one target, the one served in phase 1 or 2); a read done at
 * a target joins either target with probability 1/2.  Balance:
 *   A: 2 mu A = mu B / 2 + mu E / 2     B: 2 mu B = 2 mu A + mu C
 *   C: 2 mu C = mu B                    D: mu D = mu B / 2 + mu E / 2
 *   E: mu E = mu C + mu D
 * so B = 4A/3, C = 2A/3, D = 2A, E = 8A/3, A = 3/23, and the reads done
 * per second X = mu (B + 2C + E) = 16 mu / 23 = 32 / (23 s): 139.130435/s
 * at s = 10 ms, where Reiser's recursion says 145.4545 (R(2) = 1.5 s - 0.5
 * s 0.5 / 2 = 1.375 s) and the exponential's exact MVA 133.3333.
 * Against simulations of the same networks (gamma service, 10^5
 * completions; benchmarks/results/model-validate.md S14 and S15): 5 reads
 * on 5 targets, s 6.2 ms, cs2 0.1015, simulated 504/s, Reiser's 523.67;
 * the same with a 0.5 ms link and a 1 ms delay (both exponential)
 * simulated 463.3/s, Reiser's 474.18.  Whole model: 1 x (1 + 5), links
 * and copies free, T_node = T_place = 0.5 ms, the papers' disk: s_t =
 * 7.085020 ms (+ the copy), cs2 = 3.815208e-6 / s_t^2, T_place a delay;
 * the saturation is the chain's X(5) (Reiser's 3% higher). */
static void test_model_iraid_exact(void **state)
{
    struct model_params p;
    struct model_config c = { .nio = 1, .nt = 5, .size = 65536 };
    double s_t, cs2;

    (void)state;
    CLOSE(model_iraid_exact_x(1, 2, 0.01, 1, 0.005, 0, 1000), 66.666667, 1e-7);
    CLOSE(model_iraid_exact_x(2, 2, 0.01, 1, 0.005, 0, 1000), 100, 1e-9);
    CLOSE(model_iraid_exact_x(3, 2, 0.01, 1, 0.005, 0, 1000), 120, 1e-9);
    CLOSE(model_iraid_exact_x(3, 2, 0.01, 1, 0.005, 0, 1000),
          model_iraid_throughput(3, 2, 0.01, 0, 0.005, 0), 1e-9);
    CLOSE(model_iraid_exact_x(3, 3, 0.005, 1, 0.001, 0.001, 1000),
          model_iraid_throughput(3, 3, 0.005, 0, 0.001, 0.001), 1e-9);
    CLOSE(model_iraid_exact_x(1, 4, 0.01, 0.2, 0.002, 0.003, 1000), 1 / 0.015, 1e-9);
    /* the hyperexponential fit above cs2 1 keeps the mean, and more
     * variance costs throughput */
    CLOSE(model_iraid_exact_x(1, 2, 0.01, 4, 0, 0, 1000), 100, 1e-9);
    assert_true(model_iraid_exact_x(3, 2, 0.01, 4, 0, 0, 1000) <
                model_iraid_exact_x(3, 2, 0.01, 1, 0, 0, 1000));
    CLOSE(model_iraid_exact_x(2, 2, 0.01, 0.5, 0, 0, 1000), 32 / 0.23, 1e-9);
    CLOSE(model_iraid_throughput_g(2, 2, 0.01, 0.5, 0, 0, 0), 145.454545, 1e-7);
    CLOSE(model_iraid_exact_x(5, 5, 6.2e-3, 0.1015, 0, 0, 200000), 504, 0.01);
    CLOSE(model_iraid_exact_x(5, 5, 6.2e-3, 0.1015, 0.5e-3, 1e-3, 200000), 463.3, 0.01);
    /* too large a chain, too many targets, bad times: -1 */
    assert_true(model_iraid_exact_x(10, 5, 6.2e-3, 0.1015, 0, 0, 60000) < 0);
    assert_true(model_iraid_exact_x(2, MODEL_EXACT_MAX_TARGETS + 1, 0.01, 0.5, 0, 0, 1000) < 0);
    assert_true(model_iraid_exact_x(2, 2, 0, 0.5, 0, 0, 1000) < 0);
    assert_true(model_iraid_exact_x(0, 2, 0.01, 0.5, 0, 0, 1000) == 0);
    model_params_paper(&p);
    p.bw_net = p.bw_cache = 1e12;
    p.t_node = p.t_place = 0.5e-3;
    s_t = 65536 / 1e12 + 7.085020e-3;
    cs2 = 3.815208e-6 / (s_t * s_t);
    CLOSE(model_saturation(MODEL_CORRECTED, &p, &c),
          model_iraid_exact_x(5, 5, s_t, cs2, 65536 / 1e12, 0.5e-3, 200000), 1e-6);
    assert_true(model_saturation(MODEL_CORRECTED, &p, &c) <
                0.975 * model_iraid_throughput_g(5, 5, s_t, cs2, 0, 65536 / 1e12, 0.5e-3));
}

/* In-order delivery (the datafile store completes a datafile's reads in
 * submission order, so a read's place is freed only once every older one
 * is done).  Two reads on two targets, exponential service of s = 10 ms,
 * by hand: S (the older read A and the newer B at two targets), Q (both
 * at one, A served), W (B done, waiting for A at another target).
 *   S: A done (mu): a new read joins B's target (Q) or the other (S),
 *      1/2 each; B done (mu): W.
 *   Q: A done (mu): B served, the new read joins it (Q) or not (S).
 *   W: A done (mu): A and B both freed, two new reads: one target (Q)
 *      or two (S), 1/2 each.
 * Balance: 2 S = S/2 + Q/2 + W/2, Q/2 = S/2 + W/2 (Q's own half is a
 * self-loop), W = S: S = W = 1/4, Q = 1/2; reads freed per s: mu (S + Q
 * + 2 W) = 1.25 mu = 125/s, where delivery in any order gives exact
 * MVA's 2 / (1.5 s) = 133.3/s.  One read is never held: 1 / (s + s_l +
 * delay).  The simulation's own error at 400 000 reads: well under 1%.
 * Whole model, 1 x (1 + 5) as above: in order below any order (the
 * places idle behind the oldest read), 3 x (1 + 1) (one place) equal. */
static void test_model_in_order(void **state)
{
    struct model_params p;
    struct model_config c15 = { .nio = 1, .nt = 5, .size = 65536 };
    struct model_config c31 = { .nio = 3, .nt = 1, .size = 65536 };
    double any;

    (void)state;
    CLOSE(model_iraid_inorder_x(2, 2, 0.01, 1, 0, 0, 0, MODEL_INORDER_COMPLETIONS), 125, 0.01);
    CLOSE(model_iraid_inorder_x(1, 3, 0.01, 0.2, 0, 0.002, 0.003, MODEL_INORDER_COMPLETIONS),
          1 / 0.015, 0.01);
    /* the same arguments, the same figure (its own seeded generator) */
    assert_true(model_iraid_inorder_x(3, 2, 0.006, 0.1, 0, 0, 0, 20000) ==
                model_iraid_inorder_x(3, 2, 0.006, 0.1, 0, 0, 0, 20000));
    assert_true(model_iraid_inorder_x(2, 2, 0, 1, 0, 0, 0, 20000) < 0);
    assert_true(model_iraid_inorder_x(2, 2, 0.01, 1, 0, 0, 0, 10) < 0);
    model_params_paper(&p);
    p.bw_net = p.bw_cache = 1e12;
    p.t_node = p.t_place = 0.5e-3;
    any = model_saturation(MODEL_CORRECTED, &p, &c15);
    c15.in_order = 1;
    assert_true(model_saturation(MODEL_CORRECTED, &p, &c15) < 0.95 * any);
    any = model_saturation(MODEL_CORRECTED, &p, &c31);
    c31.in_order = 1;
    CLOSE(model_saturation(MODEL_CORRECTED, &p, &c31), any, 1e-12);
}

static void test_model_splits_and_bad_input(void **state)
{
    unsigned nio[8], nt[8];
    struct model_params p;
    struct model_config c = { .nio = 0, .nt = 1, .size = 65536 };
    struct model_terms t;

    (void)state;
    /* 18 = 1 (1 + 17) = 2 (1 + 8) = 3 (1 + 5) = 6 (1 + 2) = 9 (1 + 1) */
    assert_int_equal(model_splits(18, nio, nt, 8), 5);
    assert_int_equal(nio[2], 3);
    assert_int_equal(nt[2], 5);
    assert_int_equal(nio[4], 9);
    assert_int_equal(nt[4], 1);
    assert_int_equal(model_splits(7, nio, nt, 8), 1);   /* 7 = 1 (1 + 6) */
    assert_int_equal(model_splits(1, nio, nt, 8), 0);
    model_params_paper(&p);
    assert_int_equal(model_eval(MODEL_LCN2005, &p, &c, 10, &t), -1);
    c.nio = 1;
    c.h_io = 1.5;
    assert_int_equal(model_eval(MODEL_LCN2005, &p, &c, 10, &t), -1);
    assert_true(model_saturation(MODEL_LCN2005, &p, &c) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_mm1),
        cmocka_unit_test(test_model_mg1_pollaczek_khinchine),
        cmocka_unit_test(test_model_disk_preset),
        cmocka_unit_test(test_model_pvfs_by_hand),
        cmocka_unit_test(test_model_ipvfs_by_hand),
        cmocka_unit_test(test_model_saturation),
        cmocka_unit_test(test_model_corrected_pieces),
        cmocka_unit_test(test_model_flow_equivalent_iraid),
        cmocka_unit_test(test_model_general_service),
        cmocka_unit_test(test_model_corrected_shaped_link),
        cmocka_unit_test(test_model_corrected_best_split_follows_links),
        cmocka_unit_test(test_model_read_places),
        cmocka_unit_test(test_model_corrected_place_time),
        cmocka_unit_test(test_model_client_queue),
        cmocka_unit_test(test_model_hosts_hops),
        cmocka_unit_test(test_model_iraid_bound),
        cmocka_unit_test(test_model_iraid_exact),
        cmocka_unit_test(test_model_in_order),
        cmocka_unit_test(test_model_splits_and_bad_input),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
