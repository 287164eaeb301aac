/*
 * twopc: two-phase commit with presumed abort, over datagrams.
 *
 * Node 0 is the coordinator; nodes 1..n-1 are participants. A client
 * operation starts a transaction with a value; participant p votes no when
 * two bits of the value chosen by p are zero (a "constraint violation",
 * about one vote in four), else it logs PREPARED durably and votes yes. The
 * coordinator commits when every participant voted yes: it logs the COMMIT
 * decision durably, then tells everyone, resending until each acknowledges.
 * Any no vote, or no answer within a second, aborts (presumed abort: abort
 * decisions are not logged; whoever asks about an unknown transaction is
 * told to abort). A prepared participant never decides on its own: it asks
 * the coordinator until it hears the decision, across its own restarts and
 * the coordinator's.
 *
 * Oracles: atomicity after every event (no transaction is committed at one
 * participant and aborted, or voted down, at another); at the end, every
 * participant's outcome matches the coordinator's decision; after heal,
 * liveness (no transaction left undecided or unacknowledged).
 *
 * Planted bugs (see docs/bug-zoo.md):
 *   TWOPC_BUG_UNSYNCED_DECISION  the COMMIT decision is sent before it is
 *       synced (the sync comes with the next tick): a coordinator crash can
 *       forget a commit that some participants already applied.
 *   TWOPC_BUG_COUNT_VOTES  the coordinator counts yes messages instead of
 *       distinct voters: a duplicated or re-sent yes stands in for a missing
 *       participant's no.
 *   TWOPC_BUG_PARTICIPANT_TIMEOUT  a prepared participant that hears
 *       nothing for a second aborts on its own.
 */
#include "../common/wire.h"
#include "simfuzz.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#ifndef SF_TARGET_NAME
#define SF_TARGET_NAME "twopc"
#endif
#ifndef SF_TARGET_SYMBOL
#define SF_TARGET_SYMBOL sf_target_twopc
#endif

enum { MAXN = 7, MAX_TXN = 256, MAX_REC = 1024, MAX_OUT = 2 * MAX_TXN };
enum { M_PREPARE = 1, M_VOTE, M_COMMIT, M_ABORT, M_ACK, M_STATUS };
/* transaction states: coordinator (C_*) and participant (P_*); a
 * coordinator's transaction is finished once C_DONE_* */
enum { C_NONE = 0, C_COLLECTING, C_COMMITTING, C_ABORTING, C_DONE_ABORT, C_DONE_COMMIT };
enum { P_NONE = 0, P_VOTED_NO, P_PREPARED, P_COMMITTED, P_ABORTED };
/* durable records */
enum { R_COMMIT = 1, R_PREPARED, R_COMMITTED, R_ABORTED };
/* outcomes reported to the oracles */
enum { O_COMMIT = 1, O_ABORT = 2 };
#define TICK_NS (50 * SIM_NS_PER_MS)
#define VOTE_TICKS 20 /* coordinator: no decision after 1 s -> abort */
#define RESEND_TICKS 2
#define STATUS_TICKS 4

typedef struct {
  uint8_t st;
  uint8_t ticks;
  uint32_t value;
  uint32_t yes, acked; /* bitmasks of participants */
  uint32_t nyes;       /* (bug) yes messages counted */
} txn;

typedef struct {
  uint32_t txn;
  uint8_t what;
} outcome;

typedef struct {
  uint32_t nrec, durable; /* records written / synced */
  txn t[MAX_TXN + 1];
  outcome out[MAX_OUT]; /* outcomes since boot, for the oracles */
  uint32_t nout;
} tnode;

typedef struct {
  int n;
  uint32_t committed[MAX_TXN + 1], aborted[MAX_TXN + 1]; /* participant bitmasks */
  uint8_t decided[MAX_TXN + 1];                          /* coordinator decision */
  uint32_t seen[MAXN], inc[MAXN];                        /* outcomes consumed */
} cluster;

/* ---- disk: one record per 512-byte sector ------------------------------ */

static void panic(sim_world *w, int node) {
  sim_node_crash(w, node);
}

