/* Scheduler, timers, tie-break rule and the choice source. */
#include "testlib.h"

#include <errno.h>
#include <string.h>

TEST(timers_fire_in_time_order) {
  FX_WORLD(2, 1);
  uint64_t delays[] = {50, 10, 30, 20, 40};
  for (int i = 0; i < 5; i++)
    CHECK(sim_timer_start(w, i % 2, delays[i] * SIM_NS_PER_MS, delays[i]) != 0);
  CHECK_EQ(sim_run(w, UINT64_MAX, 0), SIM_STOP_QUIESCENT);
  uint64_t last = 0;
  int fired = 0;
  for (int i = 0; i < r->n; i++) {
    if (r->ev[i].kind != R_TIMER)
      continue;
    CHECK_EQ(r->ev[i].time, r->ev[i].val * SIM_NS_PER_MS);
    CHECK(r->ev[i].time >= last);
    last = r->ev[i].time;
    fired++;
  }
  CHECK_EQ(fired, 5);
  FX_END();
}

/* 40 timers due at the same moment (tags 0..39, started in that order on
 * nodes 0..3 in turn) under tie-break rule `rule`: the order they fired
 * in, as a hash (h * 131 + tag), and in *in_order whether it is the
 * order they were started in. */
static uint64_t timer_order(int rule, uint64_t seed, const uint8_t *tape, size_t tape_len,
                            int *in_order) {
  FX_BEGIN(4, seed);
  c.tiebreak = rule;
  c.tape = tape;
  c.tape_len = tape_len;
  sim_world *w = recorder_world(&c);
  for (int i = 0; i < 40; i++)
    sim_timer_start(w, i % 4, SIM_NS_PER_MS, (uint64_t)i);
  sim_run(w, UINT64_MAX, 0);
  uint64_t h = 0;
  int k = 0, ordered = 1;
  for (int i = 0; i < r->n; i++)
    if (r->ev[i].kind == R_TIMER) {
      h = h * 131 + r->ev[i].val;
      ordered &= r->ev[i].val == (uint64_t)k++;
    }
  CHECK_EQ(k, 40);
  FX_END();
  if (in_order)
    *in_order = ordered;
  return h;
}

TEST(fifo_tiebreak_keeps_scheduling_order) {
  int in_order = 0;
  timer_order(SIM_TIEBREAK_FIFO, 1, NULL, 0, &in_order);
  CHECK(in_order);
}

/* Order of 40 simultaneous timers under the CHOICE rule, as a hash. */
static uint64_t choice_order(uint64_t seed, const uint8_t *tape, size_t tape_len) {
  return timer_order(SIM_TIEBREAK_CHOICE, seed, tape, tape_len, NULL);
}

TEST(choice_tiebreak_is_a_decision) {
  uint64_t a = choice_order(1, NULL, 0);
  CHECK_HASH(a, choice_order(1, NULL, 0)); /* reproducible */
  int differ = 0;
  for (uint64_t s = 2; s < 10; s++)
    differ += choice_order(s, NULL, 0) != a;
  CHECK(differ >= 6); /* the seed reorders simultaneous events */
  /* the tape steers the order too: a full tape sets the top byte of every
   * tie-break priority */
  uint8_t tape[SIM_TAPE_MAX];
  memset(tape, 0x80, sizeof tape);
  uint64_t flat = choice_order(1, tape, sizeof tape);
  CHECK_HASH(flat, choice_order(1, tape, sizeof tape));
  for (int i = 0; i < SIM_TAPE_MAX; i++)
    tape[i] = (uint8_t)(i * 151 + 7);
  int changed = choice_order(1, tape, sizeof tape) != flat;
  CHECK(changed); /* the tape steers the order too */
}

