/* simfuzz fuzz: the default job for one target. The explorer (explore.c)
 * runs in this build, which is the lean one in a release build; with two
 * jobs or more and a libFuzzer binary of the target, one job runs
 * libFuzzer over the corpus the explorer grows. At the end every failure
 * file is confirmed by the engine that found it (one rule, confirm_file):
 * the explorer's crash files in isolated children of this tool (the same
 * failure and trace hash, twice, one of them run twice in one process),
 * libFuzzer's files (crash, leak, timeout, out-of-memory) by the libFuzzer
 * binary (the same signature twice), and, with --confirm, also by a
 * sanitized build of the tool. A run fails when it reports a failure or
 * dies (a signal, a limit); files that do not confirm are moved aside.
 * Files that failed in the campaign but not when re-run from their
 * scenario (diverged-*) are a determinism failure, reported as such. */
#define _DEFAULT_SOURCE
#include "cli.h"
#include "explore/explore.h"

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

/* libFuzzer's artifacts are named <prefix><kind>-<sha1>: its own prefix
 * keeps them apart from the explorer's crash-<sha1>. */
#define LF_PREFIX "libfuzzer-"

typedef struct {
  const char *out, *confirm, *engine_arg, *time_s, *seed_s, *corpus_arg, *crashes_arg, *json;
  const char *share; /* explore's --share, passed on (NULL: its default) */
  uint64_t jobs, seed;
  double seconds;
  int quiet, no_engine, libfuzzer, first, all_crashes;
  char crashes[4096], corpus[4096], aside[4096], log[4096], ex_json[4096], origins[4096];
  char engine[PATH_MAX];
  int have_engine;
} fuzz_job;

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

/* libFuzzer's -seed is a 32-bit number where 0 means "pick one at random":
 * map ours into 1 .. 2^31 - 1, so every --seed gives a fixed run. */
static unsigned engine_seed(uint64_t seed) {
  return (unsigned)(seed % 2147483646u) + 1u;
}

/* The engine's dictionary beside it: BUILD/fuzz/<t>_fuzzer -> <t>.dict. */
static void engine_dict(const char *engine, char *d, size_t cap) {
  size_t el = strlen(engine);
  d[0] = 0;
  if (el > 7 && el + 12 < cap && !strcmp(engine + el - 7, "_fuzzer")) {
    snprintf(d, cap, "-dict=%.*s.dict", (int)(el - 7), engine);
    if (access(d + 6, R_OK) != 0)
      d[0] = 0;
  }
}

/* One libFuzzer run over the corpus for about `seconds`, its output into
 * the log (truncated by the first run, appended to by the next ones). */
static pid_t start_engine(const fuzz_job *j, double seconds, int first_run) {
  char t[64], a[PATH_MAX + 64], s[64], d[PATH_MAX + 8], abs[PATH_MAX];
  snprintf(t, sizeof t, "-max_total_time=%.0f", seconds < 1 ? 1 : seconds);
  engine_dict(j->engine, d, sizeof d);
  /* absolute: libFuzzer writes a crash file from inside the run, where the
   * system under test may have changed the directory */
  snprintf(a, sizeof a, "-artifact_prefix=%s/" LF_PREFIX,
           cli_absolute(j->crashes, abs, sizeof abs));
  snprintf(s, sizeof s, "-seed=%u", engine_seed(j->seed));
  char *argv[12] = {(char *)j->engine, (char *)j->corpus,     t, a, s,
                    "-timeout=20",     "-print_final_stats=1"};
  int n = 7;
  if (d[0])
    argv[n++] = d;
  argv[n] = NULL;
  /* never through a link planted at the log's name (checked before, and
   * here without a window) */
  int fd = open(
      j->log, O_WRONLY | O_CREAT | (first_run ? O_TRUNC : O_APPEND) | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0)
    return cli_error("fuzz: cannot write %s: %s", j->log, strerror(errno)), -1;
  pid_t p = cli_spawn_program(argv[0], argv, fd, fd);
  close(fd);
  if (p < 0)
    cli_error("fuzz: cannot start %s: %s", j->engine, strerror(errno));
  return p;
}

/* ---- confirmation --------------------------------------------------------- */

/* How a run of a program on a file ended: its signature (cli_crash_sig),
 * "" if it passed (exit 0), "-" if it says nothing of the file (bad input
 * or usage, cannot run, interrupted). */
