/* The papers' queuing model and our corrected variant (model.h).  Pure
 * arithmetic: every function depends on its arguments only. */
#include "tools/model/model.h"

#include <math.h>
#include <stdlib.h>

#define MB 1e6   /* the papers' MB/s are decimal, as disk makers' are */

void model_disk_preset(struct model_disk *d)
{
    d->rate = 51 * MB;
    d->seek = 3.8e-3;
    d->rot = 2e-3;
    /* backend/iscsi/store_disk.c draws the seek as 15/8 seek sqrt(u), u the
     * distance over the disk's span (mean seek for uniform positions:
     * E sqrt|x-y| = 8/15), variance seek^2 (225/64 E|x-y| - 1) =
     * seek^2 (225/192 - 1); the rotation uniform on [0, 2 rot): rot^2/3. */
    d->pos_var = d->seek * d->seek * (225.0 / 192.0 - 1.0) + d->rot * d->rot / 3.0;
    d->overhead = 0;
}

void model_params_paper(struct model_params *p)
{
    p->bw_net = 75 * MB;
    p->bw_tnet = 0;
    p->bw_cache = 500 * MB;
    p->t_node = 0;
    p->node_cpu = -1;
    p->t_place = -1;
    p->t_handoff = 0;
    p->stripe = 65536;
    model_disk_preset(&p->disk);
    p->memo = NULL;
}

void model_disk_moments(const struct model_disk *d, double bytes, double *mean, double *second)
{
    *mean = d->overhead + d->seek + d->rot + (d->rate > 0 ? bytes / d->rate : 0);
    *second = d->pos_var + *mean * *mean;
}

double model_mm1(double t, double lambda)
{
    if (t <= 0)
        return 0;
    if (lambda * t >= 1)
        return -1;
    return t / (1 - lambda * t);
}

double model_mg1(double mean, double second, double lambda)
{
    double rho = lambda * mean;

    if (mean <= 0)
        return 0;
    if (rho >= 1)
        return -1;
    return lambda * second / (2 * (1 - rho)) + mean;
}

/* Where the requests go and what each queue serves, at rate lambda. */
struct flows {
    double p_i, p_ij, lambda_i, lambda_ij, piece_io, piece_t;
    double node_io_rate, node_t_rate;   /* arrivals at the node queues */
};

static double min1(double x)
{
    return x < 1 ? x : 1;
}

static int flows(enum model_variant v, const struct model_params *p,
                 const struct model_config *c, double lambda, struct flows *f)
{
    double blocks = ceil(c->size / p->stripe), tblocks;

    if (c->nio == 0 || c->size <= 0 || p->stripe <= 0 || c->h_io < 0 || c->h_io > 1 ||
        c->h_t < 0 || c->h_t > 1 || lambda < 0)
        return -1;
    if (v == MODEL_CORRECTED) {
        /* A request of k stripe units reaches min(k, Nio) I/O nodes, each
         * with its share; the same again from an I/O node to its targets. */
        double k = blocks < c->nio ? blocks : c->nio;

        f->p_i = k / c->nio;
        f->piece_io = c->size / k;
    } else {
        f->p_i = min1(blocks / c->nio);
        f->piece_io = c->size / c->nio;   /* T_ionet = L_ip / (Nio BW_net) */
    }
    f->lambda_i = (1 - c->h_io) * f->p_i * lambda;
    if (c->nt == 0) {
        /* PVFS: the I/O node's own disk takes the whole piece. */
        f->p_ij = 1;
        f->piece_t = f->piece_io;
        f->lambda_ij = f->lambda_i;
    } else if (v == MODEL_CORRECTED) {
        double k;

        tblocks = ceil(f->piece_io / p->stripe);
        k = tblocks < c->nt ? tblocks : c->nt;
        f->p_ij = k / c->nt;
        f->piece_t = f->piece_io / k;
        f->lambda_ij = (1 - c->h_t) * f->p_ij * f->lambda_i;
    } else {
        tblocks = ceil(f->piece_io / p->stripe);   /* L_ir = L_ip / Nio */
        f->p_ij = min1(tblocks / c->nt);
        f->piece_t = f->piece_io / c->nt;
        f->lambda_ij = (1 - c->h_t) * f->p_ij * f->lambda_i;
    }
    if (v == MODEL_CORRECTED) {
        f->node_io_rate = f->p_i * lambda;
        f->node_t_rate = f->p_ij * f->lambda_i;
    } else {
        /* The journal's W_node has P_ij lambda_i at both levels. */
        f->node_io_rate = f->node_t_rate = f->p_ij * f->lambda_i;
    }
    return 0;
}

