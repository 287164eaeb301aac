#!/bin/sh
# Time to a bug of examples/craft's bug-history set (issue 36), by method,
# side by side: each pair runs two methods at once, one per core (taskset),
# the cores swapped every pair, each for the whole budget. Methods:
#   job    the default job (simfuzz fuzz --jobs 1 --no-engine), with a
#          crash file for every failure (--all-crashes), as the sweep saves
#          every failing seed: a tree's background failures break the bug's
#          own invariant at its own site in some trees (follower_commit),
#          and the job's few files of a kind would measure which failures
#          it files, not its search
#   sweep  the random sweep
#   job2   the default job again, with SIMFUZZ_SEARCH=$SEARCH2 (--search2):
#          the A/B of a part of the search, side by side with job A run ends at its first
# failure only inside one scenario; the campaign goes on, and every tree of
# the set has background failures (the HEAD probe finding in about 0.4 % of
# seeds), so the time to the bug is the time of the first saved failure
# that the variant shows and its control, craft_NAME_fixed, does not show
# the same way (as examples/craft/bugs/hunt.sh judges it), measured by the
# file's modification time from the trial's start (0.1 s).
#
# Prints a line per pair ("k  job: 42.1 s  sweep: -"; "-" is a miss within
# the budget), then per method: hits, the median (a miss counts as the
# budget: a median over misses is a lower bound, marked >=), and the pairs
# it won.
#
# Usage: bench/craft_bugs_ttb.sh BUILD NAME [--pairs N] [--first K]
#                                [--budget S] [--cores C0,C1] [--keep DIR]
#                                [--methods M1,M2]   (default job,sweep)
#                                [--search2 LIST]    (job2's SIMFUZZ_SEARCH)
#   --keep DIR: copy each trial's first bug file into DIR, as
#          NAME-METHOD-K.pb (a trigger for a regression scenario)
#   BUILD: a build of examples/craft with -DCRAFT_RAFT_TREES from
#          bugs/trees.sh with ALL=1 (every control built)
set -eu
B=$1; NAME=$2; shift 2
N=5; FIRST=1; BUDGET=300; CORES=0,1; KEEP=; METHODS=job,sweep; SEARCH2=
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_options craft_bugs_ttb.sh "pairs=N first=FIRST budget=BUDGET cores=CORES keep=KEEP methods=METHODS search2=SEARCH2" "$@"
V=$B/bin/simfuzz-craft_$NAME; F=$B/bin/simfuzz-craft_${NAME}_fixed
for b in "$V" "$F"; do
  [ -x "$b" ] || { echo "craft_bugs_ttb.sh: no $b (trees.sh with ALL=1)" >&2; exit 2; }
done
c0=${CORES%,*}; c1=${CORES#*,}
m1=${METHODS%,*}; m2=${METHODS#*,}
for m in "$m1" "$m2"; do
  case "$m" in
    job | sweep | job2) ;;
    *) echo "craft_bugs_ttb.sh: unknown method $m (job, sweep, job2)" >&2; exit 2 ;;
  esac
done
work=$(bench_workdir)
trap 'rm -rf "$work"' EXIT

sig() { # TOOL FILE TAG: what failed, alike across releases
  "$1" replay "$2" > "$work/r.$3" 2>&1 || true # a failing replay is the point
  s=$(sed -n 's/^==simfuzz==   \(Assertion .*\)/\1/p' "$work/r.$3" | head -n 1)
  [ -n "$s" ] || s=$(tail -n 1 "$work/r.$3" | sed -n 's/.*-> FAILED //p')
  [ -n "$s" ] || s=$( ("$1" triage "$2" 2>&1 || true) | tail -n 1 | sed 's/^[^:]*: //; s/ simfuzz-[^ ]*$//')
  echo "$s"
}
first_bug() { # DIR T0 TAG: seconds from T0 to the first file in DIR that is the bug, or -
  find "$1" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'craft_*-seed-*' \) \
    -printf '%T@ %p\n' 2> /dev/null | sort -n > "$work/files.$3"
  while read -r t p; do
    v=$(sig "$V" "$p" "$3")
    if [ -n "$v" ] && [ "$v" != "$(sig "$F" "$p" "$3")" ]; then
      awk -v t="$t" -v t0="$2" 'BEGIN { printf "%.1f\n", t - t0 }'
      [ -z "$KEEP" ] || cp "$p" "$KEEP/$NAME-$3.pb"
      return
    fi
  done < "$work/files.$3"
  echo -
}
trial() { # METHOD K CORE: one trial; its time to the bug on stdout
  d=$work/$1-$2
  mkdir -p "$d"
  t0=$(date +%s.%N)
  if [ "$1" = sweep ]; then
    taskset -c "$3" timeout "$BUDGET" "$V" sweep --seeds "$(($2 * 100000000))-$(($2 * 100000000 + 99999999))" \
      -q -o "$d/s" > "$d.log" 2>&1 || true
    first_bug "$d/s" "$t0" "sweep-$2"
  else
    search=
    [ "$1" = job ] || search=$SEARCH2
    SIMFUZZ_SEARCH=$search taskset -c "$3" "$V" fuzz -o "$d" --time "$BUDGET" --jobs 1 --no-engine \
      --all-crashes --seed "$(($2 * 100000000))" -q > "$d.log" 2>&1 || true
    first_bug "$d/crashes" "$t0" "$1-$2"
  fi
}
: > "$work/res"
k=$FIRST
while [ "$k" -lt $((FIRST + N)) ]; do
  if [ $((k % 2)) = 0 ]; then ca=$c0; cb=$c1; else ca=$c1; cb=$c0; fi
  trial "$m1" "$k" "$ca" > "$work/a" &
  pa=$!
  trial "$m2" "$k" "$cb" > "$work/b" &
  wait "$pa"; wait
  ta=$(cat "$work/a"); tb=$(cat "$work/b")
  echo "$k  $m1: $ta  $m2: $tb"
  echo "$k $ta $tb" >> "$work/res"
  k=$((k + 1))
done
awk -v b="$BUDGET" -v name="$NAME" -v m1="$m1" -v m2="$m2" '
  function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
      if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
  { n++; jt[n] = $2 == "-" ? b : $2; st[n] = $3 == "-" ? b : $3
    hj += $2 != "-"; hs += $3 != "-"; wj += jt[n] < st[n]; ws += st[n] < jt[n] }
  END { mj = med(jt, n); ms = med(st, n)
    printf "%s: %s %d/%d, median %s%.1f s, won %d; %s %d/%d, median %s%.1f s, won %d\n",
      name, m1, hj, n, (hj * 2 <= n ? ">=" : ""), mj, wj, m2, hs, n, (hs * 2 <= n ? ">=" : ""), ms, ws }
' "$work/res"
