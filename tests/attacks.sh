#!/bin/sh
# The default job (fuzz, explore, reach, the nightly job) under attack by
# a system under test that misbehaves inside the explorer's branches
# (tests/attack: the ladder target that hangs, blows up, aborts at two
# sites, exits, leaks, overflows, spawns processes, is not deterministic,
# asserts in a library, prints fake errors, changes directory, leaves
# descriptors or memory behind on every run, closes the tool's
# descriptors, sends its stdio away, only in a state random roots
# almost never reach), built as an outside project with
# cmake_minimum_required(VERSION 3.16) from the installed package; and
# under signals, full disks, FIFOs, links and hostile names. Each check
# fails on the code before docs/RELIABILITY.md's "The default job under
# attack" (issue 35), whose table names the checks. The explorer's branches
# are re-runs in its worker by default; case forked_branches checks forked
# ones (SIMFUZZ_SEARCH=-rerun).
# Usage: tests/attacks.sh BUILD_DIR PREFIX [CASE...]   (no CASE: all)
set -u
B=$(cd "$1" && pwd)
P=$(cd "$2" && pwd)
shift 2
T_NAME=attacks
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$B/CMakeCache.txt")
gen=$(sed -n 's/^CMAKE_GENERATOR:[A-Z]*=//p' "$B/CMakeCache.txt")
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}

# ---- the attack project, from a copy (tests never write into the tree) ----
# (with tests/targets beside it: attack.c includes the ladder's ladder.h)
mkdir -p "$work/src/targets" && cp -R "$SRC/tests/attack" "$work/src/attack" &&
  cp "$SRC/tests/targets/ladder.h" "$work/src/targets/"
if ! cmake -S "$work/src/attack" -B "$work/b" -G "$gen" -DCMAKE_C_COMPILER="$cc" \
       -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_PREFIX_PATH="$P" > "$work/cfg.log" 2>&1 ||
   ! cmake --build "$work/b" > "$work/build.log" 2>&1; then
  tail -n 30 "$work/cfg.log" "$work/build.log"
  fail "the attack project does not build"
fi
A=$work/b/bin
F=$work/b/fuzz
tool() { echo "$A/simfuzz-attack_$1"; }
wanted() { [ -z "$CASES" ] && return 0; for c in $CASES; do [ "$c" = "$1" ] && return 0; done; return 1; }
CASES="$*"
run() { # LOG CMD...: run with a generous guard against hangs; status in $rc
  log=$1; shift
  timeout -k 5 300 "$@" > "$log" 2>&1
  rc=$?
}
count() { # DIR GLOB: how many files match
  c=0
  for f in "$1"/$2; do [ -e "$f" ] && c=$((c + 1)); done
  echo $c
}
first() { # DIR GLOB: the first matching name, or nothing
  for f in "$1"/$2; do [ -e "$f" ] && echo "${f##*/}" && return; done
}
ok_if() { # COND-STATUS MESSAGE LOG
  if [ "$1" = 0 ]; then ok "$2"; else bad "$2: $(tail -n 8 "$3")"; fi
}

two_kinds() { # ATTACK NAME: the explorer until it reported two kinds of
  # abort() (once it reached the state, its revisits reach it again and
  # again; 200 s at most), then fuzz confirms what it saved in
  # $work/NAME/crashes; $kinds the confirmed signal 6 signatures, $rc fuzz's
  "$(tool "$1")" explore -o "$work/$2/crashes" --time 200 -q > "$work/$2-ex.log" 2>&1 &
  xp=$!
  for _ in $(seq 1 400); do
    [ "$(grep -c "FAILED crash: signal 6" "$work/$2-ex.log")" -ge 2 ] && break
    kill -0 $xp 2> /dev/null || break
    sleep 0.5
  done
  kill -TERM $xp 2> /dev/null
  wait $xp
  run "$work/$2.log" "$(tool "$1")" fuzz -o "$work/$2" --time 0.01 --no-engine -q
  kinds=$(sed -n 's/^fuzz: confirmed [^:]*: \(crash: signal 6 .*\)/\1/p' "$work/$2.log" | sort -u |
    wc -l)
}

# A scenario that reaches the misbehaving state (every variant runs the
# same ladder up to there): the explorer's first finding on two_aborts.
run "$work/trig.log" "$(tool two_aborts)" explore -o "$work/trig" --time 200 --stop-on-first -q
TRIG=$(ls "$work"/trig/crash-* 2>/dev/null | head -n 1)
[ -n "$TRIG" ] || fail "no scenario reaches the attack state: $(cat "$work/trig.log")"

