#!/bin/sh
# Determinism across the binaries a user runs: the same scenarios replayed
# by the CLI (one fresh process per input), by the libFuzzer fuzzer and by
# the AFL++ fuzzer (instrumented differently, sanitizers on or off, one
# process for all inputs) give identical trace hashes, for every correct
# example target. Complements determinism_matrix.sh (compilers, -O levels).
# Usage: tests/determinism_binaries.sh BUILD_DIR [N]
set -u
B=$1; N=${2:-100}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for i in $(seq 1 "$N"); do
  "$B/bin/simfuzz" gen "$i" -o "$work/s$(printf %04d "$i").pb" > /dev/null 2>&1 || exit 1
done
export SIMFUZZ_PRINT_HASH=1 ASAN_OPTIONS=detect_leaks=0
bad=0; builds=""
for t in pbstore raft_kv twopc leaselock; do
  for f in "$work"/s*.pb; do "$B/bin/simfuzz" --target $t __hash "$f"; done > "$work/$t.cli"
  builds="CLI"
  if [ -x "$B/fuzz/${t}_fuzzer" ]; then
    "$B/fuzz/${t}_fuzzer" "$work"/s*.pb 2>&1 | sed -n 's/^simfuzz-hash //p' > "$work/$t.lf"
    cmp -s "$work/$t.cli" "$work/$t.lf" || { echo "FAIL $t: libFuzzer build differs from the CLI"; bad=1; }
    builds="$builds, libFuzzer"
  fi
  if [ -x "$B/fuzz/${t}_afl" ]; then
    "$B/fuzz/${t}_afl" "$work"/s*.pb 2>&1 | sed -n 's/^simfuzz-hash //p' > "$work/$t.afl"
    cmp -s "$work/$t.cli" "$work/$t.afl" || { echo "FAIL $t: AFL++ build differs from the CLI"; bad=1; }
    builds="$builds, AFL++"
  fi
  [ "$(wc -l < "$work/$t.cli")" = "$N" ] || { echo "FAIL $t: $(wc -l < "$work/$t.cli") hashes"; bad=1; }
done
[ $bad = 0 ] && echo "determinism_binaries: $N scenarios x 4 targets: identical trace hashes from $builds"
exit $bad
