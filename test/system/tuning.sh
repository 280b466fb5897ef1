#!/bin/sh
#
# Collective tuning-file checks: every kind of bad file is an error at
# MPI_Init naming the file, the key and the valid choices (MPIR, CH4 and
# POSIX levels; MPIR_CVAR_COLL_SELECTION_TUNING_ERROR=error by default, warn
# goes on with the built-in tuning), the topology predicates route as they
# should (and do not when they should not), and comm_size<N is strict.
# Usage: tuning.sh PREFIX COLL_TEST_DIR DEVICE
# Prints "ok N - what" / "not ok N - what" lines (TAP-like).
#
# Which algorithm ran is read from the MPIR_CVAR_COLL_TRACE=1 report printed
# at MPI_Finalize. TUNING_FLIP=1 inverts every expectation (each check must
# then fail: a way to see that none passes vacuously).

set -u
prefix=$1 coll=$2 dev=$3
. "$(dirname "$0")/tap.sh"
tuning=$top/mpich/maint/tuning/coll
flip=${TUNING_FLIP:-0}
tap_tail=25
tap_timeout=180
unset MPIR_CVAR_NUM_CLIQUES MPIR_CVAR_CLIQUES_BY_BLOCK HWLOC_SYNTHETIC HWLOC_THISSYSTEM \
    MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE \
    MPIR_CVAR_CH4_POSIX_COLL_SELECTION_TUNING_JSON_FILE MPIR_CVAR_COLL_SELECTION_TUNING_ERROR
export MPIR_CVAR_COLL_TRACE=1

has() { grep -qF -- "$1" "$tmp/out"; }
passed() { [ $rc = 0 ] && has ' No Errors'; }
failed() { [ $rc != 0 ] && ! has ' No Errors'; }
# ran COLL ALGO KIND SIZE: the trace shows ALGO chosen by the selection
ran() { grep -qE "^mpich-topo: +$1 +$2 +selection +$3 +$4:" "$tmp/out"; }
# calls COLL ALGO KIND SIZE: how many times (0 if never)
calls() {
    c=$(sed -nE "s/^mpich-topo: +$1 +$2 +selection +$3 +$4: ([0-9]+)\$/\\1/p" "$tmp/out" | head -1)
    echo "${c:-0}"
}

# ---------------------------------------------------------------- inputs

# the probe (tuning_probe.c): allgathers and bcasts, with an argument also on a split
if ! "$prefix/bin/mpicc" -o "$tmp/probe" "$top/test/system/tuning_probe.c" >"$tmp/out" 2>&1; then
    cat "$tmp/out"
    echo "not ok 1 - cannot build the probe program"
    exit 1
fi
probe=$tmp/probe

# mkfile OUT BASE COLL SUBTREE: MPICH's own file of level BASE (mpir, ch4,
# posix, or none for an empty one) with collective COLL's subtree replaced
mkfile() {
    python3 - "$tuning" "$@" <<'EOF'
import collections, json, sys
tuning, out, base, coll, sub = sys.argv[1:6]
od = collections.OrderedDict
files = {"mpir": "mpir/generic.json", "ch4": "ch4/generic.json", "posix": "ch4/posix_generic.json"}
tree = json.load(open(tuning + "/" + files[base]), object_pairs_hook=od) if base in files else od()
tree["collective=" + coll] = json.loads(sub, object_pairs_hook=od)
json.dump(tree, open(out, "w"), indent=1)
EOF
}

# an MPIR allgather subtree: PRED -> brucks, otherwise ring
inter='"comm_type=inter": {"algorithm=MPIR_Allgather_inter_local_gather_remote_bcast": {}}'
ag_pred() {
    echo "{\"comm_type=intra\": {\"$1\": {\"algorithm=MPIR_Allgather_intra_brucks\": {}},
          \"comm_size=any\": {\"algorithm=MPIR_Allgather_intra_ring\": {}}}, $inter}"
}
mpir_cvar=MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE
ch4_cvar=MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE
posix_cvar=MPIR_CVAR_CH4_POSIX_COLL_SELECTION_TUNING_JSON_FILE
couldnt="could not be used (set MPIR_CVAR_COLL_SELECTION_TUNING_ERROR=warn"

# ---------------------------------------------------------------- errors

# unreadable: a missing file, and a directory
f=$tmp/no-such-file.json
run $mpir_cvar="$f" 1 "$probe"
check "MPIR: a missing file is an error naming the CVAR, the file and the reason" \
    'failed && has "$mpir_cvar=$f $couldnt" && has "cannot read the file: No such file or directory"'
