/* Oracles (invariants, liveness, check hooks), budgets and the trace. */
#include "testlib.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
  recorder rec; /* first: the recorder callbacks get this as ctx */
  int checks, ends, fail_after, live_after_recv, on_failure_calls;
} oracle_ctx;

static void check_every(void *ctx, sim_world *w) {
  oracle_ctx *o = ctx;
  o->checks++;
  SIM_INVARIANT(w, 1, o->fail_after == 0 || rec_count(&o->rec, R_RECV, 1) < o->fail_after,
                "recv_bound", "node 1 received %d messages", rec_count(&o->rec, R_RECV, 1));
}

static void check_end(void *ctx, sim_world *w) {
  oracle_ctx *o = ctx;
  (void)w;
  o->ends++;
}

static int live_pred(void *ctx, sim_world *w) {
  oracle_ctx *o = ctx;
  (void)w;
  return rec_count(&o->rec, R_RECV, -1) >= o->live_after_recv;
}

static void on_fail(void *ctx, sim_world *w) {
  oracle_ctx *o = ctx;
  (void)w;
  o->on_failure_calls++;
  fprintf(stderr, "report: %s\n", sim_get_failure(w)->name);
}

static sim_config oracle_config(oracle_ctx *o) {
  sim_config c = recorder_config(&o->rec, 2, 1);
  c.ctx = o;
  c.hook_ctx = o;
  c.after_event = check_every;
  c.at_end = check_end;
  c.live = live_pred;
  c.on_failure = on_fail;
  return c;
}

TEST(invariant_failure_is_recorded_and_stops_the_run) {
  oracle_ctx *o = calloc(1, sizeof *o);
  o->fail_after = 3;
  sim_config c = oracle_config(o);
  sim_world *w = recorder_world(&c);
  for (int i = 0; i < 10; i++)
    send_u64(w, 0, 1, (uint64_t)i);
  CHECK_EQ(sim_run(w, UINT64_MAX, 0), SIM_STOP_FAILURE);
  CHECK(sim_failed(w));
  const sim_failure *f = sim_get_failure(w);
  CHECK(f && !f->is_liveness);
  CHECK(strcmp(f->name, "recv_bound") == 0);
  CHECK(strcmp(f->message, "node 1 received 3 messages") == 0);
  CHECK_EQ(f->node, 1);
  CHECK_EQ(f->time, SIM_NS_PER_MS);
  CHECK(strstr(f->file, "test_oracle.c") && f->line > 0);
  CHECK_EQ(rec_count(&o->rec, R_RECV, 1), 3); /* stopped right there */
  CHECK_EQ(sim_step(w), 0);
  CHECK_EQ(sim_run(w, UINT64_MAX, 0), SIM_STOP_FAILURE);
  CHECK_EQ(sim_finish(w), 1);
  CHECK_EQ(o->ends, 0); /* no end checks after a failure */
  CHECK_EQ(o->on_failure_calls, 0);
  /* the failure is in the trace, formatted with name and message */
  sim_trace_rec last;
  CHECK_EQ(sim_trace_last(w, &last, 1), 1);
  CHECK_EQ(last.kind, SIM_EV_FAIL);
  char line[256];
  sim_trace_format(w, &last, line, sizeof line);
  CHECK(strstr(line, "FAIL") && strstr(line, "recv_bound: node 1 received 3"));
  sim_world_destroy(w);
  free(o);
}

TEST(abort_mode_aborts_at_the_invariant_site_after_the_report) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    oracle_ctx *o = calloc(1, sizeof *o);
    o->fail_after = 1;
    sim_config c = oracle_config(o);
    c.fail_mode = SIM_FAIL_ABORT;
    sim_world *w = recorder_world(&c);
    send_u64(w, 0, 1, 1);
    sim_run(w, UINT64_MAX, 0);
    _exit(0); /* not reached */
  }
  int st = 0;
  CHECK(waitpid(pid, &st, 0) == pid);
  CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
}

TEST(check_hooks_run_after_every_event_and_at_end) {
  oracle_ctx *o = calloc(1, sizeof *o);
  sim_config c = oracle_config(o);
  sim_world *w = recorder_world(&c);
  for (int i = 0; i < 10; i++)
    send_u64(w, 0, 1, (uint64_t)i);
  sim_run(w, UINT64_MAX, 0);
  CHECK_EQ((uint64_t)o->checks, sim_get_stats(w)->events);
  CHECK_EQ(sim_finish(w), 0);
  CHECK_EQ(sim_finish(w), 0);
  CHECK_EQ(o->ends, 1);
  sim_world_destroy(w);
  free(o);
}

