/* simfuzz explore: the command line of the explorer (harness/explore/):
 * its options, and the summary of what a campaign did. */
#include "cli.h"

#include "explore/explore.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A numeric option of `explore`: 0 done, 1 not one of them, -1 bad. */
static int number_option(sf_explore_opts *o, const char *a, const char *val) {
  static const struct {
    const char *name;
    uint64_t hi; /* 0: any 64-bit value */
    int nonzero;
  } opts[] = {
      {"--seed", 0, 0},         {"--roots", 0, 0},        {"--jobs", SF_EXPLORE_MAX_JOBS, 1},
      {"--depth", 16, 0},       {"--energy", 64, 0},      {"--keep", SF_EXPLORE_KEPT, 0},
      {"--budget", 1000000, 0}, {"--warmup", 1000000, 0}, {"--worn", 1000000, 0}};
  size_t k = 0;
  while (k < sizeof opts / sizeof opts[0] && strcmp(a, opts[k].name))
    k++;
  if (k == sizeof opts / sizeof opts[0])
    return 1;
  uint64_t v;
  if (cli_parse_u64(val, &v) < 0)
    return cli_error("explore: bad %s '%s'", a, val), -1;
  if (opts[k].hi && (v > opts[k].hi || (v == 0 && opts[k].nonzero)))
    return cli_error("explore: %s must be %s1..%" PRIu64, a, opts[k].nonzero ? "" : "0 or ",
                     opts[k].hi),
           -1;
  uint64_t *wide[] = {&o->seed_base, &o->max_roots};
  uint32_t *narrow[] = {&o->jobs,   &o->depth,  &o->energy, &o->keep,
                        &o->budget, &o->warmup, &o->worn};
  if (k < 2)
    *wide[k] = v;
  else
    *narrow[k - 2] = (uint32_t)v;
  return 0;
}

static int parse(int argc, char **argv, sf_explore_opts *o, const char **json) {
  for (int i = 0; i < argc; i++) {
    int lim = cli_limit_option(argc, argv, &i);
    if (lim < 0)
      return -1;
    if (lim)
      continue;
    const char *a = argv[i];
    int has = i + 1 < argc, r;
    if (!strcmp(a, "-o") && has) {
      o->out = argv[++i];
    } else if (!strcmp(a, "--corpus") && has) {
      o->corpus = argv[++i];
    } else if (!strcmp(a, "--json") && has) {
      *json = argv[++i];
    } else if (!strcmp(a, "--stop-on-first")) {
      o->stop_on_first = 1;
    } else if (!strcmp(a, "-q")) {
      o->quiet = 1;
    } else if (!strcmp(a, "--stats")) {
      o->stats = 1;
    } else if (!strcmp(a, "--time") && has) {
      char *end;
      o->seconds = strtod(argv[++i], &end);
      if (*end || !(o->seconds > 0 && o->seconds < 1e7))
        return cli_error("explore: bad --time '%s' (seconds)", argv[i]), -1;
    } else if (has && (r = number_option(o, a, argv[i + 1])) <= 0) {
      if (r < 0)
        return -1;
      i++;
    } else {
      return cli_error("explore: unknown argument '%s' (see: %s help explore)", a, cli_prog), -1;
    }
  }
  return 0;
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
  if (s->saved)
    printf("explore: %" PRIu64 " crash files in %s (at most %u per kind of failure)\n", s->saved,
           o->out, s->files_per_kind);
  if (s->diverged)
    printf("explore: %" PRIu64 " failures did not fail again when re-run from their scenario (the "
           "target is not deterministic): %s/diverged-*\n",
           s->diverged, o->out);
  if (s->corpus_unsaved)
    cli_error("explore: %" PRIu64 " corpus files could not be written in %s", s->corpus_unsaved,
              o->corpus);
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
  if (cli_run_limits.time_ms)
    o.branch_timeout_s = (uint32_t)((cli_run_limits.time_ms + 999) / 1000);
  o.on_summary = print_summary;
  o.summary_ctx = &o;
  sf_explore_summary s;
  if (sf_explore(&o, &s) < 0)
    return EXIT_USAGE;
  if (json && write_json(json, &s) != 0)
    return cli_error("explore: cannot write %s", json);
  int failed = s.failures > 0, replayed = s.failures > s.diverged;
  if (s.unsaved) /* a failure that should have been kept was not */
    return cli_error("explore: %" PRIu64 " failures could not be saved in %s (disk full or not "
                     "writable?)",
                     s.unsaved, o.out);
  if (cli_stop_signal && !failed)
    return 128 + (int)cli_stop_signal;
  return !failed ? EXIT_OK : replayed ? EXIT_FAILED : EXIT_NONDET;
}
