/* simfuzz fuzz: the default job for one target. The explorer (explore.c)
 * runs in this build, which is the lean one in a release build; with two
 * jobs or more and a libFuzzer binary of the target, one job runs
 * libFuzzer over the corpus the explorer grows. At the end every crash
 * file is confirmed: triaged in isolated children (the same failure and
 * trace hash three times) and, with --confirm, replayed by a sanitized
 * build of the tool. Files that do not confirm are moved aside. */
#define _DEFAULT_SOURCE
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The libFuzzer binary of this target in the build this tool belongs to
 * (BUILD/bin/simfuzz-T -> BUILD/fuzz/T_fuzzer), if there is one. */
static int find_engine(char *out, size_t cap) {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0)
    return -1;
  self[n] = 0;
  char *slash = strrchr(self, '/');
  if (!slash)
    return -1;
  *slash = 0;
  if (snprintf(out, cap, "%s/../fuzz/%s_fuzzer", self, cli_target->name) >= (int)cap)
    return -1;
  return access(out, X_OK) == 0 ? 0 : -1;
}

static pid_t start_engine(const char *engine, const char *corpus, const char *crashes,
                          double seconds, uint64_t seed, const char *log) {
  char t[64], a[4200], s[64], d[PATH_MAX + 8] = "-dict=";
  snprintf(t, sizeof t, "-max_total_time=%.0f", seconds < 1 ? 1 : seconds);
  /* the target's dictionary beside it: BUILD/fuzz/<t>_fuzzer -> <t>.dict */
  size_t el = strlen(engine);
  if (el > 7 && el + 6 < PATH_MAX && !strcmp(engine + el - 7, "_fuzzer")) {
    memcpy(d + 6, engine, el - 7);
    memcpy(d + 6 + el - 7, ".dict", 6);
    if (access(d + 6, R_OK) != 0)
      d[0] = 0;
  } else {
    d[0] = 0;
  }
  snprintf(a, sizeof a, "-artifact_prefix=%s/", crashes);
  snprintf(s, sizeof s, "-seed=%" PRIu64, seed + 1);
  pid_t p = cli_fork_tied();
  if (p != 0)
    return p;
  FILE *f = freopen(log, "w", stdout);
  if (f)
    dup2(fileno(stdout), 2);
  if (d[0])
    execl(engine, engine, corpus, t, a, s, d, "-timeout=20", "-print_final_stats=1", (char *)NULL);
  else
    execl(engine, engine, corpus, t, a, s, "-timeout=20", "-print_final_stats=1", (char *)NULL);
  _exit(127);
}

/* Replay a file with a sanitized build of the tool: 1 if it fails there. */
static int sanitized_replay(const char *tool, const char *file) {
  pid_t p = cli_fork_tied();
  if (p == 0) {
    int null = open("/dev/null", 1);
    if (null >= 0) {
      dup2(null, 1);
      dup2(null, 2);
    }
    execl(tool, tool, "replay", "-q", file, (char *)NULL);
    _exit(127);
  }
  int st = 0;
  while (p > 0 && waitpid(p, &st, 0) < 0 && errno == EINTR) {
  }
  return p > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 1;
}