/* A world whose liveness predicate holds once node 1 received 5 messages
 * (o: its oracle context, to free after the world). */
static sim_world *live_world(oracle_ctx **o) {
  *o = calloc(1, sizeof **o);
  (*o)->live_after_recv = 5;
  sim_config c = oracle_config(*o);
  return recorder_world(&c);
}

TEST(liveness_met_within_deadline) {
  oracle_ctx *o;
  sim_world *w = live_world(&o);
  CHECK_EQ(sim_require_liveness(w, 100 * SIM_NS_PER_MS), 0);
  CHECK(sim_liveness_pending(w));
  for (int i = 0; i < 5; i++)
    send_u64(w, 0, 1, (uint64_t)i);
  CHECK_EQ(sim_run(w, UINT64_MAX, 0), SIM_STOP_QUIESCENT);
  CHECK(!sim_failed(w));
  CHECK(!sim_liveness_pending(w));
  sim_world_destroy(w);
  free(o);
}

TEST(liveness_failure_at_deadline) {
  oracle_ctx *o;
  sim_world *w = live_world(&o);
  sim_run(w, 10 * SIM_NS_PER_MS, 0);
  CHECK_EQ(sim_require_liveness(w, 100 * SIM_NS_PER_MS), 0);
  send_u64(w, 0, 1, 1); /* not enough progress */
  CHECK_EQ(sim_run(w, UINT64_MAX, 0), SIM_STOP_FAILURE);
  const sim_failure *f = sim_get_failure(w);
  CHECK(f && f->is_liveness);
  CHECK_EQ(f->time, 110 * SIM_NS_PER_MS);
  CHECK(strcmp(f->name, "liveness") == 0);
  /* the report says which window: its length and where it opened */
  CHECK(strcmp(f->message, "liveness predicate did not hold in the 0.100 s window opened at "
                           "0.010 s (after heal)") == 0);
  sim_world_destroy(w);
  /* without a predicate the request is refused */
  recorder *r = recorder_new();
  sim_config c2 = recorder_config(r, 1, 1);
  w = recorder_world(&c2);
  CHECK_EQ(sim_require_liveness(w, 1), -EINVAL);
  FX_END();
  free(o);
}

static void echo_boot(void *ctx, sim_world *w, int node, int restart) {
  (void)ctx;
  (void)restart;
  if (node == 0)
    send_u64(w, 0, 1, 0);
}
static void echo_recv(void *ctx, sim_world *w, int node, int from, const void *m, size_t len) {
  (void)ctx;
  sim_send(w, node, from, m, len);
  sim_send(w, node, from, m, len); /* exponential growth */
}
static void echo_timer(void *ctx, sim_world *w, int node, uint64_t tag) {
  (void)ctx;
  sim_timer_start(w, node, 1, tag);
  sim_timer_start(w, node, 1, tag);
}
static const sim_node_ops flood_ops = {echo_boot, echo_recv, echo_timer, NULL, NULL};