# 1. a hang inside a branch: that branch, killed and saved as a timeout
# with its own scenario; the campaign goes on
if wanted hang; then
  # (--share runs: the branches' share of runs does not shrink on a loaded
  # machine, where under the time share 200 s once gave too few branches)
  run "$work/hang.log" "$(tool hang)" fuzz -o "$work/hang" --time 200 --timeout 2 --stop-on-first \
    --no-engine --share runs -q
  f=$(sed -n 's/^fuzz: confirmed \([^:]*\): timeout$/\1/p' "$work/hang.log" | head -n 1)
  t=$([ -n "$f" ] && "$(tool hang)" triage --timeout 2 "$f")
  [ "$rc" = 1 ] && [ "${t##*: }" = timeout ] && [ ! -d "$work/hang/unconfirmed" ]
  ok_if $? "a hung branch is a confirmed timeout of its own scenario (exit $rc)" "$work/hang.log"
  # the campaign goes on: still running 5 s after its first timeout (it
  # used to stop there), until SIGTERM; two jobs (a job's supervisor is a
  # child of the tool, and its worker a child of that)
  "$(tool hang)" explore -o "$work/hang2" --time 250 --timeout 1 --jobs 2 -q > "$work/hang2.log" 2>&1 &
  xp=$!
  for _ in $(seq 1 400); do
    grep -q "FAILED timeout" "$work/hang2.log" && break
    kill -0 $xp 2> /dev/null || break
    sleep 0.5
  done
  sleep 5
  alive=no
  kill -0 $xp 2> /dev/null && alive=yes
  kill -TERM $xp 2> /dev/null
  wait $xp
  rc=$?
  grep -q "FAILED timeout" "$work/hang2.log" && [ $alive = yes ] && [ "$rc" = 1 ]
  ok_if $? "a campaign goes on past a hung branch (running 5 s later: $alive; exit $rc)" \
    "$work/hang2.log"
fi

# 2. a blow-up inside a branch: held to --rss-limit-mb, saved as
# out-of-memory with its own scenario (by explore, and confirmed by fuzz)
if wanted blowup; then
  run "$work/oomx.log" "$(tool blowup)" explore -o "$work/oomx" --time 200 --rss-limit-mb 1200 \
    --stop-on-first -q
  f=$(ls "$work"/oomx/crash-* 2> /dev/null | head -n 1)
  t=$([ -n "$f" ] && "$(tool blowup)" triage --rss-limit-mb 1200 "$f")
  grep -q "FAILED out-of-memory" "$work/oomx.log" && [ "${t##*: }" = out-of-memory ]
  ok_if $? "explore: a branch over the memory limit is an out-of-memory of its own scenario" \
    "$work/oomx.log"
  run "$work/oom.log" "$(tool blowup)" fuzz -o "$work/oom" --time 200 --rss-limit-mb 1200 \
    --stop-on-first --no-engine -q
  grep -q "^fuzz: confirmed .*: out-of-memory$" "$work/oom.log" && [ "$rc" = 1 ]
  ok_if $? "fuzz: the blow-up is a confirmed out-of-memory (exit $rc)" "$work/oom.log"
fi

# 3. two abort() sites in branches are two kinds of failure
if wanted two_aborts; then
  two_kinds two_aborts two
  [ "$rc" = 1 ] && [ "$kinds" -ge 2 ]
  ok_if $? "two abort() sites in branches: $kinds confirmed signatures (exit $rc)" "$work/two.log"
  # 9b. --confirm: a sanitized replay that dies of SIGABRT fails (the tool
  # itself is the sanitized build here); only the files already there
  run "$work/conf.log" "$(tool two_aborts)" fuzz -o "$work/two" --time 0.01 --no-engine \
    --confirm "$(tool two_aborts)" -q
  grep -q "^fuzz: confirmed .*signal 6.*(and under sanitizers)$" "$work/conf.log" && [ "$rc" = 1 ] &&
    ! grep -q "NOT confirmed" "$work/conf.log"
  ok_if $? "--confirm: death by SIGABRT in the sanitized replay is a failure (exit $rc)" \
    "$work/conf.log"
fi

# 21. the same attacks on forked branches (SIMFUZZ_SEARCH=-rerun): the
# checks above run the default, branches re-run in the worker (a hang or an
# abort there ends the worker, whose supervisor saves the branch's own
# scenario); a forked branch ends alone, by its own alarm or signal
if wanted forked_branches; then
  run "$work/fhang.log" env SIMFUZZ_SEARCH=-rerun "$(tool hang)" fuzz -o "$work/fhang" --time 200 \
    --timeout 2 --stop-on-first --no-engine --share runs -q
  f=$(sed -n 's/^fuzz: confirmed \([^:]*\): timeout$/\1/p' "$work/fhang.log" | head -n 1)
  t=$([ -n "$f" ] && "$(tool hang)" triage --timeout 2 "$f")
  [ "$rc" = 1 ] && [ "${t##*: }" = timeout ] && [ ! -d "$work/fhang/unconfirmed" ]
  ok_if $? "-rerun: a hung forked branch is a confirmed timeout of its own scenario (exit $rc)" \
    "$work/fhang.log"
  # (a fixed seed: over seeds 1 to 10 the first abort took 3 to 32 s)
  run "$work/fab.log" env SIMFUZZ_SEARCH=-rerun "$(tool two_aborts)" fuzz -o "$work/fab" \
    --time 200 --stop-on-first --no-engine --seed 10 -q
  [ "$rc" = 1 ] && grep -q "^fuzz: confirmed .*: crash: signal 6 " "$work/fab.log" &&
    [ ! -d "$work/fab/unconfirmed" ]
  ok_if $? "-rerun: an abort() in a forked branch is a confirmed crash of its own scenario" \
    "$work/fab.log"
