#!/bin/sh
# Time to a bug of examples/craft's bug-history set (issue 36), by method,
# side by side: each pair runs two methods at once, one per core (taskset),
# the cores swapped every pair. Methods:
#   job      the default job (simfuzz fuzz --jobs 1 --no-engine), with a
#            crash file for every failure (--all-crashes), as the sweep saves
#            every failing seed: a tree's background failures break the bug's
#            own invariant at its own site in some trees (follower_commit),
#            and the job's few files of a kind would measure which failures
#            it files, not its search
#   sweep    the random sweep
#   explore  the explorer alone (simfuzz explore --all-crashes), no
#            confirmation
#   libfuzzer  the target's libFuzzer binary with its structure-aware
#            mutator and state feedback, in fork mode with -ignore_crashes=1
#            (it goes on past a background failure and keeps every crash file)
#   afl      AFL++ with simfuzz's custom mutator and the dictionary (it keeps
#            a crash with a new path, its own rule)
#   job2c    the default job on both cores (--jobs 2 --all-crashes): it
#            takes both, so it runs alone (--methods job2c)
#   job2     the default job again, with SIMFUZZ_SEARCH=$SEARCH2 (--search2)
#            and BUILD2's binary (--build2): the A/B of a part of the search,
#            or of a target change, side by side with job
# A run ends at its first failure only inside one scenario; the campaign goes
# on, and every tree of the set has background failures (the HEAD probe
# finding in about 0.4 % of seeds), so the time to the bug is the time of the
# first saved failure that the variant shows and its control,
# craft_NAME_fixed, does not show the same way, and that is not one of the
# newest library's own bugs (examples/craft/bugs/judge.sh, the rule that
# bugs/hunt.sh uses too), measured by the file's modification time from the trial's start
# (0.1 s). The files are judged while the trial runs (every 5 s, on the
# trial's own core: a method pays for judging its own files), and the trial
# ends at its first bug file: an easy bug costs seconds, not the budget.
#
# Prints a line per pair ("k  job: 42.1 s  sweep: -"; "-" is a miss within
# the budget), then per method: hits, the median (a miss counts as the
# budget: a median over misses is a lower bound, marked >=), and the pairs
# it won. With --results FILE, appends a line per trial to FILE: "NAME
# METHOD K SECONDS|- BUDGET COMMIT" (this script's checkout), the rows
# from which docs/BENCHMARKS.md's table is made over several sessions.
#
# Usage: bench/craft_bugs_ttb.sh BUILD NAME [--pairs N] [--first K]
#                                [--budget S] [--cores C0,C1] [--keep DIR]
#                                [--methods M1[,M2]] (default job,sweep)
#                                [--search2 LIST]    (job2's SIMFUZZ_SEARCH)
#                                [--build2 BUILD2]   (job2's build, else BUILD)
#                                [--results FILE]
#   --keep DIR: copy each trial's first bug file into DIR, as
#          NAME-METHOD-K-BUDGETs.pb (a trigger for a regression scenario,
#          and what lets anyone judge the find again), and for the job its
#          line of origins.txt as NAME-METHOD-K-BUDGETs.origins (a root's
#          find or a branch's, and where it forked); with --results FILE
#          and no --keep, DIR is FILE's name without its extension plus
#          .finds, beside it: every find of a results file is kept
#   BUILD: a build of examples/craft with -DCRAFT_RAFT_TREES from
#          bugs/trees.sh with ALL=1 (every control built); libfuzzer and afl
#          need -DCRAFT_TREE_FUZZERS=ON (the default) and, for afl, AFL++
set -eu
B=$1; NAME=$2; shift 2
N=5; FIRST=1; BUDGET=300; CORES=0,1; KEEP=; METHODS=job,sweep; SEARCH2=; BUILD2=; RESULTS=
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_options craft_bugs_ttb.sh "pairs=N first=FIRST budget=BUDGET cores=CORES keep=KEEP methods=METHODS search2=SEARCH2 build2=BUILD2 results=RESULTS" "$@"
if [ -n "$RESULTS" ] && [ -z "$KEEP" ]; then KEEP=${RESULTS%.*}.finds; fi
[ -z "$KEEP" ] || mkdir -p "$KEEP"
V=$B/bin/simfuzz-craft_$NAME; F=$B/bin/simfuzz-craft_${NAME}_fixed
V2=${BUILD2:-$B}/bin/simfuzz-craft_$NAME # job2's; the files are judged with V and F
for b in "$V" "$F" "$V2"; do
  [ -x "$b" ] || { echo "craft_bugs_ttb.sh: no $b (trees.sh with ALL=1)" >&2; exit 2; }
