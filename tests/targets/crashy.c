/* A target whose code crashes (a NULL store) on its third client
 * operation: the tools must survive it and recognise the crash. */
#include "simfuzz.h"

#include <stdlib.h>

typedef struct {
  int ops;
} state;

static void *create(int nodes) {
  (void)nodes;
  return calloc(1, sizeof(state));
}

static void workload(void *ctx, sim_world *w, const sf_op *op) {
  state *s = ctx;
  (void)op;
  sim_send(w, 0, 1, "op", 2);
  if (++s->ops == 3) {
    volatile int *volatile p = NULL;
    *p = 1; /* the system under test's own crash */
  }
}

static const sim_node_ops ops = {NULL, NULL, NULL, NULL, NULL};

const sf_target SF_TARGET_SYMBOL = {
    .name = SF_TARGET_NAME,
    .summary = "test only: crashes on its third client operation",
    .min_nodes = 2,
    .max_nodes = 3,
    .default_nodes = 2,
    .create = create,
    .destroy = free,
    .ops = &ops,
    .workload = workload,
};
