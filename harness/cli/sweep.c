/* simfuzz sweep: random-seed simulation, crash-isolated.
 *
 * A worker process runs the seeds one after another (the fast path: one
 * fork per worker, not per seed) and reports failures on its result
 * channel. If the system under test aborts, asserts, crashes, hangs past
 * the per-run time limit or exceeds the memory limit, the worker dies; the
 * seed it was running (its heartbeat says which) is recorded as a failure
 * with the crash's signature, and a new worker resumes at the next seed.
 * Every failure is saved from the parent, which never runs the target. */
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
  uint64_t start, b;
  int first, verbose;
  uint64_t progress_every;
} sweep_job;

/* The worker: seeds start..b in this process. */
static void worker(void *arg, const cli_child_io *io) {
  const sweep_job *j = arg;
  sf_scenario *s = malloc(sizeof *s);
  if (!s)
    sf_out_of_memory("the sweep worker");
  cli_record rec;
  uint64_t seed = j->start;
  cli_baseline base;
  cli_baseline_take(&base);
  for (;; seed++) {
    __atomic_store_n(&io->beat[CLI_BEAT_SEED], seed, __ATOMIC_RELAXED);
    __atomic_add_fetch(&io->beat[CLI_BEAT_RUNS], 1, __ATOMIC_RELAXED);
    sf_target_seed_scenario(cli_target, seed, s);
    sf_result r;
    int failed = sf_run(cli_target, s, NULL, &r);
    if (failed || j->verbose) {
      cli_record_fill(&rec, seed, &r);
      if (cli_record_send(io, &rec) < 0)
        break;
    } else if (j->progress_every && (seed - j->start + 1) % j->progress_every == 0) {
      memset(&rec, 0, sizeof rec);
      rec.kind = CLI_REC_PROGRESS;
      rec.seed = seed;
      if (cli_record_send(io, &rec) < 0)
        break;
    }
    if ((failed && j->first) || seed == j->b)
      break;
    int worn = (seed - j->start + 1) % 64 == 0 ? cli_worn(&base) : 0;
    if (r.crashed || worn) { /* the target's state may be damaged: a fresh worker goes on */
      memset(&rec, 0, sizeof rec);
      rec.kind = CLI_REC_RESUME;
      rec.seed = seed + 1;
      rec.o.nondet = worn;
      cli_record_send(io, &rec);
      free(s);
      return;
    }
  }
  memset(&rec, 0, sizeof rec);
  rec.kind = CLI_REC_DONE;
  rec.seed = seed;
  cli_record_send(io, &rec);
  free(s);
}

typedef struct {
  uint64_t a, b, total;
  const char *out;
  int verbose, quiet, tty;
  uint64_t failures, lost, runs_before, shown;
  int done, resume;
  uint64_t done_seed, resume_seed;
  sf_scenario *s;
  int first, internal;     /* --stop-on-first; a worker could not start */
  uint64_t last, restarts; /* the last seed known to be run; workers that died */
  uint64_t fd_restarts;    /* workers that gave way: descriptors left open */
  uint64_t mem_restarts;   /* workers that gave way: their memory grew */
} sweep_state;

static void progress(sweep_state *st, uint64_t seed) {
  if (st->quiet)
    return;
  uint64_t runs = seed - st->a + 1;
  uint64_t step = st->total / 100 ? st->total / 100 : 1;
  if (!st->tty && runs / (step * 10) == st->shown / (step * 10) && seed != st->b)
    return;
  st->shown = runs;
  fprintf(stderr, "%ssweep: %" PRIu64 "/%" PRIu64 " seeds, %" PRIu64 " failures%s",
          st->tty ? "\r\033[K" : "", runs, st->total, st->failures, st->tty ? "" : "\n");
}