done
c0=${CORES%,*}; c1=${CORES#*,}
m1=${METHODS%%,*}; m2=
case "$METHODS" in *,*) m2=${METHODS#*,} ;; esac
for m in $m1 $m2; do
  case "$m" in
    job | sweep | job2 | explore) ;;
    libfuzzer) [ -x "$B/fuzz/craft_${NAME}_fuzzer" ] ||
      { echo "craft_bugs_ttb.sh: no $B/fuzz/craft_${NAME}_fuzzer (CRAFT_TREE_FUZZERS=ON)" >&2; exit 2; } ;;
    afl) [ -x "$B/fuzz/craft_${NAME}_afl" ] && command -v afl-fuzz > /dev/null ||
      { echo "craft_bugs_ttb.sh: no $B/fuzz/craft_${NAME}_afl or no afl-fuzz" >&2; exit 2; } ;;
    job2c) [ -z "$m2" ] || { echo "craft_bugs_ttb.sh: job2c takes both cores: run it alone" >&2; exit 2; } ;;
    *) echo "craft_bugs_ttb.sh: unknown method $m (job, sweep, explore, libfuzzer, afl, job2c, job2)" >&2; exit 2 ;;
  esac
done
commit=$(git -C "$(dirname "$0")" rev-parse --short HEAD 2> /dev/null || true)
work=$(bench_workdir)
trap 'rm -rf "$work"' EXIT
export AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1

