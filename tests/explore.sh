#!/bin/sh
# simfuzz explore and simfuzz reach on the ladder target (a bug behind two
# rare events in order, and an assertion that can never be reached):
# explore finds the bug in a bounded run and its crash file replays and
# triages, and --origins says which rare states its branches forked at
# (for the default job too, and for branches by fork); at least as many sweep seeds do not find it; reach lists the
# unreachable assertion as never reached; fuzz confirms its findings;
# revisits of kept states reach them again (and a nondeterministic target's
# are caught); --stats counts runs per assertion-site state; branches by
# fork (SIMFUZZ_SEARCH=-rerun) do this as the default re-runs do; two
# causes of one kind of failure both get crash files, and with
# --all-crashes every failure does; yield (the default) runs the campaign of -yield until
# something fails and keeps the rare cause; +anchor's branches that wait
# for a rise to the top rank replay as files; killing explore in any way
# leaves no process behind.
# usage: explore.sh BUILD_DIR
T_NAME=explore
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
B=$1/bin/simfuzz-ladder
ND=$1/bin/simfuzz-nondet
[ -x "$B" ] && [ -x "$ND" ] || fail "no $B or $ND"

# 1. a bounded run from the same roots as the sweep below; --share runs
# gives the branches their share in runs, not time, so the campaign is the
# same on a loaded machine (under the default time share a slow fork left
# the branches too few runs in 20,000 roots, once in four full runs)
"$B" explore -o "$work/out" --roots 20000 --time 120 --seed 5000 --stop-on-first -q \
  --share runs --json "$work/ex.json" --origins "$work/origins.txt" > "$work/ex.log" 2>&1
rc=$?
[ "$rc" = 1 ] && grep -q "FAILED invariant ladder" "$work/ex.log" ||
  fail "explore: exit $rc, want 1 and the ladder failure: $(cat "$work/ex.log")"
ok "explore found the two-step bug: $(sed -n 2p "$work/ex.log")"
crash=$(ls "$work/out"/crash-* | head -n 1)
[ -n "$crash" ] || fail "no crash file in $work/out"
replays_as "$B" "$crash" ladder

# --origins: a line per crash file, how the explorer reached it. Its forks
# are the file's injected steps: one per event they follow, as many steps
# each (origin_agrees BIN FILE ORIGINS), and its root is the one the
# FAILED line names. The ladder's bug takes two rare states in order, so
# at least one fork, at one of the ladder's sites.
origin_agrees() {
  line=$(grep "^$(basename "$2") " "$3" | head -n 1)
  want=$("$1" show "$2" | sed -n 's/^ *after_event: //p' | sort -n | uniq -c |
    awk '{ printf "%sx%s ", $2, $1 }')
  got=$(printf '%s\n' "$line" | tr '|' '\n' |
    sed -n 's/^ event=\([0-9]*\) .* steps=\([0-9]*\).*/\1x\2/p' | sort -n | tr '\n' ' ')
  [ -n "$line" ] && [ "$want" = "$got" ] ||
    bad "--origins: '$line' against the file's injected steps '$want'"
}
origin_agrees "$B" "$crash" "$work/origins.txt"
seed=$(sed -n 's/.*FAILED.*(root seed \([0-9]*\)).*/\1/p' "$work/ex.log")
forks=$(sed -n 's/.* root=[0-9]* forks=\([0-9]*\).*/\1/p' "$work/origins.txt")
[ "$(wc -l < "$work/origins.txt")" = 1 ] && grep -q " root=$seed forks=" "$work/origins.txt" &&
  [ "${forks:-0}" -ge 1 ] && grep -q ' site bucket=[0-9]* runs=[0-9]* node=0 .*"\(boots of n0\|n0 restarted\)' \
  "$work/origins.txt" && grep -q "how each crash file was reached.*$work/origins.txt" "$work/ex.log" ||
  bad "--origins: root seed $seed, forks $forks: $(cat "$work/origins.txt" "$work/ex.log")"
ok "--origins: $(cut -c 1-160 "$work/origins.txt")"
# where no line can go: a usage error, before any run
rcs=
for o in "$work" /dev/null "$work/no/such/dir"; do
  "$B" explore -o "$work/out4" --roots 1 -q --origins "$o" >> "$work/ex4.log" 2>&1
  rcs="$rcs$?"
