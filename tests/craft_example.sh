#!/bin/sh
# examples/craft (canonical/raft from Debian's libraft-dev, wrapped as a
# simfuzz target) built as the outside project it is, from the package
# installed into PREFIX, then its own checks (examples/craft/check.sh).
# Usage: tests/craft_example.sh BUILD_DIR CRAFT_DIR PREFIX [SEEDS] [RUNS]
set -u
B=$(cd "$1" && pwd); C=$(cd "$2" && pwd); P=$(cd "$3" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$B/CMakeCache.txt")
gen=$(sed -n 's/^CMAKE_GENERATOR:[A-Z]*=//p' "$B/CMakeCache.txt")
if ! cmake -S "$C" -B "$work/b" -G "$gen" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
       -DCMAKE_PREFIX_PATH="$P" > "$work/cfg.log" 2>&1 \
   || ! cmake --build "$work/b" > "$work/build.log" 2>&1; then
  tail -n 30 "$work/cfg.log" "$work/build.log"
  echo "FAIL: examples/craft does not build against the installed simfuzz"
  exit 1
fi
echo "ok: examples/craft built from the installed package"
sh "$C/check.sh" "$work/b" "${4:-3000}" "${5:-3000}"
