/* The runner's internal entry points: the explorer's hooks into a run (how
 * simfuzz's own explorer, the `explore` command and the default job's
 * worker, watches a run for new abstract states and branches from it), and
 * the assert() wrap's way into the running scenario. Internal: not
 * installed, and not part of the runner's API in
 * <simfuzz/simfuzz_runner.h>, which only carries a pointer to the hooks
 * (sf_run_opts.hooks). */
#ifndef SIMFUZZ_RUN_HOOKS_H
#define SIMFUZZ_RUN_HOOKS_H

#include <simfuzz/scenario.h>
#include <simfuzz/sim.h>
#include <simfuzz/simfuzz_runner.h>

#include <stdint.h>

/** What sf_run calls back during a run (sf_run_opts.hooks). */
typedef struct sf_run_hooks sf_run_hooks;
struct sf_run_hooks {
  /** Called after an event (in the event loop) once for each feature
   *  bucket the run reached for the first time during it, in the order
   *  reached; kind is the kind (SF_FT_*, run/features.h) of the feature
   *  that reached it: SF_FT_SITE for an assertion site's bucket (its first
   *  hit or a new best value). node is the node the state is about: the one its site
   *  named (SF_SOMETIMES_ON, SF_MAXIMIZE_ON), else the node the event ran on
   *  (sim_event_node; -1 for a world-level event). It may fork(): the child
   *  goes on with the run. Setting it computes features even when the build
   *  emits none. */
  void (*on_novel)(void *ctx, sim_world *w, uint32_t bucket, int kind, int node);
  void *ctx;
  /** If nonzero, on_event(ctx, w) is called once, after event number
   *  at_event (after the checks and on_novel, in the event loop; it may
   *  fork() and call sf_run_inject like on_novel). The explorer revisits a
   *  state this way: it re-runs the scenario that reached it, up to the
   *  event after which it did. */
  uint64_t at_event;
  void (*on_event)(void *ctx, sim_world *w);
};

/** From inside the on_novel or on_event hook only: add step st to the
 *  running scenario now. It is scheduled at st->at_us, or at once if that
 *  has passed, just as a replay schedules a scenario step whose
 *  after_event is the number returned (the events run so far): appending
 *  st with that after_event to the scenario gives a file that replays this
 *  run exactly, provided steps injected at one event are appended in the
 *  order injected, with non-decreasing times. Returns 0 (nothing added)
 *  outside the hooks or when the scenario has no room for another step. */
uint32_t sf_run_inject(sim_world *w, const sf_step *st);

/** A failed assert() of the system under test (the target's builds wrap
 *  glibc's __assert_fail, harness/adapter/libc.c): inside a run, recorded
 *  as the run's failure "assert" at file:line. In record mode it does not
 *  return (the run ends); in abort mode, and outside a run, it returns and
 *  the caller aborts. */
void sf__run_assert_failed(const char *expr, const char *file, unsigned line, const char *func);

/** The process's lowest free file descriptor, -1 if none is free (EMFILE):
 *  how the fuzzers' driver and the tools' workers see a system under test
 *  that leaves descriptors open across runs. */
int sf__lowest_free_fd(void);
/** Is descriptor fd open on the file (dev, ino) still? A tool's own
 *  descriptor may have been closed by the system under test, and the
 *  number taken by a file of its own (as a daemon does at start).
 *  Async-signal-safe. */
int sf__fd_is(int fd, uint64_t dev, uint64_t ino);

#endif