mkdir "$tmp/dir.json"
run $mpir_cvar="$tmp/dir.json" 1 "$probe"
check "MPIR: a directory is an error (cannot read the file)" \
    'failed && has "$mpir_cvar=$tmp/dir.json $couldnt" && has "cannot read the file: Is a directory"'

# not JSON: a missing closing brace, text after the object, an empty file
printf '{\n  "collective=bcast": {\n    "algorithm=MPIR_Bcast_intra_binomial": {}\n  },\n  "collective=allgather" {}\n}\n' >"$tmp/bad1.json"
run $mpir_cvar="$tmp/bad1.json" 1 "$probe"
check "MPIR: bad JSON names the file, line and column" \
    'failed && has "$mpir_cvar=$tmp/bad1.json $couldnt" && has "not valid JSON at line 5, column"'
printf '{"collective=bcast": {"algorithm=MPIR_Bcast_intra_binomial": {}}}\n}\n' >"$tmp/bad2.json"
run $mpir_cvar="$tmp/bad2.json" 1 "$probe"
check "MPIR: text after the JSON object is an error" \
    'failed && has "not valid JSON at line 2, column 1: unexpected character"'
printf '{"collective=bcast": {"algorithm=MPIR_Bcast_intra_binomial": {},}}\n' >"$tmp/bad3.json"
run $mpir_cvar="$tmp/bad3.json" 1 "$probe"
check "MPIR: a trailing comma (not JSON, though json-c accepts it) is an error" \
    'failed && has "not valid JSON at line 1, column"'
: >"$tmp/empty.json"
run $mpir_cvar="$tmp/empty.json" 1 "$probe"
check "MPIR: an empty file is an error" 'failed && has "the file is empty"'

# unknown keys: an unknown operator (all operators listed), a known operator
# with an unknown form (its forms listed), an unknown collective, a key that
# is not collective= at the top
mkfile "$tmp/key1.json" mpir allgather '{"comm_type=intra": {"comm_sise<8": {"algorithm=MPIR_Allgather_intra_ring": {}}, "comm_size=any": {"algorithm=MPIR_Allgather_intra_ring": {}}}, "comm_type=inter": {"algorithm=MPIR_Allgather_inter_local_gather_remote_bcast": {}}}'
run $mpir_cvar="$tmp/key1.json" 1 "$probe"
check "MPIR: unknown key: names the file, the key, where it is, and lists the keys" \
    'failed && has "$mpir_cvar=$tmp/key1.json $couldnt" && has "unknown key \"comm_sise<8\" in collective=allgather > comm_type=intra" && has "valid: comm_type, is_multi_threaded, comm_size" && has "ppn_uniform, numa_per_node, is_bound"'
mkfile "$tmp/key2.json" mpir allgather '{"comm_type=intra": {"comm_size>8": {"algorithm=MPIR_Allgather_intra_ring": {}}, "comm_size=any": {"algorithm=MPIR_Allgather_intra_ring": {}}}, "comm_type=inter": {"algorithm=MPIR_Allgather_inter_local_gather_remote_bcast": {}}}'
run $mpir_cvar="$tmp/key2.json" 1 "$probe"
check "MPIR: unknown form of a known operator lists that operator's forms" \
    'failed && has "unknown key \"comm_size>8\"" && has "valid: comm_size<=N, comm_size<N, comm_size=pow2, comm_size=node_comm_size, comm_size=any"'
mkfile "$tmp/coll.json" mpir allgatherx '{"algorithm=MPIR_Allgather_intra_ring": {}}'
run $mpir_cvar="$tmp/coll.json" 1 "$probe"
check "MPIR: unknown collective lists the collectives" \
    'failed && has "unknown collective in \"collective=allgatherx\"" && has "valid: allgather, allgatherv, allreduce"'

# unknown algorithm; an algorithm of another collective; an unknown parameter
mkfile "$tmp/alg1.json" mpir allgather '{"comm_type=intra": {"algorithm=MPIR_Allgather_intra_bogus": {}}, "comm_type=inter": {"algorithm=MPIR_Allgather_inter_local_gather_remote_bcast": {}}}'
run $mpir_cvar="$tmp/alg1.json" 1 "$probe"
check "MPIR: unknown algorithm: names it and lists the allgather algorithms" \
    'failed && has "$mpir_cvar=$tmp/alg1.json $couldnt" && has "no MPIR algorithm named \"algorithm=MPIR_Allgather_intra_bogus\" for collective=allgather" && has "valid: MPIR_Allgather_intra_brucks, MPIR_Allgather_intra_recursive_doubling, MPIR_Allgather_intra_ring, MPIR_Allgather_intra_topo_ring"'
