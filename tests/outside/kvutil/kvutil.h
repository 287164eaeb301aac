#ifndef KVUTIL_H
#define KVUTIL_H
#include <stdint.h>
/** The value a writer stores for (key, version). */
uint64_t kvutil_value(uint32_t key, uint64_t version, uint64_t seed);
#endif
