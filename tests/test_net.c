/* Datagram network: one test per fault, each proving that the fault fires,
 * does what it says and reproduces (same trace hash on a second run). */
#include "testlib.h"

#include <errno.h>
#include <string.h>

/* Send `count` datagrams 0->1 one every ms with link params p; run to the
 * end; return the trace hash. The recorder and stats are left in *r / *st. */
static uint64_t blast(recorder *r, const sim_link_params *p, int count, uint64_t seed,
                      sim_stats *st) {
  memset(r, 0, sizeof *r);
  sim_config c = recorder_config(r, 2, seed);
  if (p)
    c.net = *p;
  sim_world *w = recorder_world(&c);
  for (int i = 0; i < count; i++) {
    CHECK_EQ(send_u64(w, 0, 1, (uint64_t)i), 0);
    sim_run(w, sim_now(w) + SIM_NS_PER_MS, 0);
  }
  sim_run(w, UINT64_MAX, 0);
  if (st)
    *st = *sim_get_stats(w);
  uint64_t h = sim_trace_hash(w);
  sim_world_destroy(w);
  return h;
}

static sim_link_params base(void) {
  sim_config c;
  sim_config_default(&c);
  c.net.latency_min_ns = c.net.latency_max_ns = SIM_NS_PER_MS;
  return c.net;
}

#define REPRODUCES(p, n, seed)                                                                     \
  do {                                                                                             \
    recorder *r2_ = recorder_new();                                                                \
    CHECK_HASH(blast(r2_, (p), (n), (seed), NULL), blast(r2_, (p), (n), (seed), NULL));            \
    free(r2_);                                                                                     \
  } while (0)

/* A fault test: FAULT_BEGIN, link parameters p set, FAULT_RUN (1000
 * datagrams), checks, FAULT_END (the run reproduces; the recorder goes). */
#define FAULT_BEGIN()                                                                              \
  recorder *r = recorder_new();                                                                    \
  sim_link_params p = base()
#define FAULT_RUN(seed)                                                                            \
  sim_stats st;                                                                                    \
  blast(r, &p, 1000, (seed), &st)
#define FAULT_END(seed)                                                                            \
  do {                                                                                             \
    REPRODUCES(&p, 300, (seed));                                                                   \
    free(r);                                                                                       \
  } while (0)

TEST(no_faults_delivers_everything_in_order) {
  recorder *r = recorder_new();
  sim_link_params p = base();
  sim_stats st;
  blast(r, &p, 200, 1, &st);
  CHECK_EQ(rec_count(r, R_RECV, 1), 200);
  uint64_t k = 0;
  REC_EACH (e, r, R_RECV, -1)
    CHECK_EQ(e->val, k++);
  CHECK_EQ(st.sent, 200);
  CHECK_EQ(st.delivered, 200);
  CHECK_EQ(st.lost + st.duplicated + st.corrupted + st.reordered, 0);
  free(r);
}

TEST(latency_bounds_and_distributions) {
  recorder *r = recorder_new();
  for (int dist = 0; dist < 2; dist++) {
    memset(r, 0, sizeof *r);
    sim_config c = recorder_config(r, 2, 9);
    c.net.latency_min_ns = 2 * SIM_NS_PER_MS;
    c.net.latency_max_ns = 42 * SIM_NS_PER_MS;
    c.net.dist = (sim_latency_dist)dist;
    sim_world *w = recorder_world(&c);
    uint64_t sum = 0, lo = UINT64_MAX, hi = 0;
    int n = 0;
    for (int i = 0; i < 2000; i++) {
      uint64_t t0 = sim_now(w);
      send_u64(w, 0, 1, 0);
      sim_run(w, UINT64_MAX, 0);
      uint64_t d = r->ev[r->n - 1].time - t0;
      CHECK(d >= c.net.latency_min_ns && d <= c.net.latency_max_ns);
      sum += d;
      lo = d < lo ? d : lo;
      hi = d > hi ? d : hi;
      n++;
    }
    uint64_t mean = sum / (uint64_t)n;
    if (dist == SIM_LAT_UNIFORM) {
      CHECK(mean > 20 * SIM_NS_PER_MS && mean < 24 * SIM_NS_PER_MS); /* ~22 ms */
      CHECK(lo < 3 * SIM_NS_PER_MS && hi > 41 * SIM_NS_PER_MS);
    } else {
      CHECK(mean > 10 * SIM_NS_PER_MS && mean < 14 * SIM_NS_PER_MS); /* 2 + ~10 ms */
      CHECK(hi > 35 * SIM_NS_PER_MS);
    }
    sim_world_destroy(w);
  }
  free(r);
}

