/* simfuzz replay and check-determinism. */
#define _DEFAULT_SOURCE /* on_exit */
#include "cli.h"
#include "run/hooks.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- timeline filters ---------------------------------------------------- */

typedef struct {
  uint64_t from, to;
  uint64_t nodes; /* bit set; 0 = all */
  uint64_t kinds; /* bit set of sim_ev_kind; 0 = all */
  int print;
  FILE *out;
  uint64_t shown;
} timeline;

static uint64_t bit(unsigned k) {
  return 1ull << k;
}

/* The kinds of a --kinds group: SIM_EV_KINDS's groups, and "faults". */
static uint64_t group_kinds(const char *g) {
  static const struct {
    const char *name;
    unsigned bit;
  } groups[] = {{"messages", SIM_EVG_MESSAGES},
                {"conn", SIM_EVG_CONN},
                {"disk", SIM_EVG_DISK},
                {"nodes", SIM_EVG_NODES}};
  uint64_t m = 0;
  if (!strcmp(g, "faults"))
    return SIM_EV_FAULT_MASK & ~bit(SIM_EV_FAIL);
  for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++)
    if (!strcmp(g, groups[i].name))
      for (unsigned k = 1; k < SIM_EV__COUNT; k++)
        if (sim_ev_groups(k) & groups[i].bit)
          m |= bit(k);
  return m;
}

/* --kinds K,...: event kinds and groups, into a mask (a cli_opt's fn). */
static int parse_kinds(const char *cmd, const char *list, void *dst) {
  uint64_t *mask = dst;
  (void)cmd;
  char buf[512];
  snprintf(buf, sizeof buf, "%s", list);
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    uint64_t m = group_kinds(tok);
    for (unsigned k = 1; k < SIM_EV__COUNT && !m; k++)
      if (!strcmp(sim_ev_name(k), tok))
        m = bit(k);
    if (!m)
      return cli_error("unknown event kind '%s' (kinds: send, deliver, drop, timer, crash, "
                       "conn-reset, disk-sync, ...; groups: messages, faults, conn, disk, nodes)",
                       tok),
             -1;
    *mask |= m;
  }
  return 0;
}

/* --node N (repeatable): a bit in a mask of nodes (a cli_opt's fn). */
static int parse_node(const char *cmd, const char *v, void *dst) {
  uint64_t n;
  if (cli_parse_u64(v, &n) < 0 || n >= SIM_MAX_NODES)
    return cli_error("%s: bad node '%s'", cmd, v), -1;
  *(uint64_t *)dst |= 1ull << n;
  return 0;
}

/* The run replay is in, for the reports of a run that the system under test
 * ends: the file being replayed while the system runs (else NULL), its
 * world (set at every record of the first run, NULL between runs, in the
 * second, untraced run and once the first run is torn down, when the
 * world's events may be freed: torn_down says so) and whether to print the
 * crash report. A run that the program ends with exit() is a crash of the
 * run, "exit N", whose status is 1 like any failure's; 3, say, would read
 * as a determinism mismatch. */
static struct {
  const char *volatile input;
  const sim_world *volatile w;
  volatile int report, second, torn_down;
} crash;

static void on_record(void *ctx, const sim_world *w, const sim_trace_rec *r, const void *payload,
                      size_t len) {
  timeline *tl = ctx;
  crash.w = w;
  if (!tl->print)
    return;
  if (r->kind != SIM_EV_FAIL) {
    if (r->time < tl->from || r->time > tl->to)
      return;
    if (tl->nodes && (r->node < 0 || !(tl->nodes >> r->node & 1)) &&
        (r->peer < 0 || !(tl->nodes >> r->peer & 1)))
      return;
    if (tl->kinds && !(tl->kinds >> r->kind & 1))
      return;
  }
  char line[SIM_OUTPUT_MAX * 4 + 128]; /* an output line, each byte escaped */
  sim_trace_format_payload(w, r, payload, len, line, sizeof line);
  fprintf(tl->out, "%s\n", line);
  tl->shown++;
}

/* The tool's standard output and error as replay found them, kept on
 * copies numbered from 100 (clear of the numbers the system under test's
 * files take): a system that sends its own elsewhere during the run, as a
 * daemon does (/dev/null, a log), must not take the run's report with
 * them. Once the run is over (its report, a crash's, an exit()'s, the
 * summary), the copies go back over 1 and 2, if the system changed those
 * and the copies are still the copies (it may have closed them too).
 * Async-signal-safe. */
static struct {
  int fd[2];
  struct stat st[2];
} kept_stdio = {{-1, -1}, {{0}, {0}}};

static void stdio_keep(void) {
  for (int i = 0; i < 2; i++)
    if (kept_stdio.fd[i] < 0 && fstat(i + 1, &kept_stdio.st[i]) == 0)
      kept_stdio.fd[i] = fcntl(i + 1, F_DUPFD_CLOEXEC, 100);
}

