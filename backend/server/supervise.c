/* The supervisor of a rank: the MPI rank itself, which does all the MPI
 * work and runs the serving process (serve.c) as a forked child that makes
 * no MPI call, so that no crash of the serving process ends the MPI job
 * (mpiexec never learns of it) and the rank can come back.
 *
 * Who owns what: the supervisor owns MPI, the listening sockets (made in
 * main.c before the address exchange, inherited by every child), its
 * signalfd, and its end of the link to the child (a socketpair, one byte
 * per message, enum link_msg).  The child owns everything else.
 *
 * States (struct supervisor.state):
 *
 *   SERVING  a child runs.  The first one reports its set-up over the link;
 *            the supervisor then starts the readiness vote (MPI_Iallreduce,
 *            polled with MPI_Test between short poll() sleeps: never a
 *            blocking MPI call while a child serves, since UCX spins a core
 *            per waiting rank) and tells the child the verdict.
 *              child exits 0, or after telling LINK_STOPPING, or after a
 *              forwarded SIGTERM/SIGINT          -> DONE
 *              the vote failed and the child is gone         -> DONE
 *              child crashes (signal, or exit != 0), fewer than
 *              RESTART_LIMIT restarts in RESTART_WINDOW_MS   -> BACKOFF
 *              child crashes once more                       -> DOWN
 *   BACKOFF  no child; a restart is due at restart_at (0.5 s, 1 s, 2 s ...
 *            up to RESTART_MAX_MS, by the restarts in the window).  The exit
 *            barrier is posted (post_exit_barrier) and polled from here on.
 *              restart_at passed (and the vote, if any, is over) -> SERVING
 *              SIGTERM/SIGINT                                -> DONE
 *              the barrier completes (the cluster stops): no restart,
 *              exit status SUPERVISE_EXIT_DOWN               -> DONE
 *   DOWN     the rank stays down.  A child serving only the control service
 *            answers STATUS (state DOWN, the reason) and SHUTDOWN.  The exit
 *            barrier is posted at once and polled, so that this rank never
 *            holds up the others' exit.
 *              that child exits after a stop                 -> DONE
 *              the barrier completes (all others are leaving): the child is
 *              told to stop (SIGTERM), then                  -> DONE
 *   DONE     no child: the bounded exit barrier and MPI_Finalize.
 *
 * SIGTERM, SIGINT and SIGUSR1 to the supervisor go on to the child; SIGUSR1
 * (mpiexec -disable-auto-cleanup: a rank of the job died) also means that
 * no exit barrier can complete, so the supervisor then leaves without one.
 * The supervisor waits on its signalfd (SIGCHLD included) and the link,
 * with a timeout only while it polls MPI or waits for a restart. */
#include <errno.h>
#include <mpi.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend/server/serve.h"
#include "backend/server/supervise.h"
#include "common/log.h"

#define MPI_POLL_MS        20      /* between two MPI_Test of a pending request */
#define RESTART_FIRST_MS   500
#define RESTART_MAX_MS     8000
#define RESTART_LIMIT      5       /* restarts allowed within RESTART_WINDOW_MS */
#define RESTART_WINDOW_MS  60000
#define FINALIZE_WAIT_MS   30000

enum sup_state { SUP_SERVING, SUP_BACKOFF, SUP_DOWN, SUP_DONE };

struct supervisor {
    struct server *srv;
    enum sup_state state;
    int sigfd;
    pid_t child;                /* 0: none */
    int link;                   /* our end of the link to the child; -1: none */
    int child_stopping;         /* the child said LINK_STOPPING */
    int stop_asked;             /* a signal asked this rank to stop */
    int awaiting_verdict;       /* the first child waits for the vote */

    /* readiness vote */
    int reported;               /* this rank's set-up is known (vote started) */
    int vote_pending;
    int vote_failed;            /* the vote ended: some rank failed */
    MPI_Request vote;
    struct { int failed; int rank; } mine, worst;

