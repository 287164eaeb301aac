/* Nodes: crash, restart, pause/resume, clocks, code-level fault points. */
#include "testlib.h"

#include <errno.h>
#include <string.h>

TEST(crash_drops_timers_and_traffic_both_ways) {
  FX_BEGIN(3, 1);
  c.net.latency_min_ns = c.net.latency_max_ns = 10 * SIM_NS_PER_MS;
  sim_world *w = recorder_world(&c);
  sim_timer_start(w, 1, 5 * SIM_NS_PER_MS, 1);
  send_u64(w, 0, 1, 1); /* to the node that crashes */
  send_u64(w, 1, 2, 2); /* from it */
  send_u64(w, 0, 2, 3); /* unrelated */
  sim_run(w, SIM_NS_PER_MS, 0);
  CHECK_EQ(sim_node_crash(w, 1), 0);
  CHECK(!sim_node_up(w, 1));
  CHECK_EQ(rec_count(r, R_TEARDOWN, 1), 1);
  CHECK_EQ(r->ev[r->n - 1].val, SIM_TEARDOWN_CRASH);
  CHECK_EQ(sim_node_crash(w, 1), 0); /* no-op */
  CHECK_EQ(rec_count(r, R_TEARDOWN, 1), 1);
  sim_run(w, UINT64_MAX, 0);
  CHECK_EQ(rec_count(r, R_TIMER, 1), 0);
  CHECK_EQ(rec_count(r, R_RECV, 1), 0);
  CHECK_EQ(rec_count(r, R_RECV, 2), 1);
  CHECK_EQ(r->ev[r->n - 1].val, 3);
  const sim_stats *s = sim_get_stats(w);
  CHECK_EQ(s->crashes, 1);
  CHECK_EQ(s->dropped_down + s->dropped_sender_crash, 2);
  CHECK_EQ(sim_timer_start(w, 1, 1, 1), 0); /* down: no timers */
  CHECK_EQ(send_u64(w, 1, 0, 1), -EHOSTDOWN);
  FX_END();
}

static void noop_call(sim_world *w, void *arg) {
  (void)w;
  (void)arg;
}

/* A restart whose boot finds no room (the pending-event budget) schedules
 * nothing, so it does not count as a boot on the way: the next restart
 * tries again rather than being refused with -EALREADY. */
TEST(restart_without_room_leaves_no_boot_pending) {
  FX_BEGIN(2, 1);
  c.budgets.max_pending = 4;
  sim_world *w = recorder_world(&c);
  sim_node_crash(w, 1);
  int filled = 0;
  while (filled < 16 && sim_at(w, SIM_NS_PER_MS, noop_call, NULL) == 0)
    filled++;
  CHECK(filled < 16);
  CHECK_EQ(sim_node_restart(w, 1), -ENOSPC);
  CHECK_EQ(sim_node_restart(w, 1), -ENOSPC);
  CHECK(!sim_node_up(w, 1));
  FX_END();
}

TEST(restart_boots_again_with_new_incarnation) {
  FX_WORLD(2, 1);
  CHECK_EQ(sim_node_incarnation(w, 1), 0);
  CHECK_EQ(sim_node_restart(w, 1), -EALREADY);
  sim_node_crash(w, 1);
  CHECK_EQ(sim_node_restart(w, 1), 0);
  /* its boot is on the way: a second restart is refused, not counted */
  CHECK_EQ(sim_node_restart(w, 1), -EALREADY);
  sim_run(w, UINT64_MAX, 0);
  CHECK(sim_node_up(w, 1));
  CHECK_EQ(sim_node_incarnation(w, 1), 1);
  CHECK_EQ(rec_count(r, R_BOOT, 1), 2);
  CHECK_EQ(r->ev[r->n - 1].kind, R_BOOT);
  CHECK_EQ(r->ev[r->n - 1].val, 1); /* restart flag */
  send_u64(w, 0, 1, 4);
  sim_run(w, UINT64_MAX, 0);
  CHECK_EQ(rec_count(r, R_RECV, 1), 1);
  CHECK_EQ(sim_get_stats(w)->restarts, 1);
  sim_world_destroy(w);
  /* destroy tears down live nodes */
  CHECK_EQ(rec_count(r, R_TEARDOWN, -1), 3);
  free(r);
}

