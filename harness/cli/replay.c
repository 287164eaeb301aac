/* simfuzz replay and check-determinism. */
#define _DEFAULT_SOURCE /* on_exit */
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
 * world (set at every record of the first run, NULL between runs and in
 * the second, untraced run) and whether to print the crash report. A run
 * that the program ends with exit() is a crash of the run, "exit N", whose
 * status is 1 like any failure's; 3, say, would read as a determinism
 * mismatch. */
static struct {
  const char *volatile input;
  const sim_world *volatile w;
  volatile int report, second;
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

typedef struct {
  const sf_scenario *s;
  const char *input;
  int report;
} finish_ctx;

static void finish(void *p, sim_world *w, const sf_result *r) {
  finish_ctx *c = p;
  if (r->failed && c->report) {
    fflush(stdout);
    sf_print_report(cli_target, c->s, r, w, stdout, c->input, 30);
  }
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
  fflush(stdout);
  if (!input)
    return; /* not inside a run: the tool's own crash */
  if (crash.report && !crash.second)
    sf_print_crash_report(cli_target, crash.w, sig, where, stdout, input, 30);
  fflush(stdout);
  if (sig)
    fprintf(stderr, "%s: FAILED crash: signal %d in %s%s\n", input, sig, where ? where : "?",
            crash.second ? " (in the second run, which the first survived: run "
                           "check-determinism on it)"
                         : "");
  else
    fprintf(stderr, "%s: FAILED crash: the sanitizer's error above%s\n", input,
            crash.second ? " (in the second run, which the first survived)" : "");
  fflush(stderr);
}

#if defined(SF_ASAN)
void __sanitizer_set_death_callback(void (*callback)(void));
static void on_sanitizer_death(void) {
  on_crash(0);
}
#endif

static void on_crash_signal(int sig) {
  on_crash(sig);
  signal(sig, SIG_DFL);
  raise(sig);
}

/* Crash reports for replay: abort() always, the other deadly signals when
 * no sanitizer reports them (its death callback adds the report then), on
 * a stack of their own so that a stack overflow is reported too. */
static void catch_crashes(void) {
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
  sa.sa_handler = on_crash_signal;
  sa.sa_flags = SA_RESETHAND | SA_NODEFER | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGABRT, &sa, NULL);
#if defined(SF_ASAN)
  __sanitizer_set_death_callback(on_sanitizer_death);
#else
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
  catch_crashes();
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
    sf_run(cli_target, s, &o, &r);
    crash.w = NULL; /* the world is gone */
    crash.second = 1;
    sf_run(cli_target, s, NULL, &r2);
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

/* ---- check-determinism --------------------------------------------------- */

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

static void reference_add(void *ctx, const sim_world *w, const sim_trace_rec *r,
                          const void *payload, size_t len) {
  reference *ref = ctx;
  (void)w;
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

/* Hash of the file from a fresh process (this binary, hidden __hash
 * command) whose C-library heap is shifted by `shift` bytes first, without
 * address-space randomization if `fixed`. */
static int fresh_hash(const char *path, unsigned shift, int fixed, uint64_t *h) {
  char sh[16];
  snprintf(sh, sizeof sh, "%u", shift);
  char *argv[] = {(char *)cli_prog, "--target", (char *)cli_target->name, "__hash",
                  (char *)path,     sh,         fixed ? "fixed" : NULL,   NULL};
  char buf[64];
  int st;
  if (cli_program_output("/proc/self/exe", argv, 2, buf, sizeof buf, &st) <= 0 || !WIFEXITED(st) ||
      WEXITSTATUS(st) != 0)
    return -1;
  *h = strtoull(buf, NULL, 16);
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

/* Replay path in `fresh` fresh processes against this process's hash h0:
 * 0 if all match, -1 after printing a mismatch, -2 if one could not run. */
static int compare_fresh(const char *path, uint64_t h0, uint64_t fresh) {
  for (uint64_t k = 1; k <= fresh; k++) {
    uint64_t fh;
    /* The first as it comes (ASLR moves the heap by whole pages); the
     * others at one layout, process j + 2 shifted by j * 256 bytes, so
     * that 257 processes give bits 8 to 15 of an address every value, and
     * by 16 bytes more for each further 256 (bits 4 to 7) */
    uint64_t j = k - 2;
    unsigned shift = k == 1 ? 0 : (unsigned)((j % 256) * 256 + (j / 256 % 16) * 16);
    if (fresh_hash(path, shift, k > 1, &fh) != 0) {
      printf("%s: could not run a fresh process\n", path);
      return -2;
    }
    if (fh != h0) {
      printf("%s: MISMATCH across processes: this process %016" PRIx64 ", fresh process %" PRIu64
             " of %" PRIu64 " %016" PRIx64 " (replay FILE in fresh processes to see where)\n",
             path, h0, k, fresh, fh);
      return -1;
    }
  }
  return 0;
}

#define HELP_CHECK                                                                                 \
  "check-determinism FILE... : check that each input replays identically\n\n"                      \
  "SYNOPSIS\n"                                                                                     \
  "  check-determinism [--runs N] [--fresh M] FILE...\n\n"                                         \
  "DESCRIPTION\n"                                                                                  \
  "  Replays each FILE N times in this process (default 3) and M times in fresh processes\n"       \
  "  (default 3), and compares the trace hashes. The first fresh process has its own random\n"     \
  "  address-space layout; the others run without randomization, each with the C library's\n"      \
  "  heap shifted by 256 bytes more (257 processes give bits 8-15 of an address every value),\n"   \
  "  so a run that depends on where something was allocated shows there. Run 2 formats\n"          \
  "  every trace record as replay's timeline does, so a run that depends on what a tool\n"         \
  "  left on the stack shows too. On an in-process mismatch it prints the first event\n"           \
  "  where the runs diverge, from both runs.\n\n"                                                  \
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
    reference ref;
    memset(&ref, 0, sizeof ref);
    sf_result r0;
    cli_run_traced(s, reference_add, &ref, &r0);
    int bad = compare_runs(argv[i], s, &ref, r0.hash, runs) != 0;
    int fr = bad ? 0 : compare_fresh(argv[i], r0.hash, fresh);
    if (fr < -1)
      rc = EXIT_USAGE;
    if (bad || fr == -1)
      rc = EXIT_NONDET;
    else if (fr == 0)
      printf("%s: deterministic: %" PRIu64 " runs in-process and %" PRIu64
             " in fresh processes, trace hash %016" PRIx64 ", %zu trace records\n",
             argv[i], runs, fresh, r0.hash, ref.n);
    free(ref.recs);
    free(ref.hash);
  }
  free(s);
  return rc;
}

const cli_command cli_cmd_check = {"check-determinism", cmd_check_determinism, 1, HELP_CHECK};
