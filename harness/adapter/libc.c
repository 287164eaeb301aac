/* Routing of C library randomness, time and allocation into the simulator
 * (simfuzz_libc.h). The __wrap_* functions are reached only through
 * -Wl,--wrap=<name> (simfuzz_add_target's ROUTE); their __real_*
 * counterparts are weak so that wrapping one function does not require
 * wrapping the others. This file itself never calls a routable function by
 * its plain name (a wrapped build would route it back here). */
#include "run/hooks.h"
#include <simfuzz/simfuzz_libc.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/types.h>

uint64_t sf_libc_random(void) {
  int node;
  sim_world *w = sim_current(&node);
  return w ? sim_node_random(w, node) : 0;
}

static void to_timespec(int64_t ns, struct timespec *ts) {
  int64_t s = ns / 1000000000ll, r = ns % 1000000000ll;
  if (r < 0) {
    r += 1000000000ll;
    s--;
  }
  ts->tv_sec = (time_t)s;
  ts->tv_nsec = (long)r;
}

int sf_libc_clock(clockid_t clock, struct timespec *ts) {
  int node;
  sim_world *w = sim_current(&node);
  if (!w)
    return -1;
  int wall = clock == CLOCK_REALTIME;
#ifdef CLOCK_REALTIME_COARSE
  wall |= clock == CLOCK_REALTIME_COARSE;
#endif
#ifdef CLOCK_TAI
  wall |= clock == CLOCK_TAI;
#endif
  int64_t ns;
  if (node < 0) {
    uint64_t now = sim_now(w);
    ns = now > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)now;
  } else {
    ns = wall ? sim_clock(w, node) : sim_clock_mono(w, node);
  }
  if (__builtin_add_overflow(ns, wall ? SF_LIBC_EPOCH_S * 1000000000ll : 1000000000ll, &ns))
    ns = INT64_MAX; /* the base is positive: saturate upwards */
  to_timespec(ns, ts);
  return 0;
}

/* ---- allocation ------------------------------------------------------- */

static int alloc_fails(void) {
  int node;
  sim_world *w = sim_current(&node);
  return w && node >= 0 && sim_faultpoint(w, node, SIM_FAULTPOINT_ALLOC);
}

/* A block of the deterministic heap that is not live went to sf_free() or
 * sf_realloc(): the running node's failure (heap_misuse), as the C library
 * would abort. Returns 1. */
static int heap_misuse(const char *call) {
  int node;
  sim_world *w = sim_current(&node);
  if (w)
    SIM_INVARIANT(w, node, 0, "heap_misuse", "%s() of a block that is not live (freed twice?)",
                  call);
  else
    abort();
  return 1;
}

/* The running world's deterministic heap (sim_heap_alloc: fixed addresses,
 * zero-filled), or the C library's outside a world. */
static void *alloc_here(size_t size) {
  sim_world *w = sim_current(NULL);
  return w ? sim_heap_alloc(w, size) : malloc(size ? size : 1);
}

void *sf_malloc(size_t size) {
  return alloc_fails() ? NULL : alloc_here(size);
}

void *sf_calloc(size_t n, size_t size) {
  size_t total;
  if (__builtin_mul_overflow(n, size, &total) || alloc_fails())
    return NULL;
  void *p = alloc_here(total);
  if (p && !sim_current(NULL))
    memset(p, 0, total); /* the heap's blocks start zero-filled */
  return p;
}

void *sf_realloc(void *p, size_t size) {
  if (!p)
    return sf_malloc(size);
  if (!sim_heap_owns(p)) /* the C library's block stays the C library's */
    return alloc_fails() ? NULL : realloc(p, size ? size : 1);
  size_t old = sim_heap_size(p);
  if (!old && heap_misuse("realloc"))
    return NULL;
  void *q = sf_malloc(size);
  if (!q)
    return NULL; /* the old block is unchanged, as realloc leaves it */
  memcpy(q, p, old < size ? old : size);
  sf_free(p);
  return q;
}

void *sf_aligned_alloc(size_t align, size_t size) {
  if (alloc_fails())
    return NULL;
  if (align <= 16) /* every block of the heap is 16-byte aligned */
    return alloc_here(size);
  void *p = NULL; /* (the heap has no wider alignments: the C library's block) */
  return posix_memalign(&p, align, size) == 0 ? p : NULL;
}

