/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#include "mpiimpl.h"
#include "topo.h"
#include "topo_hooks.h"
#include "csel_topo.h"
#include "coll_trace.h"
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#ifdef HAVE_CH4_NETMOD_UCX
#include <uct/api/uct.h>
#endif

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

categories :
    - name        : TOPO
      description : mpich-topo topology-aware collectives

cvars:
    - name        : MPIR_CVAR_TOPO_PRINT
      category    : TOPO
      type        : boolean
      default     : false
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        If true, rank 0 of each communicator prints the topology mpich-topo
        built for it when it is first used: each member's node, package,
        NUMA node, cache and NIC closeness, the distance-aware ring and the
        bcast tree rooted at rank 0 (for communicators of up to 64 processes);
        and where the shared-memory engine sets itself up, the first process
        of each node prints the node's levels of reduction and their units
        (MPIR_CVAR_TOPO_NODE_LEVELS).

    - name        : MPIR_CVAR_TOPO_DEBUG_STAGING_NOMEM
      category    : TOPO
      type        : int
      default     : -1
      class       : none
      verbosity   : MPI_T_VERBOSITY_MPIDEV_DETAIL
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        For testing only: the process of this rank in MPI_COMM_WORLD acts as
        if it could not allocate the contiguous copy that a bcast or allgather
        of ours (topo_pipeline, topo_multileader, topo_tree) stages a
        non-contiguous datatype through, so that tests see the call fail on
        every process that depends on its data rather than wait for it.
        -1 (default): never.

    - name        : MPIR_CVAR_TOPO_DEBUG_SYSFS
      category    : TOPO
      type        : string
      default     : "/sys"
      class       : none
      verbosity   : MPI_T_VERBOSITY_MPIDEV_DETAIL
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        For testing only: the directory whose class/infiniband and
        class/net mpich-topo reads for the rate and kind of the node's
        network ports (MPIR_CVAR_TOPO_NETWORK_RATE), instead of /sys, so
        that tests can give nodes networks they do not have.

    - name        : MPIR_CVAR_TOPO_DEBUG_LOCATION
      category    : TOPO
      type        : string
      default     : ""
      class       : none
      verbosity   : MPI_T_VERBOSITY_MPIDEV_DETAIL
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        For testing only: an hwloc synthetic topology ("pack:2 numa:2
        l3:2 core:2 pu:1", or with commas for the spaces) that mpich-topo
        takes as each node's instead of
        the machine's, each process as if bound to its core number i, i
        its rank among the MPI_COMM_WORLD processes of its node (modulo the
        cores), so that the levels of large nodes can be tested on a small
        machine.  Processes are not bound; NICs and the real binding are
        ignored.  Empty (default): the machine's topology.

    - name        : MPIR_CVAR_TOPO_NEAREST_NIC
      category    : TOPO
      type        : boolean
      default     : true
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        If true, where libfabric offers its provider once per network
        interface without saying where the NIC sits (tcp, sockets), each
        process uses the interface that hwloc places nearest to its binding
        rather than the first one listed, so that the leaders of the node's
        packages send through their own NICs (NUIOA multirail).  Names hwloc
        does not know count as farthest; unbound processes keep the first.
        With UCX, whose tcp transport sends through the same one of its
        interfaces from every process, each process leaves out of
        UCX_NET_DEVICES the interfaces that hwloc places farther from it
        than its nearest (among interfaces of the fastest link speed;
        names hwloc does not know and other devices, such as InfiniBand
        ports, are kept).  Where UCX_NET_DEVICES is unset or "all", the
        list is every network device UCX finds.  Every interface that wins
        must reach every other that wins (as on a cluster whose nodes all
        sit on every rail, or whose rails are routed); 0 keeps the netmod's
        own choice.  NICs that libfabric locates on PCI go through MPICH's own
        multi-NIC choice (MPIR_CVAR_CH4_OFI_MAX_NICS), which also prefers
        near ones.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

/* the interface the netmod uses (MPIR_Topo_pick_netdev or _note_netdev), ""
 * if not known */
static char netdev_used[64];

void MPIR_Topo_note_netdev(const char *name)
{
    if (name)
        MPL_strncpy(netdev_used, name, sizeof(netdev_used));
}

/* index of the nearest of names to this process (MPIR_CVAR_TOPO_NEAREST_NIC),
 * near[i] 0 for every one hwloc places farther, else 1 (near may be NULL);
 * 0 and all near where that is off or not known */
static int nearest_netdevs(const char *const *names, int n, int *near)
{
#ifdef HAVE_HWLOC
    void *topology = NULL;
    const void *binding = NULL;

    if (MPIR_CVAR_TOPO_NEAREST_NIC && MPIR_hwtopo_get_hwloc(&topology, &binding) && topology)
        return MPIR_Topo_nearest_netdevs((hwloc_topology_t) topology,
                                         (hwloc_const_cpuset_t) binding, names, n, near);
#endif
    for (int i = 0; near && i < n; i++)
        near[i] = 1;
    return 0;
}

int MPIR_Topo_pick_netdev(const char *const *names, int n)
{
    int i = nearest_netdevs(names, n, NULL);

    if (n > 0)
        MPIR_Topo_note_netdev(names[i]);
    return i;
}

long MPIR_Topo_link_speed(const char *ifname)
{
    return MPIR_Topo_net_speed("/sys", ifname);
}

#define TOPO_MAX_IFACES 64

#ifdef HAVE_CH4_NETMOD_UCX
/* every network device UCX can use, comma-separated in buf (UCT's
 * resources of type NET, each once): what an unset UCX_NET_DEVICES means;
 * 0 if none or they do not fit */
static int ucx_all_net_devices(char *buf, size_t size)
{
    uct_component_h *components;
    unsigned ncomponents;
    int fits = size > 0;

    if (!fits || uct_query_components(&components, &ncomponents) != UCS_OK)
        return 0;
    buf[0] = '\0';
    for (unsigned c = 0; c < ncomponents && fits; c++) {
        uct_component_attr_t attr;
        uct_md_resource_desc_t *mds;

        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
        if (uct_component_query(components[c], &attr) != UCS_OK || attr.md_resource_count == 0)
            continue;
        mds = MPL_calloc(attr.md_resource_count, sizeof(*mds), MPL_MEM_OTHER);
        if (!mds) {
            fits = 0;
            break;
        }
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
        attr.md_resources = mds;
        if (uct_component_query(components[c], &attr) != UCS_OK)
            attr.md_resource_count = 0;
        for (unsigned m = 0; m < attr.md_resource_count && fits; m++) {
            uct_md_config_t *config;
            uct_md_h md;
            uct_tl_resource_desc_t *res;
            unsigned nres;
            ucs_status_t status;

            if (uct_md_config_read(components[c], NULL, NULL, &config) != UCS_OK)
                continue;
            status = uct_md_open(components[c], mds[m].md_name, config, &md);
            uct_config_release(config);
            if (status != UCS_OK)
                continue;
            if (uct_md_query_tl_resources(md, &res, &nres) == UCS_OK) {
                for (unsigned r = 0; r < nres && fits; r++)
                    if (res[r].dev_type == UCT_DEVICE_TYPE_NET &&
                        !MPIR_Topo_listed(buf, res[r].dev_name))
                        fits = MPIR_Topo_list_append(buf, size, res[r].dev_name);
                uct_release_tl_resource_list(res);
            }
            uct_md_close(md);
        }
        MPL_free(mds);
    }
    uct_release_component_list(components);
    return fits && buf[0];
}
#endif

const char *MPIR_Topo_ucx_net_devices(const char *user)
{
    static char value[1024];
    char ifname[TOPO_MAX_IFACES][IF_NAMESIZE];
    const char *names[TOPO_MAX_IFACES];
    long speed[TOPO_MAX_IFACES], fastest = -1;
    int near[TOPO_MAX_IFACES], n = 0, nfast = 0, pick, listed, dropped = 0;
    struct ifaddrs *ifs, *ifa;

    /* a list is narrowed; unset, empty or "all" means every device UCX
     * finds, which is listed (UCX 1.13 has no syntax to exclude one); a
     * value of a later UCX's (e.g. "^eth1") is the user's choice */
    listed = MPIR_Topo_net_devices_list(user);
    if (!MPIR_CVAR_TOPO_NEAREST_NIC || (!listed && user && user[0] == '^') ||
        getifaddrs(&ifs) != 0)
        return NULL;
    /* the interfaces UCX's tcp transport can use (listed ones where there
     * is a list): up, with an address other than loopback or IPv6
     * link-local */
    for (ifa = ifs; ifa && n < TOPO_MAX_IFACES; ifa = ifa->ifa_next) {
        int dup = 0;
        if (!ifa->ifa_addr || !(ifa->ifa_flags & IFF_UP) || !(ifa->ifa_flags & IFF_RUNNING) ||
            (ifa->ifa_flags & IFF_LOOPBACK) || strlen(ifa->ifa_name) >= IF_NAMESIZE ||
            (listed && !MPIR_Topo_listed(user, ifa->ifa_name)))
            continue;
        if (ifa->ifa_addr->sa_family == AF_INET6) {
            const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *) ifa->ifa_addr;
            if (IN6_IS_ADDR_LINKLOCAL(&a6->sin6_addr))
                continue;
        } else if (ifa->ifa_addr->sa_family != AF_INET) {
            continue;
        }
        for (int i = 0; i < n; i++)
            dup |= !strcmp(ifname[i], ifa->ifa_name);
        if (dup)
            continue;
        MPL_strncpy(ifname[n], ifa->ifa_name, IF_NAMESIZE);
        speed[n] = MPIR_Topo_link_speed(ifname[n]);
        fastest = MPL_MAX(fastest, speed[n]);
        n++;
    }
    freeifaddrs(ifs);
    /* only the fastest compete: a slower network never replaces them */
    for (int i = 0; i < n; i++)
        if (speed[i] == fastest)
            names[nfast++] = ifname[i];
    if (nfast < 2)
        return NULL;
    pick = nearest_netdevs(names, nfast, near);
    for (int i = 0; i < nfast; i++)
        dropped += !near[i];
    if (!dropped)
        return NULL;
    if (!listed) {
        /* UCX's whole list, to leave the far interfaces out of (only where
         * some are far: opening every memory domain costs) */
#ifdef HAVE_CH4_NETMOD_UCX
        static char all[1024];
        if (!ucx_all_net_devices(all, sizeof(all)))
            return NULL;
        user = all;
#else
        return NULL;
#endif
    }
    if (!MPIR_Topo_net_devices_value(user, names, near, nfast, value, sizeof(value)))
        return NULL;
    MPIR_Topo_note_netdev(names[pick]);
    return value;
}

