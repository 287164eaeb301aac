#!/bin/sh
# Replay across code changes: every minimized crash scenario of
# pbstore_bug_reset_skip, plus crash scenarios a sweep finds now, replays to
# the same failure and the same trace hash on the example rebuilt after an
# unrelated change (tests/refactor_example.py). simfuzz's random decisions
# are keyed by (stream, index) and scenario steps by time, not by the order
# in which code draws from one generator, so code that draws nothing new
# changes nothing.
# Usage: tests/code_change.sh BUILD_DIR REFACTORED_CLI
set -u
B=$1; R=$2
SRC=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$B/bin/simfuzz-pbstore_bug_reset_skip" sweep --seeds 0-3000 -o "$work" -q > /dev/null
n=0; bad=0
for f in "$SRC"/tests/regressions/pbstore_bug_reset_skip/*.pb "$work"/*.pb; do
  [ -e "$f" ] || continue
  a=$("$B/bin/simfuzz-pbstore_bug_reset_skip" replay -q "$f" 2>&1 | tail -1 | sed 's/.*hash //')
  b=$("$R" replay -q "$f" 2>&1 | tail -1 | sed 's/.*hash //')
  case "$a" in *FAILED*) ;; *) echo "FAIL $f does not fail on the original: $a"; bad=1 ;; esac
  [ "$a" = "$b" ] || { echo "FAIL $f: original '$a', after the change '$b'"; bad=1; }
  n=$((n + 1))
done
[ $n -gt 1 ] || { echo "FAIL: no crash scenarios"; exit 1; }
[ $bad = 0 ] && echo "code_change: $n crash scenarios give the same failure and trace hash after the change"
exit $bad
