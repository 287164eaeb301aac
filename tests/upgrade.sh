#!/bin/sh
# Versions and rolling upgrades (simfuzz_add_program's VERSIONS): kvstore
# from version 1 to 1.1 (reads hexadecimal values too) is a correct upgrade;
# straight to 2 (writes them) is a mixed-version bug (the top
# CMakeLists.txt, examples/programs/kvstore/kvstore.c).
#   1. the rolling-upgrade seed runs on both targets, and the timeline
#      shows each node's version and the upgrade's stop;
#   2. the correct upgrade passes a sweep whose scenarios start mixed
#      clusters and upgrade nodes one at a time;
#   3. the bug is found by the sweep, minimized, replays with one trace
#      hash in the three binaries and passes on the correct upgrade;
#   4. it is a mixed-version bug: the minimized scenario (with the node
#      count the run has) passes with every node at version 1, and with
#      every node at version 2.
# usage: upgrade.sh BUILD_DIR
T_NAME=upgrade
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
B=$(cd "$1" && pwd)
K=$B/bin/simfuzz-kvstore_up V=$B/bin/simfuzz-kvstore_up_bug_hex
for t in "$K" "$V"; do [ -x "$t" ] || fail "no $t"; done
in_empty_dir

# 1. the seed, and what the timeline shows
seed=$B/corpus/kvstore_up/rolling.pb
[ -f "$seed" ] || fail "no rolling-upgrade seed at $seed"
"$K" replay "$seed" > "$work/seed.log" 2>&1 || fail "the seed fails: $(tail -n 2 "$work/seed.log")"
"$V" replay -q "$seed" > /dev/null 2>&1 || fail "the seed fails the mixed-version bug"
n=$(grep -c " version  *v1 (was v0)" "$work/seed.log")
stops=$(grep -c "crash  *(its process stopped" "$work/seed.log")
[ "$n" = 3 ] && [ "$stops" = 3 ] || fail "the timeline shows $n version changes and $stops stops, not 3"
ok "the rolling-upgrade seed: 3 nodes upgraded one at a time, each a version record and a stop"

# 2. the correct upgrade path
"$K" sweep --seeds 1-3000 -q > "$work/clean.log" 2>&1 ||
  fail "the correct upgrade failed the sweep: $(tail -n 3 "$work/clean.log")"
ok "the correct upgrade (1 to 1.1) passes 3,000 scenarios of mixed clusters and rolling upgrades"

# 3. the bug: found, minimized, replayed in every binary
program_bug "$B" kvstore_up hex 1-300 "not linearizable"

# 4. only in a mixed cluster: each version alone passes the minimized run
"$V" show "$work/min_kvstore_up_bug_hex.pb" > "$work/min.txt" 2>&1 || fail "show"
grep -q "^versions:" "$work/min.txt" || grep -q "upgrade {" "$work/min.txt" ||
  fail "the minimized scenario names no version: $(cat "$work/min.txt")"
# (the sweep's scenario asked for 5 nodes of a 3-node target: minimize
# writes the count the run has)
! grep -q "^nodes: [4-9]" "$work/min.txt" ||
  fail "minimize left a node count the target clamps: $(grep "^nodes" "$work/min.txt")"
for v in 0 1; do # every node at version v: no starting versions, no upgrade
  awk -v v="$v" '
    /^steps \{/ { blk = $0; inblk = 1; up = 0; next }
    inblk { blk = blk "\n" $0; if (/upgrade/) up = 1
            if (/^}/) { inblk = 0; if (!up) print blk }
            next }
    /^versions:/ { next }
    { print }
    END { print "versions: [" v ", " v ", " v "]" }' "$work/min.txt" > "$work/all$v.txt"
  "$V" encode "$work/all$v.txt" -o "$work/all$v.pb" > "$work/enc.log" 2>&1 ||
    fail "encode: $(cat "$work/enc.log")"
  "$V" replay -q "$work/all$v.pb" > "$work/all$v.log" 2>&1 ||
    fail "every node at version $v fails too: $(tail -n 1 "$work/all$v.log")"
done
ok "a mixed-version bug: its minimized run passes with every node at one version, either one"
finish
