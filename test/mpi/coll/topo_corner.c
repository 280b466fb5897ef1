/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Corners that MPI allows and applications reach, each a few calls:
 *   A. a communicator freed while its nonblocking bcast, allreduce and
 *      allgather are pending (MPI_Comm_free only marks it);
 *   B. persistent allreduce and bcast started again and again after their
 *      communicator handle was freed;
 *   C. MINLOC/MAXLOC on pair types with padding (MPI_DOUBLE_INT,
 *      MPI_LONG_DOUBLE_INT, MPI_SHORT_INT), counts across cells, slots and
 *      chunks, in place or not; the receive buffer's padding bytes (not in
 *      the type map) stay as they were;
 *   D. bcast from MPI_BOTTOM of a struct of absolute addresses, every root;
 *   E. single-process communicators (MPI_COMM_SELF and a split);
 *   F. allgather and bcast whose processes describe the same signature
 *      with different types (contiguous, vector, resized vector);
 *   G. erroneous calls (MPI_REPLACE or MPI_BAND on float in allreduce, a
 *      root out of range) return an error under MPI_ERRORS_RETURN, and the
 *      communicator works afterwards;
 *   H. nonblocking calls on two communicators started in opposite orders
 *      on odd and even processes, completed in different orders;
 *   I. C bool (LOR, LXOR) and float complex (SUM, PROD with powers of i,
 *      exact in any order), reduce to every root in place;
 *   J. as many communicators held at once, each with collectives run on
 *      it, as MPI gives out without them, all still right afterwards;
 *   K. 4000 nonblocking bcasts and allreduces outstanding on one
 *      communicator, completed by one MPI_Waitall, holding no memory
 *      mapping each;
 *   L. a root's small bcasts running many calls ahead of late readers,
 *      right after an allgather, an allreduce or a barrier: a writer may
 *      reuse the place of an earlier call's data only once every reader
 *      is done with it;
 *   M. large nonblocking and persistent allgathers within a node, each
 *      pending while blocking allgathers and user-op allreduces (MPICH's
 *      algorithms, MPICH's fixed tags) run on the same communicator.
 * Run with any algorithm forced (and MPIR_CVAR_TOPO_EAGER_SETUP=1 for the
 * nonblocking ones) or none; argv[1] may name the parts to run ("ACH"). */

#include "mpi.h"
#include "mpitest.h"
#include <complex.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int errs = 0, wrank, wsize;
/* counts a failed check, and prints the first 20 */
static void check(int ok, const char *fmt, ...)
{
    va_list ap;

    if (ok || errs++ >= 20)
        return;
    fprintf(stderr, "[%d] ", wrank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* A: comm freed while nonblocking calls are pending */
static void test_free_pending(void)
{
    MPI_Comm c;
    MPI_Request r[3];
    MPI_Status st[3];
    int n = 5000;
    int *a = malloc(n * sizeof(int)), *b = malloc(n * sizeof(int));
    int *g = malloc(wsize * 100 * sizeof(int)), s[100];
    double x = wrank + 1, y = 0;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    /* a blocking call sets the engine up */
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, c);
    for (int i = 0; i < n; i++)
        a[i] = wrank == 1 % wsize ? i * 3 : -1;
    for (int i = 0; i < n; i++)
        b[i] = i + wrank;
    for (int i = 0; i < 100; i++)
        s[i] = wrank * 1000 + i;
    MPI_Ibcast(a, n, MPI_INT, 1 % wsize, c, &r[0]);
    MPI_Iallreduce(MPI_IN_PLACE, b, n, MPI_INT, MPI_SUM, c, &r[1]);
    MPI_Iallgather(s, 100, MPI_INT, g, 100, MPI_INT, c, &r[2]);
    MPI_Comm_free(&c);
    MPI_Waitall(3, r, st);
    for (int i = 0; i < n; i++) {
        check(a[i] == i * 3, "free_pending ibcast a[%d]=%d", i, a[i]);
        check(b[i] == wsize * i + wsize * (wsize - 1) / 2, "free_pending iallreduce b[%d]=%d", i,
              b[i]);
    }
    for (int p = 0; p < wsize; p++)
        for (int i = 0; i < 100; i++)
            check(g[p * 100 + i] == p * 1000 + i, "free_pending iallgather");
    free(a);
    free(b);
    free(g);
}

/* B: persistent requests outliving their communicator handle */
static void test_free_persistent(void)
{
    MPI_Comm c;
    MPI_Request r[2];
    int n = 3000, *a = malloc(n * sizeof(int)), *b = malloc(n * sizeof(int));
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Allreduce_init(a, b, n, MPI_INT, MPI_MAX, c, MPI_INFO_NULL, &r[0]);
    MPI_Bcast_init(a, n, MPI_INT, wsize - 1, c, MPI_INFO_NULL, &r[1]);
    MPI_Comm_free(&c);
    for (int it = 0; it < 5; it++) {
        for (int i = 0; i < n; i++)
            a[i] = (i * 7 + wrank * 13 + it) % 1000;
        MPI_Start(&r[0]);
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        for (int i = 0; i < n; i++) {
            int m = -1;
            for (int p = 0; p < wsize; p++)
                if ((i * 7 + p * 13 + it) % 1000 > m)
                    m = (i * 7 + p * 13 + it) % 1000;
            check(b[i] == m, "persistent max it %d b[%d]=%d want %d", it, i, b[i], m);
        }
        for (int i = 0; i < n; i++)
            a[i] = wrank == wsize - 1 ? i + it : -5;
        MPI_Start(&r[1]);
        MPI_Wait(&r[1], MPI_STATUS_IGNORE);
        for (int i = 0; i < n; i++)
            check(a[i] == i + it, "persistent bcast it %d a[%d]=%d", it, i, a[i]);
    }
    MPI_Request_free(&r[0]);
    MPI_Request_free(&r[1]);
    free(a);
    free(b);
}

/* C: MINLOC/MAXLOC on pair types with padding, many counts, IN_PLACE */
typedef struct {
    double v;
    int i;
} dint;
typedef struct {
    long double v;
    int i;
} ldint;
typedef struct {
    short v;
    int i;
} sint;
/* elements of esz bytes {value of vsz bytes; int at ioff}: the bytes of
 * after that are padding still hold before's */
static int pads_kept(const void *before, const void *after, int n, size_t esz, size_t vsz,
                     size_t ioff)
{
    const unsigned char *b = before, *a = after;
    for (size_t k = 0; k < n * esz; k++) {
        size_t o = k % esz;
        if (((o >= vsz && o < ioff) || o >= ioff + sizeof(int)) && a[k] != b[k])
            return 0;
    }
    return 1;
}

static void test_loc(void)
{
    int counts[] = { 1, 2, 3, 33, 64, 65, 100, 1000, 4097, 70000 };
    for (int ci = 0; ci < (int) (sizeof(counts) / sizeof(counts[0])); ci++) {
        int n = counts[ci];
        dint *a = malloc(n * sizeof(dint)), *b = malloc(n * sizeof(dint));
        ldint *la = malloc(n * sizeof(ldint)), *lb = malloc(n * sizeof(ldint));
        sint *sa = malloc(n * sizeof(sint)), *sb = malloc(n * sizeof(sint));
        dint *b0 = malloc(n * sizeof(dint));
        ldint *lb0 = malloc(n * sizeof(ldint));
        sint *sb0 = malloc(n * sizeof(sint));
        for (int inplace = 0; inplace < 2; inplace++) {
            /* padding differs between the send and receive buffers and
             * between processes */
            memset(a, 0x40 + wrank, n * sizeof(dint));
            memset(la, 0x40 + wrank, n * sizeof(ldint));
            memset(sa, 0x40 + wrank, n * sizeof(sint));
            memset(b, 0xa5, n * sizeof(dint));
            memset(lb, 0xa5, n * sizeof(ldint));
            memset(sb, 0xa5, n * sizeof(sint));
            for (int i = 0; i < n; i++) {
                a[i].v = (double) ((i * 31 + wrank * 17) % 11);
                a[i].i = wrank;
                la[i].v = (long double) ((i * 13 + wrank * 7) % 5);
                la[i].i = wrank;
                sa[i].v = (short) ((i * 5 + wrank * 3) % 7);
                sa[i].i = wrank;
            }
            if (inplace) {
                memcpy(b, a, n * sizeof(dint));
                memcpy(lb, la, n * sizeof(ldint));
                memcpy(sb, sa, n * sizeof(sint));
            }
            memcpy(b0, b, n * sizeof(dint));
            memcpy(lb0, lb, n * sizeof(ldint));
            memcpy(sb0, sb, n * sizeof(sint));
            MPI_Allreduce(inplace ? MPI_IN_PLACE : a, b, n, MPI_DOUBLE_INT, MPI_MINLOC,
                          MPI_COMM_WORLD);
            MPI_Allreduce(inplace ? MPI_IN_PLACE : la, lb, n, MPI_LONG_DOUBLE_INT, MPI_MAXLOC,
                          MPI_COMM_WORLD);
            MPI_Allreduce(inplace ? MPI_IN_PLACE : sa, sb, n, MPI_SHORT_INT, MPI_MINLOC,
                          MPI_COMM_WORLD);
            for (int i = 0; i < n; i++) {
                double mv = 1e9;
                int mi = -1;
                long double Mv = -1;
                int Mi = -1;
                int sv = 1000, si = -1;
                for (int p = 0; p < wsize; p++) {
                    double v = (double) ((i * 31 + p * 17) % 11);
                    long double lv = (long double) ((i * 13 + p * 7) % 5);
                    int s = (i * 5 + p * 3) % 7;
                    if (v < mv) {
                        mv = v;
                        mi = p;
                    }
                    if (lv > Mv) {
                        Mv = lv;
                        Mi = p;
                    }
                    if (s < sv) {
                        sv = s;
                        si = p;
                    }
                }
                int ok_d = b[i].v == mv && b[i].i == mi;
                int ok_ld = lb[i].v == Mv && lb[i].i == Mi;
                int ok_s = sb[i].v == sv && sb[i].i == si;
                check(ok_d, "minloc double_int n=%d ip=%d [%d] got (%g,%d) want (%g,%d)", n,
                      inplace, i, b[i].v, b[i].i, mv, mi);
                check(ok_ld, "maxloc long_double_int n=%d ip=%d [%d] got (%Lg,%d) want (%Lg,%d)",
                      n, inplace, i, lb[i].v, lb[i].i, Mv, Mi);
                check(ok_s, "minloc short_int n=%d ip=%d [%d] got (%d,%d) want (%d,%d)", n,
                      inplace, i, sb[i].v, sb[i].i, sv, si);
            }
            check(pads_kept(b0, b, n, sizeof(dint), sizeof(double), offsetof(dint, i)),
                  "minloc double_int n=%d ip=%d: padding bytes of the receive buffer changed",
                  n, inplace);
            check(pads_kept(lb0, lb, n, sizeof(ldint), sizeof(long double), offsetof(ldint, i)),
                  "maxloc long_double_int n=%d ip=%d: padding bytes of the receive buffer "
                  "changed", n, inplace);
            check(pads_kept(sb0, sb, n, sizeof(sint), sizeof(short), offsetof(sint, i)),
                  "minloc short_int n=%d ip=%d: padding bytes of the receive buffer changed",
                  n, inplace);
        }
        free(a);
        free(b);
        free(la);
        free(lb);
        free(sa);
        free(sb);
        free(b0);
        free(lb0);
        free(sb0);
    }
}

/* D: bcast from MPI_BOTTOM with an absolute-address struct; root and others
 * with different layouts of the same signature */
static void test_bottom(void)
{
    for (int root = 0; root < wsize; root++) {
        int n = 2500;
        int *x = malloc(n * sizeof(int));
        double *y = malloc(n * sizeof(double));
        MPI_Aint disp[2];
        int bl[2] = { n, n };
        MPI_Datatype types[2] = { MPI_INT, MPI_DOUBLE }, st;
        MPI_Get_address(x, &disp[0]);
        MPI_Get_address(y, &disp[1]);
        MPI_Type_create_struct(2, bl, disp, types, &st);
        MPI_Type_commit(&st);
        for (int i = 0; i < n; i++) {
            x[i] = wrank == root ? i * 5 + root : -1;
            y[i] = wrank == root ? i * 0.5 + root : -1;
        }
        MPI_Bcast(MPI_BOTTOM, 1, st, root, MPI_COMM_WORLD);
        for (int i = 0; i < n; i++) {
            check(x[i] == i * 5 + root, "bottom bcast root %d x[%d]=%d", root, i, x[i]);
            check(y[i] == i * 0.5 + root, "bottom bcast root %d y[%d]=%g", root, i, y[i]);
        }
        MPI_Type_free(&st);
        free(x);
        free(y);
    }
}

/* E: single-process communicators */
static void test_self(void)
{
    int v[100], w[100];
    MPI_Comm one;
    MPI_Comm_split(MPI_COMM_WORLD, wrank, 0, &one);
    MPI_Comm cs[2] = { MPI_COMM_SELF, one };
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < 100; i++)
            v[i] = i + wrank;
        MPI_Allreduce(v, w, 100, MPI_INT, MPI_SUM, cs[k]);
        for (int i = 0; i < 100; i++)
            check(w[i] == i + wrank, "self allreduce");
        MPI_Bcast(v, 100, MPI_INT, 0, cs[k]);
        MPI_Allgather(v, 100, MPI_INT, w, 100, MPI_INT, cs[k]);
        for (int i = 0; i < 100; i++)
            check(w[i] == i + wrank, "self allgather");
        MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, w, 100, MPI_INT, cs[k]);
        MPI_Barrier(cs[k]);
    }
    MPI_Comm_free(&one);
}

