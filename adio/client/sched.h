/* Client-side I/O scheduling (first-, random- and hash-IOS of the
 * Clusterfile paper): pure functions over a plan, no I/O (unit-tested by
 * test/test_client_plan.c).
 *
 * The requests of one server keep their plan order (the order the access
 * names its bytes); only the interleaving between servers changes. */
#ifndef IPVFS_CLIENT_SCHED_H
#define IPVFS_CLIENT_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "adio/client/ipvfs_client.h"
#include "adio/client/plan.h"

#pragma GCC visibility push(hidden)

/* Fills order[0 .. plan->nreqs-1] with a permutation of the plan's request
 * indices: the order to send them in.  client_id is i of hash-IOS; *rng is
 * the state of random-IOS's generator (any value; advanced).  Every
 * request's server must be below nio.  Returns 0 or -ENOMEM. */
int sched_order(const struct plan *plan, enum ipvfs_schedule policy, uint32_t client_id,
                uint32_t nio, uint64_t *rng, size_t *order);

/* Reorders plan->reqs so that the new request k is the old order[k].
 * Returns 0 or -ENOMEM (the plan is unchanged then). */
int sched_apply(struct plan *plan, const size_t *order);

#pragma GCC visibility pop

#endif
