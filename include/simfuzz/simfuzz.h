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

/** The nodes whose state the latest event can have changed, for checks run
 *  after every event that need to look only at what changed: [*from, *to)
 *  is the event's node, or every node after a world-level event (a
 *  scenario step such as a crash or a client operation, a sim_at() call).
 *  A node's code changes only its own state, so a per-node check over this
 *  range finds what a check over every node finds. */
static inline void sf_changed_nodes(const sim_world *w, int *from, int *to) {
  int k = sim_event_node(w);
  *from = k < 0 ? 0 : k;
  *to = k < 0 ? sim_nodes(w) : k + 1;
}

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
   *  fault is healed; a Liveness step's deadline is never shorter (0: the
   *  default, SF_DEFAULT_LIVENESS_MS; a scenario may lengthen it, never
   *  shorten it). The window opens once messages sent before the
   *  heal can have arrived (after the longest one-way delay of the run). */
  uint32_t liveness_ms;
  /** Abstract state of a node for feedback (role such as follower/leader,
   *  optionally mixed with a small term bucket); 0 = unknown or down. */
  uint32_t (*observe)(void *ctx, sim_world *w, int node);
  /** Client nodes: the world has this many more nodes after the target's
   *  own, ids nodes .. nodes + client_nodes - 1, that run the target's
   *  clients (programs, simfuzz_program.h). The scenario's faults never
   *  name them (its node numbers are taken modulo the target's nodes), and
   *  they stay in a split's first group. 0 for most targets. */
  int client_nodes;
  /** Versions of the target's code a node can run (simfuzz_add_program's
   *  VERSIONS), at most SF_MAX_VERSIONS; 0 or 1: one. With several, a
   *  scenario chooses each node's starting version and may upgrade nodes
   *  (the Upgrade step); a node's boot reads its version with
   *  sim_node_version(). The sweep's scenarios then carry a version plan
   *  (sf_generate_versions). */
  uint32_t versions;
  /** 1 if the target's state is the process's rather than its context's
   *  (a program's globals, simfuzz_program.h): one run at a time, so no
   *  run may start while another is live. The fuzzers' failure report
   *  then leaves its determinism re-run, which would start inside the
   *  failed run, to `check-determinism`. 0 for most targets. */
  int exclusive;
  /** The node's epoch for feedback: Raft's term, a view or ballot number,
   *  a lease generation; NULL when the protocol has none. With it, each
   *  delivery is a feature of its message's epoch (its sender's at the
   *  send) against its receiver's (older, the same or newer, by one or
   *  more) and of whether the receiver's role or epoch moved on it: "a
   *  message from an older epoch was acted on" needs no annotation. Called
   *  for an up node only, while a message is sent or delivered and after
   *  an event; it must only read. */
  uint64_t (*epoch)(void *ctx, sim_world *w, int node);
} sf_target;

/* ---- sometimes, reachability and progress assertions ------------------

 * Statements about a whole campaign rather than one run: a state that some
 * run must reach (SF_SOMETIMES, SF_REACHABLE) or a quantity to push as high
 * as possible (SF_MAXIMIZE, as IJON's IJON_MAX). They never fail a run.
 * Each one is a site in a catalog the linker builds (the section sf_site_catalog),
 * so `simfuzz reach` lists the sites no input ever reached. Every site is
 * also feedback: the first hit in a run, and every new best value of a
 * maximized quantity, are features both fuzzers keep inputs for and the
 * explorer branches at. The name is a string literal; w is the run's world.
 *
 *     SF_SOMETIMES(w, uncommitted > 0 && is_leader, "leader with old-term entries");
 *     SF_MAXIMIZE(w, "replicas holding an uncommitted entry", n);
 *
 * The _ON forms also say which node the state is about (for example the
 * leader holding those entries). The explorer aims the faults of the
 * futures it tries from that state at that node; without it, it aims them
 * at the node whose event reached the state, which is not always the node
 * that matters (a newer leader's write ends an old leader's safe lease).
 */

/** What a site states. */
typedef enum {
  SF_SITE_SOMETIMES = 1, /**< its condition must hold in some run */
  SF_SITE_REACHABLE = 2, /**< it must be executed in some run */
  SF_SITE_MAXIMIZE = 3,  /**< its value should be pushed as high as possible */
} sf_site_kind;

