/* Shared file pointers and atomic mode on ipvfs:, end to end (4 ranks).
 *
 *   e2e_sharedfp ipvfs:/DIR
 *
 * shared    write_shared records from every rank: each record lands whole,
 *           exactly once, and the pointer ends at their total; read_shared
 *           hands every record to exactly one rank.
 * ordered   write_ordered of rank-dependent sizes is byte-exact in rank
 *           order; read_ordered reads it back; a second open of the same
 *           file has its own pointer (0); set_view resets it.
 * atomic    with set_atomicity(1), every rank writes the same region at
 *           once (contiguous, then through a strided view) while others
 *           read it: every read and the final content are one writer's.
 * dead      a process holding a lock of the region is killed once the
 *           atomic-mode writers' LOCK requests wait at the metadata rank:
 *           they complete, after the kill (the server released its lock
 *           when its connection closed).
 *
 * The "dead" holder is a forked child of rank 0 that uses libipvfs-client
 * directly (linked into this program; the preloaded ROMIO's copy is
 * hidden), with $IPVFS_MAP. */
#include "e2e_util.h"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "adio/client/ipvfs_client.h"

E2E_GLOBALS;

#define REC 1000    /* record bytes: not a divisor of the stripe unit */
#define NREC 25     /* records per rank */
#define REGION 300000 /* atomic-mode region: several stripe units on both I/O nodes */
#define ROUNDS 8

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static MPI_File open_fresh(const char *path)
{
    MPI_File fh = MPI_FILE_NULL;

    if (e2e_rank == 0)
        MPI_File_delete(path, MPI_INFO_NULL); /* may not exist */
    MPI_Barrier(MPI_COMM_WORLD);
    E2E_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                          MPI_INFO_NULL, &fh));
    return fh;
}

/* A record names its writer and sequence number, then carries a pattern
 * seeded by both. */
static void make_record(unsigned char *rec, uint32_t rank, uint32_t seq)
{
    memcpy(rec, &rank, 4);
    memcpy(rec + 4, &seq, 4);
    e2e_fill(rec + 8, 0, REC - 8, rank * 1000 + seq + 1);
}

/* Returns the record's id (rank * NREC + seq), or -1 when it is damaged. */
static int check_record(const unsigned char *rec)
{
    uint32_t rank, seq;

    memcpy(&rank, rec, 4);
    memcpy(&seq, rec + 4, 4);
    if (rank >= (uint32_t)e2e_nprocs || seq >= NREC ||
        e2e_verify(rec + 8, 0, REC - 8, rank * 1000 + seq + 1) >= 0)
        return -1;
    return (int)(rank * NREC + seq);
}

