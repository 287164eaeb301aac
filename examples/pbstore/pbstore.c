/*
 * pbstore: primary-backup log replication over stream connections.
 *
 * Node 0 is the primary; every other node is a backup. A client operation
 * appends a value to the primary's log. The primary writes the entry to its
 * disk and syncs it; only then is the entry "durable" and sent to the
 * backups, each over its own stream connection, with at most WINDOW entries
 * unacknowledged per backup. A backup writes what it receives at the index
 * the primary gives, syncs, and acknowledges with its log length.
 *
 * After every (re)connection the backup first sends a hello (an ACK with its
 * length) and the primary resumes from there. Disk records carry a checksum;
 * on boot a node loads records up to the first bad one.
 *
 * Invariants: every backup's log is a prefix of the primary's durable
 * history (checked after every event); after heal, liveness: every backup
 * catches up with the primary.
 *
 * Planted bug (PBSTORE_BUG_RESET_SKIP, target pbstore_bug_reset_skip): when
 * a connection is reset while the backup's window has been full (no ack
 * progress) for over 500 ms, the primary assumes the backup had buffered
 * the window, counts it as delivered and, on reconnect, resumes after it
 * instead of waiting for the hello. The entries lost with the reset leave a
 * hole in the backup's log. It needs a partition (or a pause) long enough
 * to fill the window and stall it, then a reset before the heal: in that
 * order.
 */
#include "../common/wire.h"
#include "simfuzz.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#ifndef SF_TARGET_NAME
#define SF_TARGET_NAME "pbstore"
#endif
#ifndef SF_TARGET_SYMBOL
#define SF_TARGET_SYMBOL sf_target_pbstore
#endif

/* A record is 16 bytes but gets a 512-byte sector of its own: a crash or a
 * failed sync may leave the sector being written corrupted, and that must
 * never damage an older, durable record sharing the sector. */
enum { MAX_LOG = 256, WINDOW = 3, REC = 16, SLOT = 512 };
enum { MSG_ENTRY = 1, MSG_ACK = 2 };
enum { TICK = 1 };
#define TICK_NS (50 * SIM_NS_PER_MS)

typedef struct {
  sim_conn conn;      /* primary: connection to this backup, 0 if none */
  int hello;          /* primary: the backup's hello arrived on conn */
  int skip_hello;     /* primary (bug): resume without waiting for a hello */
  uint32_t next;      /* primary: next index to send */
  uint32_t acked;     /* primary: backup's acknowledged length */
  int64_t full_since; /* primary: local clock when the window filled, or -1 */
} peer_t;

typedef struct {
  uint32_t len;     /* entries in log */
  uint32_t durable; /* primary: entries synced (and so sendable) */
  uint64_t log[MAX_LOG];
  peer_t peer[SIM_MAX_NODES];
} pnode;

typedef struct {
  int n;
  uint64_t hist[MAX_LOG]; /* the primary's durable history */
  uint32_t hist_len;
  uint32_t check_from[SIM_MAX_NODES]; /* first index a backup changed */
} cluster;

/* ---- encoding ---- */

static uint64_t checksum(uint32_t idx, uint64_t v) {
  uint64_t x = v ^ ((uint64_t)idx << 40) ^ 0x5bd1e9955bd1e995ull;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  return x ^ (x >> 29);
}

/* ---- disk ---- */

static int store(sim_world *w, int node, uint32_t idx, uint64_t v) {
  uint8_t rec[REC];
  wire_put64(rec, v);
  wire_put64(rec + 8, checksum(idx, v));
  if (sim_disk_write(w, node, (uint64_t)idx * SLOT, rec, REC) != REC)
    return -1;
  return sim_disk_sync(w, node);
}

/* An I/O error the node cannot trust its way around (a failed sync may have
 * lost data that the cache still shows): crash, and recover from the durable
 * image on restart. The caller must return at once: the state is freed. */
