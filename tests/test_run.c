/* The runner: failures with their report and determinism re-check, the
 * determinism-failure site, liveness, swarm switches, budgets, feedback,
 * and hostile or mutated inputs against the correct example. */
#include "engine/mutate.h"
#include "run/features.h"
#include "run/hooks.h"
#include "testlib.h"
#include <simfuzz/simfuzz_runner.h>

#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern const sf_target sf_target_pbstore, sf_target_pbstore_bug_reset_skip;

/* The bug's trigger: partition n0 -> n1, fill the window, reset, heal. */
static void trigger(sf_scenario *s) {
  sf_scenario_init(s);
  s->nodes = 3;
  sf_step *st = s->steps;
  memset(st, 0, 5 * sizeof *st);
  st[0].at_us = 100000, st[0].kind = SF_STEP_PARTITION, st[0].mask_a = 1, st[0].mask_b = 2;
  st[1].at_us = 150000, st[1].kind = SF_STEP_OP, st[1].value = 1, st[1].count = 5,
  st[1].interval_us = 20000;
  st[2].at_us = 800000, st[2].kind = SF_STEP_RESET, st[2].node = 0, st[2].peer = 1;
  st[3].at_us = 900000, st[3].kind = SF_STEP_HEAL;
  st[4].at_us = 1000000, st[4].kind = SF_STEP_OP, st[4].value = 2, st[4].count = 3,
  st[4].interval_us = 20000;
  s->nsteps = 5;
  sf_normalize(s);
}

static sf_scenario *alloc_s(void) {
  return test_alloc(sizeof(sf_scenario));
}

TEST(planted_bug_fails_correct_mode_passes) {
  sf_scenario *s = alloc_s();
  trigger(s);
  sf_result r, r2;
  CHECK_EQ(sf_run(&sf_target_pbstore_bug_reset_skip, s, NULL, &r), 1);
  CHECK(r.failed && !r.failure.is_liveness);
  CHECK(strcmp(r.failure.name, "backup_log_is_prefix") == 0);
  CHECK_EQ(r.failure.node, 1);
  CHECK(strstr(r.failure.file, "pbstore_target.c") != NULL);
  CHECK_EQ(r.stop, SIM_STOP_FAILURE);
  CHECK_EQ(sf_run(&sf_target_pbstore_bug_reset_skip, s, NULL, &r2), 1);
  CHECK_HASH(r.hash, r2.hash); /* replays to the same failure */
  CHECK_EQ(r.failure.time, r2.failure.time);
  CHECK_EQ(sf_run(&sf_target_pbstore, s, NULL, &r), 0);
  CHECK(!r.failed);
  CHECK_EQ(r.fault_steps_run, 2);
  CHECK_EQ(r.ops_run, 8);
  /* without the reset (or without the partition) the bug stays hidden */
  s->steps[2].kind = SF_STEP_HEAL;
  CHECK_EQ(sf_run(&sf_target_pbstore_bug_reset_skip, s, NULL, &r), 0);
  trigger(s);
  s->steps[0].kind = SF_STEP_HEAL;
  CHECK_EQ(sf_run(&sf_target_pbstore_bug_reset_skip, s, NULL, &r), 0);
  free(s);
}

