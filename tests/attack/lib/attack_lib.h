/* A library of the attack project, linked as a LIBRARIES entry. */
#ifndef ATTACK_LIB_H
#define ATTACK_LIB_H
#include <stdint.h>
/** Asserts that n0 booted fewer than three times (attack 10 fails it). */
void attack_lib_check(uint32_t boots);
#endif
