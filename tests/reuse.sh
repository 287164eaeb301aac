#!/bin/sh
# In-process reuse against fresh processes: test_reuse runs N executions in
# one process (same hash for an input every time, flat RSS; LeakSanitizer
# at exit in sanitized builds); then a fresh CLI process replays a sample of
# its inputs and must compute the same hashes.
# Usage: tests/reuse.sh BUILD_DIR N
set -eu
B=$1; N=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$B/tests/test_reuse" "$N" "$work"
n=0
while read -r t f h; do
  got=$("$B/bin/simfuzz" --target "$t" __hash "$f")
  [ "$got" = "$h" ] || { echo "reuse: $t $f: fresh process $got, in-process $h"; exit 1; }
  n=$((n + 1))
done < "$work/hashes.txt"
echo "reuse: $n sampled inputs give the same hash in fresh processes"
