/* ipvfs-patterns: the workloads of the list I/O, collective I/O and
 * scheduling benchmarks (run by benchmarks/run-patterns.sh sched|tile|
 * btio).  Every phase is timed between barriers; the data read back is
 * checked byte for byte, and only when it is right does rank 0 print one
 * line per phase (a wrong byte aborts with no RESULT line at all):
 *
 *   RESULT pattern=P op=write|read bytes=N seconds=S MiBps=R data_seconds=D data_MiBps=E
 *
 * A write phase ends with MPI_File_sync, so S and R are durable figures;
 * D and E stop when the slowest rank's writes returned (the data at the
 * servers, before the sync).  For reads D and E are 0.
 *
 *   ipvfs-patterns sched FILE MIB_PER_RANK [KEY=VALUE hints...]
 *       each rank writes, then reads, its own contiguous region of
 *       MIB_PER_RANK MiB of one shared file (the Clusterfile synthetic
 *       benchmark); hints e.g. ipvfs_io_schedule=hash
 *       ipvfs_schedule_block=65536.
 *   ipvfs-patterns tile FILE REPS [hints...]
 *       mpi-tile-io: a 2x2 grid of tiles of 1024 x 768 elements of 24
 *       bytes (4 ranks), each rank writes then reads its tile through a
 *       subarray view, REPS times.
 *   ipvfs-patterns ctile FILE A:C:D:ELEM[:REPS] [hints...]
 *       the same with collective calls (write_at_all, read_at_all): A
 *       tiles across (ranks / A down) of C x D elements of ELEM bytes
 *       (benchmarks/collective-choice.sh).
 *   ipvfs-patterns itile FILE A:C:D:ELEM[:REPS] [hints...]
 *       the same shapes with independent calls (write_at, read_at;
 *       benchmarks/small-io.sh).
 *   ipvfs-patterns rtile FILE A:C:D:ELEM[:REPS] [hints...]
 *       itile's read alone, of a file itile wrote (checked the same).
 *   ipvfs-patterns wtile FILE A:C:D:ELEM[:REPS] [hints...]
 *       itile's write alone (and its sync; rtile checks it afterwards).
 *   ipvfs-patterns btio FILE N [hints...]
 *       BTIO-like: an N^3 array of 40-byte cells, ranks own (z, y) blocks
 *       with all x; collective write_all then read_all through a subarray
 *       view, memory with ghost cells (nested strided on both sides). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "benchmarks/quiet.h"

static int rank, nprocs;

static unsigned char pattern_byte(uint64_t off)
{
    uint64_t x = (off + 1) * 0x9E3779B97F4A7C15ull;

    return (unsigned char)(x >> 56);
}

static void die(const char *what, int rc)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;

    MPI_Error_string(rc, s, &len);
    fprintf(stderr, "ipvfs-patterns: rank %d: %s: %s\n", rank, what, s);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

#define CHECK(what, call) do { int rc_ = (call); if (rc_ != MPI_SUCCESS) die(what, rc_); } while (0)

/* One timed phase: all ranks' bytes, the slowest rank's seconds (rank 0). */
struct phase {
    uint64_t total;
    double worst;
    double data;    /* writes: slowest rank's time until its writes returned,
                     * before MPI_File_sync (data at the servers, not yet
                     * durable) */
};

static struct phase measure(uint64_t bytes, double secs)
{
    struct phase p = { 0, 0, 0 };

