/* A single-threaded event loop over epoll, in the manner of Redis's ae.
 *
 * Contract:
 * - Everything runs on the thread that calls evloop_run(); no callback ever
 *   runs on another thread, and no call here is thread-safe.
 * - evloop_set_fd() registers or changes interest in fd; the callback runs
 *   with the events that are ready (EV_READ/EV_WRITE, plus EV_ERROR on
 *   hang-up or error) and the user pointer given at registration.
 * - A callback may add, change or delete any fd, its own included, and may
 *   call evloop_stop().  After evloop_del_fd(fd) returns, fd's callback is
 *   not called again, even for events already collected in this round.
 * - Timers fire once, no earlier than their delay; a periodic timer re-arms
 *   itself from its callback.  Timer ids are never reused within a loop.
 * - The loop never spins: it sleeps in epoll_wait until an fd is ready or
 *   the next timer is due.
 * - evloop_destroy() closes nothing that callers registered; it only frees
 *   the loop (fds stay owned by whoever registered them). */
#ifndef IPVFS_EVLOOP_H
#define IPVFS_EVLOOP_H

#include <stdint.h>

#define EV_READ  0x1
#define EV_WRITE 0x2
#define EV_ERROR 0x4

struct evloop;

typedef void (*evloop_fd_cb)(struct evloop *loop, int fd, int events, void *user);
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
void evloop_del_timer(struct evloop *loop, uint64_t timer_id);

/* Runs until evloop_stop(); returns 0, or a negative errno if epoll fails. */
int evloop_run(struct evloop *loop);
/* One round: wait at most timeout_ms (-1 forever) and dispatch. */
int evloop_run_once(struct evloop *loop, int timeout_ms);
void evloop_stop(struct evloop *loop);

uint64_t evloop_now_ms(void);

#endif
