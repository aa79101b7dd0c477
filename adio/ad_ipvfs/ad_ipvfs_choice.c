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

void coll_scan_union(const struct coll_shape *s, struct coll_pair *p, size_t n,
                     int *out_overlap, uint64_t *out_pairs)
{
    uint64_t start = 0, end = 0, total = 0;
    int overlap = 0;

    sort_pairs(p, n);
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && p[i].off < end)
            overlap = 1;
        if (i > 0 && p[i].off <= end) {
            if (p[i].off + p[i].len > end)
                end = p[i].off + p[i].len;
            continue;
        }
        if (i > 0)
            total += coll_cut_pairs(s, start, end - start);
        start = p[i].off;
        end = p[i].off + p[i].len;
    }
    if (n > 0)
        total += coll_cut_pairs(s, start, end - start);
    *out_overlap = overlap;
    *out_pairs = total;
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
