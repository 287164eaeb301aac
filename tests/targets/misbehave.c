/* A system under test that misbehaves on purpose, for the tools' tests.
 * Built as three targets:
 *   misbehave  its first client operation's code (op % 16) chooses
 *                1 abort()          2 a NULL store (SIGSEGV)   3 an endless loop
 *                4 memory blow-up   5 exit(3)                  6 a failed assert()
 *                7 4 MiB of output on stderr, then carries on normally
 *                8 a failed invariant
 *              and anything else does nothing, but for the codes 777 (none
 *              of the generator's), an abort() from the process's second
 *              run on: a crash that state surviving a run decides; and
 *              778, an abort() in the target's destroy (the run's teardown);
 *   crashy     (MISBEHAVE_CRASHY) sends a message per client operation and
 *              crashes with a NULL store on the third;
 *   tabby      (MISBEHAVE_TABBY) fails on its first client operation with a
 *              message holding a tab, a newline and a quote: reports must
 *              stay valid whatever a failure message contains. */
#include <simfuzz/simfuzz.h>

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int ops;
  int abort_in_destroy; /* op 778 */
} state;

static void *create(int nodes) {
  (void)nodes;
  return calloc(1, sizeof(state));
}

static void destroy(void *ctx) {
  state *s = ctx;
  if (s && s->abort_in_destroy)
    abort();
  free(s);
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
#if defined(MISBEHAVE_CRASHY)
  (void)op;
  sim_send(w, 0, 1, "op", 2);
  if (++s->ops == 3)
    misbehave(w, 2); /* the system under test's own crash */
#elif defined(MISBEHAVE_TABBY)
  (void)op;
  s->ops++;
  SIM_INVARIANT(w, 0, s->ops < 1, "no_ops", "a tab\there, a newline\nthere, a quote \" too");
  if (s->ops > 1)
    misbehave(w, 0); /* nothing */
#else
  static int runs777; /* the bug of op 777: state that survives a run */
  if (s->ops++ == 0 && op->op == 777 && runs777++ > 0)
    abort();
  s->abort_in_destroy |= op->op == 778;
  if (s->ops == 1)
    misbehave(w, op->op % 16);
#endif
}

#if defined(MISBEHAVE_CRASHY)
#define SUMMARY "test only: crashes on its third client operation"
#define MAX_NODES 3
#elif defined(MISBEHAVE_TABBY)
#define SUMMARY "test only: fails with a message holding a tab and a newline"
#define MAX_NODES 2
#else
#define SUMMARY "test only: aborts, crashes, hangs, blows up or talks on purpose"
#define MAX_NODES 3
#endif

static const sim_node_ops ops = {NULL, NULL, NULL, NULL, NULL};

SF_TARGET(.summary = SUMMARY, .min_nodes = 2, .max_nodes = MAX_NODES, .default_nodes = 2,
          .create = create, .destroy = destroy, .ops = &ops, .workload = workload);