static void stdio_back(void) {
  for (int i = 0; i < 2; i++) {
    uint64_t dev = (uint64_t)kept_stdio.st[i].st_dev, ino = (uint64_t)kept_stdio.st[i].st_ino;
    if (kept_stdio.fd[i] >= 0 && !sf__fd_is(i + 1, dev, ino) &&
        sf__fd_is(kept_stdio.fd[i], dev, ino))
      dup2(kept_stdio.fd[i], i + 1);
  }
}

typedef struct {
  const sf_scenario *s;
  const char *input;
  int report;
} finish_ctx;

static void finish(void *p, sim_world *w, const sf_result *r) {
  finish_ctx *c = p;
  if (r->failed && c->report) {
    stdio_back();
    fflush(stdout);
    sf_print_report(cli_target, c->s, r, w, stdout, c->input, 30);
  }
  crash.w = NULL; /* the teardown follows: the world is being destroyed */
  crash.torn_down = 1;
}

static void summary(const char *name, cli_input_kind k, const sf_result *r) {
  printf("%s: %s; %d nodes, %" PRIu32 " steps run (%" PRIu32 " faults, %" PRIu32
         " client ops), %" PRIu64 " events, t=%" PRIu64 ".%06" PRIu64 "s, hash %016" PRIx64
         " -> %s%s\n",
         name, cli_kind_name(k), r->nodes, r->steps_run, r->fault_steps_run, r->ops_run,
         r->stats.events, (uint64_t)(r->end_time / SIM_NS_PER_S),
         (uint64_t)(r->end_time % SIM_NS_PER_S / 1000), r->hash,
         r->failed ? (r->failure.is_liveness ? "FAILED liveness" : "FAILED ") : "ok",
         r->failed && !r->failure.is_liveness ? r->failure.name : "");
}

#if defined(__GLIBC__)
static void on_program_exit(int status, void *arg) {
  (void)arg;
  if (!crash.input)
    return;
  stdio_back();
  fflush(stdout);
  fprintf(stderr,
          "%s: FAILED crash: exit %d (the system under test called exit() during the run)\n",
          crash.input, status);
  _exit(EXIT_FAILED);
}
#endif

/* The system under test crashed the replay (sig; 0: a sanitizer's error,
 * already reported): the timeline so far, the crash report of the run, a
 * summary line, then the process dies of the signal. */
static void on_crash(int sig) {
  char buf[300];
  const char *where = sig ? cli_crash_site(buf, sizeof buf) : NULL;
  const char *input = crash.input;
  if (input)
    stdio_back();
  fflush(stdout);
  if (!input)
    return; /* not inside a run: the tool's own crash */
  const char *when = crash.second      ? " (in the second run, which the first survived: run "
                                         "check-determinism on it)"
                     : crash.torn_down ? " (in the run's teardown, after its last event)"
                                       : "";
  if (crash.report && !crash.second && !crash.torn_down)
    sf_print_crash_report(cli_target, crash.w, sig, where, stdout, input, 30);
  else if (crash.report && !crash.second) { /* the events are gone with the world */
    if (sig)
      printf("==simfuzz== CRASH in target %s: signal %d in %s%s\n", cli_target->name, sig,
             where ? where : "?", when);
    else
      printf("==simfuzz== CRASH in target %s: the sanitizer's error above%s\n", cli_target->name,
             when);
    printf("==simfuzz== replay: simfuzz-%s replay %s\n", cli_target->name, input);
  }
  fflush(stdout);
  if (sig)
    fprintf(stderr, "%s: FAILED crash: signal %d in %s%s\n", input, sig, where ? where : "?", when);
  else
    fprintf(stderr, "%s: FAILED crash: the sanitizer's error above%s\n", input, when);
  fflush(stderr);
}

#if defined(SF_ASAN)
void __sanitizer_set_death_callback(void (*callback)(void));
#endif

static void on_sanitizer_death(void) {
  on_crash(0);
}

static void on_crash_signal(int sig) {
  on_crash(sig);
  signal(sig, SIG_DFL);
  raise(sig);
}

/* Call on_signal when the system under test kills the process (replay's
 * crash report, check-determinism's progress): at abort() always, at the
 * other deadly signals when no sanitizer reports them (its death callback,
 * on_sanitizer, follows its report then), on a stack of their own so that
 * a stack overflow is caught too. */
static void catch_crashes(void (*on_signal)(int), void (*on_sanitizer)(void)) {
  static int done;
  if (done++)
    return;
  cli_crash_site_warm();
  static char alt[1 << 16];
  stack_t ss;
  memset(&ss, 0, sizeof ss);
  ss.ss_sp = alt;
  ss.ss_size = sizeof alt;
  sigaltstack(&ss, NULL);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESETHAND | SA_NODEFER | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGABRT, &sa, NULL);
#if defined(SF_ASAN)
  __sanitizer_set_death_callback(on_sanitizer);
#else
  (void)on_sanitizer;
  static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
    sigaction(sigs[i], &sa, NULL);
#endif
}

