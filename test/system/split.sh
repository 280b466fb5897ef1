#!/bin/sh
#
# MPI_Comm_split_type(MPI_COMM_TYPE_HW_GUIDED) (maint/patches/0026): for
# each resource name, hw_guided.c checks every new communicator against
# what each process reads from hwloc itself (members of one result share
# that instance on one node, nobody else does; a process in no single
# instance gets MPI_COMM_NULL), on a 2-package topology (hwloc XML), bound
# and unbound, on emulated nodes, and on this machine's own topology; and
# MPI_COMM_TYPE_HW_UNGUIDED (hw_unguided.c) level by level.
# Usage: split.sh PREFIX DEVICE
# Prints "ok N - what" / "not ok N - what" lines (TAP-like).

set -u
prefix=$1 dev=$2
. "$(dirname "$0")/tap.sh"

for prog in hw_guided hw_unguided; do
    "$prefix/bin/mpicc" -o "$tmp/$prog" "$top/test/system/$prog.c" -lhwloc >"$tmp/out" 2>&1 ||
        { notok "build $prog.c"; tap_summary split; exit 1; }
done
HWLOC_SYNTHETIC="pack:2 numa:1 core:1 pu:1" lstopo-no-graphics --of xml >"$tmp/2pkg.xml" 2>/dev/null &&
    HWLOC_SYNTHETIC="pack:1 l3:2 core:1 pu:1" lstopo-no-graphics --of xml >"$tmp/l3.xml" 2>/dev/null ||
    { notok "lstopo-no-graphics could not write the test topologies"; tap_summary split; exit 1; }
names="Package NUMANode Core PU Machine node L3Cache package mpi_shared_memory Bogus"
says() { grep -q "^$1$" "$tmp/out"; }
good() { [ $rc = 0 ] && grep -q " No Errors" "$tmp/out"; }

run HWLOC_XMLFILE="$tmp/2pkg.xml" HWLOC_THISSYSTEM=1 2 -bind-to core "$tmp/hw_guided" $names
check "2 packages, bound: Package and Core one each, Machine both, L3Cache and Bogus none" \
    'good && says "Package: 2 communicators, 0 null" && says "Core: 2 communicators, 0 null" && says "Machine: 1 communicators, 0 null" && says "node: 1 communicators, 0 null" && says "L3Cache: 0 communicators, 2 null" && says "Bogus: 0 communicators, 2 null"'
run HWLOC_XMLFILE="$tmp/2pkg.xml" HWLOC_THISSYSTEM=1 2 -bind-to none "$tmp/hw_guided" $names
check "2 packages, unbound: no Package, NUMANode or Core (none holds the binding), Machine both" \
    'good && says "Package: 0 communicators, 2 null" && says "Core: 0 communicators, 2 null" && says "Machine: 1 communicators, 0 null" && says "mpi_shared_memory: 1 communicators, 0 null"'
run HWLOC_XMLFILE="$tmp/2pkg.xml" HWLOC_THISSYSTEM=1 MPIR_CVAR_NUM_CLIQUES=2 4 -bind-to core \
    "$tmp/hw_guided" $names
check "2 emulated nodes x 2, 2 packages: instances per node, Machine one per node" \
    'good && says "Machine: 2 communicators, 0 null"'
run 3 -bind-to core "$tmp/hw_guided" $names
check "this machine, 3 processes bound: every name as hwloc says" 'good'

# HW_UNGUIDED, again and again down to MPI_COMM_NULL: each level a strict
# subset that HW_GUIDED with the name it returns gives too
levels() { [ $rc = 0 ] && grep -q " No Errors" "$tmp/out" && grep -q "^levels:$1\$" "$tmp/out"; }
# (a topology of no more PUs than this machine has: hydra cannot bind to
# the others)
run HWLOC_XMLFILE="$tmp/l3.xml" HWLOC_THISSYSTEM=1 2 -bind-to core "$tmp/hw_unguided"
check "HW_UNGUIDED, one package of 2 L3 caches, bound: L3Cache (MPICH 4.0.2 went to core)" \
    'levels " L3Cache"'
run HWLOC_XMLFILE="$tmp/2pkg.xml" HWLOC_THISSYSTEM=1 2 -bind-to none "$tmp/hw_unguided"
check "HW_UNGUIDED, unbound: no level splits, MPI_COMM_NULL" 'levels ""'
run HWLOC_XMLFILE="$tmp/2pkg.xml" HWLOC_THISSYSTEM=1 MPIR_CVAR_NUM_CLIQUES=2 \
    MPIR_CVAR_CLIQUES_BY_BLOCK=1 4 -bind-to core "$tmp/hw_unguided"
check "HW_UNGUIDED, 2 emulated nodes of 2 packages: the node, then Package" \
    'levels " mpi_shared_memory Package"'
run 1 "$tmp/hw_unguided"
check "HW_UNGUIDED, one process: MPI_COMM_NULL" 'levels ""'

tap_summary split
