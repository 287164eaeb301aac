/*
 * leaselock: a lease-based lock service guarding a fenced resource.
 *
 * Node 0 runs the lock server and the resource (a register); nodes 1..n-1
 * are clients. A client operation asks the client to write a value under
 * the lock: it sends ACQUIRE (resent every 100 ms with the same request id)
 * and the server grants a lease of LEASE ms on its own clock, with a new
 * fencing token (persisted before the grant). The client counts its lease
 * from when it first sent that request, on its monotonic clock, and only
 * half as long as the server: clocks may drift by up to 20 % each way
 * (0.5 / 0.8 < 1 / 1.2). If enough lease is left, it prepares the write
 * (WORK ms), sends WRITE(token, value), and releases the lock when the
 * write is acknowledged. The resource rejects a token lower than the
 * highest it has accepted (fencing), persisting that token before it
 * answers. A restarted server grants nothing for a full lease.
 *
 * Oracles (after every event): mutual exclusion (no two clients believe,
 * by their own clocks, that they hold a lease at the same moment) and
 * fenced writes (the resource never accepts a write whose token is below
 * one it accepted before). After heal: liveness (every client's operations
 * done).
 *
 * Planted bugs (see docs/bug-zoo.md):
 *   LEASELOCK_BUG_DRIFT      the client trusts its clock: it keeps the lease
 *       for the server's full term less a small allowance for latency.
 *   LEASELOCK_BUG_NO_FENCING the resource accepts any token: a client paused
 *       between its lease check and its write overwrites its successor.
 */
#include "../common/wire.h"
#include "simfuzz.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#ifndef SF_TARGET_NAME
#define SF_TARGET_NAME "leaselock"
#endif
#ifndef SF_TARGET_SYMBOL
#define SF_TARGET_SYMBOL sf_target_leaselock
#endif

enum { MAXN = 8, QUEUE = 8, MAX_ACCEPTED = 4096 };
enum { M_ACQUIRE = 1, M_GRANT, M_BUSY, M_RELEASE, M_WRITE, M_WACK };
enum { C_IDLE = 0, C_ACQUIRING, C_WORKING, C_WRITING };
enum { T_TICK = 1, T_WORK = 2, T_LEASE = 3, T_GRACE = 4 };
#define MS SIM_NS_PER_MS
#define LEASE_NS (1000 * MS)
#define TICK_NS (100 * MS)
#define WORK_NS (20 * MS)
#define MIN_LEFT_NS (100 * MS) /* lease left to start a write */
#ifdef LEASELOCK_BUG_DRIFT
/* BUG: "clocks tick at the same rate; allow 20 ms for the grant's trip" */
#define CLIENT_LEASE_NS (LEASE_NS - 20 * MS)
#else
#define CLIENT_LEASE_NS (LEASE_NS / 2)
#endif

typedef struct {
  /* server */
  uint32_t token;    /* last token granted (durable) */
  uint32_t accepted; /* highest token the resource accepted (durable) */
  int holder;        /* -1: free */
  uint32_t holder_token;
  int grace; /* after a restart: no grants for a lease */
  /* client */
  int st;
  uint32_t req;          /* current acquire request id */
  int64_t sent;          /* mono time of its first send */
  uint32_t my_token;     /* held token */
  int64_t expiry;        /* mono time the held lease ends */
  uint32_t queue[QUEUE]; /* values to write */
  int nq;
  /* resource journal for the oracle: tokens of accepted writes since boot */
  uint32_t acc[MAX_ACCEPTED];
  uint32_t nacc;
} lnode;

typedef struct {
  int n;
  uint32_t max_accepted; /* highest token any accepted write carried */
  uint32_t seen, inc;    /* journal entries consumed, server incarnation */
} cluster;

/* ---- server and resource (node 0) --------------------------------------- */

