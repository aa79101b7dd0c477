/* Collective file domains along the stripe layout (see colldom.h). */
#include "adio/client/colldom.h"

void coll_domain_unit(const struct coll_domain *d, uint64_t u, uint32_t *agg, uint64_t *idx)
{
    uint64_t df = u % d->factor, row = u / d->factor;

    if (d->naggs <= d->factor) {
        uint32_t a = (uint32_t) (df % d->naggs);
        /* datafiles a, a + A, a + 2A, ... below F belong to aggregator a */
        uint64_t owned = (d->factor - a + d->naggs - 1) / d->naggs;

        *agg = a;
        *idx = row * owned + df / d->naggs;
    } else {
        uint64_t share = d->naggs / d->factor;

        *agg = (uint32_t) (df + d->factor * (row % share));
        *idx = row / share;
    }
}

uint64_t coll_domain_piece(const struct coll_domain *d, uint64_t off, uint64_t len,
                           uint32_t *agg, uint64_t *round)
{
    uint64_t idx, in_unit = off % d->unit, pos, take;

    coll_domain_unit(d, off / d->unit, agg, &idx);
    pos = idx * d->unit + in_unit;
    *round = pos / d->cb;
    take = d->unit - in_unit;
    if (take > d->cb - pos % d->cb)
        take = d->cb - pos % d->cb;
    return take < len ? take : len;
}
