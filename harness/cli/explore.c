/* simfuzz explore: the command line of the explorer (harness/explore/):
 * its options, and the summary of what a campaign did. */
#include "cli.h"

#include "explore/explore.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --share time|runs: what the branches' share is a share of. */
static int parse_share(const char *cmd, const char *value, void *dst) {
  int *runs = dst;
  if (strcmp(value, "time") == 0 || strcmp(value, "runs") == 0) {
    *runs = value[0] == 'r';
    return 0;
  }
  return cli_error("%s: --share takes time or runs, not '%s'", cmd, value), -1;
}

/* explore's options, into o (and the --json path). */
static int parse(int argc, char **argv, sf_explore_opts *o, const char **json) {
  const cli_opt opts[] = {CLI_STR("-o", NULL, &o->out),
                          CLI_STR("--corpus", NULL, &o->corpus),
                          CLI_STR("--origins", NULL, &o->origins),
                          CLI_STR("--json", NULL, json),
                          CLI_FLAG("--stop-on-first", NULL, &o->stop_on_first),
                          CLI_FLAG("--all-crashes", NULL, &o->all_crashes),
                          CLI_FLAG("--quiet", "-q", &o->quiet),
                          CLI_FLAG("--stats", NULL, &o->stats),
                          CLI_SECONDS("--time", &o->seconds),
                          CLI_U64("--seed", &o->seed_base, 0, 0),
                          CLI_U64("--roots", &o->max_roots, 0, 0),
                          CLI_U32("--jobs", &o->jobs, 1, SF_EXPLORE_MAX_JOBS),
                          CLI_U32("--depth", &o->depth, 0, 16),
                          CLI_U32("--energy", &o->energy, 0, 64),
                          CLI_U32("--keep", &o->keep, 0, SF_EXPLORE_KEPT),
                          CLI_U32("--budget", &o->budget, 0, 1000000),
                          CLI_U32("--warmup", &o->warmup, 0, 1000000),
                          CLI_U32("--worn", &o->worn, 0, 1000000),
                          CLI_FN("--share", &o->share_runs, parse_share),
                          CLI_LIMITS,
                          CLI_END};
  return cli_parse_none("explore", argc, argv, opts);
}

static void print_summary(void *ctx, const sf_explore_summary *s) {
  const sf_explore_opts *o = ctx;
  uint64_t runs = s->roots + s->branches + s->revisits;
  printf("explore: %" PRIu64 " roots, %" PRIu64 " branches (depth <= %" PRIu64 ", %" PRIu64
         " revisits), %.0f runs/s, %.1f s; %" PRIu64 " failures of %" PRIu64 " kinds, %" PRIu64
         " diverged on replay",
         s->roots, s->branches, s->deepest, s->revisits,
         s->seconds > 0 ? (double)runs / s->seconds : 0.0, s->seconds, s->failures, s->kinds,
         s->diverged);
  if (s->revisits_diverged)
    printf(", %" PRIu64 " revisits diverged", s->revisits_diverged);
  if (o->corpus)
    printf(", %" PRIu64 " corpus files", s->corpus);
  printf("\n");
  if (s->saved && o->all_crashes)
    printf("explore: %" PRIu64 " crash files in %s (one per failure)\n", s->saved, o->out);
  else if (s->saved)
    printf("explore: %" PRIu64 " crash files in %s (%u per kind of failure, more when a "
           "failing run reached new states)\n",
           s->saved, o->out, s->files_per_kind);
  if (s->unkept)
    printf("explore: %" PRIu64 " failures of kinds that had their files were counted, not "
           "saved (--all-crashes saves every one)\n",
           s->unkept);
  if (s->diverged)
    printf("explore: %" PRIu64 " failures did not fail again when re-run from their scenario (the "
           "target is not deterministic): %s/diverged-*\n",
           s->diverged, o->out);
  cli_print_worn("explore", s->fd_restarts, s->memory_restarts);
  if (s->corpus_unsaved)
    cli_error("explore: %" PRIu64 " corpus files could not be written in %s", s->corpus_unsaved,
              o->corpus);
  if (s->saved && o->origins)
    printf("explore: how each crash file was reached (its root, and the states its branches "
           "forked at): %s\n",
           o->origins);
  if (s->origins_unsaved)
    cli_error("explore: %" PRIu64 " lines could not be added to %s", s->origins_unsaved,
              o->origins);
}

