/* The event loop of evloop.h.
 *
 * Timers and deferred calls live in one slab of slots, so that an id
 * finds its slot in O(1): id = generation << SLOT_BITS | (slot + 1), and a
 * slot's generation grows each time it is freed, so a stale id never
 * matches.  Pending timers are a binary min-heap of slot numbers ordered by
 * (deadline, seq); each slot knows its heap position, so removal is
 * O(log n) too.  Deferred calls are a FIFO list through the slots. */
#include "common/evloop.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#define SLOT_BITS 24u
#define MAX_SLOTS ((1u << SLOT_BITS) - 1u)
#define NONE      UINT32_MAX

struct ev_fd {
    evloop_fd_cb cb;
    void *user;
    int mask;
    int registered;
    uint64_t reg_seq;           /* when it was registered (loop->nreg) */
};

enum slot_kind { SLOT_FREE, SLOT_TIMER, SLOT_DEFER, SLOT_DEFER_OUTER };

struct ev_slot {
    enum slot_kind kind;
    uint64_t gen;
    uint64_t seq;               /* creation order: ties, and "added since" */
    uint64_t when_ms;           /* timers */
    evloop_timer_cb cb;
    void *user;
    uint32_t heap_pos;          /* timers */
    uint32_t prev, next;        /* deferred: FIFO links; free: free list */
};

struct evloop {
    int epfd;
    struct ev_fd *fds;          /* indexed by fd */
    int nfds;
    uint64_t nreg;              /* fd registrations so far */

    struct ev_slot *slots;
    uint32_t nslots;
    uint32_t free_slot;         /* head of the free list */
    uint64_t next_seq;

    uint32_t *heap;             /* timer slots, min-heap */
    uint32_t nheap;

    uint32_t defer_head, defer_tail;
    uint32_t ndefer, ndefer_outer;

    int depth;                  /* evloop_run_once frames active */
    int run_depth;              /* depth of evloop_run's rounds; 0: none running */
    int stop;
};

uint64_t evloop_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

struct evloop *evloop_create(void)
{
    struct evloop *loop = calloc(1, sizeof(*loop));

    if (!loop)
        return NULL;
    loop->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (loop->epfd < 0) {
        free(loop);
        return NULL;
    }
    loop->free_slot = NONE;
    loop->defer_head = loop->defer_tail = NONE;
    return loop;
}

void evloop_destroy(struct evloop *loop)
{
    if (!loop)
        return;
    close(loop->epfd);
    free(loop->fds);
    free(loop->slots);
    free(loop->heap);
    free(loop);
}

/* ---- fds ----------------------------------------------------------------- */

static int grow_fds(struct evloop *loop, int fd)
{
    int n = loop->nfds ? loop->nfds : 64;
    struct ev_fd *fds;

    while (n <= fd)
        n *= 2;
    fds = realloc(loop->fds, (size_t)n * sizeof(*fds));
    if (!fds)
        return -ENOMEM;
    memset(fds + loop->nfds, 0, (size_t)(n - loop->nfds) * sizeof(*fds));
    loop->fds = fds;
    loop->nfds = n;
    return 0;
}

static uint32_t epoll_mask(int mask)
{
    return (mask & EV_READ ? EPOLLIN : 0) | (mask & EV_WRITE ? EPOLLOUT : 0);
}

int evloop_set_fd(struct evloop *loop, int fd, int mask, evloop_fd_cb cb, void *user)
{
    struct epoll_event ee = { .events = epoll_mask(mask), .data.fd = fd };
    int rc;

    if (fd < 0 || !cb)
        return -EINVAL;
    if (fd >= loop->nfds && (rc = grow_fds(loop, fd)) < 0)
        return rc;
    if (loop->fds[fd].registered) {
        if (epoll_ctl(loop->epfd, EPOLL_CTL_MOD, fd, &ee) < 0)
            return -errno;
        loop->fds[fd].cb = cb;
        loop->fds[fd].user = user;
        loop->fds[fd].mask = mask;
        return 0;
    }
    if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, fd, &ee) < 0)
        return -errno;
    loop->fds[fd] = (struct ev_fd){ .cb = cb, .user = user, .mask = mask, .registered = 1,
                                    .reg_seq = ++loop->nreg };
    return 0;
}

