/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Allreduce with the predefined ops on the predefined C types, commutative
 * user ops on element sizes that do not divide a chunk (8 and 6 bytes), and
 * a non-commutative user op whose result must be the rank-ordered product.
 * Counts go from 0 to 3 MiB, so that a pipelined, chunked shared-memory
 * allreduce sees fewer elements than processes, a partial last chunk and
 * many chunks (-small=1: up to 100 elements, the small calls of many
 * processes; -ring=N: only N passes of the small-call ring). Runs on communicators whose rank order does not follow the
 * placement. Meant to be run with
 * MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=topo_pipeline (with cliques, several
 * leaders per node and small chunk sizes); any algorithm must pass it. The
 * user ops check that they are called with the call's datatype, as MPI
 * requires. An algorithm that cannot reduce in rank order, or that works on
 * packed predefined elements, falls back for them; with
 * MPIR_CVAR_COLLECTIVE_FALLBACK=error, run with -noncommutative=0 to leave
 * the non-commutative op out, or -userops=0 to leave all user ops out.
 *
 * All data is integer-valued (halves for float MAX) and bounded so that no
 * signed type overflows and every float sum is exact: each result is then
 * independent of the order in which a commutative op is applied, and is
 * checked for equality. */

#include "mpi.h"
#include "mpitest.h"
#include "topo_test_util.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int errs = 0;
static const char *comm_name = "";     /* for messages: the communicator being tested */
static int with_noncommutative = 1;     /* -noncommutative=0 leaves that op out */
static int with_userops = 1;    /* -userops=0 leaves every user op out */
static int small_only = 0;      /* -small=1: only counts of up to 100 elements */

#define GUARD 0xa5      /* byte pattern just past the end of every receive buffer */

static void report(MPI_Comm comm, const char *what, const char *op, MPI_Aint count,
                   int inplace, MPI_Aint at, const char *got, const char *expect)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    if (errs < 10)
        fprintf(stderr, "[%d] %s: %s %s count %ld%s: element %ld is %s, expected %s\n", rank,
                comm_name, what, op, (long) count, inplace ? " in-place" : "", (long) at, got,
                expect);
    errs++;
}

static int guard_intact(const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t k = 0; k < n; k++)
        if (b[k] != GUARD)
            return 0;
    return 1;
}

