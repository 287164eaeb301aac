#!/bin/sh
# The nightly fuzz job, for any machine or CI runner: fuzz every target for a
# budget with N workers (libFuzzer fork mode), merge each corpus, triage the
# crashes by failure signature, minimize and determinism-check every new
# one, and write a report (Markdown for people, JSON for tools, SARIF for CI
# code-scanning UIs) with a replay command per crash.
#
# It is resumable: STATE keeps the corpora and the known signatures between
# nights, so a night reports only what is new.
#
# Usage: scripts/nightly.sh [--state DIR] [--build DIR] [--budget SECONDS]
#                           [--jobs N] [--targets "T1 T2 ..."] [--no-build]
#   --state    where corpora, crashes and reports live (default out/nightly)
#   --build    the build directory (default build/nightly; configured and
#              built here unless --no-build)
#   --budget   fuzzing seconds per target (default 600)
#   --jobs     libFuzzer -fork workers per target (default: cores)
#   --targets  which targets (default: every fuzzer in the build)
# Exit status: 0 nothing new, 1 new crashes (see the report), 2 the job
# itself failed.
set -u
SRC=$(cd "$(dirname "$0")/.." && pwd)
STATE=out/nightly; BUILD=build/nightly; BUDGET=600; JOBS=$(nproc 2> /dev/null || echo 2)
TARGETS=""; DO_BUILD=1
while [ $# -gt 0 ]; do
  case "$1" in
    --state) STATE=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --budget) BUDGET=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --targets) TARGETS=$2; shift 2 ;;
    --no-build) DO_BUILD=0; shift ;;
    *) echo "nightly: unknown argument '$1' (see the top of $0)" >&2; exit 2 ;;
  esac
done
die() { echo "nightly: $*" >&2; exit 2; }
jstr() { printf "%s" "$1" | sed 's/\\/\\\\/g; s/"/\\"/g'; }
field() { # JSON line, key -> value
  printf "%s" "$1" | python3 -c 'import json, sys
try:
    v = json.load(sys.stdin).get(sys.argv[1], "")
    print(json.dumps(v) if isinstance(v, bool) else v)
except ValueError:
    pass' "$2"
}
rel() { printf "%s" "$1" | sed "s|^$SRC/||"; }

log() { echo "nightly: $*" >&2; }
case $BUDGET in '' | *[!0-9]*) die "--budget wants seconds" ;; esac
case $JOBS in '' | *[!0-9]* | 0) die "--jobs wants a positive number" ;; esac

if [ $DO_BUILD = 1 ]; then
  log "building in $BUILD"
  { cmake -S "$SRC" -B "$BUILD" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DSIMFUZZ_TESTS=OFF -DSIMFUZZ_BENCH=OFF > "$BUILD.log" 2>&1 &&
    cmake --build "$BUILD" >> "$BUILD.log" 2>&1; } || die "build failed (see $BUILD.log)"
fi
[ -x "$BUILD/bin/simfuzz" ] || die "no build in $BUILD (drop --no-build)"
[ -n "$TARGETS" ] || TARGETS=$(ls "$BUILD"/fuzz/*_fuzzer 2> /dev/null | sed 's|.*/||; s|_fuzzer$||')
[ -n "$TARGETS" ] || die "no fuzzers in $BUILD/fuzz"
mkdir -p "$STATE/corpus" "$STATE/crashes" "$STATE/reports" || die "cannot create $STATE"
touch "$STATE/known.tsv" || die "cannot write $STATE/known.tsv"
night=$(($(cat "$STATE/nights" 2> /dev/null || echo 0) + 1))
work=$(mktemp -d) || die "mktemp"
trap 'rm -rf "$work"' EXIT
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:symbolize=0}