static void failure(sweep_state *st, uint64_t seed, const cli_outcome *o) {
  st->failures++;
  if (st->tty && !st->quiet)
    fprintf(stderr, "\r\033[K");
  const char *what = o->invariant[0] ? o->invariant : "?";
  int crash = !strcmp(what, "crash") || !strcmp(what, "timeout") || !strcmp(what, "out-of-memory");
  if (crash) /* the signature says what happened: "crash: assert ...", "timeout" */
    printf("seed %" PRIu64 ": FAILED %s\n", seed, o->sig);
  else
    printf("seed %" PRIu64 ": FAILED %s: %s\n", seed, what, o->message);
  if (st->out) {
    static uint8_t buf[SF_MAX_INPUT];
    char path[4096];
    sf_target_seed_scenario(cli_target, seed, st->s);
    size_t n = sf_encode(st->s, buf, sizeof buf);
    int ok = snprintf(path, sizeof path, "%s/%s-seed-%" PRIu64 ".pb", st->out, cli_target->name,
                      seed) < (int)sizeof path;
    if (ok && n <= sizeof buf && cli_write_file(path, buf, n) == 0) {
      printf("  saved %s\n", path);
    } else {
      st->lost++;
      fprintf(stderr, "%s: sweep: could not save the failure of seed %" PRIu64 "\n", cli_prog,
              seed);
    }
  }
  fflush(stdout);
}

static void on_record(void *ctx, const cli_record *rec) {
  sweep_state *st = ctx;
  if (rec->kind == CLI_REC_DONE) {
    st->done = 1;
    st->done_seed = rec->seed;
    return;
  }
  if (rec->kind == CLI_REC_RESUME) {
    st->resume = 1;
    st->resume_seed = rec->seed;
    st->fd_restarts += (rec->o.nondet & CLI_WORN_FDS) != 0;
    st->mem_restarts += (rec->o.nondet & CLI_WORN_MEMORY) != 0;
    return;
  }
  if (rec->kind == CLI_REC_PROGRESS) {
    progress(st, rec->seed);
    return;
  }
  if (st->verbose)
    printf("seed %" PRIu64 " hash %016" PRIx64 " events %" PRIu64 "\n", rec->seed, rec->o.hash,
           rec->o.events);
  if (rec->o.sig[0])
    failure(st, rec->seed, &rec->o);
}

/* Run seeds a..b in worker processes, a new worker after each one that
 * dies (that seed's failure), until the end, the first failure
 * (--stop-on-first) or a stop signal; st->last is the last seed run. */
static void run_workers(sweep_state *st, cli_child *c) {
  uint64_t next = st->a;
  int finished = 0;
  st->last = st->a - 1;
  while (!finished && !cli_interrupted) {
    sweep_job job = {next, st->b, st->first, st->verbose, 0};
    job.progress_every = st->quiet ? 0 : (st->total / 100 ? st->total / 100 : 1);
    st->done = st->resume = 0;
    if (cli_child_spawn(c, worker, &job) != 0) {
      st->internal = 1;
      cli_error("sweep: cannot start a worker process: %s", strerror(errno));
      break;
    }
    int ended = cli_child_wait(c, &cli_run_limits, on_record, st);
    if (st->done) { /* the worker reached the end (or its first failure) */
      st->last = st->done_seed;
      finished = 1;
      break;
    }
    if (ended == CLI_END_INTERRUPTED)
      break;
    if (st->resume && ended == CLI_END_OK) { /* after a failed assert() or a leak */
      st->last = st->resume_seed - 1;
      next = st->resume_seed;
      continue;
    }
    /* the worker died running its current seed: that seed's failure */
    uint64_t seed = c->runs ? c->last_seed : next;
    cli_outcome o;
    cli_crash_outcome(c, ended == CLI_END_OK ? CLI_END_CRASH : ended, &o);
    failure(st, seed, &o);
    st->last = seed;
    st->restarts++;
    finished = st->first || seed == st->b;
    next = seed + 1;
  }
  if (cli_interrupted && !finished) /* the seed being run did not finish */
    st->last = c->runs ? c->last_seed - 1 : next - 1;
  SIM_ASSERT(st->last == st->a - 1 || (st->last >= st->a && st->last <= st->b));
}

static void print_summary(const sweep_state *st) {
  uint64_t runs = st->last + 1 - st->a;
  if (cli_stop_signal)
    printf("sweep: interrupted by signal %d after %" PRIu64 " seeds (%" PRIu64 "..%" PRIu64
           "), %" PRIu64 " failures\n",
           (int)cli_stop_signal, runs, st->a, st->last, st->failures);
  else
    printf("sweep: %" PRIu64 " seeds (%" PRIu64 "..%" PRIu64 "), %" PRIu64 " failures\n", runs,
           st->a, st->a + runs - 1, st->failures);
  cli_print_worn("sweep", st->fd_restarts, st->mem_restarts);
  if (st->restarts)
    printf("sweep: %" PRIu64 " of them crashed or hung the system under test (each in its own "
           "worker)\n",
           st->restarts);
}

