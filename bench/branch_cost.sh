#!/bin/sh
# What a branch of the explorer costs, re-run from scratch (the default)
# or forked (SIMFUZZ_SEARCH=-rerun), against a root, per target, on one
# core. For the same N roots (--share runs: the branches' share counted in
# runs, so that both modes' branches are of the same kinds; --keep 0: no
# revisits), alternating REPS times:
#   roots  explore --energy 0: the roots alone
#   fork   explore with its branches forked (SIMFUZZ_SEARCH=-rerun)
#   rerun  explore with its branches re-run from scratch in the worker
#          (the default)
# Prints medians: the roots' cost per root, and each mode's branches and
# cost per branch ((its time - the roots' time) / its branches), and the
# ratio of the two costs per branch.
# Usage: bench/branch_cost.sh BUILD_DIR [ROOTS] [REPS] [CORE] [TARGET...]
#   BUILD_DIR: a build directory with bin/simfuzz-TARGET (a Release or
#   RelWithDebInfo build); ROOTS default 10000; REPS default 3; CORE the
#   core to pin to (default 1); TARGET default raft_kv leaselock twopc
set -eu
build=$1; roots=${2:-10000}; reps=${3:-3}; core=${4:-1}
shift; for _ in 1 2 3; do [ $# -gt 0 ] && shift; done
targets=${*:-raft_kv leaselock twopc}
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
work=$(bench_workdir)
trap 'rm -rf "$work"' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
run() { # MODE TARGET: "SECONDS BRANCHES" of one campaign
  case $1 in
    roots) search=; more="--energy 0" ;;
    fork) search=-rerun; more= ;;
    rerun) search=+rerun; more= ;;
  esac
  rm -rf "$work/out"
  s=$(date +%s.%N)
  # shellcheck disable=SC2086 # more is a list of options
  SIMFUZZ_SEARCH=$search taskset -c "$core" "$build/bin/simfuzz-$2" explore -o "$work/out" \
    --roots "$roots" --seed 1 --keep 0 --share runs -q $more > "$work/log" 2>&1 || true
  e=$(date +%s.%N)
  b=$(sed -n 's/^explore: [0-9]* roots, \([0-9]*\) branches.*/\1/p' "$work/log")
  echo "$s $e ${b:-0}" | awk '{printf "%.3f %d\n", $2 - $1, $3}'
}
printf '%-10s %12s %10s %12s %10s %12s %12s\n' target "root ms" "forked" "fork ms/br" \
  "re-run" "rerun ms/br" "fork/rerun"
for t in $targets; do
  : > "$work/roots"; : > "$work/fork"; : > "$work/rerun"
  i=0
  while [ $i -lt "$reps" ]; do
    for m in roots fork rerun; do run $m "$t" >> "$work/$m"; done
    i=$((i + 1))
  done
  r=$(cut -d' ' -f1 "$work/roots" | median)
  ft=$(cut -d' ' -f1 "$work/fork" | median); fb=$(cut -d' ' -f2 "$work/fork" | median)
  rt=$(cut -d' ' -f1 "$work/rerun" | median); rb=$(cut -d' ' -f2 "$work/rerun" | median)
  echo "$t $r $ft $fb $rt $rb $roots" | awk '{
    rc = $2 * 1000 / $7
    fc = $4 ? ($3 - $2) * 1000 / $4 : 0
    cc = $6 ? ($5 - $2) * 1000 / $6 : 0
    printf "%-10s %12.3f %10d %12.3f %10d %12.3f %12.1f\n", $1, rc, $4, fc, $6, cc, (cc > 0 ? fc / cc : 0)
  }'
done
