#!/bin/sh
# The simfuzz command line on real crash files of the example target:
# replay (timeline, filters, exit statuses), minimize (keeps the failure,
# ends smaller than libFuzzer's own minimization, never touches its input),
# show/encode (round trip with protoc), trace (Chrome JSON, HTML rendered in
# headless Chromium), sweep, check-determinism (catches a nondeterministic
# target), and one-line errors with exit status 2.
# Usage: test_cli.sh BUILD_DIR [SECTION]
#   SECTION: one of sweep replay errors encode minimize triage disk trace
#   determinism help (ctest runs each as cli.SECTION); all when omitted
set -u
B=$1; SECTION=${2:-}
case "$SECTION" in
  "" | sweep | replay | errors | encode | minimize | triage | disk | trace | determinism | help) ;;
  *) echo "test_cli.sh: unknown section '$SECTION'" >&2; exit 2 ;;
esac
want() { [ -z "$SECTION" ] || [ "$SECTION" = "$1" ]; }
SRC=$(cd "$(dirname "$0")/.." && pwd)
S="$B/bin/simfuzz"
T=pbstore_bug_reset_skip
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1"; }
check() { # name, command...: passes when the command succeeds
  name=$1
  shift
  if "$@" > "$work/out" 2>&1; then ok "$name"; else bad "$name"; sed 's/^/     /' "$work/out" | head -20; fi
}
status() { # expected status, command...: prints the status
  want=$1
  shift
  "$@" > "$work/st.out" 2> "$work/st.err"
  echo $? > "$work/st"
  [ "$(cat "$work/st")" = "$want" ]
}
P="-I$SRC/proto $SRC/proto/scenario.proto"

# crash files: a sweep of the planted-bug target finds some
"$S" --target $T sweep --seeds 0-3000 -o "$work" -q > "$work/sweep.log"
rc=$?
crash=$(ls "$work"/$T-seed-*.pb 2>/dev/null | head -1)
if [ "$rc" = 1 ] && [ -n "$crash" ] && grep -q "sweep: 3001 seeds" "$work/sweep.log"; then
  want sweep && ok "sweep finds and saves failures (exit 1)"
else
  bad "sweep finds and saves failures (exit 1)"; exit 1
fi
# a crashing system under test's scenario
cat > "$work/crashy.txt" <<'TXT'
steps { at_us: 1000 op { count: 2 } }
steps { at_us: 2000 heal { } }
steps { at_us: 3000 isolate { node: 1 } }
steps { at_us: 4000 op { count: 1 } }
steps { at_us: 5000 op { count: 4 } }
steps { at_us: 6000 crash { node: 1 } }
TXT
"$S" encode "$work/crashy.txt" -o "$work/crashy.pb" 2>/dev/null
# the minimized crash, for the sections after minimize's (which need a
# smaller scenario that fails the same way, not the smallest: 300 tries)
need_min() {
  [ -s "$work/min.pb" ] ||
    "$S" --target $T minimize -q --max-tries 300 "$crash" -o "$work/min.pb" > /dev/null 2>&1
}

