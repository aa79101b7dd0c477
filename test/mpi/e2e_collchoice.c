/* Overlapping collective writes keep their MPI result whichever way the
 * collective path goes (t_e2e_collchoice.sh):
 *
 *   e2e_collchoice PREFIX [--cb automatic|enable|disable] [--rounds N] [--regular 1]
 *                  [--disjoint-first N]
 *
 * Every rank writes, in one MPI_File_write_at_all through an hindexed
 * view, its own private pieces and the same shared pieces as every other
 * rank, with data of its own in them.  Rank 0's private part is large
 * (2048 pieces), the others' tiny, so that independent list requests of
 * rank 0 would reach the shared pieces last.  Without atomic mode MPI
 * leaves the winner of overlapping bytes to the implementation; ours (the
 * two-phase path that the choice sends overlapping writes to, like ROMIO's)
 * gives each shared byte the data of the highest rank, with no piece torn
 * between ranks.  The check: private pieces hold their rank's data, every
 * shared piece the last rank's, each of N rounds with new data.
 *
 * --disjoint-first N: before the overlapping write, the same file handle
 * takes N collective writes of one 64 KiB block per rank, disjoint, past
 * the pieces: the choice sends them each rank's own way, so the
 * overlapping write that follows runs its list I/O while the ranks'
 * figures are exchanged (ad_ipvfs_collpick.c), then finds the overlap and
 * must write two-phase after all, over what the list I/O left. */
#include "e2e_util.h"

#include <stdlib.h>
#include <string.h>

E2E_GLOBALS;

#define PIECE 1024
#define BIG 2048                /* rank 0's private pieces */
#define SMALL 4                 /* the others' */
#define SHARED 64               /* shared pieces */
#define PRIV_SPAN ((uint64_t) BIG * 2 * PIECE)  /* rank 0's private span */
#define SHARED_AT (PRIV_SPAN + 64ull * SMALL * 2 * PIECE)

/* --regular: each rank's pieces are one arithmetic progression (the
 * decision then learns them from its first allgather, no second one):
 * rank 0's 2048 private pieces and then the shared ones, 1 KiB every
 * 2 KiB, the other ranks the shared ones only. */
static int regular;
static int disjoint_first;

static uint64_t shared_at(void)
{
    return regular ? PRIV_SPAN : SHARED_AT;
}

static int private_pieces(int r)
{
    return r == 0 ? BIG : regular ? 0 : SMALL;
}

/* File offset of piece k of rank r's view (private ones first). */
static uint64_t piece_off(int r, int k, int nprivate)
{
    if (k >= nprivate)
        return shared_at() + (uint64_t) (k - nprivate) * 2 * PIECE;
    if (r == 0)
        return (uint64_t) k * 2 * PIECE;
    return PRIV_SPAN + ((uint64_t) r * SMALL + (uint64_t) k) * 2 * PIECE;
}

/* --disjoint-first: one 64 KiB block per rank per call, from byte from on
 * (the file's view is the bytes). */
static void disjoint_writes(MPI_File fh, uint64_t from, unsigned seed)
{
    const int block = 64 << 10;
    unsigned char *mem = malloc(block);

    E2E_CHECK(mem != NULL, "out of memory");
    for (int i = 0; mem && i < disjoint_first; i++) {
        uint64_t off = from + ((uint64_t) i * (uint64_t) e2e_nprocs + (uint64_t) e2e_rank) * block;

        e2e_fill(mem, off, block, seed);
        E2E_MPI(MPI_File_write_at_all(fh, (MPI_Offset) off, mem, block, MPI_BYTE,
                                      MPI_STATUS_IGNORE));
    }
    free(mem);
}