TEST(budgets_end_runs_cleanly) {
  sim_config c = ops_config(&flood_ops, 2);
  /* event budget */
  c.budgets.max_events = 1000;
  sim_world *w = sim_world_create(&c);
  CHECK_EQ(sim_run(w, UINT64_MAX, 0), SIM_STOP_BUDGET);
  CHECK(strcmp(sim_budget_reason(w), "event budget") == 0);
  CHECK_EQ(sim_get_stats(w)->events, 1000);
  sim_world_destroy(w);
  /* in-flight budget */
  c = ops_config(&flood_ops, 2);
  c.budgets.max_inflight = 500;
  w = sim_world_create(&c);
  CHECK_EQ(sim_run(w, UINT64_MAX, 0), SIM_STOP_BUDGET);
  CHECK(strcmp(sim_budget_reason(w), "in-flight messages budget") == 0);
  sim_world_destroy(w);
  /* pending-event budget: timers doubling */
  c = ops_config(&flood_ops, 1);
  c.budgets.max_pending = 300;
  c.budgets.max_timers = 1u << 30;
  w = sim_world_create(&c);
  sim_run(w, 0, 0);
  sim_timer_start(w, 0, 1, 1);
  CHECK_EQ(sim_run(w, UINT64_MAX, 0), SIM_STOP_BUDGET);
  CHECK(strcmp(sim_budget_reason(w), "pending events budget") == 0);
  sim_world_destroy(w);
  /* per-node timer budget: starts fail, the run goes on */
  c = ops_config(&flood_ops, 1);
  c.budgets.max_timers = 10;
  c.budgets.max_events = 200;
  w = sim_world_create(&c);
  sim_run(w, 0, 0);
  for (int i = 0; i < 10; i++)
    CHECK(sim_timer_start(w, 0, 1000, 1) != 0);
  CHECK_EQ(sim_timer_start(w, 0, 1000, 1), 0);
  sim_world_destroy(w);
  /* virtual time budget */
  recorder *r = recorder_new();
  c = recorder_config(r, 1, 1);
  c.budgets.max_time_ns = SIM_NS_PER_S;
  w = recorder_world(&c);
  sim_timer_start(w, 0, 2 * SIM_NS_PER_S, 1);
  CHECK_EQ(sim_run(w, UINT64_MAX, 0), SIM_STOP_BUDGET);
  CHECK(strcmp(sim_budget_reason(w), "virtual time budget") == 0);
  CHECK_EQ(rec_count(r, R_TIMER, 0), 0);
  FX_END();
}

TEST(invalid_configs_are_refused) {
  sim_config c;
  sim_config_default(&c);
  CHECK(sim_world_create(&c) == NULL); /* no ops */
  c.ops = &flood_ops;
  c.nodes = 0;
  CHECK(sim_world_create(&c) == NULL);
  c.nodes = SIM_MAX_NODES + 1;
  CHECK(sim_world_create(&c) == NULL);
  CHECK(sim_world_create(NULL) == NULL);
  sim_world_destroy(NULL);
  c.nodes = SIM_MAX_NODES;
  sim_world *w = sim_world_create(&c);
  CHECK(w);
  sim_world_destroy(w);
}

typedef struct {
  uint64_t records, sends;
} hook_ctx;

static void hook(void *ctx, const sim_world *w, const sim_trace_rec *r, const void *payload,
                 size_t len) {
  hook_ctx *h = ctx;
  CHECK(w != NULL);
  h->records++;
  if (r->kind == SIM_EV_SEND) {
    h->sends++;
    CHECK(payload && len == 8);
  }
}

static int describe(void *ctx, const void *msg, size_t have, size_t len, char *buf, size_t cap) {
  (void)ctx;
  (void)len;
  return have ? snprintf(buf, cap, "VALUE(%u)", ((const uint8_t *)msg)[0]) : -1;
}

TEST(trace_ring_format_hook_and_hash) {
  recorder *r = recorder_new();
  hook_ctx hc = {0, 0};
  sim_config c = recorder_config(r, 2, 1);
  c.trace = hook;
  c.trace_ctx = &hc;
  c.trace_ring = 16;
  c.describe = describe;
  c.net.loss_ppm = 300000;
  sim_world *w = recorder_world(&c);
  uint64_t h0 = sim_trace_hash(w);
  for (int i = 0; i < 40; i++)
    send_u64(w, 0, 1, (uint64_t)i);
  sim_note(w, 0, 42, 43);
  CHECK(sim_trace_hash(w) != h0);
  sim_run(w, UINT64_MAX, 0);
  CHECK_EQ(hc.records, sim_trace_count(w));
  CHECK_EQ(hc.sends, 40);
  sim_trace_rec recs[32];
  size_t n = sim_trace_last(w, recs, 32);
  CHECK_EQ(n, 16); /* ring size */
  for (size_t i = 1; i < n; i++)
    CHECK_EQ(recs[i].index, recs[i - 1].index + 1);
  CHECK_EQ(recs[n - 1].index, sim_trace_count(w) - 1);
  int described = 0;
  for (size_t i = 0; i < n; i++) {
    char line[256];
    int len = sim_trace_format(w, &recs[i], line, sizeof line);
    CHECK(len > 0 && (size_t)len == strlen(line));
    described += strstr(line, "VALUE(") != NULL;
    CHECK(strstr(line, sim_ev_name(recs[i].kind)));
  }
  CHECK(described > 0);
  char tiny[8];
  int full = sim_trace_format(w, &recs[0], tiny, sizeof tiny);
  CHECK(full > 7 && strlen(tiny) == 7); /* truncates safely, reports full length */
  CHECK(strcmp(sim_ev_name(SIM_EV_DROP), "drop") == 0);
  CHECK(strcmp(sim_drop_name(SIM_DROP_PARTITION), "partition") == 0);
  CHECK(strcmp(sim_ev_name(9999), "?") == 0);
  FILE *f = tmpfile();
  sim_trace_dump(w, f, 5);
  sim_stats_print(w, f);
  long sz = ftell(f);
  CHECK(sz > 100);
  fclose(f);
  FX_END();
}

