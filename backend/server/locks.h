/* Byte-range locks for MPI atomic mode (LOCK, UNLOCK), served by the
 * metadata rank: see locks.c and IPVFS_OP_LOCK in common/proto.h. */
#ifndef IPVFS_SERVER_LOCKS_H
#define IPVFS_SERVER_LOCKS_H

#include "backend/server/srvconn.h"

/* Its conn_closed hook releases the locks of a closed connection. */
extern const struct service locks_service;

#endif
