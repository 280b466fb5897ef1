/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* The engine's vector reductions (MPIR_Topo_op_apply, topo_op.c) against
 * the scalar loop MPICH runs (src/mpi/coll/op: inout = inout op in, MPL_MAX
 * and MPL_MIN as ternaries), bit for bit: every kind of element and
 * operation, each vector width the CPU has, every length up to a few
 * vectors (the scalar tail) and some longer ones, buffers at odd byte
 * offsets, and floating-point values that tell the operand order of MIN
 * and MAX apart (NaN payloads, signed zeros, infinities, subnormals).  A wrong mask, a
 * swapped operand or a dropped tail element fails here. */

#include <stdint.h>
#include <math.h>
#include "test_topo_util.h"

static const char *kind_name[] = { "i32", "u32", "i64", "u64", "f32", "f64", "i8", "u8", "i16",
    "u16"
};
static const char *op_name[] = { "sum", "prod", "min", "max", "band", "bor", "bxor" };
static const size_t kind_size[] = { 4, 4, 8, 8, 4, 8, 1, 1, 2, 2 };

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* MPICH's scalar step on one element: y = y op x */
#define REF_INT(T, U) do {                                              \
        T x, y; memcpy(&x, in, sizeof x); memcpy(&y, io, sizeof y);    \
        switch (op) {                                                   \
        case MPIR_TOPO_OP_SUM:  y = (T) ((U) y + (U) x); break;         \
        case MPIR_TOPO_OP_PROD: y = (T) ((U) y * (U) x); break;         \
        case MPIR_TOPO_OP_MIN:  y = y < x ? y : x; break;               \
        case MPIR_TOPO_OP_MAX:  y = y > x ? y : x; break;               \
        case MPIR_TOPO_OP_BAND: y = y & x; break;                       \
        case MPIR_TOPO_OP_BOR:  y = y | x; break;                       \
        case MPIR_TOPO_OP_BXOR: y = y ^ x; break;                       \
        }                                                               \
        memcpy(io, &y, sizeof y);                                       \
    } while (0)

#define REF_FLOAT(T) do {                                               \
        T x, y; memcpy(&x, in, sizeof x); memcpy(&y, io, sizeof y);    \
        switch (op) {                                                   \
        case MPIR_TOPO_OP_SUM:  y = y + x; break;                       \
        case MPIR_TOPO_OP_PROD: y = y * x; break;                       \
        case MPIR_TOPO_OP_MIN:  y = y < x ? y : x; break;               \
        case MPIR_TOPO_OP_MAX:  y = y > x ? y : x; break;               \
        }                                                               \
        memcpy(io, &y, sizeof y);                                       \
    } while (0)

static void ref_one(int kind, int op, const char *in, char *io)
{
    switch (kind) {
        case MPIR_TOPO_ELEM_I32: REF_INT(int32_t, uint32_t); break;
        case MPIR_TOPO_ELEM_U32: REF_INT(uint32_t, uint32_t); break;
        case MPIR_TOPO_ELEM_I64: REF_INT(int64_t, uint64_t); break;
        case MPIR_TOPO_ELEM_U64: REF_INT(uint64_t, uint64_t); break;
        case MPIR_TOPO_ELEM_F32: REF_FLOAT(float); break;
        case MPIR_TOPO_ELEM_F64: REF_FLOAT(double); break;
        case MPIR_TOPO_ELEM_I8: REF_INT(int8_t, uint8_t); break;
        case MPIR_TOPO_ELEM_U8: REF_INT(uint8_t, uint8_t); break;
        case MPIR_TOPO_ELEM_I16: REF_INT(int16_t, uint16_t); break;
        case MPIR_TOPO_ELEM_U16: REF_INT(uint16_t, uint16_t); break;
    }
}

static int is_bitwise(int op)
{
    return op == MPIR_TOPO_OP_BAND || op == MPIR_TOPO_OP_BOR || op == MPIR_TOPO_OP_BXOR;
}

