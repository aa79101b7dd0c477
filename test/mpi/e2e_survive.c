/* MPI programs that go on while a server's serving process is killed and
 * restarted by its supervisor (the test scripts do the killing).
 *
 *   e2e_survive loop PATH ITERS BLOCK
 *       IOR-like: iteration i, each rank writes BLOCK bytes (seed i) at its
 *       own place of region i, MPI_File_sync, reads them back and checks
 *       (odd iterations in four MPI_File_iread_at outstanding at once).
 *       Every write and read must succeed (the client reconnects and
 *       resends); a sync may fail only with the write verifier's error
 *       ("restarted; writes acknowledged since the last sync may be
 *       lost"), which is printed (then region i counts as unsynced).  At
 *       the end every synced region is read again and checked.  Rank 0
 *       prints "iteration N" after each iteration and "synced: LIST".
 *   e2e_survive verify PATH BLOCK LIST
 *       checks the regions of LIST (a loop's "synced:" line) again.
 *   e2e_survive opens DIR MARKER
 *       every rank creates, writes, syncs (writing again after a sync that
 *       reports lost writes), closes, opens and checks files
 *       DIR/r<rank>.<i> (MPI_COMM_SELF) one after the other, rank 0
 *       printing "opened i", until 20 files after MARKER exists (the test
 *       makes it once the metadata rank restarted).  Every call must
 *       succeed.
 *   e2e_survive lost PATH MARKER TEXT
 *       writes 1 MiB per rank to PATH and PATH.closed without a sync,
 *       prints "written", waits for MARKER (the test kills an I/O node and
 *       waits for its restart), then MPI_File_close of PATH.closed and
 *       MPI_File_sync of PATH must fail on every rank with an error
 *       containing TEXT.  A second write and sync must then succeed and read back.
 *   e2e_survive stale PATH MARKER
 *       opens PATH, writes through the shared file pointer and, in atomic
 *       mode (byte-range locks), at its own place; prints "opened"; waits
 *       for MARKER (the test restarts the metadata rank meanwhile); then a
 *       shared-pointer write and an atomic write must fail on every rank
 *       (never a silent loss) saying that the metadata rank restarted;
 *       after a reopen both work.
 */
#include "e2e_util.h"

#include <time.h>
#include <unistd.h>

E2E_GLOBALS;

/* How long a program waits for the test's marker file. */
#define MARKER_WAIT_S 90

#define LOST_TEXT "writes acknowledged since the last sync may be lost"

static void wait_marker(const char *marker)
{
    struct timespec pause = { 0, 20 * 1000 * 1000 };
    int found = 0;

    if (e2e_rank == 0) {
        for (int i = 0; i < MARKER_WAIT_S * 50 && !found; i++) {
            found = access(marker, F_OK) == 0;
            if (!found)
                nanosleep(&pause, NULL);
        }
    }
    MPI_Bcast(&found, 1, MPI_INT, 0, MPI_COMM_WORLD);
    E2E_CHECK(found, "no marker %s within %d s", marker, MARKER_WAIT_S);
}

/* The error string of rc. */
static const char *err_string(int rc, char *s)
{
    int len = 0;

    MPI_Error_string(rc, s, &len);
    return s;
}

static MPI_Offset region_off(int iter, MPI_Offset block)
{
    return ((MPI_Offset)iter * e2e_nprocs + e2e_rank) * block;
}

#define READ_PIECES 4

/* Reads len bytes at off into buf: odd iterations as READ_PIECES
 * MPI_File_iread_at outstanding at once (a process's accesses side by
 * side on the connections, across a crash too), even ones as one
 * MPI_File_read_at.  Returns the bytes read. */
