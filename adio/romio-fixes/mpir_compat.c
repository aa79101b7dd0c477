/*
 * iPVFS replacements, on public MPI calls, for the two MPICH-internal
 * functions that ROMIO calls when it is compiled against MPICH's mpi.h but
 * linked outside libmpich (which does not export them).
 *
 *   MPIR_Get_node_id        mpi-io/mpir_cst_filesys.c
 *   MPIR_Datatype_iscontig  adio/common/iscontig.c (the MPICH branch)
 *
 * Built into libromio by scripts/build-romio.sh (ipvfs-fixes/Makefile.mk);
 * the export list of libipvfs-romio.so keeps both private.
 */

#include "adio.h"

int MPIR_Get_node_id(MPI_Comm comm, int rank, int *id);
void MPIR_Datatype_iscontig(MPI_Datatype datatype, int *flag);

/* Node id of the calling process: the rank in COMM of the lowest rank of
 * COMM that shares memory with it.  Collective over COMM, like its only
 * caller; RANK must be the caller's own rank there. */
int MPIR_Get_node_id(MPI_Comm comm, int rank, int *id)
{
    MPI_Comm node;
    int leader = rank, err, err2;

    err = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    if (err != MPI_SUCCESS) {
        *id = rank;
        return err;
    }
    /* the key is RANK, so rank 0 of NODE is the lowest rank of COMM on it */
    err = MPI_Bcast(&leader, 1, MPI_INT, 0, node);
    err2 = MPI_Comm_free(&node);
    *id = (err == MPI_SUCCESS) ? leader : rank;
    return (err != MPI_SUCCESS) ? err : err2;
}

/* Type-map facts used by in_order_contig(). */
struct tinfo {
    MPI_Count size;             /* bytes of data */
    MPI_Count lb, extent;       /* MPI_Type_get_extent_x */
    MPI_Count true_lb, true_extent;
};

static int type_info(MPI_Datatype t, struct tinfo *ti)
{
    if (MPI_Type_size_x(t, &ti->size) != MPI_SUCCESS ||
        MPI_Type_get_extent_x(t, &ti->lb, &ti->extent) != MPI_SUCCESS ||
        MPI_Type_get_true_extent_x(t, &ti->true_lb, &ti->true_extent) != MPI_SUCCESS)
        return 0;
    return ti->size != MPI_UNDEFINED && ti->extent != MPI_UNDEFINED &&
        ti->true_extent != MPI_UNDEFINED;
}

/* Releases what MPI_Type_get_contents returned. */
static void free_contents(MPI_Datatype *types, int n)
{
    int i, ni, na, nt, comb;

    for (i = 0; i < n; i++) {
        if (MPI_Type_get_envelope(types[i], &ni, &na, &nt, &comb) == MPI_SUCCESS &&
            comb != MPI_COMBINER_NAMED)
            MPI_Type_free(&types[i]);
    }
}

static int in_order_contig(MPI_Datatype t);

/* A block of COUNT elements of type T at byte displacement DISP: is it one
 * run of bytes in type-map order?  If so *START and *LEN give the run. */
static int block_run(MPI_Datatype t, MPI_Count count, MPI_Count disp,
                     MPI_Count *start, MPI_Count *len)
{
    struct tinfo ti;

    if (!type_info(t, &ti) || !in_order_contig(t))
        return 0;
    if (count > 1 && ti.extent != ti.size)
        return 0;
    *start = disp + ti.true_lb;
    *len = count * ti.size;
    return 1;
}

/* Blocks in order: each non-empty block must start where the last one
 * ended.  Returns 0 as soon as one does not. */
struct runs {
    int any;
    MPI_Count end;
};

static int add_run(struct runs *r, MPI_Datatype t, MPI_Count count, MPI_Count disp)
{
    MPI_Count start, len;

    if (count == 0)
        return 1;
    if (!block_run(t, count, disp, &start, &len))
        return 0;
    if (len == 0)
        return 1;
    if (r->any && start != r->end)
        return 0;
    r->any = 1;
    r->end = start + len;
    return 1;
}

/* Is the data of one element of T a single run of bytes whose type-map
 * order is increasing address order?  Answers "no" when unsure: ROMIO
 * then takes its general (flattening) path, which is always correct. */
