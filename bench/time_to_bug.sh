#!/bin/sh
# Time to the first crash of each planted bug, K independent trials per
# method, side by side:
#   (a) libFuzzer + structure-aware mutator + state feedback   (WITH_DIR)
#   (b) the same without state feedback                        (NOFB_DIR, -DSIMFUZZ_FEEDBACK=OFF)
#   (c) AFL++ as OSS-Fuzz runs it: raw-byte havoc with the dictionary, no custom mutator
#   (d) random-seed simulation: simfuzz sweep, seeds from a different offset per trial
#   (e) simfuzz explore: the sweep's scenarios as roots, branches at rare
#       states (same seed offsets as (d))
#   (f) simfuzz fuzz, the default job, on one core (--jobs 1: explore, then
#       confirmation of each crash file by isolated replays)
#   (g) AFL++ with simfuzz's custom mutator and the dictionary
#   (h) explore as (e) without revisits of kept rare states (--keep 0): what
#       the revisits add, side by side
#   (i) simfuzz fuzz, the default job, on two cores (--jobs 2): it takes
#       both cores, so run its trials with -j 1 and nothing beside them
# AFL++ runs set their execution timeout explicitly (-t): its default of
# 20 ms is too short for long scenarios.
# Every trial but (i)'s runs on one core; J trials run at once (default 2: one per
# core of our machines). Prints per target and method: hits/K, median time
# to the first crash (a miss counts as the budget, so a median over misses is
# a lower bound, marked >=), median execs/s, every trial's time and runs
# (in the order the trials ended); then the ratio (d)/(a).
#
# Usage: bench/time_to_bug.sh WITH_DIR NOFB_DIR [--quick|--full|--trials K --budget S]
#                             [-j J] [--methods abcdefgh] [--first-trial F] [TARGET...]
#   --quick  1 trial, 20 s budget: a few minutes for the whole zoo (a smoke run)
#   --full   10 trials, 300 s budget: the figures in docs/BENCHMARKS.md are
#            from this kind of run (hours for the whole zoo)
#   --first-trial F  number the trials F, F+1, ... (default 1): each trial's
#            seeds depend on its number, so a second run with F past the
#            first run's trials adds independent trials
# Default targets: every *_bug_* fuzzer in WITH_DIR.
# LIBFUZZER_FLAGS and AFL_FLAGS (environment, split at spaces) add options to
# the libFuzzer and AFL++ runs, to compare schedules: -entropic=0 turns off
# libFuzzer's Entropic; -p rare (or explore, exploit, coe...) picks AFL++'s
# power schedule (default fast).
set -eu
A=$1; N=$2; shift 2
K=3; BUDGET=60; J=2; METHODS=abcd; FIRST=1
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) K=1; BUDGET=20; shift ;;
    --full) K=10; BUDGET=300; shift ;;
    --trials) K=$2; shift 2 ;;
    --budget) BUDGET=$2; shift 2 ;;
    -j) J=$2; shift 2 ;;
    --methods) METHODS=$2; shift 2 ;;
    --first-trial) FIRST=$2; shift 2 ;;
    *) break ;;
  esac
done
targets="$*"
[ -n "$targets" ] || targets=$(ls "$A"/fuzz/*_bug_*_fuzzer | sed 's|.*/||; s|_fuzzer$||')
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
work=$(bench_workdir)
trap 'rm -rf "$work"' EXIT
export AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1 AFL_BENCH_UNTIL_CRASH=1

# One trial: method target k -> appends "method target seconds hit execs_per_s" to $work/res
cat > "$work/trial.sh" << 'EOF'
set -u
m=$1; t=$2; k=$3 # and A N BUDGET work from the environment
now() { date +%s.%N; }
d=$work/$m-$t-$k
mkdir -p "$d/c"
cp "$A/corpus/$t"/*.pb "$d/c/" 2> /dev/null || true
s=$(now)
ex=0
case $m in
  a|b)
    dir=$A; [ "$m" = b ] && dir=$N
    "$dir/fuzz/${t}_fuzzer" "$d/c" -seed="$k" -max_total_time="$BUDGET" -timeout=10 \
      -dict="$dir/fuzz/$t.dict" -artifact_prefix="$d/" -print_final_stats=1 ${LIBFUZZER_FLAGS:-} \
      > "$d/log" 2>&1 || true
    e=$(now)
    hit=0; ls "$d"/crash-* > /dev/null 2>&1 && hit=1
    ex=$(awk '/stat::number_of_executed_units/ {print $2}' "$d/log" | tail -1) ;;
  c|g)
    lib=; [ "$m" = g ] && lib=$A/fuzz/libsimfuzz_mutator.so
    AFL_CUSTOM_MUTATOR_LIBRARY=$lib timeout $((BUDGET + 30)) afl-fuzz -i "$A/corpus/$t" -o "$d/o" \
      -x "$A/fuzz/$t.dict" -s "$k" -t 10000 -V "$BUDGET" ${AFL_FLAGS:-} -- "$A/fuzz/${t}_afl" \
      > "$d/log" 2>&1 || true
    e=$(now)
    hit=0; ls "$d"/o/default/crashes/id:* > /dev/null 2>&1 && hit=1
    ex=$(awk '/execs_done/ {print $3}' "$d/o/default/fuzzer_stats" 2> /dev/null || echo 0) ;;
  d)
    lo=$((k * 100000000))
    timeout "$BUDGET" "$A/bin/simfuzz" --target "$t" sweep --seeds "$lo-$((lo + 99999999))" \
      --stop-on-first -q > "$d/log" 2>&1 || true
    e=$(now)
    hit=0; grep -q "FAILED" "$d/log" && hit=1
    seed=$(sed -n 's/^seed \([0-9]*\):.*/\1/p' "$d/log" | head -1)
    if [ -n "$seed" ]; then ex=$((seed - lo + 1)); else ex=-1; fi ;; # a miss: count unknown
  e | h)
    lo=$((k * 100000000))
    keep=""; [ "$m" = h ] && keep="--keep 0"
    # shellcheck disable=SC2086 # $keep: no option or two words
    timeout $((BUDGET + 30)) "$A/bin/simfuzz" --target "$t" explore -o "$d/x" --seed "$lo" \
      --time "$BUDGET" --stop-on-first $keep -q > "$d/log" 2>&1 || true
    e=$(now)
    hit=0; grep -q "FAILED" "$d/log" && hit=1
    ex=$(sed -n 's/^explore: \([0-9]*\) roots, \([0-9]*\) branches.*/\1 \2/p' "$d/log" |
      awk '{print $1 + $2}') ;;
  f | i)
    lo=$((k * 100000000))
    jobs=1; [ "$m" = i ] && jobs=2
    timeout $((BUDGET + 60)) "$A/bin/simfuzz" --target "$t" fuzz -o "$d/x" --seed "$lo" \
      --time "$BUDGET" --jobs "$jobs" --stop-on-first > "$d/log" 2>&1 || true
    e=$(now)
    hit=0; grep -q "^fuzz: confirmed" "$d/log" && hit=1
    ex=$(sed -n 's/^explore: \([0-9]*\) roots, \([0-9]*\) branches.*/\1 \2/p' "$d/log" |
      awk '{print $1 + $2}') ;;
