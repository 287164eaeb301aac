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
# itself failed (one "nightly: ..." line on stderr says why).
#
# The state survives a failed night (full disk, unwritable directory, a
# kill): every file in it is replaced by rename, corpora are swapped in
# whole and checked first, and the known signatures and the night counter
# change only once the reports are written. The next night resumes.
set -u
trap '' XFSZ # past a file-size limit, writes fail with EFBIG instead of killing the job
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
die() {
  # a night that fails publishes nothing: drop what it staged
  [ -z "${STATE:-}" ] || rm -f "$STATE"/known.tsv.new "$STATE"/nights.new "$STATE"/reports/*.new 2> /dev/null
  echo "nightly: $*" >&2
  exit 2
}
# try WHAT CMD...: run CMD; if it fails, die saying WHAT and CMD's last error line
try() {
  _what=$1; shift
  _err=$("$@" 2>&1 > /dev/null) || die "$_what: $(printf "%s" "${_err:-failed}" | tail -n 1)"
}
# note FILE FIELD...: append one tab-separated line to FILE
note() {
  _f=$1; shift
  (IFS="$(printf '\t')"; printf "%s\n" "$*") >> "$_f" 2> /dev/null || die "cannot write $_f (disk full?)"
}
# stage SRC DST: copy SRC to DST.new, checked to be whole (the caller renames it)
stage() {
  if ! _err=$(cp "$1" "$2.new" 2>&1) || ! cmp -s "$1" "$2.new"; then
    rm -f "$2.new"
    die "cannot write $2: $(printf "%s" "${_err:-the copy came out short}" | tail -n 1)"
  fi
}
# put SRC DST: copy SRC to DST atomically
put() { stage "$1" "$2" && try "cannot write $2" mv -f "$2.new" "$2"; }
# corpus_ok DIR: every file is named by the SHA-1 of its contents, as
# libFuzzer names them, so a merge cut short by a full disk is caught
corpus_ok() {
  (cd "$1" && ls | grep -v '^[0-9a-f]\{40\}$' | grep -q .) && return 1
  [ -z "$(damaged "$1")" ]
}
# damaged DIR: the files named by a SHA-1 (corpus inputs, or KIND-<SHA-1>
# crash files) that their contents no longer match
damaged() {
  (cd "$1" && ls | grep -E '^([a-z]+-)?[0-9a-f]{40}$' | xargs -r sha1sum |
    awk '$1 != substr($2, length($2) - 39) { print $2 }')
}
# fault hook for the tests: SIMFUZZ_NIGHTLY_FULL_AT=merge|crashes|report|state|publish
# makes every write from that phase on fail as on a full disk (ulimit -f 0)
phase() { [ "${SIMFUZZ_NIGHTLY_FULL_AT:-}" != "$1" ] || ulimit -f 0; }
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
try "cannot create $STATE" mkdir -p "$STATE/corpus" "$STATE/crashes" "$STATE/reports"
try "cannot write to $STATE" touch "$STATE/known.tsv" "$STATE/.probe"
rm -f "$STATE/.probe"
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
  # finish a corpus swap that an earlier night left half done (renames only)
  if [ -d "$corpus.old" ]; then
    if [ -d "$corpus" ]; then rm -rf "$corpus.old"; else try "cannot restore $corpus" mv "$corpus.old" "$corpus"; fi
  fi
  rm -rf "$STATE/corpus/.merge-$t"
  try "cannot create $corpus" mkdir -p "$corpus"
  inbox="$STATE/inbox/$t" # crash files wait here until a night has reported them
  try "cannot create $inbox" mkdir -p "$inbox"
  before_crash=$(ls "$inbox" | wc -l)
  [ -n "$(ls "$corpus")" ] || cp "$BUILD/corpus/$t"/*.pb "$corpus/" 2> /dev/null
  before=$(ls "$corpus" | wc -l)
  log "night $night: fuzzing $t for ${BUDGET}s with $JOBS workers (corpus $before)"
  TMPDIR="$work" "$fz" "$corpus" -fork="$JOBS" -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 \
    -max_total_time="$BUDGET" -timeout=25 -rss_limit_mb=2560 -dict="$BUILD/fuzz/$t.dict" \
    -artifact_prefix="$inbox/" > "$work/$t.fuzz.log" 2>&1
  execs=$(grep -o "#[0-9]*" "$work/$t.fuzz.log" 2> /dev/null | tail -1 | tr -d '#')
  # a write cut short by a full disk leaves a file whose name (its SHA-1) no
  # longer matches its contents: drop it rather than keep a damaged input
  # (a crash file cut short may not fail any more: it will be found again)
  damaged "$corpus" | while read -r f; do rm -f "$corpus/$f"; done
  damaged "$inbox" | while read -r f; do rm -f "$inbox/$f"; done
  # merge: keep only inputs that add coverage; merged beside the corpus (one
  # file system, so the swap is two renames) and checked before the swap
  phase merge
  merged="$STATE/corpus/.merge-$t"
  try "cannot create $merged" mkdir "$merged"
  if ! TMPDIR="$work" "$fz" -merge=1 "$merged" "$corpus" > "$work/$t.merge.log" 2>&1; then
    rm -rf "$merged"
    why=$(grep -m1 "ERROR\|error\|No space\|too large" "$work/$t.merge.log" 2> /dev/null | sed "s/^==[0-9]*== *//")
    die "corpus merge failed for $t: ${why:-libFuzzer -merge=1 failed (disk full?)}; the corpus is unchanged"
  fi
  if ! corpus_ok "$merged"; then
    rm -rf "$merged"
    die "corpus merge for $t wrote damaged files (disk full?); the corpus is unchanged"
  fi
  if [ -n "$(ls "$merged")" ]; then
    try "cannot replace the corpus of $t" mv "$corpus" "$corpus.old"
    try "cannot replace the corpus of $t" mv "$merged" "$corpus"
    rm -rf "$corpus.old"
  else
    rm -rf "$merged"
  fi
  after=$(ls "$corpus" | wc -l)
  ncrash=$(($(ls "$inbox" | wc -l) - before_crash))
  execs_total=$((execs_total + ${execs:-0}))
  note "$work/targets.tsv" "$t" "${execs:-0}" "$before" "$after" "$ncrash"
  log "  $t: ${execs:-0} executions, corpus $before -> $after, $ncrash crash files"
done

# ---- triage, minimize, check ----------------------------------------------
phase crashes
: > "$work/new.tsv"
: > "$work/seen.tsv"
: > "$work/done.txt"
for t in $TARGETS; do
  for f in "$STATE/inbox/$t"/*; do
    [ -f "$f" ] || continue
    note "$work/done.txt" "$f"
    line=$("$BUILD/bin/simfuzz" --target "$t" triage --json "$f" 2> /dev/null | head -1)
    sig=$(field "$line" signature)
    if [ -z "$sig" ]; then
      # passes on replay: a flaky input (timeout, OOM under load): note it
      note "$work/seen.tsv" "$t" "(does not reproduce)" "$f"
      continue
    fi
    key=$(printf "%s\t%s" "$t" "$sig")
    if grep -qF -- "$key" "$STATE/known.tsv" "$work/new.tsv"; then
      note "$work/seen.tsv" "$t" "$sig" "$f"
      continue
    fi
    id=$(printf "%s" "$key" | cksum | cut -d' ' -f1)
    dir="$STATE/crashes/$t"
    try "cannot create $dir" mkdir -p "$dir"
    put "$f" "$dir/$id.input"
    log "new failure in $t: $sig; minimizing"
    if "$BUILD/bin/simfuzz" --target "$t" minimize -q "$dir/$id.input" -o "$dir/$id.pb" \
         > "$dir/$id.minimize.log" 2>&1; then
      min="$dir/$id.pb"
    else
      min="$dir/$id.input" # keep the original if it cannot be reduced
    fi
    det=$("$BUILD/bin/simfuzz" --target "$t" triage --json "$min" 2> /dev/null | head -1)
    note "$work/new.tsv" "$t" "$sig" "$id" "$min" "$det"
  done
done
nnew=$(wc -l < "$work/new.tsv")
nseen=$(wc -l < "$work/seen.tsv")

# ---- report ------------------------------------------------------------------
phase report
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
} > "$work/report.md" 2> /dev/null || die "cannot write $work/report.md (disk full?)"
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
} > "$work/report.json" 2> /dev/null || die "cannot write $work/report.json (disk full?)"
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
} > "$work/report.sarif" 2> /dev/null || die "cannot write $work/report.sarif (disk full?)"
for ext in json sarif; do # a report cut short by a full disk is not valid JSON
  python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$work/report.$ext" 2> /dev/null ||
    die "cannot write $work/report.$ext: it came out incomplete (disk full?)"
done
tail -n 1 "$work/report.md" | grep -q "known failures\.\|^- replay: " ||
  die "cannot write $work/report.md: it came out incomplete (disk full?)"
# publish: stage the reports, the known signatures and the night counter,
# each checked whole, then rename them all; a failure before the renames
# leaves the state as it was
phase state
{ cat "$STATE/known.tsv" && cut -f1,2 "$work/new.tsv"; } > "$work/known.tsv" 2> /dev/null &&
  [ "$(wc -l < "$work/known.tsv")" -eq $(($(wc -l < "$STATE/known.tsv") + nnew)) ] ||
  die "cannot write $work/known.tsv (disk full?)"
printf "%s\n" "$night" > "$work/nights" 2> /dev/null || die "cannot write $work/nights (disk full?)"
phase publish
for ext in md json sarif; do
  stage "$work/report.$ext" "$base.$ext"
  stage "$work/report.$ext" "$STATE/reports/latest.$ext"
done
stage "$work/known.tsv" "$STATE/known.tsv"
stage "$work/nights" "$STATE/nights"
for f in "$base.md" "$base.json" "$base.sarif" "$STATE/reports/latest.md" "$STATE/reports/latest.json" \
  "$STATE/reports/latest.sarif" "$STATE/known.tsv" "$STATE/nights"; do
  try "cannot write $f" mv -f "$f.new" "$f"
done
# reported: the crash files leave the inbox (a new failure's input is kept in crashes/)
while read -r f; do rm -f "$f"; done < "$work/done.txt"
log "night $night: $nnew new failure(s), $nseen known; report: $base.md"
[ "$nnew" -eq 0 ] && exit 0
exit 1
