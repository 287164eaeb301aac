/* A system under test that misbehaves on purpose, for the campaign tools'
 * isolation tests: its first client operation's code (op % 16) chooses
 *   1 abort()          2 a NULL store (SIGSEGV)   3 an endless loop
 *   4 memory blow-up   5 exit(3)                  6 a failed assert()
 *   7 4 MiB of output on stderr, then carries on normally
 *   8 a failed invariant
 * and anything else does nothing. */
#include "simfuzz.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int ops;
} state;

static void *create(int nodes) {
  (void)nodes;
  return calloc(1, sizeof(state));
}

static void misbehave(sim_world *w, unsigned what) {
  switch (what) {
  case 1: abort();
  case 2: {
    volatile int *volatile p = NULL;
    *p = 1;
    break;
  }
  case 3: {
    volatile unsigned long spin = 0;
    for (;;)
      spin++;
  }
  case 4: {
    void *volatile keep = NULL; /* chained and touched: resident, never optimised away */
    for (;;) {
      void **p = malloc(64u << 20);
      if (p) {
        memset(p, 1, 64u << 20);
        *p = keep;
        keep = p;
      }
    }
  }
  case 5: exit(3);
  case 6: assert(what != 6 && "the library's own invariant");
  case 7: {
    static char line[1024];
    memset(line, 'x', sizeof line - 1);
    for (int i = 0; i < 4096; i++)
      fprintf(stderr, "%s\n", line);
    break;
  }
  case 8: SIM_INVARIANT(w, 0, what != 8, "no_op_eight", "op 8 was run"); break;
  default: break;
  }
}

static void workload(void *ctx, sim_world *w, const sf_op *op) {
  state *s = ctx;
  if (s->ops++ == 0)
    misbehave(w, op->op % 16);
}

static const sim_node_ops ops = {NULL, NULL, NULL, NULL, NULL};

const sf_target SF_TARGET_SYMBOL = {
    .name = SF_TARGET_NAME,
    .summary = "test only: aborts, crashes, hangs, blows up or talks on purpose",
    .min_nodes = 2,
    .max_nodes = 3,
    .default_nodes = 2,
    .create = create,
    .destroy = free,
    .ops = &ops,
    .workload = workload,
};
