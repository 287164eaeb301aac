/*
 * leaselock as a simfuzz target: the protocol of leaselock.c on simulated
 * nodes, a client workload, and the oracles.
 *
 * Oracles (after every event): mutual exclusion (no two clients believe,
 * by their own clocks, that they hold a lease at the same moment) and
 * fenced writes (the resource never accepts a write whose token is below
 * one it accepted before). After heal: liveness (every client's operations
 * done).
 */
#include "../common/node_io_sim.h"
#include "leaselock.h"
#include <simfuzz/simfuzz.h>

#include <inttypes.h>
#include <stdlib.h>

enum { MAXN = 8 };

typedef struct {
  node_io_sim sim; /* first: see node_io_sim_attach */
  ll_node ll;
} node;

typedef struct {
  int n;
  uint32_t max_accepted; /* highest token any accepted write carried */
  uint32_t seen, inc;    /* journal entries consumed, server incarnation */
  ll_node *node[MAXN];   /* running nodes' instances (ll()) */
  uint64_t held_after;   /* the event `held` was computed after, plus one (0: none yet) */
  uint32_t held;         /* clients that believe they hold the lock then (a bit each) */
} cluster;

/* Node i's instance, NULL while it is down. The checks after every event
 * look nodes up many times: the cluster keeps the pointers, set at boot
 * and cleared when the node's memory goes (a crash, the world's end). */
static ll_node *ll(const cluster *c, int i) {
  return c->node[i];
}

/* ---- nodes ---- */

static void boot(void *ctx, sim_world *w, int i, int restart) {
  cluster *c = ctx;
  node *x = node_io_sim_attach(w, i, sizeof *x, LL_RECORD);
  c->node[i] = &x->ll; /* before ll_boot: a boot that fails crashes the node */
  ll_boot(&x->ll, &x->sim.io, restart);
}

static void recv(void *ctx, sim_world *w, int i, int from, const void *data, size_t len) {
  (void)w;
  ll_recv(ll(ctx, i), from, data, len);
}

static void timer(void *ctx, sim_world *w, int i, uint64_t tag) {
  (void)w;
  ll_timer(ll(ctx, i), tag);
}

static void teardown(void *ctx, sim_world *w, int i, sim_teardown_why why) {
  cluster *c = ctx;
  c->node[i] = NULL;
  node_io_sim_teardown(ctx, w, i, why);
}

static const sim_node_ops ops = {boot, recv, timer, NULL, teardown};

/* A client (node 1 + node % clients) is asked to write op.value under the
 * lock. */
static void workload(void *ctx, sim_world *w, const sf_op *op) {
  int i = 1 + op->node % (sim_nodes(w) - 1);
  ll_node *p = ll(ctx, i);
  if (p && !sim_node_paused(w, i))
    ll_request(p, (uint32_t)op->value);
}

/* ---- oracles ---------------------------------------------------------------- */

/* The clients that believe, by their own clocks, that they hold the lock
 * now (a bit each). Two checks after every event ask: the set is worked
 * out once per event, as each client's clock read is a call. */
SF_ORACLE static uint32_t holders(cluster *c, sim_world *w) {
  uint64_t stamp = sim_get_stats(w)->events + 1;
  if (c->held_after != stamp) {
    c->held_after = stamp;
    c->held = 0;
    for (int k = 1; k < c->n; k++)
      if (ll(c, k) && ll_holds(ll(c, k)))
        c->held |= 1u << k;
  }
  return c->held;
}

/* No two clients believe they hold the lock at the same moment. */
SF_ORACLE static void check_mutual_exclusion(void *ctx, sim_world *w) {
  cluster *c = ctx;
  uint32_t held = holders(c, w);
  if (!(held & (held - 1)))
    return; /* one holder at most */
  int first = -1;
  for (int k = 1; k < c->n; k++) {
    if (!(held >> k & 1))
      continue;
    if (first < 0) {
      first = k;
      continue;
    }
    SIM_INVARIANT(w, k, 0, "mutual_exclusion",
                  "n%d (token %" PRIu32 ") and n%d (token %" PRIu32
                  ") both hold the lock by their own clocks",
                  first, ll(c, first)->my_token, k, ll(c, k)->my_token);
  }
}

/* The resource never accepts a token below one it accepted before. */
SF_ORACLE static void check_fenced_writes(void *ctx, sim_world *w) {
  cluster *c = ctx;
  ll_node *p = ll(c, 0);
  if (!p)
    return;
  if (c->inc != sim_node_incarnation(w, 0)) {
    c->inc = sim_node_incarnation(w, 0);
    c->seen = 0;
  }
  for (; c->seen < p->nacc; c->seen++) {
    uint32_t t = p->acc[c->seen];
    SIM_INVARIANT(w, 0, t >= c->max_accepted, "fenced_writes",
                  "the resource accepted a write with token %" PRIu32
                  " after one with token %" PRIu32,
                  t, c->max_accepted);
    c->max_accepted = t;
  }
}

