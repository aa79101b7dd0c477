/* Small partial-block writes (issue 27: the I/O nodes' L1 absorbs them
 * without reading the blocks first) across an I/O node crash, and
 * overlapping ones from two clients.  Piece i of rank r lies at
 * (i * ranks + r) * STRIDE and is PIECE bytes: less than a 64 KiB block
 * and sector-aligned, with a gap after it, so no block is ever written
 * whole (the L1's write-behind leaves such blocks dirty until a sync).
 * The file is first written in 1 MiB calls (streams, which the L1 does not
 * keep), so the pieces land in blocks it does not hold.
 *
 *   e2e_small lost PATH MARKER TEXT
 *       the 1 MiB writes and a sync, then the pieces (one MPI_File_write_at
 *       each, no sync); prints "written"; waits for MARKER (the test kills
 *       an I/O node and waits for its restart); then MPI_File_sync must
 *       fail on every rank with an error containing TEXT (the verifier).
 *       The pieces written again and synced then read back exact.
 *   e2e_small synced PATH
 *       the 1 MiB writes, the pieces, MPI_File_sync (must succeed); prints
 *       "synced".
 *   e2e_small check PATH
 *       reads the whole file back: every byte as `synced` left it.
 *   e2e_small overlap PATH
 *       ranks 0 and 1 write overlapping ranges inside blocks in turn
 *       (rank 0 first, then rank 1 over part of it and past it), each a
 *       separate client; every rank reads back rank 1's bytes where they
 *       overlap and rank 0's elsewhere, before and after a sync. */
#include "e2e_util.h"

#include <time.h>
#include <unistd.h>

E2E_GLOBALS;

#define PIECE (24 * 1024)
#define STRIDE (32 * 1024)
#define PIECES 48
#define MARKER_WAIT_S 90

static MPI_Offset file_bytes(void)
{
    return (MPI_Offset)PIECES * e2e_nprocs * STRIDE;
}

static MPI_Offset piece_off(int i, int r)
{
    return ((MPI_Offset)i * e2e_nprocs + r) * STRIDE;
}

/* Seed of byte off after the base writes (seed 1) and pieces of seed s. */
static unsigned seed_at(MPI_Offset off, unsigned s)
{
    return off % STRIDE < PIECE ? s : 1;
}

static void wait_marker(const char *marker)
{
    struct timespec pause = { 0, 20 * 1000 * 1000 };
    int found = 0;

    if (e2e_rank == 0)
        for (int i = 0; i < MARKER_WAIT_S * 50 && !found; i++) {
            found = access(marker, F_OK) == 0;
            if (!found)
                nanosleep(&pause, NULL);
        }
    MPI_Bcast(&found, 1, MPI_INT, 0, MPI_COMM_WORLD);
    E2E_CHECK(found, "no marker %s within %d s", marker, MARKER_WAIT_S);
}

/* Each rank writes its share of the file in 1 MiB calls (seed 1). */
static void base_write(MPI_File fh)
{
    MPI_Offset total = file_bytes(), share = total / e2e_nprocs, mib = 1 << 20;
    unsigned char *buf = malloc((size_t)mib);

    if (!buf)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (MPI_Offset at = e2e_rank * share; at < (e2e_rank + 1) * share; at += mib) {
        MPI_Offset n = (e2e_rank + 1) * share - at < mib ? (e2e_rank + 1) * share - at : mib;
        e2e_fill(buf, (uint64_t)at, (size_t)n, 1);
        E2E_MPI(MPI_File_write_at(fh, at, buf, (int)n, MPI_BYTE, MPI_STATUS_IGNORE));
    }
    free(buf);
}

static void pieces_write(MPI_File fh, unsigned seed)
{
    unsigned char buf[PIECE];

    for (int i = 0; i < PIECES; i++) {
        MPI_Offset off = piece_off(i, e2e_rank);
        e2e_fill(buf, (uint64_t)off, PIECE, seed);
        E2E_MPI(MPI_File_write_at(fh, off, buf, PIECE, MPI_BYTE, MPI_STATUS_IGNORE));
    }
}

/* Reads this rank's share back: pieces of seed, the gaps of seed 1. */
static void check_file(MPI_File fh, unsigned seed)
{
    MPI_Offset share = file_bytes() / e2e_nprocs, lo = e2e_rank * share;
    unsigned char *buf = malloc((size_t)share);
    int count = 0;
    MPI_Status st;

    if (!buf)
        MPI_Abort(MPI_COMM_WORLD, 1);
    E2E_MPI(MPI_File_read_at(fh, lo, buf, (int)share, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &count);
    E2E_CHECK(count == (int)share, "read %d of %lld bytes", count, (long long)share);
    for (MPI_Offset k = 0; k < share; k++) {
        unsigned s = seed_at(lo + k, seed);
        if (buf[k] != e2e_pattern((uint64_t)(lo + k), s)) {
            E2E_FAIL("byte %lld is not seed %u's", (long long)(lo + k), s);
            break;
        }
    }
    free(buf);
}

static void open_file(const char *path, MPI_File *fh)
{
    E2E_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                          fh));
}