/* F: allgather and bcast with different send and receive types */
static void test_types(void)
{
    int counts[] = { 1, 7, 256, 1023, 5000, 100000 };
    for (int ci = 0; ci < 6; ci++) {
        int n = counts[ci];
        MPI_Datatype cont, vec, rvec;
        MPI_Type_contiguous(n, MPI_INT, &cont);
        MPI_Type_commit(&cont);
        MPI_Type_vector(n, 1, 3, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        MPI_Type_create_resized(vec, 0, (MPI_Aint) (3 * n) * sizeof(int), &rvec);
        MPI_Type_commit(&rvec);
        int *s = malloc(n * sizeof(int)), *g = malloc((size_t) 3 * n * wsize * sizeof(int));
        for (int i = 0; i < n; i++)
            s[i] = wrank * 100000 + i;
        for (int i = 0; i < 3 * n * wsize; i++)
            g[i] = -7;
        /* odd ranks send 1 contiguous of n, even n ints; receive strided */
        if (wrank % 2)
            MPI_Allgather(s, 1, cont, g, 1, rvec, MPI_COMM_WORLD);
        else
            MPI_Allgather(s, n, MPI_INT, g, 1, rvec, MPI_COMM_WORLD);
        for (int p = 0; p < wsize; p++)
            for (int i = 0; i < 3 * n; i++) {
                int want = i % 3 ? -7 : p * 100000 + i / 3;
                check(g[p * 3 * n + i] == want, "allgather types n=%d [%d][%d]=%d want %d", n, p, i,
                      g[p * 3 * n + i], want);
            }
        /* bcast: root contiguous ints, others a vector */
        for (int root = 0; root < wsize; root++) {
            for (int i = 0; i < 3 * n; i++)
                g[i] = -7;
            if (wrank == root) {
                for (int i = 0; i < n; i++)
                    g[i] = root + i * 2;
                MPI_Bcast(g, n, MPI_INT, root, MPI_COMM_WORLD);
            } else {
                MPI_Bcast(g, 1, vec, root, MPI_COMM_WORLD);
                for (int i = 0; i < 3 * n - 2; i++) {
                    int want = i % 3 ? -7 : root + (i / 3) * 2;
                    check(g[i] == want, "bcast types n=%d root %d [%d]=%d want %d", n, root, i,
                          g[i], want);
                }
            }
        }
        free(s);
        free(g);
        MPI_Type_free(&cont);
        MPI_Type_free(&vec);
        MPI_Type_free(&rvec);
    }
}

/* G: bad op gives an error, not a hang */
static void test_bad(void)
{
    int v = 1, w = 0, rc;
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    rc = MPI_Allreduce(&v, &w, 1, MPI_INT, MPI_REPLACE, c);
    check(rc != MPI_SUCCESS, "allreduce MPI_REPLACE succeeded");
    rc = MPI_Allreduce(&v, &w, 1, MPI_FLOAT, MPI_BAND, c);
    check(rc != MPI_SUCCESS, "allreduce BAND on float succeeded");
    rc = MPI_Bcast(&v, 1, MPI_INT, wsize, c);
    check(rc != MPI_SUCCESS, "bcast bad root succeeded");
    /* still usable */
    rc = MPI_Allreduce(&v, &w, 1, MPI_INT, MPI_SUM, c);
    check(rc == MPI_SUCCESS && w == wsize, "allreduce after errors: rc %d w %d", rc, w);
    MPI_Comm_free(&c);
}

/* H: nonblocking calls on two comms started in opposite orders */
static void test_cross_order(void)
{
    MPI_Comm a, b;
    MPI_Request r[4];
    MPI_Status st[4];
    int n = 200000;
    int *x = malloc(n * sizeof(int)), *y = malloc(n * sizeof(int));
    int *u = malloc(n * sizeof(int)), *v = malloc(n * sizeof(int));
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_dup(MPI_COMM_WORLD, &b);
    MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPI_INT, MPI_MAX, a);
    MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPI_INT, MPI_MAX, b);
    for (int it = 0; it < 4; it++) {
        for (int i = 0; i < n; i++) {
            x[i] = i + wrank;
            y[i] = 2 * i - wrank;
            u[i] = wrank == 0 ? i ^ it : 0;
            v[i] = wrank == wsize - 1 ? i + it : 0;
        }
        if (wrank % 2) {
            MPI_Iallreduce(MPI_IN_PLACE, x, n, MPI_INT, MPI_SUM, a, &r[0]);
            MPI_Ibcast(u, n, MPI_INT, 0, a, &r[2]);
            MPI_Iallreduce(MPI_IN_PLACE, y, n, MPI_INT, MPI_SUM, b, &r[1]);
            MPI_Ibcast(v, n, MPI_INT, wsize - 1, b, &r[3]);
        } else {
            MPI_Iallreduce(MPI_IN_PLACE, y, n, MPI_INT, MPI_SUM, b, &r[1]);
            MPI_Ibcast(v, n, MPI_INT, wsize - 1, b, &r[3]);
            MPI_Iallreduce(MPI_IN_PLACE, x, n, MPI_INT, MPI_SUM, a, &r[0]);
            MPI_Ibcast(u, n, MPI_INT, 0, a, &r[2]);
        }
        if (it % 2) {
            MPI_Wait(&r[3], MPI_STATUS_IGNORE);
            MPI_Wait(&r[2], MPI_STATUS_IGNORE);
            MPI_Wait(&r[1], MPI_STATUS_IGNORE);
            MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        } else
            MPI_Waitall(4, r, st);
        for (int i = 0; i < n; i++) {
            check(x[i] == wsize * i + wsize * (wsize - 1) / 2, "cross x[%d]", i);
            check(y[i] == wsize * 2 * i - wsize * (wsize - 1) / 2, "cross y[%d]", i);
            check(u[i] == (i ^ it), "cross u[%d]", i);
            check(v[i] == i + it, "cross v[%d]", i);
        }
    }
    MPI_Comm_free(&a);
    MPI_Comm_free(&b);
    free(x);
    free(y);
    free(u);
    free(v);
}

