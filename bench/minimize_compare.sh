#!/bin/sh
# Minimizers side by side on the same crashes of TARGET (found by a sweep):
# simfuzz minimize, libFuzzer -minimize_crash=1 (its structure-aware custom
# mutator included; -seed=1, 3000 runs) and afl-tmin (byte-level). Reports
# the steps after decoding, the encoded bytes, whether the failure is still
# the same, and the wall time, per crash and as medians.
# Usage: bench/minimize_compare.sh BUILD_DIR [TARGET] [CRASHES]
set -eu
B=$1; T=${2:-pbstore_bug_reset_skip}; K=${3:-8}
S="$B/bin/simfuzz --target $T"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
$S sweep --seeds 0-20000 -o "$work" -q > /dev/null || true
now() { date +%s.%N; }
steps() { $B/bin/simfuzz show "$1" | grep -c '^steps {' || true; }
fail() { $S replay -q "$1" | sed -n 's/.*-> FAILED //p'; }
printf "%-34s %-26s %-26s %-26s\n" crash "simfuzz minimize" "libFuzzer -minimize_crash" "afl-tmin"
for c in $(ls "$work"/*.pb | head -"$K"); do
  want=$(fail "$c")
  t0=$(now); $S minimize -q "$c" -o "$work/s.out" > /dev/null; t1=$(now)
  "$B/fuzz/${T}_fuzzer" "$c" -minimize_crash=1 -runs=3000 -seed=1 -exact_artifact_path="$work/l.out" \
    > /dev/null 2>&1 || true
  t2=$(now)
  [ -s "$work/l.out" ] || cp "$c" "$work/l.out"
  AFL_SKIP_CPUFREQ=1 afl-tmin -i "$c" -o "$work/a.out" -- "$B/fuzz/${T}_afl" > /dev/null 2>&1 || cp "$c" "$work/a.out"
  t3=$(now)
  cell() { # file, seconds
    same=$( [ "$(fail "$1")" = "$want" ] && echo same || echo OTHER)
    printf "%s/%sB %s %.1fs" "$(steps "$1")" "$(wc -c < "$1")" "$same" "$2"
  }
  printf "%-34s %-26s %-26s %-26s\n" "$(basename "$c") ($(steps "$c") steps)" \
    "$(cell "$work/s.out" "$(echo "$t1 - $t0" | bc)")" \
    "$(cell "$work/l.out" "$(echo "$t2 - $t1" | bc)")" \
    "$(cell "$work/a.out" "$(echo "$t3 - $t2" | bc)")" | tee -a "$work/rows"
done
med() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# fields: name, "(N", "steps)", then per tool: "steps/bytesB", same|OTHER, "time s"
for col in 4 7 10; do
  st=$(awk -v c=$col '{split($c, x, "/"); print x[1]}' "$work/rows" | med)
  by=$(awk -v c=$col '{split($c, x, "/"); sub("B", "", x[2]); print x[2]}' "$work/rows" | med)
  tm=$(awk -v c=$((col + 2)) '{sub("s", "", $c); print $c}' "$work/rows" | med)
  same=$(awk -v c=$((col + 1)) '$c == "same"' "$work/rows" | wc -l)
  name=$( [ $col = 4 ] && echo "simfuzz minimize" || { [ $col = 7 ] && echo "libFuzzer -minimize_crash" || echo "afl-tmin"; })
  echo "$name: median $st steps, $by bytes, $tm s; same failure kept in $same of $(wc -l < "$work/rows")"
done
