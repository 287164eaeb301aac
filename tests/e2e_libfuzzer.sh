#!/bin/sh
# End to end with libFuzzer: a bounded campaign finds the planted bug of
# pbstore_bug_reset_skip, the crash replays to the same failure through the
# CLI and the fuzzer, and the correct pbstore stays clean over a bounded run.
# Usage: e2e_libfuzzer.sh BUILD_DIR
set -eu
B=$1
T_NAME=e2e_libfuzzer
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

mkdir "$work/bug" "$work/ok"
cp "$B"/corpus/pbstore_bug_reset_skip/*.pb "$work/bug/"
cp "$B"/corpus/pbstore/*.pb "$work/ok/"
if "$B/fuzz/pbstore_bug_reset_skip_fuzzer" "$work/bug" -seed=1 -runs=500000 -max_total_time=300 \
     -timeout=10 -dict="$B/fuzz/pbstore_bug_reset_skip.dict" -artifact_prefix="$work/" \
     > "$work/bug.log" 2>&1; then
  fail "no crash found in 500000 runs"
fi
crash=$(ls "$work"/crash-* 2>/dev/null | head -1)
[ -n "$crash" ] || { tail -20 "$work/bug.log"; fail "fuzzer failed without a crash file"; }
# the planted bug shows as a hole in a backup's log (safety) or, when no
# write follows the skip, as a backup that never catches up (liveness)
what=$(sed -n "s/.*FAILURE in target pbstore_bug_reset_skip: [a-z]* '\([a-z_]*\)'.*/\1/p" "$work/bug.log" | head -1)
case "$what" in
  backup_log_is_prefix|liveness) ;;
  *) fail "unexpected failure: $(grep FAILURE "$work/bug.log" | head -1)" ;;
esac
grep -q "determinism check: re-run gave the same failure and trace hash" "$work/bug.log" \
  || fail "no determinism re-check in the report"
found=$(grep -o "^#[0-9]*" "$work/bug.log" | tail -1)
echo "e2e_libfuzzer: bug found after ${found#\#} executions: $what"

set +e
replays_as "$B/bin/simfuzz-pbstore_bug_reset_skip" "$crash" "$what"
set -e
"$B/bin/simfuzz-pbstore" replay -q "$crash" > /dev/null \
  || fail "the correct pbstore fails the crash scenario too: not the planted bug"
if "$B/fuzz/pbstore_bug_reset_skip_fuzzer" "$crash" > "$work/refuzz.log" 2>&1; then
  fail "the fuzzer binary does not crash on its own crash file"
fi
grep -q "'$what'" "$work/refuzz.log" || fail "fuzzer replay: other failure"

"$B/fuzz/pbstore_fuzzer" "$work/ok" -seed=2 -runs=30000 -timeout=10 \
  -dict="$B/fuzz/pbstore.dict" -artifact_prefix="$work/ok-" > "$work/ok.log" 2>&1 \
  || { grep -A3 FAILURE "$work/ok.log" | head; fail "the correct pbstore failed"; }
echo "e2e_libfuzzer: correct pbstore clean over 30000 runs"

# the default job with one job and --engine (the nightly job's campaign):
# libFuzzer over the corpus, then the explorer, in turn; its counts as JSON
mkdir -p "$work/job/corpus" && cp "$B"/corpus/pbstore/*.pb "$work/job/corpus/"
rc=0
"$B/bin/simfuzz-pbstore" fuzz -o "$work/job" --time 4 --jobs 1 --seed 3 \
  --engine "$B/fuzz/pbstore_fuzzer" --json "$work/job.json" -q > "$work/job.log" 2>&1 || rc=$?
[ $rc = 0 ] || { cat "$work/job.log"; fail "fuzz --jobs 1 --engine: exit $rc"; }
python3 - "$work/job.json" << 'PY' || fail "fuzz --json: $(cat "$work/job.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["engine_execs"] > 0 and j["roots"] > 0, j
assert j["confirmed"] == 0 and j["unconfirmed"] == 0, j
PY
echo "e2e_libfuzzer: fuzz --jobs 1 --engine took turns: $(cat "$work/job.json")"

# --jobs 2: both jobs explore unless --libfuzzer asks for the libFuzzer
# binary beside the tool (docs/BENCHMARKS.md, the second core); --no-engine
# with either is refused
job2() { # NAME OPTION...: fuzz --jobs 2 for 2 s into $work/NAME, its JSON counts in $work/NAME.json
  j2=$1
  shift
  mkdir -p "$work/$j2/corpus" && cp "$B"/corpus/pbstore/*.pb "$work/$j2/corpus/"
  rc=0
  "$B/bin/simfuzz-pbstore" fuzz -o "$work/$j2" --time 2 --jobs 2 --seed 5 --json "$work/$j2.json" \
    "$@" > "$work/$j2.log" 2>&1 || rc=$?
  [ $rc = 0 ] || { cat "$work/$j2.log"; fail "fuzz --jobs 2 $*: exit $rc"; }
}
job2 two
[ ! -e "$work/two/libfuzzer.log" ] && ! grep -q "libFuzzer job" "$work/two.log" ||
  fail "fuzz --jobs 2 started libFuzzer: $(head -n 3 "$work/two.log")"
python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); assert j["engine_execs"] == 0 and j["roots"] > 0, j' \
  "$work/two.json" || fail "fuzz --jobs 2: $(cat "$work/two.json")"
job2 lf --libfuzzer
grep -q "^fuzz: libFuzzer job: .*/fuzz/pbstore_fuzzer " "$work/lf.log" &&
  python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); assert j["engine_execs"] > 0 and j["roots"] > 0, j' \
    "$work/lf.json" || fail "fuzz --jobs 2 --libfuzzer: $(cat "$work/lf.log" "$work/lf.json")"
rc=0
"$B/bin/simfuzz-pbstore" fuzz -o "$work/bad" --libfuzzer --no-engine > "$work/bad.log" 2>&1 || rc=$?
[ $rc = 2 ] || fail "fuzz --libfuzzer --no-engine: exit $rc, want 2"
echo "e2e_libfuzzer: fuzz --jobs 2 explores on both jobs, and runs libFuzzer with --libfuzzer"
echo "6 passed, 0 failed"