/* Number of ints a location takes on the wire. */
#define TOPO_LOC_INTS ((int) (sizeof(MPIR_Topo_loc_t) / sizeof(int)))

#ifdef HAVE_HWLOC
/* MPIR_CVAR_TOPO_DEBUG_LOCATION: this process' place on the synthetic
 * node; nonzero where the description is not one hwloc takes */
static int debug_location(int node_id, MPIR_Topo_loc_t * loc)
{
    static hwloc_topology_t synth;
    static int tried;
    int i = 0, ncores;
    hwloc_obj_t core;

    if (!tried) {
        char desc[256];

        tried = 1;
        /* commas for spaces, for test lists whose fields split at spaces */
        MPL_strncpy(desc, MPIR_CVAR_TOPO_DEBUG_LOCATION, sizeof(desc));
        for (char *c = desc; *c; c++)
            if (*c == ',')
                *c = ' ';
        if (hwloc_topology_init(&synth) != 0)
            synth = NULL;
        else if (hwloc_topology_set_synthetic(synth, desc) != 0 ||
                 hwloc_topology_load(synth) != 0) {
            hwloc_topology_destroy(synth);
            synth = NULL;
        }
        if (synth == NULL && MPIR_Process.rank == 0)
            fprintf(stderr, "mpich-topo: MPIR_CVAR_TOPO_DEBUG_LOCATION=\"%s\" is not an hwloc "
                    "synthetic topology; the machine's is used\n", MPIR_CVAR_TOPO_DEBUG_LOCATION);
    }
    ncores = synth ? hwloc_get_nbobjs_by_type(synth, HWLOC_OBJ_CORE) : 0;
    if (ncores <= 0)
        return 1;
    /* my rank among my node's processes of MPI_COMM_WORLD */
    for (int r = 0; r < MPIR_Process.rank; r++) {
        int id;
        if (MPID_Get_node_id(MPIR_Process.comm_world, r, &id) == MPI_SUCCESS && id == node_id)
            i++;
    }
    core = hwloc_get_obj_by_type(synth, HWLOC_OBJ_CORE, i % ncores);
    return core == NULL || MPIR_Topo_loc_from_hwloc(synth, core->cpuset, node_id, loc) != 0;
}
#endif

