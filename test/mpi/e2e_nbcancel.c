/* Nonblocking requests in bounded pieces, and MPI_Cancel (run by
 * test/t_e2e_nonblock_cancel.sh; any number of ranks).
 *
 *   e2e_nbcancel FILE
 *     Every rank sees the file through a view of 4 KiB blocks, the ranks'
 *     blocks taking turns, and uses a memory type with a 4 KiB gap after
 *     every 4 KiB block, so both sides are noncontiguous.
 *     1. A: MPI_File_iwrite_at of 32 MiB of view data (twice the window of
 *        adio/ad_ipvfs/ad_ipvfs.h), then B: 32 MiB more behind it, at once.
 *        MPI_Cancel(B) right away: B has nothing sent yet (A holds the
 *        window), so it must come back cancelled (MPI_Test_cancelled) and
 *        write nothing.  MPI_Cancel(A): A has pieces on the wire, so it
 *        completes normally with all its bytes.
 *     2. The same for reads: C reads A's data back (MPI_Test alone drives
 *        it), D, queued behind C, is cancelled and leaves its buffer as
 *        it was; C's data is checked byte for byte.
 *     3. After a barrier, a read of B's region gets 0 bytes (nobody wrote
 *        it: the file ends where A's data ends).
 *     4. A contiguous 24 MiB MPI_File_iwrite_at and its iread_at, each
 *        driven by MPI_Test alone, byte-exact.
 *     5. A 24 MiB iwrite freed unfinished (MPI_Request_free) with an empty
 *        one queued behind it (waited for): the close finishes the first,
 *        whose data is there after reopening. */
#include <time.h>

#include "e2e_util.h"

E2E_GLOBALS;

#define BLOCK 4096
#define VIEW_BYTES (32u << 20)  /* per request, in view data */
#define CONTIG_BYTES (24u << 20)

static MPI_Datatype mem_type(void)
{
    MPI_Datatype blk, t;

    /* one 4 KiB block then a 4 KiB gap; tiled count times */
    MPI_Type_contiguous(BLOCK, MPI_BYTE, &blk);
    MPI_Type_create_resized(blk, 0, 2 * BLOCK, &t);
    MPI_Type_commit(&t);
    MPI_Type_free(&blk);
    return t;
}

/* Packs len bytes of the pattern (view offsets from off) into the
 * memory layout of mem_type: data at even 4 KiB blocks. */
static void fill_gapped(unsigned char *buf, uint64_t off, size_t len, unsigned seed)
{
    for (size_t b = 0; b < len / BLOCK; b++)
        e2e_fill(buf + 2 * b * BLOCK, off + b * BLOCK, BLOCK, seed);
}

static long verify_gapped(const unsigned char *buf, uint64_t off, size_t len, unsigned seed)
{
    for (size_t b = 0; b < len / BLOCK; b++) {
        long at = e2e_verify(buf + 2 * b * BLOCK, off + b * BLOCK, BLOCK, seed);

        if (at >= 0)
            return (long) (b * BLOCK) + at;
    }
    return -1;
}

static MPI_Count count_of(const MPI_Status * st)
{
    MPI_Count got = -1;

    MPI_Get_elements_x(st, MPI_BYTE, &got);
    return got;
}

static int cancelled(const MPI_Status * st)
{
    int flag = -1;

    MPI_Test_cancelled(st, &flag);
    return flag;
}

/* Completes req with MPI_Test alone (no MPI_Wait), within 120 s. */
static void test_until_done(MPI_Request * req, MPI_Status * st, const char *what)
{
    struct timespec nap = { 0, 1000 * 1000 };
    time_t deadline = time(NULL) + 120;
    int done = 0;

    while (!done && time(NULL) < deadline) {
        E2E_MPI(MPI_Test(req, &done, st));
        if (!done)
            nanosleep(&nap, NULL);
    }
    E2E_CHECK(done, "%s: MPI_Test never completed it", what);
}

