/*
 * kvstore_adapter: the protocol of examples/programs/kvstore/kvstore.c
 * written as a simfuzz target (callbacks on the simulator's streams, timers
 * and disk) instead of a program: the yardstick of the program's cost
 * (bench/program_vs_adapter.sh).
 *
 * The same protocol: node 0 is the primary and the others backups; the
 * primary logs a PUT, syncs, replicates it (REP, ACK), commits writes in
 * order once one backup and every backup that may hold a read lease logged
 * it, then answers and tells the backups (COMMIT); a new link first carries
 * the committed state (RESET, SET..., UPTO, HAVE); backups ask for read
 * leases every RETRY_MS (LEASE?, GRANT) and answer reads while they hold
 * one; a restarted primary answers nothing for LEASE_P ms. What an adapter
 * does differently: binary messages, one per stream send; the log as
 * records of simfuzz_record.h, and the compaction's atomic rename as a
 * snapshot written to the slot its generation names (the recovered state
 * is compacted at every boot, where the program truncates its log's torn
 * tail); the scenario's client operations done in process by two clients
 * as the program's two client nodes do them (one at a time; a read at the
 * node the operation names, answered at once or left pending; a write at
 * the primary, waited for up to a second and then left pending).
 *
 * Oracles as the program target's: the history is linearizable at the end
 * (linearize.h, the key-value model); liveness after the heal is a read
 * answered at node 0 and at node 1 (tried every 100 ms), as the program's
 * client nodes probe.
 */
#include <simfuzz/linearize.h>
#include <simfuzz/simfuzz.h>
#include <simfuzz/simfuzz_record.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAXN 5
#define KEYS 64
#define CLIENT_KEYS 4   /* the keys the workload uses (kvclient.c) */
#define CLIENTS 2       /* the program target's client nodes */
#define CLIENT_QUEUE 32 /* operations a client has not taken yet, then dropped */
#define CLIENT_WAIT_MS 1000
#define PENDING 64
#define RETRY_MS 200
#define TICK_MS 50 /* the program's epoll_wait timeout */
#define COMPACT 6
#define LEASE_P 1000
#define LEASE_B 700
#define WAL_MAX 4096 /* log records, then the disk is full */
#define MS (1000 * 1000ull)

enum { M_RESET = 1, M_SET, M_UPTO, M_HAVE, M_REP, M_ACK, M_COMMIT, M_LEASE_Q, M_GRANT };

typedef struct kmsg {
  uint8_t type, key, pad[6];
  uint64_t seq, value;
} kmsg;

typedef struct wal_rec {
  uint32_t gen, key;
  uint64_t seq, value;
} wal_rec;

typedef struct snap_rec {
  uint32_t gen, pad;
  uint64_t next_seq;
  uint64_t val[KEYS];
} snap_rec;

typedef struct pending {
  int used;
  uint64_t seq;
  size_t hid; /* its history entry */
  unsigned key;
  uint64_t value;
  int64_t sent;
  unsigned acked_by;
} pending;

typedef struct kvnode {
  int id, n, dead;
  sf_records snaps, wal;
  uint32_t gen;
  uint64_t wal_n;
  uint64_t val[KEYS], cval[KEYS], dirty[KEYS];
  uint64_t committed, next_seq, acknowledged;
  int syncing;
  /* the primary */
  pending pend[PENDING];
  sim_conn link[MAXN];
  int link_state[MAXN]; /* 0 none, 1 connecting, 2 up */
  int64_t lease_until[MAXN];
  uint64_t have[MAXN];
  int synced[MAXN];
  int64_t quiet_until, last_retry;
  /* a backup */
  sim_conn primary;
  int has_primary;
  uint64_t asked;
  int64_t asked_at, lease_end, last_ask;
} kvnode;

/* A client, as the program's client nodes (kvclient.c): the scenario's
 * operations queued, done one at a time; a PUT waits for its answer up to
 * CLIENT_WAIT_MS, then stays pending and the client goes on. */
typedef struct client {
  struct cluster *c;
  sf_op q[CLIENT_QUEUE];
  uint32_t head, len;
  int busy;       /* a PUT waits for its answer */
  size_t hid;     /* its history entry */
  uint64_t until; /* when the client gives up on it */
} client;

typedef struct cluster {
  int n;
  sim_world *w;
  sf_history hist;
  client cl[CLIENTS];
  int probing;
  int probe_done[2];
  int64_t probe_at[2];
} cluster;

static kvnode *kv(sim_world *w, int i) {
  kvnode *x = sim_node_data(w, i);
  return x && !x->dead ? x : NULL;
}

