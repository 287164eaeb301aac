/*
 * kvstream: the outside project's simfuzz target, wrapping the kvrep library.
 *
 * Node 0 is the writer. A client operation writes the next version of a key;
 * the writer makes the version durable (simfuzz_record.h), then broadcasts
 * the key's latest (version, value) to every replica as a sealed datagram
 * (simfuzz_wire.h), at once and again every kvrep_resend_ms() (the library
 * calls rand(): ROUTE rand makes that a simulation decision). Replicas
 * apply updates with kvrep_apply().
 *
 * Invariant: a replica only ever holds a version the writer may have made
 * durable, with that version's value. Liveness: after heal every replica catches up.
 * kvrep 1.1 asserts that a key's updates arrive in version order, which a
 * datagram network does not promise: its builds fail with "assert".
 */
#include "kvrep.h"
#include "kvutil.h"
#include "scenario.h" /* the project's own (kvutil/scenario.h), not simfuzz's */
#include <simfuzz/simfuzz.h>
#include <simfuzz/simfuzz_record.h>
#include <simfuzz/simfuzz_wire.h>

#include <stdlib.h>

_Static_assert(KVREP_MAX_KEYS == 16, "DEFINES reach the target's sources");
_Static_assert(KVSTREAM_TAG == 7, "COMPILE_OPTIONS reach the target's sources");
_Static_assert(KVUTIL_OWN_SCENARIO_H, "a project's own header wins over simfuzz's bare names");
_Static_assert(SIMFUZZ_VERSION_AT_LEAST(0, 6, 0), "<simfuzz/version.h> comes with simfuzz.h");

enum { TICK = 1, MSG_UPDATE = 1, SEED = 42 };

typedef struct {
  int n;
  uint64_t written[KVREP_MAX_KEYS]; /* versions the writer may have made durable */
} cluster;

typedef struct {
  sf_records recs;                  /* writer: two records per key (see key_slot) */
  uint64_t version[KVREP_MAX_KEYS]; /* writer */
  struct kvrep table;               /* replicas */
} knode;

static void *create(int n) {
  cluster *c = calloc(1, sizeof *c);
  if (c)
    c->n = n;
  return c;
}

static void destroy(void *ctx) {
  free(ctx);
}

static void broadcast(sim_world *w, knode *k, uint32_t key) {
  uint8_t m[64];
  sf_enc e;
  sf_enc_init(&e, m, sizeof m);
  sf_enc_u8(&e, MSG_UPDATE);
  sf_enc_u32(&e, key);
  sf_enc_u64(&e, k->version[key]);
  sf_enc_u64(&e, kvutil_value(key, k->version[key], SEED));
  size_t len = sf_enc_seal(&e);
  for (int to = 1; to < sim_nodes(w); to++)
    sim_send(w, 0, to, m, len);
}

/* A key's versions alternate between two records, so a write that fails
 * (and may leave its record empty, simfuzz_record.h) can only damage the
 * version before the last durable one, never the last itself. */
static uint64_t key_slot(uint32_t key, uint64_t version) {
  return 2 * (uint64_t)key + (version & 1);
}

/* The key's last durable version: the larger of its two records. Returns 0
 * and sets *v, or -EIO when the disk keeps failing. */
static int read_version(knode *k, sim_world *w, int node, uint32_t key, uint64_t *v) {
  *v = 0;
  for (uint64_t half = 0; half < 2; half++) {
    uint8_t b[8];
    int64_t r = sf_record_read(&k->recs, w, node, key_slot(key, half), b, sizeof b);
    if (r < 0)
      return (int)r;
    if (r == 8 && sf_get64(b) > *v)
      *v = sf_get64(b);
  }
  return 0;
}

static void boot(void *ctx, sim_world *w, int node, int restart) {
  (void)ctx;
  (void)restart;
  knode *k = sim_node_alloc(w, node, sizeof *k);
  kvrep_init(&k->table);
  if (node != 0)
    return;
  sf_records_init(&k->recs, w, node, 0, 8);
  for (uint32_t key = 0; key < KVREP_MAX_KEYS; key++) {
    if (read_version(k, w, node, key, &k->version[key]) < 0) {
      sim_node_crash(w, node); /* the disk keeps failing: recover on the next restart */
      return;
    }
  }
  sim_timer_start(w, node, (uint64_t)kvrep_resend_ms() * SIM_NS_PER_MS, TICK);
}