int evloop_mod_fd(struct evloop *loop, int fd, int mask)
{
    struct epoll_event ee = { .events = epoll_mask(mask), .data.fd = fd };

    if (fd < 0 || fd >= loop->nfds || !loop->fds[fd].registered)
        return -ENOENT;
    if (loop->fds[fd].mask == mask)
        return 0;
    if (epoll_ctl(loop->epfd, EPOLL_CTL_MOD, fd, &ee) < 0)
        return -errno;
    loop->fds[fd].mask = mask;
    return 0;
}

void evloop_del_fd(struct evloop *loop, int fd)
{
    if (fd < 0 || fd >= loop->nfds || !loop->fds[fd].registered)
        return;
    /* Fails harmlessly when the fd was already closed. */
    (void)epoll_ctl(loop->epfd, EPOLL_CTL_DEL, fd, NULL);
    memset(&loop->fds[fd], 0, sizeof(loop->fds[fd]));
}

/* ---- slots ----------------------------------------------------------------- */

static uint64_t slot_id(const struct evloop *loop, uint32_t s)
{
    return loop->slots[s].gen << SLOT_BITS | (s + 1);
}

/* The slot that id names, or NONE when it ran, was cancelled or never was. */
static uint32_t slot_of(const struct evloop *loop, uint64_t id)
{
    uint64_t low = id & MAX_SLOTS;
    uint32_t s;

    if (low == 0 || low > loop->nslots)
        return NONE;
    s = (uint32_t)low - 1;
    if (loop->slots[s].kind == SLOT_FREE || loop->slots[s].gen != id >> SLOT_BITS)
        return NONE;
    return s;
}

static int grow_slots(struct evloop *loop)
{
    uint32_t n = loop->nslots ? loop->nslots * 2 : 64;
    struct ev_slot *slots;
    uint32_t *heap;

    if (loop->nslots >= MAX_SLOTS)
        return -ENOMEM;
    if (n > MAX_SLOTS)
        n = MAX_SLOTS;
    if (!(heap = realloc(loop->heap, (size_t)n * sizeof(*heap))))
        return -ENOMEM;
    loop->heap = heap;
    if (!(slots = realloc(loop->slots, (size_t)n * sizeof(*slots))))
        return -ENOMEM;
    for (uint32_t s = loop->nslots; s < n; s++)
        slots[s] = (struct ev_slot){ .kind = SLOT_FREE, .gen = 1,
                                     .next = s + 1 < n ? s + 1 : loop->free_slot };
    loop->free_slot = loop->nslots;
    loop->slots = slots;
    loop->nslots = n;
    return 0;
}

static uint32_t slot_alloc(struct evloop *loop, enum slot_kind kind, evloop_timer_cb cb,
                           void *user)
{
    uint32_t s;

    if (loop->free_slot == NONE && grow_slots(loop) < 0)
        return NONE;
    s = loop->free_slot;
    loop->free_slot = loop->slots[s].next;
    loop->slots[s].kind = kind;
    loop->slots[s].seq = ++loop->next_seq;
    loop->slots[s].cb = cb;
    loop->slots[s].user = user;
    return s;
}

static void slot_free(struct evloop *loop, uint32_t s)
{
    loop->slots[s].kind = SLOT_FREE;
    loop->slots[s].gen++;       /* ids handed out for this slot go stale */
    loop->slots[s].next = loop->free_slot;
    loop->free_slot = s;
}

/* ---- timers: the heap ------------------------------------------------------ */

static int timer_before(const struct evloop *loop, uint32_t a, uint32_t b)
{
    const struct ev_slot *x = &loop->slots[a], *y = &loop->slots[b];

    return x->when_ms < y->when_ms || (x->when_ms == y->when_ms && x->seq < y->seq);
}

static void heap_place(struct evloop *loop, uint32_t pos, uint32_t s)
{
    loop->heap[pos] = s;
    loop->slots[s].heap_pos = pos;
}

static void sift_up(struct evloop *loop, uint32_t pos)
{
    uint32_t s = loop->heap[pos];

    while (pos > 0) {
        uint32_t parent = (pos - 1) / 2;
        if (!timer_before(loop, s, loop->heap[parent]))
            break;
        heap_place(loop, pos, loop->heap[parent]);
        pos = parent;
    }
    heap_place(loop, pos, s);
}