mkfile "$tmp/alg2.json" mpir allgather '{"comm_type=intra": {"algorithm=MPIR_Bcast_intra_binomial": {}}, "comm_type=inter": {"algorithm=MPIR_Allgather_inter_local_gather_remote_bcast": {}}}'
run $mpir_cvar="$tmp/alg2.json" 1 "$probe"
check "MPIR: a bcast algorithm under collective=allgather is an error" \
    'failed && has "no MPIR algorithm named \"algorithm=MPIR_Bcast_intra_binomial\" for collective=allgather"'
mkfile "$tmp/param.json" mpir allgather '{"comm_type=intra": {"algorithm=MPIR_Allgather_intra_ring": {"k=2": {}}}, "comm_type=inter": {"algorithm=MPIR_Allgather_inter_local_gather_remote_bcast": {}}}'
run $mpir_cvar="$tmp/param.json" 1 "$probe"
check "MPIR: a parameter the algorithm does not take is an error" \
    'failed && has "\"k=2\" is not a parameter of MPIR_Allgather_intra_ring" && has "takes no parameters"'

# malformed numbers
mkfile "$tmp/num1.json" mpir allgather "$(ag_pred 'comm_size<=12abc')"
run $mpir_cvar="$tmp/num1.json" 1 "$probe"
check "MPIR: malformed number (comm_size<=12abc) is an error" \
    'failed && has "$mpir_cvar=$tmp/num1.json $couldnt" && has "\"comm_size<=12abc\" needs a whole number from 0 to 2147483647 (in collective=allgather > comm_type=intra)"'
mkfile "$tmp/num2.json" mpir allgather "$(ag_pred 'ppn<99999999999')"
run $mpir_cvar="$tmp/num2.json" 1 "$probe"
check "MPIR: a number too large for the selection (ppn<99999999999) is an error" \
    'failed && has "\"ppn<99999999999\" needs a whole number"'

# keys the selection would assert on at run time
mkfile "$tmp/notfor.json" mpir allgather "$(ag_pred 'avg_msg_size<=1024')"
run $mpir_cvar="$tmp/notfor.json" 1 "$probe"
check "MPIR: avg_msg_size under allgather (asserts in 4.0.2 at the first call) is an error" \
    'failed && has "\"avg_msg_size<=1024\" cannot be evaluated for collective=allgather" && has "valid: allreduce, iallreduce, bcast"'
mkfile "$tmp/last.json" mpir allgather '{"comm_type=intra": {"comm_size<=8": {"algorithm=MPIR_Allgather_intra_ring": {}}}, "comm_type=inter": {"algorithm=MPIR_Allgather_inter_local_gather_remote_bcast": {}}}'
run $mpir_cvar="$tmp/last.json" 1 "$probe"
check "MPIR: a comparison without a fallback after it is an error" \
    'failed && has "\"comm_size<=8\" is the last key of its object, so nothing is selected when it does not hold"'
mkfile "$tmp/intra.json" mpir allgather '{"comm_type=intra": {"algorithm=MPIR_Allgather_intra_ring": {}}}'
run $mpir_cvar="$tmp/intra.json" 1 "$probe"
check "MPIR: comm_type=intra without comm_type=inter is an error at the MPIR level" \
    'failed && has "nothing is selected at the MPIR level when it does not hold: add \"comm_type=inter\" after it"'

# a key twice in one object: json-c would keep the last one silently
cat >"$tmp/dup.json" <<'XEOF'
{"collective=allgather": {"comm_type=intra": {
    "comm_size<=4": {"algorithm=MPIR_Allgather_intra_ring": {}},
    "comm_size<=4": {"algorithm=MPIR_Allgather_intra_brucks": {}},
    "comm_size=any": {"algorithm=MPIR_Allgather_intra_ring": {}}},
  "comm_type=inter": {"algorithm=MPIR_Allgather_inter_local_gather_remote_bcast": {}}}}
