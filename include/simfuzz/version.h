/*
 * simfuzz's version: the release these headers belong to, and the release
 * of the library a program runs with.
 *
 * The numbers here are the project's one home of its version: CMake reads
 * them into project(VERSION), the package version file and the pkg-config
 * files. A minor release may add functions and scenario fields, and
 * before 1.0 it may also change how a scenario file runs; CHANGELOG.md
 * lists every such change. A patch release does neither.
 */
#ifndef SIMFUZZ_VERSION_H
#define SIMFUZZ_VERSION_H

#define SIMFUZZ_VERSION_MAJOR 0
#define SIMFUZZ_VERSION_MINOR 7
#define SIMFUZZ_VERSION_PATCH 0

/* The version as one number, 0xMMmmpp: compare with
 * SIMFUZZ_VERSION_AT_LEAST() or against simfuzz_version(). */
#define SIMFUZZ_VERSION_HEX                                                                        \
  ((SIMFUZZ_VERSION_MAJOR << 16) | (SIMFUZZ_VERSION_MINOR << 8) | SIMFUZZ_VERSION_PATCH)

/* True when these headers are release major.minor.patch or newer. */
#define SIMFUZZ_VERSION_AT_LEAST(major, minor, patch)                                              \
  (SIMFUZZ_VERSION_HEX >= (((major) << 16) | ((minor) << 8) | (patch)))

#ifdef __cplusplus
extern "C" {
#endif

/** The version of the simfuzz library linked in, as SIMFUZZ_VERSION_HEX
 *  was when it was built. A program built against one release's headers
 *  and linked with another can tell by comparing the two. */
unsigned simfuzz_version(void);

/** The same version as text, "MAJOR.MINOR.PATCH"; a static string. */
const char *simfuzz_version_string(void);

#ifdef __cplusplus
}
#endif

#endif
