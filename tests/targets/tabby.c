/* A target that fails on its first client operation with a message that
 * holds a tab and a newline: reports must stay valid whatever a failure
 * message contains. */
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
  s->ops++;
  SIM_INVARIANT(w, 0, s->ops < 1, "no_ops", "a tab\there, a newline\nthere, a quote \" too");
}

static const sim_node_ops ops = {NULL, NULL, NULL, NULL, NULL};

const sf_target SF_TARGET_SYMBOL = {
    .name = SF_TARGET_NAME,
    .summary = "test only: fails with a message holding a tab and a newline",
    .min_nodes = 2,
    .max_nodes = 2,
    .default_nodes = 2,
    .create = create,
    .destroy = free,
    .ops = &ops,
    .workload = workload,
};