    /* restarts */
    uint64_t restart_times[RESTART_LIMIT];  /* the latest restarts, a ring */
    uint32_t restarts;
    uint64_t restart_at;
    char last_exit[64];
    char reason[96];

    /* exit */
    MPI_Request bar;
    int bar_posted, bar_done, bar_failed;
    int peer_lost;
    int exit_code;
};

int supervise_mpi_fail(int rc, const char *what)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;

    if (rc == MPI_SUCCESS)
        return 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof(text), "MPI error %d", rc);
    log_error("%s: %s", what, text);
    return -EIO;
}

/* ---- the child ------------------------------------------------------------- */

static int spawn(struct supervisor *s)
{
    struct server *srv = s->srv;
    int sv[2];
    pid_t pid;

    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
        int err = errno;
        log_error("supervisor: socketpair: %s", strerror(err));
        return -err;
    }
    srv->supervisor_pid = (uint32_t)getpid();
    srv->restarts = s->restarts;
    srv->vote = !s->reported;
    snprintf(srv->last_exit, sizeof(srv->last_exit), "%s", s->last_exit);
    snprintf(srv->down_reason, sizeof(srv->down_reason), "%s", s->reason);
    fflush(NULL);   /* or the child prints our buffered lines again */
    if ((pid = fork()) < 0) {
        log_error("supervisor: fork: %s", strerror(errno));
        close(sv[0]);
        close(sv[1]);
        return -EAGAIN;
    }
    if (pid == 0) {
        close(sv[0]);
        close(s->sigfd);
        srv->link_fd = sv[1];
        serve_run(srv);
    }
    close(sv[1]);
    s->link = sv[0];
    s->child = pid;
    s->child_stopping = 0;
    s->awaiting_verdict = srv->vote;
    /* A restarted I/O node's volume is not new any more, whatever the
     * first start found. */
    srv->fresh_volume = 0;
    srv->lun_created = 0;
    if (s->restarts || s->state == SUP_DOWN)
        log_info("supervisor: serving process %d started (restart %u%s)", (int)pid,
                 s->restarts, s->state == SUP_DOWN ? ", control service only" : "");
    return 0;
}

static void describe_exit(int status, char *out, size_t len)
{
    if (WIFSIGNALED(status)) {
        const char *name = sigabbrev_np(WTERMSIG(status));
        if (name)
            snprintf(out, len, "killed by SIG%s%s", name, WCOREDUMP(status) ? " (core)" : "");
        else
            snprintf(out, len, "killed by signal %d", WTERMSIG(status));
    } else {
        snprintf(out, len, "exited with status %d", WEXITSTATUS(status));
    }
}

/* ---- readiness vote ------------------------------------------------------ */

static void start_vote(struct supervisor *s, int failed)
{
    s->reported = 1;
    s->mine.failed = failed;
    s->mine.rank = s->srv->rank;
    if (supervise_mpi_fail(MPI_Iallreduce(&s->mine, &s->worst, 1, MPI_2INT, MPI_MAXLOC,
                                          MPI_COMM_WORLD, &s->vote),
                           "starting the readiness vote") < 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    s->vote_pending = 1;
}

static void tell_child(struct supervisor *s, char msg)
{
    if (s->link >= 0 && write(s->link, &msg, 1) != 1)
        log_warn("supervisor: cannot reach the serving process: %s", strerror(errno));
}

static void test_vote(struct supervisor *s)
{
    int done = 0;

    if (supervise_mpi_fail(MPI_Test(&s->vote, &done, MPI_STATUS_IGNORE),
                           "waiting for readiness") < 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (!done)
        return;
    s->vote_pending = 0;
    s->vote_failed = s->worst.failed;
    if (s->vote_failed) {
        s->exit_code = 1;
        if (s->srv->rank == 0)
            log_console_error("rank %d failed to start (see its log, %s/rank-%d.log); "
                              "stopping every rank", s->worst.rank, s->srv->opts.log_dir,
                              s->worst.rank);
    }
    if (s->awaiting_verdict)
        tell_child(s, s->vote_failed ? LINK_CLUSTER_FAILED : LINK_CLUSTER_READY);
    s->awaiting_verdict = 0;
}

/* ---- exits and restarts ---------------------------------------------------- */

static uint32_t restarts_in_window(const struct supervisor *s, uint64_t now)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < RESTART_LIMIT && i < s->restarts; i++)
        if (now - s->restart_times[i] < RESTART_WINDOW_MS)
            n++;
    return n;
}

