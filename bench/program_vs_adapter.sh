#!/bin/sh
# The cost of running a program as nodes against a target written for
# simfuzz: runs and events per second of sweeps of the kvstore program
# (examples/programs/kvstore: TCP, epoll, files, a client; every call
# through the program runtime and a fiber switch per wake-up), of the same
# protocol written as an adapter target (examples/kvstore_adapter:
# callbacks on the simulator's streams, timers and disk, binary messages,
# client operations submitted in process), and of the pbstore adapter
# (examples/pbstore: a primary-backup log of another protocol), the same
# seeds, sweeps of the three alternating on one core. The ratio the issue
# asks about is kvstore_adapter / kvstore: one protocol, written twice.
# Usage: bench/program_vs_adapter.sh BUILD_DIR [SEEDS] [REPS]
set -eu
B=$1; seeds=${2:-2000}; reps=${3:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
sweep() { # target: "runs/s events/s" of one sweep
  s=$(date +%s.%N)
  "$B/bin/simfuzz-$1" sweep --seeds "1-$seeds" -v > "$work/out" 2>&1 || true
  e=$(date +%s.%N)
  ev=$(awk '/ events / {for (i = 1; i < NF; i++) if ($i == "events") n += $(i + 1)} END {print n + 0}' "$work/out")
  echo "$s $e $ev" | awk -v n="$seeds" '{printf "%d %d\n", n / ($2 - $1), $3 / ($2 - $1)}'
}
for t in kvstore kvstore_adapter pbstore; do : > "$work/$t"; done
for _ in $(seq "$reps"); do
  for t in kvstore kvstore_adapter pbstore; do sweep "$t" >> "$work/$t"; done
done
printf '%-16s %10s %12s %14s   (%s seeds, median of %s sweeps each)\n' target runs/s events/s \
  "events/run" "$seeds" "$reps"
for t in kvstore kvstore_adapter pbstore; do
  r=$(cut -d' ' -f1 < "$work/$t" | median); e=$(cut -d' ' -f2 < "$work/$t" | median)
  printf '%-16s %10s %12s %14s\n' "$t" "$r" "$e" "$(echo "$e $r" | awk '{printf "%.0f", $1 / $2}')"
  echo "$r" > "$work/$t.r"
done
echo "$(cat "$work/kvstore.r") $(cat "$work/kvstore_adapter.r") $(cat "$work/pbstore.r")" |
  awk '{printf "runs/s: kvstore_adapter / kvstore = %.2fx; pbstore / kvstore = %.2fx\n", $2 / $1, $3 / $1}'