/* a value whose bits matter to the order of the operands */
static void fill_float(int kind, char *p)
{
    double d;
    switch (next() % 8) {
        case 0: d = NAN; break;
        case 1: d = -NAN; break;
        case 2: d = 0.0; break;
        case 3: d = -0.0; break;
        case 4: d = (next() & 1) ? INFINITY : -INFINITY; break;
        case 5: d = (kind == MPIR_TOPO_ELEM_F32 ? 1e-40 : 1e-310) * (double) (next() % 7); break;
        default: d = ((double) (int64_t) next()) / 1e15; break;
    }
    if (kind == MPIR_TOPO_ELEM_F32) {
        float f = (float) d;
        uint32_t b;
        memcpy(&b, &f, 4);
        if (isnan(f))
            b ^= (uint32_t) (next() & 0x3fffff);  /* a payload of its own */
        memcpy(p, &b, 4);
    } else {
        uint64_t b;
        memcpy(&b, &d, 8);
        if (isnan(d))
            b ^= next() & 0x7ffffffffffffull;
        memcpy(p, &b, 8);
    }
}

static void fill(int kind, char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char *e = p + i * kind_size[kind];
        if (kind == MPIR_TOPO_ELEM_F32 || kind == MPIR_TOPO_ELEM_F64)
            fill_float(kind, e);
        else {
            /* small values often, so that MIN/MAX see ties and signs */
            uint64_t v = next();
            if (v & 1)
                v = (uint64_t) ((int64_t) (v >> 8) % 5 - 2);
            memcpy(e, &v, kind_size[kind]);
        }
    }
}

/* the same bits; a sum or product that is NaN may carry either operand's
 * payload: C lets the compiler swap the operands of + and *, in MPICH's
 * loops too */
static int same(int kind, int op, const char *got, const char *exp)
{
    if (op == MPIR_TOPO_OP_SUM || op == MPIR_TOPO_OP_PROD) {
        if (kind == MPIR_TOPO_ELEM_F32) {
            float g, e;
            memcpy(&g, got, 4);
            memcpy(&e, exp, 4);
            if (isnan(e))
                return isnan(g);
        } else if (kind == MPIR_TOPO_ELEM_F64) {
            double g, e;
            memcpy(&g, got, 8);
            memcpy(&e, exp, 8);
            if (isnan(e))
                return isnan(g);
        }
    }
    return !memcmp(got, exp, kind_size[kind]);
}

static void check_width(int width)
{
    static const size_t lens[] = { 0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65,
        1000, 4099
    };
    size_t max = 4099 * 8 + 16;
    char *in = tu_xmalloc(max), *io = tu_xmalloc(max), *ref = tu_xmalloc(max);
    char name[64];

    snprintf(name, sizeof name, "vector width %d: bits as MPICH's scalar loops", width);
    tu_begin(name);
    for (int kind = 0; kind < MPIR_TOPO_ELEM_COUNT; kind++)
        for (int op = 0; op < MPIR_TOPO_OP_COUNT; op++) {
            int covered = !(is_bitwise(op) && (kind == MPIR_TOPO_ELEM_F32 ||
                                                kind == MPIR_TOPO_ELEM_F64));
            for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
                for (int off = 0; off < 3; off++) {
                    size_t n = lens[l], es = kind_size[kind];
                    /* in and inout at different odd offsets */
                    char *a = in + off, *b = io + (off * 5) % 8;
                    int done;

                    fill(kind, a, n);
                    fill(kind, b, n);
                    memcpy(ref, b, n * es);
                    for (size_t i = 0; covered && i < n; i++)
                        ref_one(kind, op, a + i * es, ref + i * es);
                    done = MPIR_Topo_op_apply_width(width, kind, op, a, b, n);
                    if (!CHECK(done == covered, "%s %s: returned %d", kind_name[kind],
                               op_name[op], done) || !covered)
                        continue;
                    for (size_t i = 0; i < n; i++)
                        if (!CHECK(same(kind, op, b + i * es, ref + i * es),
                                   "%s %s n=%zu offset %d: element %zu differs",
                                   kind_name[kind], op_name[op], n, off, i))
                            break;
                }
        }
    tu_end();
    free(in);
    free(io);
    free(ref);
}

