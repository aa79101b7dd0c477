/* An I/O node's READ places: which READs are in its store at once, and in
 * which order the others get in (the policies are enum ipvfs_read_order in
 * common/proto.h).  Pure bookkeeping, no I/O and no clock of its own:
 * ionode.c starts each READ this lets in, and tells it when one leaves
 * the store.  Unit tested on its own (test/test_small_readq.c).
 *
 * A READ (struct read_wait, embedded in the I/O node's request) is in one
 * of these states:
 *   RW_OUT      not known here (before readq_submit, after readq_leave);
 *   RW_WAITING  queued, oldest first; readq_next takes it out;
 *   RW_PLACE    in the store, holding one of ro->places places;
 *   RW_RIDER    in the store without a place, riding along with a READ
 *               there of the same datafile whose span overlaps its own.
 * Transitions: OUT -> PLACE (readq_submit: a place is free and nobody
 * waits), OUT -> RIDER (readq_submit: no place, but a READ to ride with),
 * OUT -> WAITING (readq_submit, else); WAITING -> PLACE or RIDER
 * (readq_next); PLACE or RIDER -> OUT (readq_leave).  A waiting READ is
 * never dropped here: the caller waits for readq_next to hand it out
 * (the store's going away fails it in read_start).
 *
 * Riders (issue 27): the rows of tiles that several clients read at once
 * lie side by side on the volume, but each client's rows come in its own
 * list READ.  When the READs holding the places are all one client's, no
 * two pieces in the store are neighbours and each row costs a target
 * command of its own; a READ whose pieces interleave with those of a READ
 * in the store has them read in the same commands (the volume reads past
 * the L1 coalesce, backend/dfstore/l1cache.h), so it goes in at once for
 * little more disk time.  At most ro->places riders are in the store, so
 * it never holds more than twice its places' READs. */
#ifndef IPVFS_SERVER_READQ_H
#define IPVFS_SERVER_READQ_H

#include <stdint.h>

#include "common/proto.h"

enum read_state { RW_OUT, RW_WAITING, RW_PLACE, RW_RIDER };

struct read_wait {
    /* the caller's, set before readq_submit */
    uint64_t handle;
    uint64_t lo, hi;            /* the datafile span [lo, hi) of its pairs */
    uint64_t first;             /* its first pair's offset (FIRST) */
    uint32_t order;             /* enum ipvfs_read_order the client named */
    uint32_t client_id;
    /* readq's */
    enum read_state state;
    uint64_t since_us;          /* when it took its place or began to wait */
    struct read_wait *next;     /* WAITING: the queue; in the store: its list */
    struct read_wait *prev;     /* in the store: its list */
};

struct read_order {
    struct read_wait *head, *tail;  /* waiting READs, oldest first */
    struct read_wait *store;        /* READs in the store (places and riders) */
    uint32_t in_store;          /* of them, holding places */
    uint32_t riding;            /* of them, riders */
    uint32_t places;            /* at most this many places at once */
    uint32_t nclients;          /* one more than the largest client id seen */
    uint32_t hash_next;         /* HASH: the client whose turn it is */
    uint64_t served;            /* waiting READs served so far */
    uint64_t placed, place_us;  /* READs that left their places, and how long
                                 * they held them (logged at close:
                                 * benchmarks/model-calibrate.sh) */
    uint64_t rode;              /* READs that went in as riders */
    uint64_t freed_us;          /* when a place fell free while READs
                                 * waited (0: none such now) */
    uint64_t handoffs, handoff_us;  /* how often, and how long in all, such
                                     * a place stayed free until the next
                                     * READ took it (logged at close) */
    uint64_t waited, wait_us;   /* READs that waited, and how long in all
                                 * (logged at close: where a response's
                                 * time goes under load) */
    uint64_t replied, reply_us; /* READs answered, and their time from the
                                 * request to the reply (ionode.c; logged
                                 * at close) */
    uint64_t rng;               /* RANDOM's generator */
};

/* Sets ro up empty: places places (at least 1), HASH's turn first at
 * client hash_first, RANDOM's generator seeded with seed. */
void readq_init(struct read_order *ro, uint32_t places, uint32_t hash_first, uint64_t seed);

/* w arrives at now_us: returns 1 when it is in the store now (RW_PLACE or
 * RW_RIDER: start it), 0 when it waits (RW_WAITING). */
int readq_submit(struct read_order *ro, struct read_wait *w, uint64_t now_us);

/* The next waiting READ that may go into the store now, out of the queue
 * (RW_PLACE: a place was free and the oldest waiting READ's policy picked
 * it; RW_RIDER: it rides with one there), or NULL when none may.  Call it
 * until NULL after a READ went in or left. */
struct read_wait *readq_next(struct read_order *ro, uint64_t now_us);

/* w (RW_PLACE or RW_RIDER) is done in the store at now_us: RW_OUT. */
void readq_leave(struct read_order *ro, struct read_wait *w, uint64_t now_us);

#endif
