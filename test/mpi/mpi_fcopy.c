/* mpi_fcopy: copies a file through MPI-IO, for tests and benchmarks of
 * ipvfs-ctl cp and the FUSE mount against MPI programs.
 *
 *   mpi_fcopy SRC DST [CHUNK]   SRC, DST: ipvfs:/PATH or a local path
 *   mpi_fcopy SRC -null [CHUNK] read SRC only
 *
 * Ranks take chunks (CHUNK bytes, default 16 MiB) round robin with
 * MPI_File_read_at/write_at; DST gets SRC's exact size.  Rank 0 prints
 * "bytes N seconds S MiB/s R" (the read and write time, after open). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check(int rc, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len;

    if (rc == MPI_SUCCESS)
        return 0;
    MPI_Error_string(rc, msg, &len);
    fprintf(stderr, "mpi_fcopy: %s: %s\n", what, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
}

int main(int argc, char **argv)
{
    MPI_File in, out = MPI_FILE_NULL;
    MPI_Offset size, off, chunk = 16 << 20;
    int rank, nprocs, null_dst;
    double t0, t1;
    char *buf;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 3 || argc > 4 || (argc == 4 && (chunk = atoll(argv[3])) <= 0)) {
        if (rank == 0)
            fprintf(stderr, "usage: mpi_fcopy SRC DST|-null [CHUNK]\n");
        MPI_Finalize();
        return 2;
    }
    null_dst = strcmp(argv[2], "-null") == 0;
    if (!(buf = malloc((size_t)chunk)))
        MPI_Abort(MPI_COMM_WORLD, 1);
    check(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_RDONLY, MPI_INFO_NULL, &in), argv[1]);
    check(MPI_File_get_size(in, &size), "size");
    if (!null_dst) {
        check(MPI_File_open(MPI_COMM_WORLD, argv[2], MPI_MODE_CREATE | MPI_MODE_WRONLY,
                            MPI_INFO_NULL, &out), argv[2]);
        check(MPI_File_set_size(out, size), "set size");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (off = (MPI_Offset)rank * chunk; off < size; off += (MPI_Offset)nprocs * chunk) {
        int len = (int)(size - off < chunk ? size - off : chunk);

        check(MPI_File_read_at(in, off, buf, len, MPI_BYTE, MPI_STATUS_IGNORE), "read");
        if (!null_dst)
            check(MPI_File_write_at(out, off, buf, len, MPI_BYTE, MPI_STATUS_IGNORE), "write");
    }
    if (!null_dst)
        check(MPI_File_close(&out), "close");
    MPI_Barrier(MPI_COMM_WORLD);
    t1 = MPI_Wtime();
    check(MPI_File_close(&in), "close");
    if (rank == 0)
        printf("bytes %lld seconds %.3f MiB/s %.1f\n", (long long)size, t1 - t0,
               (double)size / (1 << 20) / (t1 - t0 > 0 ? t1 - t0 : 1e-9));
    free(buf);
    MPI_Finalize();
    return 0;
}
