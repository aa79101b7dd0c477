/* The serving process of a rank: the child that its supervisor
 * (supervise.c) forks, and forks again when it dies.  It makes no MPI call
 * and leaves with _exit, never through MPI's atexit paths.
 *
 * It inherits from the supervisor struct server as filled up to the
 * address exchange (options, role, directories, map, secret) and the
 * listening sockets (our port, and a target's iSCSI portal), so that every
 * incarnation serves on the same ports.  Everything with kernel state that
 * a crashed predecessor must not share with it is created here: the event
 * loop, the target's io_uring and backing file, the iRAID volume and its
 * iSCSI sessions, the datafile store, the metadata LMDB.
 *
 * Readiness: the first serving process reports its set-up (LINK_SET_UP_OK
 * or _FAILED) and serves the iSCSI logins of its I/O node meanwhile; the
 * supervisor runs the cluster's vote and answers LINK_CLUSTER_READY or
 * _FAILED; rank 0 then writes the map.  A restarted one does not vote: it
 * serves once its own set-up is done, and fails (exit 1, restarted by the
 * supervisor with backoff) when that set-up fails.
 *
 * A rank that stays down (down_reason set) runs a serving process with the
 * control service only, in state DOWN: it answers STATUS with the reason,
 * and SHUTDOWN, so that the cluster can still stop. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif

#include "backend/iscsi/target.h"
#include "backend/server/control.h"
#include "backend/server/ionode.h"
#include "backend/server/locks.h"
#include "backend/server/metasvc.h"
#include "backend/server/serve.h"
#include "backend/server/srvconn.h"
#include "backend/server/server.h"
#include "common/log.h"
#include "iraid/volume.h"

/* Every rank registers every service: a request for an op that this rank's
 * role does not serve gets EOPNOTSUPP, not a protocol error.  A rank that
 * stays down serves the first two (HELLO, then control's). */
static const struct service *const services[] = {
    &hello_service, &control_service, &metasvc_service, &locks_service, &ionode_service,
    &qos_service,
};

static int start_target(struct server *srv)
{
    char lun_path[1200], iqn[256];
    struct tgt_lun_config lun;
    struct tgt_disk_params disk;
    struct iraid_chap chap;
    struct tgt_config cfg;
    int rc;

    snprintf(lun_path, sizeof(lun_path), "%s/lun0.img", srv->rank_dir);
    server_target_iqn(srv, srv->io_index, (uint32_t)srv->target_index, iqn, sizeof(iqn));
    lun = (struct tgt_lun_config){ .kind = TGT_BACKING_FILE, .path = lun_path,
                                   .size = srv->opts.target_size };
    if (srv->opts.emulate_disk[0]) {
        rc = tgt_disk_preset(srv->opts.emulate_disk, &disk);
        if (rc < 0) {
            log_error("--emulate-disk %s: not a known disk", srv->opts.emulate_disk);
            return rc;
        }
        lun.disk = &disk;
    }
    /* only this I/O node, proving the key's CHAP for this target, and
     * proving ourselves to it in turn (mutual) */
    server_chap(srv, iqn, &chap);
    cfg = (struct tgt_config){ .iqn = iqn, .portal_host = srv->host,
                               .chap_user = chap.user, .chap_secret = chap.secret,
                               .mutual_user = chap.target_user,
                               .mutual_secret = chap.target_secret,
                               .chap_discovery = 1,
                               .portal_port = srv->iscsi_port,
                               .listen_fd = srv->iscsi_listen_fd, .luns = &lun, .nluns = 1,
                               .cache_l2 = srv->opts.cache_l2,
                               .cache_l2_policy = srv->opts.cache_l2_policy[0]
                                                      ? srv->opts.cache_l2_policy : NULL };
    /* The target owns the portal now, whether it starts or not. */
    srv->iscsi_listen_fd = -1;
    rc = tgt_server_create(srv->loop, &cfg, &srv->tgt, &srv->iscsi_port);
    explicit_bzero(&chap, sizeof(chap));
    if (rc < 0) {
        log_error("cannot start the iSCSI target %s: %s", iqn, strerror(-rc));
        return rc;
    }
    log_info("iSCSI target %s on %s:%u", iqn, srv->host, srv->iscsi_port);
    return 0;
}

static int set_up(struct server *srv)
{
    size_t n = srv->down_reason[0] ? 2 : sizeof(services) / sizeof(services[0]);
    int rc;

    for (size_t i = 0; i < n; i++)
        if ((rc = srvconn_register(srv, services[i])) < 0)
            return rc;
    if ((rc = srvconn_listen(srv)) < 0)
        return rc;
    /* users on this host prove who they are to the metadata rank there;
     * without the socket they still can with MUNGE (it logs why) */
    if (srv->role & IPVFS_ROLE_METADATA)
        (void)access_kernel_listen(srv);
    if ((rc = control_signals(srv)) < 0)
        return rc;
    if (srv->down_reason[0])
        return 0;
    if (srv->role & IPVFS_ROLE_TARGET && (rc = start_target(srv)) < 0)
        return rc;
    if (srv->role & IPVFS_ROLE_IO && (rc = ionode_open(srv)) < 0)
        return rc;
    if (srv->role & IPVFS_ROLE_METADATA && (rc = metasvc_open(srv)) < 0)
        return rc;
    return 0;
}

/* Stops what did start, from inside the loop, so that the stores finish
 * their work; the loop then ends and the process exits 1. */
static void start_failed(struct server *srv)
{
    srv->exit_code = 1;
    /* A restarted process that cannot set up is a failure to restart from
     * (with backoff), not a stop: the supervisor must not hear of a stop.
     * The first one's failure goes to the vote, which stops every rank. */
    if (!srv->vote)
        srv->link_fd = -1;
    if (srv->state != IPVFS_STATE_STOPPING)
        control_local_stop(srv);
}

