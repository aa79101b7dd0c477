/* The connection layer of ipvfs-server (srvconn.c): clients' TCP
 * connections, and the services that answer their requests.
 *
 * A service registers an operations table (struct service) before the loop
 * runs; the layer dispatches each request to the handler of its op and
 * tells every service when a connection goes away (conn_closed), so that
 * no service needs the layer to know about it.
 *
 * Lifetime of a struct conn: the layer frees it, never a service.  A
 * connection that fails or closes is taken off its socket at once but
 * freed later, from a call deferred to the outermost loop level
 * (evloop_defer_outer), never from a nested evloop_run_once and never from
 * inside another connection's teardown; its conn_closed hooks run there,
 * just before it is freed.  So a conn pointer a service holds stays valid
 * until that service's conn_closed hook has seen it. */
#ifndef IPVFS_SERVER_SRVCONN_H
#define IPVFS_SERVER_SRVCONN_H

#include <stddef.h>
#include <stdint.h>

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
/* Error reply: status is a positive errno; the message (printf format) is
 * logged and sent as the NUL-terminated body. */
void conn_reply_err(struct conn *c, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* After this request's reply is written (or the connection dies), run cb. */
void conn_on_reply_sent(struct conn *c, void (*cb)(struct server *srv, void *arg), void *arg);
/* Closes the connection after the reply instead of reading the next one. */
void conn_close_after_reply(struct conn *c);
struct server *conn_server(const struct conn *c);
/* Counters of the connection's client (set by HELLO). */
void conn_count_bytes(struct conn *c, uint64_t in, uint64_t out);
/* The client id HELLO named, and its counters (NULL without memory). */
uint32_t conn_client_id(const struct conn *c);
struct client_counters *conn_client_counters(struct conn *c);

#endif