done
[ "$rcs" = 222 ] && grep -q "cannot write $work: Is a directory" "$work/ex4.log" &&
  grep -q "/dev/null is not a regular file" "$work/ex4.log" &&
  grep -q "cannot write $work/no/such/dir" "$work/ex4.log" ||
  bad "--origins to a directory, a device or nowhere: exits $rcs: $(cat "$work/ex4.log")"
"$B" triage "$crash" > "$work/triage.log" 2>&1
grep -q "ladder" "$work/triage.log" || fail "triage: $(cat "$work/triage.log")"
set -- "$work/out"/diverged-*
[ -e "$1" ] && bad "a branch did not replay" || ok "the crash file replays and triages"
# the same campaign again: the same runs and the same crash file
"$B" explore -o "$work/out2" --roots 20000 --time 120 --seed 5000 --stop-on-first -q \
  --share runs > "$work/ex2.log" 2>&1
summary() { sed -n 's/^explore: \([0-9]* roots, [0-9]* branches ([^)]*)\).*/\1/p' "$1"; }
[ -n "$(summary "$work/ex.log")" ] && [ "$(summary "$work/ex.log")" = "$(summary "$work/ex2.log")" ] &&
  [ "$(ls "$work/out2")" = "$(ls "$work/out")" ] &&
  ok "--share runs: the same campaign twice ($(summary "$work/ex.log"))" ||
  bad "--share runs: $(summary "$work/ex.log") then $(summary "$work/ex2.log")"
"$B" explore -o "$work/out3" --share wall -q > "$work/ex3.log" 2>&1
[ $? = 2 ] && grep -q "share takes time or runs" "$work/ex3.log" || fail "--share wall: $(cat "$work/ex3.log")"

# 2. at least as many random seeds from the same roots do not find it
runs=$(sed -n 's/^explore: \([0-9]*\) roots, \([0-9]*\) branches.*/\1 \2/p' "$work/ex.log" |
  awk '{print $1 + $2}')
[ -n "$runs" ] && [ "$runs" -le 40000 ] || fail "explore used $runs runs: $(cat "$work/ex.log")"
# --json: the summary line's counts, as one object (the nightly job reads it)
jr=$(sed -n 's/.*"roots": *\([0-9]*\), *"branches": *\([0-9]*\),.*"failures": *[1-9].*/\1 \2/p' \
  "$work/ex.json" | awk '{print $1 + $2}')
[ "$jr" = "$runs" ] && ok "explore --json: the summary's counts ($jr runs, failures)" ||
  bad "explore --json: '$jr' runs against the summary's $runs: $(cat "$work/ex.json")"
# as many seeds as explore made runs (at least 1000): the claim, at its cost
n=$((runs > 1000 ? runs : 1000))
"$B" sweep --seeds "5000-$((5000 + n - 1))" -q > "$work/sweep.log" 2>&1
src=$?
[ "$src" = 0 ] && ok "the sweep's $n seeds from 5000 do not find it (explore: $runs runs)" ||
  bad "the sweep found it (exit $src): the ladder is too easy to show branching"

# 3. reach: the never-reachable site is listed, the rung is reached
"$B" reach "$work/out" > "$work/reach.log" 2>&1 || fail "reach: $(cat "$work/reach.log")"
grep -q "NEVER.*n0 up before its first boot" "$work/reach.log" &&
  grep -q "sometimes  *n0 restarted twice" "$work/reach.log" &&
  ! grep -q "NEVER.*n0 restarted twice" "$work/reach.log" ||
  fail "reach: $(cat "$work/reach.log")"
"$B" reach --require-all "$work/out" > /dev/null 2>&1
[ $? = 1 ] || fail "reach --require-all: want exit 1 with a never-reached site"
"$B" reach --json "$work/out" > "$work/reach.json" || fail "reach --json"
python3 - "$work/reach.json" <<'PY' || fail "reach --json: $(cat "$work/reach.json")"
import json, sys
d = json.load(open(sys.argv[1]))
never = [a["name"] for a in d["assertions"] if a["hits"] == 0]
assert never == ["n0 up before its first boot"], never
best = [a["best"] for a in d["assertions"] if a["kind"] == "maximize"]
assert best and best[0] >= 3, best
PY
ok "reach lists the unreachable assertion as never reached"

