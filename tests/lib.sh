# Shared by the shell tests. A test sets T_NAME, then sources this file:
#     T_NAME=e2e_zoo; . "$(dirname "$0")/lib.sh"
# It gets SRC (the source tree), work (a temporary directory removed on
# exit, after running T_CLEANUP if set), fail MSG (one line, exit 1),
# ok/bad MSG (counted, each line with the seconds since the last; finish
# prints the tally and fails if any was bad)
# and replays_as BIN FILE WHAT (the CLI binary replays FILE to the failure
# WHAT with exit status 1, or the test fails). A test that calls
# in_empty_dir runs from an empty directory of its own from then on, and
# finish fails if a tool wrote anything there (tools write where told).
# build_outside BUILD_DIR PROJECT OUT PREFIX [CMAKE_ARG...] configures and
# builds an outside project in OUT against the package in PREFIX, with the
# compiler and generator of BUILD_DIR (its logs' tails on failure, status 1).
# shellcheck shell=sh
# shellcheck disable=SC2034 # used by the tests that source this file
SRC=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
T_CLEANUP=${T_CLEANUP:-}
# shellcheck disable=SC2064 # expand now: the cleanup is fixed at start
trap "${T_CLEANUP:+$T_CLEANUP;} rm -rf '$work'" EXIT
t_ok=0
t_bad=0
t_mark=$(date +%s) # each check's line tells how long it took since the last
t_took() { # sets t_s: "[N s]" since the last check
  t_now=$(date +%s)
  t_s="[$((t_now - t_mark)) s]"
  t_mark=$t_now
}
# fake_target BUILD NAME BODY: BUILD/bin/simfuzz-craft_NAME, a shell script
# standing in for a target of examples/craft, whose every command runs BODY
fake_target() {
  mkdir -p "$1/bin"
  printf '#!/bin/sh\n%s\n' "$3" > "$1/bin/simfuzz-craft_$2"
  chmod +x "$1/bin/simfuzz-craft_$2"
}
fail() {
  t_took
  echo "$T_NAME: FAIL: $* $t_s"
  exit 1
}
ok() {
  t_ok=$((t_ok + 1))
  t_took
  echo "ok: $* $t_s"
}
bad() {
  t_bad=$((t_bad + 1))
  t_took
  echo "FAIL: $* $t_s"
}
in_empty_dir() {
  T_CWD=$work/cwd
  mkdir -p "$T_CWD" && cd "$T_CWD" || fail "cannot enter $T_CWD"
}
finish() {
  if [ -n "${T_CWD:-}" ]; then
    t_left=$(ls -A "$T_CWD")
    [ -z "$t_left" ] || bad "written into the directory the tools ran in: $t_left"
  fi
  echo "$T_NAME: $t_ok ok, $t_bad failed"
  [ "$t_bad" = 0 ]
}
replays_as() {
  "$1" replay -q "$2" > "$work/replays_as.log" 2>&1
  r_rc=$?
  [ "$r_rc" -eq 1 ] && grep -q "FAILED $3" "$work/replays_as.log" ||
    fail "$(basename "$1") replay $(basename "$2"): exit $r_rc, want 1 and $3: $(head -c 300 "$work/replays_as.log")"
}
build_outside() {
  b_cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$1/CMakeCache.txt")
  b_gen=$(sed -n 's/^CMAKE_GENERATOR:[A-Z]*=//p' "$1/CMakeCache.txt")
  b_src=$2; b_out=$3; b_prefix=$4
  shift 4
  if ! cmake -S "$b_src" -B "$b_out" -G "$b_gen" -DCMAKE_C_COMPILER="$b_cc" \
         -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_PREFIX_PATH="$b_prefix" "$@" \
         > "$b_out.cfg.log" 2>&1 ||
     ! cmake --build "$b_out" > "$b_out.build.log" 2>&1; then
    tail -n 30 "$b_out.cfg.log" "$b_out.build.log"
    return 1
  fi
}
# program_bug B NAME BUG SEEDS [WHAT]: the program target B/bin/simfuzz-NAME_bug_BUG
# fails in the sweep over SEEDS (or, for SEEDS @FILE, on that regression
# scenario), with WHAT in its report if given; the failure minimizes to no
# more steps, replays to the same invariant with the same trace hash in the
# command line, libFuzzer and AFL++ binaries, and the correct program
# B/bin/simfuzz-NAME passes the minimized scenario. Prints the ok line.
program_bug() {
  pb_v=$1/bin/simfuzz-$2_bug_$3 pb_k=$1/bin/simfuzz-$2 pb_n=$2_bug_$3
  case $4 in
    @*) pb_crash=${4#@} pb_from="its regression scenario" ;;
    *)
      "$pb_v" sweep --seeds "$4" -o "$work/found_$pb_n" -q > "$work/sw_$pb_n.log" 2>&1
      [ $? = 1 ] || fail "$pb_n: the sweep over $4 found nothing: $(tail -n 2 "$work/sw_$pb_n.log")"
      pb_crash=$(grep -l . "$work/found_$pb_n"/*.pb 2> /dev/null | head -n 1)
      pb_from="the sweep over seeds $4"
      ;;
  esac
  [ -n "$pb_crash" ] || fail "$pb_n: no crash file"
  "$pb_v" replay "$pb_crash" > "$work/orig_$pb_n.log" 2>&1
  pb_inv=$(sed -n 's/.*-> FAILED \([a-z_]*\).*/\1/p' "$work/orig_$pb_n.log")
  [ -z "${5:-}" ] || grep -q "$5" "$work/orig_$pb_n.log" ||
    fail "$pb_n: the report does not say '$5': $(grep -m1 FAIL "$work/orig_$pb_n.log")"
  "$pb_v" minimize "$pb_crash" -o "$work/min_$pb_n.pb" --max-tries 150 -q > "$work/min_$pb_n.log" 2>&1 ||
    fail "$pb_n: minimize: $(tail -n 3 "$work/min_$pb_n.log")"
  pb_before=$("$pb_v" show "$pb_crash" 2> /dev/null | grep -c "^steps {")
  pb_after=$("$pb_v" show "$work/min_$pb_n.pb" 2> /dev/null | grep -c "^steps {")
  [ "$pb_after" -le "$pb_before" ] || fail "$pb_n: minimize grew $pb_before steps to $pb_after"
  pb_c=$("$pb_v" replay -q "$work/min_$pb_n.pb" 2>&1 | sed -n "s/.*hash \([0-9a-f]*\) -> FAILED $pb_inv.*/\1/p")
  [ -n "$pb_c" ] || fail "$pb_n: the minimized scenario does not fail with $pb_inv"
  pb_a=$pb_c pb_x=$pb_c
  pb_lf=$1/fuzz/${pb_n}_fuzzer pb_af=$1/fuzz/${pb_n}_afl
  [ ! -x "$pb_lf" ] || pb_a=$(pb_hash "$pb_lf" "$work/min_$pb_n.pb")
  [ ! -x "$pb_af" ] || pb_x=$(pb_hash "$pb_af" "$work/min_$pb_n.pb")
  [ "$pb_a" = "$pb_c" ] && [ "$pb_x" = "$pb_c" ] ||
    fail "$pb_n: hash $pb_c in the CLI, '$pb_a' in libFuzzer, '$pb_x' in AFL++"
  "$pb_k" replay -q "$work/min_$pb_n.pb" > /dev/null 2>&1 ||
    fail "$pb_n: the correct $2 fails the minimized scenario"
  ok "$pb_n: $pb_inv from $pb_from, minimized to $pb_after of $pb_before steps, hash $pb_c in all binaries"
}
# pb_hash BIN FILE: the trace hash of FILE's run in a fuzzer binary
pb_hash() {
  "$@" 2>&1 | sed -n 's/^==simfuzz== scenario: .*trace hash \([0-9a-f]*\)$/\1/p' | head -n 1
}
