/* The request engine's inside, shared by its two files:
 *   xfer.c       batches: the client's queue, which batches run, when a
 *                batch is done (the public xfer_* calls);
 *   xfer_chan.c  channels: one per server rank, carrying the requests of
 *                every running batch over that rank's connection.
 * xfer.c calls into xfer_chan.c, never the other way.
 *
 * One engine per client exists while any of its batches runs.  Each
 * running batch appends its requests to the channels of their ranks, so
 * a connection carries the requests of several batches interleaved, whole
 * request after whole request, and the reader pairs each tagged reply with
 * its request whatever batch it belongs to (xfer_rx.h).  The server's
 * window is the channel's, shared by all batches on it.
 *
 * A batch goes through three states:
 *   QUEUED   started, waiting behind earlier batches of the same client;
 *   RUNNING  its requests are on the channels and move whenever someone
 *            polls the client (any batch's poll drives them all);
 *   DONE     every request answered or failed: its requests are off the
 *            channels and out of the queue; its results wait for
 *            xfer_finish().
 * When a batch may run (xfer.c, queue_admit): the first of the queue
 * begins alone when nothing runs, with the blocking setup it needs
 * (re-reading a changed map, connecting, showing capabilities, which
 * must not happen while replies are in flight).  A batch started with
 * XFER_BESIDE joins the running ones when nothing exclusive runs and it
 * needs no blocking setup: every rank it asks has a live connection.  A
 * capability that connection does not hold yet is shown by a CAP the
 * engine puts on the channel ahead of the batch's requests (a setup
 * request, struct xfer_setup): the server takes a connection's requests in
 * the order they came, so the CAP is in force before the requests that
 * need it, and it is counted as held from then on, so later batches send
 * none; if it fails, it is taken back, and the batch's requests that
 * needed it fail with its reason.  Otherwise the batch waits for the
 * running ones to finish; batches behind it wait too, so blocking calls
 * keep their order.
 *
 * A channel's states:
 *   CONNECTED     fd >= 0, moving bytes;
 *   RECONNECTING  fd -1, retry_at > 0: the next attempt is due then (the
 *                 attempt itself blocks in connect and HELLO, bounded by
 *                 the client's limits; a success goes back to CONNECTED
 *                 and sends again from the first unanswered request);
 *   FINISHED      every request answered or failed (done == n); it
 *                 stays CONNECTED (fd >= 0) for the next batch, or dead
 *                 (fd -1, retry_at 0) after a failure: no batch joins a
 *                 dead channel, the next begins on a new engine.
 * To send a request again, its iovecs are restored from the copies its
 * batch took when it began (sending consumes them). */
#ifndef IPVFS_XFER_ENGINE_H
#define IPVFS_XFER_ENGINE_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "adio/client/client_internal.h"
#include "adio/client/xfer_rx.h"

#pragma GCC visibility push(hidden)

enum batch_state { BATCH_QUEUED, BATCH_RUNNING, BATCH_DONE };

/* A request the engine adds ahead of a joining batch's own (req.setup is
 * set): a CAP showing cap to req.rank's connection.  It belongs to the
 * batch (counted in its left, freed with it), is sent whatever the
 * batch's turn, and goes again after a reconnect like any request. */
struct xfer_setup {
    struct xfer_req req;        /* first: the channel finds the rest from it */
    struct iovec send[2];       /* the header's slot, the capability */
    const struct ipvfs_cap *cap;
    uint64_t marked;            /* what conn_cap_mark recorded */
};

struct xfer_batch {
    struct ipvfs_client *c;
    struct xfer_req *reqs;
    size_t n;
    size_t left;               /* requests not answered yet */
    unsigned flags;            /* XFER_IN_ORDER, XFER_BESIDE */
    size_t turn;               /* XFER_IN_ORDER: the request that may go now */
    struct iovec *saved;       /* each request's send and recv iovecs, as given */
    size_t *saved_at;          /* where request i's copies start in saved */
    struct xfer_setup *setup;  /* the CAPs the engine sent ahead of reqs */
    size_t nsetup;
    enum batch_state state;
    struct xfer_batch *next;   /* the client's queue */
};

