#!/bin/sh
# Fuzz the text format parser from the seed scenarios, comparing with
# protoc on every input it accepts (when protoc is given).
# Usage: tests/textpb_fuzz.sh FUZZER SOURCE_DIR [PROTOC] [RUNS]
set -u
FZ=$1; SRC=$2; PROTOC=${3:-}; RUNS=${4:-4000}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
mkdir "$d/corpus"
for f in "$SRC"/corpus/*/*.textproto; do
  cp "$f" "$d/corpus/$(basename "$(dirname "$f")")-$(basename "$f")"
done
if [ -n "$PROTOC" ]; then
  SIMFUZZ_PROTOC=$PROTOC SIMFUZZ_PROTO_DIR=$SRC/proto "$FZ" "$d/corpus" -runs="$RUNS" -seed=11 \
    -max_len=4096 -artifact_prefix="$d/" 2>&1 | tail -3
else
  "$FZ" "$d/corpus" -runs="$RUNS" -seed=11 -max_len=4096 -artifact_prefix="$d/" 2>&1 | tail -3
fi
ls "$d"/crash-* "$d"/leak-* "$d"/timeout-* > /dev/null 2>&1 && { echo "textpb_fuzz: FAIL"; exit 1; }
echo "textpb_fuzz: ok"
