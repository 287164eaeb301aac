/* libFuzzer driver: the fuzz entry point and the structure-aware mutator
 * hooks for the target this binary was built for (sf_this_target). */
#include "mutate.h"
#include <simfuzz/simfuzz_runner.h>

#include <stddef.h>
#include <stdint.h>

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t s1, const uint8_t *d2, size_t s2,
                                 uint8_t *out, size_t max_out, unsigned int seed);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  sf_driver_init();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sf_fuzz_one(sf_this_target, data, size);
  return 0;
}

#ifndef SF_NO_CUSTOM_MUTATOR
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  return sf_mutate(data, size, max_size, seed, LLVMFuzzerMutate);
}

size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t s1, const uint8_t *d2, size_t s2,
                                 uint8_t *out, size_t max_out, unsigned int seed) {
  return sf_crossover(d1, s1, d2, s2, out, max_out, seed);
}
#endif
