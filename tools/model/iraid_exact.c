/* The iRAID's closed network of places solved exactly (model.h,
 * model_iraid_exact_x).  m reads circulate: each is served at one of k
 * identical targets chosen uniformly (a single server, first come first
 * served), then crosses the I/O node's receiving link (one server,
 * exponential as in the mean value analysis before: processor sharing,
 * BCMP), then a delay (exponential, no queue: the hand-off, the node
 * time outside the targets' queue), then takes the next read.  The
 * targets' service (the emulated disk plus copies, squared coefficient
 * of variation cs2 about 0.07) is far from exponential, so the network
 * has no product form and mean value analysis is not exact for it
 * (Reiser's residual approximation over-predicted it by 4-12% against a
 * simulation, benchmarks/results/model-validate.md S14).  Here the
 * service is a phase-type distribution with the same mean and cs2
 * (Tijms' two-moment fits: a mixture of Erlang(r-1) and Erlang(r) of
 * one rate when cs2 < 1, a balanced two-phase hyperexponential when
 * cs2 > 1, an exponential at 1), and the network's Markov chain is
 * solved: the throughput is exact for that service distribution (and,
 * with cs2 1, equals exact MVA's).
 *
 * The targets are interchangeable, so a state is the reads in the delay
 * and at the link, then the multiset of the targets' local states
 * (idle, or q reads and the phase of the one in service) as codes in
 * descending order; the states are enumerated in descending
 * lexicographic order and found by binary search, and pi Q = 0 is
 * solved by Gauss-Seidel sweeps over each state's incoming transitions,
 * from the last state to the first: a phase's end leads to a state
 * earlier in that order, so one sweep carries a read through all its
 * phases (58 sweeps for 5 reads on 5 targets; 2182 the other way). */
#include "tools/model/model.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PHASES MODEL_EXACT_PHASES

/* A phase-type service: a read starts in phase j with probability
 * start[j], leaves phase j at rate mu[j], to phase j + 1 if next[j],
 * else it is done. */
struct phases {
    unsigned n;
    double mu[MAX_PHASES], start[MAX_PHASES];
    int next[MAX_PHASES];
};

struct arc {
    unsigned from, to;
    double rate;
};

/* The chain: nstates states of w = k + 2 numbers each: the reads in the
 * delay, those at the link, then k target codes, 0 idle, else 1 + (q -
 * 1) n + phase.  In descending order a read's way through its cycle
 * (its phases, the link, the delay) leads to earlier states but for its
 * last step (the delay to a target): solve()'s sweeps, last state
 * first, carry it round in one. */
#define HEAD 2
struct chain {
    unsigned k, w, nstates, cap;
    double link_rate, delay_rate;   /* 1 / s_link, 1 / delay; 0: none */
    uint16_t *states;
    struct phases ph;
    struct arc *arcs;
    size_t narcs, arcs_cap;
    double *out_rate, *done_rate;
};

static void fit(double mean, double cs2, struct phases *p)
{
    memset(p, 0, sizeof(*p));
    if (fabs(cs2 - 1) <= 1e-9) {
        p->n = 1;
        p->mu[0] = 1 / mean;
        p->start[0] = 1;
    } else if (cs2 > 1) {
        /* two exponential branches of equal mean share p1 / mu1 = p2 / mu2 */
        double p1 = (1 + sqrt((cs2 - 1) / (cs2 + 1))) / 2;

        p->n = 2;
        p->start[0] = p1;
        p->start[1] = 1 - p1;
        p->mu[0] = 2 * p1 / mean;
        p->mu[1] = 2 * (1 - p1) / mean;
    } else {
        /* Erlang(r - 1) with probability a, Erlang(r) otherwise, one rate
         * (r - a) / mean, r = ceil(1 / cs2): cs2 exactly for 1 / r <= cs2
         * <= 1 / (r - 1) */
        double c = cs2 > 1.0 / MAX_PHASES ? cs2 : 1.0 / MAX_PHASES;
        unsigned r = (unsigned)ceil(1 / c - 1e-9);
        double a;

        if (r < 2)
            r = 2;
        a = (r * c - sqrt(r * (1 + c) - r * r * c)) / (1 + c);
        if (a < 0)
            a = 0;
        p->n = r;
        for (unsigned j = 0; j < r; j++) {
            p->mu[j] = (r - a) / mean;
            p->next[j] = j + 1 < r;
        }
        p->start[0] = 1 - a;   /* all r phases */
        p->start[1] = a;       /* r - 1 of them */
    }
}

