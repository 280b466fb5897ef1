#!/bin/bash
# An emulated cluster on one machine whose network is slower than its
# memory, as on real clusters: N nodes are N network namespaces, each with
# one virtual NIC (a veth pair into a bridge that lives in a namespace of its
# own), shaped on both directions. MPICH's Hydra (or Open MPI's mpirun)
# starts each node's processes inside its namespace, so the MPI library
# learns the nodes from its process manager, as on a cluster: shared memory
# within a node, TCP over the shaped NIC between nodes.
#
#   bench/cluster.sh [--nodes N] [--ppn P] [--rate RATE] [--delay DELAY]
#                    [--placement block|cyclic] [--counters FILE]
#                    [--rails R [--nic-counters FILE]]
#                    [--timeout SEC] [--prefix DIR] [--ompi 5|4] [--ompi-hosts HOW]
#                    mpiexec|mpirun|run ARGS...
#
#   mpiexec ARGS  our mpiexec (DIR/bin/mpiexec, default install-ofi) with
#                 -launcher rsh into the nodes, -hosts node0,... and -ppn P;
#                 ARGS as for mpiexec (-n, -bind-to core, -env ..., program)
#   mpirun ARGS   Open MPI's mpirun, its daemons started in the nodes the
#                 same way (--host node0:P,...; tcp between nodes)
#   run CMD...    CMD in node0 with CLUSTER_HOSTS (node0,node1,...) and
#                 CLUSTER_RSH (the launcher to give mpiexec/mpirun) set
#
#   --nodes N       nodes (default 2)
#   --ppn P         processes per node (default 1); node K's processes run
#                   on cores K*P .. K*P+P-1 modulo the cores
#   --placement PL  ranks by block (default: node0 has ranks 0..P-1) or
#                   cyclic (rank r on node r mod N)
#   --rate RATE     each NIC's rate per direction, tc units (default 1gbit);
#                   off: no shaping (veth at memory speed)
#   --delay DELAY   one-way delay added on each node's egress (default 0);
#                   needs the kernel's netem qdisc, else the run fails
#   --counters FILE per node, the bytes its NIC sent and received during the
#                   command, as CSV (node,tx_bytes,rx_bytes); also printed
#   --rails R       NICs per node (default 1): NIC r is eth<r> on a network
#                   of its own (bridge r, 10.<213+r>.0.0/16), every one
#                   shaped alike. With R > 1 each node is R packages (a NUMA
#                   node each) that split its cores evenly, NIC r hwloc's
#                   device under package r (NUIOA multirail), and libfabric
#                   may use any of the NICs (no FI_TCP_IFACE)
#   --ucx-devices HOW  with --rails: list (default) sets UCX_NET_DEVICES to
#                   eth0,eth1,...; all leaves it unset (every device UCX
#                   finds, loopback included)
#   --nic-counters FILE  per node and NIC, the bytes sent and received, as
#                   CSV (node,nic,tx_bytes,rx_bytes); --counters sums them
#   --timeout SEC   end the command after SEC seconds (default 1800)
#   --ompi V        which Open MPI mpirun starts: 5 (default) is 5.0.7 from
#                   bench/install-peers.sh (.cache/openmpi-5.0.7), its PRRTE
#                   daemons started through the nodes' launcher; 4 is Debian
#                   bookworm's 4.1.4 (mpirun.openmpi). Both run ob1 with the
#                   shared-memory and tcp BTLs: UCX (5.0.7's default PML)
#                   would see one machine and reach other nodes through
#                   System V shared memory and CMA instead of their NICs
#   --quiet         do not print the per-node byte counts
#   --ompi-hosts HOW  how mpirun learns the nodes: host (default; --host
#                   node0:P,...), hostfile (--hostfile, "nodeK slots=P"),
#                   or node0 (as host, mpirun itself started through the
#                   nodes' launcher, so that it runs as host node0 rather
#                   than under this machine's name); default from
#                   CLUSTER_OMPI_HOSTS. bench/device-run.sh tries each and
#                   keeps the first that works on a machine it does not know
#
# Where the nodes' processes outnumber this machine's cores, every MPI waits
# the same way: MPICH's blocking waits and our engine yield the processor
# when idle (MPIR_CVAR_CH4_YIELD_WHEN_IDLE=on) and so does Open MPI
# (mpi_yield_when_idle 1), unless the caller's environment says otherwise.
#
# Needs root (namespaces, veth, tc). Everything the run creates (namespaces,
# their interfaces and addresses, /etc/netns/<name>) is removed when it ends,
# also on failure and on Ctrl-C. Addresses exist only on interfaces inside
# the run's own namespaces; nothing is routed anywhere else.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
nodes=2
ppn=1
rate=1gbit
delay=
counters=
rails=1
nic_counters=
tmo=1800
placement=block
prefix=$top/install-ofi
quiet=no
ompi_hosts=${CLUSTER_OMPI_HOSTS:-host}
ompi=5
ucx_devices=list
while [ $# -gt 0 ]; do
    case $1 in
        --nodes) nodes=$2; shift 2 ;;
        --ppn) ppn=$2; shift 2 ;;
        --rate) rate=$2; shift 2 ;;
        --delay) delay=$2; shift 2 ;;
        --counters) counters=$2; shift 2 ;;
        --rails) rails=$2; shift 2 ;;
        --nic-counters) nic_counters=$2; shift 2 ;;
        --placement) placement=$2; shift 2 ;;
        --timeout) tmo=$2; shift 2 ;;
        --quiet) quiet=yes; shift ;;
        --prefix) prefix=$2; shift 2 ;;
        --ompi-hosts) ompi_hosts=$2; shift 2 ;;
        --ompi) ompi=$2; shift 2 ;;
        --ucx-devices) ucx_devices=$2; shift 2 ;;
        -h|--help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
        mpiexec|mpirun|run) break ;;
        *) echo "cluster.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
    esac