TEST(loss) {
  FAULT_BEGIN();
  p.loss_ppm = 300000;
  FAULT_RUN(2);
  int got = rec_count(r, R_RECV, 1);
  CHECK(st.lost > 250 && st.lost < 350);
  CHECK_EQ((uint64_t)got + st.lost, 1000);
  FAULT_END(2);
}

TEST(duplication) {
  FAULT_BEGIN();
  p.dup_ppm = 200000;
  p.latency_max_ns = 5 * SIM_NS_PER_MS;
  FAULT_RUN(3);
  CHECK(st.duplicated > 150 && st.duplicated < 250);
  CHECK_EQ((uint64_t)rec_count(r, R_RECV, 1), 1000 + st.duplicated);
  /* each value arrives once or twice */
  int seen[1000] = {0};
  REC_EACH (e, r, R_RECV, -1)
    seen[e->val]++;
  int twice = 0;
  for (int i = 0; i < 1000; i++) {
    CHECK(seen[i] == 1 || seen[i] == 2);
    twice += seen[i] == 2;
  }
  CHECK_EQ((uint64_t)twice, st.duplicated);
  FAULT_END(3);
}

TEST(reordering) {
  FAULT_BEGIN();
  p.reorder_ppm = 100000;
  p.reorder_delay_ns = 20 * SIM_NS_PER_MS;
  FAULT_RUN(4);
  CHECK(st.reordered > 60 && st.reordered < 140);
  CHECK_EQ(rec_count(r, R_RECV, 1), 1000);
  int inversions = 0;
  uint64_t maxv = 0;
  REC_EACH (e, r, R_RECV, -1) {
    inversions += e->val < maxv;
    maxv = e->val > maxv ? e->val : maxv;
  }
  CHECK(inversions > 30);
  /* without reordering and with fixed latency: never */
  p.reorder_ppm = 0;
  blast(r, &p, 1000, 4, &st);
  maxv = 0;
  REC_EACH (e, r, R_RECV, -1) {
    CHECK(e->val >= maxv);
    maxv = e->val;
  }
  p.reorder_ppm = 100000;
  FAULT_END(4);
}

TEST(corruption_flips_one_bit) {
  FAULT_BEGIN();
  p.corrupt_ppm = 250000;
  FAULT_RUN(5);
  CHECK(st.corrupted > 200 && st.corrupted < 300);
  int bad = 0;
  uint64_t k = 0;
  REC_EACH (e, r, R_RECV, -1) {
    uint64_t diff = e->val ^ k++;
    CHECK_EQ(diff & (diff - 1), 0); /* at most one bit */
    bad += diff != 0;
  }
  CHECK_EQ((uint64_t)bad, st.corrupted);
  FAULT_END(5);
}

TEST(bandwidth_serializes) {
  FX_BEGIN(2, 1);
  c.net.bandwidth_bps = 8000; /* 8-byte message: 1 ms each */
  sim_world *w = recorder_world(&c);
  for (int i = 0; i < 10; i++)
    send_u64(w, 0, 1, (uint64_t)i);
  /* all ten due when the last is through the queue */
  CHECK_EQ(sim_in_flight_due(w), 11 * SIM_NS_PER_MS);
  sim_run(w, UINT64_MAX, 0);
  CHECK_EQ(sim_in_flight_due(w), sim_now(w));
  CHECK_EQ(rec_count(r, R_RECV, 1), 10);
  int k = 0;
  REC_EACH (e, r, R_RECV, -1)
    CHECK_EQ(e->time, (uint64_t)++k * SIM_NS_PER_MS + SIM_NS_PER_MS);
  FX_END();
}

TEST(queue_limit_drops_excess) {
  FX_BEGIN(2, 1);
  c.net.queue_limit = 3;
  sim_world *w = recorder_world(&c);
  for (int i = 0; i < 10; i++)
    send_u64(w, 0, 1, (uint64_t)i);
  CHECK_EQ(sim_link_pending(w, 0, 1), 3);
  sim_run(w, UINT64_MAX, 0);
  CHECK_EQ(rec_count(r, R_RECV, 1), 3);
  CHECK_EQ(sim_get_stats(w)->dropped_queue, 7);
  FX_END();
}