TEST(pause_defers_events_until_resume) {
  FX_WORLD(2, 1);
  CHECK_EQ(sim_node_pause(w, 1), 0);
  CHECK_EQ(sim_node_pause(w, 1), -EALREADY);
  CHECK(sim_node_paused(w, 1) && sim_node_up(w, 1));
  sim_timer_start(w, 1, 5 * SIM_NS_PER_MS, 7);
  for (int i = 0; i < 3; i++)
    send_u64(w, 0, 1, (uint64_t)i);
  sim_run(w, 100 * SIM_NS_PER_MS, 0);
  CHECK_EQ(rec_count(r, R_RECV, 1) + rec_count(r, R_TIMER, 1), 0);
  CHECK_EQ(sim_node_resume(w, 1), 0);
  CHECK_EQ(sim_node_resume(w, 1), -EALREADY);
  sim_run(w, UINT64_MAX, 0);
  CHECK_EQ(rec_count(r, R_RECV, 1), 3);
  CHECK_EQ(rec_count(r, R_TIMER, 1), 1);
  /* delivered late, in their original order: 3 messages at 1 ms, timer at 5 ms */
  int k = 0;
  for (int i = 0; i < r->n; i++) {
    if (r->ev[i].node != 1 || (r->ev[i].kind != R_RECV && r->ev[i].kind != R_TIMER))
      continue;
    CHECK(r->ev[i].time >= 100 * SIM_NS_PER_MS);
    if (k < 3)
      CHECK(r->ev[i].kind == R_RECV && r->ev[i].val == (uint64_t)k);
    else
      CHECK_EQ(r->ev[i].kind, R_TIMER);
    k++;
  }
  CHECK_EQ(sim_get_stats(w)->pauses, 1);
  FX_END();
}

/* While a node is paused, other events may fill the heap its deferred
 * events came out of: resuming must grow it (within the budget), not stop
 * the run. The old code stopped every such run early, silently, as if the
 * pending-events budget had been reached. */
TEST(resume_after_the_heap_filled_up) {
  FX_WORLD(2, 1);
  CHECK_EQ(sim_node_pause(w, 1), 0);
  for (int i = 0; i < 100; i++)
    send_u64(w, 0, 1, (uint64_t)i);
  sim_run(w, 10 * SIM_NS_PER_MS, 0); /* all 100 deferred at n1 */
  for (int i = 0; i < 100; i++)
    CHECK(sim_timer_start(w, 0, SIM_NS_PER_S, (uint64_t)i) != 0);
  CHECK_EQ(sim_node_resume(w, 1), 0);
  CHECK(sim_budget_reason(w) == NULL);
  sim_run(w, UINT64_MAX, 0);
  CHECK(sim_budget_reason(w) == NULL);
  CHECK_EQ(rec_count(r, R_RECV, 1), 100);
  CHECK_EQ(rec_count(r, R_TIMER, 0), 100);
  FX_END();
}

TEST(cancel_timer_of_paused_node) {
  FX_WORLD(1, 1);
  sim_node_pause(w, 0);
  sim_timer t = sim_timer_start(w, 0, SIM_NS_PER_MS, 1);
  sim_timer_start(w, 0, 2 * SIM_NS_PER_MS, 2);
  sim_run(w, 10 * SIM_NS_PER_MS, 0); /* both deferred */
  CHECK_EQ(sim_timer_cancel(w, t), 0);
  sim_node_resume(w, 0);
  sim_run(w, UINT64_MAX, 0);
  CHECK_EQ(rec_count(r, R_TIMER, 0), 1);
  CHECK_EQ(r->ev[r->n - 1].val, 2);
  FX_END();
}

TEST(crash_while_paused_discards_deferred) {
  FX_WORLD(2, 1);
  sim_node_pause(w, 1);
  send_u64(w, 0, 1, 1);
  sim_timer_start(w, 1, SIM_NS_PER_MS, 1);
  sim_run(w, 10 * SIM_NS_PER_MS, 0);
  sim_node_crash(w, 1);
  sim_node_restart(w, 1);
  sim_run(w, UINT64_MAX, 0);
  CHECK_EQ(rec_count(r, R_RECV, 1) + rec_count(r, R_TIMER, 1), 0);
  CHECK(!sim_node_paused(w, 1));
  FX_END();
}