/* splitmix64's finaliser: cheap, well mixed, the same on every process */
static unsigned long long mix(unsigned long long x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* the random bits that rank contributes at element i */
static unsigned long long rnd(int rank, MPI_Aint i, int salt)
{
    return mix(mix(((unsigned long long) salt << 32) + (unsigned) rank) + (unsigned long long) i);
}

enum { OP_SUM, OP_PROD, OP_MAX, OP_MIN, OP_BAND, OP_BOR, OP_BXOR, OP_LAND, OP_LOR, NUM_OPS };
static const char *op_name[NUM_OPS] =
    { "SUM", "PROD", "MAX", "MIN", "BAND", "BOR", "BXOR", "LAND", "LOR" };

static MPI_Op op_handle(int opi)
{
    switch (opi) {
        case OP_SUM:
            return MPI_SUM;
        case OP_PROD:
            return MPI_PROD;
        case OP_MAX:
            return MPI_MAX;
        case OP_MIN:
            return MPI_MIN;
        case OP_BAND:
            return MPI_BAND;
        case OP_BOR:
            return MPI_BOR;
        case OP_BXOR:
            return MPI_BXOR;
        case OP_LAND:
            return MPI_LAND;
        default:
            return MPI_LOR;
    }
}

/* Values for the integer types, per op:
 * - SUM: signed types get |v| <= TMAX / (size + 1), so the sum cannot
 *   overflow; unsigned types get any value, their sum wraps as C defines.
 * - PROD: mostly 1, one rank contributes 2 and another 3, signed types flip
 *   the sign on about a quarter of the ranks, and some elements have a 0:
 *   products stay within +-6 whatever the type and the process count.
 * - MAX, MIN, BXOR: any bit pattern. BAND gets mostly ones and BOR mostly
 *   zeros, so that their results are not all 0 or all 1 bits.
 * - LAND: mostly non-zero; LOR: mostly zero. Only the truth of the result is
 *   checked, since MPI does not say which non-zero value a logical op gives. */
#define DEFINE_INT_TYPE(NAME, T, IS_SIGNED, TMAX, PT, FMT)                      \
static T NAME##_value(int opi, int rank, int size, MPI_Aint i, int salt)        \
{                                                                               \
    unsigned long long h = rnd(rank, i, salt);                                  \
    T v;                                                                        \
    switch (opi) {                                                              \
        case OP_SUM:                                                            \
            if (IS_SIGNED) {                                                    \
                unsigned long long b = (unsigned long long) (TMAX) / (size + 1); \
                return (T) ((long long) (h % (2 * b + 1)) - (long long) b);     \
            }                                                                   \
            break;                                                              \
        case OP_PROD: {                                                         \
            int two = (int) (mix(i + salt) % size), three = (two + 1) % size;   \
            v = 1;                                                              \
            if (rank == two)                                                    \
                v = 2;                                                          \
            else if (rank == three)                                             \
                v = 3;                                                          \
            if (IS_SIGNED && (h & 3) == 0)                                      \
                v = (T) (0 - v);                                                \
            if (i % 101 == 17 && rank == size / 2)                              \
                v = 0;                                                          \
            return v;                                                           \
        }                                                                       \
        case OP_BAND:                                                           \
            h |= mix(h);                                                        \
            break;                                                              \
        case OP_BOR:                                                            \
            h &= mix(h);                                                        \
            break;                                                              \
        case OP_LAND:                                                           \
            return (T) (h % (size + 1) == 0 ? 0 : 1 + (h >> 32) % 100);         \
        case OP_LOR:                                                            \
            return (T) (h % (size + 1) == 0 ? 1 + (h >> 32) % 100 : 0);         \
    }                                                                           \
    memcpy(&v, &h, sizeof(v));                                                  \
    return v;                                                                   \
}                                                                               \
                                                                                \
/* a is the value of the lower ranks */                                         \
static T NAME##_apply(int opi, T a, T b)                                        \
{                                                                               \
    switch (opi) {                                                              \
        case OP_SUM:                                                            \
            return (T) (a + b);                                                 \
        case OP_PROD:                                                           \
            return (T) (a * b);                                                 \
        case OP_MAX:                                                            \
            return a > b ? a : b;                                               \
        case OP_MIN:                                                            \
            return a < b ? a : b;                                               \
        case OP_BAND:                                                           \
            return (T) (a & b);                                                 \
        case OP_BOR:                                                            \
            return (T) (a | b);                                                 \
        case OP_BXOR:                                                           \
            return (T) (a ^ b);                                                 \
        case OP_LAND:                                                           \
            return (T) (a && b);                                                \
        default:                                                                \
            return (T) (a || b);                                                \
    }                                                                           \
}                                                                               \
DEFINE_CHECK(NAME, T, PT, FMT)

/* Values for the floating types: SUM gets integers in [-1000, 1000] (exact
 * sums for any order), MAX gets halves in [-500000, 500000]. */
#define DEFINE_FLOAT_TYPE(NAME, T)                                              \
static T NAME##_value(int opi, int rank, int size, MPI_Aint i, int salt)        \
{                                                                               \
    unsigned long long h = rnd(rank, i, salt);                                  \
    (void) size;                                                                \
    if (opi == OP_SUM)                                                          \
        return (T) ((long long) (h % 2001) - 1000);                             \
    return (T) ((long long) (h % 2000001) - 1000000) / 2;                       \
}                                                                               \
                                                                                \
static T NAME##_apply(int opi, T a, T b)                                        \
{                                                                               \
    if (opi == OP_SUM)                                                          \
        return a + b;                                                           \
    return a > b ? a : b;                                                       \
}                                                                               \
DEFINE_CHECK(NAME, T, long double, "%.1Lf")

/* One MPI_Allreduce of count elements with op opi, in place or not, then:
 * every element against the rank-ordered reduction computed here, the send
 * buffer unchanged and nothing written past the end of the receive buffer. */
#define DEFINE_CHECK(NAME, T, PT, FMT)                                          \
static void NAME##_check(MPI_Comm comm, MPI_Datatype dt, int opi, MPI_Aint count, \
                         int inplace, int salt)                                 \
{                                                                               \
    int rank, size;                                                             \
    char got[64], expect[64];                                                      \
    MPI_Comm_rank(comm, &rank);                                                 \
    MPI_Comm_size(comm, &size);                                                 \
    /* calloc: long double's padding bytes are sent too, so define them */     \
    T *sbuf = calloc(count + 1, sizeof(T));                                     \
    T *rbuf = calloc(count + 1, sizeof(T));                                     \
    for (MPI_Aint i = 0; i < count; i++)                                        \
        sbuf[i] = NAME##_value(opi, rank, size, i, salt);                       \
    if (inplace)                                                                \
        memcpy(rbuf, sbuf, count * sizeof(T));                                  \
    else                                                                        \
        memset(rbuf, 0x5a, count * sizeof(T));                                  \
    memset(rbuf + count, GUARD, sizeof(T));                                     \
    MPI_Allreduce(inplace ? MPI_IN_PLACE : sbuf, rbuf, (int) count, dt,         \
                  op_handle(opi), comm);                                        \
    for (MPI_Aint i = 0; i < count; i++) {                                      \
        T e = NAME##_value(opi, 0, size, i, salt);                              \
        for (int r = 1; r < size; r++)                                          \
            e = NAME##_apply(opi, e, NAME##_value(opi, r, size, i, salt));      \
        int bad = (opi == OP_LAND || opi == OP_LOR) ? (!rbuf[i] != !e) : (rbuf[i] != e); \
        if (bad) {                                                              \
            snprintf(got, sizeof(got), FMT, (PT) rbuf[i]);                      \
            snprintf(expect, sizeof(expect), FMT, (PT) e);                           \
            report(comm, #NAME, op_name[opi], count, inplace, i, got, expect);  \
            break;                                                              \
        }                                                                       \
    }                                                                           \
    if (!inplace)                                                               \
        for (MPI_Aint i = 0; i < count; i++)                                    \
            if (sbuf[i] != NAME##_value(opi, rank, size, i, salt)) {            \
                report(comm, #NAME, op_name[opi], count, inplace, i,            \
                       "changed", "send buffer left alone");                    \
                break;                                                          \
            }                                                                   \
    if (!guard_intact(rbuf + count, sizeof(T)))                                 \
        report(comm, #NAME, op_name[opi], count, inplace, count, "written",     \
               "past the end left alone");                                      \
    free(sbuf);                                                                 \
    free(rbuf);                                                                 \
}

/* *INDENT-OFF* */
DEFINE_INT_TYPE(int, int, 1, INT_MAX, long long, "%lld")
DEFINE_INT_TYPE(unsigned, unsigned, 0, UINT_MAX, unsigned long long, "%llu")
DEFINE_INT_TYPE(long, long, 1, LONG_MAX, long long, "%lld")
DEFINE_INT_TYPE(long_long, long long, 1, LLONG_MAX, long long, "%lld")
DEFINE_INT_TYPE(short, short, 1, SHRT_MAX, long long, "%lld")
DEFINE_INT_TYPE(signed_char, signed char, 1, SCHAR_MAX, long long, "%lld")
DEFINE_INT_TYPE(unsigned_char, unsigned char, 0, UCHAR_MAX, unsigned long long, "%llu")
DEFINE_FLOAT_TYPE(float, float)
DEFINE_FLOAT_TYPE(double, double)
DEFINE_FLOAT_TYPE(long_double, long double)
/* *INDENT-ON* */

typedef void (*check_fn) (MPI_Comm, MPI_Datatype, int, MPI_Aint, int, int);

struct ptype {
    check_fn check;
    MPI_Datatype dt;
    int is_float;               /* only SUM and MAX */
};

#define NUM_PTYPES 10
static struct ptype ptypes[NUM_PTYPES];

static void init_ptypes(void)
{
    struct ptype t[NUM_PTYPES] = {
        {int_check, MPI_INT, 0},
        {unsigned_check, MPI_UNSIGNED, 0},
        {long_check, MPI_LONG, 0},
        {long_long_check, MPI_LONG_LONG, 0},
        {short_check, MPI_SHORT, 0},
        {signed_char_check, MPI_SIGNED_CHAR, 0},
        {unsigned_char_check, MPI_UNSIGNED_CHAR, 0},
        {float_check, MPI_FLOAT, 1},
        {double_check, MPI_DOUBLE, 1},
        {long_double_check, MPI_LONG_DOUBLE, 1},
    };
    memcpy(ptypes, t, sizeof(t));
}

/* ---- user-defined ops ----
 * Each op checks that it is handed the datatype of the call: an algorithm
 * that splits the buffer into chunks must still pass whole elements of the
 * user's type, never bytes. */

static MPI_Datatype op_expected_type;
static int op_wrong_type = 0;

/* commutative, 8-byte elements: field 0 summed, field 1 maxed (so swapped
 * fields or halves of an element show) */
typedef struct {
    int sum, max;
} pair_t;

static void pair_fn(void *in, void *inout, int *len, MPI_Datatype * dt)
{
    const pair_t *a = in;
    pair_t *b = inout;
    if (*dt != op_expected_type)
        op_wrong_type++;
    for (int k = 0; k < *len; k++) {
        b[k].sum += a[k].sum;
        if (a[k].max > b[k].max)
            b[k].max = a[k].max;
    }
}

static void pair_value(void *elem, int rank, MPI_Aint i, int salt)
{
    unsigned long long h = rnd(rank, i, salt);
    pair_t *p = elem;
    p->sum = (int) (h % 2000001) - 1000000;
    p->max = (int) ((h >> 32) % 2000000001u) - 1000000000;
}

/* commutative, 6-byte elements, which never divide a power-of-two chunk:
 * wrapping sum, xor and max of unsigned shorts */
static void triple_fn(void *in, void *inout, int *len, MPI_Datatype * dt)
{
    const unsigned short *a = in;
    unsigned short *b = inout;
    if (*dt != op_expected_type)
        op_wrong_type++;
    for (int k = 0; k < *len; k++) {
        b[3 * k] = (unsigned short) (a[3 * k] + b[3 * k]);
        b[3 * k + 1] ^= a[3 * k + 1];
        if (a[3 * k + 2] > b[3 * k + 2])
            b[3 * k + 2] = a[3 * k + 2];
    }
}

static void triple_value(void *elem, int rank, MPI_Aint i, int salt)
{
    unsigned long long h = rnd(rank, i, salt);
    unsigned short *t = elem;
    t[0] = (unsigned short) h;
    t[1] = (unsigned short) (h >> 16);
    t[2] = (unsigned short) (h >> 32);
}

/* non-commutative: product of 2x2 matrices (row-major) of unsigned ints,
 * modulo 2^32, which is associative but not commutative. in holds the
 * lower ranks' product, so inout becomes in * inout. */
static void matmul_fn(void *in, void *inout, int *len, MPI_Datatype * dt)
{
    const unsigned *a = in;
    unsigned *b = inout;
    if (*dt != op_expected_type)
        op_wrong_type++;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        unsigned c0 = a[0] * b[0] + a[1] * b[2];
        unsigned c1 = a[0] * b[1] + a[1] * b[3];
        unsigned c2 = a[2] * b[0] + a[3] * b[2];
        unsigned c3 = a[2] * b[1] + a[3] * b[3];
        b[0] = c0;
        b[1] = c1;
        b[2] = c2;
        b[3] = c3;
    }
}

