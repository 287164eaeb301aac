/* How much of their time share the explorer's branches get, by what they
 * yield (explore/explore.c), apart so that its rule has a unit test
 * (tests/test_share.c). */
#ifndef SIMFUZZ_EXPLORE_SHARE_H
#define SIMFUZZ_EXPLORE_SHARE_H

#include <stdint.h>

/* The weight's floor (per mille): branches keep at least a quarter of
 * their share, so a campaign whose roots fail often still branches. */
#define EX_YIELD_MIN_PM 250u

/* The prior each side starts from: this many failures in this much cost
 * (10 s of the workers' time, or 10,000 runs under --share runs), so
 * that a handful of failures moves the weight little. */
#define EX_YIELD_PRIOR_FAILS 4.0
#define EX_YIELD_PRIOR_COST 1e10

/* The branches' weight (per mille, EX_YIELD_MIN_PM to 1000): the failures
 * they found per unit of cost against the roots', each with the prior,
 * capped at 1000 (branches never get more than their share). fr and cr:
 * the roots' failures and cost; fb and cb: the branches' and revisits'.
 * With no failure at all the branches' rate is the higher one whenever
 * they took less of the time than the roots, so the weight is 1000: the
 * campaign is the one it would be without the rule until something fails. */
static inline uint32_t ex_yield_pm(uint64_t fr, uint64_t cr, uint64_t fb, uint64_t cb) {
  double rb = ((double)fb + EX_YIELD_PRIOR_FAILS) / ((double)cb + EX_YIELD_PRIOR_COST);
  double rr = ((double)fr + EX_YIELD_PRIOR_FAILS) / ((double)cr + EX_YIELD_PRIOR_COST);
  double pm = 1000.0 * rb / rr;
  return pm >= 1000.0 ? 1000u : pm <= EX_YIELD_MIN_PM ? EX_YIELD_MIN_PM : (uint32_t)pm;
}

#endif