static int64_t now_ms(sim_world *w, int i) {
  return sim_clock_mono(w, i) / (int64_t)MS;
}

static void crash_cb(sim_world *w, void *arg) {
  sim_node_crash(w, (int)(uintptr_t)arg);
}

/* The disk failed the node: it stops now and crashes (the program dies). */
static void die(sim_world *w, kvnode *x) {
  if (!x->dead)
    sim_at(w, sim_now(w), crash_cb, (void *)(uintptr_t)x->id);
  x->dead = 1;
}

/* ---- the disk ---------------------------------------------------------- */

static void wal_append(sim_world *w, kvnode *x, uint64_t seq, unsigned k, uint64_t v, int sync) {
  wal_rec r = {x->gen, k, seq, v};
  if (x->wal_n >= WAL_MAX || sf_record_write(&x->wal, w, x->id, x->wal_n, &r, sizeof r, sync) != 0)
    die(w, x);
  x->wal_n++;
}

static void wal_sync(sim_world *w, kvnode *x) {
  if (sim_disk_sync(w, x->id) != 0)
    die(w, x);
}

/* Every key into the snapshot slot of the next generation, then an empty
 * log (its records of older generations read as stale). */
static void compact(sim_world *w, kvnode *x) {
  snap_rec s;
  memset(&s, 0, sizeof s);
  s.gen = x->gen + 1;
  s.next_seq = x->next_seq;
  memcpy(s.val, x->val, sizeof s.val);
  if (sf_record_write(&x->snaps, w, x->id, s.gen & 1, &s, sizeof s, 1) != 0) {
    die(w, x);
    return;
  }
  x->gen = s.gen;
  x->wal_n = 0;
}

/* The newest whole snapshot, then the log records of its generation. */
static void load(sim_world *w, kvnode *x) {
  snap_rec s, best;
  memset(&best, 0, sizeof best);
  for (uint64_t slot = 0; slot < 2; slot++) {
    int64_t r = sf_record_read(&x->snaps, w, x->id, slot, &s, sizeof s);
    if (r < 0) {
      die(w, x);
      return;
    }
    if (r == (int64_t)sizeof s && s.gen > best.gen)
      best = s;
  }
  x->gen = best.gen;
  x->next_seq = best.next_seq;
  memcpy(x->val, best.val, sizeof x->val);
  for (x->wal_n = 0; x->wal_n < WAL_MAX; x->wal_n++) {
    wal_rec r;
    int64_t got = sf_record_read(&x->wal, w, x->id, x->wal_n, &r, sizeof r);
    if (got < 0) {
      die(w, x);
      return;
    }
    if (got != (int64_t)sizeof r || r.gen != x->gen || r.key >= KEYS)
      break;
    x->val[r.key] = r.value;
    if (r.seq > x->next_seq)
      x->next_seq = r.seq;
  }
}

/* ---- messages ---------------------------------------------------------- */

static void say(sim_world *w, kvnode *x, sim_conn c, int type, uint64_t seq, unsigned key,
                uint64_t value) {
  kmsg m;
  memset(&m, 0, sizeof m);
  m.type = (uint8_t)type;
  m.key = (uint8_t)key;
  m.seq = seq;
  m.value = value;
  sim_conn_send(w, x->id, c, &m, sizeof m); /* a broken link: the peer reconnects */
}

static void send_state(sim_world *w, kvnode *x, int k) {
  sim_conn c = x->link[k];
  say(w, x, c, M_RESET, 0, 0, 0);
  for (unsigned key = 0; key < KEYS; key++)
    if (x->cval[key])
      say(w, x, c, M_SET, 0, key, x->cval[key]);
  say(w, x, c, M_UPTO, x->acknowledged, 0, 0);
}

static void to_backups(sim_world *w, kvnode *x, int type, uint64_t seq, unsigned key,
                       uint64_t value) {
  for (int k = 1; k < x->n; k++)
    if (x->link_state[k] == 2)
      say(w, x, x->link[k], type, seq, key, value);
}

static void connect_backups(sim_world *w, kvnode *x) {
  for (int k = 1; k < x->n; k++) {
    if (x->link_state[k])
      continue;
    int64_t c = sim_connect(w, x->id, k);
    if (c < 0)
      continue;
    x->link[k] = (sim_conn)c;
    x->link_state[k] = 1;
  }
}

/* ---- the primary --------------------------------------------------------- */

static pending *oldest(kvnode *x) {
  pending *o = NULL;
  for (int i = 0; i < PENDING; i++)
    if (x->pend[i].used && (!o || x->pend[i].seq < o->seq))
      o = &x->pend[i];
  return o;
}