XEOF
run $mpir_cvar="$tmp/dup.json" 1 "$probe"
check "MPIR: a key twice in one object is an error naming it, its line and where it is" \
    'failed && has "the key \"comm_size<=4\" appears twice in one object (line 3)" && has "(in collective=allgather > comm_type=intra)"'
# a file with only the collectives it changes: the others keep the built-in
# tuning (4.0.2 asserted at their first call)
mkfile "$tmp/only.json" none allgather '{"comm_type=intra": {"algorithm=MPIR_Allgather_intra_ring": {}}, "comm_type=inter": {"algorithm=MPIR_Allgather_inter_local_gather_remote_bcast": {}}}'
run $mpir_cvar="$tmp/only.json" 4 "$probe"
check "MPIR: a file with allgather only: allgather as it says, bcast by the built-in tuning" \
    'passed && ran allgather ring parent 4 && ran bcast topo_pipeline parent 4'

# CH4 level: unknown composition, unknown key
mkfile "$tmp/ch4a.json" none bcast '{"composition=MPIDI_Bcast_intra_composition_delta": {}}'
run $ch4_cvar="$tmp/ch4a.json" 1 "$probe"
check "CH4: unknown composition names the CH4 CVAR and lists the bcast compositions" \
    'failed && has "$ch4_cvar=$tmp/ch4a.json $couldnt" && has "no CH4 composition named \"composition=MPIDI_Bcast_intra_composition_delta\" for collective=bcast" && has "valid: MPIDI_Bcast_intra_composition_alpha, MPIDI_Bcast_intra_composition_beta, MPIDI_Bcast_intra_composition_gamma"'
mkfile "$tmp/ch4b.json" none bcast '{"ppn=2": {"composition=MPIDI_Bcast_intra_composition_gamma": {}}}'
run $ch4_cvar="$tmp/ch4b.json" 1 "$probe"
check "CH4: unknown key lists the forms of that operator" \
    'failed && has "$ch4_cvar=$tmp/ch4b.json" && has "unknown key \"ppn=2\" in collective=bcast" && has "valid: ppn<=N, ppn<N"'
mkfile "$tmp/ch4c.json" none bcast '{"algorithm=MPIR_Bcast_intra_binomial": {}}'
run $ch4_cvar="$tmp/ch4c.json" 1 "$probe"
check "CH4: an MPIR algorithm in the CH4 file is an error" \
    'failed && has "no CH4 composition named \"algorithm=MPIR_Bcast_intra_binomial\""'

# POSIX level: its own CVAR is read (4.0.2 read the CH4 one)
mkfile "$tmp/posixa.json" none bcast '{"algorithm=MPIDI_POSIX_mpi_bcast_ring": {}}'
run $posix_cvar="$tmp/posixa.json" 1 "$probe"
check "POSIX: unknown algorithm names the POSIX CVAR and lists the POSIX bcast algorithms" \
    'failed && has "$posix_cvar=$tmp/posixa.json $couldnt" && has "no POSIX algorithm named \"algorithm=MPIDI_POSIX_mpi_bcast_ring\" for collective=bcast" && has "valid: MPIDI_POSIX_mpi_bcast_release_gather"'
run $posix_cvar="$tmp/posixa.json" $ch4_cvar="$tuning/ch4/generic.json" 1 "$probe"
check "POSIX: the POSIX file is checked, not the CH4 file (4.0.2 loaded the CH4 CVAR)" \
    'failed && has "$posix_cvar=$tmp/posixa.json"'
run $posix_cvar="$tuning/ch4/posix_generic.json" 1 "$probe"
check "POSIX: MPICH's posix_generic.json as the POSIX file, no CH4 file: runs (4.0.2 asserted)" 'passed'

# warn: the error is printed and the built-in tuning is used
run $mpir_cvar="$tmp/key1.json" MPIR_CVAR_COLL_SELECTION_TUNING_ERROR=warn 4 "$probe"
check "MPIR, warn: prints the error and runs with the built-in tuning (topo_pipeline within one node)" \
    'passed && has "warning: $mpir_cvar=$tmp/key1.json is not used; the built-in MPIR tuning is" && has "unknown key \"comm_sise<8\"" && ran allgather topo_pipeline parent 4'
run $mpir_cvar="$tmp/no-such-file.json" MPIR_CVAR_COLL_SELECTION_TUNING_ERROR=warn 2 "$probe"
check "MPIR, warn: a missing file is reported and the job runs" \
    'passed && has "warning: $mpir_cvar=$tmp/no-such-file.json is not used" && has "No such file or directory"'
