/* Nonblocking independent I/O end to end (run by test/t_e2e_nonblock.sh).
 *
 *   e2e_nonblock exact FILE
 *     Every rank posts several MPI_File_iwrite_at (sizes from 1 byte to
 *     3 MiB), an MPI_File_iwrite through the individual pointer and one
 *     with a strided memory type, all outstanding at once, with a
 *     blocking write in between; MPI_Waitall; byte counts checked.  Then
 *     the next rank reads the region back with as many MPI_File_iread_at
 *     outstanding at once (and one reaching past the end of the file:
 *     short count), byte-exact.
 *   e2e_nonblock overlap FILE "PIDS"
 *     Rank 0 stops the servers (SIGSTOP), posts a 32 MiB MPI_File_iwrite_at
 *     and checks that the call returned within 1 s and that MPI_Test says
 *     not complete; it resumes them (SIGCONT), waits and checks the data.
 *     A second 32 MiB iwrite is completed by MPI_Test alone (no MPI_Wait).
 *   e2e_nonblock queue FILE "PIDS"
 *     A process's nonblocking accesses reach the servers together: rank 0
 *     writes 8 MiB, stops the servers, posts one 64 KiB MPI_File_iread_at
 *     and waits until its READ sits unread at a stopped server (bytes in
 *     the server ends of its connections, /proc/net/tcp); then posts seven
 *     more of the same shape on the same handle (at 1, 2, ... 7 MiB) and,
 *     calling nothing else, expects eight times those bytes there (a
 *     client that sends one access at a time leaves the seven behind the
 *     unanswered first; one that keeps fewer than 8 pieces in flight per
 *     open file, the servers' window, holds the rest back); it resumes
 *     the servers and checks all eight byte-exact.
 *   e2e_nonblock order FILE "PIDS" STATS SCHEDULE
 *     Server-side READ ordering: with ipvfs_io_schedule=SCHEDULE every
 *     rank writes 128 KiB at rank * 128 KiB (a stripe unit on each of two
 *     I/O nodes); then, with the servers stopped, the ranks post one
 *     MPI_File_iread_at each, highest rank first, each waiting until its
 *     READs sit unread at the stopped I/O nodes before the next one posts
 *     (seen in /proc/net/tcp), so that the READs wait at the I/O nodes in
 *     descending client order; the servers resume and
 *     the reads are checked byte-exact.  `ipvfs-ctl stats --json` is
 *     saved to STATS.0.json before and STATS.1.json after for the script
 *     to check the order the nodes served the waiting READs in.
 *   e2e_nonblock collwait FILE
 *     Nonblocking collectives must not spin while they wait: rank 0 joins
 *     MPI_File_iwrite_at_all 2 s after the other ranks have posted theirs
 *     (they tell it), so they wait that long in MPI_Wait (the 2 s is the
 *     period measured, not a guess at how long something takes); their
 *     CPU time (getrusage) over the wait must stay
 *     under a tenth of its wall time (a polling wait takes all the core
 *     it can get: a third to all of it on the shared 2-core VM; napping
 *     takes a few percent).  Run it with 2 ranks, so that the waiting
 *     rank has a core to spin on.  Then
 *     MPI_File_iread_all through a strided view, rank 0 again late, the
 *     data of a neighbour checked byte-exact, with byte counts.
 *   e2e_nonblock stopped FILE "PIDS"
 *     Rank 0 stops the servers, posts a write and a read; MPI_Wait must
 *     fail with the time-limit message (run with a short IPVFS_TIMEOUT_MS)
 *     within 30 s; it resumes them at the end.
 */
#include <dirent.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "e2e_util.h"

E2E_GLOBALS;

#define REGION (8u << 20)       /* bytes of file per rank */
#define NPOST 8

static const size_t post_len[NPOST] = { 1, 4095, 65536, 65537, 200000, 1u << 20, 3u << 20, 77 };

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void check_count(const MPI_Status * st, MPI_Count want, const char *what, int i)
{
    MPI_Count got = -1;

    MPI_Get_elements_x(st, MPI_BYTE, &got);
    E2E_CHECK(got == want, "%s %d: status says %lld bytes, want %lld", what, i,
              (long long) got, (long long) want);
}

