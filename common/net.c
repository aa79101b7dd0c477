#include "common/net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int resolve(const char *host, uint16_t port, int passive, struct addrinfo **out)
{
    struct addrinfo hints;
    char service[8];
    int rc;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = passive ? AI_PASSIVE : 0;
    snprintf(service, sizeof(service), "%u", port);
    rc = getaddrinfo(host, service, &hints, out);
    if (rc != 0)
        return rc == EAI_SYSTEM ? -errno : -EHOSTUNREACH;
    return 0;
}

int net_set_nonblock(int fd, int on)
{
    int flags = fcntl(fd, F_GETFL);

    if (flags < 0)
        return -errno;
    flags = on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK;
    return fcntl(fd, F_SETFL, flags) < 0 ? -errno : 0;
}

int net_set_nodelay(int fd)
{
    int one = 1;

    return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0 ? -errno : 0;
}

int net_listen(const char *host, uint16_t port, uint16_t *out_port)
{
    struct addrinfo *ai;
    struct sockaddr_storage ss;
    socklen_t sslen = sizeof(ss);
    int fd, one = 1, rc;

    rc = resolve(host, port, 1, &ai);
    if (rc < 0)
        return rc;
    fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        rc = -errno;
        goto free_ai;
    }
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
        bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 128) < 0 ||
        getsockname(fd, (struct sockaddr *)&ss, &sslen) < 0) {
        rc = -errno;
        goto close_fd;
    }
    if (out_port)
        *out_port = ntohs(ss.ss_family == AF_INET6
                              ? ((struct sockaddr_in6 *)&ss)->sin6_port
                              : ((struct sockaddr_in *)&ss)->sin_port);
    freeaddrinfo(ai);
    return fd;

close_fd:
    close(fd);
free_ai:
    freeaddrinfo(ai);
    return rc;
}

static int wait_fd(int fd, short events, int timeout_ms)
{
    struct pollfd pfd = { .fd = fd, .events = events };
    int rc;

    do
        rc = poll(&pfd, 1, timeout_ms);
    while (rc < 0 && errno == EINTR);
    if (rc < 0)
        return -errno;
    return rc == 0 ? -ETIMEDOUT : 0;
}

/* One connect attempt to ai, waiting at most timeout_ms for the answer. */
static int connect_once(const struct addrinfo *ai, int timeout_ms)
{
    int fd, rc, err = 0;
    socklen_t errlen = sizeof(err);

    fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -errno;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
        if (errno != EINPROGRESS) {
            rc = -errno;
            goto close_fd;
        }
        rc = wait_fd(fd, POLLOUT, timeout_ms);
        if (rc < 0)
            goto close_fd;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &errlen) < 0 || err) {
            rc = err ? -err : -errno;
            goto close_fd;
        }
    }
    rc = net_set_nonblock(fd, 0);
    if (rc == 0)
        rc = net_set_nodelay(fd);
    if (rc < 0)
        goto close_fd;
    return fd;

close_fd:
    close(fd);
    return rc;
}

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* No answer yet is no verdict: a link that is down for a moment (the
 * neighbour unresolved, the route gone) gets EHOSTUNREACH or ENETUNREACH
 * at once, so those are tried again, with a short backoff, until the time
 * is up; a refusal is an answer and ends it. */
int net_connect(const char *host, uint16_t port, int timeout_ms)
{
    int64_t deadline = now_ms() + (timeout_ms < 0 ? (int64_t)INT_MAX : timeout_ms);
    int64_t left;
    int pause_ms = 100, rc;
    struct addrinfo *ai;

    rc = resolve(host, port, 0, &ai);
    if (rc < 0)
        return rc;
    for (;;) {
        left = deadline - now_ms();
        rc = connect_once(ai, left > INT_MAX ? INT_MAX : (int)(left > 0 ? left : 0));
        if (rc >= 0 || (rc != -EHOSTUNREACH && rc != -ENETUNREACH))
            break;
        left = deadline - now_ms();
        if (left <= pause_ms)
            break;
        poll(NULL, 0, pause_ms);
        pause_ms = pause_ms < 800 ? pause_ms * 2 : pause_ms;
    }
    freeaddrinfo(ai);
    return rc;
}

int net_accept(int listen_fd)
{
    int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

    if (fd < 0)
        return errno == EWOULDBLOCK ? -EAGAIN : -errno;
    (void)net_set_nodelay(fd);
    return fd;
}

int net_iov_advance(struct iovec *iov, int iovcnt, int start, size_t n)
{
    while (start < iovcnt && n >= iov[start].iov_len) {
        n -= iov[start].iov_len;
        iov[start].iov_len = 0;
        start++;
    }
    if (start < iovcnt && n) {
        iov[start].iov_base = (char *)iov[start].iov_base + n;
        iov[start].iov_len -= n;
    }
    return start;
}

static int xfer_iov(int fd, struct iovec *iov, int iovcnt, int timeout_ms, int writing)
{
    int start = 0, rc;

    while (start < iovcnt) {
        int cnt = iovcnt - start > IOV_MAX ? IOV_MAX : iovcnt - start;
        ssize_t n;

        if (iov[start].iov_len == 0) {
            start++;
            continue;
        }
        /* MSG_DONTWAIT keeps a stalled peer from outliving the timeout. */
        if (writing) {
            struct msghdr mh = { .msg_iov = iov + start, .msg_iovlen = (size_t)cnt };
            n = sendmsg(fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
        } else {
            struct msghdr mh = { .msg_iov = iov + start, .msg_iovlen = (size_t)cnt };
            n = recvmsg(fd, &mh, MSG_DONTWAIT);
        }
        if (n > 0) {
            start = net_iov_advance(iov, iovcnt, start, (size_t)n);
            continue;
        }
        if (n == 0)
            return -ECONNRESET;
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return -errno;
        rc = wait_fd(fd, writing ? POLLOUT : POLLIN, timeout_ms);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int net_writev_full(int fd, struct iovec *iov, int iovcnt, int timeout_ms)
{
    return xfer_iov(fd, iov, iovcnt, timeout_ms, 1);
}

int net_write_full(int fd, const void *buf, size_t len, int timeout_ms)
{
    struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

    return xfer_iov(fd, &iov, 1, timeout_ms, 1);
}

int net_read_full(int fd, void *buf, size_t len, int timeout_ms)
{
    struct iovec iov = { .iov_base = buf, .iov_len = len };

    return xfer_iov(fd, &iov, 1, timeout_ms, 0);
}

void net_peer_name(int fd, char *out, size_t outlen)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    char host[64] = "?";
    unsigned port = 0;

    if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0) {
        if (ss.ss_family == AF_INET) {
            struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
            inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
            port = ntohs(s4->sin_port);
        } else if (ss.ss_family == AF_INET6) {
            struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
            inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
            port = ntohs(s6->sin6_port);
        }
    }
    snprintf(out, outlen, "%s:%u", host, port);
}
