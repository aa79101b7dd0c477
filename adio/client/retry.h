/* When the client reconnects to a server rank and sends a request again
 * after its connection broke, and how long it waits between attempts.
 * Pure decisions (no I/O, no clock): the request engine (xfer.c) asks
 * them and does the rest; test_client_retry checks them.
 *
 * Why a connection breaks and what is tried again:
 * - A serving process that dies (crash, kill -9, OOM kill) is restarted by
 *   its rank's supervisor on the same port after 0.5 to 8 s (backoff), and
 *   the supervisor keeps the listening socket meanwhile.  So its clients
 *   see an established connection reset or closed (ECONNRESET, EPIPE,
 *   ECONNABORTED): those are reconnected.  A new connect then succeeds at
 *   once (the kernel queues it on the supervisor's socket) and its HELLO
 *   is answered once the new serving process serves; while reconnecting, a
 *   HELLO that times out or is reset is tried again.
 * - A refused connect means that no supervisor holds the port any more
 *   (the rank, or the cluster, is gone for good): never tried again.  A
 *   request that times out on an established connection (a hung or
 *   stopped server) is not either: the client's time limits stay what
 *   IPVFS_TIMEOUT_MS says.
 * - All of it within the reconnect deadline (IPVFS_CLIENT_RECONNECT_MS
 *   from the moment the connection broke), then the request fails with
 *   the error of the last attempt, naming the rank.
 *
 * Which requests go again (a request is "in doubt" when it was sent whole
 * and no reply came: the server may or may not have done it; a request not
 * sent whole was surely not done, the server needs all of it):
 *   READ WRITE                 always: data at datafile offsets, the same
 *                              bytes land in the same place twice
 *   DF_GETSIZE DF_SYNC         always (a sync again is a sync; the write
 *                              verifier tells what a restart lost)
 *   DF_TRUNCATE DF_PREALLOC    always: absolute sizes
 *   DF_REMOVE ORPHANS          always: a missing datafile or an unknown
 *                              done handle is no error there
 *   LOOKUP                     always (open, or open-or-create) unless the
 *                              caller marks it once: an exclusive create
 *                              in doubt fails to its caller (meta.c), which
 *                              asks again as open-or-create, so that a
 *                              create that did happen is no EEXIST
 *   REMOVE                     only when not in doubt; in doubt the caller
 *                              (meta.c) sends it again and takes ENOENT as
 *                              done (its datafiles are then an orphan,
 *                              cleaned by the orphan sweep)
 *   STATUS READDIR HELLO       always
 *   GETATTR SETATTR            always: SETATTR sets absolute values
 *   SHFP LOCK UNLOCK           never: shared file pointers and locks live
 *                              in the serving process and on the
 *                              connection, a restart has lost them
 *   anything else (MKDIR, RENAME, SHUTDOWN, SCRUB, REBUILD)
 *                              only when not in doubt
 */
#ifndef IPVFS_CLIENT_RETRY_H
#define IPVFS_CLIENT_RETRY_H

#include <stdint.h>

#pragma GCC visibility push(hidden)

/* How long a client keeps reconnecting to a server rank whose connection
 * broke: covers the supervisor's restart backoff (up to 8 s) plus a
 * serving process's start (iSCSI logins, store recovery).  The
 * environment variable IPVFS_RECONNECT_MS (positive milliseconds)
 * replaces it. */
#define IPVFS_CLIENT_RECONNECT_MS 30000
/* Waits between reconnect attempts: the first, doubled each time, at most
 * the last. */
#define RETRY_FIRST_DELAY_MS 50
#define RETRY_MAX_DELAY_MS 2000

/* 1 when err (positive errno) on an established connection means that its
 * serving process may be restarting: reconnect. */
int retry_after_lost(int err);

/* 1 when a reconnect attempt that failed with err may be tried again. */
int retry_reconnect_again(int err);

/* 1 when a request of op may be sent again on a new connection; in_doubt
 * as above, once: its caller asked that it never be sent twice. */
int retry_request_again(uint16_t op, int once, int in_doubt);

/* The wait before reconnect attempt `attempt` (0: the first) when the
 * connection broke elapsed_ms ago: milliseconds, or -1 when the attempt
 * would start past deadline_ms. */
int retry_delay_ms(unsigned attempt, int64_t elapsed_ms, int deadline_ms);

#pragma GCC visibility pop

#endif
