/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* coll_bench: OSU-style latency benchmark for allgather, bcast and allreduce.
 *
 *   coll_bench -c allgather|bcast|allreduce [-m MIN] [-M MAX] [-i ITERS]
 *              [-w WARMUP] [-p block|shuffle|reverse] [-v] [-l LABEL]
 *
 * Sizes are bytes per process (allgather: each contribution; bcast and
 * allreduce: the message), doubling from MIN to MAX. Iterations shrink with
 * size (ITERS up to 8 KiB, then halved for every doubling, at least 5;
 * -i 0 -w 0 makes no calls at all, the baseline for counting network bytes).
 * Buffers change between iterations (the value depends on the iteration) so
 * that nothing can be skipped, and -v validates every result. -p runs on a
 * communicator whose ranks are shuffled (seeded) or reversed relative to
 * MPI_COMM_WORLD. Output: one CSV line per size,
 *   label,collective,placement,nprocs,bytes,iterations,min_us,avg_us,max_us,errors
 * where min/avg/max are over processes of each process' mean time per call.
 * The algorithm is whatever MPICH selects; switch it with the MPIR_CVAR_*
 * environment variables when launching (see bench/README.md). */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int iters_for(size_t bytes, int base)
{
    int it = base;
    if (base <= 0)
        return 0;       /* zero calls: baseline for traffic measurements */
    for (size_t b = 8192; b < bytes && it > 5; b *= 2)
        it /= 2;
    return it < 5 ? 5 : it;
}

static unsigned char pattern(int rank, size_t i, int iter)
{
    return (unsigned char) (rank * 29 + i * 7 + iter * 13 + (i >> 9));
}

int main(int argc, char **argv)
{
    const char *coll = "allgather", *placement = "block", *label = "run";
    size_t min = 1, max = 1 << 20;
    int base_iters = 200, warmup = 5, validate = 0, opt;
    int wrank, wsize, rank, size;
    MPI_Comm comm;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    while ((opt = getopt(argc, argv, "c:m:M:i:w:p:vl:")) != -1) {
        switch (opt) {
            case 'c': coll = optarg; break;
            case 'm': min = strtoull(optarg, NULL, 0); break;
            case 'M': max = strtoull(optarg, NULL, 0); break;
            case 'i': base_iters = atoi(optarg); break;
            case 'w': warmup = atoi(optarg); break;
            case 'p': placement = optarg; break;
            case 'v': validate = 1; break;
            case 'l': label = optarg; break;
            default:
                if (wrank == 0)
                    fprintf(stderr, "usage: coll_bench -c allgather|bcast|allreduce [-m MIN] "
                            "[-M MAX] [-i ITERS] [-w WARMUP] [-p block|shuffle|reverse] [-v] "
                            "[-l LABEL]\n");
                MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    int kind = !strcmp(coll, "allgather") ? 0 : !strcmp(coll, "bcast") ? 1 :
        !strcmp(coll, "allreduce") ? 2 : -1;
    if (kind < 0) {
        if (wrank == 0)
            fprintf(stderr, "coll_bench: unknown collective '%s'\n", coll);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (min < 1)
        min = 1;

    /* placement: the same seeded permutation on every process */
    int key = wrank;
    if (!strcmp(placement, "reverse")) {
        key = wsize - wrank;
    } else if (!strcmp(placement, "shuffle")) {
        int *perm = malloc(wsize * sizeof(int));
        for (int i = 0; i < wsize; i++)
            perm[i] = i;
        srand(2026);
        for (int i = wsize - 1; i > 0; i--) {
            int j = rand() % (i + 1), t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        key = perm[wrank];
        free(perm);
    } else if (strcmp(placement, "block")) {
        if (wrank == 0)
            fprintf(stderr, "coll_bench: unknown placement '%s'\n", placement);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_split(MPI_COMM_WORLD, 0, key, &comm);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);

    size_t rbytes = kind == 0 ? max * size : max;
    unsigned char *sbuf = malloc(max), *rbuf = malloc(rbytes);
    if (!sbuf || !rbuf) {
        fprintf(stderr, "coll_bench: out of memory for %zu bytes\n", rbytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(rbuf, 0, rbytes);

    for (size_t bytes = min; bytes <= max; bytes *= 2) {
        int iters = iters_for(bytes, base_iters);
        long errors = 0;
        double t = 0.0;
        /* allreduce works on ints, so round to whole ints */
        size_t n = kind == 2 ? (bytes + sizeof(int) - 1) / sizeof(int) : bytes;
        if (kind == 2 && n * sizeof(int) > max)
            break;
        for (int it = -warmup; it < iters; it++) {
            int root = kind == 1 ? (it < 0 ? 0 : it % size) : 0;
            if (kind == 2) {
                for (size_t i = 0; i < n; i++)
                    ((int *) sbuf)[i] = pattern(rank, i, it);
            } else if (kind == 1) {
                if (rank == root)
                    for (size_t i = 0; i < n; i++)
                        rbuf[i] = pattern(root, i, it);
            } else {
                for (size_t i = 0; i < n; i++)
                    sbuf[i] = pattern(rank, i, it);
            }
            MPI_Barrier(comm);
            double t0 = MPI_Wtime();
            if (kind == 0)
                MPI_Allgather(sbuf, (int) n, MPI_BYTE, rbuf, (int) n, MPI_BYTE, comm);
            else if (kind == 1)
                MPI_Bcast(rbuf, (int) n, MPI_BYTE, root, comm);
            else
                MPI_Allreduce(sbuf, rbuf, (int) n, MPI_INT, MPI_SUM, comm);
            double t1 = MPI_Wtime();
            if (it >= 0)
                t += t1 - t0;
            if (validate) {
                if (kind == 0) {
                    for (int r = 0; r < size; r++)
                        for (size_t i = 0; i < n; i++)
                            if (rbuf[r * n + i] != pattern(r, i, it)) {
                                errors++;
                                break;
                            }
                } else if (kind == 1) {
                    for (size_t i = 0; i < n; i++)
                        if (rbuf[i] != pattern(root, i, it)) {
                            errors++;
                            break;
                        }
                } else {
                    for (size_t i = 0; i < n; i++) {
                        int exp = 0;
                        for (int r = 0; r < size; r++)
                            exp += pattern(r, i, it);
                        if (((int *) rbuf)[i] != exp) {
                            errors++;
                            break;
                        }
                    }
                }
            }
        }
        double mean = iters ? t / iters * 1e6 : 0.0, tmin, tmax, tsum;
        long errsum;
        MPI_Reduce(&mean, &tmin, 1, MPI_DOUBLE, MPI_MIN, 0, comm);
        MPI_Reduce(&mean, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
        MPI_Reduce(&mean, &tsum, 1, MPI_DOUBLE, MPI_SUM, 0, comm);
        MPI_Reduce(&errors, &errsum, 1, MPI_LONG, MPI_SUM, 0, comm);
        if (rank == 0) {
            printf("%s,%s,%s,%d,%zu,%d,%.2f,%.2f,%.2f,%ld\n", label, coll, placement, size,
                   kind == 2 ? n * sizeof(int) : bytes, iters, tmin, tsum / size, tmax, errsum);
            fflush(stdout);
        }
    }

    free(sbuf);
    free(rbuf);
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return 0;
}
