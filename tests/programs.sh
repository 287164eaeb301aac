#!/bin/sh
# Unmodified C programs as nodes (simfuzz_add_program): tests/programs/probe.c,
# tests/programs/tcpecho.c, tests/programs/renamer.c and examples/programs/beacon
# run as simulated nodes, each with its own
# globals, errno and heap, restarted from the program's initial values; a
# call simfuzz refuses, an exit status, abort() and a failed assert() fail
# the run with what happened; atomic operations are switch points of a
# node's threads; AddressSanitizer sees a program's overflow
# on the node's own stack (sanitized builds); the beacon's planted bug is found by the sweep,
# minimized, and replays with the same trace hash; runs are deterministic.
# usage: programs.sh BUILD_DIR [SANITIZED(ON/OFF)]
T_NAME=programs
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
B=$(cd "$1" && pwd)
P=$B/bin/simfuzz-probe
BE=$B/bin/simfuzz-beacon
BB=$B/bin/simfuzz-beacon_bug_in_order
for t in "$P" "$BE" "$BB" "$B/bin/simfuzz-tcpecho" "$B/bin/simfuzz-renamer"; do
  [ -x "$t" ] || fail "no $t"
done
in_empty_dir
scenario() { # NAME NODES [STEP...]: a scenario file $work/NAME.pb
  s_name=$1 s_nodes=$2
  shift 2
  { echo "version: 1"; echo "nodes: $s_nodes"; for st in "$@"; do echo "steps { $st }"; done; } \
    > "$work/$s_name.txt"
  "$P" encode "$work/$s_name.txt" -o "$work/$s_name.pb" > "$work/enc.log" 2>&1 ||
    fail "encode $s_name: $(cat "$work/enc.log")"
}

# 1. each node's globals (.data and .bss), errno and heap are its own, for
# 2 s of sleeps and wake-ups; a crashed node restarts from the initial values
scenario own 3 "at_us: 300000 crash { node: 1 }" "at_us: 450000 restart { node: 1 }"
"$P" replay -q "$work/own.pb" > "$work/own.log" 2>&1 &&
  grep -q -- "-> ok" "$work/own.log" || fail "own state: $(cat "$work/own.log")"
ok "3 nodes keep their own globals, errno and heap; a restart starts afresh"
# (the sweep's scenarios with 3 nodes: the probe's mode is its node count)
for seed in $(seq 1 15); do
  "$P" gen "$seed" -o "$work/g.pb" > /dev/null 2>&1 && "$P" show "$work/g.pb" 2> /dev/null |
    sed '/^nodes:/d; s/^version: 1$/version: 1\nnodes: 3/' > "$work/g.txt" &&
    "$P" encode "$work/g.txt" -o "$work/g3.pb" > /dev/null 2>&1 || fail "seed $seed: gen/show/encode"
  "$P" replay -q "$work/g3.pb" > "$work/g.log" 2>&1 ||
    fail "the probe's own-state checks, seed $seed with 3 nodes: $(tail -n 3 "$work/g.log")"
done
ok "and so in 15 random scenarios with 3 nodes (crashes, restarts, pauses, clocks)"

# TCP: an epoll server (edge-triggered, non-blocking) and clients that check
# every echo byte for byte; a closed port refuses; resets and crashes are
# retried, never wrong bytes
T=$B/bin/simfuzz-tcpecho
scenario tcp 3 "at_us: 400000 crash { node: 0 }" "at_us: 600000 restart { node: 0 }" \
  "at_us: 900000 reset { a: 1 b: 0 }" "at_us: 1100000 partition { a: 1 b: 6 }" \
  "at_us: 1300000 heal { }"
"$T" replay "$work/tcp.pb" > "$work/tcp.log" 2>&1 && grep -q -- "-> ok" "$work/tcp.log" &&
  [ "$(grep -c "conn-up" "$work/tcp.log")" -gt 10 ] || fail "tcpecho: $(tail -n 5 "$work/tcp.log")"
ok "TCP: an epoll echo server and its clients through a crash, a reset and a partition"
"$T" sweep --seeds 1-20 -q > "$work/tcpsw.log" 2>&1 || fail "tcpecho sweep: $(tail -n 3 "$work/tcpsw.log")"
ok "TCP: and through 20 random scenarios"

# files: a rename survives a crash only after an fsync of its directory
# (node 1 does it, node 0 forgets); nothing is written on the host
R=$B/bin/simfuzz-renamer
for n in 0 1; do
  scenario "rename$n" 2 "at_us: 500000 crash { node: $n }" "at_us: 600000 restart { node: $n }"
  "$R" replay "$work/rename$n.pb" > "$work/rename$n.log" 2>&1
done
grep -q "n0  FAIL *assert: Assertion .*the rename survived the crash" "$work/rename0.log" &&
  grep -q -- "-> ok" "$work/rename1.log" ||
  fail "rename and crash: $(tail -n 3 "$work/rename0.log" "$work/rename1.log")"
[ ! -e data ] && [ ! -e booted ] && [ ! -e "$work/data" ] || fail "a program wrote a host file"
ok "files: a rename is lost at a crash without an fsync of its directory, kept with one"

