/* The helpers an adapter uses: simfuzz_wire.h (encoding, checksums),
 * simfuzz_record.h (durable records), simfuzz_libc.h and sim_current()
 * (context-free code, rand() and time routed into the simulator). This
 * binary links with -Wl,--wrap=rand,--wrap=time,--wrap=clock_gettime, as
 * simfuzz_add_target(ROUTE ...) does. */
#include "testlib.h"
#include <simfuzz/simfuzz_libc.h>
#include <simfuzz/simfuzz_record.h>
#include <simfuzz/simfuzz_wire.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- wire ----------------------------------------------------------------- */

TEST(wire_roundtrip_and_seal) {
  uint8_t m[64];
  sf_enc e;
  sf_enc_init(&e, m, sizeof m);
  sf_enc_u8(&e, 7);
  sf_enc_u16(&e, 0xbeef);
  sf_enc_u32(&e, 0xdeadbeef);
  sf_enc_u64(&e, 0x0123456789abcdefull);
  sf_enc_bytes(&e, "xyz", 3);
  CHECK_EQ(sf_enc_len(&e), 1 + 2 + 4 + 8 + 3);
  size_t len = sf_enc_seal(&e);
  CHECK_EQ(len, 18 + SF_SEAL_BYTES);
  CHECK_EQ(m[1], 0xef); /* little-endian on every host */
  sf_dec d;
  CHECK(sf_dec_unseal(&d, m, len));
  CHECK_EQ(sf_dec_u8(&d), 7);
  CHECK_EQ(sf_dec_u16(&d), 0xbeef);
  CHECK_EQ(sf_dec_u32(&d), 0xdeadbeef);
  CHECK(sf_dec_u64(&d) == 0x0123456789abcdefull);
  char xyz[3];
  sf_dec_bytes(&d, xyz, 3);
  CHECK(!memcmp(xyz, "xyz", 3));
  CHECK(sf_dec_ok(&d));
  CHECK_EQ(sf_dec_left(&d), 0);
  /* reading past the end gives zeros and remembers it */
  CHECK_EQ(sf_dec_u32(&d), 0);
  CHECK(!sf_dec_ok(&d));
  /* every single flipped bit is caught by the seal */
  for (size_t bit = 0; bit < len * 8; bit++) {
    m[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    CHECK(!sf_dec_unseal(&d, m, len));
    m[bit / 8] ^= (uint8_t)(1u << (bit % 8));
  }
  CHECK(!sf_dec_unseal(&d, m, len - 1)); /* truncated */
  CHECK(!sf_dec_unseal(&d, m, 3));       /* shorter than a seal */
}

TEST(wire_overflow_is_an_error_not_a_write) {
  uint8_t m[12];
  memset(m, 0xaa, sizeof m);
  sf_enc e;
  sf_enc_init(&e, m, 10);
  sf_enc_u64(&e, 1);
  sf_enc_u32(&e, 2); /* does not fit */
  CHECK_EQ(sf_enc_len(&e), 0);
  CHECK_EQ(sf_enc_seal(&e), 0);
  CHECK_EQ(m[10], 0xaa); /* nothing past cap */
  CHECK_EQ(m[11], 0xaa);
  /* a checksum is bound to its position */
  CHECK(sf_checksum(1, "abc", 3) != sf_checksum(2, "abc", 3));
}

/* ---- records -------------------------------------------------------------- */

static void noop_boot(void *ctx, sim_world *w, int node, int restart) {
  (void)ctx;
  (void)w;
  (void)node;
  (void)restart;
}
static const sim_node_ops noop_ops = {noop_boot, NULL, NULL, NULL, NULL};

static sim_world *disk_world(uint32_t keep_ppm, uint32_t corrupt_ppm) {
  sim_config c = ops_config(&noop_ops, 1);
  c.disk.unsynced_keep_ppm = keep_ppm;
  c.disk.unsynced_corrupt_ppm = corrupt_ppm;
  sim_world *w = sim_world_create(&c);
  CHECK(w);
  sim_run(w, 0, 0);
  return w;
}

TEST(records_roundtrip_in_sector_slots) {
  sim_world *w = disk_world(0, 0);
  sf_records r;
  CHECK_EQ(sf_records_init(&r, w, 0, 100, 20), 0);
  CHECK_EQ(r.base % sim_disk_sector_size(w, 0), 0); /* rounded up to a sector */
  CHECK_EQ(r.base, 512);
  CHECK_EQ(r.slot % sim_disk_sector_size(w, 0), 0);
  CHECK_EQ(sf_records_init(&r, w, 0, 0, 1000), 0);
  CHECK_EQ(r.slot, 1024); /* header + 1000 bytes: two sectors */
  CHECK_EQ(sf_records_end(&r, 2), 3 * 1024);
  uint8_t out[1000];
  CHECK_EQ(sf_record_read(&r, w, 0, 5, out, sizeof out), 0); /* never written */
  CHECK_EQ(sf_record_write(&r, w, 0, 5, "hello", 5, 1), 0);
  CHECK_EQ(sf_record_read(&r, w, 0, 5, out, sizeof out), 5);
  CHECK(!memcmp(out, "hello", 5));
  CHECK_EQ(sf_record_read(&r, w, 0, 5, out, 4), 0); /* does not fit: not data */
  CHECK_EQ(sf_record_read(&r, w, 0, 4, out, sizeof out), 0);
  CHECK_EQ(sf_record_write(&r, w, 0, 6, out, 1001, 0), -EINVAL);
  uint8_t big[1000], back[1000]; /* a record past the writer's stack buffer */
  for (size_t i = 0; i < sizeof big; i++)
    big[i] = (uint8_t)(i * 7 + 1);
  CHECK_EQ(sf_record_write(&r, w, 0, 7, big, sizeof big, 0), 0);
  CHECK_EQ(sf_record_read(&r, w, 0, 7, back, sizeof back), 1000);
  CHECK(!memcmp(big, back, sizeof big));
  CHECK_EQ(sf_record_erase(&r, w, 0, 5, 1), 0);
  CHECK_EQ(sf_record_read(&r, w, 0, 5, out, sizeof out), 0);
  CHECK_EQ(sf_records_init(&r, w, 0, 0, 0), -EINVAL);
  sim_world_destroy(w);
}

TEST(records_survive_a_neighbour_torn_by_a_crash) {
  /* every unsynced sector is corrupted by the crash (one flipped byte, which
   * a record that fills its sector always contains) */
  sim_world *w = disk_world(0, SIM_PPM);
  sf_records r;
  sf_records_init(&r, w, 0, 0, 512 - SF_RECORD_HEADER);
  CHECK_EQ(r.slot, 512);
  uint8_t a[500], out[500];
  memset(a, 'A', sizeof a);
  CHECK_EQ(sf_record_write(&r, w, 0, 0, a, sizeof a, 1), 0); /* durable */
  CHECK_EQ(sf_record_write(&r, w, 0, 2, a, sizeof a, 1), 0); /* durable */
  memset(a, 'B', sizeof a);
  CHECK_EQ(sf_record_write(&r, w, 0, 1, a, sizeof a, 0), 0); /* not synced */
  CHECK_EQ(sf_record_write(&r, w, 0, 0, a, sizeof a, 0), 0); /* overwrite, not synced */
  sim_node_crash(w, 0);
  CHECK(sim_get_stats(w)->sectors_corrupted >= 2);
  CHECK_EQ(sf_record_read(&r, w, 0, 1, out, sizeof out), 0); /* torn: empty, not garbage */
  CHECK_EQ(sf_record_read(&r, w, 0, 0, out, sizeof out), 0);
  CHECK_EQ(sf_record_read(&r, w, 0, 2, out, sizeof out), 500); /* the neighbour is intact */
  CHECK_EQ(out[0], 'A');
  sim_world_destroy(w);
}

TEST(records_retry_reads_then_report_eio) {
  sim_world *w = disk_world(0, 0);
  sf_records r;
  sf_records_init(&r, w, 0, 0, 8);
  CHECK_EQ(sf_record_write(&r, w, 0, 0, "12345678", 8, 1), 0);
  uint8_t out[8];
  sim_disk_fail_nth(w, 0, SIM_DISK_READ, 1); /* one transient failure: retried */
  CHECK_EQ(sf_record_read(&r, w, 0, 0, out, 8), 8);
  sim_disk_params p = {512, 0, 0, SIM_PPM, 0, 0}; /* every read fails */
  sim_disk_set_params(w, 0, &p);
  CHECK_EQ(sf_record_read(&r, w, 0, 0, out, 8), -EIO);
  sim_world_destroy(w);
}

/* ---- sim_current, routed rand() and time ---------------------------------- */

typedef struct {
  sim_world *seen_w[4];
  int seen_node[4];
  uint64_t rnd[4];
  int rand_vals[4];
  time_t t[4];
  int64_t mono_ns[4];
  int calls;
} ctx_log;

static void log_timer(void *ctx, sim_world *w, int node, uint64_t tag) {
  (void)tag;
  ctx_log *l = ctx;
  int k = l->calls++ % 4;
  int n;
  l->seen_w[k] = sim_current(&n);
  l->seen_node[k] = n;
  l->rnd[k] = sf_libc_random();
  l->rand_vals[k] = rand(); /* routed: -Wl,--wrap=rand */
  l->t[k] = time(NULL);     /* routed */
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts); /* routed */
  l->mono_ns[k] = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
  (void)w;
  (void)node;
}