/* the node's network port (MPIR_Topo_link_probe), read once */
static void my_link(MPIR_Topo_loc_t * loc)
{
    static int probed, mbps, kind;

    if (!probed) {
        mbps = MPIR_Topo_link_probe(MPIR_CVAR_TOPO_DEBUG_SYSFS && MPIR_CVAR_TOPO_DEBUG_SYSFS[0] ?
                                    MPIR_CVAR_TOPO_DEBUG_SYSFS : "/sys", &kind);
        probed = 1;
    }
    loc->link_mbps = mbps;
    loc->link_kind = kind;
}

void MPIR_Topo_get_my_loc(MPIR_Comm * comm, MPIR_Topo_loc_t * loc)
{
    int node_id = 0;
    void *topology = NULL;
    const void *binding = NULL;

    if (MPID_Get_node_id(comm, comm->rank, &node_id) != MPI_SUCCESS || node_id < 0)
        node_id = 0;

    memset(loc, 0, sizeof(*loc));
    loc->node = node_id;
    loc->board = 0;
    loc->package = loc->numa = loc->cache = loc->core = loc->nic = loc->netdev = -1;
    loc->nic_far = 0;

#ifdef HAVE_HWLOC
    if (MPIR_CVAR_TOPO_DEBUG_LOCATION && MPIR_CVAR_TOPO_DEBUG_LOCATION[0] &&
        debug_location(node_id, loc) == 0) {
        my_link(loc);
        return;
    }
    /* Without a readable binding, the process counts as unbound: everything on
     * its node is then one level apart. */
    if (MPIR_hwtopo_get_hwloc(&topology, &binding) && topology) {
        MPIR_Topo_loc_t hw;
        if (MPIR_Topo_loc_from_hwloc((hwloc_topology_t) topology, (hwloc_const_cpuset_t) binding,
                                     node_id, &hw) == 0)
            *loc = hw;
        loc->netdev = MPIR_Topo_netdev_index((hwloc_topology_t) topology, netdev_used);
    }
#else
    (void) topology;
    (void) binding;
#endif
    my_link(loc);
}

