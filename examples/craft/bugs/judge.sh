# The one rule that tells a variant's bug from the rest, for the scripts
# that look for one (bugs/hunt.sh, bench/craft_bugs_ttb.sh); sourced.
# judge_file V F FILE SCRATCH prints "VERDICT<tab>FAILURE" for a scenario
# FILE, where V is the variant's binary and F its control's:
#   none        V does not fail FILE
#   background  V fails it as one of the newest library's own bugs
#               (bugs/background): never the variant's, even when the
#               control passes FILE (the fix moved the run off its path)
#   also-fixed  F fails it the same way
#   unstable    V's replays of FILE fail in different ways (or not at all),
#               or V's check-determinism finds runs of FILE that differ: the
#               run depends on more than the scenario (a library that reads
#               a pointer's bytes, docs/findings/cowsql-raft.md finding 6, or
#               stack it never wrote, as the trees before cowsql/raft 9d911c1d
#               do: docs/bug-zoo.md), so it tells nothing; F passing FILE may
#               only mean that F's binary left other bytes there
#   bug         the fix's bug: V fails FILE the same way in JUDGE_AGAIN more
#               replays (default 3), and F never does in JUDGE_AGAIN_F more
#               (default 8; F's first replay can take the rare path, and
#               then F "passes" what it fails 15 times in 16)
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
judge_again() { # TOOL FILE SCRATCH SIG N: how many of N more replays fail as SIG
  k=0; same=0
  while [ "$k" -lt "$5" ]; do
    [ "$(judge_sig "$1" "$2" "$3")" = "$4" ] && same=$((same + 1))
    k=$((k + 1))
  done
  echo "$same"
}
judge_nondet() { # TOOL FILE SCRATCH: 0 if check-determinism finds FILE's runs differ
  # (its exit 3; runs that crash are compared too: how and where they died)
  judge_run "$1" check-determinism --runs 2 --fresh 1 "$2" > "$3" 2>&1
  [ $? = 3 ]
}
judge_file() { # V F FILE SCRATCH
  v=$(judge_sig "$1" "$3" "$4")
  av=${JUDGE_AGAIN:-3}; af=${JUDGE_AGAIN_F:-8}
  if [ -z "$v" ] || [ "$v" = ok ]; then verdict=none # (triage of a passing run: "ok")
  elif grep -qxF "$v" "$JUDGE_DIR/background"; then verdict=background
  elif [ "$v" = "$(judge_sig "$2" "$3" "$4")" ]; then verdict=also-fixed
  elif [ "$(judge_again "$2" "$3" "$4" "$v" "$af")" != 0 ]; then verdict=also-fixed
  elif [ "$(judge_again "$1" "$3" "$4" "$v" "$av")" != "$av" ]; then verdict=unstable
  elif judge_nondet "$1" "$3" "$4"; then verdict=unstable
  else verdict=bug; fi
  printf '%s\t%s\n' "$verdict" "$v"
}
