/*
 * raft_kv as a simfuzz target: the protocol of raft_kv.c on simulated
 * nodes, client gateways' workload and history, and the oracles.
 *
 * Oracles, each in its own function (after every event): election safety
 * (one leader per term), log matching (same index and term = same prefix),
 * leader completeness (a new leader holds every committed entry), state
 * machine safety (no two nodes apply different entries at one index; a
 * committed entry never changes). At the end: the client history is
 * linearizable (linearize.h, key-value model). After heal: liveness (a
 * leader is up and every gateway's requests complete).
 *
 * Built with RAFT_RECONF (the raft_kv_reconf targets), a quarter of the
 * client operations are membership changes instead (an administrator
 * adding or removing a node), and the last node starts as a spare outside
 * the configuration (from 4 nodes on; 5 by default).
 */
#include "../common/node_io_sim.h"
#include "raft_kv.h"
#include <simfuzz/linearize.h>
#include <simfuzz/simfuzz.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#ifdef RAFT_RECONF
#define KINDS 4 /* put, get, cas, config */
#define DEFAULT_NODES 5
#define SUMMARY "key-value store on Raft with membership changes; linearizability checked"
#else
#define KINDS 3
#define DEFAULT_NODES 3
#define SUMMARY "key-value store replicated with Raft; linearizability checked"
#endif
#define NO_HISTORY UINT64_MAX /* the tag of a request the history does not record */

enum {
  MAX_TERMS = 8192, /* terms the oracle tracks */
  LM_SLOTS = 2048   /* (index, term) pairs the oracle remembers (power of 2) */
};
_Static_assert((int)RK_PUT == (int)SF_KV_PUT && (int)RK_GET == (int)SF_KV_GET &&
                   (int)RK_CAS == (int)SF_KV_CAS,
               "raft_kv's operations are the key-value model's");

typedef struct {
  node_io_sim sim; /* first: see node_io_sim_attach */
  rk_node rk;
} node;

typedef struct {
  int n;
  sim_world *w; /* the world of the current run (for history times) */
  sf_history hist;
  /* oracle memory (only the checks write it) */
  int8_t leader_of[MAX_TERMS];
  uint32_t committed_len;
  rk_entry committed[RK_MAX_LOG + 1];
  uint32_t committed_in[RK_MAX_LOG + 1]; /* the term of the leader that committed it */
  uint32_t first_applied_len;
  rk_entry first_applied[RK_MAX_LOG + 1];
  uint32_t checked_term[RK_MAXN];   /* leader completeness: term last checked */
  uint32_t checked_apply[RK_MAXN];  /* state machine safety: applied index checked */
  uint32_t checked_commit[RK_MAXN]; /* a leader's commit index checked */
  uint64_t ph[RK_MAXN][RK_MAX_LOG + 1];
  uint32_t ph_len[RK_MAXN];
  struct {
    uint64_t key, ph;
  } lm[LM_SLOTS]; /* log matching: (index, term) -> prefix hash */
  uint32_t lm_used;
  rk_node *node[RK_MAXN]; /* running nodes' instances (rk()) */
} cluster;

/* Node i's instance, NULL while it is down. The checks after every event
 * look nodes up many times: the cluster keeps the pointers, set at boot
 * and cleared when the node's memory goes (a crash, the world's end). */
static rk_node *rk(const cluster *c, int i) {
  return c->node[i];
}

/* ---- nodes ---- */

/* A gateway's request completed: the history records it now. */
static void completed(void *arg, uint64_t tag, uint32_t result) {
  cluster *c = arg;
  if (tag == NO_HISTORY)
    return;
  sf_history_complete(&c->hist, (size_t)tag, result, sim_now(c->w));
}