static void program_verdict(char *const argv[], char *sig, size_t cap) {
  cli_child *c = malloc(sizeof *c);
  snprintf(sig, cap, "-");
  if (!c || cli_child_exec(c, argv) != 0) {
    free(c);
    return;
  }
  /* the program keeps to the run's time limit itself (libFuzzer's
   * -timeout, the tool's --timeout); a sanitizer's report, symbolized,
   * can take long past it on a loaded machine */
  cli_limits lim = cli_run_limits;
  if (lim.time_ms)
    lim.time_ms += 60000;
  int ended = cli_child_wait(c, &lim, NULL, NULL);
  int code = WIFEXITED(c->status) ? WEXITSTATUS(c->status) : -1;
  if (ended == CLI_END_OK)
    sig[0] = 0;
  else if (ended == CLI_END_INTERRUPTED || code == EXIT_USAGE || code == 126 || code == 127)
    snprintf(sig, cap, "-");
  else
    cli_crash_sig(c->tail, c->status, ended, sig, cap);
  free(c);
}

/* A libFuzzer file, by the libFuzzer binary: the same failure twice. */
static int engine_confirms(const fuzz_job *j, const char *path, char *sig, size_t cap) {
  char lim_t[32], lim_m[48], sig2[512];
  snprintf(lim_t, sizeof lim_t, "-timeout=%" PRIu64,
           cli_run_limits.time_ms ? (cli_run_limits.time_ms + 999) / 1000 : 20);
  snprintf(lim_m, sizeof lim_m, "-rss_limit_mb=%" PRIu64,
           cli_run_limits.rss_mb ? cli_run_limits.rss_mb : 2048);
  char *argv[] = {(char *)j->engine, lim_t, lim_m, (char *)path, NULL};
  program_verdict(argv, sig, cap);
  if (!sig[0] || sig[0] == '-' || cli_interrupted)
    return 0;
  program_verdict(argv, sig2, sizeof sig2);
  return !strcmp(sig, sig2);
}

/* With --confirm: the sanitized tool's replay fails too (a report, or a
 * death by signal or limit). */
static int sanitized_fails(const fuzz_job *j, const char *path) {
  char sig[512];
  char *argv[] = {(char *)j->confirm, "replay", "-q", (char *)path, NULL};
  program_verdict(argv, sig, sizeof sig);
  return sig[0] && sig[0] != '-';
}

/* The verdict on one failure file; why (if not confirmed) and the label. */
typedef struct {
  int confirmed;
  char sig[512];
  const char *why, *label;
} verdict;

static void confirm_file(const fuzz_job *j, const char *path, int from_engine, sf_scenario *s,
                         verdict *v) {
  memset(v, 0, sizeof *v);
  v->label = "";
  cli_input_kind kind;
  cli_outcome o1, o2;
  int loaded = cli_load(path, s, &kind, NULL) == 0;
  int lean = 0; /* this (lean) build fails it the same way every time */
  if (from_engine) {
    v->confirmed = engine_confirms(j, path, v->sig, sizeof v->sig);
    v->why = "the libFuzzer build does not fail it the same way twice";
    if (!v->confirmed || !loaded || cli_interrupted)
      return;
  }
  if (loaded) {
    cli_run_isolated(s, &o1, 1);
    if (!cli_interrupted)
      cli_run_isolated(s, &o2, 0);
    lean = o1.sig[0] && !o1.nondet && !strcmp(o1.sig, o2.sig) && o1.hash == o2.hash;
  }
  if (cli_interrupted)
    return;
  if (from_engine) { /* confirmed by libFuzzer: the lean build names it */
    if (!lean)
      v->label = " (libFuzzer build; fails only under sanitizers)";
    else
      snprintf(v->sig, sizeof v->sig, "%s", o1.sig);
    return;
  }
  v->confirmed = lean;
  v->why = loaded ? "does not fail the same way every time" : "cannot be read";
  snprintf(v->sig, sizeof v->sig, "%s", loaded ? o1.sig : "");
  if (lean && j->confirm) {
    v->confirmed = sanitized_fails(j, path);
    v->why = "passes under sanitizers";
    v->label = " (and under sanitizers)";
  }
}

/* libFuzzer's file kinds that are failures; slow units are not. */
static int engine_failure(const char *nm) {
  static const char *const kinds[] = {LF_PREFIX "crash-", LF_PREFIX "leak-", LF_PREFIX "timeout-",
                                      LF_PREFIX "oom-"};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    if (!strncmp(nm, kinds[i], strlen(kinds[i])))
      return 1;
  return 0;
}