static void panic(sim_world *w, int node) {
  sim_node_crash(w, node);
}

/* Load records up to the first missing or damaged one. A read error is
 * retried; if it persists, panic rather than serve a truncated log.
 * Returns -1 after a panic. */
static int load(sim_world *w, int node, pnode *p) {
  uint8_t rec[REC];
  p->len = 0;
  while (p->len < MAX_LOG) {
    int64_t r = -1;
    for (int attempt = 0; attempt < 3 && r < 0; attempt++)
      r = sim_disk_read(w, node, (uint64_t)p->len * SLOT, rec, REC);
    if (r < 0) {
      panic(w, node);
      return -1;
    }
    if (r != REC || wire_get64(rec + 8) != checksum(p->len, wire_get64(rec)) ||
        wire_get64(rec) == 0)
      return 0;
    p->log[p->len++] = wire_get64(rec);
  }
  return 0;
}

/* ---- primary ---- */

static int send_entry(sim_world *w, pnode *p, int b) {
  peer_t *pe = &p->peer[b];
  uint8_t m[13];
  m[0] = MSG_ENTRY;
  wire_put32(m + 1, pe->next);
  wire_put64(m + 5, p->log[pe->next]);
  if (sim_conn_send(w, 0, pe->conn, m, sizeof m) != 0)
    return -1; /* not connected (yet) or out of buffers: retry on the next ack */
  pe->next++;
  return 0;
}

static void pump(sim_world *w, pnode *p, int b) {
  peer_t *pe = &p->peer[b];
  if (!pe->conn || !pe->hello)
    return;
  while (pe->next < p->durable && pe->next - pe->acked < WINDOW)
    if (send_entry(w, p, b) < 0)
      break;
  if (pe->next - pe->acked == WINDOW && pe->full_since < 0)
    pe->full_since = sim_clock(w, 0);
}

/* Sync the primary's log and publish the new entries; -1 after a panic. */
static int make_durable(cluster *c, pnode *p, sim_world *w) {
  if (sim_disk_sync(w, 0) < 0) {
    panic(w, 0);
    return -1;
  }
  for (uint32_t i = p->durable; i < p->len; i++) {
    c->hist[i] = p->log[i];
    if (i + 1 > c->hist_len)
      c->hist_len = i + 1;
  }
  p->durable = p->len;
  return 0;
}

static void primary_tick(sim_world *w, pnode *p) {
  for (int b = 1; b < sim_nodes(w); b++) {
    if (!p->peer[b].conn) {
      int64_t h = sim_connect(w, 0, b);
      if (h > 0) {
        p->peer[b].conn = (sim_conn)h;
        p->peer[b].hello = 0;
      }
    }
  }
  sim_timer_start(w, 0, TICK_NS, TICK);
}

static int peer_of(const pnode *p, int n, sim_conn h) {
  for (int b = 1; b < n; b++)
    if (p->peer[b].conn == h)
      return b;
  return -1;
}

static void primary_conn(sim_world *w, pnode *p, sim_conn h, sim_conn_event ev, const uint8_t *d,
                         size_t len) {
  int b = peer_of(p, sim_nodes(w), h);
  if (b < 0)
    return;
  peer_t *pe = &p->peer[b];
  switch (ev) {
  case SIM_CONN_CONNECTED:
    if (pe->skip_hello) { /* only ever set by the planted bug */
      pe->skip_hello = 0;
      pe->hello = 1;
      pump(w, p, b);
    }
    break;
  case SIM_CONN_DATA:
    if (len == 5 && d[0] == MSG_ACK) {
      uint32_t l = wire_get32(d + 1);
      if (!pe->hello) { /* the backup's hello: resume from its length */
        pe->hello = 1;
        pe->acked = l;
        pe->next = l;
      } else if (l > pe->acked) {
        pe->acked = l;
        pe->full_since = -1; /* progress: the window is open again */
      }
      pump(w, p, b);
    }
    break;
  case SIM_CONN_RESET:
#ifdef PBSTORE_BUG_RESET_SKIP
    /* BUG: "a window that stayed full for long must be sitting in the
     * backup's buffer": count it as delivered and resume
     * after it without waiting for the hello. */
    if (pe->hello && pe->next - pe->acked == WINDOW && pe->full_since >= 0 &&
        sim_clock(w, 0) - pe->full_since > 500 * (int64_t)SIM_NS_PER_MS) {
      pe->acked = pe->next;
      pe->skip_hello = 1;
    }
#endif
    /* fall through */
  default: /* closed, timeout, refused: reconnect on the next tick */
    sim_conn_close(w, 0, h);
    pe->conn = 0;
    pe->hello = 0;
    pe->full_since = -1;
    break;
  }
}

