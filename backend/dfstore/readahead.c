/* Sequential read-ahead of the datafile store (see readahead.h). */
#include "backend/dfstore/readahead.h"

#include "backend/dfstore/internal.h"

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* Pattern bytes of stream s in [s->run, x) (x >= s->run), or x itself on
 * a contiguous stream: differences of two are the bytes between. */
static uint64_t pat_bytes(const struct df_ra_stream *s, uint64_t x)
{
    uint64_t d;

    if (!s->stride)
        return x;
    d = x - s->run;
    return d / s->stride * s->len + min_u64(d % s->stride, s->len);
}

/* The address after pattern byte d (as pat_bytes counts them): the end
 * of the d bytes. */
static uint64_t pat_addr(const struct df_ra_stream *s, uint64_t d)
{
    if (!s->stride)
        return d;
    return s->run + d / s->len * s->stride + d % s->len;
}

/* Where stream s expects its next read: its end, or, a confirmed pattern's
 * run being done, the next run's start. */
static uint64_t expected(const struct df_ra_stream *s)
{
    uint64_t d;

    if (!s->stride || !s->confirmed)
        return s->next;
    d = s->next - s->run;
    return d % s->stride < s->len ? s->next : s->run + (d / s->stride + 1) * s->stride;
}

static int near(uint64_t a, uint64_t b) { return a + DF_RA_GAP >= b && a <= b + DF_RA_GAP; }

/* The stream whose expected next read is within DF_RA_GAP of off (one
 * whose pattern expects it first), or DF_RA_STREAMS. */
static unsigned stream_find(const struct df_ra *ra, uint64_t off)
{
    for (unsigned i = 0; i < DF_RA_STREAMS; i++)
        if (ra->s[i].used && ra->s[i].confirmed && near(off, expected(&ra->s[i])))
            return i;
    for (unsigned i = 0; i < DF_RA_STREAMS; i++)
        if (ra->s[i].used && near(off, ra->s[i].next))
            return i;
    return DF_RA_STREAMS;
}

/* The least recently used stream (an unused one first). */
static unsigned stream_oldest(const struct df_ra *ra)
{
    unsigned best = 0;

    for (unsigned i = 1; i < DF_RA_STREAMS; i++)
        if (ra->s[i].used < ra->s[best].used)
            best = i;
    return best;
}

/* Whether a read at a, the stream having read up to next, skips a whole
 * block nobody asked for (a jump, not a gap inside a block). */
static int skips_block(uint64_t next, uint64_t a)
{
    return a > next && (next + DFSTORE_BLOCK - 1) / DFSTORE_BLOCK < a / DFSTORE_BLOCK;
}

/* Feeds one piece [a, b) of a read to s: a jump ends the run and gives
 * (or repeats) the pattern.  Returns 1 when the pattern changed. */
static int feed_piece(struct df_ra_stream *s, uint64_t a, uint64_t b)
{
    int changed = 0;

    if (skips_block(s->next, a)) {
        uint64_t stride = a - s->run, len = s->next - s->run;
        s->confirmed = s->stride == stride && s->len == len;
        changed = !s->confirmed;
        s->stride = stride;
        s->len = len;
        s->run = a;
    }
    s->seen += b > a ? b - a : 0;
    if (b > s->next)
        s->next = b;
    return changed;
}

/* The pattern's ranges in [from, to) into want (at most DF_RA_RANGES). */
static void want_ranges(const struct df_ra_stream *s, uint64_t from, uint64_t to,
                        struct df_ra_want *want)
{
    if (!s->stride) {
        want->r[want->n].from = from;
        want->r[want->n++].to = to;
        return;
    }
    for (uint64_t k = (from - s->run) / s->stride; want->n < DF_RA_RANGES; k++) {
        uint64_t a = s->run + k * s->stride, b = a + s->len;
        if (a >= to)
            break;
        if (b > from) {
            want->r[want->n].from = a > from ? a : from;
            want->r[want->n++].to = b < to ? b : to;
        }
    }
}

unsigned df_ra_feed(struct df_ra *ra, const struct ipvfs_pair *pairs, uint32_t n, uint64_t max,
                    struct df_ra_want *want)
{
    uint64_t off = n ? pairs[0].offset : 0, end = off, first, have;
    unsigned i;
    int ascending = 1, changed = 0;
    struct df_ra_stream *s;

