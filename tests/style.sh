#!/bin/sh
# The tree's style, checked as a test: every C file as clang-format (the
# .clang-format at the root) would write it, and every shell script clean
# under shellcheck's warnings, and CHANGELOG.md's newest release the one
# version.h names. Reads the tree; writes nothing.
# Usage: tests/style.sh SOURCE_DIR
set -u
cd "$1" || exit 2
nbad=0
CF=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$CF" ]; then
  echo "FAIL: clang-format is not installed (scripts/bootstrap.sh installs it)"; nbad=1
else
  files=$(git ls-files '*.c' '*.h' 2> /dev/null || find . -name '*.[ch]' ! -path './build*')
  # shellcheck disable=SC2086 # one argument per file
  if out=$("$CF" --dry-run -Werror $files 2>&1); then
    echo "ok: $(echo "$files" | wc -w) C files as clang-format writes them"
  else
    echo "$out" | grep "error:" | head -20
    echo "FAIL: clang-format would change these files: run clang-format -i on them"; nbad=1
  fi
fi
if ! command -v shellcheck > /dev/null 2>&1; then
  echo "FAIL: shellcheck is not installed (scripts/bootstrap.sh installs it)"; nbad=1
else
  scripts=$( { git ls-files '*.sh' 2> /dev/null; echo .ci/run; } | sort -u)
  # shellcheck disable=SC2086
  if shellcheck -x -S warning $scripts; then
    echo "ok: $(echo "$scripts" | wc -w) shell scripts clean under shellcheck -S warning"
  else
    echo "FAIL: shellcheck warnings above"; nbad=1
  fi
fi
# the command line stays thin: no function of harness/cli over 70 lines
long=$(for f in harness/cli/*.c; do
  awk -v f="$f" '/^[A-Za-z_].*\) \{$/ && !/^(typedef|struct|enum|union|static const)/ {
      start = NR; name = $0; sub(/\(.*/, "", name); n = split(name, w, /[ *]+/); name = w[n] }
    /^}$/ && start { if (NR - start + 1 > 70) print f ": " name "() " NR - start + 1 " lines"
      start = 0 }' "$f"
done)
if [ -n "$long" ]; then
  echo "$long"
  echo "FAIL: functions of harness/cli over 70 lines (split them: docs/HACKING.md)"; nbad=1
else
  echo "ok: no function of harness/cli over 70 lines"
fi
# one spawn path: children are forked and programs started in
# harness/cli/isolate.c only (cli_fork_tied, cli_child_fork,
# cli_spawn_program); dispatch.c and minimize.c replace their own process
# (execv of the target's tool, of themselves) and start nothing
spawns=$(grep -n -E '\<(fork|vfork|popen|system|posix_spawnp?|execvp?|execlp?|execve)[[:space:]]*\(' \
  harness/*/*.c | grep -v -E '^harness/cli/isolate\.c:|^[^:]*:[0-9]+:[[:space:]]*(/?\*|//)' |
  grep -v -E '^harness/cli/(dispatch|minimize)\.c:[0-9]+:[[:space:]]*execv\(')
if [ -n "$spawns" ]; then
  echo "$spawns"
  echo "FAIL: a child started outside harness/cli/isolate.c (use cli_spawn_program, cli_run_program, cli_program_output or cli_child_fork)"; nbad=1
else
  echo "ok: every child of the tools starts in harness/cli/isolate.c"
fi
# the release in version.h (its one home) is the newest one CHANGELOG.md lists
v=$(sed -n 's/^#define SIMFUZZ_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' \
  include/simfuzz/version.h | paste -sd.)
top=$(sed -n 's/^## \([0-9][0-9.]*\) .*/\1/p' CHANGELOG.md | head -n 1)
if [ -n "$v" ] && [ "$v" = "$top" ]; then
  echo "ok: CHANGELOG.md's newest release is version.h's, $v"
else
  echo "FAIL: version.h says '$v', CHANGELOG.md's newest release is '$top'"; nbad=1
fi
[ $nbad = 0 ]
