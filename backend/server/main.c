/* ipvfs-server: one MPI job of N = NIO * (1 + NT) ranks.
 *
 * Rank r is in group g = r / (1 + NT) at place k = r % (1 + NT): k == 0 is
 * I/O node g (rank 0 also serves metadata), k > 0 is target k-1 of group g.
 *
 * Each rank is a supervisor; this file is its start: parse options (rank 0
 * decides, everyone learns the verdict); bind to a core; make the
 * directories and (rank 0) the cluster secret; choose the address to listen
 * on from every rank's host (listen.h); bind the listening sockets
 * (ours, and a target's iSCSI portal), which every serving process of the
 * rank inherits; learn every rank's address (MPI_Allgather, before anyone
 * serves anything).  supervise.c goes on from there: it forks the serving
 * process (serve.c) and runs the readiness vote, the restarts and the
 * exit. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <net/if.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/server/listen.h"
#include "backend/server/server.h"
#include "backend/server/supervise.h"
#include "common/log.h"
#include "common/net.h"

/* ---- options: rank 0 decides --------------------------------------------- */

enum { OPTS_OK = 0, OPTS_HELP = 1, OPTS_BAD = 2 };

static int decide_options(struct server *srv, int argc, char **argv)
{
    char err[512];
    int verdict = OPTS_OK, rc;

    rc = server_opts_parse(argc, argv, &srv->opts, err, sizeof(err));
    if (srv->rank == 0) {
        if (rc < 0) {
            fprintf(stderr, "ipvfs-server: %s\n", err);
            verdict = OPTS_BAD;
        } else if (srv->opts.help) {
            fputs(server_usage(), stdout);
            verdict = OPTS_HELP;
        } else if ((uint64_t)srv->nranks != (uint64_t)srv->opts.nio * (1 + srv->opts.nt)) {
            fprintf(stderr,
                    "ipvfs-server: %d ranks started, but --io-nodes %u with --targets-per-io %u "
                    "needs %u (NIO * (1 + NT)): run mpiexec -n %u\n",
                    srv->nranks, srv->opts.nio, srv->opts.nt, srv->opts.nio * (1 + srv->opts.nt),
                    srv->opts.nio * (1 + srv->opts.nt));
            verdict = OPTS_BAD;
        }
    }
    if (supervise_mpi_fail(MPI_Bcast(&verdict, 1, MPI_INT, 0, MPI_COMM_WORLD), "sharing the options") < 0)
        return OPTS_BAD;
    return verdict;
}

static void assign_role(struct server *srv)
{
    uint32_t per = 1 + srv->opts.nt, k = (uint32_t)srv->rank % per;
    char ident[32];

    srv->io_index = (uint32_t)srv->rank / per;
    srv->target_index = k == 0 ? -1 : (int)k - 1;
    srv->role = k == 0 ? IPVFS_ROLE_IO : IPVFS_ROLE_TARGET;
    if (srv->rank == 0)
        srv->role |= IPVFS_ROLE_METADATA;
    if (k == 0)
        snprintf(ident, sizeof(ident), "%s%u", srv->rank == 0 ? "meta+io" : "io", srv->io_index);
    else
        snprintf(ident, sizeof(ident), "target%u.%u", srv->io_index, k - 1);
    ipvfs_log_set_ident(ident);
}

/* ---- directories ------------------------------------------------------------ */

static int make_dir(const char *path)
{
    if (mkdir(path, 0700) == 0 || errno == EEXIST)
        return 0;
    log_error("cannot create %s: %s", path, strerror(errno));
    return -errno;
}

/* DATA and DATA/rank-<r>; the cluster's iSCSI name derives from DATA's
 * real path, so it is the same after a restart and differs between
 * clusters on one host. */
static int prepare_dirs(struct server *srv)
{
    char real[PATH_MAX];
    uint32_t h = 2166136261u;
    int rc;

    if ((rc = make_dir(srv->opts.data_dir)) < 0)
        return rc;
    if (!realpath(srv->opts.data_dir, real)) {
        log_error("cannot resolve %s: %s", srv->opts.data_dir, strerror(errno));
        return -errno;
    }
    for (const char *p = real; *p; p++)
        h = (h ^ (uint8_t)*p) * 16777619u;
    snprintf(srv->cluster, sizeof(srv->cluster), "c%08x", h);
    snprintf(srv->rank_dir, sizeof(srv->rank_dir), "%s/rank-%d", srv->opts.data_dir, srv->rank);
    return make_dir(srv->rank_dir);
}

