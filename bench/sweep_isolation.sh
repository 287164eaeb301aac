#!/bin/sh
# The cost of crash isolation in the sweep: the same seeds swept by an older
# build (every seed in the tool's own process) and by this one (seeds in a
# worker process that a crash cannot take down), alternating, ROUNDS times
# each. Prints the median wall time of each, their ratio, and checks that
# both report the same failing seeds.
# Usage: bench/sweep_isolation.sh OLD_BIN_DIR NEW_BIN_DIR [SEEDS] [ROUNDS] [TARGETS]
set -u
OLD=$1; NEW=$2; SEEDS=${3:-20000}; ROUNDS=${4:-5}; TARGETS=${5:-"raft_kv pbstore twopc leaselock"}
ms() { echo $(($(date +%s%N) / 1000000)); } # the benchmark's clock, not a run's
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for t in $TARGETS; do
  : > "$work/old"; : > "$work/new"
  for r in $(seq "$ROUNDS"); do
    for side in old new; do
      dir=$OLD; [ $side = new ] && dir=$NEW
      a=$(ms)
      "$dir/simfuzz-$t" sweep --seeds "0-$((SEEDS - 1))" -q > "$work/$side.out.$r" 2>&1
      b=$(ms)
      echo $((b - a)) >> "$work/$side"
    done
  done
  o=$(median < "$work/old"); n=$(median < "$work/new")
  grep "FAILED" "$work/old.out.1" | sed 's/:.*//' > "$work/of"
  grep "FAILED" "$work/new.out.1" | sed 's/:.*//' > "$work/nf"
  same=$(cmp -s "$work/of" "$work/nf" && echo "same $(wc -l < "$work/nf") failing seeds" || echo "DIFFERENT failing seeds")
  echo "$t: $SEEDS seeds, median of $ROUNDS: in-process $o ms ($((SEEDS * 1000 / o)) seeds/s), isolated $n ms ($((SEEDS * 1000 / n)) seeds/s), ratio $(awk "BEGIN { printf \"%.3f\", $n / $o }"); $same"
done
