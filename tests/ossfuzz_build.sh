#!/bin/sh
# Emulated OSS-Fuzz build (no Docker engine here): runs ossfuzz/build.sh with
# the environment OSS-Fuzz's base-builder sets for one engine/sanitizer pair,
# then does what OSS-Fuzz's build check does: every fuzzer in $OUT runs its
# seed corpus, and the correct systems' fuzzers fuzz for a bounded number of
# runs, failing on any crash, leak or timeout. The coverage build's fuzzers
# must also write profiles that llvm-profdata merges.
# Usage: tests/ossfuzz_build.sh SRC_DIR CONFIG [RUNS]
#   CONFIG: libfuzzer-address | libfuzzer-undefined | afl-address | coverage
set -eu
SRCDIR=$(cd "$1" && pwd); CONFIG=$2; RUNS=${3:-500}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "ossfuzz_build[$CONFIG]: FAIL: $*"; exit 1; }

# base-builder's flags (infra/base-images/base-builder), minus -stdlib=libc++
# (C only here)
base="-O1 -fno-omit-frame-pointer -gline-tables-only -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION"
asan="-fsanitize=address -fsanitize-address-use-after-scope"
ubsan_list=array-bounds,bool,builtin,enum,float-divide-by-zero,function,integer-divide-by-zero,null,object-size,return,returns-nonnull-attribute,shift,signed-integer-overflow,unreachable,vla-bound,vptr
ubsan="-fsanitize=$ubsan_list,unsigned-integer-overflow -fno-sanitize-recover=$ubsan_list"
cov="-fprofile-instr-generate -fcoverage-mapping -pthread -Wl,--no-as-needed -Wl,-ldl -Wl,-lm -Wno-unused-command-line-argument"
export CC=clang CXX=clang++ FUZZING_ENGINE=libfuzzer LIB_FUZZING_ENGINE=-fsanitize=fuzzer
case $CONFIG in
  libfuzzer-address) SANITIZER=address; CFLAGS="$base $asan -fsanitize=fuzzer-no-link" ;;
  libfuzzer-undefined) SANITIZER=undefined; CFLAGS="$base $ubsan -fsanitize=fuzzer-no-link" ;;
  afl-address)
    SANITIZER=address; FUZZING_ENGINE=afl; CC=afl-clang-fast; CXX=afl-clang-fast++
    CFLAGS="$base $asan"; LIB_FUZZING_ENGINE=/usr/lib/afl/libAFLDriver.a
    export AFL_QUIET=1 ;;
  coverage) SANITIZER=coverage; CFLAGS="$base $cov" ;;
  *) fail "unknown config" ;;
esac
export SANITIZER CFLAGS CXXFLAGS="$CFLAGS" SRC="$work/src" WORK="$work/work" OUT="$work/out"
export SIMFUZZ_SRC="$SRCDIR" SIMFUZZ_GENERATOR=Ninja
# as the base-builder image, which has no libevent or libuv archive: the
# programs on them are not built (the Dockerfile installs neither). OFF,
# not a -NOTFOUND value, which find_library takes as "search again"
export SIMFUZZ_CMAKE_ARGS="-DSF_LIBEVENT_CORE=OFF -DSF_LIBUV=OFF"
# the libFuzzer-ASan build as OSS-Fuzz's own: every correct target, and no
# planted bug built or shipped (SIMFUZZ_PLANTED_BUGS unset); the other
# configurations check the build script, the engine and the sanitizer on a
# few of each kind (a library, programs with a client, with threads and
# without, a planted bug, shipped with SIMFUZZ_PLANTED_BUGS=1): the
# ASan+UBSan test build runs every target under UBSan already
want=""
if [ "$CONFIG" != libfuzzer-address ]; then
  want="raft_kv kvstore poolkv beacon twopc_bug_count_votes"
  export SIMFUZZ_FUZZERS="$want" SIMFUZZ_PLANTED_BUGS=1
fi
mkdir -p "$SRC" "$WORK" "$OUT"
# runtime options as ClusterFuzz sets them (unsigned overflow is not a bug)
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:symbolize=0
[ "$FUZZING_ENGINE" = afl ] && export ASAN_OPTIONS=abort_on_error=1:detect_leaks=0:symbolize=0:allocator_may_return_null=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:silence_unsigned_overflow=1
# no core binding: afl-fuzz refuses to start when every core already runs
# a CPU-locked task (another fuzzer, a benchmark under taskset)
export AFL_SKIP_CPUFREQ=1 AFL_NO_UI=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_AFFINITY=1

