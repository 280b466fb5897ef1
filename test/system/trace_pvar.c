/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Reads the MPI_T counter coll_algorithm_calls_<COLL> around N calls of
 * COLL and prints "pvar <algorithm> <calls>" for every algorithm whose count
 * changed, naming the entries through the pvar's enumeration.
 *   trace_pvar [i]allgather|[i]bcast|[i]allreduce N  (nonblocking: MPI_I<coll>
 *   then MPI_Wait, after one persistent init that sets the engine up) */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(const char *what, int err)
{
    fprintf(stderr, "trace_pvar: %s failed (%d)\n", what, err);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
    int provided, rank, size, idx, err, count, n, ncalls;
    char pvname[128], ename[128];
    MPI_T_pvar_session session;
    MPI_T_pvar_handle handle;
    MPI_T_enum en;
    unsigned long long *before, *after;
    int buf[64], out[64 * 64];

    if (argc != 3) {
        fprintf(stderr, "usage: trace_pvar [i]allgather|[i]bcast|[i]allreduce N\n");
        return 2;
    }
    ncalls = atoi(argv[2]);
    MPI_Init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 64)
        fail("more than 64 processes", 0);

    snprintf(pvname, sizeof(pvname), "coll_algorithm_calls_%s", argv[1]);
    if ((err = MPI_T_pvar_get_index(pvname, MPI_T_PVAR_CLASS_COUNTER, &idx)) != MPI_SUCCESS)
        fail("MPI_T_pvar_get_index", err);
    {
        char name[128], desc[512];
        int nl = sizeof(name), dl = sizeof(desc), verb, varclass, bind, ro, cont, atomic;
        MPI_Datatype dt;
        if ((err = MPI_T_pvar_get_info(idx, name, &nl, &verb, &varclass, &dt, &en, desc, &dl,
                                       &bind, &ro, &cont, &atomic)) != MPI_SUCCESS)
            fail("MPI_T_pvar_get_info", err);
        if (en == MPI_T_ENUM_NULL || dt != MPI_UNSIGNED_LONG_LONG)
            fail("pvar without an enumeration or of an unexpected type", 0);
    }
    if (argv[1][0] == 'i') {
        /* a nonblocking call uses the engine once it is set up on the
         * communicator: a persistent call's init sets it up (and counts
         * once, before the counters are read) */
        MPI_Request req;
        if (!strcmp(argv[1], "iallgather"))
            MPI_Allgather_init(buf, 64, MPI_INT, out, 64, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL,
                               &req);
        else if (!strcmp(argv[1], "ibcast"))
            MPI_Bcast_init(buf, 64, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
        else
            MPI_Allreduce_init(buf, out, 64, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                               &req);
        MPI_Request_free(&req);
    }
    MPI_T_pvar_session_create(&session);
    if ((err = MPI_T_pvar_handle_alloc(session, idx, NULL, &handle, &count)) != MPI_SUCCESS)
        fail("MPI_T_pvar_handle_alloc", err);
    before = calloc(count, sizeof(*before));
    after = calloc(count, sizeof(*after));
    MPI_T_pvar_read(session, handle, before);

    for (int i = 0; i < 64; i++)
        buf[i] = rank + i;
    for (int i = 0; i < ncalls; i++) {
        MPI_Request req = MPI_REQUEST_NULL;
        if (!strcmp(argv[1], "allgather"))
            MPI_Allgather(buf, 64, MPI_INT, out, 64, MPI_INT, MPI_COMM_WORLD);
        else if (!strcmp(argv[1], "bcast"))
            MPI_Bcast(buf, 64, MPI_INT, 0, MPI_COMM_WORLD);
        else if (!strcmp(argv[1], "allreduce"))
            MPI_Allreduce(buf, out, 64, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        else if (!strcmp(argv[1], "iallgather"))
            MPI_Iallgather(buf, 64, MPI_INT, out, 64, MPI_INT, MPI_COMM_WORLD, &req);
        else if (!strcmp(argv[1], "ibcast"))
            MPI_Ibcast(buf, 64, MPI_INT, 0, MPI_COMM_WORLD, &req);
        else
            MPI_Iallreduce(buf, out, 64, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }

    MPI_T_pvar_read(session, handle, after);
    MPI_T_enum_get_info(en, &n, ename, &(int) { sizeof(ename) });
    if (rank == 0) {
        for (int i = 0; i < count && i < n; i++) {
            char item[128];
            int value, il = sizeof(item);
            MPI_T_enum_get_item(en, i, &value, item, &il);
            if (after[value] != before[value])
                printf("pvar %s %llu\n", item, after[value] - before[value]);
        }
    }
    MPI_T_pvar_handle_free(session, &handle);
    MPI_T_pvar_session_free(&session);
    free(before);
    free(after);
    MPI_T_finalize();
    MPI_Finalize();
    return 0;
}