/* From the first crash on, the exit barrier stays posted and is polled:
 * a rank without a serving process (BACKOFF, DOWN) then learns that every
 * other rank is leaving (the cluster stops) and leaves too at once,
 * instead of restarting a child that nobody would stop and holding the
 * others' exit until FINALIZE_WAIT_MS.  A barrier posted early matches
 * the others' exit barrier as well as a late one would; it is posted
 * only after the readiness vote (collectives go in the same order on
 * every rank). */
static void post_exit_barrier(struct supervisor *s)
{
    if (s->bar_posted || !s->reported)
        return;
    if (supervise_mpi_fail(MPI_Ibarrier(MPI_COMM_WORLD, &s->bar), "starting the exit barrier")
        == 0)
        s->bar_posted = 1;
}

static void stay_down(struct supervisor *s)
{
    struct server *srv = s->srv;

    snprintf(s->reason, sizeof(s->reason), "%d restarts within %d s; last: %s", RESTART_LIMIT,
             RESTART_WINDOW_MS / 1000, s->last_exit);
    log_console_error("supervisor: rank %d stays down: %s", srv->rank, s->reason);
    s->state = SUP_DOWN;
    post_exit_barrier(s);
    if (spawn(s) < 0) {
        log_error("supervisor: rank %d cannot even answer STATUS", srv->rank);
        s->restart_at = evloop_now_ms() + RESTART_MAX_MS;
    }
}

static void child_crashed(struct supervisor *s)
{
    uint64_t now = evloop_now_ms();
    uint32_t recent = restarts_in_window(s, now);
    uint64_t delay;

    if (s->state == SUP_DOWN) {
        /* The control-only child: back after the longest delay, no limit. */
        s->restart_at = now + RESTART_MAX_MS;
        return;
    }
    if (recent >= RESTART_LIMIT) {
        stay_down(s);
        return;
    }
    post_exit_barrier(s);
    delay = (uint64_t)RESTART_FIRST_MS << recent;
    if (delay > RESTART_MAX_MS)
        delay = RESTART_MAX_MS;
    s->restart_at = now + delay;
    s->state = SUP_BACKOFF;
    log_warn("supervisor: restarting the serving process in %llu ms", (unsigned long long)delay);
}

static void child_exited(struct supervisor *s, int status)
{
    int clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;

    describe_exit(status, s->last_exit, sizeof(s->last_exit));
    ipvfs_log(clean ? IPVFS_LOG_INFO : IPVFS_LOG_ERROR, "supervisor: serving process %d %s%s",
              (int)s->child, s->last_exit, s->child_stopping ? " after a stop" : "");
    close(s->link);
    s->link = -1;
    s->child = 0;
    s->awaiting_verdict = 0;
    if (!s->reported)
        start_vote(s, 1);   /* it died setting up: this rank failed to start */
    if (clean || s->child_stopping || s->stop_asked) {
        if (s->state == SUP_DOWN)
            s->exit_code = SUPERVISE_EXIT_DOWN;
        else if (!clean)
            s->exit_code = 1;
        s->state = SUP_DONE;
        return;
    }
    if (s->vote_failed || (s->vote_pending && s->mine.failed)) {
        /* The start fails anyway: nothing to restart (settle() ends us once
         * the vote is over). */
        s->exit_code = 1;
        s->state = SUP_BACKOFF;
        s->restart_at = UINT64_MAX;
        return;
    }
    child_crashed(s);
}