typedef struct {
  unsigned confirmed, moved, diverged, slow, left;
} tally;

static void move_aside(const fuzz_job *j, const char *path, const char *nm, tally *t) {
  char dst[8192];
  if (cli_make_dir("fuzz", j->aside) == 0 &&
      snprintf(dst, sizeof dst, "%s/%s", j->aside, nm) < (int)sizeof dst && rename(path, dst) == 0)
    t->moved++;
}

/* Confirm every failure file in DIR/crashes (regular files only: a FIFO
 * or a link there is never opened). Stops early, leaving the rest where
 * they are, if the job is interrupted. */
static int confirm_all(const fuzz_job *j, tally *t) {
  struct dirent **ents;
  int k = scandir(j->crashes, &ents, NULL, alphasort);
  if (k < 0)
    return cli_error("fuzz: cannot list %s: %s", j->crashes, strerror(errno)), -1;
  sf_scenario *s = cli_new_scenario();
  for (int i = 0; i < k; i++) {
    const char *nm = ents[i]->d_name;
    char path[8192];
    int mine = !strncmp(nm, "crash-", 6), engine = engine_failure(nm);
    int ok = snprintf(path, sizeof path, "%s/%s", j->crashes, nm) < (int)sizeof path &&
             cli_regular_file(path);
    if (ok && !strncmp(nm, "diverged-", 9))
      t->diverged++;
    if (ok && !strncmp(nm, LF_PREFIX "slow-unit-", strlen(LF_PREFIX "slow-unit-")))
      t->slow++;
    if (!ok || (!mine && !engine) || cli_interrupted) {
      t->left += ok && (mine || engine);
      continue;
    }
    verdict v;
    confirm_file(j, path, engine && j->have_engine, s, &v);
    if (cli_interrupted) {
      t->left++;
    } else if (v.confirmed) {
      t->confirmed++;
      printf("fuzz: confirmed %s: %s%s\n", path, v.sig, v.label);
    } else {
      move_aside(j, path, nm, t);
      printf("fuzz: NOT confirmed %s (%s)\n", path, v.why);
    }
  }
  for (int i = 0; i < k; i++)
    free(ents[i]);
  free(ents);
  free(s);
  return 0;
}

/* ---- the job ---------------------------------------------------------------- */