static void answered(cluster *c, sim_world *w, size_t hid);

static void try_answer(sim_world *w, kvnode *x, cluster *c) {
  int64_t now = now_ms(w, x->id);
  for (pending *p; now >= x->quiet_until && (p = oldest(x)) != NULL;) {
    if (!p->acked_by)
      return;
    for (int k = 1; k < x->n; k++)
      if (x->lease_until[k] > now && !(p->acked_by & 1u << k))
        return;
    x->acknowledged = p->seq;
    x->cval[p->key] = p->value;
    to_backups(w, x, M_COMMIT, p->seq, p->key, p->value);
    p->used = 0;
    answered(c, w, p->hid);
  }
  if (!oldest(x) && x->wal_n >= COMPACT)
    compact(w, x);
}

static void retry(sim_world *w, kvnode *x, cluster *c) {
  int64_t now = now_ms(w, x->id);
  try_answer(w, x, c);
  if (now - x->last_retry < RETRY_MS)
    return;
  x->last_retry = now;
  connect_backups(w, x);
  for (int i = 0; i < PENDING; i++)
    if (x->pend[i].used && now - x->pend[i].sent >= RETRY_MS) {
      x->pend[i].sent = now;
      to_backups(w, x, M_REP, x->pend[i].seq, x->pend[i].key, x->pend[i].value);
    }
}

/* A client's PUT: logged, synced and replicated; answered at its commit. */
static int put(sim_world *w, kvnode *x, unsigned k, uint64_t v, size_t hid) {
  pending *p = NULL;
  for (int i = 0; i < PENDING && !p; i++)
    if (!x->pend[i].used)
      p = &x->pend[i];
  if (!p)
    return 0; /* BUSY: it stays pending in the history */
  p->used = 1;
  p->seq = ++x->next_seq;
  p->hid = hid;
  p->key = k;
  p->value = v;
  p->sent = now_ms(w, x->id);
  p->acked_by = 0;
  wal_append(w, x, p->seq, k, v, 1);
  if (x->dead)
    return 1; /* the client waits in vain */
  x->val[k] = v;
  to_backups(w, x, M_REP, p->seq, k, v);
  return 1;
}

static void logged(sim_world *w, kvnode *x, cluster *c, int k, uint64_t seq, int all) {
  if (k <= 0 || k >= x->n)
    return;
  if (all) {
    x->have[k] = seq;
    x->synced[k] = 1;
    return;
  }
  if (x->synced[k] && seq == x->have[k] + 1)
    x->have[k] = seq;
  for (int i = 0; i < PENDING; i++)
    if (x->pend[i].used && x->pend[i].seq == seq)
      x->pend[i].acked_by |= 1u << k;
  try_answer(w, x, c);
}

static void lease_asked(sim_world *w, kvnode *x, int k, uint64_t n) {
  if (k <= 0 || k >= x->n)
    return;
  if (!x->synced[k] || x->have[k] < x->acknowledged) {
    if (x->synced[k]) {
      x->synced[k] = 0;
      send_state(w, x, k);
    }
    return;
  }
  x->lease_until[k] = now_ms(w, x->id) + LEASE_P;
  say(w, x, x->link[k], M_GRANT, n, 0, 0);
}

/* ---- a backup -------------------------------------------------------------- */

static void ask_lease(sim_world *w, kvnode *x) {
  int64_t now = now_ms(w, x->id);
  if (!x->has_primary || now - x->last_ask < RETRY_MS)
    return;
  x->last_ask = now;
  x->asked_at = now;
  say(w, x, x->primary, M_LEASE_Q, ++x->asked, 0, 0);
}

static int can_read(sim_world *w, kvnode *x, unsigned k) {
  if (x->id == 0)
    return now_ms(w, 0) >= x->quiet_until;
  return now_ms(w, x->id) < x->lease_end && !x->dirty[k] && !x->syncing;
}