static void serving(struct server *srv)
{
    int rc;

    srv->state = IPVFS_STATE_SERVING;
    /* A restarted rank 0 writes the same map again: its first incarnation
     * may have died before it wrote it. */
    if (srv->rank == 0 && (rc = ipvfs_map_write(srv->opts.map_path, &srv->map)) < 0) {
        log_error("cannot write the server map %s: %s", srv->opts.map_path, strerror(-rc));
        start_failed(srv);
        return;
    }
    if (srv->rank == 0 && srv->restarts == 0)
        log_console_info("cluster ready: %u I/O nodes x %u targets, RAID-%d, map %s",
                         srv->opts.nio, srv->opts.nt, srv->opts.raid, srv->opts.map_path);
    /* Set up: from now on errors go to the rank's log alone (errors while
     * serving may come in floods, e.g. from a full disk). */
    ipvfs_log_console_errors(0);
}

/* The supervisor's verdict on the readiness vote. */
static void on_verdict(struct evloop *loop, int fd, int events, void *user)
{
    struct server *srv = user;
    char msg = 0;
    ssize_t n = read(fd, &msg, 1);

    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    evloop_del_fd(loop, fd);
    if (n == 1 && msg == LINK_CLUSTER_READY) {
        if (srv->state == IPVFS_STATE_STARTING)   /* else a signal stopped us meanwhile */
            serving(srv);
        return;
    }
    if (n == 1 && msg == LINK_CLUSTER_FAILED) {
        if (srv->rank == 0)
            log_error("some rank failed to start (see its messages above); stopping every rank");
    } else {
        log_error("the supervisor is gone before the readiness vote ended");
    }
    start_failed(srv);
}

/* Reports the set-up to the supervisor, which runs the vote. */
static int start_vote(struct server *srv, int failed)
{
    char msg = failed ? LINK_SET_UP_FAILED : LINK_SET_UP_OK;

    if (write(srv->link_fd, &msg, 1) != 1) {
        log_error("cannot report to the supervisor: %s", strerror(errno));
        return -EIO;
    }
    if (evloop_set_fd(srv->loop, srv->link_fd, EV_READ, on_verdict, srv) < 0) {
        log_error("cannot watch the supervisor's link");
        return -EIO;
    }
    return 0;
}

static void tear_down(struct server *srv)
{
    if (!srv->abandon)
        ionode_close(srv);
    if (srv->tgt) {
        if (tgt_server_flush(srv->tgt) < 0)
            log_error("final flush of the target failed");
        tgt_server_destroy(srv->tgt);
        srv->tgt = NULL;
    }
    metasvc_close(srv);
    access_kernel_close(srv);
    srvconn_close_all(srv);
    if (srv->signal_fd >= 0) {
        evloop_del_fd(srv->loop, srv->signal_fd);
        close(srv->signal_fd);
    }
    evloop_destroy(srv->loop);
    ipvfs_map_free(&srv->map);
    free(srv->clients);
}

/* What the process inherited from an MPI rank that it must not keep. */
static void leave_mpi_behind(struct server *srv)
{
    static const int fatal[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
    sigset_t chld;

    /* UCX's handlers would print its backtrace and hide the real cause of
     * a crash from the supervisor. */
    for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
        signal(fatal[i], SIG_DFL);
    /* The supervisor watches SIGCHLD; this process forks nothing. */
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_UNBLOCK, &chld, NULL);
    /* When mpiexec kills the supervisor, nobody else would end us. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != (pid_t)srv->supervisor_pid) {
        log_error("the supervisor is gone (or PR_SET_PDEATHSIG failed): not serving");
        _exit(1);
    }
}

/* The write verifier of this incarnation (common/proto.h): a new random
 * id, so that clients see that acknowledged writes may be gone.  Without
 * getrandom (no entropy yet at boot), the clock and pid still differ from
 * every earlier incarnation's. */
static void draw_verifier(struct server *srv)
{
    struct timespec ts;

    if (getrandom(&srv->verifier, sizeof(srv->verifier), GRND_NONBLOCK) ==
        (ssize_t)sizeof(srv->verifier))
        return;
    log_warn("getrandom: %s; the write verifier comes from the clock", strerror(errno));
    clock_gettime(CLOCK_REALTIME, &ts);
    srv->verifier = ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) ^
                    (uint64_t)getpid() << 40;
}

void serve_run(struct server *srv)
{
    int failed, rc;

    leave_mpi_behind(srv);
    srv->started_ms = evloop_now_ms();
    draw_verifier(srv);
    srv->state = srv->down_reason[0] ? IPVFS_STATE_DOWN : IPVFS_STATE_STARTING;
    if (!(srv->loop = evloop_create())) {
        log_error("cannot create the event loop");
        _exit(1);
    }
    failed = set_up(srv) < 0;
    if (srv->vote) {
        if (start_vote(srv, failed) < 0)
            start_failed(srv);
    } else if (failed) {
        start_failed(srv);
    } else if (!srv->down_reason[0]) {
        serving(srv);
    }
    if ((rc = evloop_run(srv->loop)) < 0) {
        log_error("event loop failed: %s", strerror(-rc));
        srv->exit_code = 1;
    }
    tear_down(srv);
#ifdef __SANITIZE_ADDRESS__
    /* _exit skips LeakSanitizer's check at exit; the ASan build of
     * t_server_asan wants this process checked too. */
    __lsan_do_leak_check();
#endif
    fflush(NULL);
    _exit(srv->exit_code);
}