/* Sets *w to an M/M/1 residence and tracks the busiest utilisation. */
static void mm1_term(double t, double rate, double *w, double *rho_max)
{
    if (t * rate > *rho_max)
        *rho_max = t * rate;
    *w = model_mm1(t, rate);
}

/* Corrected: a client's request reaches the I/O node over the same link
 * as its targets' pieces (lambda_i pieces requests/s of service s each,
 * one FIFO queue of packets when shaped), and waits for what is queued
 * there: a small arrival at Poisson instants waits M/D/1's mean
 * Pollaczek-Khinchine wait, lambda_i pieces s^2 / (2 (1 - rho)), rho =
 * lambda_i pieces s.  The papers have no such term (their requests
 * take no time on the way in).  Measured on emulated hosts
 * (benchmarks/tc-backlog.py, the I/O nodes' receiving links): 2-17 ms
 * at 20-70% load. */
static double request_in(double lambda_i, double pieces, double s)
{
    double rho = lambda_i * pieces * s;

    return rho < 1 ? lambda_i * pieces * s * s / (2 * (1 - rho)) : INFINITY;
}

/* A network link's term: the papers' M/M/1; corrected, M/D/1
 * (Pollaczek-Khinchine with E(T^2) = T^2): a link sends every piece of
 * one size at its one rate, and a shaped link (tc's tbf) is one FIFO
 * queue of packets, so its service does not vary.  Measured on emulated
 * hosts (benchmarks/tc-backlog.py on the I/O nodes' 40 Mbit/s links):
 * the replies' queue held 0.4-0.5 of M/M/1's wait, at or below M/D/1's
 * (benchmarks/results/model-validate.md). */
static void link_term(enum model_variant v, double t, double rate, double *w, double *rho_max)
{
    if (v != MODEL_CORRECTED) {
        mm1_term(t, rate, w, rho_max);
        return;
    }
    if (t * rate > *rho_max)
        *rho_max = t * rate;
    *w = model_mg1(t, t * t, rate);
}

double model_iraid_throughput(unsigned n, unsigned k, double s, double s_tx, double s_link,
                              double handoff)
{
    return model_iraid_throughput_g(n, k, s, 1, s_tx, s_link, handoff);
}

static double iraid_x(unsigned n, unsigned k, double s, double cs2, double s_tx, double s_link,
                      double delay);

double model_iraid_throughput_g(unsigned n, unsigned k, double s, double cs2, double s_tx,
                                double s_link, double handoff)
{
    return iraid_x(n, k, s, cs2, s_tx, s_link, handoff);
}

/* model_iraid_throughput_g with delay: a time in every cycle that queues
 * nowhere (the hand-off, and with several places per target the part of
 * the nodes' time a place holds outside the target's queue). */
static double iraid_x(unsigned n, unsigned k, double s, double cs2, double s_tx, double s_link,
                      double delay)
{
    double q = 0, qx = 0, ql = 0, u = 0, x = 0;

    /* Exact MVA of a closed network: k identical targets, each visited
     * with probability 1/k, each two queues (service s, then its link
     * s_tx), and one link visited by every request, service s_link:
     * R(j) = s (1 + Q(j-1)) and R_x(j) = s_tx (1 + Q_x(j-1)) at a
     * target, R_l(j) = s_link (1 + Q_l(j-1)) at the shared link, X(j) =
     * j / (R(j) + R_x(j) + R_l(j)), Q(j) = X(j) R(j) / k and Q_x(j) =
     * X(j) R_x(j) / k per target, Q_l(j) = X(j) R_l(j); the hand-off
     * is a delay (no queue) that adds to each cycle.  The links serve
     * their TCP flows' packets interleaved, processor sharing, which
     * MVA treats as it does FIFO with exponential service (BCMP).
     * A target serves one read at a time, first come first served, with
     * a service of squared coefficient of variation cs2 (the emulated
     * disk's is 0.07, not an exponential's 1): an arriving read waits a
     * full s for each read queued ahead but only the residual s (1 +
     * cs2) / 2 of the one in service (Reiser's approximation for FCFS
     * stations), R(j) = s (1 + Q(j-1)) - U(j-1) s (1 - cs2) / 2 with
     * U(j-1) = X(j-1) s / k the target's utilisation; cs2 = 1 is the
     * exact MVA above.
     * Reiser's residual assumes the arriving read meets the one in
     * service at a random point of it; with more reads than targets
     * (--read-places 2 and more) the read that arrives has often just
     * left that target and meets the other one starting, and the
     * recursion gave a throughput past what the busiest station can
     * serve (2 reads, 1 target, cs2 0: 4 / (3 s), a third over 1 / s).
     * The operational bound X <= 1 / D_max (D_max the largest demand:
     * s / k, s_tx / k or s_link) holds for any service distribution: a
     * step above it is cut to it, the reads that the cut leaves over
     * queued at that station (its residence j / X less the others'). */
    double dmax;

    if (k == 0)
        return 0;
    dmax = s / k;
    if (s_tx / k > dmax)
        dmax = s_tx / k;
    if (s_link > dmax)
        dmax = s_link;
    for (unsigned j = 1; j <= n; j++) {
        double r = s * (1 + q) - u * s * (1 - cs2) / 2, rx = s_tx * (1 + qx),
               rl = s_link * (1 + ql);

        x = j / (r + rx + rl + delay);
        if (dmax > 0 && x * dmax > 1) {
            double extra = j * dmax - (r + rx + rl + delay);

            x = 1 / dmax;
            if (s_link >= dmax)
                rl += extra;
            else if (s_tx / k >= dmax)
                rx += extra;
            else
                r += extra;
        }
        q = x * r / k;
        qx = x * rx / k;
        ql = x * rl;
        u = x * s / k;
    }
    return x;
}