/* A message for a backup from the primary on stream h. */
static void at_backup(sim_world *w, kvnode *x, sim_conn h, const kmsg *m) {
  unsigned k = m->key;
  if (m->type != M_GRANT) {
    x->primary = h;
    x->has_primary = 1;
  }
  switch (m->type) {
  case M_REP:
    wal_append(w, x, m->seq, k, m->value, 1);
    if (x->dead)
      return; /* no ACK for what it could not log */
    x->val[k] = m->value;
    if (m->seq > x->committed)
      x->dirty[k] = m->seq;
    say(w, x, h, M_ACK, m->seq, 0, 0);
    break;
  case M_COMMIT:
    x->cval[k] = m->value;
    if (m->seq > x->committed)
      x->committed = m->seq;
    if (x->dirty[k] <= m->seq)
      x->dirty[k] = 0;
    break;
  case M_RESET:
    memset(x->cval, 0, sizeof x->cval);
    memset(x->dirty, 0, sizeof x->dirty);
    x->syncing = 1;
    break;
  case M_SET:
    wal_append(w, x, 0, k, m->value, 0);
    x->val[k] = x->cval[k] = m->value;
    break;
  case M_UPTO:
    wal_sync(w, x);
    if (x->dead)
      return;
    if (m->seq > x->next_seq)
      x->next_seq = m->seq;
    x->committed = m->seq;
    x->syncing = 0;
    say(w, x, h, M_HAVE, m->seq, 0, 0);
    if (x->wal_n >= 8 * COMPACT)
      compact(w, x);
    break;
  case M_GRANT:
    if (m->seq == x->asked)
      x->lease_end = x->asked_at + LEASE_B;
    break;
  default: break;
  }
}

/* ---- nodes ----------------------------------------------------------------- */

static void tick(sim_world *w, kvnode *x, cluster *c) {
  if (x->dead)
    return;
  if (x->id == 0)
    retry(w, x, c);
  else
    ask_lease(w, x);
}

static void boot(void *ctx, sim_world *w, int i, int restart) {
  cluster *c = ctx;
  c->w = w;
  kvnode *x = sim_node_alloc(w, i, sizeof *x);
  x->id = i;
  x->n = c->n;
  if (sf_records_init(&x->snaps, w, i, 0, sizeof(snap_rec)) != 0 ||
      sf_records_init(&x->wal, w, i, sf_records_end(&x->snaps, 2), sizeof(wal_rec)) != 0)
    abort(); /* the geometry is fixed: a build error */
  load(w, x);
  if (x->dead)
    return;
  if (i == 0) {
    memcpy(x->cval, x->val, sizeof x->cval);
    x->acknowledged = x->next_seq;
  }
  compact(w, x); /* a torn tail and stale records go */
  x->last_retry = now_ms(w, i) - RETRY_MS;
  if (restart && i == 0)
    x->quiet_until = now_ms(w, i) + LEASE_P;
  sim_timer_start(w, i, TICK_MS * MS, 0);
  tick(w, x, c);
}

static void timer(void *ctx, sim_world *w, int i, uint64_t tag) {
  (void)tag;
  kvnode *x = kv(w, i);
  if (!x)
    return;
  sim_timer_start(w, i, TICK_MS * MS, 0);
  tick(w, x, ctx);
}

static void conn(void *ctx, sim_world *w, int i, sim_conn h, sim_conn_event ev, const void *data,
                 size_t len) {
  cluster *c = ctx;
  kvnode *x = kv(w, i);
  if (!x)
    return;
  int k = 0; /* the primary: which backup's link */
  while (i == 0 && k < x->n && !(x->link_state[k] && x->link[k] == h))
    k++;
  if (ev == SIM_CONN_CONNECTED && i == 0 && k < x->n) {
    x->link_state[k] = 2;
    send_state(w, x, k);
  } else if (ev != SIM_CONN_DATA && ev != SIM_CONN_ACCEPTED && ev != SIM_CONN_CONNECTED) {
    if (i == 0 && k < x->n) /* the link broke */
      x->link_state[k] = 0, x->synced[k] = 0;
    if (i != 0 && x->has_primary && x->primary == h)
      x->has_primary = 0;
  } else if (ev == SIM_CONN_DATA && len == sizeof(kmsg)) {
    kmsg m;
    memcpy(&m, data, sizeof m);
    if (m.key >= KEYS)
      return;
    if (i != 0)
      at_backup(w, x, h, &m);
    else if (k < x->n && m.type == M_ACK)
      logged(w, x, c, k, m.seq, 0);
    else if (k < x->n && m.type == M_HAVE)
      logged(w, x, c, k, m.seq, 1);
    else if (k < x->n && m.type == M_LEASE_Q)
      lease_asked(w, x, k, m.seq);
  }
  tick(w, x, c);
}

static void teardown(void *ctx, sim_world *w, int i, sim_teardown_why why) {
  (void)ctx, (void)why;
  sim_node_free(w, i);
}

static const sim_node_ops ops = {boot, NULL, timer, conn, teardown};

/* ---- the client -------------------------------------------------------------- */