static int read_region(MPI_File fh, int iter, MPI_Offset off, unsigned char *buf, MPI_Offset len)
{
    MPI_Request req[READ_PIECES];
    MPI_Status st[READ_PIECES];
    MPI_Offset piece = len / READ_PIECES;
    int count = 0, total = 0;

    if (iter % 2 == 0) {
        E2E_MPI(MPI_File_read_at(fh, off, buf, (int)len, MPI_BYTE, &st[0]));
        MPI_Get_count(&st[0], MPI_BYTE, &count);
        return count;
    }
    for (int k = 0; k < READ_PIECES; k++) {
        MPI_Offset at = k * piece, n = k == READ_PIECES - 1 ? len - at : piece;

        E2E_MPI(MPI_File_iread_at(fh, off + at, buf + at, (int)n, MPI_BYTE, &req[k]));
    }
    E2E_MPI(MPI_Waitall(READ_PIECES, req, st));
    for (int k = 0; k < READ_PIECES; k++) {
        MPI_Get_count(&st[k], MPI_BYTE, &count);
        total += count;
    }
    return total;
}

/* Reads this rank's part of region iter and checks it. */
static void check_region(MPI_File fh, int iter, MPI_Offset block, unsigned char *buf)
{
    MPI_Offset off = region_off(iter, block);
    long bad;
    int count;

    memset(buf, 0, (size_t)block);
    count = read_region(fh, iter, off, buf, block);
    E2E_CHECK(count == (int)block, "region %d: read %d of %lld bytes", iter, count,
              (long long)block);
    bad = e2e_verify(buf, (uint64_t)off, (size_t)block, (unsigned)iter + 1);
    E2E_CHECK(bad < 0, "region %d: byte %ld differs", iter, bad);
}

/* One iteration; returns 1 when its sync succeeded. */
static int loop_iteration(MPI_File fh, int iter, MPI_Offset block, unsigned char *buf)
{
    MPI_Offset off = region_off(iter, block);
    char s[MPI_MAX_ERROR_STRING];
    MPI_Status st;
    int rc;

    e2e_fill(buf, (uint64_t)off, (size_t)block, (unsigned)iter + 1);
    E2E_MPI(MPI_File_write_at_all(fh, off, buf, (int)block, MPI_BYTE, &st));
    rc = MPI_File_sync(fh);
    if (rc != MPI_SUCCESS) {
        err_string(rc, s);
        if (e2e_rank == 0)
            printf("iteration %d: sync failed: %s\n", iter, s);
        E2E_CHECK(strstr(s, LOST_TEXT) != NULL, "iteration %d: sync failed otherwise: %s",
                  iter, s);
    }
    /* after a lost sync, region iter holds whatever survived */
    if (rc == MPI_SUCCESS)
        check_region(fh, iter, block, buf);
    return rc == MPI_SUCCESS;
}

static void do_loop(const char *path, int iters, MPI_Offset block)
{
    unsigned char *buf = malloc((size_t)block);
    char *synced = calloc((size_t)iters, 1);
    MPI_File fh;

    E2E_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                          MPI_INFO_NULL, &fh));
    for (int i = 0; i < iters && e2e_failures == 0; i++) {
        synced[i] = (char)loop_iteration(fh, i, block, buf);
        if (e2e_rank == 0) {
            printf("iteration %d\n", i);
            fflush(stdout);
        }
    }
    for (int i = 0; i < iters && e2e_failures == 0; i++)
        if (synced[i])
            check_region(fh, i, block, buf);
    if (e2e_rank == 0) {
        printf("synced:");
        for (int i = 0; i < iters; i++)
            if (synced[i])
                printf(" %d", i);
        printf("\n");
    }
    E2E_MPI(MPI_File_close(&fh));
    free(synced);
    free(buf);
}

static void do_verify(const char *path, MPI_Offset block, char **list, int n)
{
    unsigned char *buf = malloc((size_t)block);
    MPI_File fh;

    E2E_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    for (int i = 0; i < n && e2e_failures == 0; i++)
        check_region(fh, atoi(list[i]), block, buf);
    E2E_MPI(MPI_File_close(&fh));
    free(buf);
}