static MPI_File open_file(const char *path)
{
    MPI_File fh = MPI_FILE_NULL;

    E2E_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                          MPI_INFO_NULL, &fh));
    return fh;
}

/* Offsets of the posted pieces inside a rank's region. */
static MPI_Offset piece_off(int rank, int i)
{
    MPI_Offset off = (MPI_Offset) rank * REGION;

    for (int k = 0; k < i; k++)
        off += (MPI_Offset) post_len[k] + 13;   /* gaps stay holes */
    return off;
}

static void write_region(MPI_File fh, int rank)
{
    MPI_Request req[NPOST + 2];
    MPI_Status st[NPOST + 2];
    unsigned char *buf[NPOST], *ind, *strided;
    MPI_Offset base = piece_off(rank, NPOST) + 4096, blk = base + 300000;
    MPI_Datatype vec;
    unsigned char blocking[1000];

    for (int i = 0; i < NPOST; i++) {
        buf[i] = malloc(post_len[i]);
        e2e_fill(buf[i], (uint64_t) piece_off(rank, i), post_len[i], 1);
        E2E_MPI(MPI_File_iwrite_at(fh, piece_off(rank, i), buf[i], (int) post_len[i], MPI_BYTE,
                                   &req[i]));
    }
    /* individual pointer: the call moves it at once by the amount asked */
    ind = malloc(100000);
    e2e_fill(ind, (uint64_t) base, 100000, 1);
    E2E_MPI(MPI_File_seek(fh, base, MPI_SEEK_SET));
    E2E_MPI(MPI_File_iwrite(fh, ind, 100000, MPI_BYTE, &req[NPOST]));
    /* a strided memory type: every other 1000-byte block of strided */
    strided = malloc(2 * 100 * 1000);
    for (int b = 0; b < 100; b++)
        e2e_fill(strided + 2 * b * 1000, (uint64_t) base + 100000 + b * 1000, 1000, 1);
    MPI_Type_vector(100, 1000, 2000, MPI_BYTE, &vec);
    MPI_Type_commit(&vec);
    E2E_MPI(MPI_File_iwrite(fh, strided, 1, vec, &req[NPOST + 1]));
    /* a blocking call while they are outstanding */
    e2e_fill(blocking, (uint64_t) blk, sizeof(blocking), 1);
    E2E_MPI(MPI_File_write_at(fh, blk, blocking, sizeof(blocking), MPI_BYTE, MPI_STATUS_IGNORE));
    E2E_MPI(MPI_Waitall(NPOST + 2, req, st));
    for (int i = 0; i < NPOST; i++) {
        check_count(&st[i], (MPI_Count) post_len[i], "iwrite_at", i);
        free(buf[i]);
    }
    check_count(&st[NPOST], 100000, "iwrite", 0);
    check_count(&st[NPOST + 1], 100000, "iwrite strided", 0);
    MPI_Offset pos = -1;
    E2E_MPI(MPI_File_get_position(fh, &pos));
    E2E_CHECK(pos == base + 200000, "individual pointer at %lld, want %lld", (long long) pos,
              (long long) (base + 200000));
    MPI_Type_free(&vec);
    free(ind);
    free(strided);
}

static void read_region(MPI_File fh, int rank, int last)
{
    MPI_Request req[NPOST + 1];
    MPI_Status st[NPOST + 1];
    unsigned char *buf[NPOST + 1];
    MPI_Offset base = piece_off(rank, NPOST) + 4096, end = base + 300000 + 1000;
    size_t tail = 5000;

    for (int i = 0; i < NPOST; i++) {
        buf[i] = malloc(post_len[i]);
        E2E_MPI(MPI_File_iread_at(fh, piece_off(rank, i), buf[i], (int) post_len[i], MPI_BYTE,
                                  &req[i]));
    }
    /* the data written through the pointer, both kinds, in one read */
    buf[NPOST] = malloc(300000 + 1000 + tail);
    E2E_MPI(MPI_File_iread_at(fh, base, buf[NPOST], (int) (last ? 300000 + 1000 + tail : 200000),
                              MPI_BYTE, &req[NPOST]));
    E2E_MPI(MPI_Waitall(NPOST + 1, req, st));
    for (int i = 0; i < NPOST; i++) {
        long bad = e2e_verify(buf[i], (uint64_t) piece_off(rank, i), post_len[i], 1);

        check_count(&st[i], (MPI_Count) post_len[i], "iread_at", i);
        E2E_CHECK(bad < 0, "rank %d piece %d differs at byte %ld", rank, i, bad);
        free(buf[i]);
    }
    /* the last region reaches past the end of the file by tail bytes: a
     * short count */
    check_count(&st[NPOST], last ? end - base : 200000, "iread_at", NPOST);
    long bad = e2e_verify(buf[NPOST], (uint64_t) base, 200000, 1);
    E2E_CHECK(bad < 0, "rank %d pointer data differs at byte %ld", rank, bad);
    free(buf[NPOST]);
}