/* ---- backup ---- */

static void backup_conn(cluster *c, sim_world *w, int node, pnode *p, sim_conn h, sim_conn_event ev,
                        const uint8_t *d, size_t len) {
  uint8_t ack[5];
  ack[0] = MSG_ACK;
  switch (ev) {
  case SIM_CONN_ACCEPTED: /* hello: tell the primary where to resume */
    wire_put32(ack + 1, p->len);
    sim_conn_send(w, node, h, ack, sizeof ack);
    break;
  case SIM_CONN_DATA:
    if (len == 13 && d[0] == MSG_ENTRY) {
      uint32_t i = wire_get32(d + 1);
      uint64_t v = wire_get64(d + 5);
      if (i >= MAX_LOG || v == 0)
        break;
      /* the backup trusts the index the primary gives */
      if (store(w, node, i, v) < 0) {
        panic(w, node); /* cannot trust its disk: recover from it on restart */
        return;
      }
      p->log[i] = v;
      if (i + 1 > p->len)
        p->len = i + 1;
      if (i < c->check_from[node])
        c->check_from[node] = i;
      wire_put32(ack + 1, p->len);
      sim_conn_send(w, node, h, ack, sizeof ack);
    }
    break;
  case SIM_CONN_CLOSED: sim_conn_close(w, node, h); break;
  default: break;
  }
}

/* ---- callbacks ---- */

static void boot(void *ctx, sim_world *w, int node, int restart) {
  cluster *c = ctx;
  (void)restart;
  pnode *p = calloc(1, sizeof *p);
  if (!p)
    abort();
  sim_node_set_data(w, node, p);
  for (int b = 0; b < SIM_MAX_NODES; b++)
    p->peer[b].full_since = -1;
  c->check_from[node] = 0; /* re-check everything loaded from disk */
  if (load(w, node, p) < 0)
    return;
  if (node == 0 && make_durable(c, p, w) == 0)
    primary_tick(w, p);
}

static void timer(void *ctx, sim_world *w, int node, uint64_t tag) {
  (void)ctx;
  (void)tag;
  if (node == 0)
    primary_tick(w, sim_node_data(w, 0));
}

static void conn(void *ctx, sim_world *w, int node, sim_conn h, sim_conn_event ev, const void *data,
                 size_t len) {
  pnode *p = sim_node_data(w, node);
  if (node == 0)
    primary_conn(w, p, h, ev, data, len);
  else
    backup_conn(ctx, w, node, p, h, ev, data, len);
}

static void teardown(void *ctx, sim_world *w, int node, sim_teardown_why why) {
  (void)ctx;
  (void)why;
  free(sim_node_data(w, node));
  sim_node_set_data(w, node, NULL);
}

static const sim_node_ops ops = {boot, NULL, timer, conn, teardown};

