/* simfuzz nightly: fuzz every target of a build for a budget, keep what the
 * night found, report what is new.
 *
 * Per target: the default job (`simfuzz-T fuzz`: the explorer, and
 * libFuzzer restarted past each failure, over the state's corpus; one
 * campaign routine for both commands); its crash files land in
 * STATE/inbox/<target>/ at once, where they wait until a night has
 * reported them; the corpus is merged beside the old one, checked
 * (libFuzzer names every input by the SHA-1 of its contents) and swapped in
 * by two renames. Then every waiting crash file is triaged (the failure
 * signature, in an isolated run), deduplicated on the exact (target,
 * signature) key against STATE/known.tsv, and each new failure is copied to
 * STATE/crashes/<target>/<id>.input, minimized and checked for
 * determinism; these files count as the night's until the known.tsv that
 * names them is in place (a night that ends earlier removes them). The
 * reports (Markdown, JSON and SARIF, through one JSON writer), the known
 * signatures and the night counter are staged whole and then renamed
 * together; only then do the reported crash files leave the inbox.
 *
 * Guarantees: the state directory is locked for the night (flock: a second
 * night on the same state stops at once); a night never takes a number
 * that has a report already; a damaged or misplaced state file is found
 * before any fuzzing; SIGINT and SIGTERM stop and reap every child (each
 * runs in its own process group) and leave the state as it was, the
 * night's crash files waiting in the inbox; anything that cannot be written
 * ends the night with one "nightly: ..." line and status 2, the state as it
 * was. Exit status: 0 nothing new, 1 new failures, 2 the job failed,
 * 128+N stopped by signal N. */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { MAX_TARGETS = 256, PATHCAP = 4096, MAX_NAMES = 16 };

typedef struct {
  char name[128];
  uint64_t execs;        /* libFuzzer's and the explorer's runs */
  uint64_t explore_runs; /* of which the explorer's (roots and branches) */
  unsigned before, after, crashes;
  unsigned sites, reached, never; /* assertion sites: in the catalog, reached, never */
  unsigned nnames;                /* never-reached names kept (at most MAX_NAMES) */
  char never_names[MAX_NAMES][128];
} target_stat;

typedef struct {
  char target[128];
  char sig[512];
  char id[32];
  char scenario[PATHCAP];
  char triage[2048]; /* triage --json of the minimized scenario */
} new_failure;

typedef struct {
  char target[128];
  char sig[512];
  char id[32]; /* "" for lines written before ids */
} known_key;

static struct {
  const char *state, *build;
  unsigned long budget, jobs;
  int ntargets;
  target_stat t[MAX_TARGETS];
  char work[PATHCAP];
  char (*staged)[PATHCAP]; /* STATE/...new copies not yet renamed into place */
  size_t nstaged, staged_cap;
  char (*filed)[PATHCAP]; /* new failures' files, until known.tsv names them */
  size_t nfiled, filed_cap;
  known_key *known;
  size_t nknown, known_cap;
  unsigned long next_id;
  new_failure *fresh;
  size_t nfresh, fresh_cap;
  char (*done)[PATHCAP]; /* inbox files handled this night */
  size_t ndone, done_cap;
  unsigned seen;
} N;

static void remove_tree(const char *dir);

static void cleanup(void) {
  for (size_t i = 0; i < N.nstaged; i++)
    if (N.staged[i][0])
      unlink(N.staged[i]);
  for (size_t i = 0; i < N.nfiled; i++)
    unlink(N.filed[i]);
  N.nstaged = N.nfiled = 0;
  free(N.staged);
  free(N.filed);
  N.staged = N.filed = NULL;
  if (N.work[0]) {
    remove_tree(N.work);
    N.work[0] = 0;
  }
}

/* One "nightly: ..." line on stderr, ending with tail. */
static void vnote(const char *tail, const char *fmt, va_list ap) {
  fputs("nightly: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputs(tail, stderr);
  fputc('\n', stderr);
}

/* The night cannot go on: one line, the state as it was, status 2. The
 * line says so: a path it names may be one of the night's own files
 * (a new failure's crashes/<target>/fNNNN.*), which cleanup() removed. */
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2), noreturn))
#endif
static void
die(const char *fmt, ...) {
  cleanup();
  va_list ap;
  va_start(ap, fmt);
  vnote("; the night stops, the state is as it was", fmt, ap);
  va_end(ap);
  exit(EXIT_USAGE);
}

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static void
note(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vnote("", fmt, ap);
  va_end(ap);
}

static void stopped(void) {
  int sig = (int)cli_stop_signal;
  cleanup();
  fprintf(stderr,
          "nightly: stopped by signal %d; every child is gone, the state is as it was and the "
          "night's crash files wait in the inbox\n",
          sig);
  exit(128 + sig);
}

/* The start of a phase: a stop signal that came since the last child ended
 * ends the night here. Test hooks (SQLite style), for a phase
 * fuzz|merge|crashes|report|state|publish: SIMFUZZ_NIGHTLY_FULL_AT makes every
 * write from that phase on fail as on a full disk; SIMFUZZ_NIGHTLY_STOP_AT
 * sends the night SIGTERM as the phase starts. */
static void phase(const char *name) {
  const char *at = getenv("SIMFUZZ_NIGHTLY_FULL_AT");
  if (at && !strcmp(at, name)) {
    struct rlimit rl = {0, 0};
    setrlimit(RLIMIT_FSIZE, &rl);
  }
  at = getenv("SIMFUZZ_NIGHTLY_STOP_AT");
  if (at && !strcmp(at, name))
    raise(SIGTERM);
  if (cli_stop_signal)
    stopped();
}

/* ---- files ------------------------------------------------------------------ */

/* A path (or an argument naming one) into out, a PATHCAP buffer; a path
 * that does not fit stops the night rather than name another file. */
static void pathf(char *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void pathf(char *out, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(out, PATHCAP, fmt, ap);
  va_end(ap);
  if (n < 0 || n >= PATHCAP)
    die("path too long: %.200s...", out);
}

static void path2(char *out, const char *a, const char *b) {
  if (snprintf(out, PATHCAP, "%s/%s", a, b) >= PATHCAP)
    die("path too long: %s/%s", a, b);
}

static int is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static void mkdirs(const char *p) {
  if (cli_mkdirs(p) < 0)
    die("cannot create %s: %s", p, strerror(errno));
}

static void remove_tree(const char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d))) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
        continue;
      char p[PATHCAP];
      if (snprintf(p, sizeof p, "%s/%s", dir, e->d_name) >= (int)sizeof p)
        continue;
      struct stat st;
      if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
        remove_tree(p);
      else
        unlink(p);
    }
    closedir(d);
  }
  rmdir(dir);
}