fi

# 9a. a mistyped --confirm is a usage error, before any fuzzing
if wanted confirm_path; then
  s0=$(date +%s)
  run "$work/cpath.log" "$(tool two_aborts)" fuzz -o "$work/cpath" --time 30 --no-engine \
    --confirm "$work/no-such-tool" -q
  [ "$rc" = 2 ] && [ $(($(date +%s) - s0)) -lt 20 ] && grep -q "is not an executable" "$work/cpath.log"
  ok_if $? "a mistyped --confirm is a usage error at once (exit $rc)" "$work/cpath.log"
fi

# 10. a branch whose system under test calls exit(0) fails as a root does
if wanted exit0; then
  run "$work/e0.log" "$(tool exit0)" fuzz -o "$work/e0" --time 200 --stop-on-first --no-engine -q
  grep -q "^fuzz: confirmed .*: crash: exit 0$" "$work/e0.log" && [ "$rc" = 1 ]
  ok_if $? "exit(0) in a branch is the failure 'crash: exit 0' (exit $rc)" "$work/e0.log"
fi

# 20. replay of a scenario whose program calls exit(3): a failure (1), not
# a determinism mismatch (3)
if wanted exit3; then
  run "$work/e3.log" "$(tool exit3)" replay -q "$TRIG"
  [ "$rc" = 1 ] && grep -q "FAILED crash: exit 3" "$work/e3.log"
  ok_if $? "replay: the program's exit(3) is a failure, exit 1 (got $rc)" "$work/e3.log"
fi

# 7. libFuzzer's own findings: a LeakSanitizer leak file is confirmed by
# the libFuzzer build (which is the only one that sees it)
with_engine() { # VARIANT: fuzz --jobs 2 with libFuzzer, whose corpus holds the trigger
  mkdir -p "$work/$1/corpus" && cp "$TRIG" "$work/$1/corpus/"
  run "$work/$1.log" "$(tool "$1")" fuzz -o "$work/$1" --time 15 --jobs 2 \
    --engine "$F/attack_$1_fuzzer" -q
}
if wanted leak; then
  with_engine leak
  grep -q "^fuzz: confirmed .*/libfuzzer-leak-.*LeakSanitizer.*fails only under sanitizers" \
    "$work/leak.log" && [ "$rc" = 1 ]
  ok_if $? "libFuzzer's leak file is a confirmed failure (exit $rc)" "$work/leak.log"
  # libFuzzer stops at the leak and is started again on the rest of the time
  runs=$(grep -c "INFO: Seed:" "$work/leak/libfuzzer.log")
  [ "$runs" -ge 2 ]
  ok_if $? "the libFuzzer job goes on past its failure: $runs runs" "$work/leak/libfuzzer.log"
fi

# 8. a finding only a sanitizer sees, without --confirm: confirmed by the
# engine that found it and labelled, never called flaky
if wanted overflow; then
  with_engine overflow
  grep -q "^fuzz: confirmed .*/libfuzzer-crash-.*heap-buffer-overflow.*fails only under sanitizers" \
    "$work/overflow.log" && [ "$rc" = 1 ] && [ ! -d "$work/overflow/unconfirmed" ]
  ok_if $? "an ASan-only finding of libFuzzer is confirmed and labelled (exit $rc)" \
    "$work/overflow.log"
  # --stop-on-first: libFuzzer's finding ends the explorer's search too (the
  # explorer never fails this one: it sees no overflow without ASan)
  mkdir -p "$work/ovf1/corpus" && cp "$TRIG" "$work/ovf1/corpus/"
  s0=$(date +%s)
  run "$work/ovf1.log" "$(tool overflow)" fuzz -o "$work/ovf1" --time 200 --jobs 2 --stop-on-first \
    --engine "$F/attack_overflow_fuzzer" -q
  took=$(($(date +%s) - s0))
  [ "$rc" = 1 ] && [ "$took" -lt 100 ] && grep -q "^fuzz: confirmed .*/libfuzzer-crash-" "$work/ovf1.log"
  ok_if $? "--stop-on-first ends at libFuzzer's failure: ${took} s of 200 (exit $rc)" "$work/ovf1.log"
fi

# 6. a target that is not deterministic: exit 3, a report, at most 3 files
if wanted nondet; then
  run "$work/nd.log" "$(tool nondet)" fuzz -o "$work/nd" --time 200 --stop-on-first --no-engine -q
  n=$(count "$work/nd/crashes" "diverged-*")
  [ "$rc" = 3 ] && grep -q "did not fail again when re-run" "$work/nd.log" && [ "$n" -ge 1 ] &&
    [ "$n" -le 3 ]
  ok_if $? "nondeterminism: exit $rc, $n diverged files, reported" "$work/nd.log"
  # --all-crashes files every failure that fails again, not every one that
  # does not: still at most 3 diverged files, however many diverged
  # (explore with --roots and --share runs: the same campaign under any load)
  run "$work/nda.log" "$(tool nondet)" explore -o "$work/nda" --roots 3000 --seed 1 --share runs \
    --all-crashes --json "$work/nda.json" -q
  n=$(count "$work/nda" "diverged-*")
  nd=$(sed -n 's/.*"diverged": \([0-9]*\).*/\1/p' "$work/nda.json")
  [ "$rc" = 3 ] && [ "${nd:-0}" -gt 3 ] && [ "$n" -ge 1 ] && [ "$n" -le 3 ]
  ok_if $? "nondeterminism with --all-crashes: exit $rc, $n diverged files of ${nd:-?}" "$work/nda.log"