#define HELP_REPLAY                                                                                \
  "replay FILE... : run scenarios and print what happened\n\n"                                     \
  "SYNOPSIS\n"                                                                                     \
  "  replay [--from T] [--to T] [--node N]... [--kinds K,...] [--no-timeline] [-q] FILE...\n\n"    \
  "DESCRIPTION\n"                                                                                  \
  "  Runs each FILE on the target and prints its timeline (virtual time, node, event,\n"           \
  "  the message as the target describes it, the fault's reason), then a summary and,\n"           \
  "  when the run fails, the failure report: invariant, node, time, the steps executed,\n"         \
  "  the last events and the faults that fired. FILE may be a libFuzzer or AFL++ crash\n"          \
  "  file or a scenario in binary or text form: a file is read as the fuzzers read it\n"           \
  "  (bytes) unless its name ends in .txt, .textproto, .textpb or .pbtxt, or --text is\n"          \
  "  given. Each file is run twice and the trace hashes compared.\n\n"                             \
  "OPTIONS\n"                                                                                      \
  "  --from T, --to T   only events in this window (T: 1.5, 1.5s, 300ms, 20us)\n"                  \
  "  --node N           only events of node N (repeatable)\n"                                      \
  "  --kinds K,...      only these event kinds (send, deliver, drop, timer, crash, ...)\n"         \
  "                     or groups: messages, faults, conn, disk, nodes\n"                          \
  "  --no-timeline      summary and report only\n"                                                 \
  "  -q, --quiet        one summary line per file\n\n"                                             \
  "EXIT STATUS\n"                                                                                  \
  "  0 no failure, 1 an invariant or liveness failure, 2 bad input or usage,\n"                    \
  "  3 determinism mismatch (the two runs differed). When the system under test\n"                 \
  "  crashes (abort(), SIGSEGV, a sanitizer's error), replay prints the timeline so\n"             \
  "  far and a crash report (signal, function, node, virtual time, last events),\n"                \
  "  then dies of the signal; later files are not run.\n\n"                                        \
  "EXAMPLES\n"                                                                                     \
  "  replay crash-4f1e...            what the fuzzer found\n"                                      \
  "  replay --kinds faults,conn --node 1 min.pb\n"

static int cmd_replay(int argc, char **argv) {
#if defined(__GLIBC__)
  static int hooked;
  if (!hooked++)
    on_exit(on_program_exit, NULL);
#endif
  catch_crashes(on_crash_signal, on_sanitizer_death);
  stdio_keep();
  timeline tl = {0, UINT64_MAX, 0, 0, 1, stdout, 0};
  int quiet = 0, rc = EXIT_OK;
  int no_timeline = 0;
  const cli_opt opts[] = {CLI_TIME("--from", &tl.from),
                          CLI_TIME("--to", &tl.to),
                          CLI_FN("--node", &tl.nodes, parse_node),
                          CLI_FN("--kinds", &tl.kinds, parse_kinds),
                          CLI_FLAG("--no-timeline", NULL, &no_timeline),
                          CLI_FLAG("--quiet", "-q", &quiet),
                          CLI_END};
  int nfiles = cli_parse("replay", argc, argv, opts);
  if (nfiles < 0)
    return EXIT_USAGE;
  if (!nfiles)
    return cli_error("replay: no input files (see: %s help replay)", cli_prog);
  tl.print = !no_timeline && !quiet;
  sf_scenario *s = cli_new_scenario();
  for (int f = 0; f < nfiles; f++) { /* every file, in order */
    const char *path = argv[f];
    cli_input_kind k;
    if (cli_load(path, s, &k, NULL) < 0) {
      rc = EXIT_USAGE;
      continue;
    }
    if (tl.print && nfiles > 1)
      printf("== %s\n", path);
    sf_run_opts o;
    memset(&o, 0, sizeof o);
    o.trace_ring = 1024;
    o.trace = on_record;
    o.trace_ctx = &tl;
    finish_ctx fc = {s, path, !quiet};
    o.on_finish = finish;
    o.finish_ctx = &fc;
    sf_result r, r2;
    crash.input = path;
    crash.report = !quiet;
    crash.second = 0;
    crash.torn_down = 0;
    sf_run(cli_target, s, &o, &r);
    stdio_back();
    crash.w = NULL; /* the world is gone */
    crash.second = 1;
    sf_run(cli_target, s, NULL, &r2);
    stdio_back();
    crash.input = NULL;
    summary(path, k, &r);
    if (r2.hash != r.hash) {
      printf("%s: DETERMINISM MISMATCH: a second run gave trace hash %016" PRIx64
             " (run %s check-determinism %s)\n",
             path, r2.hash, cli_prog, path);
      rc = EXIT_NONDET;
    } else if (r.failed && rc == EXIT_OK) {
      rc = EXIT_FAILED;
    }
  }
  free(s);
  return rc;
}

const cli_command cli_cmd_replay = {"replay", cmd_replay, 1, HELP_REPLAY};

/* ---- check-determinism: comparing runs ------------------------------------ */

/* check-determinism compares runs record by record in bounded memory: run
 * 1 keeps a 64-bit hash of every trace record and the records themselves up
 * to REF_KEEP (about 20 MiB), later runs are compared on the fly, and only
 * the records around the first divergence are formatted. */
enum { REF_KEEP = 262144, CONTEXT = 3 };

