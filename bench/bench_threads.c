/* What a program node's threads cost (harness/program/thread.c), against
 * the same work in a node with one thread, measured interleaved in one
 * run: N lock/unlock pairs of one mutex
 *   one:     by main alone (a node that never started a thread: no draw);
 *   idle:    by main, beside a thread that waits on a condition for ever
 *            (every switch point counts the runnable threads; no draw);
 *   two:     split between main and a second thread, both runnable (every
 *            switch point draws; one in four switches thread);
 * and pingpong: two threads handing a token back and forth through a
 * condition, N handoffs (each a wait, a signal and a thread switch).
 * Prints the median over the repetitions of ns per pair (per handoff), and
 * the thread switches counted in the trace.
 *
 * Usage: bench_threads [reps] [N] */
#define _GNU_SOURCE
#include <simfuzz/sim.h>
#include <simfuzz/simfuzz_program.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int sfp_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
int sfp_pthread_join(pthread_t t, void **ret);
int sfp_pthread_mutex_lock(pthread_mutex_t *m);
int sfp_pthread_mutex_unlock(pthread_mutex_t *m);
int sfp_pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m);
int sfp_pthread_cond_signal(pthread_cond_t *c);

static long n_ops;
static pthread_mutex_t mu, idle_mu;
static pthread_cond_t cv, idle_cv;
static int turn;

static void pairs(long n) {
  for (long i = 0; i < n; i++) {
    sfp_pthread_mutex_lock(&mu);
    sfp_pthread_mutex_unlock(&mu);
  }
}

static void *half(void *arg) {
  (void)arg;
  pairs(n_ops / 2);
  return NULL;
}

static void *sleeper(void *arg) {
  (void)arg;
  sfp_pthread_mutex_lock(&idle_mu);
  for (;;)
    sfp_pthread_cond_wait(&idle_cv, &idle_mu); /* no one signals */
  return NULL;
}

/* Hand the token to the other thread (me is 0 or 1), n times. */
static void *player(void *arg) {
  int me = (int)(long)arg;
  for (long i = 0; i < n_ops / 2; i++) {
    sfp_pthread_mutex_lock(&mu);
    while (turn != me)
      sfp_pthread_cond_wait(&cv, &mu);
    turn = !me;
    sfp_pthread_cond_signal(&cv);
    sfp_pthread_mutex_unlock(&mu);
  }
  return NULL;
}

static int mode; /* 0 one, 1 idle, 2 two, 3 pingpong */

static int bench_main(int argc, char **argv) {
  (void)argc, (void)argv;
  memset(&mu, 0, sizeof mu);
  memset(&cv, 0, sizeof cv);
  turn = 0;
  pthread_t t;
  if (mode == 0)
    pairs(n_ops);
  if (mode == 1) {
    sfp_pthread_create(&t, NULL, sleeper, NULL);
    pairs(n_ops);
  }
  if (mode == 2) {
    sfp_pthread_create(&t, NULL, half, NULL);
    pairs(n_ops / 2);
    sfp_pthread_join(t, NULL);
  }
  if (mode == 3) {
    sfp_pthread_create(&t, NULL, player, (void *)1L);
    player((void *)0L);
    sfp_pthread_join(t, NULL);
  }
  return 0;
}

static const char *const no_args[] = {NULL};
static const sf_program prog = {"bench", bench_main, NULL, NULL, no_args, 0, NULL,
                                0,       NULL,       0,    0,    NULL,    0};

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One run of the mode: ns per operation; the thread switches in *sw. */
static double run(int m, uint64_t *sw) {
  mode = m;
  void *ctx = sf_program_create(&prog, 1);
  sim_config c;
  sim_config_default(&c);
  c.nodes = 1;
  c.ops = &sf_program_ops;
  c.ctx = ctx;
  c.seed = 1;
  c.trace_ring = 64;
  sim_world *w = sim_world_create(&c);
  if (!ctx || !w)
    exit(1);
  double t0 = now_s();
  while (sim_step(w) == 1 && sf_program_observe(ctx, w, 0) != 3)
    ;
  double dt = now_s() - t0;
  *sw = sim_trace_count(w);
  sim_world_destroy(w);
  sf_program_destroy(ctx);
  return dt * 1e9 / (double)n_ops;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 7;
  n_ops = argc > 2 ? atol(argv[2]) : 200000;
  if (reps < 1 || reps > 99 || n_ops < 2)
    return 2;
  static const char *const names[] = {"one", "idle", "two", "pingpong"};
  double t[4][99];
  uint64_t recs[4] = {0};
  for (int r = 0; r < reps; r++)
    for (int m = 0; m < 4; m++)
      t[m][r] = run(m, &recs[m]);
  printf("%ld operations per run, median of %d runs (modes interleaved)\n", n_ops, reps);
  for (int m = 0; m < 4; m++) {
    qsort(t[m], (size_t)reps, sizeof t[m][0], cmp);
    printf("%-9s %7.1f ns per %s, %llu trace records\n", names[m], t[m][reps / 2],
           m == 3 ? "handoff" : "lock/unlock pair", (unsigned long long)recs[m]);
  }
  return 0;
}