static void print_topology(MPIR_Comm * comm, MPIR_Topo_comm_t * topo, const MPIR_Topo_loc_t * locs)
{
    int p = comm->local_size;
    int nnodes = MPIR_Topo_map_num_nodes(topo->map);

    fprintf(stderr, "mpich-topo: communicator context %d, %d processes on %d node(s)\n",
            (int) comm->context_id, p, nnodes);
    if (p > 64) {
        fflush(stderr);
        return;
    }
    for (int r = 0; r < p; r++) {
        char via[32] = "";
        if (locs[r].netdev >= 0)
            snprintf(via, sizeof(via), ", sends via nic %d", locs[r].netdev);
        fprintf(stderr, "mpich-topo:   rank %d: node %d board %d package %d numa %d cache %d "
                "core %d nic %d%s%s\n", r, locs[r].node, locs[r].board, locs[r].package,
                locs[r].numa, locs[r].cache, locs[r].core, locs[r].nic,
                locs[r].nic_far ? " (far from NICs)" : "", via);
    }
    MPIR_Topo_line_t line = { .len = 0 };
    if (MPIR_Topo_comm_get_ring(comm, topo) == MPI_SUCCESS) {
        MPIR_Topo_line_add(&line, "mpich-topo:   ring:");
        for (int i = 0; i < p; i++)
            MPIR_Topo_line_add(&line, " %d", topo->ring[i]);
        MPIR_Topo_line_print(&line);
    }
    MPIR_Topo_line_add(&line, "mpich-topo:   bcast tree from rank 0 (rank<-parent):");
    for (int r = 0; r < p; r++) {
        int parent, nchildren, *children = NULL;
        if (MPIR_Topo_tree_get(topo->map, 0, r, &parent, &nchildren, &children) == 0) {
            MPIR_Topo_line_add(&line, " %d<-%d", r, parent);
            MPIR_TOPO_FREE(children);
        }
    }
    MPIR_Topo_line_print(&line);
}

void *MPIR_Topo_staging_alloc(MPI_Aint n)
{
    if (MPIR_CVAR_TOPO_DEBUG_STAGING_NOMEM == MPIR_Process.comm_world->rank)
        return NULL;
    return MPL_malloc(n, MPL_MEM_COLL);
}