static int mode_exact(const char *path)
{
    MPI_File fh = open_file(path);
    int peer = (e2e_rank + 1) % e2e_nprocs;

    write_region(fh, e2e_rank);
    E2E_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    E2E_MPI(MPI_File_sync(fh));
    read_region(fh, peer, peer == e2e_nprocs - 1);
    E2E_MPI(MPI_File_close(&fh));
    return e2e_finish("e2e_nonblock exact");
}

static double cpu_s(void)
{
    struct rusage ru;

    E2E_CHECK(getrusage(RUSAGE_SELF, &ru) == 0, "getrusage failed");
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
        ru.ru_stime.tv_usec / 1e6;
}

#define COLL_LATE 2.0           /* seconds rank 0 comes late */
#define COLL_LEN (1u << 20)     /* bytes per rank */

/* Waits for req, timing it; every rank but the late one checks that the
 * wait napped rather than polled. */
static void quiet_wait_check(MPI_Request * req, MPI_Count want, const char *what)
{
    double w0 = now_s(), c0 = cpu_s(), wall, cpu;
    MPI_Status st;

    E2E_MPI(MPI_Wait(req, &st));
    wall = now_s() - w0;
    cpu = cpu_s() - c0;
    check_count(&st, want, what, 0);
    if (e2e_rank == 0)
        return;
    printf("rank %d: %s: MPI_Wait %.2f s, CPU %.3f s\n", e2e_rank, what, wall, cpu);
    E2E_CHECK(wall > COLL_LATE / 2, "%s: MPI_Wait took only %.2f s: rank 0 was not late", what,
              wall);
    E2E_CHECK(cpu < wall / 10, "%s: %.2f s of CPU in a %.2f s MPI_Wait: the wait spins", what,
              cpu, wall);
}

/* Rank 0 comes late to a nonblocking collective: it posts COLL_LATE after
 * every other rank has posted (they call posted()), however long those
 * took to get there, so that their MPI_Wait lasts about COLL_LATE. */