# 4. the default job: explore, then confirmation of every crash file. How
# many roots pass before the branch that finds the bug depends on the
# machine's load (branches get a share of the time): 3.5 s here mostly,
# 14 s in 1 of 10 trials, over 10 s once in CI; so a generous budget that
# ends at the first failure.
"$B" fuzz -o "$work/job" --time 90 --seed 7000 --no-engine --stop-on-first --confirm "$B" -q \
  > "$work/fuzz.log" 2>&1
rc=$?
[ "$rc" = 1 ] && grep -q "^fuzz: confirmed .*crash-.*ladder.*under sanitizers" "$work/fuzz.log" &&
  [ -n "$(find "$work/job/corpus" -type f | head -n 1)" ] ||
  fail "fuzz: exit $rc, want 1, a confirmed ladder failure and a corpus: $(cat "$work/fuzz.log")"
for f in "$work/job/crashes"/crash-*; do
  origin_agrees "$B" "$f" "$work/job/origins.txt"
done
ok "fuzz confirms what it found: $(tail -n 1 "$work/fuzz.log")"

# 5. the warm-up: no branch before the first W roots (default 1000), so a
# bug the sweep finds in its first seeds costs the sweep's time
branches() { sed -n 's/^explore: [0-9]* roots, \([0-9]*\) branches.*/\1/p' "$1"; }
# (the W-th root too: it branched, as the time count, which starts after
# it, did not say; --warmup 2 --roots 2 branched once)
"$B" explore -o "$work/w1" --roots 1000 --seed 5000 -q > "$work/w1.log" 2>&1
"$B" explore -o "$work/w2" --roots 999 --seed 5000 --warmup 100 -q > "$work/w2.log" 2>&1
[ "$(branches "$work/w1.log")" = 0 ] && [ "$(branches "$work/w2.log")" -gt 0 ] ||
  fail "warm-up: $(cat "$work/w1.log" "$work/w2.log")"
for w in 1 2 3 4 5 10 20 50 100; do
  "$B" explore -o "$work/w3" --roots $w --warmup $w --share runs -q > "$work/w3.log" 2>&1
  [ "$(branches "$work/w3.log")" = 0 ] || bad "--warmup $w --roots $w: $(cat "$work/w3.log")"
done
ok "no branch in the first 1000 roots, nor the first W of a warm-up of W; $(branches "$work/w2.log") after a warm-up of 100"

# 6. output directories are created with their parents, as mkdir -p
"$B" explore -o "$work/new/a/out" --corpus "$work/new/b/corpus" --roots 5 -q > "$work/p.log" 2>&1 &&
  [ -d "$work/new/a/out" ] && [ -d "$work/new/b/corpus" ] ||
  fail "explore -o into a missing parent: $(cat "$work/p.log")"
ok "explore creates missing parents of -o and --corpus"

# 8. revisits: kept rare states are re-run up to their event, bit for bit,
# and branch again there; on a target that is not deterministic the re-run
# does not reach the same moment, and is counted and skipped
revisits() { sed -n 's/^explore: .* branches (depth <= [0-9]*, \([0-9]*\) revisits).*/\1/p' "$1"; }
"$B" explore -o "$work/r1" --roots 4000 --seed 5000 --warmup 100 -q > "$work/r1.log" 2>&1
n=$(revisits "$work/r1.log")
[ -n "$n" ] && [ "$n" -gt 0 ] && ! grep -q "revisits diverged" "$work/r1.log" ||
  fail "revisits: $(cat "$work/r1.log")"
