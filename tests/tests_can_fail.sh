#!/bin/sh
# Every unit test can fail: each TEST() body of tests/test_*.c checks
# something (CHECK*, REFUSED, an exit or abort on a failed expectation). A
# body that checks nothing is either a helper that a test runs in a child
# (declare it with HELPER(), which ctest does not register) or a test that
# cannot fail, which is a defect.
# Usage: tests/tests_can_fail.sh SOURCE_DIR
set -u
T_NAME=tests_can_fail
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
n=0
for f in "$1"/tests/test_*.c; do
  n=$((n + 1))
  awk -v F="${f##*/}" '
    /^TEST\(/ { name = $0; sub(/^TEST\(/, "", name); sub(/\).*/, "", name); body = 1; checks = 0; next }
    body && /CHECK|REFUSED|exit\(1\)|abort\(\)/ { checks = 1 }
    body && /^}/ { if (!checks) print F ": TEST(" name ") checks nothing"; body = 0 }
  ' "$f" >> "$work/found"
done
if [ -s "$work/found" ]; then
  bad "tests that cannot fail: $(tr '\n' ';' < "$work/found")"
else
  ok "every TEST() of $n test files checks something"
fi
finish