/* X(j), j = 1..n, into xs[1..n].  With memo (the corrected variant's
 * evaluation) exactly, the network's Markov chain (model_iraid_xs),
 * where it fits MODEL_EXACT_MAX_STATES and the targets have no links of
 * their own (s_tx: a queue per target, which the chain does not hold);
 * with in_order, reads freeing their places in submission order (the
 * datafile store's delivery), by model_iraid_inorder_x.  Elsewhere, and
 * for the public model_*_g functions (memo NULL), the recursion with
 * Reiser's approximation (sessions 12-14's). */
static void iraid_table(struct model_memo *memo, int in_order, unsigned n, unsigned k, double s,
                        double cs2, double s_tx, double s_link, double delay, double *xs)
{
    if (memo && (in_order || s_tx <= 0) &&
        model_iraid_xs(memo, in_order, n, k, s, cs2, s_tx, s_link, delay, xs) == 0)
        return;
    for (unsigned j = 1; j <= n; j++)
        xs[j] = iraid_x(j, k, s, cs2, s_tx, s_link, delay);
}

/* X(n) of iraid_table; -1 without memory. */
static double iraid_xn(struct model_memo *memo, int in_order, unsigned n, unsigned k, double s,
                       double cs2, double s_tx, double s_link, double delay)
{
    double *xs = malloc((n + 1) * sizeof(*xs)), x;

    if (!xs)
        return -1;
    iraid_table(memo, in_order, n, k, s, cs2, s_tx, s_link, delay, xs);
    x = xs[n];
    free(xs);
    return x;
}

/* The flow-equivalent server's residence, its wait for a place scaled by
 * wait_scale (1: the birth-death chain's own, exponential); the iRAID
 * solved as iraid_table with memo. */
static double fes_residence(struct model_memo *memo, int in_order, double lambda, unsigned places,
                            unsigned k, double s, double cs2, double s_tx, double s_link,
                            double handoff, double delay, double wait_scale)
{
    double *xs, top, sum = 0, weight = 1, inside = 0, queued;

    if (lambda <= 0)
        return s + s_tx + s_link + delay;
    if (!(xs = malloc((places + 1) * sizeof(*xs))))
        return -1;
    iraid_table(memo, in_order, places, k, s, cs2, s_tx, s_link, delay, xs);
    /* past places, each freed place also waits the hand-off */
    top = handoff > 0 ? iraid_xn(memo, in_order, places, k, s, cs2, s_tx, s_link, handoff + delay)
                      : xs[places];
    if (lambda >= top) {
        free(xs);
        return -1;
    }
    /* Birth-death chain: rate lambda up, mu(n) = X(min(n, places)) down
     * (the hand-off only past places: a place freed with reads waiting);
     * pi(n) = pi(0) prod lambda / mu(j).  Past places the ratio is the
     * constant lambda / top < 1: a geometric tail, summed in closed form. */
    for (unsigned n = 0; n < places; n++) {
        sum += weight;
        inside += n * weight;
        /* up to all places busy nobody waits, so no hand-off slows them */
        weight *= lambda / xs[n + 1];
    }
    free(xs);
    /* from n = places on: weight r^m, m = n - places, r = lambda / top;
     * Little's law on the reads in places (E min(n, places)) and on those
     * waiting for one (E (n - places)^+) */
    double r = lambda / top;

    sum += weight / (1 - r);
    inside += weight * places / (1 - r);
    queued = weight * r / ((1 - r) * (1 - r));
    return (inside + queued * wait_scale) / sum / lambda;
}