fi

# 16. processes the system under test starts never outlive the job
if wanted spawn; then
  run "$work/sp.log" "$(tool spawn)" fuzz -o "$work/sp" --time 200 --stop-on-first --no-engine -q
  sleep 1
  left=$(pgrep -f -c "sleep 25.25" || true)
  [ "$rc" = 1 ] && [ "$left" = 0 ]
  ok_if $? "no process outlives fuzz ($left left, exit $rc)" "$work/sp.log"
  pkill -f "sleep 25.25" 2> /dev/null
fi

# 13. a library's assert() gives a report in the command line of an
# outside project with an old CMake minimum, as in the libFuzzer binary
if wanted assert; then
  run "$work/as.log" "$(tool assert)" replay "$TRIG"
  [ "$rc" = 1 ] && grep -q "FAILED assert" "$work/as.log" && grep -q "trace hash\|hash [0-9a-f]" "$work/as.log"
  ok_if $? "assert() in a LIBRARIES entry is a reported failure with a hash (exit $rc)" \
    "$work/as.log"
fi

# 27. a system under test that changes the working directory (a daemon's
# chdir at start): the job's files still go where a relative DIR names,
# from the explorer's worker and from the libFuzzer job, and none where the
# system went
if wanted chdir; then
  cdr=$work/cd/run
  mkdir -p "$cdr/out2/corpus" "$work/cd/elsewhere" && cp "$TRIG" "$cdr/out2/corpus/"
  run "$work/cd1.log" env -C "$cdr" ATTACK_CHDIR="$work/cd/elsewhere" "$(tool chdir)" fuzz -o out \
    --time 200 --stop-on-first --no-engine -q
  n=$(count "$cdr/out/crashes" "crash-*")
  [ "$rc" = 1 ] && grep -q "^fuzz: confirmed out/crashes/crash-[^:]*: invariant moved" "$work/cd1.log" &&
    [ "$n" -ge 1 ]
  ok_if $? "explore: a system that changes directory; its failure saved in out/crashes ($n, exit $rc)" \
    "$work/cd1.log"
  run "$work/cd2.log" env -C "$cdr" ATTACK_CHDIR="$work/cd/elsewhere" "$(tool chdir)" fuzz -o out2 \
    --time 15 --jobs 2 --engine "$F/attack_chdir_fuzzer" -q
  n=$(count "$cdr/out2/crashes" "libfuzzer-crash-*")
  [ "$rc" = 1 ] && grep -q "^fuzz: confirmed out2/crashes/libfuzzer-crash-" "$work/cd2.log" &&
    [ "$n" -ge 1 ]
  ok_if $? "libFuzzer: a system that changes directory; its crash file in out2/crashes ($n, exit $rc)" \
    "$work/cd2.log"
  left=$(find "$work/cd/elsewhere" -type f | head -n 3)
  [ -z "$left" ]
  ok_if $? "nothing written where the system went (${left:-none})" "$work/cd2.log"
fi

# 28. a system under test that leaves a descriptor open on every run: under
# a limit of 256, the explorer's worker ran out of them (EMFILE) long
# before it reached the failing state, and could not save its failure; a
# worker now gives way to a fresh one before that, and the campaign says why
if wanted fdleak; then
  run "$work/fd.log" sh -c 'ulimit -n 256 && exec "$@"' sh "$(tool fdleak)" fuzz -o "$work/fd" \
    --time 200 --stop-on-first --no-engine -q
  [ "$rc" = 1 ] && grep -q "^fuzz: confirmed .*: invariant leaky" "$work/fd.log" &&
    grep -q "leaves file descriptors open across runs" "$work/fd.log"
  ok_if $? "a descriptor left open on every run: the failure confirmed, the leak reported (exit $rc)" \
    "$work/fd.log"
  run "$work/fds.log" sh -c 'ulimit -n 64 && exec "$@"' sh "$(tool fdleak)" sweep --seeds 1-2000 -q
  [ "$rc" = 0 ] && grep -q "^sweep: 2000 seeds" "$work/fds.log" &&
    grep -q "leaves file descriptors open across runs" "$work/fds.log"
  ok_if $? "sweep: a descriptor left open on every run is reported (exit $rc)" "$work/fds.log"
  # the libFuzzer binary runs every input in one process: it says so (from
  # an empty corpus: the trigger would end the run at its failure)
  mkdir -p "$work/fdc"
  run "$work/fdf.log" sh -c 'ulimit -n 512 && exec "$@"' sh "$F/attack_fdleak_fuzzer" -runs=3000 \
    -seed=1 "$work/fdc"
  grep -q "leaves file descriptors open across runs" "$work/fdf.log"
  ok_if $? "libFuzzer: a descriptor left open on every run is reported (exit $rc)" "$work/fdf.log"