/* Append a record; synced unless sync == 0. -1 after a panic. */
static int log_rec(sim_world *w, int node, tnode *p, uint8_t type, uint32_t t, uint32_t v,
                   int sync) {
  uint8_t b[17];
  if (p->nrec >= MAX_REC)
    return 0; /* full: keep running from memory (bounded run) */
  b[0] = type;
  wire_put32(b + 1, t);
  wire_put32(b + 5, v);
  wire_put64(b + 9, wire_checksum(p->nrec, b, 9));
  if (sim_disk_write(w, node, (uint64_t)p->nrec * 512, b, sizeof b) != (int64_t)sizeof b)
    goto fail;
  p->nrec++;
  if (sync) {
    if (sim_disk_sync(w, node) < 0)
      goto fail;
    p->durable = p->nrec;
  }
  return 0;
fail:
  panic(w, node);
  return -1;
}

static void note(tnode *p, uint32_t t, uint8_t what) {
  if (p->nout < MAX_OUT)
    p->out[p->nout++] = (outcome){t, what};
}

static int load(sim_world *w, int node, tnode *p) {
  uint8_t b[17];
  while (p->nrec < MAX_REC) {
    int64_t r = -1;
    for (int attempt = 0; attempt < 3 && r < 0; attempt++)
      r = sim_disk_read(w, node, (uint64_t)p->nrec * 512, b, sizeof b);
    if (r < 0) {
      panic(w, node);
      return -1;
    }
    if (r != (int64_t)sizeof b || wire_get64(b + 9) != wire_checksum(p->nrec, b, 9))
      break;
    uint32_t t = wire_get32(b + 1);
    p->nrec++;
    if (t == 0 || t > MAX_TXN)
      continue;
    txn *x = &p->t[t];
    switch (b[0]) {
    case R_COMMIT: /* coordinator: tell everyone again */
      x->st = C_COMMITTING;
      x->acked = 0;
      note(p, t, O_COMMIT); /* it may have been written by a sync that failed */
      break;
    case R_PREPARED:
      x->st = P_PREPARED;
      x->value = wire_get32(b + 5);
      break;
    case R_COMMITTED:
      x->st = P_COMMITTED;
      note(p, t, O_COMMIT);
      break;
    case R_ABORTED:
      x->st = P_ABORTED;
      note(p, t, O_ABORT);
      break;
    default: break;
    }
  }
  p->durable = p->nrec;
  return 0;
}

/* ---- messages ------------------------------------------------------------ */

static void msg(sim_world *w, int from, int to, uint8_t type, uint32_t t, uint32_t v) {
  uint8_t m[9 + WIRE_SEAL];
  m[0] = type;
  wire_put32(m + 1, t);
  wire_put32(m + 5, v);
  sim_send(w, from, to, m, wire_seal(m, 9));
}

static uint32_t all_participants(sim_world *w) {
  return ((1u << sim_nodes(w)) - 1) & ~1u;
}

/* ---- coordinator ----------------------------------------------------------- */

static void send_decision(sim_world *w, tnode *p, uint32_t t) {
  txn *x = &p->t[t];
  for (int k = 1; k < sim_nodes(w); k++)
    if (!(x->acked & 1u << k))
      msg(w, 0, k, x->st == C_COMMITTING ? M_COMMIT : M_ABORT, t, 0);
}

static void decide(sim_world *w, tnode *p, uint32_t t, int commit) {
  txn *x = &p->t[t];
  if (commit) {
#ifdef TWOPC_BUG_UNSYNCED_DECISION
    /* BUG: "the decision reaches the disk with the next tick's sync" */
    if (log_rec(w, 0, p, R_COMMIT, t, 0, 0) < 0)
      return;
#else
    if (log_rec(w, 0, p, R_COMMIT, t, 0, 1) < 0)
      return;
#endif
  }
  x->st = commit ? C_COMMITTING : C_ABORTING;
  x->acked = 0;
  x->ticks = 0;
  note(p, t, commit ? O_COMMIT : O_ABORT);
  send_decision(w, p, t);
}

