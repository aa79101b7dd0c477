/* Blocking exchanges of the iPVFS protocol (common/proto.h) on one
 * connection: connect and greet a server rank, send a request, wait for its
 * reply.  Used by the client library (its HELLO and its blocking
 * administrative calls) and by the servers' control service when one rank
 * asks others to stop.  The client's pipelined data path (adio/client/
 * xfer.c) speaks the same protocol without blocking and does not use this.
 *
 * Time limits: every timeout_ms bounds one wait for progress (as in
 * common/net.h: -1 waits forever); a reply wait starts again whenever the
 * server sends a keepalive (IPVFS_OP_PROGRESS), so a slow request never
 * times out and a silent server does after timeout_ms.
 *
 * Every function returns 0 (or a descriptor) or a negative errno value:
 * -ETIMEDOUT, -ECONNRESET and the like from the transport, -EPROTO for a
 * reply that breaks the protocol (wrong magic, another op or req_id, a
 * body over IPVFS_MAX_BODY), -EPROTONOSUPPORT for a reply of another
 * protocol version (an older or newer server).  After a transport or protocol error
 * the connection is out of step: close it.  A server's error status is no
 * such failure: it comes back in the reply. */
#ifndef IPVFS_WIRE_H
#define IPVFS_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "common/proto.h"

/* A reply.  body is malloc'd and owned by the caller (wire_reply_free),
 * NUL-terminated one byte past len so that an error message is a string;
 * NULL only when the call failed. */
struct wire_reply {
    uint32_t status;     /* 0 or the server's positive errno */
    uint8_t *body;
    uint64_t len;
};

void wire_reply_free(struct wire_reply *r);

/* Sends one request: a header (op, flags, req_id, the body's length) and
 * the body gathered from cnt iovecs (body may be NULL when cnt is 0). */
int wire_send(int fd, uint16_t op, uint32_t flags, uint64_t req_id, const struct iovec *body,
              int cnt, int timeout_ms);

/* Waits for the reply to request req_id of op, skipping keepalives, and
 * reads it whole into *out (zeroed first; on failure nothing to free). */
int wire_recv(int fd, uint16_t op, uint64_t req_id, int timeout_ms, struct wire_reply *out);

/* wire_send then wire_recv. */
int wire_call(int fd, uint16_t op, uint32_t flags, uint64_t req_id, const struct iovec *body,
              int cnt, int timeout_ms, struct wire_reply *out);

/* Connects to host:port (giving up after connect_ms) and proves the cluster
 * key (secret) both ways with HELLO and AUTH (common/auth.h) as client_id,
 * request req_id (waiting hello_ms for progress).  Returns the connected,
 * authenticated, blocking socket (the caller closes it), or -errno with the
 * detail in msg: "connecting: ...", "HELLO: ..." or "AUTH: ..." for the
 * transport; "HELLO refused[: ...]" / "AUTH refused[: ...]" with the
 * server's status when it refused (-EACCES: it does not take our proof);
 * -EACCES with "HELLO: the server does not prove the cluster key ..." when
 * the server is not of our cluster. */
int wire_connect(const char *host, uint16_t port, const uint8_t secret[IPVFS_SECRET_LEN],
                 uint32_t client_id, uint64_t req_id, int connect_ms, int hello_ms, char *msg,
                 size_t msglen);

/* How a client says who it is at AUTH (common/proto.h). */
enum wire_who {
    WIRE_AS_KEY = 0,     /* proves key (and checks the server's proof) */
    WIRE_AS_USER,        /* proves this process's user: KERNEL on the
                          * server's host, else MUNGE (IPVFS_AUTH=kernel or
                          * munge picks one) */
    WIRE_AS_NOBODY,      /* AUTH NONE: capabilities only */
};
struct wire_id {
    enum wire_who who;
    const uint8_t *key;  /* WIRE_AS_KEY: the cluster key */
};

/* Same, for any struct wire_id, and fills *out_rep with the server's HELLO
 * reply: its window (max_inflight 1 when it states none).  A client
 * without the key cannot check the server's proof (common/proto.h). */
int wire_connect_hello(const char *host, uint16_t port, const struct wire_id *id,
                       uint32_t client_id, uint64_t req_id, int connect_ms, int hello_ms,
                       struct ipvfs_hello_rep *out_rep, char *msg, size_t msglen);

/* AUTH (wire_hello.c) as id after HELLO on fd, over the HELLO's nonces:
 * 0 or -errno with the detail in msg. */
int wire_say_auth(int fd, const struct wire_id *id, uint16_t port, uint32_t client_id,
                  uint64_t req_id, int hello_ms, const uint8_t nonce_c[IPVFS_NONCE_LEN],
                  const struct ipvfs_hello_rep *hello, char *msg, size_t msglen);

/* Asks the metadata rank at host:port for the server map (MAP, before any
 * HELLO): its text, without the secret, in *out (NUL-terminated; the caller
 * frees it with wire_reply_free).  Returns 0 or -errno with the detail in
 * msg; a server's refusal is -status with its message. */
int wire_fetch_map(const char *host, uint16_t port, int connect_ms, int reply_ms,
                   struct wire_reply *out, char *msg, size_t msglen);

#endif
