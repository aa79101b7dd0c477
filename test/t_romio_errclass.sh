#!/bin/bash
# adio/romio-fixes/mpio_err.c turns an error class that is not an MPI error
# class (a driver's bug) into MPI_ERR_IO with the driver's message, instead
# of ending the job: MPIO_Err_create_code is private to libipvfs-romio.so,
# so a program links ROMIO's static archive from the build tree and calls it
# with classes MPICH takes and rejects later (-1, 128), takes as a wrong
# class (9999 reads as class 15), or does not have (79, 127); the codes must
# be of class MPI_ERR_IO and their text the message.  A valid class
# (MPI_ERR_ACCESS) keeps its class.
# timeout: 120
set -eu

: "${IPVFS_BUILDDIR:?run through test/run-suite.sh (IPVFS_BUILDDIR unset)}"
b=$IPVFS_BUILDDIR
romio_a=$b/adio/romio/.libs/libromio.a
for f in "$romio_a" "$b/adio/romio/mpl/.libs/libmpl.a" "$b/adio/client/.libs/libipvfs-client.a" \
    "$b/common/.libs/libipvfs-common.a"; do
    [ -f "$f" ] || { echo "t_romio_errclass: $f is not built (make all)" >&2; exit 1; }
done
MPICC=${MPICC:-mpicc}
MPIEXEC=${MPIEXEC:-mpiexec}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/t_romio_errclass.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

cat > "$tmp/errclass.c" <<'EOC'
#include <mpi.h>
#include <stdio.h>
#include <string.h>

/* ROMIO's (adio/include/adioi.h); the test needs nothing else of it */
int MPIO_Err_create_code(int lastcode, int fatal, const char fcname[], int line, int error_class,
                         const char generic_msg[], const char specific_msg[], ...);

static int errs;

static void check(int error_class, int want_class)
{
    char text[MPI_MAX_ERROR_STRING] = "";
    int code, cls = -1, len = 0;

    code = MPIO_Err_create_code(MPI_SUCCESS, 0, "TEST_CALL", __LINE__, error_class, "**io",
                                "**fail %s", "what the driver said");
    if (MPI_Error_class(code, &cls) != MPI_SUCCESS ||
        MPI_Error_string(code, text, &len) != MPI_SUCCESS) {
        printf("class %d: code %d has no class or text\n", error_class, code);
        errs++;
        return;
    }
    printf("class %d: code %d, class %d: %s\n", error_class, code, cls, text);
    if (cls != want_class) {
        printf("  class %d, expected %d\n", cls, want_class);
        errs++;
    }
    if (strstr(text, "what the driver said") == NULL || strstr(text, "TEST_CALL") == NULL) {
        printf("  the text lost the message or the call's name\n");
        errs++;
    }
}

int main(int argc, char **argv)
{
    static const int bad[] = { -1, MPI_SUCCESS - 2, 79, 127, 128, 9999, 1 << 20 };

    if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 1;
    check(MPI_ERR_ACCESS, MPI_ERR_ACCESS);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        check(bad[i], MPI_ERR_IO);
    printf(errs ? " Found %d errors\n" : " No Errors\n", errs);
    MPI_Finalize();
    return errs != 0;
}
EOC
# the archives' private symbols: a static link, in dependency order
"$MPICC" -O1 -Wall -Wextra -Werror -o "$tmp/errclass" "$tmp/errclass.c" "$romio_a" \
    "$b/adio/client/.libs/libipvfs-client.a" "$b/common/.libs/libipvfs-common.a" \
    "$b/adio/romio/mpl/.libs/libmpl.a" -lpthread -ldl -lm
"$MPIEXEC" -n 1 "$tmp/errclass"
echo "t_romio_errclass: passed"