int MPIR_Topo_staging_failed(MPI_Aint n, MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS;

    *errflag = MPIR_ERR_OTHER;
    MPIR_ERR_SET1(mpi_errno, MPI_ERR_NO_MEM, "**topo_staging_nomem", "**topo_staging_nomem %L",
                  (long long) n);
    return mpi_errno;
}

void *MPIR_Topo_sink_alloc(MPIR_Comm * comm, MPI_Aint n)
{
    void *p = MPL_malloc(MPL_MAX(n, 1), MPL_MEM_COLL);

    if (p == NULL) {
        char msg[200];
        snprintf(msg, sizeof(msg), "mpich-topo: cannot allocate even %lld bytes to take part "
                 "in a collective without its data: ending the job rather than leave the "
                 "other processes waiting", (long long) n);
        MPID_Abort(comm, MPI_ERR_NO_MEM, 1, msg);
    }
    return p;
}

int MPIR_Topo_coll_result(int mpi_errno, int mpi_errno_ret, MPIR_Errflag_t errflag)
{
    if (mpi_errno_ret)
        return mpi_errno_ret;
    if (errflag != MPIR_ERR_NONE)
        MPIR_ERR_SET(mpi_errno, errflag, "**coll_fail");
    return mpi_errno;
}

int MPIR_Topo_agree(MPIR_Comm * comm, int failed, MPIR_Errflag_t * errflag)
{
    return MPIR_Topo_agree_max(comm, failed, NULL, 0, errflag);
}

int MPIR_Topo_agree_max(MPIR_Comm * comm, int failed, int *values, int n,
                        MPIR_Errflag_t * errflag)
{
    int mpi_errno, in[MPIR_TOPO_AGREE_MAX + 1], out[MPIR_TOPO_AGREE_MAX + 1], any;

    MPIR_Assert(n >= 0 && n <= MPIR_TOPO_AGREE_MAX);
    in[0] = failed;
    for (int i = 0; i < n; i++)
        in[i + 1] = values[i];
    /* a concrete algorithm, as below */
    mpi_errno = MPIR_Allreduce_intra_recursive_doubling(in, out, n + 1, MPI_INT, MPI_MAX,
                                                        comm, errflag);
    if (mpi_errno)
        return mpi_errno;
    any = out[0];
    for (int i = 0; i < n; i++)
        values[i] = out[i + 1];
    if (failed)
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                    MPI_ERR_NO_MEM, "**nomem", NULL);
    if (any)
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                    MPI_ERR_OTHER, "**topo_peer_nomem", NULL);
    return MPI_SUCCESS;
}

int MPIR_Topo_comm_get(MPIR_Comm * comm, MPIR_Topo_comm_t ** topo_out, MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS;
    int p = comm->local_size;
    MPIR_Topo_loc_t my_loc, *locs = NULL;
    MPIR_Topo_comm_t *topo = NULL;

    MPIR_Assert(comm->comm_kind == MPIR_COMM_KIND__INTRACOMM);

    if (comm->topo && comm->topo->map) {
        *topo_out = comm->topo;
        goto fn_exit;
    }

    /* what can fail on one process alone is agreed on before and after
     * the allgather, so that all members go on, or return an error, alike */
    locs = MPL_malloc(p * sizeof(MPIR_Topo_loc_t), MPL_MEM_COLL);
    topo = MPIR_Topo_comm_struct(comm);
    mpi_errno = MPIR_Topo_agree(comm, locs == NULL || topo == NULL, errflag);
    MPIR_ERR_CHECK(mpi_errno);
    MPIR_Topo_get_my_loc(comm, &my_loc);

    /* A concrete algorithm, not MPIR_Allgather: the user may have forced a
     * topology-aware allgather, which would bring us back here. */
    mpi_errno = MPIR_Allgather_intra_brucks(&my_loc, TOPO_LOC_INTS, MPI_INT, locs,
                                            TOPO_LOC_INTS, MPI_INT, comm, errflag);
    MPIR_ERR_CHECK(mpi_errno);

    mpi_errno = MPIR_Topo_agree(comm, MPIR_Topo_map_create(p, locs, &topo->map) != 0, errflag);
    MPIR_ERR_CHECK(mpi_errno);
    topo->locs = locs;
    locs = NULL;
    *topo_out = topo;

    if (MPIR_CVAR_TOPO_PRINT && comm->rank == 0)
        print_topology(comm, topo, topo->locs);

  fn_exit:
    MPL_free(locs);
    return mpi_errno;
  fn_fail:
    if (topo && topo->map) {
        MPIR_Topo_map_free(topo->map);
        topo->map = NULL;
    }
    goto fn_exit;
}

