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
# each bug, found in a range of seeds (the search's power is measured in
# docs/BENCHMARKS.md, not here), with what its report says
program_bug "$B" poolkv lock_order 1-40 "a cycle of threads"
program_bug "$B" poolkv lost_update 1-80 "not linearizable"
finish