TEST(timer_cancel) {
  FX_WORLD(1, 1);
  sim_timer a = sim_timer_start(w, 0, 10 * SIM_NS_PER_MS, 1);
  sim_timer b = sim_timer_start(w, 0, 20 * SIM_NS_PER_MS, 2);
  CHECK(a && b && a != b);
  CHECK_EQ(sim_timer_cancel(w, a), 0);
  CHECK_EQ(sim_timer_cancel(w, a), -ENOENT);
  CHECK_EQ(sim_timer_cancel(w, 0), -ENOENT);
  CHECK_EQ(sim_timer_cancel(w, 0xdeadbeef00000001ull), -ENOENT);
  sim_run(w, UINT64_MAX, 0);
  CHECK_EQ(rec_count(r, R_TIMER, 0), 1);
  CHECK_EQ(r->ev[r->n - 1].val, 2);
  CHECK_EQ(sim_timer_cancel(w, b), -ENOENT); /* already fired */
  /* a reused slot does not accept the old handle */
  sim_timer d = sim_timer_start(w, 0, SIM_NS_PER_MS, 3);
  CHECK(d != a && d != b);
  CHECK_EQ(sim_timer_cancel(w, b), -ENOENT);
  CHECK_EQ(sim_timer_cancel(w, d), 0);
  FX_END();
}

TEST(run_until_and_step) {
  FX_BEGIN(1, 1);
  sim_world *w = sim_world_create(&c);
  CHECK_EQ(sim_now(w), 0);
  CHECK_EQ(sim_step(w), 1); /* the boot */
  CHECK_EQ(rec_count(r, R_BOOT, 0), 1);
  sim_timer_start(w, 0, 100, 1);
  sim_timer_start(w, 0, 200, 2);
  CHECK_EQ(sim_run(w, 150, 0), SIM_STOP_TIME);
  CHECK_EQ(sim_now(w), 150);
  CHECK_EQ(rec_count(r, R_TIMER, 0), 1);
  CHECK_EQ(sim_run(w, UINT64_MAX, 1), SIM_STOP_STEPS);
  CHECK_EQ(rec_count(r, R_TIMER, 0), 2);
  CHECK_EQ(sim_run(w, UINT64_MAX, 0), SIM_STOP_QUIESCENT);
  CHECK_EQ(sim_step(w), 0);
  FX_END();
}

static void at_cb(sim_world *w, void *arg) {
  uint64_t *p = arg;
  *p = sim_now(w);
}

TEST(world_callbacks) {
  FX_WORLD(1, 1);
  uint64_t when = 0;
  CHECK_EQ(sim_at(w, 12345, at_cb, &when), 0);
  CHECK_EQ(sim_at(w, 1, NULL, NULL), -EINVAL);
  sim_run(w, UINT64_MAX, 0);
  CHECK_EQ(when, 12345);
  FX_END();
}

TEST(draw_is_pure_and_local) {
  FX_BEGIN(1, 7);
  sim_world *a = sim_world_create(&c);
  c.seed = 8;
  sim_world *b = sim_world_create(&c);
  int same = 0;
  for (uint64_t n = 0; n < 1000; n++) {
    CHECK_HASH(sim_draw(a, 5, n), sim_draw(a, 5, n));
    same += sim_draw(a, 5, n) == sim_draw(b, 5, n);
  }
  CHECK_EQ(same, 0);
  sim_world_destroy(a);
  sim_world_destroy(b);
  free(r);
}

/* With a tape, changing one byte changes only the decisions that map to its
 * slot; lengthening it leaves decisions of earlier slots unchanged. */
TEST(tape_locality) {
  recorder *r = recorder_new();
  uint8_t t1[512], t2[512];
  for (int i = 0; i < 512; i++)
    t1[i] = t2[i] = (uint8_t)(i * 37);
  t2[100] ^= 0x5a;
  sim_config c = recorder_config(r, 1, 3);
  c.tape = t1;
  c.tape_len = sizeof t1;
  sim_world *a = sim_world_create(&c);
  c.tape = t2;
  sim_world *b = sim_world_create(&c);
  c.tape = t1;
  c.tape_len = 400;
  sim_world *shorter = sim_world_create(&c);
  c.tape = NULL;
  c.tape_len = 0;
  sim_world *none = sim_world_create(&c);
  int differ = 0, from_tape = 0;
  for (uint64_t s = 0; s < 20; s++)
    for (uint64_t n = 0; n < 5000; n++) {
      uint64_t va = sim_draw(a, s, n), vb = sim_draw(b, s, n), vs = sim_draw(shorter, s, n),
               v0 = sim_draw(none, s, n);
      if (va != vb) {
        differ++;
        CHECK_EQ(va >> 56, t1[100]);
        CHECK_EQ(vb >> 56, t2[100]);
        CHECK_EQ(va << 8, vb << 8); /* low bits from the PRNG, unchanged */
      }
      if (va != vs) /* only decisions in slots 400..511 may differ */
        CHECK_EQ(vs, v0);
      if ((va >> 56) != (v0 >> 56))
        from_tape++;
    }
  CHECK(differ > 0 && differ < 100000 / 100);
  CHECK(from_tape > 10000);
  sim_world_destroy(a);
  sim_world_destroy(b);
  sim_world_destroy(shorter);
  sim_world_destroy(none);
  free(r);
}

