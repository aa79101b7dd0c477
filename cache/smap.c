/* Sector maps of one cached block (cache.h): bit i of w[i / 64] is
 * sector i; and the I/O node's L1's rules on them (cache_sect_*: which
 * sectors a write makes valid and dirty, whether a write may be absorbed
 * into a block with holes, how a read of such a block is served, the
 * volume writes a write-back of adjacent blocks makes of their dirty
 * sectors), shared with its replay (tools/cachesim/live.c).  Pure, no
 * allocation; unit-tested on hand-checked cases by
 * test/test_small_l1sect.c. */
#include "cache/cache.h"

/* The bits of word k that sectors [lo, hi) cover. */
static uint64_t word_mask(uint32_t k, uint32_t lo, uint32_t hi)
{
    uint32_t a = k * 64, b = a + 64;
    uint32_t from = lo > a ? lo - a : 0, to = hi < b ? hi - a : 64;

    if (from >= to || hi <= a || lo >= b)
        return 0;
    return (to == 64 ? ~0ull : (1ull << to) - 1) & ~((1ull << from) - 1);
}

void cache_smap_set(struct cache_smap *m, uint32_t lo, uint32_t hi)
{
    for (uint32_t k = 0; k < CACHE_SECTORS_MAX / 64; k++)
        m->w[k] |= word_mask(k, lo, hi);
}

void cache_smap_clear(struct cache_smap *m, uint32_t lo, uint32_t hi)
{
    for (uint32_t k = 0; k < CACHE_SECTORS_MAX / 64; k++)
        m->w[k] &= ~word_mask(k, lo, hi);
}

int cache_smap_all(const struct cache_smap *m, uint32_t lo, uint32_t hi)
{
    for (uint32_t k = 0; k < CACHE_SECTORS_MAX / 64; k++) {
        uint64_t want = word_mask(k, lo, hi);
        if ((m->w[k] & want) != want)
            return 0;
    }
    return 1;
}

int cache_smap_any(const struct cache_smap *m, uint32_t lo, uint32_t hi)
{
    for (uint32_t k = 0; k < CACHE_SECTORS_MAX / 64; k++)
        if (m->w[k] & word_mask(k, lo, hi))
            return 1;
    return 0;
}

static int bit(const struct cache_smap *m, uint32_t i)
{
    return (int)(m->w[i / 64] >> (i % 64) & 1);
}

int cache_smap_next_run(const struct cache_smap *m, uint32_t n, uint32_t from, uint32_t *lo,
                        uint32_t *hi)
{
    uint32_t i = from;

    if (n > CACHE_SECTORS_MAX)
        n = CACHE_SECTORS_MAX;
    while (i < n && !bit(m, i))
        i++;
    if (i >= n)
        return 0;
    *lo = i;
    while (i < n && bit(m, i))
        i++;
    *hi = i;
    return 1;
}

void cache_smap_andnot(struct cache_smap *m, const struct cache_smap *other)
{
    for (uint32_t k = 0; k < CACHE_SECTORS_MAX / 64; k++)
        m->w[k] &= ~other->w[k];
}

int cache_sect_fits(const struct cache_smap *holes, uint32_t sect, uint64_t in, uint64_t n)
{
    uint32_t a = (uint32_t)(in / sect), b = (uint32_t)((in + n - 1) / sect);

    if (n == 0)
        return 1;
    if (in % sect && (!holes || cache_smap_any(holes, a, a + 1)))
        return 0;
    if ((in + n) % sect && (!holes || cache_smap_any(holes, b, b + 1)))
        return 0;
    return 1;
}

void cache_sect_write(struct cache_smap *holes, struct cache_smap *dmap, uint32_t sect,
                      uint64_t in, uint64_t n, int dirty)
{
    uint32_t lo = (uint32_t)((in + sect - 1) / sect), hi = (uint32_t)((in + n) / sect);

    if (n == 0)
        return;
    if (lo < hi)
        cache_smap_clear(holes, lo, hi);
    if (dirty) {
        cache_smap_set(dmap, (uint32_t)(in / sect), (uint32_t)((in + n + sect - 1) / sect));
        cache_smap_andnot(dmap, holes);
    }
}

enum cache_sect_read cache_sect_read(const struct cache_smap *holes,
                                     const struct cache_smap *dmap, uint32_t sect, uint64_t in,
                                     uint64_t n)
{
    uint32_t lo = (uint32_t)(in / sect), hi = (uint32_t)((in + n + sect - 1) / sect);

    if (!cache_smap_any(holes, lo, hi))
        return CACHE_READ_HIT;
    return cache_smap_any(dmap, lo, hi) ? CACHE_READ_MERGE : CACHE_READ_AROUND;
}

uint32_t cache_sect_runs(const struct cache_smap *const *dmaps, uint32_t n, uint32_t nsect,
                         uint32_t sect, struct cache_run *runs, uint32_t max)
{
    uint32_t nruns = 0;

    for (uint32_t i = 0; i < n; i++) {
        uint32_t lo, hi, at = 0;
        while (cache_smap_next_run(dmaps[i], nsect, at, &lo, &hi)) {
            uint64_t a = (uint64_t)i * CACHE_BLOCK_SIZE + (uint64_t)lo * sect;
            uint64_t b = (uint64_t)i * CACHE_BLOCK_SIZE + (uint64_t)hi * sect;
            if (nruns > 0 && runs[nruns - 1].end == a)
                runs[nruns - 1].end = b;
            else if (nruns < max)
                runs[nruns++] = (struct cache_run){ a, b };
            else
                return UINT32_MAX;
            at = hi;
        }
    }
    return nruns;
}

/* Whether no sector of bytes [a, b) (of the n blocks, sector-aligned) is a
 * hole. */
static int gap_valid(const struct cache_smap *const *holes, uint32_t n, uint32_t sect, uint64_t a,
                     uint64_t b)
{
    for (uint64_t i = a / CACHE_BLOCK_SIZE; i < n && i * CACHE_BLOCK_SIZE < b; i++) {
        uint64_t lo = a > i * CACHE_BLOCK_SIZE ? a - i * CACHE_BLOCK_SIZE : 0;
        uint64_t hi = b < (i + 1) * CACHE_BLOCK_SIZE ? b - i * CACHE_BLOCK_SIZE : CACHE_BLOCK_SIZE;
        if (cache_smap_any(holes[i], (uint32_t)(lo / sect), (uint32_t)(hi / sect)))
            return 0;
    }
    return 1;
}

uint32_t cache_sect_bridge(struct cache_run *runs, uint32_t nruns,
                           const struct cache_smap *const *holes, uint32_t n, uint32_t sect,
                           uint64_t bridge)
{
    uint32_t out = 0;

    for (uint32_t r = 0; r < nruns; r++) {
        if (out > 0 && runs[r].start - runs[out - 1].end <= bridge &&
            gap_valid(holes, n, sect, runs[out - 1].end, runs[r].start))
            runs[out - 1].end = runs[r].end;
        else
            runs[out++] = runs[r];
    }
    return out;
}
