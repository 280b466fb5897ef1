/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Same signature, different layouts.  MPI only requires the processes'
 * type signatures to match, so each process here describes n double
 * complex elements its own way:
 *   rank % 3 == 0: count n of MPI_C_DOUBLE_COMPLEX (contiguous),
 *   rank % 3 == 1: count 1 of MPI_Type_vector(n, 1, 2) (every other slot),
 *   rank % 3 == 2: count 1 of MPI_Type_contiguous(n) (a derived contiguous).
 * Reduce (every root), allreduce, bcast (every root) and allgather run with
 * a commutative user op (complex sum), a non-commutative one (composition
 * of affine maps z -> a z + b, in rank order) and MPI_SUM on the
 * predefined type, with and without MPI_IN_PLACE, for n from 1 element to
 * 4 MiB.  The user ops work on whatever datatype they are called with:
 * MPICH's network algorithms call them with the caller's derived type on
 * its own layout, shared-memory stages with the predefined type and an
 * element count.  Values are small integers, so every sum and product is
 * exact in any order.  The holes of the strided layout must stay untouched,
 * and so must non-roots' receive buffers.
 *
 * Run with any algorithm forced or none (check.sh: one node, emulated
 * nodes, both devices).  MPICH 4.0.2's release_gather reduce died here
 * (SIGFPE: one vector element larger than its cell) and topo_pipeline
 * allreduce returned wrong sums (each process staged its own layout). */

#include "mpi.h"
#include "mpitest.h"
#include <complex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef double _Complex cplx;

static int errs = 0;
static int rank, size;
static MPI_Aint n;              /* elements per process and call */
static MPI_Datatype vec, vec_r, cont;   /* the derived layouts of n elements */
static MPI_Op op_sum, op_affine;

#define HOLE (-7777.0 + 3333.0 * I)     /* the strided layout's untouched slots */
#define UNTOUCHED (-1.0 - 1.0 * I)      /* receive buffers that must not change */

/* ---- the layouts -------------------------------------------------------- */

static int layout_of(int r)
{
    return r % 3;
}

/* a buffer of the process' layout for n elements */
typedef struct {
    cplx *buf;                  /* allocation */
    MPI_Aint slots;             /* cplx slots allocated */
    int count;
    MPI_Datatype type;
    MPI_Aint stride;            /* slots between elements */
} lbuf_t;

static void lbuf_init(lbuf_t * b, int layout)
{
    b->stride = layout == 1 ? 2 : 1;
    b->slots = (n - 1) * b->stride + 1;
    b->buf = malloc(b->slots * sizeof(cplx));
    for (MPI_Aint s = 0; s < b->slots; s++)
        b->buf[s] = HOLE;
    b->count = layout == 0 ? (int) n : 1;
    b->type = layout == 0 ? MPI_C_DOUBLE_COMPLEX : layout == 1 ? vec : cont;
}

static cplx *elem(lbuf_t * b, MPI_Aint i)
{
    return &b->buf[i * b->stride];
}

/* holes of the strided layout untouched */
static void check_holes(lbuf_t * b, const char *what)
{
    if (b->stride != 2)
        return;
    for (MPI_Aint s = 1; s < b->slots; s += 2)
        if (b->buf[s] != HOLE) {
            if (errs < 10)
                fprintf(stderr, "[%d] %s n=%ld: hole at slot %ld overwritten\n", rank, what,
                        (long) n, (long) s);
            errs++;
            return;
        }
}

/* ---- the values --------------------------------------------------------- */

/* commutative data: small integers, so sums are exact in any order */
static cplx val(int r, MPI_Aint i)
{
    return (double) ((r * 7 + i) % 13) + (double) ((r + 3 * i) % 11) * I;
}

/* affine map z -> a z + b as the complex a + b i: a in {1, 2}, b small */
static cplx aff(int r, MPI_Aint i)
{
    return (double) (1 + (r + i) % 2) + (double) ((r * 5 + i) % 7) * I;
}

/* u o v: apply v first, then u; associative, not commutative */
static cplx compose(cplx u, cplx v)
{
    double ua = creal(u), ub = cimag(u), va = creal(v), vb = cimag(v);
    return ua * va + (ua * vb + ub) * I;
}

/* ---- the user ops: any datatype they may be called with ------------------ */

