/*
 * Structure-aware mutation of scenarios, shared by the libFuzzer mutator
 * hooks and the AFL++ custom mutator library. Every output decodes (it is a
 * re-encoded, normalised scenario) and fits in max_size. Deterministic for
 * a given seed and input.
 */
#ifndef SIMFUZZ_MUTATE_H
#define SIMFUZZ_MUTATE_H

#include "scenario.h"

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
 * A branch forks a running scenario and gives it another future. It must
 * stay an ordinary scenario whose replay schedules exactly the events of
 * the forked run, so the future is written into placeholder steps (NOP)
 * that were part of the scenario from the start: each keeps its time and
 * its index, and only what it does changes. */

/** Add up to n placeholder steps at pseudo-random times (never on a whole
 *  millisecond) before the scenario's last step, so that the run ends when
 *  it would without them (over its tail if it has no steps), then normalise. */
void sf_add_placeholders(sf_scenario *s, uint32_t n, uint64_t seed);

/** Give the placeholders after after_us a future: about half of them (at
 *  least one) become random steps at the same times (client operations
 *  run once). Returns how many changed (0: no placeholder is left). */
uint32_t sf_branch_future(sf_scenario *s, uint64_t after_us, uint64_t seed);

#ifdef __cplusplus
}
#endif
#endif
