/*
 * Resource bounds per input: for every target built into this binary, run
 * its seed scenarios, random byte strings (the generator path), random
 * seeds' scenarios, mutated seeds (structure-aware, several rounds) and
 * hostile extremes (maximal steps, nodes, counts and times), and report the
 * p50 / p99 / max wall time per input and the peak RSS of the process.
 *
 * Usage: bench_bounds CORPUS_ROOT [N]
 *   CORPUS_ROOT: build/corpus (the seeds of target T are CORPUS_ROOT/T/NAME.pb)
 *   N: inputs of each generated kind per target (default 2000)
 * Exit status 1 if any input exceeds the budgets the harness promises
 * (1 s per input, 64 MiB of peak RSS), else 0.
 */
#include "engine/mutate.h"
#include <simfuzz/simfuzz_runner.h>

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

extern const sf_target *const sf_bench_targets[];

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long peak_rss_kib(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct {
  double *t;
  size_t n, cap;
  uint64_t events_max;
} series;

static void add(series *s, double t, uint64_t events) {
  if (s->n == s->cap) {
    s->cap = s->cap ? s->cap * 2 : 1024;
    s->t = realloc(s->t, s->cap * sizeof *s->t);
    if (!s->t)
      abort();
  }
  s->t[s->n++] = t;
  if (events > s->events_max)
    s->events_max = events;
}

static void run_one(const sf_target *t, const uint8_t *d, size_t n, series *s) {
  sf_result r;
  double a = now_s();
  sf_run_input(t, d, n, NULL, &r);
  add(s, now_s() - a, r.stats.events);
}

static uint64_t rng(uint64_t *x) {
  return sim_mix64(*x += 0x9e3779b97f4a7c15ull);
}

/* The largest scenario the decoder accepts: every step, every node, long
 * repeated client operations, liveness windows at the end. */
static size_t hostile(uint64_t k, uint8_t *buf, size_t cap) {
  sf_scenario *s = calloc(1, sizeof *s);
  if (!s)
    abort();
  sf_scenario_init(s);
  s->nodes = SIM_MAX_NODES;
  s->seed = k;
  s->tail_ms = SF_MAX_TAIL_MS;
  s->has_net = 1;
  s->net.dup_ppm = 500000;
  s->net.reorder_ppm = 500000;
  for (uint32_t i = 0; i < SF_MAX_STEPS; i++) {
    sf_step *st = &s->steps[s->nsteps++];
    memset(st, 0, sizeof *st);
    st->at_us = (uint64_t)i * (SF_MAX_AT_US / SF_MAX_STEPS);
    st->kind = (uint8_t)(k % 2 ? SF_STEP_OP : 1 + (i + k) % (SF_STEP__COUNT - 2));
    st->node = i;
    st->peer = i * 7;
    st->count = SF_MAX_OP_COUNT;
    st->interval_us = 1;
    st->mask_a = ~0ull;
  }
  s->tape_len = SIM_TAPE_MAX;
  memset(s->tape, (int)k, sizeof s->tape);
  size_t n = sf_encode_fit(s, buf, cap);
  free(s);
  return n;
}

static void report(const char *target, const char *kind, series *s, double *worst) {
  if (!s->n)
    return;
  qsort(s->t, s->n, sizeof *s->t, cmp_double);
  double p50 = s->t[s->n / 2], p99 = s->t[(s->n * 99) / 100], max = s->t[s->n - 1];
  if (max > *worst)
    *worst = max;
  printf("%-26s %-10s %7zu %10.3f %10.3f %10.3f %10" PRIu64 "\n", target, kind, s->n, p50 * 1e3,
         p99 * 1e3, max * 1e3, s->events_max);
  free(s->t);
  memset(s, 0, sizeof *s);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s CORPUS_ROOT [N]\n", argv[0]);
    return 2;
  }
  size_t N = argc > 2 ? (size_t)strtoull(argv[2], NULL, 10) : 2000;
  static uint8_t buf[SF_MAX_INPUT], seed_buf[64][SF_MAX_INPUT / 16];
  size_t seed_len[64];
  double worst = 0;
  sf_driver_init();
  printf("%-26s %-10s %7s %10s %10s %10s %10s\n", "target", "inputs", "n", "p50 ms", "p99 ms",
         "max ms", "max events");
  for (const sf_target *const *tp = sf_bench_targets; *tp; tp++) {
    const sf_target *t = *tp;
    series s = {0};
    /* seeds */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", argv[1], t->name);
    size_t nseeds = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) && nseeds < 64) {
      if (!strstr(e->d_name, ".pb"))
        continue;
      char path[8192];
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      FILE *f = fopen(path, "rb");
      if (!f)
        continue;
      seed_len[nseeds] = fread(seed_buf[nseeds], 1, sizeof seed_buf[0], f);
      fclose(f);
      run_one(t, seed_buf[nseeds], seed_len[nseeds], &s);
      nseeds++;
    }
    if (d)
      closedir(d);
    report(t->name, "seeds", &s, &worst);
    uint64_t x = 0x5eed;
    for (size_t i = 0; i < N; i++) { /* random bytes: the generator path */
      size_t n = (size_t)(rng(&x) % 2048);
      for (size_t j = 0; j < n; j++)
        buf[j] = (uint8_t)rng(&x);
      run_one(t, buf, n, &s);
    }
    report(t->name, "random", &s, &worst);
    for (size_t i = 0; i < N; i++) { /* the random-seed sweep's scenarios */
      sf_scenario *sc = calloc(1, sizeof *sc);
      if (!sc)
        abort();
      sf_generate_seed(rng(&x), sc);
      sf_result r;
      double a = now_s();
      sf_run(t, sc, NULL, &r);
      add(&s, now_s() - a, r.stats.events);
      free(sc);
    }
    report(t->name, "sweep", &s, &worst);
    for (size_t i = 0; nseeds && i < N; i++) { /* mutated seeds, 1-8 rounds */
      size_t k = (size_t)(rng(&x) % nseeds), n = seed_len[k];
      memcpy(buf, seed_buf[k], n);
      for (uint64_t m = 0, rounds = 1 + rng(&x) % 8; m < rounds; m++)
        n = sf_mutate(buf, n, sizeof buf, rng(&x), NULL);
      run_one(t, buf, n, &s);
    }
    report(t->name, "mutated", &s, &worst);
    for (uint64_t k = 0; k < 8; k++) {
      size_t n = hostile(k, buf, sizeof buf);
      run_one(t, buf, n, &s);
    }
    report(t->name, "hostile", &s, &worst);
  }
  long rss = peak_rss_kib();
  printf("peak RSS of the whole process: %.1f MiB; slowest input: %.1f ms\n", (double)rss / 1024.0,
         worst * 1e3);
  int ok = worst <= 1.0 && rss <= 64 * 1024;
  printf("budgets (<= 1 s per input, <= 64 MiB): %s\n", ok ? "met" : "EXCEEDED");
  return ok ? 0 : 1;
}
