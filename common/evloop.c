#include "common/evloop.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

struct ev_fd {
    evloop_fd_cb cb;
    void *user;
    int mask;
    int registered;
};

struct ev_timer {
    uint64_t id;
    uint64_t when_ms;
    evloop_timer_cb cb;
    void *user;
    struct ev_timer *next;
};

struct evloop {
    int epfd;
    struct ev_fd *fds; /* indexed by fd */
    int nfds;
    struct ev_timer *timers; /* unsorted list: loops keep few timers */
    uint64_t next_timer_id;
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
    return loop;
}

void evloop_destroy(struct evloop *loop)
{
    struct ev_timer *t, *next;

    if (!loop)
        return;
    for (t = loop->timers; t; t = next) {
        next = t->next;
        free(t);
    }
    close(loop->epfd);
    free(loop->fds);
    free(loop);
}

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
    if (epoll_ctl(loop->epfd, loop->fds[fd].registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD,
                  fd, &ee) < 0)
        return -errno;
    loop->fds[fd] = (struct ev_fd){ .cb = cb, .user = user, .mask = mask, .registered = 1 };
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

uint64_t evloop_add_timer(struct evloop *loop, uint64_t delay_ms, evloop_timer_cb cb, void *user)
{
    struct ev_timer *t = malloc(sizeof(*t));

    if (!t)
        return 0;
    t->id = ++loop->next_timer_id;
    t->when_ms = evloop_now_ms() + delay_ms;
    t->cb = cb;
    t->user = user;
    t->next = loop->timers;
    loop->timers = t;
    return t->id;
}

void evloop_del_timer(struct evloop *loop, uint64_t timer_id)
{
    for (struct ev_timer **pp = &loop->timers; *pp; pp = &(*pp)->next) {
        if ((*pp)->id == timer_id) {
            struct ev_timer *t = *pp;
            *pp = t->next;
            free(t);
            return;
        }
    }
}

static int next_timeout(struct evloop *loop, int timeout_ms)
{
    uint64_t now = evloop_now_ms();

    for (struct ev_timer *t = loop->timers; t; t = t->next) {
        int64_t left = t->when_ms > now ? (int64_t)(t->when_ms - now) : 0;
        if (timeout_ms < 0 || left < timeout_ms)
            timeout_ms = (int)left;
    }
    return timeout_ms;
}

static void fire_timers(struct evloop *loop)
{
    uint64_t now = evloop_now_ms();
    uint64_t last_id = loop->next_timer_id;
    int fired;

    /* Restart the scan after each firing: the callback may change the list.
     * Timers added during this round (id > last_id) wait for the next. */
    do {
        fired = 0;
        for (struct ev_timer **pp = &loop->timers; *pp; pp = &(*pp)->next) {
            struct ev_timer *t = *pp;
            if (t->when_ms <= now && t->id <= last_id) {
                *pp = t->next;
                t->cb(loop, t->id, t->user);
                free(t);
                fired = 1;
                break;
            }
        }
    } while (fired && !loop->stop);
}

int evloop_run_once(struct evloop *loop, int timeout_ms)
{
    struct epoll_event evs[64];
    int n;

    n = epoll_wait(loop->epfd, evs, 64, next_timeout(loop, timeout_ms));
    if (n < 0 && errno != EINTR)
        return -errno;
    for (int i = 0; i < n && !loop->stop; i++) {
        int fd = evs[i].data.fd, events = 0;
        struct ev_fd *e;

        if (fd >= loop->nfds || !loop->fds[fd].registered)
            continue; /* deleted by an earlier callback of this round */
        e = &loop->fds[fd];
        if (evs[i].events & EPOLLIN)
            events |= EV_READ;
        if (evs[i].events & EPOLLOUT)
            events |= EV_WRITE;
        if (evs[i].events & (EPOLLERR | EPOLLHUP))
            events |= EV_ERROR | (e->mask & EV_READ);
        e->cb(loop, fd, events, e->user);
    }
    if (!loop->stop)
        fire_timers(loop);
    return 0;
}

int evloop_run(struct evloop *loop)
{
    int rc = 0;

    loop->stop = 0;
    while (!loop->stop && rc == 0)
        rc = evloop_run_once(loop, -1);
    /* Leave the loop usable: later evloop_run_once() calls (sync helpers,
     * draining at close) must dispatch again. */
    loop->stop = 0;
    return rc;
}

void evloop_stop(struct evloop *loop)
{
    loop->stop = 1;
}