static void boot(void *ctx, sim_world *w, int i, int restart) {
  cluster *c = ctx;
  (void)restart;
  c->w = w;
  node *x = node_io_sim_attach(w, i, sizeof *x, RK_RECORD);
  c->node[i] = &x->rk; /* before rk_boot: a boot that fails crashes the node */
  /* the checks' memory of the node starts over: its log is reloaded */
  c->ph_len[i] = 0;
  c->checked_term[i] = 0;
  c->checked_apply[i] = 0;
  c->checked_commit[i] = 0;
#ifdef RAFT_RECONF
  if (c->n >= 4)
    x->rk.initial = (1u << (c->n - 1)) - 1; /* the last node: a spare */
#endif
  rk_boot(&x->rk, &x->sim.io, completed, c);
}

static void recv(void *ctx, sim_world *w, int i, int from, const void *msg, size_t len) {
  (void)w;
  rk_node *p = rk(ctx, i);
  if (p)
    rk_recv(p, from, msg, len);
}

static void timer(void *ctx, sim_world *w, int i, uint64_t tag) {
  (void)w;
  rk_timer(rk(ctx, i), tag);
}

static void teardown(void *ctx, sim_world *w, int i, sim_teardown_why why) {
  cluster *c = ctx;
  c->node[i] = NULL;
  node_io_sim_teardown(ctx, w, i, why);
}

static const sim_node_ops ops = {boot, recv, timer, NULL, teardown};

/* Client operations: op % 3 = put / get / cas on one of RK_NKEYS keys, with
 * small values so that cas often matches and reads see conflicts (op % 4,
 * 3 = a membership change, with RAFT_RECONF). */
static void workload(void *ctx, sim_world *w, const sf_op *op) {
  cluster *c = ctx;
  rk_node *p = rk(c, op->node);
  if (!p || sim_node_paused(w, op->node) || p->npend >= RK_MAX_PEND || op->seq >= RK_MAX_OPS)
    return; /* the client could not even submit it: no history entry */
  /* a membership change (add or remove a node) is not a key-value operation */
  if (op->op % KINDS == 3) {
    rk_submit(p, RK_CONFIG, 0, (uint32_t)(op->value % (uint32_t)c->n), (op->value >> 8) & 1,
              op->seq, NO_HISTORY);
    return;
  }
  uint8_t kind = (uint8_t)(RK_PUT + op->op % KINDS), key = (uint8_t)(op->key % RK_NKEYS);
  uint32_t arg = kind == RK_CAS ? (uint32_t)(op->value % 6) : (uint32_t)(op->value % 5 + 1);
  uint32_t arg2 = kind == RK_CAS ? (uint32_t)((op->value >> 8) % 5 + 1) : 0;
  if (kind == RK_GET)
    arg = 0;
  size_t hid = sf_history_invoke(&c->hist, (uint32_t)op->node, kind, key, arg, arg2, sim_now(w));
  if (hid == SIZE_MAX)
    return;
  rk_submit(p, kind, key, arg, arg2, op->seq, hid);
}

/* ---- oracles ------------------------------------------------------------- */

/* At most one leader per term, ever. */
SF_ORACLE static void check_election_safety(void *ctx, sim_world *w) {
  cluster *c = ctx;
  int from, to;
  sf_changed_nodes(w, &from, &to);
  for (int k = from; k < to; k++) {
    rk_node *p = rk(c, k);
    if (!p || p->role != RK_LEADER || p->term >= MAX_TERMS)
      continue;
    if (c->leader_of[p->term] < 0)
      c->leader_of[p->term] = (int8_t)k;
    SIM_INVARIANT(w, k, c->leader_of[p->term] == k, "election_safety",
                  "n%d and n%d are both leaders of term %" PRIu32, c->leader_of[p->term], k,
                  p->term);
  }
}

SF_ORACLE static uint64_t entry_hash(uint64_t h, const rk_entry *e) {
  uint64_t x = h ^ ((uint64_t)e->term << 32 | e->req);
  x = sim_mix64(x ^ ((uint64_t)e->kind << 56 | (uint64_t)e->key << 48 | (uint64_t)e->gw << 40));
  return sim_mix64(x ^ ((uint64_t)e->arg << 32 | e->arg2));
}

/* If two logs hold an entry with the same index and term, the logs are
 * identical up to that index: (index, term) determines the prefix hash. */
