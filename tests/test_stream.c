/* Stream connections: connect/accept, in-order data, close, reset, refusal,
 * stalls under partitions and stall timeouts, loss as retransmission. */
#include "testlib.h"

#include <errno.h>
#include <string.h>

static const rec_event *find_conn(const recorder *r, int node, int cev) {
  for (int i = 0; i < r->n; i++)
    if (r->ev[i].kind == R_CONN && r->ev[i].node == node && r->ev[i].cev == cev)
      return &r->ev[i];
  return NULL;
}

static int count_conn(const recorder *r, int node, int cev) {
  int k = 0;
  for (int i = 0; i < r->n; i++)
    k += r->ev[i].kind == R_CONN && r->ev[i].node == node && r->ev[i].cev == cev;
  return k;
}

static int send_conn_u64(sim_world *w, int node, sim_conn c, uint64_t v) {
  uint8_t b[8];
  for (int i = 0; i < 8; i++)
    b[i] = (uint8_t)(v >> (8 * i));
  return sim_conn_send(w, node, c, b, 8);
}

/* Open 0 -> 1 and run until connected; returns the handle. */
/* Start a test on two recorder nodes (seed 1) joined by connection h: declares
 * r, c, w and h. */
#define CONN_BEGIN()                                                                               \
  FX_WORLD(2, 1);                                                                                  \
  sim_conn h = open01(w, r)

static sim_conn open01(sim_world *w, recorder *r) {
  int64_t h = sim_connect(w, 0, 1);
  CHECK(h > 0);
  CHECK_EQ(sim_conn_send(w, 0, (sim_conn)h, "x", 1), -ENOTCONN); /* not yet */
  sim_run(w, UINT64_MAX, 0);
  CHECK(find_conn(r, 1, SIM_CONN_ACCEPTED));
  CHECK(find_conn(r, 0, SIM_CONN_CONNECTED));
  CHECK_EQ(find_conn(r, 0, SIM_CONN_CONNECTED)->time, 2 * SIM_NS_PER_MS); /* one RTT */
  CHECK_EQ(sim_conn_peer(w, (sim_conn)h, 0), 1);
  CHECK_EQ(sim_conn_peer(w, (sim_conn)h, 1), 0);
  CHECK_EQ(sim_conns_open(w), 1);
  return (sim_conn)h;
}

TEST(connect_accept_and_ordered_data) {
  FX_BEGIN(2, 1);
  c.net.latency_min_ns = SIM_NS_PER_MS;
  c.net.latency_max_ns = SIM_NS_PER_MS; /* fixed: RTT = 2 ms */
  sim_world *w = recorder_world(&c);
  sim_conn h = open01(w, r);
  /* jittery latency must not reorder a stream */
  sim_link_params p = c.net;
  p.latency_max_ns = 30 * SIM_NS_PER_MS;
  sim_link_set(w, 0, 1, &p);
  for (int i = 0; i < 100; i++)
    CHECK_EQ(send_conn_u64(w, 0, h, (uint64_t)i), 0);
  uint64_t due = sim_in_flight_due(w); /* the last segment's arrival */
  sim_run(w, UINT64_MAX, 0);
  CHECK_EQ(count_conn(r, 1, SIM_CONN_DATA), 100);
  uint64_t k = 0, last = 0;
  for (int i = 0; i < r->n; i++)
    if (r->ev[i].kind == R_CONN && r->ev[i].cev == SIM_CONN_DATA) {
      CHECK_EQ(r->ev[i].val, k++);
      last = r->ev[i].time;
    }
  CHECK_EQ(due, last);
  /* and back */
  CHECK_EQ(send_conn_u64(w, 1, h, 77), 0);
  sim_run(w, UINT64_MAX, 0);
  CHECK_EQ(count_conn(r, 0, SIM_CONN_DATA), 1);
  CHECK_EQ(sim_conn_send(w, 2, h, "x", 1), -EINVAL);
  FX_END();
}

