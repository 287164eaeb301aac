#!/bin/sh
# Look for a bug's trigger with the random sweep (the baseline, which
# learns nothing): sweep craft_NAME over a seed range, then replay each
# failing seed on the control craft_NAME_fixed. A failure the control does
# not show the same way is the fix's bug, unless it is one of the newest
# library's own (bugs/background); the first one is minimized.
# Prints one line per distinct failure: count, "bug" or "also fixed", the
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
sig() { # TOOL FILE: what failed, alike across releases (an assertion's text,
         # an invariant's name, or triage's crash signature)
  "$1" replay "$2" > "$work/r" 2>&1
  s=$(sed -n 's/^==simfuzz==   \(Assertion .*\)/\1/p' "$work/r" | head -n 1)
  [ -n "$s" ] || s=$(tail -n 1 "$work/r" | sed -n 's/.*-> FAILED //p')
  # a crash's signature names the binary (craft_NAME or craft_NAME_fixed) and an
  # offset in it: only the signal is compared
  [ -n "$s" ] || s=$("$1" triage "$2" 2>&1 | tail -n 1 | sed 's/^[^:]*: //; s/ simfuzz-[^ ]*$//')
  echo "$s"
}
: > "$work/table"
for f in "$work"/s/*.pb; do
  [ -e "$f" ] || continue
  v=$(sig "$V" "$f")
  c=$(sig "$F" "$f")
  if [ -n "$v" ] && grep -qxF "$v" "$D/background"; then tag="background" # the library's own bug
  elif [ "$v" = "$c" ]; then tag="also-fixed"; else tag="bug"; fi
  printf '%s\t%s\t%s\n' "$tag" "$v" "$f" >> "$work/table"
done
cut -f1,2 "$work/table" | sort | uniq -c | sort -rn
first=$(grep '^bug' "$work/table" | head -n 1 | cut -f3)
if [ -n "$first" ]; then
  "$V" minimize "$first" -o "$OUT/$N.pb" > "$work/min.log" 2>&1
  echo "minimized: $OUT/$N.pb ($(tail -n 4 "$work/min.log" | head -n 1 | sed 's/^ *//'))"
fi