static void sift_down(struct evloop *loop, uint32_t pos)
{
    uint32_t s = loop->heap[pos];

    for (;;) {
        uint32_t child = 2 * pos + 1;
        if (child >= loop->nheap)
            break;
        if (child + 1 < loop->nheap && timer_before(loop, loop->heap[child + 1],
                                                    loop->heap[child]))
            child++;
        if (!timer_before(loop, loop->heap[child], s))
            break;
        heap_place(loop, pos, loop->heap[child]);
        pos = child;
    }
    heap_place(loop, pos, s);
}

static void heap_remove(struct evloop *loop, uint32_t s)
{
    uint32_t pos = loop->slots[s].heap_pos, last = loop->heap[--loop->nheap];

    if (pos == loop->nheap)
        return;
    heap_place(loop, pos, last);
    if (pos > 0 && timer_before(loop, last, loop->heap[(pos - 1) / 2]))
        sift_up(loop, pos);
    else
        sift_down(loop, pos);
}

uint64_t evloop_add_timer(struct evloop *loop, uint64_t delay_ms, evloop_timer_cb cb, void *user)
{
    uint32_t s = slot_alloc(loop, SLOT_TIMER, cb, user);

    if (s == NONE)
        return 0;
    loop->slots[s].when_ms = evloop_now_ms() + delay_ms;
    loop->heap[loop->nheap++] = s;  /* the heap has room for every slot */
    sift_up(loop, loop->nheap - 1);
    return slot_id(loop, s);
}

/* ---- deferred calls: the FIFO ---------------------------------------------- */

static void defer_unlink(struct evloop *loop, uint32_t s)
{
    struct ev_slot *d = &loop->slots[s];

    if (d->prev == NONE)
        loop->defer_head = d->next;
    else
        loop->slots[d->prev].next = d->next;
    if (d->next == NONE)
        loop->defer_tail = d->prev;
    else
        loop->slots[d->next].prev = d->prev;
    loop->ndefer--;
    if (d->kind == SLOT_DEFER_OUTER)
        loop->ndefer_outer--;
}

static uint64_t defer_add(struct evloop *loop, enum slot_kind kind, evloop_timer_cb cb,
                          void *user)
{
    uint32_t s = slot_alloc(loop, kind, cb, user);

    if (s == NONE)
        return 0;
    loop->slots[s].next = NONE;
    loop->slots[s].prev = loop->defer_tail;
    if (loop->defer_tail == NONE)
        loop->defer_head = s;
    else
        loop->slots[loop->defer_tail].next = s;
    loop->defer_tail = s;
    loop->ndefer++;
    if (kind == SLOT_DEFER_OUTER)
        loop->ndefer_outer++;
    return slot_id(loop, s);
}

uint64_t evloop_defer(struct evloop *loop, evloop_timer_cb cb, void *user)
{
    return defer_add(loop, SLOT_DEFER, cb, user);
}

uint64_t evloop_defer_outer(struct evloop *loop, evloop_timer_cb cb, void *user)
{
    return defer_add(loop, SLOT_DEFER_OUTER, cb, user);
}

/* Outer calls wait while a nested run (depth > 1) is dispatching. */
static int defer_runnable(const struct evloop *loop, uint32_t s)
{
    return loop->slots[s].kind == SLOT_DEFER || loop->depth <= 1;
}

static int defer_pending(const struct evloop *loop)
{
    return loop->ndefer > (loop->depth <= 1 ? 0 : loop->ndefer_outer);
}

/* Whether the round now running is to be cut short: evloop_stop() stops
 * evloop_run's own rounds only.  A wait in evloop_run_once for its own
 * condition (a callback's, or a teardown's after evloop_run returned) goes
 * on dispatching, or a stop asked meanwhile (a signal's callback run from
 * inside the wait) would leave the wait spinning on a loop that dispatches
 * nothing; the stop takes effect when evloop_run's round resumes. */
static int halted(const struct evloop *loop)
{
    return loop->stop && loop->depth == loop->run_depth;
}

/* Runs the deferred calls queued before now, oldest first.  The list is
 * searched afresh after each call: a call may cancel any other.  Returns
 * how many ran. */
static int run_deferred(struct evloop *loop)
{
    uint64_t last_seq = loop->next_seq;
    int ran = 0;

    while (!halted(loop) && defer_pending(loop)) {
        uint32_t s = loop->defer_head;
        evloop_timer_cb cb;
        uint64_t id;
        void *user;

        while (s != NONE && !defer_runnable(loop, s))
            s = loop->slots[s].next;
        if (s == NONE || loop->slots[s].seq > last_seq)
            break;
        cb = loop->slots[s].cb;
        user = loop->slots[s].user;
        id = slot_id(loop, s);
        defer_unlink(loop, s);
        slot_free(loop, s);
        cb(loop, id, user);
        ran++;
    }
    return ran;
}

