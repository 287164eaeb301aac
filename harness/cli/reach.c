/* simfuzz reach: which assertion sites (SF_SOMETIMES, SF_REACHABLE,
 * SF_MAXIMIZE) a corpus reaches. The inputs run in a worker process, as in
 * the sweep, so an input that crashes the system under test is skipped
 * (and named) rather than ending the report; the tallies live in memory
 * shared with the worker. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

typedef struct {
  uint32_t runs;   /* inputs that hit the site */
  int32_t first;   /* first input that hit it, -1 if none */
  uint64_t best;   /* highest value */
  int32_t best_at; /* input that reached it */
} tally;

typedef struct {
  char **files;
  size_t nfiles, nsites, start;
  tally *t; /* shared, nsites entries */
} reach_job;

static void worker(void *arg, const cli_child_io *io) {
  reach_job *j = arg;
  uint32_t *runs = calloc(j->nsites + 1, sizeof *runs);
  uint64_t *best = calloc(j->nsites + 1, sizeof *best);
  sf_scenario *s = cli_new_scenario();
  if (!runs || !best)
    sf_out_of_memory("reach");
  sf_run_opts o;
  memset(&o, 0, sizeof o);
  o.site_runs = runs;
  o.site_best = best;
  for (size_t i = j->start; i < j->nfiles; i++) {
    __atomic_store_n(&io->beat[CLI_BEAT_SEED], i, __ATOMIC_RELAXED);
    __atomic_add_fetch(&io->beat[CLI_BEAT_RUNS], 1, __ATOMIC_RELAXED);
    cli_input_kind k;
    if (cli_load(j->files[i], s, &k, NULL) < 0)
      continue;
    memset(runs, 0, j->nsites * sizeof *runs);
    memset(best, 0, j->nsites * sizeof *best);
    sf_result r;
    sf_run(cli_target, s, &o, &r);
    for (size_t k2 = 0; k2 < j->nsites; k2++) {
      tally *t = &j->t[k2];
      if (!runs[k2])
        continue;
      if (!t->runs++)
        t->first = (int32_t)i;
      if (best[k2] > t->best || t->best_at < 0) {
        t->best = best[k2];
        t->best_at = (int32_t)i;
      }
    }
    if (r.crashed) { /* a fresh worker goes on */
      cli_record rec;
      memset(&rec, 0, sizeof rec);
      rec.kind = CLI_REC_RESUME;
      rec.seed = i + 1;
      cli_record_send(io, &rec);
      break;
    }
  }
  free(runs);
  free(best);
  free(s);
}

typedef struct {
  int resume;
  uint64_t next;
} reach_state;

static void on_record(void *ctx, const cli_record *rec) {
  reach_state *st = ctx;
  if (rec->kind == CLI_REC_RESUME) {
    st->resume = 1;
    st->next = rec->seed;
  }
}

/* Add path, or the regular files of a directory (sorted), to the list. */
static int collect(const char *path, char ***files, size_t *n, size_t *cap) {
  struct stat sb;
  if (stat(path, &sb) < 0)
    return cli_error("reach: cannot read %s: %s", path, strerror(errno));
  if (!S_ISDIR(sb.st_mode)) {
    size_t len; /* a FIFO, a device, an unreadable file: a usage error, now */
    uint8_t *data = cli_read_file(path, &len);
    if (!data)
      return -1;
    free(data);
    char **f = cli_grow(*files, cap, *n, sizeof **files, 64);
    if (!f || !(f[*n] = strdup(path)))
      sf_out_of_memory("reach");
    *files = f;
    (*n)++;
    return 0;
  }
  struct dirent **ents;
  int k = scandir(path, &ents, NULL, alphasort);
  if (k < 0)
    return cli_error("reach: cannot list %s: %s", path, strerror(errno));
  for (int i = 0; i < k; i++) {
    char full[4096];
    if (ents[i]->d_name[0] != '.' &&
        snprintf(full, sizeof full, "%s/%s", path, ents[i]->d_name) < (int)sizeof full &&
        cli_regular_file(full)) {
      char **f = cli_grow(*files, cap, *n, sizeof **files, 64);
      if (!f || !(f[*n] = strdup(full)))
        sf_out_of_memory("reach");
      *files = f;
      (*n)++;
    }
    free(ents[i]);
  }
  free(ents);
  return 0;
}