static unsigned one(void *ctx, const char *path, const char *name) {
  (void)ctx, (void)path, (void)name;
  return 1;
}

static unsigned count_files(const char *dir) {
  return cli_each_file(dir, one, NULL);
}

/* libFuzzer's names: [kind-]<40 hex digits of the SHA-1 of the contents> */
static const char *sha1_of_name(const char *name) {
  size_t n = strlen(name);
  if (n < 40)
    return NULL;
  const char *h = name + n - 40;
  if (h != name && h[-1] != '-')
    return NULL;
  for (const char *p = h; *p; p++)
    if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
      return NULL;
  return h;
}

typedef struct {
  int strict, keep;
} damage;

/* 1 if the file at path is damaged (removed unless keep). */
static unsigned check_damage(void *ctx, const char *path, const char *name) {
  const damage *how = ctx;
  const char *want = sha1_of_name(name);
  char hex[41];
  if (!want)
    return (unsigned)how->strict;
  if (cli_sha1_file(path, hex) == 0 && !strcmp(hex, want))
    return 0;
  if (!how->keep)
    unlink(path);
  return 1;
}

/* Remove the files a full disk cut short (their contents no longer match
 * the SHA-1 in their names); with strict, a file not named by its SHA-1 is
 * damage too. Returns the number of damaged files (removed unless keep).
 * A FIFO or a link is never opened (cli_each_file). */
static unsigned damaged(const char *dir, int strict, int keep) {
  damage how = {strict, keep};
  return cli_each_file(dir, check_damage, &how);
}

/* Add path to a list of files that cleanup() removes (a night that ends
 * early leaves the state as it was). Called before the file is created. */
static void remember(char (**list)[PATHCAP], size_t *n, size_t *cap, const char *path) {
  char(*l)[PATHCAP] = cli_grow(*list, cap, *n, sizeof **list, 16);
  if (!l)
    die("out of memory");
  *list = l;
  if (snprintf(l[(*n)++], PATHCAP, "%s", path) >= PATHCAP)
    die("path too long: %s", path); /* (cleanup() would remove another file) */
}

/* Copy src to dst.new (exclusively created, checked whole by SHA-1), noted
 * as staged; the caller renames it. */
static void stage(const char *src, const char *dst) {
  char tmp[PATHCAP], a[41], b[41];
  if (snprintf(tmp, sizeof tmp, "%s.new", dst) >= (int)sizeof tmp)
    die("path too long: %s", dst);
  unlink(tmp);
  remember(&N.staged, &N.nstaged, &N.staged_cap, tmp);
  FILE *in = fopen(src, "rb");
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0666);
  if (!in || fd < 0) {
    int e = errno;
    if (in)
      fclose(in);
    if (fd >= 0)
      close(fd);
    die("cannot write %s: %s", dst, strerror(e));
  }
  char buf[65536];
  size_t n;
  int err = 0;
  while (!err && (n = fread(buf, 1, sizeof buf, in)) > 0)
    err = write(fd, buf, n) != (ssize_t)n;
  int e = errno;
  err |= ferror(in) != 0;
  fclose(in);
  err |= fsync(fd) != 0;
  err |= close(fd) != 0;
  if (err || cli_sha1_file(src, a) != 0 || cli_sha1_file(tmp, b) != 0 || strcmp(a, b))
    die("cannot write %s: %s", dst, err && e ? strerror(e) : "the copy came out short");
}

static void publish(const char *dst) {
  char tmp[PATHCAP];
  pathf(tmp, "%s.new", dst);
  if (rename(tmp, dst) != 0)
    die("cannot write %s: %s", dst, strerror(errno));
  for (size_t i = 0; i < N.nstaged; i++)
    if (!strcmp(N.staged[i], tmp))
      N.staged[i][0] = 0;
}

static void put(const char *src, const char *dst) {
  stage(src, dst);
  publish(dst);
}

/* ---- children --------------------------------------------------------------- */

/* Run argv to its end (cli_run_program: in its own process group, which a
 * stop signal kills) with stdout (and stderr, unless err_null) into
 * out_path. Returns the wait status; a stop signal that came meanwhile
 * ends the night. */
static int run(char *const argv[], const char *out_path, int err_null) {
  int fd = open(out_path ? out_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0666);
  int st;
  if (cli_run_program(argv[0], argv, fd, err_null ? -1 : fd, &st) != 0)
    die("cannot start %s: %s", argv[0], strerror(errno));
  if (fd >= 0)
    close(fd);
  if (cli_stop_signal)
    stopped();
  return st;
}

/* The first line a child prints, into buf (through a pipe: a full disk
 * does not hide it); -1 if it printed nothing. */
static int first_line(char *const argv[], char *buf, size_t cap) {
  int st;
  long n = cli_program_output(argv[0], argv, -1, buf, cap, &st);
  if (n < 0)
    die("cannot start %s: %s", argv[0], strerror(errno));
  if (cli_stop_signal)
    stopped();
  buf[strcspn(buf, "\n")] = 0;
  return n ? 0 : -1;
}

/* ---- state ------------------------------------------------------------------ */

static void add_known(const char *target, const char *sig, const char *id) {
  known_key *k = cli_grow(N.known, &N.known_cap, N.nknown, sizeof *k, 64);
  if (!k)
    die("out of memory");
  N.known = k;
  snprintf(N.known[N.nknown].target, sizeof N.known[0].target, "%s", target);
  snprintf(N.known[N.nknown].sig, sizeof N.known[0].sig, "%s", sig);
  snprintf(N.known[N.nknown].id, sizeof N.known[0].id, "%s", id ? id : "");
  N.nknown++;
}

static int is_known(const char *target, const char *sig) {
  for (size_t i = 0; i < N.nknown; i++)
    if (!strcmp(N.known[i].target, target) && !strcmp(N.known[i].sig, sig))
      return 1;
  return 0;
}

/* A state file must be absent or a regular file. */
static int state_file(const char *name, char *path) {
  struct stat st;
  path2(path, N.state, name);
  if (lstat(path, &st) != 0)
    return 0;
  if (!S_ISREG(st.st_mode))
    die("cannot use %s: it is not a regular file (move it away)", path);
  return 1;
}

/* known.tsv's fields are escaped: a backslash, tab, newline or carriage
 * return in a target name or a signature is \\, \t, \n, \r, so every line
 * has its three fields whatever a failure's text holds. */
static void write_field(FILE *f, const char *s) {
  for (; *s; s++) {
    const char *esc = *s == '\\'   ? "\\\\"
                      : *s == '\t' ? "\\t"
                      : *s == '\n' ? "\\n"
                      : *s == '\r' ? "\\r"
                                   : NULL;
    if (esc)
      fputs(esc, f);
    else
      fputc(*s, f);
  }
}

