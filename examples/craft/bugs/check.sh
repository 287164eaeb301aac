#!/bin/sh
# The bug-history set's checks, on a build of examples/craft with
# -DCRAFT_RAFT_TREES (bugs/trees.sh):
#   - every bug of bugs.tsv has a regression scenario,
#     regressions/<name>/<what>--<how>.pb, that fails craft_<name> as <what>,
#     never as one of the newest library's own bugs (bugs/background)
#     (an invariant, "assert", "liveness", or "crash"); where the control
#     craft_<name>_fixed was built (trees.sh with ALL=1), the same scenario
#     does not fail it that way: the failure is that fix's bug;
#   - regressions/head/: findings in the newest library, failing craft_head;
#     regressions/<name>_fixed/: findings in a control tree (a bug's fix
#     applied, the library as it was then), failing craft_<name>_fixed;
#   - pass--<how>.pb (any tree): a scenario that once failed for a reason
#     of simfuzz's (a false alarm, bugs/known/), which must now pass;
#     determinism--<how>.pb: one that once ran differently from run to run
#     (the adapter read what raft never set; raft read a pointer's byte and
#     its blocks came from the C library), which must run the same;
#   - a bug without a scenario yet is listed as such and fails the check
#     unless ALLOW_MISSING=1 (while a trigger is being looked for).
# Usage: examples/craft/bugs/check.sh BUILD_DIR
#   REGRESSIONS=DIR: the scenarios of DIR instead of bugs/regressions (a test's)
#   FRESH=M: determinism scenarios run in M fresh processes (default 3)
set -u
B=$1
D=$(cd "$(dirname "$0")" && pwd)
R=${REGRESSIONS:-$D/regressions}
# shellcheck source=examples/craft/check_lib.sh
. "$D/../check_lib.sh"
fails_as() { # TARGET WHAT FILE: 0 if FILE fails TARGET as WHAT (pass: passes it;
               # determinism: runs the same every time, whatever its outcome)
  if [ "$2" = pass ]; then
    "$B/bin/simfuzz-$1" replay -q "$3" > "$work/r" 2>&1
  elif [ "$2" = determinism ]; then
    # (FRESH=257 fresh processes: 256 of them give bits 8 to 15 of a
    # C-library heap address every value, so a run that one byte of a
    # pointer decides, as in finding 6 of docs/findings/cowsql-raft.md,
    # parts in one of them. That takes a build without sanitizers:
    # AddressSanitizer's allocator puts blocks at the same places in every
    # process, so there the default 3 is as good, and 257 cost 26 s)
    "$B/bin/simfuzz-$1" check-determinism --fresh "${FRESH:-3}" "$3" > "$work/r" 2>&1
  elif [ "$2" = crash ]; then
    "$B/bin/simfuzz-$1" triage "$3" > "$work/r" 2>&1
    grep -q ": crash: " "$work/r"
  else
    "$B/bin/simfuzz-$1" replay -q "$3" > "$work/r" 2>&1
    grep -q "FAILED $2\$" "$work/r"
  fi
}
check_dir() { # NAME KIND: the regression scenarios of one tree (KIND: bug, head
               # or control)
  n=0
  for f in "$R/$1"/*.pb; do
    [ -e "$f" ] || continue
    n=$((n + 1))
    want=$(basename "$f" | sed 's/--.*//')
    control=0 # a bug's scenario must not fail its control the same way
    case $want in
      pass) claim=passes; should=pass ;;
      determinism) claim="runs the same every time:"; should="run the same every time:" ;;
      *) claim="fails $want on"; should="fail $want on"; control=1 ;;
    esac
    if [ "$2" = bug ] && grep -qxF "$want" "$D/background"; then
      bad "$(basename "$f"): a $want failure is the newest library's own bug (bugs/background), not $1's"
      continue
    fi
    if fails_as "craft_$1" "$want" "$f"; then
      ok "craft_$1 $claim $(basename "$f")"
    else
      bad "craft_$1 should $should $(basename "$f")"
      tail -n 3 "$work/r"
    fi
    if [ $control = 1 ] && [ -x "$B/bin/simfuzz-craft_$1_fixed" ]; then
      if fails_as "craft_$1_fixed" "$want" "$f"; then
        bad "craft_$1_fixed (the fix applied) fails $want on $(basename "$f") too"
      else
        ok "craft_$1_fixed does not"
      fi
    fi
  done
  echo "$n"
}
missing=""
# every tree with scenarios: each bug of bugs.tsv (which must have one),
# head, and any other tree with findings of its own (a control,
# <name>_fixed, holds every later bug of the library: regressions/<name>_fixed/)
grep -v '^#' "$D/bugs.tsv" | cut -f1 | sed '/^$/d; s/$/ bug/' > "$work/trees"
echo "head head" >> "$work/trees"
for d in "$R"/*/; do
  n=$(basename "$d")
  grep -q "^$n " "$work/trees" || echo "$n control" >> "$work/trees"
done
while read -r name kind; do
  if [ ! -x "$B/bin/simfuzz-craft_$name" ]; then
    # a bug with no scenario yet need not be built (trees.sh NAME...)
    if [ "$kind" = bug ] && [ ! -d "$R/$name" ] && [ "${ALLOW_MISSING:-0}" = 1 ]; then
      missing="$missing $name"
    else
      bad "craft_$name was not built (bugs/trees.sh, -DCRAFT_RAFT_TREES)"
    fi
    continue
  fi
  check_dir "$name" "$kind" > "$work/out"
  n=$(tail -n 1 "$work/out")
  sed '$d' "$work/out"
  nbad=$((nbad + $(grep -c '^FAIL' "$work/out")))
  [ "$n" = 0 ] && [ "$kind" = bug ] && missing="$missing $name"
done < "$work/trees"
if [ -n "$missing" ]; then
  if [ "${ALLOW_MISSING:-0}" = 1 ]; then
    echo "note: no regression scenario yet for:$missing"
  else
    bad "no regression scenario for:$missing"
  fi
fi
[ $nbad = 0 ] && echo "ok: the bug-history set" || echo "FAIL: $nbad problems"
exit $((nbad > 0))
