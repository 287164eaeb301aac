#!/bin/bash -eu
# OSS-Fuzz / ClusterFuzzLite build script for simfuzz.
#
# Uses what the infrastructure sets: $CC $CXX $CFLAGS $CXXFLAGS
# $LIB_FUZZING_ENGINE $FUZZING_ENGINE $SANITIZER $SRC $WORK $OUT. Every
# example target becomes $OUT/<target>_fuzzer with, beside it,
# <target>_fuzzer_seed_corpus.zip, <target>_fuzzer.dict and
# <target>_fuzzer.options. Tools used during the build (protoc-c, protoc)
# are the distribution's, never built with the sanitizer flags.
# The planted-bug targets (<system>_bug_<what>) crash by design: they are
# built and shipped to $OUT only with SIMFUZZ_PLANTED_BUGS=1 (benchmarks,
# the emulated build test), never for OSS-Fuzz or ClusterFuzzLite by default.
set -eu
SRCDIR=${SIMFUZZ_SRC:-$SRC/simfuzz}
BUILD=$WORK/simfuzz-build
PBC_FLAGS=()

if [ "$SANITIZER" = memory ]; then
  # MemorySanitizer needs every linked library instrumented: build the
  # protobuf-c runtime from source with this build's flags (the Dockerfile
  # fetches it to $SRC/protobuf-c; only its C runtime is needed).
  PBC=$WORK/protobuf-c-msan
  mkdir -p "$PBC/include/protobuf-c" "$PBC/lib"
  $CC $CFLAGS -I"$SRC/protobuf-c" -c "$SRC/protobuf-c/protobuf-c/protobuf-c.c" -o "$PBC/protobuf-c.o"
  ar rcs "$PBC/lib/libprotobuf-c.a" "$PBC/protobuf-c.o"
  cp "$SRC/protobuf-c/protobuf-c/protobuf-c.h" "$PBC/include/protobuf-c/"
  PBC_FLAGS=(-DSF_PROTOBUF_C_LIB="$PBC/lib/libprotobuf-c.a" -DSF_PROTOBUF_C_INCLUDE="$PBC/include")
fi

if [ "$FUZZING_ENGINE" = afl ]; then
  # keep the simulator and harness out of AFL++'s edge coverage, like the
  # -fsanitize-coverage-ignorelist of the other engines
  export AFL_LLVM_DENYLIST=$SRCDIR/cmake/core.ignorelist
fi

# SIMFUZZ_CMAKE_ARGS: more configure arguments, split at spaces (the
# emulated build test uses it to configure as the base image would)
read -r -a EXTRA_FLAGS <<< "${SIMFUZZ_CMAKE_ARGS:-}"
cmake -S "$SRCDIR" -B "$BUILD" -G "${SIMFUZZ_GENERATOR:-Unix Makefiles}" \
  -DCMAKE_BUILD_TYPE=None -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_C_FLAGS="$CFLAGS" -DCMAKE_CXX_FLAGS="$CXXFLAGS" \
  -DSIMFUZZ_ENGINE="$LIB_FUZZING_ENGINE" -DSIMFUZZ_TESTS=OFF -DSIMFUZZ_BENCH=OFF \
  -DSIMFUZZ_PLANTED_BUGS="$([ "${SIMFUZZ_PLANTED_BUGS:-0}" = 1 ] && echo ON || echo OFF)" \
  "${PBC_FLAGS[@]}" "${EXTRA_FLAGS[@]}"
# SIMFUZZ_FUZZERS: only these targets' fuzzers, seeds and dictionaries
# (names split at spaces); every target's by default
TARGETS=(simfuzz_fuzzers)
if [ -n "${SIMFUZZ_FUZZERS:-}" ]; then
  TARGETS=()
  for t in $SIMFUZZ_FUZZERS; do TARGETS+=("${t}_fuzzer" "${t}_seeds"); done
fi
cmake --build "$BUILD" --target "${TARGETS[@]}" -j"$(nproc)"

for fz in "$BUILD"/fuzz/*_fuzzer; do
  name=$(basename "$fz")
  t=${name%_fuzzer}
  case "$t:${SIMFUZZ_PLANTED_BUGS:-0}" in *_bug_*:0) continue ;; esac
  cp "$fz" "$OUT/$name"
  cp "$BUILD/fuzz/$t.dict" "$OUT/$name.dict"
  (cd "$BUILD/corpus/$t" && zip -q -j "$OUT/${name}_seed_corpus.zip" ./*.pb)
  # Runs are bounded by the harness (events, virtual time, memory), far
  # below these limits; the dictionary holds the scenario format's keys.
  cat > "$OUT/$name.options" << OPTS
[libfuzzer]
dict = $name.dict
max_len = 65536
timeout = 25
rss_limit_mb = 2560
OPTS
done