SF_ORACLE static void check_log_matching(void *ctx, sim_world *w) {
  cluster *c = ctx;
  int from, to;
  sf_changed_nodes(w, &from, &to);
  for (int k = from; k < to; k++) {
    rk_node *p = rk(c, k);
    if (!p)
      continue;
    uint32_t i = p->dirty; /* entries before it are unchanged since last time */
    if (i > c->ph_len[k] + 1)
      i = c->ph_len[k] + 1;
    if (i < 1)
      i = 1;
    p->dirty = UINT32_MAX;
    for (; i <= p->len; i++) {
      c->ph[k][i] = entry_hash(c->ph[k][i - 1], &p->log[i]);
      uint64_t key = (uint64_t)i << 32 | p->log[i].term;
      uint32_t s = (uint32_t)sim_mix64(key) & (LM_SLOTS - 1);
      while (c->lm[s].key && c->lm[s].key != key + 1)
        s = (s + 1) & (LM_SLOTS - 1);
      if (!c->lm[s].key) {
        if (c->lm_used >= LM_SLOTS / 4 * 3)
          continue; /* table full: stop learning (bounded memory) */
        c->lm[s].key = key + 1;
        c->lm[s].ph = c->ph[k][i];
        c->lm_used++;
        continue;
      }
      SIM_INVARIANT(w, k, c->lm[s].ph == c->ph[k][i], "log_matching",
                    "n%d's entry %" PRIu32 " has term %" PRIu32
                    " like another node's, but the logs before it differ",
                    k, i, p->log[i].term);
    }
    c->ph_len[k] = p->len;
  }
}

/* Every committed entry is in the log of every leader of a later term than
 * the one it was committed in (not the entry's own term: a candidate of an
 * older term that collected its votes before the entry was committed, and
 * counts them after a pause, legitimately leads that older term without
 * it). Committed entries are learnt from leaders' commit indexes and never
 * change. */
SF_ORACLE static void check_leader_completeness(void *ctx, sim_world *w) {
  cluster *c = ctx;
  int from, to;
  sf_changed_nodes(w, &from, &to);
  for (int k = from; k < to; k++) {
    rk_node *p = rk(c, k);
    if (!p || p->role != RK_LEADER)
      continue;
    if (c->checked_term[k] != p->term) {
      c->checked_term[k] = p->term;
      for (uint32_t i = 1; i <= c->committed_len; i++)
        if (c->committed_in[i] < p->term)
          SIM_INVARIANT(w, k, i <= p->len && rk_same_entry(&p->log[i], &c->committed[i]),
                        "leader_completeness",
                        "n%d leads term %" PRIu32 " without committed entry %" PRIu32
                        " (term %" PRIu32 ")",
                        k, p->term, i, c->committed[i].term);
    }
  }
}

/* Entry i of a table the first node to reach it fills: 1 if e is the same. */
SF_ORACLE static int same_as_first(rk_entry *t, uint32_t *len, uint32_t i, const rk_entry *e) {
  if (i > *len) {
    t[i] = *e;
    *len = i;
  }
  return rk_same_entry(&t[i], e);
}

/* No two nodes apply different entries at one index, and an entry once
 * committed is never replaced. */
SF_ORACLE static void check_state_machine_safety(void *ctx, sim_world *w) {
  cluster *c = ctx;
  int from, to;
  sf_changed_nodes(w, &from, &to);
  for (int k = from; k < to; k++) {
    rk_node *p = rk(c, k);
    if (!p)
      continue;
    uint32_t upto = p->commit < p->len ? p->commit : p->len;
    for (uint32_t i = c->checked_commit[k] + 1; p->role == RK_LEADER && i <= upto; i++) {
      if (i > c->committed_len)
        c->committed_in[i] = p->term; /* learnt first from this leader */
      SIM_INVARIANT(w, k, same_as_first(c->committed, &c->committed_len, i, &p->log[i]),
                    "committed_entry_changed",
                    "n%d commits entry %" PRIu32 " of term %" PRIu32
                    " but a different one (term %" PRIu32 ") was committed there",
                    k, i, p->log[i].term, c->committed[i].term);
      c->checked_commit[k] = i;
    }
    for (uint32_t i = c->checked_apply[k] + 1; i <= p->applied; i++) {
      SIM_INVARIANT(w, k, same_as_first(c->first_applied, &c->first_applied_len, i, &p->log[i]),
                    "state_machine_safety",
                    "n%d applied entry %" PRIu32 " (term %" PRIu32
                    ") but another node applied a different one (term %" PRIu32 ")",
                    k, i, p->log[i].term, c->first_applied[i].term);
    }
    c->checked_apply[k] = p->applied;
  }
}