TEST(clock_offset_drift_and_jump) {
  FX_WORLD(2, 1);
  CHECK_EQ(sim_clock(w, 0), 0);
  sim_clock_set_offset(w, 0, 5 * (int64_t)SIM_NS_PER_MS);
  sim_run(w, SIM_NS_PER_S, 0);
  CHECK_EQ(sim_clock(w, 0), (int64_t)(SIM_NS_PER_S + 5 * SIM_NS_PER_MS));
  CHECK_EQ(sim_clock(w, 1), (int64_t)SIM_NS_PER_S);
  /* +10 % drift from t = 1 s */
  CHECK_EQ(sim_clock_set_drift(w, 0, 100000), 0);
  CHECK_EQ(sim_clock_set_drift(w, 0, 900000), -EINVAL);
  sim_run(w, 2 * SIM_NS_PER_S, 0);
  CHECK_EQ(sim_clock(w, 0), (int64_t)(2 * SIM_NS_PER_S + 5 * SIM_NS_PER_MS + 100 * SIM_NS_PER_MS));
  /* a timer of 110 ms local on a 10 % fast clock fires after 100 ms true */
  sim_timer_start(w, 0, 110 * SIM_NS_PER_MS, 1);
  sim_run(w, UINT64_MAX, 0);
  CHECK_EQ(r->ev[r->n - 1].time, 2 * SIM_NS_PER_S + 100 * SIM_NS_PER_MS);
  /* jumps move the clock, not timers */
  int64_t before = sim_clock(w, 1);
  sim_clock_jump(w, 1, -3 * (int64_t)SIM_NS_PER_S);
  CHECK_EQ(sim_clock(w, 1), before - 3 * (int64_t)SIM_NS_PER_S);
  CHECK(sim_clock(w, 1) < 0);
  /* setting the offset keeps the drift */
  sim_clock_set_offset(w, 0, 0);
  CHECK_EQ(sim_clock(w, 0), (int64_t)sim_now(w));
  sim_run(w, sim_now(w) + SIM_NS_PER_S, 0);
  CHECK_EQ(sim_clock(w, 0), (int64_t)sim_now(w) + 100 * (int64_t)SIM_NS_PER_MS);
  CHECK_EQ(sim_get_stats(w)->clock_changes, 4);
  /* extreme values saturate instead of overflowing (UBSan would abort) */
  sim_clock_jump(w, 1, INT64_MAX);
  sim_clock_jump(w, 1, INT64_MAX);
  CHECK_EQ(sim_clock(w, 1), INT64_MAX);
  sim_clock_set_offset(w, 1, INT64_MIN);
  sim_clock_jump(w, 1, INT64_MIN);
  CHECK_EQ(sim_clock(w, 1), INT64_MIN + (int64_t)sim_now(w)); /* offset saturated */
  CHECK_EQ(sim_clock_set_drift(w, 1, -200000), 0);
  CHECK_EQ(sim_clock_set_drift(w, 1, 200001), -EINVAL);
  FX_END();
}

TEST(monotonic_clock_drifts_but_ignores_offset_and_jumps) {
  FX_WORLD(2, 1);
  sim_clock_set_offset(w, 0, -7 * (int64_t)SIM_NS_PER_S);
  sim_clock_jump(w, 0, 3 * (int64_t)SIM_NS_PER_S);
  sim_run(w, SIM_NS_PER_S, 0);
  CHECK_EQ(sim_clock_mono(w, 0), (int64_t)SIM_NS_PER_S);
  CHECK_EQ(sim_clock(w, 0), (int64_t)SIM_NS_PER_S - 4 * (int64_t)SIM_NS_PER_S);
  /* -20 % for 1 s, then +10 % for 1 s: 0.8 s + 1.1 s on top of the first 1 s */
  sim_clock_set_drift(w, 0, -200000);
  sim_run(w, 2 * SIM_NS_PER_S, 0);
  sim_clock_set_drift(w, 0, 100000);
  sim_clock_jump(w, 0, -(int64_t)SIM_NS_PER_S);
  sim_run(w, 3 * SIM_NS_PER_S, 0);
  CHECK_EQ(sim_clock_mono(w, 0), (int64_t)(2900 * SIM_NS_PER_MS));
  CHECK_EQ(sim_clock(w, 0), (int64_t)(2900 * SIM_NS_PER_MS) - 5 * (int64_t)SIM_NS_PER_S);
  CHECK_EQ(sim_clock_mono(w, 1), (int64_t)(3 * SIM_NS_PER_S));
  CHECK_EQ(sim_clock_mono(w, 9), 0);
  FX_END();
}

/* Fires of fault point `site` on node 0 over 1000 hits. */
static int fires(sim_config *c, uint32_t site, int force, int64_t ppm) {
  sim_world *w = recorder_world(c);
  if (force)
    sim_faultpoint_force(w, site, ppm);
  int k = 0;
  for (int i = 0; i < 1000; i++)
    k += sim_faultpoint(w, 0, site);
  CHECK_EQ(sim_get_stats(w)->faultpoints_fired, (uint64_t)k);
  sim_world_destroy(w);
  return k;
}

