/* ipvfs-ior: an IOR-like MPI-IO bandwidth benchmark.
 *
 *   mpiexec -n N ipvfs-ior -f FILE [-b BLOCK] [-t XFER] [-s SEGMENTS]
 *                          [-w] [-r] [-c] [-v] [-e] [-k]
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
 * Each phase is timed from open to close, barrier to barrier, and printed
 * by rank 0 as one line:
 *   RESULT op=write api=mpiio ranks=4 block=... xfer=... segments=1
 *          bytes=268435456 seconds=1.234 MiBps=207.45 file=...
 * Exit status 0, or 1 when an MPI call failed or -v found a mismatch. */
#include <mpi.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/size.h"

struct opts {
    const char *file;
    uint64_t block, xfer, segments;
    int do_write, do_read, collective, verify, fsync_write, keep;
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
    while ((c = getopt(argc, argv, "f:b:t:s:wrcvek")) != -1) {
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

static int phase(const struct opts *o, int writing, unsigned char *buf, unsigned char *check)
{
    int amode = writing ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY;
    uint64_t per_call = o->block / o->xfer, total;
    double t0, t1;
    MPI_File fh = MPI_FILE_NULL;
    int errs = 0, all_errs = 0;

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    errs += report_mpi("open", MPI_File_open(MPI_COMM_WORLD, o->file, amode, MPI_INFO_NULL, &fh));
    for (uint64_t s = 0; s < o->segments && !errs; s++) {
        MPI_Offset base = (MPI_Offset)((s * (uint64_t)nprocs + (uint64_t)rank) * o->block);

        for (uint64_t k = 0; k < per_call && !errs; k++)
            errs += transfer(o, fh, writing, buf, base + (MPI_Offset)(k * o->xfer), check);
    }
    if (writing && o->fsync_write && !errs)
        errs += report_mpi("sync", MPI_File_sync(fh));
    if (fh != MPI_FILE_NULL)
        errs += report_mpi("close", MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    t1 = MPI_Wtime();
    MPI_Allreduce(&errs, &all_errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    total = o->block * o->segments * (uint64_t)nprocs;
    if (rank == 0)
        printf("RESULT op=%s api=mpiio ranks=%d block=%llu xfer=%llu segments=%llu "
               "bytes=%llu seconds=%.3f MiBps=%.2f mode=%s errors=%d file=%s\n",
               writing ? "write" : "read", nprocs, (unsigned long long)o->block,
               (unsigned long long)o->xfer, (unsigned long long)o->segments,
               (unsigned long long)total, t1 - t0,
               (double)total / (1 << 20) / (t1 - t0), o->collective ? "collective" : "independent",
               all_errs, o->file);
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
                            "[-w] [-r] [-c] [-v] [-e] [-k]\n(XFER must divide BLOCK)\n");
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
    if (!o.keep && rank == 0)
        MPI_File_delete(o.file, MPI_INFO_NULL);
    free(check);
    free(buf);
    MPI_Finalize();
    return errs ? 1 : 0;
}