/* i^k: products and sums of these are exact in any order */
static float _Complex unit(int k)
{
    static const float _Complex u[4] = { 1.0f, I, -1.0f, -I };
    return u[k % 4];
}

/* I: C bool and float complex, reduce to every root in place */
static void test_misc_types(void)
{
    int n = 777;
    _Bool *ba = malloc(n), *bb = malloc(n);
    float _Complex *ca = malloc(n * sizeof(*ca)), *cb = malloc(n * sizeof(*cb));
    for (int i = 0; i < n; i++) {
        ba[i] = (i + wrank) % 3 == 0;
        ca[i] = unit(i + wrank);
    }
    MPI_Allreduce(ba, bb, n, MPI_C_BOOL, MPI_LOR, MPI_COMM_WORLD);
    for (int i = 0; i < n; i++) {
        int w = 0;
        for (int p = 0; p < wsize; p++)
            w |= (i + p) % 3 == 0;
        check(bb[i] == w, "bool lor [%d]", i);
    }
    MPI_Allreduce(ba, bb, n, MPI_C_BOOL, MPI_LXOR, MPI_COMM_WORLD);
    for (int i = 0; i < n; i++) {
        int w = 0;
        for (int p = 0; p < wsize; p++)
            w ^= (i + p) % 3 == 0;
        check(bb[i] == w, "bool lxor [%d]", i);
    }
    MPI_Allreduce(ca, cb, n, MPI_C_FLOAT_COMPLEX, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < n; i++) {
        float _Complex w = 0;
        for (int p = 0; p < wsize; p++)
            w += unit(i + p);
        check(cb[i] == w, "complex sum [%d]", i);
    }
    for (int root = 0; root < wsize; root++) {
        for (int i = 0; i < n; i++)
            cb[i] = -1;
        MPI_Reduce(wrank == root ? MPI_IN_PLACE : ca, wrank == root ? ca : cb, n,
                   MPI_C_FLOAT_COMPLEX, MPI_PROD, root, MPI_COMM_WORLD);
        if (wrank == root) {
            for (int i = 0; i < n; i++) {
                float _Complex w = 1;
                for (int p = 0; p < wsize; p++)
                    w *= unit(i + p);
                check(ca[i] == w, "complex prod root %d [%d]", root, i);
            }
        }
        for (int i = 0; i < n; i++)
            ca[i] = unit(i + wrank);
    }
    free(ba);
    free(bb);
    free(ca);
    free(cb);
}