/* Rank 0: the cluster secret, made once and kept in DATA/secret (0600),
 * which the public map names by its absolute path (map.key_path). */
static int load_secret(struct server *srv)
{
    char dir[PATH_MAX], *path = srv->map.key_path;
    ssize_t n;
    int fd, rc = 0;

    if (!realpath(srv->opts.data_dir, dir)) {
        rc = -errno;
        log_error("cannot resolve --data %s: %s", srv->opts.data_dir, strerror(-rc));
        return rc;
    }
    if ((size_t)snprintf(path, sizeof(srv->map.key_path), "%s/secret", dir) >=
        sizeof(srv->map.key_path)) {
        log_error("the key file's path under %s is too long for the map", dir);
        return -ENAMETOOLONG;
    }
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
        n = read(fd, srv->secret, IPVFS_SECRET_LEN);
        close(fd);
        if (n == IPVFS_SECRET_LEN)
            return 0;
        log_error("%s is damaged (%zd bytes, not %d): remove it to make a new one", path, n,
                  IPVFS_SECRET_LEN);
        return -EINVAL;
    }
    if (errno != ENOENT) {
        log_error("cannot read %s: %s", path, strerror(errno));
        return -errno;
    }
    if (getrandom(srv->secret, IPVFS_SECRET_LEN, 0) != IPVFS_SECRET_LEN) {
        log_error("getrandom: %s", strerror(errno));
        return -EIO;
    }
    if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0) {
        log_error("cannot create %s: %s", path, strerror(errno));
        return -errno;
    }
    if (write(fd, srv->secret, IPVFS_SECRET_LEN) != IPVFS_SECRET_LEN || fsync(fd) < 0) {
        rc = -EIO;
        log_error("cannot write %s: %s", path, strerror(errno));
        unlink(path);
    }
    close(fd);
    return rc;
}

/* Rank 0: the map is written only once all ranks serve, so a map path
 * that cannot be written is found now, while the start can still fail on
 * every rank alike. */
static int check_map_dir(const struct server *srv)
{
    char dir[sizeof(srv->opts.map_path)];
    char *slash;

    snprintf(dir, sizeof(dir), "%s", srv->opts.map_path);
    slash = strrchr(dir, '/');
    if (slash == dir)
        slash[1] = '\0';
    else if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof(dir), ".");
    if (access(dir, W_OK | X_OK) < 0) {
        log_error("cannot write the server map into %s: %s", dir, strerror(errno));
        return -errno;
    }
    return 0;
}

/* Whether the target is about to create its LUN file: a new file is
 * sparse, all zeros, which lets the I/O node skip the first resync. */
static int lun_is_new(const char *path)
{
    struct stat st;

    if (stat(path, &st) == 0)
        return 0;
    if (errno != ENOENT)
        log_warn("cannot stat %s: %s", path, strerror(errno));
    return errno == ENOENT;
}

/* ---- address exchange and the map ---------------------------------------- */

struct rank_rec {
    uint32_t role;
    uint32_t io_index;
    int32_t target_index;
    uint32_t pid;
    uint16_t port;
    uint16_t iscsi_port;
    uint32_t flags;             /* REC_* */
    char host[64];
};

/* A target that created its LUN file in this start. */
#define REC_NEW_LUN 0x1u

/* I/O node: its volume is brand new when every one of its targets has just
 * created its LUN file (zeros: parity and mirrors agree); iraid still
 * checks that no member holds a superblock before it skips the resync.  An
 * external member (--member) may hold anything: never fresh then. */
static int volume_is_fresh(const struct server *srv, const struct rank_rec *all)
{
    uint32_t first = srv->io_index * (1 + srv->opts.nt) + 1;

    for (uint32_t k = 0; k < srv->opts.nt; k++)
        if (!(all[first + k].flags & REC_NEW_LUN) ||
            server_member_url(&srv->opts, srv->io_index, k))
            return 0;
    return 1;
}