static int in_order_contig(MPI_Datatype t)
{
    int ni, na, nt, comb, i, ok = 0;
    int *ints = NULL;
    MPI_Aint *adds = NULL;
    MPI_Datatype *types = NULL;
    struct tinfo child;
    struct runs r = { 0, 0 };

    if (MPI_Type_get_envelope(t, &ni, &na, &nt, &comb) != MPI_SUCCESS)
        return 0;
    if (comb == MPI_COMBINER_NAMED)
        return 1;
    switch (comb) {
        case MPI_COMBINER_DUP:
        case MPI_COMBINER_RESIZED:
        case MPI_COMBINER_CONTIGUOUS:
        case MPI_COMBINER_VECTOR:
        case MPI_COMBINER_HVECTOR:
        case MPI_COMBINER_INDEXED:
        case MPI_COMBINER_HINDEXED:
        case MPI_COMBINER_INDEXED_BLOCK:
        case MPI_COMBINER_HINDEXED_BLOCK:
        case MPI_COMBINER_STRUCT:
            break;
        default:
            return 0;
    }
    ints = ADIOI_Malloc((ni + 1) * sizeof(*ints));
    adds = ADIOI_Malloc((na + 1) * sizeof(*adds));
    types = ADIOI_Malloc((nt + 1) * sizeof(*types));
    if (MPI_Type_get_contents(t, ni, na, nt, ints, adds, types) != MPI_SUCCESS) {
        nt = 0;
        goto out;
    }
    if (!type_info(types[0], &child))
        goto out;
    switch (comb) {
        case MPI_COMBINER_DUP:
        case MPI_COMBINER_RESIZED:
            ok = in_order_contig(types[0]);
            break;
        case MPI_COMBINER_CONTIGUOUS:
            ok = add_run(&r, types[0], ints[0], 0);
            break;
        case MPI_COMBINER_VECTOR:      /* count, blocklength, stride */
            ok = 1;
            for (i = 0; ok && i < ints[0]; i++)
                ok = add_run(&r, types[0], ints[1], (MPI_Count) i * ints[2] * child.extent);
            break;
        case MPI_COMBINER_HVECTOR:     /* count, blocklength; stride in adds */
            ok = 1;
            for (i = 0; ok && i < ints[0]; i++)
                ok = add_run(&r, types[0], ints[1], (MPI_Count) i * adds[0]);
            break;
        case MPI_COMBINER_INDEXED:     /* count, blocklengths[], displs[] */
            ok = 1;
            for (i = 0; ok && i < ints[0]; i++)
                ok = add_run(&r, types[0], ints[1 + i],
                             (MPI_Count) ints[1 + ints[0] + i] * child.extent);
            break;
        case MPI_COMBINER_HINDEXED:    /* count, blocklengths[]; displs in adds */
            ok = 1;
            for (i = 0; ok && i < ints[0]; i++)
                ok = add_run(&r, types[0], ints[1 + i], adds[i]);
            break;
        case MPI_COMBINER_INDEXED_BLOCK:       /* count, blocklength, displs[] */
            ok = 1;
            for (i = 0; ok && i < ints[0]; i++)
                ok = add_run(&r, types[0], ints[1], (MPI_Count) ints[2 + i] * child.extent);
            break;
        case MPI_COMBINER_HINDEXED_BLOCK:      /* count, blocklength; displs in adds */
            ok = 1;
            for (i = 0; ok && i < ints[0]; i++)
                ok = add_run(&r, types[0], ints[1], adds[i]);
            break;
        case MPI_COMBINER_STRUCT:      /* count, blocklengths[]; displs, types[] */
            ok = 1;
            for (i = 0; ok && i < ints[0]; i++)
                ok = add_run(&r, types[i], ints[1 + i], adds[i]);
            break;
    }
  out:
    free_contents(types, nt);
    ADIOI_Free(ints);
    ADIOI_Free(adds);
    ADIOI_Free(types);
    return ok;
}

/* MPICH's notion: the type is contiguous when one element is a single run
 * of bytes in type-map order and the element's extent is its size (so that
 * consecutive elements continue the run).  ROMIO's caller additionally
 * treats a positive true lower bound as non-contiguous. */
void MPIR_Datatype_iscontig(MPI_Datatype datatype, int *flag)
{
    struct tinfo ti;

    *flag = 0;
    if (!type_info(datatype, &ti))
        return;
    if (ti.extent != ti.size || ti.true_extent != ti.size)
        return;
    *flag = in_order_contig(datatype);
}