static void restart(struct supervisor *s)
{
    enum sup_state was = s->state;

    if (was != SUP_DOWN) {
        s->restart_times[s->restarts % RESTART_LIMIT] = evloop_now_ms();
        s->restarts++;
        s->state = SUP_SERVING;
    }
    if (spawn(s) < 0) {
        s->state = was;     /* counted: a fork that keeps failing ends in DOWN */
        child_crashed(s);
    }
}

/* ---- events ------------------------------------------------------------------ */

static void on_signals(struct supervisor *s)
{
    struct signalfd_siginfo si;
    int status;
    pid_t pid;

    while (read(s->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        if (si.ssi_signo == SIGCHLD)
            continue;
        if (si.ssi_signo == SIGUSR1) {
            log_warn("supervisor: mpiexec reports that a rank of the job is gone");
            s->peer_lost = 1;
        } else {
            s->stop_asked = 1;
            if (!s->child)
                log_info("supervisor: signal %u: stopping (no serving process)", si.ssi_signo);
        }
        if (s->child && kill(s->child, (int)si.ssi_signo) < 0 && errno != ESRCH)
            log_warn("supervisor: cannot pass signal %u on: %s", si.ssi_signo, strerror(errno));
    }
    /* SIGCHLD merges: reap whatever has ended. */
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
        if (pid == s->child)
            child_exited(s, status);
}

static void on_link(struct supervisor *s)
{
    char msg;
    ssize_t n = read(s->link, &msg, 1);

    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n != 1) {
        /* The child is gone (SIGCHLD tells how); stop watching. */
        close(s->link);
        s->link = -1;
        return;
    }
    if (msg == LINK_STOPPING)
        s->child_stopping = 1;
    else if ((msg == LINK_SET_UP_OK || msg == LINK_SET_UP_FAILED) && !s->reported)
        start_vote(s, msg == LINK_SET_UP_FAILED);
}

static void test_barrier(struct supervisor *s)
{
    int done = 0;

    if (supervise_mpi_fail(MPI_Test(&s->bar, &done, MPI_STATUS_IGNORE),
                           "waiting for the other ranks to stop") < 0) {
        s->bar_failed = 1;  /* finish_mpi() then leaves without the others */
        return;
    }
    if (!done)
        return;
    s->bar_done = 1;
    /* Every other rank is leaving: so does this one (stayed down, waiting
     * to restart, or serving again after a crash). */
    s->stop_asked = 1;
    if (s->state == SUP_BACKOFF) {
        log_info("supervisor: the other ranks are leaving: no restart");
        s->exit_code = SUPERVISE_EXIT_DOWN;
    }
    if (s->child && kill(s->child, SIGTERM) < 0)
        log_warn("supervisor: cannot stop the serving process: %s", strerror(errno));
}

static int poll_timeout(const struct supervisor *s)
{
    int64_t t = -1;

    if (s->vote_pending || (s->bar_posted && !s->bar_done && !s->bar_failed))
        t = MPI_POLL_MS;
    if (s->state == SUP_BACKOFF && s->restart_at != UINT64_MAX && !s->vote_pending) {
        uint64_t now = evloop_now_ms();
        int64_t left = s->restart_at > now ? (int64_t)(s->restart_at - now) : 0;
        if (t < 0 || left < t)
            t = left;
    }
    return (int)t;
}

/* Without a child, and with nothing that would bring one back: done. */
static void settle(struct supervisor *s)
{
    if (!s->child && !s->vote_pending && (s->stop_asked || s->vote_failed))
        s->state = SUP_DONE;
}

