/* Determinism: random configurations with faults give the same trace hash
 * twice; 100,000 worlds in one process match fresh processes. */
#include "chatter.h"
#include "testlib.h"

#include <string.h>
#include <unistd.h>

TEST(random_configs_replay_identically) {
  sim_stats total;
  memset(&total, 0, sizeof total);
  uint64_t distinct = 0, prev = 0;
  for (uint64_t seed = 0; seed < 2000; seed++) {
    sim_stats st;
    uint64_t a = chatter_swarm_hash(seed, &st);
    uint64_t b = chatter_swarm_hash(seed, NULL);
    CHECK_HASH(a, b);
    distinct += a != prev;
    prev = a;
    total.events += st.events;
    total.lost += st.lost;
    total.duplicated += st.duplicated;
    total.corrupted += st.corrupted;
    total.reordered += st.reordered;
    total.dropped_partition += st.dropped_partition;
    total.crashes += st.crashes;
    total.pauses += st.pauses;
    total.conns_reset += st.conns_reset;
    total.sectors_lost += st.sectors_lost;
    total.disk_eio += st.disk_eio;
    total.faultpoints_fired += st.faultpoints_fired;
    total.held += st.held;
    total.clock_changes += st.clock_changes;
  }
  CHECK_EQ(distinct, 2000);
  /* the configurations really exercise every fault */
  CHECK(total.lost && total.duplicated && total.corrupted && total.reordered);
  CHECK(total.dropped_partition && total.crashes && total.pauses && total.conns_reset);
  CHECK(total.sectors_lost && total.disk_eio && total.faultpoints_fired && total.held);
  CHECK(total.clock_changes);
  printf("2000 configurations, %" PRIu64 " events\n", total.events);
}

#define WORLDS 100000
#define SAMPLE 1000

TEST(hundred_thousand_worlds_match_fresh_processes) {
  uint64_t *h = malloc(WORLDS * sizeof *h);
  CHECK(h);
  for (uint64_t s = 0; s < WORLDS; s++)
    h[s] = chatter_swarm_hash(s, NULL);
  /* a fresh process computes every 100th seed; a few more in their own
   * process each */
  char cmd[256];
  snprintf(cmd, sizeof cmd, "exec /proc/%d/exe fresh_hashes", (int)getpid());
  FILE *p = popen(cmd, "r");
  CHECK(p);
  uint64_t seed, val;
  int got = 0;
  while (fscanf(p, "%" SCNu64 " %" SCNx64, &seed, &val) == 2) {
    CHECK(seed < WORLDS);
    CHECK_HASH(val, h[seed]);
    got++;
  }
  CHECK_EQ(pclose(p), 0);
  CHECK_EQ(got, SAMPLE);
  for (int i = 0; i < 5; i++) {
    uint64_t s = (uint64_t)i * 19997 + 3;
    snprintf(cmd, sizeof cmd, "SIMFUZZ_SEED=%" PRIu64 " exec /proc/%d/exe one_hash", s,
             (int)getpid());
    p = popen(cmd, "r");
    CHECK(p && fscanf(p, "%" SCNu64 " %" SCNx64, &seed, &val) == 2);
    CHECK_EQ(pclose(p), 0);
    CHECK_EQ(seed, s);
    CHECK_HASH(val, h[s]);
  }
  free(h);
}

/* Helpers run by the test above in fresh processes. */
HELPER(fresh_hashes) {
  for (uint64_t s = 0; s < WORLDS; s += WORLDS / SAMPLE)
    printf("%" PRIu64 " %016" PRIx64 "\n", s, chatter_swarm_hash(s, NULL));
}

HELPER(one_hash) {
  const char *e = getenv("SIMFUZZ_SEED");
  uint64_t s = e ? strtoull(e, NULL, 10) : 0;
  printf("%" PRIu64 " %016" PRIx64 "\n", s, chatter_swarm_hash(s, NULL));
}

TEST_MAIN(T(random_configs_replay_identically), T(hundred_thousand_worlds_match_fresh_processes),
          H(fresh_hashes), H(one_hash))