static void late(void)
{
    struct timespec ts = { (time_t) COLL_LATE, 0 };

    if (e2e_rank != 0)
        return;
    for (int r = 1; r < e2e_nprocs; r++)
        E2E_MPI(MPI_Recv(NULL, 0, MPI_BYTE, r, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    nanosleep(&ts, NULL);
}

static void posted(void)
{
    if (e2e_rank != 0)
        E2E_MPI(MPI_Send(NULL, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD));
}

static int mode_collwait(const char *path)
{
    MPI_File fh = open_file(path);
    unsigned char *buf = malloc(COLL_LEN);
    int peer = (e2e_rank + 1) % e2e_nprocs;
    MPI_Datatype ftype;
    MPI_Request req;
    long bad;

    E2E_CHECK(buf != NULL, "out of memory");
    e2e_fill(buf, (uint64_t) e2e_rank * COLL_LEN, COLL_LEN, 9);
    late();
    E2E_MPI(MPI_File_iwrite_at_all(fh, (MPI_Offset) e2e_rank * COLL_LEN, buf, COLL_LEN,
                                   MPI_BYTE, &req));
    posted();
    quiet_wait_check(&req, COLL_LEN, "iwrite_at_all");
    E2E_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    E2E_MPI(MPI_File_sync(fh));
    /* the peer's region through a view of 4 KiB of every 8 KiB and back */
    MPI_Datatype chunk;

    MPI_Type_contiguous(4096, MPI_BYTE, &chunk);
    MPI_Type_create_resized(chunk, 0, 8192, &ftype);
    MPI_Type_free(&chunk);
    MPI_Type_commit(&ftype);
    E2E_MPI(MPI_File_set_view(fh, (MPI_Offset) peer * COLL_LEN, MPI_BYTE, ftype, "native",
                              MPI_INFO_NULL));
    memset(buf, 0, COLL_LEN);
    late();
    E2E_MPI(MPI_File_iread_all(fh, buf, COLL_LEN / 2, MPI_BYTE, &req));
    posted();
    quiet_wait_check(&req, COLL_LEN / 2, "iread_all");
    for (size_t k = 0; k < COLL_LEN / 2; k += 4096) {
        uint64_t off = (uint64_t) peer * COLL_LEN + k / 4096 * 8192;

        bad = e2e_verify(buf + k, off, 4096, 9);
        E2E_CHECK(bad < 0, "rank %d: iread_all differs at byte %ld of file offset %llu",
                  e2e_rank, bad, (unsigned long long) off);
        if (bad >= 0)
            break;
    }
    MPI_Type_free(&ftype);
    free(buf);
    E2E_MPI(MPI_File_close(&fh));
    return e2e_finish("e2e_nonblock collwait");
}

/* Whether every thread of process PID is stopped (state T in
 * /proc/PID/task/TID/stat); false while one runs or when /proc fails. */
static bool all_stopped(const char *pid)
{
    char dir[64], path[384], line[512];
    bool stopped = true;
    struct dirent *d;
    DIR *tasks;

    snprintf(dir, sizeof(dir), "/proc/%s/task", pid);
    tasks = opendir(dir);
    if (tasks == NULL)
        return false;
    while (stopped && (d = readdir(tasks)) != NULL) {
        const char *state;
        FILE *f;

        if (d->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s/stat", dir, d->d_name);
        f = fopen(path, "r");
        if (f == NULL)
            continue;           /* the thread ended */
        /* pid (comm) state ...: comm may hold spaces and parentheses */
        state = fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
        stopped = state != NULL && state[1] == ' ' && state[2] == 'T';
        fclose(f);
    }
    closedir(tasks);
    return stopped;
}

/* Sends sig to every process of PIDS.  SIGSTOP returns only once every
 * thread of them has stopped: kill() merely queues the signal, and a
 * server still running reads and answers what a client sends meanwhile,
 * so its request would never sit unread there (mode order once failed
 * that way: the first READ, posted as rank 0 sent SIGSTOP, was served). */
static void signal_all(const char *pids, int sig)
{
    const struct timespec nap = { 0, 1000 * 1000 };
    char *copy = strdup(pids), *save = NULL;
    double end = now_s() + 30;

    if (copy == NULL) {
        E2E_FAIL("out of memory");
        return;
    }
    for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save))
        if (kill((pid_t) atol(t), sig) < 0)
            E2E_FAIL("kill(%s, %d) failed", t, sig);
    free(copy);
    if (sig != SIGSTOP)
        return;
    copy = strdup(pids);
    save = NULL;
    if (copy == NULL) {
        E2E_FAIL("out of memory");
        return;
    }
    for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        while (!all_stopped(t) && now_s() < end)
            nanosleep(&nap, NULL);
        if (!all_stopped(t)) {
            E2E_FAIL("process %s did not stop within 30 s of SIGSTOP", t);
            break;
        }
    }
    free(copy);
}

static void read_back(MPI_File fh, MPI_Offset off, size_t len, unsigned seed)
{
    unsigned char *buf = malloc(len);
    long bad;

    E2E_MPI(MPI_File_read_at(fh, off, buf, (int) len, MPI_BYTE, MPI_STATUS_IGNORE));
    bad = e2e_verify(buf, (uint64_t) off, len, seed);
    E2E_CHECK(bad < 0, "read back at %lld differs at byte %ld", (long long) off, bad);
    free(buf);
}

/* Opens the connections to the I/O nodes (they open lazily, with a
 * synchronous greeting) before the servers are stopped. */
static void warm_up(MPI_File fh, unsigned char *buf, size_t len)
{
    E2E_MPI(MPI_File_write_at(fh, 0, buf, (int) len, MPI_BYTE, MPI_STATUS_IGNORE));
    E2E_MPI(MPI_File_read_at(fh, 0, buf, (int) len, MPI_BYTE, MPI_STATUS_IGNORE));
}