static int run(struct supervisor *s)
{
    while (s->state != SUP_DONE) {
        struct pollfd pfd[2] = { { s->sigfd, POLLIN, 0 }, { s->link, POLLIN, 0 } };

        if (poll(pfd, 2, poll_timeout(s)) < 0 && errno != EINTR) {
            log_error("supervisor: poll: %s", strerror(errno));
            return -errno;
        }
        if (pfd[0].revents)
            on_signals(s);
        if (s->link >= 0 && pfd[1].revents)
            on_link(s);
        if (s->vote_pending)
            test_vote(s);
        if (s->bar_posted && !s->bar_done && !s->bar_failed)
            test_barrier(s);
        if (s->state == SUP_BACKOFF && !s->vote_pending && !s->stop_asked &&
            evloop_now_ms() >= s->restart_at)
            restart(s);
        if (s->state == SUP_DOWN && !s->child && s->restart_at && !s->stop_asked &&
            evloop_now_ms() >= s->restart_at) {
            s->restart_at = 0;
            restart(s);
        }
        settle(s);
    }
    return 0;
}

/* ---- exit ---------------------------------------------------------------------- */

/* Waits for req without spinning (MPI_Test, then a short sleep), at most
 * until deadline_ms.  1 when done, 0 on timeout, -EIO on error. */
static int wait_bounded(MPI_Request *req, uint64_t deadline_ms, const char *what)
{
    struct timespec nap = { 0, 10 * 1000 * 1000 };
    int done = 0;

    while (evloop_now_ms() < deadline_ms) {
        if (supervise_mpi_fail(MPI_Test(req, &done, MPI_STATUS_IGNORE), what) < 0)
            return -EIO;
        if (done)
            return 1;
        nanosleep(&nap, NULL);
    }
    return 0;
}

/* Every rank leaves together through MPI_Finalize, or, when some rank
 * never comes, leaves alone after FINALIZE_WAIT_MS (mpiexec then ends the
 * others). */
static int finish_mpi(struct supervisor *s)
{
    uint64_t deadline = evloop_now_ms() + FINALIZE_WAIT_MS;

    if (s->peer_lost) {
        /* No barrier can complete without the lost rank. */
        log_console_error("a rank of the job is gone: leaving without MPI_Finalize");
        fflush(NULL);
        _exit(s->exit_code);
    }
    if (s->bar_failed ||
        (s->vote_pending && wait_bounded(&s->vote, deadline, "finishing the readiness vote") != 1))
        goto give_up;
    if (!s->bar_posted &&
        supervise_mpi_fail(MPI_Ibarrier(MPI_COMM_WORLD, &s->bar), "starting the exit barrier") < 0)
        goto give_up;
    if (!s->bar_done && wait_bounded(&s->bar, deadline, "waiting for the other ranks to stop") != 1)
        goto give_up;
    MPI_Finalize();
    return s->exit_code;
give_up:
    log_console_error("other ranks did not stop within %d s: leaving without them",
                      FINALIZE_WAIT_MS / 1000);
    fflush(NULL);
    _exit(s->exit_code ? s->exit_code : 1);
}

void supervise_signal_set(sigset_t *out)
{
    sigemptyset(out);
    sigaddset(out, SIGTERM);
    sigaddset(out, SIGINT);
    sigaddset(out, SIGUSR1);
    sigaddset(out, SIGCHLD);
}

int supervise(struct server *srv, int failed)
{
    struct supervisor s = { .srv = srv, .state = SUP_SERVING, .link = -1 };
    sigset_t set;

    supervise_signal_set(&set);
    if ((s.sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) < 0) {
        log_error("supervisor: signalfd: %s", strerror(errno));
        failed = 1;
    }
    if (failed || spawn(&s) < 0) {
        start_vote(&s, 1);
        s.state = SUP_BACKOFF;
        s.restart_at = UINT64_MAX;
    }
    if (s.sigfd >= 0 && run(&s) < 0)
        s.exit_code = 1;
    if (s.child) {
        /* run() failed with the child alive: it must not outlive us unseen. */
        kill(s.child, SIGKILL);
        waitpid(s.child, NULL, 0);
    }
    /* The child owns the sockets now; ours only kept the ports. */
    if (srv->conns.listen_fd >= 0)
        close(srv->conns.listen_fd);
    if (srv->iscsi_listen_fd >= 0)
        close(srv->iscsi_listen_fd);
    ipvfs_map_free(&srv->map);
    return finish_mpi(&s);
}