fi

# 29. a system under test that loses memory on every run: its worker grew
# past --rss-limit-mb, and whichever run was going was filed as an
# out-of-memory failure (which no replay confirms); a worker now gives way
# to a fresh one at half the room, no run is blamed, and the summary says so
if wanted memleak; then
  run "$work/ml.log" "$(tool memleak)" fuzz -o "$work/ml" --time 200 --stop-on-first --no-engine \
    --rss-limit-mb 700 -q
  [ "$rc" = 1 ] && grep -q "^fuzz: confirmed .*: invariant leaky" "$work/ml.log" &&
    ! grep -q "out-of-memory" "$work/ml.log" && grep -q "memory grew across runs" "$work/ml.log"
  ok_if $? "memory lost on every run: no run filed as out-of-memory, the growth reported (exit $rc)" \
    "$work/ml.log"
  run "$work/mls.log" "$(tool memleak)" sweep --seeds 1-3000 --rss-limit-mb 700 -q
  [ "$rc" = 0 ] && grep -q "^sweep: 3000 seeds (1..3000), 0 failures" "$work/mls.log" &&
    grep -q "memory grew across runs" "$work/mls.log"
  ok_if $? "sweep: memory lost on every run, no seed blamed (exit $rc)" "$work/mls.log"
fi

# 30. a system under test that closes every descriptor from 3 up, as a
# daemon does at start, and opens files on the freed numbers: the worker's
# result pipe was gone (or another file), so its failure was lost, and the
# worker's end was filed as "crash: exit 0"; records now travel in shared
# memory, and the campaign goes on
if wanted closefds; then
  run "$work/cf.log" "$(tool closefds)" fuzz -o "$work/cf" --time 200 --stop-on-first --no-engine -q
  f=$(sed -n 's/^fuzz: confirmed \([^:]*\): invariant daemonized.*/\1/p' "$work/cf.log" | head -n 1)
  t=$([ -n "$f" ] && "$(tool closefds)" triage "$f")
  [ "$rc" = 1 ] && [ -n "$f" ] && [ ! -d "$work/cf/unconfirmed" ] && ! grep -q "exit 0" "$work/cf.log" &&
    case "$t" in *": invariant daemonized at attack.c:"*) true ;; *) false ;; esac
  ok_if $? "a system that closes the tool's descriptors: its failure confirmed (exit $rc)" "$work/cf.log"
  # a campaign the same on any machine (--jobs 1 --roots --share runs): its
  # first failure at root 1301 of 3000, more after it
  run "$work/cf2.log" "$(tool closefds)" explore -o "$work/cf2" --jobs 1 --roots 3000 --share runs -q
  n=$(sed -n 's/.* \([0-9]*\) failures of 1 kinds, 0 diverged.*/\1/p' "$work/cf2.log")
  [ "$rc" = 1 ] && [ "${n:-0}" -ge 2 ] && ! grep -q "crash: exit" "$work/cf2.log"
  ok_if $? "explore goes on after the system closed its descriptors (${n:-0} failures, exit $rc)" \
    "$work/cf2.log"
  mkdir -p "$work/cf3/corpus" && cp "$f" "$work/cf3/corpus/"
  run "$work/cf3.log" "$(tool closefds)" fuzz -o "$work/cf3" --time 10 --jobs 2 \
    --engine "$F/attack_closefds_fuzzer" -q
  [ "$rc" = 1 ] && grep -q "^fuzz: confirmed .*libfuzzer-crash-[^:]*: invariant daemonized" \
    "$work/cf3.log" && ! grep -q "exit 0" "$work/cf3.log"
  ok_if $? "libFuzzer beside it: the same failure, confirmed (exit $rc)" "$work/cf3.log"
fi

# 31. a system under test that sends its standard output and error to
# /dev/null, as a daemon does, then aborts from one of two sites: the crash
# line that names the site went with them, so both sites were one kind,
# "crash: signal 6", and the second's failures were counted, never saved;
# replay printed no report
if wanted quiet; then
  two_kinds quiet qt
  [ "$rc" = 1 ] && [ "$kinds" -ge 2 ]
  ok_if $? "two abort() sites with stdio sent away: $kinds confirmed signatures (exit $rc)" \
    "$work/qt.log"
  f=$(ls "$work"/qt/crashes/crash-* 2> /dev/null | head -n 1)
  "$(tool quiet)" replay "$f" > "$work/qtr.out" 2> "$work/qtr.err"
  grep -q "^==simfuzz== replay: " "$work/qtr.out" && grep -q ": FAILED crash: signal 6 in " "$work/qtr.err"
  ok_if $? "replay: the crash report, though the system sent stdio away" "$work/qtr.err"
fi