MPIR_Topo_comm_t *MPIR_Topo_comm_struct(MPIR_Comm * comm)
{
    if (comm->topo == NULL) {
        comm->topo = MPL_calloc(1, sizeof(MPIR_Topo_comm_t), MPL_MEM_COLL);
        if (comm->topo)
            comm->topo->tree_root = -1;
    }
    return comm->topo;
}

int MPIR_Topo_comm_get_layout(MPIR_Comm * comm, MPIR_Topo_comm_t * topo, int k_request)
{
    int mpi_errno = MPI_SUCCESS;

    /* built once: the engine that uses it is set up once per communicator */
    if (topo->layout)
        goto fn_exit;
    if (MPIR_Topo_layout_create(comm->local_size, topo->locs, k_request, &topo->layout) != 0)
        MPIR_ERR_SETANDJUMP(mpi_errno, MPI_ERR_OTHER, "**topo_build");

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIR_Topo_comm_get_ring(MPIR_Comm * comm, MPIR_Topo_comm_t * topo)
{
    int mpi_errno = MPI_SUCCESS;
    int p = comm->local_size;

    if (topo->ring)
        goto fn_exit;

    topo->ring = MPL_malloc(2 * p * sizeof(int), MPL_MEM_COLL);
    MPIR_ERR_CHKANDJUMP(topo->ring == NULL, mpi_errno, MPI_ERR_OTHER, "**nomem");
    if (MPIR_Topo_ring_create(topo->map, topo->ring) != 0) {
        MPL_free(topo->ring);
        topo->ring = NULL;
        MPIR_ERR_SETANDJUMP(mpi_errno, MPI_ERR_OTHER, "**topo_build");
    }
    topo->ring_pos = topo->ring + p;
    for (int i = 0; i < p; i++)
        topo->ring_pos[topo->ring[i]] = i;

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIR_Topo_comm_get_tree(MPIR_Comm * comm, MPIR_Topo_comm_t * topo, int root)
{
    int mpi_errno = MPI_SUCCESS;
    int parent, nchildren, *children = NULL;

    if (topo->tree_root == root)
        goto fn_exit;

    if (MPIR_Topo_tree_get(topo->map, root, comm->rank, &parent, &nchildren, &children) != 0)
        MPIR_ERR_SETANDJUMP(mpi_errno, MPI_ERR_OTHER, "**nomem");
    MPIR_TOPO_FREE(topo->tree_children);
    MPL_free(topo->tree_child_forwards);
    topo->tree_child_forwards = NULL;
    topo->tree_root = -1;
    topo->tree_children = children;
    if (nchildren > 0) {
        topo->tree_child_forwards = MPL_malloc(nchildren * sizeof(int), MPL_MEM_COLL);
        MPIR_ERR_CHKANDJUMP(topo->tree_child_forwards == NULL, mpi_errno, MPI_ERR_OTHER,
                            "**nomem");
        for (int c = 0; c < nchildren; c++) {
            int cp, cn, *cc = NULL;
            if (MPIR_Topo_tree_get(topo->map, root, children[c], &cp, &cn, &cc) != 0)
                MPIR_ERR_SETANDJUMP(mpi_errno, MPI_ERR_OTHER, "**nomem");
            MPIR_TOPO_FREE(cc);
            topo->tree_child_forwards[c] = cn > 0;
        }
    }
    topo->tree_root = root;
    topo->tree_parent = parent;
    topo->tree_nchildren = nchildren;

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

void MPIR_Topo_comm_free(MPIR_Comm * comm)
{
    MPIR_Topo_comm_t *topo = comm->topo;

    if (topo == NULL)
        return;
    if (topo->engine_free && topo->engine)
        topo->engine_free(topo->engine);
    if (topo->persist_comm)
        MPIR_Comm_release(topo->persist_comm);
    MPIR_Topo_nb_stack_release(topo);
    MPIR_Topo_layout_free(topo->layout);
    MPL_free(topo->locs);
    if (topo->map)
        MPIR_Topo_map_free(topo->map);
    MPL_free(topo->ring);
    MPIR_TOPO_FREE(topo->tree_children);
    MPL_free(topo->tree_child_forwards);
    MPL_free(topo);
    comm->topo = NULL;
}

/* The integer CVARs of mpich-topo with their meaningful ranges: a value
 * outside its range (a negative stack size, a zero divisor) would crash
 * or misbehave deep inside a collective, so it is named on stderr and
 * replaced by its documented default before any communicator uses it. */
void MPIR_Topo_cvars_check(void)
{
    const struct {
        int *value;
        const char *name;
        int lo, hi, dflt;
    } cvars[] = {
        {&MPIR_CVAR_TOPO_NB_STACK_SIZE, "MPIR_CVAR_TOPO_NB_STACK_SIZE", 65536, 1 << 30, 262144},
        {&MPIR_CVAR_TOPO_PIPELINE_CHUNK_SIZE, "MPIR_CVAR_TOPO_PIPELINE_CHUNK_SIZE", 0, 1 << 30, 0},
        {&MPIR_CVAR_TOPO_BCAST_TREE_CHUNK_SIZE, "MPIR_CVAR_TOPO_BCAST_TREE_CHUNK_SIZE", 0, INT_MAX,
         65536},
        {&MPIR_CVAR_TOPO_SETUP_CALLS, "MPIR_CVAR_TOPO_SETUP_CALLS", 0, INT_MAX, 128},
        {&MPIR_CVAR_TOPO_SETUP_BYTES, "MPIR_CVAR_TOPO_SETUP_BYTES", 1, INT_MAX, 65536},
        {&MPIR_CVAR_TOPO_PERSIST_MAX, "MPIR_CVAR_TOPO_PERSIST_MAX", 0, 1024, 64},
        {&MPIR_CVAR_TOPO_NODE_LEVELS, "MPIR_CVAR_TOPO_NODE_LEVELS", 0, MPIR_TOPO_MAX_NODE_LEVELS,
         0},
        {&MPIR_CVAR_TOPO_LEADERS_PER_NODE, "MPIR_CVAR_TOPO_LEADERS_PER_NODE", 0, INT_MAX, 0},
        {&MPIR_CVAR_TOPO_CELL_FANIN, "MPIR_CVAR_TOPO_CELL_FANIN", -1, INT_MAX, -1},
        {&MPIR_CVAR_TOPO_SPINS_BEFORE_YIELD, "MPIR_CVAR_TOPO_SPINS_BEFORE_YIELD", -1, 1 << 30, -1},
        {&MPIR_CVAR_TOPO_NETWORK_LATENCY_BYTES, "MPIR_CVAR_TOPO_NETWORK_LATENCY_BYTES", 0, INT_MAX,
         0},
        {&MPIR_CVAR_TOPO_NETWORK_RATE, "MPIR_CVAR_TOPO_NETWORK_RATE", 0, INT_MAX, 0},
        {&MPIR_CVAR_TOPO_ALLGATHER_TRIALS, "MPIR_CVAR_TOPO_ALLGATHER_TRIALS", 0, 1 << 20, 3},
        {&MPIR_CVAR_TOPO_BCAST_TRIALS, "MPIR_CVAR_TOPO_BCAST_TRIALS", 0, 1 << 20, 3},
        {&MPIR_CVAR_TOPO_ALLGATHER_CMA_THRESHOLD, "MPIR_CVAR_TOPO_ALLGATHER_CMA_THRESHOLD", -1,
         INT_MAX, -1},
        {&MPIR_CVAR_TOPO_BCAST_CMA_THRESHOLD, "MPIR_CVAR_TOPO_BCAST_CMA_THRESHOLD", -1, INT_MAX,
         -1},
        {&MPIR_CVAR_TOPO_TIMELINE_CALL, "MPIR_CVAR_TOPO_TIMELINE_CALL", 0, INT_MAX, 2},
        {&MPIR_CVAR_TOPO_DEBUG_ROUNDS_LEFT, "MPIR_CVAR_TOPO_DEBUG_ROUNDS_LEFT", 0, INT_MAX, 0},
        {&MPIR_CVAR_TOPO_DEBUG_NODE_FAILED, "MPIR_CVAR_TOPO_DEBUG_NODE_FAILED", -1, INT_MAX, -1},
        {&MPIR_CVAR_TOPO_DEBUG_PTRACE_SCOPE, "MPIR_CVAR_TOPO_DEBUG_PTRACE_SCOPE", -2, 3, -2},
        {&MPIR_CVAR_TOPO_DEBUG_SETUP_NOMEM, "MPIR_CVAR_TOPO_DEBUG_SETUP_NOMEM", -1, INT_MAX, -1},
        {&MPIR_CVAR_TOPO_DEBUG_STAGING_NOMEM, "MPIR_CVAR_TOPO_DEBUG_STAGING_NOMEM", -1, INT_MAX,
         -1},
    };

    for (size_t i = 0; i < sizeof(cvars) / sizeof(cvars[0]); i++) {
        int v = *cvars[i].value;

        if (v >= cvars[i].lo && v <= cvars[i].hi)
            continue;
        fprintf(stderr, "mpich-topo: %s=%d is outside %d..%d; using its default, %d\n",
                cvars[i].name, v, cvars[i].lo, cvars[i].hi, cvars[i].dflt);
        *cvars[i].value = cvars[i].dflt;
    }
}

int MPIR_Topo_user_chose(const char *algo)
{
    const struct {
        const char *prefix;     /* of the MPIR names of its algorithms */
        const char *coll;       /* "collective=" in a tuning file */
        int forced;             /* its CVAR names an algorithm */
    } colls[] = {
        {"MPIR_Allgather_", "allgather",
         MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM != MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM_auto},
        {"MPIR_Bcast_", "bcast",
         MPIR_CVAR_BCAST_INTRA_ALGORITHM != MPIR_CVAR_BCAST_INTRA_ALGORITHM_auto},
        {"MPIR_Allreduce_", "allreduce",
         MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM != MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM_auto},
        {"MPIR_Reduce_", "reduce",
         MPIR_CVAR_REDUCE_INTRA_ALGORITHM != MPIR_CVAR_REDUCE_INTRA_ALGORITHM_auto},
        {"MPIR_Barrier_", "barrier",
         MPIR_CVAR_BARRIER_INTRA_ALGORITHM != MPIR_CVAR_BARRIER_INTRA_ALGORITHM_auto},
        {"MPIR_Iallgather_", "iallgather",
         MPIR_CVAR_IALLGATHER_INTRA_ALGORITHM != MPIR_CVAR_IALLGATHER_INTRA_ALGORITHM_auto},
        {"MPIR_Ibcast_", "ibcast",
         MPIR_CVAR_IBCAST_INTRA_ALGORITHM != MPIR_CVAR_IBCAST_INTRA_ALGORITHM_auto},
        {"MPIR_Iallreduce_", "iallreduce",
         MPIR_CVAR_IALLREDUCE_INTRA_ALGORITHM != MPIR_CVAR_IALLREDUCE_INTRA_ALGORITHM_auto},
    };

    for (size_t i = 0; i < sizeof(colls) / sizeof(colls[0]); i++)
        if (!strncmp(algo, colls[i].prefix, strlen(colls[i].prefix)))
            return colls[i].forced || MPIR_Csel_user_chose(MPIR_CSEL_LEVEL__MPIR, colls[i].coll);
    return 1;
}

int MPIR_Topo_cannot_run(MPIR_Comm * comm, const char *algo, const char *reason)
{
    int mpi_errno = MPI_SUCCESS;

    /* MPIR_CVAR_COLLECTIVE_FALLBACK is about what the user asked for; where
     * the built-in tuning chose one of ours, the stock selection just runs. */
    if (!MPIR_Topo_user_chose(algo))
        return MPI_SUCCESS;

    if (MPIR_CVAR_COLLECTIVE_FALLBACK == MPIR_CVAR_COLLECTIVE_FALLBACK_error) {
        MPIR_ERR_SET2(mpi_errno, MPI_ERR_OTHER, "**topo_cannot_run", "**topo_cannot_run %s %s",
                      algo, reason);
    } else if (MPIR_CVAR_COLLECTIVE_FALLBACK == MPIR_CVAR_COLLECTIVE_FALLBACK_print &&
               comm->rank == 0) {
        fprintf(stderr, "mpich-topo: %s cannot run here (%s); falling back to MPICH's "
                "default selection\n", algo, reason);
        fflush(stderr);
    }
    return mpi_errno;
}