static int parse(fuzz_job *j, int argc, char **argv) {
  j->time_s = "60";
  j->seed_s = "0";
  j->jobs = 1;
  /* --time and --seed stay text: explore gets them as given; the isolation
   * limits hold for explore and the confirmations alike */
  const cli_opt opts[] = {CLI_STR("-o", NULL, &j->out),
                          CLI_STR("--time", NULL, &j->time_s),
                          CLI_U64("--jobs", &j->jobs, 1, 64),
                          CLI_STR("--seed", NULL, &j->seed_s),
                          CLI_STR("--engine", NULL, &j->engine_arg),
                          CLI_STR("--corpus", NULL, &j->corpus_arg),
                          CLI_STR("--crashes", NULL, &j->crashes_arg),
                          CLI_STR("--json", NULL, &j->json),
                          CLI_FLAG("--libfuzzer", NULL, &j->libfuzzer),
                          CLI_FLAG("--no-engine", NULL, &j->no_engine),
                          CLI_STR("--confirm", NULL, &j->confirm),
                          CLI_FLAG("--quiet", "-q", &j->quiet),
                          CLI_FLAG("--stop-on-first", NULL, &j->first),
                          CLI_STR("--share", NULL, &j->share),
                          CLI_FLAG("--all-crashes", NULL, &j->all_crashes),
                          CLI_LIMITS,
                          CLI_END};
  if (cli_parse_none("fuzz", argc, argv, opts) < 0)
    return EXIT_USAGE;
  if (cli_parse_u64(j->seed_s, &j->seed) < 0)
    return cli_error("fuzz: bad --seed '%s' (a decimal number)", j->seed_s);
  char *end;
  j->seconds = strtod(j->time_s, &end);
  if (*end || !(j->seconds >= 0.001 && j->seconds < 1e7))
    return cli_error("fuzz: bad --time '%s' (seconds, at least 0.001)", j->time_s);
  if (!j->out)
    return cli_error("fuzz: -o DIR is required");
  if (j->confirm && access(j->confirm, X_OK) != 0)
    return cli_error("fuzz: --confirm %s is not an executable", j->confirm);
  if (snprintf(j->crashes, sizeof j->crashes, "%s%s", j->crashes_arg ? "" : j->out,
               j->crashes_arg ? j->crashes_arg : "/crashes") >= (int)sizeof j->crashes ||
      snprintf(j->corpus, sizeof j->corpus, "%s%s", j->corpus_arg ? "" : j->out,
               j->corpus_arg ? j->corpus_arg : "/corpus") >= (int)sizeof j->corpus ||
      snprintf(j->aside, sizeof j->aside, "%s/unconfirmed", j->out) >= (int)sizeof j->aside ||
      snprintf(j->log, sizeof j->log, "%s/libfuzzer.log", j->out) >= (int)sizeof j->log ||
      snprintf(j->ex_json, sizeof j->ex_json, "%s/explore.json", j->out) >=
          (int)sizeof j->ex_json ||
      snprintf(j->origins, sizeof j->origins, "%s/origins.txt", j->out) >= (int)sizeof j->origins)
    return cli_error("fuzz: path too long: %s", j->out);
  if (j->no_engine && (j->libfuzzer || j->engine_arg))
    return cli_error("fuzz: --no-engine with --libfuzzer or --engine");
  /* every job explores unless asked for libFuzzer (docs/BENCHMARKS.md, "The
   * second core of --jobs 2": a second explorer beat the ASan libFuzzer) */
  if (j->engine_arg) {
    j->have_engine =
        snprintf(j->engine, sizeof j->engine, "%s", j->engine_arg) < (int)sizeof j->engine &&
        access(j->engine, X_OK) == 0;
    if (!j->have_engine)
      return cli_error("fuzz: --engine %s is not an executable", j->engine_arg);
  } else if (j->libfuzzer) {
    j->have_engine = find_engine(j->engine, sizeof j->engine) == 0;
    if (!j->have_engine)
      return cli_error("fuzz: --libfuzzer: no libFuzzer binary of %s beside this tool "
                       "(BUILD/fuzz/%s_fuzzer); give its path with --engine FUZZER",
                       cli_target->name, cli_target->name);
  }
  return EXIT_OK;
}

static unsigned is_engine_failure(void *ctx, const char *path, const char *name) {
  (void)ctx, (void)path;
  return (unsigned)engine_failure(name);
}

/* How many of libFuzzer's failure files directory dir holds. */
static unsigned engine_files(const char *dir) {
  return cli_each_file(dir, is_engine_failure, NULL);
}

/* How many inputs libFuzzer's log says it wrote ("Test unit written to"). */
static unsigned engine_saves(const char *log) {
  unsigned n = 0;
  FILE *f = fopen(log, "r");
  char line[1024];
  while (f && fgets(line, sizeof line, f))
    n += strstr(line, "Test unit written to") != NULL;
  if (f)
    fclose(f);
  return n;
}

/* The libFuzzer job: runs of libFuzzer over the corpus until `seconds`
 * have passed. libFuzzer stops at its first failure; a run that stopped on
 * a new one and saved it is followed by another on the rest of the time,
 * unless --stop-on-first (fork mode would go on by itself, but it loses
 * LeakSanitizer's findings). A run that saved a failure already there (a
 * corpus input that fails) ends the job: the next would too. Returns 0
 * when the time is up or the job was stopped; 1 once a failure is saved
 * under --stop-on-first; else -1 after saying how the run that failed
 * without saving anything ended. */
static int engine_job(const fuzz_job *j, double seconds) {
  uint64_t start = cli_now_ms();
  for (int run = 0;; run++) {
    double left = seconds - (double)(cli_now_ms() - start) / 1000;
    if (run > 0 && left < 1)
      return 0;
    unsigned files = engine_files(j->crashes), saves = run ? engine_saves(j->log) : 0;
    pid_t p = start_engine(j, left, run == 0);
    int st = 0;
    if (p < 0 || cli_wait_program(p, &st) != 0)
      return -1;
    if (cli_interrupted || (WIFEXITED(st) && WEXITSTATUS(st) == 0))
      return 0;
    if (engine_saves(j->log) == saves) /* ended badly with nothing saved */
      return cli_error("fuzz: the libFuzzer job ended with %s %d (see %s)",
                       WIFEXITED(st) ? "exit status" : "signal",
                       WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), j->log),
             -1;
    if (j->first)
      return 1;
    if (engine_files(j->crashes) == files) /* the same failure again */
      return 0;
  }
}

