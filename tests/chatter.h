/* "chatter": a small system under test for the simulator's own tests and
 * benchmarks. Every node ticks on a timer, sends datagrams to random peers
 * (which answer a bounded number of hops), appends to its disk and syncs,
 * opens stream connections and exchanges data on them, and passes fault
 * points. It exercises every API of sim.h and never fails an invariant. */
#ifndef SIMFUZZ_TEST_CHATTER_H
#define SIMFUZZ_TEST_CHATTER_H

#include <simfuzz/sim.h>

typedef struct chatter_counts {
  uint64_t recv, ticks, conn_data, conn_up, conn_accepted, conn_errors, boots, restarts,
      disk_errors, faults;
} chatter_counts;

typedef struct chatter {
  int ticks;        /* timer ticks per node incarnation (0 = forever) */
  int fanout;       /* datagrams per tick */
  int hops;         /* how many times a datagram is answered */
  int use_disk;     /* append + sync every few ticks */
  int use_streams;  /* connect to a peer and stream data */
  uint64_t tick_ns; /* mean tick interval */
  chatter_counts total;
  chatter_counts node[SIM_MAX_NODES];
} chatter;

/** Default chatter settings. */
void chatter_init(chatter *c);

/** Node callbacks of chatter (ctx must be a chatter *). */
extern const sim_node_ops chatter_ops;

/** A config running chatter with ctx c, n nodes and seed. */
sim_config chatter_config(chatter *c, int nodes, uint64_t seed);

/** Message describer for timelines. */
int chatter_describe(void *ctx, const void *msg, size_t have, size_t len, char *buf, size_t cap);

/** Create, run to quiescence (or `until`), and destroy a world; returns its
 *  trace hash. */
uint64_t chatter_run(const sim_config *cfg, uint64_t until);

/** A random but valid configuration (faults on, swarm-style) for seed. */
sim_config chatter_random_config(chatter *c, uint64_t seed);

/** Apply scheduled random faults (partitions, crashes, ...) to a world,
 *  driven by sim_draw on a test-only stream; call before running. */
void chatter_schedule_faults(sim_world *w, uint64_t seed, int count);

#endif

/** Hash of the swarm scenario for `seed`: a random configuration, random
 *  tape and random timed faults, run to quiescence. Used by the determinism
 *  tests, the fingerprint program and the benchmarks. `stats` may be NULL. */
uint64_t chatter_swarm_hash(uint64_t seed, sim_stats *stats);