double model_fes_residence(double lambda, unsigned places, unsigned k, double s, double s_tx,
                           double s_link, double handoff)
{
    return fes_residence(NULL, 0, lambda, places, k, s, 1, s_tx, s_link, handoff, 0, 1);
}

static double fes_residence_d(struct model_memo *memo, int in_order, double lambda,
                              unsigned places, unsigned k, double s, double cs2, double s_tx,
                              double s_link, double handoff, double delay);

double model_fes_residence_g(double lambda, unsigned places, unsigned k, double s, double cs2,
                             double s_tx, double s_link, double handoff)
{
    return fes_residence_d(NULL, 0, lambda, places, k, s, cs2, s_tx, s_link, handoff, 0);
}

/* model_fes_residence_g with iraid_x's delay in every cycle, the iRAID
 * solved exactly with memo (iraid_table). */
static double fes_residence_d(struct model_memo *memo, int in_order, double lambda,
                              unsigned places, unsigned k, double s, double cs2, double s_tx,
                              double s_link, double handoff, double delay)
{
    double cycle = s + s_tx + s_link + handoff + delay,
           cs2c = cycle > 0 ? cs2 * s * s / (cycle * cycle) : 1;

    /* The chain's queue for a place is M/M/c's.  A place's cycle varies
     * only by the target's service (cs2 of s; the links' transfers of a
     * fixed size and the hand-off do not vary): squared coefficient of
     * variation cs2c = cs2 s^2 / cycle^2, and the queue of an M/G/c is
     * about M/M/c's times (1 + cs2c) / 2 (Allen-Cunneen with Poisson
     * arrivals; exact for one place: Pollaczek-Khinchine). */
    return fes_residence(memo, in_order, lambda, places, k, s, cs2, s_tx, s_link, handoff, delay,
                         (1 + cs2c) / 2);
}

static int eval(enum model_variant v, const struct model_params *p, const struct model_config *c,
                double lambda, struct model_terms *o);

/* The corrected variant's client queue: each of c->clients processes
 * serves its requests one at a time in arrival order (the client
 * library runs one batch at a time: a second nonblocking read waits
 * until the first is answered), so it is a single-server queue fed at
 * lambda / clients whose service is the servers' whole time T_s =
 * o->total: M/G/1 (Pollaczek-Khinchine),
 *     W_client = T_s rho_c (1 + c_s^2) / (2 (1 - rho_c)),
 *     rho_c = lambda T_s / clients.
 * T_s is the servers' time at rate 0, T_0 (transfers of one size, the
 * disk: nearly constant), plus Q = T_s - T_0 of queueing, which as an
 * M/M/1's wait is 0 with probability 1 - rho (rho the busiest server
 * queue's utilisation, o->rho_max) and exponential otherwise: Var(Q) =
 * Q^2 (2 / rho - 1), so c_s^2 = Q^2 (2 / rho - 1) / T_s^2, at most 1
 * (the exponential service an M/M/1 client queue assumed, which
 * over-predicted the wait up to 2x on emulated hosts, where T_s is
 * mostly the links' fixed transfer times).  0, or 1 (saturated) as
 * model_eval. */
static int client_queue(enum model_variant v, const struct model_params *p,
                        const struct model_config *c, double lambda, struct model_terms *o)
{
    double rho = lambda * o->total / c->clients, q, cs2 = 0;
    struct model_terms zero;

    if (rho >= 1) {
        o->rho_max = rho;
        o->total = INFINITY;
        return 1;
    }
    if (eval(v, p, c, 0, &zero) != 0)
        return 1;
    q = o->total - zero.total;
    if (q > 0 && o->rho_max > 0)
        cs2 = q * q * (2 / o->rho_max - 1) / (o->total * o->total);
    if (cs2 > 1)
        cs2 = 1;
    o->cs2_client = cs2;
    if (rho > o->rho_max)
        o->rho_max = rho;
    o->w_client = o->total * rho * (1 + cs2) / (2 * (1 - rho));
    o->total += o->w_client;
    return 0;
}


