#!/bin/sh
# bench/craft_bugs_ttb.sh, the script behind issue 36's table, against fake
# targets (shell scripts standing in for a variant and its control): a method
# that runs for its whole budget without a find is a miss, recorded as "-";
# one that stops at once (a tool that could not start, as afl-fuzz aborting
# on "No more free CPU cores") searched for nothing, so the script fails and
# records no row, where it used to record a miss. A failure of the newest
# library's own bugs (examples/craft/bugs/background) is not a find, nor is
# one that the control shows on a later replay, or one that the variant's
# own replays do not always show. A results file keeps every find beside
# it, so each can be judged again.
# Usage: tests/bench_ttb.sh
set -u
T_NAME=bench_ttb
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
fake_target "$work/b" quits 'exit 0'
fake_target "$work/b" quits_fixed 'exit 0'
fake_target "$work/b" runs 'exec sleep 1000'
fake_target "$work/b" runs_fixed 'exec sleep 1000'
run() { # NAME: one sweep trial of 16 s into $work/NAME.rows; its status
  sh "$SRC/bench/craft_bugs_ttb.sh" "$work/b" "$1" --methods sweep --pairs 1 --budget 16 \
    --cores 0,0 --results "$work/$1.rows" > "$work/$1.log" 2>&1
}
run runs || fail "a trial that ran its budget failed: $(tail -n 3 "$work/runs.log")"
grep -q '^runs sweep 1 - 16 ' "$work/runs.rows" ||
  fail "a trial that ran its budget without a find is no miss: $(cat "$work/runs.rows")"
ok "a trial that runs its whole budget without a find is recorded as a miss"
if run quits; then
  bad "a method that stopped at once was not reported"
else
  grep -q 'ended early without a find' "$work/quits.log" ||
    bad "no reason given: $(tail -n 3 "$work/quits.log")"
  ok "a method that stops at once fails the script"
fi
if [ -s "$work/quits.rows" ]; then
  bad "a method that stopped at once was recorded: $(cat "$work/quits.rows")"
else
  ok "and no row is recorded for it"
fi
# a variant's failure of a kind the newest library has too (bugs/background)
# is never the bug, even when the control passes that scenario: the trial's
# find is the later file of the variant's own kind
fake_target "$work/b" moved 'case $1 in
  sweep) while [ "$1" != -o ]; do shift; done; mkdir -p "$2"
    echo background > "$2/craft_moved-seed-1.pb"; sleep 1
    echo own > "$2/craft_moved-seed-2.pb"; exec sleep 1000 ;;
  replay) if grep -q background "$2"; then k=leader_without_election; else k=election_safety; fi
    echo "$2: scenario -> FAILED $k"; exit 1 ;;
esac'
fake_target "$work/b" moved_fixed 'echo "$2: scenario -> ok"'
# (no --keep: a results file keeps its finds beside it, in NAME.finds/)
sh "$SRC/bench/craft_bugs_ttb.sh" "$work/b" moved --methods sweep --pairs 1 --budget 16 \
  --cores 0,0 --results "$work/moved.rows" > "$work/moved.log" 2>&1 ||
  fail "the trial failed: $(tail -n 3 "$work/moved.log")"
grep -q '^moved sweep 1 [0-9]' "$work/moved.rows" ||
  fail "the variant's own failure was not found: $(cat "$work/moved.rows")"
kept=$work/moved.finds/moved-sweep-1-16s.pb
[ -f "$kept" ] || fail "the find was not kept beside the results: $(ls -R "$work" | head -n 20)"
[ "$(cat "$kept")" = own ] || fail "the find is the newest library's own bug: $(cat "$kept")"
ok "a failure of the newest library's own bugs is not the variant's find; the find is kept"
# a control whose first replay of a scenario takes a rare path (passes it),
# and whose later ones fail it as the variant does, has the variant's
# failure too (also-fixed); a scenario that the variant's own replays fail
# one time and pass the next tells nothing (unstable); neither is a find,
# the later file that fails the variant every time and never the control
# is (before, the first file was: its control replay passed once)
fake_target "$work/b" flaky 'case $1 in
  sweep) while [ "$1" != -o ]; do shift; done; mkdir -p "$2"
    echo shared > "$2/craft_flaky-seed-1.pb"; sleep 1
    echo wobbly > "$2/craft_flaky-seed-2.pb"; sleep 1
    echo own > "$2/craft_flaky-seed-3.pb"; exec sleep 1000 ;;
  replay) c="$0.$(cat "$2").n"; k=$(cat "$c" 2> /dev/null || echo 0); echo $((k + 1)) > "$c"
    if [ "$(cat "$2")" = wobbly ] && [ $((k % 2)) = 1 ]; then echo "$2: scenario -> ok"; exit 0; fi
    echo "$2: scenario -> FAILED election_safety"; exit 1 ;;
  triage) echo "$2: ok" ;;
