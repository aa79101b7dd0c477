/* The metadata service of rank 0 (metasvc.c): the namespace in LMDB
 * (metadb.h) and the MPI-IO shared file pointers. */
#ifndef IPVFS_SERVER_METASVC_H
#define IPVFS_SERVER_METASVC_H

#include "backend/server/srvconn.h"

extern const struct service metasvc_service;

/* Opens the namespace under DATA/rank-0/meta; 0 or -errno (logged). */
int metasvc_open(struct server *srv);
/* Closes the namespace and forgets the shared file pointers. */
void metasvc_close(struct server *srv);

#endif
