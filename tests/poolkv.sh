#!/bin/sh
# The poolkv example (examples/programs/poolkv): an ordinary threaded Linux
# server (a worker pool, a background fsync thread, mutexes and condition
# variables, TCP, a write-ahead log) that runs for real and, unmodified, as
# a simulated node whose threads are coroutines.
#   1. for real: the server on 127.0.0.1 with its real threads; kvctl
#      writes and reads; it restarts on its log and still has them;
#   2. simulated: the correct server passes a sweep; each planted bug (a
#      lock-order deadlock, a lost update) is found by the sweep, minimized,
#      and replays with the same trace hash in the command line, libFuzzer
#      and AFL++ binaries; the correct server passes the minimized scenario.
# usage: poolkv.sh BUILD_DIR
T_NAME=poolkv
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
B=$(cd "$1" && pwd)
for t in poolkv_server kvctl simfuzz-poolkv simfuzz-poolkv_bug_lock_order \
  simfuzz-poolkv_bug_lost_update; do
  [ -x "$B/bin/$t" ] || fail "no $B/bin/$t"
done
in_empty_dir

# 1. for real
pid=""
stop_server() {
  [ -z "$pid" ] || { kill "$pid" 2> /dev/null; wait "$pid" 2> /dev/null; }
  pid=""
}
trap 'stop_server' EXIT
mkdir -p "$work/real"
start_server() {
  (cd "$work/real" && exec "$B/bin/poolkv_server" "$port" >> out.log 2>&1) &
  pid=$!
}
kv() { "$B/bin/kvctl" "127.0.0.1:$port" "$@" 2> "$work/kvctl.err"; }
started=0
for try in 1 2 3 4 5; do # a free port
  port=$((20000 + ($$ * 11 + try * 997) % 40000))
  start_server
  if [ "$(kv PUT 1 11)" = OK ]; then
    started=1
    break
  fi
  stop_server
done
[ $started = 1 ] || fail "the real server did not answer: $(cat "$work/real/out.log" "$work/kvctl.err" 2> /dev/null)"
for i in 2 3 4 5; do
  [ "$(kv PUT "$i" "$((i * 11))")" = OK ] || fail "real PUT $i: $(cat "$work/kvctl.err")"
done
stop_server
start_server
[ "$(kv GET 5)" = "VAL 55" ] && [ "$(kv GET 1)" = "VAL 11" ] ||
  fail "after a restart: GET 5 '$(kv GET 5)', GET 1 '$(kv GET 1)'"
stop_server
ok "for real: threads, writes and reads through kvctl, a restart on the log"

# 2. simulated
K=$B/bin/simfuzz-poolkv
"$K" sweep --seeds 1-2000 -q > "$work/clean.log" 2>&1 ||
  fail "the correct poolkv failed the sweep: $(tail -n 3 "$work/clean.log")"
ok "the correct poolkv passes 2,000 random scenarios"
hash_of() { "$@" 2>&1 | sed -n 's/^==simfuzz== scenario: .*trace hash \([0-9a-f]*\)$/\1/p' | head -n 1; }
# each bug: BUG:SEEDS:WHAT, a range of seeds in which the sweep finds it
# (the search's power is measured in docs/BENCHMARKS.md, not here) and
# what its report says
for spec in "lock_order:1-40:a cycle of threads" "lost_update:1-80:not linearizable"; do
  bug=${spec%%:*} rest=${spec#*:}
  seeds=${rest%%:*} what=${rest#*:}
  V=$B/bin/simfuzz-poolkv_bug_$bug
  "$V" sweep --seeds "$seeds" -o "$work/found_$bug" -q > "$work/sw_$bug.log" 2>&1
  [ $? = 1 ] || fail "poolkv_bug_$bug: the sweep over $seeds found nothing: $(tail -n 2 "$work/sw_$bug.log")"
  crash=$(grep -l . "$work/found_$bug"/*.pb 2> /dev/null | head -n 1)
  [ -n "$crash" ] || fail "poolkv_bug_$bug: no crash file"
  "$V" replay -q "$crash" > "$work/orig_$bug.log" 2>&1
  inv=$(sed -n 's/.*-> FAILED \([a-z_]*\).*/\1/p' "$work/orig_$bug.log")
  "$V" replay "$crash" 2>&1 | grep -q "FAILURE.*$inv" && "$V" replay "$crash" 2>&1 | grep -q "$what" ||
    fail "poolkv_bug_$bug: the report does not say '$what': $(grep -m1 FAIL "$work/orig_$bug.log")"
  "$V" minimize "$crash" -o "$work/min_$bug.pb" --max-tries 150 -q > "$work/min_$bug.log" 2>&1 ||
    fail "poolkv_bug_$bug: minimize: $(tail -n 3 "$work/min_$bug.log")"
  before=$("$V" show "$crash" 2> /dev/null | grep -c "^steps {")
  after=$("$V" show "$work/min_$bug.pb" 2> /dev/null | grep -c "^steps {")
  [ "$after" -le "$before" ] || fail "poolkv_bug_$bug: minimize grew $before steps to $after"
  c=$("$V" replay -q "$work/min_$bug.pb" 2>&1 | sed -n "s/.*hash \([0-9a-f]*\) -> FAILED $inv.*/\1/p")
  [ -n "$c" ] || fail "poolkv_bug_$bug: the minimized scenario does not fail with $inv"
  a=$c x=$c
  LF=$B/fuzz/poolkv_bug_${bug}_fuzzer AF=$B/fuzz/poolkv_bug_${bug}_afl
  [ ! -x "$LF" ] || a=$(hash_of "$LF" "$work/min_$bug.pb")
  [ ! -x "$AF" ] || x=$(hash_of "$AF" "$work/min_$bug.pb")
  [ "$a" = "$c" ] && [ "$x" = "$c" ] ||
    fail "poolkv_bug_$bug: hash $c in the CLI, '$a' in libFuzzer, '$x' in AFL++"
  "$K" replay -q "$work/min_$bug.pb" > /dev/null 2>&1 ||
    fail "poolkv_bug_$bug: the correct poolkv fails the minimized scenario"
  ok "poolkv_bug_$bug: $inv from the sweep over seeds $seeds, minimized to $after of $before steps, hash $c in all binaries"
done
finish
