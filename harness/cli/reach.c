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
      cli_record_send(io->res_fd, &rec);
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

int cmd_reach(int argc, char **argv) {
  int json = 0, require = 0, rc = EXIT_OK;
  char **files = NULL;
  size_t nfiles = 0, cap = 0;
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "--json"))
      json = 1;
    else if (!strcmp(argv[i], "--require-all"))
      require = 1;
    else if (argv[i][0] == '-' && argv[i][1])
      return cli_error("reach: unknown option '%s' (see: %s help reach)", argv[i], cli_prog);
    else if (collect(argv[i], &files, &nfiles, &cap) != 0)
      rc = EXIT_USAGE;
  }
  size_t nsites;
  sf_site *sites = sf_sites(&nsites);
  size_t bytes = (nsites + 1) * sizeof(tally);
  tally *t = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (t == MAP_FAILED)
    sf_out_of_memory("reach");
  for (size_t i = 0; i < nsites; i++) {
    t[i].first = -1;
    t[i].best_at = -1;
  }
  reach_job job = {files, nfiles, nsites, 0, t};
  cli_child *c = malloc(sizeof *c);
  if (!c)
    sf_out_of_memory("reach");
  char **crashed = NULL;
  size_t ncrashed = 0, ccap = 0;
  while (job.start < nfiles && nsites && !cli_interrupted) {
    reach_state st = {0, 0};
    if (cli_child_spawn(c, worker, &job) != 0) {
      rc = cli_error("reach: cannot start a worker: %s", strerror(errno));
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
    char **g = cli_grow(crashed, &ccap, ncrashed, sizeof *crashed, 8);
    if (!g)
      sf_out_of_memory("reach");
    crashed = g;
    crashed[ncrashed++] = files[at];
    job.start = at + 1;
  }
  free(c);
  size_t never = 0, reached = 0;
  for (size_t i = 0; i < nsites; i++) {
    if (t[i].runs)
      reached++;
    else if (sites[i].kind != SF_SITE_MAXIMIZE)
      never++;
  }
  if (json) {
    cli_json j;
    cj_begin(&j, stdout);
    cj_obj(&j);
    cj_kstr(&j, "target", cli_target->name);
    cj_kint(&j, "inputs", (int64_t)nfiles);
    cj_kint(&j, "sites", (int64_t)nsites);
    cj_kint(&j, "reached", (int64_t)reached);
    cj_kint(&j, "never", (int64_t)never); /* sometimes/reachable sites no input reached */
    cj_karr(&j, "assertions");
    for (size_t i = 0; i < nsites; i++) {
      cj_obj(&j);
      cj_kstr(&j, "kind", kind_name(sites[i].kind));
      cj_kstr(&j, "name", sites[i].name);
      cj_kstr(&j, "file", sites[i].file);
      cj_kint(&j, "line", sites[i].line);
      cj_kint(&j, "hits", t[i].runs);
      cj_kstr(&j, "first", t[i].first >= 0 ? files[t[i].first] : "");
      if (sites[i].kind == SF_SITE_MAXIMIZE) {
        cj_kint(&j, "best", (int64_t)t[i].best);
        cj_kstr(&j, "best_input", t[i].best_at >= 0 ? files[t[i].best_at] : "");
      }
      cj_end_obj(&j);
    }
    cj_end_arr(&j);
    cj_karr(&j, "crashed");
    for (size_t i = 0; i < ncrashed; i++)
      cj_str(&j, crashed[i]);
    cj_end_arr(&j);
    cj_end_obj(&j);
    printf("\n");
  } else {
    printf("reach: %zu inputs, %zu assertion sites, %zu reached, %zu never reached\n", nfiles,
           nsites, reached, never);
    for (size_t i = 0; i < nsites; i++) {
      printf("  %-9s %-6s %s  (%s:%d)\n", kind_name(sites[i].kind), t[i].runs ? "" : "NEVER",
             sites[i].name, sites[i].file, sites[i].line);
      if (t[i].runs)
        printf("            %" PRIu32 " inputs, first %s\n", t[i].runs, files[t[i].first]);
      if (t[i].runs && sites[i].kind == SF_SITE_MAXIMIZE)
        printf("            best %" PRIu64 " by %s\n", t[i].best, files[t[i].best_at]);
    }
    for (size_t i = 0; i < ncrashed; i++)
      printf("reach: %s crashed the system under test; its hits are not counted\n", crashed[i]);
  }
  munmap(t, bytes);
  for (size_t i = 0; i < nfiles; i++)
    free(files[i]);
  free(files);
  free(crashed);
  if (rc == EXIT_OK && require && never)
    rc = EXIT_FAILED;
  return rc;
}
