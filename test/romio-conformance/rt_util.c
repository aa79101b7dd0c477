/* Helper of the conformance harness (test/romio-conformance/run.sh):
 *   rt_util which           prints the library that provides MPI_File_open
 *                           and PMPI_File_write_all (the preloaded ROMIO
 *                           must interpose both)
 *   rt_util delete FILE...  MPI_File_delete of each FILE through its driver;
 *                           a file that does not exist is no error */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static void which(const char *sym, void *addr)
{
    Dl_info info;

    printf("%s %s\n", sym, dladdr(addr, &info) && info.dli_fname ? info.dli_fname : "?");
}

int main(int argc, char **argv)
{
    int rank, rc = 0, cls;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0 && argc == 2 && strcmp(argv[1], "which") == 0) {
        which("MPI_File_open", (void *) &MPI_File_open);
        which("PMPI_File_write_all", (void *) &PMPI_File_write_all);
    } else if (rank == 0 && argc >= 2 && strcmp(argv[1], "delete") == 0) {
        MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
        for (int i = 2; i < argc; i++) {
            int err = MPI_File_delete(argv[i], MPI_INFO_NULL);

            if (err != MPI_SUCCESS && MPI_Error_class(err, &cls) == MPI_SUCCESS &&
                cls != MPI_ERR_NO_SUCH_FILE) {
                char msg[MPI_MAX_ERROR_STRING];
                int len = 0;

                MPI_Error_string(err, msg, &len);
                fprintf(stderr, "rt_util: cannot delete %s: %s\n", argv[i], msg);
                rc = 1;
            }
        }
    } else if (rank == 0) {
        fprintf(stderr, "usage: rt_util which | delete FILE...\n");
        rc = 2;
    }
    MPI_Finalize();
    return rc;
}
