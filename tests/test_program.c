/* The program runtime (harness/program/program.c) without interposition:
 * two programs of different global sizes run interleaved in one process,
 * and each node finds its globals as it left them. */
#include "testlib.h"
#include <simfuzz/simfuzz_program.h>

int sfp_usleep(unsigned us); /* the runtime's model of usleep */

static unsigned char small_g[8];    /* program A's globals */
static unsigned char large_g[4096]; /* program B's */
static int a_ok = -1, b_ok = -1;    /* what their last checks saw */

static int main_a(int argc, char **argv) {
  (void)argc, (void)argv;
  small_g[7] = 7;
  for (;;) {
    sfp_usleep(1000);
    a_ok = small_g[7] == 7;
  }
}

static int main_b(int argc, char **argv) {
  (void)argc, (void)argv;
  large_g[4000] = 42;
  for (;;) {
    sfp_usleep(1000);
    b_ok = large_g[4000] == 42;
  }
}

static const char *const no_args[] = {NULL};
static const sf_program prog_a = {"a", main_a, small_g, small_g + sizeof small_g, no_args, 0};
static const sf_program prog_b = {"b", main_b, large_g, large_g + sizeof large_g, no_args, 0};

TEST(two_programs_interleaved_keep_their_globals) {
  void *ca = sf_program_create(&prog_a, 1), *cb = sf_program_create(&prog_b, 1);
  CHECK(ca && cb);
  sim_config c = ops_config(&sf_program_ops, 1);
  c.ctx = ca;
  sim_world *wa = sim_world_create(&c);
  c.ctx = cb;
  sim_world *wb = sim_world_create(&c);
  CHECK(wa && wb);
  for (int i = 0; i < 6; i++) { /* boots, then wake-ups, one world after the other */
    CHECK_EQ(sim_step(wa), 1);
    CHECK_EQ(sim_step(wb), 1);
  }
  CHECK_EQ(a_ok, 1);
  CHECK_EQ(b_ok, 1);
  sim_world_destroy(wa);
  sim_world_destroy(wb);
  sf_program_destroy(ca);
  sf_program_destroy(cb);
}

TEST_MAIN(T(two_programs_interleaved_keep_their_globals))