# 12. signatures never hold the program's own text; the nightly job files
# one failure once, whatever the program prints, across nights
if wanted chatty; then
  sig=$("$(tool chatty)" triage "$TRIG" 2>&1)
  case "$sig" in
    *tab* | *ERROR* | *now*) bad "a signature holds program output: $sig" ;;
    *": crash: signal 6"*) ok "the signature of a crash is its signal and site: ${sig##*: }" ;;
    *) bad "triage: $sig" ;;
  esac
  st=$work/night
  mkdir -p "$st/corpus/attack_chatty" "$work/nb/fuzz" "$work/nb/bin"
  cp "$TRIG" "$st/corpus/attack_chatty/$(sha1sum "$TRIG" | cut -c1-40)"
  for f in "$A"/*; do ln -s "$f" "$work/nb/bin/"; done
  ln -s "$F/attack_chatty_fuzzer" "$work/nb/fuzz/"
  ln -s "$F/attack_chatty.dict" "$work/nb/fuzz/"
  run "$work/n1.log" "$A/simfuzz" nightly --state "$st" --build "$work/nb" --budget 4 --jobs 1
  rc1=$rc
  # the merge drops an input that crashes: the bug is in the corpus again
  cp "$TRIG" "$st/corpus/attack_chatty/$(sha1sum "$TRIG" | cut -c1-40)"
  run "$work/n2.log" "$A/simfuzz" nightly --state "$st" --build "$work/nb" --budget 4 --jobs 1
  ids=$(cut -f3 "$st/known.tsv" | tr '\n' ' ')
  [ "$rc1" = 1 ] && [ "$rc" = 0 ] && [ "$(wc -l < "$st/known.tsv")" = 1 ] &&
    grep -q "^attack_chatty	crash: signal 6 [^	]*	f0000$" "$st/known.tsv" &&
    grep -q "[1-9][0-9]* known" "$work/n2.log"
  ok_if $? "nightly: one failure filed once over two nights (exits $rc1, $rc; ids $ids)" "$work/n2.log"
  # 19. a damaged state is found before any fuzzing
  : > "$st/corpus/attack_chatty.old"
  s0=$(date +%s)
  run "$work/n3.log" "$A/simfuzz" nightly --state "$st" --build "$work/nb" --budget 30 --jobs 1
  [ "$rc" = 2 ] && [ $(($(date +%s) - s0)) -lt 25 ] && grep -q "not a directory" "$work/n3.log"
  ok_if $? "nightly: a file in place of corpus/<t>.old stops the night before fuzzing" "$work/n3.log"
  rm -f "$st/corpus/attack_chatty.old"
  # 17. a FIFO in the inbox; 20. a stale temporary file in the corpus
  mkdir -p "$st/inbox/attack_chatty" && mkfifo "$st/inbox/attack_chatty/crash-fifo"
  : > "$st/corpus/attack_chatty/.0123.tmp-AbCdEf"
  run "$work/n4.log" "$A/simfuzz" nightly --state "$st" --build "$work/nb" --budget 3 --jobs 1
  [ "$rc" = 0 ] && [ ! -e "$st/corpus/attack_chatty/.0123.tmp-AbCdEf" ]
  ok_if $? "nightly: a FIFO in the inbox is skipped, stale temporary files go (exit $rc)" \
    "$work/n4.log"
  # 20. a fuzzer whose name is no target's (a '|', which breaks the table)
  cp -R "$work/nb" "$work/nbad"
  ln -s "$F/attack_chatty_fuzzer" "$work/nbad/fuzz/bad|name_fuzzer"
  run "$work/n5.log" "$A/simfuzz" nightly --state "$work/nbad-state" --build "$work/nbad" \
    --budget 2 --jobs 1
  [ "$rc" != 2 ] && grep -q "skipping .*bad|name_fuzzer" "$work/n5.log" &&
    ! grep -q "bad|name" "$work/nbad-state/reports/latest.md"
  ok_if $? "nightly: a fuzzer named 'bad|name' is skipped with a note (exit $rc)" "$work/n5.log"
fi

# 11. SIGTERM to the nightly job in its explorer phase keeps the explorer's
# crash files in the inbox (with one job, the default job gives libFuzzer
# three quarters of the budget and then the explorer the rest; libFuzzer is
# a stand-in here that ends at once)
if wanted nightly_term; then
  st=$work/nterm
  mkdir -p "$work/nt/fuzz" "$work/nt/bin"
  for f in "$A"/*; do ln -s "$f" "$work/nt/bin/"; done
  ln -s "$F/attack_two_aborts.dict" "$work/nt/fuzz/"
  # a libFuzzer that finds nothing at once: the night goes on to the explorer
  printf '#!/bin/sh\nexit 0\n' > "$work/nt/fuzz/attack_two_aborts_fuzzer"
  chmod +x "$work/nt/fuzz/attack_two_aborts_fuzzer"
  "$A/simfuzz" nightly --state "$st" --build "$work/nt" --budget 600 --jobs 1 > "$work/nt.log" 2>&1 &
  np=$!
  got="" before="" t0=0
  for _ in $(seq 1 400); do # the explorer's first crash file, then SIGTERM
    if [ -z "$before" ] && grep -q "fuzzing attack_two_aborts" "$work/nt.log"; then
      before=$(ls "$st/inbox/attack_two_aborts" 2> /dev/null | tr '\n' ' ')" "
      t0=$(date +%s)
    elif [ -n "$before" ]; then
      for f in "$st"/inbox/attack_two_aborts/crash-*; do
        case "$before" in *"${f##*/} "*) ;; *) [ -e "$f" ] && got=${f##*/} ;; esac
      done
      [ -n "$got" ] && break
    fi
    kill -0 $np 2> /dev/null || break
    sleep 0.5
  done
  # still in the explorer phase (its 150 s, and no line of the phases after it)
  during=no
  [ $(($(date +%s) - t0)) -lt 140 ] && ! grep -q "executions, corpus" "$work/nt.log" && during=yes
  kill -TERM $np
  wait $np
  rc=$?
  [ -n "$got" ] && [ $during = yes ] && [ "$rc" = 143 ] && [ -f "$st/inbox/attack_two_aborts/$got" ]
  ok_if $? "SIGTERM in the explorer phase: its crash file ${got:-(none)} waits in the inbox (exit $rc)" \
    "$work/nt.log"