static unsigned code_q(const struct chain *c, unsigned code)
{
    return code ? (code - 1) / c->ph.n + 1 : 0;
}

static unsigned make_code(const struct chain *c, unsigned q, unsigned phase)
{
    return q ? 1 + (q - 1) * c->ph.n + phase : 0;
}

/* lexicographic order of two states: < 0 when a comes first (is larger) */
static int state_cmp(unsigned w, const uint16_t *a, const uint16_t *b)
{
    for (unsigned i = 0; i < w; i++)
        if (a[i] != b[i])
            return a[i] > b[i] ? -1 : 1;
    return 0;
}

static int code_desc(const void *a, const void *b)
{
    uint16_t x = *(const uint16_t *)a, y = *(const uint16_t *)b;

    return (x < y) - (x > y);
}

/* Every non-increasing code sequence with left reads from pos on. */
static int enumerate(struct chain *c, uint16_t *cur, unsigned pos, unsigned left, unsigned maxcode)
{
    if (pos == c->w) {
        if (left)
            return 0;
        if (c->nstates == c->cap)
            return -1;
        memcpy(c->states + (size_t)c->nstates * c->w, cur, c->w * sizeof(*cur));
        c->nstates++;
        return 0;
    }
    for (unsigned code = maxcode + 1; code-- > 0;) {
        unsigned q = code_q(c, code);

        if (q > left)
            continue;
        /* codes fall with q: once the rest cannot hold the reads left at
         * q each, no smaller code can */
        if ((size_t)(c->w - pos) * q < left)
            break;
        cur[pos] = (uint16_t)code;
        if (enumerate(c, cur, pos + 1, left - q, code) < 0)
            return -1;
    }
    return 0;
}

