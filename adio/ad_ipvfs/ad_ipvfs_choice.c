/* The collective path's decision: see ad_ipvfs_choice.h for the rule and
 * its calibration. */
#include "ad_ipvfs_choice.h"

#include "common/proto.h"

#include <stdlib.h>
#include <string.h>

static uint64_t div_up(uint64_t a, uint64_t b)
{
    return b ? (a + b - 1) / b : 0;
}

/* The grain requests are cut at: the stripe unit, or b within it. */
static uint64_t grain(const struct coll_shape *s)
{
    uint64_t u = s->unit ? s->unit : 1, b = s->block ? s->block : u;

    return b < u ? b : u;
}

uint64_t coll_cut_pairs(const struct coll_shape *s, uint64_t off, uint64_t len)
{
    uint64_t g = grain(s);

    if (len == 0)
        return 0;
    return (off + len - 1) / g - off / g + 1;
}

int coll_count_rank(const struct coll_shape *s, const struct coll_pair *p, size_t n,
                    struct coll_rank *out)
{
    uint32_t f = s->factor ? s->factor : 1;
    uint64_t *pairs = calloc(2 * (size_t) f, sizeof(*pairs)), *bytes;
    uint64_t u = s->unit ? s->unit : 1;
    struct coll_rank r = { 0, 0, 0 };

    if (!pairs)
        return -1;
    bytes = pairs + f;
    /* A piece that crosses stripe units goes to several I/O nodes; its
     * pairs are counted at the node of its start, which is exact for the
     * totals and close enough for the per-node request count. */
    for (size_t i = 0; i < n; i++) {
        uint32_t node = (uint32_t) (p[i].off / u % f);
        uint64_t k = coll_cut_pairs(s, p[i].off, p[i].len);

        pairs[node] += k;
        bytes[node] += p[i].len;
        r.pairs += k;
        r.bytes += p[i].len;
    }
    for (uint32_t d = 0; d < f; d++) {
        uint64_t by_pairs = div_up(pairs[d], IPVFS_MAX_PAIRS);
        uint64_t by_bytes = div_up(bytes[d], IPVFS_MAX_IO_BYTES);

        r.requests += by_pairs > by_bytes ? by_pairs : by_bytes;
    }
    free(pairs);
    *out = r;
    return 0;
}

static int pair_order(const void *a, const void *b)
{
    const struct coll_pair *x = a, *y = b;

    if (x->off != y->off)
        return x->off < y->off ? -1 : 1;
    return (x->len > y->len) - (x->len < y->len);
}

/* Most runs merge_runs takes; more go to qsort. */
#define MERGE_RUNS_MAX 1024

static int before(const struct coll_pair *x, const struct coll_pair *y)
{
    return pair_order(x, y) < 0;
}

/* Merges runs [b[i], b[i + 1]) of src pairwise into dst; returns the new
 * run count, b updated. */
static size_t merge_pass(const struct coll_pair *src, struct coll_pair *dst, size_t *b,
                         size_t nruns)
{
    size_t out = 0;

    for (size_t r = 0; r < nruns; r += 2) {
        size_t i = b[r], mid = b[r + 1], end = r + 2 <= nruns ? b[r + 2] : mid, j = mid, k = i;

        while (i < mid || j < end)
            dst[k++] = j >= end || (i < mid && !before(&src[j], &src[i])) ? src[i++] : src[j++];
        b[out++] = b[r];
    }
    b[out] = b[nruns];
    return out;
}

/* Sorts p by offset.  Each rank's pieces come in file order (a file view
 * only goes forward), so the gathered array is one sorted run per rank:
 * merging the runs costs n log(runs) instead of qsort's n log n. */
static void sort_pairs(struct coll_pair *p, size_t n)
{
    size_t b[MERGE_RUNS_MAX + 1], nruns = 0;
    struct coll_pair *tmp, *src = p, *dst;

    for (size_t i = 0; i < n && nruns <= MERGE_RUNS_MAX; i++)
        if (i == 0 || before(&p[i], &p[i - 1])) {
            if (nruns == MERGE_RUNS_MAX)
                nruns++;
            else
                b[nruns++] = i;
        }
    if (nruns <= 1)
        return;
    tmp = nruns <= MERGE_RUNS_MAX ? malloc(n * sizeof(*tmp)) : NULL;
    if (!tmp) {
        qsort(p, n, sizeof(*p), pair_order);
        return;
    }
    b[nruns] = n;
    dst = tmp;
    while (nruns > 1) {
        struct coll_pair *t;

        nruns = merge_pass(src, dst, b, nruns);
        t = src;
        src = dst;
        dst = t;
    }
    if (src != p)
        memcpy(p, src, n * sizeof(*p));
    free(tmp);
}

