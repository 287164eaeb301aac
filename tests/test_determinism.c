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

/* A node that sends one byte of stack it never wrote (a bug of the system
 * under test, as cowsql/raft's rejection that left last_log_index unset)
 * must send the same byte whatever ran on that stack before: a trace
 * callback (replay prints every record; the sweep has none), the last run,
 * the tool itself. Before the simulator zeroed the stack below each event
 * and each record's callback, each of those changed the trace hash. */
__attribute__((noinline)) static uint8_t unwritten_stack_byte(int i) {
  volatile uint8_t never_written[256]; /* (the bug under test: read, never written) */
  return never_written[i & 255];
}

__attribute__((noinline)) static void dirty_stack(uint8_t junk) {
  volatile uint8_t pad[8192];
  for (size_t i = 0; i < sizeof pad; i++)
    pad[i] = (uint8_t)(junk + i);
}

static void uninit_boot(void *ctx, sim_world *w, int node, int restart) {
  (void)ctx;
  (void)restart;
  sim_timer_start(w, node, SIM_NS_PER_MS * (uint64_t)(node + 1), 0);
}

static void uninit_timer(void *ctx, sim_world *w, int node, uint64_t tag) {
  (void)ctx;
  uint8_t b[8];
  for (int i = 0; i < 8; i++) /* after a send (and its record) too */
    b[i] = unwritten_stack_byte(i * 31 + (int)tag);
  sim_send(w, node, 1 - node, b, sizeof b);
  if (tag < 20)
    sim_timer_start(w, node, SIM_NS_PER_MS, tag + 1);
}

static void dirtying_trace(void *ctx, const sim_world *w, const sim_trace_rec *r,
                           const void *payload, size_t len) {
  (void)ctx;
  (void)w;
  (void)payload;
  (void)len;
  dirty_stack((uint8_t)(r->kind * 7 + 1));
}

static uint64_t uninit_run(int with_trace, uint8_t junk) {
  static const sim_node_ops ops = {.boot = uninit_boot, .timer = uninit_timer};
  sim_config c;
  sim_config_default(&c);
  c.nodes = 2;
  c.seed = 42;
  c.ops = &ops;
  if (with_trace)
    c.trace = dirtying_trace;
  sim_world *w = sim_world_create(&c);
  CHECK(w);
  dirty_stack(junk); /* what the process ran before this run */
  sim_run(w, SIM_NS_PER_S, 0);
  uint64_t h = sim_trace_hash(w);
  sim_world_destroy(w);
  return h;
}

TEST(a_read_of_stack_never_written_does_not_depend_on_the_tool) {
  uint64_t h = uninit_run(0, 0x11);
  CHECK_HASH(uninit_run(0, 0x5a), h); /* another run before it */
  CHECK_HASH(uninit_run(1, 0x11), h); /* a trace callback's stack */
  CHECK_HASH(uninit_run(1, 0xc3), h);
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
          T(a_read_of_stack_never_written_does_not_depend_on_the_tool), H(fresh_hashes),
          H(one_hash))
