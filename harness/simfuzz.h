/*
 * simfuzz target API: what you write to fuzz your own protocol.
 *
 * A target bundles the simulator's node callbacks (sim.h) with a workload
 * hook for client operations, invariants checked after every event, checks
 * at the end of a run, a liveness predicate, and helpers for reports and
 * feedback (message describer, classifier, state observer). In CMake,
 *
 *     find_package(simfuzz CONFIG REQUIRED)
 *     simfuzz_add_target(NAME myproto SOURCES myproto_target.c ...)
 *
 * turns it into a libFuzzer fuzzer, an AFL++ fuzzer, a command-line tool and
 * a seed corpus, each compiling your sources the same way (docs/writing-a-
 * target.md). The build defines two macros for your sources:
 *
 *     SF_TARGET_NAME    the target's name as a string ("myproto")
 *     SF_TARGET_SYMBOL  the identifier your target object must have
 *
 * so a target file ends with
 *
 *     SF_TARGET(.summary = "my protocol", .min_nodes = 3, .ops = &ops, ...);
 *
 * (the same as `const sf_target SF_TARGET_SYMBOL = {.name = SF_TARGET_NAME,
 * ...};`)
 * and keeps everything else `static`: one source file may be built as
 * several targets (a correct system and its planted-bug variants).
 *
 * Helpers for adapters: simfuzz_wire.h (message encoding with checksums),
 * simfuzz_record.h (durable checksummed records on the simulated disk),
 * linearize.h (client histories and the linearizability checker),
 * simfuzz_libc.h (routing a library's rand(), time and allocation into the
 * simulator). The runner and the tools' API is simfuzz_runner.h.
 */
#ifndef SIMFUZZ_H
#define SIMFUZZ_H

#include "sim.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Define the target this build is for, named by the build: the fields of
 *  an sf_target initializer, without .name (see the file comment). */
#define SF_TARGET(...) const sf_target SF_TARGET_SYMBOL = {.name = SF_TARGET_NAME, __VA_ARGS__}

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

#ifdef __cplusplus
}
#endif
#endif