TEST(close_after_pending_data) {
  CONN_BEGIN();
  send_conn_u64(w, 0, h, 1);
  send_conn_u64(w, 0, h, 2);
  CHECK_EQ(sim_conn_close(w, 0, h), 0);
  CHECK_EQ(sim_conn_send(w, 0, h, "x", 1), -ENOTCONN);
  sim_run(w, UINT64_MAX, 0);
  CHECK_EQ(count_conn(r, 1, SIM_CONN_DATA), 2);
  const rec_event *cl = find_conn(r, 1, SIM_CONN_CLOSED);
  CHECK(cl);
  CHECK(cl > find_conn(r, 1, SIM_CONN_DATA)); /* after the data */
  /* both ends closed: the connection is gone */
  CHECK_EQ(sim_conns_open(w), 0);
  CHECK_EQ(sim_conn_send(w, 1, h, "x", 1), -ECONNRESET);
  FX_END();
}

TEST(reset_drops_in_flight_bytes) {
  CONN_BEGIN();
  send_conn_u64(w, 0, h, 1);
  CHECK_EQ(sim_conn_reset(w, h), 0);
  CHECK_EQ(sim_conn_reset(w, h), -ENOENT);
  sim_run(w, UINT64_MAX, 0);
  CHECK_EQ(count_conn(r, 1, SIM_CONN_DATA), 0);
  CHECK_EQ(count_conn(r, 0, SIM_CONN_RESET), 1);
  CHECK_EQ(count_conn(r, 1, SIM_CONN_RESET), 1);
  CHECK_EQ(sim_conn_send(w, 0, h, "x", 1), -ECONNRESET);
  CHECK_EQ(sim_get_stats(w)->conns_reset, 1);
  /* reset all connections between two nodes */
  sim_conn h2 = (sim_conn)sim_connect(w, 0, 1);
  sim_run(w, UINT64_MAX, 0);
  CHECK_EQ(sim_reset_conns(w, 1, 0), 1);
  CHECK_EQ(sim_reset_conns(w, 1, 0), 0);
  (void)h2;
  FX_END();
}

TEST(connect_to_down_node_is_refused) {
  FX_WORLD(2, 1);
  sim_node_crash(w, 1);
  int64_t h = sim_connect(w, 0, 1);
  CHECK(h > 0);
  sim_run(w, UINT64_MAX, 0);
  const rec_event *e = find_conn(r, 0, SIM_CONN_REFUSED);
  CHECK(e);
  CHECK_EQ(e->time, 2 * SIM_NS_PER_MS);
  CHECK_EQ(sim_get_stats(w)->conns_refused, 1);
  CHECK_EQ(sim_conns_open(w), 0);
  CHECK_EQ(sim_connect(w, 0, 0), -EINVAL);
  FX_END();
}

TEST(connect_through_partition_times_out) {
  FX_WORLD(2, 1);
  sim_link_block(w, 1, 0, 1); /* SYN-ACK cannot come back */
  int64_t h = sim_connect(w, 0, 1);
  sim_run(w, UINT64_MAX, 0);
  const rec_event *e = find_conn(r, 0, SIM_CONN_TIMEOUT);
  CHECK(e && h > 0);
  CHECK_EQ(e->time, c.stream.connect_timeout_ns);
  /* the half-open accepted end is torn down as well */
  CHECK(find_conn(r, 1, SIM_CONN_ACCEPTED));
  CHECK_EQ(count_conn(r, 1, SIM_CONN_TIMEOUT), 1);
  CHECK_EQ(sim_conns_open(w), 0);
  FX_END();
}

TEST(short_partition_stalls_long_one_breaks) {
  CONN_BEGIN();
  /* short partition: data is late but arrives */
  sim_link_block(w, 0, 1, 1);
  uint64_t t0 = sim_now(w);
  send_conn_u64(w, 0, h, 5);
  sim_run(w, t0 + SIM_NS_PER_S, 0);
  CHECK_EQ(count_conn(r, 1, SIM_CONN_DATA), 0);
  sim_link_block(w, 0, 1, 0);
  sim_run(w, UINT64_MAX, 0);
  const rec_event *d = find_conn(r, 1, SIM_CONN_DATA);
  CHECK(d && d->time > t0 + SIM_NS_PER_S);
  CHECK(sim_get_stats(w)->seg_retransmits > 0);
  /* long partition: both ends time out after stall_timeout */
  sim_link_block(w, 0, 1, 1);
  t0 = sim_now(w);
  send_conn_u64(w, 0, h, 6);
  sim_run(w, UINT64_MAX, 0);
  const rec_event *a = find_conn(r, 0, SIM_CONN_TIMEOUT), *b = find_conn(r, 1, SIM_CONN_TIMEOUT);
  CHECK(a && b);
  CHECK(a->time >= t0 + c.stream.stall_timeout_ns);
  CHECK(a->time <= t0 + c.stream.stall_timeout_ns + c.stream.retransmit_ns + 2 * SIM_NS_PER_MS);
  CHECK_EQ(count_conn(r, 1, SIM_CONN_DATA), 1);
  CHECK_EQ(sim_get_stats(w)->conns_timeout, 1);
  FX_END();
}

