#!/bin/sh
# End to end over the example systems: every correct target stays clean
# under a bounded libFuzzer run from its seeds; for each system, one planted
# bug is found by a bounded campaign, replays through the CLI with the same
# invariant, passes on the correct target, and minimizes to a scenario that
# still fails the same way.
# Usage: e2e_zoo.sh BUILD_DIR
set -eu
B=$1
T_NAME=e2e_zoo
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

for t in raft_kv raft_kv_reconf twopc leaselock; do
  mkdir "$work/$t"
  cp "$B/corpus/$t"/*.pb "$work/$t/"
  "$B/fuzz/${t}_fuzzer" "$work/$t" -seed=3 -runs=4000 -timeout=10 -dict="$B/fuzz/$t.dict" \
    -artifact_prefix="$work/$t-" > "$work/$t.log" 2>&1 \
    || { grep -A3 FAILURE "$work/$t.log" | head; fail "the correct $t failed"; }
  echo "e2e_zoo: correct $t clean over 4000 runs"
done

for t in twopc_bug_count_votes leaselock_bug_no_fencing raft_kv_bug_no_dedup; do
  sys=${t%%_bug_*}
  mkdir "$work/$t"
  cp "$B/corpus/$t"/*.pb "$work/$t/"
  if "$B/fuzz/${t}_fuzzer" "$work/$t" -seed=1 -runs=200000 -max_total_time=240 -timeout=10 \
       -dict="$B/fuzz/$t.dict" -artifact_prefix="$work/$t-" > "$work/$t.log" 2>&1; then
    fail "$t: no crash found"
  fi
  crash=$(ls "$work/$t"-crash-* 2> /dev/null | head -1)
  [ -n "$crash" ] || { tail -20 "$work/$t.log"; fail "$t: no crash file"; }
  what=$(sed -n "s/.*FAILURE in target $t: [a-z]* '\([a-z_]*\)'.*/\1/p" "$work/$t.log" | head -1)
  [ -n "$what" ] || fail "$t: no failure report"
  set +e
  replays_as "$B/bin/simfuzz-$t" "$crash" "$what"
  set -e
  "$B/bin/simfuzz-$sys" replay -q "$crash" > /dev/null || fail "$t: the correct $sys fails too"
  "$B/bin/simfuzz-$t" minimize -q --max-tries 300 "$crash" -o "$work/$t-min.pb" > /dev/null 2>&1 \
    || fail "$t: minimize failed"
  set +e
  replays_as "$B/bin/simfuzz-$t" "$work/$t-min.pb" "$what"
  set -e
  found=$(grep -o "^#[0-9]*" "$work/$t.log" | tail -1)
  echo "e2e_zoo: $t found after ${found#\#} executions ($what), replayed and minimized"
done
