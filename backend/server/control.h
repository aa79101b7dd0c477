/* The control service of every rank (control.c): STATUS, SHUTDOWN, SCRUB,
 * REBUILD, and the signals that stop a rank. */
#ifndef IPVFS_SERVER_CONTROL_H
#define IPVFS_SERVER_CONTROL_H

#include "backend/server/srvconn.h"

extern const struct service control_service;

/* Watches SIGTERM, SIGINT and SIGUSR1 through a signalfd; 0 or -errno. */
int control_signals(struct server *srv);
/* Stops this rank's services from inside the loop (stores synced and
 * closed, target flushed and destroyed), then leaves the loop. */
void control_local_stop(struct server *srv);

#endif