struct xfer_engine;

/* The requests of one rank, of every running batch, and how far they got. */
struct chan {
    struct xfer_engine *e;
    uint32_t rank;
    int fd;
    struct xfer_req **q;   /* in sending order; a batch's in its order */
    size_t n;
    size_t cap;
    size_t sent;           /* requests completely sent: q[0..sent) */
    int send_start;        /* first unsent iovec of request q[sent] */
    size_t done;           /* replies completely received (in any order) */
    size_t first;          /* q[first] is the first unanswered one */
    uint32_t win_reqs;     /* the server's window (conn_window) */
    uint64_t win_bytes;
    uint64_t out_bytes;    /* cost of the requests sent and unanswered */
    struct xfer_rx rx;     /* where the reply being read stands */
    uint64_t moved;        /* bytes sent and received, to see progress */
    int64_t deadline_ms;
    /* reconnecting (see the states above) */
    size_t resend_end;     /* requests below it were sent before: they go
                            * again without waiting for their turn */
    int64_t retry_at;      /* > 0: RECONNECTING, next attempt then */
    int64_t lost_ms;       /* when the connection broke */
    unsigned attempts;
    int lost_err;          /* how it broke */
};

struct xfer_engine {
    struct ipvfs_client *c;
    int request_ms;        /* the longest limit of the batches that began */
    struct chan **chans;   /* one per rank asked since the engine began */
    size_t nchans;
    struct pollfd *pfds;   /* nchans of each, for poll_round */
    struct chan **map;
    size_t running;        /* batches RUNNING */
    int exclusive;         /* one of them is not XFER_BESIDE */
};

int64_t xfer_now_ms(void);

/* xfer_chan.c: the engine's channels. */
/* The channel of rank, or NULL. */
struct chan *engine_chan(const struct xfer_engine *e, uint32_t rank);
/* The channel of rank, made (unconnected, empty) when there is none;
 * NULL without memory. */
struct chan *engine_chan_make(struct xfer_engine *e, uint32_t rank);
/* Room for extra more requests on ch: 0 or -ENOMEM. */
int chan_reserve(struct chan *ch, size_t extra);
/* Gives r its header and request id and puts it last on ch (room
 * reserved). */
void chan_append(struct chan *ch, struct xfer_req *r);
/* Takes the window of ch's server on its new connection fd. */
void chan_connected(struct chan *ch, int fd);
/* Whether ch has requests not answered. */
int chan_active(const struct chan *ch);
/* Whether ch has nothing sent and unanswered. */
int chan_idle(const struct chan *ch);
/* Fails every unanswered request of ch (code, detail) and closes its
 * connection. */
void chan_fail(struct chan *ch, int code, const char *detail);
/* Shows the capabilities of ch's requests to its new connection fd
 * before anything is in flight on it: 0, or ch failed. */
int chan_show_caps(struct chan *ch, int fd);
/* The connection of ch could not be had (err, detail): it retries when
 * the rules allow, else fails. */
void chan_retry_later(struct chan *ch, int err, const char *detail);
/* Takes b's requests (all answered) off ch. */
void chan_forget(struct chan *ch, const struct xfer_batch *b);
/* One round over every channel: waits up to timeout_ms (< 0: up to the
 * nearest deadline) for the network, moves what it can, fails channels
 * past their deadline.  1 while requests are outstanding, 0 when none
 * are, or -errno. */
int engine_poll_round(struct xfer_engine *e, int timeout_ms);
/* Room in the poll arrays for every channel: 0 or -ENOMEM. */
int engine_poll_reserve(struct xfer_engine *e);
/* Bytes the channels moved so far. */
uint64_t engine_moved(const struct xfer_engine *e);

#pragma GCC visibility pop

#endif
