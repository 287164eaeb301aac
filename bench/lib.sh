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
