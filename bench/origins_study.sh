#!/bin/sh
# Where the explorer's finds of one of examples/craft's bug variants come
# from. Runs `explore --all-crashes --origins` of the variant for S seconds
# from each of K seeds (seed k x 10^8, two at a time, one per core; one
# after another when both cores are one), then
# sorts every crash file by what its variant fails on: each distinct
# failure (judge.sh's judge_sig) is judged once on one of its files
# (judge_file: the fix's bug, or not), and its other files go with it.
# Prints each bug file's origin line (explore --origins: its root, and the
# states its branches forked at), then, for the bug's files and for the
# other failures' files: how many came from roots and how many from
# branches, and how often each state was the one the last fork (the one
# right before the failure) forked at, and any fork at all.
#
# Usage: bench/origins_study.sh BUILD NAME [--runs K] [--time S] [--cores C0,C1]
#                               [--keep DIR]
#   BUILD: an examples/craft build with NAME's variant and its control
#   (bin/simfuzz-craft_NAME, bin/simfuzz-craft_NAME_fixed).
#   --keep DIR: keep each run's crash files and origins.txt there.
set -eu
B=$1; NAME=$2; shift 2
K=6; S=120; CORES=0,1; KEEP=
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_options origins_study.sh "runs=K time=S cores=CORES keep=KEEP" "$@"
V=$B/bin/simfuzz-craft_$NAME; F=$B/bin/simfuzz-craft_${NAME}_fixed
[ -x "$V" ] && [ -x "$F" ] || { echo "origins_study.sh: no $V or $F" >&2; exit 2; }
c0=${CORES%,*}; c1=${CORES#*,}
work=$(bench_workdir)
trap 'rm -rf "$work"' EXIT
JUDGE_DIR=$(dirname "$0")/../examples/craft/bugs
# shellcheck source=examples/craft/bugs/judge.sh
. "$JUDGE_DIR/judge.sh"

run() { # K CORE: run k's campaign
  taskset -c "$2" "$V" explore -o "$work/r$1" --time "$S" --seed $(($1 * 100000000)) \
    --all-crashes --origins "$work/r$1.txt" -q > "$work/r$1.log" 2>&1 || true
}
k=1
while [ "$k" -le "$K" ]; do # two at a time, or one after another on one core
  if [ "$c0" = "$c1" ]; then
    run "$k" "$c0"
    k=$((k + 1))
    continue
  fi
  run "$k" "$c0" &
  [ $((k + 1)) -gt "$K" ] || run $((k + 1)) "$c1" &
  wait
  k=$((k + 2))
done
# every file's failure, then one verdict per failure
: > "$work/files"
k=1
while [ "$k" -le "$K" ]; do
  for f in "$work/r$k"/crash-*; do
    [ -e "$f" ] || continue
    printf '%s\t%s\t%s\n' "$k" "$f" "$(judge_sig "$V" "$f" "$work/scratch")" >> "$work/files"
  done
  [ -z "$KEEP" ] || { mkdir -p "$KEEP/r$k"; cp "$work/r$k"/crash-* "$work/r$k.txt" "$KEEP/r$k/" 2> /dev/null || true; }
  k=$((k + 1))
done
: > "$work/verdicts"
cut -f3 "$work/files" | sort -u | while IFS= read -r sig; do
  f=$(awk -F'\t' -v s="$sig" '$3 == s { print $2; exit }' "$work/files")
  printf '%s\t%s\n' "$(judge_file "$V" "$F" "$f" "$work/scratch" | cut -f1)" "$sig" >> "$work/verdicts"
done
# each file: its run, verdict (bug or other) and origin line
awk -F'\t' 'NR == FNR { v[$2] = $1; next }
  { n = split($2, p, "/"); print $1 "\t" (v[$3] == "bug" ? "bug" : "other") "\t" p[n] }' \
  "$work/verdicts" "$work/files" > "$work/sorted"
while IFS="$(printf '\t')" read -r k verdict file; do
  line=$(grep "^$file " "$work/r$k.txt" | head -n 1)
  printf '%s\t%s\t%s\n' "$k" "$verdict" "${line:-$file root=? forks=?}"
done < "$work/sorted" > "$work/lines"
echo "# $NAME: $K runs of explore --all-crashes, $S s each, seeds k x 10^8"
echo "# failures (verdict, signature):"
sed 's/^/#   /' "$work/verdicts"
echo "# runs that found the bug: $(awk -F'\t' '$2 == "bug" { r[$1] = 1 } END { print length(r) }' "$work/lines") of $K"
echo "# the bug's files, with their origins:"
awk -F'\t' '$2 == "bug" { print "run " $1 ": " $3 }' "$work/lines"
# per group: roots and branches, and the states forked at (the last fork, any fork)
awk -F'\t' '
  { g = $2; files[g]++; n = split($3, part, " \\| ")
    if (n == 1) { roots[g]++; next }
    for (i = 2; i <= n; i++) {
      s = part[i]; sub(/^event=[0-9]+ t=[0-9.]+s /, "", s); sub(/ bucket=[0-9]+ runs=[0-9]+ node=-?[0-9]+ steps=[0-9]+/, "", s)
      any[g, s]++; states[s] = 1; if (i == n) last[g, s]++
    } }
  END {
    for (g in files) {
      printf "# %s: %d files, %d from roots, %d from branches\n", g, files[g], roots[g], files[g] - roots[g]
      for (s in states) if ((g, s) in any)
        printf "#   %-60s last fork %4d  any fork %4d\n", s, last[g, s], any[g, s]
    } }' "$work/lines"
