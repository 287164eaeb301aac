#!/bin/sh
# examples/craft's bug-history set: raft source trees made from the
# cowsql/raft bundle (examples/craft/bugs/trees.sh: each bug of bugs.tsv at
# its fix's parent and at its fix, and the newest library), built as the
# outside project examples/craft is, from the package installed into
# PREFIX, command-line tools only; then examples/craft/bugs/check.sh: each
# bug's regression scenario fails its variant and not its fix.
# Skipped (exit 77) when the bundle is absent (it is beside the project in
# CI: ../shared/third_party/, never inside it).
# Usage: tests/craft_bugs.sh BUILD_DIR CRAFT_DIR PREFIX BUNDLE
set -u
B=$(cd "$1" && pwd); C=$(cd "$2" && pwd); P=$(cd "$3" && pwd); BUNDLE=$4
if [ ! -f "$BUNDLE" ]; then
  echo "skip: no cowsql/raft bundle at $BUNDLE"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! sh "$C/bugs/trees.sh" "$BUNDLE" "$work/trees" > "$work/trees.log" 2>&1; then
  cat "$work/trees.log"
  echo "FAIL: the raft source trees could not be made from $BUNDLE"
  exit 1
fi
cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$B/CMakeCache.txt")
gen=$(sed -n 's/^CMAKE_GENERATOR:[A-Z]*=//p' "$B/CMakeCache.txt")
if ! cmake -S "$C" -B "$work/b" -G "$gen" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
       -DCMAKE_PREFIX_PATH="$P" -DCRAFT_RAFT_TREES="$work/trees" -DCRAFT_TREE_FUZZERS=OFF \
       > "$work/cfg.log" 2>&1 \
   || ! cmake --build "$work/b" > "$work/build.log" 2>&1; then
  tail -n 30 "$work/cfg.log" "$work/build.log"
  echo "FAIL: examples/craft does not build the raft source trees"
  exit 1
fi
echo "ok: $(ls "$work/trees" | wc -l) raft source trees built as targets"
ALLOW_MISSING=${ALLOW_MISSING:-1} sh "$C/bugs/check.sh" "$work/b"
