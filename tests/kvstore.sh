#!/bin/sh
# The kvstore example (examples/programs/kvstore): an ordinary Linux server
# (TCP, epoll, a write-ahead log with fsync and a renamed snapshot) that
# runs for real and, unmodified, as simulated nodes with a CLIENT.
#   1. for real: three processes on 127.0.0.1 and the kvctl client; the
#      primary restarts on its files and still has what it acknowledged;
#   2. simulated: the correct store passes a sweep; the scenario's faults
#      name servers only, never the client nodes; each planted bug is
#      found by the sweep (the realtime one: its regression scenario),
#      minimized, and replays with the same trace hash in the command line,
#      libFuzzer and AFL++ binaries.
# usage: kvstore.sh BUILD_DIR
T_NAME=kvstore
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
B=$(cd "$1" && pwd)
for t in kvstore_server kvctl simfuzz-kvstore simfuzz-kvstore_bug_dirsync \
  simfuzz-kvstore_bug_ack_early simfuzz-kvstore_bug_realtime simfuzz-kvstore_bug_partial; do
  [ -x "$B/bin/$t" ] || fail "no $B/bin/$t"
done
in_empty_dir

# 1. for real
pids=""
stop_servers() {
  for p in $pids; do kill "$p" 2> /dev/null; done
  for p in $pids; do wait "$p" 2> /dev/null; done
  pids=""
}
trap 'stop_servers' EXIT
start_server() { # K ADDRS...: node K in $work/real/nK
  k=$1
  shift
  mkdir -p "$work/real/n$k"
  (cd "$work/real/n$k" && exec "$B/bin/kvstore_server" "$k" "$@" > out.log 2>&1) &
  pids="$pids $!"
}
kv() { "$B/bin/kvctl" "127.0.0.1:$port" "$@" 2> "$work/kvctl.err"; }
started=0
for try in 1 2 3 4 5; do # a free port, three in a row
  port=$((20000 + ($$ * 7 + try * 997) % 40000))
  addrs="127.0.0.1:$port 127.0.0.1:$((port + 1)) 127.0.0.1:$((port + 2))"
  # shellcheck disable=SC2086
  for k in 0 1 2; do start_server $k $addrs; done
  sleep 0.3
  if [ "$(kv PUT 1 11)" = OK ]; then
    started=1
    break
  fi
  stop_servers
  rm -rf "$work/real"
done
[ $started = 1 ] || fail "real servers did not answer: $(cat "$work/real/n0/out.log" "$work/kvctl.err" 2> /dev/null)"
for i in 2 3 4 5 6 7 8 9; do
  [ "$(kv PUT "$i" "$((i * 11))")" = OK ] || fail "real PUT $i: $(cat "$work/kvctl.err")"
done
[ "$(kv GET 5)" = "VAL 55" ] || fail "real GET 5: $(kv GET 5)"
# a backup answers reads once it holds a lease (it asks every 200 ms)
for i in 1 2 3 4 5 6 7 8 9 10; do
  got=$("$B/bin/kvctl" "127.0.0.1:$((port + 1))" GET 5 2> /dev/null)
  [ "$got" = NOLEASE ] || break
  sleep 0.2
done
[ "$got" = "VAL 55" ] || fail "real GET 5 at a backup: '$got'"
[ -s "$work/real/n0/snap" ] && [ -s "$work/real/n1/wal" ] ||
  fail "no snapshot on the primary or log on a backup: $(ls "$work/real/n0" "$work/real/n1")"
# the primary stops and starts again on its files
first=$(echo "$pids" | awk '{print $1}')
kill "$first" && wait "$first" 2> /dev/null
# shellcheck disable=SC2086
start_server 0 $addrs
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do # it answers once its old leases are over
  got=$(kv GET 9)
  [ "$got" = NOLEASE ] || break
  sleep 0.2
done
[ "$got" = "VAL 99" ] && [ "$(kv GET 1)" = "VAL 11" ] ||
  fail "after the primary's restart: GET 9 '$got', GET 1 '$(kv GET 1)'"
stop_servers
ok "for real: 3 processes on 127.0.0.1; kvctl writes, reads at the primary and at a backup; the primary restarts on its files"

# 2. simulated
K=$B/bin/simfuzz-kvstore
"$K" sweep --seeds 1-2000 -q > "$work/clean.log" 2>&1 ||
  fail "the correct kvstore failed the sweep: $(tail -n 3 "$work/clean.log")"
ok "the correct kvstore passes 2,000 random scenarios"
# its protocol written as an adapter target (the yardstick of
# bench/program_vs_adapter.sh) passes them too, on the same scenarios
KA=$B/bin/simfuzz-kvstore_adapter
if [ -x "$KA" ]; then
  "$KA" sweep --seeds 1-2000 -q > "$work/adapter.log" 2>&1 ||
    fail "the kvstore adapter failed the sweep: $(tail -n 3 "$work/adapter.log")"
  ok "the kvstore protocol as an adapter target passes them too"
fi
# the scenario's faults never name a client node: node numbers 3 and 4 of
# a 3-node scenario are the servers 0 and 1, not the clients (n3, n4)
{ echo "version: 1"; echo "nodes: 3"
  echo "steps { at_us: 100000 op { node: 0 op: 0 key: 1 count: 6 interval_us: 30000 } }"
  echo "steps { at_us: 150000 crash { node: 3 } }"
  echo "steps { at_us: 160000 isolate { node: 4 } }"
  echo "steps { at_us: 400000 restart { node: 3 } }"
  echo "steps { at_us: 600000 liveness { } }"; } > "$work/clients.txt"
"$K" replay "$work/clients.txt" > "$work/clients.log" 2>&1 && grep -q "n0  crash" "$work/clients.log" &&
  ! grep -qE "n[34]  (crash|isolate)" "$work/clients.log" && grep -q "n3  send" "$work/clients.log" ||
  fail "faults on client nodes: $(grep -E "crash|isolate|->" "$work/clients.log" | tail -n 5)"
ok "the scenario's faults name servers only; the clients go on"
# end checks on the nodes' files (CHECKS kvcheck.c): the dirsync bug's
# lost rename leaves a hole in the primary's log, seen in its files at the
# end of a run where the history shows nothing
D=$B/bin/simfuzz-kvstore_bug_dirsync
"$D" gen 75 -o "$work/hole.pb" > /dev/null 2>&1 && "$D" replay -q "$work/hole.pb" > "$work/hole.log" 2>&1
grep -q "FAILED primary_log_has_no_hole" "$work/hole.log" ||
  fail "the end check on the files: $(tail -n 2 "$work/hole.log")"
ok "an end check reads the nodes' files: the lost rename's hole in the primary's log"

# each bug, found by the sweep in a range of seeds (the search's power is
# measured in docs/BENCHMARKS.md, not here), or, for realtime, on its
# regression scenario (the sweep needs about 400,000 runs, too many for a
# test; that scenario was written by hand)
program_bug "$B" kvstore dirsync 885-895
program_bug "$B" kvstore ack_early 1800-1810
program_bug "$B" kvstore partial 1-20
program_bug "$B" kvstore realtime \
  "@$SRC/tests/regressions/kvstore_bug_realtime/linearizable--a-backup-cut-off-after-its-clock-stepped-back-reads-past-its-lease.pb"
finish
