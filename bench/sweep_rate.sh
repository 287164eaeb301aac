#!/bin/sh
# Runs per second of a random-seed sweep of each example, for two builds
# side by side: the same seeds, runs of the two builds alternating, on one
# core. Prints the median of REPS runs per build and their ratio.
# Usage: bench/sweep_rate.sh BEFORE_DIR AFTER_DIR [SEEDS] [REPS] [TARGET...]
#   BEFORE_DIR, AFTER_DIR: build directories (or copies of their bin/)
#   SEEDS: seeds per sweep (default 4000); REPS: sweeps per build (default 5)
#   TARGET: default raft_kv twopc leaselock pbstore, and craft_kv when
#   AFTER_DIR/bin has it (the canonical/raft example, built outside)
set -eu
before=$1; after=$2; seeds=${3:-4000}; reps=${4:-5}
shift 2; [ $# -gt 0 ] && shift; [ $# -gt 0 ] && shift
targets=${*:-raft_kv twopc leaselock pbstore}
[ $# -eq 0 ] && [ -x "$after/bin/simfuzz-craft_kv" ] && [ -x "$before/bin/simfuzz-craft_kv" ] &&
  targets="$targets craft_kv"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
rate() { # dir target: runs/s of one sweep
  s=$(date +%s.%N)
  "$1/bin/simfuzz-$2" --target "$2" sweep --seeds "0-$((seeds - 1))" -q > /dev/null 2>&1 || true
  e=$(date +%s.%N)
  echo "$s $e" | awk -v n="$seeds" '{printf "%d\n", n / ($2 - $1)}'
}
printf '%-12s %14s %14s %8s   (%s seeds, median of %s sweeps each)\n' target "before runs/s" \
  "after runs/s" ratio "$seeds" "$reps"
for t in $targets; do
  : > "$work/b"; : > "$work/a"
  for _ in $(seq "$reps"); do
    rate "$before" "$t" >> "$work/b"
    rate "$after" "$t" >> "$work/a"
  done
  b=$(median < "$work/b"); a=$(median < "$work/a")
  printf '%-12s %14s %14s %7.2fx\n' "$t" "$b" "$a" "$(echo "$a $b" | awk '{print $1 / $2}')"
done
