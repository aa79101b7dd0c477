/* h5_write: a parallel HDF5 program (HDF5's MPI-IO driver, collective
 * writes) for the tests of the files outside MPI: h5dump reads what it
 * wrote through the FUSE mount and through ipvfs-ctl cp.
 *
 *   h5_write FILE ROWS COLS
 *
 * Writes dataset /grid, ROWS x COLS 32-bit integers, value
 * row * 1000 + col, each rank a block of rows (collective), and an
 * attribute "ranks" with the number of ranks. */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define H5_CHECK(call, what) \
    do { if ((call) < 0) { fprintf(stderr, "h5_write: %s failed\n", what); MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)

int main(int argc, char **argv)
{
    hsize_t dims[2], start[2], count[2];
    hid_t fapl, file, space, mem, dset, dxpl, aspace, attr;
    int rank, nprocs, *buf;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc != 4) {
        if (rank == 0)
            fprintf(stderr, "usage: h5_write FILE ROWS COLS\n");
        MPI_Finalize();
        return 2;
    }
    dims[0] = (hsize_t)atoll(argv[2]);
    dims[1] = (hsize_t)atoll(argv[3]);
    start[0] = dims[0] * (hsize_t)rank / (hsize_t)nprocs;
    count[0] = dims[0] * (hsize_t)(rank + 1) / (hsize_t)nprocs - start[0];
    start[1] = 0;
    count[1] = dims[1];
    buf = malloc(count[0] * count[1] * sizeof(*buf) + 1);
    if (!buf)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (hsize_t i = 0; i < count[0]; i++)
        for (hsize_t j = 0; j < count[1]; j++)
            buf[i * count[1] + j] = (int)((start[0] + i) * 1000 + j);

    H5_CHECK(fapl = H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate");
    H5_CHECK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL), "H5Pset_fapl_mpio");
    H5_CHECK(file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl), "H5Fcreate");
    H5_CHECK(space = H5Screate_simple(2, dims, NULL), "H5Screate_simple");
    H5_CHECK(dset = H5Dcreate2(file, "grid", H5T_STD_I32LE, space, H5P_DEFAULT, H5P_DEFAULT,
                               H5P_DEFAULT), "H5Dcreate2");
    H5_CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL), "hyperslab");
    H5_CHECK(mem = H5Screate_simple(2, count, NULL), "H5Screate_simple");
    H5_CHECK(dxpl = H5Pcreate(H5P_DATASET_XFER), "H5Pcreate");
    H5_CHECK(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE), "H5Pset_dxpl_mpio");
    H5_CHECK(H5Dwrite(dset, H5T_NATIVE_INT, mem, space, dxpl, buf), "H5Dwrite");
    H5_CHECK(aspace = H5Screate(H5S_SCALAR), "H5Screate");
    H5_CHECK(attr = H5Acreate2(dset, "ranks", H5T_STD_I32LE, aspace, H5P_DEFAULT, H5P_DEFAULT),
             "H5Acreate2");
    H5_CHECK(H5Awrite(attr, H5T_NATIVE_INT, &nprocs), "H5Awrite");
    H5_CHECK(H5Aclose(attr), "H5Aclose");
    H5_CHECK(H5Sclose(aspace), "H5Sclose");
    H5_CHECK(H5Pclose(dxpl), "H5Pclose");
    H5_CHECK(H5Sclose(mem), "H5Sclose");
    H5_CHECK(H5Dclose(dset), "H5Dclose");
    H5_CHECK(H5Sclose(space), "H5Sclose");
    H5_CHECK(H5Fclose(file), "H5Fclose");
    H5_CHECK(H5Pclose(fapl), "H5Pclose");
    free(buf);
    MPI_Finalize();
    return 0;
}
