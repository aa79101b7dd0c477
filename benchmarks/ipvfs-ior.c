/* ipvfs-ior: an IOR-like MPI-IO bandwidth benchmark.
 *
 *   mpiexec -n N ipvfs-ior -f FILE [-b BLOCK] [-t XFER] [-s SEGMENTS]
 *                          [-w] [-r] [-c] [-v] [-e] [-k] [-F] [-z]
 *
 * Layout as IOR's: segment s holds one block per rank, rank r's block of
 * segment s starts at (s * N + r) * BLOCK and is moved in XFER-sized calls.
 *   -b BLOCK     bytes per rank per segment (suffixes K, M, G, T as in
 *                common/size.h; default 16m)
 *   -t XFER      bytes per call (default 1m; must divide BLOCK)
 *   -s SEGMENTS  default 1
 *   -w / -r      write / read phase (default: both, write first)
 *   -c           collective calls (MPI_File_write_at_all...), else independent
 *   -v           fill with a pattern and check it on read
 *   -e           MPI_File_sync before close in the write phase (timed)
 *   -k           keep the file (default: delete it at the end)
 *   -F           file per process: rank r uses FILE.r alone (opened on
 *                MPI_COMM_SELF), its block of segment s at s * BLOCK
 *   -z           random: each call goes to an XFER-aligned offset drawn
 *                uniformly from the rank's blocks (seeded by rank)
 * Each phase is timed from open to close, barrier to barrier (quiet ones,
 * benchmarks/quiet.h: a rank done early must not spin a core the servers
 * need for the others' I/O), and printed
 * by rank 0 as one line:
 *   RESULT op=write api=mpiio ranks=4 block=... xfer=... segments=1
 *          bytes=268435456 seconds=1.234 MiBps=207.45 ... cpu_s=0.8 file=...
 * cpu_s is the CPU time (user + system) all ranks spent in the phase;
 * p50_us and p99_us are percentiles of the latency of one call, over all
 * ranks' calls (open, sync and close not included).
 * Exit status 0, or 1 when an MPI call failed or -v found a mismatch. */
#include <mpi.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "benchmarks/quiet.h"
#include "common/size.h"

struct opts {
    const char *file;
    uint64_t block, xfer, segments;
    int do_write, do_read, collective, verify, fsync_write, keep, per_proc, random;
};

static int rank, nprocs;

/* A size by the common rule (common/size.h); 0 is no size here. */
static int parse_size(const char *s, uint64_t *out)
{
    uint64_t v;

    if (size_parse(s, &v) < 0 || v == 0) {
        fprintf(stderr, "ipvfs-ior: '%s' is not a size above 0 (" SIZE_RULE ")\n", s);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
    int c;

    *o = (struct opts){ .block = 16u << 20, .xfer = 1u << 20, .segments = 1 };
    while ((c = getopt(argc, argv, "f:b:t:s:wrcvekFz")) != -1) {
        switch (c) {
        case 'f': o->file = optarg; break;
        case 'b': if (parse_size(optarg, &o->block)) return -1; break;
        case 't': if (parse_size(optarg, &o->xfer)) return -1; break;
        case 's': if (parse_size(optarg, &o->segments)) return -1; break;
        case 'w': o->do_write = 1; break;
        case 'r': o->do_read = 1; break;
        case 'c': o->collective = 1; break;
        case 'v': o->verify = 1; break;
        case 'e': o->fsync_write = 1; break;
        case 'k': o->keep = 1; break;
        case 'F': o->per_proc = 1; break;
        case 'z': o->random = 1; break;
        default: return -1;
        }
    }
    if (!o->file || o->block % o->xfer || o->xfer > INT32_MAX)
        return -1;
    if (!o->do_write && !o->do_read)
        o->do_write = o->do_read = 1;
    return 0;
}

static void fill(unsigned char *buf, uint64_t off, uint64_t len)
{
    for (uint64_t i = 0; i < len; i += 8) {
        uint64_t v = (off + i) * 0x9E3779B97F4A7C15ull;

        memcpy(buf + i, &v, len - i < 8 ? len - i : 8);
    }
}

static int report_mpi(const char *what, int rc)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;

    if (rc == MPI_SUCCESS)
        return 0;
    MPI_Error_string(rc, s, &len);
    fprintf(stderr, "ipvfs-ior: rank %d: %s: %s\n", rank, what, s);
    return 1;
}