/* J's calls on c, the i-th communicator: allreduce, bcast from a root
 * that changes with i, allgather; returns 1 if all are right */
static int many_comms_calls(MPI_Comm c, int i)
{
    int sum = 0, b = wrank == i % wsize ? i : -1, ok = 1;
    int *g = malloc(wsize * sizeof(int)), me = wrank * 7 + i;

    ok &= MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, c) == MPI_SUCCESS;
    ok &= sum == 7 * wsize * (wsize - 1) / 2 + i * wsize;
    ok &= MPI_Bcast(&b, 1, MPI_INT, i % wsize, c) == MPI_SUCCESS && b == i;
    ok &= MPI_Allgather(&me, 1, MPI_INT, g, 1, MPI_INT, c) == MPI_SUCCESS;
    for (int r = 0; r < wsize; r++)
        ok &= g[r] == r * 7 + i;
    free(g);
    return ok;
}

/* J: the engine's node and leader communicators took a context id each
 * (split off its communicator), so an application that held MPICH's
 * 2046 communicators with a collective run on each could hold 1023 with
 * 2 processes per node, 682 across nodes, and its next MPI_Comm_dup
 * failed.  They are derived from their communicator's own id now. */
static void test_many_comms(void)
{
    const int max = 8192;
    int held0 = 0, held1 = 0, bad = 0;
    MPI_Comm *c = malloc(max * sizeof(MPI_Comm));
    MPI_Errhandler eh;

    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* how many MPI gives out (every process fails the same dup) */
    while (held0 < max && MPI_Comm_dup(MPI_COMM_WORLD, &c[held0]) == MPI_SUCCESS)
        held0++;
    for (int i = 0; i < held0; i++)
        MPI_Comm_free(&c[i]);
    while (held1 < max && MPI_Comm_dup(MPI_COMM_WORLD, &c[held1]) == MPI_SUCCESS) {
        bad += !many_comms_calls(c[held1], held1);
        held1++;
    }
    check(held0 > 100 && held1 == held0,
          "J: %d communicators held with collectives on them, %d without", held1, held0);
    check(bad == 0, "J: wrong results on %d of %d communicators", bad, held1);
    /* the first ones still work, then every other one is freed and its
     * context id given out again */
    for (int i = 0; i < held1 && i < 8; i++)
        check(many_comms_calls(c[i], i + 1), "J: communicator %d after %d others", i, held1);
    for (int i = 0; i < held1; i += 2)
        MPI_Comm_free(&c[i]);
    for (int i = 0; i < held1 && i < 64; i += 2) {
        check(MPI_Comm_dup(MPI_COMM_WORLD, &c[i]) == MPI_SUCCESS, "J: dup again");
        check(many_comms_calls(c[i], i), "J: communicator %d given out again", i);
        check(many_comms_calls(c[i + 1 < held1 ? i + 1 : i], i), "J: its neighbour %d", i + 1);
    }
    for (int i = 0; i < held1; i++)
        if (i % 2 || i < 64)
            MPI_Comm_free(&c[i]);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
    MPI_Errhandler_free(&eh);
    free(c);
}