/* engine_job as a supervised child of its own, beside the explorer: its
 * exit status says how the job ended (0 well or stopped, 1 a failure under
 * --stop-on-first, 2 badly). */
static void engine_child(void *arg, const cli_child_io *io) {
  (void)io;
  const fuzz_job *j = arg;
  int rc = engine_job(j, j->seconds);
  if (rc == 1) /* --stop-on-first: the explorer stops too (on_engine_found) */
    kill(getppid(), SIGUSR1);
  fflush(stderr);
  _exit(rc < 0 ? 2 : rc);
}

/* The libFuzzer job found a failure under --stop-on-first: the explorer
 * stops as when its time is up, and the job goes on to confirm. */
static void on_engine_found(int sig) {
  (void)sig;
  sf_explore_stop();
}

/* The campaign: libFuzzer and the explorer. With two jobs or more, libFuzzer
 * takes one beside the explorer's others for the whole time; with one job
 * and --engine, they take turns: libFuzzer over the corpus for the first
 * three quarters of the time, then the explorer. Returns the explorer's
 * exit status (EXIT_FAILED when libFuzzer's failure ends the job first
 * under --stop-on-first), and in *engine_failed whether libFuzzer ended
 * badly on its own. */
static int campaign(fuzz_job *j, int *engine_failed) {
  int turns = j->have_engine && j->jobs == 1;
  double ex_s = turns ? j->seconds / 4 : j->seconds;
  *engine_failed = 0;
  cli_child *ec = NULL;
  if (j->have_engine && !j->quiet)
    printf("fuzz: libFuzzer job: %s (log %s)\n", j->engine, j->log);
  if (turns) {
    int r = engine_job(j, j->seconds - ex_s);
    *engine_failed = r < 0;
    if (cli_interrupted)
      return 128 + (int)cli_stop_signal;
    if (r == 1) /* its failure ends the job (--stop-on-first) */
      return EXIT_FAILED;
  } else if (j->have_engine) {
    if (j->first) {
      struct sigaction sa;
      memset(&sa, 0, sizeof sa);
      sa.sa_handler = on_engine_found;
      sigemptyset(&sa.sa_mask);
      sigaction(SIGUSR1, &sa, NULL);
      cli_signals_changed(); /* no child keeps the handler */
    }
    ec = malloc(sizeof *ec);
    if (!ec || cli_child_spawn(ec, engine_child, j) != 0) {
      *engine_failed = 1;
      cli_error("fuzz: cannot start the libFuzzer job: %s", strerror(errno));
      free(ec);
      ec = NULL;
    }
  }
  char js[32], ts[32];
  snprintf(js, sizeof js, "%" PRIu64, j->have_engine && !turns ? j->jobs - 1 : j->jobs);
  snprintf(ts, sizeof ts, "%.3f", ex_s < 0.001 ? 0.001 : ex_s);
  char *ex_argv[24] = {"-o",     j->crashes, "--corpus",  j->corpus, "--time",
                       ts,       "--jobs",   js,          "--seed",  (char *)j->seed_s,
                       "--json", j->ex_json, "--origins", j->origins};
  int ex_argc = 14;
  if (j->first)
    ex_argv[ex_argc++] = "--stop-on-first";
  if (j->quiet)
    ex_argv[ex_argc++] = "-q";
  if (j->all_crashes)
    ex_argv[ex_argc++] = "--all-crashes";
  if (j->share) {
    ex_argv[ex_argc++] = "--share";
    ex_argv[ex_argc++] = (char *)j->share;
  }
  int rc = cmd_explore(ex_argc, ex_argv);
  if (ec) {
    if (j->first && rc != EXIT_OK) /* the explorer found one: the job ends */
      kill(-(pid_t)ec->pid, SIGTERM);
    cli_child_wait(ec, NULL, NULL, NULL);
    fputs(ec->tail, stderr); /* what the job said */
    *engine_failed = WIFEXITED(ec->status) && WEXITSTATUS(ec->status) == 2;
    free(ec);
  }
  return rc;
}

/* libFuzzer failed without leaving a failure file (confirmed or moved
 * aside): a finding lost. */
static int engine_lost(const fuzz_job *j) {
  return !engine_files(j->crashes) && !engine_files(j->aside);
}