/* The summary as one JSON object in a file (--json), for the tools that
 * run explore (the nightly job): the counts of the summary line. */
static int write_json(const char *path, const sf_explore_summary *s) {
  char tmp[4300];
  FILE *f = cli_create(path, tmp, sizeof tmp);
  if (!f)
    return -1;
  cli_json j;
  cj_begin(&j, f);
  cj_obj(&j);
#define JSON_COUNT_(name, what) cj_kint(&j, #name, (int64_t)s->name);
  SF_EXPLORE_COUNTS(JSON_COUNT_)
#undef JSON_COUNT_
  cj_kint(&j, "kinds", (int64_t)s->kinds);
  cj_kint(&j, "milliseconds", (int64_t)(s->seconds * 1000));
  cj_end_obj(&j);
  fputc('\n', f);
  return cli_commit(f, tmp, path);
}

#define HELP_EXPLORE                                                                               \
  "explore -o DIR : checkpoint-and-branch exploration\n\n"                                         \
  "SYNOPSIS\n"                                                                                     \
  "  explore -o DIR [--time S] [--jobs N] [--seed N] [--roots N] [--depth D] [--energy K]\n"       \
  "          [--budget B] [--warmup W] [--keep N] [--worn V] [--share time|runs] [--corpus DIR]\n" \
  "          [--stop-on-first] [--all-crashes] [--timeout S] [--rss-limit-mb MB] [--stats]\n"      \
  "          [--json FILE] [--origins FILE] [-q]\n\n"                                              \
  "DESCRIPTION\n"                                                                                  \
  "  Runs the sweep's random scenarios (seeds N, N+1, ...) as roots. When a run reaches an\n"      \
  "  abstract state (feature bucket, sometimes-assertion, new best value) that is rare across\n"   \
  "  the campaign, it branches there: each branch runs the scenario again from the start\n"        \
  "  (a run is deterministic, so it reaches the same state) and on with another future (1\n"       \
  "  to 6 random fault steps or client operations injected soon after that moment, most\n"         \
  "  within a few milliseconds to a second, half of them aimed at the node the state is\n"         \
  "  about: the one its SF_SOMETIMES_ON or SF_MAXIMIZE_ON site names, else the node whose\n"       \
  "  event reached it).\n"                                                                         \
  "  Rarer states get more branches (up to K at a state never seen before); branches branch\n"     \
  "  again up to depth D; each root's tree runs at most B branches. Nothing branches before\n"     \
  "  the first W roots ran (default 1000): until then no state can be called rare, and a bug\n"    \
  "  the sweep finds in its first seeds costs what it costs the sweep. Each job keeps up to N\n"   \
  "  of the rarest assertion-site states it reached (default 16): between roots it re-runs\n"      \
  "  the scenario that reached one (going round the sites), up to that moment, and branches\n"     \
  "  there again, so a state reached once deep in a branch gets many more futures. A rare\n"       \
  "  state first reached by a revisit's branch is kept in turn, so a ladder of rare states\n"      \
  "  is climbed one kept state after another, past depth D (up to 48 injected steps on top\n"      \
  "  of the root). One way to each state is kept; after V revisits (--worn, default 16; 0:\n"      \
  "  never), the next run that reaches it again brings a new one. These revisits take 12 of\n"     \
  "  the 33 percent of the time the branches get (--keep 0: none). Once runs fail, that share\n"   \
  "  is weighed by the new failures branches find per unit of time against the roots'\n"           \
  "  (from a quarter of it to all of it; SIMFUZZ_SEARCH=-yield: not weighed). --share runs\n"      \
  "  counts each root, branch and revisit as one run in those shares instead of timing it:\n"      \
  "  branches then cost more than their share says, as a branch runs its root's prefix\n"          \
  "  again, but with --jobs 1 and --roots N the campaign is the same on any machine under\n"       \
  "  any load (for tests). Every failure is re-run from its scenario file before it is\n"          \
  "  kept: DIR/crash-<sha1> replays, minimizes and triages like any crash file: 3 files\n"         \
  "  per kind of failure (signature), and more, up to\n"                                           \
  "  64, when a failing run reaches a rare state that no failing run of its kind reached\n"        \
  "  (two bugs that break one invariant at one site are one kind); --all-crashes keeps a\n"        \
  "  file for every failure, as the sweep does for every failing seed (up to 100,000 of a\n"       \
  "  kind; still 3 diverged-* files), for a system with a known failure that may hide\n"           \
  "  another. With --corpus, runs that reach states no run reached before are saved there\n"       \
  "  as seeds for the fuzzers.\n"                                                                  \
  "  Stops after S seconds (default 60), N roots, or the first failure; SIGINT or SIGTERM\n"       \
  "  stop it with its summary. Each run is held to the time and memory limits\n"                   \
  "  (--timeout, --rss-limit-mb): one that hangs, blows up, crashes or exits is saved as its\n"    \
  "  own failure (timeout, out-of-memory, the signal and top frame, exit N), as a root's\n"        \
  "  would be, and the campaign goes on. SIMFUZZ_SEARCH=-rerun forks the running world for\n"      \
  "  each branch instead of running it again. No process outlives the command: every worker\n"     \
  "  (and forked branch) runs in a process group of its own, killed when it ends. --stats adds,\n" \
  "  per assertion-site state, the runs that reached it, the feature buckets roots and\n"          \
  "  branches reached first, the branches' part of the time, the failures (and new ones)\n"        \
  "  of roots and of branches, the branches by the kind of state they forked at (an\n"             \
  "  assertion site's, another feature kind's, a kept state's revisit), and the states\n"          \
  "  the first job kept (each with its moment and\n"                                               \
  "  the end of its run, in virtual time). --json FILE\n"                                          \
  "  writes the summary's counts as one JSON object (roots, branches, revisits, failures,\n"       \
  "  kinds, ...). --origins FILE appends a line per crash file saved: its name, its root's\n"      \
  "  seed, and each fork that led to it, oldest first: the event after which it forked, its\n"     \
  "  virtual time, the state it forked at (an assertion site's state by name, else the kind\n"     \
  "  of feature), how many runs of the campaign had reached that state before, the node it\n"      \
  "  is about, whether a revisit of a kept state forked it, and the steps it injected. A\n"        \
  "  root's own failure has forks=0.\n\n"                                                          \
  "OPTIONS\n"                                                                                      \
  "  --jobs N   parallel workers (default 1)     --depth D   default 3\n"                          \
  "  --energy K default 8 (0: no branches)       --budget B  default 256\n"                        \
  "  --seed N   first root seed (decimal, default 0)\n\n"                                          \
  "EXIT STATUS\n"                                                                                  \
  "  0 no failure, 1 failures found, 2 usage or a failure that could not be saved (one line\n"     \
  "  says so), 3 only failures that did not fail again when re-run (DIR/diverged-*: the\n"         \
  "  target is not deterministic), 128+N stopped by signal N\n"

