#!/bin/sh
# examples/craft (canonical/raft from Debian's libraft-dev, wrapped as a
# simfuzz target) built as the outside project it is, from the package
# installed into PREFIX, then its own checks (examples/craft/check.sh).
# Usage: tests/craft_example.sh BUILD_DIR CRAFT_DIR PREFIX [SEEDS] [RUNS]
set -u
B=$(cd "$1" && pwd); C=$(cd "$2" && pwd); P=$(cd "$3" && pwd)
T_NAME=craft_example
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
build_outside "$B" "$C" "$work/b" "$P" ||
  fail "examples/craft does not build against the installed simfuzz"
echo "ok: examples/craft built from the installed package"
sh "$C/check.sh" "$work/b" "${4:-3000}" "${5:-3000}"
