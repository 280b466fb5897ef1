/*
 * Copyright (C) by the mpich-topo authors.
 *     See COPYRIGHT in top-level directory.
 */

/*
 * dropin.sh: parallel HDF5 (Debian's libhdf5-mpich, built against Debian's
 * MPICH) over this build.  All processes create one file through the MPI-IO
 * driver, write a 2-D dataset of doubles collectively, each a block of rows
 * (rows per process differ, so the blocks are uneven), write an attribute,
 * close, reopen and read it back collectively in another decomposition
 * (each process a block of columns of every row) and check every element
 * and the attribute.  HDF5 itself calls MPI_Bcast, MPI_Allreduce,
 * MPI_Allgather and MPI_Barrier on the file's communicator to agree on
 * metadata, and ROMIO's two-phase collective I/O calls MPI_Alltoall(v) and
 * MPI_Allreduce.  Prints " No Errors" on rank 0 when every process read
 * what was written.  Usage: dropin_hdf5 FILE
 */

#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define NCOLS 1000

/* the value every writer puts at row i, column j */
static double value(hsize_t i, hsize_t j)
{
    return (double) i * 4096.0 + (double) j + 0.25;
}

/* rows of process r: 10 + 3 r, so no two processes have the same count */
static hsize_t rows_of(int r)
{
    return 10 + 3 * (hsize_t) r;
}

int main(int argc, char **argv)
{
    int rank, size, errs = 0, all_errs;
    hsize_t nrows = 0, first = 0;
    herr_t st;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: %s FILE\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int r = 0; r < size; r++) {
        if (r == rank)
            first = nrows;
        nrows += rows_of(r);
    }

    /* write: rows [first, first + rows_of(rank)) */
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    hid_t file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (file < 0) {
        fprintf(stderr, "%d: H5Fcreate(%s) failed\n", rank, argv[1]);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    hsize_t dims[2] = { nrows, NCOLS };
    hid_t space = H5Screate_simple(2, dims, NULL);
    hid_t dset = H5Dcreate2(file, "grid", H5T_NATIVE_DOUBLE, space,
                            H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t wstart[2] = { first, 0 }, wcount[2] = { rows_of(rank), NCOLS };
    double *w = malloc(wcount[0] * NCOLS * sizeof(double));
    for (hsize_t i = 0; i < wcount[0]; i++)
        for (hsize_t j = 0; j < NCOLS; j++)
            w[i * NCOLS + j] = value(first + i, j);
    hid_t fsel = H5Scopy(space);
    H5Sselect_hyperslab(fsel, H5S_SELECT_SET, wstart, NULL, wcount, NULL);
    hid_t mspace = H5Screate_simple(2, wcount, NULL);
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
    st = H5Dwrite(dset, H5T_NATIVE_DOUBLE, mspace, fsel, dxpl, w);
    if (st < 0) {
        fprintf(stderr, "%d: collective H5Dwrite failed\n", rank);
        errs++;
    }
    int nprocs_attr = size;
    hid_t aspace = H5Screate(H5S_SCALAR);
    hid_t attr = H5Acreate2(dset, "nprocs", H5T_NATIVE_INT, aspace, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(attr, H5T_NATIVE_INT, &nprocs_attr);
    H5Aclose(attr);
    H5Sclose(aspace);
    H5Sclose(mspace);
    H5Sclose(fsel);
    H5Sclose(space);
    H5Dclose(dset);
    if (H5Fclose(file) < 0) {
        fprintf(stderr, "%d: H5Fclose failed\n", rank);
        errs++;
    }
    free(w);

    /* read back: columns [c0, c0 + nc) of every row, another decomposition */
    file = H5Fopen(argv[1], H5F_ACC_RDONLY, fapl);
    if (file < 0) {
        fprintf(stderr, "%d: H5Fopen(%s) failed\n", rank, argv[1]);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    dset = H5Dopen2(file, "grid", H5P_DEFAULT);
    space = H5Dget_space(dset);
    hsize_t got[2] = { 0, 0 };
    H5Sget_simple_extent_dims(space, got, NULL);
    if (got[0] != nrows || got[1] != NCOLS) {
        fprintf(stderr, "%d: dataset is %llu x %llu, expected %llu x %d\n", rank,
                (unsigned long long) got[0], (unsigned long long) got[1],
                (unsigned long long) nrows, NCOLS);
        errs++;
    }
    hsize_t c0 = (hsize_t) rank * NCOLS / size;
    hsize_t nc = (hsize_t) (rank + 1) * NCOLS / size - c0;
    hsize_t rstart[2] = { 0, c0 }, rcount[2] = { nrows, nc };
    double *rd = malloc((nrows * nc + 1) * sizeof(double));
    fsel = H5Scopy(space);
    H5Sselect_hyperslab(fsel, H5S_SELECT_SET, rstart, NULL, rcount, NULL);
    mspace = H5Screate_simple(2, rcount, NULL);
    for (hsize_t k = 0; k < nrows * nc; k++)
        rd[k] = -1.0;
    st = H5Dread(dset, H5T_NATIVE_DOUBLE, mspace, fsel, dxpl, rd);
    if (st < 0) {
        fprintf(stderr, "%d: collective H5Dread failed\n", rank);
        errs++;
    }
    for (hsize_t i = 0; i < nrows; i++)
        for (hsize_t j = 0; j < nc; j++)
            if (rd[i * nc + j] != value(i, c0 + j)) {
                if (errs < 5)
                    fprintf(stderr, "%d: grid[%llu][%llu] = %g, expected %g\n", rank,
                            (unsigned long long) i, (unsigned long long) (c0 + j),
                            rd[i * nc + j], value(i, c0 + j));
                errs++;
            }
    attr = H5Aopen(dset, "nprocs", H5P_DEFAULT);
    nprocs_attr = -1;
    H5Aread(attr, H5T_NATIVE_INT, &nprocs_attr);
    if (nprocs_attr != size) {
        fprintf(stderr, "%d: attribute nprocs = %d, expected %d\n", rank, nprocs_attr, size);
        errs++;
    }
    H5Aclose(attr);
    H5Sclose(mspace);
    H5Sclose(fsel);
    H5Sclose(space);
    H5Dclose(dset);
    H5Fclose(file);
    H5Pclose(dxpl);
    H5Pclose(fapl);
    free(rd);

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_File_delete(argv[1], MPI_INFO_NULL);
    MPI_Allreduce(&errs, &all_errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (all_errs == 0)
            printf(" No Errors\n");
        else
            printf(" Found %d errors\n", all_errs);
    }
    MPI_Finalize();
    return 0;
}