/* MPI_Wait on an iwrite the stopped servers hold back for 2 s (a shell
 * resumes them) must sleep, not spin: under a tenth of the wait in CPU.
 * The 2 s is the period over which the CPU time is measured, so it stays a
 * time; the clocks start before the shell does, so a slow start of the
 * shell only lengthens the period. */
static void quiet_wait_stopped(MPI_File fh, unsigned char *buf, size_t len, const char *pids)
{
    char cmd[600];
    MPI_Request req;
    MPI_Status st;
    double w0, c0, wall, cpu;

    e2e_fill(buf, 2 * len, len, 2);
    signal_all(pids, SIGSTOP);
    E2E_MPI(MPI_File_iwrite_at(fh, (MPI_Offset) (2 * len), buf, (int) len, MPI_BYTE, &req));
    w0 = now_s();
    c0 = cpu_s();
    snprintf(cmd, sizeof(cmd), "(sleep 2; kill -CONT %s) &", pids);
    E2E_CHECK(system(cmd) == 0, "cannot schedule the servers' resumption");
    E2E_MPI(MPI_Wait(&req, &st));
    wall = now_s() - w0;
    cpu = cpu_s() - c0;
    check_count(&st, (MPI_Count) len, "iwrite_at across stopped servers", 0);
    printf("overlap: MPI_Wait %.2f s across stopped servers, CPU %.3f s\n", wall, cpu);
    E2E_CHECK(wall > 1.0, "MPI_Wait took only %.2f s: the servers were not stopped", wall);
    E2E_CHECK(cpu < wall / 10, "%.2f s of CPU in a %.2f s MPI_Wait: the wait spins", cpu, wall);
    read_back(fh, (MPI_Offset) (2 * len), len, 2);
}

#define TEST_DEADLINE 60      /* seconds MPI_Test may take to complete 32 MiB */

static int mode_overlap(const char *path, const char *pids)
{
    const struct timespec poll_nap = { 0, 1000 * 1000 };
    MPI_File fh = open_file(path);
    size_t len = 32u << 20;
    unsigned char *buf = malloc(len);
    MPI_Request req;
    MPI_Status st;
    double t0, t_post, t_wait;
    int flag = 1, polls = 0;

    if (e2e_rank == 0) {
        warm_up(fh, buf, 1u << 20);
        e2e_fill(buf, 0, len, 2);
        signal_all(pids, SIGSTOP);
        t0 = now_s();
        E2E_MPI(MPI_File_iwrite_at(fh, 0, buf, (int) len, MPI_BYTE, &req));
        t_post = now_s() - t0;
        E2E_MPI(MPI_Test(&req, &flag, &st));
        E2E_CHECK(!flag, "the iwrite completed while the servers were stopped");
        signal_all(pids, SIGCONT);
        t0 = now_s();
        E2E_MPI(MPI_Wait(&req, &st));
        t_wait = now_s() - t0;
        check_count(&st, (MPI_Count) len, "iwrite_at", 0);
        printf("overlap: iwrite_at of %zu MiB returned in %.3f s, MPI_Wait took %.3f s\n",
               len >> 20, t_post, t_wait);
        E2E_CHECK(t_post < 1.0, "posting took %.3f s: the call waited for the data", t_post);
        E2E_CHECK(t_post < t_wait, "posting (%.3f s) took longer than the wait (%.3f s)",
                  t_post, t_wait);
        read_back(fh, 0, len, 2);

        /* MPI_Test alone drives a request to completion */
        e2e_fill(buf, len, len, 2);
        E2E_MPI(MPI_File_iwrite_at(fh, (MPI_Offset) len, buf, (int) len, MPI_BYTE, &req));
        for (t0 = now_s(), flag = 0; !flag && now_s() - t0 < TEST_DEADLINE; polls++) {
            E2E_MPI(MPI_Test(&req, &flag, &st));
            if (!flag)
                nanosleep(&poll_nap, NULL);
        }
        E2E_CHECK(flag, "MPI_Test did not complete the iwrite in %d s", TEST_DEADLINE);
        E2E_CHECK(polls > 1, "the iwrite of 32 MiB was complete on the first MPI_Test");
        check_count(&st, (MPI_Count) len, "iwrite_at by MPI_Test", 0);
        printf("overlap: MPI_Test completed the second iwrite after %d polls\n", polls);
        read_back(fh, (MPI_Offset) len, len, 2);
        quiet_wait_stopped(fh, buf, len, pids);
    }
    free(buf);
    E2E_MPI(MPI_File_close(&fh));
    return e2e_finish("e2e_nonblock overlap");
}