static int save(sim_world *w, lnode *p) {
  uint8_t b[16];
  wire_put32(b, p->token);
  wire_put32(b + 4, p->accepted);
  wire_put64(b + 8, wire_checksum(0, b, 8));
  if (sim_disk_write(w, 0, 0, b, sizeof b) != (int64_t)sizeof b || sim_disk_sync(w, 0) < 0) {
    sim_node_crash(w, 0); /* cannot trust its disk: recover from it */
    return -1;
  }
  return 0;
}

static void msg(sim_world *w, int from, int to, uint8_t type, uint32_t a, uint32_t b) {
  uint8_t m[9 + WIRE_SEAL];
  m[0] = type;
  wire_put32(m + 1, a);
  wire_put32(m + 5, b);
  sim_send(w, from, to, m, wire_seal(m, 9));
}

static void server_recv(sim_world *w, lnode *p, int from, uint8_t type, uint32_t a, uint32_t b) {
  switch (type) {
  case M_ACQUIRE:
    if (p->grace || p->holder >= 0) {
      msg(w, 0, from, M_BUSY, a, 0);
      return;
    }
    p->token++;
    if (save(w, p) < 0)
      return;
    p->holder = from;
    p->holder_token = p->token;
    sim_timer_start(w, 0, LEASE_NS, (uint64_t)p->token << 8 | T_LEASE);
    msg(w, 0, from, M_GRANT, a, p->token);
    return;
  case M_RELEASE:
    if (p->holder == from && p->holder_token == a)
      p->holder = -1;
    return;
  case M_WRITE:
#ifndef LEASELOCK_BUG_NO_FENCING
    if (a < p->accepted) {
      msg(w, 0, from, M_WACK, a, 0); /* fenced off: a newer holder wrote */
      return;
    }
#endif
    if (a > p->accepted) {
      p->accepted = a;
      if (save(w, p) < 0)
        return;
    }
    if (p->nacc < MAX_ACCEPTED)
      p->acc[p->nacc++] = a;
    (void)b; /* the register's value: what matters here is who wrote */
    msg(w, 0, from, M_WACK, a, 1);
    return;
  default: return;
  }
}

/* ---- clients -------------------------------------------------------------- */

static void acquire(sim_world *w, int node, lnode *p) {
  p->st = C_ACQUIRING;
  p->req++;
  p->sent = sim_clock_mono(w, node);
  msg(w, node, 0, M_ACQUIRE, p->req, 0);
}

static void next_op(sim_world *w, int node, lnode *p) {
  p->st = C_IDLE;
  if (p->nq > 0)
    acquire(w, node, p);
}

static void done_op(sim_world *w, int node, lnode *p) {
  memmove(p->queue, p->queue + 1, (size_t)(p->nq - 1) * sizeof p->queue[0]);
  p->nq--;
  next_op(w, node, p);
}

static void client_recv(sim_world *w, int node, lnode *p, uint8_t type, uint32_t a, uint32_t b) {
  switch (type) {
  case M_GRANT:
    if (p->st != C_ACQUIRING || a != p->req) {
      if (p->st == C_IDLE || p->st == C_ACQUIRING || b != p->my_token)
        msg(w, node, 0, M_RELEASE, b, 0); /* a grant it no longer waits for */
      return;                             /* (or a duplicate of the grant it holds) */
    }
    p->my_token = b;
    p->expiry = p->sent + (int64_t)CLIENT_LEASE_NS;
    if (sim_clock_mono(w, node) + (int64_t)MIN_LEFT_NS > p->expiry) {
      msg(w, node, 0, M_RELEASE, b, 0); /* too little left: try again */
      acquire(w, node, p);
      return;
    }
    p->st = C_WORKING; /* the lease is checked here; the write goes out after WORK */
    sim_timer_start(w, node, WORK_NS, T_WORK);
    return;
  case M_WACK:
    if (p->st == C_WRITING && a == p->my_token) {
      p->st = C_IDLE;
      msg(w, node, 0, M_RELEASE, a, 0);
      if (b)
        done_op(w, node, p);
      else
        next_op(w, node, p); /* fenced off: try again with a new lease */
    }
    return;
  default: return;
  }
}

