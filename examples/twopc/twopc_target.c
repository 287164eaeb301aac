/*
 * twopc as a simfuzz target: the protocol of twopc.c on simulated nodes, a
 * client workload, and the oracles.
 *
 * Oracles: atomicity after every event (no transaction is committed at one
 * participant and aborted, or voted down, at another); at the end, every
 * participant's outcome matches the coordinator's decision; after heal,
 * liveness (no transaction left undecided or unacknowledged).
 */
#include "../common/node_io_sim.h"
#include "twopc.h"
#include <simfuzz/simfuzz.h>

#include <inttypes.h>
#include <stdlib.h>

enum { MAXN = 7 };

typedef struct {
  node_io_sim sim; /* first: see node_io_sim_attach */
  tp_node tp;
} node;

typedef struct {
  int n;
  uint32_t committed[TP_MAX_TXN + 1], aborted[TP_MAX_TXN + 1]; /* participant bitmasks */
  uint8_t decided[TP_MAX_TXN + 1];                             /* coordinator decision */
  uint32_t seen[MAXN], inc[MAXN];                              /* outcomes consumed */
} cluster;

static tp_node *tp(sim_world *w, int i) {
  node *x = sim_node_data(w, i); /* NULL while the node is down */
  return x ? &x->tp : NULL;
}

/* ---- nodes ---- */

static void boot(void *ctx, sim_world *w, int i, int restart) {
  (void)ctx;
  (void)restart;
  node *x = node_io_sim_attach(w, i, sizeof *x, TP_RECORD);
  tp_boot(&x->tp, &x->sim.io);
}

static void recv(void *ctx, sim_world *w, int i, int from, const void *data, size_t len) {
  (void)ctx;
  tp_recv(tp(w, i), from, data, len);
}

static void timer(void *ctx, sim_world *w, int i, uint64_t tag) {
  (void)ctx;
  tp_timer(tp(w, i), tag);
}

static const sim_node_ops ops = {boot, recv, timer, NULL, node_io_sim_teardown};

/* A client asks the coordinator to run transaction seq+1 with op.value. */
static void workload(void *ctx, sim_world *w, const sf_op *op) {
  (void)ctx;
  tp_node *p = tp(w, 0);
  if (p && !sim_node_paused(w, 0))
    tp_begin(p, op->seq + 1, (uint32_t)op->value);
}

/* ---- oracles --------------------------------------------------------------- */

static int first_bit(uint32_t m) {
  for (int k = 0; k < 32; k++)
    if (m & 1u << k)
      return k;
  return -1;
}

/* No transaction is committed at one participant and aborted (or voted
 * down) at another. Folds the outcomes nodes journaled since the last event
 * into the cluster's view and checks each. */
SF_ORACLE static void check_atomicity(void *ctx, sim_world *w) {
  cluster *c = ctx;
  for (int k = 0; k < c->n; k++) {
    tp_node *p = tp(w, k);
    if (!p)
      continue;
    if (c->inc[k] != sim_node_incarnation(w, k)) {
      c->inc[k] = sim_node_incarnation(w, k);
      c->seen[k] = 0;
    }
    for (; c->seen[k] < p->nout; c->seen[k]++) {
      const tp_outcome *o = &p->out[c->seen[k]];
      uint32_t t = o->txn;
      if (k == 0) {
        if (!c->decided[t] || o->what == TP_O_COMMIT)
          c->decided[t] = o->what; /* a forgotten commit stays a commit */
        continue;
      }
      if (o->what == TP_O_COMMIT)
        c->committed[t] |= 1u << k;
      else
        c->aborted[t] |= 1u << k;
      SIM_INVARIANT(w, k, !(c->committed[t] && c->aborted[t]), "atomicity",
                    "transaction %" PRIu32 " committed at n%d but aborted at n%d", t,
                    first_bit(c->committed[t]), first_bit(c->aborted[t]));
    }
  }
}

/* States that matter, for the explorer and `simfuzz reach` (never fail):
 * the coordinator down while a transaction is collecting votes or being
 * decided, participants left prepared (in doubt), and a participant that
 * aborted a transaction it never voted on because a peer asked about it. */