# 2. what a program may not do fails the run, saying what it did
scenario fork 1
replays_as "$P" "$work/fork.pb" unsupported_call
"$P" replay "$work/fork.pb" > "$work/fork.log" 2>&1
grep -q "FAIL *unsupported_call: the program called fork(), which simfuzz does not model" \
  "$work/fork.log" || fail "fork: $(cat "$work/fork.log")"
ok "fork() fails the run and names the call"
scenario unlisted 6
"$P" replay "$work/unlisted.pb" > "$work/unlisted.log" 2>&1
grep -q "FAIL *unsupported_call: the program called gethostname(), which simfuzz does not model" \
  "$work/unlisted.log" || fail "a call the table does not list: $(tail -n 3 "$work/unlisted.log")"
ok "a call the table neither models nor lists as pure (gethostname) fails the run, named"
scenario exit 2
replays_as "$P" "$work/exit.pb" exit
"$P" replay "$work/exit.pb" > "$work/exit.log" 2>&1
grep -q "FAIL *exit: node 1 exited with status 3" "$work/exit.log" || fail "exit: $(cat "$work/exit.log")"
ok "an exit status other than 0 fails the run"
scenario abort 4
replays_as "$P" "$work/abort.pb" abort
ok "abort() fails the run"
if [ "${2:-OFF}" = ON ]; then
  scenario overflow 5
  "$P" triage "$work/overflow.pb" > "$work/ov.log" 2>&1
  grep -q "stack-buffer-overflow" "$work/ov.log" || fail "ASan on a program's fiber: $(cat "$work/ov.log")"
  ok "AddressSanitizer reports an overflow on a program node's own stack"
fi

# 2b. nothing reaches the host: program targets run under a seccomp filter
# that kills the process at any network call or change to the host's file
# system (tests/no_host_io.c); first shown to stop a real write here
NH=$B/tests/no_host_io
"$NH" true 2> "$work/nh.log"
nh=$?
if [ "$nh" = 77 ]; then
  echo "skip: $(cat "$work/nh.log")"
else
  "$NH" sh -c ": > '$work/escaped'" 2> /dev/null
  [ $? = 159 ] && [ ! -e "$work/escaped" ] || fail "no_host_io let a write through"
  host_clean() { # LOG: only the tool's own lines, and no death by a signal
    ! grep -v "^sweep: \|^seed [0-9]*: FAILED assert: " "$1" | grep -q . ||
      fail "under no_host_io: $(grep -v "^sweep: " "$1" | head -n 3)"
  }
  # (the probe's whole surface: stdio on files, getaddrinfo, pipes, ...)
  for f in own g3; do
    "$NH" "$P" replay -q "$work/$f.pb" > "$work/nh-$f.log" 2>&1 ||
      fail "the probe under no_host_io: $(tail -n 3 "$work/nh-$f.log")"
  done
  for t in tcpecho beacon kvstore; do
    [ -x "$B/bin/simfuzz-$t" ] || continue
    "$NH" "$B/bin/simfuzz-$t" sweep --seeds 1-100 -q > "$work/nh-$t.log" 2>&1 ||
      fail "$t under no_host_io: $(tail -n 3 "$work/nh-$t.log")"
    host_clean "$work/nh-$t.log"
  done
  # the renamer's own fsync assertions fail where the disk fails it: fine
  "$NH" "$R" sweep --seeds 1-100 -q > "$work/nh-renamer.log" 2>&1
  host_clean "$work/nh-renamer.log"
  # and a program's output, there in the timeline, never on the host's terminal
  "$NH" "$P" replay "$work/exit.pb" > "$work/nh-exit.log" 2>&1
  grep -q "^ *[0-9.]*s n1  output  *\"probe 1: exiting with status 3\"" "$work/nh-exit.log" ||
    fail "a program's output line in the timeline: $(cat "$work/nh-exit.log")"
  ok "nothing reaches the host's network or files (a seccomp filter), output is in the timeline"
fi

# 2c. CALL_COST_NS 1000: a program that computes for a millisecond of its
# clock without blocking (one clock_gettime a loop) counts 1,000 loops, and
# spends that millisecond at its first sleep
SP=$B/bin/simfuzz-spinner
scenario spin 1
"$SP" replay "$work/spin.pb" > "$work/spin.log" 2>&1 &&
  grep -q "n0  output  *\"spins 1000\"" "$work/spin.log" &&
  grep -q "^ *0\.001003s n0  timer" "$work/spin.log" ||
  fail "a call's cost: $(grep -v " timer " "$work/spin.log" | tail -n 3)"
ok "CALL_COST_NS: a program's calls cost its clock time, spent at its next wait"