run $ch4_cvar="$tmp/ch4a.json" MPIR_CVAR_COLL_SELECTION_TUNING_ERROR=warn 2 "$probe"
check "CH4, warn: prints the error and runs with the built-in CH4 tuning" \
    'passed && has "warning: $ch4_cvar=$tmp/ch4a.json is not used; the built-in CH4 tuning is"'
run $posix_cvar="$tmp/posixa.json" MPIR_CVAR_COLL_SELECTION_TUNING_ERROR=warn 2 "$probe"
check "POSIX, warn: prints the error and runs with the built-in POSIX tuning" \
    'passed && has "warning: $posix_cvar=$tmp/posixa.json is not used; the built-in POSIX tuning is"'

# MPICH's own files are valid user files (no false alarms)
run $mpir_cvar="$tuning/mpir/generic.json" $ch4_cvar="$tuning/ch4/generic.json" \
    $posix_cvar="$tuning/ch4/posix_generic.json" 4 "$coll/allgather2"
check "MPICH's generic.json (MPIR, CH4) and posix_generic.json load as user files" 'passed'

# ---------------------------------------------------------------- comm_size<N

# under total_msg_size (which pruning cannot decide) comm_size<N is evaluated
# by the search, where 4.0.2 tested <=
sub='{"comm_type=intra": {"total_msg_size<=1000000": {"comm_size<4": {"algorithm=MPIR_Allgather_intra_brucks": {}}, "comm_size=any": {"algorithm=MPIR_Allgather_intra_ring": {}}}, "total_msg_size=any": {"algorithm=MPIR_Allgather_intra_ring": {}}}, '"$inter}"
mkfile "$tmp/lt.json" mpir allgather "$sub"
run $mpir_cvar="$tmp/lt.json" 4 "$probe"
check "comm_size<4 does not hold for 4 processes (ring, not brucks)" \
    'passed && ran allgather ring parent 4 && ! ran allgather brucks parent 4'
run $mpir_cvar="$tmp/lt.json" 3 "$probe"
check "comm_size<4 holds for 3 processes (brucks)" 'passed && ran allgather brucks parent 3'
mkfile "$tmp/le.json" mpir allgather "$(echo "$sub" | sed 's/comm_size<4/comm_size<=4/')"
run $mpir_cvar="$tmp/le.json" 4 "$probe"
check "comm_size<=4 holds for 4 processes (brucks)" 'passed && ran allgather brucks parent 4'

# ---------------------------------------------------------------- predicates

# pred_case PRED NP EXPECT(brucks|ring) DESCRIPTION [NAME=VALUE ...] [mpiexec options]
# NAME=VALUE become mpiexec -genv options; in a HWLOC_SYNTHETIC value, '_'
# stands for a space.
pred_case() {
    pred=$1 np=$2 want=$3 desc=$4
    shift 4
    i=0 count=$#
    while [ $i -lt $count ]; do
        a=$1
        shift
        case $a in
            HWLOC_SYNTHETIC=*) set -- "$@" -genv HWLOC_SYNTHETIC "$(echo "${a#*=}" | tr _ ' ')" ;;
            *=*) set -- "$@" -genv "${a%%=*}" "${a#*=}" ;;
            *) set -- "$@" "$a" ;;
        esac
        i=$((i + 1))
    done
    f=$tmp/pred-$(echo "$pred" | tr -c 'a-z0-9\n' '_').json
    [ -f "$f" ] || mkfile "$f" mpir allgather "$(ag_pred "$pred")"
    other=ring
    [ "$want" = ring ] && other=brucks
    run $mpir_cvar="$f" "$np" "$@" "$probe"
    check "$pred, $desc: $want" \
        'passed && ran allgather "$want" "(parent|flat)" "$np" && ! ran allgather "$other" "(parent|flat)" "$np"'
}

c2="MPIR_CVAR_NUM_CLIQUES=2"
c2b="MPIR_CVAR_NUM_CLIQUES=2 MPIR_CVAR_CLIQUES_BY_BLOCK=1"
bind="-bind-to core"
numa2="HWLOC_SYNTHETIC=pack:2_numa:1_core:1_pu:1 HWLOC_THISSYSTEM=1"
pack2="HWLOC_SYNTHETIC=pack:2_core:1_pu:1 HWLOC_THISSYSTEM=1"