if want sweep; then
check "sweep of the correct target: exit 0" "$S" --target pbstore sweep --seeds 0-500 -q
"$S" --target $T sweep --seeds 0-3000 -o "$work/new-dir" -q > /dev/null
[ -d "$work/new-dir" ] && ls "$work"/new-dir/*.pb > /dev/null 2>&1 && ok "sweep -o creates its directory" \
  || bad "sweep -o creates its directory"
: > "$work/plain-file"
status 2 "$S" --target $T sweep --seeds 0-10 -o "$work/plain-file" -q && \
  [ "$(wc -l < "$work/st.err")" = 1 ] && ok "sweep -o onto a file: one error line, exit 2" \
  || bad "sweep -o onto a file: one error line, exit 2"
fi

# ---- replay ------------------------------------------------------------
if want replay; then
check "replay a failing scenario: exit 1, the report" sh -c "
  \"$S\" --target $T replay '$crash' > '$work/r.txt'; [ \$? = 1 ] &&
  grep -q \"FAILURE in target $T: invariant 'backup_log_is_prefix'\" '$work/r.txt' &&
  grep -q 'steps executed:' '$work/r.txt' && grep -q 'last events:' '$work/r.txt' &&
  grep -q ' FAIL ' '$work/r.txt' && grep -q 'ENTRY idx=' '$work/r.txt'"
check "replay of passing scenarios: exit 0" "$B/bin/simfuzz-pbstore" replay -q \
  "$B"/corpus/pbstore/*.pb "$SRC"/tests/regressions/pbstore/*.pb
check "replay --node 1 --kinds faults shows only those events" sh -c "
  \"$S\" --target $T replay --node 1 --kinds faults '$crash' | sed '/==simfuzz==/,\$d' |
    grep -v ': scenario;' | grep -v ' FAIL ' > '$work/f.txt';
  [ -s '$work/f.txt' ] && ! grep -Eq ' (send|deliver|timer|disk-write|boot) ' '$work/f.txt' &&
  ! grep -v 'n1' '$work/f.txt' | grep -q ."
check "replay --from/--to bound the timeline" sh -c "
  \"$S\" --target $T replay --from 0.5 --to 800ms '$crash' | sed '/==simfuzz==/,\$d' |
    awk '/^ *[0-9]+\\.[0-9]+s /{t=\$1+0; if (t < 0.5 || t > 0.8) { if (\$3 != \"FAIL\") bad=1 }} END {exit bad}'"
check "replay reads text scenarios too" sh -c "
  \"$S\" show '$crash' > '$work/crash.txt' && \"$S\" --target $T replay -q '$work/crash.txt'; [ \$? = 1 ]"
check "replay reads raw bytes (generator) and damaged protobufs" sh -c "
  head -c 300 /dev/urandom > '$work/raw' && \"$S\" --target pbstore replay -q '$work/raw' | grep -q 'raw bytes';
  cp '$crash' '$work/damaged' && printf '\\062\\177' >> '$work/damaged' &&
  \"$S\" --target pbstore replay -q '$work/damaged' | grep -q 'damaged scenario'"
fi

# ---- errors: one line, exit 2 --------------------------------------------
if want errors; then
for c in "replay $work/missing.pb" "replay $work" "show $work/missing" "minimize $crash" \
         "replay --bogus $crash" "replay --kinds nonsense $crash" "sweep --seeds 9-1" \
         "trace $crash" "encode $work/missing.txt -o $work/x.pb"; do
  # shellcheck disable=SC2086
  if status 2 "$S" --target $T $c && [ "$(wc -l < "$work/st.err")" = 1 ]; then
    ok "error is one line, exit 2: $c"
  else
    bad "error is one line, exit 2: $c (exit $(cat "$work/st"))"; cat "$work/st.err"
  fi
done
if status 2 "$S" --target nope replay "$crash" && grep -q "unknown target 'nope'" "$work/st.err"; then
  ok "unknown target"; else bad "unknown target"; fi
if status 2 "$S" replay "$crash" && grep -q "choose one with --target" "$work/st.err"; then
  ok "several targets need --target"; else bad "several targets need --target"; fi
printf 'steps { at_us: 5 heal { } }\nbogus_field: 3\n' > "$work/bad.txt"
if status 2 "$S" --target $T replay "$work/bad.txt" && grep -q 'line 2: message type "simfuzz.Scenario" has no field named "bogus_field"' "$work/st.err"; then
  ok "malformed text: line and reason"; else bad "malformed text: line and reason"; cat "$work/st.err"; fi
fi

# ---- show / encode: round trip with protoc --------------------------------
if want encode; then
rt_ok=1
for f in "$crash" "$B"/corpus/pbstore/*.pb "$SRC"/tests/regressions/pbstore/*.pb; do
  "$S" show "$f" > "$work/s.txt" || rt_ok=0
  protoc --encode=simfuzz.Scenario $P < "$work/s.txt" > "$work/p.bin" || rt_ok=0
  "$S" encode "$work/s.txt" -o "$work/e.bin" 2>/dev/null || rt_ok=0
  cmp -s "$work/p.bin" "$work/e.bin" || rt_ok=0
  protoc --decode=simfuzz.Scenario $P < "$work/e.bin" > "$work/d.txt" || rt_ok=0
  grep -v '^#' "$work/s.txt" | cmp -s - "$work/d.txt" || rt_ok=0
done
[ $rt_ok = 1 ] && ok "show/encode round-trip with protoc --encode/--decode" ||
  bad "show/encode round-trip with protoc --encode/--decode"
cp "$work/s.txt" "$work/same.txt"
if status 2 "$S" encode "$work/same.txt" -o "$work/same.txt" && cmp -s "$work/s.txt" "$work/same.txt"; then
  ok "encode refuses to overwrite its input"; else bad "encode refuses to overwrite its input"; fi
fi

# ---- minimize ------------------------------------------------------------
if want minimize; then
sum_before=$(cksum < "$crash")
# (1,000 tries: enough to beat libFuzzer below; the default's 3,600 cost
# 45 s under ASan, each try in a process of its own)
"$S" --target $T minimize -q --max-tries 1000 "$crash" -o "$work/min.pb" > "$work/min.log" 2>&1
rc=$?
if [ $rc = 0 ] && [ "$(cksum < "$crash")" = "$sum_before" ] && [ -s "$work/min.pb.txt" ] &&
   grep -q "FAIL" "$work/min.pb.timeline.txt"; then
  ok "minimize writes OUT, OUT.txt, OUT.timeline.txt and leaves its input alone"
else
  bad "minimize writes OUT, OUT.txt, OUT.timeline.txt and leaves its input alone"; cat "$work/min.log"
fi
steps() { "$S" show "$1" | grep -c '^steps {'; }
before=$(steps "$crash")
after=$(steps "$work/min.pb")
what=$("$S" --target $T replay -q "$crash" | sed -n 's/.*-> FAILED //p')
what_min=$("$S" --target $T replay -q "$work/min.pb" | sed -n 's/.*-> FAILED //p')
if [ -n "$what" ] && [ "$what" = "$what_min" ] && [ "$after" -lt "$before" ]; then
  ok "minimize keeps the failure ($what) and shrinks the steps: $before -> $after"
else
  bad "minimize keeps the failure ($what / $what_min), steps $before -> $after"
fi
if status 2 "$S" --target $T minimize "$crash" -o "$crash" && [ "$(cksum < "$crash")" = "$sum_before" ]; then
  ok "minimize refuses to overwrite its input"; else bad "minimize refuses to overwrite its input"; fi
if status 1 "$S" --target pbstore minimize "$B/corpus/pbstore/steady.pb" -o "$work/none.pb"; then
  ok "minimize of a passing scenario: exit 1"; else bad "minimize of a passing scenario: exit 1"; fi
if [ -x "$B/fuzz/${T}_fuzzer" ]; then
  "$B/fuzz/${T}_fuzzer" "$crash" -minimize_crash=1 -runs=1000 -seed=1 -exact_artifact_path="$work/lf.pb" \
    > "$work/lf.log" 2>&1
  [ -s "$work/lf.pb" ] || cp "$crash" "$work/lf.pb"
  lf=$(steps "$work/lf.pb")
  lfb=$(wc -c < "$work/lf.pb")
  mb=$(wc -c < "$work/min.pb")
  if [ "$after" -lt "$lf" ] || { [ "$after" -eq "$lf" ] && [ "$mb" -lt "$lfb" ]; }; then
    ok "simfuzz minimize beats libFuzzer -minimize_crash: $after steps/$mb bytes vs $lf steps/$lfb bytes"
  else
    bad "simfuzz minimize beats libFuzzer -minimize_crash: $after steps/$mb bytes vs $lf steps/$lfb bytes"
  fi
fi

# a crashing system under test: candidates run in forked children
"$B/bin/simfuzz-crashy" minimize -q --max-tries 400 "$work/crashy.pb" -o "$work/crashy.min" > "$work/cm.log" 2>&1
rc=$?
if [ $rc = 0 ] && grep -q "failure kept: crash: " "$work/cm.log" &&
   [ "$(steps "$work/crashy.min")" -lt 6 ]; then
  ok "minimize survives a crashing target and keeps the crash ($(grep 'steps:' "$work/cm.log" | tr -s ' '))"
else
  bad "minimize survives a crashing target"; cat "$work/cm.log"
fi
# --passes/--differs PROG: a differential reduction. fake_control NAME BODY
# writes a stand-in for a control build, run as `NAME replay -q FILE` ($3)
fake_control() {
  printf '#!/bin/sh\n%s\n' "$2" > "$work/$1"
  chmod +x "$work/$1"
}
# a control that fails the same invariant on every scenario of fewer
# steps than the plain reduction's plus one: the reduction must stop there
k=$((after + 1))
fake_control ctl_steps "n=\$(\"$S\" show \"\$3\" | grep -c '^steps {')
if [ \"\$n\" -ge $k ]; then echo \"\$3: x -> ok\"; exit 0; fi
echo \"\$3: x -> FAILED $what\"; exit 1"
mkdir -p "$work/tmpd"
TMPDIR=$work/tmpd "$S" --target $T minimize -q --max-tries 400 --passes "$work/ctl_steps" "$crash" \
  -o "$work/dmin.pb" > "$work/dmin.log" 2>&1
rc=$?
d_what=$("$S" --target $T replay -q "$work/dmin.pb" | sed -n 's/.*-> FAILED //p')
d_steps=$(steps "$work/dmin.pb")
if [ $rc = 0 ] && [ "$d_what" = "$what" ] && [ "$d_steps" -ge $k ] &&
   "$work/ctl_steps" replay -q "$work/dmin.pb" > /dev/null && grep -q "control: .* passes it" "$work/dmin.log" &&
   [ -z "$(ls -A "$work/tmpd")" ]; then
  ok "minimize --passes keeps what the control passes, and cleans up: $before -> $d_steps steps (plain: $after)"
else
  bad "minimize --passes keeps what the control passes (exit $rc, $d_what, $d_steps < $k?)"
  cat "$work/dmin.log"
fi
# a control that fails another invariant everywhere: --differs changes
# nothing (the same tries keep the same candidates; 300 each), --passes
# has nothing to keep
fake_control ctl_other 'echo "$3: x -> FAILED some_other_invariant"; exit 1'
"$S" --target $T minimize -q --max-tries 300 --differs "$work/ctl_other" "$crash" -o "$work/omin.pb" \
  > "$work/omin.log" 2>&1
"$S" --target $T minimize -q --max-tries 300 "$crash" -o "$work/pmin.pb" > /dev/null 2>&1
if [ -s "$work/pmin.pb" ] && cmp -s "$work/omin.pb" "$work/pmin.pb" &&
   status 1 "$S" --target $T minimize -q --passes "$work/ctl_other" "$crash" -o "$work/x.pb"; then
  ok "minimize with a control that fails another invariant: --differs gives the plain result, --passes exit 1"
else
  bad "minimize with a control that fails another invariant"; cat "$work/omin.log" "$work/st.err"
fi
# the control fails the input alike, crashes where the target fails an
# invariant, hangs, or is no program
fake_control ctl_same "echo \"\$3: x -> FAILED $what\"; exit 1"
fake_control ctl_hang 'sleep 30'
fake_control ctl_abort 'kill -ABRT $$'
if status 1 "$S" --target $T minimize -q --differs "$work/ctl_same" "$crash" -o "$work/x.pb" &&
   grep -q "fails the same way, .*: nothing to keep" "$work/st.err"; then
  ok "minimize --differs: a control that fails FILE alike leaves nothing to keep (exit 1)"
else
  bad "minimize --differs: a control that fails FILE alike (exit $(cat "$work/st"))"; cat "$work/st.err"
fi
if status 1 "$S" --target $T minimize -q --timeout 1 --differs "$work/ctl_hang" "$crash" -o "$work/x.pb"; then
  ok "minimize --differs: a control that hangs is killed and counts as failing alike (exit 1)"
else
  bad "minimize --differs: a control that hangs (exit $(cat "$work/st"))"; cat "$work/st.err"
fi
if status 0 "$S" --target $T minimize -q --max-tries 20 --differs "$work/ctl_abort" "$crash" -o "$work/x.pb" &&
   status 1 "$B/bin/simfuzz-crashy" minimize -q --max-tries 20 --differs "$work/ctl_abort" "$work/crashy.pb" \
     -o "$work/x.pb"; then
  ok "minimize --differs: a control's crash differs from an invariant, not from a crash"
else
  bad "minimize --differs: a control's crash (exit $(cat "$work/st"))"; cat "$work/st.err"
fi
if status 2 "$S" --target $T minimize -q --passes "$work/missing" "$crash" -o "$work/x.pb" &&
   status 2 "$S" --target $T minimize -q --passes "$work/ctl_same" --differs "$work/ctl_same" "$crash" \
     -o "$work/x.pb"; then
  ok "minimize --passes: no such program, or two controls (exit 2)"
else
  bad "minimize --passes: no such program, or two controls"
fi
fi

# ---- triage --------------------------------------------------------------
if want triage; then
need_min
"$S" --target $T triage "$crash" "$work/min.pb" > "$work/tri.out"
rc=$?
n=$(grep -c ": invariant backup_log_is_prefix at .*pbstore_target.c:[0-9]*$" "$work/tri.out")
if [ $rc = 1 ] && [ "$n" = 2 ]; then
  ok "triage: a crash and its minimized form share one signature (exit 1)"
else
  bad "triage: a crash and its minimized form share one signature (exit 1)"; cat "$work/tri.out"
fi
"$B/bin/simfuzz-crashy" triage --json "$work/crashy.pb" > "$work/tri.json"
if python3 -c "
import json
o = json.loads(open('$work/tri.json').read())
assert o['status'] == 'crash' and o['signature'].startswith('crash: ') and o['deterministic'], o
"; then
  ok "triage --json: a crashing target is a 'crash' with a signal/sanitizer signature"
else
  bad "triage --json: a crashing target"; cat "$work/tri.json"
fi
"$B/bin/simfuzz-nondet" triage "$work/min.pb" > "$work/tri.nd" 2>&1
grep -q "NOT DETERMINISTIC" "$work/tri.nd" && ok "triage flags a nondeterministic failure" \
  || { bad "triage flags a nondeterministic failure"; cat "$work/tri.nd"; }
status 2 "$S" --target $T triage "$work/no-such-file" "$work/min.pb" && grep -q "invariant" "$work/st.out" \
  && ok "triage: an unreadable input is exit 2, the others are still triaged" \
  || bad "triage: an unreadable input is exit 2, the others are still triaged"
fi

# ---- a full disk (a file size limit) ------------------------------------------
if want disk; then
python3 -c "
for i in range(200):
    print('steps { at_us: %d op { node: 1 value: %d count: 2 } }' % (1000 * i, i))
" > "$work/big.txt"
cp "$crash" "$work/keep.pb"
status 2 sh -c "ulimit -f 1; exec \"$S\" encode \"$work/big.txt\" -o \"$work/big.pb\""
if [ "$(wc -l < "$work/st.err")" = 1 ] && grep -q "File too large" "$work/st.err" &&
   ! ls "$work"/big.pb* > /dev/null 2>&1; then
  ok "encode on a full disk: one error line, exit 2, no partial or temporary file"
else
  bad "encode on a full disk"; cat "$work/st.err"; ls "$work"/big.pb*
fi
status 2 sh -c "ulimit -f 1; exec \"$S\" --target $T minimize -q --max-tries 50 \"$work/keep.pb\" -o \"$work/full.pb\""
if grep -q "File too large\|could not write" "$work/st.err" && cmp -s "$crash" "$work/keep.pb" &&
   ! ls "$work"/full.pb.tmp* > /dev/null 2>&1; then
  ok "minimize on a full disk: exit 2, the input intact, no temporary files"
else
  bad "minimize on a full disk"; cat "$work/st.err"
fi
mkdir "$work/ro" && chmod 555 "$work/ro"
if [ "$(id -u)" != 0 ]; then
  status 2 "$S" encode "$work/big.txt" -o "$work/ro/x.pb" && [ "$(wc -l < "$work/st.err")" = 1 ] \
    && ok "encode into an unwritable directory: one error line, exit 2" \
    || bad "encode into an unwritable directory"
fi
fi

# ---- trace -------------------------------------------------------------
if want trace; then
need_min
if "$S" --target $T trace "$work/min.pb" --chrome "$work/t.json" --html "$work/t.html" > /dev/null &&
   python3 -c "
import json, sys
d = json.load(open('$work/t.json'))['traceEvents']
ph = [e['ph'] for e in d]
names = [e.get('args', {}).get('name') for e in d if e['ph'] == 'M']
assert 's' in ph and 'f' in ph and 'i' in ph and 'n0' in names, ph
assert any(e.get('name') == 'FAIL' for e in d)
"; then
  ok "trace --chrome: valid JSON, a track per node, flows, instant faults, the failure"
else
  bad "trace --chrome: valid JSON, a track per node, flows, instant faults, the failure"
fi
if tr -d ' ' < "$work/t.html" | grep -q '"drawn":\["deliver","drop","corrupt","crash",'; then
  ok "trace --html: the kinds it draws come from sim.h's table"
else
  bad "trace --html: no list of drawn kinds"; grep -o '"drawn":[^]]*]' "$work/t.html"
fi
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$CHROMIUM" ]; then
  dom=$(timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$work/chrome" --dump-dom "file://$work/t.html" 2>/dev/null)
  body=$(echo "$dom" | grep -o '<body[^>]*>')
  if echo "$body" | grep -q 'data-rendered="yes"' && ! echo "$body" | grep -q 'data-error' &&
     echo "$dom" | grep -q 'FAILURE: '; then
    ok "trace --html renders in headless Chromium without script errors"
  else
    bad "trace --html renders in headless Chromium without script errors"
    echo "$dom" | grep -o '<body[^>]*>'
  fi
else
  bad "trace --html: chromium is not installed (scripts/bootstrap.sh installs it)"
fi
fi

# ---- check-determinism -----------------------------------------------------
if want determinism; then
need_min
check "check-determinism: deterministic inputs, exit 0" sh -c "
  \"$S\" --target $T check-determinism '$crash' '$work/min.pb' | grep -c 'deterministic:' | grep -q 2"
"$B/bin/simfuzz-nondet" check-determinism "$crash" > "$work/nd.txt" 2>&1
if [ $? = 3 ] && grep -q "MISMATCH in-process" "$work/nd.txt" && grep -q "first divergence at trace record" "$work/nd.txt"; then
  ok "check-determinism catches a nondeterministic target (exit 3, first divergence)"
else
  bad "check-determinism catches a nondeterministic target"; cat "$work/nd.txt"
fi
# a run decided by bits 8-9 of a block's address (tests/targets/addrbits.c)
# runs the same in 3 runs here and in 5 fresh processes (4 of them shifted
# by 0 to 768 bytes: bits 8-9 of a C-library block take every value there),
# since sf_malloc()'s blocks come from the world's deterministic heap
printf 'version: 1\nnodes: 2\nseed: 3\n' > "$work/ab.txt"
"$S" encode "$work/ab.txt" -o "$work/ab.pb" 2> /dev/null
if "$B/bin/simfuzz-addrbits" check-determinism --fresh 5 "$work/ab.pb" > "$work/ab.out" 2>&1 &&
   grep -q "deterministic: 3 runs in-process and 5 in fresh processes" "$work/ab.out"; then
  ok "check-determinism: a run that a pointer's bits decide is the same in every process"
else
  bad "check-determinism: a run that a pointer's bits decide is the same in every process"
  cat "$work/ab.out"
fi
if status 3 "$B/bin/simfuzz-nondet" replay -q "$crash"; then
  ok "replay of a nondeterministic target: exit 3"; else bad "replay of a nondeterministic target: exit 3"; fi
fi

# ---- help ------------------------------------------------------------------
if want help; then
for c in replay minimize show encode trace sweep check-determinism; do
  if "$S" help $c | grep -q "EXIT STATUS" && "$S" $c --help | grep -q "SYNOPSIS"; then
    ok "help $c"; else bad "help $c"; fi
done
# --version: the release of version.h, which CMake's project version is read from
v=$(sed -n 's/^CMAKE_PROJECT_VERSION:[A-Z]*=//p' "$B/CMakeCache.txt")
if [ -n "$v" ] && [ "$("$S" --version)" = "simfuzz $v" ] &&
   [ "$("$B/bin/simfuzz-pbstore" --version)" = "simfuzz $v" ]; then
  ok "--version: simfuzz $v, in the dispatcher and in a target's tool"
else
  bad "--version: '$("$S" --version 2>&1)', the build's version '$v'"
fi
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
