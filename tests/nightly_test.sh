#!/bin/sh
# The nightly job end to end on a small budget: night 1 finds the planted
# bugs of two targets, deduplicates their many crash files into one failure
# each, minimizes them (the scenarios still fail the same way) and writes
# valid Markdown, JSON and SARIF reports (with the explorer's runs and the
# assertion sites the corpus reaches), exiting 1; night 2 on the same
# state reports nothing new and exits 0; the correct target stays clean.
# Usage: tests/nightly_test.sh BUILD_DIR
set -u
B=$1
T_NAME=nightly_test
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
T="twopc_bug_count_votes leaselock_bug_no_fencing twopc"

sh "$SRC/scripts/nightly.sh" --state "$work/s" --build "$B" --no-build --budget 6 --jobs 1 \
  --targets "$T" > "$work/n1.out" 2> "$work/n1.err"
rc=$?
[ $rc = 1 ] || { cat "$work/n1.err"; fail "night 1 exit $rc, want 1"; }
r="$work/s/reports/latest"
python3 - "$r.json" "$r.sarif" << 'PY' || fail "reports"
import json, sys
j = json.load(open(sys.argv[1]))
new = sorted(n["target"] for n in j["new"])
assert new == ["leaselock_bug_no_fencing", "twopc_bug_count_votes"], new
assert all(n["triage"]["deterministic"] for n in j["new"]), j["new"]
assert [t["crash_files"] for t in j["targets"] if t["target"] == "twopc"] == [0]
# the explorer ran beside libFuzzer, and `simfuzz reach` summarised the corpus
assert all(t["explore_runs"] > 0 and t["executions"] > t["explore_runs"] for t in j["targets"]), j["targets"]
tw = [t for t in j["targets"] if t["target"] == "twopc"][0]
assert tw["assertion_sites"] >= 4 and tw["sites_reached"] >= 1, tw
assert tw["sites_reached"] + len(tw["sites_never_reached"]) <= tw["assertion_sites"], tw
s = json.load(open(sys.argv[2]))
res = s["runs"][0]["results"]
assert sorted(x["ruleId"] for x in res) == ["atomicity", "fenced_writes"], res
assert all(x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].startswith("examples/") for x in res)
PY
grep -q "^## 2 new failure" "$r.md" || fail "markdown report"
grep -q "| assertion sites reached |" "$r.md" || fail "markdown report: no assertion sites"
for t in twopc_bug_count_votes leaselock_bug_no_fencing; do
  min=$(ls "$work/s/crashes/$t"/*.pb | head -1)
  "$B/bin/simfuzz" --target $t replay -q "$min" > "$work/rp" 2>&1
  [ $? = 1 ] || fail "$t: minimized scenario does not fail: $(cat "$work/rp")"
done
echo "nightly_test: night 1 found, deduplicated and minimized both planted bugs ($(grep -c . "$work/s/known.tsv") signatures)"

sh "$SRC/scripts/nightly.sh" --state "$work/s" --build "$B" --no-build --budget 3 --jobs 1 \
  --targets "$T" > "$work/n2.out" 2> "$work/n2.err"
rc=$?
[ $rc = 0 ] || { cat "$work/n2.err"; fail "night 2 exit $rc, want 0"; }
grep -q "Nothing new" "$work/s/reports/latest.md" || fail "night 2 report"
[ -f "$work/s/reports/night-1.md" ] && [ -f "$work/s/reports/night-2.md" ] || fail "reports kept per night"
status=0
sh "$SRC/scripts/nightly.sh" --state "$work/s" --build "$B" --no-build --budget x > /dev/null 2>&1 || status=$?
[ $status = 2 ] || fail "bad arguments: exit $status, want 2"
echo "nightly_test: night 2 reported nothing new (exit 0)"
