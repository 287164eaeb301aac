#!/bin/sh
# The table of a program's calls (harness/program/calls.h) as Markdown rows,
# for docs/programs.md; tests/programs.sh checks that the docs hold exactly
# these rows. Usage: scripts/program_calls.sh > rows
set -eu
cd "$(dirname "$0")/.."
sed -n 's/^ *X(\([A-Za-z0-9_]*\), \(MODEL\|REFUSE\), "\(.*\)") *\\*$/| `\1` | \2 | \3 |/p' \
  harness/program/calls.h | sed 's/| MODEL |/| modelled |/; s/| REFUSE |/| refused |/'