typedef struct {
  sim_trace_rec *recs; /* the first REF_KEEP records */
  size_t nrecs, rcap;
  uint64_t *hash; /* every record's hash */
  size_t n, hcap;
  int oom; /* could not keep everything: later divergences show less */
} reference;

/* check-determinism never runs the system under test in its own process:
 * each file is checked in a child, which keeps its progress in a page it
 * shares with the tool (the run in progress, its trace records so far and
 * their running hash, where it crashed). A run that the system crashes
 * then still has an outcome to compare: runs that all die of the same
 * signal after the same trace records are deterministic, and a run that
 * dies where another ended, or dies elsewhere, is a mismatch. The fresh
 * processes (__hash) print the same progress when they die. */
typedef struct {
  uint64_t run;                /* the run in progress, 1-based (0: none) */
  uint64_t recs, hash;         /* its trace records so far, their running hash */
  uint64_t ref_recs, ref_hash; /* run 1's, once it ended */
  uint64_t diverged;           /* 1 + the record where run `run` left run 1 (0: not yet) */
  int done;                    /* the child ended of itself (its exit status says how) */
  char site[200];              /* where the system crashed (cli_crash_site), "" if unknown */
} progress;

#define SANITIZER_SITE "=sanitizer" /* the site of a sanitizer's error (it reported it) */

static progress *volatile prog; /* the shared page in a check's child, or __hash's own */
static volatile int prog_print; /* __hash: print the progress at the process's death */

/* A record and its whole payload (the record keeps only a prefix). */
static uint64_t rec_hash(const sim_trace_rec *r, const void *payload, size_t len) {
  const uint8_t *p = payload;
  uint64_t h = sim_mix64(r->time ^ (uint64_t)r->kind << 48 ^ (uint64_t)r->reason << 32);
  for (size_t i = 0; p && i < len; i++)
    h = h * 0x100000001b3ull ^ p[i];
  h = sim_mix64(h ^ (uint64_t)(uint16_t)r->node << 16 ^ (uint16_t)r->peer);
  h = sim_mix64(h ^ r->a ^ sim_mix64(r->b ^ ((uint64_t)r->msg_kind << 32 | r->len)));
  for (unsigned i = 0; i < r->prefix_len && i < SIM_TRACE_PREFIX; i++)
    h = h * 0x100000001b3ull ^ r->prefix[i];
  return sim_mix64(h ^ r->prefix_len);
}

/* One more trace record of the run in progress. */
static void progress_add(const sim_trace_rec *r, const void *payload, size_t len) {
  progress *p = prog;
  if (!p)
    return;
  p->hash = sim_mix64(p->hash ^ rec_hash(r, payload, len));
  p->recs++;
}

static void progress_start(uint64_t run) {
  progress *p = prog;
  if (!p)
    return;
  p->run = run;
  p->recs = 0;
  p->hash = 0;
  p->diverged = 0;
}

static void reference_add(void *ctx, const sim_world *w, const sim_trace_rec *r,
                          const void *payload, size_t len) {
  reference *ref = ctx;
  (void)w;
  progress_add(r, payload, len);
  if (ref->oom)
    return;
  uint64_t *h = cli_grow(ref->hash, &ref->hcap, ref->n, sizeof *h, 4096);
  sim_trace_rec *rs = h && ref->nrecs < REF_KEEP
                          ? cli_grow(ref->recs, &ref->rcap, ref->nrecs, sizeof *rs, 4096)
                          : ref->recs;
  ref->hash = h ? h : ref->hash;
  ref->recs = rs ? rs : ref->recs;
  if (!h || !rs) {
    ref->oom = 1;
    return;
  }
  ref->hash[ref->n++] = rec_hash(r, payload, len);
  if (ref->nrecs < REF_KEEP)
    ref->recs[ref->nrecs++] = *r;
}

typedef struct {
  const reference *ref;
  size_t i;     /* records seen in this run */
  int timeline; /* 1: format every record, as replay's timeline does */
  int diverged; /* the first divergence is recorded below */
  size_t at;
  char a[CONTEXT + 1][512], b[CONTEXT + 1][512]; /* context lines, then the divergent ones */
  int nctx;
  sim_trace_rec ring[CONTEXT];
} comparison;

/* "run 1" side of record i, formatted with this run's world (the same
 * target: the same describer). */
static void ref_line(const reference *ref, const sim_world *w, size_t i, char *out, size_t cap) {
  if (i >= ref->n)
    snprintf(out, cap, "(end of run)");
  else if (i < ref->nrecs)
    sim_trace_format(w, &ref->recs[i], out, cap);
  else
    snprintf(out, cap, "(record %zu not kept; its hash %016" PRIx64 ")", i, ref->hash[i]);
}