TEST(partition_full_oneway_isolate_split_heal) {
  FX_WORLD(4, 1);
  /* one-way 0 -/-> 1 */
  sim_partition(w, 1u << 0, 1u << 1, 1);
  CHECK(sim_link_blocked(w, 0, 1) && !sim_link_blocked(w, 1, 0));
  send_u64(w, 0, 1, 1);
  send_u64(w, 1, 0, 2);
  sim_run(w, UINT64_MAX, 0);
  CHECK_EQ(rec_count(r, R_RECV, 1), 0);
  CHECK_EQ(rec_count(r, R_RECV, 0), 1);
  sim_heal(w);
  /* full: {0,1} | {2,3} */
  sim_partition(w, 0x3, 0xc, 0);
  for (int a = 0; a < 4; a++)
    for (int b = 0; b < 4; b++)
      CHECK_EQ(sim_link_blocked(w, a, b), a != b && ((a < 2) != (b < 2)));
  sim_heal(w);
  /* isolate 2 */
  sim_isolate(w, 2);
  for (int a = 0; a < 4; a++)
    for (int b = 0; b < 4; b++)
      CHECK_EQ(sim_link_blocked(w, a, b), a != b && (a == 2 || b == 2));
  /* split into groups {0,3} {1} {2} */
  uint8_t g[4] = {0, 1, 2, 0};
  sim_split(w, g);
  for (int a = 0; a < 4; a++)
    for (int b = 0; b < 4; b++)
      CHECK_EQ(sim_link_blocked(w, a, b), a != b && g[a] != g[b]);
  sim_heal(w);
  for (int a = 0; a < 4; a++)
    for (int b = 0; b < 4; b++)
      CHECK(!sim_link_blocked(w, a, b));
  CHECK(sim_get_stats(w)->partitions > 0 && sim_get_stats(w)->heals > 0);
  FX_END();
}

TEST(partition_drops_messages_in_flight) {
  FX_BEGIN(2, 1);
  c.net.latency_min_ns = c.net.latency_max_ns = 10 * SIM_NS_PER_MS;
  sim_world *w = recorder_world(&c);
  send_u64(w, 0, 1, 1);
  sim_run(w, 5 * SIM_NS_PER_MS, 0);
  sim_link_block(w, 0, 1, 1);
  sim_run(w, 20 * SIM_NS_PER_MS, 0);
  sim_link_block(w, 0, 1, 0);
  CHECK_EQ(rec_count(r, R_RECV, 1), 0);
  CHECK_EQ(sim_get_stats(w)->dropped_partition, 1);
  send_u64(w, 0, 1, 2);
  sim_run(w, UINT64_MAX, 0);
  CHECK_EQ(rec_count(r, R_RECV, 1), 1);
  FX_END();
}

TEST(hold_release_and_deliver_kth) {
  FX_WORLD(2, 1);
  sim_link_hold(w, 0, 1);
  for (int i = 0; i < 5; i++)
    send_u64(w, 0, 1, (uint64_t)i);
  sim_run(w, UINT64_MAX, 0);
  CHECK_EQ(rec_count(r, R_RECV, 1), 0);
  CHECK_EQ(sim_link_pending(w, 0, 1), 5);
  CHECK_EQ(sim_in_flight_due(w), sim_now(w)); /* held: due at no time */
  /* force message 3, then message 0 (index 0 of the remaining 0,1,2,4) */
  CHECK_EQ(sim_link_deliver_kth(w, 0, 1, 3), 0);
  sim_run(w, UINT64_MAX, 0);
  CHECK_EQ(sim_link_deliver_kth(w, 0, 1, 0), 0);
  sim_run(w, UINT64_MAX, 0);
  CHECK_EQ(sim_link_deliver_kth(w, 0, 1, 9), -ENOENT);
  CHECK_EQ(rec_count(r, R_RECV, 1), 2);
  CHECK_EQ(r->ev[r->n - 2].val, 3);
  CHECK_EQ(r->ev[r->n - 1].val, 0);
  /* release the rest, in order */
  sim_link_release(w, 0, 1);
  sim_run(w, UINT64_MAX, 0);
  CHECK_EQ(rec_count(r, R_RECV, 1), 5);
  CHECK_EQ(r->ev[r->n - 3].val, 1);
  CHECK_EQ(r->ev[r->n - 2].val, 2);
  CHECK_EQ(r->ev[r->n - 1].val, 4);
  /* deliver-k-th also reorders messages still in flight */
  c.net.latency_min_ns = c.net.latency_max_ns = 10 * SIM_NS_PER_MS;
  sim_link_set(w, 0, 1, &c.net);
  send_u64(w, 0, 1, 10);
  send_u64(w, 0, 1, 11);
  CHECK_EQ(sim_link_deliver_kth(w, 0, 1, 1), 0);
  sim_run(w, UINT64_MAX, 0);
  CHECK_EQ(r->ev[r->n - 2].val, 11);
  CHECK_EQ(r->ev[r->n - 1].val, 10);
  CHECK_EQ(sim_get_stats(w)->held, 5);
  FX_END();
}

