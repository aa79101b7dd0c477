/* The serving process of a rank (serve.c). */
#ifndef IPVFS_SERVE_H
#define IPVFS_SERVE_H

#include "backend/server/server.h"

/* In the child that the supervisor forked: sets up, serves until stopped,
 * tears down and leaves with _exit(srv->exit_code). */
void serve_run(struct server *srv) __attribute__((noreturn));

#endif
