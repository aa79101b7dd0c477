/* The supervisor of a rank (supervise.c). */
#ifndef IPVFS_SUPERVISE_H
#define IPVFS_SUPERVISE_H

#include <signal.h>

#include "backend/server/server.h"

/* After the address exchange: runs the rank until it stops (the serving
 * process, its restarts, the readiness vote, the exit barrier and
 * MPI_Finalize).  failed: this rank's own start failed already.  Returns
 * main's exit status (SUPERVISE_EXIT_DOWN for a rank that stayed down). */
int supervise(struct server *srv, int failed);

#define SUPERVISE_EXIT_DOWN 3

/* The signals a rank takes through signalfd (SIGTERM, SIGINT, SIGUSR1,
 * SIGCHLD): main.c blocks them before MPI starts its threads, the
 * supervisor and the serving process read them from a signalfd. */
void supervise_signal_set(sigset_t *out);

/* The one place MPI's error space becomes errno, with context: 0 for
 * MPI_SUCCESS, else logs and returns -EIO. */
int supervise_mpi_fail(int rc, const char *what);

#endif