TEST(send_errors) {
  FX_BEGIN(2, 1);
  c.budgets.max_msg_size = 16;
  sim_world *w = sim_world_create(&c);
  CHECK_EQ(send_u64(w, 0, 1, 1), -EHOSTDOWN); /* not booted yet */
  sim_run(w, 0, 0);
  uint8_t big[17] = {0};
  CHECK_EQ(sim_send(w, 0, 1, big, sizeof big), -EMSGSIZE);
  CHECK_EQ(sim_send(w, 0, 2, big, 1), -EINVAL);
  CHECK_EQ(sim_send(w, -1, 1, big, 1), -EINVAL);
  CHECK_EQ(sim_send(w, 0, 1, NULL, 1), -EINVAL);
  CHECK_EQ(sim_send(w, 0, 1, NULL, 0), 0);
  sim_link_params p;
  CHECK_EQ(sim_link_get(w, 0, 5, &p), -EINVAL);
  CHECK_EQ(sim_link_set(w, 0, 1, NULL), -EINVAL);
  FX_END();
}

TEST(per_link_streams_are_independent) {
  /* Loss decisions on link 0->1 do not change when link 0->2 gets faults. */
  recorder *r = recorder_new();
  uint64_t got[2][400];
  for (int pass = 0; pass < 2; pass++) {
    memset(r, 0, sizeof *r);
    sim_config c = recorder_config(r, 3, 11);
    c.net.loss_ppm = 300000;
    sim_world *w = recorder_world(&c);
    if (pass) {
      sim_link_params p = c.net;
      p.loss_ppm = 900000;
      p.dup_ppm = 500000;
      sim_link_set(w, 0, 2, &p);
    }
    for (int i = 0; i < 400; i++) {
      send_u64(w, 0, 1, (uint64_t)i);
      send_u64(w, 0, 2, (uint64_t)i);
      sim_run(w, sim_now(w) + SIM_NS_PER_MS, 0);
    }
    sim_run(w, UINT64_MAX, 0);
    memset(got[pass], 0, sizeof got[pass]);
    for (int i = 0; i < r->n; i++)
      if (r->ev[i].kind == R_RECV && r->ev[i].node == 1)
        got[pass][r->ev[i].val] = 1;
    sim_world_destroy(w);
  }
  CHECK(memcmp(got[0], got[1], sizeof got[0]) == 0);
  free(r);
}

/* The configuration's link parameters stay the defaults whatever the links
 * become, so a lossy link can be restored to them. */
TEST(defaults_restore_a_faulty_link) {
  recorder *r = recorder_new();
  sim_config c = recorder_config(r, 3, 5);
  c.net = base();
  sim_world *w = recorder_world(&c);
  const sim_link_params *d = sim_net_defaults(w);
  CHECK(d != NULL);
  CHECK_EQ(memcmp(d, &c.net, sizeof c.net), 0);
  sim_link_params lossy = c.net, got;
  lossy.loss_ppm = SIM_PPM;
  sim_net_set_all(w, &lossy);
  CHECK_EQ(sim_link_get(w, 0, 1, &got), 0);
  CHECK_EQ(got.loss_ppm, SIM_PPM);
  CHECK_EQ(sim_net_defaults(w)->loss_ppm, c.net.loss_ppm);
  CHECK_EQ(send_u64(w, 0, 1, 1), 0);
  sim_run(w, UINT64_MAX, 0);
  CHECK_EQ(rec_count(r, R_RECV, 1), 0);
  CHECK_EQ(sim_link_set(w, 0, 1, sim_net_defaults(w)), 0);
  CHECK_EQ(send_u64(w, 0, 1, 2), 0);
  CHECK_EQ(send_u64(w, 0, 2, 3), 0);
  sim_run(w, UINT64_MAX, 0);
  CHECK_EQ(rec_count(r, R_RECV, 1), 1);
  CHECK_EQ(rec_count(r, R_RECV, 2), 0);
  sim_world_destroy(w);
  free(r);
}

TEST_MAIN(T(no_faults_delivers_everything_in_order), T(latency_bounds_and_distributions), T(loss),
          T(duplication), T(reordering), T(corruption_flips_one_bit), T(bandwidth_serializes),
          T(queue_limit_drops_excess), T(partition_full_oneway_isolate_split_heal),
          T(partition_drops_messages_in_flight), T(hold_release_and_deliver_kth), T(send_errors),
          T(per_link_streams_are_independent), T(defaults_restore_a_faulty_link))
