/*
 * harness_selftest: a system under test that cannot fail, so that any crash,
 * sanitizer report, leak, hang or failed check of its fuzzer
 * (harness_selftest_fuzzer) is a bug of simfuzz itself.
 *
 * Every node drives every part of the simulator's API from its callbacks,
 * with arguments chosen by the simulation's own random stream (so the
 * fuzzer steers them through the scenario): datagrams of any size to any
 * node (itself included), stream connections opened, written, closed and
 * reset, disk writes, reads, syncs and truncations at any offset, timers
 * started and cancelled, clocks read, fault points hit, and the node
 * crashing itself. Its only invariant checks what the simulator promises
 * to every target (a running node has its state, a crashed one has none),
 * and its liveness predicate always holds.
 */
#include <simfuzz/simfuzz.h>

#include <stdlib.h>
#include <string.h>

/* A world does about the same work whatever its size (timer-driven actions
 * per boot: ACT_BUDGET shared by the nodes, at least 8 each), so 64-node
 * scenarios stay as cheap to run as 3-node ones; disk offsets stay within
 * DISK_SPAN, which still crosses the disk's growth steps. */
enum { MAXC = 8, DISK_SPAN = 1u << 13, ACT_BUDGET = 300 };

typedef struct {
  sim_conn conn[MAXC];
  sim_timer timer;
  uint32_t acts;
} snode;

static void act(sim_world *w, int node, snode *p);

static void boot(void *ctx, sim_world *w, int node, int restart) {
  (void)ctx;
  (void)restart;
  snode *p = sim_node_alloc(w, node, sizeof *p);
  p->timer = sim_timer_start(w, node, 1 + sim_node_random(w, node) % (20 * SIM_NS_PER_MS), 1);
}

static void recv(void *ctx, sim_world *w, int node, int from, const void *msg, size_t len) {
  (void)ctx;
  (void)from;
  snode *p = sim_node_data(w, node);
  if (len && ((const uint8_t *)msg)[0] % 4 == 0)
    act(w, node, p);
}

static void timer(void *ctx, sim_world *w, int node, uint64_t tag) {
  (void)ctx;
  (void)tag;
  snode *p = sim_node_data(w, node);
  p->timer = 0;
  act(w, node, p);
  if (sim_node_up(w, node) && p->acts < ACT_BUDGET / (uint32_t)sim_nodes(w) + 8)
    p->timer = sim_timer_start(w, node, sim_node_random(w, node) % (50 * SIM_NS_PER_MS), 1);
}

static void conn(void *ctx, sim_world *w, int node, sim_conn c, sim_conn_event ev, const void *data,
                 size_t len) {
  (void)ctx;
  (void)data;
  snode *p = sim_node_data(w, node);
  if (ev == SIM_CONN_ACCEPTED) {
    for (int i = 0; i < MAXC; i++)
      if (!p->conn[i]) {
        p->conn[i] = c;
        return;
      }
    sim_conn_close(w, node, c);
  } else if (ev == SIM_CONN_DATA) {
    if (len % 3 == 0)
      sim_conn_send(w, node, c, "pong", 4);
  } else if (ev != SIM_CONN_CONNECTED) { /* closed, reset, refused, timeout */
    for (int i = 0; i < MAXC; i++)
      if (p->conn[i] == c)
        p->conn[i] = 0;
    sim_conn_close(w, node, c);
  }
}

static void teardown(void *ctx, sim_world *w, int node, sim_teardown_why why) {
  (void)ctx;
  (void)why;
  sim_node_free(w, node);
}