"$B" explore -o "$work/r0" --roots 3000 --seed 5000 --warmup 100 --keep 0 -q > "$work/r0.log" 2>&1
[ "$(revisits "$work/r0.log")" = 0 ] || fail "--keep 0 still revisits: $(cat "$work/r0.log")"
# (20 s, not the default 60: here a revisit diverges within the first seconds,
# 9 in 10 s on a quiet machine)
"$ND" explore -o "$work/nd" --roots 300000 --warmup 100 --time 20 -q > "$work/nd.log" 2>&1
grep -q "[1-9][0-9]* revisits diverged" "$work/nd.log" || fail "nondet revisits: $(cat "$work/nd.log")"
ok "$n revisits reach their states again; --keep 0 makes none; a nondeterministic target's are caught"
# a rare state a branch of the deepest level reaches is kept too, and so
# is one first reached by a revisit's branch: the boots of n0 are climbed
# one kept state after another, past --depth (before, kept states stopped
# at --depth and their revisits' runs one level past it)
# (--share runs: the same campaign on a loaded machine, where the time share
# once gave 10,000 roots only 292 branches, not enough to climb)
"$B" explore -o "$work/r2" --roots 1200 --time 600 --seed 5000 --warmup 100 --depth 1 --stats \
  --share runs -q > "$work/r2.log" 2>&1
deep=$(sed -n 's/^explore: .* branches (depth <= \([0-9]*\), [1-9][0-9]* revisits).*/\1/p' "$work/r2.log")
[ -n "$deep" ] && [ "$deep" -ge 3 ] && grep -q "^explore: kept boots of n0 = .* at level \([2-9]\|[1-9][0-9]\)," "$work/r2.log" ||
  fail "states reached past --depth 1 kept: $(cat "$work/r2.log")"
ok "kept states past --depth 1: $(grep -c "^explore: kept .* at level \([2-9]\|[1-9][0-9]\)," "$work/r2.log"), runs to depth $deep"
# and a kept way to a state, once revisited V times (--worn), gives way to
# the next run that reaches the state; with --worn 0 never (how many
# revisits a run gets is fixed by --share runs: V = 2 keeps this quick)
"$B" explore -o "$work/w2" --roots 1200 --time 600 --seed 5000 --warmup 100 --depth 1 --worn 2 \
  --stats --share runs -q > "$work/w2.log" 2>&1
"$B" explore -o "$work/w0" --roots 1200 --time 600 --seed 5000 --warmup 100 --depth 1 --worn 0 \
  --stats --share runs -q > "$work/w0.log" 2>&1
replaced='^explore: kept .* revisits, way \([2-9]\|[1-9][0-9][0-9]*\),'
grep -q "$replaced" "$work/w2.log" && grep -q "^explore: kept .* revisits, way 1," "$work/w0.log" &&
  ! grep -q "$replaced" "$work/w0.log" ||
  fail "worn ways (--worn 2, then 0): $(cat "$work/w2.log" "$work/w0.log")"
ok "worn ways replaced: $(grep -c "$replaced" "$work/w2.log") kept states with --worn 2, none with 0"

# 9. --stats: the runs that reached each assertion-site state, from the
# campaign's own counts (n0 boots once in every root, and a branch does
# not reach again what its root reached), the branches by the kind of
# state they forked at, and the states job 0 kept
"$B" explore -o "$work/st" --roots 3000 --seed 5000 --warmup 100 --stats -q > "$work/st.log" 2>&1
roots=$(sed -n 's/^explore: \([0-9]*\) roots.*/\1/p' "$work/st.log")
nkept=$(sed -n 's/^explore: job 0 keeps \([0-9]*\) states$/\1/p' "$work/st.log")
[ "$roots" = 3000 ] && grep -q "^ *3000  boots of n0 = 1$" "$work/st.log" &&
  grep -q "^ *0  n0 up before its first boot$" "$work/st.log" &&
  [ -n "$nkept" ] && [ "$nkept" -gt 0 ] &&
  [ "$(grep -c "^explore: kept .* at level [0-9]*, [0-9]* revisits, way [1-9][0-9]*, at [0-9.]* s of a run to [0-9.]* s$" "$work/st.log")" = "$nkept" ] ||
  fail "explore --stats: $(cat "$work/st.log")"
# and every branch under the kind of state it forked at: revisits, sites
# (the ladder's rungs), other kinds
n=$(branches "$work/st.log")
sum=$(sed -n 's/^explore: branches by the state they forked at: //p' "$work/st.log" |
  tr ',' '\n' | awk '{ s += $1 } END { print s + 0 }')
