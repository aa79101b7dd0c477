/* READ places and order of an I/O node (readq.h). */
#include "backend/server/readq.h"

#include <stddef.h>

void readq_init(struct read_order *ro, uint32_t places, uint32_t hash_first, uint64_t seed)
{
    *ro = (struct read_order){ .places = places ? places : 1, .nclients = 1,
                               .hash_next = hash_first, .rng = seed ? seed : 1 };
}

static uint64_t rng_next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static void store_add(struct read_order *ro, struct read_wait *w, enum read_state state,
                      uint64_t now_us)
{
    w->state = state;
    w->since_us = now_us;
    w->prev = NULL;
    w->next = ro->store;
    if (ro->store)
        ro->store->prev = w;
    ro->store = w;
    if (state == RW_PLACE) {
        ro->in_store++;
    } else {
        ro->riding++;
        ro->rode++;
    }
}

/* Whether w may ride along with a READ in the store (readq.h, riders). */
static int may_ride(const struct read_order *ro, const struct read_wait *w)
{
    if (ro->riding >= ro->places)
        return 0;
    for (const struct read_wait *s = ro->store; s; s = s->next)
        if (s->handle == w->handle && s->lo < w->hi && w->lo < s->hi)
            return 1;
    return 0;
}

int readq_submit(struct read_order *ro, struct read_wait *w, uint64_t now_us)
{
    /* the largest id (ipvfs-ctl's) would wrap n to 0, a division by zero
     * in HASH: it takes part in the round robin modulo the others' n */
    if (w->client_id >= ro->nclients && w->client_id != UINT32_MAX)
        ro->nclients = w->client_id + 1;
    if (!ro->head && ro->in_store < ro->places) {
        store_add(ro, w, RW_PLACE, now_us);
        return 1;
    }
    if (may_ride(ro, w)) {
        store_add(ro, w, RW_RIDER, now_us);
        return 1;
    }
    w->state = RW_WAITING;
    w->since_us = now_us;
    w->next = NULL;
    if (ro->tail)
        ro->tail->next = w;
    else
        ro->head = w;
    ro->tail = w;
    return 0;
}

/* Whether a is to be served before b (both waiting) under policy. */
static int read_before(const struct read_order *ro, uint32_t policy, uint32_t target,
                       const struct read_wait *a, const struct read_wait *b)
{
    switch (policy) {
    case IPVFS_READ_ORDER_FIRST:
        return a->first < b->first;
    case IPVFS_READ_ORDER_HASH:
        return (a->client_id + ro->nclients - target) % ro->nclients <
               (b->client_id + ro->nclients - target) % ro->nclients;
    case IPVFS_READ_ORDER_RANDOM:
        return a->client_id == target && b->client_id != target;
    default:
        return 0;
    }
}

/* RANDOM: a client drawn evenly among those waiting. */
static uint32_t random_client(struct read_order *ro)
{
    uint32_t n = 0, k;
    struct read_wait *w;

    for (w = ro->head; w; w = w->next)
        n++;
    k = (uint32_t)(rng_next(&ro->rng) % n);
    for (w = ro->head; k; w = w->next)
        k--;
    /* a READ drawn evenly is a client weighted by its waiting READs (a
     * connection may have several waiting since protocol 5) */
    return w->client_id;
}

/* The link that points at the waiting READ the oldest one's policy serves
 * next (the oldest wins ties, so each policy is FIFO among equals). */
static struct read_wait **pick_place(struct read_order *ro)
{
    uint32_t policy = ro->head->order, target = ro->hash_next % ro->nclients;
    struct read_wait **best = &ro->head, **pp;

    if (policy == IPVFS_READ_ORDER_RANDOM)
        target = random_client(ro);
    for (pp = &ro->head->next; *pp; pp = &(*pp)->next)
        if (read_before(ro, policy, target, *pp, *best))
            best = pp;
    if (policy == IPVFS_READ_ORDER_HASH)
        ro->hash_next = ((*best)->client_id + 1) % ro->nclients;
    return best;
}

/* The link that points at the oldest waiting READ that may ride, or NULL. */
static struct read_wait **pick_rider(struct read_order *ro)
{
    for (struct read_wait **pp = &ro->head; *pp; pp = &(*pp)->next)
        if (may_ride(ro, *pp))
            return pp;
    return NULL;
}

struct read_wait *readq_next(struct read_order *ro, uint64_t now_us)
{
    struct read_wait **pp, *w;
    int place;

    if (!ro->head)
        return NULL;
    place = ro->in_store < ro->places;
    if (!(pp = place ? pick_place(ro) : pick_rider(ro)))
        return NULL;
    w = *pp;
    *pp = w->next;
    if (ro->tail == w) {
        ro->tail = NULL;
        for (struct read_wait *t = ro->head; t; t = t->next)
            ro->tail = t;
    }
    ro->served++;
    ro->waited++;
    ro->wait_us += now_us - w->since_us;
    if (place && ro->freed_us) {
        ro->handoffs++;
        ro->handoff_us += now_us - ro->freed_us;
        ro->freed_us = 0;
    }
    store_add(ro, w, place ? RW_PLACE : RW_RIDER, now_us);
    return w;
}

void readq_leave(struct read_order *ro, struct read_wait *w, uint64_t now_us)
{
    if (w->prev)
        w->prev->next = w->next;
    else
        ro->store = w->next;
    if (w->next)
        w->next->prev = w->prev;
    w->next = w->prev = NULL;
    if (w->state == RW_PLACE) {
        ro->in_store--;
        ro->placed++;
        ro->place_us += now_us - w->since_us;
        if (ro->head && !ro->freed_us)
            ro->freed_us = now_us;
    } else {
        ro->riding--;
    }
    w->state = RW_OUT;
}