static void log_boot(void *ctx, sim_world *w, int node, int restart) {
  (void)ctx;
  (void)restart;
  sim_timer_start(w, node, (uint64_t)(node + 1) * SIM_NS_PER_S, 1);
}

static const sim_node_ops log_ops = {log_boot, NULL, log_timer, NULL, NULL};

static void run_logged(ctx_log *l, uint64_t seed) {
  memset(l, 0, sizeof *l);
  sim_config c = ops_config(&log_ops, 2);
  c.seed = seed;
  c.ctx = l;
  sim_world *w = sim_world_create(&c);
  CHECK(w);
  CHECK(sim_current(NULL) == NULL);
  sim_run(w, UINT64_MAX, 0);
  CHECK(sim_current(NULL) == NULL); /* never outlives the run */
  CHECK_EQ(l->calls, 2);
  CHECK(l->seen_w[0] == w && l->seen_w[1] == w);
  sim_world_destroy(w);
}

TEST(current_world_and_node_in_callbacks_only) {
  ctx_log l;
  run_logged(&l, 1);
  CHECK_EQ(l.seen_node[0], 0); /* n0's timer fires at 1 s, n1's at 2 s */
  CHECK_EQ(l.seen_node[1], 1);
  int node = 5;
  CHECK(sim_current(&node) == NULL);
  CHECK_EQ(node, -1);
}