static void test_shared(const char *path)
{
    int total = e2e_nprocs * NREC, mine = 0, all = 0;
    unsigned char rec[REC], *file = NULL;
    MPI_Offset pos = -1;
    MPI_File fh = open_fresh(path);
    MPI_Status st;

    for (uint32_t i = 0; i < NREC; i++) {
        make_record(rec, (uint32_t)e2e_rank, i);
        E2E_MPI(MPI_File_write_shared(fh, rec, REC, MPI_BYTE, &st));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    E2E_MPI(MPI_File_get_position_shared(fh, &pos));
    E2E_CHECK(pos == (MPI_Offset)total * REC, "shared pointer at %lld, not %lld",
              (long long)pos, (long long)total * REC);
    /* seek_shared below may move the pointer before a slower rank looked */
    MPI_Barrier(MPI_COMM_WORLD);
    if (e2e_rank == 0) {
        char *seen = calloc((size_t)total, 1);

        file = malloc((size_t)total * REC);
        E2E_MPI(MPI_File_read_at(fh, 0, file, total * REC, MPI_BYTE, &st));
        for (int r = 0; r < total; r++) {
            int id = check_record(file + (size_t)r * REC);

            E2E_CHECK(id >= 0, "write_shared: record %d is damaged", r);
            E2E_CHECK(id < 0 || !seen[id], "write_shared: record id %d twice", id);
            if (id >= 0)
                seen[id] = 1;
        }
        free(seen);
        free(file);
    }
    /* read_shared: every record goes to exactly one reader */
    E2E_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    for (int i = 0; i < NREC; i++) {
        E2E_MPI(MPI_File_read_shared(fh, rec, REC, MPI_BYTE, &st));
        E2E_CHECK(check_record(rec) >= 0, "read_shared: record %d of this rank damaged", i);
        mine += check_record(rec) + 1;
    }
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    E2E_CHECK(all == total * (total + 1) / 2, "read_shared: record ids sum to %d, not %d", all,
              total * (total + 1) / 2);
    E2E_MPI(MPI_File_close(&fh));
}

static void test_ordered(const char *path)
{
    int len = (e2e_rank + 1) * 3000 + 17, off = 0, total = 0;
    unsigned char *buf = malloc((size_t)len), *file;
    MPI_File fh = open_fresh(path), other = MPI_FILE_NULL;
    MPI_Offset pos = -1;
    MPI_Status st;

    MPI_Exscan(&len, &off, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (e2e_rank == 0)
        off = 0;
    MPI_Allreduce(&len, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    e2e_fill(buf, (uint64_t)off, (size_t)len, 7);
    E2E_MPI(MPI_File_write_ordered(fh, buf, len, MPI_BYTE, &st));
    E2E_MPI(MPI_File_get_position_shared(fh, &pos));
    E2E_CHECK(pos == total, "after write_ordered the pointer is %lld, not %d", (long long)pos,
              total);
    /* the other ranks' data may still be on its way; seek_shared below may
     * move the pointer before a slower rank looked */
    MPI_Barrier(MPI_COMM_WORLD);
    if (e2e_rank == 0) {
        long bad;

        file = malloc((size_t)total);
        E2E_MPI(MPI_File_read_at(fh, 0, file, total, MPI_BYTE, &st));
        bad = e2e_verify(file, 0, (size_t)total, 7);
        E2E_CHECK(bad < 0, "write_ordered: byte %ld differs", bad);
        free(file);
    }
    E2E_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    memset(buf, 0, (size_t)len);
    E2E_MPI(MPI_File_read_ordered(fh, buf, len, MPI_BYTE, &st));
    E2E_CHECK(e2e_verify(buf, (uint64_t)off, (size_t)len, 7) < 0, "read_ordered: data differs");

    /* another open instance has its own pointer */
    E2E_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &other));
    E2E_MPI(MPI_File_get_position_shared(other, &pos));
    E2E_CHECK(pos == 0, "a second open starts its shared pointer at %lld", (long long)pos);
    E2E_MPI(MPI_File_close(&other));
    E2E_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    E2E_MPI(MPI_File_get_position_shared(fh, &pos));
    E2E_CHECK(pos == 0, "set_view left the shared pointer at %lld", (long long)pos);
    E2E_MPI(MPI_File_close(&fh));
    free(buf);
}

/* Index of the first byte of buf that is not buf[0], or -1. */
static long first_mixed(const unsigned char *buf, size_t len)
{
    for (size_t i = 1; i < len; i++)
        if (buf[i] != buf[0])
            return (long)i;
    return -1;
}

/* Every rank writes region [0, REGION) of fh at once; odd ranks read it
 * back meanwhile.  Reads and the result must each be one writer's. */
static void atomic_rounds(MPI_File fh, const char *what)
{
    unsigned char *buf = malloc(REGION), *got = malloc(REGION);
    MPI_Status st;
    long bad;

    for (int round = 0; round < ROUNDS; round++) {
        memset(buf, (round * e2e_nprocs + e2e_rank + 1) & 0xff, REGION);
        MPI_Barrier(MPI_COMM_WORLD);
        E2E_MPI(MPI_File_write_at(fh, 0, buf, REGION, MPI_BYTE, &st));
        if (e2e_rank % 2) {
            E2E_MPI(MPI_File_read_at(fh, 0, got, REGION, MPI_BYTE, &st));
            bad = first_mixed(got, REGION);
            E2E_CHECK(bad < 0, "%s round %d: a read saw writers mixed at byte %ld", what, round,
                      bad);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (e2e_rank == 0) {
            E2E_MPI(MPI_File_read_at(fh, 0, got, REGION, MPI_BYTE, &st));
            bad = first_mixed(got, REGION);
            E2E_CHECK(bad < 0, "%s round %d: writers mixed at byte %ld", what, round, bad);
        }
    }
    free(got);
    free(buf);
}

static void test_atomic(const char *path)
{
    MPI_Datatype blocks;
    MPI_File fh = open_fresh(path);
    int flag = 0;

    E2E_MPI(MPI_File_set_atomicity(fh, 1));
    E2E_MPI(MPI_File_get_atomicity(fh, &flag));
    E2E_CHECK(flag == 1, "atomicity reads back as %d", flag);
    atomic_rounds(fh, "contiguous");
    /* through a strided view: 1000-byte blocks every 3000 bytes */
    MPI_Type_vector(REGION / 1000, 1000, 3000, MPI_BYTE, &blocks);
    MPI_Type_commit(&blocks);
    E2E_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, blocks, "native", MPI_INFO_NULL));
    atomic_rounds(fh, "strided");
    MPI_Type_free(&blocks);
    E2E_MPI(MPI_File_close(&fh));
}

