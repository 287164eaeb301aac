/* Which kept state the explorer revisits next (explore/explore.c), apart so that
 * its rule has a unit test (tests/test_revisit.c). */
#ifndef SIMFUZZ_EXPLORE_REVISIT_H
#define SIMFUZZ_EXPLORE_REVISIT_H

#include <stdint.h>

/* Assertion sites told apart by the revisit rule; sites past the last
 * share its slot. */
#define EX_SITE_SLOTS 256u

/* A kept state as the rule sees it. */
typedef struct {
  uint32_t runs;   /* runs of the campaign that reached its bucket */
  uint32_t visits; /* its revisits so far */
  uint32_t site;   /* its assertion site's slot, < EX_SITE_SLOTS */
} ex_cand;

/* How much a kept state has had for its worth (lower: revisit it sooner):
 * the runs that reached its bucket times its revisits. */
static inline uint64_t ex_cand_score(const ex_cand *c) {
  return ((uint64_t)c->runs + 1) * ((uint64_t)c->visits + 1);
}

/* The state to revisit next, of n >= 1: revisits go round the assertion
 * sites. The site whose kept states were revisited least so far
 * (site_visits[slot]) comes first; within it, the state with the lowest
 * score; the first of equals. Without the round, one MAXIMIZE site whose
 * best value keeps growing (every new value a state reached once) took
 * nine revisits in ten from every other site. */
static inline uint32_t ex_revisit_pick(const ex_cand *c, uint32_t n,
                                       const uint32_t site_visits[EX_SITE_SLOTS]) {
  uint32_t at = 0;
  for (uint32_t i = 1; i < n; i++) {
    uint32_t vi = site_visits[c[i].site], va = site_visits[c[at].site];
    if (vi < va || (vi == va && ex_cand_score(&c[i]) < ex_cand_score(&c[at])))
      at = i;
  }
  return at;
}

#endif
