#!/bin/sh
# encode_seed.sh PROTOC PROTO_DIR IN.textproto OUT.pb — encode a seed atomically.
set -eu
"$1" --encode=simfuzz.Scenario -I"$2" "$2/scenario.proto" < "$3" > "$4.tmp"
mv "$4.tmp" "$4"
