/* Fiber switch benchmark (harness/program/fiber.c): resume+yield round
 * trips per second, beside the same round trip through glibc's
 * swapcontext (which makes a sigprocmask system call per switch), measured
 * interleaved in one run. Prints the median of several repetitions.
 *
 * Usage: bench_fiber [reps] [round trips] */
#define _DEFAULT_SOURCE
#include "program/fiber.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <ucontext.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void spin(void *arg) {
  (void)arg;
  for (;;)
    sfp_fiber_yield();
}

static double fibers(long n) {
  sfp_fiber *f = sfp_fiber_new(spin, NULL, 64 * 1024);
  if (!f)
    exit(1);
  double t0 = now_s();
  for (long i = 0; i < n; i++)
    sfp_fiber_resume(f);
  double dt = now_s() - t0;
  sfp_fiber_free(f);
  return (double)n / dt;
}

static ucontext_t main_uc, uc;
static void uspin(void) {
  for (;;)
    swapcontext(&uc, &main_uc);
}

static double ucontexts(long n) {
  static char stack[64 * 1024];
  getcontext(&uc);
  uc.uc_stack.ss_sp = stack;
  uc.uc_stack.ss_size = sizeof stack;
  uc.uc_link = NULL;
  makecontext(&uc, uspin, 0);
  double t0 = now_s();
  for (long i = 0; i < n; i++)
    swapcontext(&main_uc, &uc);
  return (double)n / (now_s() - t0);
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 5;
  long n = argc > 2 ? atol(argv[2]) : 2000000;
  if (reps < 1 || reps > 100 || n < 1)
    return 2;
  double f[100], u[100];
  for (int r = 0; r < reps; r++) {
    f[r] = fibers(n);
    u[r] = ucontexts(n);
  }
  qsort(f, (size_t)reps, sizeof *f, cmp);
  qsort(u, (size_t)reps, sizeof *u, cmp);
  printf("round trips (resume + yield) per second, median of %d x %ld:\n", reps, n);
  printf("  simfuzz fibers: %.3g\n  swapcontext:    %.3g\n  ratio:          %.1f\n", f[reps / 2],
         u[reps / 2], f[reps / 2] / u[reps / 2]);
  return 0;
}