#ifdef RAFT_RECONF
/* 1 if p's log holds q's entry at index i. */
SF_ORACLE static int holds(const rk_node *p, const rk_node *q, uint32_t i) {
  return i <= p->len && rk_same_entry(&p->log[i], &q->log[i]);
}

/* Two membership changes on diverging logs, neither in the other's log:
 * each node counts majorities of its own. A correct Raft lets at most one
 * of them commit (a leader changes membership only after committing an
 * entry of its own term); the node with the older change is where it
 * would come back from. */
SF_ORACLE static void note_changes(cluster *c, sim_world *w) {
  int older = -1, changing = -1;
  for (int k = 0; k < c->n; k++) {
    rk_node *p = rk(c, k);
    if (!p || !p->config_at)
      continue;
    if (p->role == RK_LEADER && p->config_at > p->commit)
      changing = k;
    for (int j = 0; j < c->n && older < 0; j++) { /* the first diverging pair */
      rk_node *q = rk(c, j);
      if (j == k || !q || !q->config_at || holds(q, p, p->config_at) || holds(p, q, q->config_at))
        continue; /* (neither holding the other's change: the logs diverge) */
      older = p->log[p->config_at].term <= q->log[q->config_at].term ? k : j;
    }
  }
  SF_SOMETIMES_ON(w, changing >= 0, changing, "leader with an uncommitted membership change");
#ifndef SF_ZOO_NO_HINTS /* early_change's precondition */
  SF_SOMETIMES_ON(w, older >= 0, older, "membership changes on diverging logs");
#else
  (void)older;
#endif
}

#ifndef SF_ZOO_NO_HINTS /* the ladder was written from early_change's trigger */
/* 1 if p's log is no newer than q's (q would get p's vote). */
SF_ORACLE static int no_newer(const rk_node *p, const rk_node *q) {
  uint32_t pt = p->log[p->len].term, qt = q->log[q->len].term;
  return pt < qt || (pt == qt && p->len <= q->len);
}

/* How far a run has come along the early-change hazard (Ongaro, raft-dev,
 * 2015), rung by rung, for an older membership change on node a and a
 * newer leader b whose log lacks it:
 *   1  that much;
 *   2  b has a change of its own in its term, before committing any entry
 *      of its term (a correct leader never has); or a's change is
 *      committed, by a majority of a's configuration that b's election did
 *      not need, and b has committed nothing of its term yet;
 *   3  b has committed its change, or b has one before committing in its
 *      term and a's is committed;
 *   4  b's is committed, and a's too, or a majority of a's configuration
 *      could elect a: their logs are no newer than a's.
 * The node named is where the next rung is won: b at rung 1 (a change
 * submitted there, or its followers cut off), a at 2 (it must hold on)
 * unless a's change is committed (then b, where a change must arrive),
 * b at 3 (it must commit) and 4 (cut off while a campaigns). */