TEST(routed_rand_and_time_come_from_the_simulation) {
  ctx_log a, b, c;
  run_logged(&a, 1);
  run_logged(&b, 1);
  run_logged(&c, 2);
  for (int k = 0; k < 2; k++) { /* a pure function of the seed */
    CHECK(a.rnd[k] == b.rnd[k]);
    CHECK_EQ(a.rand_vals[k], b.rand_vals[k]);
    CHECK(a.rand_vals[k] >= 0 && a.rand_vals[k] <= RAND_MAX);
  }
  CHECK(a.rnd[0] != c.rnd[0] || a.rnd[1] != c.rnd[1]);
  /* wall time: the epoch plus the node's clock (1 s and 2 s) */
  CHECK_EQ(a.t[0], SF_LIBC_EPOCH_S + 1);
  CHECK_EQ(a.t[1], SF_LIBC_EPOCH_S + 2);
  /* monotonic: one second plus the node's monotonic clock */
  CHECK_EQ(a.mono_ns[0], 2 * (int64_t)SIM_NS_PER_S);
  /* outside a world: the C library */
  time_t now = time(NULL);
  CHECK(now > SF_LIBC_EPOCH_S + 1000000 || now < SF_LIBC_EPOCH_S); /* not simulated */
  CHECK(sf_libc_random() == 0);
}

/* nested worlds: a world run from inside another's callback */
static sim_world *inner_seen;
static void inner_timer(void *ctx, sim_world *w, int node, uint64_t tag) {
  (void)ctx;
  (void)node;
  (void)tag;
  inner_seen = sim_current(NULL);
  (void)w;
}
static const sim_node_ops inner_ops = {log_boot, NULL, inner_timer, NULL, NULL};
static sim_world *outer_after;
static int outer_node_after;
static void outer_timer(void *ctx, sim_world *w, int node, uint64_t tag) {
  (void)ctx;
  (void)tag;
  (void)node;
  sim_config c = ops_config(&inner_ops, 1);
  sim_world *in = sim_world_create(&c);
  sim_run(in, UINT64_MAX, 0);
  CHECK(inner_seen == in);
  sim_world_destroy(in);
  outer_after = sim_current(&outer_node_after);
  CHECK(outer_after == w);
}
static const sim_node_ops outer_ops = {log_boot, NULL, outer_timer, NULL, NULL};