static void expect_timeout(int rc, const char *what, double took)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;

    if (rc != MPI_SUCCESS)
        MPI_Error_string(rc, msg, &len);
    printf("stopped: %s failed after %.1f s: %s\n", what, took, msg);
    E2E_CHECK(rc != MPI_SUCCESS, "%s succeeded with the servers stopped", what);
    E2E_CHECK(strstr(msg, "did not answer in time"), "%s: unclear error: %s", what, msg);
    E2E_CHECK(took < 30, "%s took %.1f s to fail", what, took);
}

static int mode_stopped(const char *path, const char *pids)
{
    MPI_File fh = open_file(path);
    size_t len = 4u << 20;
    unsigned char *buf = malloc(len), *rbuf = malloc(len);
    MPI_Request wreq, rreq;
    double t0;
    int rc;

    if (e2e_rank == 0) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        warm_up(fh, buf, 1u << 20);
        e2e_fill(buf, 0, len, 3);
        signal_all(pids, SIGSTOP);
        t0 = now_s();
        E2E_MPI(MPI_File_iwrite_at(fh, 0, buf, (int) len, MPI_BYTE, &wreq));
        E2E_MPI(MPI_File_iread_at(fh, 0, rbuf, (int) len, MPI_BYTE, &rreq));
        rc = MPI_Wait(&wreq, MPI_STATUS_IGNORE);
        expect_timeout(rc, "MPI_Wait on an iwrite", now_s() - t0);
        t0 = now_s();
        rc = MPI_Wait(&rreq, MPI_STATUS_IGNORE);
        expect_timeout(rc, "MPI_Wait on an iread", now_s() - t0);
        signal_all(pids, SIGCONT);
    }
    free(buf);
    free(rbuf);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_close(&fh);
    return e2e_finish("e2e_nonblock stopped");
}

/* One TCP socket of /proc/net/tcp or tcp6. */
struct tcp_sock {
    char local[64], remote[64];
    unsigned state;
    unsigned long txq, rxq, inode;
};

/* Appends the sockets of /proc/net/FILE to *socks (n of them, cap room). */
static int read_tcp(const char *file, struct tcp_sock **socks, size_t *n, size_t *cap)
{
    char path[64], line[512];
    FILE *f;

    snprintf(path, sizeof(path), "/proc/net/%s", file);
    f = fopen(path, "r");
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f) != NULL) {
        struct tcp_sock t;

        /* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
        if (sscanf(line, " %*s %63s %63s %x %lx:%lx %*s %*s %*s %*s %lu", t.local, t.remote,
                   &t.state, &t.txq, &t.rxq, &t.inode) != 6)
            continue;           /* the header */
        if (*n == *cap) {
            struct tcp_sock *more = realloc(*socks, (*cap * 2 + 64) * sizeof(**socks));

            if (more == NULL) {
                fclose(f);
                return -1;
            }
            *socks = more;
            *cap = *cap * 2 + 64;
        }
        (*socks)[(*n)++] = t;
    }
    fclose(f);
    return 0;
}

/* Whether process PID ("self" or a number) has socket INODE open. */
static bool has_socket(const char *pid, unsigned long inode)
{
    char dir[64], path[320], link[64], want[64];
    struct dirent *d;
    bool found = false;
    DIR *fds;

    snprintf(dir, sizeof(dir), "/proc/%s/fd", pid);
    snprintf(want, sizeof(want), "socket:[%lu]", inode);
    fds = opendir(dir);
    if (fds == NULL)
        return false;
    while (!found && (d = readdir(fds)) != NULL) {
        ssize_t len;

        snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
        len = readlink(path, link, sizeof(link) - 1);
        if (len > 0) {
            link[len] = '\0';
            found = strcmp(link, want) == 0;
        }
    }
    closedir(fds);
    return found;
}

static bool server_socket(const char *pids, unsigned long inode)
{
    char *copy = strdup(pids), *save = NULL;
    bool found = false;

    for (char *t = strtok_r(copy, " ", &save); t && !found; t = strtok_r(NULL, " ", &save))
        found = has_socket(t, inode);
    free(copy);
    return found;
}