static void coord_recv(sim_world *w, tnode *p, int from, uint8_t type, uint32_t t, uint32_t v) {
  txn *x = &p->t[t];
  switch (type) {
  case M_VOTE:
    if (x->st == C_COLLECTING) {
      if (!v) {
        decide(w, p, t, 0);
        return;
      }
      x->yes |= 1u << from; /* prepares are resent to the others only */
#ifdef TWOPC_BUG_COUNT_VOTES
      /* BUG: "every participant votes once": count yes messages */
      if (++x->nyes >= (uint32_t)(sim_nodes(w) - 1))
        decide(w, p, t, 1);
#else
      if (x->yes == all_participants(w))
        decide(w, p, t, 1);
#endif
      return;
    }
    /* fall through: a late vote is answered like a status query */
  case M_STATUS:
    if (x->st == C_COLLECTING)
      return; /* the decision is coming */
    msg(w, 0, from, x->st == C_COMMITTING || x->st == C_DONE_COMMIT ? M_COMMIT : M_ABORT, t, 0);
    return;
  case M_ACK:
    if (x->st == C_COMMITTING || x->st == C_ABORTING) {
      x->acked |= 1u << from;
      if (x->acked == all_participants(w))
        x->st = x->st == C_COMMITTING ? C_DONE_COMMIT : C_DONE_ABORT;
    }
    return;
  default: return;
  }
}

static void coord_tick(sim_world *w, tnode *p) {
#ifdef TWOPC_BUG_UNSYNCED_DECISION
  if (p->durable < p->nrec) {
    if (sim_disk_sync(w, 0) < 0) {
      panic(w, 0);
      return;
    }
    p->durable = p->nrec;
  }
#endif
  for (uint32_t t = 1; t <= MAX_TXN; t++) {
    txn *x = &p->t[t];
    if (x->st == C_NONE || x->st >= C_DONE_ABORT)
      continue;
    x->ticks++;
    if (x->st == C_COLLECTING) {
      if (x->ticks >= VOTE_TICKS) {
        decide(w, p, t, 0);
        continue;
      }
      if (x->ticks % RESEND_TICKS == 0)
        for (int k = 1; k < sim_nodes(w); k++)
          if (!(x->yes & 1u << k))
            msg(w, 0, k, M_PREPARE, t, x->value);
    } else if (x->ticks % RESEND_TICKS == 0) {
      send_decision(w, p, t);
    }
  }
}

/* ---- participants ---------------------------------------------------------- */

static int votes_yes(int node, uint32_t v) {
  return ((v >> (2 * (node % 16))) & 3u) != 0;
}

static void part_recv(sim_world *w, int node, tnode *p, int from, uint8_t type, uint32_t t,
                      uint32_t v) {
  txn *x = &p->t[t];
  switch (type) {
  case M_PREPARE:
    if (x->st == P_NONE) {
      if (!votes_yes(node, v)) {
        x->st = P_VOTED_NO;
        note(p, t, O_ABORT);
      } else {
        if (log_rec(w, node, p, R_PREPARED, t, v, 1) < 0)
          return;
        x->st = P_PREPARED;
        x->value = v;
        x->ticks = 0;
      }
    }
    msg(w, node, from, M_VOTE, t, x->st == P_PREPARED || x->st == P_COMMITTED);
    return;
  case M_COMMIT:
    if (x->st == P_PREPARED) {
      if (log_rec(w, node, p, R_COMMITTED, t, 0, 1) < 0)
        return;
      x->st = P_COMMITTED;
      note(p, t, O_COMMIT);
    }
    msg(w, node, from, M_ACK, t, 0);
    return;
  case M_ABORT:
    if (x->st == P_PREPARED) {
      if (log_rec(w, node, p, R_ABORTED, t, 0, 1) < 0)
        return;
      x->st = P_ABORTED;
      note(p, t, O_ABORT);
    } else if (x->st == P_NONE) {
      x->st = P_ABORTED; /* a late prepare will be voted down */
    }
    msg(w, node, from, M_ACK, t, 0);
    return;
  default: return;
  }
}

static void part_tick(sim_world *w, int node, tnode *p) {
  for (uint32_t t = 1; t <= MAX_TXN; t++) {
    txn *x = &p->t[t];
    if (x->st != P_PREPARED)
      continue;
    x->ticks++;
#ifdef TWOPC_BUG_PARTICIPANT_TIMEOUT
    /* BUG: "if the coordinator has not answered in a second, it aborted" */
    if (x->ticks >= 20) {
      if (log_rec(w, node, p, R_ABORTED, t, 0, 1) < 0)
        return;
      x->st = P_ABORTED;
      note(p, t, O_ABORT);
      continue;
    }
#endif
    if (x->ticks % STATUS_TICKS == 0)
      msg(w, node, 0, M_STATUS, t, 0);
  }
}