/* Run f in a child with stderr captured; returns the wait status. */
static int in_child(void (*f)(void), char *out, size_t cap) {
  int fd[2];
  CHECK(pipe(fd) == 0);
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    close(fd[0]);
    dup2(fd[1], 2);
    f();
    _exit(0);
  }
  close(fd[1]);
  size_t n = 0;
  ssize_t k;
  while (n + 1 < cap && (k = read(fd[0], out + n, cap - 1 - n)) > 0)
    n += (size_t)k;
  out[n] = 0;
  close(fd[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  return st;
}

static void fuzz_trigger(void) {
  sf_scenario *s = alloc_s();
  trigger(s);
  uint8_t buf[4096];
  size_t n = sf_encode(s, buf, sizeof buf);
  sf_fuzz_one(&sf_target_pbstore_bug_reset_skip, buf, n);
}

TEST(fuzz_mode_reports_rechecks_and_aborts) {
  static char out[65536];
  int st = in_child(fuzz_trigger, out, sizeof out);
  CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
  CHECK(strstr(out, "==simfuzz== FAILURE in target pbstore_bug_reset_skip: invariant "
                    "'backup_log_is_prefix' on node n1"));
  CHECK(strstr(out, "checked at "));
  CHECK(strstr(out, "last events:"));
  CHECK(strstr(out, "conn-data"));
  CHECK(strstr(out, "steps executed:"));
  CHECK(strstr(out, "reset n0<->n1"));
  CHECK(strstr(out, "faults fired: "));
  CHECK(strstr(out, "replay: simfuzz-pbstore_bug_reset_skip replay"));
  CHECK(strstr(out, "determinism check: re-run gave the same failure and trace hash"));
}

/* ---- tiny targets ---- */

typedef struct {
  int live_after; /* deliveries needed for liveness; -1 never */
  int delivered;
  int changed_at[4], changed_all, changed_other; /* sf_changed_nodes' answers */
  int wanted;                                    /* sf_sites_wanted's answers: 1 no, 2 yes */
  int node_evals, checked; /* p_cheap_check: its node argument's evaluations, its calls */
} ping_ctx;

static int nondet_runs; /* deliberately global: a nondeterministic target */

static void p_recv(void *ctx, sim_world *w, int node, int from, const void *m, size_t len) {
  ping_ctx *c = ctx;
  (void)w, (void)node, (void)from, (void)m, (void)len;
  c->delivered++;
}
static void p_timer(void *ctx, sim_world *w, int node, uint64_t tag) {
  (void)ctx;
  sim_timer_start(w, node, 1, tag);
  sim_timer_start(w, node, 1, tag); /* doubles: hits the budgets */
}
static const sim_node_ops ping_ops = {NULL, p_recv, p_timer, NULL, NULL};

static void *p_create(int nodes) {
  (void)nodes;
  ping_ctx *c = calloc(1, sizeof *c);
  c->live_after = 3;
  return c;
}
static void p_workload(void *ctx, sim_world *w, const sf_op *op) {
  (void)ctx;
  if (op->op == 7)
    sim_timer_start(w, 0, 1, 0);
  else
    sim_send(w, 0, 1, "ping", 4);
}
static int p_live(void *ctx, sim_world *w) {
  ping_ctx *c = ctx;
  (void)w;
  return c->live_after >= 0 && c->delivered >= c->live_after;
}
static void p_nondet_check(void *ctx, sim_world *w) {
  ping_ctx *c = ctx;
  SIM_INVARIANT(w, 1, !(c->delivered > 0 && nondet_runs % 2 == 1), "flaky", "run %d", nondet_runs);
}
static void *p_nondet_create(int nodes) {
  nondet_runs++;
  return p_create(nodes);
}
static uint32_t p_observe(void *ctx, sim_world *w, int node) {
  ping_ctx *c = ctx;
  (void)w;
  return 1 + (uint32_t)node + (uint32_t)(c->delivered > 2) + (uint32_t)(c->delivered > 4);
}
static const sf_check nondet_checks[] = {{"flaky", p_nondet_check}, {NULL, NULL}};

static const sf_target ping = {.name = "ping",
                               .min_nodes = 2,
                               .max_nodes = 4,
                               .default_nodes = 2,
                               .create = p_create,
                               .destroy = free,
                               .ops = &ping_ops,
                               .workload = p_workload,
                               .live = p_live,
                               .liveness_ms = 1000,
                               .observe = p_observe};
static const sf_target nondet = {.name = "nondet",
                                 .min_nodes = 2,
                                 .max_nodes = 2,
                                 .default_nodes = 2,
                                 .create = p_nondet_create,
                                 .destroy = free,
                                 .ops = &ping_ops,
                                 .workload = p_workload,
                                 .invariants = nondet_checks};

static void pings(sf_scenario *s, uint32_t count) {
  sf_scenario_init(s);
  sf_step *st = &s->steps[s->nsteps++];
  memset(st, 0, sizeof *st);
  st->at_us = 1000;
  st->kind = SF_STEP_OP;
  st->count = count;
  st->interval_us = 1000;
}

static void fuzz_nondet(void) {
  sf_scenario *s = alloc_s();
  pings(s, 2);
  uint8_t buf[512];
  size_t n = sf_encode(s, buf, sizeof buf);
  nondet_runs = 0; /* this run: 1 (fails), the re-run: 2 (passes) */
  sf_fuzz_one(&nondet, buf, n);
}

/* Which nodes are up and which links blocked when the run ends. */
typedef struct {
  int up[4];
  int blocked_3_2, blocked_2_3, blocked_1_0;
} by_state_seen;

static void by_state_finish(void *ctx, sim_world *w, const sf_result *r) {
  by_state_seen *b = ctx;
  (void)r;
  for (int i = 0; i < 4; i++)
    b->up[i] = sim_node_up(w, i);
  b->blocked_3_2 = sim_link_blocked(w, 3, 2);
  b->blocked_2_3 = sim_link_blocked(w, 2, 3);
  b->blocked_1_0 = sim_link_blocked(w, 1, 0);
}

static sf_step *add_step(sf_scenario *s, uint64_t at, sf_step_kind kind, uint32_t node) {
  sf_step *st = &s->steps[s->nsteps++];
  memset(st, 0, sizeof *st);
  st->at_us = at;
  st->kind = (uint8_t)kind;
  st->node = node;
  st->by_state = 1;
  return st;
}

/* Step i of s (4 nodes) reads as want; s through its encoding, decoded
 * into a new scenario. */
static sf_scenario *described_and_decoded(const sf_scenario *s, uint32_t i, const char *want) {
  char d[256];
  sf_step_describe(&s->steps[i], 4, d, sizeof d);
  CHECK(strcmp(d, want) == 0);
  uint8_t buf[1024];
  size_t n = sf_encode(s, buf, sizeof buf);
  sf_scenario *back = alloc_s();
  CHECK_EQ(sf_decode(buf, n, back), SF_DECODED_PROTO);
  return back;
}

/* Run s on t; which nodes are up and which links blocked at its end, into *seen. */
static void run_seen(const sf_target *t, const sf_scenario *s, by_state_seen *seen, sf_result *r) {
  memset(seen, 0, sizeof *seen);
  sf_run_opts o = {.on_finish = by_state_finish, .finish_ctx = seen};
  sf_run(t, s, &o, r);
}

TEST(by_state_steps_address_nodes_by_rank) {
  /* ping's observer ranks node 3 first, then 2, 1, 0; crashed nodes last */
  sf_scenario *s = alloc_s();
  sf_scenario_init(s);
  s->nodes = 4;
  sf_step *p = add_step(s, 1000, SF_STEP_PARTITION, 0);
  p->mask_a = 1;                       /* rank 0 = n3 */
  p->mask_b = 2;                       /* rank 1 = n2 */
  p->flag = 1;                         /* one way: n3 -> n2 only */
  add_step(s, 2000, SF_STEP_CRASH, 0); /* n3 */
  add_step(s, 3000, SF_STEP_CRASH, 0); /* now n2: n3 is down, ranked last */
  sf_scenario *back = described_and_decoded(s, 1, "crash r0");
  CHECK_EQ(back->steps[2].by_state, 1);
  by_state_seen seen;
  sf_result r;
  run_seen(&ping, back, &seen, &r);
  CHECK(seen.up[0] && seen.up[1] && !seen.up[2] && !seen.up[3]);
  CHECK(seen.blocked_3_2 && !seen.blocked_2_3 && !seen.blocked_1_0);
  /* the same steps by number hit n0 and n0 again */
  for (uint32_t i = 0; i < back->nsteps; i++)
    back->steps[i].by_state = 0;
  run_seen(&ping, back, &seen, &r);
  CHECK(!seen.up[0] && seen.up[1] && seen.up[2] && seen.up[3]);
  CHECK(!seen.blocked_3_2 && !seen.blocked_1_0);
  free(s);
  free(back);
}

/* The time the step of index idx first ran in r; UINT64_MAX if it never did. */
static uint64_t ran_at(const sf_result *r, uint32_t idx) {
  for (uint32_t i = 0; i < r->nexec; i++)
    if (r->exec_step[i] == idx)
      return r->exec_time[i];
  return UINT64_MAX;
}

TEST(steps_wait_for_a_rise_to_the_top_rank) {
  /* ping's observer: 1 + node, plus 1 once 3 pings arrived and once 5
   * did (every node that is up changes then, and the first of them stays
   * first: a rise), 0 when down */
  sf_scenario *s = alloc_s();
  pings(s, 6); /* 1 ms apart from 1 ms: step 0 */
  s->nodes = 4;
  add_step(s, 0, SF_STEP_CRASH, 0)->on_change = 1;      /* 1: r0 (n3), at the 3rd ping */
  add_step(s, 0, SF_STEP_CRASH, 1)->on_change = 2;      /* 2: r1 (n1: n3 is down), at the 5th */
  add_step(s, 0, SF_STEP_RESTART, 0)->on_change = 3;    /* 3: never, n3's restart is no rise */
  add_step(s, 50000, SF_STEP_RESTART, 3)->by_state = 0; /* 4: n3 back */
  sf_scenario *back = described_and_decoded(s, 2, "crash r1 (at rise 2 to the top rank)");
  /* decoded in order of time: the three at 0 (1..3 above are 0..2), the pings, n3's restart */
  CHECK_EQ(back->steps[2].on_change, 3);
  by_state_seen seen;
  sf_result r;
  run_seen(&ping, back, &seen, &r);
  uint64_t third = ran_at(&r, 0), fifth = ran_at(&r, 1);
  CHECK(third > 3 * SIM_NS_PER_MS && third < fifth && fifth < 50 * SIM_NS_PER_MS);
  CHECK_EQ(ran_at(&r, 4), 50 * SIM_NS_PER_MS);
  CHECK_EQ(ran_at(&r, 2), UINT64_MAX);
  /* each rank was resolved when its step ran */
  CHECK(seen.up[0] && !seen.up[1] && seen.up[2] && seen.up[3]);
  /* a step counts the rises from its own time on */
  back->steps[0].at_us = third / 1000 + 1;
  run_seen(&ping, back, &seen, &r);
  CHECK_EQ(ran_at(&r, 0), fifth);
  /* without an observer, every step runs at its time */
  sf_target blind = ping;
  blind.observe = NULL;
  run_seen(&blind, back, &seen, &r);
  CHECK_EQ(ran_at(&r, 1), 0);
  CHECK_EQ(ran_at(&r, 2), 0);
  /* a count above the bound reads back as the bound */
  for (uint32_t i = 0; i < back->nsteps; i++)
    back->steps[i].on_change = 200;
  sf_scenario *clamped = described_and_decoded(back, 1, "crash r1 (at rise 200 to the top rank)");
  CHECK_EQ(clamped->steps[1].on_change, SF_MAX_ON_CHANGE);
  free(s);
  free(back);
  free(clamped);
}

TEST(nondeterministic_target_is_caught_at_its_own_site) {
  static char out[65536];
  int st = in_child(fuzz_nondet, out, sizeof out);
  CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
  CHECK(strstr(out, "FAILURE in target nondet: invariant 'flaky'"));
  CHECK(strstr(out, "DETERMINISM FAILURE in target nondet"));
}

TEST(liveness_after_heal) {
  sf_scenario *s = alloc_s();
  pings(s, 5);
  sf_step *lv = &s->steps[s->nsteps++];
  memset(lv, 0, sizeof *lv);
  lv->at_us = 500000;
  lv->kind = SF_STEP_LIVENESS;
  lv->count = 1000;
  sf_normalize(s);
  sf_result r;
  CHECK_EQ(sf_run(&ping, s, NULL, &r), 0); /* 5 pings >= 3 */
  /* isolate node 1 before the pings: they are lost; heal does not bring
   * them back and nothing sends more, so liveness fails at the deadline */
  sf_step *iso = &s->steps[s->nsteps++];
  memset(iso, 0, sizeof *iso);
  iso->kind = SF_STEP_ISOLATE;
  iso->node = 1;
  sf_normalize(s);
  CHECK_EQ(sf_run(&ping, s, NULL, &r), 1);
  CHECK(r.failure.is_liveness);
  /* the window opens once a message sent before the heal can have arrived
   * (the default network's longest delay) */
  sim_config d;
  sim_config_default(&d);
  CHECK_EQ(r.failure.time, 1500 * SIM_NS_PER_MS + d.net.latency_max_ns + d.net.reorder_delay_ns);
  /* steps after a liveness step are ignored */
  sf_step *late = &s->steps[s->nsteps++];
  *late = s->steps[0];
  late->at_us = 600000;
  late->count = 10;
  CHECK_EQ(s->steps[0].kind, SF_STEP_ISOLATE); /* sorted first: at 0 */
  s->steps[0].kind = SF_STEP_HEAL;             /* undo the isolation */
  sf_normalize(s);
  CHECK_EQ(sf_run(&ping, s, NULL, &r), 0);
  CHECK_EQ(r.ops_run, 5);
  free(s);
}

/* bulk: each op sends a 4,000-byte datagram from n0 to n1; live once
 * every datagram sent has arrived. */
typedef struct {
  int sent, got;
} bulk_ctx;

static void bulk_recv(void *ctx, sim_world *w, int node, int from, const void *m, size_t len) {
  (void)w, (void)node, (void)from, (void)m, (void)len;
  ((bulk_ctx *)ctx)->got++;
}
static const sim_node_ops bulk_ops = {NULL, bulk_recv, NULL, NULL, NULL};
static void *bulk_create(int nodes) {
  (void)nodes;
  return calloc(1, sizeof(bulk_ctx));
}
static void bulk_workload(void *ctx, sim_world *w, const sf_op *op) {
  static const uint8_t big[4000];
  (void)op;
  ((bulk_ctx *)ctx)->sent += sim_send(w, 0, 1, big, sizeof big) == 0;
}
static int bulk_live(void *ctx, sim_world *w) {
  bulk_ctx *c = ctx;
  (void)w;
  return c->got == c->sent;
}
static const sf_target bulk = {.name = "bulk",
                               .min_nodes = 2,
                               .max_nodes = 2,
                               .default_nodes = 2,
                               .create = bulk_create,
                               .destroy = free,
                               .ops = &bulk_ops,
                               .workload = bulk_workload,
                               .live = bulk_live,
                               .liveness_ms = 1000};

TEST(liveness_window_waits_for_a_bandwidth_queue) {
  /* Three 4,000-byte datagrams on a 1,000 bytes/s link: the last arrives
   * 12 s after it was sent, long after the heal. The window opens when it
   * has arrived, as for a slow link: before, it closed 1 s after the heal
   * plus the links' longest delay, and the run failed for a message the
   * simulator was still delivering. */
  sf_scenario *s = alloc_s();
  pings(s, 3);
  s->has_net = 1;
  s->net.bandwidth_kbps = 1;
  sf_step *lv = &s->steps[s->nsteps++];
  memset(lv, 0, sizeof *lv);
  lv->at_us = 10000;
  lv->kind = SF_STEP_LIVENESS;
  lv->count = 1000;
  sf_normalize(s);
  sf_result r;
  CHECK_EQ(sf_run(&bulk, s, NULL, &r), 0);
  CHECK(!r.failed);
  CHECK_EQ(r.stats.delivered, 3);
  /* the same datagrams lost on the way (n1 isolated until the heal): the
   * window, with nothing left in flight, closes as before */
  sf_step *iso = &s->steps[s->nsteps++];
  memset(iso, 0, sizeof *iso);
  iso->kind = SF_STEP_ISOLATE;
  iso->node = 1;
  sf_normalize(s);
  CHECK_EQ(sf_run(&bulk, s, NULL, &r), 1);
  CHECK(r.failure.is_liveness);
  CHECK(r.failure.time < 2 * SIM_NS_PER_S);
  free(s);
}

/* failstop: node 1 decides at 500 ms, the instant of the liveness step's
 * heal, to crash at once (as a fail-stop adapter does after a disk error:
 * "crash soon", an event queued for now); live once every node is up
 * at 800 ms (node 0 ticks every 100 ms meanwhile). */
static void failstop_crash(sim_world *w, void *arg) {
  (void)arg;
  sim_node_crash(w, 1);
}
static void failstop_boot(void *ctx, sim_world *w, int node, int restart) {
  (void)ctx;
  if (node == 0 || !restart) /* node 0 ticks every 100 ms */
    sim_timer_start(w, node, (node ? 500 : 100) * SIM_NS_PER_MS, 0);
}
static void failstop_timer(void *ctx, sim_world *w, int node, uint64_t tag) {
  (void)ctx, (void)tag;
  if (node == 1)
    sim_at(w, sim_now(w), failstop_crash, NULL);
  else
    sim_timer_start(w, node, 100 * SIM_NS_PER_MS, 0);
}
static const sim_node_ops failstop_ops = {failstop_boot, NULL, failstop_timer, NULL, NULL};
/* ... and, in failstop_again, crashes again as soon as it is restarted */
static void failstop_again_boot(void *ctx, sim_world *w, int node, int restart) {
  failstop_boot(ctx, w, node, restart);
  if (node == 1 && restart)
    sim_at(w, sim_now(w), failstop_crash, NULL);
}
static const sim_node_ops failstop_again_ops = {failstop_again_boot, NULL, failstop_timer, NULL,
                                                NULL};
static void *failstop_create(int nodes) {
  (void)nodes;
  return calloc(1, 1);
}
static int failstop_live(void *ctx, sim_world *w) {
  (void)ctx; /* some time after the heal, every node up */
  return sim_now(w) >= 800 * SIM_NS_PER_MS && sim_node_up(w, 0) && sim_node_up(w, 1);
}
static const sf_target failstop = {.name = "failstop",
                                   .min_nodes = 2,
                                   .max_nodes = 2,
                                   .default_nodes = 2,
                                   .create = failstop_create,
                                   .destroy = free,
                                   .ops = &failstop_ops,
                                   .live = failstop_live};

TEST(liveness_restarts_a_node_that_fails_stop_at_the_heal) {
  /* The heal restarts what is down, then the crash queued for its instant
   * takes node 1 down: before, it stayed down for the whole window, a
   * false liveness failure (docs/findings/cowsql-raft.md). It is restarted
   * once; a node that goes down again stays down. */
  sf_scenario *s = alloc_s();
  sf_scenario_init(s);
  s->nodes = 2;
  add_step(s, 500000, SF_STEP_LIVENESS, 0)->count = 1000;
  sf_normalize(s);
  sf_result r;
  CHECK_EQ(sf_run(&failstop, s, NULL, &r), 0);
  CHECK(!r.failed);
  CHECK_EQ(r.stats.crashes, 1);
  CHECK_EQ(r.stats.restarts, 1);
  sf_target again = failstop;
  again.ops = &failstop_again_ops;
  CHECK_EQ(sf_run(&again, s, NULL, &r), 1);
  CHECK(r.failure.is_liveness);
  CHECK_EQ(r.stats.crashes, 2);
  CHECK_EQ(r.stats.restarts, 1);
  free(s);
}

TEST(a_scenario_cannot_shorten_the_liveness_bound) {
  /* failstop is live 300 ms after a heal at 500 ms and declares no bound
   * (liveness_ms 0). A Liveness step asking for 1 ms was taken at its
   * word: the window closed 1 ms plus the longest delay after the heal,
   * and a fuzzer made the correct kvstore "fail" so (ossfuzz_afl-address
   * in CI). Without a bound of its own, a target gets the default one;
   * with one, the scenario may only lengthen it. */
  sf_scenario *s = alloc_s();
  sf_scenario_init(s);
  s->nodes = 2;
  add_step(s, 500000, SF_STEP_LIVENESS, 0)->count = 1;
  sf_normalize(s);
  sf_result r;
  CHECK_EQ(sf_run(&failstop, s, NULL, &r), 0);
  CHECK(!r.failed);
  sf_target bound = failstop;
  bound.liveness_ms = 400; /* 500 + 400 ms > 800 ms: live in time */
  CHECK_EQ(sf_run(&bound, s, NULL, &r), 0);
  bound.liveness_ms = 200; /* a bound the target does not keep */
  CHECK_EQ(sf_run(&bound, s, NULL, &r), 1);
  CHECK(r.failure.is_liveness);
  CHECK(r.failure.time < 800 * SIM_NS_PER_MS);
  s->steps[0].count = 2000; /* the step lengthens it */
  CHECK_EQ(sf_run(&bound, s, NULL, &r), 0);
  free(s);
}

/* A target of three versions that logs each boot's version (node * 8 +
 * version, in boot order). */
typedef struct {
  int n;
  int log[32];
} boots_log;
static void versions_boot(void *ctx, sim_world *w, int node, int restart) {
  (void)restart;
  boots_log *b = ctx;
  if (b->n < 32)
    b->log[b->n++] = node * 8 + (int)sim_node_version(w, node);
}
static const sim_node_ops versions_ops = {versions_boot, NULL, NULL, NULL, NULL};
static boots_log last_boots;
static void *versions_create(int nodes) {
  (void)nodes;
  return calloc(1, sizeof(boots_log));
}
static void versions_destroy(void *ctx) {
  last_boots = *(boots_log *)ctx;
  free(ctx);
}
static const sf_target versions3 = {.name = "versions3",
                                    .min_nodes = 3,
                                    .max_nodes = 3,
                                    .default_nodes = 3,
                                    .create = versions_create,
                                    .destroy = versions_destroy,
                                    .ops = &versions_ops,
                                    .versions = 3};

/* Nodes boot as the scenario's starting versions (modulo the target's);
 * an upgrade stops the node and boots it as its new version at once; a
 * node that is down takes its new version at its restart; a target of one
 * version restarts the node. */
TEST(nodes_start_and_upgrade_as_the_scenario_says) {
  sf_scenario *s = alloc_s();
  sf_scenario_init(s);
  s->nversions = 2;
  s->versions[0] = 2, s->versions[1] = 4;         /* 4 % 3 = 1; node 2: 0 */
  add_step(s, 100000, SF_STEP_UPGRADE, 1)->k = 5; /* to 2 */
  add_step(s, 200000, SF_STEP_CRASH, 2);
  add_step(s, 300000, SF_STEP_UPGRADE, 2)->k = 1; /* down: at its restart */
  add_step(s, 400000, SF_STEP_RESTART, 2);
  sf_normalize(s);
  sf_result r;
  CHECK_EQ(sf_run(&versions3, s, NULL, &r), 0);
  CHECK_EQ(last_boots.n, 5);
  int seen[3] = {0}; /* the first boots, in any order */
  for (int i = 0; i < 3; i++)
    seen[last_boots.log[i] / 8] = last_boots.log[i] % 8 + 1;
  CHECK(seen[0] == 3 && seen[1] == 2 && seen[2] == 1);
  CHECK_EQ(last_boots.log[3], 1 * 8 + 2); /* node 1, upgraded to 2 */
  CHECK_EQ(last_boots.log[4], 2 * 8 + 1); /* node 2, restarted as 1 */
  CHECK_EQ(r.stats.crashes, 2);           /* the upgrade's stop, and the crash */
  sf_target one = versions3;
  one.versions = 0; /* one version: every boot is version 0, the upgrade a restart */
  CHECK_EQ(sf_run(&one, s, NULL, &r), 0);
  CHECK_EQ(last_boots.n, 5);
  for (int i = 0; i < 5; i++)
    CHECK_EQ(last_boots.log[i] % 8, 0);
  free(s);
}

TEST(swarm_switches_and_amplification) {
  sf_scenario *s = alloc_s();
  pings(s, 50);
  sf_step *cr = &s->steps[s->nsteps++];
  memset(cr, 0, sizeof *cr);
  cr->at_us = 100000;
  cr->kind = SF_STEP_CRASH;
  cr->node = 1;
  s->has_net = 1;
  s->net.latency_min_us = s->net.latency_max_us = 100;
  s->net.loss_ppm = 100000;
  sf_normalize(s);
  sf_result r;
  sf_run(&ping, s, NULL, &r);
  CHECK_EQ(r.stats.crashes, 1);
  CHECK(r.stats.lost > 0 && r.stats.lost < 20);
  s->swarm.disabled = 1u << SF_FAULT_CRASH | 1u << SF_FAULT_LOSS;
  sf_run(&ping, s, NULL, &r);
  CHECK_EQ(r.stats.crashes, 0);
  CHECK_EQ(r.stats.lost, 0);
  CHECK_EQ(r.fault_steps_run, 0);
  s->swarm.disabled = 0;
  s->swarm.loss_pct = 1000; /* 10x: 100 % */
  sf_run(&ping, s, NULL, &r);
  CHECK_EQ(r.stats.delivered, 0);
  free(s);
}

TEST(budgets_bound_every_run) {
  sf_scenario *s = alloc_s();
  pings(s, 1);
  s->steps[0].k = 7; /* timer explosion */
  sf_result r;
  sf_run(&ping, s, NULL, &r);
  CHECK_EQ(r.stop, SIM_STOP_BUDGET);
  CHECK(r.budget != NULL);
  CHECK(r.stats.events <= SF_MAX_EVENTS);
  sf_run_opts o;
  memset(&o, 0, sizeof o);
  o.max_events = 1000;
  sf_run(&ping, s, &o, &r);
  CHECK_EQ(r.stats.events, 1000);
  free(s);
}

TEST(feedback_features) {
  sf_scenario *s = alloc_s();
  trigger(s);
  sf_run_opts o;
  memset(&o, 0, sizeof o);
  sf_result r;
  sf_run(&sf_target_pbstore, s, &o, &r);
  CHECK_EQ(r.features, 0);
  o.feedback = 1;
  sf_run(&sf_target_pbstore, s, &o, &r);
  CHECK_EQ(sf_feedback_enabled() ? r.features > 20 : r.features == 0, 1);
  uint32_t f1 = r.features;
  sf_run(&sf_target_pbstore, s, &o, &r);
  CHECK_EQ(r.features, f1); /* deterministic */
  free(s);
}

TEST(hostile_and_mutated_inputs_never_fail_the_correct_example) {
  static uint8_t buf[4096];
  uint64_t x = 99;
  sf_result r;
  int generated = 0, with_faults = 0;
  for (int i = 0; i < 3000; i++) {
    size_t len = (size_t)(test_rand(&x) % sizeof buf);
    for (size_t k = 0; k < len; k++)
      buf[k] = (uint8_t)test_rand(&x);
    if (sf_run_input(&sf_target_pbstore, buf, len, NULL, &r)) {
      fprintf(stderr, "input %d failed: %s %s\n", i, r.failure.name, r.failure.message);
      CHECK(0);
    }
    generated += r.decoded == SF_DECODED_GENERATED;
    with_faults += r.fault_steps_run > 0;
  }
  CHECK(generated > 2500);
  CHECK(with_faults > 1500);
  sf_scenario *s = alloc_s();
  for (uint64_t i = 0; i < 2000; i++) {
    trigger(s);
    for (uint64_t k = 0; k <= i % 5; k++)
      sf_mutate_scenario(s, i * 7 + k);
    if (sf_run(&sf_target_pbstore, s, NULL, &r)) {
      fprintf(stderr, "mutant %d failed: %s %s\n", (int)i, r.failure.name, r.failure.message);
      CHECK(0);
    }
  }
  free(s);
}

/* The explorer's injection: a step added from the novelty hook, appended
 * to the scenario with the event it was injected after, replays the run
 * exactly; sf_run_inject does nothing outside the hook. */
typedef struct {
  sf_step st;
  uint64_t after_ns;
  uint32_t stamp, outside;
} inject_ctx;

static void inject_once(void *ctx, sim_world *w, uint32_t bucket, int kind, int node) {
  inject_ctx *c = ctx;
  (void)bucket, (void)kind, (void)node;
  if (!c->stamp && sim_now(w) >= c->after_ns)
    c->stamp = sf_run_inject(w, &c->st);
}

static void inject_at_finish(void *ctx, sim_world *w, const sf_result *r) {
  inject_ctx *c = ctx;
  (void)r;
  c->outside = sf_run_inject(w, &c->st);
}

TEST(injected_steps_replay_as_scheduled_after_their_event) {
  sf_scenario *s = alloc_s(), *t = alloc_s();
  trigger(s);
  sf_step reset = s->steps[2];
  CHECK_EQ(reset.kind, SF_STEP_RESET);
  memmove(&s->steps[2], &s->steps[3], 2 * sizeof s->steps[0]); /* the trigger without its reset */
  s->nsteps = 4;
  sf_result plain, inj, again;
  CHECK_EQ(sf_run(&sf_target_pbstore_bug_reset_skip, s, NULL, &plain), 0);

  inject_ctx c = {reset, 300 * SIM_NS_PER_MS, 0, 7};
  sf_run_opts o;
  memset(&o, 0, sizeof o);
  sf_run_hooks hk = {.on_novel = inject_once, .ctx = &c};
  o.hooks = &hk;
  o.on_finish = inject_at_finish;
  o.finish_ctx = &c;
  sf_run(&sf_target_pbstore_bug_reset_skip, s, &o, &inj);
  CHECK(c.stamp > 0);
  CHECK_EQ(c.outside, 0); /* after the run: nothing to add to */
  CHECK(inj.hash != plain.hash);
  CHECK(inj.failed); /* injected before its time, the reset triggers the bug */

  /* the file: the scenario plus the step stamped with its event */
  *t = *s;
  t->steps[t->nsteps] = reset;
  t->steps[t->nsteps++].after_event = c.stamp;
  sf_normalize(t);
  uint8_t buf[4096];
  size_t n = sf_encode(t, buf, sizeof buf);
  CHECK(n > 0 && n <= sizeof buf);
  sf_run_input(&sf_target_pbstore_bug_reset_skip, buf, n, NULL, &again);
  CHECK_HASH(again.hash, inj.hash);
  CHECK_EQ(again.failed, inj.failed);
  CHECK_EQ(again.failure.time, inj.failure.time);

  /* a step due after an event the run never reaches never runs; one whose
   * time has passed at its event runs at that moment */
  *t = *s;
  t->steps[t->nsteps] = reset;
  t->steps[t->nsteps++].after_event = 4000000000u;
  sf_normalize(t);
  sf_run(&sf_target_pbstore_bug_reset_skip, t, NULL, &again);
  CHECK_HASH(again.hash, plain.hash);
  CHECK_EQ(again.steps_run, plain.steps_run);
  *t = *s;
  t->steps[t->nsteps] = reset;
  t->steps[t->nsteps].at_us = 0;
  t->steps[t->nsteps++].after_event = 50;
  sf_normalize(t);
  sf_run(&sf_target_pbstore_bug_reset_skip, t, NULL, &again);
  int seen = 0;
  for (uint32_t i = 0; i < again.nexec; i++)
    if (t->steps[again.exec_step[i]].kind == SF_STEP_RESET) {
      CHECK(again.exec_time[i] > 0);
      seen = 1;
    }
  CHECK(seen);
  free(s);
  free(t);
}

/* The explorer's revisit: the event hook comes once, right after its
 * event, and a step injected there replays like one from the novelty hook:
 * re-running the scenario up to that event reaches the same moment. */
typedef struct {
  sf_step st;
  uint32_t calls, stamp;
  uint64_t events, hash;
} event_ctx;

static void never_novel(void *ctx, sim_world *w, uint32_t bucket, int kind, int node) {
  (void)ctx, (void)w, (void)bucket, (void)kind, (void)node;
}

static void at_event(void *ctx, sim_world *w) {
  event_ctx *c = ctx;
  c->calls++;
  c->events = sim_get_stats(w)->events;
  c->hash = sim_trace_hash(w);
  c->stamp = sf_run_inject(w, &c->st);
}

static void hash_at_event(void *ctx, sim_world *w) {
  event_ctx *c = ctx;
  c->calls++;
  c->hash = sim_trace_hash(w);
}

TEST(event_hook_revisits_a_moment_and_injects_there) {
  sf_scenario *s = alloc_s(), *t = alloc_s();
  trigger(s);
  sf_step reset = s->steps[2];
  memmove(&s->steps[2], &s->steps[3], 2 * sizeof s->steps[0]); /* the trigger without its reset */
  s->nsteps = 4;
  sf_result plain, hooked, again;
  CHECK_EQ(sf_run(&sf_target_pbstore_bug_reset_skip, s, NULL, &plain), 0);
  uint64_t mid = plain.stats.events / 2; /* during the partition, before the heal */
  CHECK(mid > 20);

  event_ctx c;
  memset(&c, 0, sizeof c);
  c.st = reset;
  c.st.at_us = 0; /* at once */
  sf_run_opts o;
  memset(&o, 0, sizeof o);
  sf_run_hooks hk = {.on_novel = never_novel, .ctx = &c, .at_event = mid, .on_event = at_event};
  o.hooks = &hk;
  sf_run(&sf_target_pbstore_bug_reset_skip, s, &o, &hooked);
  CHECK_EQ(c.calls, 1);
  CHECK_EQ(c.events, mid);
  CHECK_EQ(c.stamp, mid);
  CHECK(hooked.hash != plain.hash);

  /* the revisit: the moment is the same, bit for bit */
  event_ctx d;
  memset(&d, 0, sizeof d);
  hk.ctx = &d;
  hk.on_event = hash_at_event;
  sf_run(&sf_target_pbstore_bug_reset_skip, s, &o, &again);
  CHECK_EQ(d.calls, 1);
  CHECK_HASH(d.hash, c.hash);
  CHECK_HASH(again.hash, plain.hash);

  /* the scenario file with the step stamped: the hooked run again */
  *t = *s;
  t->steps[t->nsteps] = c.st;
  t->steps[t->nsteps++].after_event = c.stamp;
  sf_normalize(t);
  sf_run(&sf_target_pbstore_bug_reset_skip, t, NULL, &again);
  CHECK_HASH(again.hash, hooked.hash);
  CHECK_EQ(again.failed, hooked.failed);

  /* an event the run never reaches: no call */
  memset(&d, 0, sizeof d);
  hk.at_event = plain.stats.events + 1000;
  sf_run(&sf_target_pbstore_bug_reset_skip, s, &o, &again);
  CHECK_EQ(d.calls, 0);
  CHECK_HASH(again.hash, plain.hash);
  free(s);
  free(t);
}

/* The novelty hook's node: the one an assertion site names, else the node
 * the event ran on. Pings go from n0 to n1, so every delivery runs on n1. */
static void p_sited_check(void *ctx, sim_world *w) {
  ping_ctx *c = ctx;
  SF_SOMETIMES(w, c->delivered >= 1, "test: pinged (the event's node)");
  SF_SOMETIMES_ON(w, c->delivered >= 2, 3, "test: pinged twice, about n3");
  SF_MAXIMIZE_ON(w, "test: pings, about n2", c->delivered, 2);
}
static const sf_check sited_checks[] = {{"sited", p_sited_check}, {NULL, NULL}};

typedef struct {
  uint32_t site_at[4], other_at[4], other_world; /* hook calls by node (world: -1) */
} node_seen;

static void note_node(void *ctx, sim_world *w, uint32_t bucket, int kind, int node) {
  node_seen *n = ctx;
  (void)w, (void)bucket;
  CHECK(node >= -1 && node < 4);
  CHECK(kind > SF_FT__NONE && kind < SF_FT__COUNT);
  int site = kind == SF_FT_SITE;
  if (node < 0)
    n->other_world += !site;
  else if (site)
    n->site_at[node]++;
  else
    n->other_at[node]++;
}

/* The ping target on 4 nodes with `checks` after every event: three pings
 * from n0 to n1. */
static void run_four_pings(const sf_check *checks, const sf_run_opts *o, sf_result *r) {
  sf_target t = ping;
  t.default_nodes = 4;
  t.invariants = checks;
  sf_scenario *s = alloc_s();
  pings(s, 3);
  s->nodes = 4;
  sf_run(&t, s, o, r);
  free(s);
}

TEST(novelty_hook_names_the_node_a_state_is_about) {
  node_seen n;
  memset(&n, 0, sizeof n);
  sf_run_opts o;
  memset(&o, 0, sizeof o);
  sf_run_hooks hk = {.on_novel = note_node, .ctx = &n};
  o.hooks = &hk;
  sf_result r;
  run_four_pings(sited_checks, &o, &r);
  CHECK(!r.failed);
  CHECK_EQ(n.site_at[1], 1); /* pinged: the delivery's node */
  CHECK_EQ(n.site_at[3], 1); /* pinged twice: the node its site names */
  CHECK_EQ(n.site_at[2], 4); /* the maximum: 0 (first hit), 1, 2, 3 */
  CHECK_EQ(n.site_at[0], 0);
  CHECK(n.other_at[1] > 0); /* deliveries' own buckets: their node */
}

/* Checks after every event look at the node the event ran on, or at every
 * node after a world-level event: the client operations are steps (all
 * four nodes); each node boots once; the deliveries run on n1. */
static void p_changed_check(void *ctx, sim_world *w) {
  ping_ctx *c = ctx;
  int from, to;
  sf_changed_nodes(w, &from, &to);
  if (from == 0 && to == 4)
    c->changed_all++;
  else if (from >= 0 && from < 4 && to == from + 1)
    c->changed_at[from]++;
  else
    c->changed_other++;
}
static const sf_check changed_checks[] = {{"changed", p_changed_check}, {NULL, NULL}};

static void keep_ctx(void *ctx, sim_world *w, const sf_result *r) {
  (void)r;
  *(ping_ctx *)ctx = *(ping_ctx *)sim_ctx(w);
}

/* run_four_pings with options o, which must not fail; *seen: the target's
 * context as the run left it. */
static void run_four_pings_seen(const sf_check *checks, sf_run_opts *o, ping_ctx *seen) {
  memset(seen, 0, sizeof *seen);
  o->on_finish = keep_ctx;
  o->finish_ctx = seen;
  sf_result r;
  run_four_pings(checks, o, &r);
  CHECK(!r.failed);
}

TEST(checks_see_the_nodes_an_event_changed) {
  ping_ctx seen;
  sf_run_opts o;
  memset(&o, 0, sizeof o);
  run_four_pings_seen(changed_checks, &o, &seen);
  CHECK_EQ(seen.delivered, 3);
  CHECK_EQ(seen.changed_at[0], 1); /* its boot */
  CHECK_EQ(seen.changed_at[1], 4); /* its boot and each delivery: the receiver only */
  CHECK_EQ(seen.changed_at[2], 1);
  CHECK_EQ(seen.changed_at[3], 1);
  CHECK(seen.changed_all >= 3); /* the three client operations, at least */
  CHECK_EQ(seen.changed_other, 0);
}

/* Annotation checks can skip their work where nobody records sites: a
 * plain run (a sweep, a replay) does not; the explorer (a novelty hook)
 * and the fuzzers (feedback) do. */
static void p_wanted_check(void *ctx, sim_world *w) {
  ping_ctx *c = ctx;
  c->wanted |= sf_sites_wanted(w) ? 2 : 1;
}
static const sf_check wanted_checks[] = {{"wanted", p_wanted_check}, {NULL, NULL}};

static void ignore_novel(void *ctx, sim_world *w, uint32_t bucket, int kind, int node) {
  (void)ctx, (void)w, (void)bucket, (void)kind, (void)node;
}

TEST(sites_are_wanted_only_where_hits_are_recorded) {
  for (int mode = 0; mode < 3; mode++) {
    ping_ctx seen;
    sf_run_opts o;
    memset(&o, 0, sizeof o);
    sf_run_hooks hk = {.on_novel = ignore_novel};
    if (mode == 1)
      o.hooks = &hk;
    if (mode == 2)
      o.feedback = 1;
    run_four_pings_seen(wanted_checks, &o, &seen);
    CHECK_EQ(seen.wanted, mode == 0 ? 1 : 2);
  }
}

/* A file that declares sites can read the catalog: its call to sf_sites()
 * must reach the function, not the section the sites are placed in (the
 * two once shared a name, and the assembler bound the call to the
 * section: this test crashed). */
TEST(catalog_lists_the_sites_of_the_file_that_reads_it) {
  size_t n = 0;
  sf_site *sites = sf_sites(&n);
  CHECK(sites != NULL && n >= 3);
  int mine = 0;
  for (size_t i = 0; i < n; i++)
    mine += strstr(sites[i].file, "test_run.c") != NULL;
  CHECK_EQ(mine, 4); /* p_sited_check's three, p_cheap_check's one */
}

/* A rare assertion-site state never shares a bucket with another kind of
 * state: sharing one hid it (not new in a run that had reached the other)
 * and made it look common to the explorer, which counts runs per bucket.
 * With one space for both, 121 of the buckets of 256 step kinds were also
 * buckets of 64 sites x 41 values. */
TEST(site_states_have_buckets_of_their_own) {
  static sf_features sites, steps;
  sf_features_init(&sites, 3);
  sf_features_init(&steps, 3);
  uint32_t fresh[SF_FRESH_MAX];
  int node[SF_FRESH_MAX], kind[SF_FRESH_MAX];
  for (uint32_t i = 0; i < 64; i++)
    for (uint64_t v = 0; v <= 40; v++) {
      sf_features_site(&sites, i, v < 32 ? v : 1ull << v, 1);
      uint32_t k = sf_features_drain(&sites, fresh, node, kind);
      for (uint32_t j = 0; j < k; j++)
        CHECK(kind[j] == SF_FT_SITE && node[j] == 1);
    }
  for (unsigned sk = 0; sk < 256; sk++) {
    sf_features_step(&steps, sk);
    uint32_t k = sf_features_drain(&steps, fresh, node, kind);
    for (uint32_t j = 0; j < k; j++)
      CHECK(kind[j] == SF_FT_STEP && node[j] == -1);
  }
  CHECK(sites.count > 500 && steps.count > 200);
  uint32_t shared = 0;
  for (uint32_t w = 0; w < SF_FB_WORDS; w++)
    shared += (uint32_t)__builtin_popcountll(sites.bits[w] & steps.bits[w]);
  CHECK_EQ(shared, 0);
}

/* A synthetic message record of the feature tests. */
static sim_trace_rec msg_rec(uint16_t kind, int from, int to, uint64_t id, uint64_t t_ms) {
  sim_trace_rec r;
  memset(&r, 0, sizeof r);
  r.kind = kind;
  r.node = (int16_t)(kind == SIM_EV_SEND ? from : to);
  r.peer = (int16_t)(kind == SIM_EV_SEND ? to : from);
  r.a = id;
  r.time = t_ms * 1000000;
  r.msg_kind = 2;
  return r;
}

/* Message `id` from `from` to `to`, sent at `sent` ms and delivered at
 * `at`: how many buckets were new. */
static uint32_t hop_at(sf_features *f, int from, int to, uint64_t id, uint64_t sent, uint64_t at) {
  uint32_t before = f->count;
  sim_trace_rec s = msg_rec(SIM_EV_SEND, from, to, id, sent),
                d = msg_rec(SIM_EV_DELIVER, from, to, id, at);
  sf_features_trace(f, &s);
  sf_features_trace(f, &d);
  return f->count - before;
}

/* From node 0 to node 1. */
static uint32_t fly_once(sf_features *f, uint64_t id, uint64_t sent, uint64_t at) {
  return hop_at(f, 0, 1, id, sent, at);
}

/* Staleness at delivery is a feature of its own: the same delivery again
 * is nothing new; a longer time in flight (another log2 bucket) is, and so
 * is the same one after the receiver changed role while it flew; a
 * delivery whose send was pushed out of the table is none. Off when
 * SIMFUZZ_SEARCH turns it off, and unless it turns it on. */
TEST(staleness_at_delivery_is_a_feature) {
  static sf_features f;
  sf_features_init(&f, 3);
  f.off = 1u << SF_FT_TIMELINE;           /* (the message features but one) */
  CHECK_EQ(fly_once(&f, 1, 0, 0), 2);     /* the pair (start, deliver), a STALE */
  CHECK_EQ(fly_once(&f, 2, 10, 10), 1);   /* the pair (deliver, deliver) only */
  CHECK_EQ(fly_once(&f, 9, 10, 10), 0);   /* the same: nothing new */
  CHECK_EQ(fly_once(&f, 3, 10, 13), 1);   /* 3 ms: bucket 2 */
  CHECK_EQ(fly_once(&f, 4, 20, 22), 0);   /* 2 ms: bucket 2 again */
  CHECK_EQ(fly_once(&f, 5, 0, 5000), 1);  /* 5 s */
  CHECK_EQ(fly_once(&f, 6, 0, 90000), 1); /* capped: 16 s and more */
  CHECK_EQ(fly_once(&f, 7, 0, 99999), 0);
  sim_trace_rec s = msg_rec(SIM_EV_SEND, 0, 1, 8, 30), d = msg_rec(SIM_EV_DELIVER, 0, 1, 8, 31);
  sf_features_trace(&f, &s);
  f.moves[1]++; /* as sf_features_observe counts a role change */
  uint32_t before = f.count;
  sf_features_trace(&f, &d);
  CHECK_EQ(f.count - before, 1); /* the receiver changed: new */
  /* a send whose slot a later one took (ids that collide in the table) */
  uint64_t a = 100, b = 101;
  while (sim_mix64(b) % SF_FLY_SLOTS != sim_mix64(a) % SF_FLY_SLOTS)
    b++;
  s = msg_rec(SIM_EV_SEND, 0, 1, a, 40);
  sf_features_trace(&f, &s);
  s = msg_rec(SIM_EV_SEND, 0, 1, b, 40);
  sf_features_trace(&f, &s);
  before = f.count;
  d = msg_rec(SIM_EV_DELIVER, 0, 1, a, 40 + 1000); /* would be a new 1 s bucket */
  sf_features_trace(&f, &d);
  CHECK_EQ(f.count, before);
  static sf_features off;
  sf_features_init(&off, 3);
  off.off = (uint32_t)sf_search_parse("-stale", 0);
  CHECK_EQ(off.off, 1u << SF_FT_STALE);
  off.off |= 1u << SF_FT_TIMELINE;
  CHECK_EQ(fly_once(&off, 1, 0, 0), 1); /* the pairs only */
  CHECK_EQ(fly_once(&off, 2, 0, 5000), 1);
  CHECK_EQ(fly_once(&off, 3, 0, 9000), 0);
  CHECK_EQ(sf_search_parse("", 0), 0);
  CHECK_EQ(sf_search_parse("", SF_SEARCH_DEFAULT_OFF), SF_SEARCH_DEFAULT_OFF);
  CHECK_EQ(sf_search_parse("-fault,,-site", 0), (1 << SF_FT_FAULT) | (1 << SF_FT_SITE));
  CHECK_EQ(sf_search_parse("-fault,-stal", 0), -1);
  CHECK_EQ(sf_search_parse("fault", 0), -1);
  CHECK_EQ(sf_search_parse("+", 0), -1);
  CHECK_EQ(sf_search_parse("+inflight,+stale", SF_SEARCH_INFLIGHT | 1u << SF_FT_STALE), 0);
  CHECK_EQ(sf_search_parse("-inflight,+inflight,-pair", 0), 1 << SF_FT_PAIR);
  CHECK_EQ(sf_search_parse("+anchor,+yield", SF_SEARCH_DEFAULT_OFF),
           SF_SEARCH_DEFAULT_OFF & ~(SF_SEARCH_ANCHOR | SF_SEARCH_YIELD));
  CHECK_EQ(sf_search_parse("-rerun,+anchors", 0), -1);
}

/* The epoch observer of the epoch feature's test: each node's epoch is
 * what ep_now says. */
static uint64_t ep_now[3];
static uint64_t ep_epoch(void *ctx, sim_world *w, int node) {
  (void)ctx;
  (void)w;
  return ep_now[node];
}
static const sim_node_ops ep_ops = {NULL, NULL, NULL, NULL, NULL};
static const sf_target ep_target = {.name = "epochs", .ops = &ep_ops, .epoch = ep_epoch};

/* Message id from node 0 in epoch `sent_in` to node 1 in epoch `at`,
 * whose epoch is `after` once the delivery's event is over: how many
 * buckets were new. */
static uint32_t epoch_once(sf_features *f, uint64_t id, uint64_t sent_in, uint64_t at,
                           uint64_t after) {
  uint32_t before = f->count;
  sim_trace_rec s = msg_rec(SIM_EV_SEND, 0, 1, id, 0), d = msg_rec(SIM_EV_DELIVER, 0, 1, id, 1);
  ep_now[0] = sent_in;
  sf_features_trace(f, &s);
  ep_now[0] = 99; /* the sender's epoch at the delivery does not count */
  ep_now[1] = at;
  sf_features_trace(f, &d);
  CHECK_EQ(f->count, before); /* nothing until the event is over */
  ep_now[1] = after;
  sf_features_observe(f);
  CHECK_EQ(f->pend_node, -1);
  return f->count - before;
}

/* With an epoch observer, a delivery is a feature of its message's epoch
 * (the sender's at the send) against its receiver's, by one or more, and
 * of whether the receiver's epoch moved on it; a message from an older
 * epoch that its receiver acted on is new where the same one ignored is
 * not. Nothing without an observer, for a send pushed out of the table,
 * or by default (off unless SIMFUZZ_SEARCH turns it on). */
TEST(a_message_of_an_older_epoch_is_a_feature) {
  sim_config c;
  sim_config_default(&c);
  c.nodes = 3;
  c.ops = &ep_ops;
  sim_world *w = sim_world_create(&c);
  CHECK(w);
  sim_run(w, 0, 0);
  static sf_features f;
  sf_features_init(&f, 3);
  CHECK(f.off >> SF_FT_EPOCH & 1); /* off by default */
  f.off = ((1u << SF_FT__COUNT) - 1) & ~(1u << SF_FT_EPOCH);
  CHECK_EQ(epoch_once(&f, 1, 5, 5, 5), 0); /* not bound: no observer to read */
  sf_features_bind(&f, &ep_target, NULL, w);
  CHECK_EQ(epoch_once(&f, 2, 5, 5, 5), 1); /* the same epoch */
  CHECK_EQ(epoch_once(&f, 3, 7, 7, 7), 0); /* the same again */
  CHECK_EQ(epoch_once(&f, 4, 4, 5, 5), 1); /* older by one, ignored */
  CHECK_EQ(epoch_once(&f, 5, 6, 7, 7), 0);
  CHECK_EQ(epoch_once(&f, 6, 4, 5, 6), 1); /* older by one, and the receiver moved */
  CHECK_EQ(epoch_once(&f, 7, 2, 5, 5), 1); /* older by more */
  CHECK_EQ(epoch_once(&f, 8, 1, 9, 9), 0);
  CHECK_EQ(epoch_once(&f, 9, 6, 5, 6), 1);  /* newer by one, adopted */
  CHECK_EQ(epoch_once(&f, 10, 9, 5, 9), 1); /* newer by more */
  /* a send whose slot a later one took: no epoch to compare */
  uint64_t a = 100, b = 101;
  while (sim_mix64(b) % SF_FLY_SLOTS != sim_mix64(a) % SF_FLY_SLOTS)
    b++;
  sim_trace_rec s = msg_rec(SIM_EV_SEND, 0, 1, a, 0);
  ep_now[0] = 1;
  sf_features_trace(&f, &s);
  s = msg_rec(SIM_EV_SEND, 0, 1, b, 0);
  sf_features_trace(&f, &s);
  sim_trace_rec d = msg_rec(SIM_EV_DELIVER, 0, 1, a, 1);
  ep_now[1] = 50; /* would be new: older by more, and moved */
  sf_features_trace(&f, &d);
  CHECK_EQ(f.pend_node, -1);
  /* off: the same deliveries are nothing */
  static sf_features g;
  sf_features_init(&g, 3);
  sf_features_bind(&g, &ep_target, NULL, w);
  g.off = ((1u << SF_FT__COUNT) - 1);
  CHECK_EQ(epoch_once(&g, 11, 4, 5, 6), 0);
  CHECK_EQ(sf_search_parse("+epoch", SF_SEARCH_DEFAULT_OFF) & (1 << SF_FT_EPOCH), 0);
  sim_world_destroy(w);
}

/* At 0 ms, delivered at 1 ms. */
static uint32_t hop(sf_features *f, int from, int to, uint64_t id) {
  return hop_at(f, from, to, id, 0, 1);
}

/* A delivery is a step of a Lamport timeline (the sender's role at the
 * send, the message kind, the receiver's role), a feature with the step
 * its sender last received before the send: paths along happens-before,
 * not along the order in which events ran. Off by default. */
TEST(paths_along_happens_before_are_a_feature) {
  static sf_features f;
  sf_features_init(&f, 3);
  CHECK(f.off >> SF_FT_TIMELINE & 1); /* off by default */
  f.off = ((1u << SF_FT__COUNT) - 1) & ~(1u << SF_FT_TIMELINE);
  f.role[0] = 1; /* a leader of sorts, and two of another role */
  f.role[1] = f.role[2] = 2;
  CHECK_EQ(hop(&f, 0, 1, 1), 1); /* (none) then 0 -> 1 */
  CHECK_EQ(hop(&f, 0, 1, 2), 0); /* the same path */
  CHECK_EQ(hop(&f, 1, 2, 3), 1); /* (0 -> 1) then 1 -> 2 */
  CHECK_EQ(hop(&f, 2, 1, 4), 1); /* (1 -> 2) then 2 -> 1: another cause */
  CHECK_EQ(hop(&f, 2, 1, 5), 0); /* node 2 received nothing since */
  /* what the sender received after the send is no cause of it: node 0
   * sends, then hears from node 2, then its message arrives */
  sim_trace_rec s = msg_rec(SIM_EV_SEND, 0, 1, 6, 0), d = msg_rec(SIM_EV_DELIVER, 0, 1, 6, 5);
  sf_features_trace(&f, &s);
  CHECK_EQ(hop(&f, 2, 0, 7), 1); /* (2 -> 1) then 2 -> 0 */
  uint32_t before = f.count;
  sf_features_trace(&f, &d);
  CHECK_EQ(f.count, before);     /* (none) then 0 -> 1, as the first */
  CHECK_EQ(hop(&f, 0, 1, 8), 1); /* now node 0's cause is 2 -> 0 */
  f.role[1] = 3;                 /* the receiver's role is part of the step */
  CHECK_EQ(hop(&f, 2, 1, 9), 1);
  static sf_features g;
  sf_features_init(&g, 3);
  g.off = (1u << SF_FT__COUNT) - 1;
  CHECK_EQ(hop(&g, 0, 1, 1), 0);
  CHECK_EQ(hop(&g, 1, 2, 2), 0);
  CHECK_EQ(sf_search_parse("+timeline", SF_SEARCH_DEFAULT_OFF) & (1 << SF_FT_TIMELINE), 0);
}

/* Node `node` takes `role` at t_ms: how many buckets were new. */
static uint32_t role_at(sf_features *f, int node, uint32_t role, uint64_t t_ms) {
  uint32_t before = f->count;
  sf_features_role(f, node, role, t_ms * 1000000);
  return f->count - before;
}

/* How long each node has held its role, at a role change, is a feature of
 * its own (dwell): the roles with their log4 buckets of ms as a multiset,
 * whatever the node numbers; the same changes after other dwell times are
 * new, after times of the same buckets they are not. Off by default; the
 * role vector (which the step features use) is the same either way. */
TEST(how_long_each_node_held_its_role_is_a_feature) {
  static sf_features f, g, h, d;
  uint32_t dwell_only = ((1u << SF_FT__COUNT) - 1) & ~(1u << SF_FT_DWELL);
  sf_features_init(&f, 3);
  sf_features_init(&g, 3);
  sf_features_init(&h, 3);
  f.off = g.off = h.off = dwell_only;
  CHECK_EQ(role_at(&f, 0, 1, 0), 1);
  CHECK_EQ(role_at(&f, 1, 1, 1), 1);
  CHECK_EQ(role_at(&g, 1, 1, 0), 1); /* the other node first: the same multisets */
  CHECK_EQ(role_at(&g, 0, 1, 1), 1);
  CHECK(!memcmp(f.bits, g.bits, sizeof f.bits));
  CHECK_EQ(role_at(&f, 2, 1, 1000), 1); /* node 2 held role 0 for 1 s */
  CHECK_EQ(role_at(&f, 2, 0, 1003), 1); /* and role 1 for 3 ms */
  CHECK_EQ(role_at(&f, 2, 1, 1005), 1);
  CHECK_EQ(role_at(&f, 2, 0, 1007), 0); /* as at 1,003 ms: buckets 5, 5 and 1 */
  CHECK_EQ(role_at(&h, 0, 1, 0), 1);
  CHECK_EQ(role_at(&h, 1, 1, 1), 1);
  CHECK_EQ(role_at(&h, 2, 1, 10), 1); /* 10 ms, not 1 s: another bucket */
  CHECK(memcmp(f.bits, h.bits, sizeof f.bits));
  CHECK_EQ(role_at(&h, 2, 0, 40000), 1);
  CHECK_EQ(role_at(&h, 2, 1, 90000), 1);
  CHECK_EQ(role_at(&h, 2, 0, 200000), 0); /* capped: 40 s and 200 s are one bucket */
  CHECK(f.role_vec == g.role_vec);
  sf_features_init(&d, 3);
  CHECK(d.off >> SF_FT_DWELL & 1);
  CHECK_EQ(sf_search_parse("+dwell", SF_SEARCH_DEFAULT_OFF) & (1 << SF_FT_DWELL), 0);
  d.off |= dwell_only;
  CHECK_EQ(role_at(&d, 0, 1, 0), 0);
  d.off = 0;
  CHECK_EQ(role_at(&d, 1, 1, 5), 3); /* transition, roles and dwell */
  static sf_features e;
  sf_features_init(&e, 3);
  e.off = 1u << SF_FT_DWELL;
  CHECK_EQ(role_at(&e, 0, 1, 0), 2); /* transition and roles */
  CHECK_EQ(role_at(&e, 1, 1, 5), 1); /* roles: the transition is not new */
  CHECK(e.role_vec == d.role_vec);
}

static uint32_t handoff_once(sf_features *f, int node, uint64_t thread, uint64_t lock) {
  uint32_t before = f->count;
  sim_trace_rec r = {0};
  r.kind = SIM_EV_THREAD;
  r.reason = SIM_THREAD_HANDOFF;
  r.node = (int16_t)node;
  r.peer = -1;
  r.a = thread;
  r.b = lock;
  sf_features_trace(f, &r);
  return f->count - before;
}

/* The order of lock acquisitions across a node's threads is a feature: a
 * handoff after the node's last one; the same order again is nothing new,
 * another order is, each node's order is its own; other thread records
 * are not; off when SIMFUZZ_SEARCH turns it off. */
TEST(lock_handoffs_between_threads_are_a_feature) {
  static sf_features f;
  sf_features_init(&f, 3);
  CHECK_EQ(handoff_once(&f, 0, 1, 1), 1); /* t1 takes lock 1, first of the node */
  CHECK_EQ(handoff_once(&f, 0, 2, 2), 1); /* then t2 takes lock 2 */
  CHECK_EQ(handoff_once(&f, 0, 1, 1), 1); /* then t1 lock 1 again: after (t2, 2), new */
  CHECK_EQ(handoff_once(&f, 0, 2, 2), 0); /* (t1, 1) then (t2, 2): seen */
  CHECK_EQ(handoff_once(&f, 1, 2, 2), 1); /* node 1's first: its own order */
  sim_trace_rec sw = {0};
  sw.kind = SIM_EV_THREAD;
  sw.reason = SIM_THREAD_SWITCH;
  sw.node = 0;
  sw.peer = -1;
  uint32_t before = f.count;
  sf_features_trace(&f, &sw);
  CHECK_EQ(f.count, before); /* a switch alone: nothing */
  static sf_features off;
  sf_features_init(&off, 3);
  off.off = (uint32_t)sf_search_parse("-lock", 0);
  CHECK_EQ(off.off, 1u << SF_FT_LOCK);
  CHECK_EQ(handoff_once(&off, 0, 1, 1), 0);
}

/* A run's features hash into SF_FB_NARROW buckets, or with
 * SIMFUZZ_SEARCH=+wide into SF_FB_BUCKETS: 5,000 distinct states (a step
 * kind each) fill at most the 3,072 buckets of the narrow map that are
 * not the sites', and stay nearly all apart in the wide one. A campaign
 * of 1,000 raft_kv roots reaches 9,400 distinct feature values. */
TEST(a_wide_map_tells_more_states_apart) {
  static sf_features f, g;
  sf_features_init(&f, 3);
  sf_features_init(&g, 3);
  f.off = g.off = 0;
  f.nb = SF_FB_NARROW;
  g.nb = SF_FB_BUCKETS;
  for (unsigned k = 0; k < 5000; k++) {
    sf_features_step(&f, k);
    sf_features_step(&g, k);
  }
  CHECK(f.count <= SF_FB_NARROW - SF_FB_SITE_BUCKETS);
  CHECK(f.count > 2300); /* about 2,470: most buckets hold two states or more */
  CHECK(g.count > 4700);
  int past = 0; /* the wide map's buckets beyond the narrow one's */
  for (unsigned i = SF_FB_NARROW / 64; i < SF_FB_BUCKETS / 64; i++)
    past += g.bits[i] != 0;
  CHECK(past > 0);
  CHECK_EQ(sf_search_parse("+wide", SF_SEARCH_DEFAULT_OFF) & SF_SEARCH_WIDE, 0);
  CHECK(sf_search_parse("", SF_SEARCH_DEFAULT_OFF) & SF_SEARCH_WIDE);
}

/* A system under test that moves the process (chdir(), as a daemon does at
 * start) is given back the directory its run started in, so that the files
 * a tool writes after the run under relative names stay where it meant;
 * a run started elsewhere comes back there, not to the first run's. */
static void *cd_create(int nodes) {
  if (chdir("/") != 0)
    return NULL;
  return p_create(nodes);
}
static const sf_target wanderer = {.name = "wanderer",
                                   .min_nodes = 2,
                                   .max_nodes = 2,
                                   .default_nodes = 2,
                                   .create = cd_create,
                                   .destroy = free,
                                   .ops = &ping_ops,
                                   .workload = p_workload};
TEST(a_run_gives_back_the_directory_it_started_in) {
  char start[4096], here[4096], tmp[] = "/tmp/simfuzz-cd-XXXXXX";
  CHECK(getcwd(start, sizeof start) != NULL);
  sf_scenario *s = alloc_s();
  pings(s, 2);
  sf_result r;
  sf_run(&wanderer, s, NULL, &r);
  CHECK(getcwd(here, sizeof here) != NULL);
  CHECK_EQ(strcmp(here, start), 0);
  CHECK(mkdtemp(tmp) != NULL);
  CHECK_EQ(chdir(tmp), 0); /* the caller moves between runs: the next run comes back here */
  sf_run(&wanderer, s, NULL, &r);
  CHECK(getcwd(here, sizeof here) != NULL);
  CHECK_EQ(strcmp(here, tmp), 0);
  CHECK_EQ(chdir(start), 0);
  CHECK_EQ(rmdir(tmp), 0);
  free(s);
}

/* No two states of the catalog's sites share a bucket: every value class
 * of every site, while the catalog has at most 1024 / 96 sites (this
 * binary's has 4). Hashed, 67 of this catalog's 364 states fell on a
 * bucket another state had (raft_kv_reconf: 68 of 279). Sites past the catalog and
 * classes past a larger catalog's share still stay in the sites' buckets. */
TEST(site_states_of_the_catalog_never_share_a_bucket) {
  size_t n = 0;
  sf_sites(&n);
  CHECK(n >= 1 && n <= SF_FB_SITE_BUCKETS / SF_VALUE_CLASSES);
  static uint8_t taken[SF_FB_BUCKETS];
  memset(taken, 0, sizeof taken);
  uint32_t nb = sf_fb_buckets(); /* the sites' are the top ones of the run's */
  CHECK(nb == SF_FB_NARROW || nb == SF_FB_BUCKETS);
  uint32_t shared = 0, states = 0;
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t k = 0; k < SF_VALUE_CLASSES; k++) {
      uint64_t v = sf_features_class_value(k);
      if (v == UINT64_MAX)
        continue;
      uint32_t b = sf_features_site_bucket(i, v);
      CHECK(b >= nb - SF_FB_SITE_BUCKETS && b < nb);
      shared += taken[b]++ != 0;
      states++;
    }
  CHECK_EQ(shared, 0);
  CHECK(states == n * (SF_VALUE_CLASSES - 5));
  for (uint32_t i = (uint32_t)n; i < n + 64; i++) { /* no catalog slot: hashed, still a site's */
    uint32_t b = sf_features_site_bucket(i, 7);
    CHECK(b >= nb - SF_FB_SITE_BUCKETS && b < nb);
  }
}

