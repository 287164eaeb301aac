#!/bin/sh
# Share of AFL++-mutated inputs that run at least one fault step, when AFL++
# mutates raw bytes with its own mutators (as on OSS-Fuzz: no custom
# mutator). Every execution is counted by the AFL++ driver.
# Usage: bench/afl_raw_share.sh BUILD_DIR [TARGET] [SECONDS]
set -eu
build=${1:?build dir}; target=${2:-pbstore}; secs=${3:-60}
work=$(mktemp -d)
stats=$work/stats
AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1 \
  SIMFUZZ_EXEC_STATS=$stats \
  afl-fuzz -i "$build/corpus/$target" -o "$work/out" -t 10000 -V "$secs" -- "$build/fuzz/${target}_afl" \
  > "$work/afl.log" 2>&1 || true
# last line per pid, summed
awk '{last[$1]=$0} END {for (p in last) {split(last[p], f, " "); e+=f[2]; pr+=f[3]; g+=f[4]; fa+=f[5]; sv+=f[6]}
     printf "AFL++ raw havoc on %s for %s s: %d executions counted; valid protobuf %.1f%%, " \
            "salvaged damaged protobuf %.1f%%, generated from raw bytes %.1f%%; " \
            "ran at least one fault step: %.1f%%\n", \
            "'"$target"'", "'"$secs"'", e, 100*pr/e, 100*sv/e, 100*g/e, 100*fa/e}' "$stats"
grep -E "execs_per_sec" "$work/out/default/fuzzer_stats" || true
rm -rf "$work"
