/* The version: version.h's macros, the library's runtime answer and the
 * CMake project's version are one version. */
#include "testlib.h"

#include <simfuzz/version.h>

#include <stdio.h>
#include <string.h>

TEST(headers_library_and_cmake_agree) {
  CHECK_EQ(simfuzz_version(), (unsigned)SIMFUZZ_VERSION_HEX);
  char want[32];
  snprintf(want, sizeof want, "%d.%d.%d", SIMFUZZ_VERSION_MAJOR, SIMFUZZ_VERSION_MINOR,
           SIMFUZZ_VERSION_PATCH);
  CHECK_EQ(strcmp(simfuzz_version_string(), want), 0);
  CHECK_EQ(strcmp(simfuzz_version_string(), SF_CMAKE_PROJECT_VERSION), 0);
  CHECK_EQ(simfuzz_version() >> 16, (unsigned)SIMFUZZ_VERSION_MAJOR);
  CHECK_EQ((simfuzz_version() >> 8) & 0xff, (unsigned)SIMFUZZ_VERSION_MINOR);
  CHECK_EQ(simfuzz_version() & 0xff, (unsigned)SIMFUZZ_VERSION_PATCH);
}

TEST(at_least_compares_major_then_minor_then_patch) {
  CHECK(SIMFUZZ_VERSION_AT_LEAST(SIMFUZZ_VERSION_MAJOR, SIMFUZZ_VERSION_MINOR,
                                 SIMFUZZ_VERSION_PATCH));
  CHECK(SIMFUZZ_VERSION_AT_LEAST(0, 0, 0));
  CHECK(SIMFUZZ_VERSION_AT_LEAST(0, 5, 9));
  CHECK(!SIMFUZZ_VERSION_AT_LEAST(SIMFUZZ_VERSION_MAJOR, SIMFUZZ_VERSION_MINOR + 1, 0));
  CHECK(!SIMFUZZ_VERSION_AT_LEAST(SIMFUZZ_VERSION_MAJOR + 1, 0, 0));
  CHECK(!SIMFUZZ_VERSION_AT_LEAST(SIMFUZZ_VERSION_MAJOR, SIMFUZZ_VERSION_MINOR,
                                  SIMFUZZ_VERSION_PATCH + 1));
}

TEST_MAIN(T(headers_library_and_cmake_agree), T(at_least_compares_major_then_minor_then_patch))
