#!/bin/sh
# Replays one directory of regression scenarios, tests/regressions/<target>/.
#   <system>/*.pb          crashes found in the correct target (since fixed):
#                          each must now pass.
#   <system>_bug_<what>/<invariant>--<name>.pb
#                          minimized crashes of a planted bug: each must still
#                          fail on the bug target with that invariant (or
#                          "liveness"), and pass on the correct <system>.
#                          The libFuzzer binary, when built, must abort on
#                          it with that invariant's report, from the
#                          invariant's own site (not from inside simfuzz).
#   <dir>/climbs           optional: lines "<file>.pb <min> <site name>": the
#                          scenario's best value of that SF_MAXIMIZE site is at
#                          least <min> (`simfuzz reach`): the annotations that
#                          lead the explorer to a bug see its known triggers.
# Usage: tests/regressions.sh BUILD_DIR REGRESSION_DIR
set -u
B=$1; D=$2
t=$(basename "$D")
sys=${t%%_bug_*}
bad=0; n=0
for f in "$D"/*.pb; do
  [ -e "$f" ] || continue
  n=$((n + 1))
  if [ "$sys" = "$t" ]; then
    out=$("$B/bin/simfuzz-$t" replay -q "$f" 2>&1); rc=$?
    [ $rc = 0 ] || { echo "FAIL $f: expected to pass, got exit $rc: $out"; bad=1; }
    continue
  fi
  want=$(basename "$f" | sed 's/--.*//')
  out=$("$B/bin/simfuzz-$t" replay -q "$f" 2>&1); rc=$?
  case "$rc:$out" in
    1:*"FAILED $want"*) ;;
    *) echo "FAIL $f: expected $t to fail with $want, got exit $rc: $out"; bad=1 ;;
  esac
  out=$("$B/bin/simfuzz-$sys" replay -q "$f" 2>&1); rc=$?
  [ $rc = 0 ] || { echo "FAIL $f: expected $sys to pass, got exit $rc: $out"; bad=1; }
  fz="$B/fuzz/${t}_fuzzer"
  [ -x "$fz" ] || continue
  out=$("$fz" "$f" 2>&1)
  case "$out" in
    *"internal assertion"* | *"DETERMINISM FAILURE"*)
      echo "FAIL $f: the fuzzer's report went wrong: $(echo "$out" | grep -m1 "internal\|DETERMINISM")"
      bad=1 ;;
    *"FAILURE in target $t: "*" '$want'"*"determinism check: "*"deadly signal"*) ;;
    *) echo "FAIL $f: ${t}_fuzzer did not abort with its '$want' report: $(echo "$out" | tail -3)"
      bad=1 ;;
  esac
done
if [ -f "$D/climbs" ]; then
  while read -r f min site; do
    [ -n "$f" ] || continue
    best=$("$B/bin/simfuzz-$t" reach --json "$D/$f" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(max([a.get("best", -1) for a in d["assertions"] if a["name"] == sys.argv[1]] or [-1]))
' "$site")
    if [ -z "$best" ] || [ "$best" -lt "$min" ]; then
      echo "FAIL $D/$f: '$site' reaches ${best:-nothing}, want at least $min"
      bad=1
    fi
  done < "$D/climbs"
fi
[ $n -gt 0 ] || { echo "FAIL $D: no scenarios"; exit 1; }
[ $bad = 0 ] && echo "ok: $n scenarios in $t"
exit $bad