static void workload(void *ctx, sim_world *w, const sf_op *op) {
  cluster *c = ctx;
  pnode *p = sim_node_data(w, 0);
  if (!p || p->len >= MAX_LOG)
    return; /* the client gets an error */
  uint64_t v = ((uint64_t)op->seq + 1) << 32 | (op->value & 0xffffffffu);
  uint8_t rec[REC];
  wire_put64(rec, v);
  wire_put64(rec + 8, checksum(p->len, v));
  if (sim_disk_write(w, 0, (uint64_t)p->len * SLOT, rec, REC) != REC)
    return;
  p->log[p->len++] = v;
  if (make_durable(c, p, w) < 0)
    return;
  for (int b = 1; b < sim_nodes(w); b++)
    pump(w, p, b);
}

/* Every backup's log is a prefix of the primary's durable history. */
SF_ORACLE static void check_backup_prefix(void *ctx, sim_world *w) {
  cluster *c = ctx;
  for (int b = 1; b < c->n; b++) {
    pnode *p = sim_node_data(w, b);
    if (!p || c->check_from[b] >= p->len)
      continue;
    for (uint32_t i = c->check_from[b]; i < p->len; i++)
      SIM_INVARIANT(w, b, i < c->hist_len && p->log[i] == c->hist[i], "backup_log_is_prefix",
                    "backup n%d entry %" PRIu32 " is %016" PRIx64
                    " but the primary's is %016" PRIx64 " (history length %" PRIu32 ")",
                    b, i, p->log[i], i < c->hist_len ? c->hist[i] : 0, c->hist_len);
    c->check_from[b] = p->len;
  }
}

/* The primary never loses a durable entry across restarts. */
SF_ORACLE static void check_primary_durable(void *ctx, sim_world *w) {
  cluster *c = ctx;
  pnode *p = sim_node_data(w, 0);
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
  pnode *p = sim_node_data(w, 0);
  if (!p)
    return 0;
  for (int b = 1; b < c->n; b++) {
    pnode *q = sim_node_data(w, b);
    if (!q || q->len < p->durable)
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

static int describe(void *ctx, const void *msg, size_t have, size_t len, char *buf, size_t cap) {
  const uint8_t *m = msg;
  (void)ctx;
  if (have >= 13 && len == 13 && m[0] == MSG_ENTRY)
    return snprintf(buf, cap, "ENTRY idx=%" PRIu32 " op=%" PRIu64, wire_get32(m + 1),
                    (wire_get64(m + 5) >> 32) - 1);
  if (have >= 5 && len == 5 && m[0] == MSG_ACK)
    return snprintf(buf, cap, "ACK len=%" PRIu32, wire_get32(m + 1));
  return -1;
}

static uint32_t classify(void *ctx, const void *msg, size_t len) {
  (void)ctx;
  return len ? ((const uint8_t *)msg)[0] & 3u : 0;
}

/* Role: primary (window state of its most-lagging backup) or backup. */
SF_ORACLE static uint32_t observe(void *ctx, sim_world *w, int node) {
  (void)ctx;
  pnode *p = sim_node_data(w, node);
  if (!p)
    return 0;
  if (node != 0)
    return 2 + (p->len > 0);
  uint32_t worst = 0;
  for (int b = 1; b < sim_nodes(w); b++) {
    const peer_t *pe = &p->peer[b];
    uint32_t st = !pe->conn ? 1 : !pe->hello ? 2 : 3 + (pe->next - pe->acked);
    if (st > worst)
      worst = st;
  }
  return 16 + worst;
}

const sf_target SF_TARGET_SYMBOL = {
    .name = SF_TARGET_NAME,
    .summary = "primary-backup log replication over stream connections",
    .min_nodes = 2,
    .max_nodes = 5,
    .default_nodes = 3,
    .create = create,
    .destroy = free,
    .ops = &ops,
    .workload = workload,
    .invariants = invariants,
    .live = live,
    /* catch-up of a full log (256 entries, 3 per round trip of <= 20 ms on a
     * healed network) plus reconnect and restart: well under 5 s */
    .liveness_ms = 5000,
    .describe = describe,
    .classify = classify,
    .observe = observe,
};
