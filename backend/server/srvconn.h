/* The connection layer of ipvfs-server (srvconn.c): clients' TCP
 * connections, and the services that answer their requests.
 *
 * A service registers an operations table (struct service) before the loop
 * runs; the layer dispatches each request to the handler of its op and
 * tells every service when a connection goes away (conn_closed), so that
 * no service needs the layer to know about it.
 *
 A struct conn is one request as its handler sees it; a READ's or
 * WRITE's is its own and lives until its reply is written, every other
 * request of a connection runs in the connection's one serial struct conn
 * (see Ownership below), which names the connection to services.
 * Lifetime: the layer frees them, never a service.  A connection that
 * fails or closes is taken off its socket at once but freed later, from a
 * call deferred to the outermost loop level (evloop_defer_outer), never
 * from a nested evloop_run_once and never from inside another
 * connection's teardown; its conn_closed hooks run there, just before it
 * is freed.  So a (serial) conn pointer a service holds stays valid until
 * that service's conn_closed hook has seen it.
 *
 * ---- The state machines (srvconn.c) ----
 *
 * One nonblocking link per client socket reads requests, runs several of
 * them at once, and writes each reply when it is ready (protocol 5:
 * replies are tagged by req_id, common/proto.h).
 *
 * A link reads one request after another:
 *
 *   RX_HDR   --32 header bytes in, header valid, room-------> RX_BODY
 *   RX_HDR   --no room (reqorder_may_admit)------------------> RX_HOLD
 *   RX_HDR   --header invalid (magic/version/op/size)--------> RX_OFF (error reply, close after)
 *   RX_BODY  --body_len bytes in (at once if 0)--------------> RX_HDR (request PENDING)
 *   RX_HOLD  --a reply written frees room--------------------> RX_HDR
 *   any      --peer hang-up, socket error, EOF---------------> link dead (below)
 *
 * "Room" is the window of common/proto.h: fewer than
 * IPVFS_CONN_MAX_INFLIGHT requests and IPVFS_CONN_WINDOW_BYTES bytes held
 * by the link, fewer than IPVFS_SERVER_INFLIGHT_BYTES by all links in the
 * request's pool (WRITE data, or all else: reqorder.h; a WRITE header is
 * read on the other pool's room, then held in RX_HOLD for its own), and
 * for a request that is not a READ or WRITE (a barrier) the link's serial
 * slot free (below).  While a link has no room it does not read its
 * socket: TCP holds the client back.  Bytes are held from the header
 * (the body) and from a READ's start (its reply data) until the reply is
 * written; the rest of the bound is reqorder_may_start's.
 *
 * Each request (a struct conn, what handlers see) then goes:
 *
 *   RECEIVING --body in----------------------------------------> PENDING
 *   PENDING   --no earlier PENDING/BUSY request it must follow
 *               (reqorder_must_wait) and its READ data fits------> BUSY (handler runs)
 *   BUSY      --conn_reply(), before the handler returns or
 *               later from a completion------------------------> QUEUED
 *   QUEUED    --the replies queued before it are written-------> WRITING
 *   WRITING   --reply fully written----------------------------> freed (hooks run)
 *
 * Replies go out whole, one after another in the order they were queued
 * (one writev of header + body each, READ data straight from the store's
 * buffer, or from the L1's lent blocks: conn_reply_iov), so a keepalive
 * never lands inside one.  After each write the link looks for PENDING
 * requests that may start now; so does every
 * other link when the server-wide bound was reached.  Replies are never
 * written and handlers never started from inside conn_reply(): it queues
 * and defers the write to right after the running callback (evloop_defer,
 * one per link), which writes what the socket takes and arms EV_WRITE
 * only for the rest, so a handler never re-enters the state machine and
 * a reply costs no epoll_ctl while the socket has room.
 *
 * Ownership: a READ or WRITE gets its own struct conn, malloc'd at its
 * header and freed when its reply is written.  Every other request runs
 * in the link's one serial struct conn, which lives as long as the link:
 * barriers run alone anyway, and services that keep a conn pointer across
 * requests (locks, control's requesters) keep the serial one, so it names
 * the connection as before and conn_closed hooks see it.  A barrier whose
 * header finds the slot still taken (its predecessor's reply not yet
 * written) waits in RX_HOLD.  The connection owns each request body
 * (handlers may point into it until their reply is written) and each
 * reply body handed over by conn_reply().
 *
 * Death: a peer hang-up or socket error closes the socket at once
 * (link_fail).  A link with BUSY requests is a zombie: each completion's
 * conn_reply() drops its reply, and the last one kills the link.  A dead
 * link is moved to srv->conns.dead and freed from a call deferred to the
 * outermost loop level (reap_dead): pending reply-sent hooks run, then
 * every service's conn_closed hook with the serial conn, then the link and
 * its requests are freed; never inside a nested run of the loop and never
 * inside another connection's teardown.
 *
 * Keepalive (common/proto.h): while a link has BUSY requests and nothing
 * to write, and nothing went out for IPVFS_PROGRESS_MS since the oldest
 * of them started, it gets a bare PROGRESS header about every
 * IPVFS_PROGRESS_MS, only when the socket's send queue is empty.  One
 * timer serves all links; it runs only while some request is BUSY. 
 */
