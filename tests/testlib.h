/* Minimal test framework: each TEST runs in its own process when started by
 * ctest (`binary case`); `binary` alone runs every case, each in a forked
 * child, and prints "N passed, M failed". */
#ifndef SIMFUZZ_TESTLIB_H
#define SIMFUZZ_TESTLIB_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <simfuzz/sim.h>

#define TEST(name) static void test_##name(void)
#define T(name)                                                                                    \
  { #name, test_##name, 0 }
/* A helper: an entry point that a test runs in a child process by name
 * (`binary name`), which checks nothing itself. It is not a test: ctest
 * does not register it and `binary` alone does not run it. */
#define HELPER(name) static void helper_##name(void)
#define H(name)                                                                                    \
  { #name, helper_##name, 1 }

typedef struct {
  const char *name;
  void (*fn)(void);
  int helper; /**< HELPER(), not a test */
} test_case;

/** malloc that fails the test on NULL. */
void *test_alloc(size_t n);

/** A test-only pseudo-random sequence (splitmix64) over *state. */
uint64_t test_rand(uint64_t *state);

/** Run the cases named on the command line, or all of them. */
int test_main(const test_case *cases, size_t n, int argc, char **argv);

#define TEST_MAIN(...)                                                                             \
  int main(int argc, char **argv) {                                                                \
    static const test_case cases_[] = {__VA_ARGS__};                                               \
    return test_main(cases_, sizeof cases_ / sizeof cases_[0], argc, argv);                        \
  }

#define CHECK(cond)                                                                                \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);                     \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

#define CHECK_EQ(a, b)                                                                             \
  do {                                                                                             \
    long long a_ = (long long)(a), b_ = (long long)(b);                                            \
    if (a_ != b_) {                                                                                \
      fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %lld, %s == %lld\n", __FILE__, __LINE__, #a,  \
              a_, #b, b_);                                                                         \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

#define CHECK_HASH(a, b)                                                                           \
  do {                                                                                             \
    uint64_t a_ = (a), b_ = (b);                                                                   \
    if (a_ != b_) {                                                                                \
      fprintf(stderr, "%s:%d: hashes differ: %016" PRIx64 " vs %016" PRIx64 "\n", __FILE__,        \
              __LINE__, a_, b_);                                                                   \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

/* ---- recorder: a system under test that logs every callback ---------- */

enum { R_BOOT = 1, R_RECV, R_TIMER, R_CONN, R_TEARDOWN };

typedef struct {
  int kind, node, peer, cev;
  uint64_t time, val;
  size_t len;
  sim_conn conn;
} rec_event;

#define REC_MAX 8192
typedef struct recorder {
  rec_event ev[REC_MAX];
  int n;
  int echo; /* recv: send the payload back */
} recorder;

/** Node callbacks that append to the recorder (ctx). */
extern const sim_node_ops recorder_ops;

/** A config for the recorder with n nodes and seed; no latency jitter
 *  (fixed 1 ms) so tests can state exact times. */
sim_config recorder_config(recorder *r, int nodes, uint64_t seed);

/** The default config with n nodes running ops (no context). */
sim_config ops_config(const sim_node_ops *ops, int nodes);

/** A zeroed recorder on the heap (free it with free). */
recorder *recorder_new(void);

/** Create a world and run the boots at time 0. */
sim_world *recorder_world(const sim_config *cfg);

/** Number of recorded events of `kind` at `node` (-1: any node). */
int rec_count(const recorder *r, int kind, int node);

/** The first recorded event of `kind` at `node` (-1: any node) after
 *  `after` (NULL: from the start), or NULL. */
const rec_event *rec_next(const recorder *r, const rec_event *after, int kind, int node);

/** Loop over the recorded events of `kind` at `node` (-1: any node), in
 *  order, as `const rec_event *e`. */
#define REC_EACH(e, r, kind, node)                                                                 \
  for (const rec_event *e = rec_next((r), NULL, (kind), (node)); e;                                \
       e = rec_next((r), e, (kind), (node)))

/** Start a test on a recorder: declares `recorder *r` and `sim_config c`
 *  for `nodes` nodes and `seed` (change c, then recorder_world(&c)). */
#define FX_BEGIN(nodes, seed)                                                                      \
  recorder *r = recorder_new();                                                                    \
  sim_config c = recorder_config(r, (nodes), (seed))

/** FX_BEGIN with the default config, and the world: declares r, c and
 *  `sim_world *w`, the boots at time 0 done. */
#define FX_WORLD(nodes, seed)                                                                      \
  FX_BEGIN(nodes, seed);                                                                           \
  sim_world *w = recorder_world(&c)

/** End it: destroy world w and free the recorder. */
#define FX_END()                                                                                   \
  do {                                                                                             \
    sim_world_destroy(w);                                                                          \
    free(r);                                                                                       \
  } while (0)

/** Send a datagram carrying value v (8 bytes, little-endian). */
int send_u64(sim_world *w, int from, int to, uint64_t v);

#endif