grep -q "branches by the state they forked at: [1-9][0-9]* in revisits of kept states.*, [1-9][0-9]* at site states" \
  "$work/st.log" && [ "$sum" = "$n" ] ||
  bad "--stats: $sum branches by the state they forked at, of $n: $(cat "$work/st.log")"
ok "--stats counts the runs per assertion-site state, the $n branches by where they forked, and lists the $nkept kept states"
# +even: a site's state gets the branches any state of its rarity gets, so
# the same campaign forks fewer branches at the ladder's sites and more at
# other kinds of state (744 and 86, against 10 and 700 here)
at() { # LOG KIND: the branches forked at KIND's states
  sed -n "s/^explore: branches by the state they forked at: .* \([0-9][0-9]*\) at $2 states.*/\1/p" "$1"
}
"$B" explore -o "$work/ev0" --roots 3000 --seed 5000 --share runs --stats -q > "$work/ev0.log" 2>&1
SIMFUZZ_SEARCH=+even "$B" explore -o "$work/ev1" --roots 3000 --seed 5000 --share runs --stats -q \
  > "$work/ev1.log" 2>&1
s0=$(at "$work/ev0.log" site); s1=$(at "$work/ev1.log" site)
p0=$(at "$work/ev0.log" pair); p1=$(at "$work/ev1.log" pair)
[ -n "$s0" ] && [ -n "$s1" ] && [ -n "$p0" ] && [ -n "$p1" ] && [ $((s1 * 4)) -lt "$s0" ] &&
  [ "$p1" -gt $((p0 * 4)) ] ||
  bad "+even: site $s0 -> $s1, pair $p0 -> $p1: $(cat "$work/ev0.log" "$work/ev1.log")"
ok "+even: branches at site states $s0 -> $s1, at pair states $p0 -> $p1"
# +split: the sites' branches may take two thirds of the branches' time,
# and other kinds branch from 1 run in 10 in the last third, so fewer fork
# at the sites, more at other kinds, and the sites still keep the most
# (744 and 86, against 612 and 379 here)
SIMFUZZ_SEARCH=+split "$B" explore -o "$work/sp1" --roots 3000 --seed 5000 --share runs --stats -q \
  > "$work/sp1.log" 2>&1
s2=$(at "$work/sp1.log" site); p2=$(at "$work/sp1.log" pair)
# and --stats tells the sites' part of the time (20.4 % and 13.7 % here)
site_pct() { # LOG: the percent of the time in new branches at site states, times 10
  sed -n 's/.*new branches at site states \([0-9]*\)\.\([0-9]\) %).*/\1\2/p' "$1"
}
t0=$(site_pct "$work/ev0.log"); t2=$(site_pct "$work/sp1.log")
[ -n "$s2" ] && [ -n "$p2" ] && [ "$s2" -lt "$s0" ] && [ "$p2" -gt $((p0 * 2)) ] && [ "$s2" -gt "$p2" ] &&
  [ -n "$t0" ] && [ -n "$t2" ] && [ "$t2" -gt 0 ] && [ "$t2" -lt "$t0" ] ||
  bad "+split: site $s0 -> $s2, pair $p0 -> $p2, site time $t0 -> $t2: $(cat "$work/ev0.log" "$work/sp1.log")"
ok "+split: branches at site states $s0 -> $s2, at pair states $p0 -> $p2; the sites' time $t0 -> $t2 per mille"

# 10. branches by fork (SIMFUZZ_SEARCH=-rerun), the explorer's first way:
# each branch a fork of the running world, not a re-run from scratch in
# the worker (the default, above). The same bug is found, its file replays
# (no diverged file), the same campaign twice is the same; under --share
# runs the branches are as many as re-runs give (the same decisions, in
# another order: 1,070 against 1,091 here from 2,000 roots; a fork costs
# three re-runs under ASan); revisits reach their states, and a
# nondeterministic target's are caught
rr() { SIMFUZZ_SEARCH=-rerun "$@"; }
rr "$B" explore -o "$work/rr1" --roots 20000 --time 120 --seed 5000 --stop-on-first -q \
  --share runs > "$work/rr1.log" 2>&1
