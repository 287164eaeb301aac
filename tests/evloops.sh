#!/bin/sh
# Programs built on event-loop libraries linked unmodified from Debian's
# static archives, as simulated nodes (examples/programs/evquorum: a
# replicated register store on libevent):
#   - the library's own loop runs inside the node (its epoll backend, its
#     timers, its bufferevents over the simulated TCP);
#   - the correct program passes a long sweep under network, disk, clock,
#     crash and allocation faults;
#   - the planted bug is found by the sweep, minimized, and replays with the
#     same trace hash in the command line, libFuzzer and AFL++ binaries.
# usage: evloops.sh BUILD_DIR
T_NAME=evloops
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
B=$(cd "$1" && pwd)
in_empty_dir
E=$B/bin/simfuzz-evquorum
[ -x "$E" ] || fail "no $E (libevent-dev's static archive missing at configure time?)"
"$E" replay "$SRC/examples/programs/kvstore/corpus/writes.textproto" > "$work/ev.log" 2>&1 ||
  fail "evquorum on its seed: $(tail -n 3 "$work/ev.log")"
grep -q 'output *"evquorum: node 2 of 3, on epoll"' "$work/ev.log" ||
  fail "libevent's loop did not start on epoll: $(grep output "$work/ev.log" | head -n 3)"
ok "libevent runs in the nodes, on its epoll backend"
"$E" sweep --seeds 1-5000 -q > "$work/clean.log" 2>&1 ||
  fail "the correct evquorum failed the sweep: $(tail -n 3 "$work/clean.log")"
ok "the correct evquorum passes 5,000 random scenarios"
program_bug "$B" evquorum no_writeback 210-220 "not linearizable"
finish