static void set_view(MPI_File fh)
{
    MPI_Datatype blk, ft;

    MPI_Type_contiguous(BLOCK, MPI_BYTE, &blk);
    MPI_Type_create_resized(blk, 0, (MPI_Aint) BLOCK * e2e_nprocs, &ft);
    MPI_Type_commit(&ft);
    E2E_MPI(MPI_File_set_view(fh, (MPI_Offset) e2e_rank * BLOCK, MPI_BYTE, ft, "native",
                              MPI_INFO_NULL));
    MPI_Type_free(&blk);
    MPI_Type_free(&ft);
}

static void writes(MPI_File fh, MPI_Datatype mt, unsigned char *a, unsigned char *b)
{
    int n = VIEW_BYTES / BLOCK;
    MPI_Request ra, rb;
    MPI_Status sa, sb;

    fill_gapped(a, 0, VIEW_BYTES, 1 + e2e_rank);
    fill_gapped(b, VIEW_BYTES, VIEW_BYTES, 1 + e2e_rank);
    E2E_MPI(MPI_File_iwrite_at(fh, 0, a, n, mt, &ra));
    E2E_MPI(MPI_File_iwrite_at(fh, VIEW_BYTES, b, n, mt, &rb));
    E2E_MPI(MPI_Cancel(&rb));
    E2E_MPI(MPI_Cancel(&ra));
    E2E_MPI(MPI_Wait(&rb, &sb));
    E2E_MPI(MPI_Wait(&ra, &sa));
    E2E_CHECK(cancelled(&sb) == 1, "queued iwrite B: MPI_Test_cancelled says %d, want 1",
              cancelled(&sb));
    E2E_CHECK(cancelled(&sa) == 0, "started iwrite A: MPI_Test_cancelled says %d, want 0",
              cancelled(&sa));
    E2E_CHECK(count_of(&sa) == VIEW_BYTES, "iwrite A: %lld bytes, want %u",
              (long long) count_of(&sa), VIEW_BYTES);
}

static void reads(MPI_File fh, MPI_Datatype mt, unsigned char *a, unsigned char *b)
{
    int n = VIEW_BYTES / BLOCK;
    MPI_Request rc, rd;
    MPI_Status sc, sd;
    long at;

    memset(a, 0, 2 * (size_t) VIEW_BYTES);
    memset(b, 0xA5, 2 * (size_t) VIEW_BYTES);
    E2E_MPI(MPI_File_iread_at(fh, 0, a, n, mt, &rc));
    E2E_MPI(MPI_File_iread_at(fh, 0, b, n, mt, &rd));
    E2E_MPI(MPI_Cancel(&rd));
    E2E_MPI(MPI_Wait(&rd, &sd));
    E2E_CHECK(cancelled(&sd) == 1, "queued iread D: MPI_Test_cancelled says %d, want 1",
              cancelled(&sd));
    test_until_done(&rc, &sc, "iread C");
    E2E_CHECK(cancelled(&sc) == 0, "iread C: cancelled");
    E2E_CHECK(count_of(&sc) == VIEW_BYTES, "iread C: %lld bytes, want %u",
              (long long) count_of(&sc), VIEW_BYTES);
    at = verify_gapped(a, 0, VIEW_BYTES, 1 + e2e_rank);
    E2E_CHECK(at < 0, "iread C: wrong byte at view offset %ld", at);
    for (size_t i = 0; i < 2 * (size_t) VIEW_BYTES; i++)
        if (b[i] != 0xA5) {
            E2E_FAIL("cancelled iread D wrote its buffer at %zu", i);
            break;
        }
}

static void past_end(MPI_File fh, MPI_Datatype mt, unsigned char *b)
{
    MPI_Status st;

    MPI_Barrier(MPI_COMM_WORLD);
    E2E_MPI(MPI_File_read_at(fh, VIEW_BYTES, b, VIEW_BYTES / BLOCK, mt, &st));
    E2E_CHECK(count_of(&st) == 0, "region of the cancelled iwrite B: %lld bytes read, want 0",
              (long long) count_of(&st));
}

