#!/bin/sh
# The command line under hostile inputs and conditions: each check is one
# defect an outside attack found (docs/RELIABILITY.md lists them), and
# fails on the code before its fix.
# Usage: tests/cli_hostile.sh BUILD_DIR
set -u
B=$(cd "$1" && pwd)
S="$B/bin/simfuzz"
T=pbstore_bug_reset_skip
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
nbad=0
ok() { echo "ok: $*"; }
bad() { nbad=$((nbad + 1)); echo "FAIL: $*"; }

# a failing scenario to work with
"$S" --target $T sweep --seeds 0-3000 --stop-on-first -q -o sw > /dev/null 2>&1
fail=$(ls sw/*.pb | head -1)
[ -n "$fail" ] || { echo "FAIL: no failing seed"; exit 1; }

# 1. minimize must not overwrite its input through its side outputs
cp "$fail" out.pb.txt && cp out.pb.txt keep
"$S" --target $T minimize -q --binary out.pb.txt -o out.pb > m.log 2>&1; rc=$?
if [ $rc = 2 ] && cmp -s out.pb.txt keep && grep -q "one of this command's inputs" m.log; then
  ok "minimize IN -o OUT with IN = OUT.txt: refused (exit 2), IN intact"
else
  bad "minimize overwrote or accepted its input as OUT.txt (exit $rc)"; cat m.log
fi
cp "$fail" t.pb && cp "$fail" t.pb.timeline.txt
"$S" --target $T minimize -q t.pb.timeline.txt --binary -o t.pb > m2.log 2>&1
cmp -s t.pb.timeline.txt "$fail" && ok "minimize: OUT.timeline.txt as input is safe too" ||
  bad "minimize overwrote OUT.timeline.txt"

# 2. crash files are read as the fuzzers read them, never as text by sniffing
printf 'U' > crash-u
"$S" --target $T replay -q crash-u > u.out 2>&1; rc=$?
if [ $rc != 2 ] && ! grep -q "malformed text" u.out; then
  ok "a 1-byte crash file 'U' replays (exit $rc), read as bytes"
else
  bad "crash file 'U' read as text (exit $rc)"; cat u.out
fi
printf 'nodes: 3 seed: 42 bogus: 1\n' > crash-printable
for c in replay triage show check-determinism; do
  "$S" --target $T $c crash-printable > c.out 2>&1; rc=$?
  if [ $rc != 2 ]; then ok "$c of a printable crash file: exit $rc, not a text error"; else
    bad "$c of a printable crash file: exit 2"; cat c.out; fi
done
"$S" --target $T replay -q --text crash-printable > c.out 2>&1
[ $? = 2 ] && grep -q "malformed text" c.out && ok "--text reads it as text on request" ||
  bad "--text"

# 3. text over 64 KiB is read whole: show -> encode gives the same scenario
python3 - > big.txt << 'PY'
import random
r = random.Random(5)
print("version: 1\nnodes: 3\nseed: 9")
print("choices: \"%s\"" % "".join("\\%03o" % r.randrange(256) for _ in range(4096)))
for i in range(256):
    print("steps { at_us: %d link { from: %d to: %d params { latency_min_us: 1000 latency_max_us: 9000 loss_ppm: 1000 dup_ppm: 2000 reorder_ppm: 3000 corrupt_ppm: 100 } } }" % (i * 1000, i % 3, (i + 1) % 3))
PY
"$S" encode big.txt -o big.pb 2> /dev/null && "$S" show big.pb > big2.txt && "$S" encode big2.txt -o big2.pb 2> /dev/null
size=$(wc -c < big2.txt)
if [ "$size" -gt 65536 ] && cmp -s big.pb big2.pb &&
   [ "$(grep -c '^steps' big2.txt)" = 256 ]; then
  ok "a $size-byte text scenario (256 steps) round-trips byte for byte"
else
  bad "text over 64 KiB: $size bytes, $(grep -c '^steps' big2.txt) steps"
fi

# 9. no output through a link; a pre-placed link is refused
echo precious > precious
ln -s precious link.pb
"$S" encode big.txt -o link.pb > l.out 2>&1; rc=$?
[ $rc = 2 ] && [ "$(cat precious)" = precious ] && grep -q "symbolic link" l.out &&
  ok "encode -o LINK: refused, the link's target intact" || bad "encode wrote through a link (exit $rc)"
left=$(find . -maxdepth 1 -name '*.tmp*')
[ -n "$left" ] && bad "temporary files left: $left" || ok "no temporary file left"

# 10. check-determinism memory stays bounded on a 300k-event input
python3 - > huge.txt << 'PY'
print("version: 1\nnodes: 9\ntail_ms: 60000\nnetwork { latency_min_us: 100 latency_max_us: 2000 dup_ppm: 300000 }")
for i in range(250):
    print("steps { at_us: %d op { node: %d op: %d key: %d value: %d count: 64 interval_us: 300 } }" % (i * 200000, i % 9, i % 3, i % 7, i))
PY
"$S" encode huge.txt -o huge.pb 2> /dev/null
rss() { # peak resident memory (KiB) of a command; in a sanitized build
  # without ASan's quarantine, which keeps freed memory (up to 256 MiB) out of reuse
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0" python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
}
base=$(rss "$B/bin/simfuzz-raft_kv" check-determinism "$fail")
big=$(rss "$B/bin/simfuzz-raft_kv" check-determinism huge.pb)
events=$("$B/bin/simfuzz-raft_kv" replay -q huge.pb | sed 's/.* \([0-9]*\) events.*/\1/')
extra=$(((big - base) / 1024))
[ "$extra" -lt 64 ] && ok "check-determinism of $events events: +$extra MiB over a small input" ||
  bad "check-determinism of $events events took +$extra MiB"

# 13. smaller defects
mkdir full
{ (ulimit -f 0; "$S" --target $T sweep --seeds 0-3000 -q -o full); echo $? > f.rc; } 2>&1 | cat > f.out
rc=$(cat f.rc)
[ "$rc" = 2 ] && grep -q "could not save" f.out && ok "sweep -o on a full disk: exit 2, the loss said" ||
  { bad "sweep -o on a full disk: exit $rc"; tail -3 f.out; }
( "$B/bin/simfuzz-raft_kv" replay huge.pb; echo $? > p.rc ) 2> p.err | head -1 > /dev/null
rc=$(cat p.rc)
[ "$rc" = 2 ] && [ "$(wc -l < p.err)" = 1 ] && ok "replay | head -1: exit 2, one line ($(cat p.err))" ||
  { bad "replay into a closed pipe: exit $rc"; cat p.err; }
"$S" --target $T replay --from nan "$fail" > n.out 2>&1
[ $? = 2 ] && grep -q "bad time" n.out && ok "--from nan: refused" || bad "--from nan accepted"
mkdir many && i=0
while [ $i -lt 1100 ]; do cp "$fail" many/f$i.pb; i=$((i + 1)); done
n=$("$S" --target $T replay -q many/*.pb 2> /dev/null | grep -c "FAILED")
[ "$n" = 1100 ] && ok "replay of 1,100 files: every one replayed" || bad "replay of 1,100 files: $n"
"$B/bin/simfuzz-pbstore" __hash /nonexistent > /dev/null 2>&1
[ $? = 2 ] && ok "__hash of a missing file: exit 2 (no leak report)" || bad "__hash of a missing file"
echo "cli_hostile: $nbad failed"
[ $nbad = 0 ]