    want->n = 0;
    for (uint32_t p = 0; p < n; p++) {
        if (p > 0 && pairs[p].offset < pairs[p - 1].offset + pairs[p - 1].len)
            ascending = 0;
        if (pairs[p].len && pairs[p].offset + pairs[p].len > end)
            end = pairs[p].offset + pairs[p].len;
    }
    if (max == 0 || end <= off)
        return DF_RA_STREAMS;
    ra->tick++;
    if ((i = stream_find(ra, off)) == DF_RA_STREAMS) {
        /* a seek, or a new reader: a new stream, nothing ahead yet (its
         * pieces may show a pattern already) */
        i = stream_oldest(ra);
        ra->s[i] = (struct df_ra_stream){ .next = off, .ahead = off, .run = off,
                                          .used = ra->tick };
        for (uint32_t p = 0; ascending && p < n; p++)
            feed_piece(&ra->s[i], pairs[p].offset, pairs[p].offset + pairs[p].len);
        if (!ascending)
            feed_piece(&ra->s[i], off, end);
        ra->s[i].ahead = ra->s[i].next;
        return i;
    }
    s = &ra->s[i];
    s->used = ra->tick;
    first = s->next;
    /* pieces out of order (or overlapping) are read as their span */
    for (uint32_t p = 0; ascending && p < n; p++)
        changed |= feed_piece(s, pairs[p].offset, pairs[p].offset + pairs[p].len);
    if (!ascending)
        changed |= feed_piece(s, off, end);
    if (s->window)
        s->window = min_u64(2 * s->window, max);
    else if (off == first || s->seen >= DF_RA_MIN)
        s->window = min_u64(DF_RA_MIN, max);
    if (changed || s->ahead < end)
        s->ahead = end;     /* what lay ahead belonged to another pattern */
    if (s->stride && !s->confirmed)
        return i;
    /* top up once less than half the window lies ahead */
    have = pat_bytes(s, s->ahead) - pat_bytes(s, end);
    if (have < s->window / 2)
        want_ranges(s, s->ahead, pat_addr(s, pat_bytes(s, end) + s->window), want);
    return i;
}

void df_ra_advance(struct df_ra *ra, unsigned i, uint64_t upto)
{
    if (i < DF_RA_STREAMS && upto > ra->s[i].ahead)
        ra->s[i].ahead = upto;
}

/* Blocks asked of the L1 per call. */
#define RA_BATCH 64u

void df_ra_read(struct dfstore *ds, struct datafile *df, const struct ipvfs_pair *pairs,
                uint32_t npairs, uint64_t max)
{
    uint64_t fb, last, prev = UINT64_MAX, fbs[RA_BATCH], vbs[RA_BATCH];
    struct df_ra_want want;
    uint32_t n = 0, got;
    unsigned i;

    if (ds->l1.ra_cap == 0 || npairs == 0)
        return;
    i = df_ra_feed(&df->ra, pairs, npairs, max, &want);
    for (uint32_t r = 0; r < want.n; r++) {
        uint64_t to = min_u64(want.r[r].to, df->size);
        if (want.r[r].from >= to)
            break;
        last = (to + DFSTORE_BLOCK - 1) / DFSTORE_BLOCK;
        for (fb = want.r[r].from / DFSTORE_BLOCK; fb < last; fb++) {
            uint64_t vb = fb == prev ? DF_NO_BLOCK : u64map_get(&df->blocks, fb);
            prev = fb;              /* two runs may share a block */
            if (vb == DF_NO_BLOCK)  /* a hole has nothing to fetch */
                continue;
            fbs[n] = fb;
            vbs[n++] = vb;
            if (n == RA_BATCH) {
                if ((got = df_l1_prefetch(&ds->l1, vbs, n)) < n) {
                    df_ra_advance(&df->ra, i, fbs[got] * DFSTORE_BLOCK);
                    return;
                }
                n = 0;
            }
        }
    }
    if (n > 0 && (got = df_l1_prefetch(&ds->l1, vbs, n)) < n) {
        df_ra_advance(&df->ra, i, fbs[got] * DFSTORE_BLOCK);
        return;
    }
    if (want.n > 0)
        df_ra_advance(&df->ra, i, min_u64(want.r[want.n - 1].to, df->size));
}