JUDGE_DIR=$(dirname "$0")/../examples/craft/bugs
# shellcheck source=examples/craft/bugs/judge.sh
. "$JUDGE_DIR/judge.sh"
# judge DIR T0 TAG: judge the failure files of DIR not judged yet (oldest
# first); the first that is the bug: its seconds from T0 in $work/hit.TAG
judge() {
  # (AFL++'s id:* files in queue/ ran without failing: only crashes/ holds finds)
  find "$1" -type f \( -name 'crash-*' -o -name 'craft_*-seed-*' -o \( -name 'id:*' -path '*/crashes/*' \) \) \
    ! -path '*/.*' -printf '%T@ %p\n' 2> /dev/null | sort -n > "$work/files.$3"
  while read -r t p; do
    grep -qxF "$p" "$work/seen.$3" && continue
    echo "$p" >> "$work/seen.$3"
    if [ "$(JUDGE_CPUS=$jc judge_file "$V" "$F" "$p" "$work/r.$3" | cut -f1)" = bug ]; then
      awk -v t="$t" -v t0="$2" 'BEGIN { printf "%.1f\n", t - t0 }' > "$work/hit.$3"
      [ -z "$KEEP" ] || cp "$p" "$KEEP/$NAME-$3-${BUDGET}s.pb"
      # the job's line for it in origins.txt: its root, and the states its
      # branches forked at (whether a root or a branch found the bug)
      [ -z "$KEEP" ] || [ ! -f "$1/origins.txt" ] ||
        grep -F "${p##*/}" "$1/origins.txt" > "$KEEP/$NAME-$3-${BUDGET}s.origins" ||
        rm -f "$KEEP/$NAME-$3-${BUDGET}s.origins"
      return
    fi
  done < "$work/files.$3"
}
start() { # METHOD K CORES DIR: start the method in a session of its own; its pid
  lo=$(($2 * 100000000))
  case $1 in
    sweep) setsid taskset -c "$3" timeout "$BUDGET" "$V" sweep --seeds "$lo-$((lo + 99999999))" \
      -q -o "$4" > "$4.log" 2>&1 & ;;
    explore) setsid taskset -c "$3" "$V" explore -o "$4" --time "$BUDGET" --seed "$lo" \
      --all-crashes -q > "$4.log" 2>&1 & ;;
    libfuzzer)
      mkdir -p "$4/c"
      cp "$B/corpus/craft_$NAME"/* "$4/c/" 2> /dev/null || true
      setsid taskset -c "$3" "$B/fuzz/craft_${NAME}_fuzzer" "$4/c" -fork=1 -ignore_crashes=1 \
        -ignore_timeouts=1 -ignore_ooms=1 -seed="$2" -max_total_time="$BUDGET" -timeout=20 \
        -dict="$B/fuzz/craft_$NAME.dict" -artifact_prefix="$4/" > "$4.log" 2>&1 & ;;
    # AFL_NO_AFFINITY: the trial is pinned already, and afl-fuzz's own
    # pinning aborts ("No more free CPU cores") when every core has a
    # process bound to it, such as the other arm of a pair or taskset's timeout
    afl) AFL_NO_AFFINITY=1 AFL_CUSTOM_MUTATOR_LIBRARY=$B/fuzz/libsimfuzz_mutator.so setsid taskset -c "$3" \
      timeout $((BUDGET + 30)) afl-fuzz -i "$B/corpus/craft_$NAME" -o "$4/o" \
      -x "$B/fuzz/craft_$NAME.dict" -s "$2" -t 20000 -V "$BUDGET" -- "$B/fuzz/craft_${NAME}_afl" \
      > "$4.log" 2>&1 & ;;
    *)
      search=; bin=$V; [ "$1" = job2 ] && search=$SEARCH2 && bin=$V2
      jobs=1; [ "$1" = job2c ] && jobs=2
      SIMFUZZ_SEARCH=$search setsid taskset -c "$3" "$bin" fuzz -o "$4" --time "$BUDGET" \
        --jobs "$jobs" --no-engine --all-crashes --seed "$lo" -q > "$4.log" 2>&1 & ;;
  esac
  echo $!
}
trial() { # METHOD K CORES: one trial; its time to the bug on stdout (- a miss;
           # err: the method ended early without a find, so it did not search)
  d=$work/$1-$2; tag=$1-$2; jc=$3
  mkdir -p "$d"; : > "$work/seen.$tag"; rm -f "$work/hit.$tag"
  t0=$(date +%s.%N)
  pid=$(start "$1" "$2" "$3" "$d")
  while kill -0 "$pid" 2> /dev/null; do
    sleep 5
    judge "$d" "$t0" "$tag"
    if [ -s "$work/hit.$tag" ] ||
      [ "$(awk -v t0="$t0" -v n="$(date +%s.%N)" 'BEGIN { print (n - t0 > '"$BUDGET"' + 60) }')" = 1 ]; then
      kill -TERM "-$pid" 2> /dev/null || true # its session: dash's kill takes no --
      i=0
      while kill -0 "$pid" 2> /dev/null && [ "$i" -lt 20 ]; do sleep 0.5; i=$((i + 1)); done
      kill -KILL "-$pid" 2> /dev/null || true
      break
    fi
  done
  wait "$pid" 2> /dev/null || true
  [ -s "$work/hit.$tag" ] || judge "$d" "$t0" "$tag"
  h=-
  [ -s "$work/hit.$tag" ] && h=$(cat "$work/hit.$tag")
  # a file written after the budget (a job's confirmation) is no find
  [ "$h" = - ] || [ "$(awk -v h="$h" 'BEGIN { print (h <= '"$BUDGET"') }')" = 1 ] || h=-
  # a method that stopped well before its budget without a find did not
  # search for it (a tool that could not start): no miss to record
  if [ "$h" = - ] && [ "$(awk -v t0="$t0" -v n="$(date +%s.%N)" \
    'BEGIN { b = '"$BUDGET"'; print (n - t0 < (b > 20 ? b - 10 : b / 2)) }')" = 1 ]; then
    echo "craft_bugs_ttb.sh: $1 trial $2 ended early without a find; its log:" >&2
    tail -n 5 "$d.log" >&2 2> /dev/null || true
    h=err
  fi
  rm -rf "$d" "$d.log"
  echo "$h"
}
: > "$work/res"
k=$FIRST
while [ "$k" -lt $((FIRST + N)) ]; do
  if [ $((k % 2)) = 0 ]; then ca=$c0; cb=$c1; else ca=$c1; cb=$c0; fi
  if [ -z "$m2" ]; then
    cores=$ca; [ "$m1" = job2c ] && cores=$CORES
    ta=$(trial "$m1" "$k" "$cores")
    [ "$ta" != err ] || { echo "craft_bugs_ttb.sh: trial $k not recorded" >&2; exit 1; }
    echo "$k  $m1: $ta"
    echo "$k $ta $ta" >> "$work/res"
  else
    trial "$m1" "$k" "$ca" > "$work/a" &
    pa=$!
    trial "$m2" "$k" "$cb" > "$work/b" &
    wait "$pa"; wait
    ta=$(cat "$work/a"); tb=$(cat "$work/b")
    [ "$ta" != err ] && [ "$tb" != err ] || { echo "craft_bugs_ttb.sh: pair $k not recorded" >&2; exit 1; }
    echo "$k  $m1: $ta  $m2: $tb"
    echo "$k $ta $tb" >> "$work/res"
    [ -z "$RESULTS" ] || echo "$NAME $m2 $k $tb $BUDGET ${commit:-?}" >> "$RESULTS"
  fi
  [ -z "$RESULTS" ] || echo "$NAME $m1 $k $ta $BUDGET ${commit:-?}" >> "$RESULTS"
  k=$((k + 1))
done
[ -n "$m2" ] || m2=$m1
awk -v b="$BUDGET" -v name="$NAME" -v m1="$m1" -v m2="$m2" '
  function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
      if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
  { n++; jt[n] = $2 == "-" ? b : $2; st[n] = $3 == "-" ? b : $3
    hj += $2 != "-"; hs += $3 != "-"; wj += jt[n] < st[n]; ws += st[n] < jt[n] }
  END { mj = med(jt, n); ms = med(st, n)
    if (m1 == m2) { printf "%s: %s %d/%d, median %s%.1f s\n", name, m1, hj, n, (hj * 2 <= n ? ">=" : ""), mj; exit }
    printf "%s: %s %d/%d, median %s%.1f s, won %d; %s %d/%d, median %s%.1f s, won %d\n",
      name, m1, hj, n, (hj * 2 <= n ? ">=" : ""), mj, wj, m2, hs, n, (hs * 2 <= n ? ">=" : ""), ms, ws }
' "$work/res"
