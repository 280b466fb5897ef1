/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Many back-to-back allgathers, bcasts and allreduces on three communicators
 * at once (world, a dup of it, and a split in reversed order), with sizes
 * that cycle from 1 byte through odd sizes, 64 KiB + 1 and 1 MiB + 3, and
 * twice an iteration of about 20 MiB. The buffers are the same from one
 * iteration to the next (at a shifting offset), but their contents depend
 * on the iteration, the communicator, the rank and the index, so that stale
 * data left in a shared-memory segment, a chunk taken from the previous call
 * or from another communicator, or a cached buffer address all show. Every
 * iteration the three collectives run on different communicators, in a
 * rotating order, and are only checked after all of them have returned.
 * Some iterations also broadcast a vector datatype, and odd iterations
 * allgather in place. Meant to be run with the topo_pipeline algorithms
 * forced (and cliques, several leaders per node, small chunks); any
 * algorithm must pass it. */

#include "mpi.h"
#include "mpitest.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ITERS 200
#define GUARD 0xa5      /* byte pattern just past the end of every receive buffer */
#define MAX_OFFSET 64   /* buffers start up to this many bytes into their allocation */

#define SMALL_BIG ((MPI_Aint) 1024 * 1024 + 3)  /* "1 MiB + 3": used a few times */
#define HUGE_TOTAL ((MPI_Aint) 20 * 1024 * 1024)        /* the ~20 MiB iterations */
#define HUGE_BCAST ((MPI_Aint) 2 * 1024 * 1024 + 1)

enum { AG, BC, AR, NKINDS };
static const char *kind_name[NKINDS] = { "allgather", "bcast", "allreduce" };

#define NCOMMS 3
static MPI_Comm comms[NCOMMS];
static const char *comm_name[NCOMMS] = { "world", "dup", "reversed" };

static int errs = 0;

static void report(int it, int c, const char *what, MPI_Aint n, MPI_Aint at, long long got,
                   long long exp)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (errs < 10)
        fprintf(stderr, "[%d] iteration %d, %s, %s of %ld: element %ld is %lld, expected %lld\n",
                rank, it, comm_name[c], what, (long) n, (long) at, got, exp);
    errs++;
}

static int is_huge(int it)
{
    return it == ITERS / 2 - 1 || it == ITERS - 1;
}

/* Bytes for a call of this kind at this iteration: per process for
 * allgather, the message for bcast, the vector for allreduce. 1 MiB + 3
 * comes up for each kind only in the first iterations of every 64 (three
 * times in all), since a large bcast or allreduce is slow where processes
 * share cores. */
static MPI_Aint bytes_for(int it, int kind, int size)
{
    static const MPI_Aint cycle[8] = { 1, 13, 1001, 64 * 1024 + 1, 7, 4099, 255, SMALL_BIG };
    if (is_huge(it)) {
        if (kind == AG)
            return (HUGE_TOTAL / size) | 1;
        return kind == BC ? HUGE_BCAST : SMALL_BIG;
    }
    MPI_Aint b = cycle[(it + 3 * kind) % 8];
    if (b == SMALL_BIG && (it % 64 >= 8 || it >= 150))
        b = 12345;
    return b;
}

/* 32 well-mixed bits for (iteration, communicator, rank, index) */
static unsigned word(int it, int c, int rank, MPI_Aint i)
{
    unsigned x = (unsigned) i * 2654435761u;
    x ^= (unsigned) it * 40503u + (unsigned) rank * 9973u + (unsigned) c * 131071u + 0x5bd1e995u;
    x ^= x >> 15;
    x *= 0x2c1b3c6du;
    x ^= x >> 12;
    x *= 0x297a2d39u;
    x ^= x >> 15;
    return x;
}

static unsigned char pat(int it, int c, int rank, MPI_Aint i)
{
    return (unsigned char) word(it, c, rank, i);
}