void sf_free(void *p) {
  if (sim_heap_owns(p)) {
    if (sim_heap_free(p) < 0)
      heap_misuse("free");
    return;
  }
  free(p);
}

/* ---- --wrap targets --------------------------------------------------- */

/* Declared here only: reached through the linker, never from headers. */
int __wrap_rand(void);
void __wrap_srand(unsigned seed);
long __wrap_random(void);
void __wrap_srandom(unsigned seed);
time_t __wrap_time(time_t *t);
int __wrap_gettimeofday(struct timeval *tv, void *tz);
int __wrap_clock_gettime(clockid_t clock, struct timespec *ts);
ssize_t __wrap_getrandom(void *buf, size_t len, unsigned flags);

extern int __real_rand(void) __attribute__((weak));
extern void __real_srand(unsigned seed) __attribute__((weak));
extern long __real_random(void) __attribute__((weak));
extern void __real_srandom(unsigned seed) __attribute__((weak));
extern time_t __real_time(time_t *t) __attribute__((weak));
extern int __real_gettimeofday(struct timeval *tv, void *tz) __attribute__((weak));
extern int __real_clock_gettime(clockid_t clock, struct timespec *ts) __attribute__((weak));
extern ssize_t __real_getrandom(void *buf, size_t len, unsigned flags) __attribute__((weak));

/* glibc's assert(): the target's builds link with -Wl,--wrap=__assert_fail
 * (simfuzz_add_target), so a failed assertion of the system under test, or
 * of a library linked statically into it, reaches this hook. During a run
 * the runner records it as the run's failure (sf__run_assert_failed); in
 * abort mode (fuzzers) glibc's own handler then aborts from the
 * assertion's stack, so crash deduplication tells assertions apart.
 * Outside a run it is glibc's assert. */
void __wrap___assert_fail(const char *expr, const char *file, unsigned line, const char *func);
extern void __real___assert_fail(const char *expr, const char *file, unsigned line,
                                 const char *func) __attribute__((weak, noreturn));

void __wrap___assert_fail(const char *expr, const char *file, unsigned line, const char *func) {
  sf__run_assert_failed(expr, file, line, func);
  if (__real___assert_fail)
    __real___assert_fail(expr, file, line, func);
  abort();
}

int __wrap_rand(void) {
  if (sim_current(NULL))
    return (int)(sf_libc_random() % ((uint64_t)RAND_MAX + 1));
  return __real_rand ? __real_rand() : 0;
}

void __wrap_srand(unsigned seed) {
  if (!sim_current(NULL) && __real_srand)
    __real_srand(seed);
}

long __wrap_random(void) {
  if (sim_current(NULL))
    return (long)(sf_libc_random() & 0x7fffffff);
  return __real_random ? __real_random() : 0;
}

void __wrap_srandom(unsigned seed) {
  if (!sim_current(NULL) && __real_srandom)
    __real_srandom(seed);
}

time_t __wrap_time(time_t *t) {
  struct timespec ts;
  if (sf_libc_clock(CLOCK_REALTIME, &ts) == 0) {
    if (t)
      *t = ts.tv_sec;
    return ts.tv_sec;
  }
  return __real_time ? __real_time(t) : (time_t)-1;
}

int __wrap_gettimeofday(struct timeval *tv, void *tz) {
  struct timespec ts;
  if (sf_libc_clock(CLOCK_REALTIME, &ts) == 0) {
    if (tv) {
      tv->tv_sec = ts.tv_sec;
      tv->tv_usec = ts.tv_nsec / 1000;
    }
    return 0;
  }
  return __real_gettimeofday ? __real_gettimeofday(tv, tz) : -1;
}

int __wrap_clock_gettime(clockid_t clock, struct timespec *ts) {
  if (ts && sf_libc_clock(clock, ts) == 0)
    return 0;
  return __real_clock_gettime ? __real_clock_gettime(clock, ts) : -1;
}

ssize_t __wrap_getrandom(void *buf, size_t len, unsigned flags) {
  if (!sim_current(NULL)) {
    if (__real_getrandom)
      return __real_getrandom(buf, len, flags);
    errno = ENOSYS;
    return -1;
  }
  uint8_t *b = buf;
  uint64_t r = 0;
  for (size_t i = 0; i < len; i++) { /* little-endian on every host */
    if (i % 8 == 0)
      r = sf_libc_random();
    b[i] = (uint8_t)(r >> (8 * (i % 8)));
  }
  return (ssize_t)len;
}