static int exchange_addresses(struct server *srv)
{
    struct rank_rec mine, *all;
    int rc;

    memset(&mine, 0, sizeof(mine));
    mine = (struct rank_rec){ .role = srv->role, .io_index = srv->io_index,
                              .target_index = srv->target_index, .pid = (uint32_t)getpid(),
                              .port = srv->conns.port, .iscsi_port = srv->iscsi_port,
                              .flags = srv->lun_created ? REC_NEW_LUN : 0 };
    snprintf(mine.host, sizeof(mine.host), "%s", srv->host);
    if (!(all = calloc((size_t)srv->nranks, sizeof(*all))) ||
        !(srv->map.ranks = calloc((size_t)srv->nranks, sizeof(*srv->map.ranks)))) {
        free(all);
        log_error("out of memory");
        return -ENOMEM;
    }
    rc = supervise_mpi_fail(MPI_Allgather(&mine, sizeof(mine), MPI_BYTE, all, sizeof(mine), MPI_BYTE,
                                MPI_COMM_WORLD), "exchanging addresses");
    for (int r = 0; rc == 0 && r < srv->nranks; r++) {
        struct ipvfs_map_rank *m = &srv->map.ranks[r];
        *m = (struct ipvfs_map_rank){ .rank = (uint32_t)r, .role = all[r].role,
                                      .io_index = all[r].io_index,
                                      .target_index = all[r].target_index,
                                      .port = all[r].port, .iscsi_port = all[r].iscsi_port,
                                      .pid = all[r].pid };
        memcpy(m->host, all[r].host, sizeof(m->host));
        m->host[sizeof(m->host) - 1] = '\0';
    }
    if (rc == 0 && (srv->role & IPVFS_ROLE_IO))
        srv->fresh_volume = volume_is_fresh(srv, all);
    free(all);
    /* Every rank checks HELLO against the secret that rank 0 keeps. */
    if (rc == 0)
        rc = supervise_mpi_fail(MPI_Bcast(srv->secret, IPVFS_SECRET_LEN, MPI_BYTE, 0, MPI_COMM_WORLD),
                      "sharing the cluster secret");
    memcpy(srv->map.secret, srv->secret, IPVFS_SECRET_LEN);
    srv->map.have_key = 1;
    srv->map.nranks = (uint32_t)srv->nranks;
    srv->map.nio = srv->opts.nio;
    srv->map.nt = srv->opts.nt;
    srv->map.raid_level = (uint32_t)srv->opts.raid;
    srv->map.stripe_unit = srv->opts.stripe_unit;
    return rc;
}

/* Every rank's host, gathered before any socket is bound, decides where
 * this rank listens (listen.h).  Collective: a rank whose start failed
 * takes part all the same, so that nobody waits for it. */