static void client_tick(sim_world *w, int node, lnode *p) {
  int64_t now = sim_clock_mono(w, node);
  if (p->st == C_ACQUIRING) {
    msg(w, node, 0, M_ACQUIRE, p->req, 0); /* same request id: same lease start */
  } else if (p->st == C_WRITING) {
    if (now >= p->expiry) {
      next_op(w, node, p); /* lost the lease without an answer: start over */
    } else {
      msg(w, node, 0, M_WRITE, p->my_token, p->queue[0]);
    }
  }
}

/* ---- callbacks -------------------------------------------------------------- */

static void recv(void *ctx, sim_world *w, int node, int from, const void *data, size_t len) {
  (void)ctx;
  lnode *p = sim_node_data(w, node);
  const uint8_t *m = data;
  if (wire_unseal(m, len) != 9 || from < 0 || from >= sim_nodes(w))
    return; /* damaged in flight */
  if (node == 0)
    server_recv(w, p, from, m[0], wire_get32(m + 1), wire_get32(m + 5));
  else if (from == 0)
    client_recv(w, node, p, m[0], wire_get32(m + 1), wire_get32(m + 5));
}

static void timer(void *ctx, sim_world *w, int node, uint64_t tag) {
  (void)ctx;
  lnode *p = sim_node_data(w, node);
  switch (tag & 0xff) {
  case T_TICK:
    sim_timer_start(w, node, TICK_NS, T_TICK);
    client_tick(w, node, p);
    return;
  case T_WORK:
    if (p->st == C_WORKING) { /* BUG-prone spot: no second look at the lease */
      p->st = C_WRITING;
      msg(w, node, 0, M_WRITE, p->my_token, p->queue[0]);
    }
    return;
  case T_LEASE:
    if (p->holder >= 0 && p->holder_token == (uint32_t)(tag >> 8))
      p->holder = -1;
    return;
  case T_GRACE: p->grace = 0; return;
  default: return;
  }
}

static void boot(void *ctx, sim_world *w, int node, int restart) {
  (void)ctx;
  lnode *p = calloc(1, sizeof *p);
  if (!p)
    abort();
  sim_node_set_data(w, node, p);
  p->holder = -1;
  if (node == 0) {
    uint8_t b[16];
    int64_t r = -1;
    for (int attempt = 0; attempt < 3 && r < 0; attempt++)
      r = sim_disk_read(w, 0, 0, b, sizeof b);
    if (r < 0) {
      sim_node_crash(w, 0);
      return;
    }
    if (r == (int64_t)sizeof b && wire_get64(b + 8) == wire_checksum(0, b, 8)) {
      p->token = wire_get32(b);
      p->accepted = wire_get32(b + 4);
    }
    if (restart) { /* some client may still hold a lease it does not know of */
      p->grace = 1;
      sim_timer_start(w, 0, LEASE_NS, T_GRACE);
    }
    return;
  }
  sim_timer_start(w, node, TICK_NS, T_TICK); /* clients: resends */
}

static void teardown(void *ctx, sim_world *w, int node, sim_teardown_why why) {
  (void)ctx;
  (void)why;
  free(sim_node_data(w, node));
  sim_node_set_data(w, node, NULL);
}

static const sim_node_ops ops = {boot, recv, timer, NULL, teardown};

/* A client (node 1 + node % clients) is asked to write op.value under the
 * lock. */
static void workload(void *ctx, sim_world *w, const sf_op *op) {
  (void)ctx;
  int node = 1 + op->node % (sim_nodes(w) - 1);
  lnode *p = sim_node_data(w, node);
  if (!p || sim_node_paused(w, node) || p->nq >= QUEUE)
    return; /* refused */
  p->queue[p->nq++] = (uint32_t)op->value;
  if (p->st == C_IDLE)
    acquire(w, node, p);
}