/* A site's hit that cannot be new to the run (a SOMETIMES already hit, a
 * value not above the run's best) costs a test, not a call: the node
 * argument, evaluated only for a call, counts them. Before the fast path
 * it was evaluated after every event. No run leaves its sites' state
 * behind. */
static void p_cheap_check(void *ctx, sim_world *w) {
  ping_ctx *c = ctx;
  c->checked++;
  SF_MAXIMIZE_ON(w, "test: pings, counted calls", c->delivered, (c->node_evals++, 1));
}
static const sf_check cheap_checks[] = {{"cheap", p_cheap_check}, {NULL, NULL}};

TEST(site_hits_that_cannot_be_new_are_not_calls) {
  for (int mode = 0; mode < 2; mode++) {
    ping_ctx seen;
    sf_run_opts o;
    memset(&o, 0, sizeof o);
    o.feedback = mode;
    run_four_pings_seen(cheap_checks, &o, &seen);
    CHECK_EQ(seen.delivered, 3);
    CHECK(seen.checked > 8);
    CHECK_EQ(seen.node_evals, mode ? 4 : 0); /* recorded: 0 (first hit), 1, 2, 3 */
    CHECK(sf__site_floor == NULL);
  }
}

TEST_MAIN(T(planted_bug_fails_correct_mode_passes), T(fuzz_mode_reports_rechecks_and_aborts),
          T(by_state_steps_address_nodes_by_rank), T(steps_wait_for_a_rise_to_the_top_rank),
          T(nondeterministic_target_is_caught_at_its_own_site), T(liveness_after_heal),
          T(liveness_window_waits_for_a_bandwidth_queue),
          T(liveness_restarts_a_node_that_fails_stop_at_the_heal),
          T(a_scenario_cannot_shorten_the_liveness_bound),
          T(nodes_start_and_upgrade_as_the_scenario_says), T(swarm_switches_and_amplification),
          T(budgets_bound_every_run), T(feedback_features), T(staleness_at_delivery_is_a_feature),
          T(a_message_of_an_older_epoch_is_a_feature), T(paths_along_happens_before_are_a_feature),
          T(a_wide_map_tells_more_states_apart), T(how_long_each_node_held_its_role_is_a_feature),
          T(lock_handoffs_between_threads_are_a_feature),
          T(hostile_and_mutated_inputs_never_fail_the_correct_example),
          T(injected_steps_replay_as_scheduled_after_their_event),
          T(event_hook_revisits_a_moment_and_injects_there),
          T(novelty_hook_names_the_node_a_state_is_about), T(checks_see_the_nodes_an_event_changed),
          T(sites_are_wanted_only_where_hits_are_recorded),
          T(catalog_lists_the_sites_of_the_file_that_reads_it),
          T(site_states_have_buckets_of_their_own),
          T(site_states_of_the_catalog_never_share_a_bucket),
          T(site_hits_that_cannot_be_new_are_not_calls),
          T(a_run_gives_back_the_directory_it_started_in))
