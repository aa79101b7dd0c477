/* Small TCP helpers shared by servers, client library and tools.
 *
 * Every function returns 0 (or a descriptor >= 0) on success and a negative
 * errno value on failure; none of them logs, so callers add context. */
#ifndef IPVFS_NET_H
#define IPVFS_NET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* Bind and listen on host:port (port 0 picks a free one).  On success the
 * chosen port is stored in *out_port. */
int net_listen(const char *host, uint16_t port, uint16_t *out_port);

/* Connect to host:port, giving up after timeout_ms (-1: never).  A host
 * that cannot be reached for now (EHOSTUNREACH, ENETUNREACH: its link is
 * down, its neighbour entry unresolved) is tried again until then, so a
 * link that comes back within the time costs a retry, not an error; a
 * refused connect fails at once.  The returned socket is blocking, with
 * TCP_NODELAY set. */
int net_connect(const char *host, uint16_t port, int timeout_ms);

/* Accept one connection (non-blocking listener); -EAGAIN when none waits. */
int net_accept(int listen_fd);

int net_set_nonblock(int fd, int on);
int net_set_nodelay(int fd);

/* Blocking send/receive of exactly len bytes, each waiting at most
 * timeout_ms for progress (-1: forever).  -ETIMEDOUT when the peer stalls,
 * -ECONNRESET when it closes early. */
int net_write_full(int fd, const void *buf, size_t len, int timeout_ms);
int net_read_full(int fd, void *buf, size_t len, int timeout_ms);
/* Same for an iovec array; iov is modified (consumed) in place. */
int net_writev_full(int fd, struct iovec *iov, int iovcnt, int timeout_ms);

/* Advance an iovec array by n consumed bytes; returns the new start index. */
int net_iov_advance(struct iovec *iov, int iovcnt, int start, size_t n);

/* "host:port" of fd's peer into out ("?:0" when unknown). */
void net_peer_name(int fd, char *out, size_t outlen);

#endif
