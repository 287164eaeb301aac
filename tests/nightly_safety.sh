#!/bin/sh
# The nightly job's state survives a failed night. Each night here starts
# from a state whose corpus holds a known crash, so every night has a new
# failure to save, minimize and report; then the disk "fills" at one phase
# (scripts/nightly.sh's SIMFUZZ_NIGHTLY_FULL_AT hook: every write from that
# phase on fails with EFBIG, as under `ulimit -f 0`). Each failed night must
# exit 2 with exactly one error line, leave every file of the state as it
# was (the corpus may only gain intact inputs), and leave no temporary
# files; the next night, with room again, must report the failure (exit 1).
# Also: a state directory that cannot be created, and, where this user may
# mount one, a real tmpfs that runs full.
# Usage: tests/nightly_safety.sh BUILD_DIR
set -u
B=$1
T_NAME=nightly_safety T_CLEANUP='umount "$work/m" 2> /dev/null'
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
T=twopc_bug_count_votes
seed=$(ls "$SRC/tests/regressions/$T"/*.pb | head -1)
# night STATE [ENV=VALUE...]: one night; its exit status in $rc, its stderr in
# $work/err (through a pipe, as a CI log is: a file-size limit on the job
# must not also silence its error line)
night() {
  st=$1; shift
  { env "$@" sh "$SRC/scripts/nightly.sh" --state "$st" --build "$B" --no-build --budget 2 \
      --jobs 1 --targets $T 2>&1 > "$work/out"; echo $? > "$work/rc"; } | cat > "$work/err"
  rc=$(cat "$work/rc")
}
# snapshot STATE: checksums of every file but the corpus's, then the corpus's
snapshot() {
  (cd "$1" && find . -type f ! -path "./corpus/*" | sort | xargs -r sha1sum)
  (cd "$1" && find ./corpus -type f | sort | xargs -r sha1sum)
}
# one error line, the last, and only the job's progress lines before it
one_error() {
  last=$(tail -n 1 "$work/err")
  case $last in "nightly: cannot "* | "nightly: corpus merge "*) ;; *) fail "$1: last line: $last" ;; esac
  # it may name one of the night's own files, removed since: it says so
  case $last in *"; the night stops, the state is as it was") ;; *) fail "$1: last line: $last" ;; esac
  others=$(grep -v "^nightly: night [0-9]*: fuzzing \|^nightly:   $T: \|^nightly: new failure in " "$work/err" | wc -l)
  [ "$others" = 1 ] || { cat "$work/err"; fail "$1: more than one error line"; }
}
# fresh STATE: a state after five nights (their reports, one known failure
# of another target with its scenario) whose corpus now holds a new crash
# inbox_ok STATE: the crash files waiting in the inbox are whole (libFuzzer
# names them KIND-<SHA-1 of the contents>)
inbox_ok() {
  [ -d "$1/inbox" ] || return 0
  find "$1/inbox" -type f | while read -r f; do
    [ "$(sha1sum < "$f" | cut -c1-40)" = "${f##*-}" ] || echo "damaged inbox file $f"
  done | grep . && return 1
  return 0
}
fresh() {
  rm -rf "$1" && mkdir -p "$1/corpus/$T" "$1/reports" "$1/crashes/other" && cp "$seed" "$1/corpus/$T/" &&
    printf "other\tinvariant x at examples/other.c:1\n" > "$1/known.tsv" && echo 5 > "$1/nights" &&
    for e in md json sarif; do echo "night 5 $e" > "$1/reports/night-5.$e" &&
      cp "$1/reports/night-5.$e" "$1/reports/latest.$e"; done &&
    cp "$seed" "$1/crashes/other/1.pb" || fail "setup"
}

for at in merge crashes report state publish; do
  s="$work/s-$at"
  fresh "$s"
  snapshot "$s" > "$work/before"
  night "$s" SIMFUZZ_NIGHTLY_FULL_AT=$at
  [ $rc = 2 ] || { cat "$work/err"; fail "$at: full-disk night exit $rc, want 2"; }
  one_error "$at"
  errline=$(tail -n 1 "$work/err")
  snapshot "$s" > "$work/after"
  # files outside the corpus: exactly as before
  grep -v " ./corpus/" "$work/before" > "$work/b1"; grep -v " ./corpus/" "$work/after" > "$work/a1"
  # new: only the night's crash files, waiting in the inbox for the next
  # night (a new failure's files in crashes/ come with the known.tsv that
  # names them, or not at all)
  grep -v " ./inbox/" "$work/a1" > "$work/a2"
  [ "$at" = merge ] || [ -n "$(ls "$s/inbox/$T")" ] || fail "$at: the night's crash files are lost"
  inbox_ok "$s" || fail "$at: inbox"
  cmp -s "$work/b1" "$work/a2" || { diff "$work/b1" "$work/a1"; fail "$at: the state changed"; }
  # corpus: every file intact (named by its SHA-1, as libFuzzer names them),
  # or one that was there before
  grep " ./corpus/" "$work/after" | while read -r sum path; do
    name=${path##*/}
    [ "$sum" = "$name" ] || grep -qF " $path" "$work/before" || echo "$path"
  done > "$work/bad"
  [ -s "$work/bad" ] && fail "$at: damaged corpus files: $(cat "$work/bad")"
  [ -n "$(ls "$s/corpus/$T")" ] || fail "$at: the corpus is empty"
  left=$(find "$s" -name "*.new" -o -name ".merge-*" -o -name "*.old")
  [ -z "$left" ] || fail "$at: left over: $left"
  # the next night resumes and reports the failure
  night "$s"
  [ $rc = 1 ] || { cat "$work/err"; fail "$at: night after the full disk exit $rc, want 1"; }
  python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); assert len(j["new"]) == 1, j["new"]' \
    "$s/reports/latest.json" || fail "$at: report after resuming"
  [ "$(cat "$s/nights")" = 6 ] && [ -f "$s/reports/night-6.md" ] && [ "$(wc -l < "$s/known.tsv")" = 2 ] ||
    fail "$at: the night after is not night 6 with two known signatures"
  [ -z "$(ls "$s/inbox/$T")" ] || fail "$at: reported crash files stay in the inbox"
  echo "nightly_safety: disk full at '$at': exit 2 ($errline); state kept; the next night reported it"