/* The number of this process's connections to the server processes PIDS
 * whose server end holds bytes it has not read (and, into *out_bytes when
 * given, those bytes), or -1 while some of ours has bytes in flight (or
 * /proc cannot be read).  With the servers stopped and every earlier
 * request answered, that counts the servers our new requests have fully
 * reached. */
static int requests_at_servers(const char *pids, unsigned long *out_bytes)
{
    struct tcp_sock *socks = NULL;
    size_t n = 0, cap = 0;
    unsigned long bytes = 0;
    int count = 0;

    if (read_tcp("tcp", &socks, &n, &cap) < 0 || read_tcp("tcp6", &socks, &n, &cap) < 0) {
        free(socks);
        return -1;
    }
    for (size_t i = 0; i < n && count >= 0; i++) {
        if (socks[i].state != 1 || !has_socket("self", socks[i].inode))
            continue;           /* not one of our established connections */
        for (size_t k = 0; k < n; k++) {
            if (strcmp(socks[k].local, socks[i].remote) || strcmp(socks[k].remote, socks[i].local)
                || !server_socket(pids, socks[k].inode))
                continue;
            if (socks[i].txq > 0)
                count = -1;
            else if (socks[k].rxq > 0)
                count++;
            bytes += socks[k].rxq;
            break;
        }
    }
    free(socks);
    if (out_bytes)
        *out_bytes = bytes;
    return count;
}

/* Waits until this rank's new requests sit at `want` stopped servers; 0,
 * or -1 after deadline_s. */
static int wait_at_servers(const char *pids, int want, double deadline_s)
{
    const struct timespec nap = { 0, 10 * 1000 * 1000 };
    double end = now_s() + deadline_s;

    while (requests_at_servers(pids, NULL) < want) {
        if (now_s() > end)
            return -1;
        nanosleep(&nap, NULL);
    }
    return 0;
}

/* Waits until the stopped servers hold at least want bytes of this
 * process's requests unread; returns the bytes, or 0 after deadline_s. */
static unsigned long wait_bytes_at_servers(const char *pids, unsigned long want,
                                           double deadline_s)
{
    const struct timespec nap = { 0, 10 * 1000 * 1000 };
    double end = now_s() + deadline_s;
    unsigned long bytes = 0;

    while (requests_at_servers(pids, &bytes) < 0 || bytes < want) {
        if (now_s() > end)
            return 0;
        nanosleep(&nap, NULL);
    }
    return bytes;
}

#define QUEUE_READS 8

static int mode_queue(const char *path, const char *pids)
{
    const size_t len = 64u << 10, total = (size_t) QUEUE_READS << 20;
    MPI_File fh = open_file(path);
    unsigned char *buf = malloc(total);
    MPI_Request req[QUEUE_READS];
    MPI_Status st[QUEUE_READS];
    unsigned long one, all = 0;

    if (e2e_rank == 0) {
        e2e_fill(buf, 0, total, 6);
        E2E_MPI(MPI_File_write_at(fh, 0, buf, (int) total, MPI_BYTE, MPI_STATUS_IGNORE));
        E2E_MPI(MPI_File_sync(fh));
        memset(buf, 0, total);
        signal_all(pids, SIGSTOP);
        E2E_MPI(MPI_File_iread_at(fh, 0, buf, (int) len, MPI_BYTE, &req[0]));
        one = wait_bytes_at_servers(pids, 1, 30);
        E2E_CHECK(one > 0, "the first READ did not reach a stopped server in 30 s");
        for (int i = 1; i < QUEUE_READS; i++) {
            MPI_Offset off = (MPI_Offset) i << 20;

            E2E_MPI(MPI_File_iread_at(fh, off, buf + off, (int) len, MPI_BYTE, &req[i]));
        }
        if (one > 0)
            all = wait_bytes_at_servers(pids, QUEUE_READS * one, 10);
        printf("queue: one READ %lu bytes at the servers; %d posted: %lu\n", one, QUEUE_READS,
               all);
        E2E_CHECK(all > 0, "the reads posted behind an unanswered one did not reach the "
                  "servers in 10 s: a process's accesses go one at a time, or an open "
                  "file keeps fewer pieces in flight than the servers' window");
        signal_all(pids, SIGCONT);
        E2E_MPI(MPI_Waitall(QUEUE_READS, req, st));
        for (int i = 0; i < QUEUE_READS; i++) {
            uint64_t off = (uint64_t) i << 20;
            long bad = e2e_verify(buf + off, off, len, 6);

            check_count(&st[i], (MPI_Count) len, "queued iread_at", 0);
            E2E_CHECK(bad < 0, "read %d differs at byte %ld", i, bad);
        }
    }
    free(buf);
    E2E_MPI(MPI_File_close(&fh));
    return e2e_finish("e2e_nonblock queue");
}

