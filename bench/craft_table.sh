#!/bin/sh
# Issue 36's table for examples/craft's bug-history set, run a little at a
# time: trials of bench/craft_bugs_ttb.sh, one row per trial appended to
# RESULTS ("NAME METHOD K SECONDS|- BUDGET COMMIT"). A trial whose row is
# there already (same bug, method, trial and budget) is skipped, so a run
# stopped halfway, or a session's worth, goes on where it was. Every find
# is kept beside RESULTS, in its name without the extension plus .finds/
# (NAME-METHOD-K-BUDGETs.pb), so that it can be judged again.
#
# Usage: bench/craft_table.sh BUILD RESULTS [--trials K] [--budget S]
#                             [--groups "G..."] [--cores C0,C1] BUG...
#        bench/craft_table.sh --summary RESULTS
#   --groups: the methods, a group per craft_bugs_ttb.sh run: two methods
#        with a comma run side by side, one per core; one method runs alone
#        on the first core (job2c on both). Default: "job,sweep
#        explore,libfuzzer afl job2c" (the issue's six methods).
#   --summary: per bug, method and budget, hits/trials and the median time to
#        the bug (a miss counts as the budget; a median over misses is a
#        lower bound, marked >=), as a Markdown table.
set -eu
if [ "${1:-}" = --summary ]; then
  awk '
    { key = $1 SUBSEP $2 SUBSEP $5; if (!(key in n)) { order[++no] = key }
      n[key]++; h[key] += $4 != "-"; v[key, n[key]] = $4 == "-" ? $5 : $4; d[key, n[key]] = $4 }
    END {
      print "| bug | method | budget | hits | median (s) | trials (s) |"
      print "| --- | --- | ---: | ---: | ---: | --- |"
      for (o = 1; o <= no; o++) {
        key = order[o]; split(key, f, SUBSEP); m = n[key]; list = ""
        for (i = 1; i <= m; i++) { w[i] = v[key, i] + 0; list = list (i > 1 ? ", " : "") d[key, i] }
        for (i = 2; i <= m; i++) for (j = i; j > 1 && w[j - 1] > w[j]; j--) { t = w[j]; w[j] = w[j - 1]; w[j - 1] = t }
        med = m % 2 ? w[(m + 1) / 2] : (w[m / 2] + w[m / 2 + 1]) / 2
        printf "| `%s` | %s | %s | %d/%d | %s%.1f | %s |\n", f[1], f[2], f[3], h[key], m,
          (h[key] * 2 <= m ? ">= " : ""), med, list
      }
    }' "$2"
  exit 0
fi
B=$1; RES=$2; shift 2
K=5; BUDGET=300; GRPS="job,sweep explore,libfuzzer afl job2c"; CORES=0,1
while [ $# -gt 0 ]; do
  case "$1" in
    --trials) K=$2; shift 2 ;;
    --budget) BUDGET=$2; shift 2 ;;
    --groups) GRPS=$2; shift 2 ;;
    --cores) CORES=$2; shift 2 ;;
    -*) echo "craft_table.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "craft_table.sh: no bug named" >&2; exit 2; }
touch "$RES"
have() { # NAME METHOD K: 1 if RESULTS has its row at this budget
  awk -v n="$1" -v m="$2" -v k="$3" -v b="$BUDGET" '$1 == n && $2 == m && $3 == k && $5 == b { f = 1 }
    END { print f + 0 }' "$RES"
}
for bug in "$@"; do
  for g in $GRPS; do
    k=1
    while [ "$k" -le "$K" ]; do
      todo=0
      for m in $(echo "$g" | tr , ' '); do [ "$(have "$bug" "$m" "$k")" = 1 ] || todo=1; done
      if [ "$todo" = 1 ]; then
        sh "$(dirname "$0")/craft_bugs_ttb.sh" "$B" "$bug" --methods "$g" --pairs 1 --first "$k" \
          --budget "$BUDGET" --cores "$CORES" --results "$RES.new" --keep "${RES%.*}.finds" | head -n 1
        # a group's rows go in together, after its trial: a stopped trial, or
        # one whose method never searched (craft_bugs_ttb.sh fails), leaves none
        [ -f "$RES.new" ] || { echo "craft_table.sh: $bug $g trial $k: no rows" >&2; exit 1; }
        cat "$RES.new" >> "$RES"
        rm -f "$RES.new"
      fi
      k=$((k + 1))
    done
  done
done
