#!/bin/sh
# Crash isolation of the campaign tools: a system under test that aborts,
# crashes, hangs, blows up its memory, exits, fails an assert() or floods
# its output (tests/targets/misbehave.c) never takes sweep, triage or
# minimize down; each run is recorded with its own signature, and a sweep
# stopped by SIGINT or SIGTERM prints its summary and leaves no process.
# Usage: tests/isolation.sh BUILD_DIR
set -u
B=$1
S="$B/bin/simfuzz-misbehave"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
nbad=0
ok() { echo "ok: $*"; }
bad() { nbad=$((nbad + 1)); echo "FAIL: $*"; }
# The time limit is what an endless loop costs; everything else must finish
# well within it however loaded the machine is (a memory blow-up must reach
# the memory limit first; 4 MiB of output must be drained): 2 s was within
# reach of a loaded machine under ASan, and a serial ctest once failed.
LIM="--timeout 8 --rss-limit-mb 400"
LOOP="--timeout 2 --rss-limit-mb 400" # the endless loop alone

# ---- triage: one signature per kind of misbehaviour ----
expect() { # op-code expected-triage-output-pattern what
  printf 'version: 1\nsteps { at_us: 1000 op { op: %d } }\n' "$1" > "$work/k$1.txt"
  "$B/bin/simfuzz" encode "$work/k$1.txt" -o "$work/k$1.pb" 2> /dev/null
  lim=$LIM
  [ "$1" = 3 ] && lim=$LOOP
  # shellcheck disable=SC2086 # lim holds two options
  out=$("$S" triage $lim "$work/k$1.pb" 2>&1)
  case "$out" in
    *"$2"*) ok "triage: $3 -> $(echo "$out" | sed 's/^[^:]*: //')" ;;
    *) bad "triage of $3: got '$out', want '$2'" ;;
  esac
}
expect 1 ": crash: signal 6" "abort()"
expect 2 ": crash: " "a NULL store"
expect 3 ": timeout" "an endless loop"
expect 4 ": out-of-memory" "a memory blow-up"
expect 5 ": crash: exit 3" "exit(3)"
expect 6 ": invariant assert at tests/targets/misbehave.c:" "a failed assert()"
expect 7 ": ok" "4 MiB of output (no SIGPIPE, no failure)"
expect 8 ": invariant no_op_eight at tests/targets/misbehave.c:" "a failed invariant"

# ---- replay of a crash: the timeline so far, then a crash report ----
# replay runs the system in-process: a crash must not take the buffered
# timeline with it, and must say where in the run it happened.
for k in 1:6 2:11; do
  op=${k%:*}; sig=${k#*:}
  "$S" replay "$work/k$op.pb" > "$work/r$op.out" 2> "$work/r$op.err"
  rc=$?
  out=$(cat "$work/r$op.out")
  case "$out" in
    *"n0  boot"*"==simfuzz== CRASH in target misbehave: "*" on node n0 at t=0.001000s"*"last events:"*"==simfuzz== replay: simfuzz-misbehave replay $work/k$op.pb"*)
      crashed=1 ;;
    *) crashed=0 ;;
  esac
  # a sanitizer reports a SIGSEGV itself (and exits 1), the report follows
  if [ "$crashed" = 1 ] && [ "$rc" != 0 ] \
     && { grep -q "CRASH in target misbehave: signal $sig " "$work/r$op.out" \
          || { [ "$sig" = 11 ] && grep -q "the sanitizer's error above" "$work/r$op.out"; }; } \
     && grep -q "k$op.pb: FAILED crash: " "$work/r$op.err"; then
    ok "replay of a run that dies of signal $sig: timeline, crash report, exit $rc"
  else
    bad "replay of a run that dies of signal $sig: exit $rc"; cat "$work/r$op.out" "$work/r$op.err"
  fi
done

# a crash in the run's teardown (op 778: the target's destroy aborts), when
# the world's events may already be freed: a report without them
printf 'version: 1\nsteps { at_us: 1000 op { op: 778 } }\n' > "$work/k778.txt"
"$B/bin/simfuzz" encode "$work/k778.txt" -o "$work/k778.pb" 2> /dev/null
"$S" replay "$work/k778.pb" > "$work/r778.out" 2> "$work/r778.err"
rc=$?
if [ "$rc" != 0 ] && grep -q "CRASH in target misbehave: signal 6 in .* (in the run's teardown" "$work/r778.out" \
   && grep -q "replay: simfuzz-misbehave replay $work/k778.pb" "$work/r778.out" \
   && grep -q "k778.pb: FAILED crash: signal 6 in .*(in the run's teardown" "$work/r778.err"; then
  ok "replay of a run that dies in its teardown: a report without its events, exit $rc"
else
  bad "replay of a run that dies in its teardown: exit $rc"; cat "$work/r778.out" "$work/r778.err"
fi