/* When two records print alike, say which fields differ. */
static void explain(const sim_trace_rec *x, const sim_trace_rec *y, char *out, size_t cap) {
  int k = snprintf(out, cap, " [differs in");
  if (x->a != y->a || x->b != y->b)
    k += snprintf(out + k, cap - (size_t)k, " values a/b");
  if (x->len != y->len || x->msg_kind != y->msg_kind)
    k += snprintf(out + k, cap - (size_t)k, " length/kind");
  if (x->prefix_len != y->prefix_len || memcmp(x->prefix, y->prefix, x->prefix_len) ||
      x->len > x->prefix_len) {
    k += snprintf(out + k, cap - (size_t)k, " payload");
    for (unsigned i = 0; i < x->prefix_len && i < y->prefix_len; i++)
      if (x->prefix[i] != y->prefix[i]) {
        k += snprintf(out + k, cap - (size_t)k, " byte %u: %02x vs %02x", i, x->prefix[i],
                      y->prefix[i]);
        break;
      }
  }
  snprintf(out + k, cap - (size_t)k, "]");
}

static void compare(void *ctx, const sim_world *w, const sim_trace_rec *r, const void *payload,
                    size_t len) {
  comparison *c = ctx;
  size_t i = c->i++;
  progress_add(r, payload, len);
  if (c->timeline) { /* a tool's stack use inside the run must not change it */
    char line[SIM_OUTPUT_MAX * 4 + 128];
    (void)sim_trace_format_payload(w, r, payload, len, line, sizeof line);
  }
  if (c->diverged)
    return;
  const reference *ref = c->ref;
  if (i < ref->n && ref->hash[i] == rec_hash(r, payload, len)) {
    c->ring[i % CONTEXT] = *r;
    return;
  }
  c->diverged = 1;
  c->at = i;
  if (prog)
    prog->diverged = (uint64_t)i + 1;
  c->nctx = 0;
  for (size_t j = i >= CONTEXT ? i - CONTEXT : 0; j < i; j++, c->nctx++) /* the same in both */
    sim_trace_format(w, &c->ring[j % CONTEXT], c->b[c->nctx], sizeof c->b[0]);
  ref_line(ref, w, i, c->a[c->nctx], sizeof c->a[0]);
  sim_trace_format(w, r, c->b[c->nctx], sizeof c->b[0]);
  if (i < ref->nrecs && !strcmp(c->a[c->nctx], c->b[c->nctx])) {
    char why[160];
    explain(&ref->recs[i], r, why, sizeof why);
    strncat(c->b[c->nctx], why, sizeof c->b[0] - strlen(c->b[c->nctx]) - 1);
  }
}

/* How a run ended, for comparing runs that may crash: `ended` 1 if the
 * run ended of itself (hash its trace hash), 0 if the system under test
 * killed its process (how: the wait status; hash the running hash of its
 * recs trace records). */
typedef struct {
  int ended, how;
  uint64_t recs, hash;
  char site[200];
} outcome;

/* The outcome of FILE's run in a fresh process (this binary, hidden __hash
 * command) whose C-library heap is shifted by `shift` bytes first, without
 * address-space randomization if `fixed`; -1 if it could not run. */
static int fresh_run(const char *path, unsigned shift, int fixed, outcome *o) {
  char sh[16];
  snprintf(sh, sizeof sh, "%u", shift);
  char *argv[] = {(char *)cli_prog, "--target", (char *)cli_target->name, "__hash",
                  (char *)path,     sh,         fixed ? "fixed" : NULL,   NULL};
  char buf[512];
  int st;
  memset(o, 0, sizeof *o);
  if (cli_program_output("/proc/self/exe", argv, 2, buf, sizeof buf, &st) <= 0)
    return -1;
  const char *died = strstr(buf, "__hash died ");
  if (died) { /* the system under test killed it: its progress, then its status */
    unsigned long long recs, hash;
    if (sscanf(died, "__hash died %llu %llx %199s", &recs, &hash, o->site) < 2)
      return -1;
    o->recs = recs;
    o->hash = hash;
    o->how = st;
    if (!strcmp(o->site, "-"))
      o->site[0] = 0;
    return 0;
  }
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
    return -1;
  o->ended = 1;
  o->hash = strtoull(buf, NULL, 16);
  return 0;
}

/* Run s runs - 1 more times in this process against the first run's
 * records (ref, hash h0); 0 if every run matched, else -1 after printing
 * the first divergence. */
static int compare_runs(const char *path, const sf_scenario *s, reference *ref, uint64_t h0,
                        uint64_t runs) {
  for (uint64_t n = 1; n < runs; n++) {
    comparison c;
    memset(&c, 0, sizeof c);
    c.ref = ref;
    c.timeline = n == 1; /* run 2 as replay prints it, the others as run 1 */
    sf_result r;
    progress_start(n + 1);
    cli_run_traced(s, compare, &c, &r);
    if (!c.diverged && c.i < ref->n) { /* this run ended first */
      c.diverged = 1;
      c.at = c.i;
      snprintf(c.a[0], sizeof c.a[0], "(record %zu of run 1)", c.i);
      snprintf(c.b[0], sizeof c.b[0], "(end of run)");
    }
    if (r.hash == h0 && !c.diverged)
      continue;
    printf("%s: MISMATCH in-process: run 1 hash %016" PRIx64 ", run %" PRIu64 " hash %016" PRIx64
           "\n",
           path, h0, n + 1, r.hash);
    if (c.diverged) {
      printf("  first divergence at trace record %zu:\n", c.at);
      for (int j = 0; j < c.nctx; j++)
        printf("    both:   %s\n", c.b[j]);
      printf("    run 1:  %s\n    run %" PRIu64 ":%s %s\n", c.a[c.nctx], n + 1,
             n + 1 < 10 ? " " : "", c.b[c.nctx]);
    }
    return -1;
  }
  return 0;
}

