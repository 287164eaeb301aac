#!/bin/sh
# Two builds' default job (simfuzz fuzz --jobs 1) on one bug, side by side
# in pairs. Each pair runs both builds at once, one per core (taskset), on
# the same seed (--seed k*10^8), with the cores swapped every pair, so that
# the machine's load falls on both arms alike. A single trial's time varies
# several-fold from seed to seed and with the explorer's wall-clock branch
# points; only many pairs tell two builds apart.
#
# Prints a line per pair as it ends ("k  A: 42.1 s  B: -"; "-" is a miss
# within the budget), then per arm: hits, the median time (a miss counts as
# the budget, so a median over misses is a lower bound, marked >=) and the
# pairs it won.
#
# Usage: bench/ab_job.sh BUILD_A BUILD_B TARGET [--pairs N] [--first K]
#                        [--budget S] [--cores C0,C1]
#                        [--search-a LIST] [--search-b LIST]
#   --pairs N   pairs to run (default 10)
#   --first K   the first pair's k (default 1); later runs past the seeds
#               already used add independent pairs
#   --budget S  each trial's --time (default 300)
#   --cores     the two cores (default 0,1)
#   --search-a, --search-b LIST
#               that arm runs with SIMFUZZ_SEARCH=LIST (+name turns a part
#               of the search on, -name off: README, "Build options"): an
#               A/B of a search feature within one build (BUILD_A = BUILD_B)
set -eu
A=$1; B=$2; T=$3; shift 3
N=10; FIRST=1; BUDGET=300; CORES=0,1; SEARCH_A=; SEARCH_B=
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_options ab_job.sh "pairs=N first=FIRST budget=BUDGET cores=CORES search-a=SEARCH_A search-b=SEARCH_B" "$@"
for b in "$A" "$B"; do
  [ -x "$b/bin/simfuzz-$T" ] || { echo "ab_job.sh: no $b/bin/simfuzz-$T" >&2; exit 2; }
done
c0=${CORES%,*}; c1=${CORES#*,}
work=$(bench_workdir)
trap 'rm -rf "$work"' EXIT
# afl-fuzz is not run here, but a confirmation may start tools that bind cores
export AFL_NO_AFFINITY=1

# trial BUILD CORE K ARM: appends "K ARM SECONDS HIT" to $work/res
trial() {
  search=$SEARCH_A
  [ "$4" = A ] || search=$SEARCH_B
  bench_job_trial "$work/res" "$3" "$4" "$work/$4$3" env SIMFUZZ_SEARCH="$search" \
    taskset -c "$2" timeout -s INT $((BUDGET + 60)) "$1/bin/simfuzz-$T" fuzz -o "$work/$4$3/out" \
    --seed "$(($3 * 100000000))" --time "$BUDGET" --jobs 1 --stop-on-first -q
}

k=$FIRST
while [ "$k" -lt $((FIRST + N)) ]; do
  if [ $((k % 2)) = 0 ]; then ca=$c0; cb=$c1; else ca=$c1; cb=$c0; fi
  trial "$A" "$ca" "$k" A &
  trial "$B" "$cb" "$k" B &
  wait
  awk -v k="$k" -v b="$BUDGET" '$1 == k {
      t[$2] = ($4 && $3 <= b + 30) ? sprintf("%.1f s", $3) : "-" }
    END { printf "%s  A: %s  B: %s\n", k, t["A"], t["B"] }' "$work/res"
  k=$((k + 1))
done

echo "ab_job.sh: $T, $N pairs from k=$FIRST, $BUDGET s each; A=$A${SEARCH_A:+ ($SEARCH_A)} B=$B${SEARCH_B:+ ($SEARCH_B)}"
bench_arms "$BUDGET" "A B" "$work/res"