pred_case "node_count<=1" 4 brucks "4 processes on one node"
pred_case "node_count<=1" 4 ring "on 2 emulated nodes" $c2
pred_case "node_count<2" 4 ring "on 2 emulated nodes (strict)" $c2
pred_case "node_count<2" 4 brucks "on one node"
pred_case "ppn<=2" 4 brucks "2 per node" $c2
pred_case "ppn<=2" 4 ring "4 on one node"
pred_case "ppn<2" 4 ring "2 per node (strict)" $c2
pred_case "ppn<2" 4 brucks "1 per node" MPIR_CVAR_NUM_CLIQUES=4
pred_case "ppn_uniform=yes" 4 brucks "2+2" $c2
pred_case "ppn_uniform=yes" 3 ring "2+1" $c2
pred_case "ppn_uniform=no" 3 brucks "2+1" $c2
pred_case "ppn_uniform=no" 4 ring "2+2" $c2
pred_case "is_node_consecutive=yes" 4 brucks "nodes by block" $c2b
pred_case "is_node_consecutive=yes" 4 ring "nodes round-robin" $c2
pred_case "is_bound=yes" 2 brucks "-bind-to core" $bind
pred_case "is_bound=yes" 2 ring "not bound"
pred_case "is_bound=no" 2 brucks "not bound"
pred_case "is_bound=no" 2 ring "-bind-to core" $bind
pred_case "numa_per_node<=1" 2 brucks "bound, this machine's single NUMA node" $bind
pred_case "numa_per_node<=1" 2 ring "bound, 2 NUMA nodes (hwloc synthetic)" $numa2 $bind
pred_case "numa_per_node<2" 2 brucks "bound, 2 packages sharing one NUMA node" $pack2 $bind
pred_case "numa_per_node<2" 2 brucks "2 NUMA nodes but not bound" $numa2
pred_case "numa_per_node<=2" 4 brucks "4 bound on 2 NUMA nodes, 2 emulated nodes by block" $numa2 $c2b $bind
pred_case "numa_per_node<2" 4 ring "4 bound on 2 NUMA nodes, 2 emulated nodes by block" $numa2 $c2b $bind
pred_case "numa_per_node<2" 4 brucks "4 bound, 2 emulated nodes round-robin (1 NUMA node each)" $numa2 $c2 $bind

# a communicator other than MPI_COMM_WORLD: the halves of a round-robin
# 2-node job each lie on one node
mkfile "$tmp/split.json" mpir allgather "$(ag_pred 'node_count<=1')"
run $c2 $mpir_cvar="$tmp/split.json" 4 "$probe" split
check "node_count<=1 per communicator: world on 2 nodes ring, its node-halves brucks" \
    'passed && ran allgather ring parent 4 && ran allgather brucks "(parent|flat)" 2 && ! ran allgather brucks parent 4 && ! ran allgather ring "(parent|flat)" 2'

# CH4 level: bcast through composition gamma (MPIR bcast on the whole
# communicator) when the predicate holds, alpha (MPIR bcast on the node and
# node-roots communicators) otherwise
# (alpha needs node sub-communicators: only for parent communicators, as in
# MPICH's file; MPICH's own barrier on a node communicator bcasts through CH4)
ch4_sub() {
    echo "{\"comm_hierarchy=parent\": {
              \"$1\": {\"composition=MPIDI_Bcast_intra_composition_gamma\": {}},
              \"comm_size=any\": {\"composition=MPIDI_Bcast_intra_composition_alpha\": {}}},
          \"comm_hierarchy=any\": {\"composition=MPIDI_Bcast_intra_composition_gamma\": {}}}"
}
mkfile "$tmp/ch4-nodes.json" none bcast "$(ch4_sub 'node_count<=1')"
mkfile "$tmp/posix-none.json" none bcast '{"is_multi_threaded=yes": {"algorithm=MPIDI_POSIX_mpi_bcast_release_gather": {}}}'
# (the POSIX file sends node bcasts to MPIR, so that they show in the trace)
run $ch4_cvar="$tmp/ch4-nodes.json" $posix_cvar="$tmp/posix-none.json" 4 "$probe"
check "CH4 node_count<=1, one node: composition gamma (bcast on the whole communicator)" \
    'passed && ran bcast "[a-z_]+" parent 4 && ! ran bcast "[a-z_]+" node_roots 2'
