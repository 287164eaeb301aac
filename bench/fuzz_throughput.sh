#!/bin/sh
# Executions per second of TARGET's fuzzers starting from its seed corpus,
# on one core: libFuzzer with ASan+UBSan (ASAN_DIR), libFuzzer without
# sanitizers (PLAIN_DIR, -DSIMFUZZ_FUZZ_SANITIZERS=), AFL++ persistent mode,
# and the bare runner (the random-seed sweep: no engine, no sanitizers).
# Medians of REPS runs.
# Usage: bench/fuzz_throughput.sh ASAN_DIR PLAIN_DIR [TARGET] [RUNS] [REPS]
set -eu
asan=$1; plain=$2; t=${3:-pbstore}; runs=${4:-50000}; reps=${5:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
lf() { # dir seed
  rm -rf "$work/c" && mkdir "$work/c" && cp "$1/corpus/$t"/*.pb "$work/c/"
  s=$(date +%s.%N)
  "$1/fuzz/${t}_fuzzer" "$work/c" -seed="$2" -runs="$runs" -timeout=10 -artifact_prefix="$work/" > /dev/null 2>&1 || true
  e=$(date +%s.%N)
  echo "$s $e" | awk -v n="$runs" '{printf "%d\n", n / ($2 - $1)}' 
}
for r in $(seq "$reps"); do lf "$asan" "$r"; done | median > "$work/a"
for r in $(seq "$reps"); do lf "$plain" "$r"; done | median > "$work/p"
for r in $(seq "$reps"); do
  AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1 \
    afl-fuzz -i "$plain/corpus/$t" -o "$work/afl$r" -t 10000 -V 20 -- "$plain/fuzz/${t}_afl" >/dev/null 2>&1 || true
  awk '/execs_per_sec/ {print int($3)}' "$work/afl$r/default/fuzzer_stats"
done | median > "$work/f"
for r in $(seq "$reps"); do
  s=$(date +%s.%N)
  "$plain/bin/simfuzz-$t" sweep --seeds 0-19999 > /dev/null || true
  e=$(date +%s.%N)
  echo "$s $e" | awk '{printf "%d\n", 20000 / ($2 - $1)}'
done | median > "$work/s"
echo "target $t, medians of $reps runs (execs/s on one core):"
echo "  libFuzzer + ASan + UBSan:  $(cat "$work/a")   ($runs runs from the seeds, wall time incl. startup)"
echo "  libFuzzer, no sanitizers:  $(cat "$work/p")"
echo "  AFL++ persistent mode:     $(cat "$work/f")   (20 s, AFL++'s execs_per_sec)"
echo "  runner alone (sweep):      $(cat "$work/s")   (20000 random scenarios)"