int cmd_explore(int argc, char **argv) {
  sf_explore_opts o;
  sf_explore_defaults(&o);
  const char *json = NULL;
  if (parse(argc, argv, &o, &json) < 0)
    return EXIT_USAGE;
  if (!o.out)
    return cli_error("explore: -o DIR is required (where crash files go)");
  if (cli_make_dir("explore", o.out) < 0 || (o.corpus && cli_make_dir("explore", o.corpus) < 0) ||
      cli_dir_writable("explore", o.out) < 0 ||
      (o.corpus && cli_dir_writable("explore", o.corpus) < 0))
    return EXIT_USAGE;
  cli_remove_stale_tmp(o.out); /* left by a write a signal cut short */
  if (o.corpus)
    cli_remove_stale_tmp(o.corpus);
  if (o.origins && cli_file_appendable("explore", o.origins) < 0)
    return EXIT_USAGE;
  if (cli_run_limits.time_ms)
    o.branch_timeout_s = (uint32_t)((cli_run_limits.time_ms + 999) / 1000);
  o.on_summary = print_summary;
  o.summary_ctx = &o;
  sf_explore_summary s;
  if (sf_explore(&o, &s) < 0)
    return EXIT_USAGE;
  int failed = s.failures > 0, replayed = s.failures > s.diverged;
  if (s.unsaved) /* a failure that should have been kept was not: said first */
    return cli_error("explore: %" PRIu64 " failures could not be saved in %s (disk full or not "
                     "writable?)",
                     s.unsaved, o.out);
  if (json && write_json(json, &s) != 0)
    return cli_error("explore: cannot write %s", json);
  if (cli_stop_signal && !failed)
    return 128 + (int)cli_stop_signal;
  return !failed ? EXIT_OK : replayed ? EXIT_FAILED : EXIT_NONDET;
}

const cli_command cli_cmd_explore = {"explore", cmd_explore, 1, HELP_EXPLORE};