static int guard_intact(const unsigned char *p)
{
    for (int k = 0; k < 8; k++)
        if (p[k] != GUARD)
            return 0;
    return 1;
}

/* ---- allreduce: the type and op change every iteration ---- */
enum { AR_UCHAR_SUM, AR_BYTE_BXOR, AR_INT_MAX, AR_DOUBLE_SUM, AR_VARIANTS };
static const char *ar_name[AR_VARIANTS] = {
    "allreduce unsigned char SUM", "allreduce byte BXOR", "allreduce int MAX",
    "allreduce double SUM"
};

static MPI_Aint ar_esize(int v)
{
    return v == AR_INT_MAX ? (MPI_Aint) sizeof(int) : v == AR_DOUBLE_SUM ? (MPI_Aint) sizeof(double) : 1;
}

/* contribution of rank at element i; ints and doubles as long long, doubles
 * integer-valued in [-1000, 1000] so that sums are exact */
static long long ar_value(int v, int it, int c, int rank, MPI_Aint i)
{
    unsigned w = word(it, c, rank, i);
    switch (v) {
        case AR_INT_MAX:
            return (long long) (w & 0x7fffffffu) - 0x40000000;
        case AR_DOUBLE_SUM:
            return (long long) (w % 2001) - 1000;
        default:
            return w & 0xff;
    }
}

static long long ar_expected(int v, int it, int c, int size, MPI_Aint i)
{
    long long e = ar_value(v, it, c, 0, i);
    for (int r = 1; r < size; r++) {
        long long x = ar_value(v, it, c, r, i);
        switch (v) {
            case AR_UCHAR_SUM:
                e = (e + x) & 0xff;
                break;
            case AR_BYTE_BXOR:
                e ^= x;
                break;
            case AR_INT_MAX:
                e = x > e ? x : e;
                break;
            default:
                e += x;
        }
    }
    return e;
}

static void ar_store(int v, void *buf, MPI_Aint i, long long x)
{
    if (v == AR_INT_MAX)
        ((int *) buf)[i] = (int) x;
    else if (v == AR_DOUBLE_SUM)
        ((double *) buf)[i] = (double) x;
    else
        ((unsigned char *) buf)[i] = (unsigned char) x;
}

static long long ar_load(int v, const void *buf, MPI_Aint i)
{
    if (v == AR_INT_MAX)
        return ((const int *) buf)[i];
    if (v == AR_DOUBLE_SUM) {
        double d = ((const double *) buf)[i];
        /* anything not an exact integer in range reads as a sentinel */
        return (d == (double) (long long) d && d > -1e9 && d < 1e9) ? (long long) d : -999999999;
    }
    return ((const unsigned char *) buf)[i];
}

/* ---- one call of the iteration, run first and checked afterwards ---- */
struct call {
    int kind, c, root, inplace, variant;
    MPI_Aint n;                 /* elements: per process for allgather */
    unsigned char *sbuf, *rbuf;
};

struct bufs {
    unsigned char *s, *r;
    size_t s_cap, r_cap;
};
static struct bufs kbuf[NKINDS];

