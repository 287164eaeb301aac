#!/bin/sh
# The main job: build simfuzz and its example, run a short fuzz campaign on
# the planted-bug target, minimize the crash, and replay it as a readable
# report. Everything lands in out/main-job/.
set -eu
cd "$(dirname "$0")/.."
sh scripts/bootstrap.sh
JOBS=$(nproc 2>/dev/null || echo 2)
B=build/main
cmake -S . -B "$B" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSIMFUZZ_TESTS=OFF -DSIMFUZZ_BENCH=OFF >/dev/null
cmake --build "$B" -j "$JOBS"
T=pbstore_bug_reset_skip
OUT=out/main-job
rm -rf "$OUT" && mkdir -p "$OUT/job/corpus"
cp "$B/corpus/$T"/*.pb "$OUT/job/corpus/"
S="$B/bin/simfuzz --target $T"

echo "== 1. fuzzing $T: simfuzz fuzz (the explorer on every core, its workers sharing the"
echo "      campaign's counts; every crash confirmed by replay), at most 120 s"
set +e
$S fuzz -o "$OUT/job" --time 120 --jobs "$JOBS" --stop-on-first > "$OUT/fuzz.log" 2>&1
rc=$?
set -e
if [ "$rc" -ne 1 ]; then
  echo "no confirmed crash in 120 s (exit $rc, see $OUT/fuzz.log)"
  exit 1
fi
# the first confirmed failure (the explorer's crash-*, or libFuzzer's libfuzzer-crash-*)
crash=$(sed -n 's/^fuzz: confirmed \([^:]*\): .*/\1/p' "$OUT/fuzz.log" | head -1)
grep -E "^(explore|fuzz): " "$OUT/fuzz.log" | grep -v "^explore: [0-9]* s," | head -4
echo "found: $crash"

echo "== 2. minimizing the crash (simfuzz minimize: same invariant, same check site)"
$S minimize -q "$crash" -o "$OUT/minimized.pb"

echo "== 3. the minimized scenario, as text"
cat "$OUT/minimized.pb.txt"

echo "== 4. replaying it: timeline of faults and connections, then the report"
set +e
$S replay --kinds faults,conn "$OUT/minimized.pb"
rc=$?
set -e
[ "$rc" -eq 1 ] || { echo "replay did not fail (exit $rc)"; exit 1; }

echo "== 5. space-time diagram and Chrome trace"
$S trace "$OUT/minimized.pb" --html "$OUT/minimized.html" --chrome "$OUT/minimized.json"

echo "== 6. the same scenario on the correct pbstore"
"$B/bin/simfuzz" --target pbstore replay -q "$OUT/minimized.pb"
echo "main job done: the bug was found, minimized and replayed; open $OUT/minimized.html"
