/* A single-threaded event loop over epoll: fds, timers and deferred calls.
 *
 * Contract:
 * - Threads: everything runs on the thread that drives the loop; no
 *   callback ever runs on another thread, and no call here is thread-safe.
 * - A round (evloop_run_once) runs, in this order: the deferred calls that
 *   are pending, one epoll_wait (no wait at all while a deferred call is
 *   pending, or when the round's leading deferred calls ran any: they may
 *   have completed what the caller waits for; else until an fd is ready,
 *   the next timer is due or timeout_ms), the callbacks of the ready fds,
 *   then the timers that are due.  After each fd or timer callback
 *   returns, the deferred calls it queued run, before the next callback of
 *   the round.  The loop never spins: with nothing due it sleeps in
 *   epoll_wait.
 * - Fds: evloop_set_fd() registers or changes interest in fd; the callback
 *   runs with the events that are ready (EV_READ/EV_WRITE, plus EV_ERROR on
 *   hang-up or error) and the user pointer given at registration.  The loop
 *   never closes an fd: whoever registered it owns it.
 * - A callback may add, change or delete any fd, its own included, and may
 *   call evloop_stop().  After evloop_del_fd(fd) returns, fd's callback is
 *   not called again, even for events already collected in this round; this
 *   holds when the callback removes its own fd, or another fd's callback
 *   removes (and closes) it first.  Delete an fd before closing it.  When a
 *   callback closes an fd and the number comes back (a new socket, a new
 *   pipe) and is registered again in the same round, the events collected
 *   for the old one are dropped: the new registration sees only its own,
 *   from the next round on.
 * - Timers fire once, no earlier than their delay, in deadline order (equal
 *   deadlines in the order they were added); a periodic timer re-arms itself
 *   from its callback.  A timer added by a timer callback fires in a later
 *   round, so one that re-arms itself with delay 0 cannot starve the fds.
 *   Adding and removing a timer cost O(log n) for n pending timers.
 * - evloop_defer(cb) runs cb once, after the callback that is running now
 *   returns and before the loop dispatches anything else or waits; called
 *   outside any callback, cb runs at the start of the next round.  Deferred
 *   calls run in the order they were deferred.  Calls deferred by a deferred
 *   call run at the next such point (after the next callback, or at the
 *   start of the next round, which then does not wait), so a call that
 *   defers itself again cannot starve the fds.
 * - evloop_defer_outer(cb) is evloop_defer for work that must not run inside
 *   a nested run (see below): cb runs after the outermost callback now
 *   running returns, never from inside a nested evloop_run_once.
 * - Nested runs: a callback may itself call evloop_run_once() (synchronous
 *   helpers wait that way).  A nested run dispatches fds, timers and
 *   evloop_defer calls as any round does, the calls deferred by the
 *   callback that started it included; evloop_defer_outer calls wait.
 * - Ids: timers and deferred calls get ids (> 0) from one space; 0 means no
 *   memory.  evloop_del_timer(id) cancels either kind before it runs, and is
 *   a no-op once it has run or been cancelled (ids are not reused).
 * - evloop_stop(): the rest of the round is skipped (remaining fds, timers,
 *   deferred calls: they run in later rounds, if any), evloop_run() returns.
 *   It stops evloop_run's own rounds only: a wait in evloop_run_once (a
 *   callback's, or a teardown's after evloop_run returned) goes on
 *   dispatching until it is over, and the stop takes effect when
 *   evloop_run's round resumes (a stop asked from inside such a wait never
 *   leaves it spinning).
 * - evloop_destroy() frees the loop and its pending timers and deferred calls
 *   without calling them; the user pointers they hold stay the caller's.  It
 *   closes no fd that callers registered. */
#ifndef IPVFS_EVLOOP_H
#define IPVFS_EVLOOP_H

#include <stdint.h>

#define EV_READ  0x1
#define EV_WRITE 0x2
#define EV_ERROR 0x4

struct evloop;

typedef void (*evloop_fd_cb)(struct evloop *loop, int fd, int events, void *user);
/* Timers and deferred calls; timer_id is the id their creation returned. */
typedef void (*evloop_timer_cb)(struct evloop *loop, uint64_t timer_id, void *user);

struct evloop *evloop_create(void);
void evloop_destroy(struct evloop *loop);

/* mask is EV_READ|EV_WRITE (0 keeps the fd registered but quiet). */
int evloop_set_fd(struct evloop *loop, int fd, int mask, evloop_fd_cb cb, void *user);
/* Change only the mask of a registered fd. */
int evloop_mod_fd(struct evloop *loop, int fd, int mask);
void evloop_del_fd(struct evloop *loop, int fd);

/* Returns a timer id (> 0) or 0 on allocation failure. */
uint64_t evloop_add_timer(struct evloop *loop, uint64_t delay_ms, evloop_timer_cb cb, void *user);
/* Cancels a timer or a deferred call that has not run yet. */
void evloop_del_timer(struct evloop *loop, uint64_t timer_id);

/* "Run this after the current event": see the contract above.  Returns an
 * id (> 0) for evloop_del_timer, or 0 on allocation failure. */
uint64_t evloop_defer(struct evloop *loop, evloop_timer_cb cb, void *user);
uint64_t evloop_defer_outer(struct evloop *loop, evloop_timer_cb cb, void *user);

/* Runs until evloop_stop(); returns 0, or a negative errno if epoll fails. */
int evloop_run(struct evloop *loop);
/* One round: wait at most timeout_ms (-1 forever) and dispatch. */
int evloop_run_once(struct evloop *loop, int timeout_ms);
void evloop_stop(struct evloop *loop);

uint64_t evloop_now_ms(void);

#endif
