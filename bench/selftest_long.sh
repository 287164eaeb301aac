#!/bin/sh
# The harness self-test at scale: harness_selftest_fuzzer (a target that
# cannot fail: every crash, sanitizer report, leak or timeout is a simfuzz
# bug) for RUNS executions with J libFuzzer fork workers. Prints the
# executions done, the time, the corpus reached and any failure.
# Usage: bench/selftest_long.sh BUILD_DIR [RUNS] [J]   (default 10000000, 2)
set -eu
B=$1; RUNS=${2:-10000000}; J=${3:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/c"
cp "$B"/corpus/harness_selftest/*.pb "$work/c/"
start=$(date +%s)
"$B/fuzz/harness_selftest_fuzzer" "$work/c" -fork="$J" -runs="$RUNS" -timeout=25 \
  -dict="$B/fuzz/harness_selftest.dict" -artifact_prefix="$work/" > "$work/log" 2>&1 || true
end=$(date +%s)
execs=$(grep -o "#[0-9]*" "$work/log" | tail -1 | tr -d '#')
crashes=$(ls "$work" | grep -c "^crash-\|^leak-\|^timeout-\|^oom-" || true)
echo "selftest: ${execs:-0} executions in $((end - start)) s with $J workers; corpus $(ls "$work/c" | wc -l) inputs; $crashes failures"
[ "$crashes" = 0 ] || { ls "$work"; grep -m3 -A8 "ERROR\|FAILURE" "$work/log"; exit 1; }
