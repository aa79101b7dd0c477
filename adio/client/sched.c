#include "adio/client/sched.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The pending requests of every server, as singly linked lists in plan
 * order: head[s] is the next request of server s, link[i] the one after
 * request i (-1 ends a list). */
struct queues {
    long *head;
    long *tail;
    long *link;
};

static void queues_free(struct queues *q)
{
    free(q->head);
    free(q->tail);
    free(q->link);
}

static int queues_build(const struct plan *plan, uint32_t nio, struct queues *q)
{
    q->head = malloc(nio * sizeof(*q->head));
    q->tail = malloc(nio * sizeof(*q->tail));
    q->link = malloc((plan->nreqs ? plan->nreqs : 1) * sizeof(*q->link));
    if (!q->head || !q->tail || !q->link) {
        queues_free(q);
        return -ENOMEM;
    }
    for (uint32_t s = 0; s < nio; s++)
        q->head[s] = q->tail[s] = -1;
    for (size_t i = 0; i < plan->nreqs; i++) {
        uint32_t s = plan->reqs[i].server;

        q->link[i] = -1;
        if (q->tail[s] < 0)
            q->head[s] = (long)i;
        else
            q->link[q->tail[s]] = (long)i;
        q->tail[s] = (long)i;
    }
    return 0;
}

/* Takes the next request of server s off its list. */
static size_t queues_pop(struct queues *q, uint32_t s)
{
    long i = q->head[s];

    q->head[s] = q->link[i];
    return (size_t)i;
}

/* xorshift64*: small, fast, good enough to spread choices; never 0. */
static uint64_t rng_next(uint64_t *state)
{
    uint64_t x = *state ? *state : 0x9E3779B97F4A7C15ull;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* hash-IOS: step j goes to server (client_id + j) mod nio; a step whose
 * server has nothing left is skipped.  Every nio steps take at least one
 * request while any is left, so the loop ends. */
static void order_hash(const struct plan *plan, struct queues *q, uint32_t client_id,
                       uint32_t nio, size_t *order)
{
    size_t k = 0;

    for (uint64_t j = 0; k < plan->nreqs; j++) {
        uint32_t s = (uint32_t)(((uint64_t)client_id + j) % nio);

        if (q->head[s] >= 0)
            order[k++] = queues_pop(q, s);
    }
}

/* random-IOS: a uniformly chosen server among those with requests left. */
static int order_random(const struct plan *plan, struct queues *q, uint32_t nio, uint64_t *rng,
                        size_t *order)
{
    uint32_t *live = malloc(nio * sizeof(*live)), nlive = 0;

    if (!live)
        return -ENOMEM;
    for (uint32_t s = 0; s < nio; s++)
        if (q->head[s] >= 0)
            live[nlive++] = s;
    for (size_t k = 0; k < plan->nreqs; k++) {
        uint32_t pick = (uint32_t)(rng_next(rng) % nlive), s = live[pick];

        order[k] = queues_pop(q, s);
        if (q->head[s] < 0)
            live[pick] = live[--nlive];
    }
    free(live);
    return 0;
}

int sched_order(const struct plan *plan, enum ipvfs_schedule policy, uint32_t client_id,
                uint32_t nio, uint64_t *rng, size_t *order)
{
    struct queues q;
    int rc = 0;

    if (policy == IPVFS_SCHED_FIRST || plan->nreqs == 0) {
        for (size_t i = 0; i < plan->nreqs; i++)
            order[i] = i;
        return 0;
    }
    rc = queues_build(plan, nio, &q);
    if (rc < 0)
        return rc;
    if (policy == IPVFS_SCHED_RANDOM)
        rc = order_random(plan, &q, nio, rng, order);
    else
        order_hash(plan, &q, client_id, nio, order);
    queues_free(&q);
    return rc;
}

int sched_apply(struct plan *plan, const size_t *order)
{
    struct plan_req *reqs;

    if (plan->nreqs == 0)
        return 0;
    reqs = malloc(plan->nreqs * sizeof(*reqs));
    if (!reqs)
        return -ENOMEM;
    for (size_t k = 0; k < plan->nreqs; k++)
        reqs[k] = plan->reqs[order[k]];
    free(plan->reqs);
    plan->reqs = reqs;
    plan->cap = plan->nreqs;
    return 0;
}