static void snapshot(const char *stats, int n)
{
    char cmd[1024];

    MPI_Barrier(MPI_COMM_WORLD);
    if (e2e_rank == 0) {
        snprintf(cmd, sizeof(cmd), "ipvfs-ctl stats --json > '%s.%d.json'", stats, n);
        E2E_CHECK(system(cmd) == 0, "%s failed", cmd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static int mode_order(const char *path, const char *pids, const char *stats, const char *sched)
{
    const size_t len = 128u << 10;
    MPI_Offset off = (MPI_Offset) e2e_rank * (MPI_Offset) len;
    unsigned char *buf = malloc(len);
    MPI_File fh = MPI_FILE_NULL;
    MPI_Request req;
    MPI_Status st;
    MPI_Info info;
    long bad;

    MPI_Info_create(&info);
    MPI_Info_set(info, "ipvfs_io_schedule", sched);
    E2E_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    /* the writes also open every rank's connections to both nodes */
    e2e_fill(buf, (uint64_t) off, len, 4);
    E2E_MPI(MPI_File_write_at(fh, off, buf, (int) len, MPI_BYTE, MPI_STATUS_IGNORE));
    E2E_MPI(MPI_File_sync(fh));
    memset(buf, 0, len);
    snapshot(stats, 0);
    if (e2e_rank == 0)
        signal_all(pids, SIGSTOP);
    /* nobody posts before the servers have stopped: a READ that arrived
     * earlier could be read and answered, never to sit at its node */
    MPI_Barrier(MPI_COMM_WORLD);
    /* one rank at a time, highest first: the arrival order at the nodes;
     * each read's two stripe units are on two I/O nodes */
    for (int r = e2e_nprocs - 1; r >= 0; r--) {
        if (r == e2e_rank) {
            E2E_MPI(MPI_File_iread_at(fh, off, buf, (int) len, MPI_BYTE, &req));
            E2E_CHECK(wait_at_servers(pids, 2, 30) == 0,
                      "rank %d: its READs did not reach both stopped I/O nodes in 30 s",
                      e2e_rank);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (e2e_rank == 0)
        signal_all(pids, SIGCONT);
    E2E_MPI(MPI_Wait(&req, &st));
    check_count(&st, (MPI_Count) len, "iread_at", 0);
    bad = e2e_verify(buf, (uint64_t) off, len, 4);
    E2E_CHECK(bad < 0, "rank %d read differs at byte %ld", e2e_rank, bad);
    snapshot(stats, 1);
    free(buf);
    E2E_MPI(MPI_File_close(&fh));
    return e2e_finish("e2e_nonblock order");
}

int main(int argc, char **argv)
{
    e2e_init(&argc, &argv);
    if (argc >= 3 && strcmp(argv[1], "exact") == 0)
        return mode_exact(argv[2]);
    if (argc >= 4 && strcmp(argv[1], "overlap") == 0)
        return mode_overlap(argv[2], argv[3]);
    if (argc >= 4 && strcmp(argv[1], "queue") == 0)
        return mode_queue(argv[2], argv[3]);
    if (argc >= 6 && strcmp(argv[1], "order") == 0)
        return mode_order(argv[2], argv[3], argv[4], argv[5]);
    if (argc >= 3 && strcmp(argv[1], "collwait") == 0)
        return mode_collwait(argv[2]);
    if (argc >= 4 && strcmp(argv[1], "stopped") == 0)
        return mode_stopped(argv[2], argv[3]);
    if (e2e_rank == 0)
        fprintf(stderr, "usage: e2e_nonblock exact|overlap|collwait|stopped|queue|order FILE "
                "[\"PIDS\" [STATS SCHEDULE]]\n");
    MPI_Finalize();
    return 2;
}