done

# a state directory that cannot be made
: > "$work/file"
night "$work/file/state"
[ $rc = 2 ] || fail "unwritable state: exit $rc, want 2"
[ "$(wc -l < "$work/err")" = 1 ] && grep -q "^nightly: cannot create" "$work/err" ||
  { cat "$work/err"; fail "unwritable state: want one 'cannot create' line"; }
echo "nightly_safety: unwritable state: $(cat "$work/err")"

# a real small file system that runs full, where mounting is allowed
mkdir "$work/m"
if mount -t tmpfs -o size=64k tmpfs "$work/m" 2> /dev/null; then
  s="$work/m/s"
  fresh "$s"
  snapshot "$s" > "$work/before"
  night "$s" TMPDIR="$work/m"
  [ $rc = 2 ] || { cat "$work/err"; fail "tmpfs: exit $rc, want 2"; }
  one_error tmpfs
  snapshot "$s" | grep -v " ./corpus/\| ./inbox/" > "$work/a1"
  inbox_ok "$s" || fail "tmpfs: inbox"
  grep -v " ./corpus/" "$work/before" > "$work/b1"
  cmp -s "$work/b1" "$work/a1" ||
    { diff "$work/b1" "$work/a1"; cat "$work/err"; fail "tmpfs: the state changed"; }
  [ -z "$(find "$s" -name "*.new" -o -name ".merge-*")" ] || fail "tmpfs: temporary files left"
  [ -z "$(find "$work/m" -mindepth 1 -maxdepth 1 ! -name s)" ] || fail "tmpfs: left in TMPDIR: $(ls -A "$work/m")"
  mount -o remount,size=16m "$work/m" || fail "remount"
  night "$s" TMPDIR="$work/m"
  [ $rc = 1 ] || { cat "$work/err"; fail "tmpfs: night with room exit $rc, want 1"; }
  umount "$work/m"
  echo "nightly_safety: 64 KiB tmpfs: exit 2 with one line, state kept; with room again it resumed"
else
  echo "nightly_safety: tmpfs part skipped (this user may not mount)"
fi
echo "nightly_safety: PASS"