rc=$?
rr "$B" explore -o "$work/rr2" --roots 20000 --time 120 --seed 5000 --stop-on-first -q \
  --share runs > "$work/rr2.log" 2>&1
crash=$(ls "$work/rr1"/crash-* 2> /dev/null | head -n 1)
set -- "$work/rr1"/diverged-*
[ "$rc" = 1 ] && grep -q "FAILED invariant ladder" "$work/rr1.log" && [ -n "$crash" ] &&
  [ ! -e "$1" ] && [ -n "$(summary "$work/rr1.log")" ] &&
  [ "$(summary "$work/rr1.log")" = "$(summary "$work/rr2.log")" ] &&
  [ "$(ls "$work/rr1")" = "$(ls "$work/rr2")" ] ||
  fail "explore -rerun: exit $rc: $(cat "$work/rr1.log" "$work/rr2.log")"
replays_as "$B" "$crash" ladder
rr "$B" explore -o "$work/rr3" --roots 20000 --time 120 --seed 5000 --stop-on-first -q \
  --share runs --origins "$work/rr3.txt" > "$work/rr3.log" 2>&1
crash=$(ls "$work/rr3"/crash-* 2> /dev/null | head -n 1)
[ -n "$crash" ] && origin_agrees "$B" "$crash" "$work/rr3.txt" ||
  bad "explore -rerun --origins: $(cat "$work/rr3.log" "$work/rr3.txt")"
"$B" explore -o "$work/rf" --roots 2000 --seed 5000 --warmup 100 --share runs -q > "$work/rf.log" 2>&1
rr "$B" explore -o "$work/rr" --roots 2000 --seed 5000 --warmup 100 --share runs -q > "$work/rr.log" 2>&1
bf=$(branches "$work/rf.log")
br=$(branches "$work/rr.log")
n=$(revisits "$work/rr.log")
[ -n "$bf" ] && [ -n "$br" ] && [ $((br * 4)) -ge $((bf * 3)) ] && [ $((br * 3)) -le $((bf * 4)) ] &&
  [ -n "$n" ] && [ "$n" -gt 0 ] && ! grep -q "revisits diverged" "$work/rr.log" ||
  fail "forks against re-runs: $(cat "$work/rf.log" "$work/rr.log")"
rr "$ND" explore -o "$work/rnd" --roots 300000 --warmup 100 --time 10 -q > "$work/rnd.log" 2>&1
grep -q "[1-9][0-9]* revisits diverged" "$work/rnd.log" ||
  fail "-rerun: nondet revisits: $(cat "$work/rnd.log")"
ok "-rerun: the same bug, a file that replays, the same campaign twice; $br branches forked against $bf re-run, $n revisits"

# 11. two bugs of one kind (tests/targets/twofold.c: one invariant at one
# site, a common cause in about 8 % of seeds and the ladder's rare one):
# past the kind's first 3 files, a failure whose run reached a rare state
# that no failing run of its kind reached is kept too (at most 64 files a
# kind), so the rare cause gets a file; before, the common cause's first 3
# were the kind's only files
TW=$(dirname "$B")/simfuzz-twofold
[ -x "$TW" ] || fail "no $TW"
# (4,000 roots: 52 files, 3 of the rare cause, 509 failures counted only;
# with --stats, the same campaign is 13's)
"$TW" explore -o "$work/tw" --roots 4000 --time 300 --seed 5000 --share runs -q --stats \
  --json "$work/tw.json" > "$work/tw.log" 2>&1
[ $? = 1 ] || fail "twofold: explore found nothing: $(cat "$work/tw.log")"
nf=0; rare=
for f in "$work/tw"/crash-*; do
  [ -e "$f" ] || continue
  nf=$((nf + 1))
  "$TW" replay "$f" > "$work/tw.replay" 2>&1
  grep -q "^==simfuzz==   n0 paused after two restarts" "$work/tw.replay" && rare=$f
done
tw_rare=$rare
[ -n "$rare" ] && [ "$nf" -gt 3 ] && [ "$nf" -le 64 ] &&
  ok "two causes of one kind: the rare one's file kept, $nf files of the kind" ||
  bad "two causes of one kind: $nf files, rare one ${rare:-not kept}: $(tail -n 2 "$work/tw.log")"
