/* The host's memory is not a fault of the simulation: when an allocation
 * of the simulator fails, the run stops on the MEMORY budget (the harness
 * then ends the process as out of memory) and no failure after that
 * counts, so a finding never depends on the host. calloc and realloc of
 * the simulator's code are wrapped here (-Wl,--wrap) to fail on demand. */
#include "testlib.h"

#include <errno.h>
#include <string.h>

void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);

static int host_full; /* 1: every allocation of the simulator fails */

void *__wrap_calloc(size_t n, size_t size) {
  return host_full ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size) {
  return host_full ? NULL : __real_realloc(p, size);
}

static sim_world *world(recorder *r) {
  sim_config c = recorder_config(r, 2, 1);
  return recorder_world(&c);
}

/* After the host refused memory: the run is stopped on the MEMORY budget
 * and an invariant that fails now is not recorded. */
static void check_stopped(sim_world *w) {
  CHECK_EQ(sim_budget_kind(w), SIM_BUDGET_MEMORY);
  CHECK(!strcmp(sim_budget_reason(w), "out of memory"));
  sim__invariant_failed(w, 0, "after_oom", __FILE__, __LINE__, "the target saw the error");
  CHECK(!sim_failed(w));
  CHECK_EQ(sim_run(w, UINT64_MAX, 0), SIM_STOP_BUDGET);
}

/* The host refuses every allocation while `call` runs; it returns want. */
#define REFUSED(w, call, want)                                                                     \
  do {                                                                                             \
    host_full = 1;                                                                                 \
    int64_t got_ = (call);                                                                         \
    host_full = 0;                                                                                 \
    CHECK_EQ(got_, (want));                                                                        \
    check_stopped(w);                                                                              \
  } while (0)

TEST(disk_write_stops_the_run) {
  recorder *r = recorder_new();
  sim_world *w = world(r);
  CHECK_EQ(sim_budget_kind(w), SIM_BUDGET_NONE);
  REFUSED(w, sim_disk_write(w, 0, 0, "lost", 4), -ENOSPC);
  FX_END();
}

TEST(disk_page_stops_the_run) {
  recorder *r = recorder_new();
  sim_world *w = world(r);
  CHECK_EQ(sim_disk_write(w, 0, 0, "x", 1), 1); /* the page tables exist */
  CHECK_EQ(sim_disk_sync(w, 0), 0);
  /* the next page of the images cannot be had */
  REFUSED(w, sim_disk_write(w, 0, 64 * 1024, "lost", 4), -ENOSPC);
  FX_END();
}

TEST(connection_stops_the_run) {
  recorder *r = recorder_new();
  sim_world *w = world(r);
  REFUSED(w, sim_connect(w, 0, 1), -EMFILE);
  FX_END();
}

TEST(budget_reasons_are_the_table) {
  recorder *r = recorder_new();
  sim_world *w = world(r);
  CHECK(sim_budget_reason(w) == NULL);
  FX_END();
}

TEST_MAIN(T(disk_write_stops_the_run), T(disk_page_stops_the_run), T(connection_stops_the_run),
          T(budget_reasons_are_the_table))
