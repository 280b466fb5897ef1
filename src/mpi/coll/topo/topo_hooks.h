/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#ifndef TOPO_HOOKS_H_INCLUDED
#define TOPO_HOOKS_H_INCLUDED

/* Hooks MPICH calls: collective setup/teardown (coll_impl.c), the end of a
 * communicator's commit (commutil.c, mpir_init.c for MPI_COMM_WORLD),
 * MPI_Comm_idup's commit (contextid.c) and MPI_COMM_TYPE_HW_GUIDED
 * (comm_split_type.c).  Kept out of the globally included
 * headers so that changing them rebuilds few files. */
void MPIR_Topo_comm_free(MPIR_Comm * comm);     /* topo.c */
void MPIR_Coll_trace_init(void);        /* coll_trace.c */
void MPIR_Coll_trace_finalize(void);    /* coll_trace.c */
/* MPIR_CVAR_TOPO_EAGER_SETUP: collective over an intracommunicator just
 * committed; swallows its errors (the calls then fall back) */
void MPIR_Topo_comm_committed(MPIR_Comm * comm);        /* topo_entry.c */
extern MPL_TLS int MPIR_Topo_setup_hold;        /* topo_entry.c: > 0, no eager setup */
/* MPI_COMM_TYPE_HW_GUIDED for a resource name (comm_split_type.c) */
int MPIR_Topo_split_hw_guided(MPIR_Comm * comm, int key, const char *name,
                              MPIR_Comm ** newcomm);       /* topo_split.c */
/* MPI_COMM_TYPE_HW_UNGUIDED; *name: the level's mpi_hw_resource_type, valid
 * until the next call (comm_split_type.c) */
int MPIR_Topo_split_hw_unguided(MPIR_Comm * comm, int key, MPIR_Comm ** newcomm,
                                const char **name);        /* topo_split.c */

/* the netmod's interface among n that libfabric lists one by one: the index
 * of the nearest to this process (MPIR_CVAR_TOPO_NEAREST_NIC), else 0; the
 * topology print shows it (ofi_nic.c) */
int MPIR_Topo_pick_netdev(const char *const *names, int n);    /* topo.c */
/* the link speed of network interface ifname in Mb/s (sysfs), -1 if not
 * known (ofi_nic.c) */
long MPIR_Topo_link_speed(const char *ifname);        /* topo.c */
/* UCX's tcp transport sends through the same interface from every
 * process: the value for UCX_NET_DEVICES (user: its value in the
 * environment, or NULL) that leaves out of user's list (every network
 * device UCX finds where it is unset, empty or "all") the interfaces of
 * the fastest link speed farther from this process than its nearest
 * (MPIR_CVAR_TOPO_NEAREST_NIC); NULL to leave UCX's own choice
 * (ucx_init.c) */
const char *MPIR_Topo_ucx_net_devices(const char *user);  /* topo.c */
/* the netmod's NIC where the netmod chose it (the print shows it) */
void MPIR_Topo_note_netdev(const char *name);   /* topo.c */

#endif /* TOPO_HOOKS_H_INCLUDED */
