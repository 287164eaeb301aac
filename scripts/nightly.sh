#!/bin/sh
# The nightly fuzz job, for any machine or CI runner. This script only
# builds (unless --no-build); the job itself is `simfuzz nightly`
# (harness/cli/nightly.c): fuzz every target for a budget, merge each
# corpus, triage the crashes by failure signature, minimize and
# determinism-check every new one, and write a report (Markdown, JSON and
# SARIF) with a replay command per crash. See `simfuzz help nightly`.
#
# Usage: scripts/nightly.sh [--state DIR] [--build DIR] [--budget SECONDS]
#                           [--jobs N] [--targets "T1 T2 ..."] [--no-build]
#   --build    the build directory (default build/nightly; configured and
#              built here unless --no-build)
# Exit status: 0 nothing new, 1 new crashes (see the report), 2 the job
# itself failed (one "nightly: ..." line on stderr says why), 128+N stopped
# by signal N.
set -u
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=build/nightly; DO_BUILD=1
prev=""
for a in "$@"; do
  case "$prev:$a" in
    --build:*) BUILD=$a ;;
    *:--no-build) DO_BUILD=0 ;;
    *:--help | *:-h) DO_BUILD=0 ;;
  esac
  prev=$a
done
case "$prev" in --build) echo "nightly: --build needs a value" >&2; exit 2 ;; esac
if [ $DO_BUILD = 1 ]; then
  echo "nightly: building in $BUILD" >&2
  { cmake -S "$SRC" -B "$BUILD" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DSIMFUZZ_TESTS=OFF -DSIMFUZZ_BENCH=OFF > "$BUILD.log" 2>&1 &&
    cmake --build "$BUILD" >> "$BUILD.log" 2>&1; } ||
    { echo "nightly: build failed (see $BUILD.log)" >&2; exit 2; }
fi
[ -x "$BUILD/bin/simfuzz" ] || { echo "nightly: no build in $BUILD (drop --no-build)" >&2; exit 2; }
exec "$BUILD/bin/simfuzz" nightly --build "$BUILD" "$@"