/* One file of the opens loop: create, write, close, open, check, close. */
static void open_one(const char *dir, int i)
{
    unsigned char buf[4096], back[4096];
    char path[512];
    long bad;
    int count = 0;
    MPI_Status st;
    MPI_File fh;

    snprintf(path, sizeof(path), "%s/r%d.%d", dir, e2e_rank, i);
    e2e_fill(buf, 0, sizeof(buf), (unsigned)i);
    E2E_MPI(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR,
                          MPI_INFO_NULL, &fh));
    if (e2e_failures)
        return;
    /* rank 0 is an I/O node too: a sync after its crash may report lost
     * writes; the application writes again then */
    for (int tries = 0; tries < 3; tries++) {
        char s[MPI_MAX_ERROR_STRING];
        int rc;

        E2E_MPI(MPI_File_write_at(fh, 0, buf, (int)sizeof(buf), MPI_BYTE, &st));
        if ((rc = MPI_File_sync(fh)) == MPI_SUCCESS)
            break;
        err_string(rc, s);
        printf("rank %d: %s: sync failed: %s\n", e2e_rank, path, s);
        E2E_CHECK(strstr(s, LOST_TEXT) != NULL && tries < 2, "%s: sync failed", path);
    }
    E2E_MPI(MPI_File_close(&fh));
    E2E_MPI(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    if (e2e_failures)
        return;
    memset(back, 0xEE, sizeof(back));
    E2E_MPI(MPI_File_read_at(fh, 0, back, (int)sizeof(back), MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &count);
    bad = e2e_verify(back, 0, sizeof(back), (unsigned)i);
    E2E_CHECK(count == (int)sizeof(back) && bad < 0,
              "%s reads back %d bytes, byte %ld differs (0x%02x)", path, count, bad,
              bad >= 0 ? back[bad] : 0);
    E2E_MPI(MPI_File_close(&fh));
}

static void do_opens(const char *dir, const char *marker)
{
    int after = -1, stop = 0, total = 0;

    for (int i = 0; !stop; i++) {
        open_one(dir, i);
        E2E_CHECK(i < 100000, "no marker %s", marker);
        if (e2e_rank == 0) {
            if (after < 0 && access(marker, F_OK) == 0)
                after = i;
            stop = after >= 0 && i - after >= 20;
            printf("opened %d\n", i);
            fflush(stdout);
        }
        /* every rank stops together, also at the first failure anywhere */
        stop = stop || e2e_failures;
        MPI_Allreduce(MPI_IN_PLACE, &stop, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
        total = i + 1;
    }
    if (e2e_rank == 0)
        printf("files per rank: %d\n", total);
}

static void do_lost(const char *path, const char *marker, const char *text)
{
    const MPI_Offset block = 1 << 20;
    unsigned char *buf = malloc((size_t)block);
    char s[MPI_MAX_ERROR_STRING], path2[512];
    MPI_Status st;
    MPI_File fh, fh2;
    int rc;

    snprintf(path2, sizeof(path2), "%s.closed", path);
    E2E_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                          MPI_INFO_NULL, &fh));
    E2E_MPI(MPI_File_open(MPI_COMM_WORLD, path2, MPI_MODE_CREATE | MPI_MODE_RDWR,
                          MPI_INFO_NULL, &fh2));
    e2e_fill(buf, (uint64_t)region_off(0, block), (size_t)block, 1);
    E2E_MPI(MPI_File_write_at(fh, region_off(0, block), buf, (int)block, MPI_BYTE, &st));
    E2E_MPI(MPI_File_write_at(fh2, region_off(0, block), buf, (int)block, MPI_BYTE, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    if (e2e_rank == 0) {
        printf("written\n");
        fflush(stdout);
    }
    wait_marker(marker);
    /* a close without a sync: the verifier is checked all the same */
    rc = MPI_File_close(&fh2);
    if (rc == MPI_SUCCESS) {
        E2E_FAIL("the close after the restart succeeded");
    } else {
        err_string(rc, s);
        printf("rank %d: close failed: %s\n", e2e_rank, s);
        E2E_CHECK(strstr(s, text) != NULL, "the close's error lacks \"%s\"", text);
    }
    rc = MPI_File_sync(fh);
    if (rc == MPI_SUCCESS) {
        E2E_FAIL("the sync after the restart succeeded");
    } else {
        err_string(rc, s);
        printf("rank %d: sync failed: %s\n", e2e_rank, s);
        E2E_CHECK(strstr(s, text) != NULL, "the sync's error lacks \"%s\"", text);
    }
    /* the state starts afresh: new writes and a sync work */
    e2e_fill(buf, (uint64_t)region_off(1, block), (size_t)block, 2);
    E2E_MPI(MPI_File_write_at(fh, region_off(1, block), buf, (int)block, MPI_BYTE, &st));
    E2E_MPI(MPI_File_sync(fh));
    check_region(fh, 1, block, buf);
    E2E_MPI(MPI_File_close(&fh));
    free(buf);
}

#define STALE_TEXT "restarted since this file was opened"

/* One shared-pointer write and one atomic write of 4 KiB; the MPI status
 * of each (0 when both succeeded). */
static int stale_writes(MPI_File fh, int *out_shared_rc, int *out_atomic_rc)
{
    char buf[4096];
    MPI_Status st;

    memset(buf, 'a' + e2e_rank, sizeof(buf));
    *out_shared_rc = MPI_File_write_shared(fh, buf, (int)sizeof(buf), MPI_BYTE, &st);
    *out_atomic_rc = MPI_File_write_at(fh, (MPI_Offset)(1 << 20) + e2e_rank * 4096, buf,
                                       (int)sizeof(buf), MPI_BYTE, &st);
    return *out_shared_rc != MPI_SUCCESS || *out_atomic_rc != MPI_SUCCESS;
}

/* The call must have failed, its message holding text (NULL: any). */
static void expect_stale(int rc, const char *what, const char *text)
{
    char s[MPI_MAX_ERROR_STRING];

    if (rc == MPI_SUCCESS) {
        E2E_FAIL("the %s after the metadata rank's restart succeeded", what);
        return;
    }
    err_string(rc, s);
    printf("rank %d: %s failed: %s\n", e2e_rank, what, s);
    E2E_CHECK(!text || strstr(s, text) != NULL, "the %s's error lacks \"%s\"", what, text);
}

static void do_stale(const char *path, const char *marker)
{
    int shared_rc, atomic_rc;
    MPI_File fh;

    E2E_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                          MPI_INFO_NULL, &fh));
    E2E_MPI(MPI_File_set_atomicity(fh, 1));
    E2E_CHECK(stale_writes(fh, &shared_rc, &atomic_rc) == 0, "writes before the restart");
    MPI_Barrier(MPI_COMM_WORLD);
    if (e2e_rank == 0) {
        printf("opened\n");
        fflush(stdout);
    }
    wait_marker(marker);
    stale_writes(fh, &shared_rc, &atomic_rc);
    expect_stale(shared_rc, "shared-pointer write", STALE_TEXT);
    expect_stale(atomic_rc, "atomic write", STALE_TEXT);
    MPI_File_close(&fh);
    /* a new open is of the new incarnation: both work again */
    E2E_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    E2E_MPI(MPI_File_set_atomicity(fh, 1));
    E2E_CHECK(stale_writes(fh, &shared_rc, &atomic_rc) == 0, "writes after the reopen");
    E2E_MPI(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";

    e2e_init(&argc, &argv);
    if (strcmp(mode, "loop") == 0 && argc == 5) {
        do_loop(argv[2], atoi(argv[3]), (MPI_Offset)atol(argv[4]));
    } else if (strcmp(mode, "verify") == 0 && argc >= 4) {
        do_verify(argv[2], (MPI_Offset)atol(argv[3]), argv + 4, argc - 4);
    } else if (strcmp(mode, "opens") == 0 && argc == 4) {
        do_opens(argv[2], argv[3]);
    } else if (strcmp(mode, "lost") == 0 && argc == 5) {
        do_lost(argv[2], argv[3], argv[4]);
    } else if (strcmp(mode, "stale") == 0 && argc == 4) {
        do_stale(argv[2], argv[3]);
    } else {
        if (e2e_rank == 0)
            fprintf(stderr, "usage: e2e_survive loop PATH ITERS BLOCK | verify PATH BLOCK "
                    "LIST... | opens DIR MARKER | lost PATH MARKER TEXT | stale PATH MARKER\n");
        MPI_Finalize();
        return 2;
    }
    return e2e_finish(mode);
}