/* The child: takes an exclusive lock of the region, says so, then waits to
 * be killed.  Never returns. */
static void hold_lock_until_killed(const char *path, int ready_fd)
{
    struct ipvfs_client *client;
    struct ipvfs_file *file;
    struct ipvfs_open_args args = { 0 };
    struct ipvfs_error err;

    if (ipvfs_client_get(ipvfs_client_map_path(NULL), 9999, &client, &err) < 0 ||
        ipvfs_file_open(client, path + strlen("ipvfs:"), &args, &file, &err) < 0 ||
        ipvfs_lock(file, 0, REGION, 1, &err) < 0) {
        fprintf(stderr, "lock holder: %s\n", err.msg);
        _exit(1);
    }
    if (write(ready_fd, "L", 1) != 1)
        _exit(1);
    for (;;)
        pause();
}

/* The requests that each rank (client id) has made of the metadata rank,
 * into n[0..e2e_nprocs-1], from `ipvfs-ctl stats --json` (one line per
 * rank; 0 for a client it does not list).  -1 when the tool fails. */
static int meta_requests(long long *n)
{
    static char line[1 << 16];
    FILE *p = popen("ipvfs-ctl stats --json", "r");

    if (p == NULL)
        return -1;
    for (int r = 0; r < e2e_nprocs; r++)
        n[r] = 0;
    while (fgets(line, sizeof(line), p) != NULL) {
        if (strstr(line, "\"role\": \"metadata\"") == NULL)
            continue;
        for (int r = 0; r < e2e_nprocs; r++) {
            char needle[64], *at;

            snprintf(needle, sizeof(needle), "{\"client_id\": %d, \"requests\": ", r);
            at = strstr(line, needle);
            if (at != NULL)
                n[r] = strtoll(at + strlen(needle), NULL, 10);
        }
    }
    return pclose(p) == 0 ? 0 : -1;
}

/* Rank 0: waits until every other rank has made a request of the metadata
 * rank since base[] (their LOCK: the holder's lock makes it wait there).
 * 0 when they all have, -1 at the deadline. */
static int wait_for_lock_requests(const long long *base, double deadline_s)
{
    const struct timespec nap = { 0, 50 * 1000 * 1000 };
    long long *n = calloc((size_t)e2e_nprocs, sizeof(*n));
    double end = now() + deadline_s;
    int rc = -1;

    while (n != NULL && now() <= end) {
        int waiting = 0;

        if (meta_requests(n) == 0)
            for (int r = 1; r < e2e_nprocs; r++)
                waiting += n[r] > base[r];
        if (waiting == e2e_nprocs - 1) {
            rc = 0;
            break;
        }
        nanosleep(&nap, NULL);
    }
    free(n);
    return rc;
}

