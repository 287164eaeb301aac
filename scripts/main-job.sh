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
rm -rf "$OUT" && mkdir -p "$OUT/corpus"
cp "$B/corpus/$T"/*.pb "$OUT/corpus/"

echo "== 1. fuzzing $T with libFuzzer (structure-aware mutator, state feedback), at most 120 s"
if "$B/fuzz/${T}_fuzzer" "$OUT/corpus" -max_total_time=120 -timeout=10 \
     -dict="$B/fuzz/$T.dict" -artifact_prefix="$OUT/" > "$OUT/fuzz.log" 2>&1; then
  echo "no crash found in 120 s (see $OUT/fuzz.log)"
  exit 1
fi
crash=$(ls "$OUT"/crash-* | head -1)
echo "found: $crash after $(grep -o '^#[0-9]*' "$OUT/fuzz.log" | tail -1 | tr -d '#') executions"
grep -E "==simfuzz== (FAILURE|  )" "$OUT/fuzz.log" | head -3

echo "== 2. minimizing the crash (simfuzz minimize: same invariant, same check site)"
S="$B/bin/simfuzz --target $T"
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