/* Undo write_field in place. */
static void unescape(char *s) {
  char *o = s;
  for (; *s; s++) {
    if (*s != '\\' || !s[1]) {
      *o++ = *s;
      continue;
    }
    s++;
    *o++ = *s == 't' ? '\t' : *s == 'n' ? '\n' : *s == 'r' ? '\r' : *s;
  }
  *o = 0;
}

/* known.tsv: target TAB signature [TAB id] per line (escaped: write_field);
 * ids are f<number>. */
static void read_known(void) {
  char path[PATHCAP];
  if (!state_file("known.tsv", path))
    return;
  FILE *f = fopen(path, "r");
  if (!f)
    die("cannot read %s: %s", path, strerror(errno));
  char line[2048];
  unsigned long lines = 0;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    if (!line[0])
      continue;
    lines++;
    char *tab = strchr(line, '\t');
    if (!tab)
      die("cannot use %s: line %lu has no tab", path, lines);
    *tab = 0;
    char *sig = tab + 1, *id = strchr(sig, '\t');
    if (id) {
      *id++ = 0;
      unsigned long v;
      if (id[0] == 'f' && sscanf(id + 1, "%lu", &v) == 1 && v >= N.next_id)
        N.next_id = v + 1;
    }
    unescape(line);
    unescape(sig);
    add_known(line, sig, id);
  }
  fclose(f);
  if (N.next_id <= lines)
    N.next_id = lines + 1;
}

/* The night's number: after both the counter and every report on disk, so
 * a damaged counter can never make a night overwrite an earlier report. */
static unsigned long night_number(void) {
  char path[PATHCAP];
  unsigned long n = 0;
  if (state_file("nights", path)) {
    FILE *f = fopen(path, "r");
    char b[64] = "";
    if (!f || !fgets(b, sizeof b, f))
      b[0] = 0;
    if (f)
      fclose(f);
    char *end;
    errno = 0;
    unsigned long v = strtoul(b, &end, 10);
    if (errno || end == b || (*end && *end != '\n'))
      note("%s is damaged ('%.*s'); numbering after the last report instead", path,
           (int)strcspn(b, "\n"), b);
    else
      n = v;
  }
  char rep[PATHCAP];
  path2(rep, N.state, "reports");
  DIR *d = opendir(rep);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d))) {
      unsigned long k;
      char tail[16];
      if (sscanf(e->d_name, "night-%lu.%15s", &k, tail) == 2 && k > n)
        n = k;
    }
    closedir(d);
  }
  return n + 1;
}

/* ---- one target --------------------------------------------------------------- */

static void tool(char *out, const char *t) {
  char b[PATHCAP];
  pathf(b, "%s/bin/simfuzz-%s", N.build, t);
  snprintf(out, PATHCAP, "%s", b);
}

/* The default job (`simfuzz-T fuzz`, the one campaign routine) for the
 * budget: the explorer, with libFuzzer beside it (restarted past each failure) when there
 * are two jobs or more, over the state's corpus, their failure files
 * landing in the inbox at once (each written whole: a night stopped
 * meanwhile keeps them), confirmed there by the engine that found them.
 * Roots (and libFuzzer's seed) start at a seed of this night's own, so
 * nights do not repeat each other. Its counts come back as JSON. */
static void campaign_target(target_stat *ts, unsigned long night, char *fz, char *corpus,
                            char *inbox) {
  char cli[PATHCAP], out[PATHCAP], log[PATHCAP], json[PATHCAP], a_time[32], a_jobs[32], a_seed[32];
  tool(cli, ts->name);
  pathf(out, "%s/%s.fuzz", N.work, ts->name);
  pathf(log, "%s/%s.fuzz.log", N.work, ts->name);
  pathf(json, "%s/%s.fuzz.json", N.work, ts->name);
  snprintf(a_time, sizeof a_time, "%lu", N.budget);
  snprintf(a_jobs, sizeof a_jobs, "%lu", N.jobs);
  snprintf(a_seed, sizeof a_seed, "%lu", (night % 1000000ul) * 1000000000ul);
  char *argv[] = {cli,        "fuzz",   "-o",     out,      "--corpus", corpus,   "--crashes",
                  inbox,      "--time", a_time,   "--jobs", a_jobs,     "--seed", a_seed,
                  "--engine", fz,       "--json", json,     "-q",       NULL};
  int st = run(argv, log, 0);
  if (WIFEXITED(st) && WEXITSTATUS(st) == EXIT_USAGE) /* it says why: failures it could not save */
    die("cannot save what the default job of %s found (disk full? see %s)", ts->name, log);
  if (!WIFEXITED(st) ||
      (WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != EXIT_FAILED && WEXITSTATUS(st) != EXIT_NONDET))
    note("  %s: the default job ended abnormally (see %s)", ts->name, log);
  size_t len;
  char *obj = (char *)cli_read_file_max(json, &len, 4096, 0);
  uint64_t unconfirmed = cli_json_count(obj, "unconfirmed");
  if (unconfirmed)
    note("  %s: %" PRIu64 " failure files did not fail again (moved to %s/unconfirmed)", ts->name,
         unconfirmed, out);
  ts->explore_runs = cli_json_count(obj, "roots") + cli_json_count(obj, "branches");
  ts->execs = cli_json_count(obj, "engine_execs") + ts->explore_runs;
  free(obj);
}

/* Which assertion sites (SF_SOMETIMES, SF_REACHABLE, SF_MAXIMIZE) the
 * corpus reaches (`simfuzz reach`): counts, and the never-reached names. */
static void reach_target(target_stat *ts) {
  char cli[PATHCAP], corpus[PATHCAP], log[PATHCAP];
  tool(cli, ts->name);
  pathf(corpus, "%s/corpus/%s", N.state, ts->name);
  pathf(log, "%s/%s.reach.json", N.work, ts->name);
  char *argv[] = {cli, "reach", "--json", corpus, NULL};
  run(argv, log, 1);
  size_t len;
  char *obj = (char *)cli_read_file_max(log, &len, SF_MAX_TEXT, 0);
  if (!obj)
    return;
  ts->sites = (unsigned)cli_json_count(obj, "sites");
  ts->reached = (unsigned)cli_json_count(obj, "reached");
  ts->never = (unsigned)cli_json_count(obj, "never");
  /* the names of the sites no input reached */
  const char *it = cli_json_value(obj, "assertions"), *e;
  while (it && (e = cli_json_next(&it)) && ts->nnames < MAX_NAMES) {
    char hits[32];
    if (cli_json_field(e, "hits", hits, sizeof hits) != 0 || strcmp(hits, "0") != 0)
      continue;
    cli_json_field(e, "name", ts->never_names[ts->nnames], sizeof ts->never_names[0]);
    ts->nnames++;
  }
  free(obj);
}

