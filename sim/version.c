/* The version of the library linked in (version.h). */
#include <simfuzz/version.h>

#define SF_STR_(x) #x
#define SF_STR(x) SF_STR_(x)

unsigned simfuzz_version(void) {
  return SIMFUZZ_VERSION_HEX;
}

const char *simfuzz_version_string(void) {
  return SF_STR(SIMFUZZ_VERSION_MAJOR) "." SF_STR(SIMFUZZ_VERSION_MINOR) "." SF_STR(
      SIMFUZZ_VERSION_PATCH);
}
