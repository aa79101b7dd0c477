/* KERNEL credentials (access.h): a client on the rank's host sends the
 * nonce_s of its connection's HELLO reply over the rank's abstract Unix
 * socket; the kernel tells who sent it (SO_PEERCRED: uid and gid at
 * connect; SO_PEERGROUPS: the supplementary groups), and that user is
 * bound to the waiting connection with that nonce.  The socket is
 * abstract, so it exists only in the rank's network namespace (its host),
 * and it goes away with the serving process.  A nonce names one
 * connection and is bound once: a second claim, or a claim of an unknown
 * nonce, is refused (and logged).  A client that connects and says
 * nothing is dropped after CLAIM_MS, so that idle claims cannot pile up. */
#include "backend/server/access.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "backend/server/server.h"
#include "common/evloop.h"
#include "common/log.h"

#define CLAIM_MS 2000

/* One accepted client of the socket, until it said its nonce or its time
 * is up; srv->claims lists them. */
struct claim {
    struct server *srv;
    int fd;
    uint64_t timer;
    struct claim *next;
};

static void claim_done(struct claim *cl)
{
    struct server *srv = cl->srv;

    for (struct claim **pp = &srv->claims; *pp; pp = &(*pp)->next) {
        if (*pp == cl) {
            *pp = cl->next;
            break;
        }
    }
    if (cl->timer)
        evloop_del_timer(srv->loop, cl->timer);
    evloop_del_fd(srv->loop, cl->fd);
    close(cl->fd);
    free(cl);
}

static void claim_expired(struct evloop *loop, uint64_t timer_id, void *user)
{
    struct claim *cl = user;

    (void)loop;
    (void)timer_id;
    cl->timer = 0;
    claim_done(cl);
}

static void answer(int fd, uint32_t err)
{
    if (send(fd, &err, sizeof(err), MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)sizeof(err))
        log_debug("credential socket: the client left before its answer");
}

/* Binds the sender's credentials to the waiting connection whose nonce_s
 * the message names: 0 or a positive errno. */
static uint32_t vouch(struct server *srv, int fd, const uint8_t *nonce)
{
    uint32_t groups[PERM_MAX_GROUPS];
    socklen_t len = sizeof(groups);
    struct ucred uc;
    socklen_t uclen = sizeof(uc);
    struct access *a;

    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &uclen) < 0)
        return (uint32_t)errno;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0) {
        log_warn("credential socket: uid %u has more than %u groups; refused", uc.uid,
                 PERM_MAX_GROUPS);
        return E2BIG;
    }
    for (a = srv->challenged; a; a = a->next_challenged)
        if (memcmp(a->nonce_s, nonce, IPVFS_NONCE_LEN) == 0)
            break;
    if (!a || a->vouched) {
        log_info("credential socket: uid %u (pid %d) claimed %s connection; refused", uc.uid,
                 (int)uc.pid, a ? "an already claimed" : "no waiting");
        return a ? EEXIST : ENOENT;
    }
    access_user(srv, uc.uid, uc.gid, groups, len / sizeof(groups[0]), &a->cred);
    a->vouched = 1;
    return 0;
}

static void on_claim(struct evloop *loop, int fd, int events, void *user)
{
    uint8_t nonce[IPVFS_NONCE_LEN + 1];
    struct claim *cl = user;
    ssize_t n;

    (void)loop;
    (void)events;
    n = recv(fd, nonce, sizeof(nonce), MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n == IPVFS_NONCE_LEN)
        answer(fd, vouch(cl->srv, fd, nonce));
    else if (n > 0)
        answer(fd, EINVAL);
    claim_done(cl);
}

static void on_accept(struct evloop *loop, int fd, int events, void *user)
{
    struct server *srv = user;
    struct claim *cl;
    int cfd;

    (void)events;
    while ((cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
        if (!(cl = calloc(1, sizeof(*cl)))) {
            close(cfd);
            continue;
        }
        *cl = (struct claim){ .srv = srv, .fd = cfd, .next = srv->claims };
        if (evloop_set_fd(loop, cfd, EV_READ, on_claim, cl) < 0 ||
            !(cl->timer = evloop_add_timer(loop, CLAIM_MS, claim_expired, cl))) {
            log_warn("credential socket: cannot watch a client");
            evloop_del_fd(loop, cfd);
            close(cfd);
            free(cl);
            continue;
        }
        srv->claims = cl;
    }
}

int access_kernel_listen(struct server *srv)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    int fd, n;

    n = snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "%s%u", IPVFS_CRED_SOCKET,
                 (unsigned)srv->conns.port);
    if ((fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0)
        return -errno;
    if (bind(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)) < 0 ||
        listen(fd, 64) < 0 || evloop_set_fd(srv->loop, fd, EV_READ, on_accept, srv) < 0) {
        int rc = errno ? -errno : -EIO;

        /* without it users on this host cannot prove who they are: say so */
        log_warn("credential socket @%s%u: %s; local users must use MUNGE", IPVFS_CRED_SOCKET,
                 (unsigned)srv->conns.port, strerror(-rc));
        close(fd);
        return rc;
    }
    srv->cred_fd = fd;
    return 0;
}

void access_kernel_close(struct server *srv)
{
    while (srv->claims)
        claim_done(srv->claims);
    if (srv->cred_fd < 0)
        return;
    evloop_del_fd(srv->loop, srv->cred_fd);
    close(srv->cred_fd);
    srv->cred_fd = -1;
}
