/* The explorer's branch share by yield (harness/explore/share.h): the
 * branches' part of their share of the time follows the failures they find
 * per unit of cost against the roots'. */
#include "explore/share.h"
#include "testlib.h"

#define SEC 1000000000ull /* a second of cost (ns) */

TEST(no_failure_keeps_the_whole_share) {
  CHECK(ex_yield_pm(0, 0, 0, 0) == 1000);
  /* branches took a third of the time, as they do by default */
  CHECK(ex_yield_pm(0, 40 * SEC, 0, 20 * SEC) == 1000);
  CHECK(ex_yield_pm(0, 4000 * SEC, 0, 2000 * SEC) == 1000);
}

TEST(branches_that_fail_less_get_less_down_to_the_floor) {
  /* craft's timeout_now_persisting over 60 s (docs/bench-history.md):
   * roots 171 failures in 40 s, branches 4 in 20 s */
  CHECK(ex_yield_pm(171, 40 * SEC, 4, 20 * SEC) == EX_YIELD_MIN_PM);
  uint32_t mid = ex_yield_pm(20, 40 * SEC, 4, 20 * SEC);
  CHECK(mid > EX_YIELD_MIN_PM && mid < 1000);
  /* more root failures, the same branch ones: never more weight */
  CHECK(ex_yield_pm(30, 40 * SEC, 4, 20 * SEC) <= mid);
}

TEST(a_few_failures_move_the_weight_little) {
  /* 3 root failures, none in branches (result_after_change over 60 s) */
  CHECK(ex_yield_pm(3, 40 * SEC, 0, 20 * SEC) >= 900);
}

TEST(branches_that_fail_more_keep_their_share) {
  /* commit_by_counting over 60 s: roots 3, branches 6 */
  CHECK(ex_yield_pm(3, 40 * SEC, 6, 20 * SEC) == 1000);
  CHECK(ex_yield_pm(100, 40 * SEC, 100, 20 * SEC) == 1000);
}

TEST(extreme_counts_stay_in_range) {
  uint32_t a = ex_yield_pm(UINT64_MAX, UINT64_MAX, 0, 0);
  uint32_t b = ex_yield_pm(0, 0, UINT64_MAX, UINT64_MAX);
  uint32_t c = ex_yield_pm(UINT64_MAX, 0, 0, UINT64_MAX);
  CHECK(a >= EX_YIELD_MIN_PM && a <= 1000);
  CHECK(b >= EX_YIELD_MIN_PM && b <= 1000);
  CHECK(c == EX_YIELD_MIN_PM);
}

TEST_MAIN(T(no_failure_keeps_the_whole_share),
          T(branches_that_fail_less_get_less_down_to_the_floor),
          T(a_few_failures_move_the_weight_little), T(branches_that_fail_more_keep_their_share),
          T(extreme_counts_stay_in_range))