SF_ORACLE static void note_change_race(cluster *c, sim_world *w) {
  uint32_t best = 0;
  int about = -1;
  for (int a = 0; a < c->n; a++) {
    rk_node *p = rk(c, a);
    if (!p || !p->config_at)
      continue;
    uint32_t term = p->log[p->config_at].term;
    int a_done = p->commit >= p->config_at;
    for (int b = 0; b < c->n; b++) {
      rk_node *q = rk(c, b);
      if (b == a || !q || q->role != RK_LEADER || q->term <= term || holds(q, p, p->config_at))
        continue;
      uint32_t rung = 1;
      int at = b;
      int own = q->config_at && q->log[q->config_at].term == q->term && !holds(p, q, q->config_at);
      int b_done = own && q->commit >= q->config_at;
      int early = q->log[q->commit].term < q->term; /* b has committed nothing of its term */
      if (own && !b_done && early) {
        rung = a_done ? 3 : 2;
        at = a_done ? b : a;
      } else if (b_done) {
        rung = 3;
        uint32_t votes = 0, members = 0;
        for (int m = 0; m < c->n; m++) {
          if (!(p->members >> m & 1))
            continue;
          members++;
          votes += rk(c, m) && no_newer(rk(c, m), p);
        }
        if (a_done || 2 * votes > members)
          rung = 4;
      } else if (a_done && early) {
        rung = 2;
      }
      if (rung > best) {
        best = rung;
        about = at;
      }
    }
  }
  SF_MAXIMIZE_ON(w, "early-change hazard: rungs climbed", best, about);
}
#endif /* SF_ZOO_NO_HINTS */
#endif

/* States that matter, for the explorer and `simfuzz reach`: they never
 * fail a run. The figure-8 hazard starts with a leader holding entries of
 * an earlier term that are not committed yet; the more replicas hold such
 * an entry, the closer a wrong commit or a lost entry is. */
SF_ORACLE static void note_states(void *ctx, sim_world *w) {
  cluster *c = ctx;
  if (!sf_sites_wanted(w))
    return; /* a sweep or a replay: nobody records the states */
  int leaders = 0, rewrote = -1, deposed = -1, old_leader = -1, lease_at = -1;
  uint32_t holders = 0, lowest = UINT32_MAX;
  int64_t lease = 0;
  for (int k = 0; k < c->n; k++) {
    rk_node *p = rk(c, k);
    if (!p)
      continue;
    if (rewrote < 0 && p->role == RK_FOLLOWER && p->rewrites > 0)
      rewrote = k;
    if (p->role == RK_LEADER) {
      leaders++;
      if (p->term < lowest) { /* of two leaders, the stale one matters */
        lowest = p->term;
        deposed = k;
      }
      /* terms never decrease along a log: the first uncommitted entry tells */
      int old = p->commit < p->len && p->log[p->commit + 1].term < p->term;
      SF_SOMETIMES_ON(w, old, k, "leader with uncommitted entries of an earlier term");
      if (old && old_leader < 0)
        old_leader = k;
      if (old)
        for (int j = 0; j < c->n; j++) {
          rk_node *q = rk(c, j);
          holders += q && q->len > p->commit && q->log[q->len].term < p->term;
        }
    }
  }
  /* a read lease still running while a newer leader has committed a write
   * in its own term: a get under that lease misses it (only a build with
   * read leases pays for the scan of the newer leader's log) */
  int64_t left[RK_MAXN] = {0};
  int any = 0;
  for (int k = 0; k < c->n; k++) {
    left[k] = RK_LEASES && rk(c, k) ? rk_lease_left(rk(c, k)) : 0;
    any |= left[k] > 0;
  }
  uint32_t newest = 0; /* the newest term whose leader has committed a write in it */
  for (int k = 0; any && k < c->n; k++) {
    rk_node *p = rk(c, k);
    if (!p || p->role != RK_LEADER || p->term <= newest)
      continue;
    for (uint32_t i = p->commit; i > 0 && p->log[i].term == p->term; i--)
      if (p->log[i].kind == RK_PUT || p->log[i].kind == RK_CAS) {
        newest = p->term;
        break;
      }
  }
  for (int k = 0; any && k < c->n; k++)
    if (left[k] > lease && rk(c, k)->term < newest) {
      lease = left[k];
      lease_at = k;
    }
  /* each state is about one node: the explorer aims its futures there (a
   * get at the old leader, a crash of the follower that rewrote its log) */
  SF_SOMETIMES_ON(w, leaders >= 2, deposed, "two nodes act as leader at once");
  SF_SOMETIMES_ON(w, rewrote >= 0, rewrote, "follower replaced entries for a new leader");
#ifndef SF_ZOO_NO_HINTS /* lease_read's trigger, commit_old_term's, early_change's ladder */
  SF_SOMETIMES_ON(w, lease > 0, lease_at, "read lease outlives a newer leader's write");
  SF_MAXIMIZE_ON(w, "read lease left after a newer leader's write (ms)",
                 (uint64_t)(lease / 1000000), lease_at);
  SF_MAXIMIZE_ON(w, "replicas past the commit with an earlier-term entry", holders, old_leader);
#else
  (void)holders;
  (void)lease_at;
#endif
#ifdef RAFT_RECONF
  note_changes(c, w);
#ifndef SF_ZOO_NO_HINTS
  note_change_race(c, w);
#endif
#endif
}

