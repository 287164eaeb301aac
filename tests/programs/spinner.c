/* spinner: a test program for simfuzz_add_program's CALL_COST_NS
 * (tests/programs.sh). It computes without blocking until its clock has
 * moved on by a millisecond, counting its loops, one clock_gettime each;
 * says how many; and then sleeps. Built with a cost of 1,000 ns per call,
 * it counts 1,000 (without a cost it would spin for ever). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int main(void) {
  struct timespec a, b;
  long n = 0;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do {
    clock_gettime(CLOCK_MONOTONIC, &b);
    n++;
  } while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 1000000L);
  printf("spins %ld\n", n);
  for (;;)
    sleep(1);
}
