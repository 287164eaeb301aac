# The check scripts' common start (sourced by check.sh and bugs/check.sh):
# a work directory removed at exit, and ok/bad lines, bad ones counted in
# nbad (the script's exit status is nbad > 0).
# shellcheck shell=sh
# shellcheck disable=SC2034 # nbad and work are the sourcing script's
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
nbad=0
ok() { echo "ok: $*"; }
bad() { nbad=$((nbad + 1)); echo "FAIL: $*"; }