/* States that matter, for the explorer and `simfuzz reach` (never fail):
 * a client that believes it holds the lock while its clock runs away from
 * true time (drift or a jump), a write of an earlier holder still out
 * after a later grant, and a restarted server in its grace period while a
 * client holds, with how far its clock runs ahead. */
SF_ORACLE static void note_states(void *ctx, sim_world *w) {
  cluster *c = ctx;
  if (!sf_sites_wanted(w))
    return; /* a sweep or a replay: nobody records the states */
  ll_node *srv = ll(c, 0);
  uint32_t held = holders(c, w);
  int stale_writer = -1, skewed = -1;
  uint64_t skew_ms = 0;
  for (int k = 1; k < c->n; k++) {
    /* a client whose write is still out although the server granted a
     * newer token: only the fence stands between that write and the
     * resource */
    ll_node *p = ll(c, k);
    if (stale_writer < 0 && srv && p && p->st == LL_WRITING && p->my_token < srv->token)
      stale_writer = k;
    if (!(held >> k & 1))
      continue;
    int64_t d = sim_clock_mono(w, k) - (int64_t)sim_now(w); /* drift */
    int64_t j = sim_clock(w, k) - (int64_t)sim_now(w);      /* offsets and jumps too */
    d = d < 0 ? -d : d;
    j = j < 0 ? -j : j;
    uint64_t ms = (uint64_t)(d > j ? d : j) / SIM_NS_PER_MS;
    if (ms > skew_ms || skewed < 0) {
      skew_ms = ms > skew_ms ? ms : skew_ms;
      skewed = k;
    }
  }
  /* each state is about one node, where the explorer aims its futures */
  SF_SOMETIMES_ON(w, stale_writer >= 0, stale_writer,
                  "an earlier holder still writing after a later grant");
  SF_SOMETIMES_ON(w, srv && srv->grace, 0, "server restarted in its grace period");
#ifndef SF_ZOO_NO_HINTS /* drift's trigger and wall_grace's */
  SF_SOMETIMES_ON(w, held && skew_ms >= 100, skewed, "lease held by a skewed clock");
  SF_MAXIMIZE_ON(w, "clock skew of a lease holder (ms)", skew_ms, skewed);
  SF_SOMETIMES_ON(w, srv && srv->grace && held, 0, "server in its grace while a client holds");
  /* how far the server's wall clock runs ahead of true time then: a
   * grace period timed by that clock ends early by as much */
  int64_t ahead = srv && srv->grace && held ? sim_clock(w, 0) - (int64_t)sim_now(w) : 0;
  SF_MAXIMIZE_ON(w, "server clock ahead in its grace while a client holds (ms)",
                 ahead > 0 ? (uint64_t)ahead / SIM_NS_PER_MS : 0, 0);
#else
  (void)skewed;
#endif
}

static const sf_check invariants[] = {
    {"states", note_states},
    {"mutual_exclusion", check_mutual_exclusion},
    {"fenced_writes", check_fenced_writes},
    {NULL, NULL},
};

/* Every client's queue is done. */
SF_ORACLE static int live(void *ctx, sim_world *w) {
  (void)w;
  cluster *c = ctx;
  for (int k = 1; k < c->n; k++) {
    ll_node *p = ll(c, k);
    if (!p || p->nq > 0)
      return 0;
  }
  return 1;
}

/* ---- reports and feedback ---- */

static void *create(int nodes) {
  return node_io_sim_cluster(sizeof(cluster), nodes);
}

/* Server: lock held or not, grace; client: its state. */
SF_ORACLE static uint32_t observe(void *ctx, sim_world *w, int i) {
  (void)w;
  ll_node *p = ll(ctx, i);
  if (!p)
    return 0;
  if (i == 0)
    return 8 + (p->holder >= 0) * 2 + (uint32_t)p->grace;
  return 16 + (uint32_t)p->st;
}

/* a restarted server's grace (1 s) plus every queued write (8 per client, each a lease at worst
 * when a grant was lost) */
SF_TARGET(.summary = "lease-based lock service with a fenced resource (clock drift matters)",
          .min_nodes = 3, .max_nodes = MAXN, .default_nodes = 3, .create = create, .destroy = free,
          .ops = &ops, .workload = workload, .invariants = invariants, .live = live,
          .liveness_ms = 30000, .describe = ll_describe, .classify = ll_classify,
          .observe = observe);
