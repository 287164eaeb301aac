#!/bin/sh
# Programs built on event-loop libraries linked unmodified from Debian's
# static archives, as simulated nodes (examples/programs/evquorum: a
# replicated register store on libevent; examples/programs/uvlog: a
# primary-backup log on libuv):
#   - the library's own loop runs inside the node (libevent's epoll
#     backend, timers and bufferevents; libuv's TCP handles, timers, and
#     uv_fs_* with fsync on its thread pool, whose threads are coroutines);
#   - the correct program passes a long sweep under network, disk, clock,
#     crash and allocation faults;
#   - each planted bug is found (evquorum's and uvlog's partial reads by
#     the sweep; uvlog's early answer, which needs a disk stall, a write and
#     a crash of the primary in one window, on its regression scenario),
#     minimized, and replays with the same trace hash in the command line,
#     libFuzzer and AFL++ binaries.
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
"$E" sweep --seeds 1-2000 -q > "$work/clean.log" 2>&1 ||
  fail "the correct evquorum failed the sweep: $(tail -n 3 "$work/clean.log")"
ok "the correct evquorum passes 2,000 random scenarios"
program_bug "$B" evquorum no_writeback 210-220 "not linearizable"

U=$B/bin/simfuzz-uvlog
[ -x "$U" ] || fail "no $U (libuv1-dev's static archive missing at configure time?)"
"$U" replay "$SRC/examples/programs/kvstore/corpus/writes.textproto" > "$work/uv.log" 2>&1 ||
  fail "uvlog on its seed: $(tail -n 3 "$work/uv.log")"
grep -q "n0  thread       spawn t4 by t0" "$work/uv.log" && grep -q "n0  disk-sync" "$work/uv.log" ||
  fail "libuv's thread pool did not write and sync the log: $(grep -m 3 thread "$work/uv.log")"
ok "libuv runs in the nodes: uv_fs_* on its thread pool of 4 coroutine threads"
"$U" sweep --seeds 1-2000 -q > "$work/uvclean.log" 2>&1 ||
  fail "the correct uvlog failed the sweep: $(tail -n 3 "$work/uvclean.log")"
ok "the correct uvlog passes 2,000 random scenarios"
program_bug "$B" uvlog partial 95-105 "not linearizable"
program_bug "$B" uvlog early_ok \
  "@$SRC/tests/regressions/uvlog_bug_early_ok/linearizable--a-primary-that-answered-before-its-own-fsync-lost-the-write-at-a-crash.pb"
finish
