#!/bin/bash
# Smoke test of libipvfs-romio.so: a small MPI-IO program built with plain
# mpicc runs with LD_PRELOAD of our library on ufs:, and again built linked
# against the library (no LD_PRELOAD), and checks that
#  - MPI_File_open really comes from our library,
#  - MPI_Get_count gives the element count after a write and a read,
#  - the data read back is what was written,
#  - an invalid displacement gives an error whose string is real text
#    (mentions "displacement", no raw "**key"),
#  - a user file error handler (MPI_File_create_errhandler) is called.
# timeout: 120
set -eu

: "${IPVFS_BUILDDIR:?run through test/run-suite.sh (IPVFS_BUILDDIR unset)}"
lib=$IPVFS_BUILDDIR/adio/libipvfs-romio.so
[ -f "$lib" ] || { echo "t_romio_preload: $lib not built (make all)" >&2; exit 1; }
MPICC=${MPICC:-mpicc}
MPIEXEC=${MPIEXEC:-mpiexec}
command -v "$MPICC" >/dev/null || { echo "t_romio_preload: $MPICC not found" >&2; exit 1; }
command -v "$MPIEXEC" >/dev/null || { echo "t_romio_preload: $MPIEXEC not found" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/t_romio_preload.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

cat > "$tmp/smoke.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1000
static int errs, handler_calls;

#define CHECK(cond, ...) do { if (!(cond)) { errs++; fprintf(stderr, __VA_ARGS__); \
                                             fputc('\n', stderr); } } while (0)

static void on_file_error(MPI_File *fh, int *code, ...)
{
    (void) fh;
    if (*code != MPI_SUCCESS)
        handler_calls++;
}

int main(int argc, char **argv)
{
    static int out[N], in[N];
    char name[4096], msg[MPI_MAX_ERROR_STRING];
    MPI_File fh;
    MPI_Status st;
    MPI_Errhandler eh;
    Dl_info dli;
    int rank, i, rc, count = -1, len = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc != 3) {
        fprintf(stderr, "usage: smoke ufs:DIR LIB\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rank == 0) {
        rc = dladdr((void *) &MPI_File_open, &dli);
        CHECK(rc != 0 && dli.dli_fname && strstr(dli.dli_fname, argv[2]) != NULL,
              "MPI_File_open comes from %s, not %s", rc && dli.dli_fname ? dli.dli_fname : "?",
              argv[2]);
    }
    snprintf(name, sizeof(name), "%s/smoke.%d", argv[1], rank);
    for (i = 0; i < N; i++)
        out[i] = rank * N + i;

    rc = MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    if (rc != MPI_SUCCESS) {
        MPI_Error_string(rc, msg, &len);
        fprintf(stderr, "open %s: %s\n", name, msg);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    rc = MPI_File_write_at(fh, 0, out, N, MPI_INT, &st);
    CHECK(rc == MPI_SUCCESS, "write_at failed (%d)", rc);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == N, "MPI_Get_count after write: %d, expected %d", count, N);
    count = -1;
    rc = MPI_File_read_at(fh, 0, in, N, MPI_INT, &st);
    CHECK(rc == MPI_SUCCESS, "read_at failed (%d)", rc);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == N, "MPI_Get_count after read: %d, expected %d", count, N);
    CHECK(memcmp(in, out, sizeof(in)) == 0, "data read back differs from data written");
    count = -1;
    rc = MPI_File_read_at(fh, (MPI_Offset) N * sizeof(int) - 8, in, N, MPI_INT, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(rc == MPI_SUCCESS && count == 2, "short read at EOF: rc %d count %d, expected 2", rc,
          count);

    /* an invalid displacement must give a readable error string */
    rc = MPI_File_set_view(fh, -1, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    CHECK(rc != MPI_SUCCESS, "set_view with displacement -1 succeeded");
    if (rc != MPI_SUCCESS) {
        int cls = -1;
        MPI_Error_string(rc, msg, &len);
        MPI_Error_class(rc, &cls);
        CHECK(strstr(msg, "displacement") != NULL && strstr(msg, "**") == NULL,
              "error string is not text: \"%s\"", msg);
        CHECK(cls == MPI_ERR_ARG, "error class %d, expected MPI_ERR_ARG (%d)", cls, MPI_ERR_ARG);
    }
    MPI_File_close(&fh);

    /* a user file error handler must be called */
    rc = MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    CHECK(rc == MPI_SUCCESS, "reopen failed (%d)", rc);
    if (rc == MPI_SUCCESS) {
        MPI_File_create_errhandler(on_file_error, &eh);
        MPI_File_set_errhandler(fh, eh);
        MPI_Errhandler_free(&eh);
        MPI_File_read_at(fh, 0, in, 1, MPI_INT, &st);  /* WRONLY: must fail */
        CHECK(handler_calls == 1, "user file error handler called %d times, expected 1",
              handler_calls);
        MPI_File_close(&fh);
    }
    MPI_File_delete(name, MPI_INFO_NULL);

    MPI_Allreduce(MPI_IN_PLACE, &errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(errs ? " Found %d errors\n" : " No Errors\n", errs);
    MPI_Finalize();
    return errs != 0;
}
EOF
"$MPICC" -O1 -o "$tmp/smoke" "$tmp/smoke.c" -ldl
mkdir -p "$tmp/data"
"$MPIEXEC" -n 2 -genv LD_PRELOAD "$lib" "$tmp/smoke" "ufs:$tmp/data" "$lib"

# The other way to use it: linked before libmpich (mpicc appends -lmpich
# after the user's libraries), run without LD_PRELOAD.
libdir=$(dirname "$lib")
"$MPICC" -O1 -o "$tmp/smoke-linked" "$tmp/smoke.c" -L"$libdir" -Wl,--no-as-needed \
    -lipvfs-romio -Wl,-rpath,"$libdir" -ldl
"$MPIEXEC" -n 2 env -u LD_PRELOAD "$tmp/smoke-linked" "ufs:$tmp/data" "$lib"
echo "t_romio_preload: passed"
