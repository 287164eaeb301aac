#!/bin/sh
# The harness self-test at scale: harness_selftest_fuzzer (a target that
# cannot fail: every crash, sanitizer report, leak or timeout is a simfuzz
# bug) for RUNS executions in all, split over J independent libFuzzer
# workers (-jobs) that share one corpus directory. Prints the executions
# done, the time, the corpus reached and any failure; exits 1 on a failure.
# Usage: bench/selftest_long.sh BUILD_DIR [RUNS] [J]   (default 10000000, 2)
#
# -jobs rather than -fork: fork mode restarts its children every few
# seconds early on and replays the corpus each time, which halved the
# throughput here.
set -eu
B=$(cd "$1" && pwd); RUNS=${2:-10000000}; J=${3:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/c"
cp "$B"/corpus/harness_selftest/*.pb "$work/c/"
# ASan's quarantine at 64 MiB instead of 256 (use-after-free of the last 64
# MiB freed is still caught; one run frees a few MiB at most): recycling
# 256 MiB of fresh pages made each run about 1.7x slower here
export ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=64}
start=$(date +%s)
(cd "$work" && "$B/fuzz/harness_selftest_fuzzer" c -jobs="$J" -workers="$J" \
  -runs=$(((RUNS + J - 1) / J)) -timeout=25 -reload=60 \
  -dict="$B/fuzz/harness_selftest.dict" -artifact_prefix="$work/" > "$work/log" 2>&1) || true
end=$(date +%s)
execs=0
for l in "$work"/fuzz-*.log; do
  n=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$l" | tail -1)
  [ -n "$n" ] || n=$(grep -o "^#[0-9]*" "$l" | tail -1 | tr -d '#') # a worker that stopped
  execs=$((execs + ${n:-0}))
done
crashes=$(find "$work" -maxdepth 1 \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
peak=$(grep -ho "rss: [0-9]*Mb" "$work"/fuzz-*.log | tr -dc '0-9\n' | sort -n | tail -1)
echo "selftest: $execs executions in $((end - start)) s with $J workers (ASAN_OPTIONS=$ASAN_OPTIONS) ($((execs / (end - start + 1))) exec/s); corpus $(ls "$work/c" | wc -l) inputs; peak RSS ${peak:-?} MiB; $crashes failures"
[ "$crashes" = 0 ] || {
  ls "$work"
  grep -h -m3 -A12 "ERROR\|FAILURE\|INVARIANT" "$work"/fuzz-*.log
  mkdir -p selftest-failures && cp "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* selftest-failures/ 2>/dev/null
  echo "failing inputs copied to ./selftest-failures/"
  exit 1
}
