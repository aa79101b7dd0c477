/* Data survival across server restarts and crashes.
 *
 *   e2e_persist write PATH SEED    each rank writes its block (odd sizes),
 *                                  then MPI_File_sync; exits without close
 *                                  when SEED is odd (the sync alone must do)
 *   e2e_persist write-close PATH SEED
 *                                  each rank writes its block, no sync, and
 *                                  closes (the close must make it durable)
 *   e2e_persist verify PATH SEED   every rank checks every block and size
 */
#include "e2e_util.h"

E2E_GLOBALS;

#define BLOCK ((MPI_Offset)(1 << 20) + 4099)

static void do_write(MPI_File fh, unsigned seed, int sync)
{
    unsigned char *buf = malloc((size_t)BLOCK);
    MPI_Offset off = BLOCK * e2e_rank + 5;
    MPI_Status st;

    e2e_fill(buf, (uint64_t)off, (size_t)BLOCK, seed);
    E2E_MPI(MPI_File_write_at_all(fh, off, buf, (int)BLOCK, MPI_BYTE, &st));
    if (sync)
        E2E_MPI(MPI_File_sync(fh));
    free(buf);
}

static void do_verify(MPI_File fh, unsigned seed)
{
    MPI_Offset total = BLOCK * e2e_nprocs + 5, size = 0;
    unsigned char *buf = malloc((size_t)total);
    MPI_Status st;
    int count = 0;

    E2E_MPI(MPI_File_get_size(fh, &size));
    E2E_CHECK(size == total, "size %lld, expected %lld", (long long)size, (long long)total);
    E2E_MPI(MPI_File_read_at(fh, 0, buf, (int)total, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &count);
    E2E_CHECK(count == (int)total, "read count %d", count);
    E2E_CHECK(e2e_first_nonzero(buf, 5) < 0, "head not zero");
    E2E_CHECK(e2e_verify(buf + 5, 5, (size_t)(total - 5), seed) < 0, "data differs");
    free(buf);
}

int main(int argc, char **argv)
{
    MPI_File fh = MPI_FILE_NULL;
    unsigned seed;
    int writing, closing;

    e2e_init(&argc, &argv);
    if (argc != 4) {
        if (e2e_rank == 0)
            fprintf(stderr, "usage: e2e_persist write|write-close|verify PATH SEED\n");
        MPI_Finalize();
        return 2;
    }
    closing = strcmp(argv[1], "write-close") == 0;
    writing = closing || strcmp(argv[1], "write") == 0;
    seed = (unsigned)atoi(argv[3]);
    E2E_MPI(MPI_File_open(MPI_COMM_WORLD, argv[2],
                          writing ? MPI_MODE_CREATE | MPI_MODE_RDWR : MPI_MODE_RDONLY,
                          MPI_INFO_NULL, &fh));
    if (e2e_failures == 0) {
        if (writing)
            do_write(fh, seed, !closing);
        else
            do_verify(fh, seed);
        if (!writing || closing || seed % 2 == 0)
            E2E_MPI(MPI_File_close(&fh));
    }
    return e2e_finish(writing ? "e2e_persist write" : "e2e_persist verify");
}