/* A target's name is what simfuzz_add_target allows (letters, digits,
 * _): a name that is a path, a line or a table cell of its own is none. */
static int target_name_ok(const char *t) {
  if (!*t)
    return 0;
  for (; *t; t++)
    if (!((*t >= 'a' && *t <= 'z') || (*t >= 'A' && *t <= 'Z') || (*t >= '0' && *t <= '9') ||
          *t == '_'))
      return 0;
  return 1;
}

/* Every path the night will make a directory of, for every target, is a
 * directory or absent: checked before any fuzzing, as known.tsv is, so a
 * damaged state fails at once rather than after the budget. */
static void check_layout(void) {
  static const char *const fmt[] = {"%s/corpus/%s", "%s/corpus/%s.old", "%s/corpus/.merge-%s",
                                    "%s/crashes/%s", "%s/inbox/%s"};
  for (int i = 0; i < N.ntargets; i++)
    for (size_t k = 0; k < sizeof fmt / sizeof fmt[0]; k++) {
      char p[PATHCAP];
      struct stat st;
      if (snprintf(p, sizeof p, fmt[k], N.state, N.t[i].name) >= (int)sizeof p)
        die("path too long: %s", N.state);
      if (lstat(p, &st) == 0 && !S_ISDIR(st.st_mode))
        die("cannot use %s: it is not a directory (move it away)", p);
    }
}

/* Copy one seed file into corpus directory ctx under its SHA-1. */
static unsigned seed_one(void *ctx, const char *path, const char *name) {
  (void)name;
  char hex[41], dst[PATHCAP];
  if (cli_sha1_file(path, hex) != 0)
    return 0;
  path2(dst, ctx, hex);
  put(path, dst);
  return 1;
}

/* A first night's corpus: the build's seed corpus of target t, each file
 * named by its SHA-1 as libFuzzer names inputs. */
static void seed_corpus(const char *t, const char *corpus) {
  char seeds[PATHCAP];
  pathf(seeds, "%s/corpus/%s", N.build, t);
  cli_each_file(seeds, seed_one, (void *)corpus);
}

/* Merge the corpus beside itself (one file system: the swap is two
 * renames); an input that fails during the merge is filed like any crash
 * (a_art: without a prefix libFuzzer writes it into the working
 * directory). A failed or damaged merge leaves the corpus unchanged. */
static void merge_corpus(const char *t, char *fz, char *a_art, char *corpus, char *merged,
                         const char *old) {
  char tmp[PATHCAP];
  phase("merge");
  if (mkdir(merged, 0777) != 0)
    die("cannot create %s: %s", merged, strerror(errno));
  pathf(tmp, "%s/%s.merge.log", N.work, t);
  char *merge_argv[] = {fz, "-merge=1", a_art, merged, corpus, NULL};
  int st = run(merge_argv, tmp, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    remove_tree(merged);
    die("corpus merge failed for %s (libFuzzer -merge=1: %s); the corpus is unchanged", t,
        WIFEXITED(st) ? "failed, disk full?" : "killed");
  }
  if (damaged(merged, 1, 1)) {
    remove_tree(merged);
    die("corpus merge for %s wrote damaged files (disk full?); the corpus is unchanged", t);
  }
  if (count_files(merged)) {
    if (rename(corpus, old) != 0 || rename(merged, corpus) != 0)
      die("cannot replace the corpus of %s: %s", t, strerror(errno));
    remove_tree(old);
  } else {
    remove_tree(merged);
  }
}

static void fuzz_target(target_stat *ts, unsigned long night) {
  const char *t = ts->name;
  char fz[PATHCAP], corpus[PATHCAP], old[PATHCAP], merged[PATHCAP], inbox[PATHCAP];
  pathf(fz, "%s/fuzz/%s_fuzzer", N.build, t);
  pathf(corpus, "%s/corpus/%s", N.state, t);
  pathf(old, "%s.old", corpus);
  pathf(merged, "%s/corpus/.merge-%s", N.state, t);
  pathf(inbox, "%s/inbox/%s", N.state, t);
  /* finish a corpus swap an earlier night left half done (renames only) */
  if (is_dir(old)) {
    if (is_dir(corpus))
      remove_tree(old);
    else if (rename(old, corpus) != 0)
      die("cannot restore %s: %s", corpus, strerror(errno));
  }
  remove_tree(merged);
  mkdirs(corpus);
  mkdirs(inbox);
  cli_remove_stale_tmp(corpus); /* writes a stopped night cut short */
  cli_remove_stale_tmp(inbox);
  unsigned crash_before = count_files(inbox);
  if (count_files(corpus) == 0) /* a first night: the seed corpus */
    seed_corpus(t, corpus);
  ts->before = count_files(corpus);
  note("night %lu: fuzzing %s for %lus with %lu workers (corpus %u)", night, t, N.budget, N.jobs,
       ts->before);
  phase("fuzz");
  campaign_target(ts, night, fz, corpus, inbox);
  /* a write cut short by a full disk leaves a file whose name no longer
   * matches its contents: drop it (a crash file cut short may not fail any
   * more; it will be found again) */
  damaged(corpus, 0, 0);
  damaged(inbox, 0, 0);
  char a_art[PATHCAP]; /* an input that fails in the merge: filed like any crash */
  char abs[PATHCAP];   /* absolute: written from inside a run, which may have moved */
  pathf(a_art, "-artifact_prefix=%s/", cli_absolute(inbox, abs, sizeof abs));
  merge_corpus(t, fz, a_art, corpus, merged, old);
  ts->after = count_files(corpus);
  reach_target(ts);
  unsigned now = count_files(inbox);
  ts->crashes = now > crash_before ? now - crash_before : 0;
  note("  %s: %" PRIu64 " executions, corpus %u -> %u, %u crash files", t, ts->execs, ts->before,
       ts->after, ts->crashes);
}

/* The files of a new failure in STATE/crashes/<target>/, after its id: the
 * crash file, the minimized scenario with its text and timeline (written by
 * `minimize -o`), the minimizer's log. */
enum { FILED_PER_FAILURE = 5 };
static const char *const filed_ext[FILED_PER_FAILURE] = {".input", ".pb", ".pb.txt",
                                                         ".pb.timeline.txt", ".minimize.log"};

/* Triage, deduplicate and (new ones) minimize the crash files waiting in
 * a target's inbox. */
/* File a new failure of target t (its tool cli) with signature sig, from
 * crash file f: the next free id, the crash file, its minimized scenario
 * (minimization is part of the night) and that scenario's triage line. */
