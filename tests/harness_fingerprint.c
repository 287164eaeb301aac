/* The harness's fingerprint: the trace hash and end of the random scenario
 * of each seed 0..N-1 on one target (sf_target_x), one line per seed.
 * tests/determinism_matrix.sh builds it with several compilers and
 * optimisation levels and requires byte-identical output. */
#include <simfuzz/scenario.h>
#include <simfuzz/simfuzz_runner.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

extern const sf_target sf_target_x;

int main(int argc, char **argv) {
  uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 300;
  sf_scenario *s = malloc(sizeof *s);
  sf_result *r = malloc(sizeof *r);
  if (!s || !r)
    return 2;
  sf_run_opts o = {0};
  for (uint64_t seed = 0; seed < n; seed++) {
    sf_generate_seed(seed, s);
    sf_run(&sf_target_x, s, &o, r);
    printf("seed %" PRIu64 " hash %016" PRIx64 " events %" PRIu64 " t=%" PRIu64 "%s%s\n", seed,
           r->hash, r->stats.events, r->end_time, r->failed ? " FAILED " : "",
           r->failed ? r->failure.name : "");
  }
  free(s);
  free(r);
  return 0;
}
