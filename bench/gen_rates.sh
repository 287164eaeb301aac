#!/bin/sh
# How often the sweep's seeds fail, per bug of the zoo, for two builds side
# by side: the same seeds 0..SEEDS-1 swept by each build (its generator),
# failures counted. Used when the generator changes, on purpose, which
# scenarios the seeds map to: the rates should stay of the same order.
# Prints failing seeds per 10,000 for each target and build.
# Usage: bench/gen_rates.sh BEFORE_DIR AFTER_DIR [SEEDS] [TARGET...]
#   BEFORE_DIR, AFTER_DIR: build directories (or copies of their bin/)
#   SEEDS: default 20000; TARGET: default every *_bug_* target of AFTER_DIR
set -eu
before=$1; after=$2; seeds=${3:-20000}
shift 2; [ $# -gt 0 ] && shift
targets=${*:-$(cd "$after/bin" && ls simfuzz-*_bug_* | sed 's/^simfuzz-//')}
fails() { # dir target: failing seeds of the sweep
  "$1/bin/simfuzz-$2" --target "$2" sweep --seeds "0-$((seeds - 1))" -q 2>&1 |
    sed -n 's/^sweep: [0-9]* seeds ([0-9.]*), \([0-9]*\) failures.*/\1/p' | tail -1
}
printf '%-40s %10s %10s   (failing seeds per 10,000, seeds 0..%s)\n' target before after \
  "$((seeds - 1))"
for t in $targets; do
  [ -x "$before/bin/simfuzz-$t" ] || continue
  b=$(fails "$before" "$t"); a=$(fails "$after" "$t")
  printf '%-40s %10.1f %10.1f\n' "$t" "$(echo "${b:-0} $seeds" | awk '{print $1 * 10000 / $2}')" \
    "$(echo "${a:-0} $seeds" | awk '{print $1 * 10000 / $2}')"
done