static void file_failure(const char *t, char *cli, const char *f, const char *sig) {
  new_failure *fr = cli_grow(N.fresh, &N.fresh_cap, N.nfresh, sizeof *N.fresh, 8);
  if (!fr)
    die("out of memory");
  N.fresh = fr;
  new_failure *nf = &N.fresh[N.nfresh++];
  memset(nf, 0, sizeof *nf);
  snprintf(nf->target, sizeof nf->target, "%s", t);
  snprintf(nf->sig, sizeof nf->sig, "%s", sig);
  char dir[PATHCAP], files[FILED_PER_FAILURE][PATHCAP];
  char *input = files[0], *min = files[1], *log = files[4];
  pathf(dir, "%s/crashes/%s", N.state, t);
  mkdirs(dir);
  for (;; N.next_id++) { /* an id none of whose files exist */
    snprintf(nf->id, sizeof nf->id, "f%04lu", N.next_id);
    int free_id = 1;
    for (int k = 0; k < FILED_PER_FAILURE; k++) {
      if (snprintf(files[k], PATHCAP, "%s/%s%s", dir, nf->id, filed_ext[k]) >= PATHCAP)
        die("path too long: %s", dir);
      free_id &= access(files[k], F_OK) != 0 && errno == ENOENT;
    }
    if (free_id)
      break;
  }
  N.next_id++;
  for (int k = 0; k < FILED_PER_FAILURE; k++)
    remember(&N.filed, &N.nfiled, &N.filed_cap, files[k]);
  add_known(t, sig, nf->id);
  put(f, input);
  note("new failure in %s: %s; minimizing", t, sig);
  /* minimization is part of the night: 100 tries per second of budget,
   * 100 to 4000 (minimize's own default) */
  char tries[24];
  unsigned long nt = N.budget < 40 ? N.budget * 100 : 4000;
  snprintf(tries, sizeof tries, "%lu", nt < 100 ? 100 : nt);
  char *mz[] = {cli, "minimize", "-q", "--binary", "--max-tries", tries, input, "-o", min, NULL};
  int st = run(mz, log, 0);
  snprintf(nf->scenario, sizeof nf->scenario, "%s",
           WIFEXITED(st) && WEXITSTATUS(st) == 0 ? min : input);
  char *chk[] = {cli, "triage", "--json", "--binary", nf->scenario, NULL};
  if (first_line(chk, nf->triage, sizeof nf->triage) != 0)
    snprintf(nf->triage, sizeof nf->triage, "{}");
}

static void triage_target(const char *t) {
  char inbox[PATHCAP], cli[PATHCAP];
  pathf(inbox, "%s/inbox/%s", N.state, t);
  tool(cli, t);
  DIR *d = opendir(inbox);
  if (!d)
    return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.')
      continue;
    char f[PATHCAP], line[4096], sig[512] = "", status[32] = "";
    path2(f, inbox, e->d_name);
    if (!cli_regular_file(f)) { /* a FIFO or a link is never opened */
      note("  %s: skipping %s: not a regular file", t, f);
      continue;
    }
    char(*dn)[PATHCAP] = cli_grow(N.done, &N.done_cap, N.ndone, sizeof *N.done, 64);
    if (!dn)
      die("out of memory");
    N.done = dn;
    snprintf(N.done[N.ndone++], PATHCAP, "%s", f);
    char *tri[] = {cli, "triage", "--json", "--binary", f, NULL};
    int judged = first_line(tri, line, sizeof line) == 0 &&
                 cli_json_field(line, "signature", sig, sizeof sig) == 0 &&
                 cli_json_field(line, "status", status, sizeof status) == 0;
    if (judged && !strcmp(status, "ok") && !strncmp(e->d_name, "diverged-", 9)) {
      /* the explorer saw it fail, and its re-run from the file did not:
       * the target is not deterministic, a failure of its own */
      snprintf(sig, sizeof sig, "nondeterminism: failed in the explorer, passes when re-run");
    } else if (!judged || !strcmp(status, "ok")) {
      N.seen++; /* passes on replay: a flaky input (timeout, OOM under load) */
      continue;
    }
    if (is_known(t, sig)) {
      N.seen++;
      continue;
    }
    file_failure(t, cli, f, sig);
  }
  closedir(d);
}

/* ---- reports ------------------------------------------------------------------ */

static void field(const new_failure *nf, const char *key, char *out, size_t cap) {
  if (cli_json_field(nf->triage, key, out, cap) != 0)
    snprintf(out, cap, "?");
}

static FILE *open_work(const char *name, char *path) {
  path2(path, N.work, name);
  FILE *f = fopen(path, "w");
  if (!f)
    die("cannot write %s: %s", path, strerror(errno));
  return f;
}

static void close_work(FILE *f, const char *path) {
  int err = ferror(f) || fflush(f) != 0 || fsync(fileno(f)) != 0;
  err |= fclose(f) != 0;
  if (err)
    die("cannot write %s: %s", path, errno ? strerror(errno) : "write error");
}

static void triage_object(cli_json *j, const new_failure *nf) {
  static const char *const keys[] = {"status", "signature", "invariant",     "node",   "time_ns",
                                     "events", "hash",      "deterministic", "message"};
  cj_obj(j);
  for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
    char v[1024];
    field(nf, keys[k], v, sizeof v);
    cj_key(j, keys[k]);
    if (!strcmp(keys[k], "node") || !strcmp(keys[k], "time_ns") || !strcmp(keys[k], "events"))
      cj_int(j, strtoll(v, NULL, 10));
    else if (!strcmp(keys[k], "deterministic"))
      cj_bool(j, !strcmp(v, "true"));
    else
      cj_str(j, v);
  }
  cj_end_obj(j);
}

/* The source file and line of a failure's check site, relative to the
 * source tree, for SARIF; else the scenario file. */
static void site_of(const new_failure *nf, char *file, size_t cap, long *line) {
  const char *at = strstr(nf->sig, " at ");
  const char *colon = at ? strrchr(at, ':') : NULL;
  if (!strncmp(nf->sig, "invariant ", 10) && at && colon && colon[1]) {
    snprintf(file, cap, "%.*s", (int)(colon - at - 4), at + 4);
    *line = strtol(colon + 1, NULL, 10);
    return;
  }
  snprintf(file, cap, "%s", nf->scenario);
  *line = 1;
}