esac'
fake_target "$work/b" flaky_fixed 'case $1 in
  replay) c="$0.$(cat "$2").n"; k=$(cat "$c" 2> /dev/null || echo 0); echo $((k + 1)) > "$c"
    if [ "$(cat "$2")" = shared ] && [ "$k" != 0 ]; then
      echo "$2: scenario -> FAILED election_safety"; exit 1
    fi
    echo "$2: scenario -> ok" ;;
  triage) echo "$2: ok" ;;
esac'
sh "$SRC/bench/craft_bugs_ttb.sh" "$work/b" flaky --methods sweep --pairs 1 --budget 16 \
  --cores 0,0 --results "$work/flaky.rows" > "$work/flaky.log" 2>&1 ||
  fail "the trial failed: $(tail -n 3 "$work/flaky.log")"
[ "$(cat "$work/flaky.finds/flaky-sweep-1-16s.pb" 2> /dev/null)" = own ] ||
  fail "the find is not the scenario that fails the variant every time and never the control: $(cat "$work/flaky.finds/"* 2> /dev/null) $(cat "$work/flaky.rows")"
ok "a failure the control shows on its second replay, or one that the variant's replays show one time in two, is no find"
# AFL++'s queue holds the inputs that ran without a failure: no find, and
# not judged (its replays, by the hundred, kept trials running minutes past
# their budget); its crashes/ are. A fake afl-fuzz writes a queue entry
# that the fake variant fails, then a crash: the find is the crash
mkdir -p "$work/path" "$work/b/fuzz" "$work/b/corpus/craft_aflq"
printf '#!/bin/sh\nexit 0\n' > "$work/b/fuzz/craft_aflq_afl"
printf '%s\n' '#!/bin/sh' 'while [ "$1" != -o ]; do shift; done; o=$2/default' \
  'mkdir -p "$o/queue" "$o/crashes"; echo queue > "$o/queue/id:000000,time:0,orig:a"; sleep 1' \
  'echo crash > "$o/crashes/id:000000,sig:06,src:000000"; exec sleep 1000' > "$work/path/afl-fuzz"
chmod +x "$work/b/fuzz/craft_aflq_afl" "$work/path/afl-fuzz"
fake_target "$work/b" aflq 'echo "$2: scenario -> FAILED election_safety"; exit 1'
fake_target "$work/b" aflq_fixed 'echo "$2: scenario -> ok"'
PATH=$work/path:$PATH sh "$SRC/bench/craft_bugs_ttb.sh" "$work/b" aflq --methods afl --pairs 1 \
  --budget 16 --cores 0,0 --results "$work/aflq.rows" > "$work/aflq.log" 2>&1 ||
  fail "the AFL++ trial failed: $(tail -n 3 "$work/aflq.log")"
[ "$(cat "$work/aflq.finds/aflq-afl-1-16s.pb" 2> /dev/null)" = crash ] ||
  fail "AFL++'s queue entry was taken for a find: $(cat "$work/aflq.finds/"* 2> /dev/null) $(cat "$work/aflq.rows")"
ok "AFL++'s queue is not judged; its crashes are"
# a file whose runs differ by what ran before them (the variant reads stack
# it never wrote: check-determinism exits 3) is no find, however the
# control's replays go: the control's binary leaves other bytes there
fake_target "$work/b" nondet 'case $1 in
  sweep) while [ "$1" != -o ]; do shift; done; mkdir -p "$2"
    echo tooldep > "$2/craft_nondet-seed-1.pb"; exec sleep 1000 ;;
  check-determinism) echo "MISMATCH in-process"; exit 3 ;;
  replay) echo "$2: scenario -> FAILED election_safety"; exit 1 ;;
esac'
fake_target "$work/b" nondet_fixed 'echo "$2: scenario -> ok"'
run nondet || fail "the trial failed: $(tail -n 3 "$work/nondet.log")"
grep -q '^nondet sweep 1 - ' "$work/nondet.rows" ||
  fail "a file whose runs differ was taken for a find: $(cat "$work/nondet.rows")"
ok "a file that check-determinism finds runs differently is no find"
# bench/craft_table.sh, a trial at a time: its row, and its find beside the results
sh "$SRC/bench/craft_table.sh" "$work/b" "$work/table.txt" --trials 1 --budget 16 --groups sweep \
  --cores 0,0 moved > "$work/table.log" 2>&1 || fail "craft_table.sh failed: $(tail -n 3 "$work/table.log")"
grep -q '^moved sweep 1 [0-9]' "$work/table.txt" || fail "craft_table.sh: no row: $(cat "$work/table.txt")"
[ "$(cat "$work/table.finds/moved-sweep-1-16s.pb" 2> /dev/null)" = own ] ||
  fail "craft_table.sh did not keep the find in table.finds/: $(ls "$work")"
ok "craft_table.sh records the trial's row and keeps its find beside the results"
finish