/* the process's memory mappings, -1 where /proc cannot tell */
static int count_maps(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    int n = 0, ch;

    if (f == NULL)
        return -1;
    while ((ch = fgetc(f)) != EOF)
        n += ch == '\n';
    fclose(f);
    return n;
}

/* K: every outstanding nonblocking call of the engine held a 256 KiB
 * coroutine stack (two mappings, with its guard page) from the moment it
 * was started: some 32000 calls exhausted Linux's default
 * vm.max_map_count (65530) and the next one failed with MPI_ERR_NO_MEM
 * (40000 took minutes on 2 cores: MPICH's progress walks every pending
 * schedule, so here fewer calls, and their mappings counted).  A call
 * takes its stack only when it runs, at the head of its communicator's
 * queue. */
static void test_many_pending(void)
{
    const int n = 2000;
    int maps0, maps1;
    MPI_Request *r = malloc(2 * n * sizeof(MPI_Request));
    int *b = malloc(n * sizeof(int)), *s = malloc(n * sizeof(int)), bad = 0;
    int *me = malloc(n * sizeof(int));
    MPI_Comm c;

    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, c);  /* (sets the engine up) */
    maps0 = count_maps();
    for (int i = 0; i < n; i++) {
        me[i] = wrank + i;
        b[i] = wrank == i % wsize ? i : -1;
        check(MPI_Ibcast(&b[i], 1, MPI_INT, i % wsize, c, &r[2 * i]) == MPI_SUCCESS &&
              MPI_Iallreduce(&me[i], &s[i], 1, MPI_INT, MPI_SUM, c, &r[2 * i + 1]) == MPI_SUCCESS,
              "K: starting call %d", i);
        if (errs)
            break;
    }
    maps1 = count_maps();
    check(maps0 < 0 || maps1 - maps0 < n / 4, "K: %d new memory mappings for %d outstanding calls",
          maps1 - maps0, 2 * n);
    if (errs == 0) {
        MPI_Waitall(2 * n, r, MPI_STATUSES_IGNORE);
        for (int i = 0; i < n; i++)
            bad += b[i] != i || s[i] != wsize * (wsize - 1) / 2 + wsize * i;
        check(bad == 0, "K: %d of %d pairs of results wrong", bad, n);
    }
    MPI_Comm_free(&c);
    free(r);
    free(b);
    free(s);
    free(me);
}