fi

# 3. Ctrl-C during fuzz: nothing is judged after it; the files stay, exit 130
if wanted interrupt; then
  mkdir -p "$work/int/crashes"
  cp "$work"/trig/crash-* "$work/int/crashes/"
  "$(tool two_aborts)" fuzz -o "$work/int" --time 120 --no-engine -q > "$work/int.log" 2>&1 &
  fp=$!
  sleep 4
  kill -INT $fp
  wait $fp
  rc=$?
  [ "$rc" = 130 ] && [ ! -d "$work/int/unconfirmed" ] && ! grep -q "signal 9" "$work/int.log" &&
    [ "$(count "$work/int/crashes" "crash-*")" -ge 1 ] && grep -q "left unconfirmed" "$work/int.log"
  ok_if $? "SIGINT: no failure moved or relabelled, exit $rc" "$work/int.log"
fi

# 4. a full disk: one error line and exit 2, never exit 0 with nothing saved
if wanted full_disk; then
  mkdir -p "$work/full"
  if mount -t tmpfs -o size=200k tmpfs "$work/full" 2> /dev/null; then
    run "$work/full.log" "$(tool two_aborts)" fuzz -o "$work/full/j" --time 200 --stop-on-first \
      --no-engine -q
    umount "$work/full"
    [ "$rc" = 2 ] && grep -q "could not be saved" "$work/full.log"
    ok_if $? "a full disk: 'could not be saved' and exit $rc" "$work/full.log"
  else
    echo "skip: cannot mount a small tmpfs here (not root?)"
  fi
  mkdir -p "$work/ro"
  # (through a pipe: the limit holds for the log file too)
  rc=$( (ulimit -f 0 && trap '' XFSZ && "$(tool two_aborts)" explore -o "$work/ro" --time 5 -q \
    2>&1; echo "exit $?") | tee "$work/ro.log" | sed -n 's/^exit //p')
  [ "$rc" = 2 ] && grep -q "cannot write in" "$work/ro.log"
  ok_if $? "an output that takes no data: one error line and exit 2 at once (got $rc)" "$work/ro.log"
fi