/* libFuzzer's executions: over its runs (each starts with "INFO: Seed:"),
 * the sum of each run's last "#<executions>" line. */
static uint64_t engine_execs(const char *log) {
  uint64_t total = 0, run = 0;
  FILE *f = fopen(log, "r");
  char line[1024];
  while (f && fgets(line, sizeof line, f)) {
    if (!strncmp(line, "INFO: Seed:", 11)) {
      total += run;
      run = 0;
    } else if (line[0] == '#' && line[1] >= '0' && line[1] <= '9') {
      run = strtoull(line + 1, NULL, 10);
    }
  }
  if (f)
    fclose(f);
  return total + run;
}

/* --json FILE: the campaign's counts as one JSON object on one line (the
 * nightly job reads it): the explorer's roots and branches (from its own
 * --json), libFuzzer's executions and the confirmation's tally. */
static int write_json(const fuzz_job *j, const tally *t) {
  char line[1024] = ""; /* absent if the explorer could not write it: counts 0 */
  FILE *ex = fopen(j->ex_json, "r");
  if (ex) {
    if (!fgets(line, sizeof line, ex))
      line[0] = 0;
    fclose(ex);
  }
  uint64_t roots = cli_json_count(line, "roots"), branches = cli_json_count(line, "branches");
  char tmp[4300];
  FILE *f = cli_create(j->json, tmp, sizeof tmp);
  if (!f)
    return -1;
  cli_json js;
  cj_begin(&js, f);
  cj_obj(&js);
  cj_kint(&js, "roots", (int64_t)roots);
  cj_kint(&js, "branches", (int64_t)branches);
  cj_kint(&js, "engine_execs", (int64_t)(j->have_engine ? engine_execs(j->log) : 0));
  cj_kint(&js, "confirmed", t->confirmed);
  cj_kint(&js, "unconfirmed", t->moved);
  cj_kint(&js, "diverged", t->diverged);
  cj_kint(&js, "slow", t->slow);
  cj_kint(&js, "left", t->left);
  cj_end_obj(&js);
  fputc('\n', f);
  return cli_commit(f, tmp, j->json);
}

static int summary(const fuzz_job *j, const tally *t, int rc, int engine_failed) {
  if (cli_stop_signal) {
    printf("fuzz: stopped by signal %d: %u confirmed, %u failure files in %s left unconfirmed\n",
           (int)cli_stop_signal, t->confirmed, t->left, j->crashes);
    return 128 + (int)cli_stop_signal;
  }
  printf("fuzz: %u confirmed failures in %s, %u moved to %s\n", t->confirmed, j->crashes, t->moved,
         j->aside);
  if (t->slow)
    printf("fuzz: %u slow inputs (not failures): %s/" LF_PREFIX "slow-unit-*\n", t->slow,
           j->crashes);
  if (t->diverged)
    printf("fuzz: %u failures did not fail again when re-run from their scenario (the target is "
           "not deterministic; check-determinism shows where): %s/diverged-*\n",
           t->diverged, j->crashes);
  if (rc == EXIT_USAGE) /* explore said why: failures it could not save */
    return EXIT_USAGE;
  if (engine_failed && engine_lost(j))
    return cli_error("fuzz: libFuzzer stopped on a failure it did not save");
  if (t->confirmed)
    return EXIT_FAILED;
  return t->moved || t->diverged ? EXIT_NONDET : EXIT_OK;
}