static void lost(const char *path, const char *marker, const char *text)
{
    char s[MPI_MAX_ERROR_STRING];
    MPI_File fh;
    int rc, len = 0;

    open_file(path, &fh);
    base_write(fh);
    E2E_MPI(MPI_File_sync(fh));
    pieces_write(fh, 2);
    MPI_Barrier(MPI_COMM_WORLD);
    if (e2e_rank == 0) {
        printf("written\n");
        fflush(stdout);
    }
    wait_marker(marker);
    rc = MPI_File_sync(fh);
    s[0] = '\0';
    if (rc != MPI_SUCCESS)
        MPI_Error_string(rc, s, &len);
    E2E_CHECK(rc != MPI_SUCCESS, "the sync after the crash succeeded");
    E2E_CHECK(rc == MPI_SUCCESS || strstr(s, text), "the sync failed with '%s', not '%s'", s, text);
    if (e2e_rank == 0 && rc != MPI_SUCCESS)
        printf("sync: %s\n", s);
    pieces_write(fh, 3);
    E2E_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    check_file(fh, 3);
    E2E_MPI(MPI_File_close(&fh));
}

static void synced(const char *path)
{
    MPI_File fh;

    open_file(path, &fh);
    base_write(fh);
    E2E_MPI(MPI_File_sync(fh));
    pieces_write(fh, 4);
    E2E_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (e2e_rank == 0) {
        printf("synced\n");
        fflush(stdout);
    }
    E2E_MPI(MPI_File_close(&fh));
}

static void check(const char *path)
{
    MPI_File fh;

    open_file(path, &fh);
    check_file(fh, 4);
    E2E_MPI(MPI_File_close(&fh));
}

/* Rank 0 writes [1000, 1000 + 70000) (seed 5), then rank 1 [20480,
 * 20480 + 81920) (seed 6): both partial blocks at their ends. */
static void overlap(const char *path)
{
    enum { A_OFF = 1000, A_LEN = 70000, B_OFF = 20480, B_LEN = 81920, END = B_OFF + B_LEN };
    unsigned char *buf = malloc(END);
    MPI_File fh;

    if (!buf)
        MPI_Abort(MPI_COMM_WORLD, 1);
    open_file(path, &fh);
    if (e2e_rank == 0) {
        e2e_fill(buf, A_OFF, A_LEN, 5);
        E2E_MPI(MPI_File_write_at(fh, A_OFF, buf, A_LEN, MPI_BYTE, MPI_STATUS_IGNORE));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (e2e_rank == 1 % e2e_nprocs) {
        e2e_fill(buf, B_OFF, B_LEN, 6);
        E2E_MPI(MPI_File_write_at(fh, B_OFF, buf, B_LEN, MPI_BYTE, MPI_STATUS_IGNORE));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int pass = 0; pass < 2; pass++) {
        memset(buf, 0xEE, END);
        E2E_MPI(MPI_File_read_at(fh, 0, buf, END, MPI_BYTE, MPI_STATUS_IGNORE));
        for (int k = 0; k < END; k++) {
            unsigned char want = k >= B_OFF ? e2e_pattern((uint64_t)k, 6)
                                 : k >= A_OFF ? e2e_pattern((uint64_t)k, 5) : 0;
            if (buf[k] != want) {
                E2E_FAIL("overlap, pass %d: byte %d is 0x%02x, expected 0x%02x", pass, k,
                         buf[k], want);
                break;
            }
        }
        E2E_MPI(MPI_File_sync(fh));
    }
    E2E_MPI(MPI_File_close(&fh));
    free(buf);
}

int main(int argc, char **argv)
{
    e2e_init(&argc, &argv);
    if (argc == 5 && strcmp(argv[1], "lost") == 0) {
        lost(argv[2], argv[3], argv[4]);
    } else if (argc == 3 && strcmp(argv[1], "synced") == 0) {
        synced(argv[2]);
    } else if (argc == 3 && strcmp(argv[1], "check") == 0) {
        check(argv[2]);
    } else if (argc == 3 && strcmp(argv[1], "overlap") == 0) {
        overlap(argv[2]);
    } else {
        if (e2e_rank == 0)
            fprintf(stderr, "usage: e2e_small lost PATH MARKER TEXT | synced PATH | check PATH | "
                            "overlap PATH\n");
        MPI_Finalize();
        return 2;
    }
    return e2e_finish(argv[1]);
}