static void recv(void *ctx, sim_world *w, int node, int from, const void *msg, size_t len) {
  (void)ctx;
  (void)from;
  knode *k = sim_node_data(w, node);
  sf_dec d;
  if (node == 0 || !sf_dec_unseal(&d, msg, len) || sf_dec_u8(&d) != MSG_UPDATE)
    return;
  uint32_t key = sf_dec_u32(&d);
  uint64_t version = sf_dec_u64(&d), value = sf_dec_u64(&d);
  if (!sf_dec_ok(&d) || key >= KVREP_MAX_KEYS)
    return;
  kvrep_apply(&k->table, key, version, value);
}

static void timer(void *ctx, sim_world *w, int node, uint64_t tag) {
  (void)ctx;
  (void)tag;
  knode *k = sim_node_data(w, node);
  for (uint32_t key = 0; key < KVREP_MAX_KEYS; key++)
    if (k->version[key])
      broadcast(w, k, key);
  sim_timer_start(w, node, (uint64_t)kvrep_resend_ms() * SIM_NS_PER_MS, TICK);
}

static void teardown(void *ctx, sim_world *w, int node, sim_teardown_why why) {
  (void)ctx;
  (void)why;
  sim_node_free(w, node);
}

static void workload(void *ctx, sim_world *w, const sf_op *op) {
  cluster *c = ctx;
  knode *k = sim_node_data(w, 0);
  if (!k || !sim_node_up(w, 0))
    return;
  uint32_t key = (uint32_t)(op->key % KVREP_MAX_KEYS);
  uint64_t next = k->version[key] + 1;
  uint8_t b[8];
  sf_put64(b, next);
  if (next > c->written[key]) /* from now on it may be durable */
    c->written[key] = next;
  if (sf_record_write(&k->recs, w, 0, key_slot(key, next), b, sizeof b, 1) != 0) {
    sim_node_crash(w, 0); /* durable or not: find out on restart */
    return;
  }
  k->version[key] = next;
  broadcast(w, k, key);
}

static SF_ORACLE void check_replicas(void *ctx, sim_world *w) {
  cluster *c = ctx;
  for (int i = 1; i < c->n; i++) {
    knode *k = sim_node_up(w, i) ? sim_node_data(w, i) : NULL;
    for (uint32_t key = 0; k && key < KVREP_MAX_KEYS; key++) {
      const struct kvrep_slot *s = &k->table.slot[key];
      SIM_INVARIANT(w, i, s->version <= c->written[key], "only_written_versions",
                    "n%d holds version %llu of key %u, the writer made %llu durable", i,
                    (unsigned long long)s->version, key, (unsigned long long)c->written[key]);
      SIM_INVARIANT(w, i, !s->version || s->value == kvutil_value(key, s->version, SEED),
                    "values_match", "n%d key %u version %llu has a value the writer never wrote", i,
                    key, (unsigned long long)s->version);
    }
  }
}

static SF_ORACLE int caught_up(void *ctx, sim_world *w) {
  cluster *c = ctx;
  const knode *wr = sim_node_data(w, 0);
  for (int i = 1; i < c->n; i++) {
    knode *k = sim_node_data(w, i);
    for (uint32_t key = 0; key < KVREP_MAX_KEYS; key++)
      if (!wr || !k || k->table.slot[key].version != wr->version[key])
        return 0;
  }
  return 1;
}

static SF_ORACLE uint32_t observe(void *ctx, sim_world *w, int node) {
  (void)ctx;
  knode *k = sim_node_data(w, node);
  return node == 0 ? 3 : k && k->table.applied ? 2 : 1;
}

static const sim_node_ops ops = {boot, recv, timer, NULL, teardown};
static const sf_check invariants[] = {{"replicas", check_replicas}, {NULL, NULL}};

SF_TARGET(.summary = "kvstream on kvrep " KVREP_VERSION, .min_nodes = 2, .max_nodes = 5,
          .default_nodes = 3, .create = create, .destroy = destroy, .ops = &ops,
          .workload = workload, .invariants = invariants, .live = caught_up, .liveness_ms = 5000,
          .observe = observe);
