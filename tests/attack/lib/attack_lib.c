/* The library's own invariant, an assert() as libraries write them. */
#include "attack_lib.h"

#include <assert.h>

void attack_lib_check(uint32_t boots) {
  assert(boots < 3 && "the library's own invariant");
}