static MPI_Aint op_elems(MPI_Datatype dt, MPI_Aint len, MPI_Aint * stride, MPI_Aint * ext)
{
    if (dt == vec) {
        *stride = 2;
        *ext = 2 * n - 1;
        return n;
    }
    if (dt == cont) {
        *stride = 1;
        *ext = n;
        return n;
    }
    if (dt != MPI_C_DOUBLE_COMPLEX) {
        fprintf(stderr, "[%d] user op called with an unexpected datatype\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    *stride = 1;
    *ext = 1;
    (void) len;
    return 1;
}

static void user_op(void *in, void *inout, int *len, MPI_Datatype * dt, int affine)
{
    MPI_Aint stride, ext, per = op_elems(*dt, *len, &stride, &ext);
    cplx *a = in, *b = inout;

    for (MPI_Aint j = 0; j < *len; j++)
        for (MPI_Aint e = 0; e < per; e++) {
            MPI_Aint s = j * ext + e * stride;
            b[s] = affine ? compose(a[s], b[s]) : a[s] + b[s];
        }
}

static void sum_fn(void *in, void *inout, int *len, MPI_Datatype * dt)
{
    user_op(in, inout, len, dt, 0);
}

static void affine_fn(void *in, void *inout, int *len, MPI_Datatype * dt)
{
    user_op(in, inout, len, dt, 1);
}

/* ---- reductions ----------------------------------------------------------- */

enum { OP_USER_SUM, OP_USER_AFFINE, OP_PREDEF_SUM, NOPS };
static const char *op_name[NOPS] = { "user sum", "user affine (non-commutative)", "MPI_SUM" };

static cplx expected_reduction(int o, MPI_Aint i)
{
    cplx x = o == OP_USER_AFFINE ? aff(size - 1, i) : val(size - 1, i);
    for (int r = size - 2; r >= 0; r--)
        x = o == OP_USER_AFFINE ? compose(aff(r, i), x) : val(r, i) + x;
    return x;
}

static void fill(lbuf_t * b, int o)
{
    for (MPI_Aint i = 0; i < n; i++)
        *elem(b, i) = o == OP_USER_AFFINE ? aff(rank, i) : val(rank, i);
}

static void check_result(lbuf_t * b, int o, const char *what, int root, int inplace)
{
    for (MPI_Aint i = 0; i < n; i++) {
        cplx want = expected_reduction(o, i);
        if (*elem(b, i) != want) {
            if (errs < 10)
                fprintf(stderr, "[%d] %s %s n=%ld root=%d%s: element %ld is %g%+gi, expected "
                        "%g%+gi\n", rank, what, op_name[o], (long) n, root,
                        inplace ? " in-place" : "", (long) i, creal(*elem(b, i)),
                        cimag(*elem(b, i)), creal(want), cimag(want));
            errs++;
            return;
        }
    }
    check_holes(b, what);
}

static void check_untouched(lbuf_t * b, const char *what)
{
    for (MPI_Aint s = 0; s < b->slots; s++)
        if (b->buf[s] != UNTOUCHED) {
            if (errs < 10)
                fprintf(stderr, "[%d] %s n=%ld: a non-root's receive buffer changed\n", rank,
                        what, (long) n);
            errs++;
            return;
        }
}

static void test_reductions(MPI_Comm comm, int o, int all_roots)
{
    int layout = layout_of(rank);
    MPI_Op op = o == OP_USER_SUM ? op_sum : o == OP_USER_AFFINE ? op_affine : MPI_SUM;
    lbuf_t s, r;

    /* MPI_SUM takes predefined types only: every process passes n elements */
    if (o == OP_PREDEF_SUM)
        layout = 0;
    lbuf_init(&s, layout);
    lbuf_init(&r, layout);
    for (int inplace = 0; inplace < 2; inplace++) {
        /* allreduce */
        fill(inplace ? &r : &s, o);
        MPI_Allreduce(inplace ? MPI_IN_PLACE : s.buf, r.buf, r.count, r.type, op, comm);
        check_result(&r, o, "allreduce", -1, inplace);
        for (MPI_Aint k = 0; k < r.slots; k++)
            r.buf[k] = HOLE;

        /* reduce, every root (the largest sizes: two roots) */
        for (int root = 0; root < size; root++) {
            if (!all_roots && root != 0 && root != size - 1)
                continue;
            if (rank == root) {
                fill(inplace ? &r : &s, o);
            } else {
                fill(&s, o);
                for (MPI_Aint k = 0; k < r.slots; k++)
                    r.buf[k] = UNTOUCHED;
            }
            MPI_Reduce(inplace && rank == root ? MPI_IN_PLACE : s.buf, r.buf, r.count, r.type,
                       op, root, comm);
            if (rank == root)
                check_result(&r, o, "reduce", root, inplace);
            else
                check_untouched(&r, "reduce");
            for (MPI_Aint k = 0; k < r.slots; k++)
                r.buf[k] = HOLE;
        }
    }
    free(s.buf);
    free(r.buf);
}

/* ---- bcast and allgather --------------------------------------------------- */

static void test_bcast(MPI_Comm comm, int all_roots)
{
    lbuf_t b;

    lbuf_init(&b, layout_of(rank));
    for (int root = 0; root < size; root++) {
        if (!all_roots && root != 0 && root != size - 1)
            continue;
        for (MPI_Aint i = 0; i < n; i++)
            *elem(&b, i) = rank == root ? val(root + 100, i) : UNTOUCHED;
        MPI_Bcast(b.buf, b.count, b.type, root, comm);
        for (MPI_Aint i = 0; i < n; i++)
            if (*elem(&b, i) != val(root + 100, i)) {
                if (errs < 10)
                    fprintf(stderr, "[%d] bcast n=%ld root=%d: element %ld wrong\n", rank,
                            (long) n, root, (long) i);
                errs++;
                break;
            }
        check_holes(&b, "bcast");
    }
    free(b.buf);
}

static void test_allgather(MPI_Comm comm)
{
    int layout = layout_of(rank);
    lbuf_t s;
    /* receive: size blocks of n elements in this process' layout; the
     * strided one resized so that blocks do not interleave */
    MPI_Aint stride = layout == 1 ? 2 : 1, per = n * stride;
    cplx *rbuf = malloc(size * per * sizeof(cplx));
    MPI_Datatype rtype = layout == 0 ? MPI_C_DOUBLE_COMPLEX : layout == 1 ? vec_r : cont;
    int rcount = layout == 0 ? (int) n : 1;

    lbuf_init(&s, layout);
    for (int inplace = 0; inplace < 2; inplace++) {
        for (MPI_Aint k = 0; k < size * per; k++)
            rbuf[k] = HOLE;
        for (MPI_Aint i = 0; i < n; i++) {
            *elem(&s, i) = val(rank + 50, i);
            if (inplace)
                rbuf[rank * per + i * stride] = val(rank + 50, i);
        }
        MPI_Allgather(inplace ? MPI_IN_PLACE : s.buf, s.count, s.type, rbuf, rcount, rtype, comm);
        for (int q = 0; q < size; q++)
            for (MPI_Aint i = 0; i < per; i++) {
                cplx want = i % stride ? HOLE : val(q + 50, i / stride);
                if (rbuf[q * per + i] != want) {
                    if (errs < 10)
                        fprintf(stderr, "[%d] allgather n=%ld%s: block %d slot %ld wrong\n",
                                rank, (long) n, inplace ? " in-place" : "", q, (long) i);
                    errs++;
                    q = size;
                    break;
                }
            }
    }
    free(s.buf);
    free(rbuf);
}

int main(int argc, char **argv)
{
    /* 1 element to 4 MiB of double complex per process */
    static const MPI_Aint counts[] = { 1, 2, 3, 17, 1000, 20000, 262144 };
    MPI_Comm comm = MPI_COMM_WORLD;

    MTest_Init(&argc, &argv);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Op_create(sum_fn, 1, &op_sum);
    MPI_Op_create(affine_fn, 0, &op_affine);

    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
        int all_roots = counts[c] <= 20000;
        n = counts[c];
        MPI_Type_vector((int) n, 1, 2, MPI_C_DOUBLE_COMPLEX, &vec);
        MPI_Type_create_resized(vec, 0, 2 * n * sizeof(cplx), &vec_r);
        MPI_Type_contiguous((int) n, MPI_C_DOUBLE_COMPLEX, &cont);
        MPI_Type_commit(&vec);
        MPI_Type_commit(&vec_r);
        MPI_Type_commit(&cont);
        for (int o = 0; o < NOPS; o++)
            test_reductions(comm, o, all_roots);
        test_bcast(comm, all_roots);
        test_allgather(comm);
        MPI_Type_free(&vec);
        MPI_Type_free(&vec_r);
        MPI_Type_free(&cont);
    }

    MPI_Op_free(&op_sum);
    MPI_Op_free(&op_affine);
    MTest_Finalize(errs);
    return MTestReturnValue(errs);
}