done
[ $# -ge 1 ] || { echo "cluster.sh: say mpiexec, mpirun or run (--help)" >&2; exit 2; }
mode=$1
shift
case $nodes in ''|*[!0-9]*|0) echo "cluster.sh: --nodes needs a number from 1 to 200" >&2; exit 2 ;; esac
[ "$nodes" -le 200 ] || { echo "cluster.sh: --nodes needs a number from 1 to 200" >&2; exit 2; }
case $ppn in ''|*[!0-9]*|0) echo "cluster.sh: --ppn needs a positive number" >&2; exit 2 ;; esac
case $rails in 1|2|3|4) ;; *) echo "cluster.sh: --rails is 1 to 4" >&2; exit 2 ;; esac
case $placement in block|cyclic) ;; *) echo "cluster.sh: --placement is block or cyclic" >&2; exit 2 ;; esac
case $ucx_devices in list|all) ;; *) echo "cluster.sh: --ucx-devices is list or all" >&2; exit 2 ;; esac
case $ompi_hosts in host|hostfile|node0) ;; *) echo "cluster.sh: --ompi-hosts is host, hostfile or node0" >&2; exit 2 ;; esac
case $ompi in 5|4) ;; *) echo "cluster.sh: --ompi is 5 or 4" >&2; exit 2 ;; esac
[ "$(id -u)" = 0 ] || { echo "cluster.sh: needs root (network namespaces)" >&2; exit 2; }
for t in ip tc unshare timeout taskset; do
    command -v $t >/dev/null || { echo "cluster.sh: $t not found (iproute2, util-linux, coreutils)" >&2; exit 2; }
done

# names unique to this run: several runs may share the machine
id=tc$$
sw=$id-sw
ns() { echo "$id-n$1"; }
work=$(mktemp -d "${TMPDIR:-/tmp}/cluster.XXXXXX")

