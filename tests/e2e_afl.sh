#!/bin/sh
# End to end with AFL++ (persistent mode + simfuzz's custom mutator): a
# bounded campaign finds the planted bug and the crash replays.
# Usage: e2e_afl.sh BUILD_DIR
set -eu
B=$1
T_NAME=e2e_afl
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
export AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1
export AFL_BENCH_UNTIL_CRASH=1 AFL_NO_AFFINITY=1
# (-s: a fixed seed for AFL++'s own choices; unseeded, the time to the first
# crash ranged from 18 to 186 s in the ASan suite, and with seeds 1 to 6 it
# was 3 to 55 s)
AFL_CUSTOM_MUTATOR_LIBRARY="$B/fuzz/libsimfuzz_mutator.so" \
  timeout 400 afl-fuzz -s 2 -i "$B/corpus/pbstore_bug_reset_skip" -o "$work/out" \
  -x "$B/fuzz/pbstore_bug_reset_skip.dict" -t 10000 -V 300 -- "$B/fuzz/pbstore_bug_reset_skip_afl" \
  > "$work/afl.log" 2>&1 || true
crash=$(ls "$work"/out/default/crashes/id:* 2>/dev/null | head -1)
[ -n "$crash" ] || { tail -20 "$work/afl.log"; fail "AFL++ found no crash in 300 s"; }
echo "e2e_afl: crash found: $(basename "$crash")"
set +e
"$B/bin/simfuzz-pbstore_bug_reset_skip" replay -q "$crash" > "$work/replay.log" 2>&1
rc=$?
set -e
what=$(sed -n 's/.*-> FAILED \([a-z_]*\).*/\1/p' "$work/replay.log")
case "$rc:$what" in
  1:backup_log_is_prefix | 1:liveness) ;;
  *) fail "CLI replay: exit $rc, failure '$what'" ;;
esac
if ! "$B/bin/simfuzz-pbstore" replay "$crash" > "$work/correct.log" 2>&1; then
  # the log is all a CI run leaves: the scenario (as text, for `encode`) and
  # how the correct target fails it, so that the failure can be replayed
  echo "e2e_afl: the planted bug's replay: $(tail -n 1 "$work/replay.log")"
  echo "e2e_afl: the correct pbstore's replay (last lines):"; tail -n 25 "$work/correct.log"
  echo "e2e_afl: the crash file as text:"; "$B/bin/simfuzz-pbstore" show "$crash"
  fail "the correct pbstore fails the crash scenario too: not the planted bug"
fi
if "$B/fuzz/pbstore_bug_reset_skip_afl" "$crash" > "$work/afl-replay.log" 2>&1; then
  fail "the AFL++ binary does not crash on its crash file"
fi
# the correct target stays clean under AFL++ (bounded)
unset AFL_BENCH_UNTIL_CRASH
AFL_CUSTOM_MUTATOR_LIBRARY="$B/fuzz/libsimfuzz_mutator.so" \
  timeout 120 afl-fuzz -i "$B/corpus/pbstore" -o "$work/ok" -x "$B/fuzz/pbstore.dict" -t 10000 -V 15 \
  -- "$B/fuzz/pbstore_afl" > "$work/afl-ok.log" 2>&1 || true
done_execs=$(awk '/execs_done/ {print $3}' "$work/ok/default/fuzzer_stats" 2>/dev/null || echo 0)
[ "${done_execs:-0}" -gt 10000 ] || fail "AFL++ on the correct pbstore did not run ($done_execs execs)"
if ls "$work"/ok/default/crashes/id:* > /dev/null 2>&1; then
  fail "the correct pbstore crashed under AFL++: $(ls "$work"/ok/default/crashes/id:* | head -1)"
fi
echo "e2e_afl: correct pbstore clean over $done_execs AFL++ executions"
echo "4 passed, 0 failed"
