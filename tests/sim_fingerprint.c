/* Prints the trace hashes of fixed scenarios, one per line. Builds from
 * different compilers and optimisation levels must print the same lines
 * (tests/determinism_matrix.sh). Usage: sim_fingerprint [count] */
#include "chatter.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 500;
  for (uint64_t s = 0; s < n; s++)
    printf("%" PRIu64 " %016" PRIx64 "\n", s, chatter_swarm_hash(s, NULL));
  return 0;
}
