/* Included first into every MPI-IO test program of the conformance harness
 * (test/romio-conformance/run.sh compiles them with -include rt_helpers.h).
 * Upstream tests that hard-code a local file name ("testfile", "test.ord")
 * or read raw bytes with fopen() are adapted (adapt.txt) to call these, so
 * that they work on any ROMIO prefix, ipvfs: included. */
#ifndef RT_HELPERS_H_INCLUDED
#define RT_HELPERS_H_INCLUDED

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The harness gives each test its file name in $RT_FILE. */
static __attribute__((unused)) char *rt_fname(const char *dflt)
{
    const char *f = getenv("RT_FILE");

    return (char *) ((f != NULL && *f != '\0') ? f : dflt);
}

#define RT_FNAME(lit) rt_fname(lit)

/* For tests that open an existing file read-only: rank 0 creates $RT_FILE
 * with 64 bytes through MPI-IO, then every rank uses it. */
static __attribute__((unused)) char *rt_seed_env(const char *dflt)
{
    const char *f = getenv("RT_FILE");
    char buf[64];
    MPI_File fh;
    int rank;

    if (f == NULL || *f == '\0')
        return (char *) dflt;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        memset(buf, 'r', sizeof(buf));
        if (MPI_File_open(MPI_COMM_SELF, (char *) f, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                          MPI_INFO_NULL, &fh) != MPI_SUCCESS ||
            MPI_File_write(fh, buf, (int) sizeof(buf), MPI_BYTE, MPI_STATUS_IGNORE)
            != MPI_SUCCESS || MPI_File_close(&fh) != MPI_SUCCESS) {
            fprintf(stderr, "rt_seed_env: cannot create %s through MPI-IO\n", f);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return (char *) f;
}

/* fopen() for tests that inspect a file's raw bytes: the file is read
 * through MPI-IO (any prefix) into a memory stream. */
static __attribute__((unused)) FILE *rt_fopen(const char *name, const char *mode)
{
    MPI_Offset size = 0;
    MPI_File fh;
    FILE *f;
    char *buf;

    (void) mode;
    if (MPI_File_open(MPI_COMM_SELF, (char *) name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh)
        != MPI_SUCCESS || MPI_File_get_size(fh, &size) != MPI_SUCCESS) {
        fprintf(stderr, "rt_fopen: cannot open %s through MPI-IO\n", name);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    buf = calloc(1, (size_t) size + 1);
    if (buf == NULL || (size > 0 && MPI_File_read_at(fh, 0, buf, (int) size, MPI_BYTE,
                                                     MPI_STATUS_IGNORE) != MPI_SUCCESS)) {
        fprintf(stderr, "rt_fopen: cannot read %s through MPI-IO\n", name);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_File_close(&fh);
    /* fmemopen needs a size above 0; the extra byte is never read */
    f = fmemopen(buf, (size_t) (size > 0 ? size : 1), "r");
    if (f == NULL) {
        fprintf(stderr, "rt_fopen: fmemopen failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return f;
}

#endif /* RT_HELPERS_H_INCLUDED */