# the failures without a file are counted, and the summary says so
jn() { sed -n "s/.*\"$2\": \([0-9]*\).*/\1/p" "$1"; }
tw_fail=$(jn "$work/tw.json" failures); tw_unkept=$(jn "$work/tw.json" unkept)
[ -n "$tw_unkept" ] && [ "$tw_unkept" -gt 0 ] &&
  [ $(($(jn "$work/tw.json" saved) + tw_unkept)) = "$tw_fail" ] &&
  grep -q "^explore: $tw_unkept failures of kinds that had their files were counted" "$work/tw.log" &&
  ok "the $tw_unkept failures without a file are counted and reported" ||
  bad "failures without a file: $(cat "$work/tw.json") $(tail -n 2 "$work/tw.log")"

# 12. --all-crashes: a file for every failure, as the sweep keeps one per
# failing seed (the same campaign as 11's: the same failures, every rare
# cause among them filed, none counted only)
"$TW" explore -o "$work/twa" --roots 4000 --time 300 --seed 5000 --share runs -q --all-crashes \
  --json "$work/twa.json" > "$work/twa.log" 2>&1
[ $? = 1 ] || fail "twofold --all-crashes: explore found nothing: $(cat "$work/twa.log")"
nfa=$(find "$work/twa" -name 'crash-*' | wc -l)
"$TW" replay --no-timeline "$work/twa"/crash-* > "$work/twa.replay" 2>&1
nrare=$(grep -c "^==simfuzz==   n0 paused after two restarts" "$work/twa.replay")
[ "$(jn "$work/twa.json" failures)" = "$tw_fail" ] && [ "$(jn "$work/twa.json" unkept)" = 0 ] &&
  [ "$(jn "$work/twa.json" saved)" = "$tw_fail" ] && [ "$nfa" = "$tw_fail" ] && [ "$nrare" -gt 1 ] &&
  grep -q "^explore: $nfa crash files in .* (one per failure)" "$work/twa.log" &&
  ok "--all-crashes: $nfa files for $tw_fail failures, $nrare of them the rare cause" ||
  bad "--all-crashes: $nfa files, $nrare rare: $(cat "$work/twa.json") $(tail -n 2 "$work/twa.log")"
# and the default job passes it on: every failure gets a file, confirmed
"$TW" fuzz -o "$work/twf" --time 2 --seed 5000 --no-engine --share runs --all-crashes -q \
  > "$work/twf.log" 2>&1
# (files are named by content: two failures of one scenario are one file)
nff=$(jn "$work/twf/explore.json" failures); nfc=$(find "$work/twf/crashes" -name 'crash-*' | wc -l)
[ -n "$nff" ] && [ "$nff" -gt 3 ] && [ "$(jn "$work/twf/explore.json" unkept)" = 0 ] &&
  [ "$(jn "$work/twf/explore.json" saved)" = "$nff" ] && [ "$nfc" -gt 3 ] &&
  grep -q "^fuzz: $nfc confirmed failures" "$work/twf.log" &&
  ok "fuzz --all-crashes: $nff failures, $nfc confirmed files" ||
  bad "fuzz --all-crashes: $(cat "$work/twf/explore.json") $(tail -n 3 "$work/twf.log")"

# 13. yield (on by default; -yield turns it off): the branches' share weighed by
# the failures that were news, theirs against the roots' (explore/share.h).
# Until something fails the campaign is the default one, run for run; on
# twofold, where the roots fail often and branches find the rare cause, the
# branches keep their share and the rare cause its file; --stats counts both.
RK=$(dirname "$B")/simfuzz-raft_kv # the zoo's raft without a bug
[ -x "$RK" ] || fail "no $RK"
SIMFUZZ_SEARCH=-yield "$RK" explore -o "$work/y0" --roots 3000 --seed 5000 --share runs -q \
  > "$work/y0.log" 2>&1