void evloop_del_timer(struct evloop *loop, uint64_t timer_id)
{
    uint32_t s = slot_of(loop, timer_id);

    if (s == NONE)
        return;
    if (loop->slots[s].kind == SLOT_TIMER)
        heap_remove(loop, s);
    else
        defer_unlink(loop, s);
    slot_free(loop, s);
}

/* ---- rounds ------------------------------------------------------------------ */

static int next_timeout(struct evloop *loop, int timeout_ms)
{
    uint64_t now, when;

    if (defer_pending(loop))
        return 0;
    if (loop->nheap == 0)
        return timeout_ms;
    now = evloop_now_ms();
    when = loop->slots[loop->heap[0]].when_ms;
    if (when <= now)
        return 0;
    if (timeout_ms < 0 || when - now < (uint64_t)timeout_ms)
        return when - now > INT32_MAX ? INT32_MAX : (int)(when - now);
    return timeout_ms;
}

/* Fires the timers due now; those added meanwhile wait for a later round. */
static void fire_timers(struct evloop *loop)
{
    uint64_t now = evloop_now_ms(), last_seq = loop->next_seq;

    while (!halted(loop) && loop->nheap > 0) {
        uint32_t s = loop->heap[0];
        evloop_timer_cb cb = loop->slots[s].cb;
        void *user = loop->slots[s].user;
        uint64_t id = slot_id(loop, s);

        if (loop->slots[s].when_ms > now || loop->slots[s].seq > last_seq)
            return;
        heap_remove(loop, s);
        slot_free(loop, s);
        cb(loop, id, user);
        (void)run_deferred(loop);
    }
}

/* ev was collected when registrations up to waited_reg existed. */
static void dispatch_fd(struct evloop *loop, const struct epoll_event *ev, uint64_t waited_reg)
{
    int fd = ev->data.fd, events = 0;
    struct ev_fd *e;

    if (fd >= loop->nfds || !loop->fds[fd].registered)
        return; /* deleted by an earlier callback of this round */
    e = &loop->fds[fd];
    if (e->reg_seq > waited_reg)
        return; /* the number was closed and registered anew since: not its event */
    if (ev->events & EPOLLIN)
        events |= EV_READ;
    if (ev->events & EPOLLOUT)
        events |= EV_WRITE;
    if (ev->events & (EPOLLERR | EPOLLHUP))
        events |= EV_ERROR | (e->mask & EV_READ);
    e->cb(loop, fd, events, e->user);
    (void)run_deferred(loop);
}

int evloop_run_once(struct evloop *loop, int timeout_ms)
{
    struct epoll_event evs[64];
    uint64_t waited_reg;
    int n, ran, rc = 0;

    loop->depth++;
    ran = run_deferred(loop);
    if (halted(loop)) {
        /* A deferred call stopped the loop: waiting now could be forever. */
        loop->depth--;
        return 0;
    }
    waited_reg = loop->nreg;
    /* A round whose leading deferred calls ran has done work: it only polls.
     * Those calls often complete what a synchronous waiter
     * (while (!done) evloop_run_once(loop, -1)) waits for; blocking now would
     * keep it from seeing that until the next fd event or timer. */
    n = epoll_wait(loop->epfd, evs, 64, ran ? 0 : next_timeout(loop, timeout_ms));
    if (n < 0 && errno != EINTR)
        rc = -errno;
    for (int i = 0; i < n && !halted(loop); i++)
        dispatch_fd(loop, &evs[i], waited_reg);
    fire_timers(loop);
    loop->depth--;
    return rc;
}

int evloop_run(struct evloop *loop)
{
    int rc = 0, saved = loop->run_depth;

    loop->stop = 0;
    loop->run_depth = loop->depth + 1;      /* the depth of this run's rounds */
    while (!loop->stop && rc == 0)
        rc = evloop_run_once(loop, -1);
    loop->run_depth = saved;
    /* Leave the loop usable: later evloop_run_once() calls (sync helpers,
     * draining at close) must dispatch again. */
    loop->stop = 0;
    return rc;
}

void evloop_stop(struct evloop *loop)
{
    loop->stop = 1;
}