/* known answers, independent of the reference above */
static void check_known(void)
{
    int32_t i[4] = { INT32_MAX, -3, 7, INT32_MIN }, j[4] = { 1, -3, -9, 0 };
    float nan1, f[2], g[2];
    uint32_t bits;

    tu_begin("known answers: wrap-around, MIN/MAX operand order on NaN, no bitwise floats");
    CHECK(MPIR_Topo_op_apply(MPIR_TOPO_ELEM_I32, MPIR_TOPO_OP_SUM, i, j, 4), "i32 sum not done");
    CHECK(j[0] == INT32_MIN && j[1] == -6 && j[2] == -2 && j[3] == INT32_MIN,
          "i32 sum: %d %d %d %d", j[0], j[1], j[2], j[3]);
    j[0] = 5;
    j[1] = -3;
    j[2] = 8;
    j[3] = -1;
    CHECK(MPIR_Topo_op_apply(MPIR_TOPO_ELEM_I32, MPIR_TOPO_OP_MAX, i, j, 4), "i32 max not done");
    CHECK(j[0] == INT32_MAX && j[1] == -3 && j[2] == 8 && j[3] == -1,
          "i32 max: %d %d %d %d", j[0], j[1], j[2], j[3]);
    CHECK(MPIR_Topo_op_apply(MPIR_TOPO_ELEM_U32, MPIR_TOPO_OP_MAX, i, j, 4), "u32 max not done");
    CHECK((uint32_t) j[3] == UINT32_MAX && (uint32_t) j[0] == INT32_MAX,
          "u32 max compares unsigned: %u %u", (uint32_t) j[0], (uint32_t) j[3]);
    /* MPL_MAX(inout, in): NaN > 1 is false, so in; 1 > NaN is false, so in */
    bits = 0x7fc00123u;
    memcpy(&nan1, &bits, 4);
    f[0] = 1.0f;
    f[1] = nan1;
    g[0] = nan1;
    g[1] = 1.0f;
    CHECK(MPIR_Topo_op_apply(MPIR_TOPO_ELEM_F32, MPIR_TOPO_OP_MAX, f, g, 2), "f32 max not done");
    memcpy(&bits, &g[1], 4);
    CHECK(g[0] == 1.0f && bits == 0x7fc00123u, "f32 max: %g, bits %08x", g[0], bits);
    {
        /* 8 bits (OSU's MPI_CHAR): wrap-around, signed against unsigned order */
        int8_t a[3] = { 127, -128, -1 }, b[3] = { 1, -1, 1 };
        uint8_t c[3] = { 0x80, 1, 0xff }, d[3] = { 0x7f, 2, 0 };

        CHECK(MPIR_Topo_op_apply(MPIR_TOPO_ELEM_I8, MPIR_TOPO_OP_SUM, a, b, 3), "i8 sum not done");
        CHECK(b[0] == -128 && b[1] == 127 && b[2] == 0, "i8 sum: %d %d %d", b[0], b[1], b[2]);
        CHECK(MPIR_Topo_op_apply(MPIR_TOPO_ELEM_I8, MPIR_TOPO_OP_MAX, a, b, 3), "i8 max not done");
        CHECK(b[0] == 127 && b[1] == 127 && b[2] == 0, "i8 max: %d %d %d", b[0], b[1], b[2]);
        CHECK(MPIR_Topo_op_apply(MPIR_TOPO_ELEM_U8, MPIR_TOPO_OP_MAX, c, d, 3), "u8 max not done");
        CHECK(d[0] == 0x80 && d[1] == 2 && d[2] == 0xff, "u8 max: %u %u %u", d[0], d[1], d[2]);
    }
    CHECK(!MPIR_Topo_op_apply(MPIR_TOPO_ELEM_F64, MPIR_TOPO_OP_BXOR, f, g, 1),
          "f64 bxor claimed done");
    CHECK(!MPIR_Topo_op_apply(MPIR_TOPO_ELEM_COUNT, MPIR_TOPO_OP_SUM, f, g, 1),
          "unknown kind claimed done");
    tu_end();
}

int main(void)
{
    int32_t a = 0, b = 0;

    check_known();
    check_width(16);
    /* 32 only where the CPU has it */
    if (MPIR_Topo_op_apply_width(32, MPIR_TOPO_ELEM_I32, MPIR_TOPO_OP_SUM, &a, &b, 1))
        check_width(32);
    else
        printf("SKIP vector width 32: not on this CPU\n");
    return tu_groups_failed != 0;
}
