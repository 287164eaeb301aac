# shellcheck shell=sh
# Shared by the benchmark scripts (sourced).
#
# bench_workdir: a new temporary directory for a benchmark's trials. Trials
# create and delete many small files (corpora, crash files). On ext4, a file
# created soon after many deletions nearby costs about 0.5 ms (the inode
# allocator skips recently freed inodes; measured 510 us against 5 us per
# create), which would be charged to the method that writes a corpus. So the
# directory goes on a RAM file system (/dev/shm) unless TMPDIR is set.
bench_workdir() {
  if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
    mktemp -d -p /dev/shm
  else
    mktemp -d
  fi
}

# bench_options SCRIPT "OPTION=VAR ..." ARGS...: sets VAR to the word after
# each --OPTION of ARGS (every option takes a value); an option SPEC does not
# name ends the script with a usage error that names SCRIPT.
bench_options() {
  _bo_script=$1; _bo_spec=$2; shift 2
  while [ $# -gt 0 ]; do
    _bo_var=
    for _bo_p in $_bo_spec; do
      [ "$1" = "--${_bo_p%%=*}" ] && _bo_var=${_bo_p#*=}
    done
    if [ -z "$_bo_var" ] || [ $# -lt 2 ]; then
      echo "$_bo_script: unknown option or missing value: $1" >&2
      exit 2
    fi
    eval "$_bo_var=\$2"
    shift 2
  done
}

# bench_arms BUDGET "ARM..." FILE: per arm of FILE's lines "K ARM SECONDS HIT"
# (a hit within BUDGET + 30 s), in the order ARM... lists them: its hits, the
# median time (a miss counts as the budget, so a median over misses is a
# lower bound, marked >=) and the trials K it was fastest in.
bench_arms() {
  awk -v b="$1" -v list="$2" '
    { hit = $4 && $3 <= b + 30; s = hit ? $3 : b
      n[$2]++; h[$2] += hit; v[$2, n[$2]] = s; miss[$2, n[$2]] = !hit
      at[$1, $2] = s; ks[$1] = 1 }
    END {
      nm = split(list, ms, " ")
      for (k in ks) {
        best = ""; bt = 0
        for (a = 1; a <= nm; a++)
          if ((k, ms[a]) in at && (best == "" || at[k, ms[a]] < bt)) { best = ms[a]; bt = at[k, ms[a]] }
        won[best]++
      }
      for (a = 1; a <= nm; a++) {
        arm = ms[a]; m = n[arm]
        for (i = 1; i <= m; i++) { w[i] = v[arm, i]; x[i] = miss[arm, i] }
        for (i = 2; i <= m; i++)     # insertion sort, small m
          for (j = i; j > 1 && w[j - 1] > w[j]; j--) {
            t = w[j]; w[j] = w[j - 1]; w[j - 1] = t; t = x[j]; x[j] = x[j - 1]; x[j - 1] = t
          }
        med = m % 2 ? w[(m + 1) / 2] : (w[m / 2] + w[m / 2 + 1]) / 2
        over = m % 2 ? x[(m + 1) / 2] : x[m / 2 + 1]
        printf "%-8s %d/%d hits, median %s%.1f s, fastest in %d trials\n", arm, h[arm], m,
               over ? ">= " : "", med, won[arm] + 0
      }
    }' "$3"
}

# bench_job_trial RES K ARM DIR CMD...: run CMD... (a `simfuzz fuzz -o DIR/out
# ... --stop-on-first` of the caller's; its output in DIR/log, DIR removed
# after) and append "K ARM SECONDS HIT" to RES, HIT 1 if it confirmed a
# failure. A status above 1 is reported on stderr.
bench_job_trial() {
  bt_res=$1; bt_k=$2; bt_arm=$3; bt_dir=$4; shift 4
  mkdir "$bt_dir"
  bt_t0=$(date +%s.%N); bt_rc=0
  "$@" > "$bt_dir/log" 2>&1 || bt_rc=$?
  bt_t1=$(date +%s.%N)
  bt_hit=0
  grep -q '^fuzz: confirmed /' "$bt_dir/log" && bt_hit=1
  [ $bt_rc -le 1 ] || { echo "$bt_arm k=$bt_k exited $bt_rc:" >&2; tail -3 "$bt_dir/log" >&2; }
  echo "$bt_k $bt_arm $(echo "$bt_t1 - $bt_t0" | bc) $bt_hit" >> "$bt_res"
  rm -rf "$bt_dir"
}
