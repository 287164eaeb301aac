#!/bin/sh
# simfuzz used from an outside project, as a team adopting it would:
#   1. this build was installed into PREFIX (tests/package_install.sh);
#   2. tests/outside/ (two releases of one library with the same global
#      symbols, the second asserting on reordered updates) is configured
#      against it with find_package(simfuzz) and built with a plain
#      `cmake --build`;
#   3. the buggy release fails a sweep with several seeds (exit 1), the
#      correct one is clean, `simfuzz --target X` runs X's code, and a
#      failing seed replays with the same trace hash in the command line,
#      the libFuzzer binary and the AFL++ binary;
#   4. the release built without the assert() hook aborts the process on
#      the same bug, and sweep, triage and minimize survive it;
#   5. seeds added or removed show at the next build; the dictionary is the
#      target's; pkg-config builds a program against the runtime; the
#      add_subdirectory() flow builds too.
# Usage: tests/outside_project.sh BUILD_DIR SOURCE_DIR PREFIX [quick]
set -u
B=$(cd "$1" && pwd); SRC=$(cd "$2" && pwd); P=$(cd "$3" && pwd); MODE=${4:-full}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
nbad=0; nok=0
ok() { nok=$((nok + 1)); echo "ok: $*"; }
bad() { nbad=$((nbad + 1)); echo "FAIL: $*"; }
die() { echo "FAIL: $*"; exit 1; }
cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$B/CMakeCache.txt")
gen=$(sed -n 's/^CMAKE_GENERATOR:[A-Z]*=//p' "$B/CMakeCache.txt")

# ---- 2. the outside project, from a copy (tests never write into the tree) ----
O=$work/src
cp -R "$SRC" "$O"
OB=$work/build
if cmake -S "$O" -B "$OB" -G "$gen" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
     -DCMAKE_PREFIX_PATH="$P" > "$work/cfg.log" 2>&1 \
   && cmake --build "$OB" > "$work/build.log" 2>&1; then
  ok "outside project: find_package(simfuzz) and a plain cmake --build"
else
  tail -n 30 "$work/cfg.log" "$work/build.log"; die "outside project does not build"
fi
# both include styles: <simfuzz/simfuzz.h> (kvstream.c, which also gets its
# own scenario.h) and the bare names of older releases (legacy.c), noted
# once, for that target only
notes=$(grep -c "the bare name is deprecated" "$work/cfg.log")
note=$(grep -A3 "simfuzz_add_target(kvstream_1_1_raw)" "$work/cfg.log" | tr -s ' \n' '  ')
if [ "$notes" = 1 ] && echo "$note" | grep -q "legacy.c: '#include \"sim.h\"'"; then
  ok "bare header names build, with one configure-time deprecation note (legacy.c)"
else
  bad "bare-name notes: $notes"; grep -B2 -A4 "deprecated" "$work/cfg.log"
fi
S="$OB/bin/simfuzz"
"$S" targets > "$work/targets" 2>&1
if grep -q "^kvstream_1_0 .*kvrep 1.0$" "$work/targets" && grep -q "^kvstream_1_1 .*kvrep 1.1$" "$work/targets"; then
  ok "simfuzz targets: each target compiled with its own INCLUDES"
else
  bad "simfuzz targets"; cat "$work/targets"
fi