static long find(const struct chain *c, const uint16_t *s)
{
    size_t lo = 0, hi = c->nstates;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int d = state_cmp(c->w, c->states + mid * c->w, s);

        if (d == 0)
            return (long)mid;
        if (d < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

static int add_arc(struct chain *c, unsigned from, const uint16_t *to_unsorted, double rate)
{
    uint16_t s[HEAD + MODEL_EXACT_MAX_TARGETS];
    long to;

    if (rate <= 0)
        return 0;
    memcpy(s, to_unsorted, c->w * sizeof(*s));
    qsort(s + HEAD, c->k, sizeof(*s), code_desc);
    to = find(c, s);
    if (to < 0)
        return -1;
    c->out_rate[from] += (unsigned)to == from ? 0 : rate;
    if ((unsigned)to == from)
        return 0;   /* a self-loop cancels out of pi Q = 0 */
    if (c->narcs == c->arcs_cap) {
        size_t n = c->arcs_cap ? 2 * c->arcs_cap : 4096;
        struct arc *a = realloc(c->arcs, n * sizeof(*a));

        if (!a)
            return -1;
        c->arcs = a;
        c->arcs_cap = n;
    }
    c->arcs[c->narcs++] = (struct arc){ .from = from, .to = (unsigned)to, .rate = rate };
    return 0;
}

/* A read joins a target (state t, rate r): each with probability 1 / k,
 * starting its service there (a phase drawn from start) if idle. */
static int join_target(struct chain *c, unsigned from, uint16_t *t, double r)
{
    uint16_t *tg = t + HEAD;

    for (unsigned j = 0; j < c->k; j++) {
        unsigned qj = code_q(c, tg[j]), mult = 0;
        uint16_t save = tg[j];
        int seen = 0;

        /* one arc per distinct code, weighted by how many hold it */
        for (unsigned l = 0; l < c->k; l++) {
            seen |= l < j && tg[l] == tg[j];
            mult += tg[l] == tg[j];
        }
        if (seen)
            continue;
        for (unsigned b = 0; b < (qj ? 1 : c->ph.n); b++) {
            double rb = r * mult / c->k * (qj ? 1 : c->ph.start[b]);

            tg[j] = (uint16_t)(qj ? save + c->ph.n : make_code(c, 1, b));
            if (add_arc(c, from, t, rb) < 0)
                return -1;
            tg[j] = save;
        }
    }
    return 0;
}

/* A read leaving a target (after 0) for the link (t[1]), else the
 * delay (t[0]), else the next target; leaving the link (after 1) for
 * the delay, else a target; leaving the delay (after 2) for a target. */
static int move_on(struct chain *c, unsigned from, uint16_t *t, unsigned after, double r)
{
    if (after < 1 && c->link_rate > 0) {
        t[1]++;
        return add_arc(c, from, t, r);
    }
    if (after < 2 && c->delay_rate > 0) {
        t[0]++;
        return add_arc(c, from, t, r);
    }
    return join_target(c, from, t, r);
}

/* A read done at target i of state s (rate r): that target starts its
 * next read (a phase drawn from start) or goes idle, and the read moves
 * on. */
static int add_completion(struct chain *c, unsigned from, const uint16_t *s, unsigned i, double r)
{
    uint16_t t[HEAD + MODEL_EXACT_MAX_TARGETS];
    unsigned q = code_q(c, s[i]);

    for (unsigned a = 0; a < (q > 1 ? c->ph.n : 1); a++) {
        double ra = q > 1 ? r * c->ph.start[a] : r;

        if (ra <= 0)
            continue;
        memcpy(t, s, c->w * sizeof(*t));
        t[i] = (uint16_t)make_code(c, q - 1, a);
        if (move_on(c, from, t, 0, ra) < 0)
            return -1;
    }
    return 0;
}

static int build(struct chain *c)
{
    for (unsigned x = 0; x < c->nstates; x++) {
        const uint16_t *s = c->states + (size_t)x * c->w;
        uint16_t t[HEAD + MODEL_EXACT_MAX_TARGETS];

        /* the link serves one read at a time, the delay all at once */
        if (s[1] && c->link_rate > 0) {
            memcpy(t, s, c->w * sizeof(*t));
            t[1]--;
            if (move_on(c, x, t, 1, c->link_rate) < 0)
                return -1;
        }
        if (s[0] && c->delay_rate > 0) {
            memcpy(t, s, c->w * sizeof(*t));
            t[0]--;
            if (move_on(c, x, t, 2, s[0] * c->delay_rate) < 0)
                return -1;
        }
        for (unsigned i = HEAD; i < c->w; i++) {
            unsigned q = code_q(c, s[i]), ph, mult = 1;
            double r;

            if (!q || (i > HEAD && s[i] == s[i - 1]))
                continue;
            while (i + mult < c->w && s[i + mult] == s[i])
                mult++;
            ph = (s[i] - 1) % c->ph.n;
            r = mult * c->ph.mu[ph];
            if (c->ph.next[ph]) {
                memcpy(t, s, c->w * sizeof(*t));
                t[i]++;
                if (add_arc(c, x, t, r) < 0)
                    return -1;
            } else {
                c->done_rate[x] += r;
                if (add_completion(c, x, s, i, r) < 0)
                    return -1;
            }
        }
    }
    return 0;
}

static int by_to(const void *a, const void *b)
{
    const struct arc *x = a, *y = b;

    return (x->to > y->to) - (x->to < y->to);
}

/* Gauss-Seidel on pi Q = 0, pi_j = sum_i pi_i q_ij / q_j; the throughput
 * sum_j pi_j done_j once it moves by less than 1e-12 relative.  A chain
 * with a period can make the sweeps alternate: after 500 each new pi_j
 * is taken half (damped; the lazy chain has no period).  -1 when it
 * has not converged after 20 000. */
static double solve(struct chain *c)
{
    double *pi = malloc(c->nstates * sizeof(*pi)), x = 0, last = -1;
    size_t *start = malloc((c->nstates + 1) * sizeof(*start));

    if (!pi || !start) {
        free(pi);
        free(start);
        return -1;
    }
    qsort(c->arcs, c->narcs, sizeof(*c->arcs), by_to);
    for (unsigned j = 0, a = 0; j <= c->nstates; j++) {
        while (a < c->narcs && c->arcs[a].to < j)
            a++;
        start[j] = a;
    }
    for (unsigned j = 0; j < c->nstates; j++)
        pi[j] = 1.0 / c->nstates;
    for (int sweep = 0;; sweep++) {
        double sum = 0, omega = sweep < 500 ? 1 : 0.5;

        if (sweep == 20000) {
            x = -1;
            break;
        }
        for (unsigned j = c->nstates; j-- > 0;) {
            double in = 0;

            for (size_t a = start[j]; a < start[j + 1]; a++)
                in += pi[c->arcs[a].from] * c->arcs[a].rate;
            if (c->out_rate[j] > 0)
                pi[j] = omega * in / c->out_rate[j] + (1 - omega) * pi[j];
            sum += pi[j];
        }
        x = 0;
        for (unsigned j = 0; j < c->nstates; j++) {
            pi[j] /= sum;
            x += pi[j] * c->done_rate[j];
        }
        if (fabs(x - last) <= 1e-12 * x)
            break;
        last = x;
    }
    free(pi);
    free(start);
    return x;
}

/* Every state with m reads: in the delay (d) and at the link (l) in
 * descending order where they exist, then the targets' codes. */
static int enumerate_all(struct chain *c, uint16_t *cur, unsigned m)
{
    for (unsigned d = c->delay_rate > 0 ? m + 1 : 1; d-- > 0;)
        for (unsigned l = c->link_rate > 0 ? m - d + 1 : 1; l-- > 0;) {
            cur[0] = (uint16_t)d;
            cur[1] = (uint16_t)l;
            if (enumerate(c, cur, HEAD, m - l - d, make_code(c, m - l - d, c->ph.n - 1)) < 0)
                return -1;
        }
    return 0;
}

double model_iraid_exact_x(unsigned m, unsigned k, double s, double cs2, double s_link,
                           double delay, unsigned max_states)
{
    struct chain c = { .k = k, .w = HEAD + k, .cap = max_states,
                       .link_rate = s_link > 0 ? 1 / s_link : 0,
                       .delay_rate = delay > 0 ? 1 / delay : 0 };
    uint16_t cur[HEAD + MODEL_EXACT_MAX_TARGETS];
    double x = -1;

    if (m == 0 || k == 0)
        return 0;
    if (s <= 0 || s_link < 0 || delay < 0 || k > MODEL_EXACT_MAX_TARGETS || max_states == 0)
        return -1;
    fit(s, cs2 < 0 ? 0 : cs2, &c.ph);
    if ((size_t)m * c.ph.n + 1 > UINT16_MAX)
        return -1;
    c.states = malloc((size_t)max_states * c.w * sizeof(*c.states));
    if (!c.states)
        return -1;
    if (enumerate_all(&c, cur, m) < 0)
        goto undo_states;
    c.out_rate = calloc(c.nstates, sizeof(*c.out_rate));
    c.done_rate = calloc(c.nstates, sizeof(*c.done_rate));
    if (!c.out_rate || !c.done_rate)
        goto undo_rates;
    if (build(&c) == 0)
        x = solve(&c);
    free(c.arcs);
undo_rates:
    free(c.out_rate);
    free(c.done_rate);
undo_states:
    free(c.states);
    return x;
}

int model_iraid_xs(struct model_memo *memo, int in_order, unsigned n, unsigned k, double s,
                   double cs2, double s_tx, double s_link, double delay, double *xs)
{
    if (s_tx > 0 && !in_order)
        return -1;
    for (unsigned j = 1; j <= n; j++) {
        unsigned i;
        /* one read is never held behind another: the chain, exactly */
        int mc = in_order && j > 1;

        for (i = 0; memo && i < memo->used; i++)
            if (memo->e[i].m == j && memo->e[i].k == k && memo->e[i].in_order == mc &&
                memo->e[i].s == s && memo->e[i].cs2 == cs2 && memo->e[i].s_tx == s_tx &&
                memo->e[i].s_link == s_link && memo->e[i].delay == delay)
                break;
        if (memo && i < memo->used) {
            xs[j] = memo->e[i].x;
            continue;
        }
        xs[j] = mc ? model_iraid_inorder_x(j, k, s, cs2, s_tx, s_link, delay,
                                           MODEL_INORDER_COMPLETIONS)
                   : s_tx > 0 ? 1 / (s + s_tx + s_link + delay)
                              : model_iraid_exact_x(j, k, s, cs2, s_link, delay,
                                                    MODEL_EXACT_MAX_STATES);
        if (xs[j] <= 0)
            return -1;
        if (memo) {
            i = memo->used < MODEL_MEMO_SIZE ? memo->used++ : memo->next++ % MODEL_MEMO_SIZE;
            memo->e[i].m = j;
            memo->e[i].k = k;
            memo->e[i].in_order = mc;
            memo->e[i].s = s;
            memo->e[i].cs2 = cs2;
            memo->e[i].s_tx = s_tx;
            memo->e[i].s_link = s_link;
            memo->e[i].delay = delay;
            memo->e[i].x = xs[j];
        }
    }
    return 0;
}

/* ---- in-order delivery: the datafile store's resequencing ---- */

/* xorshift64* on [0, 1). */
static double mc_uniform(uint64_t *x)
{
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return (double)((*x * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0;
}

static double mc_exp(uint64_t *x, double mean)
{
    return mean > 0 ? -mean * log(1 - mc_uniform(x)) : 0;
}

/* A draw of the phase-type service: its start phase, then each phase's
 * exponential time until the chain ends. */
static double mc_service(uint64_t *x, const struct phases *p)
{
    double u = mc_uniform(x), t = 0;
    unsigned j = 0;

    while (j + 1 < p->n && u >= p->start[j]) {
        u -= p->start[j];
        j++;
    }
    for (;;) {
        t += mc_exp(x, 1 / p->mu[j]);
        if (!p->next[j] || ++j >= p->n)
            return t;
    }
}

/* One read's next event: where it is (0 target, 1 its target's link, 2
 * the I/O node's link, 3 the delay) and when it leaves. */
struct mc_read {
    double when;
    unsigned stage, target;
    int done;
};

/* A read starts at a target chosen uniformly; first come first served,
 * so its end there is fixed when it arrives. */
static void mc_start(struct mc_read *n, unsigned k, double *tfree, uint64_t *rng,
                     const struct phases *ph, double at)
{
    double b;

    n->target = (unsigned)(mc_uniform(rng) * k);
    b = tfree[n->target] > at ? tfree[n->target] : at;
    n->when = tfree[n->target] = b + mc_service(rng, ph);
    n->stage = 0;
    n->done = 0;
}

double model_iraid_inorder_x(unsigned m, unsigned k, double s, double cs2, double s_tx,
                             double s_link, double delay, unsigned long completions)
{
    struct phases ph;
    struct mc_read *r;
    double *tfree, *xfree, lfree = 0, now = 0, t0 = 0;
    unsigned long released = 0, warm = completions / 10;
    uint64_t rng = 0x9E3779B97F4A7C15ULL;
    uint64_t oldest = 0;

    if (m == 0 || k == 0)
        return 0;
    if (s <= 0 || s_tx < 0 || s_link < 0 || delay < 0 || completions < 1000)
        return -1;
    fit(s, cs2 < 0 ? 0 : cs2, &ph);
    r = calloc(m, sizeof(*r));
    tfree = calloc(k, sizeof(*tfree));
    xfree = calloc(k, sizeof(*xfree));
    if (!r || !tfree || !xfree) {
        free(r);
        free(tfree);
        free(xfree);
        return -1;
    }
    for (unsigned i = 0; i < m; i++)
        mc_start(&r[i], k, tfree, &rng, &ph, 0.0);
    while (released < completions) {
        struct mc_read *e = NULL;
        double b;

        /* the earliest event among the reads not yet done */
        for (unsigned i = 0; i < m; i++)
            if (!r[i].done && (!e || r[i].when < e->when))
                e = &r[i];
        now = e->when;
        switch (e->stage) {
        case 0:   /* off the target: its own link, first come first served */
            b = xfree[e->target] > now ? xfree[e->target] : now;
            e->when = xfree[e->target] = b + (s_tx > 0 ? s_tx : 0);
            e->stage = 1;
            continue;
        case 1:   /* the I/O node's link: one exponential server, as the chain's */
            b = lfree > now ? lfree : now;
            e->when = lfree = b + mc_exp(&rng, s_link);
            e->stage = 2;
            continue;
        case 2:
            e->when = now + mc_exp(&rng, delay);
            e->stage = 3;
            continue;
        default:
            e->done = 1;
        }
        /* delivered in submission order: the oldest, and those done behind it */
        while (r[oldest % m].done) {
            if (++released == warm)
                t0 = now;
            mc_start(&r[oldest % m], k, tfree, &rng, &ph, now);
            oldest++;
        }
    }
    free(r);
    free(tfree);
    free(xfree);
    return (double)(released - warm) / (now - t0);
}