/* The Markdown report's table of targets and the sites never reached. */
static void md_targets(FILE *f, unsigned long night, uint64_t execs) {
  fprintf(f, "# simfuzz nightly report, night %lu\n\n", night);
  fprintf(f,
          "Targets: %d; budget %lus each with %lu workers;\n%" PRIu64 " executions in total.\n\n",
          N.ntargets, N.budget, N.jobs, execs);
  fprintf(f, "| target | executions (explorer) | corpus (before → after) | crash files | "
             "assertion sites reached |\n");
  fprintf(f, "| --- | ---: | ---: | ---: | ---: |\n");
  for (int i = 0; i < N.ntargets; i++)
    fprintf(f, "| %s | %" PRIu64 " (%" PRIu64 ") | %u → %u | %u | %u of %u |\n", N.t[i].name,
            N.t[i].execs, N.t[i].explore_runs, N.t[i].before, N.t[i].after, N.t[i].crashes,
            N.t[i].reached, N.t[i].sites);
  fputc('\n', f);
  int never = 0;
  for (int i = 0; i < N.ntargets; i++)
    if (N.t[i].never) {
      if (!never++)
        fprintf(f, "Assertion sites no input of the corpus has reached (`simfuzz reach`):\n\n");
      fprintf(f, "- %s:", N.t[i].name);
      for (unsigned k = 0; k < N.t[i].nnames; k++)
        fprintf(f, "%s \"%s\"", k ? "," : "", N.t[i].never_names[k]);
      fprintf(f, "%s\n", N.t[i].never > N.t[i].nnames ? ", ..." : "");
    }
  if (never)
    fputc('\n', f);
}

/* The Markdown report's new failures, each with its replay command. */
static void md_failures(FILE *f) {
  if (!N.nfresh) {
    fprintf(f, "**Nothing new.** %u crash files matched known failures.\n", N.seen);
  } else {
    fprintf(f, "## %zu new failure(s)\n", N.nfresh);
    for (size_t i = 0; i < N.nfresh; i++) {
      const new_failure *nf = &N.fresh[i];
      char inv[256], msg[1024], node[32], tns[32], det[16];
      field(nf, "invariant", inv, sizeof inv);
      field(nf, "message", msg, sizeof msg);
      field(nf, "node", node, sizeof node);
      field(nf, "time_ns", tns, sizeof tns);
      field(nf, "deterministic", det, sizeof det);
      for (char *p = msg; *p; p++) /* one line in Markdown */
        if (*p == '\n' || *p == '\t')
          *p = ' ';
      fprintf(f, "\n### %s: %s (%s)\n\n", nf->target, inv, nf->id);
      fprintf(f, "- signature: `%s`\n- message: %s\n", nf->sig, msg);
      fprintf(f, "- node n%s at virtual time %s ns\n", node, tns);
      fprintf(f, "- deterministic (two runs in one process, one in another): %s\n", det);
      fprintf(f, "- minimized scenario: `%s` (text: `%s.txt`, timeline: `%s.timeline.txt`)\n",
              nf->scenario, nf->scenario, nf->scenario);
      fprintf(f, "- replay: `%s/bin/simfuzz --target %s replay %s`\n", N.build, nf->target,
              nf->scenario);
    }
    if (N.seen)
      fprintf(f, "\n%u more crash files matched known failures.\n", N.seen);
  }
}

static void report_json(unsigned long night, uint64_t execs) {
  char js[PATHCAP];
  FILE *f = open_work("report.json", js);
  cli_json j;
  cj_begin(&j, f);
  cj_obj(&j);
  cj_kint(&j, "night", (int64_t)night);
  cj_kint(&j, "budget_s", (int64_t)N.budget);
  cj_kint(&j, "jobs", (int64_t)N.jobs);
  cj_kint(&j, "executions", (int64_t)execs);
  cj_karr(&j, "targets");
  for (int i = 0; i < N.ntargets; i++) {
    cj_obj(&j);
    cj_kstr(&j, "target", N.t[i].name);
    cj_kint(&j, "executions", (int64_t)N.t[i].execs);
    cj_kint(&j, "corpus_before", N.t[i].before);
    cj_kint(&j, "corpus_after", N.t[i].after);
    cj_kint(&j, "crash_files", N.t[i].crashes);
    cj_kint(&j, "explore_runs", (int64_t)N.t[i].explore_runs);
    cj_kint(&j, "assertion_sites", N.t[i].sites);
    cj_kint(&j, "sites_reached", N.t[i].reached);
    cj_karr(&j, "sites_never_reached");
    for (unsigned k = 0; k < N.t[i].nnames; k++)
      cj_str(&j, N.t[i].never_names[k]);
    cj_end_arr(&j);
    cj_end_obj(&j);
  }
  cj_end_arr(&j);
  cj_kint(&j, "known_matches", N.seen);
  cj_karr(&j, "new");
  for (size_t i = 0; i < N.nfresh; i++) {
    const new_failure *nf = &N.fresh[i];
    char replay[2 * PATHCAP];
    snprintf(replay, sizeof replay, "%s/bin/simfuzz --target %s replay %s", N.build, nf->target,
             nf->scenario);
    cj_obj(&j);
    cj_kstr(&j, "target", nf->target);
    cj_kstr(&j, "id", nf->id);
    cj_kstr(&j, "signature", nf->sig);
    cj_kstr(&j, "scenario", nf->scenario);
    cj_kstr(&j, "replay", replay);
    cj_key(&j, "triage");
    triage_object(&j, nf);
    cj_end_obj(&j);
  }
  cj_end_arr(&j);
  cj_end_obj(&j);
  fputc('\n', f);
  close_work(f, js);
}

/* One new failure as a SARIF result: its invariant's rule, the check site
 * as its location, the signature as its fingerprint. */
static void sarif_result(cli_json *jp, const new_failure *nf) {
  char inv[256], msg[1024], text[2 * PATHCAP], file[PATHCAP], fp[1024];
  long line;
  field(nf, "invariant", inv, sizeof inv);
  field(nf, "message", msg, sizeof msg);
  snprintf(text, sizeof text, "%s: %s (replay: simfuzz --target %s replay %s)", nf->target, msg,
           nf->target, nf->scenario);
  site_of(nf, file, sizeof file, &line);
  snprintf(fp, sizeof fp, "%s %s", nf->target, nf->sig);
  cj_obj(jp);
  cj_kstr(jp, "ruleId", inv);
  cj_kstr(jp, "level", "error");
  cj_kobj(jp, "message");
  cj_kstr(jp, "text", text);
  cj_end_obj(jp);
  cj_karr(jp, "locations");
  cj_obj(jp);
  cj_kobj(jp, "physicalLocation");
  cj_kobj(jp, "artifactLocation");
  cj_kstr(jp, "uri", file);
  cj_end_obj(jp);
  cj_kobj(jp, "region");
  cj_kint(jp, "startLine", line > 0 ? line : 1);
  cj_end_obj(jp);
  cj_end_obj(jp);
  cj_end_obj(jp);
  cj_end_arr(jp);
  cj_kobj(jp, "partialFingerprints");
  cj_kstr(jp, "simfuzzSignature", fp);
  cj_end_obj(jp);
  cj_end_obj(jp);
}

