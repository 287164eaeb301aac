#!/bin/sh
# Build everything with clang, ASan+UBSan and -Werror, run every test, then
# check that gcc and clang builds at -O0 and -O2 give identical trace hashes.
set -eu
cd "$(dirname "$0")/.."
sh scripts/bootstrap.sh
JOBS=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build/asan -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSIMFUZZ_SANITIZE=ON -DSIMFUZZ_WERROR=ON >/dev/null
cmake --build build/asan -j "$JOBS"
ctest --test-dir build/asan -j "$JOBS" --output-on-failure
sh tests/determinism_matrix.sh quick
