#!/bin/sh
# Install what bench/run.sh uses besides our MPICH (Debian, as root or with
# sudo): Open MPI as the peer (mpicc.openmpi, mpirun.openmpi, coll_han) and
# matplotlib for the plots, run with /usr/bin/python3. Optional: without
# them run.sh skips the peer runs and the plots. util-linux (unshare) and
# iproute2 (ip) give each launch a private loopback network.
set -eu
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends \
    openmpi-bin libopenmpi-dev python3-matplotlib util-linux iproute2
