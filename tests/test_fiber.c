/* Fibers (harness/program/fiber.c): resume and yield hand control back and
 * forth in order; a fiber keeps its stack, its locals and its callee-saved
 * state across switches; many fibers interleave; a finished one says so; an
 * abandoned one (a crashed node) is freed mid-way. */
#include "program/fiber.h"
#include "testlib.h"

#include <string.h>

static int trail[64], ntrail;

static void count_to_three(void *arg) {
  int base = *(int *)arg;
  for (int i = 0; i < 3; i++) {
    trail[ntrail++] = base + i;
    sfp_fiber_yield();
  }
}

TEST(resume_and_yield_alternate_in_order) {
  ntrail = 0;
  int a = 10, b = 20;
  sfp_fiber *fa = sfp_fiber_new(count_to_three, &a, 64 * 1024);
  sfp_fiber *fb = sfp_fiber_new(count_to_three, &b, 64 * 1024);
  CHECK(fa && fb);
  CHECK(sfp_fiber_current() == NULL);
  for (int i = 0; i < 3; i++) {
    CHECK_EQ(sfp_fiber_resume(fa), 1);
    CHECK_EQ(sfp_fiber_resume(fb), 1);
  }
  CHECK_EQ(sfp_fiber_resume(fa), 0); /* returned */
  CHECK_EQ(sfp_fiber_resume(fb), 0);
  int want[] = {10, 20, 11, 21, 12, 22};
  CHECK_EQ(ntrail, 6);
  CHECK(memcmp(trail, want, sizeof want) == 0);
  sfp_fiber_free(fa);
  sfp_fiber_free(fb);
}

/* Deep recursion with locals live across yields. */
static int depth_sum(int d) {
  volatile char pad[256];
  pad[0] = (char)d;
  if (d == 0) {
    sfp_fiber_yield();
    return 0;
  }
  int r = depth_sum(d - 1) + d;
  return r + pad[0] - (char)d;
}

static void deep(void *arg) {
  *(int *)arg = depth_sum(200);
}

static double fp_result;
static void floats(void *arg) {
  (void)arg;
  double x = 1.5;
  for (int i = 0; i < 10; i++) {
    x = x * 1.25 + 0.5;
    sfp_fiber_yield();
  }
  fp_result = x;
}

TEST(a_fiber_keeps_its_stack_and_registers_across_switches) {
  int out = -1;
  sfp_fiber *f = sfp_fiber_new(deep, &out, 256 * 1024);
  sfp_fiber *g = sfp_fiber_new(floats, NULL, 64 * 1024);
  CHECK(f && g);
  CHECK_EQ(sfp_fiber_resume(f), 1); /* at the bottom, yielded */
  double y = 1.5;
  for (int i = 0; i < 10; i++) {
    CHECK_EQ(sfp_fiber_resume(g), 1);
    y = y * 1.25 + 0.5;
  }
  CHECK_EQ(sfp_fiber_resume(g), 0);
  CHECK(fp_result == y);
  CHECK_EQ(sfp_fiber_resume(f), 0);
  CHECK_EQ(out, 200 * 201 / 2);
  sfp_fiber_free(f);
  sfp_fiber_free(g);
}

static void forever(void *arg) {
  int *n = arg;
  for (;;) {
    (*n)++;
    sfp_fiber_yield();
  }
}

TEST(an_abandoned_fiber_is_freed_mid_way) {
  int n = 0;
  sfp_fiber *f = sfp_fiber_new(forever, &n, 64 * 1024);
  CHECK(f);
  for (int i = 0; i < 5; i++)
    CHECK_EQ(sfp_fiber_resume(f), 1);
  CHECK_EQ(n, 5);
  sfp_fiber_free(f); /* never finished: its frames are dropped */
  sfp_fiber_free(NULL);
}

/* Yields with small arrays live in many frames: under ASan their red
 * zones are poisoned while the fiber is dropped. */
static int redzones(int d) {
  volatile char a[24];
  a[0] = (char)d;
  if (d == 0)
    sfp_fiber_yield();
  else
    a[1] = (char)redzones(d - 1);
  return a[0] + a[1];
}

static void dropped_deep(void *arg) {
  (void)arg;
  redzones(64);
}

/* Writes a large array over the stack the dropped fiber used, through the
 * C library (ASan checks the range against its shadow) from a frame ASan
 * does not instrument, as its own runtime's frames are not. */
static void *(*volatile fill)(void *, int, size_t) = memset;
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
__attribute__((no_sanitize("address")))
#endif
#endif
static void
big_frame(void *arg) {
  char big[16 * 1024];
  fill(big, 1, sizeof big);
  *(int *)arg = big[sizeof big - 1];
}

TEST(a_stack_mapped_where_a_dropped_one_was_is_clean) {
  for (int round = 0; round < 4; round++) {
    sfp_fiber *f = sfp_fiber_new(dropped_deep, NULL, 64 * 1024);
    CHECK(f);
    CHECK_EQ(sfp_fiber_resume(f), 1); /* yields 64 frames down */
    sfp_fiber_free(f);                /* dropped there, as a crash drops a node */
    int seen = 0;
    sfp_fiber *g = sfp_fiber_new(big_frame, &seen, 64 * 1024);
    CHECK(g);
    CHECK_EQ(sfp_fiber_resume(g), 0); /* no false alarm on the stale red zones */
    CHECK_EQ(seen, 1);
    sfp_fiber_free(g);
  }
}

TEST_MAIN(T(resume_and_yield_alternate_in_order),
          T(a_fiber_keeps_its_stack_and_registers_across_switches),
          T(an_abandoned_fiber_is_freed_mid_way),
          T(a_stack_mapped_where_a_dropped_one_was_is_clean))
