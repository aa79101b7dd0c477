/* Failures must come back as MPI errors with a clear message, in time.
 *
 *   e2e_errors open PATH TEXT SECONDS
 *       MPI_File_open(PATH) must fail on every rank within SECONDS, with an
 *       error string containing TEXT.
 *   e2e_errors midway PATH TEXT SECONDS COMMAND
 *       opens PATH and writes; rank 0 runs COMMAND (which stops the
 *       servers); then a write and a read must fail likewise, and so must
 *       a collective write and read through an interleaved view on every
 *       rank, aggregator (cb_nodes 2) or not.  Every access spans two
 *       stripe units, so it reaches two I/O nodes where there are:
 *       stopping any one of them must fail every rank.
 */
#include "e2e_util.h"

#include <time.h>

E2E_GLOBALS;

#define IPVFS_TEST_STRIPE (64 << 10) /* the default stripe unit */

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Checks that rc is an error carrying text, seen within limit seconds. */
static void expect_error(const char *what, int rc, double took, const char *text, double limit)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;

    if (rc == MPI_SUCCESS) {
        E2E_FAIL("%s succeeded", what);
        return;
    }
    MPI_Error_string(rc, s, &len);
    printf("rank %d: %s failed after %.2f s: %s\n", e2e_rank, what, took, s);
    E2E_CHECK(strstr(s, text) != NULL, "%s: message lacks \"%s\"", what, text);
    E2E_CHECK(took <= limit, "%s took %.2f s (limit %.0f s)", what, took, limit);
}

/* A second handle on path whose view interleaves the ranks' 1000-byte
 * blocks, so that collective calls take the two-phase path with 2
 * aggregators; set up while the servers still answer. */
static void open_interleaved(const char *path, MPI_File *fh)
{
    MPI_Datatype blk, ftype;
    MPI_Info info;

    E2E_MPI(MPI_Info_create(&info));
    E2E_MPI(MPI_Info_set(info, "cb_nodes", "2"));
    E2E_MPI(MPI_Info_set(info, "cb_config_list", "*:*"));
    E2E_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, info, fh));
    E2E_MPI(MPI_Type_contiguous(1000, MPI_BYTE, &blk));
    E2E_MPI(MPI_Type_create_resized(blk, 0, 1000 * (MPI_Aint) e2e_nprocs, &ftype));
    E2E_MPI(MPI_Type_commit(&ftype));
    E2E_MPI(MPI_File_set_view(*fh, 1000 * (MPI_Offset) e2e_rank, MPI_BYTE, ftype, "native",
                              MPI_INFO_NULL));
    MPI_Type_free(&ftype);
    MPI_Type_free(&blk);
    MPI_Info_free(&info);
}

/* write_at_all and read_at_all through that view: every rank, aggregator
 * or not, must fail alike.  View offset 16000 is file offset 64000 for
 * rank 0: the access crosses the first stripe-unit boundary. */
static void collective_errors(MPI_File fh, char *buf, const char *text, double limit)
{
    double t0 = now();
    int rc = MPI_File_write_at_all(fh, 16000, buf, 4000, MPI_BYTE, MPI_STATUS_IGNORE);

    expect_error("write_at_all", rc, now() - t0, text, limit);
    t0 = now();
    rc = MPI_File_read_at_all(fh, 16000, buf, 4000, MPI_BYTE, MPI_STATUS_IGNORE);
    expect_error("read_at_all", rc, now() - t0, text, limit);
}

int main(int argc, char **argv)
{
    MPI_File fh = MPI_FILE_NULL;
    static char buf[2 * IPVFS_TEST_STRIPE] = "some data";
    MPI_File fhc = MPI_FILE_NULL;
    MPI_Status st;
    double t0, limit;
    int rc;

    e2e_init(&argc, &argv);
    if (argc < 5 || (strcmp(argv[1], "midway") == 0 && argc < 6)) {
        if (e2e_rank == 0)
            fprintf(stderr, "usage: e2e_errors open|midway PATH TEXT SECONDS [COMMAND]\n");
        MPI_Finalize();
        return 2;
    }
    limit = atof(argv[4]);
    if (strcmp(argv[1], "open") == 0) {
        t0 = now();
        rc = MPI_File_open(MPI_COMM_WORLD, argv[2], MPI_MODE_CREATE | MPI_MODE_RDWR,
                           MPI_INFO_NULL, &fh);
        expect_error("open", rc, now() - t0, argv[3], limit);
        if (rc == MPI_SUCCESS)
            MPI_File_close(&fh);
        return e2e_finish("e2e_errors open");
    }
    E2E_MPI(MPI_File_open(MPI_COMM_WORLD, argv[2], MPI_MODE_CREATE | MPI_MODE_RDWR,
                          MPI_INFO_NULL, &fh));
    E2E_MPI(MPI_File_write_at(fh, (MPI_Offset)sizeof(buf) * e2e_rank, buf, sizeof(buf), MPI_BYTE, &st));
    open_interleaved(argv[2], &fhc);
    MPI_Barrier(MPI_COMM_WORLD);
    if (e2e_rank == 0)
        E2E_CHECK(system(argv[5]) == 0, "command %s failed", argv[5]);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = now();
    rc = MPI_File_write_at(fh, (MPI_Offset)sizeof(buf) * e2e_rank, buf, sizeof(buf), MPI_BYTE, &st);
    expect_error("write", rc, now() - t0, argv[3], limit);
    t0 = now();
    rc = MPI_File_read_at(fh, 0, buf, sizeof(buf), MPI_BYTE, &st);
    expect_error("read", rc, now() - t0, argv[3], limit);
    collective_errors(fhc, buf, argv[3], limit);
    MPI_File_close(&fhc);
    MPI_File_close(&fh);
    return e2e_finish("e2e_errors midway");
}
