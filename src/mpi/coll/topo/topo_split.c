/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#include "mpiimpl.h"
#include "topo_hooks.h"
#include <strings.h>
#ifdef HAVE_HWLOC
#include <hwloc.h>
#endif

/* MPI_Comm_split_type(MPI_COMM_TYPE_HW_GUIDED) with the info key
 * mpi_hw_resource_type (MPI 4.0, section 7.4.2): each new communicator holds
 * the processes of one node that are restricted to the same instance of that
 * hardware resource; a process restricted to no single instance (unbound,
 * or bound across two) gets MPI_COMM_NULL, and so does everyone for a type
 * this node does not have or a name nobody knows.
 *
 * The instance is read from the hwloc topology and binding the collectives'
 * topology module uses (MPIR_hwtopo_get_hwloc).  Names are hwloc's, case
 * insensitive ("Package", "NUMANode", "L3Cache", "Core", "PU", "Machine",
 * ...), plus MPICH's own: "node" (the machine, not hwloc's old name for a
 * NUMA node), "hwthread", "ddr", and what MPICH's gid interface knows besides
 * (network and GPU devices: "ib0", "gpu", "pci:...").
 *
 * MPI_COMM_TYPE_HW_UNGUIDED: the first level, from the node down through
 * every level of the same hwloc topology (Package, Group, NUMANode, L3Cache,
 * ..., Core, PU), that splits comm into strict subsets; the level's name
 * comes back in the info (mpi_hw_resource_type), and names the same split
 * when given to HW_GUIDED.  MPI_COMM_NULL where no level splits comm, and
 * to a process restricted to no single instance of the level chosen. */

#ifdef HAVE_HWLOC
/* MPICH's names that hwloc reads otherwise or not at all */
static const char *hwloc_name(const char *name)
{
    static const char *const alias[][2] = {
        {"node", "Machine"}, {"hwthread", "PU"}, {"ddr", "NUMANode"}
    };

    for (int i = 0; i < (int) (sizeof(alias) / sizeof(alias[0])); i++)
        if (!strcasecmp(name, alias[i][0]))
            return alias[i][1];
    return name;
}

/* The logical index of the one object of the named type that holds the
 * whole binding; -1 if none does; -2 if hwloc has no such type name. */
static int hwloc_instance(hwloc_topology_t topo, hwloc_const_cpuset_t binding, const char *name)
{
    hwloc_obj_type_t type;
    union hwloc_obj_attr_u attr;
    hwloc_obj_t obj = NULL;

    if (hwloc_type_sscanf(hwloc_name(name), &type, &attr, sizeof(attr)) < 0)
        return -2;
    while ((obj = hwloc_get_next_obj_by_type(topo, type, obj)) != NULL) {
        /* (a Group of another depth than the one named is another level) */
        if (type == HWLOC_OBJ_GROUP && attr.group.depth != (unsigned) -1 &&
            obj->attr->group.depth != attr.group.depth)
            continue;
        if (obj->cpuset && !hwloc_bitmap_iszero(binding) &&
            hwloc_bitmap_isincluded(binding, obj->cpuset))
            return (int) obj->logical_index;
    }
    return -1;
}

/* The levels below the machine, outermost first, as names hwloc_instance
 * reads; a NUMA node (a memory child in hwloc 2) comes right after the
 * level of its parent.  Returns how many (at most max). */
static int hwloc_levels(hwloc_topology_t topo, char (*names)[32], int max)
{
    int n = 0, depth = hwloc_topology_get_depth(topo);
    hwloc_obj_t numa = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, 0);
    int numa_after = numa && numa->parent ? numa->parent->depth : -1;

    for (int d = 0; d < depth && n < max; d++) {
        hwloc_obj_t obj = hwloc_get_obj_by_depth(topo, d, 0);
        if (d > 0 && obj && hwloc_obj_type_snprintf(names[n], sizeof(names[n]), obj, 1) > 0)
            n++;
        if (d == numa_after && n < max) {
            snprintf(names[n], sizeof(names[n]), "NUMANode");
            n++;
        }
    }
    return n;
}