static void freed_then_closed(const char *path, MPI_File fh, unsigned char *a, MPI_Offset off);

static void contiguous(const char *path, unsigned char *a)
{
    MPI_File fh = MPI_FILE_NULL;
    MPI_Offset off = (MPI_Offset) e2e_rank * CONTIG_BYTES;
    MPI_Request r;
    MPI_Status st;
    long at;

    E2E_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                          &fh));
    e2e_fill(a, (uint64_t) off, CONTIG_BYTES, 7);
    E2E_MPI(MPI_File_iwrite_at(fh, off, a, CONTIG_BYTES, MPI_BYTE, &r));
    test_until_done(&r, &st, "contiguous iwrite");
    E2E_CHECK(count_of(&st) == CONTIG_BYTES, "contiguous iwrite: %lld bytes",
              (long long) count_of(&st));
    memset(a, 0, CONTIG_BYTES);
    E2E_MPI(MPI_File_iread_at(fh, off, a, CONTIG_BYTES, MPI_BYTE, &r));
    test_until_done(&r, &st, "contiguous iread");
    E2E_CHECK(count_of(&st) == CONTIG_BYTES, "contiguous iread: %lld bytes",
              (long long) count_of(&st));
    at = e2e_verify(a, (uint64_t) off, CONTIG_BYTES, 7);
    E2E_CHECK(at < 0, "contiguous iread: wrong byte at %ld", at);
    freed_then_closed(path, fh, a, off);
}

/* An iwrite the program frees unfinished (MPI_Request_free), with an
 * empty one queued behind it: the close finishes both, and the data is
 * there when the file is opened again. */
static void freed_then_closed(const char *path, MPI_File fh, unsigned char *a, MPI_Offset off)
{
    MPI_Request r, empty;
    MPI_Status st;
    long at;

    e2e_fill(a, (uint64_t) off, CONTIG_BYTES, 9);
    E2E_MPI(MPI_File_iwrite_at(fh, off, a, CONTIG_BYTES, MPI_BYTE, &r));
    E2E_MPI(MPI_File_iwrite_at(fh, off, a, 0, MPI_BYTE, &empty));
    E2E_MPI(MPI_Request_free(&r));
    E2E_MPI(MPI_Wait(&empty, &st));
    E2E_CHECK(count_of(&st) == 0, "empty iwrite: %lld bytes", (long long) count_of(&st));
    E2E_MPI(MPI_File_close(&fh));
    memset(a, 0, CONTIG_BYTES);
    E2E_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    E2E_MPI(MPI_File_read_at(fh, off, a, CONTIG_BYTES, MPI_BYTE, &st));
    at = e2e_verify(a, (uint64_t) off, CONTIG_BYTES, 9);
    E2E_CHECK(at < 0, "iwrite freed before the close: wrong byte at %ld", at);
    E2E_MPI(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    MPI_File fh = MPI_FILE_NULL;
    MPI_Datatype mt;
    unsigned char *a, *b;
    char path[4096];

    e2e_init(&argc, &argv);
    if (argc != 2) {
        if (e2e_rank == 0)
            fprintf(stderr, "usage: e2e_nbcancel FILE\n");
        MPI_Finalize();
        return 2;
    }
    a = malloc(2 * (size_t) VIEW_BYTES);
    b = malloc(2 * (size_t) VIEW_BYTES);
    if (!a || !b) {
        fprintf(stderr, "e2e_nbcancel: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    mt = mem_type();
    E2E_MPI(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR,
                          MPI_INFO_NULL, &fh));
    set_view(fh);
    writes(fh, mt, a, b);
    reads(fh, mt, a, b);
    past_end(fh, mt, b);
    E2E_MPI(MPI_File_close(&fh));
    snprintf(path, sizeof(path), "%s.contig", argv[1]);
    contiguous(path, a);
    MPI_Type_free(&mt);
    free(a);
    free(b);
    return e2e_finish("e2e_nbcancel");
}
