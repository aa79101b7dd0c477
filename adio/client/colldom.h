/* File domains of the collective (two-phase) path of ad_ipvfs: pure
 * arithmetic, no I/O (unit-tested by test/test_client_colldom.c).
 *
 * The aggregators' file domains follow the stripe layout so that each
 * aggregator talks to as few I/O nodes as possible.  Stripe unit u of the
 * file lies in datafile d = u % F (row u / F); with A aggregators:
 *   A <= F: aggregator d % A owns every unit of datafile d, so it talks
 *           only to the I/O nodes of its datafiles (one when A divides F);
 *   A >  F: k = A / F aggregators share datafile d, taking its rows in
 *           turn: unit u goes to aggregator d + F * (row % k) (aggregators
 *           from F * k on get nothing), one I/O node each.
 * An aggregator's units, in file order, form its domain; byte b of the
 * domain (counting from the file's start) is handled in round b / cb, so
 * a round brings an aggregator at most cb distinct bytes. */
#ifndef IPVFS_CLIENT_COLLDOM_H
#define IPVFS_CLIENT_COLLDOM_H

#include <stdint.h>

#pragma GCC visibility push(hidden)

struct coll_domain {
    uint64_t unit;        /* stripe unit, > 0 */
    uint32_t factor;      /* datafiles F, > 0 */
    uint32_t naggs;       /* aggregators A, > 0 */
    uint64_t cb;          /* bytes per aggregator per round, > 0 */
};

/* Where the bytes [off, off + len) (len > 0) start: *agg the aggregator,
 * *round the round; returns how many of them (1..len) go with it, up to
 * the end of the stripe unit or of the round, whichever comes first. */
uint64_t coll_domain_piece(const struct coll_domain *d, uint64_t off, uint64_t len,
                           uint32_t *agg, uint64_t *round);

/* The aggregator of stripe unit u and the unit's index in its domain. */
void coll_domain_unit(const struct coll_domain *d, uint64_t u, uint32_t *agg, uint64_t *idx);

#pragma GCC visibility pop

#endif
