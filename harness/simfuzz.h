/*
 * simfuzz target API: what a user writes to fuzz their own protocol, and the
 * runner that every simfuzz tool (fuzzers, CLI, tests) uses to execute one
 * scenario against a target.
 *
 * A target bundles the simulator's node callbacks with a workload hook for
 * client operations, invariants checked after every event, checks at the
 * end, a liveness predicate, and helpers for reports and feedback (message
 * describer, classifier, state observer). One target becomes a libFuzzer
 * fuzzer, an AFL++ fuzzer and a CLI with simfuzz_add_target() in CMake; see
 * docs/writing-a-target.md.
 */
#ifndef SIMFUZZ_H
#define SIMFUZZ_H

#include "scenario.h"
#include "sim.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Mark oracle code (invariants, end checks, liveness predicate, observer)
 *  with SF_ORACLE: the fuzzers then do not see the checker's own branches
 *  as coverage, so the corpus grows with the system's behaviour rather than
 *  with the bookkeeping of its oracles, and runs are faster. */
#if defined(__clang__) && __clang_major__ >= 13
#define SF_ORACLE __attribute__((no_sanitize("coverage")))
#else
#define SF_ORACLE
#endif

/** One client operation from a scenario's ClientOp step. */
typedef struct sf_op {
  int node;       /**< node the client talks to (already taken modulo nodes) */
  uint32_t op;    /**< target-defined operation code */
  uint64_t key;   /**< target-defined */
  uint64_t value; /**< target-defined */
  uint32_t seq;   /**< 0, 1, 2, ... over the whole run: a unique request id */
} sf_op;

/** A named check. Each check should be its own function containing its
 *  SIM_INVARIANT()s, so that every invariant aborts from its own stack. */
typedef struct sf_check {
  const char *name;
  void (*fn)(void *ctx, sim_world *w);
} sf_check;

/** A system under test. Arrays of checks end with a {NULL, NULL} entry. */
typedef struct sf_target {
  const char *name;    /**< [A-Za-z0-9_]; planted bugs: <system>_bug_<what> */
  const char *summary; /**< one line for --help and reports */
  int min_nodes, max_nodes, default_nodes;
  /** Per-run context (the cluster's state shared by callbacks and checks);
   *  NULL is allowed when create is NULL. */
  void *(*create)(int nodes);
  /** Free the context after the world is destroyed. */
  void (*destroy)(void *ctx);
  /** Node callbacks; ctx is the context from create. */
  const sim_node_ops *ops;
  /** Execute one client operation (may be NULL: ops are then ignored). */
  void (*workload)(void *ctx, sim_world *w, const sf_op *op);
  /** Checked after every event (may be NULL). */
  const sf_check *invariants;
  /** Checked once at the end of a run that did not fail (may be NULL). */
  const sf_check *end_checks;
  /** Liveness predicate for Liveness steps (may be NULL: no liveness). */
  int (*live)(void *ctx, sim_world *w);
  /** Describes a message for timelines (may be NULL). */
  sim_describe_fn describe;
  /** Small protocol-level message kind for traces and feedback (may be NULL). */
  sim_classify_fn classify;
  /** The time (ms) within which the target promises liveness after every
   *  fault is healed; a Liveness step's deadline is never shorter (0 = the
   *  step's own deadline). */
  uint32_t liveness_ms;
  /** Abstract state of a node for feedback (role such as follower/leader,
   *  optionally mixed with a small term bucket); 0 = unknown or down. */
  uint32_t (*observe)(void *ctx, sim_world *w, int node);
} sf_target;

typedef struct sf_result sf_result;