int cmd_fuzz(int argc, char **argv) {
  const char *out = NULL, *confirm = NULL, *engine_arg = NULL;
  const char *time_s = "60", *seed_s = "0";
  uint64_t jobs = 1, seed = 0;
  int quiet = 0, no_engine = 0, first = 0;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    int has = i + 1 < argc;
    if (!strcmp(a, "-o") && has)
      out = argv[++i];
    else if (!strcmp(a, "--time") && has)
      time_s = argv[++i];
    else if (!strcmp(a, "--jobs") && has) {
      if (cli_parse_u64(argv[++i], &jobs) < 0 || jobs == 0 || jobs > 64)
        return cli_error("fuzz: --jobs must be 1..64");
    } else if (!strcmp(a, "--seed") && has) {
      seed_s = argv[++i];
      if (cli_parse_u64(seed_s, &seed) < 0)
        return cli_error("fuzz: bad --seed '%s'", seed_s);
    } else if (!strcmp(a, "--engine") && has)
      engine_arg = argv[++i];
    else if (!strcmp(a, "--no-engine"))
      no_engine = 1;
    else if (!strcmp(a, "--confirm") && has)
      confirm = argv[++i];
    else if (!strcmp(a, "-q"))
      quiet = 1;
    else if (!strcmp(a, "--stop-on-first"))
      first = 1;
    else
      return cli_error("fuzz: unknown argument '%s' (see: %s help fuzz)", a, cli_prog);
  }
  char *end;
  double seconds = strtod(time_s, &end);
  if (*end || !(seconds > 0 && seconds < 1e7))
    return cli_error("fuzz: bad --time '%s' (seconds)", time_s);
  if (!out)
    return cli_error("fuzz: -o DIR is required");
  char crashes[4096], corpus[4096], aside[4096], log[4096], engine[PATH_MAX];
  if (snprintf(crashes, sizeof crashes, "%s/crashes", out) >= (int)sizeof crashes ||
      snprintf(corpus, sizeof corpus, "%s/corpus", out) >= (int)sizeof corpus ||
      snprintf(aside, sizeof aside, "%s/unconfirmed", out) >= (int)sizeof aside ||
      snprintf(log, sizeof log, "%s/libfuzzer.log", out) >= (int)sizeof log)
    return cli_error("fuzz: path too long: %s", out);
  if (cli_make_dir("fuzz", out) < 0 || cli_make_dir("fuzz", crashes) < 0 ||
      cli_make_dir("fuzz", corpus) < 0)
    return EXIT_USAGE;
  int have_engine = 0;
  if (!no_engine && jobs >= 2) {
    if (engine_arg)
      have_engine = snprintf(engine, sizeof engine, "%s", engine_arg) < (int)sizeof engine &&
                    access(engine, X_OK) == 0;
    else
      have_engine = find_engine(engine, sizeof engine) == 0;
    if (engine_arg && !have_engine)
      return cli_error("fuzz: --engine %s is not an executable", engine_arg);
  }
  pid_t ep = -1;
  if (have_engine) {
    ep = start_engine(engine, corpus, crashes, seconds, seed, log);
    if (!quiet)
      printf("fuzz: libFuzzer job: %s (log %s)\n", engine, log);
  }
  char js[32];
  snprintf(js, sizeof js, "%" PRIu64, have_engine ? jobs - 1 : jobs);
  char *ex_argv[16] = {"-o",           crashes,  "--corpus", corpus,   "--time",
                       (char *)time_s, "--jobs", js,         "--seed", (char *)seed_s};
  int ex_argc = 10;
  if (first)
    ex_argv[ex_argc++] = "--stop-on-first";
  if (quiet)
    ex_argv[ex_argc++] = "-q";
  int rc = cmd_explore(ex_argc, ex_argv);
  if (ep > 0) {
    int st;
    if (cli_interrupted || (first && rc == EXIT_FAILED))
      kill(ep, SIGTERM);
    while (waitpid(ep, &st, 0) < 0 && errno == EINTR)
      kill(ep, SIGTERM);
  }
  if (rc > EXIT_FAILED && rc < 128)
    return rc;
  /* confirm every crash file */
  struct dirent **ents;
  int k = scandir(crashes, &ents, NULL, alphasort);
  if (k < 0)
    return cli_error("fuzz: cannot list %s: %s", crashes, strerror(errno));
  sf_scenario *s = cli_new_scenario();
  unsigned confirmed = 0, moved = 0;
  for (int i = 0; i < k; i++) {
    const char *nm = ents[i]->d_name;
    char path[8192];
    if (strncmp(nm, "crash-", 6) ||
        snprintf(path, sizeof path, "%s/%s", crashes, nm) >= (int)sizeof path) {
      free(ents[i]);
      continue;
    }
    cli_input_kind kind;
    cli_outcome o1, o2;
    int ok = cli_load(path, s, &kind, NULL) == 0;
    if (ok) {
      cli_run_isolated(s, &o1, 1);
      cli_run_isolated(s, &o2, 0);
      ok = o1.sig[0] && !o1.nondet && !strcmp(o1.sig, o2.sig) && o1.hash == o2.hash;
    }
    int san = ok && confirm ? sanitized_replay(confirm, path) : ok;
    if (ok && san) {
      confirmed++;
      printf("fuzz: confirmed %s: %s%s\n", path, o1.sig, confirm ? " (and under sanitizers)" : "");
    } else {
      char dst[8192];
      if (cli_make_dir("fuzz", aside) == 0 &&
          snprintf(dst, sizeof dst, "%s/%s", aside, nm) < (int)sizeof dst && rename(path, dst) == 0)
        moved++;
      printf("fuzz: NOT confirmed %s (%s)\n", path,
             !ok ? "does not fail the same way every time" : "passes under sanitizers");
    }
    free(ents[i]);
  }
  free(ents);
  free(s);
  printf("fuzz: %u confirmed failures in %s, %u moved to %s\n", confirmed, crashes, moved, aside);
  if (confirmed)
    return EXIT_FAILED;
  if (moved)
    return EXIT_NONDET;
  return rc == EXIT_FAILED ? EXIT_OK : rc;
}
