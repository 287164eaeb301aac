/*
 * pbstore as a simfuzz target: the protocol of pbstore.c on simulated
 * nodes, a client workload, and the oracles.
 *
 * Invariants: every backup's log is a prefix of the primary's durable
 * history (checked after every event); the primary never loses a durable
 * entry. After heal, liveness: every backup catches up with the primary.
 * The planted bug (pbstore_bug_reset_skip) needs a partition (or a pause)
 * long enough to fill a backup's window and stall it, then a reset before
 * the heal: in that order.
 */
#include "../common/node_io_sim.h"
#include "pbstore.h"
#include <simfuzz/simfuzz.h>

#include <inttypes.h>
#include <stdlib.h>

typedef struct {
  node_io_sim sim; /* first: see node_io_sim_attach */
  pb_node pb;
} node;

typedef struct {
  int n;
  uint64_t hist[PB_MAX_LOG]; /* the primary's durable history */
  uint32_t hist_len;
  uint32_t prim_inc;  /* incarnation of the primary the oracle follows */
  uint32_t prim_seen; /* its durable entries copied into hist */
} cluster;

static pb_node *pb(sim_world *w, int i) {
  node *x = sim_node_data(w, i); /* NULL while the node is down */
  return x ? &x->pb : NULL;
}

/* ---- nodes ---- */

static void boot(void *ctx, sim_world *w, int i, int restart) {
  (void)ctx;
  (void)restart;
  node *x = node_io_sim_attach(w, i, sizeof *x, PB_RECORD);
  pb_boot(&x->pb, &x->sim.io);
}

static void timer(void *ctx, sim_world *w, int i, uint64_t tag) {
  (void)ctx;
  pb_timer(pb(w, i), tag);
}

static void conn(void *ctx, sim_world *w, int i, sim_conn h, sim_conn_event ev, const void *data,
                 size_t len) {
  (void)ctx;
  pb_conn(pb(w, i), h, (node_conn_event)ev, data, len);
}

static const sim_node_ops ops = {boot, NULL, timer, conn, node_io_sim_teardown};

/* A client write: a value unique to the operation. */
static void workload(void *ctx, sim_world *w, const sf_op *op) {
  (void)ctx;
  pb_node *p = pb(w, 0);
  if (p)
    pb_write(p, ((uint64_t)op->seq + 1) << 32 | (op->value & 0xffffffffu));
}

/* ---- oracles ---- */

/* The primary's newly durable entries join the history (a restarted primary
 * re-publishes what it loaded). */
static void follow_primary(cluster *c, sim_world *w) {
  pb_node *p = pb(w, 0);
  if (!p)
    return;
  if (sim_node_incarnation(w, 0) != c->prim_inc) {
    c->prim_inc = sim_node_incarnation(w, 0);
    c->prim_seen = 0;
  }
  for (uint32_t i = c->prim_seen; i < p->durable; i++) {
    c->hist[i] = p->log[i];
    if (i + 1 > c->hist_len)
      c->hist_len = i + 1;
  }
  if (p->durable > c->prim_seen)
    c->prim_seen = p->durable;
}

/* Every backup's log is a prefix of the primary's durable history. */
SF_ORACLE static void check_backup_prefix(void *ctx, sim_world *w) {
  cluster *c = ctx;
  follow_primary(c, w);
  for (int b = 1; b < c->n; b++) {
    pb_node *p = pb(w, b);
    if (!p || p->changed_from >= p->len)
      continue;
    for (uint32_t i = p->changed_from; i < p->len; i++)
      SIM_INVARIANT(w, b, i < c->hist_len && p->log[i] == c->hist[i], "backup_log_is_prefix",
                    "backup n%d entry %" PRIu32 " is %016" PRIx64
                    " but the primary's is %016" PRIx64 " (history length %" PRIu32 ")",
                    b, i, p->log[i], i < c->hist_len ? c->hist[i] : 0, c->hist_len);
    p->changed_from = p->len;
  }
}

/* The primary never loses a durable entry across restarts. */
SF_ORACLE static void check_primary_durable(void *ctx, sim_world *w) {
  cluster *c = ctx;
  pb_node *p = pb(w, 0);
  if (!p)
    return;
  SIM_INVARIANT(w, 0, p->durable >= c->hist_len, "primary_keeps_durable_log",
                "the primary has %" PRIu32 " durable entries but %" PRIu32 " were acknowledged",
                p->durable, c->hist_len);
}

static const sf_check invariants[] = {
    {"backup_log_is_prefix", check_backup_prefix},
    {"primary_keeps_durable_log", check_primary_durable},
    {NULL, NULL},
};

SF_ORACLE static int live(void *ctx, sim_world *w) {
  cluster *c = ctx;
  pb_node *p = pb(w, 0);
  if (!p)
    return 0;
  for (int b = 1; b < c->n; b++) {
    pb_node *q = pb(w, b);
    if (!q || q->len < p->durable)
      return 0;
  }
  return 1;
}

/* ---- reports and feedback ---- */

static void *create(int nodes) {
  return node_io_sim_cluster(sizeof(cluster), nodes);
}

/* Role: primary (replication state of its most-lagging backup) or backup. */
SF_ORACLE static uint32_t observe(void *ctx, sim_world *w, int i) {
  (void)ctx;
  pb_node *p = pb(w, i);
  if (!p)
    return 0;
  if (i != 0)
    return 2 + (p->len > 0);
  uint32_t worst = 0;
  for (int b = 1; b < sim_nodes(w); b++) {
    uint32_t st = 1 + pb_peer_state(p, b);
    if (st > worst)
      worst = st;
  }
  return 16 + worst;
}

/* catch-up of a full log (256 entries, 3 per round trip of <= 20 ms on a healed network) plus
 * reconnect and restart: well under 5 s */
SF_TARGET(.summary = "primary-backup log replication over stream connections", .min_nodes = 2,
          .max_nodes = 5, .default_nodes = 3, .create = create, .destroy = free, .ops = &ops,
          .workload = workload, .invariants = invariants, .live = live, .liveness_ms = 5000,
          .describe = pb_describe, .classify = pb_classify, .observe = observe);
