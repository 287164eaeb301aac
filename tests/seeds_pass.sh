#!/bin/sh
# Every seed scenario in corpus/ passes on its system's correct target and
# on every planted-bug variant of it: seeds are starting points for the
# fuzzers, never solutions (a seed that already triggers a bug would make
# the time-to-bug benchmark meaningless).
# Usage: tests/seeds_pass.sh BUILD_DIR
set -u
B=$1
bad=0; n=0
for exe in "$B"/bin/simfuzz-*; do
  t=${exe##*/simfuzz-}
  sys=${t%%_bug_*}
  [ -d "$B/corpus/$sys" ] || continue
  for f in "$B/corpus/$sys"/*.pb; do
    [ -e "$f" ] || continue
    n=$((n + 1))
    out=$("$exe" replay -q "$f" 2>&1) || { echo "FAIL $t: $out"; bad=1; }
  done
done
[ $n -gt 0 ] || { echo "FAIL: no seeds found under $B/corpus"; exit 1; }
[ $bad = 0 ] && echo "ok: $n seed replays pass"
exit $bad