static void matrix_value(void *elem, int rank, MPI_Aint i, int salt)
{
    unsigned long long h = rnd(rank, i, salt), g = mix(h);
    unsigned *m = elem;
    m[0] = (unsigned) h;
    m[1] = (unsigned) (h >> 32);
    m[2] = (unsigned) g;
    m[3] = (unsigned) (g >> 32);
}

struct uop {
    const char *name;
    MPI_User_function *fn;
    int commute;
    int nbase;                  /* elements of base per element of the op */
    MPI_Datatype base;
    size_t esize;
    void (*value) (void *elem, int rank, MPI_Aint i, int salt);
    MPI_Datatype type;          /* created in init_uops */
    MPI_Op op;
};

#define NUM_UOPS 3
static struct uop uops[NUM_UOPS];

static void init_uops(void)
{
    struct uop u[NUM_UOPS] = {
        {"pair", pair_fn, 1, 2, MPI_INT, sizeof(pair_t), pair_value, MPI_DATATYPE_NULL, MPI_OP_NULL},
        {"triple", triple_fn, 1, 3, MPI_UNSIGNED_SHORT, 3 * sizeof(unsigned short), triple_value,
         MPI_DATATYPE_NULL, MPI_OP_NULL},
        {"matrix", matmul_fn, 0, 4, MPI_UNSIGNED, 4 * sizeof(unsigned), matrix_value, MPI_DATATYPE_NULL,
         MPI_OP_NULL},
    };
    for (int k = 0; k < NUM_UOPS; k++) {
        MPI_Type_contiguous(u[k].nbase, u[k].base, &u[k].type);
        MPI_Type_commit(&u[k].type);
        MPI_Op_create(u[k].fn, u[k].commute, &u[k].op);
    }
    memcpy(uops, u, sizeof(u));
}

