#!/bin/sh
# Raft source trees for examples/craft's bug-history set, made from a git
# bundle of cowsql/raft (../shared/third_party/cowsql-raft.bundle seen from
# the project root; never copied into this repository): one directory per
# bug of bugs.tsv holding the library just before that bug's fix (the fix
# commit's parent: the fix, and only it, undone), and <name>_fixed, the fix
# commit itself (the control: the bug's regression scenario must not fail
# there the same way) for the bugs with a regression scenario, or with one
# of the control's own (regressions/<name>_fixed/; ALL=1: for every bug);
# plus `head`, the newest library. A tree's
# .flavor names the adapter build it needs (bugs.tsv: kv, errors, uninit).
# Each tree gets include/raft.h generated from raft.h.in where the release
# generates it (with the v0 API, which craft_io implements).
# examples/craft's CMakeLists.txt builds a target craft_<tree> from each
# (-DCRAFT_RAFT_TREES=OUT).
# Usage: examples/craft/bugs/trees.sh BUNDLE OUT [NAME...]   (no NAME: all)
set -eu
BUNDLE=$1
OUT=$2
shift 2
D=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
repo=$OUT/.repo
if [ ! -d "$repo" ]; then
  git clone -q --bare "$BUNDLE" "$repo"
fi
tree() { # NAME COMMIT FLAVOR
  dir=$OUT/$1
  want=$(git -C "$repo" rev-parse "$2")
  if [ -f "$dir/.commit" ] && [ "$(cat "$dir/.commit")" = "$want" ]; then return; fi
  rm -rf "$dir"
  mkdir -p "$dir"
  git -C "$repo" archive "$2" src include | tar -x -C "$dir"
  if [ ! -f "$dir/include/raft.h" ]; then
    sed 's/@enable_v0@/yes/' "$dir/include/raft.h.in" > "$dir/include/raft.h"
  fi
  echo "$3" > "$dir/.flavor"
  echo "$want" > "$dir/.commit"
}
wanted() { # NAME: named on the command line, or no name was
  [ -z "$WANT" ] && return 0
  for w in $WANT; do [ "$w" = "$1" ] && return 0; done
  return 1
}
WANT="$*"
if wanted head; then tree head HEAD kv; fi
grep -v '^#' "$D/bugs.tsv" | while IFS='	' read -r name commit flavor _half _what; do
  [ -n "$name" ] && wanted "$name" || continue
  tree "$name" "$commit^" "$flavor"
  set -- "$D/regressions/$name"/*.pb "$D/regressions/${name}_fixed"/*.pb
  for f in "$@"; do [ -e "$f" ] && break; done
  if [ "${ALL:-0}" = 1 ] || [ -e "$f" ]; then tree "${name}_fixed" "$commit" "$flavor"; fi
done