/* One random use of the simulator's API. */
static void act(sim_world *w, int node, snode *p) {
  uint64_t r = sim_node_random(w, node);
  int n = sim_nodes(w), peer = (int)((r >> 8) % (uint64_t)n);
  uint8_t buf[1024];
  size_t len = (size_t)((r >> 16) % sizeof buf);
  memset(buf, (int)(r >> 24), len);
  p->acts++;
  switch (r % 16) {
  case 0:
  case 1: sim_send(w, node, peer, buf, len); break;
  case 2: {                                  /* up to past the message size limit (-EMSGSIZE) */
    static const uint8_t big[64 * 1024 + 1]; /* read-only zeros: no allocation per run */
    size_t blen = (r >> 32) % 4 ? (size_t)(r >> 34) % 2048 : sizeof big; /* too big */
    sim_send(w, node, peer, big, blen);
    break;
  }
  case 3: {
    int64_t c = sim_connect(w, node, peer);
    for (int i = 0; c > 0 && i < MAXC; i++)
      if (!p->conn[i]) {
        p->conn[i] = (sim_conn)c;
        c = 0;
      }
    if (c > 0)
      sim_conn_close(w, node, (sim_conn)c);
    break;
  }
  case 4:
  case 5: {
    sim_conn c = p->conn[(r >> 40) % MAXC];
    if (c)
      sim_conn_send(w, node, c, buf, len);
    break;
  }
  case 6: {
    size_t i = (size_t)((r >> 40) % MAXC);
    if (p->conn[i] && (r >> 48) % 2)
      sim_conn_reset(w, p->conn[i]);
    else if (p->conn[i])
      sim_conn_close(w, node, p->conn[i]);
    p->conn[i] = 0;
    break;
  }
  case 7:
  case 8: sim_disk_write(w, node, (r >> 32) % DISK_SPAN, buf, len); break;
  case 9: sim_disk_read(w, node, (r >> 32) % DISK_SPAN, buf, len); break;
  case 10: sim_disk_sync(w, node); break;
  case 11: sim_disk_truncate(w, node, (r >> 32) % DISK_SPAN); break;
  case 12:
    if (p->timer && sim_timer_cancel(w, p->timer) == 0)
      p->timer = sim_timer_start(w, node, (r >> 32) % SIM_NS_PER_S, 1);
    break;
  case 13:
    (void)sim_clock(w, node);
    (void)sim_clock_mono(w, node);
    sim_note(w, node, r, (uint64_t)sim_clock(w, node));
    break;
  case 14: (void)sim_faultpoint(w, node, (uint32_t)(r >> 40) % 64); break;
  default:
    if ((r >> 40) % 8 == 0)
      sim_node_crash(w, node); /* p is freed: nothing may follow */
    break;
  }
}

static const sim_node_ops ops = {boot, recv, timer, conn, teardown};

static void workload(void *ctx, sim_world *w, const sf_op *op) {
  (void)ctx;
  snode *p = sim_node_data(w, op->node);
  if (p && !sim_node_paused(w, op->node))
    act(w, op->node, p);
}

/* What the simulator promises every target: running nodes have the state
 * their boot set, crashed nodes none (teardown ran). */
SF_ORACLE static void check_node_state(void *ctx, sim_world *w) {
  (void)ctx;
  for (int k = 0; k < sim_nodes(w); k++)
    SIM_INVARIANT(w, k, (sim_node_up(w, k) != 0) == (sim_node_data(w, k) != NULL),
                  "node_state_matches_liveness", "n%d is %s but its data is %s", k,
                  sim_node_up(w, k) ? "up" : "down", sim_node_data(w, k) ? "set" : "NULL");
}

static const sf_check invariants[] = {
    {"node_state_matches_liveness", check_node_state},
    {NULL, NULL},
};

SF_ORACLE static int live(void *ctx, sim_world *w) {
  (void)ctx;
  (void)w;
  return 1;
}

SF_ORACLE static uint32_t observe(void *ctx, sim_world *w, int node) {
  (void)ctx;
  snode *p = sim_node_data(w, node);
  return p ? 1 + (p->acts > 10) + (p->conn[0] != 0) * 2 : 0;
}

SF_TARGET(.summary = "self-test: drives the whole simulator API and cannot fail", .min_nodes = 1,
          .max_nodes = SIM_MAX_NODES, .default_nodes = 3, .ops = &ops, .workload = workload,
          .invariants = invariants, .live = live, .observe = observe);