/* A read at node i: answered now, or pending for good (down, no lease). */
static int get(cluster *c, sim_world *w, int i, unsigned key, uint32_t who) {
  size_t hid = sf_history_invoke(&c->hist, who, SF_KV_GET, key, 0, 0, sim_now(w));
  kvnode *x = kv(w, i);
  if (!x || !can_read(w, x, key))
    return 0;
  sf_history_complete(&c->hist, hid, x->cval[key], sim_now(w));
  return 1;
}

static void client_next(cluster *c, sim_world *w, client *cl);

static void client_timeout(sim_world *w, void *arg) {
  client *cl = arg;
  if (cl->busy && sim_now(w) >= cl->until) { /* no answer: it stays pending */
    cl->busy = 0;
    client_next(cl->c, w, cl);
  }
}

static void client_go_on(sim_world *w, void *arg) {
  client *cl = arg;
  client_next(cl->c, w, cl);
}

/* A PUT's answer (its commit): recorded if its client still waits. */
static void answered(cluster *c, sim_world *w, size_t hid) {
  for (int k = 0; k < CLIENTS; k++) {
    client *cl = &c->cl[k];
    if (cl->busy && cl->hid == hid) {
      sf_history_complete(&c->hist, hid, 0, sim_now(w));
      cl->busy = 0;
      sim_at(w, sim_now(w), client_go_on, cl); /* after the node's event */
      return;
    }
  }
}

/* The client's next operations, until one waits: a GET at the node the
 * scenario names, answered or not at once; a PUT at the primary. */
static void client_next(cluster *c, sim_world *w, client *cl) {
  while (!cl->busy && cl->len) {
    sf_op op = cl->q[cl->head];
    cl->head = (cl->head + 1) % CLIENT_QUEUE;
    cl->len--;
    uint32_t who = (uint32_t)(cl - c->cl);
    unsigned key = (unsigned)(op.key % CLIENT_KEYS);
    if (op.op & 1) {
      get(c, w, op.node, key, who);
      continue;
    }
    uint64_t v = 100000u + op.seq % 800000u;
    size_t hid = sf_history_invoke(&c->hist, who, SF_KV_PUT, key, v, 0, sim_now(w));
    kvnode *p = kv(w, 0);
    if (!p || !put(w, p, key, v, hid))
      continue; /* refused or BUSY at once: pending, and on to the next */
    cl->busy = 1;
    cl->hid = hid;
    cl->until = sim_now(w) + CLIENT_WAIT_MS * MS;
    sim_at(w, cl->until, client_timeout, cl);
  }
}

static void workload(void *ctx, sim_world *w, const sf_op *op) {
  cluster *c = ctx;
  client *cl = &c->cl[op->node % CLIENTS];
  if (cl->len == CLIENT_QUEUE)
    return;
  cl->q[(cl->head + cl->len++) % CLIENT_QUEUE] = *op;
  client_next(c, w, cl);
}

/* After the heal: a read answered at node 0 and at node 1, each tried
 * every 100 ms until it is. */
SF_ORACLE static int live(void *ctx, sim_world *w) {
  cluster *c = ctx;
  int64_t now = (int64_t)sim_now(w);
  c->probing = 1;
  for (int j = 0; j < 2; j++)
    if (!c->probe_done[j] && now - c->probe_at[j] >= 100 * (int64_t)MS) {
      c->probe_at[j] = now;
      c->probe_done[j] = get(c, w, j % c->n, 0, (uint32_t)j);
    }
  return c->probe_done[0] && c->probe_done[1];
}

SF_ORACLE static void check_linearizable(void *ctx, sim_world *w) {
  cluster *c = ctx;
  sf_lin_report rep;
  sf_lin_result r = sf_history_check(&c->hist, &sf_kv_model, NULL, &rep);
  SIM_INVARIANT(w, -1, r != SF_LIN_VIOLATION, "linearizable", "%s", rep.message);
}

static const sf_check end_checks[] = {{"linearizable", check_linearizable}, {NULL, NULL}};

static void *create(int nodes) {
  cluster *c = calloc(1, sizeof *c);
  if (c) {
    c->n = nodes;
    c->probe_at[0] = c->probe_at[1] = -(int64_t)SIM_NS_PER_S;
    for (int k = 0; k < CLIENTS; k++)
      c->cl[k].c = c;
  }
  return c;
}

static void destroy(void *ctx) {
  cluster *c = ctx;
  sf_history_free(&c->hist);
  free(c);
}

SF_TARGET(.summary = "the kvstore program's protocol as an adapter target (the yardstick)",
          .min_nodes = 3, .max_nodes = 3, .default_nodes = 3, .create = create, .destroy = destroy,
          .ops = &ops, .workload = workload, .end_checks = end_checks, .live = live);