#ifndef IPVFS_SERVER_SRVCONN_H
#define IPVFS_SERVER_SRVCONN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "backend/server/access.h"
#include "backend/server/server.h"

/* Handler of one op.  hdr and body (hdr->body_len bytes) are the request. */
typedef void (*op_handler)(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body);

struct op_entry {
    uint16_t op;
    uint32_t roles;             /* which ranks serve it (enum ipvfs_role bits) */
    op_handler handler;
    const char *name;
};

/* What a service gives the connection layer. */
struct service {
    const char *name;
    const struct op_entry *ops;     /* ends with a NULL handler */
    /* c is going away (peer closed, error, teardown): forget it.  Runs from
     * the loop with c's socket closed; may reply to other connections. */
    void (*conn_closed)(struct server *srv, struct conn *c);
};

/* Before srvconn_listen: adds svc to those the layer dispatches to. */
int srvconn_register(struct server *srv, const struct service *svc);
/* Serves on srv->conns.listen_fd, bound by the supervisor (closed by
 * srvconn_close_all). */
int srvconn_listen(struct server *srv);
/* Teardown, outside the loop, after the stores are closed (nothing in
 * flight completes later): closes and frees every connection, then the
 * listener. */
void srvconn_close_all(struct server *srv);

/* How a handler finishes a request: exactly one conn_reply* per request,
 * either before the handler returns or later from an async completion.
 * conn_reply takes ownership of body (malloc'd, or NULL with len 0).  The
 * request body given to the handler stays valid until the reply is sent. */
void conn_reply(struct conn *c, uint32_t status, void *body, size_t len);
/* conn_reply with the body in pieces iov[1..niov), which may point
 * outside body (freed with the request): a READ's lent blocks, kept alive
 * until conn_on_reply_sent's hook.  iov is malloc'd by the caller with
 * iov[0] left for the reply header, and freed with the request. */
void conn_reply_iov(struct conn *c, uint32_t status, void *body, struct iovec *iov, int niov);
/* Error reply: status is a positive errno; the message (printf format) is
 * logged and sent as the NUL-terminated body. */
void conn_reply_err(struct conn *c, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* After this request's reply is written (or the connection dies), run cb. */
void conn_on_reply_sent(struct conn *c, void (*cb)(struct server *srv, void *arg), void *arg);
/* HELLO, AUTH, MAP and CAP (hello.c): every rank registers them first;
 * the layer asks access_check (access.h) before every handler. */
extern const struct service hello_service;
/* Who is behind c's connection (access.h). */
struct access *conn_access(struct conn *c);
/* Closes the connection after the reply instead of reading the next one. */
void conn_close_after_reply(struct conn *c);
struct server *conn_server(const struct conn *c);
/* Counters of the connection's client (set by HELLO). */
void conn_count_bytes(struct conn *c, uint64_t in, uint64_t out);
/* The client id HELLO named, and its counters (NULL without memory). */
uint32_t conn_client_id(const struct conn *c);
struct client_counters *conn_client_counters(struct conn *c);

#endif
