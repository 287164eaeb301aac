/* sim_demo: the simulator API on its own, without the fuzz harness.
 *
 * Three nodes replicate a counter: node 0 (the "primary") increments it on
 * a timer, appends it to its disk, and sends it to nodes 1 and 2, which
 * store the largest value seen. The run partitions node 2 away, crashes
 * node 0 before it syncs, restarts it, heals, and checks one invariant at
 * the end: no backup may hold a value the primary forgot (the primary only
 * sends what it has synced). Then it prints the timeline.
 *
 * Usage: sim_demo [seed]   (the same seed prints the same timeline) */
#include <simfuzz/sim.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  uint64_t value; /* primary: counter; backups: largest value received */
} state;

static uint64_t load(sim_world *w, int node) {
  uint8_t b[8];
  uint64_t v = 0;
  if (sim_disk_read(w, node, 0, b, 8) == 8)
    for (int i = 0; i < 8; i++)
      v |= (uint64_t)b[i] << (8 * i);
  return v;
}

static void boot(void *ctx, sim_world *w, int node, int restart) {
  (void)ctx;
  (void)restart;
  state *s = sim_node_alloc(w, node, sizeof *s);
  s->value = load(w, node);
  if (node == 0)
    sim_timer_start(w, 0, 10 * SIM_NS_PER_MS, 0);
}

static void tick(void *ctx, sim_world *w, int node, uint64_t tag) {
  (void)ctx;
  (void)tag;
  state *s = sim_node_data(w, node);
  uint8_t b[8];
  s->value++;
  for (int i = 0; i < 8; i++)
    b[i] = (uint8_t)(s->value >> (8 * i));
  sim_disk_write(w, node, 0, b, 8);
  if (sim_disk_sync(w, node) == 0) { /* replicate only what is durable */
    sim_send(w, 0, 1, b, 8);
    sim_send(w, 0, 2, b, 8);
  }
  if (s->value < 20)
    sim_timer_start(w, 0, 10 * SIM_NS_PER_MS, 0);
}

static void recv(void *ctx, sim_world *w, int node, int from, const void *m, size_t len) {
  (void)ctx;
  (void)from;
  state *s = sim_node_data(w, node);
  uint64_t v = 0;
  for (size_t i = 0; i < 8 && i < len; i++)
    v |= (uint64_t)((const uint8_t *)m)[i] << (8 * i);
  if (v > s->value)
    s->value = v;
}

static void teardown(void *ctx, sim_world *w, int node, sim_teardown_why why) {
  (void)ctx;
  (void)why;
  sim_node_free(w, node);
}

static int describe(void *ctx, const void *m, size_t have, size_t len, char *buf, size_t cap) {
  (void)ctx;
  if (have < 8 || len != 8)
    return -1;
  uint64_t v = 0;
  for (int i = 0; i < 8; i++)
    v |= (uint64_t)((const uint8_t *)m)[i] << (8 * i);
  return snprintf(buf, cap, "value=%" PRIu64, v);
}

static void no_backup_ahead(void *ctx, sim_world *w) {
  (void)ctx;
  state *p = sim_node_data(w, 0);
  for (int b = 1; b < 3; b++) {
    state *s = sim_node_data(w, b);
    SIM_INVARIANT(w, b, !p || !s || s->value <= p->value, "backup_not_ahead",
                  "backup n%d holds %" PRIu64 " but the primary has %" PRIu64, b, s->value,
                  p->value);
  }
}

static void partition2(sim_world *w, void *a) {
  (void)a;
  sim_isolate(w, 2);
}
static void crash0(sim_world *w, void *a) {
  (void)a;
  sim_node_crash(w, 0);
}
static void restart0(sim_world *w, void *a) {
  (void)a;
  sim_node_restart(w, 0);
}
static void heal(sim_world *w, void *a) {
  (void)a;
  sim_heal(w);
}

int main(int argc, char **argv) {
  static const sim_node_ops ops = {boot, recv, tick, NULL, teardown};
  sim_config c;
  sim_config_default(&c);
  c.seed = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;
  c.ops = &ops;
  c.describe = describe;
  c.at_end = no_backup_ahead;
  c.net.loss_ppm = 100000;
  c.trace_ring = 256;
  sim_world *w = sim_world_create(&c);
  if (!w)
    return 2;
  sim_at(w, 35 * SIM_NS_PER_MS, partition2, NULL);
  sim_at(w, 62 * SIM_NS_PER_MS, crash0, NULL);
  sim_at(w, 80 * SIM_NS_PER_MS, restart0, NULL);
  sim_at(w, 120 * SIM_NS_PER_MS, heal, NULL);
  sim_run(w, UINT64_MAX, 0);
  int failed = sim_finish(w);
  sim_trace_dump(w, stdout, 256);
  sim_stats_print(w, stdout);
  printf("trace hash %016" PRIx64 "\n", sim_trace_hash(w));
  if (failed) {
    const sim_failure *f = sim_get_failure(w);
    printf("FAILED %s at %" PRIu64 " ns on n%d: %s\n", f->name, f->time, f->node, f->message);
  } else {
    printf("invariant backup_not_ahead holds\n");
  }
  sim_world_destroy(w);
  return failed;
}