/* The C-library heap's shift of fresh process k (1-based): the first runs
 * as it comes (ASLR moves the heap by whole pages); the others at one
 * layout, process j + 2 shifted by j * 256 bytes, so that 257 processes
 * give bits 8 to 15 of an address every value, and by 16 bytes more for
 * each further 256 (bits 4 to 7). */
static unsigned fresh_shift(uint64_t k) {
  uint64_t j = k - 2;
  return k == 1 ? 0 : (unsigned)((j % 256) * 256 + (j / 256 % 16) * 16);
}

static int same_outcome(const outcome *a, const outcome *b) {
  return a->ended == b->ended && a->hash == b->hash &&
         (a->ended || (a->recs == b->recs && a->how == b->how));
}

/* "ended, trace hash H" or "died of signal S in F after trace record R
 * (running hash H)". */
static void describe(const outcome *o, char *out, size_t cap) {
  if (o->ended) {
    snprintf(out, cap, "ended, trace hash %016" PRIx64, o->hash);
    return;
  }
  char how[64];
  if (!strcmp(o->site, SANITIZER_SITE)) {
    snprintf(out, cap,
             "died of the sanitizer's error (exit status %d) after trace record %" PRIu64
             " (running hash %016" PRIx64 ")",
             WIFEXITED(o->how) ? WEXITSTATUS(o->how) : -1, o->recs, o->hash);
    return;
  }
  if (WIFSIGNALED(o->how))
    snprintf(how, sizeof how, "died of signal %d", WTERMSIG(o->how));
  else
    snprintf(how, sizeof how, "died with exit status %d",
             WIFEXITED(o->how) ? WEXITSTATUS(o->how) : -1);
  snprintf(out, cap, "%s%s%s after trace record %" PRIu64 " (running hash %016" PRIx64 ")", how,
           o->site[0] ? " in " : "", o->site, o->recs, o->hash);
}

/* Replay path in `fresh` fresh processes against the outcome want: 0 if
 * all match, -1 after printing a mismatch, -2 if one could not run. */
static int compare_fresh(const char *path, const outcome *want, uint64_t fresh) {
  for (uint64_t k = 1; k <= fresh; k++) {
    outcome o;
    if (fresh_run(path, fresh_shift(k), k > 1, &o) != 0) {
      printf("%s: could not run a fresh process\n", path);
      return -2;
    }
    if (!same_outcome(want, &o)) {
      char a[320], b[320];
      describe(want, a, sizeof a);
      describe(&o, b, sizeof b);
      printf("%s: MISMATCH across processes: this process %s; fresh process %" PRIu64 " of %" PRIu64
             " %s (replay FILE in fresh processes to see where)\n",
             path, a, k, fresh, b);
      return -1;
    }
  }
  return 0;
}

/* ---- a check's processes ------------------------------------------------ */

/* The system under test is killing a process that keeps progress (sig 0:
 * a sanitizer's error, -1: exit()): where, and for __hash, a line with the
 * progress on stdout for the tool. Async-signal-safe but for the unwinder
 * (cli_crash_site, loaded before the run). */
static void on_check_death(int sig) {
  progress *p = prog;
  if (!p || p->done || !p->run)
    return;
  char buf[300];
  const char *where = sig > 0 ? cli_crash_site(buf, sizeof buf) : sig ? NULL : SANITIZER_SITE;
  snprintf(p->site, sizeof p->site, "%s", where ? where : "");
  if (!prog_print)
    return;
  char line[400];
  int k = snprintf(line, sizeof line, "\n__hash died %" PRIu64 " %016" PRIx64 " %s\n", p->recs,
                   p->hash, p->site[0] ? p->site : "-");
  if (k > 0 && write(1, line, (size_t)k) < 0) {
  }
}

static void on_check_signal(int sig) {
  on_check_death(sig);
  signal(sig, SIG_DFL);
  raise(sig);
}

static void on_check_sanitizer(void) {
  on_check_death(0);
}

#if defined(__GLIBC__)
static void on_check_exit(int status, void *arg) {
  (void)status;
  (void)arg;
  on_check_death(-1);
}
#endif

/* Keep the progress of this process's runs in p (shared with the tool, or
 * this process's own with print), and note it when the system under test
 * kills the process. */
static void keep_progress(progress *p, int print) {
  prog = p;
  prog_print = print;
#if defined(__GLIBC__)
  on_exit(on_check_exit, NULL);
#endif
  catch_crashes(on_check_signal, on_check_sanitizer);
}

static void progress_only(void *ctx, const sim_world *w, const sim_trace_rec *r,
                          const void *payload, size_t len) {
  (void)ctx;
  (void)w;
  progress_add(r, payload, len);
}

