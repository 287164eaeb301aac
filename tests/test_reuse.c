/*
 * In-process reuse: N consecutive executions in one process (the way
 * libFuzzer and AFL++'s persistent mode run) over a cycle of distinct
 * inputs must give every input the same trace hash every time, with flat
 * memory. The first round's hashes and a sample of inputs are written out
 * so that tests/reuse.sh can compare them with fresh processes (the CLI);
 * LeakSanitizer checks for leaks at exit in sanitized builds.
 *
 * Usage: test_reuse N OUT_DIR   (N executions; inputs = N / 1000 rounds of
 *        1000 distinct inputs: sweep scenarios, raw bytes, mutated seeds)
 */
#include "engine/mutate.h"
#include <simfuzz/simfuzz_runner.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

extern const sf_target sf_target_pbstore, sf_target_raft_kv, sf_target_twopc, sf_target_leaselock;

enum { DISTINCT = 1000, SAMPLE = 40 };

static long rss_kib(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  long pages = 0, resident = 0;
  if (f) {
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
      resident = 0;
    fclose(f);
  }
  return resident * 4;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s N OUT_DIR\n", argv[0]);
    return 2;
  }
  uint64_t total = strtoull(argv[1], NULL, 10);
  const sf_target *targets[] = {&sf_target_pbstore, &sf_target_raft_kv, &sf_target_twopc,
                                &sf_target_leaselock};
  static uint8_t in[DISTINCT][1024];
  static size_t len[DISTINCT];
  static uint64_t hash[DISTINCT];
  sf_driver_init();
  sf_scenario *s = calloc(1, sizeof *s);
  if (!s)
    return 2;
  for (int i = 0; i < DISTINCT; i++) { /* a third each: sweep, raw, mutated */
    uint64_t x = sim_mix64((uint64_t)i + 1);
    if (i % 3 == 0) {
      sf_generate_seed(x, s);
      len[i] = sf_encode_fit(s, in[i], sizeof in[i]);
    } else if (i % 3 == 1) {
      len[i] = 16 + x % 512;
      for (size_t j = 0; j < len[i]; j++)
        in[i][j] = (uint8_t)sim_mix64(x + j);
    } else {
      sf_generate_seed(x, s);
      len[i] = sf_encode_fit(s, in[i], sizeof in[i]);
      for (int m = 0; m < 3; m++)
        len[i] = sf_mutate(in[i], len[i], sizeof in[i], x + (uint64_t)m, NULL);
    }
  }
  free(s);
  long rss_first = 0;
  uint64_t mismatches = 0;
  for (uint64_t k = 0; k < total; k++) {
    int i = (int)(k % DISTINCT);
    const sf_target *t = targets[i % 4];
    sf_result r;
    sf_run_input(t, in[i], len[i], NULL, &r);
    if (k < DISTINCT)
      hash[i] = r.hash;
    else if (r.hash != hash[i] && mismatches++ < 5)
      fprintf(stderr, "execution %" PRIu64 ": input %d hash %016" PRIx64 ", first %016" PRIx64 "\n",
              k, i, r.hash, hash[i]);
    if (k + 1 == 10 * DISTINCT || (k + 1 == total && !rss_first))
      rss_first = rss_kib();
  }
  long rss_last = rss_kib();
  char path[4096];
  snprintf(path, sizeof path, "%s/hashes.txt", argv[2]);
  FILE *f = fopen(path, "w");
  if (!f)
    return 2;
  for (int i = 0; i < SAMPLE; i++) {
    char name[4096];
    snprintf(name, sizeof name, "%s/in-%03d.bin", argv[2], i * (DISTINCT / SAMPLE));
    FILE *g = fopen(name, "wb");
    if (!g || fwrite(in[i * (DISTINCT / SAMPLE)], 1, len[i * (DISTINCT / SAMPLE)], g) !=
                  len[i * (DISTINCT / SAMPLE)])
      return 2;
    fclose(g);
    fprintf(f, "%s %s %016" PRIx64 "\n", targets[(i * (DISTINCT / SAMPLE)) % 4]->name, name,
            hash[i * (DISTINCT / SAMPLE)]);
  }
  fclose(f);
  printf("reuse: %" PRIu64 " executions of %d distinct inputs in one process: %" PRIu64
         " hash mismatches; RSS %ld KiB after 10k, %ld KiB at the end\n",
         total, DISTINCT, mismatches, rss_first, rss_last);
  int flat = rss_last - rss_first <= 4096; /* pages touched once, not growth */
  if (!flat)
    printf("reuse: RSS grew by %ld KiB\n", rss_last - rss_first);
  return mismatches == 0 && flat ? 0 : 1;
}
