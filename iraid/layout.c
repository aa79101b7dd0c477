#include "iraid/layout.h"

#include <errno.h>

int iraid_layout_init(struct iraid_layout *out, int level, uint32_t nmembers, uint64_t chunk,
                      uint64_t member_bytes)
{
    uint32_t min_members;

    switch (level) {
    case 0: min_members = 1; break;
    case 1: min_members = 2; break;
    case 5: min_members = 3; break;
    default: return -EINVAL;
    }
    if (nmembers < min_members || chunk == 0)
        return -EINVAL;
    *out = (struct iraid_layout){
        .level = level, .nmembers = nmembers, .chunk = chunk, .stripes = member_bytes / chunk,
    };
    return 0;
}

uint32_t iraid_layout_data_per_stripe(const struct iraid_layout *l)
{
    switch (l->level) {
    case 1: return 1;
    case 5: return l->nmembers - 1;
    default: return l->nmembers;
    }
}

uint64_t iraid_layout_capacity(const struct iraid_layout *l)
{
    return l->stripes * iraid_layout_data_per_stripe(l) * l->chunk;
}

uint32_t iraid_layout_parity_member(const struct iraid_layout *l, uint64_t stripe)
{
    return (l->nmembers - 1) - (uint32_t)(stripe % l->nmembers);
}

void iraid_layout_map(const struct iraid_layout *l, uint64_t vol_off, struct iraid_loc *out)
{
    uint64_t d = vol_off / l->chunk, in_chunk = vol_off % l->chunk;
    uint32_t per = iraid_layout_data_per_stripe(l);

    out->stripe = d / per;
    switch (l->level) {
    case 1:
        out->member = (uint32_t)(d % l->nmembers);
        break;
    case 5:
        out->member = (iraid_layout_parity_member(l, out->stripe) + 1 + (uint32_t)(d % per)) %
                      l->nmembers;
        break;
    default:
        out->member = (uint32_t)(d % per);
        break;
    }
    out->member_off = out->stripe * l->chunk + in_chunk;
    out->run = l->chunk - in_chunk;
}

uint64_t iraid_layout_unmap(const struct iraid_layout *l, uint32_t member, uint64_t member_off)
{
    uint64_t stripe = member_off / l->chunk, in_chunk = member_off % l->chunk;
    uint32_t per = iraid_layout_data_per_stripe(l), k, p;

    switch (l->level) {
    case 1:
        k = 0;
        break;
    case 5:
        p = iraid_layout_parity_member(l, stripe);
        if (member == p)
            return IRAID_NO_DATA;
        k = (member + l->nmembers - p - 1) % l->nmembers;
        break;
    default:
        k = member;
        break;
    }
    return (stripe * per + k) * l->chunk + in_chunk;
}

uint64_t iraid_layout_stripe_run(const struct iraid_layout *l, uint64_t off, uint64_t len,
                                 uint64_t region_stripes, uint64_t max_stripes)
{
    uint64_t sbytes = (uint64_t)iraid_layout_data_per_stripe(l) * l->chunk, s, n;

    if (sbytes == 0 || off % sbytes || region_stripes == 0)
        return 0;
    s = off / sbytes;
    n = len / sbytes;
    if (n > region_stripes - s % region_stripes)
        n = region_stripes - s % region_stripes;
    return n < max_stripes ? n : max_stripes;
}

int iraid_resume_by_bitmap(uint64_t events, int self_stale, uint64_t fail_lo, uint64_t fail_hi)
{
    return !self_stale && fail_lo <= fail_hi && events >= fail_lo && events <= fail_hi;
}

uint64_t iraid_bitmap_stripes_below(const uint8_t *map, uint64_t region_stripes,
                                    uint64_t stripes, uint64_t limit)
{
    uint64_t n = 0;

    if (limit > stripes)
        limit = stripes;
    for (uint64_t r = 0; region_stripes && r * region_stripes < limit; r++) {
        uint64_t end = (r + 1) * region_stripes < limit ? (r + 1) * region_stripes : limit;
        if (map[r / 8] >> (r % 8) & 1)
            n += end - r * region_stripes;
    }
    return n;
}
