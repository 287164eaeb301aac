/* The explorer's revisit rule (harness/explore/revisit.h): revisits go round
 * the assertion sites, and within a site to the state that has had the
 * fewest futures for its rarity. */
#include "explore/revisit.h"
#include "testlib.h"

#include <string.h>

/* A site whose best value keeps growing (new states reached once each)
 * does not take every revisit from a site whose state is commoner. */
TEST(revisits_go_round_the_sites) {
  ex_cand c[] = {
      {0, 0, 3}, /* site 3: new best values, each reached once */
      {0, 0, 3},
      {1, 0, 3},
      {40, 0, 7}, /* site 7: a state 40 runs reached */
  };
  uint32_t visits[EX_SITE_SLOTS];
  memset(visits, 0, sizeof visits);
  uint32_t per_site[EX_SITE_SLOTS] = {0};
  for (int r = 0; r < 8; r++) {
    uint32_t i = ex_revisit_pick(c, 4, visits);
    c[i].visits++;
    visits[c[i].site]++;
    per_site[c[i].site]++;
  }
  CHECK(per_site[3] == 4 && per_site[7] == 4);
  CHECK(c[3].visits == 4);
  /* within site 3: the lowest score, the first of equals (the state two
   * runs reached scores 2 from the start, as the others after a revisit) */
  CHECK(c[0].visits == 2 && c[1].visits == 2 && c[2].visits == 0);
}

/* Of one site's states: the lowest (runs + 1) * (visits + 1), the first
 * of equals; a site with fewer revisits comes first whatever its scores. */
TEST(within_a_site_the_rarest_for_its_revisits) {
  ex_cand c[] = {{5, 0, 1}, {2, 1, 1}, {1, 2, 1}, {0, 9, 2}};
  uint32_t visits[EX_SITE_SLOTS];
  memset(visits, 0, sizeof visits);
  visits[2] = 1;
  CHECK(ex_revisit_pick(c, 3, visits) == 0); /* 6, 6, 6: the first of equals */
  c[0].runs = 6;                             /* 7, 6, 6 */
  CHECK(ex_revisit_pick(c, 3, visits) == 1);
  CHECK(ex_revisit_pick(c, 4, visits) == 1); /* site 2 was revisited, site 1 not */
  visits[1] = 2;
  CHECK(ex_revisit_pick(c, 4, visits) == 3);
  CHECK(ex_revisit_pick(c, 1, visits) == 0);
}

TEST_MAIN(T(revisits_go_round_the_sites), T(within_a_site_the_rarest_for_its_revisits))
