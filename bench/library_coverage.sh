#!/bin/sh
# How much of a prebuilt library a set of scenarios executes, measured from
# outside (the fuzzers cannot see coverage inside a library that was not
# compiled with their instrumentation): every input of each corpus is
# replayed under callgrind, and the library's global functions that ran
# are counted.
# Usage: [EXCLUDE=REGEX] bench/library_coverage.sh CLI LIBRARY.a NAME=DIR [NAME=DIR ...]
#   EXCLUDE: archive members not counted (the parts the target cannot use,
#   e.g. 'uv|fixture|compress' for canonical/raft's libuv backend)
#   CLI: simfuzz-<target> (statically linked with LIBRARY.a)
#   DIR: a directory of scenario files (a fuzzer's corpus, sweep seeds, ...)
set -eu
CLI=$1; LIB=$2; shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# valgrind 3.19 cannot read clang 14's DWARF 5: function names from the
# symbol table are enough here
cp "$CLI" "$work/cli" && strip --strip-debug "$work/cli"
CLI=$work/cli
nm -A --defined-only "$LIB" 2> /dev/null | grep -Ev "${EXCLUDE:-^\$}" |
  awk '$2 == "T" { print $3 }' | sort -u > "$work/all"
total=$(wc -l < "$work/all")
for spec in "$@"; do
  name=${spec%%=*}; dir=${spec#*=}
  : > "$work/ran"
  n=0
  # in batches: one callgrind profile per 1,000 inputs
  find "$dir" -maxdepth 1 -type f | sort > "$work/files"
  split -l 1000 "$work/files" "$work/batch."
  for b in "$work"/batch.*; do
    # shellcheck disable=SC2046 # one argument per file
    valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" \
      "$CLI" replay -q $(cat "$b") > /dev/null 2>&1 || true
    callgrind_annotate --threshold=100 "$work/cg.out" 2> /dev/null |
      awk '/^ *[0-9,]+ .*:/ { sub(/^.*:/, ""); sub(/ .*$/, ""); print }' >> "$work/ran"
    n=$((n + $(wc -l < "$b")))
    rm -f "$work/cg.out" "$b"
  done
  sort -u "$work/ran" | comm -12 - "$work/all" > "$work/hit"
  echo "$name: $n scenarios executed $(wc -l < "$work/hit") of $total global functions of $(basename "$LIB")"
done
