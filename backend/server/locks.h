/* Byte-range locks for MPI atomic mode (LOCK, UNLOCK), served by the
 * metadata rank: see locks.c and IPVFS_OP_LOCK in common/proto.h. */
#ifndef IPVFS_SERVER_LOCKS_H
#define IPVFS_SERVER_LOCKS_H

#include "backend/server/server.h"

/* LOCK and UNLOCK; srvconn.c dispatches through it like the other tables. */
extern const struct op_entry lock_ops[];

/* srvconn.c calls this while it destroys a connection, whatever its state:
 * releases the connection's locks, forgets its waiting request and grants
 * what that unblocks.  It may reply to (and so destroy) other connections. */
void locks_conn_closed(struct conn *c);

#endif