    MPI_Reduce(&bytes, &p.total, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&secs, &p.worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    return p;
}

static void report(const char *pat, const char *op, const struct phase *p)
{
    if (rank == 0)
        printf("RESULT pattern=%s op=%s bytes=%llu seconds=%.4f MiBps=%.1f data_seconds=%.4f "
               "data_MiBps=%.1f\n", pat, op, (unsigned long long)p->total, p->worst,
               p->worst > 0 ? p->total / p->worst / 1048576.0 : 0.0, p->data,
               p->data > 0 ? p->total / p->data / 1048576.0 : 0.0);
}

/* One layout: the file offset of byte k of the rank's data, and where it
 * lies in memory. */
struct shape {
    uint64_t n, a, b, c, d;
    uint64_t (*file_off)(const struct shape *s, uint64_t k);
    uint64_t (*mem_pos)(const struct shape *s, uint64_t k);
};

static uint64_t contig_off(const struct shape *s, uint64_t k)
{
    return (uint64_t)rank * s->n + k;
}

static uint64_t identity(const struct shape *s, uint64_t k)
{
    (void)s;
    return k;
}

/* tile: a = tiles across, c x d elements of n bytes per tile */
static uint64_t tile_off(const struct shape *s, uint64_t k)
{
    uint64_t rowb = s->d * s->n, ti = (uint64_t)rank / s->a, tj = (uint64_t)rank % s->a;

    return ((ti * s->c + k / rowb) * s->d * s->a + tj * s->d) * s->n + k % rowb;
}

/* btio: a = N, b = ranks along z, c = ranks along y, 40-byte cells, ghost 1 */
static uint64_t btio_off(const struct shape *s, uint64_t k)
{
    uint64_t n = s->a, lz = n / s->b, ly = n / s->c, cell = k / 40;
    uint64_t z = cell / (ly * n) + (uint64_t)rank / s->c * lz;
    uint64_t y = cell / n % ly + (uint64_t)rank % s->c * ly;

    return ((z * n + y) * n + cell % n) * 40 + k % 40;
}

static uint64_t btio_pos(const struct shape *s, uint64_t k)
{
    uint64_t n = s->a, ly = n / s->c, cell = k / 40;
    uint64_t z = cell / (ly * n), y = cell / n % ly, x = cell % n;

    return (((z + 1) * (ly + 2) + y + 1) * (n + 2) + x + 1) * 40 + k % 40;
}

static void fill(const struct shape *s, unsigned char *mem, uint64_t nbytes)
{
    for (uint64_t k = 0; k < nbytes; k++)
        mem[s->mem_pos(s, k)] = pattern_byte(s->file_off(s, k));
}

static uint64_t count_bad(const struct shape *s, const unsigned char *mem, uint64_t nbytes)
{
    uint64_t bad = 0;

    for (uint64_t k = 0; k < nbytes; k++)
        bad += mem[s->mem_pos(s, k)] != pattern_byte(s->file_off(s, k));
    return bad;
}

static void quiet_barrier(void)
{
    CHECK("barrier", bench_quiet_barrier(MPI_COMM_WORLD));
}

/* Writes then reads through the view, timing both; checks the data.
 * only: 0 both phases, 1 the read alone, 2 the write alone (unchecked). */
static void run_phases(const char *name, const char *path, MPI_Info info, MPI_Offset disp,
                       MPI_Datatype ftype, MPI_Datatype mtype, const struct shape *s,
                       uint64_t nbytes, size_t memsize, int coll, int reps, int only)
{
    int read_only = only == 1;
    unsigned char *mem = calloc(memsize, 1);
    MPI_File fh;
    double t, data_s;
    uint64_t bad, allbad = 0;
    struct phase wr, rd;

    if (!mem)
        die("out of memory", MPI_ERR_NO_MEM);
    fill(s, mem, nbytes);
    CHECK("open", MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    CHECK("set_view", MPI_File_set_view(fh, disp, MPI_BYTE, ftype, "native", info));
    quiet_barrier();
    t = MPI_Wtime();
    for (int i = 0; i < reps && !read_only; i++)
        CHECK("write", coll ? MPI_File_write_at_all(fh, 0, mem, 1, mtype, MPI_STATUS_IGNORE) :
              MPI_File_write_at(fh, 0, mem, 1, mtype, MPI_STATUS_IGNORE));
    data_s = MPI_Wtime() - t;
    if (!read_only)
        CHECK("sync", MPI_File_sync(fh));
    quiet_barrier();
    wr = measure(nbytes * (uint64_t)reps, MPI_Wtime() - t);
    MPI_Reduce(&data_s, &wr.data, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    memset(mem, 0, memsize);
    quiet_barrier();
    t = MPI_Wtime();
    for (int i = 0; i < reps && only != 2; i++)
        CHECK("read", coll ? MPI_File_read_at_all(fh, 0, mem, 1, mtype, MPI_STATUS_IGNORE) :
              MPI_File_read_at(fh, 0, mem, 1, mtype, MPI_STATUS_IGNORE));
    quiet_barrier();
    rd = measure(nbytes * (uint64_t)reps, MPI_Wtime() - t);
    CHECK("close", MPI_File_close(&fh));
    bad = only == 2 ? 0 : count_bad(s, mem, nbytes);
    MPI_Reduce(&bad, &allbad, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && allbad) {
        fprintf(stderr, "ipvfs-patterns: %s: %llu wrong bytes read back\n", name,
                (unsigned long long)allbad);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (!read_only)
        report(name, "write", &wr);
    if (only != 2)
        report(name, "read", &rd);
    free(mem);
}

static void bench_sched(const char *path, MPI_Info info, uint64_t mib)
{
    struct shape s = { .n = mib << 20, .file_off = contig_off, .mem_pos = identity };
    MPI_Datatype mtype;

    MPI_Type_contiguous((int)s.n, MPI_BYTE, &mtype);
    MPI_Type_commit(&mtype);
    run_phases("sched", path, info, (MPI_Offset)rank * (MPI_Offset)s.n, MPI_BYTE, mtype, &s, s.n,
               s.n, 0, 1, 0);
    MPI_Type_free(&mtype);
}

static void run_tile(const char *path, MPI_Info info, int reps, int a, int c, int d, int elem,
                     int coll);

static void bench_tile(const char *path, MPI_Info info, int reps)
{
    run_tile(path, info, reps, 2, 1024, 768, 24, 0);
}

/* A tiles across, of c x d elements of elem bytes, one per rank;
 * collective calls when coll & 1; only the read (of a file written so
 * before) when coll & 2, only the write when coll & 4. */
static void run_tile(const char *path, MPI_Info info, int reps, int a, int c, int d, int elem,
                     int coll)
{
    struct shape s = { .n = (uint64_t)elem, .a = (uint64_t)a, .c = (uint64_t)c, .d = (uint64_t)d,
                       .file_off = tile_off, .mem_pos = identity };
    int gsize[2] = { nprocs / a * c, a * d }, sub[2] = { c, d }, start[2];
    MPI_Datatype etype, ftype, mtype;
    uint64_t nbytes = s.c * s.d * s.n;

    start[0] = rank / a * c;
    start[1] = rank % a * d;
    MPI_Type_contiguous(elem, MPI_BYTE, &etype);
    MPI_Type_create_subarray(2, gsize, sub, start, MPI_ORDER_C, etype, &ftype);
    MPI_Type_commit(&ftype);
    MPI_Type_contiguous((int)nbytes, MPI_BYTE, &mtype);
    MPI_Type_commit(&mtype);
    run_phases("tile", path, info, 0, ftype, mtype, &s, nbytes, nbytes, coll & 1, reps, coll >> 1);
    MPI_Type_free(&etype);
    MPI_Type_free(&ftype);
    MPI_Type_free(&mtype);
}

static void bench_btio(const char *path, MPI_Info info, int n)
{
    struct shape s = { .a = (uint64_t)n, .c = 2, .file_off = btio_off, .mem_pos = btio_pos };
    int gsize[3] = { n, n, n }, sub[3], start[3], lsize[3], lstart[3] = { 1, 1, 1 };
    MPI_Datatype cell, ftype, mtype;
    uint64_t nbytes;

    s.b = (uint64_t)nprocs / s.c;
    sub[0] = n / (int)s.b;
    sub[1] = n / (int)s.c;
    sub[2] = n;
    start[0] = rank / (int)s.c * sub[0];
    start[1] = rank % (int)s.c * sub[1];
    start[2] = 0;
    lsize[0] = sub[0] + 2;
    lsize[1] = sub[1] + 2;
    lsize[2] = n + 2;
    nbytes = (uint64_t)sub[0] * (uint64_t)sub[1] * (uint64_t)n * 40;
    MPI_Type_contiguous(5, MPI_DOUBLE, &cell);
    MPI_Type_create_subarray(3, gsize, sub, start, MPI_ORDER_C, cell, &ftype);
    MPI_Type_commit(&ftype);
    MPI_Type_create_subarray(3, lsize, sub, lstart, MPI_ORDER_C, cell, &mtype);
    MPI_Type_commit(&mtype);
    run_phases("btio", path, info, 0, ftype, mtype, &s, nbytes,
               (size_t)lsize[0] * (size_t)lsize[1] * (size_t)lsize[2] * 40, 1, 1, 0);
    MPI_Type_free(&cell);
    MPI_Type_free(&ftype);
    MPI_Type_free(&mtype);
}

int main(int argc, char **argv)
{
    MPI_Info info;
    long arg;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 4 || (arg = strtol(argv[3], NULL, 10)) <= 0) {
        if (rank == 0)
            fprintf(stderr, "usage: ipvfs-patterns sched|tile|ctile|itile|rtile|wtile|btio FILE N "
                            "[KEY=VALUE...]\n");
        MPI_Finalize();
        return 2;
    }
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    MPI_Info_create(&info);
    for (int i = 4; i < argc; i++) {
        char *eq = strchr(argv[i], '=');

        if (!eq) {
            if (rank == 0)
                fprintf(stderr, "ipvfs-patterns: hint %s is not KEY=VALUE\n", argv[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        *eq = '\0';
        MPI_Info_set(info, argv[i], eq + 1);
    }
    if (strcmp(argv[1], "sched") == 0) {
        bench_sched(argv[2], info, (uint64_t)arg);
    } else if (strcmp(argv[1], "tile") == 0) {
        if (nprocs != 4)
            die("tile needs 4 ranks", MPI_ERR_ARG);
        bench_tile(argv[2], info, (int)arg);
    } else if (strcmp(argv[1], "ctile") == 0 || strcmp(argv[1], "itile") == 0 ||
               strcmp(argv[1], "rtile") == 0 || strcmp(argv[1], "wtile") == 0) {
        int a, c, d, elem, reps = 1;

        if (sscanf(argv[3], "%d:%d:%d:%d:%d", &a, &c, &d, &elem, &reps) < 4 || a <= 0 ||
            nprocs % a || c <= 0 || d <= 0 || elem <= 0 || reps <= 0 ||
            (uint64_t)c * (uint64_t)d * (uint64_t)elem > INT32_MAX)
            die("ctile, itile, rtile and wtile need A:C:D:ELEM[:REPS], A dividing the ranks, "
                "a tile under 2 GiB",
                MPI_ERR_ARG);
        run_tile(argv[2], info, reps, a, c, d, elem,
                 argv[1][0] == 'c' ? 1 : argv[1][0] == 'r' ? 2 : argv[1][0] == 'w' ? 4 : 0);
    } else if (strcmp(argv[1], "btio") == 0) {
        if (nprocs % 2 || arg % (nprocs / 2) || arg % 2)
            die("btio needs an even number of ranks dividing N", MPI_ERR_ARG);
        bench_btio(argv[2], info, (int)arg);
    } else {
        die("unknown pattern", MPI_ERR_ARG);
    }
    MPI_Info_free(&info);
    MPI_Finalize();
    return 0;
}