/* The union of pieces fed in offset order: overlap, and the pairs of its
 * runs once cut (adjacent or overlapping pieces merge into one run). */
struct union_scan {
    uint64_t start, end, total;
    int overlap, any;
};

static void scan_add(struct union_scan *u, const struct coll_shape *s, uint64_t off, uint64_t len)
{
    if (u->any && off < u->end)
        u->overlap = 1;
    if (u->any && off <= u->end) {
        if (off + len > u->end)
            u->end = off + len;
        return;
    }
    if (u->any)
        u->total += coll_cut_pairs(s, u->start, u->end - u->start);
    u->start = off;
    u->end = off + len;
    u->any = 1;
}

static void scan_end(struct union_scan *u, const struct coll_shape *s, int *out_overlap,
                     uint64_t *out_pairs)
{
    if (u->any)
        u->total += coll_cut_pairs(s, u->start, u->end - u->start);
    *out_overlap = u->overlap;
    *out_pairs = u->total;
}

void coll_scan_union(const struct coll_shape *s, struct coll_pair *p, size_t n,
                     int *out_overlap, uint64_t *out_pairs)
{
    struct union_scan u = { 0 };

    sort_pairs(p, n);
    for (size_t i = 0; i < n; i++)
        scan_add(&u, s, p[i].off, p[i].len);
    scan_end(&u, s, out_overlap, out_pairs);
}

/* coll_scan_progs's scratch (COLL_SCAN_PROGS_SCRATCH) holds k pairs or
 * the heap's k indices and k positions. */
_Static_assert(sizeof(struct coll_pair) >= sizeof(uint64_t) + sizeof(size_t),
               "coll_scan_progs's scratch");

/* A min-heap of progressions by the offset of their next piece. */
struct prog_heap {
    const struct coll_prog *g;
    uint64_t *next;             /* per progression: index of its next piece */
    size_t *h, n;
};

static uint64_t heap_key(const struct prog_heap *ph, size_t i)
{
    return ph->g[ph->h[i]].off + ph->next[ph->h[i]] * ph->g[ph->h[i]].stride;
}

static void heap_down(struct prog_heap *ph, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i, t;

        if (l < ph->n && heap_key(ph, l) < heap_key(ph, m))
            m = l;
        if (l + 1 < ph->n && heap_key(ph, l + 1) < heap_key(ph, m))
            m = l + 1;
        if (m == i)
            return;
        t = ph->h[i];
        ph->h[i] = ph->h[m];
        ph->h[m] = t;
        i = m;
    }
}

/* coll_scan_progs's answer in O(k log k) when every stride looks alike:
 * the non-empty progressions share count n > 1 and stride S, and their
 * first pieces lie within one stride (the tiles' rows, the narrow
 * columns: every rank one piece per stride), and S is a multiple of the
 * grain or the pieces cover each stride whole (one run throughout).  Then one
 * stride's sorted pieces give the overlap (none crosses into the next
 * stride) and its runs, each cut alike in every stride, and the last run
 * of a stride joins the first of the next when they touch.  0 (nothing
 * set) when g has another shape. */
static int scan_periodic(const struct coll_shape *s, const struct coll_prog *g, size_t k,
                         struct coll_pair *one, int *out_overlap, uint64_t *out_pairs)
{
    uint64_t n = 0, S = 0, lo = UINT64_MAX, hi = 0, per = 0, first, last;
    size_t m = 0, runs = 0;
    int overlap = 0;