# 17, 18, 20: FIFOs, links, tiny times, seeds, energy, names, files
if wanted small; then
  mkdir -p "$work/fifo/crashes" && mkfifo "$work/fifo/crashes/crash-fifo"
  # (whether one second finds the ladder's abort depends on the machine's
  # speed: exit 0 or 1; a job that opened the FIFO hung until the guard)
  run "$work/fifo.log" "$(tool two_aborts)" fuzz -o "$work/fifo" --time 1 --no-engine -q
  { [ "$rc" = 0 ] || [ "$rc" = 1 ]; } && [ -p "$work/fifo/crashes/crash-fifo" ] &&
    ! grep -q "crash-fifo" "$work/fifo.log"
  ok_if $? "a FIFO named crash-* in crashes/ is skipped (exit $rc)" "$work/fifo.log"
  run "$work/rfifo.log" "$(tool two_aborts)" reach "$work/fifo/crashes/crash-fifo"
  [ "$rc" = 2 ]
  ok_if $? "reach on a FIFO: exit $rc at once" "$work/rfifo.log"
  run "$work/mem.log" "$(tool two_aborts)" reach /proc/self/mem
  [ "$rc" = 2 ]
  ok_if $? "reach /proc/self/mem: exit $rc" "$work/mem.log"
  run "$work/tiny.log" "$(tool two_aborts)" explore -o "$work/tiny" --time 1e-9 -q
  [ "$rc" = 0 ]
  ok_if $? "explore --time 1e-9 ends (exit $rc)" "$work/tiny.log"
  run "$work/tinyf.log" "$(tool two_aborts)" fuzz -o "$work/tiny" --time 1e-9 -q
  [ "$rc" = 2 ]
  ok_if $? "fuzz --time 1e-9 is refused (exit $rc)" "$work/tinyf.log"
  mkdir -p "$work/link" && echo precious > "$work/victim" && ln -s "$work/victim" "$work/link/libfuzzer.log"
  run "$work/link.log" "$(tool two_aborts)" fuzz -o "$work/link" --time 2 --jobs 2 \
    --engine "$F/attack_two_aborts_fuzzer" -q
  [ "$rc" = 2 ] && [ "$(cat "$work/victim")" = precious ]
  ok_if $? "fuzz refuses to write its log through a link (exit $rc)" "$work/link.log"
  run "$work/hex.log" "$(tool two_aborts)" explore -o "$work/hex" --seed 0x10 --roots 1 -q
  [ "$rc" = 2 ]
  ok_if $? "--seed 0x10 is not a decimal seed (exit $rc)" "$work/hex.log"
  run "$work/lfs.log" "$(tool two_aborts)" fuzz -o "$work/lfs" --time 2 --jobs 2 \
    --seed 18446744073709551615 --engine "$F/attack_two_aborts_fuzzer" -q
  # (2^64 - 1) mod (2^31 - 2) + 1
  grep -q "Seed: 16$" "$work/lfs/libfuzzer.log"
  ok_if $? "--seed 2^64-1 gives libFuzzer a fixed seed" "$work/lfs/libfuzzer.log"
  run "$work/en.log" "$(tool two_aborts)" explore -o "$work/en" --energy 0 --warmup 0 --roots 3000 -q
  grep -q " 0 branches" "$work/en.log"
  ok_if $? "--energy 0 forks no branch" "$work/en.log"
  mkdir -p "$work/utf" && cp "$TRIG" "$work/utf/$(printf 'bad\377name')"
  "$(tool two_aborts)" reach --json "$work/utf" > "$work/utf.json" 2> "$work/utf.err"
  python3 -c 'import json,sys; json.loads(open(sys.argv[1],"rb").read().decode("utf-8"))' \
    "$work/utf.json" 2> "$work/utf.err"
  ok_if $? "reach --json of a non-UTF-8 name is valid JSON" "$work/utf.err"
  mkdir -p "$work/stale/corpus" && : > "$work/stale/corpus/.0123.tmp-AbCdEf"
  run "$work/stale.log" "$(tool two_aborts)" fuzz -o "$work/stale" --time 1 --no-engine -q
  [ ! -e "$work/stale/corpus/.0123.tmp-AbCdEf" ]
  ok_if $? "fuzz removes the temporary files a stopped job left" "$work/stale.log"
fi
# 15. a fork() that fails in minimize's last child (the timeline's
# replay) is an error, not a timeline made of an uninitialised status
# (50 tries on a trigger that is minimal already: each try is a fork)
if wanted fork; then
  "$(tool two_aborts)" encode "$SRC/tests/attack/trigger.txt" -o "$work/min-trig.pb" > /dev/null 2>&1 ||
    fail "cannot encode tests/attack/trigger.txt"
  cat > "$work/shim.c" << 'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static long n, limit = -1;
static pid_t root;
__attribute__((constructor)) static void init(void) {
  char me[32];
  snprintf(me, sizeof me, "%ld", (long)getpid());
  const char *seen = getenv("SHIM_SEEN");
  if (seen && strcmp(seen, me))
    return; /* a child, or a program one ran: not counted (the tool's own re-exec is) */
  setenv("SHIM_SEEN", me, 1);
  root = getpid();
  if (getenv("SHIM_FAIL_AFTER"))
    limit = atol(getenv("SHIM_FAIL_AFTER"));
}
pid_t fork(void) {
  pid_t (*real)(void) = (pid_t(*)(void))dlsym(RTLD_NEXT, "fork");
  if (root && getpid() == root) {
    if (limit >= 0 && n >= limit) {
      errno = EAGAIN;
      return -1;
    }
    n++;
  }
  return real();
}
__attribute__((destructor)) static void fini(void) {
  const char *o = getenv("SHIM_COUNT");
  FILE *f = root && getpid() == root && o ? fopen(o, "w") : NULL;
  if (f) {
    fprintf(f, "%ld\n", n);
    fclose(f);
  }
}
EOF
  if "$cc" -shared -fPIC -o "$work/shim.so" "$work/shim.c" -ldl 2> "$work/shim.log"; then
    m="$(tool two_aborts) minimize -q --max-tries 50 $work/min-trig.pb"
    # shellcheck disable=SC2086 # m is a command line
    LD_PRELOAD=$work/shim.so SHIM_COUNT=$work/forks $m -o "$work/m1.pb" > "$work/m1.log" 2>&1
    n=$(cat "$work/forks" 2> /dev/null)
    # shellcheck disable=SC2086
    LD_PRELOAD=$work/shim.so SHIM_FAIL_AFTER=$((${n:-1} - 1)) $m -o "$work/m2.pb" > "$work/m2.log" 2>&1
    rc=$?
    [ "${n:-0}" -ge 1 ] && [ -f "$work/m1.pb.timeline.txt" ] && [ "$rc" = 2 ] &&
      grep -q "cannot run the replay for the timeline" "$work/m2.log" &&
      [ ! -e "$work/m2.pb.timeline.txt" ]
    ok_if $? "minimize: a failed fork for the timeline is an error, exit $rc (${n:-?} forks)" \
      "$work/m2.log"
  else
    bad "cannot build the fork shim: $(cat "$work/shim.log")"
  fi
fi
finish
