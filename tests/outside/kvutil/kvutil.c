/* A helper library of the outside project, linked as a LIBRARIES entry. */
#include "kvutil.h"

uint64_t kvutil_value(uint32_t key, uint64_t version, uint64_t seed) {
  uint64_t x = seed ^ ((uint64_t)key << 48) ^ version * 0x9e3779b97f4a7c15ull;
  x ^= x >> 31;
  return x | 1; /* never 0: 0 means "no value" */
}