static const char *kind_name(int k) {
  return k == SF_SITE_SOMETIMES ? "sometimes" : k == SF_SITE_REACHABLE ? "reachable" : "maximize";
}

/* What reach found: the inputs, the catalog's sites and their tallies,
 * the inputs that crashed the system under test. */
typedef struct {
  char **files;
  size_t nfiles;
  sf_site *sites;
  size_t nsites;
  tally *t;
  char **crashed;
  size_t ncrashed, reached, never;
} reach_result;

/* Run every input in worker processes, a new worker after each input that
 * crashes one (noted in r->crashed); 0, or -1 if no worker could start. */
static int run_inputs(reach_result *r) {
  reach_job job = {r->files, r->nfiles, r->nsites, 0, r->t};
  cli_child *c = malloc(sizeof *c);
  if (!c)
    sf_out_of_memory("reach");
  size_t ccap = 0;
  int rc = 0;
  while (job.start < r->nfiles && r->nsites && !cli_interrupted) {
    reach_state st = {0, 0};
    if (cli_child_spawn(c, worker, &job) != 0) {
      cli_error("reach: cannot start a worker: %s", strerror(errno));
      rc = -1;
      break;
    }
    int ended = cli_child_wait(c, &cli_run_limits, on_record, &st);
    if (ended == CLI_END_OK && !st.resume)
      break;
    if (st.resume && ended == CLI_END_OK) {
      job.start = st.next;
      continue;
    }
    size_t at = c->runs ? c->last_seed : job.start; /* the input it died on */
    SIM_ASSERT(at < r->nfiles);
    char **g = cli_grow(r->crashed, &ccap, r->ncrashed, sizeof *r->crashed, 8);
    if (!g)
      sf_out_of_memory("reach");
    r->crashed = g;
    r->crashed[r->ncrashed++] = r->files[at];
    job.start = at + 1;
  }
  free(c);
  return rc;
}

static void print_json(const reach_result *r) {
  cli_json j;
  cj_begin(&j, stdout);
  cj_obj(&j);
  cj_kstr(&j, "target", cli_target->name);
  cj_kint(&j, "inputs", (int64_t)r->nfiles);
  cj_kint(&j, "sites", (int64_t)r->nsites);
  cj_kint(&j, "reached", (int64_t)r->reached);
  cj_kint(&j, "never", (int64_t)r->never); /* sometimes/reachable sites no input reached */
  cj_karr(&j, "assertions");
  for (size_t i = 0; i < r->nsites; i++) {
    const sf_site *site = &r->sites[i];
    const tally *t = &r->t[i];
    cj_obj(&j);
    cj_kstr(&j, "kind", kind_name(site->kind));
    cj_kstr(&j, "name", site->name);
    cj_kstr(&j, "file", site->file);
    cj_kint(&j, "line", site->line);
    cj_kint(&j, "hits", t->runs);
    cj_kstr(&j, "first", t->first >= 0 ? r->files[t->first] : "");
    if (site->kind == SF_SITE_MAXIMIZE) {
      cj_kint(&j, "best", (int64_t)t->best);
      cj_kstr(&j, "best_input", t->best_at >= 0 ? r->files[t->best_at] : "");
    }
    cj_end_obj(&j);
  }
  cj_end_arr(&j);
  cj_karr(&j, "crashed");
  for (size_t i = 0; i < r->ncrashed; i++)
    cj_str(&j, r->crashed[i]);
  cj_end_arr(&j);
  cj_end_obj(&j);
  printf("\n");
}

