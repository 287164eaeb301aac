/* A target whose run would depend on where a block was allocated, for the
 * tools' tests: node 0 sends one more message when bits 8 and 9 of a
 * block's address are zero. The block comes from sf_malloc(), so from the
 * world's deterministic heap: the same address in every run and process.
 * (With malloc(), a build without AddressSanitizer parts from run to run;
 * AddressSanitizer's allocator happens to repeat its addresses.) */
#include <simfuzz/simfuzz.h>
#include <simfuzz/simfuzz_libc.h>

#include <stdint.h>
#include <stdlib.h>

static void boot(void *ctx, sim_world *w, int node, int restart) {
  (void)ctx;
  (void)restart;
  if (node != 0)
    return;
  void *p = sf_malloc(24);
  int n = p && ((uintptr_t)p >> 8 & 3) == 0 ? 2 : 1; /* the bug: a pointer's bits decide */
  sf_free(p);
  for (int i = 0; i < n; i++)
    sim_send(w, 0, 1, "x", 1);
}

static const sim_node_ops ops = {boot, NULL, NULL, NULL, NULL};

SF_TARGET(.summary = "test only: decided by a pointer's bits", .min_nodes = 2, .max_nodes = 2,
          .default_nodes = 2, .ops = &ops);
