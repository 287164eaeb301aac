#!/bin/sh
# The nightly job against what an outside attack tried: each check fails on
# the shell job it replaced (docs/RELIABILITY.md lists them).
#   - deduplication on the exact (target, signature) key, not substrings;
#   - a lock: a second night on the same state stops at once;
#   - SIGTERM: every child reaped, the temporary directory removed, the
#     state as it was;
#   - a damaged or misplaced nights or known.tsv never loses a report and is
#     found before any fuzzing; bad arguments are one line and exit 2;
#   - a tab or newline in a failure message keeps the reports valid;
#   - crash ids never collide with an earlier failure's files;
#   - nothing is written into the directory the night runs in.
# Usage: tests/nightly_attacks.sh BUILD_DIR
set -u
B=$(cd "$1" && pwd)
T_NAME=nightly_attacks
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
in_empty_dir
T=twopc_bug_count_votes
seed=$(ls "$SRC/tests/regressions/$T"/*.pb | head -1)
night() { # STATE BUDGET [ARGS...]: one night; exit status in $rc, stderr in $work/err
  st=$1; bud=$2; shift 2
  sh "$SRC/scripts/nightly.sh" --state "$st" --build "$B" --no-build --budget "$bud" --jobs 1 \
    "$@" > "$work/out" 2> "$work/err"
  rc=$?
}
fresh() { # STATE: a state whose corpus holds the planted bug's crash
  rm -rf "$1" && mkdir -p "$1/corpus/$T" && cp "$seed" "$1/corpus/$T/"
}
secs() { date +%s; } # the test's clock

# ---- exact deduplication ----
sig=$("$B/bin/simfuzz" --target $T triage --json "$seed" | python3 -c 'import json,sys; print(json.load(sys.stdin)["signature"])')
s="$work/dedup"; fresh "$s"
printf '%s\t%s0\n%s\t%s\n' "$T" "$sig" "${T#twopc_}" "$sig" > "$s/known.tsv"
night "$s" 3 --targets $T
if [ $rc = 1 ] && python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert len(j["new"]) == 1' "$s/reports/latest.json"; then
  ok "a signature that is a prefix of a known one, and a target that ends a known one, are new"
else
  bad "substring dedup: exit $rc"; tail -3 "$work/err"
fi

# ---- the lock ----
s="$work/lock"; fresh "$s"
sh "$SRC/scripts/nightly.sh" --state "$s" --build "$B" --no-build --budget 8 --jobs 1 --targets $T \
  > /dev/null 2> "$work/first.err" &
first=$!
sleep 2
t0=$(secs)
night "$s" 8 --targets $T
t1=$(secs)
wait $first
frc=$?
if [ $rc = 2 ] && grep -q "another night is running" "$work/err" && [ $((t1 - t0)) -lt 5 ] &&
   [ $frc = 1 ] && [ "$(cat "$s/nights")" = 1 ] && [ ! -e "$s/reports/night-2.md" ]; then
  ok "a second night on a locked state stops at once; the first publishes night 1 alone"
else
  bad "lock: second exit $rc after $((t1 - t0)) s, first exit $frc"; cat "$work/err"
fi

# ---- SIGTERM ----
s="$work/term"; fresh "$s"; mkdir -p "$work/tmp"
TMPDIR="$work/tmp" sh "$SRC/scripts/nightly.sh" --state "$s" --build "$B" --no-build --budget 60 \
  --jobs 2 --targets $T > /dev/null 2> "$work/term.err" &
pid=$!
sleep 4
kill -TERM $pid
wait $pid
rc=$?
sleep 1
left=$(pgrep -f "$s/corpus" | wc -l)
if [ $rc = 143 ] && [ "$left" = 0 ] && [ -z "$(ls -A "$work/tmp")" ] && [ ! -e "$s/nights" ] &&
   [ -z "$(ls "$s/reports")" ]; then
  ok "SIGTERM: exit 143, no child left, temporary directory gone, nothing published"
else
  bad "SIGTERM: exit $rc, $left processes left, tmp: $(ls -A "$work/tmp")"; tail -2 "$work/term.err"
fi
[ -n "$(ls "$s/inbox/$T" 2> /dev/null)" ] && ok "SIGTERM: the night's crash files wait in the inbox" ||
  bad "SIGTERM: crash files lost"
# a stop after the new failure was filed and minimized, before the report
# (SIMFUZZ_NIGHTLY_STOP_AT: SIGTERM as that phase starts): its files in
# crashes/ go with the night, since no known.tsv names them; the next night
# files it again under the same id
s="$work/term2"; fresh "$s"
SIMFUZZ_NIGHTLY_STOP_AT=report night "$s" 2 --targets $T
if [ $rc = 143 ] && [ -z "$(ls -A "$s/crashes/$T" 2> /dev/null)" ] && [ ! -e "$s/known.tsv" ] &&
   [ -n "$(ls "$s/inbox/$T" 2> /dev/null)" ]; then
  ok "SIGTERM after a failure was filed: exit 143, crashes/ as it was, the crash files in the inbox"
else
  bad "SIGTERM before the report: exit $rc, crashes/$T: $(ls "$s/crashes/$T" 2> /dev/null)"; tail -2 "$work/err"
fi
night "$s" 2 --targets $T
[ $rc = 1 ] && [ -f "$s/crashes/$T/f0000.pb" ] && grep -q "	f0000$" "$s/known.tsv" &&
  ok "the next night files it as f0000" ||
  { bad "the night after the stop: exit $rc, $(ls "$s/crashes/$T" 2> /dev/null)"; cat "$s/known.tsv"; }

# ---- damaged and misplaced state files ----
s="$work/bad"; fresh "$s"; mkdir -p "$s/reports"
for k in 1 2 3; do echo "night $k" > "$s/reports/night-$k.md"; done
echo garbage > "$s/nights"
night "$s" 2 --targets $T
if [ $rc = 1 ] && [ -f "$s/reports/night-4.md" ] && [ "$(cat "$s/reports/night-1.md")" = "night 1" ]; then
  ok "a garbage nights file: the night is numbered 4, after the reports; night 1's report kept"
else
  bad "garbage nights: exit $rc"; ls "$s/reports"
fi
for f in nights known.tsv; do
  s="$work/dir-$f"; fresh "$s"; mkdir -p "$s/$f"
  t0=$(secs); night "$s" 60 --targets $T; t1=$(secs)
  [ $rc = 2 ] && [ $((t1 - t0)) -lt 10 ] && grep -q "not a regular file" "$work/err" &&
    [ "$(wc -l < "$work/err")" = 1 ] && ok "$f as a directory: found before fuzzing ($(cat "$work/err"))" ||
    { bad "$f as a directory: exit $rc after $((t1 - t0)) s"; cat "$work/err"; }
done
for args in "--budget 0" "--budget x" "--state" "--jobs 0"; do
  # shellcheck disable=SC2086 # the arguments are meant to split
  "$B/bin/simfuzz" nightly $args > /dev/null 2> "$work/err"
  rc=$?
  [ $rc = 2 ] && [ "$(wc -l < "$work/err")" = 1 ] && ok "nightly $args: exit 2, one line" ||
    { bad "nightly $args: exit $rc"; cat "$work/err"; }
done
"$B/bin/simfuzz" nightly --help > "$work/out" 2>&1 && grep -q "EXIT STATUS" "$work/out" &&
  ok "nightly --help" || bad "nightly --help"

# ---- a tab and a newline in a failure message ----
s="$work/tab"
night "$s" 4 --targets tabby
if [ $rc = 1 ] && python3 -c 'import json,sys
j = json.load(open(sys.argv[1])); m = j["new"][0]["triage"]["message"]
assert "\t" in m and "\n" in m, m
json.load(open(sys.argv[2]))' "$s/reports/latest.json" "$s/reports/latest.sarif"; then
  ok "a message with a tab, a newline and a quote: the JSON and SARIF reports are valid"
else
  bad "tab/newline message: exit $rc"; tail -2 "$work/err"
fi

# ---- a short night minimizes within its budget ----
# (100 tries per second of budget: a 2 s night gives each new failure 200,
# not minimize's 4000, which took a minute here)
s="$work/short"; fresh "$s"
mkdir -p "$work/wb/bin" "$work/wb/fuzz"
for f in "$B"/bin/*; do ln -s "$f" "$work/wb/bin/"; done
for f in "$B/fuzz/${T}_fuzzer" "$B/fuzz/$T.dict"; do [ -e "$f" ] && ln -s "$f" "$work/wb/fuzz/"; done
rm "$work/wb/bin/simfuzz-$T"
printf '#!/bin/sh\necho "$*" >> "%s"\nexec "%s" "$@"\n' "$work/argv" "$B/bin/simfuzz-$T" \
  > "$work/wb/bin/simfuzz-$T"
chmod +x "$work/wb/bin/simfuzz-$T"
sh "$SRC/scripts/nightly.sh" --state "$s" --build "$work/wb" --no-build --budget 2 --jobs 1 \
  --targets $T > /dev/null 2> "$work/err"
rc=$?
[ $rc = 1 ] && grep -q "^minimize .*--max-tries 200 " "$work/argv" &&
  ok "a 2 s night minimizes with 200 tries" ||
  { bad "short night: exit $rc, minimize: $(grep "^minimize" "$work/argv")"; tail -2 "$work/err"; }

# ---- crash ids ----
s="$work/ids"; fresh "$s"; mkdir -p "$s/crashes/$T"
echo "an earlier failure" > "$s/crashes/$T/f0001.input"
night "$s" 3 --targets $T
id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["new"][0]["id"])' "$s/reports/latest.json" 2> /dev/null)
[ $rc = 1 ] && [ -n "$id" ] && [ "$id" != f0001 ] && [ "$(cat "$s/crashes/$T/f0001.input")" = "an earlier failure" ] &&
  ok "a new failure's id ($id) never takes an earlier failure's files" || bad "crash ids: '$id'"
finish