/* A shared page for a child's progress; NULL if none could be mapped. */
static progress *progress_page(void) {
  void *p = mmap(NULL, sizeof(progress), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return NULL;
  memset(p, 0, sizeof(progress));
  return p;
}

/* Fork a child that keeps its progress in p; in the child, body(ctx) gives
 * its exit status. The child's wait status in *st; -1 if none started. */
static int in_child(progress *p, int (*body)(void *ctx), void *ctx, int *st) {
  pid_t pid = cli_fork_tied();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    keep_progress(p, 0);
    int rc = body(ctx);
    fflush(stdout);
    fflush(stderr);
    p->done = 1;
    _exit(rc);
  }
  while (waitpid(pid, st, 0) < 0)
    if (errno != EINTR)
      return -1;
  return 0;
}

/* ---- check-determinism --------------------------------------------------- */

typedef struct {
  const char *path;
  const sf_scenario *s;
  uint64_t runs, fresh;
} check_job;

/* The check of one file in this process (a child of the tool): runs in
 * this process, then in fresh ones. Its exit status. */
static int check_here(void *ctx) {
  const check_job *j = ctx;
  reference ref;
  memset(&ref, 0, sizeof ref);
  sf_result r0;
  progress_start(1);
  cli_run_traced(j->s, reference_add, &ref, &r0);
  prog->ref_recs = prog->recs;
  prog->ref_hash = r0.hash;
  int bad = compare_runs(j->path, j->s, &ref, r0.hash, j->runs) != 0;
  outcome want = {.ended = 1, .hash = r0.hash};
  int fr = bad ? 0 : compare_fresh(j->path, &want, j->fresh);
  int rc = EXIT_OK;
  if (fr < -1)
    rc = EXIT_USAGE;
  if (bad || fr == -1)
    rc = EXIT_NONDET;
  else if (fr == 0)
    printf("%s: deterministic: %" PRIu64 " runs in-process and %" PRIu64
           " in fresh processes, trace hash %016" PRIx64 ", %zu trace records\n",
           j->path, j->runs, j->fresh, r0.hash, ref.n);
  free(ref.recs);
  free(ref.hash);
  return rc;
}

/* One run of the file in this process (a child of the tool). */
static int run_once(void *ctx) {
  const check_job *j = ctx;
  sf_result r;
  progress_start(1);
  cli_run_traced(j->s, progress_only, NULL, &r);
  prog->ref_hash = r.hash;
  return EXIT_OK;
}

/* The outcome of a run that p and the wait status st tell. */
static void outcome_of(const progress *p, int st, outcome *o) {
  memset(o, 0, sizeof *o);
  o->ended = p->done;
  o->hash = p->done ? p->ref_hash : p->hash;
  o->recs = p->recs;
  o->how = st;
  snprintf(o->site, sizeof o->site, "%s", p->done ? "" : p->site);
}

/* The outcome of one run of the file in a child of its own; -1 if none
 * could start. */
static int child_outcome(const check_job *j, outcome *o) {
  progress *q = progress_page();
  int st;
  if (!q || in_child(q, run_once, (void *)j, &st) != 0) {
    if (q)
      munmap(q, sizeof *q);
    return -1;
  }
  outcome_of(q, st, o);
  munmap(q, sizeof *q);
  return 0;
}

/* The system under test killed the child checking the file (p its
 * progress, st its wait status). A later run dying where run 1 ended is a
 * mismatch; if run 1 died, the other runs, each in a child of its own and
 * in fresh processes, must die the same way. The exit status. */
static int check_death(const check_job *j, const progress *p, int st) {
  outcome first;
  outcome_of(p, st, &first);
  char d[320], e[320];
  describe(&first, d, sizeof d);
  if (p->run == 0) {
    printf("%s: could not check: the check's process %s before any run\n", j->path, d);
    return EXIT_USAGE;
  }
  if (p->run > 1) {
    printf("%s: MISMATCH in-process: run 1 ended (trace hash %016" PRIx64 ", %" PRIu64
           " trace records); run %" PRIu64 " %s\n",
           j->path, p->ref_hash, p->ref_recs, p->run, d);
    if (p->diverged)
      printf("  first divergence at trace record %" PRIu64 "\n", p->diverged - 1);
    return EXIT_NONDET;
  }
  for (uint64_t k = 2; k <= j->runs; k++) {
    outcome o;
    if (child_outcome(j, &o) != 0) {
      printf("%s: could not run a child process\n", j->path);
      return EXIT_USAGE;
    }
    if (!same_outcome(&first, &o)) {
      describe(&o, e, sizeof e);
      printf("%s: MISMATCH in child processes: run 1 %s; run %" PRIu64 " %s\n", j->path, d, k, e);
      return EXIT_NONDET;
    }
  }
  int fr = compare_fresh(j->path, &first, j->fresh);
  if (fr < 0)
    return fr == -1 ? EXIT_NONDET : EXIT_USAGE;
  printf("%s: deterministic crash: %" PRIu64 " runs in child processes and %" PRIu64
         " in fresh processes each %s\n",
         j->path, j->runs, j->fresh, d);
  return EXIT_OK;
}