/* L: a root's small bcasts run ahead of late readers */
static void test_run_ahead(void)
{
    const int n = 48;           /* several times the calls a writer may have unread */
    int v[48], me = wrank, sum, bad = 0, *all = malloc(wsize * sizeof(int));
    MPI_Comm c;

    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    for (int i = 0; i < 300; i++)       /* (enough small calls to set the engine up) */
        MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, c);
    for (int k = 0; k < 3 * wsize; k++) {
        int root = k % wsize;
        if (k / wsize == 0)
            MPI_Allgather(&me, 1, MPI_INT, all, 1, MPI_INT, c);
        else if (k / wsize == 1)
            MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, c);
        else
            MPI_Barrier(c);
        if (wrank != root)
            usleep(20000);      /* the readers come late: the root runs ahead */
        for (int i = 0; i < n; i++) {
            v[i] = wrank == root ? 1000 * k + i : -1;
            MPI_Bcast(&v[i], 1, MPI_INT, root, c);
        }
        for (int i = 0; i < n; i++)
            bad += v[i] != 1000 * k + i;
    }
    check(bad == 0, "L: %d of %d bcasts received something else", bad, 3 * wsize * n);
    MPI_Comm_free(&c);
    free(all);
}

/* M: a user-op allreduce, so that MPICH's own algorithm runs */
static void sum_op(void *in, void *inout, int *len, MPI_Datatype * t)
{
    for (int i = 0; i < *len; i++)
        ((int *) inout)[i] += ((int *) in)[i];
}