/* One transfer of the phase; returns the number of errors. */
static int transfer(const struct opts *o, MPI_File fh, int writing, unsigned char *buf,
                    MPI_Offset off, unsigned char *check)
{
    MPI_Status st;
    int rc, count = 0;

    if (writing && o->verify)
        fill(buf, (uint64_t)off, o->xfer);
    if (writing)
        rc = o->collective ? MPI_File_write_at_all(fh, off, buf, (int)o->xfer, MPI_BYTE, &st)
                           : MPI_File_write_at(fh, off, buf, (int)o->xfer, MPI_BYTE, &st);
    else
        rc = o->collective ? MPI_File_read_at_all(fh, off, buf, (int)o->xfer, MPI_BYTE, &st)
                           : MPI_File_read_at(fh, off, buf, (int)o->xfer, MPI_BYTE, &st);
    if (report_mpi(writing ? "write" : "read", rc))
        return 1;
    MPI_Get_count(&st, MPI_BYTE, &count);
    if ((uint64_t)count != o->xfer) {
        fprintf(stderr, "ipvfs-ior: rank %d: short %s at %lld: %d bytes\n", rank,
                writing ? "write" : "read", (long long)off, count);
        return 1;
    }
    if (!writing && o->verify) {
        fill(check, (uint64_t)off, o->xfer);
        if (memcmp(check, buf, o->xfer) != 0) {
            fprintf(stderr, "ipvfs-ior: rank %d: data mismatch at %lld\n", rank,
                    (long long)off);
            return 1;
        }
    }
    return 0;
}

