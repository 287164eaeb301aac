/* A deliberately nondeterministic target for the tools' tests: every run in
 * a process sends one more message than the run before (a global counter
 * that survives runs: exactly what simfuzz forbids). */
#include <simfuzz/simfuzz.h>

#include <stdlib.h>

static int runs; /* the bug: state that survives a run */

static void boot(void *ctx, sim_world *w, int node, int restart) {
  (void)ctx;
  (void)restart;
  if (node == 0)
    for (int i = 0; i <= runs % 4; i++)
      sim_send(w, 0, 1, "x", 1);
}

static void *create(int nodes) {
  (void)nodes;
  runs++;
  return NULL;
}

static const sim_node_ops ops = {boot, NULL, NULL, NULL, NULL};

/* A named state for the explorer to keep and revisit: the restarts so far
 * (high counts are rare). A revisit re-runs in a later process, where the
 * counter differs, so it does not reach the same moment. */
SF_ORACLE static void note_restarts(void *ctx, sim_world *w) {
  (void)ctx;
  SF_MAXIMIZE(w, "test: restarts", sim_node_incarnation(w, 0) + sim_node_incarnation(w, 1));
}

static const sf_check checks[] = {{"restarts", note_restarts}, {NULL, NULL}};

SF_TARGET(.summary = "test only: nondeterministic on purpose", .min_nodes = 2, .max_nodes = 2,
          .default_nodes = 2, .create = create, .ops = &ops, .invariants = checks);