/* SIM_EV_KINDS is the one list of trace kinds: every kind has a distinct
 * name, and the faults, groups and drawn kinds are the ones the command
 * line and the timeline always had. */
TEST(trace_kinds_come_from_one_table) {
  static const char *const faults[] = {
      "drop",      "duplicate",  "corrupt",      "reorder",      "hold",       "release",
      "crash",     "restart",    "pause",        "resume",       "partition",  "heal",
      "link",      "conn-reset", "conn-timeout", "conn-refused", "conn-stall", "disk-eio",
      "disk-lost", "clock",      "faultpoint",   "FAIL"};
  static const char *const drawn[] = {
      "deliver",   "conn-data", "drop",       "crash",        "pause",        "resume",
      "partition", "heal",      "conn-reset", "conn-timeout", "conn-refused", "disk-lost",
      "disk-eio",  "corrupt",   "faultpoint", "clock",        "FAIL",         "version"};
  static const struct {
    unsigned group;
    const char *kinds;
  } groups[] = {
      {SIM_EVG_MESSAGES, " send deliver drop duplicate corrupt reorder hold release conn-data "},
      {SIM_EVG_CONN, " conn-open conn-accept conn-up conn-data conn-close conn-reset "
                     "conn-refused conn-timeout conn-stall "},
      {SIM_EVG_DISK, " disk-write disk-sync disk-truncate disk-eio disk-lost "},
      {SIM_EVG_NODES, " boot crash restart pause resume timer clock output thread version "}};
  unsigned nfault = 0, ndrawn = 0;
  for (unsigned k = 1; k < SIM_EV__COUNT; k++) {
    const char *name = sim_ev_name(k);
    CHECK(strcmp(name, "?") != 0);
    for (unsigned j = 1; j < k; j++)
      CHECK(strcmp(sim_ev_name(j), name) != 0);
    int is_fault = 0, is_drawn = 0;
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
      is_fault |= !strcmp(faults[i], name);
    for (size_t i = 0; i < sizeof drawn / sizeof drawn[0]; i++)
      is_drawn |= !strcmp(drawn[i], name);
    CHECK_EQ(sim_ev_is_fault(k), is_fault);
    CHECK_EQ((SIM_EV_FAULT_MASK >> k) & 1, (unsigned)is_fault);
    CHECK_EQ(sim_ev_drawn(k), is_drawn);
    nfault += (unsigned)is_fault;
    ndrawn += (unsigned)is_drawn;
    char word[40];
    snprintf(word, sizeof word, " %s ", name);
    for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++)
      CHECK_EQ(!!(sim_ev_groups(k) & groups[i].group), strstr(groups[i].kinds, word) != NULL);
  }
  CHECK_EQ(nfault, sizeof faults / sizeof faults[0]);
  CHECK_EQ(ndrawn, sizeof drawn / sizeof drawn[0]);
  CHECK_EQ(SIM_EV_FAULT_MASK & 1, 0);
  CHECK_EQ(sim_ev_groups(0) | sim_ev_groups(SIM_EV__COUNT) | sim_ev_groups(9999), 0);
  CHECK_EQ(sim_ev_drawn(SIM_EV__COUNT) + sim_ev_is_fault(SIM_EV__COUNT), 0);
  CHECK_EQ(SIM_EV_BOOT, 1); /* the numbers are stable: traces record them */
  CHECK_EQ(SIM_EV_FAIL, 35);
  CHECK_EQ(SIM_EV_THREAD, 37);
}

TEST_MAIN(T(invariant_failure_is_recorded_and_stops_the_run),
          T(abort_mode_aborts_at_the_invariant_site_after_the_report),
          T(check_hooks_run_after_every_event_and_at_end), T(liveness_met_within_deadline),
          T(liveness_failure_at_deadline), T(budgets_end_runs_cleanly),
          T(invalid_configs_are_refused), T(trace_ring_format_hook_and_hash),
          T(trace_kinds_come_from_one_table))
