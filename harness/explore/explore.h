/* The explorer (explore.c): what a campaign is asked to do, and what it
 * did. Internal to simfuzz: `simfuzz explore` (harness/cli/explore.c)
 * fills the options from its command line and prints the summary; the
 * default job runs that command. */
#ifndef SIMFUZZ_EXPLORE_H
#define SIMFUZZ_EXPLORE_H

#include <stdint.h>

#define SF_EXPLORE_MAX_JOBS 64 /**< workers of one campaign, at most */
#define SF_EXPLORE_KEPT 16     /**< rare states each worker keeps for revisits, at most */

typedef struct sf_explore_summary sf_explore_summary;

/** A campaign's options (sf_explore_defaults fills the defaults). */
typedef struct sf_explore_opts {
  const char *out;           /**< crash files go here (required, writable) */
  const char *corpus;        /**< runs that reach new buckets are saved here; NULL: none */
  const char *origins;       /**< a line per crash file is appended here: the states its
                                  branches forked at (--origins); NULL: none */
  double seconds;            /**< the campaign's wall-clock time */
  uint64_t seed_base;        /**< the first root's sweep seed */
  uint64_t max_roots;        /**< roots per campaign, 0: until the time is up */
  uint32_t jobs;             /**< workers, 1..SF_EXPLORE_MAX_JOBS */
  uint32_t depth;            /**< branches of branches, at most */
  uint32_t energy;           /**< branches at the rarest state */
  uint32_t budget;           /**< branch runs per root */
  uint32_t warmup;           /**< roots before the first branch */
  uint32_t keep;             /**< kept states per worker, 0..SF_EXPLORE_KEPT */
  uint32_t worn;             /**< revisits after which a kept way gives way (0: never) */
  uint32_t branch_timeout_s; /**< a branch's time limit */
  int stop_on_first;         /**< end at the first failure */
  int all_crashes;           /**< a crash file for every failure, not a few of each kind */
  int quiet;                 /**< no progress lines */
  int stats;                 /**< print the kept states and shares at the end */
  int share_runs;            /**< branches' share counted in runs, not seconds (--share runs) */
  /** Called once at the end with what the campaign did, before --stats'
   *  tables; NULL: none. */
  void (*on_summary)(void *ctx, const sf_explore_summary *sum);
  void *summary_ctx;
} sf_explore_opts;

/** The campaign's counters, each named as in the summary, its JSON
 *  (`explore --json`) and the campaign's shared state:
 *    X(name, what) */
#define SF_EXPLORE_COUNTS(X)                                                                       \
  X(roots, "roots run")                                                                            \
  X(branches, "branches run")                                                                      \
  X(revisits, "revisits of kept states")                                                           \
  X(deepest, "the deepest branch's level")                                                         \
  X(failures, "failures found (each re-run before it is saved)")                                   \
  X(failures_in_branches, "of those, failures of branches and revisits")                           \
  X(news_in_roots, "failures of roots that were news: a new kind, or a new way to one")            \
  X(news_in_branches, "failures of branches and revisits that were news")                          \
  X(diverged, "failures that did not fail again from their file")                                  \
  X(revisits_diverged, "revisits that did not reach their state again")                            \
  X(saved, "crash files written")                                                                  \
  X(unsaved, "failures whose file could not be written")                                           \
  X(unkept, "failures kept as a count, with no file (their kind had its files)")                   \
  X(corpus, "corpus files written")                                                                \
  X(corpus_unsaved, "corpus files that could not be written")                                      \
  X(origins_unsaved, "crash files whose line could not be added to the --origins file")            \
  X(new_in_roots, "feature buckets a root reached first")                                          \
  X(new_in_branches, "feature buckets a branch or revisit reached first")                          \
  X(fd_restarts, "workers started afresh: the system under test left file descriptors open")       \
  X(memory_restarts, "workers started afresh: their memory grew across runs")

/** What a campaign did. */
struct sf_explore_summary {
#define SF_EXPLORE_COUNT_MEMBER_(name, what) uint64_t name;
  SF_EXPLORE_COUNTS(SF_EXPLORE_COUNT_MEMBER_)
#undef SF_EXPLORE_COUNT_MEMBER_
  uint64_t kinds;          /**< distinct failure signatures */
  double seconds;          /**< wall-clock time taken */
  uint32_t files_per_kind; /**< crash files kept per signature; more for new states */
};

/** The default options: 1 job, depth 3, energy 8, a budget of 256 branch
 *  runs per root, 60 s, the default warm-up, kept states and wear. */
void sf_explore_defaults(sf_explore_opts *o);

/** Ask the campaign of this process to stop as when its time is up (no
 *  new roots or branches; the summary as usual), now or, if none runs yet,
 *  as soon as it starts. Async-signal-safe: for a signal handler, such as
 *  the default job's when its libFuzzer job found a failure under
 *  --stop-on-first. */
void sf_explore_stop(void);

/** Run a campaign of the target this binary was built for. Returns 0 with
 *  *sum filled, or -1 when it could not start (a message says why). */
int sf_explore(const sf_explore_opts *o, sf_explore_summary *sum);

#endif
