#!/bin/sh
# The main job: build simfuzz and run the bundled example.
set -eu
cd "$(dirname "$0")/.."
sh scripts/bootstrap.sh
JOBS=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build/release -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release -j "$JOBS"
./build/release/sim_demo 1
