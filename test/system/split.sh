#!/bin/sh
#
# MPI_Comm_split_type(MPI_COMM_TYPE_HW_GUIDED) (maint/patches/0026): for
# each resource name, hw_guided.c checks every new communicator against
# what each process reads from hwloc itself (members of one result share
# that instance on one node, nobody else does; a process in no single
# instance gets MPI_COMM_NULL), on a 2-package topology (hwloc XML), bound
# and unbound, on emulated nodes, and on this machine's own topology.
# Usage: split.sh PREFIX DEVICE
# Prints "ok N - what" / "not ok N - what" lines (TAP-like).

set -u
prefix=$1 dev=$2
. "$(dirname "$0")/tap.sh"

"$prefix/bin/mpicc" -o "$tmp/hw_guided" "$top/test/system/hw_guided.c" -lhwloc >"$tmp/out" 2>&1 ||
    { notok "build hw_guided.c"; tap_summary split; exit 1; }
HWLOC_SYNTHETIC="pack:2 numa:1 core:1 pu:1" lstopo-no-graphics --of xml >"$tmp/2pkg.xml" 2>/dev/null ||
    { notok "lstopo-no-graphics could not write a 2-package topology"; tap_summary split; exit 1; }
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

tap_summary split
