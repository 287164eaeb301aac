/*
 * Linearizability checking of client histories (Wing & Gong's search with
 * Lowe's memoization, as in Knossos and Porcupine), with per-key
 * decomposition.
 *
 * A history is a list of operations, each with the time it was invoked and
 * the time its response arrived. An operation whose response never came
 * (client timeout, crashed node) is *pending*: it may have taken effect at
 * any point after its invocation, or not at all. The history is
 * linearizable if every completed operation (and any subset of the pending
 * ones) can be ordered so that the order respects real time (an operation
 * that returned before another was invoked comes first) and the sequential
 * model accepts every operation with the output that was observed.
 *
 * Plugging in another model: give sf_lin_model an initial state and a step
 * function over a 64-bit state (per key: operations on different keys never
 * interact, which the checker exploits by checking each key on its own).
 * Models whose state does not fit 64 bits can keep their state in a table
 * and use the 64 bits as an index into it, as long as equal states get
 * equal indices.
 */
#ifndef SIMFUZZ_LINEARIZE_H
#define SIMFUZZ_LINEARIZE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SF_LIN_PENDING UINT64_MAX /**< return time of an operation that never returned */

/** One client operation. */
typedef struct sf_lin_op {
  uint64_t key;       /**< operations on different keys are independent */
  uint32_t kind;      /**< model-defined operation (e.g. SF_KV_PUT) */
  uint64_t arg, arg2; /**< inputs */
  uint64_t out;       /**< observed output (ignored while pending) */
  uint64_t call;      /**< invocation time */
  uint64_t ret;       /**< response time, or SF_LIN_PENDING */
  uint32_t client;    /**< who issued it (reports only) */
} sf_lin_op;

/** A sequential model. */
typedef struct sf_lin_model {
  const char *name;
  /** Initial state of every key. */
  uint64_t initial;
  /** Apply op to state: return 1 and set *next if op, with its observed
   *  output, is possible from state; 0 if not. For a pending op
   *  (op->ret == SF_LIN_PENDING) the output is unknown: accept any. */
  int (*step)(uint64_t state, const sf_lin_op *op, uint64_t *next);
  /** Describe an op for reports (may be NULL). */
  int (*describe)(const sf_lin_op *op, char *buf, size_t cap);
} sf_lin_model;

/** Key-value register model: PUT(key, arg) -> ok; GET(key) -> value (0 =
 *  absent); CAS(key, arg=expected, arg2=new) -> 1 swapped / 0 not;
 *  DEL(key) -> ok. */
enum { SF_KV_PUT = 1, SF_KV_GET = 2, SF_KV_CAS = 3, SF_KV_DEL = 4 };
extern const sf_lin_model sf_kv_model;

typedef enum {
  SF_LIN_OK = 0,        /**< linearizable */
  SF_LIN_VIOLATION = 1, /**< not linearizable (for sure) */
  SF_LIN_UNKNOWN = 2,   /**< the search exceeded its budget: no verdict */
} sf_lin_result;

/** Search budget; zero fields take defaults. */
typedef struct sf_lin_budget {
  uint64_t max_steps;       /**< search steps over all keys (default 1,000,000: within the
                                 harness's per-run budget of well under a second) */
  uint64_t max_cache_bytes; /**< memoization memory (default 16 MiB) */
  size_t max_ops_per_key;   /**< larger keys are "unknown" (default 4096) */
} sf_lin_budget;

/** What a check found. */
typedef struct sf_lin_report {
  sf_lin_result result;
  uint64_t key;      /**< the key that is not linearizable (or unknown) */
  size_t ops_on_key; /**< operations on that key */
  size_t failed_op;  /**< index (into the input) of an op the search could
                          not place after the longest linearizable prefix */
  size_t prefix;     /**< length of that longest prefix */
  uint64_t steps;    /**< search steps used */
  char message[256]; /**< one line for reports */
} sf_lin_report;

/** Check a history. ops need not be sorted. rep may be NULL. */
sf_lin_result sf_linearizable(const sf_lin_model *m, const sf_lin_op *ops, size_t n,
                              const sf_lin_budget *budget, sf_lin_report *rep);

/* ---- recording a history during a run ----------------------------------- */

/** A client history being recorded (owned by the target's context). */
typedef struct sf_history {
  sf_lin_op *ops;
  size_t n, cap, max; /* max: operations kept (0 = 100000); later ones are dropped */
  size_t dropped;
  uint64_t last; /* the latest time recorded (see sf_history_invoke) */
} sf_history;

/* Times: a simulator's moments are often shared (a client completes one
 * operation and invokes the next in the same event), and the checker
 * orders only a response strictly before an invocation. So each time
 * recorded is later than the one before it, by a nanosecond if need be:
 * the history keeps the order in which things happened, ties included. */

/** Record an invocation at time `now`; returns its id (use it to complete
 *  the operation), or SIZE_MAX if the history is full (the op is dropped and
 *  a later check answers "unknown" rather than judging a partial history). */
size_t sf_history_invoke(sf_history *h, uint32_t client, uint32_t kind, uint64_t key, uint64_t arg,
                         uint64_t arg2, uint64_t now);

/** Record the response of operation id with output out at time `now`.
 *  Operations never completed stay pending. Unknown ids are ignored. */
void sf_history_complete(sf_history *h, size_t id, uint64_t out, uint64_t now);

/** Check the recorded history against a model (see sf_linearizable). */
sf_lin_result sf_history_check(const sf_history *h, const sf_lin_model *m,
                               const sf_lin_budget *budget, sf_lin_report *rep);

/** Free the history's memory. */
void sf_history_free(sf_history *h);

#ifdef __cplusplus
}
#endif
#endif