static void free_uops(void)
{
    for (int k = 0; k < NUM_UOPS; k++) {
        MPI_Type_free(&uops[k].type);
        MPI_Op_free(&uops[k].op);
    }
}

static void hexdump(char *s, size_t n, const void *p, size_t len)
{
    const unsigned char *b = p;
    s[0] = '\0';
    for (size_t k = 0; k < len && 2 * k + 3 <= n; k++)
        snprintf(s + 2 * k, n - 2 * k, "%02x", b[k]);
}

/* As DEFINE_CHECK, for a user op. The expected value folds the ranks'
 * contributions in rank order with the op's own function; for the
 * non-commutative op that order is what MPI requires of the result. */
static void uop_check(MPI_Comm comm, const struct uop *u, MPI_Aint count, int inplace, int salt)
{
    int rank, size, one = 1;
    char got[80], expect[80];
    MPI_Datatype type = u->type;
    size_t es = u->esize;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    char *sbuf = malloc((count + 1) * es), *rbuf = malloc((count + 1) * es);
    char *e = malloc(es), *v = malloc(es);
    for (MPI_Aint i = 0; i < count; i++)
        u->value(sbuf + i * es, rank, i, salt);
    if (inplace)
        memcpy(rbuf, sbuf, count * es);
    else
        memset(rbuf, 0x5a, count * es);
    memset(rbuf + count * es, GUARD, es);
    op_expected_type = u->type;
    op_wrong_type = 0;
    MPI_Allreduce(inplace ? MPI_IN_PLACE : sbuf, rbuf, (int) count, u->type, u->op, comm);
    if (op_wrong_type)
        report(comm, u->name, "user op", count, inplace, 0, "called with another datatype",
               "the call's datatype");
    for (MPI_Aint i = 0; i < count; i++) {
        u->value(e, 0, i, salt);
        for (int r = 1; r < size; r++) {
            u->value(v, r, i, salt);
            u->fn(e, v, &one, &type);   /* v = e op v */
            memcpy(e, v, es);
        }
        if (memcmp(rbuf + i * es, e, es)) {
            hexdump(got, sizeof(got), rbuf + i * es, es);
            hexdump(expect, sizeof(expect), e, es);
            report(comm, u->name, "user op", count, inplace, i, got, expect);
            break;
        }
    }
    if (!inplace)
        for (MPI_Aint i = 0; i < count; i++) {
            u->value(v, rank, i, salt);
            if (memcmp(sbuf + i * es, v, es)) {
                report(comm, u->name, "user op", count, inplace, i, "changed",
                       "send buffer left alone");
                break;
            }
        }
    if (!guard_intact(rbuf + count * es, es))
        report(comm, u->name, "user op", count, inplace, count, "written",
               "past the end left alone");
    free(sbuf);
    free(rbuf);
    free(e);
    free(v);
}