TEST(current_is_restored_after_a_nested_world) {
  sim_config c = ops_config(&outer_ops, 1);
  sim_world *w = sim_world_create(&c);
  sim_run(w, UINT64_MAX, 0);
  CHECK(outer_after == w);
  CHECK_EQ(outer_node_after, 0);
  CHECK(sim_current(NULL) == NULL);
  sim_world_destroy(w);
}

static void world_call(sim_world *w, void *arg) {
  (void)arg;
  int n;
  CHECK(sim_current(&n) == w);
  CHECK_EQ(n, -1); /* world-level code */
  CHECK_EQ(sim_set_current_node(w, 1), -1);
  CHECK(sim_current(&n) == w);
  CHECK_EQ(n, 1);
  void *p = sf_malloc(16); /* allocation fault forced for the current node */
  CHECK(p == NULL);
  CHECK_EQ(sim_set_current_node(w, -1), 1);
  p = sf_malloc(16); /* world-level code never fails */
  CHECK(p != NULL);
  sf_free(p);
}

TEST(set_current_node_and_allocation_faults) {
  sim_config c = ops_config(&noop_ops, 2);
  sim_world *w = sim_world_create(&c);
  sim_faultpoint_force(w, SIM_FAULTPOINT_ALLOC, SIM_PPM);
  sim_at(w, SIM_NS_PER_MS, world_call, NULL);
  sim_run(w, UINT64_MAX, 0);
  CHECK_EQ(sim_set_current_node(w, 0), -1); /* not the current world: no effect */
  void *p = sf_malloc(16);                  /* outside a world: the C library's */
  CHECK(p != NULL);
  sf_free(p);
  sim_world_destroy(w);
}

/* In a world, sf_malloc() and friends allocate from its deterministic heap;
 * a second sf_free() of a block is the node's failure heap_misuse. */
static void heap_calls(sim_world *w, void *arg) {
  int *stage = arg;
  CHECK_EQ(sim_set_current_node(w, 1), -1);
  char *p = sf_malloc(40), *q = sf_calloc(3, 8), *a = sf_aligned_alloc(16, 20);
  CHECK(sim_heap_owns(p) && sim_heap_owns(q) && sim_heap_owns(a));
  CHECK(sim_heap_size(p) == 40 && q[23] == 0 && sim_heap_size(a) == 20);
  memcpy(p, "abcdefgh", 8);
  p = sf_realloc(p, 4000);
  CHECK(sim_heap_owns(p) && sim_heap_size(p) == 4000 && memcmp(p, "abcdefgh", 8) == 0 && !p[3999]);
  char *big = sf_aligned_alloc(64, 8); /* over 16 bytes of alignment: the C library's */
  CHECK(big && !sim_heap_owns(big) && (uintptr_t)big % 64 == 0);
  sf_free(big);
  sf_free(a);
  sf_free(q);
  sf_free(p);
  *stage = 1;
  sf_free(p); /* twice */
  *stage = 2;
  CHECK_EQ(sim_set_current_node(w, -1), 1);
}

TEST(allocation_in_a_world_is_deterministic_and_checked) {
  sim_config c = ops_config(&noop_ops, 2);
  sim_world *w = sim_world_create(&c);
  int stage = 0;
  sim_at(w, SIM_NS_PER_MS, heap_calls, &stage);
  sim_run(w, UINT64_MAX, 0);
  CHECK_EQ(stage, 2); /* the failure is recorded; the call returns */
  const sim_failure *f = sim_get_failure(w);
  CHECK(sim_failed(w) && f && strcmp(f->name, "heap_misuse") == 0 && f->node == 1);
  sim_world_destroy(w);
}

TEST_MAIN(T(wire_roundtrip_and_seal), T(wire_overflow_is_an_error_not_a_write),
          T(records_roundtrip_in_sector_slots), T(records_survive_a_neighbour_torn_by_a_crash),
          T(records_retry_reads_then_report_eio), T(current_world_and_node_in_callbacks_only),
          T(routed_rand_and_time_come_from_the_simulation),
          T(current_is_restored_after_a_nested_world), T(set_current_node_and_allocation_faults),
          T(allocation_in_a_world_is_deterministic_and_checked))