TEST(range_and_chance) {
  recorder *r = recorder_new();
  uint8_t zero[SIM_TAPE_MAX], ones[SIM_TAPE_MAX];
  memset(zero, 0, sizeof zero);
  memset(ones, 0xff, sizeof ones);
  sim_config c = recorder_config(r, 1, 3);
  sim_world *w = sim_world_create(&c);
  c.tape = zero;
  c.tape_len = sizeof zero;
  sim_world *z = sim_world_create(&c);
  c.tape = ones;
  sim_world *o = sim_world_create(&c);
  int fired = 0, hit_lo = 0, hit_hi = 0;
  for (uint64_t n = 0; n < 10000; n++) {
    uint64_t v = sim_range(w, 1, n, 10, 20);
    CHECK(v >= 10 && v <= 20);
    hit_lo += v == 10;
    hit_hi += v == 20;
    fired += sim_chance(w, 2, n, 100000);
    CHECK(sim_chance(z, 2, n, 10000));   /* top byte 0 -> rare decisions fire */
    CHECK(!sim_chance(o, 2, n, 990000)); /* top byte ff -> likely ones do not */
    CHECK(!sim_chance(w, 2, n, 0));
    CHECK(sim_chance(w, 2, n, SIM_PPM));
    CHECK(sim_range(z, 3, n, 1000, 2000) < 1004);
    CHECK(sim_range(o, 3, n, 1000, 2000) > 1995);
  }
  CHECK(hit_lo > 0 && hit_hi > 0);
  CHECK(fired > 900 && fired < 1100); /* 10 % of 10000 */
  sim_world_destroy(w);
  sim_world_destroy(z);
  sim_world_destroy(o);
  free(r);
}

TEST(node_random_streams_are_independent) {
  FX_BEGIN(2, 3);
  sim_world *a = recorder_world(&c);
  sim_world *b = recorder_world(&c);
  for (int i = 0; i < 50; i++)
    sim_node_random(b, 1); /* node 1 draws more in b */
  for (int i = 0; i < 100; i++)
    CHECK_HASH(sim_node_random(a, 0), sim_node_random(b, 0));
  CHECK_EQ(sim_node_random(a, 99), 0);
  sim_world_destroy(a);
  sim_world_destroy(b);
  free(r);
}

/* Stream ids keep 8 bits of purpose, 24 of the first subject and 32 of the
 * second (sim.h): subjects past 16 bits still name streams of their own. */
TEST(stream_ids_keep_24_and_32_bit_subjects) {
  uint64_t base = sim_stream_id(0x81, 1, 2);
  CHECK(sim_stream_id(0x81, 1 + (1u << 16), 2) != base);
  CHECK(sim_stream_id(0x81, 1 + (1u << 23), 2) != base);
  CHECK(sim_stream_id(0x81, 1, 2 + (1u << 16)) != base);
  CHECK(sim_stream_id(0x81, 1, 2 + (1u << 31)) != base);
  CHECK(sim_stream_id(0x82, 1, 2) != base);
  CHECK(sim_stream_id(0x81, 1 + (1u << 24), 2) == base); /* beyond 24 bits: dropped */
}

TEST_MAIN(T(timers_fire_in_time_order), T(fifo_tiebreak_keeps_scheduling_order),
          T(choice_tiebreak_is_a_decision), T(timer_cancel), T(run_until_and_step),
          T(world_callbacks), T(draw_is_pure_and_local), T(tape_locality), T(range_and_chance),
          T(node_random_streams_are_independent), T(stream_ids_keep_24_and_32_bit_subjects))
