#!/bin/sh
# The canonical/raft example's own checks, on a build of this directory:
#   - every seed passes on craft_kv, craft_kv_errors and craft_kv_uninit's
#     correct sibling;
#   - regressions/<variant>/<what>--<name>.pb: each known finding in the
#     library still fails that build as <what> (an invariant, "liveness",
#     or "crash"); <what> "pass" is an oracle's false alarm, fixed, that
#     must pass; findings of another build than craft_kv pass on craft_kv,
#     whose adapter avoids them (regressions/craft_kv/: findings no adapter
#     can avoid, expected to fail there too);
#   - craft_io_test: the backend's durability promises under disk errors;
#   - a sweep of craft_kv is clean and replays deterministically;
#   - the fuzzers run (a bounded libFuzzer campaign on craft_kv); a failure
#     it finds must be one of the known findings.
# Usage: examples/craft/check.sh BUILD_DIR [SWEEP_SEEDS] [FUZZ_RUNS]
set -u
B=$1; SEEDS=${2:-2000}; RUNS=${3:-2000}
D=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=examples/craft/check_lib.sh
. "$D/check_lib.sh"
for f in "$B"/corpus/craft_kv/*.pb; do
  "$B/bin/simfuzz-craft_kv" replay -q "$f" > "$work/r" 2>&1 || { bad "seed $f"; cat "$work/r"; }
done
ok "seeds pass"
if "$B/craft_io_test" > "$work/io" 2>&1; then ok "craft_io_test ($(grep -c '^ok' "$work/io") checks)"
else bad "craft_io_test"; cat "$work/io"; fi
n=0
for dir in "$D"/regressions/*/; do
  t=$(basename "$dir")
  for f in "$dir"*.pb; do
    [ -e "$f" ] || continue
    n=$((n + 1))
    want=$(basename "$f" | sed 's/--.*//')
    if [ "$want" = pass ]; then # a false alarm of an oracle, fixed: must pass
      "$B/bin/simfuzz-$t" replay -q "$f" > "$work/r" 2>&1 || { bad "$t should pass $(basename "$f")"; cat "$work/r"; }
      continue
    elif [ "$want" = crash ]; then
      "$B/bin/simfuzz-$t" triage "$f" > "$work/r" 2>&1
      grep -q ": crash: " "$work/r" || { bad "$t should crash on $(basename "$f")"; cat "$work/r"; }
    else
      "$B/bin/simfuzz-$t" replay -q "$f" > "$work/r" 2>&1
      grep -q "FAILED $want" "$work/r" || { bad "$t should fail $want on $(basename "$f")"; cat "$work/r"; }
    fi
    [ "$t" = craft_kv ] && continue
    "$B/bin/simfuzz-craft_kv" replay -q "$f" > "$work/r" 2>&1 \
      || { bad "craft_kv should pass $(basename "$f")"; cat "$work/r"; }
  done
done
[ $n -gt 0 ] && ok "$n regression scenarios: each finding still shows where it is expected" \
  || bad "no regression scenarios"
"$B/bin/simfuzz-craft_kv" sweep --seeds "0-$((SEEDS - 1))" -q -o "$work/sweep" > "$work/sw" 2>&1 \
  && ok "sweep of $SEEDS seeds: clean" || { bad "sweep"; tail -5 "$work/sw"; }
"$B/bin/simfuzz-craft_kv" sweep --seeds 0-19 -v -q 2>/dev/null | sed -n 's/ events.*//p' > "$work/h1"
"$B/bin/simfuzz-craft_kv" sweep --seeds 0-19 -v -q 2>/dev/null | sed -n 's/ events.*//p' > "$work/h2"
[ -s "$work/h1" ] && cmp -s "$work/h1" "$work/h2" && ok "sweeps replay to the same trace hashes" \
  || bad "sweep hashes differ between two runs"
if [ -x "$B/fuzz/craft_kv_fuzzer" ]; then
  mkdir "$work/corpus" && cp "$B"/corpus/craft_kv/*.pb "$work/corpus/"
  if "$B/fuzz/craft_kv_fuzzer" "$work/corpus" -runs="$RUNS" -seed=1 -timeout=25 \
       -dict="$B/fuzz/craft_kv.dict" -artifact_prefix="$work/" > "$work/fz" 2>&1; then
    ok "libFuzzer: $RUNS executions of craft_kv, no failure"
  else
    crash=$(ls "$work"/crash-* 2> /dev/null | head -1)
    sig=$([ -n "$crash" ] && "$B/bin/simfuzz-craft_kv" triage "$crash" 2>&1 | sed 's/^[^:]*: //')
    name=$(echo "$sig" | sed 's/^invariant \([^ ]*\).*/\1/; s/^\([^ :]*\).*/\1/')
    known=$(ls "$D"/regressions/craft_kv/ | sed 's/--.*//' | sort -u | tr '\n' ' ')
    case " $known" in
      *" $name "*) ok "libFuzzer found a known finding of the library: $sig" ;;
      *) bad "libFuzzer found a new failure in craft_kv: $sig"; grep -A8 "FAILURE\|ERROR" "$work/fz" | head -20 ;;
    esac
  fi
fi
echo "craft check: $nbad failed"
[ $nbad = 0 ]