static int one_round(const char *prefix, MPI_Info hints, unsigned seed)
{
    int nprivate = private_pieces(e2e_rank), n = nprivate + SHARED, bad = 0;
    int *lens = malloc((size_t) n * sizeof(int));
    MPI_Aint *displs = malloc((size_t) n * sizeof(MPI_Aint));
    unsigned char *mem = malloc((size_t) n * PIECE), *back = NULL;
    MPI_Datatype ftype;
    MPI_File fh;
    char path[512];
    uint64_t end = shared_at() + (uint64_t) SHARED * 2 * PIECE;

    E2E_CHECK(lens && displs && mem, "out of memory");
    if (!lens || !displs || !mem)
        return 1;
    for (int k = 0; k < n; k++) {
        uint64_t off = piece_off(e2e_rank, k, nprivate);

        lens[k] = PIECE;
        displs[k] = (MPI_Aint) off;
        e2e_fill(mem + (size_t) k * PIECE, off, PIECE,
                 k < nprivate ? seed : seed + 1 + (unsigned) e2e_rank);
    }
    snprintf(path, sizeof(path), "%s-%u", prefix, seed);
    E2E_MPI(MPI_Type_create_hindexed(n, lens, displs, MPI_BYTE, &ftype));
    E2E_MPI(MPI_Type_commit(&ftype));
    E2E_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, hints, &fh));
    disjoint_writes(fh, end, seed);
    E2E_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, ftype, "native", hints));
    E2E_MPI(MPI_File_write_at_all(fh, 0, mem, n * PIECE, MPI_BYTE, MPI_STATUS_IGNORE));
    E2E_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", hints));
    E2E_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (e2e_rank == 0 && (back = calloc(end, 1)) != NULL) {
        E2E_MPI(MPI_File_read_at(fh, 0, back, (int) end, MPI_BYTE, MPI_STATUS_IGNORE));
        for (int r = 0; r < e2e_nprocs; r++)
            for (int k = 0; k < private_pieces(r); k++) {
                uint64_t off = piece_off(r, k, private_pieces(r));

                if (e2e_verify(back + off, off, PIECE, seed) >= 0)
                    bad++;
            }
        for (int k = 0; k < SHARED; k++) {
            uint64_t off = shared_at() + (uint64_t) k * 2 * PIECE;

            if (e2e_verify(back + off, off, PIECE, seed + (unsigned) e2e_nprocs) >= 0) {
                if (bad++ < 3)
                    E2E_FAIL("round %u: shared piece %d at %llu does not hold the last "
                             "rank's data", seed, k, (unsigned long long) off);
            }
        }
        E2E_CHECK(bad == 0, "round %u: %d wrong pieces", seed, bad);
    }
    E2E_CHECK(e2e_rank != 0 || back, "out of memory for the read back");
    E2E_MPI(MPI_File_close(&fh));
    MPI_Type_free(&ftype);
    free(back);
    free(mem);
    free(displs);
    free(lens);
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Info hints;
    int rounds = 5;

    e2e_init(&argc, &argv);
    if (argc < 2) {
        if (e2e_rank == 0)
            fprintf(stderr, "usage: e2e_collchoice PREFIX [--cb MODE] [--rounds N] "
                    "[--regular 1] [--disjoint-first N]\n");
        MPI_Finalize();
        return 2;
    }
    MPI_Info_create(&hints);
    for (int i = 2; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--cb") == 0) {
            MPI_Info_set(hints, "romio_cb_write", argv[i + 1]);
            MPI_Info_set(hints, "romio_cb_read", argv[i + 1]);
        } else if (strcmp(argv[i], "--rounds") == 0) {
            rounds = atoi(argv[i + 1]);
        } else if (strcmp(argv[i], "--regular") == 0) {
            regular = atoi(argv[i + 1]);
        } else if (strcmp(argv[i], "--disjoint-first") == 0) {
            disjoint_first = atoi(argv[i + 1]);
        }
    }
    for (int i = 0; i < rounds; i++)
        one_round(argv[1], hints, 100u + 10u * (unsigned) i);
    MPI_Info_free(&hints);
    return e2e_finish("e2e_collchoice");
}