/* M: the first large allgathers of a size within a node once timed
 * MPICH's ring and agreed by MPICH's allreduce on the communicator itself,
 * also inside a nonblocking or persistent call, whose messages then
 * matched those of the blocking calls made while it was pending. */
static void test_pending_large(void)
{
    const int big = 256 * 1024 / sizeof(int), small = 24 * 1024 / sizeof(int), nr = 1000;
    int *sb = malloc(big * sizeof(int)), *rb = malloc((size_t) wsize * big * sizeof(int));
    int *ss = malloc(small * sizeof(int)), *rs = malloc((size_t) wsize * small * sizeof(int));
    int *a = malloc(nr * sizeof(int)), bad = 0, calls = 0;
    MPI_Comm c;
    MPI_Request pr, r;
    MPI_Op op;

    MPI_Op_create(sum_op, 1, &op);
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    /* (a persistent init sets the engine up where its algorithm is ours) */
    MPI_Allgather_init(sb, big, MPI_INT, rb, big, MPI_INT, c, MPI_INFO_NULL, &pr);
    for (int it = 0; it < 12; it++) {
        for (int i = 0; i < big; i++)
            sb[i] = wrank * 7 + i + it;
        for (int i = 0; i < wsize * big; i++)
            rb[i] = -1;
        if (it % 2)
            MPI_Start(&pr);
        else
            MPI_Iallgather(sb, big, MPI_INT, rb, big, MPI_INT, c, &r);
        for (int k = 0; k < 2; k++) {
            for (int i = 0; i < small; i++)
                ss[i] = wrank * 3 + i + k;
            MPI_Allgather(ss, small, MPI_INT, rs, small, MPI_INT, c);
            for (int p = 0; p < wsize; p++)
                for (int i = 0; i < small; i++)
                    bad += rs[p * small + i] != p * 3 + i + k;
            for (int i = 0; i < nr; i++)
                a[i] = wrank + i;
            MPI_Allreduce(MPI_IN_PLACE, a, nr, MPI_INT, op, c);
            for (int i = 0; i < nr; i++)
                bad += a[i] != wsize * (wsize - 1) / 2 + wsize * i;
            calls += 2;
        }
        MPI_Wait(it % 2 ? &pr : &r, MPI_STATUS_IGNORE);
        for (int p = 0; p < wsize; p++)
            for (int i = 0; i < big; i++)
                bad += rb[(size_t) p * big + i] != p * 7 + i + it;
    }
    check(bad == 0, "M: %d elements wrong in 12 large allgathers and the %d blocking calls "
          "made while they were pending", bad, calls);
    MPI_Request_free(&pr);
    MPI_Comm_free(&c);
    MPI_Op_free(&op);
    free(sb);
    free(rb);
    free(ss);
    free(rs);
    free(a);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    /* parts A to M, in order */
    void (*const parts[])(void) = { test_free_pending, test_free_persistent, test_loc,
        test_bottom, test_self, test_types, test_bad, test_cross_order, test_misc_types,
        test_many_comms, test_many_pending, test_run_ahead, test_pending_large
    };
    const char *which = argc > 1 ? argv[1] : "ABCDEFGHIJKLM";
    for (int i = 0; i < (int) (sizeof(parts) / sizeof(parts[0])); i++)
        if (strchr(which, 'A' + i))
            parts[i] ();
    MTest_Finalize(errs);
    return MTestReturnValue(errs);
}
