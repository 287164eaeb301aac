/*
 * Structure-aware mutation of scenarios, shared by the libFuzzer mutator
 * hooks and the AFL++ custom mutator library. Every output decodes (it is a
 * re-encoded, normalised scenario) and fits in max_size. Deterministic for
 * a given seed and input.
 */
#ifndef SIMFUZZ_MUTATE_H
#define SIMFUZZ_MUTATE_H

#include <simfuzz/scenario.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A raw byte mutator (libFuzzer's LLVMFuzzerMutate), or NULL. */
typedef size_t (*sf_raw_mutate_fn)(uint8_t *data, size_t size, size_t max_size);

/** Mutate the scenario in data[0..size) in place; returns the new size
 *  (<= max_size). `raw` is used for the choice tape and, rarely, for the
 *  whole input (producing non-protobuf bytes for the generator path). */
size_t sf_mutate(uint8_t *data, size_t size, size_t max_size, uint64_t seed, sf_raw_mutate_fn raw);

/** Mutate a decoded scenario in place (1 to 3 scenario-level mutations). */
void sf_mutate_scenario(sf_scenario *s, uint64_t seed);

/** Splice two scenarios: header and early steps of one, later steps of the
 *  other, tape from either. Returns the size written to out (<= max_size). */
size_t sf_crossover(const uint8_t *a, size_t an, const uint8_t *b, size_t bn, uint8_t *out,
                    size_t max_size, uint64_t seed);

/** Encode s into out, dropping trailing steps and then tape bytes until it
 *  fits max_size. Returns the size written. */
size_t sf_encode_fit(sf_scenario *s, uint8_t *out, size_t max_size);

/* ---- exploration branches (simfuzz explore) ------------------------------
 * A branch forks a running scenario at some moment and gives it another
 * future: a few new steps soon after that moment. The explorer injects
 * them into the run (sf_run_inject) and appends them to the scenario with
 * their after_event, so the branch stays an ordinary scenario whose replay
 * schedules exactly the events of the forked run. */

/** The moment a branch forks at: the node whose event reached the rare
 *  state (sim_event_node; -1 if none), the nodes down or paused then
 *  (bit i for node i), and the links with messages in flight. */
#define SF_FORK_LINKS 32 /**< links with messages in flight an sf_fork lists */

typedef struct sf_fork {
  int focus;
  uint64_t down, paused;
  /* some steps wait for a rise to the top rank (Step.on_change) */
  int anchor;
  /* some branches fail one allocation soon after the fork (+oneshot) */
  int one_shot;
  /* links with datagrams pending (held or in flight) at the fork, those of
   * the focus node first: from, to, and how many */
  uint32_t nlinks;
  struct {
    uint8_t from, to;
    uint16_t pending;
  } link[SF_FORK_LINKS];
} sf_fork;

/** Draw a branch's future for scenario s forked at now_us: 1 to max (at
 *  most 6) random steps, in order of time, between now_us and the run's
 *  end (the last step scheduled at the start, plus the tail), mostly soon:
 *  the delay is about log-uniform from 100 us to 3 s.
 *   - With a focus node, half the steps are aimed at that node by number:
 *     it crashes (a quarter of those are made crashes), pauses, is cut
 *     off, its link or clock or disk fails.
 *   - Half the faults that have an end (crash, pause, partition, hold) get
 *     it, as a second step after such a delay: the restart of the same
 *     node, the heal.
 *   - In half the futures, one node that is down or paused at the fork
 *     comes back (restart, resume) after such a delay.
 *   - With at->anchor, a quarter of the steps wait, from their time, for
 *     the first, second or third rise to the top rank (Step.on_change: an
 *     election, with Raft) and name the nodes by rank then; such a cut
 *     heals, if it does, at the rise after.
 *  Client operations run once. Returns how many were written to out (0:
 *  the run is about to end). */
uint32_t sf_branch_steps(const sf_scenario *s, uint64_t now_us, uint64_t seed, const sf_fork *at,
                         sf_step *out, uint32_t max);

#ifdef __cplusplus
}
#endif
#endif
