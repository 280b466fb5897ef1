#!/bin/sh
# Open MPI's "rsh agent" for emulated nodes (bench/run.sh): mpirun asks it to
# start an orted on host nK; it starts it here instead. Processes under
# different orteds count as on different nodes, so Open MPI (and coll_han)
# sees a cluster and sends between the "nodes" over TCP. Each node gets its
# own session and shared-memory directories: both orteds have the same real
# host name, and their file names would collide otherwise.
#   usage (by mpirun): fake-node-rsh.sh [ssh options] HOST COMMAND...
set -eu
host=
while [ $# -gt 0 ]; do
    case $1 in
        -*) shift ;;
        *) host=$1; shift; break ;;
    esac
done
[ -n "$host" ] || { echo "fake-node-rsh.sh: no host" >&2; exit 2; }
d=${BENCH_FAKE_DIR:-/tmp}/node-$host-$$
mkdir -p "$d"
OMPI_MCA_btl_vader_backing_directory=$d
OMPI_MCA_orte_tmpdir_base=$d
export OMPI_MCA_btl_vader_backing_directory OMPI_MCA_orte_tmpdir_base
exec sh -c "$*"
