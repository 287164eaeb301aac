#!/bin/sh
# -DSIMFUZZ_ZOO_HINTS=OFF (the macro SF_ZOO_NO_HINTS) leaves out the zoo's
# annotations written from a bug's trigger and keeps the generic hazard
# states (docs/bug-zoo.md): each target file compiles both ways without a
# warning, and the annotations' names are in the object file with hints
# and, for the hints, not without.
# Usage: tests/zoo_hints.sh SOURCE_DIR C_COMPILER
set -eu
src=$1; cc=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
obj() { # FILE TAG DEFINES...: compile FILE to $work/TAG.o
  f=$1; tag=$2; shift 2
  "$cc" -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Wshadow -Werror -I"$src/include" \
    -DSF_TARGET_NAME='"zoo"' -DSF_TARGET_SYMBOL=sf_target_zoo "$@" \
    -c "$src/$f" -o "$work/$tag.o" || fail "$f does not compile with: $*"
}
has() { grep -aqF "$2" "$work/$1.o"; }
check() { # FILE DEFINES GENERIC HINT...
  f=$1; defs=$2; generic=$3; shift 3
  # shellcheck disable=SC2086 # defs is a list of flags
  obj "$f" with $defs
  # shellcheck disable=SC2086
  obj "$f" without $defs -DSF_ZOO_NO_HINTS
  has with "$generic" && has without "$generic" || fail "$f: generic state \"$generic\" missing"
  for hint in "$@"; do
    has with "$hint" || fail "$f: \"$hint\" missing with hints"
    ! has without "$hint" || fail "$f: \"$hint\" still there without hints"
  done
  echo "ok: $f, $# hints off, \"$generic\" kept"
}
check examples/raft_kv/raft_kv_target.c "-DRAFT_RECONF" \
  "leader with uncommitted entries of an earlier term" \
  "early-change hazard: rungs climbed" "membership changes on diverging logs" \
  "read lease outlives a newer leader's write" \
  "replicas past the commit with an earlier-term entry"
check examples/leaselock/leaselock_target.c "" "server restarted in its grace period" \
  "lease held by a skewed clock" "server clock ahead in its grace while a client holds"
