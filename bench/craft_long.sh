#!/bin/sh
# Long runs of the canonical/raft example (examples/craft): a sweep of
# SEEDS random seeds, then libFuzzer and AFL++ for SECONDS each (side by
# side, one core each). Prints one line per run with executions,
# throughput, failures and corpus size, and keeps every failure in OUT.
# Usage: bench/craft_long.sh CRAFT_BUILD_DIR OUT [SEEDS] [SECONDS] [TARGET]
#   CRAFT_BUILD_DIR: a build of examples/craft (see docs/writing-a-target.md)
set -u
B=$(cd "$1" && pwd); OUT=$2; SEEDS=${3:-100000}; SECS=${4:-1800}; T=${5:-craft_kv}
mkdir -p "$OUT/sweep" "$OUT/lf-corpus" "$OUT/lf-crashes" "$OUT/afl"
now() { date +%s; } # wall clock of the benchmark, not of any run

t0=$(now)
"$B/bin/simfuzz-$T" sweep --seeds "0-$((SEEDS - 1))" -q -o "$OUT/sweep" > "$OUT/sweep.log" 2>&1
rc=$?
t1=$(now)
fails=$(grep -c "FAILED" "$OUT/sweep.log")
echo "sweep $T: $SEEDS seeds in $((t1 - t0)) s ($((SEEDS / (t1 - t0 + 1))) seeds/s), $fails failures, exit $rc"

cp "$B"/corpus/"$T"/*.pb "$OUT/lf-corpus/"
(
  # fork mode keeps going after a failure, as a long campaign must
  "$B/fuzz/${T}_fuzzer" "$OUT/lf-corpus" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 \
    -ignore_ooms=1 -max_total_time="$SECS" -timeout=25 -seed=1 -dict="$B/fuzz/$T.dict" \
    -artifact_prefix="$OUT/lf-crashes/" > "$OUT/libfuzzer.log" 2>&1
  echo $? > "$OUT/libfuzzer.rc"
) &
lf=$!
if command -v afl-fuzz > /dev/null 2>&1 && [ -x "$B/fuzz/${T}_afl" ]; then
  mkdir -p "$OUT/afl-in" && cp "$B"/corpus/"$T"/*.pb "$OUT/afl-in/"
  (
    AFL_SKIP_CPUFREQ=1 AFL_NO_UI=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_AFFINITY=1 \
      AFL_CUSTOM_MUTATOR_LIBRARY="$B/fuzz/libsimfuzz_mutator.so" \
      timeout $((SECS + 60)) afl-fuzz -i "$OUT/afl-in" -o "$OUT/afl" -V "$SECS" -t 10000 \
      -x "$B/fuzz/$T.dict" -- "$B/fuzz/${T}_afl" > "$OUT/afl.log" 2>&1
    echo $? > "$OUT/afl.rc"
  ) &
  afl=$!
  wait "$afl"
  st="$OUT/afl/default/fuzzer_stats"
  execs=$(awk '/^execs_done/ {print $3}' "$st" 2>/dev/null)
  crashes=$(ls "$OUT"/afl/default/crashes/id:* 2>/dev/null | wc -l)
  paths=$(awk '/^corpus_count/ {print $3}' "$st" 2>/dev/null)
  echo "afl++ $T: ${execs:-0} executions in $SECS s ($(( ${execs:-0} / SECS )) execs/s), $crashes crashes, corpus ${paths:-?}"
fi
wait "$lf"
execs=$(grep -o '^#[0-9]*' "$OUT/libfuzzer.log" | tail -1 | tr -d '#')
crashes=$(ls "$OUT"/lf-crashes/crash-* "$OUT"/lf-crashes/leak-* "$OUT"/lf-crashes/timeout-* 2>/dev/null | wc -l)
cov=$(grep -o "cov: [0-9]* ft: [0-9]*" "$OUT/libfuzzer.log" | tail -1)
echo "libfuzzer $T: ${execs:-0} executions in $SECS s ($(( ${execs:-0} / SECS )) execs/s), $crashes crashes, corpus $(ls "$OUT/lf-corpus" | wc -l), $cov"
