/* The deterministic heap (sim_heap_alloc): the same addresses in every
 * process and every run, zero-filled blocks, refused double frees, bounds,
 * slots for worlds alive at once, and AddressSanitizer's reports kept. */
#include "testlib.h"

#include <errno.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define ASAN 1
#endif

/* A fixed churn of allocations and frees; returns a hash of every address
 * it got, in order. */
static uint64_t churn(sim_world *w) {
  void *live[64] = {0};
  uint64_t h = 0, r = 7;
  for (int i = 0; i < 2000; i++) {
    uint64_t x = test_rand(&r);
    int k = (int)(x % 64);
    if (live[k]) {
      CHECK_EQ(sim_heap_free(live[k]), 0);
      live[k] = NULL;
    } else {
      size_t n = (size_t)(x >> 8) % (x & 1 ? 100 : 70000);
      live[k] = sim_heap_alloc(w, n);
      CHECK(live[k] && (uintptr_t)live[k] % 16 == 0 && sim_heap_size(live[k]) == n);
      h = sim_mix64(h ^ (uint64_t)(uintptr_t)live[k]);
    }
  }
  return h;
}

static sim_world *new_world(recorder **r) {
  *r = recorder_new();
  sim_config c = recorder_config(*r, 2, 1);
  return recorder_world(&c);
}

static uint64_t churn_in_new_world(void) {
  recorder *r;
  sim_world *w = new_world(&r);
  CHECK(sim_heap_fixed(w));
  uint64_t h = churn(w);
  sim_world_destroy(w);
  free(r);
  return h;
}

TEST(addresses_are_the_same_in_every_run_and_process) {
  uint64_t h = churn_in_new_world();
  CHECK_EQ(churn_in_new_world(), h); /* the next run in this process */
  for (int i = 0; i < 3; i++) {      /* fresh processes: ASLR moves the C library's heap */
    char cmd[64];
    snprintf(cmd, sizeof cmd, "exec /proc/%d/exe churn_hash", (int)getpid());
    FILE *p = popen(cmd, "r");
    unsigned long long got = 0;
    CHECK(p && fscanf(p, "%llx", &got) == 1);
    CHECK_EQ(pclose(p), 0);
    CHECK(got == h);
  }
}

HELPER(churn_hash) {
  printf("%016llx\n", (unsigned long long)churn_in_new_world());
}

TEST(blocks_start_zeroed_after_reuse) {
  recorder *r;
  sim_world *w = new_world(&r);
  unsigned char *a = sim_heap_alloc(w, 40);
  memset(a, 0xff, 40);
  CHECK_EQ(sim_heap_free(a), 0);
  unsigned char *b = sim_heap_alloc(w, 40);
  CHECK(b != a); /* a waits in the quarantine */
  for (int i = 0; i < 256; i++)
    CHECK_EQ(sim_heap_free(sim_heap_alloc(w, 1000)), 0);
  unsigned char *c = sim_heap_alloc(w, 33); /* the same class: a, out of the quarantine */
  CHECK(c == a);
  for (int i = 0; i < 33; i++)
    CHECK_EQ(c[i], 0);
  CHECK_EQ(sim_heap_size(c), 33);
  sim_heap_free(b);
  sim_heap_free(c);
  sim_world_destroy(w);
  free(r);
}

TEST(bad_frees_are_refused_and_sizes_bounded) {
  recorder *r;
  sim_world *w = new_world(&r);
  char *a = sim_heap_alloc(w, 100);
  CHECK(sim_heap_owns(a));
  CHECK_EQ(sim_heap_free(a + 16), -EINVAL); /* not a block's start */
  CHECK_EQ(sim_heap_size(a + 32), 0);
  memset(a, 1, 100); /* still all live: the refusals poisoned nothing */
  CHECK_EQ(sim_heap_free(a), 0);
  CHECK_EQ(sim_heap_free(a), -EINVAL); /* twice */
  CHECK_EQ(sim_heap_size(a), 0);
  CHECK_EQ(sim_heap_free(NULL), 0);
  CHECK(sim_heap_alloc(w, SIM_HEAP_MAX + 1) == NULL);
  CHECK(sim_heap_alloc(w, (size_t)-1) == NULL);
  char *z = sim_heap_alloc(w, 0);
  CHECK(z && sim_heap_size(z) == 0 && sim_heap_free(z) == 0);
  char *m = malloc(8); /* not the heap's: free()d */
  CHECK(!sim_heap_owns(m) && sim_heap_size(m) == 0);
  CHECK_EQ(sim_heap_free(m), 0);
  sim_world_destroy(w);
  CHECK_EQ(sim_heap_free(a), -EINVAL); /* a slot no world holds */
  free(r);
}

TEST(worlds_alive_at_once_take_their_own_slots) {
  recorder *r1, *r2, *r3;
  sim_world *w1 = new_world(&r1), *w2 = new_world(&r2);
  char *a = sim_heap_alloc(w1, 10), *b = sim_heap_alloc(w2, 10);
  CHECK(a && b && a != b && sim_heap_owns(a) && sim_heap_owns(b));
  CHECK_EQ(sim_heap_free(b), 0);
  sim_world_destroy(w1);
  sim_world *w3 = new_world(&r3);
  char *c = sim_heap_alloc(w3, 10); /* w1's slot, the lowest free one: a's address */
  CHECK(c == a);
  sim_world_destroy(w2);
  sim_world_destroy(w3);
  free(r1);
  free(r2);
  free(r3);
}

HELPER(use_after_free) {
  recorder *r;
  sim_world *w = new_world(&r);
  volatile char *a = sim_heap_alloc(w, 24);
  sim_heap_free((void *)a);
  a[3] = 1;
}

HELPER(overflow) {
  recorder *r;
  sim_world *w = new_world(&r);
  volatile char *a = sim_heap_alloc(w, 24);
  a[24] = 1;
}

/* 1 if the helper died with AddressSanitizer's report on a poisoned byte. */
static int asan_reports(const char *helper) {
  char cmd[96];
  snprintf(cmd, sizeof cmd, "exec /proc/%d/exe %s 2>&1", (int)getpid(), helper);
  FILE *p = popen(cmd, "r");
  CHECK(p);
  char line[512];
  int seen = 0;
  while (fgets(line, sizeof line, p))
    seen |= strstr(line, "use-after-poison") != NULL;
  return pclose(p) != 0 && seen;
}

TEST(address_sanitizer_still_sees_misuse) {
#if defined(ASAN)
  CHECK(asan_reports("use_after_free"));
  CHECK(asan_reports("overflow"));
#else /* nothing reports it: the write lands in the region, and the helper ends */
  CHECK(!asan_reports("use_after_free"));
#endif
}

TEST_MAIN(T(addresses_are_the_same_in_every_run_and_process), T(blocks_start_zeroed_after_reuse),
          T(bad_frees_are_refused_and_sizes_bounded), T(worlds_alive_at_once_take_their_own_slots),
          T(address_sanitizer_still_sees_misuse), H(churn_hash), H(use_after_free), H(overflow))
