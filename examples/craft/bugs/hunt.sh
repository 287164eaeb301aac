#!/bin/sh
# Look for a bug's trigger with the random sweep (the baseline, which
# learns nothing): sweep craft_NAME over a seed range, then replay each
# failing seed on the control craft_NAME_fixed. A failure the control does
# not show the same way is the fix's bug, unless it is one of the newest
# library's own (bugs/background); the first one is minimized, keeping
# only candidates its control passes (minimize --passes; --differs if the
# control fails it another way).
# Prints one line per distinct failure: count, its verdict (bugs/judge.sh), the
# failure (node numbers folded). Leaves the minimized scenario in OUT.
# Usage: examples/craft/bugs/hunt.sh BUILD_DIR NAME FIRST LAST OUT
set -u
B=$1; N=$2; FIRST=$3; LAST=$4; OUT=$5
D=$(cd "$(dirname "$0")" && pwd)
V=$B/bin/simfuzz-craft_$N
F=$B/bin/simfuzz-craft_${N}_fixed
mkdir -p "$OUT"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$V" sweep --seeds "$FIRST-$LAST" -q -o "$work/s" > "$work/sweep.log" 2>&1
tail -n 1 "$work/sweep.log"
JUDGE_DIR=$D
# shellcheck source=examples/craft/bugs/judge.sh
. "$D/judge.sh"
: > "$work/table"
for f in "$work"/s/*.pb; do
  [ -e "$f" ] || continue
  printf '%s\t%s\n' "$(judge_file "$V" "$F" "$f" "$work/r")" "$f" >> "$work/table"
done
cut -f1,2 "$work/table" | sort | uniq -c | sort -rn
first=$(grep '^bug' "$work/table" | head -n 1 | cut -f3)
if [ -n "$first" ]; then
  # differential: the control passes every candidate kept (or, when it
  # fails the file its own way, never fails one the same way)
  control=--passes
  "$F" replay -q "$first" > /dev/null 2>&1 || control=--differs
  "$V" minimize "$control" "$F" "$first" -o "$OUT/$N.pb" > "$work/min.log" 2>&1
  echo "minimized ($control the control): $OUT/$N.pb ($(grep 'steps:' "$work/min.log" | sed 's/^ *//'))"
fi
