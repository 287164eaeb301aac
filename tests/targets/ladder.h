/*
 * The ladder's system under test, shared by the ladder target
 * (tests/targets/ladder.c) and its misbehaving twin (tests/attack/attack.c):
 * three nodes that send each other a heartbeat every 10 ms and count node
 * 0's boots. Include it once, in the target's file; define
 * LADDER_ON_CREATE() first to run something at each world's creation.
 */
#ifndef SIMFUZZ_TESTS_LADDER_H
#define SIMFUZZ_TESTS_LADDER_H
#include <simfuzz/simfuzz.h>

#include <stdlib.h>

#ifndef LADDER_ON_CREATE
#define LADDER_ON_CREATE() ((void)0)
#endif

typedef struct {
  uint32_t boots[3];
  int done; /* the attack's misbehaviour ran (tests/attack) */
} ladder;

static void *create(int nodes) {
  (void)nodes;
  LADDER_ON_CREATE();
  return calloc(1, sizeof(ladder));
}

static void destroy(void *ctx) {
  free(ctx);
}

static void boot(void *ctx, sim_world *w, int node, int restart) {
  (void)restart;
  ladder *l = ctx;
  l->boots[node]++;
  sim_timer_start(w, node, 10 * SIM_NS_PER_MS, 0);
}

static void timer(void *ctx, sim_world *w, int node, uint64_t tag) {
  (void)ctx;
  (void)tag;
  char beat = (char)('0' + node);
  for (int to = 0; to < 3; to++)
    if (to != node)
      sim_send(w, node, to, &beat, 1);
  sim_timer_start(w, node, 10 * SIM_NS_PER_MS, 0);
}

/* the heartbeats are traffic only: nobody reads them (recv NULL) */
static const sim_node_ops ops = {boot, NULL, timer, NULL, NULL};

#endif
