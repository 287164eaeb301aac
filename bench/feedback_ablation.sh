#!/bin/sh
# Does the abstract-state feedback change what the fuzzer explores?
# Runs the libFuzzer fuzzer of TARGET built with feedback (WITH_DIR) and
# without it (-DSIMFUZZ_FEEDBACK=OFF, WITHOUT_DIR) for the same number of
# executions and libFuzzer seeds, then measures each final corpus: distinct
# abstract-state features reached (counted by the CLI, the same way for
# both), corpus size, and libFuzzer's code coverage. Prints medians.
# Usage: bench/feedback_ablation.sh WITH_DIR WITHOUT_DIR [TARGET] [RUNS] [SEEDS]
set -eu
with=$1; without=$2; target=${3:-pbstore}; runs=${4:-60000}; seeds=${5:-"1 2 3"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
for mode in with without; do
  dir=$with; [ $mode = without ] && dir=$without
  for s in $seeds; do
    c=$work/$mode-$s
    mkdir -p "$c"
    cp "$dir/corpus/$target"/*.pb "$c/"
    "$dir/fuzz/${target}_fuzzer" "$c" -seed="$s" -runs="$runs" -timeout=10 -artifact_prefix="$work/" \
      -dict="$dir/fuzz/$target.dict" > "$work/$mode-$s.log" 2>&1 || true
    feats=$("$with/bin/simfuzz-$target" features "$c"/* | awk '{print $3}')
    cov=$(grep -o "cov: [0-9]*" "$work/$mode-$s.log" | tail -1 | awk '{print $2}')
    n=$(ls "$c" | wc -l)
    echo "$feats $n $cov" >> "$work/$mode.txt"
    echo "  $mode feedback, seed $s: features=$feats corpus=$n cov=$cov"
  done
done
for mode in with without; do
  f=$(cut -d' ' -f1 "$work/$mode.txt" | median)
  n=$(cut -d' ' -f2 "$work/$mode.txt" | median)
  c=$(cut -d' ' -f3 "$work/$mode.txt" | median)
  echo "$mode feedback: median abstract-state features $f, corpus $n inputs, code coverage $c edges ($runs runs, seeds: $seeds)"
done