TEST(loss_on_stream_is_retransmission_delay) {
  FX_BEGIN(2, 3);
  c.net.loss_ppm = 300000;
  sim_world *w = recorder_world(&c);
  int64_t h;
  do { /* the handshake itself may be delayed by loss */
    h = sim_connect(w, 0, 1);
    sim_run(w, UINT64_MAX, 0);
  } while (!find_conn(r, 0, SIM_CONN_CONNECTED));
  for (int i = 0; i < 200; i++)
    send_conn_u64(w, 0, (sim_conn)h, (uint64_t)i);
  sim_run(w, UINT64_MAX, 0);
  CHECK_EQ(count_conn(r, 1, SIM_CONN_DATA), 200); /* nothing lost */
  uint64_t k = 0;
  for (int i = 0; i < r->n; i++)
    if (r->ev[i].kind == R_CONN && r->ev[i].cev == SIM_CONN_DATA)
      CHECK_EQ(r->ev[i].val, k++);
  CHECK(sim_get_stats(w)->seg_retransmits > 40);
  FX_END();
}

TEST(crash_resets_peer_connections) {
  CONN_BEGIN();
  send_conn_u64(w, 1, h, 9);
  sim_node_crash(w, 0);
  sim_run(w, UINT64_MAX, 0);
  CHECK_EQ(count_conn(r, 1, SIM_CONN_RESET), 1);
  CHECK_EQ(count_conn(r, 0, SIM_CONN_RESET), 0); /* the crashed end hears nothing */
  CHECK_EQ(count_conn(r, 0, SIM_CONN_DATA), 0);
  CHECK_EQ(sim_conns_open(w), 0);
  FX_END();
}

TEST(connection_budget) {
  FX_BEGIN(2, 1);
  c.budgets.max_conns = 3;
  sim_world *w = recorder_world(&c);
  for (int i = 0; i < 3; i++)
    CHECK(sim_connect(w, 0, 1) > 0);
  CHECK_EQ(sim_connect(w, 0, 1), -EMFILE);
  FX_END();
}

TEST(reproducible_with_faults) {
  uint64_t hs[2];
  for (int k = 0; k < 2; k++) {
    recorder *r = recorder_new();
    sim_config c = recorder_config(r, 3, 5);
    c.tiebreak = SIM_TIEBREAK_CHOICE;
    c.net.latency_max_ns = 20 * SIM_NS_PER_MS;
    c.net.loss_ppm = 200000;
    sim_world *w = recorder_world(&c);
    int64_t a = sim_connect(w, 0, 1), b = sim_connect(w, 2, 1);
    sim_run(w, 2 * SIM_NS_PER_S, 0);
    for (int i = 0; i < 50; i++) {
      send_conn_u64(w, 0, (sim_conn)a, (uint64_t)i);
      send_conn_u64(w, 2, (sim_conn)b, (uint64_t)i);
      sim_run(w, sim_now(w) + 3 * SIM_NS_PER_MS, 0);
      if (i == 25)
        sim_conn_reset(w, (sim_conn)b);
    }
    sim_run(w, UINT64_MAX, 0);
    hs[k] = sim_trace_hash(w);
    CHECK(rec_count(r, R_CONN, 1) > 30);
    sim_world_destroy(w);
    free(r);
  }
  CHECK_HASH(hs[0], hs[1]);
}

TEST_MAIN(T(connect_accept_and_ordered_data), T(close_after_pending_data),
          T(reset_drops_in_flight_bytes), T(connect_to_down_node_is_refused),
          T(connect_through_partition_times_out), T(short_partition_stalls_long_one_breaks),
          T(loss_on_stream_is_retransmission_delay), T(crash_resets_peer_connections),
          T(connection_budget), T(reproducible_with_faults))
