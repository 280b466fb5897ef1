# Shared by check.sh, demo.sh and bench scripts (sourced, POSIX sh).
# Expects $top (repository root) and $JOBS.

# Install the Debian packages the build needs, if any is missing.
topo_ensure_deps() {
    missing=no
    for t in autoconf automake libtoolize python3 patch xz valgrind lstopo-no-graphics g++ gfortran strace; do
        command -v $t >/dev/null 2>&1 || missing=yes
    done
    for h in /usr/include/hwloc.h /usr/include/ucp/api/ucp.h /usr/include/rdma/fabric.h; do
        [ -f $h ] || missing=yes
    done
    if [ $missing = yes ] || ! apt-get source --help >/dev/null 2>&1 ||
        ! grep -rqs 'deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
        if [ -n "${MPICH_TARBALL:-}" ] && [ $missing = no ]; then
            return 0
        fi
        echo "== installing dependencies (maint/install-deps.sh)"
        mkdir -p "$top/.cache"
        "$top/maint/install-deps.sh" >"$top/.cache/install-deps.log" 2>&1 || {
            tail -20 "$top/.cache/install-deps.log"
            echo "error: maint/install-deps.sh failed (log: .cache/install-deps.log)" >&2
            return 1
        }
    fi
    return 0
}

topo_autogen() {
    if [ -f "$top/mpich/.topo-generated" ] && [ -x "$top/configure" ]; then
        echo "== autogen (quick: overlay, patches, generators)"
        "$top/autogen.sh" --quick | grep -v '^autogen: \(gen_coll\|extractcvars\|tuning\|error\)' || return 1
    else
        echo "== autogen"
        "$top/autogen.sh" || return 1
    fi
}

# topo_build DEVICE [extra configure args]: build-DEVICE -> install-DEVICE
topo_build() {
    dev=$1
    shift
    b=$top/build-$dev
    p=$top/install-$dev
    mkdir -p "$b"
    if [ ! -f "$b/mpich/config.status" ]; then
        # MPICH's whole interface, as Debian's: Fortran and C++ bindings and
        # MPI-IO (ROMIO), so that such programs build against this one and
        # Debian-built ones run on it (our configure leaves Fortran out
        # without a compiler and adds gfortran 10's flags)
        command -v g++ >/dev/null 2>&1 || set -- --disable-cxx "$@"
        echo "== ch4:$dev: configure (about 1-2 minutes)"
        (cd "$b" && "$top/configure" --prefix="$p" --with-device=ch4:$dev \
            --disable-static "$@" >"$b/configure.log" 2>&1) || {
            tail -30 "$b/configure.log"
            echo "error: configure for ch4:$dev failed (log: $b/configure.log)" >&2
            return 1
        }
    fi
    echo "== ch4:$dev: make -j$JOBS && make install (first build about 5 minutes)"
    # make re-runs MPICH's configure when a patched Makefile.am changed: it
    # needs the PKG_CONFIG_LIBDIR that our configure sets for ch4:ofi
    # (configure.ac), or the link pulls in Debian's static-only libraries
    (cd "$b" && if [ "$dev" = ofi ] && [ -z "${PKG_CONFIG_LIBDIR+set}" ]; then
        export PKG_CONFIG_LIBDIR=/nonexistent
    fi &&
        make -j"$JOBS" >"$b/make.log" 2>&1 && make install >"$b/install.log" 2>&1) || {
        grep -E 'error|Error' "$b/make.log" | head -20
        echo "error: build of ch4:$dev failed (log: $b/make.log)" >&2
        return 1
    }
    return 0
}

# Segments the MPI runs left behind in /dev/shm.
topo_check_shm_leaks() {
    left=$(ls /dev/shm 2>/dev/null | grep -i -E 'mpi|topo|shm' | head -5)
    if [ -n "$left" ]; then
        echo "  $1: /dev/shm still holds: $left"
        return 1
    fi
    return 0
}

# topo_fetch_debs DIR PKG...: Debian packages unpacked under DIR/root with
# dpkg -x, not installed (nothing in the system changes: no alternatives,
# no libmpich.so.12 on the default library path).  Downloaded once and kept
# in DIR/debs.  Returns 1, with the reason on stderr, where apt cannot get
# one (no package lists: apt-get update is tried once).
topo_fetch_debs() {
    fd_dir=$1
    shift
    mkdir -p "$fd_dir/debs" "$fd_dir/root" || return 1
    for fd_p in "$@"; do
        [ -f "$fd_dir/debs/$fd_p.unpacked" ] && continue
        if ! (cd "$fd_dir/debs" && apt-get download "$fd_p") >"$fd_dir/debs/$fd_p.log" 2>&1; then
            apt-get update >"$fd_dir/debs/apt-update.log" 2>&1
            (cd "$fd_dir/debs" && apt-get download "$fd_p") >"$fd_dir/debs/$fd_p.log" 2>&1 || {
                echo "apt-get download $fd_p failed: $(tail -1 "$fd_dir/debs/$fd_p.log")" >&2
                return 1
            }
        fi
        fd_deb=$(ls "$fd_dir/debs/${fd_p}_"*.deb 2>/dev/null | head -1)
        [ -n "$fd_deb" ] && dpkg -x "$fd_deb" "$fd_dir/root" || {
            echo "dpkg -x of $fd_p failed" >&2
            return 1
        }
        touch "$fd_dir/debs/$fd_p.unpacked"
    done
    return 0
}

# topo_csv FILE PROGRAM: runs the awk PROGRAM over the rows of FILE, a CSV
# file whose first line names its columns (bench/coll_bench.c -H); PROGRAM
# reads a field by its column's name, f("errors"), never by position.
topo_csv() {
    awk -F, '
        function f(name) {
            if (!(name in col_)) {
                print "topo_csv: " FILENAME " has no column " name > "/dev/stderr"
                exit 2
            }
            return $(col_[name])
        }
        NR == 1 { for (i = 1; i <= NF; i++) col_[$i] = i; next }
        '"$2" "$1"
}
