# Shared by the checks in test/system/*.sh (sourced, not run): TAP-like
# "ok N - what" / "not ok N - what" lines and a launcher.
#
# Set before sourcing: prefix (the MPICH install prefix) and dev (ucx|ofi).
# Optional: tap_tail (lines of the last output shown under a failure,
# default 15), tap_timeout (seconds per launch, default 300), flip (1:
# invert every check(), to show that the checks can fail).
# Provides: $top (the repository, from the sourcing script's path), $tmp
# (a scratch folder removed at exit), $mpiexec, $n, $fails, and the
# functions below.

top=$(cd "$(dirname "$0")/../.." && pwd)

mpiexec="$prefix/bin/mpiexec"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
fails=0
[ "$dev" = ofi ] && export FI_PROVIDER=tcp

ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() {
    n=$((n + 1))
    fails=$((fails + 1))
    echo "not ok $n - $1"
    [ -f "$tmp/out" ] && sed 's/^/#   /' "$tmp/out" | tail -"${tap_tail:-15}"
}

# check DESCRIPTION CONDITION: CONDITION (shell code) is evaluated, usually
# on the output of the last run
check() {
    if eval "$2"; then r=0; else r=1; fi
    [ "${flip:-0}" = 1 ] && r=$((1 - r))
    if [ $r = 0 ]; then ok "$1"; else notok "$1"; fi
}

# run [NAME=VALUE ...] NP [mpiexec options] PROG [args]: output in
# $tmp/out, exit status in $rc
run() {
    (
        while :; do
            case $1 in
                *=*) export "$1"; shift ;;
                *) break ;;
            esac
        done
        np=$1
        shift
        timeout "${tap_timeout:-300}" "$mpiexec" -n "$np" "$@" >"$tmp/out" 2>&1
        r=$?
        # hydra sometimes loses all output when a process aborts (an error
        # at MPI_Init, or returned with MPI_ERRORS_ARE_FATAL): in 2 of 12
        # launches of defaults.sh 19's, so up to 3 more tries
        for _ in 1 2 3; do
            if [ $r = 0 ] || [ -s "$tmp/out" ]; then
                break
            fi
            timeout "${tap_timeout:-300}" "$mpiexec" -n "$np" "$@" >"$tmp/out" 2>&1
            r=$?
        done
        echo $r >"$tmp/rc"
    )
    rc=$(cat "$tmp/rc")
}

# tap_summary NAME: the closing "NAME: N passed, N failed" line; the
# status is 0 only if nothing failed
tap_summary() {
    echo "$1: $((n - fails)) passed, $fails failed"
    [ $fails = 0 ]
}
