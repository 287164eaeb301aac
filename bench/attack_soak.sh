#!/bin/sh
# The default job on every misbehaving variant of tests/attack, for a
# longer time than the tests give it: `fuzz --jobs 2` (libFuzzer beside the
# explorer where the variant has a libFuzzer binary), then what it left.
# Prints one line per variant: exit status, confirmed files and distinct
# signatures, files moved to unconfirmed/, diverged files, processes left
# behind, debris (temporary or probe files) in the job directory.
# Several instances may run side by side on disjoint variant lists.
# Usage: bench/attack_soak.sh ATTACK_BUILD SECONDS [VARIANT...]
#   ATTACK_BUILD  a build of tests/attack (as tests/attacks.sh makes one)
set -u
AB=$1
T=$2
shift 2
V=${*:-hang blowup two_aborts exit0 exit3 leak overflow spawn nondet assert chatty}
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
work=$(bench_workdir)
trap 'rm -rf "$work"' EXIT
printf '%-11s %4s %9s %5s %11s %8s %4s %6s\n' variant exit confirmed kinds unconfirmed diverged left debris
for v in $V; do
  tool=$AB/bin/simfuzz-attack_$v
  eng=""
  [ -x "$AB/fuzz/attack_${v}_fuzzer" ] && eng="--engine $AB/fuzz/attack_${v}_fuzzer"
  [ -n "$eng" ] || eng="--no-engine"
  j=$work/$v
  # shellcheck disable=SC2086 # eng is one option and its value
  timeout -k 10 $((T * 3 + 300)) "$tool" fuzz -o "$j" --time "$T" --jobs 2 $eng --timeout 5 \
    --rss-limit-mb 1500 -q > "$work/$v.log" 2>&1
  rc=$?
  sleep 1
  conf=$(grep -c "^fuzz: confirmed " "$work/$v.log")
  kinds=$(sed -n 's/^fuzz: confirmed [^:]*: //p' "$work/$v.log" | sort -u | wc -l)
  unc=$(find "$j/unconfirmed" -type f 2> /dev/null | wc -l)
  div=$(find "$j/crashes" -name 'diverged-*' 2> /dev/null | wc -l)
  pat="simfuzz-attack_$v|attack_${v}_fuzzer"
  # only spawn starts `sleep 25.25`; other variants may run beside it
  [ "$v" = spawn ] && pat="$pat|sleep 25.25"
  left=$(pgrep -f -c "$pat" || true)
  debris=$(find "$j" -name '.*.tmp-*' -o -name '.simfuzz-probe-*' 2> /dev/null | wc -l)
  printf '%-11s %4s %9s %5s %11s %8s %4s %6s\n' "$v" "$rc" "$conf" "$kinds" "$unc" "$div" "$left" \
    "$debris"
  sed -n 's/^fuzz: confirmed [^:]*: /    /p' "$work/$v.log" | sort | uniq -c
  [ "$v" = spawn ] && pkill -f "sleep 25.25" 2> /dev/null
done