"$RK" explore -o "$work/y1" --roots 3000 --seed 5000 --share runs -q > "$work/y1.log" 2>&1
grep -q " 0 failures of 0 kinds" "$work/y0.log" && [ "$(summary "$work/y0.log")" = "$(summary "$work/y1.log")" ] &&
  ok "yield: the campaign of -yield until something fails ($(summary "$work/y1.log"))" ||
  bad "yield without failures: $(summary "$work/y0.log") then $(summary "$work/y1.log")"
# (11's campaign, with yield on by default: its rare cause was filed there)
grep -q "^explore: failures found by roots [0-9]*, by branches and revisits [1-9].* (on)" \
  "$work/tw.log" && [ -n "$tw_rare" ] &&
  ok "yield on twofold: the rare cause filed; $(grep -o 'news .*' "$work/tw.log")" ||
  bad "yield on twofold: rare cause ${tw_rare:-not filed}: $(grep '^explore: failures' "$work/tw.log")"

# 14. SIMFUZZ_SEARCH=+anchor (off by default): some futures wait for a rise
# to the top rank (Step.on_change) and name nodes by rank then; a branch
# with such a step is still an ordinary scenario file that replays its
# failure, and without +anchor no file has one.
LR=$(dirname "$B")/simfuzz-raft_kv_bug_local_read
[ -x "$LR" ] || fail "no $LR"
anchored() { # DIR: how many of its crash files fail with a step that waited for a rise
  k=0
  for f in "$1"/crash-*; do
    [ -e "$f" ] || continue
    "$LR" replay "$f" > "$work/an.r" 2>&1
    grep -q "FAILURE in target" "$work/an.r" && grep -q "(at rise [1-4] to the top rank)" "$work/an.r" &&
      k=$((k + 1))
  done
  echo "$k"
}
SIMFUZZ_SEARCH=+anchor "$LR" explore -o "$work/an1" --roots 3000 --seed 5000 --share runs \
  --all-crashes -q > "$work/an1.log" 2>&1
[ $? = 1 ] || fail "+anchor: explore found nothing: $(tail -n 3 "$work/an1.log")"
"$LR" explore -o "$work/an0" --roots 3000 --seed 5000 --share runs --all-crashes -q \
  > "$work/an0.log" 2>&1
set -- "$work/an1"/diverged-*
ka=$(anchored "$work/an1"); k0=$(anchored "$work/an0")
[ ! -e "$1" ] && [ "$ka" -gt 0 ] && [ "$k0" = 0 ] &&
  ok "+anchor: $ka crash files fail with a step that waited for a rise, and replay" ||
  bad "+anchor: $ka anchored crash files (default: $k0), diverged: $*"

# 15. a SIMFUZZ_SEARCH that names no part is a usage error (2), and the
# message lists every part, the feature kinds and the search parts' table
SIMFUZZ_SEARCH=+nosuch "$B" explore -o "$work/ns" --roots 1 -q > "$work/ns.log" 2>&1
st=$?
[ "$st" = 2 ] && grep -q "lock, dwell, epoch, timeline, inflight, rerun, yield, anchor, wide, even, split, oneshot$" "$work/ns.log" &&
  ok "SIMFUZZ_SEARCH=+nosuch: usage error naming every part" ||
  bad "SIMFUZZ_SEARCH=+nosuch: status $st, $(cat "$work/ns.log")"

# 7. no process outlives explore, stopped by SIGTERM, SIGINT or SIGKILL
left() { pgrep -f "$work/$1" | grep -v "^$$\$" || true; }
for sig in TERM INT KILL; do
  "$B" explore -o "$work/k$sig" --time 600 --jobs 2 --energy 16 -q > "$work/k$sig.log" 2>&1 &
  pid=$!
  sleep 2
  [ -n "$(left "k$sig")" ] || fail "explore ($sig) is not running: $(cat "$work/k$sig.log")"
  kill -s "$sig" "$pid"
  wait "$pid" 2> /dev/null
  i=0
  while [ -n "$(left "k$sig")" ] && [ $i -lt 50 ]; do
    sleep 0.1
    i=$((i + 1))
  done
  [ -z "$(left "k$sig")" ] && ok "no process left after SIG$sig" ||
    bad "processes left after SIG$sig: $(left "k$sig" | tr '\n' ' ')"
  pkill -9 -f "$work/k$sig" 2> /dev/null
done
finish
