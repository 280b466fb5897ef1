/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* comm_life: what a short-lived communicator costs, for one MPI library
 * (MPICH and Open MPI build the same source).
 *
 *   mpiexec -n P comm_life [-i ITERS] [-b BYTES] [-l LABEL] [-k K,K,...]
 *
 * For each K (0,1,2,4,8,16,64 by default) it times ITERS rounds of
 * MPI_Comm_dup(MPI_COMM_WORLD), K calls alternately of MPI_Allreduce
 * (MPI_SUM of BYTES, 8 by default, as MPI_INT) and MPI_Bcast of its result,
 * and MPI_Comm_free (results checked); rank 0 prints one CSV line
 *   label,calls,round_us,per_call_us
 * with the mean time of a round (the slowest process's, rounds separated
 * by a barrier) and, from K = 1, (round_us - round_us at K = 0) / K.
 * Libraries that set something up per communicator on its first
 * collectives (mpich-topo's engine, MPICH's release_gather, Open MPI's
 * coll_sm/han) pay it in round_us of small K; what a call costs once set
 * up is per_call_us of large K.  An application that creates a
 * communicator for a few calls (MPI_File_open's dup, a split per step)
 * sees the first. */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(void)
{
    fprintf(stderr, "usage: comm_life [-i ITERS] [-b BYTES] [-l LABEL] [-k K,K,...]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
}

int main(int argc, char **argv)
{
    int rank, size, iters = 200, bytes = 8, nk = 0, ks[32];
    const char *label = "mpi", *klist = "0,1,2,4,8,16,64";
    double base = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc)
            usage();
        if (!strcmp(argv[i], "-i"))
            iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-b"))
            bytes = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-l"))
            label = argv[++i];
        else if (!strcmp(argv[i], "-k"))
            klist = argv[++i];
        else
            usage();
    }
    if (iters < 1 || bytes < 4)
        usage();
    for (const char *s = klist; *s && nk < 32;) {
        ks[nk++] = atoi(s);
        s = strchr(s, ',');
        if (!s)
            break;
        s++;
    }

    int n = bytes / 4;
    int *in = malloc(n * sizeof(int)), *out = malloc(n * sizeof(int));
    for (int i = 0; i < n; i++)
        in[i] = rank + i;
    if (rank == 0)
        printf("label,calls,round_us,per_call_us\n");
    for (int x = 0; x < nk; x++) {
        double sum = 0;
        int bad = 0;
        /* one untimed round: lazy setup of the world itself */
        for (int it = -1; it < iters; it++) {
            MPI_Comm c;
            double t0, t, tmax;

            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            MPI_Comm_dup(MPI_COMM_WORLD, &c);
            for (int j = 0; j < ks[x]; j++) {
                if (j % 2 == 0)
                    MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, c);
                else
                    MPI_Bcast(out, n, MPI_INT, 0, c);
                bad |= out[n - 1] != size * (size - 1) / 2 + size * (n - 1);
            }
            MPI_Comm_free(&c);
            t = MPI_Wtime() - t0;
            MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            if (it >= 0)
                sum += tmax;
        }
        if (bad)
            fprintf(stderr, "comm_life: rank %d: wrong result\n", rank);
        if (rank == 0) {
            double round = sum / iters * 1e6;
            if (ks[x] == 0)
                base = round;
            if (ks[x] > 0 && x > 0 && ks[0] == 0)
                printf("%s,%d,%.2f,%.3f\n", label, ks[x], round, (round - base) / ks[x]);
            else
                printf("%s,%d,%.2f,\n", label, ks[x], round);
            fflush(stdout);
        }
    }
    free(in);
    free(out);
    MPI_Finalize();
    return 0;
}