# a program of the project (simfuzz_add_program), unmodified, with the
# project's static library: every ping answered in the seeds and 100 sweeps
if [ "$(uname -m)" = x86_64 ]; then
  pg="$OB/bin/simfuzz-ping"
  "$pg" replay -q "$OB"/corpus/ping/*.pb > "$work/ping.log" 2>&1 &&
    "$pg" sweep --seeds 1-100 -q >> "$work/ping.log" 2>&1 &&
    ok "a program (simfuzz_add_program) with the project's library runs its seeds and 100 sweeps" ||
    bad "program ping: $(tail -n 5 "$work/ping.log")"
  # its CLIENT (nodes 3 and 4 of a 3-node scenario) pings node 0 for each
  # operation, and answers the liveness probe
  "$pg" replay "$OB"/corpus/ping/writes.pb > "$work/pingc.log" 2>&1 &&
    grep -q "n3  send .*-> n0" "$work/pingc.log" && grep -q "n4  send .*-> n0" "$work/pingc.log" &&
    ok "a program's CLIENT, built against the installed simfuzz_client.h, does its operations" ||
    bad "ping's client: $(tail -n 5 "$work/pingc.log")"
  # two versions of it (simfuzz_program_version, VERSIONS): the sweep's
  # plans, and a node upgraded in a scenario of the seed's with the timeline
  # saying so
  pu="$OB/bin/simfuzz-ping_up"
  { cat "$SRC/seeds/writes.textproto" &&
    printf 'versions: [0, 1]\nsteps { at_us: 50000 upgrade { node: 0 version: 1 } }\n'; } \
    > "$work/up.txt"
  "$pu" encode "$work/up.txt" -o "$work/up.pb" > "$work/pingu.log" 2>&1 &&
    "$pu" replay "$work/up.pb" >> "$work/pingu.log" 2>&1 &&
    grep -q "n1  version *v1 (was v0)" "$work/pingu.log" &&
    grep -q "n0  version *v1 (was v0)" "$work/pingu.log" &&
    "$pu" sweep --seeds 1-100 -q >> "$work/pingu.log" 2>&1 &&
    ok "a program of two versions: a node starts as one, another is upgraded, 100 sweeps" ||
    bad "ping_up: $(tail -n 5 "$work/pingu.log")"
fi

# ---- 3. the buggy release fails, the correct one does not ----
"$S" --target kvstream_1_1 sweep --seeds 0-199 -q -o "$work/fail" > "$work/sw11" 2>&1; rc=$?
n=$(grep -c "FAILED assert: Assertion \`version > s->version" "$work/sw11")
if [ $rc = 1 ] && [ "$n" -ge 3 ]; then
  ok "sweep of kvrep 1.1: $n failing seeds (assert), exit 1"
else
  bad "sweep of kvrep 1.1: exit $rc, $n assert failures"; tail -5 "$work/sw11"
fi
"$S" --target kvstream_1_0 sweep --seeds 0-199 -q > "$work/sw10" 2>&1; rc=$?
[ $rc = 0 ] && ok "sweep of kvrep 1.0: clean" || { bad "sweep of kvrep 1.0: exit $rc"; tail -5 "$work/sw10"; }
f=$(ls "$work"/fail/kvstream_1_1-seed-*.pb 2>/dev/null | head -1)
[ -n "$f" ] || die "no failing seed saved"
"$S" --target kvstream_1_0 replay -q "$f" > "$work/r10" 2>&1; rc10=$?
"$S" --target kvstream_1_1 replay -q "$f" > "$work/r11" 2>&1; rc11=$?
if [ $rc10 = 0 ] && [ $rc11 = 1 ] && grep -q "FAILED assert" "$work/r11"; then
  ok "simfuzz --target runs that target's code: the same file passes on 1.0, fails on 1.1"
else
  bad "--target: 1.0 exit $rc10, 1.1 exit $rc11"; cat "$work/r10" "$work/r11"
fi
h=$(sed -n 's/.*hash \([0-9a-f]*\) -> .*/\1/p' "$work/r11")
for bin in "$OB/fuzz/kvstream_1_1_fuzzer" "$OB/fuzz/kvstream_1_1_afl"; do
  [ -x "$bin" ] || continue
  "$bin" "$f" > "$work/eng.log" 2>&1
  hh=$(sed -n 's/^==simfuzz== scenario: .*trace hash \([0-9a-f]*\)$/\1/p' "$work/eng.log" | head -1)
  if [ -n "$h" ] && [ "$h" = "$hh" ] && grep -q "FAILURE in target kvstream_1_1: assert() failed" "$work/eng.log" \
     && grep -q "kvrep-1.1/kvrep.c:.*Assertion" "$work/eng.log"; then
    ok "$(basename "$bin") replays the sweep's failure: assert, trace hash $h"
  else
    bad "$(basename "$bin"): hash '$hh', CLI '$h'"; tail -20 "$work/eng.log"
  fi
done