bash "$SRCDIR/ossfuzz/build.sh" > "$work/build.log" 2>&1 || { tail -30 "$work/build.log"; fail "build.sh"; }
if [ "$CONFIG" = libfuzzer-address ]; then
  # by default a planted bug is neither shipped nor even built
  for f in "$OUT"/*_bug_* "$WORK"/simfuzz-build/fuzz/*_bug_*; do
    [ -e "$f" ] && fail "a planted bug built or shipped by default: $f"
  done
  for t in raft_kv kvstore twopc_ct leaselock harness_selftest; do
    [ -x "$OUT/${t}_fuzzer" ] || fail "$t: no fuzzer shipped"
  done
fi

n=0
for fz in "$OUT"/*_fuzzer; do
  name=$(basename "$fz"); t=${name%_fuzzer}
  for f in "$OUT/$name.dict" "$OUT/$name.options" "$OUT/${name}_seed_corpus.zip"; do
    [ -s "$f" ] || fail "$name: missing $(basename "$f")"
  done
  seeds="$work/seeds/$name"
  mkdir -p "$seeds"
  (cd "$seeds" && unzip -q "$OUT/${name}_seed_corpus.zip")
  case $FUZZING_ENGINE in
    libfuzzer)
      export LLVM_PROFILE_FILE="$work/prof/$name.%p.profraw"
      # every seed once (each file is run, no fuzzing) ...
      timeout 300 "$fz" -timeout=25 -rss_limit_mb=2560 "$seeds"/*.pb > "$work/$name.log" 2>&1 \
        || { tail -20 "$work/$name.log"; fail "$name: failed on its seed corpus"; }
      # ... and the correct systems fuzz: any crash there is a false alarm
      # (not the coverage build: it has no fuzzing instrumentation and only
      # replays corpora, as on OSS-Fuzz)
      case $t:$CONFIG in
        *_bug_*:* | *:coverage) ;;
        *)
          mkdir -p "$work/c/$name" && cp "$seeds"/*.pb "$work/c/$name/"
          timeout 600 "$fz" "$work/c/$name" -runs="$RUNS" -timeout=25 -rss_limit_mb=2560 \
            -dict="$OUT/$name.dict" -artifact_prefix="$work/" > "$work/$name.fuzz.log" 2>&1 \
            || { grep -A5 "FAILURE\|ERROR" "$work/$name.fuzz.log" | head -20; fail "$name: fuzzing"; }
          ;;
      esac ;;
    afl)
      for s in "$seeds"/*.pb; do # outside afl-fuzz, the driver runs its file once
        timeout 60 "$fz" "$s" > "$work/$name.log" 2>&1 \
          || { tail -20 "$work/$name.log"; fail "$name: failed on seed $(basename "$s")"; }
      done
      case $t in
        *_bug_*) ;;
        *)
          timeout 120 afl-fuzz -i "$seeds" -o "$work/afl-$name" -V 3 -t 25000 -- "$fz" \
            > "$work/$name.fuzz.log" 2>&1 || { tail -20 "$work/$name.fuzz.log"; fail "$name: afl-fuzz"; }
          for c in "$work/afl-$name"/default/crashes/id:*; do
            [ -e "$c" ] || break # the report of the first, for the log
            timeout 60 "$fz" "$c" 2>&1 | grep "==simfuzz== \(FAILURE\|  \|scen\)\|internal" | head -8
            od -An -tx1 "$c" | head -8
            fail "$name: afl-fuzz crashed it"
          done
          execs=$(awk '/execs_done/ {print $3}' "$work/afl-$name/default/fuzzer_stats")
          [ "${execs:-0}" -gt 0 ] || fail "$name: afl-fuzz executed nothing"
          ;;
      esac ;;
  esac
  n=$((n + 1))
done
[ $n -gt 0 ] || fail "no fuzzers in \$OUT"
[ -z "$want" ] || [ $n = "$(echo "$want" | wc -w)" ] || fail "$n fuzzers built, not those of: $want"
if [ "$CONFIG" = coverage ]; then
  ls "$work"/prof/*.profraw > /dev/null 2>&1 || fail "coverage: no profiles written"
  llvm-profdata merge -sparse "$work"/prof/*.profraw -o "$work/merged.profdata" \
    || fail "coverage: llvm-profdata merge"
fi
echo "ossfuzz_build[$CONFIG]: ok: $n fuzzers built by build.sh, seeds replayed, correct targets fuzzed"