/* ---- oracles ---------------------------------------------------------------- */

SF_ORACLE static int believes(sim_world *w, int k) {
  lnode *p = sim_node_up(w, k) ? sim_node_data(w, k) : NULL;
  return p && (p->st == C_WORKING || p->st == C_WRITING) && sim_clock_mono(w, k) < p->expiry;
}

/* No two clients believe they hold the lock at the same moment. */
SF_ORACLE static void check_mutual_exclusion(void *ctx, sim_world *w) {
  cluster *c = ctx;
  int first = -1;
  for (int k = 1; k < c->n; k++) {
    if (!believes(w, k))
      continue;
    if (first < 0) {
      first = k;
      continue;
    }
    lnode *a = sim_node_data(w, first), *b = sim_node_data(w, k);
    SIM_INVARIANT(w, k, 0, "mutual_exclusion",
                  "n%d (token %" PRIu32 ") and n%d (token %" PRIu32
                  ") both hold the lock by their own clocks",
                  first, a->my_token, k, b->my_token);
  }
}

/* The resource never accepts a token below one it accepted before. */
SF_ORACLE static void check_fenced_writes(void *ctx, sim_world *w) {
  cluster *c = ctx;
  lnode *p = sim_node_up(w, 0) ? sim_node_data(w, 0) : NULL;
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

static const sf_check invariants[] = {
    {"mutual_exclusion", check_mutual_exclusion},
    {"fenced_writes", check_fenced_writes},
    {NULL, NULL},
};

/* Every client's queue is done. */
SF_ORACLE static int live(void *ctx, sim_world *w) {
  cluster *c = ctx;
  for (int k = 1; k < c->n; k++) {
    lnode *p = sim_node_up(w, k) ? sim_node_data(w, k) : NULL;
    if (!p || p->nq > 0)
      return 0;
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
  static const char *const names[] = {
      "?", "ACQUIRE #", "GRANT #", "BUSY #", "RELEASE token=", "WRITE token=", "WRITE-ACK token="};
  const uint8_t *m = data;
  (void)ctx;
  if (have < 9 || len != 9 + WIRE_SEAL || m[0] < M_ACQUIRE || m[0] > M_WACK)
    return -1;
  if (m[0] == M_GRANT)
    return snprintf(buf, cap, "GRANT #%" PRIu32 " token=%" PRIu32, wire_get32(m + 1),
                    wire_get32(m + 5));
  if (m[0] == M_WACK)
    return snprintf(buf, cap, "WRITE-ACK token=%" PRIu32 " %s", wire_get32(m + 1),
                    wire_get32(m + 5) ? "accepted" : "fenced");
  return snprintf(buf, cap, "%s%" PRIu32, names[m[0]], wire_get32(m + 1));
}

static uint32_t classify(void *ctx, const void *data, size_t len) {
  (void)ctx;
  return len ? ((const uint8_t *)data)[0] & 7u : 0;
}

/* Server: lock held or not, grace; client: its state. */
SF_ORACLE static uint32_t observe(void *ctx, sim_world *w, int node) {
  (void)ctx;
  lnode *p = sim_node_data(w, node);
  if (!p)
    return 0;
  if (node == 0)
    return 8 + (p->holder >= 0) * 2 + (uint32_t)p->grace;
  return 16 + (uint32_t)p->st;
}

const sf_target SF_TARGET_SYMBOL = {
    .name = SF_TARGET_NAME,
    .summary = "lease-based lock service with a fenced resource (clock drift matters)",
    .min_nodes = 3,
    .max_nodes = MAXN,
    .default_nodes = 3,
    .create = create,
    .destroy = free,
    .ops = &ops,
    .workload = workload,
    .invariants = invariants,
    .live = live,
    /* a restarted server's grace (1 s) plus every queued write (8 per
     * client, each a lease at worst when a grant was lost) */
    .liveness_ms = 30000,
    .describe = describe,
    .classify = classify,
    .observe = observe,
};