/* ---- callbacks ------------------------------------------------------------- */

static void recv(void *ctx, sim_world *w, int node, int from, const void *data, size_t len) {
  (void)ctx;
  tnode *p = sim_node_data(w, node);
  const uint8_t *m = data;
  if (wire_unseal(m, len) != 9 || from < 0 || from >= sim_nodes(w))
    return; /* damaged in flight */
  uint32_t t = wire_get32(m + 1), v = wire_get32(m + 5);
  if (t == 0 || t > MAX_TXN)
    return;
  if (node == 0)
    coord_recv(w, p, from, m[0], t, v);
  else if (from == 0)
    part_recv(w, node, p, from, m[0], t, v);
}

static void timer(void *ctx, sim_world *w, int node, uint64_t tag) {
  (void)ctx;
  (void)tag;
  tnode *p = sim_node_data(w, node);
  sim_timer_start(w, node, TICK_NS, 1);
  if (node == 0)
    coord_tick(w, p);
  else
    part_tick(w, node, p);
}

static void boot(void *ctx, sim_world *w, int node, int restart) {
  (void)ctx;
  (void)restart;
  tnode *p = calloc(1, sizeof *p);
  if (!p)
    abort();
  sim_node_set_data(w, node, p);
  if (load(w, node, p) < 0)
    return;
  sim_timer_start(w, node, TICK_NS, 1);
}

static void teardown(void *ctx, sim_world *w, int node, sim_teardown_why why) {
  (void)ctx;
  (void)why;
  free(sim_node_data(w, node));
  sim_node_set_data(w, node, NULL);
}

static const sim_node_ops ops = {boot, recv, timer, NULL, teardown};

/* A client asks the coordinator to run transaction seq+1 with op.value. */
static void workload(void *ctx, sim_world *w, const sf_op *op) {
  (void)ctx;
  tnode *p = sim_node_data(w, 0);
  uint32_t t = op->seq + 1;
  if (!p || sim_node_paused(w, 0) || t > MAX_TXN || p->t[t].st != C_NONE)
    return; /* refused */
  txn *x = &p->t[t];
  x->st = C_COLLECTING;
  x->value = (uint32_t)op->value;
  for (int k = 1; k < sim_nodes(w); k++)
    msg(w, 0, k, M_PREPARE, t, x->value);
}

/* ---- oracles --------------------------------------------------------------- */

static int first_bit(uint32_t m) {
  for (int k = 0; k < 32; k++)
    if (m & 1u << k)
      return k;
  return -1;
}

/* No transaction is committed at one participant and aborted (or voted
 * down) at another. Folds the outcomes nodes reported since the last event
 * into the cluster's view and checks each. */
SF_ORACLE static void check_atomicity(void *ctx, sim_world *w) {
  cluster *c = ctx;
  for (int k = 0; k < c->n; k++) {
    tnode *p = sim_node_up(w, k) ? sim_node_data(w, k) : NULL;
    if (!p)
      continue;
    if (c->inc[k] != sim_node_incarnation(w, k)) {
      c->inc[k] = sim_node_incarnation(w, k);
      c->seen[k] = 0;
    }
    for (; c->seen[k] < p->nout; c->seen[k]++) {
      const outcome *o = &p->out[c->seen[k]];
      uint32_t t = o->txn;
      if (k == 0) {
        if (!c->decided[t] || o->what == O_COMMIT)
          c->decided[t] = o->what; /* a forgotten commit stays a commit */
        continue;
      }
      if (o->what == O_COMMIT)
        c->committed[t] |= 1u << k;
      else
        c->aborted[t] |= 1u << k;
      SIM_INVARIANT(w, k, !(c->committed[t] && c->aborted[t]), "atomicity",
                    "transaction %" PRIu32 " committed at n%d but aborted at n%d", t,
                    first_bit(c->committed[t]), first_bit(c->aborted[t]));
    }
  }
}

