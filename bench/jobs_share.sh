#!/bin/sh
# What the second core of `simfuzz fuzz --jobs 2` is best spent on
# (issue 36, item 5): the default job on one bug, each trial on both cores,
# with its second job given to
#   asan    the target's libFuzzer binary as the build makes it (ASan+UBSan:
#           the default, BUILD/fuzz/<t>_fuzzer)
#   plain   an unsanitized libFuzzer binary of the same target (--engine;
#           from a build configured with -DSIMFUZZ_FUZZ_SANITIZERS=)
#   explore a second explorer worker (--no-engine: the workers share the
#           campaign's counts, each keeps its own rare states)
#   one     nothing: --jobs 1 on one core, the baseline
# Trial k runs every method in turn (the order rotates with k) on the same
# seed (--seed k*10^8), --stop-on-first, so the machine's load falls on all
# of them alike. Prints a line per trial, then per method: hits, the median
# time to the first confirmed failure (a miss counts as the budget, marked
# >=) and the trials it was fastest in.
#
# Usage: bench/jobs_share.sh BUILD PLAIN_FUZZ_DIR TARGET [--trials N]
#                            [--first K] [--budget S] [--methods LIST]
#   PLAIN_FUZZ_DIR  the fuzz/ directory of the unsanitized build ("-": no
#                   plain method)
#   --methods LIST  comma-separated, default asan,plain,explore,one
set -eu
B=$1; PLAIN=$2; T=$3; shift 3
N=5; FIRST=1; BUDGET=120; METHODS=asan,plain,explore,one
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_options jobs_share.sh "trials=N first=FIRST budget=BUDGET methods=METHODS" "$@"
[ -x "$B/bin/simfuzz-$T" ] || { echo "jobs_share.sh: no $B/bin/simfuzz-$T" >&2; exit 2; }
[ -x "$B/fuzz/${T}_fuzzer" ] || { echo "jobs_share.sh: no $B/fuzz/${T}_fuzzer" >&2; exit 2; }
work=$(bench_workdir)
trap 'rm -rf "$work"' EXIT
methods=$(echo "$METHODS" | tr ',' ' ')

# trial METHOD K: appends "K METHOD SECONDS HIT" to $work/res
trial() {
  case $1 in
    asan) set -- "$1" "$2" --jobs 2 --engine "$B/fuzz/${T}_fuzzer" ;;
    plain) set -- "$1" "$2" --jobs 2 --engine "$PLAIN/${T}_fuzzer" ;;
    explore) set -- "$1" "$2" --jobs 2 --no-engine ;;
    one) set -- "$1" "$2" --jobs 1 --no-engine ;;
    *) echo "jobs_share.sh: unknown method $1" >&2; exit 2 ;;
  esac
  m=$1; k=$2; shift 2
  bench_job_trial "$work/res" "$k" "$m" "$work/$m$k" timeout -s INT $((BUDGET + 60)) \
    "$B/bin/simfuzz-$T" fuzz -o "$work/$m$k/out" --seed "$((k * 100000000))" --time "$BUDGET" \
    --stop-on-first -q "$@"
}

k=$FIRST
while [ "$k" -lt $((FIRST + N)) ]; do
  # rotate the order: each method runs first, second, ... in turn
  set -- $methods
  r=$((k % $#))
  while [ "$r" -gt 0 ]; do m=$1; shift; set -- "$@" "$m"; r=$((r - 1)); done
  for m in "$@"; do trial "$m" "$k"; done
  awk -v k="$k" -v b="$BUDGET" '$1 == k { printf "%s  %s: %s", (n++ ? "" : k), $2,
      ($4 && $3 <= b + 30) ? sprintf("%.1f s  ", $3) : "-  " } END { print "" }' "$work/res"
  k=$((k + 1))
done

echo "jobs_share.sh: $T, $N trials from k=$FIRST, $BUDGET s each; build $B"
bench_arms "$BUDGET" "$methods" "$work/res"