run $c2 $ch4_cvar="$tmp/ch4-nodes.json" $posix_cvar="$tmp/posix-none.json" 4 "$probe"
check "CH4 node_count<=1, 2 emulated nodes: composition alpha (bcast on node sub-communicators)" \
    'passed && ran bcast "[a-z_]+" node_roots 2 && ran bcast "[a-z_]+" node 2 && ! ran bcast "[a-z_]+" parent 4'
mkfile "$tmp/ch4-bound.json" none bcast "$(ch4_sub 'is_bound=yes')"
run $c2 $ch4_cvar="$tmp/ch4-bound.json" $posix_cvar="$tmp/posix-none.json" 4 $bind "$probe"
check "CH4 is_bound=yes, bound: composition gamma" \
    'passed && ran bcast "[a-z_]+" parent 4 && ! ran bcast "[a-z_]+" node_roots 2'
run $c2 $ch4_cvar="$tmp/ch4-bound.json" $posix_cvar="$tmp/posix-none.json" 4 "$probe"
check "CH4 is_bound=yes, not bound: composition alpha" \
    'passed && ran bcast "[a-z_]+" node_roots 2 && ! ran bcast "[a-z_]+" parent 4'

# POSIX level: release_gather for bound processes, MPIR (traced) otherwise.
# Each of the probe's 30 bcasts reaches the POSIX level on the node
# communicators (CH4 composition alpha); release_gather itself makes a few
# MPIR calls there while it sets up, so count.
mkfile "$tmp/posix-bound.json" none bcast '{"is_bound=yes": {"algorithm=MPIDI_POSIX_mpi_bcast_release_gather": {}}}'
run $c2 $posix_cvar="$tmp/posix-bound.json" 4 $bind "$probe"
check "POSIX is_bound=yes, bound: release_gather (fewer than 30 MPIR bcasts on the node communicators)" \
    'passed && [ "$(calls bcast binomial node 2)" -lt 30 ]'
run $c2 $posix_cvar="$tmp/posix-bound.json" 4 "$probe"
check "POSIX is_bound=yes, not bound: MPIR bcast on the node communicators (30 or more)" \
    'passed && [ "$(calls bcast binomial node 2)" -ge 30 ]'

# MPIR_CVAR_COLLECTIVE_FALLBACK=error is about what the user chose.  MINLOC
# on MPI_DOUBLE_INT within one node: the built-in tuning picks topo_pipeline
# allreduce (the op is predefined), which cannot run without room for its
# node segment (MPIR_CVAR_COLL_SHM_LIMIT_PER_NODE=1).  A file that leaves
# allreduce out keeps that the built-in tuning's choice, so MPICH's
# algorithm runs without an error; a file that names topo_pipeline for
# allreduce makes it the user's, and the call fails saying why.
if "$prefix/bin/mpicc" -o "$tmp/minloc" "$top/test/system/tuning_minloc.c" >"$tmp/out" 2>&1; then
    mkfile "$tmp/bcast-only.json" none bcast '{"comm_type=intra": {"algorithm=MPIR_Bcast_intra_binomial": {}},
        "comm_type=inter": {"algorithm=MPIR_Bcast_inter_remote_send_local_bcast": {}}}'
    run MPIR_CVAR_COLLECTIVE_FALLBACK=error MPIR_CVAR_COLL_SHM_LIMIT_PER_NODE=1 \
        $mpir_cvar="$tmp/bcast-only.json" 2 "$tmp/minloc"
    check "FALLBACK=error, a file without allreduce: built-in topo_pipeline cannot run, MPICH's runs, no error" \
        'passed && ! has "cannot run here" && has "allreduce  topo_pipeline"'
    mkfile "$tmp/ar-topo.json" none allreduce '{"comm_type=intra": {"algorithm=MPIR_Allreduce_intra_topo_pipeline": {}},
        "comm_type=inter": {"algorithm=MPIR_Allreduce_inter_reduce_exchange_bcast": {}}}'
    run MPIR_CVAR_COLLECTIVE_FALLBACK=error MPIR_CVAR_COLL_SHM_LIMIT_PER_NODE=1 \
        $mpir_cvar="$tmp/ar-topo.json" 2 "$tmp/minloc"
    check "FALLBACK=error, a file naming topo_pipeline for allreduce: the same call fails in MPIR_Topo_cannot_run" \
        'has "rank 0: error: " && has "rank 1: error: " && has "MPIR_Topo_cannot_run" && ! has " No Errors"'
else
    notok "build the MINLOC program"
fi

[ $fails = 0 ]