static void report_sarif(void) {
  char sa[PATHCAP];
  FILE *f = open_work("report.sarif", sa);
  cli_json j;
  cj_begin(&j, f);
  cj_obj(&j);
  cj_kstr(&j, "version", "2.1.0");
  cj_kstr(&j, "$schema", "https://json.schemastore.org/sarif-2.1.0.json");
  cj_karr(&j, "runs");
  cj_obj(&j);
  cj_kobj(&j, "tool");
  cj_kobj(&j, "driver");
  cj_kstr(&j, "name", "simfuzz");
  cj_kstr(&j, "informationUri", "https://github.com/simfuzz/simfuzz");
  cj_karr(&j, "rules");
  cj_end_arr(&j);
  cj_end_obj(&j);
  cj_end_obj(&j);
  cj_karr(&j, "results");
  for (size_t i = 0; i < N.nfresh; i++)
    sarif_result(&j, &N.fresh[i]);
  cj_end_arr(&j);
  cj_end_obj(&j);
  cj_end_arr(&j);
  cj_end_obj(&j);
  fputc('\n', f);
  close_work(f, sa);
}

/* The night's reports, in the work directory: Markdown, JSON and SARIF. */
static void write_reports(unsigned long night, uint64_t execs) {
  char md[PATHCAP];
  FILE *f = open_work("report.md", md);
  md_targets(f, night, execs);
  md_failures(f);
  close_work(f, md);
  report_json(night, execs);
  report_sarif();
}

/* ---- the command -------------------------------------------------------------- */

static int usage(void) {
  fprintf(stderr, "%s",
          "usage: simfuzz nightly [--state DIR] [--build DIR] [--budget SECONDS] "
          "[--jobs N] [--targets \"T1 T2 ...\"]\n(see: simfuzz help nightly)\n");
  return EXIT_USAGE;
}

/* The build directory of this binary (BUILD/bin/simfuzz), or "". */
static void own_build(char *out, size_t cap) {
  char self[PATHCAP];
  ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
  out[0] = 0;
  if (k <= 0)
    return;
  self[k] = 0;
  char *s = strrchr(self, '/');
  if (!s)
    return;
  *s = 0;
  s = strrchr(self, '/');
  if (s && !strcmp(s, "/bin")) {
    *s = 0;
    snprintf(out, cap, "%s", self);
  }
}

/* The night's temporary directory (N.work), which libFuzzer's temporary
 * files go to as well; sanitizer options by default. */