/** Runner options. Zero-initialised = record failures, no feedback. */
typedef struct sf_run_opts {
  int abort_on_failure; /**< report, re-check determinism, abort at the site */
  int feedback;         /**< emit abstract-state features as coverage */
  uint32_t trace_ring;  /**< records kept for reports (0 = 256) */
  sim_trace_fn trace;   /**< extra consumer of every trace record */
  void *trace_ctx;
  FILE *report;        /**< where failure reports go (NULL = stderr) */
  const char *input;   /**< input file name for the replay line, if known */
  uint64_t max_events; /**< event budget (0 = SF_MAX_EVENTS) */
  /** Called at the end of the run, before the world is destroyed (reports
   *  that need the trace ring). */
  void (*on_finish)(void *ctx, sim_world *w, const struct sf_result *r);
  void *finish_ctx;
  /** If set (SF_FB_BUCKETS/64 words), the run's feature buckets are ORed in
   *  (computed even when the build emits no feedback): for measuring what a
   *  corpus reached. */
  uint64_t *feature_bits;
} sf_run_opts;

#define SF_MAX_EVENTS 300000u /**< default per-run event budget */

/** What one run did. */
struct sf_result {
  int failed;                       /**< 1 if an invariant, end check or liveness failed */
  sim_failure failure;              /**< valid when failed */
  sim_stop stop;                    /**< why the simulation stopped */
  const char *budget;               /**< budget reason when stop == SIM_STOP_BUDGET */
  uint64_t hash;                    /**< trace hash at the end (or at the failure) */
  uint64_t end_time;                /**< virtual time at the end, ns */
  sim_stats stats;                  /**< fault counters */
  int nodes;                        /**< node count used */
  uint32_t steps_run;               /**< steps executed */
  uint32_t fault_steps_run;         /**< fault-injecting steps executed */
  uint32_t ops_run;                 /**< client operations executed */
  uint32_t features;                /**< distinct feedback features reached */
  sf_decode_kind decoded;           /**< how the input was read (sf_run_input) */
  uint32_t nexec;                   /**< steps in the execution log below */
  uint16_t exec_step[SF_MAX_STEPS]; /**< index of each executed step, in order */
  uint64_t exec_time[SF_MAX_STEPS]; /**< virtual time it ran, ns */
};

/** Run one scenario against a target. Returns 1 if it failed, else 0. */
int sf_run(const sf_target *t, const sf_scenario *s, const sf_run_opts *o, sf_result *r);

/** Decode any bytes (sf_decode) and run them. Returns 1 if it failed. */
int sf_run_input(const sf_target *t, const uint8_t *data, size_t len, const sf_run_opts *o,
                 sf_result *r);

/** The fuzzing entry point shared by the libFuzzer and AFL++ drivers:
 *  abort on failure (after the report and the determinism re-check),
 *  feedback on unless the build disabled it. */
void sf_fuzz_one(const sf_target *t, const uint8_t *data, size_t len);

/** Process-level setup for fuzzing drivers, called once at startup: keeps
 *  glibc from returning and re-faulting the heap between executions (the
 *  per-execution allocations are freed every time), and with the
 *  environment variable SIMFUZZ_PRINT_HASH=1 makes sf_fuzz_one print each
 *  run's trace hash to stderr ("simfuzz-hash H"). No effect on runs. */
void sf_driver_init(void);

/** Print a failure report for a finished run (the format fuzzers print
 *  before aborting): failure, last `last` events, fault counters, replay. */
void sf_print_report(const sf_target *t, const sf_scenario *s, const sf_result *r, sim_world *w,
                     FILE *f, const char *input, int last);

/** Number of nodes a scenario runs with on a target. */
int sf_nodes_for(const sf_target *t, const sf_scenario *s);

/** The target the current fuzzer/CLI binary was built for (defined by the
 *  stub that simfuzz_add_target() generates). */
extern const sf_target *const sf_this_target;

/* ---- feedback (harness/feedback.c) ----------------------------------- */

#define SF_FB_BUCKETS 4096u /**< distinct feedback code paths */

/** Execute the instrumented code path of feature bucket b (mod buckets).
 *  Both libFuzzer's and AFL++'s edge coverage see each bucket. */
void sf_feedback_path(uint32_t b);

/** 1 if this build emits feedback (SIMFUZZ_FEEDBACK), else 0. */
int sf_feedback_enabled(void);

#ifdef __cplusplus
}
#endif
#endif