/* CPU seconds (user + system) this process has used. */
static double cpu_now(void)
{
    struct rusage ru;

    if (getrusage(RUSAGE_SELF, &ru) < 0)
        return 0;
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* p50 and p99 (microseconds) of every rank's call latencies, on rank 0. */
static void latency_percentiles(const double *lat, int n, double *out_p50, double *out_p99)
{
    double *all = NULL;
    int total = n * nprocs;

    *out_p50 = *out_p99 = 0;
    if (rank == 0 && !(all = malloc(sizeof(*all) * (size_t)total))) {
        fprintf(stderr, "ipvfs-ior: out of memory for latencies\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Gather(lat, n, MPI_DOUBLE, all, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank != 0 || total == 0) {
        free(all);
        return;
    }
    qsort(all, (size_t)total, sizeof(*all), cmp_double);
    *out_p50 = all[total / 2] * 1e6;
    *out_p99 = all[(size_t)((double)total * 0.99) < (size_t)total ? (size_t)((double)total * 0.99)
                                                                  : (size_t)total - 1] * 1e6;
    free(all);
}

/* Offset of call k of segment s: in order, or at random (-z). */
static MPI_Offset call_offset(const struct opts *o, uint64_t s, uint64_t k)
{
    uint64_t per_call = o->block / o->xfer;
    uint64_t base = o->per_proc ? s * o->block : (s * (uint64_t)nprocs + (uint64_t)rank) * o->block;

    if (o->random) {
        uint64_t seg = (uint64_t)lrand48() % o->segments;

        base = o->per_proc ? seg * o->block : (seg * (uint64_t)nprocs + (uint64_t)rank) * o->block;
        k = (uint64_t)lrand48() % per_call;
    }
    return (MPI_Offset)(base + k * o->xfer);
}

static int phase(const struct opts *o, int writing, unsigned char *buf, unsigned char *check)
{
    int amode = writing ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY;
    uint64_t per_call = o->block / o->xfer, total, ncalls = per_call * o->segments, i = 0;
    double t0, t1, c0, cpu = 0, all_cpu = 0, p50 = 0, p99 = 0, *lat = NULL;
    MPI_File fh = MPI_FILE_NULL;
    char name[4096];
    int errs = 0, all_errs = 0;

    if (o->per_proc)
        snprintf(name, sizeof(name), "%s.%d", o->file, rank);
    else
        snprintf(name, sizeof(name), "%s", o->file);
    if (ncalls > INT32_MAX / (uint64_t)nprocs) {
        if (rank == 0)
            fprintf(stderr, "ipvfs-ior: too many calls to keep their latencies\n");
        return 1;
    }
    if (!(lat = calloc(ncalls ? ncalls : 1, sizeof(*lat)))) {
        fprintf(stderr, "ipvfs-ior: out of memory for latencies\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    srand48(rank + 1);
    errs += report_mpi("barrier", bench_quiet_barrier(MPI_COMM_WORLD));
    t0 = MPI_Wtime();
    c0 = cpu_now();
    errs += report_mpi("open", MPI_File_open(o->per_proc ? MPI_COMM_SELF : MPI_COMM_WORLD, name,
                                             amode, MPI_INFO_NULL, &fh));
    for (uint64_t s = 0; s < o->segments && !errs; s++) {
        for (uint64_t k = 0; k < per_call && !errs; k++, i++) {
            double t = MPI_Wtime();

            errs += transfer(o, fh, writing, buf, call_offset(o, s, k), check);
            lat[i] = MPI_Wtime() - t;
        }
    }
    if (writing && o->fsync_write && !errs)
        errs += report_mpi("sync", MPI_File_sync(fh));
    if (fh != MPI_FILE_NULL)
        errs += report_mpi("close", MPI_File_close(&fh));
    cpu = cpu_now() - c0;
    errs += report_mpi("barrier", bench_quiet_barrier(MPI_COMM_WORLD));
    t1 = MPI_Wtime();
    MPI_Allreduce(&errs, &all_errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Reduce(&cpu, &all_cpu, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (!all_errs)
        latency_percentiles(lat, (int)ncalls, &p50, &p99);
    free(lat);
    total = o->block * o->segments * (uint64_t)nprocs;
    if (rank == 0)
        printf("RESULT op=%s api=mpiio ranks=%d block=%llu xfer=%llu segments=%llu "
               "bytes=%llu seconds=%.3f MiBps=%.2f mode=%s errors=%d layout=%s access=%s "
               "p50_us=%.1f p99_us=%.1f cpu_s=%.3f file=%s\n",
               writing ? "write" : "read", nprocs, (unsigned long long)o->block,
               (unsigned long long)o->xfer, (unsigned long long)o->segments,
               (unsigned long long)total, t1 - t0,
               (double)total / (1 << 20) / (t1 - t0), o->collective ? "collective" : "independent",
               all_errs, o->per_proc ? "file-per-process" : "shared",
               o->random ? "random" : "sequential", p50, p99, all_cpu, o->file);
    return all_errs;
}

int main(int argc, char **argv)
{
    struct opts o;
    unsigned char *buf, *check;
    int errs = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    if (parse_opts(argc, argv, &o) < 0) {
        if (rank == 0)
            fprintf(stderr, "usage: ipvfs-ior -f FILE [-b BLOCK] [-t XFER] [-s SEGMENTS] "
                            "[-w] [-r] [-c] [-v] [-e] [-k] [-F] [-z]\n(XFER must divide BLOCK)\n");
        MPI_Finalize();
        return 2;
    }
    buf = malloc(o.xfer);
    check = malloc(o.xfer);
    if (!buf || !check) {
        fprintf(stderr, "ipvfs-ior: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(buf, 0x5a, o.xfer);
    if (o.do_write)
        errs += phase(&o, 1, buf, check);
    if (o.do_read && !errs)
        errs += phase(&o, 0, buf, check);
    if (!o.keep && o.per_proc) {
        char name[4096];

        snprintf(name, sizeof(name), "%s.%d", o.file, rank);
        MPI_File_delete(name, MPI_INFO_NULL);
    } else if (!o.keep && rank == 0) {
        MPI_File_delete(o.file, MPI_INFO_NULL);
    }
    free(check);
    free(buf);
    MPI_Finalize();
    return errs ? 1 : 0;
}