cleanup() {
    set +e
    trap - EXIT INT TERM HUP
    local n p
    for ((n = 0; n < nodes; n++)); do
        p=$(ip netns pids "$(ns $n)" 2>/dev/null)
        [ -n "$p" ] && kill -9 $p 2>/dev/null
    done
    for ((n = 0; n < nodes; n++)); do
        ip netns del "$(ns $n)" 2>/dev/null
        rm -rf "/etc/netns/$(ns $n)"
    done
    ip netns del "$sw" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

# tc shaping of one interface's egress: the rate, and the delay if asked
shape() {       # namespace device with_delay
    if [ "$rate" = off ]; then
        [ -z "$delay" ] || { echo "cluster.sh: --delay needs a --rate" >&2; return 1; }
        return 0
    fi
    if [ -n "$delay" ] && [ "$3" = yes ]; then
        ip netns exec "$1" tc qdisc add dev "$2" root handle 1: netem delay "$delay" rate "$rate" ||
            { echo "cluster.sh: --delay needs the kernel's netem qdisc (sch_netem), which this kernel lacks" >&2; return 1; }
    else
        # a burst of 64 KiB lets one segment of a TSO-sized packet through
        # at once; the queue holds 20 ms at the rate
        ip netns exec "$1" tc qdisc add dev "$2" root tbf rate "$rate" burst 64kb latency 20ms
    fi
}

# ---------------------------------------------------------------- build
ip netns add "$sw"
ip -n "$sw" link set lo up
for ((r = 0; r < rails; r++)); do
    ip -n "$sw" link add br$r type bridge
    ip -n "$sw" link set br$r up
done
hosts="127.0.0.1 localhost"
for ((n = 0; n < nodes; n++)); do
    hosts="$hosts
10.213.$((n / 250)).$((n % 250 + 1)) node$n"
done
for ((n = 0; n < nodes; n++)); do
    N=$(ns $n)
    ip netns add "$N"
    mkdir -p "/etc/netns/$N"
    echo "$hosts" >"/etc/netns/$N/hosts"
    ip -n "$N" link set lo up
    # the node's end is eth0; the switch's end, n<K>, joins the bridge
    ip -n "$sw" link add "n$n" type veth peer name eth0 netns "$N"
    ip -n "$sw" link set "n$n" master br0 up
    ip -n "$N" addr add "10.213.$((n / 250)).$((n % 250 + 1))/16" dev eth0
    ip -n "$N" link set eth0 up
    shape "$N" eth0 yes          # what the node sends
    shape "$sw" "n$n" no         # what it receives
    for ((r = 1; r < rails; r++)); do
        ip -n "$sw" link add "n$n-$r" type veth peer name eth$r netns "$N"
        ip -n "$sw" link set "n$n-$r" master br$r up
        ip -n "$N" addr add "10.$((213 + r)).$((n / 250)).$((n % 250 + 1))/16" dev eth$r
        ip -n "$N" link set eth$r up
        shape "$N" eth$r yes
        shape "$sw" "n$n-$r" no
    done
done

# Each node's cores: the launcher binds per node, unaware that the nodes
# share this machine's cores; node K gets cores K*P .. K*P+P-1 (modulo the
# cores), so that rank r runs on core r mod cores as a one-node run would,
# and two nodes' processes do not both start on core 0
ncores=$(nproc)
cpus_of() {     # node -> "0,1"
    local i l=
    for ((i = 0; i < ppn && i < ncores; i++)); do
        l="$l${l:+,}$((($1 * ppn + i) % ncores))"
    done
    echo "$l"
}
# the launchers bind with hwloc, which does not heed an affinity mask: each
# node's processes see a topology of the node's cores only (HWLOC_XMLFILE),
# as they would on a real node
command -v lstopo-no-graphics >/dev/null ||
    { echo "cluster.sh: lstopo-no-graphics not found (hwloc)" >&2; exit 2; }
# with rails, the node is as many packages, NIC r a PCI device under package r
railpy='
import re, sys
s, g = sys.stdin.read(), [900]
def nic(m):
    r = int(m.group(1)); g[0] += 3
    return (m.group(0) + "<object type=\"Bridge\" gp_index=\"%d\" bridge_type=\"0-1\" depth=\"0\" "
            "bridge_pci=\"0000:[%02x-%02x]\"><object type=\"PCIDev\" gp_index=\"%d\" "
            "pci_busid=\"0000:%02x:00.0\" pci_type=\"0200 [1af4:1041] [1af4:1100] 01\" "
            "pci_link_speed=\"0.000000\"><object type=\"OSDev\" gp_index=\"%d\" name=\"eth%d\" "
            "osdev_type=\"2\"/></object></object>") % (g[0], r + 1, r + 1, g[0] + 1, r + 1, g[0] + 2, r)
sys.stdout.write(re.sub(r"<object type=\"Package\" os_index=\"(\d+)\"[^>]*>", nic, s))
'
cpucase=
for ((n = 0; n < nodes; n++)); do
    if [ "$rails" = 1 ]; then
        taskset -c "$(cpus_of $n)" lstopo-no-graphics --restrict binding --of xml "$work/node$n.xml"
    else
        cpus=$(cpus_of $n | tr , '\n' | sort -nu | paste -sd, -)
        c=$(echo "$cpus" | tr , '\n' | wc -l)
        [ $((c % rails)) = 0 ] ||
            { echo "cluster.sh: --rails $rails needs each node's $c core(s) in $rails equal packages" >&2; exit 2; }
        lstopo-no-graphics --input "pack:$rails numa:1 core:$((c / rails)) pu:1(indexes=$cpus)" --of xml 2>/dev/null |
            python3 -c "$railpy" >"$work/node$n.xml"
    fi
    cpucase="$cpucase    node$n) cpus=$(cpus_of $n) ;;
"
done

# the launcher: mpiexec's rsh launcher and Open MPI's rsh agent call it as
# "launcher [options] HOST COMMAND"; COMMAND runs in HOST's namespace, on
# HOST's cores, with HOST as its host name and a /dev/shm of HOST's own, the
# way ssh would run it there: shared memory between two nodes fails here as
# it would on a cluster, instead of working through the machine's /dev/shm
cat >"$work/rsh" <<EOF
#!/bin/sh
while [ \$# -gt 0 ]; do case \$1 in -*) shift ;; *) break ;; esac; done
host=\$1
shift
case \$host in
$cpucase    *) echo "cluster rsh: unknown host \$host" >&2; exit 255 ;;
esac
HWLOC_XMLFILE=$work/\$host.xml HWLOC_THISSYSTEM=1
export HWLOC_XMLFILE HWLOC_THISSYSTEM
exec ip netns exec "$id-n\${host#node}" taskset -c "\$cpus" unshare --uts --mount --propagation private sh -c 'mount -t tmpfs -o mode=1777 tmpfs /dev/shm && hostname "\$0" && exec sh -c "\$1"' "\$host" "\$*"
EOF
chmod +x "$work/rsh"

list=node0 slots=node0:$ppn
for ((n = 1; n < nodes; n++)); do list="$list,node$n" slots="$slots,node$n:$ppn"; done

read_counters() {       # -> "tx rx" per node and NIC, one line each
    local n r
    for ((n = 0; n < nodes; n++)); do
        for ((r = 0; r < rails; r++)); do
            ip netns exec "$(ns $n)" sh -c "echo \$(cat /sys/class/net/eth$r/statistics/tx_bytes) \$(cat /sys/class/net/eth$r/statistics/rx_bytes)"
        done
    done
}

# ---------------------------------------------------------------- run
# between nodes only TCP over eth0: neither libfabric nor UCX may use shared
# memory between namespaces of one kernel (they would see one machine)
envs=(CLUSTER_HOSTS="$list" CLUSTER_RSH="$work/rsh" FI_PROVIDER=tcp UCX_TLS=tcp,self
    HOME="${HOME:-/root}")
# one NIC: only eth0 (not lo); rails: libfabric lists every interface and
# UCX gets them all, and each process picks its own nearest
# (MPIR_CVAR_TOPO_NEAREST_NIC)
if [ "$rails" = 1 ]; then
    envs+=(FI_TCP_IFACE=eth0 UCX_NET_DEVICES=eth0)
elif [ "$ucx_devices" = list ]; then
    nets=eth0
    for ((r = 1; r < rails; r++)); do nets="$nets,eth$r"; done
    envs+=(UCX_NET_DEVICES="$nets")
else
    unset UCX_NET_DEVICES
fi
over=no
[ $((nodes * ppn)) -gt "$ncores" ] && over=yes
[ $over = yes ] && [ -z "${MPIR_CVAR_CH4_YIELD_WHEN_IDLE:-}" ] && envs+=(MPIR_CVAR_CH4_YIELD_WHEN_IDLE=on)
ompi_args=()
[ $over = yes ] && [ -z "${OMPI_MCA_mpi_yield_when_idle:-}" ] && ompi_args+=(--mca mpi_yield_when_idle 1)
# hydra fills each host with -ppn processes before the next, round robin
[ "$placement" = cyclic ] && ompi_args+=(--map-by node)
case $mode in
    mpiexec)
        cmd=("$prefix/bin/mpiexec" -launcher rsh -launcher-exec "$work/rsh" -hosts "$list"
            -ppn "$([ "$placement" = cyclic ] && echo 1 || echo "$ppn")" -iface eth0 "$@") ;;
    mpirun)
        if [ "$ompi" = 5 ]; then
            mpirun=$top/.cache/openmpi-5.0.7/bin/mpirun
            [ -x "$mpirun" ] ||
                { echo "cluster.sh: no Open MPI 5.0.7 in .cache (bench/install-peers.sh)" >&2; exit 2; }
        else
            mpirun=mpirun.openmpi
            command -v mpirun.openmpi >/dev/null ||
                { echo "cluster.sh: mpirun.openmpi not found (bench/install-peers.sh)" >&2; exit 2; }
        fi
        # more processes than cores (the nodes share them): Open MPI refuses
        # to bind two to a core unless told, where Hydra shares them out
        if [ $over = yes ]; then
            a=() prev=
            for x in "$@"; do
                [ "$prev" = --bind-to ] && case $x in core|hwthread) x=$x:overload-allowed ;; esac
                a+=("$x") prev=$x
            done
            set -- "${a[@]}"
        fi
        hostargs=(--host "$slots")
        if [ "$ompi_hosts" = hostfile ]; then
            for ((n = 0; n < nodes; n++)); do echo "node$n slots=$ppn"; done >"$work/hostfile"
            hostargs=(--hostfile "$work/hostfile")
        fi
        # plm rsh: an image's own OMPI_MCA_plm=isolated (the lent machine's)
        # would start no daemon on the other nodes ("not enough slots")
        if [ "$ompi" = 5 ]; then
            # PRRTE's launcher is "ssh"; the daemons find prted by --prefix
            cmd=("$mpirun" --allow-run-as-root --prefix "${mpirun%/bin/mpirun}"
                --prtemca plm ssh --prtemca plm_ssh_agent "$work/rsh"
                --prtemca plm_ssh_no_tree_spawn 1 --prtemca oob_tcp_if_include eth0
                --mca pml ob1 --mca btl self,sm,tcp --mca btl_tcp_if_include eth0
                "${hostargs[@]}" "${ompi_args[@]}" "$@")
        else
            cmd=(mpirun.openmpi --allow-run-as-root --mca plm rsh --mca plm_rsh_agent "$work/rsh"
                --mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0
                --mca plm_rsh_no_tree_spawn 1 --mca pml ob1 --mca btl self,vader,tcp
                "${hostargs[@]}" "${ompi_args[@]}" "$@")
        fi
        # the launcher joins its arguments into one command line
        [ "$ompi_hosts" = node0 ] && cmd=("$work/rsh" node0 "$(printf '%q ' "${cmd[@]}")") ;;
    run)
        cmd=("$@") ;;
