# The one rule that tells a variant's bug from the rest, for the scripts
# that look for one (bugs/hunt.sh, bench/craft_bugs_ttb.sh); sourced.
# judge_file V F FILE SCRATCH prints "VERDICT<tab>FAILURE" for a scenario
# FILE, where V is the variant's binary and F its control's:
#   none        V does not fail FILE
#   background  V fails it as one of the newest library's own bugs
#               (bugs/background): never the variant's, even when the
#               control passes FILE (the fix moved the run off its path)
#   also-fixed  F fails it the same way
#   bug         the fix's bug
# SCRATCH is a file the replays may write. With JUDGE_CPUS set, every
# replay runs on those cores (taskset). The sourcing script sets JUDGE_DIR,
# this file's directory, first.
# shellcheck shell=sh
judge_run() { # CMD...: CMD, on $JUDGE_CPUS if set
  if [ -n "${JUDGE_CPUS:-}" ]; then taskset -c "$JUDGE_CPUS" "$@"; else "$@"; fi
}
judge_sig() { # TOOL FILE SCRATCH: what failed, alike across releases (an
               # assertion's text, an invariant's name, or triage's crash signal)
  judge_run "$1" replay "$2" > "$3" 2>&1 || true # a failing replay is the point
  s=$(sed -n 's/^==simfuzz==   \(Assertion .*\)/\1/p' "$3" | head -n 1)
  [ -n "$s" ] || s=$(tail -n 1 "$3" | sed -n 's/.*-> FAILED //p')
  # a crash's signature names the binary (craft_NAME or craft_NAME_fixed) and an
  # offset in it: only the signal is compared
  [ -n "$s" ] || s=$( (judge_run "$1" triage "$2" 2>&1 || true) | tail -n 1 |
    sed 's/^[^:]*: //; s/ simfuzz-[^ ]*$//')
  echo "$s"
}
judge_file() { # V F FILE SCRATCH
  v=$(judge_sig "$1" "$3" "$4")
  if [ -z "$v" ]; then verdict=none
  elif grep -qxF "$v" "$JUDGE_DIR/background"; then verdict=background
  elif [ "$v" = "$(judge_sig "$2" "$3" "$4")" ]; then verdict=also-fixed
  else verdict=bug; fi
  printf '%s\t%s\n' "$verdict" "$v"
}
