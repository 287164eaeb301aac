/* atomics: a test program for atomic operations as switch points
 * (harness/program/atomics.h, tests/programs.sh). Three threads count to
 * 20 each, five ways:
 *   - atomic_fetch_add, a compare-and-swap loop, a spin lock on an
 *     atomic_flag, and __sync_fetch_and_add: each keeps every update in
 *     every schedule, which checks that the operations still do what they
 *     did once each is a switch point too;
 *   - an atomic_load, then an atomic_store of one more: two atomic
 *     operations, not one, so another thread may count in between, and an
 *     update is lost in some schedules. Only a switch point at an atomic
 *     operation can show it: nothing else in the loop is one.
 * main joins them and asserts the five counts, each from its own line, and
 * then sleeps (the node stays up). */
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#define THREADS 3
#define ROUNDS 20

static atomic_int by_add, by_cas, by_load_store;
static atomic_flag spin = ATOMIC_FLAG_INIT;
static int by_spin, by_sync;

static void *count(void *arg) {
  for (int i = 0; i < ROUNDS; i++) {
    atomic_fetch_add(&by_add, 1);
    int seen = atomic_load_explicit(&by_cas, memory_order_relaxed);
    while (!atomic_compare_exchange_weak(&by_cas, &seen, seen + 1))
      ;
    while (atomic_flag_test_and_set(&spin))
      sched_yield();
    by_spin = by_spin + 1;
    atomic_flag_clear(&spin);
    __sync_fetch_and_add(&by_sync, 1);
    int v = atomic_load(&by_load_store); /* the planted bug: not one operation */
    atomic_store(&by_load_store, v + 1);
  }
  return arg;
}

int main(void) {
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++)
    if (pthread_create(&t[i], NULL, count, NULL) != 0)
      return 2;
  for (int i = 0; i < THREADS; i++)
    pthread_join(t[i], NULL);
  assert(atomic_load(&by_add) == THREADS * ROUNDS);
  assert(atomic_load(&by_cas) == THREADS * ROUNDS);
  assert(by_spin == THREADS * ROUNDS);
  assert(by_sync == THREADS * ROUNDS);
  printf("counted %d\n", atomic_load(&by_load_store));
  fflush(stdout);
  assert(atomic_load(&by_load_store) == THREADS * ROUNDS);
  for (;;)
    sleep(1);
}
