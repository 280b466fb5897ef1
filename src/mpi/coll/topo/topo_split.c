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
 * (network and GPU devices: "ib0", "gpu", "pci:..."). */

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
    int node;
    MPIR_Comm *node_comm = NULL;

    *newcomm = NULL;
    /* instances are numbered per node: the node first */
    mpi_errno = MPID_Get_node_id(comm, comm->rank, &node);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIR_Comm_split_impl(comm, node, key, &node_comm);
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