static const sf_check invariants[] = {
    {"atomicity", check_atomicity},
    {NULL, NULL},
};

/* End state: what participants did matches what the coordinator decided
 * (a participant never commits what the coordinator aborted or never
 * decided, nor aborts a committed transaction after voting yes). */
SF_ORACLE static void check_outcomes(void *ctx, sim_world *w) {
  cluster *c = ctx; /* up to date: the invariants ran after the last event */
  for (uint32_t t = 1; t <= MAX_TXN; t++) {
    if (c->committed[t])
      SIM_INVARIANT(
          w, first_bit(c->committed[t]), c->decided[t] == O_COMMIT, "outcome_matches_decision",
          "transaction %" PRIu32 " committed at n%d but the coordinator %s", t,
          first_bit(c->committed[t]), c->decided[t] == O_ABORT ? "aborted it" : "never decided");
  }
}

static const sf_check end_checks[] = {
    {"outcome_matches_decision", check_outcomes},
    {NULL, NULL},
};

/* Nothing undecided or unacknowledged anywhere. */
SF_ORACLE static int live(void *ctx, sim_world *w) {
  cluster *c = ctx;
  for (int k = 0; k < c->n; k++) {
    tnode *p = sim_node_up(w, k) ? sim_node_data(w, k) : NULL;
    if (!p)
      return 0;
    for (uint32_t t = 1; t <= MAX_TXN; t++) {
      uint8_t st = p->t[t].st;
      if (k == 0 ? st != C_NONE && st < C_DONE_ABORT : st == P_PREPARED)
        return 0;
    }
  }
  return 1;
}

static void *create(int nodes) {
  cluster *c = calloc(1, sizeof *c);
  if (!c)
    abort();
  c->n = nodes;
  return c;
}

static int describe(void *ctx, const void *data, size_t have, size_t len, char *buf, size_t cap) {
  static const char *const names[] = {"?", "PREPARE", "VOTE", "COMMIT", "ABORT", "ACK", "STATUS"};
  const uint8_t *m = data;
  (void)ctx;
  if (have < 9 || len != 9 + WIRE_SEAL || m[0] < M_PREPARE || m[0] > M_STATUS)
    return -1;
  if (m[0] == M_VOTE)
    return snprintf(buf, cap, "VOTE t%" PRIu32 " %s", wire_get32(m + 1),
                    wire_get32(m + 5) ? "yes" : "no");
  if (m[0] == M_PREPARE)
    return snprintf(buf, cap, "PREPARE t%" PRIu32 " v=%08" PRIx32, wire_get32(m + 1),
                    wire_get32(m + 5));
  return snprintf(buf, cap, "%s t%" PRIu32, names[m[0]], wire_get32(m + 1));
}

static uint32_t classify(void *ctx, const void *data, size_t len) {
  const uint8_t *m = data;
  (void)ctx;
  if (len < 9)
    return 0;
  return m[0] == M_VOTE ? 6 + (wire_get32(m + 5) != 0) : m[0] & 7u;
}

/* Coordinator: which phases are in progress; participant: prepared or not. */
SF_ORACLE static uint32_t observe(void *ctx, sim_world *w, int node) {
  (void)ctx;
  tnode *p = sim_node_data(w, node);
  if (!p)
    return 0;
  uint32_t s = 0;
  for (uint32_t t = 1; t <= MAX_TXN; t++) {
    uint8_t st = p->t[t].st;
    if (node == 0 ? st != C_NONE && st < C_DONE_ABORT : st == P_PREPARED)
      s |= 1u << st;
  }
  return (node == 0 ? 64 : 128) | s;
}

const sf_target SF_TARGET_SYMBOL = {
    .name = SF_TARGET_NAME,
    .summary = "two-phase commit (presumed abort) with coordinator recovery",
    .min_nodes = 3,
    .max_nodes = MAXN,
    .default_nodes = 3,
    .create = create,
    .destroy = free,
    .ops = &ops,
    .workload = workload,
    .invariants = invariants,
    .end_checks = end_checks,
    .live = live,
    /* a decision is resent every 100 ms and asked for every 200 ms */
    .liveness_ms = 3000,
    .describe = describe,
    .classify = classify,
    .observe = observe,
};
