/* Feedback as ordinary coverage: one distinct instrumented code path per
 * feature bucket, so libFuzzer (SanitizerCoverage) and AFL++ (edge
 * coverage) both see abstract-state novelty without engine-specific
 * counters. The function is compiled without optimisation so the compiler
 * cannot merge the cases of the switch into one block or a lookup table. */
#include <simfuzz/simfuzz_runner.h>

#if defined(__clang__)
#define SF_NOOPT __attribute__((noinline, optnone))
#elif defined(__GNUC__)
#define SF_NOOPT __attribute__((noinline, optimize("O0")))
#else
#define SF_NOOPT
#endif

/* Two-level switch (64 x 64): 4096 distinct blocks, each with its own
 * side-effect-free barrier, while SanitizerCoverage's switch tracing
 * compares against 64 + 64 case values per call instead of 4096. */
#define IN1(o, i)                                                                                  \
  case (i):                                                                                        \
    __asm__ volatile("" : : "r"((unsigned)((o)*64 + (i))));                                        \
    break;
#define IN4(o, i) IN1(o, i) IN1(o, (i) + 1) IN1(o, (i) + 2) IN1(o, (i) + 3)
#define IN16(o, i) IN4(o, i) IN4(o, (i) + 4) IN4(o, (i) + 8) IN4(o, (i) + 12)
#define IN64(o) IN16(o, 0) IN16(o, 16) IN16(o, 32) IN16(o, 48)
#define OUT1(o)                                                                                    \
  case (o):                                                                                        \
    switch (lo) {                                                                                  \
      IN64(o)                                                                                      \
    default: break;                                                                                \
    }                                                                                              \
    break;
#define OUT4(o) OUT1(o) OUT1((o) + 1) OUT1((o) + 2) OUT1((o) + 3)
#define OUT16(o) OUT4(o) OUT4((o) + 4) OUT4((o) + 8) OUT4((o) + 12)

SF_NOOPT void sf_feedback_path(uint32_t b) {
  _Static_assert(SF_FB_PATHS == 64 * 64, "the switch below has 64 x 64 paths");
  unsigned hi = (b % SF_FB_PATHS) / 64, lo = b % 64;
  switch (hi) {
    OUT16(0)
    OUT16(16)
    OUT16(32)
    OUT16(48)
  default: break;
  }
}