/* Runs the checks on comm, the which-th communicator (0 is MPI_COMM_WORLD).
 * The whole type x op matrix runs on world only; each other communicator
 * takes two ops per type, in turn, and a share of the larger counts, so that
 * every type and every user op meets a large count on some communicator
 * while the program stays quick where processes share cores (a call then
 * costs a scheduler time slice, and stock MPICH moves a large allreduce in
 * many small shared-memory steps). */
static void run_all(MPI_Comm comm, int which, int salt)
{
    const MPI_Aint all_counts[] = { 1, 7, 1000 }, small_counts[] = { 1, 7, 33, 100 };
    const MPI_Aint *counts = small_only ? small_counts : all_counts;
    const int ncounts = small_only ? 4 : 3;
    const int int_ops[] = { OP_SUM, OP_PROD, OP_MAX, OP_MIN, OP_BAND, OP_BOR, OP_BXOR, OP_LAND,
        OP_LOR
    };
    const int float_ops[] = { OP_SUM, OP_MAX };

    for (int t = 0; t < NUM_PTYPES; t++) {
        const int *ops = ptypes[t].is_float ? float_ops : int_ops;
        int nops = ptypes[t].is_float ? 2 : NUM_OPS;

        /* count 0: nothing to reduce, nothing may be written */
        ptypes[t].check(comm, ptypes[t].dt, OP_SUM, 0, t & 1, salt + t);

        /* in place or not alternates, so each type and op gets both */
        for (int c = 0; c < ncounts; c++)
            for (int k = 0; k < nops; k++) {
                if (which > 0 && k != (2 * which + t) % nops && k != (2 * which + t + 1) % nops)
                    continue;
                ptypes[t].check(comm, ptypes[t].dt, ops[k], counts[c], (c + k + t) & 1,
                                salt + 97 * c + 13 * t + k);
            }

        /* 65537 elements: many chunks and a partial last one; two types per
         * communicator */
        if (t % 5 == which && !small_only)
            ptypes[t].check(comm, ptypes[t].dt, ops[(t + which) % nops], 65537, t & 1,
                            salt + 50 + t);
    }

    for (int k = 0; k < NUM_UOPS; k++) {
        if (!with_userops || (!uops[k].commute && !with_noncommutative))
            continue;
        uop_check(comm, &uops[k], 0, k & 1, salt + 60 + k);
        for (int c = 0; c < ncounts; c++) {
            uop_check(comm, &uops[k], counts[c], 0, salt + 31 * c + k);
            uop_check(comm, &uops[k], counts[c], 1, salt + 37 * c + k);
        }
        /* the non-commutative op on the reversed communicator among them */
        if (k == which % NUM_UOPS && !small_only)
            uop_check(comm, &uops[k], 65537, which & 1, salt + 70 + k);
    }

    if (which == 0 && !small_only) {
        /* 64 KiB of ints and 128 KiB of doubles, a whole number of any
         * power-of-two chunk size up to that, then one element more: the
         * last chunk full, then holding a single element */
        for (MPI_Aint n = 16384; n <= 16385; n++) {
            int_check(comm, MPI_INT, OP_SUM, n, n & 1, salt + 11);
            double_check(comm, MPI_DOUBLE, OP_SUM, n, !(n & 1), salt + 12);
        }
        /* 3 MiB and 40 bytes in one call */
        double_check(comm, MPI_DOUBLE, OP_SUM, 384 * 1024 + 5, 0, salt + 21);
    }
}