TEST(fault_points) {
  FX_BEGIN(1, 1);
  CHECK_EQ(fires(&c, 1, 0, 0), 0); /* off by default */
  CHECK_EQ(fires(&c, 1, 1, SIM_PPM), 1000);
  CHECK_EQ(fires(&c, 1, 1, -1), 0);
  int k = fires(&c, 1, 1, 100000);
  CHECK(k > 60 && k < 140);
  CHECK_EQ(fires(&c, 1, 1, 100000), k); /* reproducible */
  /* BUGGIFY-style: each site enabled for the run with enable_ppm, then
   * fires with fire_ppm on each hit */
  c.faultpoints.enable_ppm = 250000;
  c.faultpoints.fire_ppm = 250000;
  int enabled = 0;
  for (uint32_t site = 0; site < 200; site++) {
    int f = fires(&c, site, 0, 0);
    if (f) {
      enabled++;
      CHECK(f > 180 && f < 320);
    }
  }
  CHECK(enabled > 30 && enabled < 70);
  sim_world *w = recorder_world(&c);
  CHECK_EQ(sim_faultpoint(w, 5, 1), 0); /* bad node */
  FX_END();
}

/* sim_faultpoint_nth: the nth hit from arming fires once, on whichever node
 * makes it, whatever the rate; the other hits follow the rate. */
TEST(fault_point_one_shot_fires_at_the_nth_hit) {
  FX_WORLD(2, 1);
  CHECK_EQ(sim_faultpoint_force(w, 7, 0), 0); /* rate 0: only the one-shot */
  CHECK_EQ(sim_faultpoint_nth(w, 7, 5), 0);
  int fired_at = 0;
  for (int i = 1; i <= 20; i++)
    if (sim_faultpoint(w, i & 1, 7))
      fired_at = fired_at ? -1 : i; /* -1: fired twice */
  CHECK_EQ(fired_at, 5);
  CHECK_EQ(sim_get_stats(w)->faultpoints_fired, 1u);
  CHECK_EQ(sim_faultpoint(w, 0, 8), 0); /* other sites untouched */
  /* armed again, then disarmed before its hit: nothing fires */
  CHECK_EQ(sim_faultpoint_nth(w, 7, 3), 0);
  CHECK_EQ(sim_faultpoint(w, 0, 7), 0);
  CHECK_EQ(sim_faultpoint_nth(w, 7, 0), 0);
  for (int i = 0; i < 10; i++)
    CHECK_EQ(sim_faultpoint(w, 0, 7), 0);
  /* at a full rate every hit fires anyway; the one-shot adds no second fire */
  CHECK_EQ(sim_faultpoint_force(w, 9, SIM_PPM), 0);
  CHECK_EQ(sim_faultpoint_nth(w, 9, 2), 0);
  for (int i = 0; i < 4; i++)
    CHECK_EQ(sim_faultpoint(w, 1, 9), 1);
  CHECK_EQ(sim_get_stats(w)->faultpoints_fired, 5u);
  CHECK_EQ(sim_faultpoint_nth(w, 11, 0), 0); /* disarming an unknown site */
  FX_END();
}

static void world_call(sim_world *w, void *arg) {
  (void)w;
  (void)arg;
}

/* sim_event_node names the node each event ran on, one event at a time:
 * a timer's owner, a message's receiver, -1 for world-level calls. */
TEST(event_node_is_the_node_each_event_ran_on) {
  FX_BEGIN(3, 1);
  c.net.latency_min_ns = c.net.latency_max_ns = 10 * SIM_NS_PER_MS;
  sim_world *w = recorder_world(&c);
  sim_run(w, SIM_NS_PER_MS, 0); /* the boots */
  uint64_t t0 = sim_now(w);
  CHECK(sim_timer_start(w, 1, 5 * SIM_NS_PER_MS, 1) > 0);
  CHECK_EQ(send_u64(w, 0, 2, 1), 0);
  CHECK_EQ(sim_at(w, t0 + 7 * SIM_NS_PER_MS, world_call, NULL), 0);
  CHECK(sim_step(w));
  CHECK_EQ(sim_now(w), t0 + 5 * SIM_NS_PER_MS);
  CHECK_EQ(sim_event_node(w), 1);
  CHECK(sim_step(w));
  CHECK_EQ(sim_event_node(w), -1);
  CHECK(sim_step(w));
  CHECK_EQ(rec_count(r, R_RECV, 2), 1);
  CHECK_EQ(sim_event_node(w), 2);
  FX_END();
}

TEST_MAIN(T(resume_after_the_heap_filled_up), T(event_node_is_the_node_each_event_ran_on),
          T(crash_drops_timers_and_traffic_both_ways), T(restart_boots_again_with_new_incarnation),
          T(restart_without_room_leaves_no_boot_pending), T(pause_defers_events_until_resume),
          T(cancel_timer_of_paused_node), T(crash_while_paused_discards_deferred),
          T(clock_offset_drift_and_jump), T(monotonic_clock_drifts_but_ignores_offset_and_jumps),
          T(fault_points), T(fault_point_one_shot_fires_at_the_nth_hit))