# 2d. atomic operations are switch points (program_atomics.h, forced into a
# program's sources): three threads that count by an atomic_load then an
# atomic_store lose updates in some schedules, which nothing else in their
# loop could show; the four counts by single atomic operations (fetch_add, a
# compare-and-swap loop, a spin lock on an atomic_flag, __sync_fetch_and_add)
# keep every update in every schedule; the same failure has the same trace
# hash in the command line, libFuzzer and AFL++ binaries
AT=$B/bin/simfuzz-atomics
"$AT" sweep --seeds 1-40 -o "$work/at" -q > "$work/at.log" 2>&1
[ $? = 1 ] || fail "atomics: no update lost in 40 seeds: $(tail -n 3 "$work/at.log")"
n_fail=$(grep -c "FAILED" "$work/at.log")
n_lost=$(grep -c "FAILED assert: Assertion .atomic_load(&by_load_store) ==" "$work/at.log")
[ "$n_fail" -gt 0 ] && [ "$n_fail" = "$n_lost" ] ||
  fail "atomics: $n_fail failures, $n_lost of them the load-then-store count: $(grep FAILED "$work/at.log" | grep -v by_load_store | head -n 2)"
crash=$(find "$work/at" -type f -name '*.pb' | sort | head -n 1)
replays_as "$AT" "$crash" assert
a=$(sed -n 's/.*hash \([0-9a-f]*\) -> FAILED.*/\1/p' "$work/replays_as.log")
for fz in "$B/fuzz/atomics_fuzzer" "$B/fuzz/atomics_afl"; do
  [ -x "$fz" ] || continue
  h=$("$fz" "$crash" 2>&1 | sed -n 's/^==simfuzz== scenario: .*trace hash \([0-9a-f]*\)$/\1/p' | head -n 1)
  [ "$h" = "$a" ] || fail "atomics: $(basename "$fz") replays $(basename "$crash") as '$h', the CLI as '$a'"
done
ok "atomic operations are switch points: a load then a store lost updates in $n_lost of 40 seeds (hash $a everywhere), single operations none"

# 3. the beacon: clean when correct, its planted bug found, minimized and
# replayed with the same trace hash, every run deterministic
"$BE" sweep --seeds 1-150 -q > "$work/be.log" 2>&1 || fail "beacon: $(tail -n 3 "$work/be.log")"
ok "the correct beacon passes 150 random scenarios"
"$BB" sweep --seeds 1-300 -o "$work/found" -q > "$work/bb.log" 2>&1
[ $? = 1 ] || fail "beacon_bug_in_order: the sweep found nothing: $(tail -n 3 "$work/bb.log")"
crash=$(find "$work/found" -type f -name '*.pb' | sort | head -n 1)
[ -n "$crash" ] || fail "no crash file in $work/found: $(ls "$work/found")"
"$BB" minimize "$crash" -o "$work/min.pb" -q > "$work/min.log" 2>&1 || fail "minimize: $(cat "$work/min.log")"
replays_as "$BB" "$work/min.pb" assert
h1=$(sed -n 's/.*hash \([0-9a-f]*\) -> FAILED.*/\1/p' "$work/replays_as.log")
"$BB" check-determinism "$work/min.pb" > "$work/det.log" 2>&1 &&
  grep -q "deterministic.*trace hash $h1" "$work/det.log" || fail "determinism: $(cat "$work/det.log")"
ok "beacon_bug_in_order: found by the sweep, minimized, replays deterministically (hash $h1)"
# the same failure found by libFuzzer replays to the same trace hash in the
# command line, libFuzzer and AFL++ binaries (each compiled the program its
# own way)
LF=$B/fuzz/beacon_bug_in_order_fuzzer AF=$B/fuzz/beacon_bug_in_order_afl
if [ -x "$LF" ]; then
  mkdir -p "$work/lfc" && cp "$B"/corpus/beacon_bug_in_order/*.pb "$work/lfc/"
  "$LF" "$work/lfc" -runs=20000 -seed=3 -artifact_prefix="$work/lf-" > "$work/lf.log" 2>&1
  crash=$(find "$work" -maxdepth 1 -name 'lf-crash-*' | head -n 1)
  [ -n "$crash" ] || fail "libFuzzer found nothing in beacon_bug_in_order: $(tail -n 3 "$work/lf.log")"
  hash_of() { "$@" 2>&1 | sed -n 's/^==simfuzz== scenario: .*trace hash \([0-9a-f]*\)$/\1/p' | head -n 1; }
  a=$(hash_of "$LF" "$crash")
  c=$("$BB" replay -q "$crash" 2>&1 | sed -n 's/.*hash \([0-9a-f]*\) -> FAILED assert.*/\1/p')
  x=$a
  [ ! -x "$AF" ] || x=$(hash_of "$AF" "$crash")
  [ -n "$a" ] && [ "$a" = "$c" ] && [ "$a" = "$x" ] ||
    fail "a program's crash: libFuzzer '$a', CLI '$c', AFL++ '$x'"
  ok "a program's failure found by libFuzzer: hash $a in the CLI, libFuzzer and AFL++ binaries"
fi

# 4. the docs' table of calls is the table of calls.h
sh "$SRC/scripts/program_calls.sh" > "$work/rows"
grep '^| `' "$SRC/docs/programs.md" | cmp -s - "$work/rows" ||
  fail "docs/programs.md's calls differ from harness/program/calls.h (scripts/program_calls.sh)"
ok "docs/programs.md lists the $(wc -l < "$work/rows") calls of calls.h"
finish