int model_eval(enum model_variant v, const struct model_params *p,
               const struct model_config *c, double lambda, struct model_terms *o)
{
    int rc = eval(v, p, c, lambda, o);

    if (rc != 0 || v != MODEL_CORRECTED || !c->clients)
        return rc;
    return client_queue(v, p, c, lambda, o);
}

/* model_eval without the client queue. */
static int eval(enum model_variant v, const struct model_params *p, const struct model_config *c,
                double lambda, struct model_terms *o)
{
    struct flows f;
    double rho = 0, node_io, node_t, t_node = p->t_node;
    int ipvfs = c->nt > 0;

    if (flows(v, p, c, lambda, &f) < 0)
        return -1;
    *o = (struct model_terms){ .p_i = f.p_i, .p_ij = f.p_ij, .lambda_i = f.lambda_i,
                               .lambda_ij = f.lambda_ij, .piece_io = f.piece_io,
                               .piece_t = f.piece_t };
    o->t_ionet = f.piece_io / p->bw_net;
    o->t_ioc = f.piece_io / p->bw_cache;
    link_term(v, o->t_ionet, f.p_i * lambda, &o->w_ionet, &rho);
    mm1_term(o->t_ioc, f.p_i * lambda, &o->w_ioc, &rho);
    if (ipvfs) {
        o->t_tnet = f.piece_t / p->bw_net;
        o->t_tc = f.piece_t / p->bw_cache;
        link_term(v, o->t_tnet, f.p_ij * f.lambda_i, &o->w_tnet, &rho);
        mm1_term(o->t_tc, f.p_ij * f.lambda_i, &o->w_tc, &rho);
    }
    if (v == MODEL_LCN2005) {
        node_io = node_t = t_node;   /* a delay, no queue */
    } else if (v == MODEL_CORRECTED && p->node_cpu >= 0 && p->node_cpu < t_node) {
        /* only the CPU work queues; the rest (waiting for a core the
         * machine's other work holds, wakeups) is a delay */
        mm1_term(p->node_cpu, f.node_io_rate, &node_io, &rho);
        mm1_term(p->node_cpu, f.node_t_rate, &node_t, &rho);
        node_io += t_node - p->node_cpu;
        node_t += t_node - p->node_cpu;
    } else {
        mm1_term(t_node, f.node_io_rate, &node_io, &rho);
        mm1_term(t_node, f.node_t_rate, &node_t, &rho);
    }
    o->w_node_io = node_io;
    o->w_node_t = ipvfs ? node_t : 0;
    model_disk_moments(&p->disk, f.piece_t, &o->t_disk, &o->t_disk2);
    if (o->t_disk * f.lambda_ij > rho)
        rho = o->t_disk * f.lambda_ij;
    o->w_disk = model_mg1(o->t_disk, o->t_disk2, f.lambda_ij);
    if (v == MODEL_CORRECTED && ipvfs && f.p_ij * c->nt <= 1.0 + 1e-9) {
        /* The I/O node admits Nt reads into its iRAID at once (ionode.c's
         * places; N Nt with --read-places N): a request holds its place
         * through the target's
         * cache, processing and disk, then the network back to the I/O
         * node.  The target's sending link pipelines with the I/O node's
         * receiving link, which all Nt targets share: one queue of
         * service T_tnet in the closed network, and, where the target's
         * own link is slower (bw_tnet), a queue of the difference at
         * each target.  The iRAID is then a flow-equivalent server of
         * throughput X(min(n, Nt)). */
        double t_place = p->t_place >= 0 ? p->t_place : t_node;
        /* The nodes' time in a place is a delay in the cycle, the disk
         * alone the target's queue: the emulated disk queues only its
         * own service (backend/iscsi/store_disk.c), the I/O node's and
         * the target's work (dispatch, the command's and the data's way,
         * wakeups) lies outside it, and the I/O node's loop, which all
         * its places share, is busy 7% of the time at 1x5's overload
         * (perf sched: 0.05 ms of run-queue wait per wakeup), no queue
         * to speak of.  With several places per target (--read-places 2)
         * one read's node time runs while another is on the disk:
         * measured on one host, 3 x (1 + 1), 2 places: 493.6 and 495.0
         * reads/s, at the disks' 3 / 6.04 ms = 496.7/s, where t_place
         * in the queue gave 458.7 (benchmarks/results/model-validate.md,
         * S14).  Until session 15 one place per target kept t_place in
         * the target's queue, which fitted better only while Reiser's
         * approximation over-predicted the network and the datafile
         * store's in-order delivery was not modelled (S15). */
        double place_delay = t_place;
        double s_t = o->t_tc + t_place - place_delay + (1 - c->h_t) * o->t_disk;
        double s_tx = p->bw_tnet > 0 ? f.piece_t / p->bw_tnet - o->t_tnet : 0;
        /* the target's service varies by its disk's only (a miss, 1 -
         * h_tc, pays the disk): Var = (1 - h) E(T^2) - ((1 - h) E(T))^2 */
        double miss = 1 - c->h_t,
               var = miss * o->t_disk2 - miss * miss * o->t_disk * o->t_disk;
        double cs2 = s_t > 0 ? var / (s_t * s_t) : 1;
        /* --read-places N: N reads per target hold places at once */
        unsigned places = c->nt * (c->read_places > 1 ? c->read_places : 1);
        double top;
        /* the closed network solved exactly (iraid_exact.c), its chains
         * kept from one rate to the next where the caller keeps a memo */
        struct model_memo own = { 0 }, *memo = p->memo ? p->memo : &own;

        if (s_tx < 0)
            s_tx = 0;
        o->cs2_t = cs2;
        top = iraid_xn(memo, c->in_order, places, c->nt, s_t, cs2, s_tx, o->t_tnet,
                       p->t_handoff + place_delay);

        o->iraid_fes = 1;
        if (f.lambda_i / top > rho)
            rho = f.lambda_i / top;
        o->rho_max = rho;
        if (rho >= 1) {
            o->w_iraid = o->total = INFINITY;
            return 1;
        }
        o->w_iraid = fes_residence_d(memo, c->in_order, f.lambda_i, places, c->nt, s_t, cs2, s_tx,
                                     o->t_tnet, p->t_handoff, place_delay);
        /* what of the two nodes' 2 T_node is not inside the place is
         * the I/O node's, outside: W_node_io + T_node - T_place */
        o->w_node_io += t_node - t_place;
        o->w_reqin = request_in(f.lambda_i, 1, o->t_tnet);
        o->total = o->w_reqin + o->w_ionet + o->w_ioc + (1 - c->h_io) * o->w_iraid + o->w_node_io;
        return 0;
    }
    if (v == MODEL_CORRECTED && ipvfs) {
        double pieces = f.p_ij * c->nt;   /* targets a request reaches */

        if (f.lambda_i * pieces * o->t_tnet > rho)
            rho = f.lambda_i * pieces * o->t_tnet;
        if (rho < 1)
            o->w_reqin = request_in(f.lambda_i, pieces, o->t_tnet);
    }
    o->rho_max = rho;
    if (rho >= 1) {
        o->w_iraid = o->total = INFINITY;
        return 1;
    }
    if (ipvfs)
        o->w_iraid = o->w_tnet + o->w_tc + (1 - c->h_t) * o->w_disk + o->w_node_t;
    else
        o->w_iraid = o->w_disk;
    o->total = o->w_reqin + o->w_ionet + o->w_ioc + (1 - c->h_io) * o->w_iraid + o->w_node_io;
    return 0;
}