esac
before=$(read_counters)
rc=0
ip netns exec "$(ns 0)" env "${envs[@]}" timeout --foreground -k 10 "$tmo" "${cmd[@]}" || rc=$?
after=$(read_counters)

[ -n "$counters" ] && echo "node,tx_bytes,rx_bytes" >"$counters"
[ -n "$nic_counters" ] && echo "node,nic,tx_bytes,rx_bytes" >"$nic_counters"
paste -d' ' <(echo "$before") <(echo "$after") | awk -v f="$counters" -v fn="$nic_counters" \
    -v q=$quiet -v R=$rails '{
    n = int((NR - 1) / R); r = (NR - 1) % R
    tx = $3 - $1; rx = $4 - $2; ntx[n] += tx; nrx[n] += rx
    if (R > 1 && q != "yes") printf "cluster: node%d eth%d sent %.0f B, received %.0f B\n", n, r, tx, rx > "/dev/stderr"
    if (fn != "") printf "node%d,eth%d,%.0f,%.0f\n", n, r, tx, rx >> fn
    if (r < R - 1) next
    if (q != "yes") printf "cluster: node%d sent %.0f B, received %.0f B\n", n, ntx[n], nrx[n] > "/dev/stderr"
    if (f != "") printf "node%d,%.0f,%.0f\n", n, ntx[n], nrx[n] >> f
}'
[ $rc = 124 ] && echo "cluster.sh: the command ran past --timeout $tmo s" >&2
exit $rc
