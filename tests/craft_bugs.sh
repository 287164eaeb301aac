#!/bin/sh
# examples/craft's bug-history set: raft source trees made from the
# cowsql/raft bundle (examples/craft/bugs/trees.sh: each bug of bugs.tsv at
# its fix's parent and at its fix, and the newest library), built as the
# outside project examples/craft is, from the package installed into
# PREFIX, command-line tools only; then examples/craft/bugs/check.sh: each
# bug's regression scenario fails its variant and not its fix; a
# differential reduction (minimize --passes) of one of them. Last, one tree
# of 2023 built with gcc -O2 must still fail its scenario (the trees need
# -fno-strict-aliasing, as raft's own build had then).
# Skipped (exit 77) when the bundle is absent (it is beside the project in
# CI: ../shared/third_party/, never inside it).
# Usage: tests/craft_bugs.sh BUILD_DIR CRAFT_DIR PREFIX BUNDLE
set -u
B=$(cd "$1" && pwd); C=$(cd "$2" && pwd); P=$(cd "$3" && pwd); BUNDLE=$4
if [ ! -f "$BUNDLE" ]; then
  echo "skip: no cowsql/raft bundle at $BUNDLE"
  exit 77
fi
T_NAME=craft_bugs
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# only the trees with regression scenarios (a bug's, or its control's:
# trees.sh makes the control beside the bug) and head: building the bugs
# still without one would check nothing (ALLOW_MISSING lists them)
names=$(ls "$C/bugs/regressions" | sed 's/_fixed$//' | sort -u)
# shellcheck disable=SC2086 # one argument per name
sh "$C/bugs/trees.sh" "$BUNDLE" "$work/trees" $names > "$work/trees.log" 2>&1 ||
  { cat "$work/trees.log"; fail "the raft source trees could not be made from $BUNDLE"; }
# (Debian's targets left out, and -O0 without debug information: the
# regression scenarios need no more; the trees compile in a third less CPU
# time than at -O1, which took 11 % less than -O2 -g, and runs are the same
# at any level)
build_outside "$B" "$C" "$work/b" "$P" -DCRAFT_RAFT_TREES="$work/trees" -DCRAFT_TREE_FUZZERS=OFF \
  -DCRAFT_DEBIAN=OFF -DCMAKE_BUILD_TYPE=None -DCMAKE_C_FLAGS=-O0 ||
  fail "examples/craft does not build the raft source trees"
echo "ok: $(ls "$work/trees" | wc -l) raft source trees built as targets"
ALLOW_MISSING=${ALLOW_MISSING:-1} sh "$C/bugs/check.sh" "$work/b" || exit 1
# A differential reduction of a real bug's trigger: vote_unpersisted's
# scenario reduced as itself drifts to one that its control fails too
# (candidate_unpersisted's bug, on which the heal rests); with --passes the
# control, the reduction keeps a trigger of this fix's bug. 30 tries each:
# the drift comes by the 20th (a try costs about 1 s under ASan)
V=$work/b/bin/simfuzz-craft_vote_unpersisted
R=$C/bugs/regressions/vote_unpersisted/state_machine_safety--candidate-wins-on-entries-it-has-not-stored.pb
"$V" minimize -q --max-tries 30 "$R" -o "$work/plain.pb" > "$work/plain.log" 2>&1 ||
  fail "minimize $R: $(cat "$work/plain.log")"
"${V}_fixed" replay -q "$work/plain.pb" > /dev/null 2>&1 &&
  fail "the plain reduction of $R passes the control: this check shows nothing any more"
"$V" minimize -q --max-tries 30 --passes "${V}_fixed" "$R" -o "$work/diff.pb" > "$work/diff.log" 2>&1 ||
  fail "minimize --passes: $(cat "$work/diff.log")"
replays_as "$V" "$work/diff.pb" state_machine_safety
"${V}_fixed" replay -q "$work/diff.pb" > "$work/diff.ctl" 2>&1 ||
  fail "the control fails the differential reduction: $(tail -n 1 "$work/diff.ctl")"
ok "minimize --passes: vote_unpersisted's trigger, $(sed -n 's/^ *steps: *//p' "$work/diff.log") steps, fails it and passes the control (plain: the control fails it)"
# Releases before v0.19.0 need -fno-strict-aliasing (examples/craft's
# CMakeLists.txt passes it): without it gcc -O2 decodes a configuration
# wrongly and raft_start() fails on every node, so every run passes. One
# tree of that era, built so, must still fail its regression scenario.
if command -v gcc > /dev/null 2>&1; then
  mkdir -p "$work/o2trees"
  cp -R "$work/trees/vote_unpersisted" "$work/o2trees/"
  build_outside "$B" "$C" "$work/o2" "$P" -DCRAFT_RAFT_TREES="$work/o2trees" \
    -DCRAFT_TREE_FUZZERS=OFF -DCRAFT_DEBIAN=OFF -DCMAKE_BUILD_TYPE=None -DCMAKE_C_FLAGS=-O2 \
    -DCMAKE_C_COMPILER=gcc ||
    fail "examples/craft does not build a raft tree with gcc -O2"
  replays_as "$work/o2/bin/simfuzz-craft_vote_unpersisted" \
    "$R" state_machine_safety
  ok "gcc -O2 builds a tree of 2023 that still fails its regression scenario"
fi
finish
