#!/bin/sh
# Scan one hand-written template for trail_wrap's trigger (cowsql 49b5d847,
# "trail: Fix truncating a wrapped trail"): K rounds of W writes at the
# leader, each round ending with the leader isolated (a new term, so a new
# record in every trail, while snapshots drop records from the front); then
# node F is isolated while 30 writes go on, and the heal makes the leader
# send it an InstallSnapshot, whose TrailRestore() truncates F's whole trail.
# A wrapped ring there is the bug. Prints each variation that fails
# craft_trail_wrap, with what craft_trail_wrap_fixed does with it, and
# writes those the control passes to OUT.
# Usage: examples/craft/bugs/trail_scan.sh BUILD_DIR OUT [SEED...]
#   (default seeds: those of 1-25 whose runs take snapshots in this tree)
set -u
B=$1; OUT=$2; shift 2
V=$B/bin/simfuzz-craft_trail_wrap
C=$B/bin/simfuzz-craft_trail_wrap_fixed
seeds=${*:-2 5 8 9 10 12 13 14 15 16 18 19 20 25}
mkdir -p "$OUT"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
step() { # AT_US BODY [by_state]
  echo "steps { at_us: $1 ${3:+by_state: true }$2 }"
}
scenario() { # SEED K W F
  printf 'version: 1\nnodes: 5\nseed: %s\n' "$1"
  k=0
  while [ $k -lt "$2" ]; do
    t=$((1000000 + k * 1000000))
    step $t "op { node: 0 op: 0 key: $((k % 4)) value: $((k + 1)) count: $3 interval_us: 5000 }"
    step $((t + 200000)) "isolate { node: 0 }" yes
    step $((t + 900000)) "heal { }"
    k=$((k + 1))
  done
  t=$((1000000 + $2 * 1000000))
  step $t "isolate { node: $4 }"
  step $((t + 300000)) "op { node: $((($4 + 1) % 5)) op: 0 key: 1 value: 9 count: 30 interval_us: 5000 }"
  step $((t + 1500000)) "heal { }"
}
outcome() { # TOOL FILE
  "$1" replay -q "$2" 2>&1 | tail -n 1 | sed 's/.*-> //'
}
for seed in $seeds; do
  for k in 3 4 5 6 7 8 9 10 11 12; do
    for w in 1 3; do
      for f in 0 1 2 3 4; do
        s=$work/s.txt
        scenario "$seed" $k $w $f > "$s"
        v=$(outcome "$V" "$s")
        [ "$v" = ok ] && continue
        c=$(outcome "$C" "$s")
        echo "seed $seed, $k rounds, $w writes, n$f isolated: variant $v, control $c"
        [ "$c" = ok ] && cp "$s" "$OUT/trail_wrap-$seed-$k-$w-$f.txt"
      done
    done
  done
done
