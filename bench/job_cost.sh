#!/bin/sh
# What an execution of the default job costs against a sweep run of the
# same scenario (issue 15, part 1), per example, on one core. For the same
# root seeds, alternating:
#   sweep   simfuzz sweep --seeds 0-(N-1)
#   roots   explore over the same N roots with features and annotations,
#           no branch (--warmup past N): the job's own cost per run
#   +corpus the same, saving runs with new features to a corpus, as the
#           job does (a file each, most of them in the first seconds)
#   job     explore over the same N roots with its branches and a corpus
#           (the default job's explorer, as `simfuzz fuzz --no-engine`
#           runs it)
# Prints medians of REPS runs: runs/s of each, the cost per run of the
# roots and of the roots with a corpus against the sweep's, and the job's
# wall time for the N roots against the sweep's (its branches may take
# about a third of the workers' time).
# Usage: bench/job_cost.sh BUILD_DIR [SEEDS] [REPS] [TARGET...]
#   BUILD_DIR: a build directory (or a copy of its bin/); a Release build
#   SEEDS: roots per run (default 10000); REPS: runs of each (default 3)
#   TARGET: default raft_kv twopc leaselock pbstore
set -eu
build=$1; seeds=${2:-10000}; reps=${3:-3}
shift; [ $# -gt 0 ] && shift; [ $# -gt 0 ] && shift
targets=${*:-raft_kv twopc leaselock pbstore}
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
work=$(bench_workdir)
trap 'rm -rf "$work"' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
secs() { # command...: its wall time in seconds
  s=$(date +%s.%N)
  "$@" > "$work/log" 2>&1 || true
  e=$(date +%s.%N)
  echo "$s $e" | awk '{printf "%.3f\n", $2 - $1}'
}
printf '%-10s %10s %10s %10s %10s %12s %13s %12s\n' target "sweep r/s" "roots r/s" \
  "+corpus" "job r/s" "roots/sweep" "+corpus/sweep" "job t/sweep"
for t in $targets; do
  b="$build/bin/simfuzz-$t"
  : > "$work/s"; : > "$work/r"; : > "$work/rc"; : > "$work/j"; : > "$work/jr"
  for _ in $(seq "$reps"); do
    secs "$b" --target "$t" sweep --seeds "0-$((seeds - 1))" -q >> "$work/s"
    rm -rf "$work/o"
    secs "$b" --target "$t" explore -o "$work/o/x" --roots "$seeds" --warmup "$((seeds + 1))" \
      -q >> "$work/r"
    rm -rf "$work/o"
    secs "$b" --target "$t" explore -o "$work/o/x" --corpus "$work/o/c" --roots "$seeds" \
      --warmup "$((seeds + 1))" -q >> "$work/rc"
    rm -rf "$work/o"
    secs "$b" --target "$t" explore -o "$work/o/x" --corpus "$work/o/c" --roots "$seeds" -q >> "$work/j"
    sed -n 's/^explore: \([0-9]*\) roots, \([0-9]*\) branches.*/\1 \2/p' "$work/log" |
      awk '{print $1 + $2}' >> "$work/jr"
  done
  s=$(median < "$work/s"); r=$(median < "$work/r"); rc=$(median < "$work/rc")
  j=$(median < "$work/j"); jr=$(median < "$work/jr")
  echo "$t $seeds $s $r $rc $j $jr" | awk '{printf "%-10s %10d %10d %10d %10d %11.2fx %12.2fx %11.2fx\n",
    $1, $2 / $3, $2 / $4, $2 / $5, $7 / $6, $4 / $3, $5 / $3, $6 / $3}'
done