static void start_call(struct call *k, int it)
{
    MPI_Comm comm = comms[k->c];
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Aint bytes = bytes_for(it, k->kind, size);
    /* a different address each iteration, 8-byte aligned for typed data */
    size_t off = k->kind == AR ? 8 * (size_t) (it % 4) : (size_t) ((it * 5) % MAX_OFFSET);
    unsigned char *s = kbuf[k->kind].s ? kbuf[k->kind].s + off : NULL;
    unsigned char *r = kbuf[k->kind].r + off;
    k->sbuf = s;
    k->rbuf = r;

    switch (k->kind) {
        case AG:
            k->n = bytes;
            k->inplace = it & 1;
            for (MPI_Aint i = 0; i < bytes; i++)
                s[i] = pat(it, k->c, rank, i);
            memset(r, 0xee, size * bytes);
            memset(r + size * bytes, GUARD, 8);
            if (k->inplace) {
                memcpy(r + rank * bytes, s, bytes);
                MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, (int) bytes, MPI_BYTE, comm);
            } else {
                MPI_Allgather(s, (int) bytes, MPI_BYTE, r, (int) bytes, MPI_BYTE, comm);
            }
            break;
        case BC:
            k->n = bytes;
            k->root = (it * 5 + k->c) % size;
            for (MPI_Aint i = 0; i < bytes; i++)
                r[i] = rank == k->root ? pat(it, k->c, k->root, i) : 0xee;
            memset(r + bytes, GUARD, 8);
            MPI_Bcast(r, (int) bytes, MPI_BYTE, k->root, comm);
            break;
        case AR:{
                int v = k->variant = it % AR_VARIANTS;
                MPI_Datatype dt[AR_VARIANTS] = { MPI_UNSIGNED_CHAR, MPI_BYTE, MPI_INT, MPI_DOUBLE };
                MPI_Op op[AR_VARIANTS] = { MPI_SUM, MPI_BXOR, MPI_MAX, MPI_SUM };
                MPI_Aint es = ar_esize(v);
                k->n = (bytes + es - 1) / es;
                k->inplace = it % 5 == 0;
                unsigned char *in = k->inplace ? r : s;
                for (MPI_Aint i = 0; i < k->n; i++)
                    ar_store(v, in, i, ar_value(v, it, k->c, rank, i));
                if (!k->inplace)
                    memset(r, 0xee, k->n * es);
                memset(r + k->n * es, GUARD, 8);
                MPI_Allreduce(k->inplace ? MPI_IN_PLACE : s, r, (int) k->n, dt[v], op[v], comm);
                break;
            }
    }
}

static void check_call(const struct call *k, int it)
{
    MPI_Comm comm = comms[k->c];
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    const unsigned char *s = k->sbuf, *r = k->rbuf;
    char what[96];

    switch (k->kind) {
        case AG:
            snprintf(what, sizeof(what), "%sallgather", k->inplace ? "in-place " : "");
            for (int p = 0; p < size; p++)
                for (MPI_Aint i = 0; i < k->n; i++)
                    if (r[p * k->n + i] != pat(it, k->c, p, i)) {
                        report(it, k->c, what, k->n, p * k->n + i, r[p * k->n + i],
                               pat(it, k->c, p, i));
                        p = size;
                        break;
                    }
            if (!k->inplace)
                for (MPI_Aint i = 0; i < k->n; i++)
                    if (s[i] != pat(it, k->c, rank, i)) {
                        report(it, k->c, "allgather send buffer", k->n, i, s[i],
                               pat(it, k->c, rank, i));
                        break;
                    }
            if (!guard_intact(r + size * k->n))
                report(it, k->c, "allgather: past the end", k->n, size * k->n, r[size * k->n],
                       GUARD);
            break;
        case BC:
            snprintf(what, sizeof(what), "bcast from %d", k->root);
            for (MPI_Aint i = 0; i < k->n; i++)
                if (r[i] != pat(it, k->c, k->root, i)) {
                    report(it, k->c, what, k->n, i, r[i], pat(it, k->c, k->root, i));
                    break;
                }
            if (!guard_intact(r + k->n))
                report(it, k->c, "bcast: past the end", k->n, k->n, r[k->n], GUARD);
            break;
        case AR:{
                int v = k->variant;
                MPI_Aint es = ar_esize(v);
                snprintf(what, sizeof(what), "%s%s", k->inplace ? "in-place " : "", ar_name[v]);
                for (MPI_Aint i = 0; i < k->n; i++) {
                    long long got = ar_load(v, r, i), exp = ar_expected(v, it, k->c, size, i);
                    if (got != exp) {
                        report(it, k->c, what, k->n, i, got, exp);
                        break;
                    }
                }
                if (!k->inplace)
                    for (MPI_Aint i = 0; i < k->n; i++)
                        if (ar_load(v, s, i) != ar_value(v, it, k->c, rank, i)) {
                            report(it, k->c, "allreduce send buffer", k->n, i, ar_load(v, s, i),
                                   ar_value(v, it, k->c, rank, i));
                            break;
                        }
                if (!guard_intact(r + k->n * es))
                    report(it, k->c, "allreduce: past the end", k->n, k->n, r[k->n * es], GUARD);
                break;
            }
    }
}