# ---- check-determinism of a crash: runs that die are compared too ----
# The runs happen in a child: a crash is the run's outcome (how it died,
# after which trace record), the same in every run and fresh process; a
# crash in a later run only (op 777: state that survives a run) is a mismatch.
printf 'version: 1\nsteps { at_us: 1000 op { op: 777 } }\n' > "$work/k9.txt"
"$B/bin/simfuzz" encode "$work/k9.txt" -o "$work/k9.pb" 2> /dev/null
for k in 1:0:"died of signal 6 in " 2:0:"died of" 5:0:"died with exit status 3 after trace record" \
         9:3:"MISMATCH in-process: run 1 ended"; do
  op=${k%%:*}; rest=${k#*:}; want=${rest%%:*}; text=${rest#*:}
  "$S" check-determinism "$work/k$op.pb" > "$work/d$op.out" 2> "$work/d$op.err"
  rc=$?
  line="$work/k$op.pb: deterministic crash: 3 runs in child processes and 3 in fresh processes each "
  [ "$op" = 9 ] && line="$work/k9.pb: MISMATCH in-process: run 1 ended (trace hash "
  if [ "$rc" = "$want" ] && grep -qF "$line" "$work/d$op.out" && grep -qF "$text" "$work/d$op.out" \
     && { [ "$op" != 9 ] || grep -qF "; run 2 died of signal 6 in " "$work/d$op.out"; }; then
    ok "check-determinism of a run that dies (op $op): exit $rc, $(sed 's/^[^:]*: //' "$work/d$op.out")"
  else
    bad "check-determinism of a run that dies (op $op): exit $rc"; cat "$work/d$op.out" "$work/d$op.err"
  fi
done

# ---- minimize keeps a crash's signature ----
# shellcheck disable=SC2086
"$S" minimize -q $LIM --max-tries 50 "$work/k1.pb" -o "$work/min.pb" > "$work/min.log" 2>&1
# shellcheck disable=SC2086
if [ $? = 0 ] && "$S" triage $LIM "$work/min.pb" | grep -q ": crash: signal 6"; then
  ok "minimize of an aborting run keeps its signature"
else
  bad "minimize of an aborting run"; cat "$work/min.log"
fi

# ---- sweep: every kind in one campaign, and the campaign finishes ----
# shellcheck disable=SC2086
"$B/bin/simfuzz" --target misbehave sweep --seeds 0-99 $LIM -q -o "$work/sweep" > "$work/sw" 2>&1
rc=$?
if [ $rc = 1 ] && grep -q "^sweep: 100 seeds (0..99)" "$work/sw"; then
  ok "sweep of 100 seeds finishes (exit 1)"
else
  bad "sweep: exit $rc"; tail -5 "$work/sw"
fi
for kind in "FAILED crash: signal 6" "FAILED timeout" "FAILED out-of-memory" "FAILED crash: exit 3" \
            "FAILED assert: Assertion" "FAILED no_op_eight"; do
  n=$(grep -c "$kind" "$work/sw")
  [ "$n" -gt 0 ] && ok "sweep: $n x '$kind'" || bad "sweep: no '$kind'"
done
nf=$(grep -c "FAILED" "$work/sw"); ns=$(ls "$work/sweep" | wc -l)
[ "$nf" = "$ns" ] && ok "sweep saved all $ns failures" || bad "sweep: $nf failures, $ns saved"
f=$(grep "FAILED timeout" "$work/sw" | head -1 | sed 's/^seed \([0-9]*\):.*/\1/')
# shellcheck disable=SC2086
"$S" triage $LOOP "$work/sweep/misbehave-seed-$f.pb" | grep -q ": timeout" \
  && ok "a seed recorded as a timeout triages as one" || bad "timeout seed $f does not triage as a timeout"

# ---- a stopped sweep: summary, exit status, no process left ----
for sig in INT:2 TERM:15; do
  num=${sig#*:}; sig=${sig%:*}
  "$B/bin/simfuzz-pbstore" sweep --seeds 0-100000000 > "$work/stop.$sig" 2>&1 &
  pid=$!
  sleep 2
  kill -"$sig" "$pid"
  wait "$pid"
  rc=$?
  want=$((128 + num))
  sleep 0.2
  left=$(pgrep -f "simfuzz-pbstore sweep --seeds 0-100000000" | wc -l)
  if [ $rc = "$want" ] && grep -q "^sweep: interrupted by signal $num after [0-9]* seeds" "$work/stop.$sig" \
     && [ "$left" = 0 ]; then
    ok "SIG$sig: summary '$(grep '^sweep: interrupted' "$work/stop.$sig")', exit $rc, no worker left"
  else
    bad "SIG$sig: exit $rc (want $want), $left processes left"; tail -3 "$work/stop.$sig"
  fi
done
echo "isolation: $nbad failed"
[ $nbad = 0 ]