#define HELP_SWEEP                                                                                 \
  "sweep --seeds A-B : random-seed simulation\n\n"                                                 \
  "SYNOPSIS\n"                                                                                     \
  "  sweep --seeds A-B [-o DIR] [--stop-on-first] [--timeout S] [--rss-limit-mb MB] [-v] [-q]\n\n" \
  "DESCRIPTION\n"                                                                                  \
  "  Runs the random scenario of every seed in A..B (swarm: each seed draws its own fault\n"       \
  "  mix, network, disk and steps), the way FoundationDB-style simulators test. Prints a\n"        \
  "  progress line and a summary; each failing seed's scenario is saved to DIR as\n"               \
  "  <target>-seed-<N>.pb, a file every other command accepts.\n\n"                                \
  "  The seeds run in a worker process. If the system under test aborts, fails an assert(),\n"     \
  "  crashes, runs past the time limit or over the memory limit, that seed is recorded as a\n"     \
  "  failure with the crash's signature (the assertion and its site, or the signal and top\n"      \
  "  frame; 'timeout'; 'out-of-memory') and a new worker goes on with the next seed.\n"            \
  "  SIGINT or SIGTERM stops the sweep with its summary.\n\n"                                      \
  "OPTIONS\n"                                                                                      \
  "  -o DIR             save failures here\n"                                                      \
  "  --stop-on-first    stop at the first failure\n"                                               \
  "  --timeout S        wall-clock limit per seed (default 20)\n"                                  \
  "  --rss-limit-mb MB  memory limit of the worker (default 2048)\n"                               \
  "  -v                 print every seed's trace hash\n"                                           \
  "  -q                 no progress line\n\n"                                                      \
  "EXIT STATUS\n"                                                                                  \
  "  0 no failure, 1 failures found, 2 usage or a failure that could not be saved,\n"              \
  "  128+N stopped by signal N before any failure\n"

static int cmd_sweep(int argc, char **argv) {
  uint64_t range[2] = {1, 0}; /* empty until --seeds (a parsed range has A <= B) */
  const char *out = NULL;
  int first = 0, verbose = 0, quiet = 0;
  const cli_opt opts[] = {CLI_RANGE("--seeds", range),
                          CLI_STR("-o", NULL, &out),
                          CLI_FLAG("--stop-on-first", NULL, &first),
                          CLI_FLAG("--verbose", "-v", &verbose),
                          CLI_FLAG("--quiet", "-q", &quiet),
                          CLI_LIMITS,
                          CLI_END};
  if (cli_parse_none("sweep", argc, argv, opts) < 0)
    return EXIT_USAGE;
  int have_range = range[0] <= range[1];
  uint64_t a = range[0], b = range[1];
  if (!have_range)
    return cli_error("sweep: --seeds A-B is required");
  if (out && cli_make_dir("sweep", out) < 0)
    return EXIT_USAGE;

  sweep_state st;
  memset(&st, 0, sizeof st);
  st.a = a;
  st.b = b;
  st.total = b - a + 1;
  st.out = out;
  st.verbose = verbose;
  st.quiet = quiet;
  st.tty = isatty(2);
  st.s = cli_new_scenario();
  cli_child *c = malloc(sizeof *c);
  if (!c) {
    free(st.s);
    return cli_error("sweep: out of memory");
  }
  struct sigaction old[2];
  cli_catch_stop(old);
  st.first = first;
  run_workers(&st, c);
  cli_restore_stop(old);
  if (st.tty && !quiet)
    fprintf(stderr, "\r\033[K");
  print_summary(&st);
  free(c);
  free(st.s);
  if (st.lost || st.internal)
    return EXIT_USAGE; /* a failure that should have been kept was not */
  if (st.failures)
    return EXIT_FAILED;
  return cli_stop_signal ? 128 + (int)cli_stop_signal : EXIT_OK;
}

const cli_command cli_cmd_sweep = {"sweep", cmd_sweep, 1, HELP_SWEEP};