/* Bcast of one vector (2 ints out of every 3) from a rotating root: the
 * holes must keep each process's own values. */
static void vector_bcast(int it, int c)
{
    MPI_Comm comm = comms[c];
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int nblk = 1 + (it * 37) % 3000, root = (it / 4 + 1) % size;
    int len = 3 * nblk;
    MPI_Datatype vec;
    MPI_Type_vector(nblk, 2, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int *buf = malloc(len * sizeof(int));
    for (int j = 0; j < len; j++)
        buf[j] = (rank == root && j % 3 < 2) ? (int) (word(it, c, root, j) >> 1) : -(rank + 1);
    MPI_Bcast(buf, 1, vec, root, comm);
    for (int j = 0; j < len; j++) {
        int exp = j % 3 < 2 ? (int) (word(it, c, root, j) >> 1) : -(rank + 1);
        if (buf[j] != exp) {
            report(it, c, "vector bcast", nblk, j, buf[j], exp);
            break;
        }
    }
    free(buf);
    MPI_Type_free(&vec);
}

int main(int argc, char **argv)
{
    int rank, size;

    MTest_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    comms[0] = MPI_COMM_WORLD;
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &comms[2]);

    /* one set of buffers per kind, big enough for every iteration: about
     * 20 MiB + 20 MiB / size for allgather, 2 MiB for bcast and 2 MiB for
     * allreduce */
    size_t ag_rank = (size_t) (HUGE_TOTAL / size) | 1;
    if (ag_rank < (size_t) SMALL_BIG)
        ag_rank = SMALL_BIG;
    kbuf[AG].s_cap = ag_rank;
    kbuf[AG].r_cap = ag_rank * size;
    kbuf[BC].r_cap = HUGE_BCAST > SMALL_BIG ? HUGE_BCAST : SMALL_BIG;
    kbuf[AR].s_cap = kbuf[AR].r_cap = SMALL_BIG + sizeof(double);
    for (int k = 0; k < NKINDS; k++) {
        kbuf[k].s = kbuf[k].s_cap ? malloc(kbuf[k].s_cap + MAX_OFFSET + 8) : NULL;
        kbuf[k].r = malloc(kbuf[k].r_cap + MAX_OFFSET + 8);
        if ((kbuf[k].s_cap && !kbuf[k].s) || !kbuf[k].r) {
            fprintf(stderr, "[%d] out of memory for the %s buffers\n", rank, kind_name[k]);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }

    for (int it = 0; it < ITERS; it++) {
        struct call calls[NKINDS];
        /* each kind on another communicator every iteration, and the order
         * of the three calls rotating too */
        for (int j = 0; j < NKINDS; j++) {
            int kind = (j + it / 3) % NKINDS;
            memset(&calls[j], 0, sizeof(calls[j]));
            calls[j].kind = kind;
            calls[j].c = (kind + it) % NCOMMS;
            start_call(&calls[j], it);
        }
        if (it % 4 == 0)
            vector_bcast(it, (it / 4) % NCOMMS);
        for (int j = 0; j < NKINDS; j++)
            check_call(&calls[j], it);
    }

    for (int k = 0; k < NKINDS; k++) {
        free(kbuf[k].s);
        free(kbuf[k].r);
    }
    MPI_Comm_free(&comms[1]);
    MPI_Comm_free(&comms[2]);
    MTest_Finalize(errs);
    return MTestReturnValue(errs);
}
