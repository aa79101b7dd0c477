/* Sequential read-ahead of the datafile store (see readahead.h). */
#include "backend/dfstore/readahead.h"

#include "backend/dfstore/internal.h"

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* The stream whose expected next read is within DF_RA_GAP of off, or
 * DF_RA_STREAMS. */
static unsigned stream_find(const struct df_ra *ra, uint64_t off)
{
    for (unsigned i = 0; i < DF_RA_STREAMS; i++) {
        const struct df_ra_stream *s = &ra->s[i];
        if (s->used && off + DF_RA_GAP >= s->next && off <= s->next + DF_RA_GAP)
            return i;
    }
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

unsigned df_ra_feed(struct df_ra *ra, uint64_t off, uint64_t end, uint64_t max,
                    uint64_t *out_from, uint64_t *out_to)
{
    unsigned i;
    struct df_ra_stream *s;

    *out_from = *out_to = 0;
    if (max == 0 || end <= off)
        return DF_RA_STREAMS;
    ra->tick++;
    if ((i = stream_find(ra, off)) == DF_RA_STREAMS) {
        /* a seek, or a new reader: a new stream, nothing ahead yet */
        i = stream_oldest(ra);
        ra->s[i] = (struct df_ra_stream){ .next = end, .ahead = end, .used = ra->tick,
                                          .seen = end - off };
        return i;
    }
    s = &ra->s[i];
    s->used = ra->tick;
    s->seen += end - off;
    if (s->window)
        s->window = min_u64(2 * s->window, max);
    else if (off == s->next || s->seen >= DF_RA_MIN)
        s->window = min_u64(DF_RA_MIN, max);
    if (end > s->next)
        s->next = end;
    if (s->ahead < end)
        s->ahead = end;
    /* top up once less than half the window lies ahead */
    if (s->ahead - end < s->window / 2) {
        *out_from = s->ahead;
        *out_to = end + s->window;
    }
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
    uint64_t off, end = 0, from, to, fb, last, fbs[RA_BATCH], vbs[RA_BATCH];
    unsigned i;

    if (ds->l1.ra_cap == 0 || npairs == 0)
        return;
    off = pairs[0].offset;
    for (uint32_t p = 0; p < npairs; p++)
        if (pairs[p].len && pairs[p].offset + pairs[p].len > end)
            end = pairs[p].offset + pairs[p].len;
    i = df_ra_feed(&df->ra, off, end, max, &from, &to);
    to = min_u64(to, df->size);
    if (from >= to)
        return;
    last = (to + DFSTORE_BLOCK - 1) / DFSTORE_BLOCK;
    for (fb = from / DFSTORE_BLOCK; fb < last;) {
        uint32_t n = 0, got;
        for (; fb < last && n < RA_BATCH; fb++) {
            uint64_t vb = u64map_get(&df->blocks, fb);
            if (vb != DF_NO_BLOCK) {        /* a hole has nothing to fetch */
                fbs[n] = fb;
                vbs[n++] = vb;
            }
        }
        if ((got = df_l1_prefetch(&ds->l1, vbs, n)) < n) {
            df_ra_advance(&df->ra, i, fbs[got] * DFSTORE_BLOCK);
            return;
        }
    }
    df_ra_advance(&df->ra, i, to);
}
