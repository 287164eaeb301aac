#!/bin/sh
# examples/craft/bugs/check.sh against fake targets (shell scripts standing
# in for craft_head and one variant) and a regression directory of the
# test's own (REGRESSIONS): a variant's scenario that fails as one of the
# newest library's own bugs (bugs/background) is that bug, not the
# variant's, and check.sh refuses it even though the variant fails it as
# its name says; a scenario of the variant's own kind passes.
# Usage: tests/craft_check.sh
set -u
T_NAME=craft_check
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
mkdir -p "$work/r/leader_failed_write"
# replay -q FILE: fails as the kind the file holds
# shellcheck disable=SC2016 # expanded by the fake, not here
fake_target "$work/b" leader_failed_write 'echo "$3: scenario -> FAILED $(cat "$3")"; exit 1'
fake_target "$work/b" head 'exit 0'
check() { # KIND: check.sh on one scenario of leader_failed_write that fails as KIND
  rm -f "$work/r/leader_failed_write"/*.pb
  echo "$1" > "$work/r/leader_failed_write/$1--a-test-scenario.pb"
  ALLOW_MISSING=1 REGRESSIONS="$work/r" sh "$SRC/examples/craft/bugs/check.sh" "$work/b" \
    > "$work/$1.log" 2>&1
}
check assert || fail "a scenario of the variant's own kind was refused: $(grep FAIL "$work/assert.log")"
ok "a variant's scenario of its own kind passes"
if check leader_without_election; then
  bad "a variant's scenario of the newest library's own bug was accepted"
else
  grep -q "newest library's own bug" "$work/leader_without_election.log" ||
    bad "refused for another reason: $(grep FAIL "$work/leader_without_election.log")"
  ok "a variant's scenario of the newest library's own bug is refused"
fi
finish
