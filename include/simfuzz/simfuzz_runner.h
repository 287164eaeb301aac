/*
 * simfuzz runner and tool API: executing scenarios against a target, as the
 * fuzz drivers, the command line and tests do. A target's author does not
 * need this header (see simfuzz.h); tools built on simfuzz do.
 *
 * sf_run() runs one decoded scenario (scenario.h) on a fresh world and
 * returns what happened in an sf_result; sf_run_input() decodes any bytes
 * first, exactly as the fuzzers do. Every run is a pure function of the
 * target's code and the scenario.
 */
#ifndef SIMFUZZ_RUNNER_H
#define SIMFUZZ_RUNNER_H

#include "scenario.h"
#include "simfuzz.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

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
  /** If set (one entry per site of sf_sites()), each site this run hits
   *  gets its entry incremented once (`simfuzz reach`). */
  uint32_t *site_runs;
  /** If set (one entry per site), each site's entry is raised to the
   *  highest value this run gave it (SF_MAXIMIZE; 1 for the others). */
  uint64_t *site_best;
  /** simfuzz's own explorer's hooks (internal); NULL for any other caller. */
  const struct sf_run_hooks *hooks;
} sf_run_opts;

#define SF_MAX_EVENTS 300000u /**< default per-run event budget */

/** What one run did. */
struct sf_result {
  int failed;               /**< 1 if an invariant, end check or liveness failed */
  sim_failure failure;      /**< valid when failed */
  sim_stop stop;            /**< why the simulation stopped */
  const char *budget;       /**< budget reason when stop == SIM_STOP_BUDGET */
  uint64_t hash;            /**< trace hash at the end (or at the failure) */
  uint64_t end_time;        /**< virtual time at the end, ns */
  sim_stats stats;          /**< fault counters */
  int nodes;                /**< node count used */
  uint32_t steps_run;       /**< steps executed */
  uint32_t fault_steps_run; /**< fault-injecting steps executed */
  uint32_t ops_run;         /**< client operations executed */
  uint32_t features;        /**< distinct feedback features reached */
  sf_decode_kind decoded;   /**< how the input was read (sf_run_input) */
  /** 1 if a failed assert() of the system under test ended the run
   *  (failure.name is "assert"): its state was abandoned, not torn down,
   *  and a tool that runs many scenarios should go on in a fresh process. */
  int crashed;
  uint32_t nexec;                   /**< steps in the execution log below */
  uint16_t exec_step[SF_MAX_STEPS]; /**< index of each executed step, in order */
  uint64_t exec_time[SF_MAX_STEPS]; /**< virtual time it ran, ns */
};

/** The sweep's scenario of a seed for target t: sf_generate_seed(), then,
 *  for a target of several versions, its version plan
 *  (sf_generate_versions); t NULL: no target, no plan. Every tool that
 *  turns a seed into a scenario (sweep, explore's roots, gen) calls this. */
void sf_target_seed_scenario(const sf_target *t, uint64_t seed, sf_scenario *s);

/** Run one scenario against a target. Returns 1 if it failed, else 0. */
int sf_run(const sf_target *t, const sf_scenario *s, const sf_run_opts *o, sf_result *r);

/** Decode any bytes (sf_decode) and run them. Returns 1 if it failed. */
int sf_run_input(const sf_target *t, const uint8_t *data, size_t len, const sf_run_opts *o,
                 sf_result *r);

/** The fuzzing entry point shared by the libFuzzer and AFL++ drivers:
 *  abort on failure (after the report and the determinism re-check),
 *  feedback on unless the build disabled it. */
void sf_fuzz_one(const sf_target *t, const uint8_t *data, size_t len);

/** Process-level setup for fuzzing drivers and for tools that run many
 *  scenarios (the CLI calls it), once at startup: keeps glibc from
 *  returning and re-faulting the heap between executions (the
 *  per-execution allocations are freed every time), and with the
 *  environment variable SIMFUZZ_PRINT_HASH=1 makes sf_fuzz_one print each
 *  run's trace hash to stderr ("simfuzz-hash H"). No effect on runs. */
void sf_driver_init(void);

/** Out of memory in simfuzz's own code (the simulator, the runner, the
 *  tools): never a finding about the system under test. Every layer ends
 *  the process the same way: one line "simfuzz: out of memory in WHERE" on
 *  stderr and exit status 2. (The simulator, a library, stops the run with
 *  the budget reason "out of memory"; the runner then calls this.) Isolated
 *  runs of the tools record such a run as "out-of-memory", as when a run
 *  exceeds --rss-limit-mb. */
#if defined(__GNUC__)
__attribute__((noreturn))
#endif
void sf_out_of_memory(const char *where);

/** Print a failure report for a finished run (the format fuzzers print
 *  before aborting): failure, last `last` events, fault counters, replay. */
void sf_print_report(const sf_target *t, const sf_scenario *s, const sf_result *r, sim_world *w,
                     FILE *f, const char *input, int last);

/** Print a crash report for a run that the system under test is ending
 *  with signal sig (0: a sanitizer's error, reported above), from that
 *  signal's handler: the signal and `where` it came from (a function name,
 *  or NULL), the node and virtual time of the run's last trace record (the
 *  event the system was handling), the last `last` events, the fault
 *  counters and the replay command. w: the run's world (NULL: none yet),
 *  with a trace ring (sf_run_opts.trace_ring) for anything past the first
 *  line. Uses no heap memory; not async-signal-safe (stdio). */
void sf_print_crash_report(const sf_target *t, const sim_world *w, int sig, const char *where,
                           FILE *f, const char *input, int last);

/** Number of nodes a scenario runs with on a target. */
int sf_nodes_for(const sf_target *t, const sf_scenario *s);

/** The target's client nodes in every run (sf_target.client_nodes, at
 *  most SIM_MAX_NODES / 2). */
int sf_client_nodes(const sf_target *t);

/** The target the current fuzzer or command-line binary was built for
 *  (defined by the stub that simfuzz_add_target() generates). */
extern const sf_target *const sf_this_target;

/* ---- feedback: features computed in harness/run/features.c, emitted as
 * instrumented code paths by harness/run/feedback.c ------------------- */

/** Feature buckets at most: the abstract states a run's features hash
 *  into. A run uses the first 4096 (SF_FB_NARROW) or, with
 *  SIMFUZZ_SEARCH=+wide, all of them. */
#define SF_FB_BUCKETS 65536u
#define SF_FB_NARROW 4096u /**< the buckets of a run by default */
#define SF_FB_PATHS 4096u  /**< distinct feedback code paths */

/** Execute the instrumented code path of feature bucket b (mod
 *  SF_FB_PATHS: the buckets of a wide run fold onto the paths). Both
 *  libFuzzer's and AFL++'s edge coverage see each path. */
void sf_feedback_path(uint32_t b);

/** 1 if this build emits feedback (SIMFUZZ_FEEDBACK), else 0. */
int sf_feedback_enabled(void);

#ifdef __cplusplus
}
#endif
#endif