esac
secs=$(echo "$e - $s" | bc)
[ "$hit" = 1 ] || secs=$BUDGET
echo "$m $t $secs $hit ${ex:-0}" >> "$work/res"
rm -rf "$d"
EOF

: > "$work/res"
: > "$work/jobs"
for t in $targets; do
  for m in $(echo "$METHODS" | sed 's/./& /g'); do
    for k in $(seq "$FIRST" $((FIRST + K - 1))); do echo "$m $t $k" >> "$work/jobs"; done
  done
done
echo "$(wc -l < "$work/jobs") trials, $J at a time, budget ${BUDGET}s each" >&2
export A N BUDGET work
xargs -P "$J" -L 1 sh "$work/trial.sh" < "$work/jobs"

median() { sort -n | awk '{a[NR]=$1} END {if (NR) printf "%.2f\n", (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
printf "%-32s %-44s %5s %12s %10s\n" target method hits "median TTB" "execs/s"
for t in $targets; do
  ma=""; md=""; dm=""; me=""; mf=""; mi=""
  for m in $(echo "$METHODS" | sed 's/./& /g'); do
    awk -v m="$m" -v t="$t" '$1 == m && $2 == t' "$work/res" > "$work/r"
    hits=$(awk '{h+=$4} END {print h+0}' "$work/r")
    med=$(awk '{print $3}' "$work/r" | median)
    eps=$(awk '{if ($3 > 0 && $5 > 0) print int($5 / $3)}' "$work/r" | median | sed 's/\.00$//')
    mark=""; [ "$hits" -lt $(( (K + 1) / 2 )) ] && mark=">="
    [ "$m" = a ] && ma=$med
    [ "$m" = d ] && { md=$med; dm=$mark; }
    [ "$m" = e ] && me=$med
    [ "$m" = f ] && mf=$med
    [ "$m" = i ] && mi=$med
    case $m in
      a) name="(a) libFuzzer + mutator + state feedback" ;;
      b) name="(b) libFuzzer + mutator, no state feedback" ;;
      c) name="(c) AFL++ raw havoc (as on OSS-Fuzz)" ;;
      d) name="(d) random-seed sweep" ;;
      e) name="(e) simfuzz explore (branches at rare states)" ;;
      f) name="(f) simfuzz fuzz (default job, 1 core)" ;;
      g) name="(g) AFL++ + simfuzz custom mutator" ;;
      h) name="(h) explore without revisits (--keep 0)" ;;
      i) name="(i) simfuzz fuzz (default job, 2 cores)" ;;
    esac
    printf "%-32s %-44s %2s/%-2s %11ss %10s\n" "$t" "$name" "$hits" "$K" "$mark$med" "${eps:--}"
    # every trial, in trial order: seconds (a miss: the budget, marked -) and runs
    printf "%-32s %-44s %s\n" "" "  trials (s, runs)" \
      "$(awk '{printf "%s%.2f%s %s", (NR > 1 ? "; " : ""), $3, ($4 ? "" : "-"), $5}' "$work/r")"
  done
  if [ -n "$ma" ] && [ -n "$md" ]; then
    printf "%-32s %-44s %s%s\n" "$t" "ratio (d)/(a)" "$dm" "$(awk -v d="$md" -v a="$ma" 'BEGIN {printf "%.1f", (a > 0 ? d / a : 0)}')"
  fi
  if [ -n "$me" ] && [ -n "$md" ]; then
    printf "%-32s %-44s %s%s\n" "$t" "ratio (d)/(e)" "$dm" "$(awk -v d="$md" -v e="$me" 'BEGIN {printf "%.1f", (e > 0 ? d / e : 0)}')"
  fi
  for r in "f:$mf" "i:$mi"; do # the default job's methods against the sweep
    rm_=${r%%:*}; rv=${r#*:}
    if [ -n "$rv" ] && [ -n "$md" ]; then
      printf "%-32s %-44s %s%s\n" "$t" "ratio (d)/($rm_)" "$dm" "$(awk -v d="$md" -v f="$rv" 'BEGIN {printf "%.1f", (f > 0 ? d / f : 0)}')"
    fi
  done
done
echo "budget ${BUDGET}s per trial, $K trials per method, $J trials at a time"