static const sf_check invariants[] = {
    {"states", note_states},
    {"election_safety", check_election_safety},
    {"log_matching", check_log_matching},
    {"leader_completeness", check_leader_completeness},
    {"state_machine_safety", check_state_machine_safety},
    {NULL, NULL},
};

/* The clients' history is linearizable (pending requests may or may not
 * have taken effect). */
SF_ORACLE static void check_linearizable(void *ctx, sim_world *w) {
  cluster *c = ctx;
  sf_lin_report rep;
  sf_lin_result r = sf_history_check(&c->hist, &sf_kv_model, NULL, &rep);
  SIM_INVARIANT(w, -1, r != SF_LIN_VIOLATION, "linearizable", "%s", rep.message);
}

static const sf_check end_checks[] = {
    {"linearizable", check_linearizable},
    {NULL, NULL},
};

/* A leader that every running node follows, and no request waiting. */
SF_ORACLE static int live(void *ctx, sim_world *w) {
  cluster *c = ctx;
  (void)w;
  int leader = -1;
  uint32_t top = 0;
  for (int k = 0; k < c->n; k++) {
    rk_node *p = rk(c, k);
    if (!p)
      return 0;
    if (p->npend)
      return 0;
    if (p->term > top)
      top = p->term;
  }
  for (int k = 0; k < c->n; k++) {
    rk_node *p = rk(c, k);
    if (p->role == RK_LEADER && p->term == top)
      leader = k;
  }
  return leader >= 0;
}

static void *create(int nodes) {
  cluster *c = node_io_sim_cluster(sizeof(cluster), nodes);
  c->hist.max = RK_MAX_OPS;
  memset(c->leader_of, -1, sizeof c->leader_of);
  return c;
}

static void destroy(void *ctx) {
  cluster *c = ctx;
  sf_history_free(&c->hist);
  free(c);
}

/* Role; whether the log holds uncommitted entries, and whether any of them
 * are from an earlier term than the node's (the precondition of the Raft
 * paper's figure 8); whether its gateway waits for responses. */
SF_ORACLE static uint32_t observe(void *ctx, sim_world *w, int k) {
  (void)w;
  rk_node *p = rk(ctx, k);
  if (!p)
    return 0;
  uint32_t ahead = p->len > p->commit;
  uint32_t old = ahead && p->log[p->commit + 1].term < p->term;
  return (uint32_t)p->role * 8 + ahead * 4 + old * 2 + (p->npend > 0);
}

/* The node's term: the epoch of the feedback's "message of an older term". */
SF_ORACLE static uint64_t epoch(void *ctx, sim_world *w, int k) {
  (void)w;
  rk_node *p = rk(ctx, k);
  return p ? p->term : 0;
}

/* a few election rounds (<= 300 ms each, split votes retried) plus a retry round for every
 * gateway's requests */
SF_TARGET(.summary = SUMMARY, .min_nodes = 3, .max_nodes = RK_MAXN, .default_nodes = DEFAULT_NODES,
          .create = create, .destroy = destroy, .ops = &ops, .workload = workload,
          .invariants = invariants, .end_checks = end_checks, .live = live, .liveness_ms = 5000,
          .describe = rk_describe, .classify = rk_classify, .observe = observe, .epoch = epoch);