# ---- fuzz ------------------------------------------------------------------
execs_total=0
: > "$work/targets.tsv"
for t in $TARGETS; do
  fz="$BUILD/fuzz/${t}_fuzzer"
  [ -x "$fz" ] || die "no fuzzer for target $t"
  corpus="$STATE/corpus/$t"
  mkdir -p "$corpus" "$work/art/$t"
  [ -n "$(ls "$corpus")" ] || cp "$BUILD/corpus/$t"/*.pb "$corpus/" 2> /dev/null
  before=$(ls "$corpus" | wc -l)
  log "night $night: fuzzing $t for ${BUDGET}s with $JOBS workers (corpus $before)"
  "$fz" "$corpus" -fork="$JOBS" -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 \
    -max_total_time="$BUDGET" -timeout=25 -rss_limit_mb=2560 -dict="$BUILD/fuzz/$t.dict" \
    -artifact_prefix="$work/art/$t/" > "$work/$t.fuzz.log" 2>&1
  execs=$(grep -o "#[0-9]*" "$work/$t.fuzz.log" | tail -1 | tr -d '#')
  # merge: keep only inputs that add coverage
  mkdir -p "$work/merged/$t"
  "$fz" -merge=1 "$work/merged/$t" "$corpus" > "$work/$t.merge.log" 2>&1 ||
    die "corpus merge failed for $t (see $work/$t.merge.log)"
  if [ -n "$(ls "$work/merged/$t")" ]; then
    rm -rf "$corpus.old" && mv "$corpus" "$corpus.old" && mv "$work/merged/$t" "$corpus" &&
      rm -rf "$corpus.old" || die "cannot replace the corpus of $t"
  fi
  after=$(ls "$corpus" | wc -l)
  ncrash=$(ls "$work/art/$t" | grep -c "^crash-\|^timeout-\|^leak-\|^oom-")
  execs_total=$((execs_total + ${execs:-0}))
  printf "%s\t%s\t%s\t%s\t%s\n" "$t" "${execs:-0}" "$before" "$after" "$ncrash" >> "$work/targets.tsv"
  log "  $t: ${execs:-0} executions, corpus $before -> $after, $ncrash crash files"
done

# ---- triage, minimize, check ----------------------------------------------
: > "$work/new.tsv"
: > "$work/seen.tsv"
for t in $TARGETS; do
  for f in "$work/art/$t"/*; do
    [ -f "$f" ] || continue
    line=$("$BUILD/bin/simfuzz" --target "$t" triage --json "$f" 2> /dev/null | head -1)
    sig=$(field "$line" signature)
    if [ -z "$sig" ]; then
      # passes on replay: a flaky input (timeout, OOM under load): note it
      printf "%s\t%s\t%s\n" "$t" "(does not reproduce)" "$f" >> "$work/seen.tsv"
      continue
    fi
    key=$(printf "%s\t%s" "$t" "$sig")
    if grep -qF -- "$key" "$STATE/known.tsv" "$work/new.tsv"; then
      printf "%s\t%s\t%s\n" "$t" "$sig" "$f" >> "$work/seen.tsv"
      continue
    fi
    id=$(printf "%s" "$key" | cksum | cut -d' ' -f1)
    dir="$STATE/crashes/$t"
    mkdir -p "$dir" || die "cannot create $dir"
    cp "$f" "$dir/$id.input" || die "cannot save $f"
    log "new failure in $t: $sig; minimizing"
    if "$BUILD/bin/simfuzz" --target "$t" minimize -q "$dir/$id.input" -o "$dir/$id.pb" \
         > "$dir/$id.minimize.log" 2>&1; then
      min="$dir/$id.pb"
    else
      min="$dir/$id.input" # keep the original if it cannot be reduced
    fi
    det=$("$BUILD/bin/simfuzz" --target "$t" triage --json "$min" 2> /dev/null | head -1)
    printf "%s\t%s\t%s\t%s\t%s\n" "$t" "$sig" "$id" "$min" "$det" >> "$work/new.tsv"
  done
done
nnew=$(wc -l < "$work/new.tsv")
nseen=$(wc -l < "$work/seen.tsv")

# ---- report ------------------------------------------------------------------
base="$STATE/reports/night-$night"
{
  echo "# simfuzz nightly report, night $night"
  echo
  echo "Targets: $(echo $TARGETS | wc -w); budget ${BUDGET}s each with $JOBS workers;"
  echo "$execs_total executions in total."
  echo
  echo "| target | executions | corpus (before → after) | crash files |"
  echo "| --- | ---: | ---: | ---: |"
  while IFS="$(printf '\t')" read -r t ex b a c; do
    echo "| $t | $ex | $b → $a | $c |"
  done < "$work/targets.tsv"
  echo
  if [ "$nnew" -eq 0 ]; then
    echo "**Nothing new.** $nseen crash files matched known failures."
  else
    echo "## $nnew new failure(s)"
    while IFS="$(printf '\t')" read -r t sig id min det; do
      echo
      echo "### $t: $(field "$det" invariant)"
      echo
      echo "- signature: \`$sig\`"
      echo "- message: $(field "$det" message)"
      echo "- node n$(field "$det" node) at virtual time $(field "$det" time_ns) ns"
      echo "- deterministic (two runs in one process, one in another): $(field "$det" deterministic)"
      echo "- minimized scenario: \`$min\` (text: \`$min.txt\`, timeline: \`$min.timeline.txt\`)"
      echo "- replay: \`$BUILD/bin/simfuzz --target $t replay $min\`"
    done < "$work/new.tsv"
    [ "$nseen" -eq 0 ] || { echo; echo "$nseen more crash files matched known failures."; }
  fi
} > "$base.md.tmp" || die "cannot write $base.md"
{
  printf '{"night": %d, "budget_s": %d, "jobs": %d, "executions": %d, "targets": [' \
    "$night" "$BUDGET" "$JOBS" "$execs_total"
  sep=""
  while IFS="$(printf '\t')" read -r t ex b a c; do
    printf '%s{"target": "%s", "executions": %s, "corpus_before": %s, "corpus_after": %s, "crash_files": %s}' \
      "$sep" "$t" "$ex" "$b" "$a" "$c"
    sep=", "
  done < "$work/targets.tsv"
  printf '], "known_matches": %d, "new": [' "$nseen"
  sep=""
  while IFS="$(printf '\t')" read -r t sig id min det; do
    printf '%s{"target": "%s", "id": "%s", "scenario": "%s", "replay": "%s", "triage": %s}' "$sep" \
      "$t" "$id" "$(jstr "$min")" "$(jstr "$BUILD/bin/simfuzz --target $t replay $min")" "$det"
    sep=", "
  done < "$work/new.tsv"
  printf ']}\n'
} > "$base.json.tmp" || die "cannot write $base.json"
{
  printf '{"version": "2.1.0", "$schema": "https://json.schemastore.org/sarif-2.1.0.json", '
  printf '"runs": [{"tool": {"driver": {"name": "simfuzz", "informationUri": "https://github.com/simfuzz/simfuzz", "rules": []}}, "results": ['
  sep=""
  while IFS="$(printf '\t')" read -r t sig id min det; do
    site=$(printf "%s" "$sig" | sed -n 's/^invariant [^ ]* at \(.*\):\([0-9]*\)$/\1 \2/p')
    file=$(rel "${site% *}"); line=${site##* }
    [ -n "$site" ] || { file="$(rel "$min")"; line=1; }
    printf '%s{"ruleId": "%s", "level": "error", "message": {"text": "%s: %s (replay: %s)"}, ' "$sep" \
      "$(jstr "$(field "$det" invariant)")" "$t" "$(jstr "$(field "$det" message)")" \
      "$(jstr "simfuzz --target $t replay $min")"
    printf '"locations": [{"physicalLocation": {"artifactLocation": {"uri": "%s"}, "region": {"startLine": %s}}}], ' \
      "$(jstr "$file")" "${line:-1}"
    printf '"partialFingerprints": {"simfuzzSignature": "%s"}}' "$(jstr "$t $sig")"
    sep=", "
  done < "$work/new.tsv"
  printf ']}]}\n'
} > "$base.sarif.tmp" || die "cannot write $base.sarif"
for ext in md json sarif; do
  mv "$base.$ext.tmp" "$base.$ext" && cp "$base.$ext" "$STATE/reports/latest.$ext.tmp" &&
    mv "$STATE/reports/latest.$ext.tmp" "$STATE/reports/latest.$ext" || die "cannot write reports"
done
# remember the new signatures and the night only once everything is written
cut -f1,2 "$work/new.tsv" >> "$STATE/known.tsv" || die "cannot update known.tsv"
echo "$night" > "$STATE/nights.tmp" && mv "$STATE/nights.tmp" "$STATE/nights" || die "cannot update nights"
log "night $night: $nnew new failure(s), $nseen known; report: $base.md"
[ "$nnew" -eq 0 ] && exit 0
exit 1