double model_saturation(enum model_variant v, const struct model_params *p,
                        const struct model_config *c)
{
    struct model_terms t;
    double lo = 0, hi, top;

    /* Every utilisation of the servers is proportional to lambda: the
     * busiest at rate 1 gives the rate at which it reaches 1. */
    if (eval(v, p, c, 1.0, &t) < 0)
        return 0;
    top = t.rho_max > 0 ? 1.0 / t.rho_max : INFINITY;
    if (v != MODEL_CORRECTED || !c->clients || !isfinite(top))
        return top;
    /* A client's utilisation lambda T_s(lambda) / clients rises with
     * lambda and passes 1 before the servers saturate (T_s grows without
     * bound there): bisection for the rate where it reaches 1. */
    hi = top;
    for (int i = 0; i < 100; i++) {
        double mid = (lo + hi) / 2;

        if (model_eval(v, p, c, mid, &t) == 0)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

int model_splits(unsigned n, unsigned *nio_out, unsigned *nt_out, int max)
{
    int count = 0;

    for (unsigned nio = 1; nio <= n / 2; nio++) {
        if (n % nio || n / nio < 2)
            continue;
        if (count < max) {
            nio_out[count] = nio;
            nt_out[count] = n / nio - 1;
        }
        count++;
    }
    return count;
}