static int check_file(const check_job *j) {
  progress *p = progress_page();
  int st;
  if (!p || in_child(p, check_here, (void *)j, &st) != 0) {
    if (p)
      munmap(p, sizeof *p);
    printf("%s: could not run a child process\n", j->path);
    return EXIT_USAGE;
  }
  int rc = p->done ? WEXITSTATUS(st) : check_death(j, p, st);
  munmap(p, sizeof *p);
  return rc;
}

#define HELP_CHECK                                                                                 \
  "check-determinism FILE... : check that each input replays identically\n\n"                      \
  "SYNOPSIS\n"                                                                                     \
  "  check-determinism [--runs N] [--fresh M] FILE...\n\n"                                         \
  "DESCRIPTION\n"                                                                                  \
  "  Replays each FILE N times in one process (default 3) and M times in fresh processes\n"        \
  "  (default 3), and compares the trace hashes. The first fresh process has its own random\n"     \
  "  address-space layout; the others run without randomization, each with the C library's\n"      \
  "  heap shifted by 256 bytes more (257 processes give bits 8-15 of an address every value),\n"   \
  "  so a run that depends on where something was allocated shows there. Run 2 formats\n"          \
  "  every trace record as replay's timeline does, so a run that depends on what a tool\n"         \
  "  left on the stack shows too. On an in-process mismatch it prints the first event\n"           \
  "  where the runs diverge, from both runs.\n\n"                                                  \
  "  The runs happen in a child process, never in this one. When the system under test\n"          \
  "  kills it (abort(), SIGSEGV, a sanitizer's error, exit()), the run's outcome is how it\n"      \
  "  died and after which trace record: the other N - 1 runs then each run in a child of\n"        \
  "  their own, and every run and fresh process must die the same way (\"deterministic\n"          \
  "  crash\"). A run that dies where another ended, or dies elsewhere, is a mismatch.\n\n"         \
  "EXIT STATUS\n"                                                                                  \
  "  0 deterministic, 3 a mismatch, 2 bad input or usage\n"

static int cmd_check_determinism(int argc, char **argv) {
  uint64_t runs = 3, fresh = 3;
  int rc = EXIT_OK;
  const cli_opt opts[] = {CLI_U64("--runs", &runs, 2, 1000), CLI_U64("--fresh", &fresh, 1, 1000),
                          CLI_END};
  int nfiles = cli_parse("check-determinism", argc, argv, opts);
  if (nfiles < 0)
    return EXIT_USAGE;
  if (!nfiles)
    return cli_error("check-determinism: no input files");
  sf_scenario *s = cli_new_scenario();
  for (int i = 0; i < nfiles; i++) {
    cli_input_kind k;
    if (cli_load(argv[i], s, &k, NULL) < 0) {
      rc = EXIT_USAGE;
      continue;
    }
    check_job j = {argv[i], s, runs, fresh};
    int frc = check_file(&j);
    if (frc == EXIT_NONDET || (frc == EXIT_USAGE && rc != EXIT_NONDET))
      rc = frc;
  }
  free(s);
  return rc;
}

/* __hash FILE [SHIFT [fixed]]: the trace hash of FILE's run, or, when the
 * system under test kills the process, a line "__hash died RECORDS HASH
 * SITE" with its progress (check-determinism's fresh processes). SHIFT
 * bytes of the C library's heap are taken first and held, so that the
 * run's own blocks sit SHIFT bytes further on; with "fixed", the process
 * runs again without address-space randomization first (as setarch -R
 * does; where the kernel refuses, with it). check-determinism's fresh
 * processes shift by different amounts: ASLR moves the heap by whole
 * pages only, so a run that depends on the lower bits of an address parts
 * in no process. */
static int cmd_hash(int argc, char **argv) {
  if (argc < 1 || argc > 3)
    return EXIT_USAGE;
  if (argc == 3 && !strcmp(argv[2], "fixed")) {
    char *args[] = {(char *)cli_prog, "--target", (char *)cli_target->name,
                    "__hash",         argv[0],    argv[1],
                    argv[2],          NULL};
    cli_reexec_fixed_layout(args);
  }
  size_t shift = argc >= 2 ? (size_t)strtoul(argv[1], NULL, 10) % (1u << 20) : 0;
  volatile char *pad = shift ? malloc(shift) : NULL;
  if (pad)
    pad[0] = 1;
  sf_scenario *s = cli_new_scenario();
  cli_input_kind k;
  if (cli_load(argv[0], s, &k, NULL) < 0) {
    free(s);
    return EXIT_USAGE;
  }
  static progress own;
  keep_progress(&own, 1);
  sf_result r;
  progress_start(1);
  cli_run_traced(s, progress_only, NULL, &r);
  own.done = 1;
  printf("%016" PRIx64 "\n", r.hash);
  free(s);
  free((void *)pad);
  return EXIT_OK;
}

const cli_command cli_cmd_check = {"check-determinism", cmd_check_determinism, 1, HELP_CHECK};
const cli_command cli_cmd_hash = {"__hash", cmd_hash, 1, NULL};