    for (size_t i = 0; i < k; i++) {
        if (g[i].n == 0 || g[i].len == 0)
            continue;
        if (m == 0) {
            n = g[i].n;
            S = g[i].stride;
        }
        if (g[i].n != n || g[i].stride != S)
            return 0;
        one[m++] = (struct coll_pair) {g[i].off, g[i].len };
        lo = g[i].off < lo ? g[i].off : lo;
        hi = g[i].off + g[i].len > hi ? g[i].off + g[i].len : hi;
    }
    if (m == 0 || n < 2 || S == 0 || hi - lo > S)
        return 0;
    qsort(one, m, sizeof(*one), pair_order);
    for (size_t i = 1; i < m; i++) {             /* merge one stride's pieces into runs */
        uint64_t end = one[runs].off + one[runs].len;

        if (one[i].off < end)
            overlap = 1;
        if (one[i].off <= end) {
            if (one[i].off + one[i].len > end)
                one[runs].len = one[i].off + one[i].len - one[runs].off;
        } else {
            one[++runs] = one[i];
        }
    }
    runs++;
    /* Strides that are no multiple of the grain are cut differently from
     * one to the next; only a union that is one run throughout (the
     * stride covered whole: narrow columns) is counted without them. */
    if (S % grain(s) != 0 && !(runs == 1 && one[0].len == S))
        return 0;
    first = coll_cut_pairs(s, one[0].off, one[0].len);
    last = coll_cut_pairs(s, one[runs - 1].off, one[runs - 1].len);
    for (size_t i = 0; i < runs; i++)
        per += coll_cut_pairs(s, one[i].off, one[i].len);
    *out_overlap = overlap;
    if (one[runs - 1].off + one[runs - 1].len < one[0].off + S) {
        *out_pairs = n * per;                        /* strides apart */
    } else if (runs == 1) {
        *out_pairs = coll_cut_pairs(s, one[0].off, n * S);  /* one run throughout */
    } else {
        /* each stride's last run and the next stride's first are one */
        uint64_t joined = coll_cut_pairs(s, one[runs - 1].off, one[runs - 1].len + one[0].len);

        *out_pairs = n * (per - first - last) + first + last + (n - 1) * joined;
    }
    return 1;
}

void coll_scan_progs(const struct coll_shape *s, const struct coll_prog *g, size_t k,
                     void *scratch, int *out_overlap, uint64_t *out_pairs)
{
    struct prog_heap ph = { g, scratch, (size_t *) ((uint64_t *) scratch + k), 0 };
    struct union_scan u = { 0 };

    if (scan_periodic(s, g, k, scratch, out_overlap, out_pairs))
        return;

    for (size_t i = 0; i < k; i++) {
        ph.next[i] = 0;
        if (g[i].n > 0 && g[i].len > 0)
            ph.h[ph.n++] = i;
    }
    for (size_t i = ph.n; i-- > 0;)
        heap_down(&ph, i);
    while (ph.n > 0) {
        size_t top = ph.h[0];

        scan_add(&u, s, heap_key(&ph, 0), g[top].len);
        if (++ph.next[top] == g[top].n)
            ph.h[0] = ph.h[--ph.n];
        heap_down(&ph, 0);
    }
    scan_end(&u, s, out_overlap, out_pairs);
}

int coll_as_prog(const struct coll_pair *p, size_t n, struct coll_prog *out)
{
    struct coll_prog g = { 0, 0, 0, n };

    if (n > 0) {
        g.off = p[0].off;
        g.len = p[0].len;
    }
    if (n > 1) {
        if (p[1].off <= p[0].off)
            return 0;
        g.stride = p[1].off - p[0].off;
    }
    for (size_t i = 1; i < n; i++)
        if (p[i].len != g.len || p[i].off != g.off + i * g.stride)
            return 0;
    *out = g;
    return 1;
}

void coll_prog_expand(const struct coll_prog *g, struct coll_pair *out)
{
    for (uint64_t i = 0; i < g->n; i++)
        out[i] = (struct coll_pair) {g->off + i * g->stride, g->len };
}

static int range_order(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;

    return (x[0] > y[0]) - (x[0] < y[0]);
}

int coll_ranges_interleave(const int64_t *se, size_t nranks)
{
    int64_t *r = malloc((nranks ? nranks : 1) * 2 * sizeof(*r));
    size_t n = 0;
    int hit = 0;

    if (!r)
        return -1;
    for (size_t i = 0; i < nranks; i++)
        if (se[2 * i + 1] >= se[2 * i]) {
            r[2 * n] = se[2 * i];
            r[2 * n + 1] = se[2 * i + 1];
            n++;
        }
    qsort(r, n, 2 * sizeof(*r), range_order);
    for (size_t i = 1; i < n && !hit; i++)
        hit = r[2 * i] <= r[2 * i - 1];
    free(r);
    return hit;
}