SF_ORACLE static void note_states(void *ctx, sim_world *w) {
  cluster *c = ctx;
  if (!sf_sites_wanted(w))
    return; /* a sweep or a replay: nobody records the states */
  tp_node *co = tp(w, 0);
  uint32_t phases = co ? tp_phases(co) : 0;
  int deciding = (phases & (1u << TP_C_COLLECTING | 1u << TP_C_COMMITTING)) != 0;
  int in_doubt = 0, forgotten = 0, peer_aborted = -1;
  for (int k = 1; k < c->n; k++) {
    tp_node *p = tp(w, k);
    int prepared = p && (tp_phases(p) & 1u << TP_P_PREPARED) != 0;
    in_doubt += prepared;
    if (peer_aborted < 0 && p && p->peer_aborts > 0)
      peer_aborted = k;
    /* prepared for a transaction that a restarted coordinator does not know */
    for (uint32_t t = 1;
         prepared && co && sim_node_incarnation(w, 0) > 1 && !forgotten && t <= p->top; t++)
      forgotten = p->t[t].st == TP_P_PREPARED && co->t[t].st == TP_C_NONE;
  }
  /* the states about one node name it: the explorer aims its futures there */
  SF_SOMETIMES_ON(w, !sim_node_up(w, 0) && in_doubt > 0, 0,
                  "coordinator down between prepare and decision");
  SF_SOMETIMES_ON(w, deciding && sim_node_incarnation(w, 0) > 1, 0,
                  "restarted coordinator deciding");
  SF_SOMETIMES(w, forgotten, "participant prepared for a transaction the coordinator forgot");
  SF_SOMETIMES_ON(w, peer_aborted >= 0 && deciding, peer_aborted,
                  "participant aborted on a peer's question while the coordinator decides");
  SF_MAXIMIZE(w, "participants in doubt", in_doubt);
}

static const sf_check invariants[] = {
    {"states", note_states},
    {"atomicity", check_atomicity},
    {NULL, NULL},
};

/* End state: what participants did matches what the coordinator decided
 * (a participant never commits what the coordinator aborted or never
 * decided, nor aborts a committed transaction after voting yes). */
SF_ORACLE static void check_outcomes(void *ctx, sim_world *w) {
  cluster *c = ctx; /* up to date: the invariants ran after the last event */
  for (uint32_t t = 1; t <= TP_MAX_TXN; t++) {
    if (c->committed[t])
      SIM_INVARIANT(
          w, first_bit(c->committed[t]), c->decided[t] == TP_O_COMMIT, "outcome_matches_decision",
          "transaction %" PRIu32 " committed at n%d but the coordinator %s", t,
          first_bit(c->committed[t]), c->decided[t] == TP_O_ABORT ? "aborted it" : "never decided");
  }
}

/* The nodes' counts of transactions per state (which make tp_phases cheap)
 * agree with their tables. */
SF_ORACLE static void check_counts(void *ctx, sim_world *w) {
  cluster *c = ctx;
  for (int k = 0; k < c->n; k++) {
    tp_node *p = tp(w, k);
    SIM_INVARIANT(w, k, !p || tp_phases(p) == tp_phases_scan(p), "phase_counts",
                  "n%d counts phases %#" PRIx32 " but its table holds %#" PRIx32, k, tp_phases(p),
                  tp_phases_scan(p));
  }
}

static const sf_check end_checks[] = {
    {"outcome_matches_decision", check_outcomes},
    {"phase_counts", check_counts},
    {NULL, NULL},
};

/* Nothing undecided or unacknowledged anywhere. */
SF_ORACLE static int live(void *ctx, sim_world *w) {
  cluster *c = ctx;
  for (int k = 0; k < c->n; k++) {
    tp_node *p = tp(w, k);
    if (!p || tp_busy(p))
      return 0;
  }
  return 1;
}

/* ---- reports and feedback ---- */

static void *create(int nodes) {
  return node_io_sim_cluster(sizeof(cluster), nodes);
}

/* Coordinator: which phases are in progress; participant: prepared or not. */
SF_ORACLE static uint32_t observe(void *ctx, sim_world *w, int i) {
  (void)ctx;
  tp_node *p = tp(w, i);
  if (!p)
    return 0;
  return (i == 0 ? 64 : 128) | tp_phases(p);
}

/* a decision is resent every 100 ms and asked for every 200 ms */
SF_TARGET(.summary = "two-phase commit (presumed abort) with coordinator recovery", .min_nodes = 3,
          .max_nodes = MAXN, .default_nodes = 3, .create = create, .destroy = free, .ops = &ops,
          .workload = workload, .invariants = invariants, .end_checks = end_checks, .live = live,
          .liveness_ms = 3000, .describe = tp_describe, .classify = tp_classify,
          .observe = observe);