static void make_work_dir(void) {
  const char *tmpdir = getenv("TMPDIR");
  snprintf(N.work, sizeof N.work, "%s/simfuzz-nightly-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
  if (!mkdtemp(N.work)) {
    N.work[0] = 0;
    die("cannot create a temporary directory: %s", strerror(errno));
  }
  setenv("TMPDIR", N.work, 1); /* libFuzzer's temporary files */
  if (!getenv("ASAN_OPTIONS"))
    setenv("ASAN_OPTIONS", "detect_leaks=1:symbolize=0", 1);
  SIM_ASSERT(N.work[0] != 0);
}

/* Past a file-size limit, writes fail with EFBIG; SIGINT and SIGTERM stop
 * the night cleanly (cli_catch_stop: cli_stop_signal). */
static void catch_signals(void) {
  signal(SIGXFSZ, SIG_IGN); /* past a file-size limit, writes fail with EFBIG */
  struct sigaction old_stop[2];
  cli_catch_stop(old_stop); /* the night ends where it is: nothing to restore */
}

/* The night's targets: those named (--targets), else every fuzzer of the
 * build, sorted; each must have its fuzzer and its tool. */
static void find_targets(const char *targets) {
  char p[PATHCAP];
  pathf(p, "%s/fuzz", N.build);
  if (!targets) { /* every fuzzer of the build */
    DIR *d = opendir(p);
    struct dirent *e;
    while (d && (e = readdir(d))) {
      size_t n = strlen(e->d_name);
      if (n <= 7 || strcmp(e->d_name + n - 7, "_fuzzer") || N.ntargets >= MAX_TARGETS)
        continue;
      char *name = N.t[N.ntargets].name;
      snprintf(name, sizeof N.t[0].name, "%.*s", (int)(n - 7), e->d_name);
      if (target_name_ok(name))
        N.ntargets++;
      else
        note("skipping %s/%s: not a simfuzz target's fuzzer (a name of letters, digits and _)", p,
             e->d_name);
    }
    if (d)
      closedir(d);
    /* sorted: the same order every night */
    for (int a = 1; a < N.ntargets; a++)
      for (int b = a; b > 0 && strcmp(N.t[b - 1].name, N.t[b].name) > 0; b--) {
        target_stat tmp = N.t[b];
        N.t[b] = N.t[b - 1];
        N.t[b - 1] = tmp;
      }
  } else {
    for (const char *q = targets; *q;) {
      size_t n = strcspn(q, " \t,");
      if (n && N.ntargets < MAX_TARGETS)
        snprintf(N.t[N.ntargets++].name, sizeof N.t[0].name, "%.*s", (int)n, q);
      q += n;
      q += strspn(q, " \t,");
    }
  }
  if (!N.ntargets)
    die("no fuzzers in %s (build with clang, or give --build)", p);
  for (int i = 0; i < N.ntargets; i++)
    if (!target_name_ok(N.t[i].name))
      die("'%s' is not a target name (letters, digits and _)", N.t[i].name);
  for (int i = 0; i < N.ntargets; i++) {
    char fz[PATHCAP], cli[PATHCAP];
    pathf(fz, "%s/fuzz/%s_fuzzer", N.build, N.t[i].name);
    tool(cli, N.t[i].name);
    if (access(fz, X_OK) != 0 || access(cli, X_OK) != 0)
      die("no fuzzer or tool for target %s in %s", N.t[i].name, N.build);
  }
}

/* The state directory: created, locked (the lock's descriptor is
 * returned), its layout and files checked before any fuzzing. */
static int open_state(void) {
  static char state_buf[PATHCAP];
  snprintf(state_buf, sizeof state_buf, "%s", N.state);
  N.state = state_buf;
  mkdirs(N.state);
  int lock = open(N.state, O_RDONLY | O_DIRECTORY);
  if (lock < 0)
    die("cannot create %s: %s", N.state, strerror(errno));
  if (flock(lock, LOCK_EX | LOCK_NB) != 0)
    die("cannot use %s: another night is running on it", N.state);
  char sub[PATHCAP];
  const char *dirs[] = {"corpus", "crashes", "reports", "inbox"};
  for (size_t i = 0; i < 4; i++) {
    path2(sub, N.state, dirs[i]);
    mkdirs(sub);
  }
  path2(sub, N.state, ".probe");
  int pf = open(sub, O_WRONLY | O_CREAT | O_TRUNC, 0666);
  if (pf < 0)
    die("cannot write to %s: %s", N.state, strerror(errno));
  close(pf);
  unlink(sub);
  read_known();
  check_layout();
  return lock;
}

/* Stage the known signatures, the counter and the reports; then publish
 * them all together, and empty the inbox of the files reported. */
static void save_and_publish(unsigned long night) {
  phase("state");
  char known_w[PATHCAP], nights_w[PATHCAP];
  FILE *kf = open_work("known.tsv", known_w);
  for (size_t i = 0; i < N.nknown; i++) {
    write_field(kf, N.known[i].target);
    fputc('\t', kf);
    write_field(kf, N.known[i].sig);
    fprintf(kf, "%s%s\n", N.known[i].id[0] ? "\t" : "", N.known[i].id);
  }
  close_work(kf, known_w);
  (void)nights_w;
  FILE *nf = open_work("nights", nights_w);
  fprintf(nf, "%lu\n", night);
  close_work(nf, nights_w);
  phase("publish");
  const char *ext[] = {"md", "json", "sarif"};
  char dst[3][2][PATHCAP], src[3][PATHCAP], kdst[PATHCAP], ndst[PATHCAP];
  for (int i = 0; i < 3; i++) {
    char name[64];
    snprintf(name, sizeof name, "report.%s", ext[i]);
    path2(src[i], N.work, name);
    snprintf(dst[i][0], PATHCAP, "%s/reports/night-%lu.%s", N.state, night, ext[i]);
    snprintf(dst[i][1], PATHCAP, "%s/reports/latest.%s", N.state, ext[i]);
    stage(src[i], dst[i][0]);
    stage(src[i], dst[i][1]);
  }
  path2(kdst, N.state, "known.tsv");
  path2(ndst, N.state, "nights");
  stage(known_w, kdst);
  stage(nights_w, ndst);
  for (int i = 0; i < 3; i++) {
    publish(dst[i][0]);
    publish(dst[i][1]);
  }
  publish(kdst);
  N.nfiled = 0; /* known.tsv names the new failures: their files stay */
  publish(ndst);
  /* reported: the crash files leave the inbox (a new failure's input is
   * kept in crashes/) */
  for (size_t i = 0; i < N.ndone; i++)
    unlink(N.done[i]);
}

#define HELP_NIGHTLY                                                                               \
  "nightly : fuzz every target for a budget, report what is new\n\n"                               \
  "SYNOPSIS\n"                                                                                     \
  "  nightly [--state DIR] [--build DIR] [--budget SECONDS] [--jobs N] [--targets \"T1 T2\"]\n\n"  \
  "DESCRIPTION\n"                                                                                  \
  "  For each target of the build (BUILD/fuzz/<t>_fuzzer and BUILD/bin/simfuzz-<t>): run\n"        \
  "  the default job (see fuzz) for the budget on N jobs over STATE's corpus, libFuzzer\n"         \
  "  beside the explorer (one job: in turn), merge the corpus, then\n"                             \
  "  triage every crash file, deduplicate it on the exact (target, signature) key against\n"       \
  "  STATE/known.tsv, minimize each new failure into STATE/crashes/<t>/<id>.pb (at most\n"         \
  "  100 tries per second of budget, 100 to 4000: a short night stays short), and write\n"         \
  "  STATE/reports/night-<n>.{md,json,sarif} (and latest.*). Crash files wait in\n"                \
  "  STATE/inbox/ until a night has reported them. The state is locked for the night; a\n"         \
  "  failed or stopped night (full disk, SIGINT, SIGTERM) leaves it as it was, reaps every\n"      \
  "  child, and the next night resumes. Defaults: STATE out/nightly, BUILD the build this\n"       \
  "  binary belongs to, budget 600 s, N the number of cores.\n\n"                                  \
  "EXIT STATUS\n"                                                                                  \
  "  0 nothing new, 1 new failures (see the report), 2 the job failed (one 'nightly: ...'\n"       \
  "  line says why), 128+N stopped by signal N\n"

static int cmd_nightly(int argc, char **argv) {
  static char build_buf[PATHCAP];
  const char *targets = NULL;
  N.state = "out/nightly";
  own_build(build_buf, sizeof build_buf);
  N.build = build_buf[0] ? build_buf : "build/nightly";
  N.budget = 600;
  long nc = sysconf(_SC_NPROCESSORS_ONLN);
  N.jobs = nc > 0 ? (unsigned long)nc : 2;
  uint64_t budget = N.budget, jobs = N.jobs;
  int no_build = 0; /* scripts/nightly.sh's option, harmless here */
  const cli_opt opts[] = {CLI_STR("--state", NULL, &N.state),
                          CLI_STR("--build", NULL, &N.build),
                          CLI_STR("--targets", NULL, &targets),
                          CLI_U64("--budget", &budget, 1, 100000000),
                          CLI_U64("--jobs", &jobs, 1, 100000000),
                          CLI_FLAG("--no-build", NULL, &no_build),
                          CLI_END};
  int npos = cli_parse("nightly", argc, argv, opts);
  if (npos < 0) /* one line says why */
    return EXIT_USAGE;
  if (npos > 0) {
    cli_error("nightly: unknown argument '%s'", argv[0]);
    return usage();
  }
  N.budget = (unsigned long)budget;
  N.jobs = (unsigned long)jobs;
  catch_signals();

  find_targets(targets);

  char sub[PATHCAP];
  int lock = open_state();
  state_file("nights", sub);
  unsigned long night = night_number();

  make_work_dir();

  uint64_t execs = 0;
  for (int i = 0; i < N.ntargets; i++) {
    fuzz_target(&N.t[i], night);
    execs += N.t[i].execs;
  }
  phase("crashes");
  for (int i = 0; i < N.ntargets; i++)
    triage_target(N.t[i].name);
  phase("report");
  write_reports(night, execs);

  save_and_publish(night);
  note("night %lu: %zu new failure(s), %u known; report: %s/reports/night-%lu.md", night, N.nfresh,
       N.seen, N.state, night);
  cleanup();
  free(N.known);
  free(N.fresh);
  free(N.done);
  close(lock);
  return N.nfresh ? EXIT_FAILED : EXIT_OK;
}

const cli_command cli_cmd_nightly = {"nightly", cmd_nightly, 0, HELP_NIGHTLY};