static int hwloc_levels_of_this_process(char (*names)[32], int max)
{
    void *topo;
    const void *binding;

    if (!MPIR_hwtopo_get_hwloc(&topo, &binding) || !topo)
        return 0;
    return hwloc_levels((hwloc_topology_t) topo, names, max);
}
#endif

/* This process's color among the members of its node: MPI_UNDEFINED where
 * it is restricted to no single instance. */
static int hw_guided_color(const char *name)
{
    int color = MPI_UNDEFINED;
#ifdef HAVE_HWLOC
    void *topo;
    const void *binding;

    if (MPIR_hwtopo_get_hwloc(&topo, &binding) && topo) {
        int idx = hwloc_instance((hwloc_topology_t) topo, (hwloc_const_cpuset_t) binding, name);
        if (idx >= 0)
            color = idx;
        else if (idx == -2) {
            /* MPICH's device names; its root gid means no single instance */
            MPIR_hwtopo_gid_t gid = MPIR_hwtopo_get_obj_by_name(name);
            if (gid != MPIR_HWTOPO_GID_ROOT && gid >= 0)
                color = (int) gid;
        }
    }
#else
    (void) name;
#endif
    return color;
}

int MPIR_Topo_split_hw_guided(MPIR_Comm * comm, int key, const char *name, MPIR_Comm ** newcomm)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Comm *node_comm = NULL;

    *newcomm = NULL;
    /* instances are numbered per node: the node first */
    mpi_errno = MPIR_Comm_split_type_by_node(comm, key, &node_comm);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIR_Comm_split_impl(node_comm, hw_guided_color(name), key, newcomm);
    MPIR_ERR_CHECK(mpi_errno);

  fn_exit:
    if (node_comm)
        MPIR_Comm_free_impl(node_comm);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

#define TOPO_SPLIT_MAX_LEVELS 16

int MPIR_Topo_split_hw_unguided(MPIR_Comm * comm, int key, MPIR_Comm ** newcomm,
                                const char **name)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    int nlevels = 0, all_nlevels = 0;
    MPIR_Comm *sub = NULL;
    /* (the name returned points here: MPI_Comm_split_type runs under
     * MPICH's global critical section) */
    static char names[TOPO_SPLIT_MAX_LEVELS][32];

    *newcomm = NULL;
    *name = NULL;
    mpi_errno = MPIR_Comm_split_type_by_node(comm, key, &sub);
    MPIR_ERR_CHECK(mpi_errno);
    if (sub->local_size < comm->local_size) {
        /* (one node holding all of comm holds it on every member) */
        *newcomm = sub;
        *name = "mpi_shared_memory";
        goto fn_exit;
    }
    MPIR_Comm_free_impl(sub);

    /* comm lies in one node: its levels, tried in the same order on every
     * member (each try is collective) */
#ifdef HAVE_HWLOC
    nlevels = hwloc_levels_of_this_process(names, TOPO_SPLIT_MAX_LEVELS);
#endif
    mpi_errno = MPIR_Allreduce_impl(&nlevels, &all_nlevels, 1, MPI_INT, MPI_MIN, comm, &errflag);
    MPIR_ERR_CHECK(mpi_errno);
    for (int i = 0; i < all_nlevels; i++) {
        int strict, any_strict = 0;

        mpi_errno = MPIR_Comm_split_impl(comm, hw_guided_color(names[i]), key, &sub);
        MPIR_ERR_CHECK(mpi_errno);
        strict = sub && sub->local_size < comm->local_size;
        mpi_errno = MPIR_Allreduce_impl(&strict, &any_strict, 1, MPI_INT, MPI_MAX, comm,
                                        &errflag);
        if (mpi_errno == MPI_SUCCESS && any_strict) {
            *newcomm = sub;
            *name = names[i];
            goto fn_exit;
        }
        if (sub)
            MPIR_Comm_free_impl(sub);
        sub = NULL;
        MPIR_ERR_CHECK(mpi_errno);
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