static int choose_address(struct server *srv, int failed)
{
    struct listen_host mine, *all;
    char warn[256], err[256];
    int rc;

    if ((rc = listen_describe_host(&mine)) < 0) {
        log_error("cannot list this host's addresses: %s", strerror(-rc));
        memset(&mine, 0, sizeof(mine));
        failed = 1;
    }
    snprintf(srv->node, sizeof(srv->node), "%s", mine.name);
    if (!(all = calloc((size_t)srv->nranks, sizeof(*all)))) {
        log_error("out of memory");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (supervise_mpi_fail(MPI_Allgather(&mine, sizeof(mine), MPI_BYTE, all, sizeof(mine),
                                         MPI_BYTE, MPI_COMM_WORLD), "exchanging host addresses") < 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    rc = failed ? -1 : listen_choose(all, srv->nranks, srv->rank, srv->opts.listen,
                                     srv->bind_addr, srv->host, sizeof(srv->host), warn, err,
                                     sizeof(err));
    free(all);
    if (failed)
        return -1;
    if (rc < 0 && if_nametoindex(srv->opts.listen))
        log_error("--listen %s: that interface has no IPv4 address", srv->opts.listen);
    else if (rc < 0)
        log_error("%s", err);
    else if (warn[0])
        log_warn("%s", warn);
    else
        log_info("host %s: listening on %s, published as %s (--listen %s)", srv->node,
                 srv->bind_addr, srv->host, srv->opts.listen);
    return rc;
}

/* ---- start-up -------------------------------------------------------------- */

/* The rank's own log file (options.h: --log-dir, --log-size): from here on
 * mpiexec's output gets only ipvfs_log_console() lines, since Hydra ends
 * the whole job when it cannot write a rank's output (a full disk). */
static int open_log(struct server *srv)
{
    char path[1200];
    int rc;

    if ((rc = make_dir(srv->opts.log_dir)) < 0)
        return rc;
    snprintf(path, sizeof(path), "%s/rank-%d.log", srv->opts.log_dir, srv->rank);
    if ((rc = ipvfs_log_to_file(path, srv->opts.log_size)) < 0) {
        log_error("cannot log to %s: %s", path, strerror(-rc));
        return rc;
    }
    /* errors of the start (fatal) still reach mpiexec's output */
    ipvfs_log_console_errors(1);
    log_console_info("rank %d logs to %s", srv->rank, path);
    return 0;
}

/* What comes before the address choice: directories, the log, the core. */
static int prepare(struct server *srv)
{
    int rc;

    if ((rc = prepare_dirs(srv)) < 0 || (rc = open_log(srv)) < 0)
        return rc;
    topo_bind(srv);
    return 0;
}

/* Everything the serving processes inherit, made once so that a restarted
 * one serves on the same ports.  The sockets are in srv->conns.listen_fd
 * and srv->iscsi_listen_fd.  Rank 0 takes --meta-port (clients that get
 * the map from it name that port). */
static int set_up(struct server *srv)
{
    char lun_path[1200];
    uint16_t port = srv->rank == 0 ? srv->opts.meta_port : 0;
    int fd, rc;

    if ((fd = net_listen(srv->bind_addr, port, &srv->conns.port)) < 0) {
        log_error("cannot listen on %s:%u: %s", srv->bind_addr, port, strerror(-fd));
        return fd;
    }
    srv->conns.listen_fd = fd;
    if (srv->rank == 0 && ((rc = load_secret(srv)) < 0 || (rc = check_map_dir(srv)) < 0))
        return rc;
    if (!(srv->role & IPVFS_ROLE_TARGET))
        return 0;
    snprintf(lun_path, sizeof(lun_path), "%s/lun0.img", srv->rank_dir);
    srv->lun_created = lun_is_new(lun_path);
    if ((fd = net_listen(srv->bind_addr, 0, &srv->iscsi_port)) < 0) {
        log_error("cannot listen for iSCSI on %s: %s", srv->bind_addr, strerror(-fd));
        return fd;
    }
    srv->iscsi_listen_fd = fd;
    return 0;
}

/* Signals arrive through signalfd (supervise.c, control.c): block them
 * before MPI starts its threads so that every thread inherits the mask. */
static void block_signals(void)
{
    sigset_t set;

    supervise_signal_set(&set);
    sigprocmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
}

/* Request bodies, read replies and backing-store buffers run up to
 * IPVFS_MAX_BODY (8 MiB and a bit) and live for one request.  glibc would
 * mmap each and unmap it at free, so every such request paid a page fault
 * and a zeroed page per 4 KiB (list I/O of a tile: some 20% of a write's
 * time).  Serving them from the heap, and keeping freed heap up to a few
 * requests' worth instead of trimming it, reuses the pages. */
static void tune_malloc(void)
{
    if (mallopt(M_MMAP_THRESHOLD, 4 * IPVFS_MAX_IO_BYTES) != 1 ||
        mallopt(M_TRIM_THRESHOLD, 8 * IPVFS_MAX_IO_BYTES) != 1)
        fprintf(stderr, "ipvfs-server: mallopt failed; large buffers stay mmap'd\n");
}

int main(int argc, char **argv)
{
    struct server srv = { .conns.listen_fd = -1, .signal_fd = -1, .cred_fd = -1, .target_index = -1,
                          .iscsi_listen_fd = -1, .link_fd = -1,
                          .state = IPVFS_STATE_STARTING };
    int verdict, failed;

    tune_malloc();
    block_signals();
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "ipvfs-server: MPI_Init failed\n");
        return 1;
    }
    /* Errors come back to supervise_mpi_fail(), and the caller decides,
     * instead of the default handler aborting the whole job. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &srv.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &srv.nranks);
    if ((verdict = decide_options(&srv, argc, argv)) != OPTS_OK) {
        MPI_Finalize();
        return verdict == OPTS_HELP ? 0 : 2;
    }
    assign_role(&srv);
    failed = prepare(&srv) < 0;
    failed = choose_address(&srv, failed) < 0 || set_up(&srv) < 0;
    /* Everyone exchanges, failed or not, so that nobody waits forever. */
    if (exchange_addresses(&srv) < 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    return supervise(&srv, failed);
}