/** One assertion site (placed in the catalog by the macros below). */
typedef struct sf_site {
  const char *name;
  const char *file;
  int line;
  int kind; /**< sf_site_kind */
} sf_site;

/** Record a hit of `site` with `value` in the run of world w (1 for
 *  SOMETIMES and REACHABLE), about `node` (-1: no node in particular).
 *  Called by the macros; no effect outside a run. */
void sf_site_hit(sim_world *w, sf_site *site, uint64_t value, int node);

/* Internal, for the macros' fast path: in the thread's run that records
 * its sites, the value each site (by catalog position) must reach to be
 * new in the run (0 until its first hit, then its best value + 1); NULL
 * while no run records them (a sweep, a replay). Set by the runner. */
extern __thread const uint64_t *sf__site_floor;
extern sf_site __start_sf_site_catalog[] __attribute__((weak));
extern sf_site __stop_sf_site_catalog[] __attribute__((weak));

/* 1 if a hit of `site` with `value` may be new to the run (then
 * sf_site_hit decides), 0 if it cannot be: no call for most hits. A site
 * outside this binary's catalog (one in a shared library has a catalog of
 * its own) is left to sf_site_hit, which reports it. */
static inline int sf__site_may_be_new(const sf_site *site, uint64_t value) {
  const uint64_t *at_least = sf__site_floor;
  uintptr_t p = (uintptr_t)site, a = (uintptr_t)__start_sf_site_catalog;
  if (!at_least)
    return 0;
  if (p < a || p >= (uintptr_t)__stop_sf_site_catalog)
    return 1;
  return value >= at_least[(p - a) / sizeof(sf_site)];
}

/** 1 if the run of world w records its sites' hits: fuzzing, exploring,
 *  `simfuzz reach`; 0 in a sweep or a replay, where a check that only
 *  annotates states (no SIM_INVARIANT) can return at once. */
int sf_sites_wanted(const sim_world *w);

/** The catalog: every site linked into this binary (*n of them, in link
 *  order); NULL when there is none. */
sf_site *sf_sites(size_t *n);

#if defined(__GNUC__)
#define SF_SITE_AT_(kind_, name_)                                                                  \
  static sf_site sf_site_ __attribute__((used, section("sf_site_catalog"), aligned(8))) = {        \
      name_, __FILE__, __LINE__, kind_}
#else
#error "the assertion catalog needs GCC or Clang (section attributes)"
#endif

/** Some run of the campaign must reach a moment where cond holds. */
#define SF_SOMETIMES(w, cond, name) SF_SOMETIMES_ON(w, cond, -1, name)

/** SF_SOMETIMES about node `node` (a node number; evaluated, as w is, only when
 *  cond holds in a run that records sites and the site is not yet hit in it). */
#define SF_SOMETIMES_ON(w, cond, node, name)                                                       \
  do {                                                                                             \
    SF_SITE_AT_(SF_SITE_SOMETIMES, name);                                                          \
    if ((cond) && sf__site_may_be_new(&sf_site_, 1))                                               \
      sf_site_hit((w), &sf_site_, 1, (int)(node));                                                 \
  } while (0)

/** Some run of the campaign must execute this statement. */
#define SF_REACHABLE(w, name)                                                                      \
  do {                                                                                             \
    SF_SITE_AT_(SF_SITE_REACHABLE, name);                                                          \
    if (sf__site_may_be_new(&sf_site_, 1))                                                         \
      sf_site_hit((w), &sf_site_, 1, -1);                                                          \
  } while (0)

/** Progress: runs that push value (an unsigned integer) higher than any
 *  run before are kept and explored further. */
#define SF_MAXIMIZE(w, name, value) SF_MAXIMIZE_ON(w, name, value, -1)

/** SF_MAXIMIZE about node `node` (the node whose state gives the value; evaluated,
 *  as w is, only when the value may be a new best of the run). */
#define SF_MAXIMIZE_ON(w, name, value, node)                                                       \
  do {                                                                                             \
    SF_SITE_AT_(SF_SITE_MAXIMIZE, name);                                                           \
    uint64_t sf_value_ = (uint64_t)(value);                                                        \
    if (sf__site_may_be_new(&sf_site_, sf_value_))                                                 \
      sf_site_hit((w), &sf_site_, sf_value_, (int)(node));                                         \
  } while (0)

#ifdef __cplusplus
}
#endif
#endif