/* The locks of a killed holder are released: its LOCK granted, a child of
 * rank 0 holds the region; the other ranks' atomic writes must wait at the
 * metadata rank (their LOCK requests are there, seen in its counters)
 * until rank 0 kills the holder, and then complete.  The order is checked
 * on CLOCK_MONOTONIC, which all ranks share on this one machine. */
static void test_dead_holder(const char *path)
{
    unsigned char *buf = malloc(REGION);
    MPI_File fh = open_fresh(path);
    long long *base = calloc((size_t)e2e_nprocs, sizeof(*base));
    double t_kill = 0, t_done = 0;
    MPI_Offset pos;
    pid_t child = -1;
    MPI_Status st;
    int pipefd[2];
    char c;

    E2E_CHECK(buf != NULL && base != NULL, "out of memory");
    E2E_MPI(MPI_File_set_atomicity(fh, 1));
    /* a request of every rank to the metadata rank opens its connection
     * there, so that its next request is the LOCK of its write */
    E2E_MPI(MPI_File_get_position_shared(fh, &pos));
    MPI_Barrier(MPI_COMM_WORLD);
    if (e2e_rank == 0) {
        if (pipe(pipefd) < 0 || (child = fork()) < 0) {
            E2E_FAIL("cannot start the lock holder");
        } else if (child == 0) {
            close(pipefd[0]);
            hold_lock_until_killed(path, pipefd[1]);
        } else {
            close(pipefd[1]);
            E2E_CHECK(read(pipefd[0], &c, 1) == 1, "the lock holder did not get its lock");
            close(pipefd[0]);
        }
        E2E_CHECK(meta_requests(base) == 0, "ipvfs-ctl stats --json failed");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (e2e_rank == 0) {
        E2E_CHECK(wait_for_lock_requests(base, 60) == 0,
                  "the writers' LOCK requests did not reach the metadata rank in 60 s");
        t_kill = now();
        if (child > 0) {
            kill(child, SIGKILL);
            waitpid(child, NULL, 0);
        }
    } else {
        double t0 = now();

        memset(buf, e2e_rank, REGION);
        E2E_MPI(MPI_File_write_at(fh, 0, buf, REGION, MPI_BYTE, &st));
        t_done = now();
        printf("rank %d: atomic write waited %.2f s for the killed holder\n", e2e_rank,
               t_done - t0);
    }
    MPI_Bcast(&t_kill, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (e2e_rank != 0)
        E2E_CHECK(t_done > t_kill, "the write finished %.3f s before the lock holder was killed",
                  t_kill - t_done);
    MPI_Barrier(MPI_COMM_WORLD);
    if (e2e_rank == 0) {
        E2E_MPI(MPI_File_read_at(fh, 0, buf, REGION, MPI_BYTE, &st));
        E2E_CHECK(first_mixed(buf, REGION) < 0 && buf[0] >= 1 && buf[0] < e2e_nprocs,
                  "after the holder died the region is not one writer's");
    }
    E2E_MPI(MPI_File_close(&fh));
    free(base);
    free(buf);
}

int main(int argc, char **argv)
{
    char path[512];

    e2e_init(&argc, &argv);
    if (argc != 2 || strncmp(argv[1], "ipvfs:/", 7) != 0) {
        if (e2e_rank == 0)
            fprintf(stderr, "usage: e2e_sharedfp ipvfs:/DIR\n");
        MPI_Finalize();
        return 2;
    }
    snprintf(path, sizeof(path), "%s/shared", argv[1]);
    test_shared(path);
    snprintf(path, sizeof(path), "%s/ordered", argv[1]);
    test_ordered(path);
    snprintf(path, sizeof(path), "%s/atomic", argv[1]);
    test_atomic(path);
    snprintf(path, sizeof(path), "%s/dead", argv[1]);
    test_dead_holder(path);
    return e2e_finish("e2e_sharedfp");
}