static void print_text(const reach_result *r) {
  printf("reach: %zu inputs, %zu assertion sites, %zu reached, %zu never reached\n", r->nfiles,
         r->nsites, r->reached, r->never);
  for (size_t i = 0; i < r->nsites; i++) {
    const sf_site *site = &r->sites[i];
    const tally *t = &r->t[i];
    printf("  %-9s %-6s %s  (%s:%d)\n", kind_name(site->kind), t->runs ? "" : "NEVER", site->name,
           site->file, site->line);
    if (t->runs)
      printf("            %" PRIu32 " inputs, first %s\n", t->runs, r->files[t->first]);
    if (t->runs && site->kind == SF_SITE_MAXIMIZE)
      printf("            best %" PRIu64 " by %s\n", t->best, r->files[t->best_at]);
  }
  for (size_t i = 0; i < r->ncrashed; i++)
    printf("reach: %s crashed the system under test; its hits are not counted\n", r->crashed[i]);
}

#define HELP_REACH                                                                                 \
  "reach FILE|DIR... : which sometimes/reachable/maximize assertions a corpus reaches\n\n"         \
  "SYNOPSIS\n"                                                                                     \
  "  reach [--json] [--require-all] FILE|DIR...\n\n"                                               \
  "DESCRIPTION\n"                                                                                  \
  "  Runs every input (the files of a directory, not its subdirectories) and reports, for\n"       \
  "  every assertion site of the target's catalog (SF_SOMETIMES, SF_REACHABLE, SF_MAXIMIZE),\n"    \
  "  how many inputs reached it, the first input that did and, for SF_MAXIMIZE, the best\n"        \
  "  value and the input that reached it. Sites no input reached are listed as NEVER.\n"           \
  "  --json prints one JSON object instead.\n\n"                                                   \
  "EXIT STATUS\n"                                                                                  \
  "  0 done, 1 (--require-all) a sometimes or reachable site was never reached, 2 usage or an\n"   \
  "  unreadable input\n"

static int cmd_reach(int argc, char **argv) {
  int json = 0, require = 0, rc = EXIT_OK;
  char **files = NULL;
  size_t nfiles = 0, cap = 0;
  const cli_opt opts[] = {CLI_FLAG("--json", NULL, &json),
                          CLI_FLAG("--require-all", NULL, &require), CLI_END};
  int npos = cli_parse("reach", argc, argv, opts);
  if (npos < 0)
    return EXIT_USAGE;
  for (int i = 0; i < npos; i++)
    if (collect(argv[i], &files, &nfiles, &cap) != 0)
      rc = EXIT_USAGE;
  reach_result res = {files, nfiles, NULL, 0, NULL, NULL, 0, 0, 0};
  res.sites = sf_sites(&res.nsites);
  size_t bytes = (res.nsites + 1) * sizeof(tally);
  res.t = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (res.t == MAP_FAILED)
    sf_out_of_memory("reach");
  for (size_t i = 0; i < res.nsites; i++) {
    res.t[i].first = -1;
    res.t[i].best_at = -1;
  }
  if (run_inputs(&res) != 0)
    rc = EXIT_USAGE;
  for (size_t i = 0; i < res.nsites; i++) {
    if (res.t[i].runs)
      res.reached++;
    else if (res.sites[i].kind != SF_SITE_MAXIMIZE)
      res.never++;
  }
  if (json)
    print_json(&res);
  else
    print_text(&res);
  munmap(res.t, bytes);
  for (size_t i = 0; i < nfiles; i++)
    free(files[i]);
  free(files);
  free(res.crashed);
  if (rc == EXIT_OK && require && res.never)
    rc = EXIT_FAILED;
  return rc;
}

const cli_command cli_cmd_reach = {"reach", cmd_reach, 1, HELP_REACH};