#define HELP_FUZZ                                                                                  \
  "fuzz -o DIR : the default fuzzing job for this target\n\n"                                      \
  "SYNOPSIS\n"                                                                                     \
  "  fuzz -o DIR [--time S] [--jobs N] [--seed N] [--libfuzzer] [--engine FUZZER]\n"               \
  "       [--corpus CDIR] [--crashes XDIR] [--json FILE] [--confirm SANITIZED_TOOL]\n"             \
  "       [--stop-on-first] [--share time|runs] [--all-crashes] [--timeout S]\n"                   \
  "       [--rss-limit-mb MB] [-q]\n\n"                                                            \
  "DESCRIPTION\n"                                                                                  \
  "  Runs the explorer (see explore: the sweep's scenarios as roots, branching at rare\n"          \
  "  states) in this build for S seconds (default 60, at least 0.001) on N jobs, saving crash\n"   \
  "  files in DIR/crashes and new states in DIR/corpus. Every job is an explorer worker (they\n"   \
  "  share the campaign's counts), unless --libfuzzer (the target's libFuzzer binary beside\n"     \
  "  this tool, BUILD/fuzz/<target>_fuzzer) or --engine FUZZER (that binary) asks for\n"           \
  "  libFuzzer: with N >= 2, one job runs it over DIR/corpus; its findings are\n"                  \
  "  DIR/crashes/libfuzzer-{crash,leak,timeout,oom}-*\n"                                           \
  "  (log: DIR/libfuzzer.log). Then every failure file is confirmed by the engine that found\n"    \
  "  it: the explorer's must fail the same way with the same trace hash in three isolated\n"       \
  "  runs of this tool and, with --confirm, also in a sanitized build of this tool (e.g.\n"        \
  "  build/asan/bin/simfuzz-<target>); libFuzzer's must fail the same way twice in the\n"          \
  "  libFuzzer binary, and are labelled 'fails only under sanitizers' when this build passes\n"    \
  "  them. A run fails when it reports a failure or dies (a signal, a limit). Files that do\n"     \
  "  not confirm are moved to DIR/unconfirmed. Failures that did not fail again when re-run\n"     \
  "  from their scenario (DIR/crashes/diverged-*) show that the target is not deterministic.\n"    \
  "  DIR/origins.txt gets a line per crash file the explorer saved: how it was reached (its\n"     \
  "  root's seed and the states its branches forked at; see explore --origins).\n"                 \
  "  SIGINT or SIGTERM stop the job: what was not confirmed yet stays in DIR/crashes.\n\n"         \
  "OPTIONS\n"                                                                                      \
  "  --timeout S        wall-clock limit per run, branches included (default 20)\n"                \
  "  --rss-limit-mb MB  memory limit of every run, branches included (default 2048)\n"             \
  "  --seed N           first root seed (decimal); libFuzzer gets a fixed seed from it\n"          \
  "  --corpus CDIR      the corpus (default DIR/corpus); --crashes XDIR: the failure files\n"      \
  "                     (default DIR/crashes), confirmed where they are\n"                         \
  "  --share time|runs  what the explorer's branches get a share of (see explore)\n"               \
  "  --all-crashes      a crash file for every failure the explorer finds, not a few of each\n"    \
  "                     kind (see explore): every one is confirmed, which takes longer\n"          \
  "  --json FILE        the counts as one JSON object: roots, branches, engine_execs,\n"           \
  "                     confirmed, unconfirmed, diverged, slow, left (the nightly job reads it)\n" \
  "  libFuzzer stops at a failure and is started again on the rest of the time, until a\n"         \
  "  run finds nothing new; with --stop-on-first the job ends at the first failure. With\n"        \
  "  one job and libFuzzer, libFuzzer runs first (three quarters of S), then the explorer.\n"      \
  "  --no-engine, no libFuzzer, is the default (the option is accepted as before).\n\n"            \
  "EXIT STATUS\n"                                                                                  \
  "  0 no failure, 1 confirmed failures, 2 usage, or a failure that could not be saved,\n"         \
  "  3 only unconfirmed or nondeterministic failures, 128+N stopped by signal N\n"

static int cmd_fuzz(int argc, char **argv) {
  fuzz_job j;
  memset(&j, 0, sizeof j);
  if (parse(&j, argc, argv) != EXIT_OK)
    return EXIT_USAGE;
  if (cli_make_dir("fuzz", j.out) < 0 || cli_make_dir("fuzz", j.crashes) < 0 ||
      cli_make_dir("fuzz", j.corpus) < 0 || cli_dir_writable("fuzz", j.crashes) < 0 ||
      (j.have_engine && !cli_output_ok(j.log)) || (j.json && !cli_output_ok(j.json)))
    return EXIT_USAGE;
  struct sigaction old[2];
  cli_catch_stop(old);
  int engine_failed;
  int rc = campaign(&j, &engine_failed);
  tally t = {0, 0, 0, 0, 0};
  int listed = confirm_all(&j, &t);
  cli_restore_stop(old);
  if (listed < 0)
    return EXIT_USAGE;
  if (j.json && write_json(&j, &t) != 0)
    return cli_error("fuzz: cannot write %s", j.json);
  return summary(&j, &t, rc, engine_failed);
}

const cli_command cli_cmd_fuzz = {"fuzz", cmd_fuzz, 1, HELP_FUZZ};
