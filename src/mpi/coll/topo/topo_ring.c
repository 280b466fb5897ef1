/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Distance-aware ring (Ma et al., Algorithm 2): the greedy Hamiltonian
 * path over the clusters of a map (see topo_map.c). */

#include <stdlib.h>
#include <string.h>
#include "topo_map_impl.h"

typedef struct {
    unsigned char *deg;
    int *adj;                   /* two slots per rank */
    int *uf;
} topo_ring_t;

/* next alive position >= j; dead positions point past themselves */
static int next_alive(int *nxt, int j)
{
    int r = j, t;
    while (nxt[r] != r)
        r = nxt[r];
    while (nxt[j] != r) {
        t = nxt[j];
        nxt[j] = r;
        j = t;
    }
    return r;
}

/* accept edge (u,v) if it keeps the graph a set of paths */
static int ring_try(topo_ring_t * R, int u, int v)
{
    int a, b;
    if (R->deg[u] >= 2 || R->deg[v] >= 2)
        return 0;
    a = uf_find(R->uf, u);
    b = uf_find(R->uf, v);
    if (a == b)
        return 0;
    R->uf[a] = b;
    R->adj[2 * u + R->deg[u]++] = v;
    R->adj[2 * v + R->deg[v]++] = u;
    return 1;
}

/* Greedy over all pairs of the sorted vertex list V[0..nv): edges in order
 * (smaller, larger).  A vertex that reaches degree 2 is skipped for good;
 * per u at most two same-path vertices are passed over. */
static void ring_clique(topo_ring_t * R, const int *V, int nv, int *nxt)
{
    int i, j;

    for (i = 0; i <= nv; i++)
        nxt[i] = i;
    for (i = 0; i < nv; i++) {
        int u = V[i];
        if (R->deg[u] >= 2)
            continue;
        for (j = next_alive(nxt, i + 1); j < nv && R->deg[u] < 2; j = next_alive(nxt, j + 1))
            if (ring_try(R, u, V[j]) && R->deg[V[j]] >= 2)
                nxt[j] = j + 1;
        nxt[i] = i + 1;
    }
}

/* first index in V[0..nv) with V[idx] > u */
static int upper_bound(const int *V, int nv, int u)
{
    int lo = 0, hi = nv;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (V[mid] <= u)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int MPIR_Topo_ring_create(const MPIR_Topo_map_t * map, int *order)
{
    int p = map->p, w, r, i, j, n, k0, k1, s, prev, cur, z;
    topo_ring_t R;
    int *V, *nxt, *off, *V1, *nxt1;
    void *block;
    size_t sz;

    if (p == 1) {
        order[0] = 0;
        return 0;
    }
    /* adj 2p, uf p, V p, nxt p+1, off p+1, V1 p... nxt1 p+1, deg p */
    sz = (size_t) (2 * p + p + p + (p + 1) + (p + 1) + (p + 1)) * sizeof(int) + (size_t) p;
    block = MPIR_TOPO_MALLOC(sz);
    if (block == NULL)
        return -1;
    R.adj = block;
    R.uf = R.adj + 2 * p;
    V = R.uf + p;
    nxt = V + p;
    off = nxt + p + 1;
    nxt1 = off + p + 1;
    R.deg = (unsigned char *) (nxt1 + p + 1);
    memset(R.deg, 0, p);
    for (r = 0; r < p; r++)
        R.uf[r] = r;

    /* intra-node levels: bucket the free vertices of each cluster; ranks are
     * visited in increasing order so each bucket is sorted */
    for (w = 1; w <= NLEV; w++) {
        int ncl = map->ncl[w];
        const int *cid = map->cid[w];
        memset(off, 0, (ncl + 1) * sizeof(int));
        for (r = 0; r < p; r++)
            if (R.deg[r] < 2)
                off[cid[r] + 1]++;
        for (i = 0; i < ncl; i++)
            off[i + 1] += off[i];
        for (r = 0; r < p; r++)
            if (R.deg[r] < 2)
                V[off[cid[r]]++] = r;
        /* off[i] now holds the end of bucket i */
        for (i = 0, j = 0; i < ncl; j = off[i], i++)
            if (off[i] - j > 1)
                ring_clique(&R, V + j, off[i] - j, nxt);
    }

    /* across nodes: weight 7 among near, 8 near-far, 9 among far */
    n = 0;
    for (r = 0; r < p; r++)
        if (R.deg[r] < 2 && !map->far[r])
            V[n++] = r;
    ring_clique(&R, V, n, nxt);

    k0 = k1 = 0;
    V1 = off;   /* far list */
    for (r = 0; r < p; r++)
        if (R.deg[r] < 2) {
            if (map->far[r])
                V1[k1++] = r;
            else
                V[k0++] = r;
        }
    for (i = 0; i <= k0; i++)
        nxt[i] = i;
    for (i = 0; i <= k1; i++)
        nxt1[i] = i;
    for (i = 0, j = 0; i < k0 || j < k1;) {
        /* merge walk: u is the next free vertex of either class */
        int u, is_far, *onxt, ok, *mynxt, myidx;
        const int *oV;
        if (j >= k1 || (i < k0 && V[i] < V1[j])) {
            u = V[i];
            is_far = 0;
            myidx = i++;
        } else {
            u = V1[j];
            is_far = 1;
            myidx = j++;
        }
        mynxt = is_far ? nxt1 : nxt;
        if (R.deg[u] >= 2)
            continue;
        oV = is_far ? V : V1;
        ok = is_far ? k0 : k1;
        onxt = is_far ? nxt : nxt1;
        for (z = next_alive(onxt, upper_bound(oV, ok, u)); z < ok && R.deg[u] < 2;
             z = next_alive(onxt, z + 1))
            if (ring_try(&R, u, oV[z]) && R.deg[oV[z]] >= 2)
                onxt[z] = z + 1;
        if (R.deg[u] >= 2)
            mynxt[myidx] = myidx + 1;
    }

    n = 0;
    for (r = 0; r < p; r++)
        if (R.deg[r] < 2 && map->far[r])
            V[n++] = r;
    ring_clique(&R, V, n, nxt);

    /* walk the Hamiltonian path from its smaller end (the first rank of
     * degree < 2); the closing edge is implicit */
    for (s = 0; s < p && R.deg[s] >= 2; s++);
    prev = -1;
    cur = s;
    for (i = 0; i < p; i++) {
        V[i] = cur;
        if (i == p - 1)
            break;
        /* every vertex but the two ends has two neighbours */
        if (cur < 0 || R.deg[cur] == 0 || (i > 0 && R.deg[cur] < 2)) {
            MPIR_TOPO_FREE(block);
            return -1;  /* not a Hamiltonian path: cannot happen */
        }
        z = R.adj[2 * cur] != prev ? R.adj[2 * cur] : R.adj[2 * cur + 1];
        prev = cur;
        cur = z;
    }
    for (z = 0; z < p && V[z] != 0; z++);
    for (i = 0; i < p; i++)
        order[i] = V[(z + i) % p];

    MPIR_TOPO_FREE(block);
    return 0;
}