# the outside project's own regression scenarios, replayed by the runner the
# in-tree targets use (each failure ever found in the correct release passes)
for d in "$O"/regressions/*/; do
  out=$(sh "$(dirname "$0")/regressions.sh" "$OB" "${d%/}" 2>&1) \
    && ok "regressions of $(basename "$d"): $out" || { bad "regressions of $(basename "$d")"; echo "$out"; }
done

# ---- 3b. a failure found by each engine replays in the other binaries ----
# hash_of BINARY FILE: the trace hash a binary reports for a failing input
hash_of() {
  case $1 in
    */bin/*) "$1" replay -q "$2" 2>&1 | sed -n 's/.*hash \([0-9a-f]*\) -> FAILED assert.*/\1/p' ;;
    *) "$1" "$2" 2>&1 | sed -n 's/^==simfuzz== scenario: .*trace hash \([0-9a-f]*\)$/\1/p' | head -1 ;;
  esac
}
cli="$OB/bin/simfuzz-kvstream_1_1" lf="$OB/fuzz/kvstream_1_1_fuzzer" afl="$OB/fuzz/kvstream_1_1_afl"
# same_everywhere ENGINE CRASH: the crash an engine found gives one trace hash
# in its binary, the CLI and the other engine's binary
same_everywhere() {
  if [ -z "$2" ]; then
    bad "$1 found no failure in kvstream_1_1"; tail -5 "$work/$1.log"; return
  fi
  a=$(hash_of "$lf" "$2"); b=$(hash_of "$cli" "$2"); x=$([ -x "$afl" ] && hash_of "$afl" "$2" || echo "$a")
  [ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" = "$x" ] \
    && ok "a $1 crash replays to hash $a in the CLI, libFuzzer and AFL++ binaries (assert)" \
    || bad "$1 crash: libFuzzer '$a', CLI '$b', AFL++ '$x'"
}
if [ -x "$lf" ]; then
  mkdir -p "$work/lfc" && cp "$OB"/corpus/kvstream_1_1/*.pb "$work/lfc/"
  "$lf" "$work/lfc" -runs=20000 -seed=3 -artifact_prefix="$work/lf-" > "$work/libFuzzer.log" 2>&1
  same_everywhere libFuzzer "$(ls "$work"/lf-crash-* 2> /dev/null | head -1)"
fi
if [ -x "$afl" ] && command -v afl-fuzz > /dev/null 2>&1; then
  mkdir -p "$work/afl-in" && cp "$OB"/corpus/kvstream_1_1/*.pb "$work/afl-in/"
  AFL_SKIP_CPUFREQ=1 AFL_NO_UI=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_AFFINITY=1 \
    AFL_BENCH_UNTIL_CRASH=1 AFL_CUSTOM_MUTATOR_LIBRARY="$OB/fuzz/libsimfuzz_mutator.so" \
    timeout 120 afl-fuzz -i "$work/afl-in" -o "$work/afl" -V 90 -t 5000 -- "$afl" > "$work/AFL++.log" 2>&1
  same_everywhere AFL++ "$(ls "$work"/afl/default/crashes/id:* 2> /dev/null | head -1)"
fi

# ---- 4. a library abort() cannot end a campaign ----
"$S" --target kvstream_1_1_raw sweep --seeds 0-199 -q -o "$work/raw" > "$work/swraw" 2>&1; rc=$?
n=$(grep -c "FAILED crash: assert kvrep-1.1/kvrep.c:[0-9]* 'version > s->version" "$work/swraw")
if [ $rc = 1 ] && [ "$n" -ge 3 ] && grep -q "^sweep: 200 seeds (0..199)" "$work/swraw"; then
  ok "sweep survives $n aborting seeds and finishes the range"
else
  bad "sweep of the aborting build: exit $rc, $n crash lines"; tail -5 "$work/swraw"
fi
rf=$(ls "$work"/raw/*.pb 2>/dev/null | head -1)
if [ -n "$rf" ]; then
  "$S" --target kvstream_1_1_raw triage "$rf" > "$work/tri" 2>&1; rc=$?
  if [ $rc = 1 ] && grep -q "crash: assert kvrep-1.1/kvrep.c:[0-9]* " "$work/tri"; then
    ok "triage names the assertion of a crashing run"
  else
    bad "triage: exit $rc"; cat "$work/tri"
  fi
  "$S" --target kvstream_1_1_raw minimize -q --max-tries 200 "$rf" -o "$work/min.pb" > "$work/min.log" 2>&1; rc=$?
  "$S" --target kvstream_1_1_raw triage "$work/min.pb" > "$work/tri2" 2>&1
  if [ $rc = 0 ] && grep -q "crash: assert kvrep-1.1/kvrep.c" "$work/tri2"; then
    ok "minimize shrinks a crashing run to the same assertion"
  else
    bad "minimize: exit $rc"; tail -5 "$work/min.log"; cat "$work/tri2"
  fi
fi
"$S" --target kvstream_1_1 check-determinism "$OB"/corpus/kvstream_1_1/*.pb > "$work/det" 2>&1 \
  && ok "ROUTE rand: the library's rand() is deterministic" || { bad "check-determinism"; cat "$work/det"; }

# ---- 4b. the nightly job over the outside project's build, run by the
# installed simfuzz: both builds of the buggy release are found and reported ----
if [ "$MODE" = full ] && [ -x "$OB/fuzz/kvstream_1_1_raw_fuzzer" ]; then
  "$P/bin/simfuzz" nightly --build "$OB" --state "$work/night" --budget 8 --jobs 1 \
    --targets "kvstream_1_0 kvstream_1_1 kvstream_1_1_raw" > "$work/night.out" 2> "$work/night.err"; rc=$?
  k="$work/night/known.tsv"
  if [ $rc = 1 ] && grep -q "^kvstream_1_1	invariant assert at kvrep-1.1/kvrep.c:[0-9]*	" "$k" 2> /dev/null \
     && grep -q "^kvstream_1_1_raw	crash: assert kvrep-1.1/kvrep.c:[0-9]* .version > s->version" "$k" \
     && ! grep -q "^kvstream_1_0	" "$k" && [ -s "$work/night/reports/night-1.sarif" ]; then
    ok "installed simfuzz nightly on the project's build: both failures reported, 1.0 clean"
  else
    bad "nightly on the outside build: exit $rc"; tail -5 "$work/night.err"; cat "$k" 2> /dev/null
  fi
fi

# ---- 5. seeds, dictionary, pkg-config ----
[ -s "$OB/corpus/kvstream_1_0/writes.pb" ] && [ -s "$OB/corpus/kvstream_1_1_raw/crash.pb" ] \
  && ok "seed corpus encoded" || bad "seed corpus missing"
cp "$O/seeds/writes.textproto" "$O/seeds/added.textproto"
cmake --build "$OB" > "$work/b2.log" 2>&1 && [ -s "$OB/corpus/kvstream_1_0/added.pb" ] \
  && ok "a seed added after configuring is in the next build" || bad "added seed not built"
rm "$O/seeds/added.textproto"
cmake --build "$OB" > "$work/b3.log" 2>&1 && [ ! -e "$OB/corpus/kvstream_1_0/added.pb" ] \
  && ok "a removed seed leaves the build and its corpus" || { bad "removed seed"; tail -5 "$work/b3.log"; }
grep -q kvstream_update "$OB/fuzz/kvstream_1_1.dict" && grep -q 'sc_nodes' "$OB/fuzz/kvstream_1_1.dict" \
  && ok "fuzz/<target>.dict: simfuzz's dictionary plus the target's DICT" || bad "dictionary"
if command -v pkg-config > /dev/null 2>&1; then
  cat > "$work/pc.c" << 'EOF'
#include <simfuzz/sim.h>
static void boot(void *c, sim_world *w, int n, int r) { (void)c; (void)r; sim_timer_start(w, n, 1000, 1); }
static const sim_node_ops ops = {boot, NULL, NULL, NULL, NULL};
int main(void) {
  sim_config c;
  sim_config_default(&c);
  c.ops = &ops;
  sim_world *w = sim_world_create(&c);
  sim_run(w, SIM_NS_PER_S, 0);
  printf("%016llx %s\n", (unsigned long long)sim_trace_hash(w), simfuzz_version_string());
  sim_world_destroy(w);
  return 0;
}
EOF
  # shellcheck disable=SC2046 # word splitting of the flags is intended
  if PKG_CONFIG_PATH="$P/lib/pkgconfig" "$cc" -std=c11 "$work/pc.c" -o "$work/pc" \
       $(PKG_CONFIG_PATH="$P/lib/pkgconfig" pkg-config --cflags --libs simfuzz) > "$work/pc.log" 2>&1 \
     && "$work/pc" | grep -q '^[0-9a-f]\{16\} '"$(PKG_CONFIG_PATH="$P/lib/pkgconfig" pkg-config --modversion simfuzz)"'$'; then
    ok "pkg-config simfuzz: a program builds and runs against the runtime, of the package's version"
  else
    bad "pkg-config"; cat "$work/pc.log"; "$work/pc"
  fi
  printf '#include "sim.h"\nint main(void) { return sim_nodes(NULL) == 0; }\n' > "$work/bare.c"
  # shellcheck disable=SC2046
  if "$cc" -std=c11 -c "$work/bare.c" -o "$work/bare.o" \
       $(PKG_CONFIG_PATH="$P/lib/pkgconfig" pkg-config --cflags simfuzz) > "$work/bare.log" 2>&1; then
    ok "pkg-config simfuzz: the bare header names still compile"
  else
    bad "pkg-config bare names"; cat "$work/bare.log"
  fi
fi

# ---- 6. the add_subdirectory() / FetchContent flow ----
if [ "$MODE" = full ]; then
  top=$(cd "$B" && sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' CMakeCache.txt)
  if cmake -S "$O" -B "$work/sub" -G "$gen" -DCMAKE_C_COMPILER="$cc" \
       -DKVSTREAM_SIMFUZZ_SOURCE="$top" > "$work/sub.log" 2>&1 \
     && cmake --build "$work/sub" --target simfuzz-kvstream_1_1 simfuzz > "$work/subb.log" 2>&1 \
     && "$work/sub/bin/simfuzz" --target kvstream_1_1 replay -q "$f" 2>&1 | grep -q "hash $h -> FAILED assert"; then
    ok "add_subdirectory(simfuzz): the same target, the same failure and trace hash"
  else
    bad "add_subdirectory flow"; tail -n 20 "$work/sub.log" "$work/subb.log"
  fi
fi
echo "outside_project: $nok ok, $nbad failed"
[ $nbad = 0 ]