/* the salts as before: 1 on MPI_COMM_WORLD, 1000 k on the k-th other */
static void run_on(MPI_Comm comm, const char *name, int k)
{
    comm_name = name;
    run_all(comm, k, k ? 1000 * k : 1);
}

/* Many small reduces back to back, the root changing every 20 calls and
 * now and then asleep: within a node the others leave a reduce as soon as
 * their input is in their cell, so they run ahead of the root, and must
 * wait before they rewrite a cell the root has not read.  Allreduces in
 * between, which everyone reads.  A writer that once took a faster
 * process' count for a slower one's (MPIDI_Topo_cell_claim) overwrote a
 * cell the slower one had not read: 5 of 8 runs of 200 passes (-ring=200)
 * on 3 processes bound to 2 cores saw it. */
static void check_small_ring(MPI_Comm comm, int salt)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int in[256], out[256];
    for (int call = 0; call < 400; call++) {
        int root = (call / 20) % size, n = 1 + (call * 7) % 256;
        for (int i = 0; i < n; i++)
            in[i] = (rank + 1) * (i + call + salt) % 1000;
        for (int i = 0; i < n; i++)
            out[i] = -1;
        if (rank == root && call % 23 == 3)
            usleep(2000);
        if (call % 20 == 19)
            MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, comm);
        else
            MPI_Reduce(in, out, n, MPI_INT, MPI_SUM, root, comm);
        if (call % 20 != 19 && rank != root)
            continue;
        for (int i = 0; i < n; i++) {
            long want = 0;
            for (int r = 0; r < size; r++)
                want += (r + 1) * (i + call + salt) % 1000;
            if (out[i] != want) {
                if (errs < 10)
                    fprintf(stderr, "[%d] %s: small ring call %d n %d root %d: element %d is "
                            "%d, expected %ld\n", rank, comm_name, call, n, root, i, out[i],
                            want);
                errs++;
                break;
            }
        }
    }
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);

    /* -noncommutative=0 / -userops=0: for runs with
     * MPIR_CVAR_COLLECTIVE_FALLBACK=error, where an algorithm that cannot
     * run an op must fall back and so fails the call; those ops' checks then
     * belong to a run that allows the fallback */
    MTestArgList *head = MTestArgListCreate(argc, argv);
    with_noncommutative = MTestArgListGetInt_with_default(head, "noncommutative", 1);
    with_userops = MTestArgListGetInt_with_default(head, "userops", 1);
    small_only = MTestArgListGetInt_with_default(head, "small", 0);
    int ring_passes = MTestArgListGetInt_with_default(head, "ring", 0);
    MTestArgListDestroy(head);

    init_ptypes();
    init_uops();

    /* -ring=N: only N passes of the small ring */
    if (ring_passes == 0)
        topo_test_each_comm(run_on, 4242);
    comm_name = "world";
    for (int k = 0; k < ring_passes || k == 0; k++)
        check_small_ring(MPI_COMM_WORLD, 7 + k);

    free_uops();
    MTest_Finalize(errs);
    return MTestReturnValue(errs);
}
