#!/bin/sh
# Time to the first crash of each planted bug, K independent trials per
# method, side by side:
#   (a) libFuzzer + structure-aware mutator + state feedback   (WITH_DIR)
#   (b) the same without state feedback                        (NOFB_DIR, -DSIMFUZZ_FEEDBACK=OFF)
#   (c) AFL++ as OSS-Fuzz runs it: raw-byte havoc with the dictionary, no custom mutator
#   (d) random-seed simulation: simfuzz sweep, seeds from a different offset per trial
# Prints per method: hits/K, median time to the first crash (a miss counts as
# the budget: the median is then a lower bound, marked >=), execs/s.
# Usage: bench/time_to_bug.sh WITH_DIR NOFB_DIR [--quick|--full] [TARGET...]
#   --quick: 3 trials, 60 s budget (a few minutes); --full: 10 trials, 300 s
#   budget (hours for a whole zoo). Default targets: every *_bug_* fuzzer.
set -eu
A=$1; N=$2; shift 2
K=3; BUDGET=60
case "${1:-}" in
  --quick) shift ;;
  --full) K=10; BUDGET=300; shift ;;
esac
targets="$*"
[ -n "$targets" ] || targets=$(ls "$A"/fuzz/*_bug_*_fuzzer | sed 's|.*/||; s|_fuzzer$||')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1 AFL_BENCH_UNTIL_CRASH=1
now() { date +%s.%N; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
trial() { # method target k -> "seconds hit execs_per_s"
  m=$1; t=$2; k=$3
  d=$work/$m-$t-$k
  mkdir -p "$d/c"
  cp "$A/corpus/$t"/*.pb "$d/c/" 2>/dev/null || true
  s=$(now)
  case $m in
    a|b)
      dir=$A; [ $m = b ] && dir=$N
      "$dir/fuzz/${t}_fuzzer" "$d/c" -seed="$k" -max_total_time="$BUDGET" -timeout=10 \
        -dict="$dir/fuzz/$t.dict" -artifact_prefix="$d/" -print_final_stats=1 > "$d/log" 2>&1 || true
      e=$(now)
      hit=0; ls "$d"/crash-* > /dev/null 2>&1 && hit=1
      ex=$(awk '/stat::number_of_executed_units/ {print $2}' "$d/log" | tail -1) ;;
    c)
      timeout $((BUDGET + 30)) afl-fuzz -i "$A/corpus/$t" -o "$d/o" -x "$A/fuzz/$t.dict" -s "$k" \
        -V "$BUDGET" -- "$A/fuzz/${t}_afl" > "$d/log" 2>&1 || true
      e=$(now)
      hit=0; ls "$d"/o/default/crashes/id:* > /dev/null 2>&1 && hit=1
      ex=$(awk '/execs_done/ {print $3}' "$d/o/default/fuzzer_stats" 2>/dev/null || echo 0) ;;
    d)
      lo=$((k * 100000000))
      timeout "$BUDGET" "$A/bin/simfuzz" --target "$t" sweep --seeds "$lo-$((lo + 99999999))" \
        --stop-on-first -q > "$d/log" 2>&1 || true
      e=$(now)
      hit=0; grep -q "FAILED" "$d/log" && hit=1
      ex=$(grep -c "" "$d/log" > /dev/null; sed -n 's/^seed \([0-9]*\):.*/\1/p' "$d/log" | head -1)
      [ -n "$ex" ] && ex=$((ex - lo + 1)) || ex=0 ;;
  esac
  secs=$(echo "$e - $s" | bc)
  [ "$hit" = 1 ] || secs=$BUDGET
  echo "$secs $hit ${ex:-0}"
}
printf "%-32s %-44s %5s %14s %10s\n" target method hits "median TTB" "execs/s"
for t in $targets; do
  for m in a b c d; do
    : > "$work/res"
    for k in $(seq 1 "$K"); do trial $m "$t" "$k" >> "$work/res"; done
    hits=$(awk '{h+=$2} END {print h}' "$work/res")
    med=$(awk '{print $1}' "$work/res" | median)
    eps=$(awk '{if ($1 > 0) print int($3 / $1)}' "$work/res" | median)
    mark=""; [ "$hits" -lt $(( (K + 1) / 2 )) ] && mark=">="
    case $m in
      a) name="(a) libFuzzer + mutator + state feedback" ;;
      b) name="(b) libFuzzer + mutator, no state feedback" ;;
      c) name="(c) AFL++ raw havoc (as on OSS-Fuzz)" ;;
      d) name="(d) random-seed sweep" ;;
    esac
    printf "%-32s %-44s %2s/%-2s %13ss %10s\n" "$t" "$name" "$hits" "$K" "$mark$med" "$eps"
  done
done
echo "budget ${BUDGET}s per trial, $K trials per method"