double coll_cost_independent(const struct coll_access *a, const struct coll_costs *c)
{
    return (double) a->requests_ind * c->req_us + (double) a->pairs_ind * c->pair_us;
}

double coll_cost_twophase(const struct coll_shape *s, const struct coll_access *a,
                          const struct coll_costs *c)
{
    uint64_t naggs = s->naggs ? s->naggs : 1, cb = s->cb ? s->cb : 1;
    uint64_t rounds = div_up(a->bytes, naggs * cb), fan = s->factor > naggs ? s->factor : naggs;
    uint64_t requests = rounds * fan + div_up(a->pairs_2p, IPVFS_MAX_PAIRS);

    if (rounds == 0)
        rounds = 1;
    return (double) requests * c->req_us + (double) a->pairs_2p * c->pair_us +
        (double) a->pairs_ind * c->piece_us + (double) a->bytes * c->xchg_us +
        (double) rounds * c->round_us;
}

double coll_cost_full(const struct coll_shape *s, const struct coll_access *a,
                      const struct coll_costs *c, enum coll_path path)
{
    return (path == COLL_TWOPHASE ? coll_cost_twophase(s, a, c) : coll_cost_independent(a, c)) +
        (double) a->bytes * c->byte_us;
}

void coll_calib_note(struct coll_calib *cal, enum coll_path path, double model_us,
                     double observed_us)
{
    double r;

    if (observed_us < COLL_CALIB_MIN_US || model_us <= 0.0)
        return;
    r = observed_us / model_us;
    if (r < 1.0 / COLL_CALIB_CLAMP)
        r = 1.0 / COLL_CALIB_CLAMP;
    if (r > COLL_CALIB_CLAMP)
        r = COLL_CALIB_CLAMP;
    cal->scale[path] = cal->samples[path] ? (cal->scale[path] + r) / 2.0 : r;
    cal->samples[path]++;
}

/* The scale of path: its own, else the other path's, else 1. */
static double scale_of(const struct coll_calib *cal, enum coll_path path)
{
    enum coll_path other = path == COLL_TWOPHASE ? COLL_INDEPENDENT : COLL_TWOPHASE;

    if (!cal)
        return 1.0;
    return cal->samples[path] ? cal->scale[path] : cal->samples[other] ? cal->scale[other] : 1.0;
}

/* Step 3 of the rule: 3a exploration (*out_explore 1), 3b the cheaper
 * scaled model. */
static enum coll_path by_cost(const struct coll_shape *s, const struct coll_access *a,
                              const struct coll_costs *c, const struct coll_calib *cal,
                              int *out_explore)
{
    double ind = scale_of(cal, COLL_INDEPENDENT) * coll_cost_full(s, a, c, COLL_INDEPENDENT);
    double tp = scale_of(cal, COLL_TWOPHASE) * coll_cost_full(s, a, c, COLL_TWOPHASE);

    *out_explore = 1;
    if (cal && !cal->samples[COLL_TWOPHASE] &&
        cal->samples[COLL_INDEPENDENT] >= COLL_EXPLORE_AFTER && tp < COLL_EXPLORE * ind)
        return COLL_TWOPHASE;
    if (cal && !cal->samples[COLL_INDEPENDENT] &&
        cal->samples[COLL_TWOPHASE] >= COLL_EXPLORE_AFTER && ind < COLL_EXPLORE * tp)
        return COLL_INDEPENDENT;
    *out_explore = 0;
    return tp < ind ? COLL_TWOPHASE : COLL_INDEPENDENT;
}

enum coll_path coll_choose_cal(const struct coll_shape *s, const struct coll_access *a,
                               const struct coll_costs *c, const struct coll_calib *cal,
                               int writing, enum coll_force force, int *out_explore)
{
    int unused;

    if (!out_explore)
        out_explore = &unused;
    *out_explore = 0;
    if (force == COLL_FORCE_TWOPHASE)
        return COLL_TWOPHASE;
    if (force == COLL_FORCE_INDEPENDENT)
        return COLL_INDEPENDENT;
    if (writing && a->overlap)
        return COLL_TWOPHASE;
    return by_cost(s, a, c, cal, out_explore);
}

enum coll_path coll_choose(const struct coll_shape *s, const struct coll_access *a,
                           const struct coll_costs *c, int writing, enum coll_force force)
{
    return coll_choose_cal(s, a, c, NULL, writing, force, NULL);
}
