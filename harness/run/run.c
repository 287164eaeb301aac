/* The runner: executes one scenario against a target on a fresh world. */
#include "features.h"
#include "hooks.h"
#include "sites.h"
#include <simfuzz/simfuzz_runner.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#ifndef SF_FEEDBACK
#define SF_FEEDBACK 1
#endif

typedef struct run_state run_state;

typedef struct {
  run_state *rs;
  const sf_step *st;  /* the step: in the scenario, or injected (inj) */
  uint32_t idx;       /* its index in the scenario (the execution log) */
  uint32_t remaining; /* client op repetitions left */
  uint8_t rises;      /* Step.on_change: rises to the top rank still to wait for */
  uint8_t waiting;    /* its time has come, and it waits for them */
} slot;

struct run_state {
  const sf_target *t;
  const sf_scenario *s;
  const sf_run_opts *o;
  void *ctx;
  sim_world *w;
  int n;
  uint64_t all;             /* mask of existing nodes */
  int steps_closed;         /* a liveness step ran: later steps are ignored */
  uint64_t crashes_seen;    /* ... and healed everything: crashes after_heal has seen */
  int restart_due;          /* restart_down is scheduled */
  uint64_t healed_restarts; /* nodes restart_down restarted, a bit each */
  uint64_t live_deadline;   /* absolute deadline of the liveness window */
  uint64_t slowest_ns;      /* the longest one-way delay a link has had in this run */
  uint32_t steps_run, fault_steps_run, ops_run, op_seq;
  uint32_t nexec; /* execution log: the first execution of each step */
  /* feedback */
  int fb;
  sf_features feat;
  /* assertion sites (SF_SOMETIMES, ...): the value a hit must reach to
   * be new (sf__site_floor: 0 until the first hit), and the best value */
  size_t nsites;
  uint64_t *site_floor;
  uint64_t *site_max;
  /* the assert() hook: where a failed assertion of the system under test
   * ends the run (record mode), while execute() runs */
  int in_execute;
  jmp_buf crash_jmp;
  run_state *outer; /* the run this one is nested in (determinism re-check) */
  sim_world *cur_w; /* sim_current() before this run */
  int cur_node;
  /* steps scheduled after an event (Step.after_event): the scenario's,
   * in (after_event, index) order, and those injected during the run */
  uint32_t nlater, next_later;
  int in_novel; /* inside the on_novel or on_event hook: sf_run_inject() may add steps */
  uint32_t nslots, ninj;
  /* steps that wait for a rise to the top rank (Step.on_change), and each
   * node's observed state after the last event while any waits */
  uint32_t nwaiting;
  uint32_t seen[SIM_MAX_NODES];
  sf_step *inj; /* SF_MAX_STEPS of them, allocated at the first injection */
  /* The arrays, last: each is written before it is read, up to its count
   * (nexec, nlater, nslots), so a run zeroes only what comes before. */
  uint16_t exec_step[SF_MAX_STEPS];
  uint64_t exec_time[SF_MAX_STEPS];
  uint16_t later[SF_MAX_STEPS];
  slot slots[2 * SF_MAX_STEPS];
};

/* The innermost run executing in this thread (for the assert() hook);
 * NULL between runs. */
static _Thread_local run_state *active_run;

__thread const uint64_t *sf__site_floor;

/* Make rs (or none) the thread's active run. */
static void set_active(run_state *rs) {
  active_run = rs;
  sf__site_floor = rs ? rs->site_floor : NULL;
}

/* ---- helpers ------------------------------------------------------------ */

static uint32_t amp(uint32_t ppm, uint32_t pct) {
  if (pct == 0)
    return ppm;
  uint64_t v = (uint64_t)ppm * pct / 100;
  return v > SIM_PPM ? SIM_PPM : (uint32_t)v;
}

static int disabled(const sf_scenario *s, sf_fault_kind k) {
  return (s->swarm.disabled >> k) & 1;
}

/* Scenario link parameters -> simulator link parameters, with the swarm's
 * switches and amplification applied. */
static void to_link(const sf_scenario *s, const sf_net *n, sim_link_params *p) {
  sim_config d;
  sim_config_default(&d);
  *p = d.net;
  if (n->latency_max_us) {
    p->latency_min_ns = (uint64_t)n->latency_min_us * 1000;
    p->latency_max_ns = (uint64_t)n->latency_max_us * 1000;
  }
  if (s->swarm.latency_pct) {
    p->latency_min_ns = p->latency_min_ns * s->swarm.latency_pct / 100;
    p->latency_max_ns = p->latency_max_ns * s->swarm.latency_pct / 100;
  }
  p->dist = n->exponential ? SIM_LAT_EXPONENTIAL : SIM_LAT_UNIFORM;
  /* the random faults: off by their switch, else scaled (SF_NET_FAULTS) */
#define LINK_FAULT_(field, fault, amp_pct)                                                         \
  p->field = disabled(s, SF_FAULT_##fault) ? 0 : amp(n->field, s->swarm.amp_pct);
  SF_NET_FAULTS(LINK_FAULT_)
#undef LINK_FAULT_
  if (n->reorder_delay_us)
    p->reorder_delay_ns = (uint64_t)n->reorder_delay_us * 1000;
  p->bandwidth_bps = (uint64_t)n->bandwidth_kbps * 1000;
  p->queue_limit = n->queue_limit;
}

/* Remember the longest one-way delay link parameters p allow. */
static void note_delay(run_state *rs, const sim_link_params *p) {
  uint64_t d = p->latency_max_ns + p->reorder_delay_ns;
  if (d > rs->slowest_ns)
    rs->slowest_ns = d;
}

/* Scenario disk faults -> simulator disk parameters (SF_DISK_FIELDS' sim
 * column), the faults off by the swarm's switch or scaled by disk_pct. */
static void to_disk(const sf_scenario *s, const sf_disk *d, sim_disk_params *p) {
  sim_config c;
  sim_config_default(&c);
  *p = c.disk;
  int off = disabled(s, SF_FAULT_DISK);
#define TO_DISK_(field, type, bound, draw, sim, fault)                                             \
  p->sim = !(fault) ? d->field : off ? 0 : amp(d->field, s->swarm.disk_pct);
  SF_DISK_FIELDS(TO_DISK_)
#undef TO_DISK_
  if (p->unsynced_corrupt_ppm > SIM_PPM - p->unsynced_keep_ppm)
    p->unsynced_corrupt_ppm = SIM_PPM - p->unsynced_keep_ppm;
  SIM_ASSERT(p->unsynced_keep_ppm + p->unsynced_corrupt_ppm <= SIM_PPM);
}

int sf_client_nodes(const sf_target *t) {
  return t->client_nodes > 0
             ? (t->client_nodes < SIM_MAX_NODES / 2 ? t->client_nodes : SIM_MAX_NODES / 2)
             : 0;
}

int sf_nodes_for(const sf_target *t, const sf_scenario *s) {
  int n = s->nodes ? (int)s->nodes : t->default_nodes;
  int lo = t->min_nodes > 0 ? t->min_nodes : 1;
  int room = SIM_MAX_NODES - sf_client_nodes(t); /* the world holds the clients too */
  int hi = t->max_nodes > 0 && t->max_nodes <= room ? t->max_nodes : room;
  if (n < lo)
    n = lo;
  if (n > hi)
    n = hi;
  return n;
}

/* ---- hooks ------------------------------------------------------------- */

static void on_trace(void *p, const sim_world *w, const sim_trace_rec *r, const void *payload,
                     size_t len) {
  run_state *rs = p;
  if (rs->fb)
    sf_features_trace(&rs->feat, r);
  if (rs->o->trace)
    rs->o->trace(rs->o->trace_ctx, w, r, payload, len);
}

static int schedule_step(run_state *rs, const sf_step *st, uint32_t idx);
static void after_heal(run_state *rs, sim_world *w);

/* The explorer watches this run for new states (it then needs features). */
static int novel_hook(const sf_run_opts *o) {
  return o->hooks && o->hooks->on_novel;
}

/* Node i's observed state (0: down). The target has an observer. */
static uint32_t observed(run_state *rs, int i) {
  return sim_node_up(rs->w, i) ? rs->t->observe(rs->ctx, rs->w, i) : 0;
}

/* Each node's observed state, into rs->seen. */
static void see_all(run_state *rs) {
  for (int i = 0; i < rs->n; i++)
    rs->seen[i] = observed(rs, i);
}

/* Whether, since the last look, the observed state of a node that was up
 * and still is has changed, and that node now ranks strictly first
 * (Step.on_change; a boot or a restart is no rise); looks again. */
static int rises_to_top(run_state *rs) {
  uint32_t prev[SIM_MAX_NODES];
  memcpy(prev, rs->seen, (size_t)rs->n * sizeof prev[0]);
  see_all(rs);
  int top = 0, alone = 1;
  for (int i = 1; i < rs->n; i++)
    if (rs->seen[i] > rs->seen[top]) {
      top = i;
      alone = 1;
    } else if (rs->seen[i] == rs->seen[top]) {
      alone = 0;
    }
  return alone && prev[top] != 0 && rs->seen[top] != 0 && rs->seen[top] != prev[top];
}

static void run_step(sim_world *w, void *arg);

/* A rise to the top rank: each waiting step counts it, and those that
 * have seen as many as they wait for run now, in the order they were
 * scheduled. */
static void wake_waiting(run_state *rs) {
  for (uint32_t i = 0; i < rs->nslots && rs->nwaiting; i++) {
    slot *sl = &rs->slots[i];
    if (!sl->waiting)
      continue;
    SIM_ASSERT(sl->rises > 0 && sl->st->on_change >= sl->rises);
    if (--sl->rises)
      continue;
    sl->waiting = 0;
    rs->nwaiting--;
    sim_at(rs->w, sim_now(rs->w), run_step, sl); /* (no room: the run is stopping) */
  }
}

/* Something must run after every event for the explorer's hooks. */
static int any_hook(const sf_run_opts *o) {
  return o->hooks && (o->hooks->on_novel || o->hooks->on_event);
}

static void after_event(void *p, sim_world *w) {
  run_state *rs = p;
  const sf_check *c = rs->t->invariants;
  for (; c && c->fn; c++) {
    c->fn(rs->ctx, w);
    if (sim_failed(w))
      return;
  }
  if (rs->fb && (rs->t->observe || rs->t->epoch))
    sf_features_observe(&rs->feat);
  if (rs->nwaiting && rises_to_top(rs))
    wake_waiting(rs);
  const sf_run_hooks *hk = rs->o->hooks;
  if (hk && hk->on_novel && rs->feat.nfresh) {
    uint32_t fresh[SF_FRESH_MAX];
    int node[SF_FRESH_MAX], kind[SF_FRESH_MAX];
    uint32_t k = sf_features_drain(&rs->feat, fresh, node, kind);
    rs->in_novel = 1;
    for (uint32_t i = 0; i < k; i++)
      hk->on_novel(hk->ctx, w, fresh[i], kind[i], node[i] >= 0 ? node[i] : sim_event_node(w));
    rs->in_novel = 0;
  }
  if (hk && hk->on_event && sim_get_stats(w)->events == hk->at_event) {
    rs->in_novel = 1;
    hk->on_event(hk->ctx, w);
    rs->in_novel = 0;
  }
  after_heal(rs, w);
  /* the scenario's steps due after this event, in the order an explorer
   * that injected them (from the hook above) scheduled them */
  while (rs->next_later < rs->nlater &&
         rs->s->steps[rs->later[rs->next_later]].after_event <= sim_get_stats(w)->events) {
    uint32_t i = rs->later[rs->next_later++];
    schedule_step(rs, &rs->s->steps[i], i);
  }
}

uint32_t sf_run_inject(sim_world *w, const sf_step *st) {
  run_state *rs = active_run;
  if (!rs || rs->w != w || !rs->in_novel || rs->s->nsteps + rs->ninj >= SF_MAX_STEPS)
    return 0;
  uint64_t n = sim_get_stats(w)->events;
  if (n == 0 || n > UINT32_MAX)
    return 0;
  if (!rs->inj && !(rs->inj = malloc(SF_MAX_STEPS * sizeof *rs->inj)))
    sf_out_of_memory("the runner");
  sf_step *copy = &rs->inj[rs->ninj];
  *copy = *st;
  copy->after_event = (uint32_t)n;
  if (schedule_step(rs, copy, rs->s->nsteps + rs->ninj) != 0)
    return 0;
  rs->ninj++;
  return (uint32_t)n;
}

/* ---- assertion sites ------------------------------------------------------ */

/* The run of w if it records its sites' hits, else NULL. */
static run_state *site_recorder(const sim_world *w) {
  run_state *rs = active_run;
  return rs && rs->w == w && rs->site_floor ? rs : NULL;
}

int sf_sites_wanted(const sim_world *w) {
  return site_recorder(w) != NULL;
}

void sf_site_hit(sim_world *w, sf_site *site, uint64_t value, int node) {
  run_state *rs = site_recorder(w);
  if (!rs)
    return;
  size_t i = sf__site_index(site);
  SIM_ASSERT(i < rs->nsites); /* one of this binary's sites */
  if (!rs->site_floor[i] || value > rs->site_max[i]) {
    rs->site_max[i] = value;
    rs->site_floor[i] = value < UINT64_MAX ? value + 1 : value;
    if (rs->fb)
      sf_features_site(&rs->feat, (uint32_t)i, site->kind == SF_SITE_MAXIMIZE ? value : 0, node);
  }
}

static void at_end(void *p, sim_world *w) {
  run_state *rs = p;
  for (const sf_check *c = rs->t->end_checks; c && c->fn; c++) {
    c->fn(rs->ctx, w);
    if (sim_failed(w))
      return;
  }
}

static int live(void *p, sim_world *w) {
  run_state *rs = p;
  return rs->t->live(rs->ctx, w);
}

static void report_and_recheck(void *p, sim_world *w);

/* ---- steps --------------------------------------------------------------- */

/* The shortest liveness window a scenario may ask of t: the bound it
 * declares, else the default one. A Liveness step only lengthens it: a
 * deadline shorter than any the system promises makes a correct system
 * "fail" (a fuzzer set 1 ms, and the correct kvstore failed). */
static uint32_t live_bound_ms(const sf_target *t) {
  return t->liveness_ms ? t->liveness_ms : SF_DEFAULT_LIVENESS_MS;
}

static void heal_all(run_state *rs) {
  sim_world *w = rs->w;
  sim_heal(w);
  sim_config healthy; /* a healthy network: default latency, no faults */
  sim_config_default(&healthy);
  sim_net_set_all(w, &healthy.net);
  sim_faultpoint_params fp = {0, 0};
  sim_faultpoints_set(w, &fp);
  sim_disk_params dp;
  sim_config c;
  sim_config_default(&c);
  dp = c.disk;
  dp.unsynced_keep_ppm = SIM_PPM;
  for (int i = 0; i < rs->n; i++) {
    sim_disk_set_params(w, i, &dp);
    for (int op = SIM_DISK_READ; op <= SIM_DISK_SYNC; op++) /* armed countdowns too */
      sim_disk_fail_nth(w, i, (sim_disk_op)op, 0);
    sim_clock_set_drift(w, i, 0);
    if (sim_node_paused(w, i))
      sim_node_resume(w, i);
    if (!sim_node_up(w, i))
      sim_node_restart(w, i);
  }
}

/* After the heal, a node that goes down is restarted once: a fail-stop
 * crash the system decided before the heal (a disk error's "crash soon",
 * an event already queued for the heal's instant or a completion that
 * carries an earlier failure) must not leave it down for the whole
 * liveness window, as no operator would. A node that goes down again
 * stays down: the window then judges it. */
static int down_not_restarted(const run_state *rs, const sim_world *w) {
  for (int i = 0; i < rs->n; i++)
    if (!sim_node_up(w, i) && !(rs->healed_restarts & (1ull << i)))
      return i;
  return -1;
}

static void restart_down(sim_world *w, void *p) {
  run_state *rs = p;
  rs->restart_due = 0;
  for (int i; (i = down_not_restarted(rs, w)) >= 0;) {
    rs->healed_restarts |= 1ull << i;
    sim_node_restart(w, i);
  }
}

/* After every event once healed; only a crash can take a node down, so
 * the nodes are looked at only when the crash count moved. */
static void after_heal(run_state *rs, sim_world *w) {
  if (!rs->steps_closed || rs->restart_due)
    return;
  uint64_t crashes = sim_get_stats(w)->crashes;
  if (crashes == rs->crashes_seen)
    return;
  rs->crashes_seen = crashes;
  if (down_not_restarted(rs, w) >= 0)
    rs->restart_due = sim_at(w, sim_now(w), restart_down, rs) == 0;
}

/* perm[rank] = node, ranked by the target's observed state, highest first;
 * ties by node number; crashed nodes (state 0) last. Identity without an
 * observer. */
static void rank_nodes(run_state *rs, int *perm) {
  uint32_t key[SIM_MAX_NODES];
  for (int i = 0; i < rs->n; i++) {
    perm[i] = i;
    key[i] = rs->t->observe ? observed(rs, i) : 0;
  }
  for (int i = 1; i < rs->n; i++) /* insertion sort: stable, n <= 64 */
    for (int j = i; j > 0 && key[perm[j - 1]] < key[perm[j]]; j--) {
      int tmp = perm[j];
      perm[j] = perm[j - 1];
      perm[j - 1] = tmp;
    }
}

static uint64_t remap_mask(uint64_t m, const int *perm, int n) {
  uint64_t out = 0;
  for (int i = 0; i < n; i++)
    if (m >> i & 1)
      out |= 1ull << perm[i];
  return out;
}

/* Node's version v of the scenario, as one of the target's (0 for a
 * target of one version). */
static void set_version(run_state *rs, int node, uint32_t v) {
  sim_node_set_version(rs->w, node, rs->t->versions > 1 ? v % rs->t->versions : 0);
}

/* An upgrade: the node's process stops and starts again as version v (of
 * the target's versions), on what its disk holds; a node that is down runs
 * v when it restarts. */
static void upgrade(run_state *rs, int node, uint32_t v) {
  set_version(rs, node, v);
  if (!sim_node_up(rs->w, node))
    return;
  sim_node_stop(rs->w, node);
  int rc = sim_node_restart(rs->w, node);
  SIM_ASSERT(rc == 0 || rc == -ENOSPC); /* down now, and no boot was on the way */
}

/* Each node's starting version, as the scenario says (before any boot). */
static void start_versions(run_state *rs) {
  if (rs->t->versions < 2)
    return;
  for (int i = 0; i < rs->n; i++)
    set_version(rs, i, (uint32_t)i < rs->s->nversions ? rs->s->versions[i] : 0);
}

static void run_step(sim_world *w, void *arg) {
  slot *sl = arg;
  run_state *rs = sl->rs;
  const sf_step *st = sl->st;
  if (rs->steps_closed)
    return;
  sf_fault_kind fk = sf_step_fault(st->kind);
  if (fk && disabled(rs->s, fk))
    return;
  if (sl->rises) { /* its time has come: from now on it waits for its rises */
    SIM_ASSERT(!sl->waiting && rs->t->observe);
    if (!rs->nwaiting)
      see_all(rs);
    sl->waiting = 1;
    rs->nwaiting++;
    return;
  }
  int n = rs->n;
  int a = (int)(st->node % (uint32_t)n), b = (int)(st->peer % (uint32_t)n);
  int perm[SIM_MAX_NODES];
  if (st->by_state) { /* node numbers are ranks: resolve them now */
    rank_nodes(rs, perm);
    a = perm[a];
    b = perm[b];
  } else {
    for (int i = 0; i < n; i++)
      perm[i] = i;
  }
  rs->steps_run++;
  if (sl->remaining == (sf_step_shape_of(st->kind) == SF_SHAPE_OP ? st->count : 1) &&
      rs->nexec < SF_MAX_STEPS) {
    rs->exec_step[rs->nexec] = (uint16_t)sl->idx;
    rs->exec_time[rs->nexec++] = sim_now(w);
  }
  if (fk && !(sf_step_flags(st->kind) & SF_SK_UNDO))
    rs->fault_steps_run++;
  if (rs->fb)
    sf_features_step(&rs->feat, st->kind);
  switch (st->kind) {
  case SF_STEP_PARTITION: {
    uint64_t ma = remap_mask(st->mask_a & rs->all, perm, n);
    uint64_t mb = st->mask_b ? remap_mask(st->mask_b & rs->all, perm, n) & ~ma : rs->all & ~ma;
    if (ma && mb)
      sim_partition(w, ma, mb, st->flag);
    break;
  }
  case SF_STEP_HEAL: sim_heal(w); break;
  case SF_STEP_ISOLATE: sim_isolate(w, a); break;
  case SF_STEP_SPLIT: {
    uint8_t g[SIM_MAX_NODES] = {0};
    for (int i = 0; i < n && i < st->ngroups; i++)
      g[perm[i]] = st->group[i];
    sim_split(w, g);
    break;
  }
  case SF_STEP_RESET: sim_reset_conns(w, a, st->flag || a == b ? -1 : b); break;
  case SF_STEP_LINK: {
    sim_link_params p;
    to_link(rs->s, &st->net, &p);
    note_delay(rs, &p);
    if (st->flag)
      sim_net_set_all(w, &p);
    else
      sim_link_set(w, a, b, &p);
    break;
  }
  case SF_STEP_HOLD: sim_link_hold(w, a, b); break;
  case SF_STEP_RELEASE: sim_link_release(w, a, b); break;
  case SF_STEP_DELIVER: sim_link_deliver_kth(w, a, b, st->k); break;
  case SF_STEP_CRASH: sim_node_crash(w, a); break;
  case SF_STEP_RESTART: sim_node_restart(w, a); break;
  case SF_STEP_PAUSE: sim_node_pause(w, a); break;
  case SF_STEP_RESUME: sim_node_resume(w, a); break;
  case SF_STEP_CLOCK:
    if (st->offset_us)
      sim_clock_set_offset(w, a, st->offset_us * 1000);
    if (st->drift_ppm)
      sim_clock_set_drift(w, a, st->drift_ppm);
    if (st->jump_us)
      sim_clock_jump(w, a, st->jump_us * 1000);
    break;
  case SF_STEP_DISK: {
    sim_disk_params p;
    to_disk(rs->s, &st->disk, &p);
    sim_disk_set_params(w, a, &p);
    if (st->k && st->count)
      sim_disk_fail_nth(w, a, (sim_disk_op)(st->k - 1), st->count);
    if (st->interval_us)
      sim_disk_stall(w, a, (uint64_t)st->interval_us * 1000);
    break;
  }
  case SF_STEP_FAULTPOINT:
    sim_faultpoint_force(w, st->k, st->flag ? -1 : (int64_t)st->rate_ppm);
    sim_faultpoint_nth(w, st->k, st->count);
    break;
  case SF_STEP_OP:
    if (rs->t->workload) {
      sf_op op = {a, st->k, st->key, st->value, rs->op_seq++};
      rs->ops_run++;
      int prev = sim_set_current_node(w, a); /* the client talks to node a */
      rs->t->workload(rs->ctx, w, &op);
      sim_set_current_node(w, prev);
    }
    if (--sl->remaining > 0)
      sim_at(w, sim_now(w) + (uint64_t)st->interval_us * 1000, run_step, sl);
    break;
  case SF_STEP_LIVENESS:
    rs->steps_closed = 1;
    heal_all(rs);
    rs->crashes_seen = sim_get_stats(w)->crashes;
    if (rs->t->live) {
      /* the window opens once what was sent before the heal can have
       * arrived: a message on a link that had a 10 s delay is still on
       * its way that long after the heal (pbstore, a stream stalled
       * behind such a segment: tests/regressions/pbstore), and one
       * queued behind others on a slow link can be later still (test_run,
       * liveness_window_waits_for_a_bandwidth_queue) */
      uint32_t bound = live_bound_ms(rs->t), ms = st->count > bound ? st->count : bound;
      uint64_t due = sim_in_flight_due(w) - sim_now(w);
      uint64_t window =
          (uint64_t)ms * SIM_NS_PER_MS + (due > rs->slowest_ns ? due : rs->slowest_ns);
      rs->live_deadline = sim_now(w) + window;
      sim_require_liveness(w, window);
    }
    break;
  case SF_STEP_NOP: break;
  case SF_STEP_UPGRADE: upgrade(rs, a, st->k); break;
  default: break;
  }
}

/* ---- the run ---------------------------------------------------------- */

/* Schedule step st (index idx in the scenario) at its time, or now if that
 * has passed; 0, or -1 if the world has no room (the run then stops). */
static int schedule_step(run_state *rs, const sf_step *st, uint32_t idx) {
  SIM_ASSERT(rs->nslots < sizeof rs->slots / sizeof rs->slots[0]);
  slot *sl = &rs->slots[rs->nslots++];
  sl->rs = rs;
  sl->st = st;
  sl->idx = idx;
  sl->remaining = sf_step_shape_of(st->kind) == SF_SHAPE_OP ? st->count : 1;
  sl->rises = rs->t->observe ? st->on_change : 0; /* without an observer: at its time */
  sl->waiting = 0;
  uint64_t t = st->at_us * 1000, now = sim_now(rs->w);
  return sim_at(rs->w, t > now ? t : now, run_step, sl) == 0 ? 0 : -1;
}

/* The steps scheduled after an event, in (after_event, index) order. */
static void collect_later(run_state *rs) {
  const sf_scenario *s = rs->s;
  for (uint32_t i = 0; i < s->nsteps; i++) {
    uint32_t a = s->steps[i].after_event;
    if (!a)
      continue;
    uint32_t j = rs->nlater++;
    for (; j > 0 && s->steps[rs->later[j - 1]].after_event > a; j--)
      rs->later[j] = rs->later[j - 1];
    rs->later[j] = (uint16_t)i;
  }
}

static int has_waiting_step(const sf_scenario *s) {
  for (uint32_t i = 0; i < s->nsteps; i++)
    if (s->steps[i].on_change)
      return 1;
  return 0;
}

static int has_liveness_step(const sf_scenario *s) {
  for (uint32_t i = 0; i < s->nsteps; i++)
    if (s->steps[i].kind == SF_STEP_LIVENESS)
      return 1;
  return 0;
}

static sim_world *setup(run_state *rs) {
  const sf_target *t = rs->t;
  const sf_scenario *s = rs->s;
  sim_config c;
  sim_config_default(&c);
  c.nodes = rs->n + sf_client_nodes(t);
  c.seed = s->seed;
  c.tape = s->tape;
  c.tape_len = s->tape_len;
  c.tiebreak = s->fifo ? SIM_TIEBREAK_FIFO : SIM_TIEBREAK_CHOICE;
  if (s->has_net) {
    to_link(s, &s->net, &c.net);
  } else {
    sf_net zero;
    memset(&zero, 0, sizeof zero);
    to_link(s, &zero, &c.net);
  }
  note_delay(rs, &c.net);
  if (s->has_disk)
    to_disk(s, &s->disk, &c.disk);
  int fp_off = disabled(s, SF_FAULT_FAULTPOINT);
  c.faultpoints.enable_ppm = fp_off ? 0 : s->fp_enable_ppm;
  c.faultpoints.fire_ppm = fp_off ? 0 : s->fp_fire_ppm;
  c.budgets.max_events = rs->o->max_events ? rs->o->max_events : SF_MAX_EVENTS;
  c.budgets.max_time_ns = 200 * SIM_NS_PER_S;
  c.budgets.max_inflight = 16384;
  c.budgets.max_pending = 65536;
  c.budgets.max_conns = 1024;
  c.budgets.max_disk_bytes = 4u << 20;
  c.budgets.max_timers = 1024;
  c.ops = t->ops;
  c.ctx = rs->ctx;
  c.hook_ctx = rs;
  c.classify = t->classify;
  c.describe = t->describe;
  c.after_event = (t->invariants || (rs->fb && t->observe) || any_hook(rs->o) || rs->nlater ||
                   (t->observe && has_waiting_step(rs->s)) ||
                   (t->live && has_liveness_step(rs->s))) /* for after_heal */
                      ? after_event
                      : NULL;
  c.at_end = t->end_checks ? at_end : NULL;
  c.live = t->live ? live : NULL;
  c.trace = (rs->fb || rs->o->trace) ? on_trace : NULL;
  c.trace_ctx = rs;
  if (rs->fb && !rs->o->trace) { /* features only: straight to them */
    c.trace = sf_features_on_trace;
    c.trace_ctx = &rs->feat;
  }
  c.trace_ring = rs->o->trace_ring ? rs->o->trace_ring : 256;
  c.fail_mode = rs->o->abort_on_failure ? SIM_FAIL_ABORT : SIM_FAIL_RECORD;
  c.on_failure = report_and_recheck;
  return sim_world_create(&c);
}

static void fill_result(run_state *rs, sf_result *r, sim_stop stop) {
  sim_world *w = rs->w;
  memset(r, 0, sizeof *r);
  r->failed = sim_failed(w);
  if (r->failed)
    r->failure = *sim_get_failure(w);
  r->stop = stop;
  r->budget = stop == SIM_STOP_BUDGET ? sim_budget_reason(w) : NULL;
  r->hash = sim_trace_hash(w);
  r->end_time = sim_now(w);
  r->stats = *sim_get_stats(w);
  r->nodes = rs->n;
  r->steps_run = rs->steps_run;
  r->fault_steps_run = rs->fault_steps_run;
  r->ops_run = rs->ops_run;
  r->features = rs->feat.count;
  r->nexec = rs->nexec;
  memcpy(r->exec_step, rs->exec_step, rs->nexec * sizeof r->exec_step[0]);
  memcpy(r->exec_time, rs->exec_time, rs->nexec * sizeof r->exec_time[0]);
}

/* Execute the scenario on rs->w; returns the last stop reason. */
static sim_stop execute(run_state *rs) {
  sim_world *w = rs->w;
  const sf_scenario *s = rs->s;
  start_versions(rs);
  for (uint32_t i = 0; i < s->nsteps; i++)
    if (!s->steps[i].after_event) /* those are scheduled by after_event() */
      schedule_step(rs, &s->steps[i], i);
  sim_stop stop = sim_run(w, sf_run_end_us(s) * 1000, 0);
  if (stop == SIM_STOP_QUIESCENT || stop == SIM_STOP_TIME) {
    /* an open liveness window is judged at its deadline */
    if (sim_liveness_pending(w))
      stop = sim_run(w, rs->live_deadline, 0);
    if (stop != SIM_STOP_FAILURE && stop != SIM_STOP_BUDGET && sim_finish(w))
      stop = SIM_STOP_FAILURE;
  }
  return stop;
}

/* A run ended by a failed assert(): its world and the target's state are
 * kept as they were (their code is in no state to tear them down), still
 * reachable so that leak checkers do not report them, up to a bound. A tool
 * that runs many scenarios starts a fresh process after such a run. */
enum { MAX_ABANDONED = 64 };
static run_state *abandoned[MAX_ABANDONED];
static unsigned n_abandoned;

static void keep_abandoned(run_state *rs) {
  abandoned[n_abandoned++ % MAX_ABANDONED] = rs;
}

/* A failed assert() of the system under test (adapter/libc.c's wrap of
 * glibc's __assert_fail): during a run it is recorded as the run's failure,
 * invariant "assert" at the assertion's site, on the node whose code was
 * running, with the trace hash of that moment. In record mode (the command
 * line) the run ends here (a longjmp out of the target's code); in abort
 * mode (fuzzers), after the usual report and determinism re-check, and
 * outside a run, it returns and the caller aborts like glibc. */
void sf__run_assert_failed(const char *expr, const char *file, unsigned line, const char *func) {
  run_state *rs = active_run;
  int node;
  sim_world *w = sim_current(&node);
  if (rs && rs->in_execute && w == rs->w) {
    int must_abort = sim__invariant_failed(w, node, "assert", file, (int)line,
                                           "Assertion `%s' failed in %s", expr, func);
    if (!must_abort)
      longjmp(rs->crash_jmp, 1);
  }
}

/* Execute the run, and come back here if the system under test's failed
 * assert() ends it (1; 0 when the run ended on its own, *stop saying how).
 * Alone in its function, so that no local of the caller lives across the
 * setjmp (gcc's -Wclobbered). */
static int execute_guarded(run_state *rs, sim_stop *stop) {
  if (setjmp(rs->crash_jmp) == 0) {
    rs->in_execute = 1;
    *stop = execute(rs);
    return 0;
  }
  sim__abandon(rs->w, rs->cur_w, rs->cur_node); /* the run ended in a failed assert() */
  return 1;
}

/* The working directory a run started in, given back at its end: a system
 * under test that changes it, as a daemon does at start with chdir("/"),
 * must not move the files that the tool writes after the run under
 * relative names (the explorer's worker saved none of its failures), nor
 * the next run's relative paths. The directory stays open between runs
 * and is opened again only when a run starts elsewhere; a run inside a run
 * leaves it to the outer one. */
static struct {
  int fd; /* -1: none yet, or it could not be opened */
  dev_t dev;
  ino_t ino;
} home = {-1, 0, 0};

static int at_home(const struct stat *st) {
  return home.fd >= 0 && st->st_dev == home.dev && st->st_ino == home.ino;
}

static void home_take(void) {
  struct stat st;
  if (stat(".", &st) != 0 || at_home(&st))
    return;
  if (home.fd >= 0)
    close(home.fd);
  home.fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  home.dev = st.st_dev;
  home.ino = st.st_ino;
}

static void home_return(void) {
  struct stat st;
  if (home.fd < 0 || (stat(".", &st) == 0 && at_home(&st)))
    return;
  /* the descriptor must still be the directory: a system that closes every
   * descriptor, as a daemon does at start, may have opened its own on it */
  if (!sf__fd_is(home.fd, (uint64_t)home.dev, (uint64_t)home.ino)) {
    home.fd = -1; /* not ours any more: the files go where the system left
                     them, and the next run takes its directory anew */
    return;
  }
  if (fchdir(home.fd) != 0) {
    /* the directory is gone: the files go where the system left it */
  }
}

static int run_scenario(const sf_target *t, const sf_scenario *s, const sf_run_opts *o,
                        sf_result *r) {
  static const sf_run_opts defaults; /* all zero */
  if (!o)
    o = &defaults;
  run_state *rs = malloc(sizeof *rs);
  if (!rs)
    sf_out_of_memory("the runner");
  memset(rs, 0, offsetof(run_state, exec_step));
  rs->t = t;
  rs->s = s;
  rs->o = o;
  if (!active_run)
    home_take(); /* before the system's code can move it */
  rs->n = sf_nodes_for(t, s);
  rs->all = rs->n == 64 ? ~0ull : (1ull << rs->n) - 1;
  rs->fb = (o->feedback && SF_FEEDBACK) || o->feature_bits || novel_hook(o);
  sf_features_init(&rs->feat, rs->n);
  sf_sites(&rs->nsites);
  if (rs->nsites && (rs->fb || o->site_runs || o->site_best)) {
    rs->site_floor = calloc(rs->nsites, sizeof *rs->site_floor);
    rs->site_max = calloc(rs->nsites, sizeof *rs->site_max);
    if (!rs->site_floor || !rs->site_max)
      sf_out_of_memory("the runner");
  }
  rs->ctx = t->create ? t->create(rs->n) : NULL;
  collect_later(rs);
  rs->w = setup(rs);
  if (!rs->w) /* the configuration is always valid: only memory can be missing */
    sf_out_of_memory("the simulator");
  sf_features_bind(&rs->feat, t, rs->ctx, rs->w);
  rs->outer = active_run;
  rs->cur_w = sim_current(&rs->cur_node);
  set_active(rs);
  sim_stop stop = SIM_STOP_FAILURE;
  int crashed = execute_guarded(rs, &stop);
  rs->in_execute = 0;
  set_active(rs->outer);
  if (sim_budget_kind(rs->w) == SIM_BUDGET_MEMORY) /* the host's, never a finding */
    sf_out_of_memory("the simulator");
  sf_result res;
  fill_result(rs, &res, stop);
  res.crashed = crashed;
  if (r)
    *r = res;
  if (o->on_finish)
    o->on_finish(o->finish_ctx, rs->w, &res);
  if (o->feature_bits)
    for (uint32_t i = 0; i < SF_FB_WORDS; i++)
      o->feature_bits[i] |= rs->feat.bits[i];
  for (size_t i = 0; i < rs->nsites && rs->site_floor; i++) {
    if (!rs->site_floor[i])
      continue;
    if (o->site_runs)
      o->site_runs[i]++;
    if (o->site_best && rs->site_max[i] > o->site_best[i])
      o->site_best[i] = rs->site_max[i];
  }
  if (o->feedback && SF_FEEDBACK)
    sf_features_emit(&rs->feat);
  if (crashed) {
    keep_abandoned(rs);
    if (!rs->outer)
      home_return();
    return res.failed;
  }
  sim_world_destroy(rs->w);
  if (t->destroy)
    t->destroy(rs->ctx);
  if (!rs->outer)
    home_return();
  free(rs->site_floor);
  free(rs->site_max);
  free(rs->inj);
  free(rs);
  return res.failed;
}

void sf_target_seed_scenario(const sf_target *t, uint64_t seed, sf_scenario *s) {
  sf_generate_seed(seed, s);
  if (t)
    sf_generate_versions(t->versions, s);
}

int sf_run(const sf_target *t, const sf_scenario *s, const sf_run_opts *o, sf_result *r) {
  return run_scenario(t, s, o, r);
}

int sf_run_input(const sf_target *t, const uint8_t *data, size_t len, const sf_run_opts *o,
                 sf_result *r) {
  sf_scenario *s = malloc(sizeof *s);
  if (!s)
    sf_out_of_memory("the runner");
  sf_decode_kind k = sf_decode(data, len, s);
  sf_result res;
  int failed = run_scenario(t, s, o, &res);
  res.decoded = k;
  if (r)
    *r = res;
  free(s);
  return failed;
}

/* Set once by sf_driver_init from SIMFUZZ_PRINT_HASH: the drivers then
 * print each run's trace hash (the determinism matrix compares fuzzer,
 * AFL++ and CLI builds with it). Process configuration, not run state. */
static int print_hash;

int sf__fd_is(int fd, uint64_t dev, uint64_t ino) {
  struct stat st;
  return fd >= 0 && fstat(fd, &st) == 0 && (uint64_t)st.st_dev == dev && (uint64_t)st.st_ino == ino;
}

int sf__lowest_free_fd(void) {
  int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (fd >= 0)
    close(fd);
  return fd;
}

/* A fuzzer runs every input in one process: a system under test that
 * leaves a file descriptor open on each makes it run out (EMFILE), after
 * which neither the system nor the fuzzer can open a file (its crash files
 * included). Said once on stderr, checked every 64 inputs. */
static void warn_of_fd_leak(void) {
  static uint64_t inputs;
  static int base = -2, warned;
  if (warned || inputs++ % 64)
    return;
  int fd = sf__lowest_free_fd();
  if (base == -2)
    base = fd;
  if (base < 0 || (fd >= 0 && fd - base < 256))
    return;
  warned = 1;
  char more[32] = "none free";
  if (fd >= 0)
    snprintf(more, sizeof more, "%d more", fd - base);
  fprintf(stderr,
          "simfuzz: the system under test leaves file descriptors open across runs (%s after "
          "%" PRIu64 " inputs): this process will run out of them; close in the target's "
          "destroy what its runs opened\n",
          more, inputs - 1);
}

void sf_fuzz_one(const sf_target *t, const uint8_t *data, size_t len) {
  warn_of_fd_leak();
  sf_run_opts o;
  memset(&o, 0, sizeof o);
  o.abort_on_failure = 1;
  o.feedback = 1;
  sf_result r;
  sf_run_input(t, data, len, &o, &r);
  if (print_hash)
    fprintf(stderr, "simfuzz-hash %016" PRIx64 "\n", r.hash);
}

void sf_driver_init(void) {
  const char *ph = getenv("SIMFUZZ_PRINT_HASH");
  print_hash = ph && *ph && strcmp(ph, "0");
#if defined(__GLIBC__) && defined(M_TRIM_THRESHOLD)
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TOP_PAD, 16 << 20);
#endif
}

void sf_out_of_memory(const char *where) {
  fprintf(stderr, "simfuzz: out of memory in %s\n", where);
  fflush(stderr);
  exit(2);
}

/* ---- reports ----------------------------------------------------------- */

/* The last events before the failure, `lines` lines at most, reading back
 * through the ring; runs of 3 or more events of the same kind on the same
 * node (periodic timers, heartbeats) fold into one line. */
static void print_last_events(const sim_world *w, FILE *f, int lines) {
  enum { RING_READ = 1024, LINES_MAX = 64 };
  /* static: a crash report prints these from a signal handler, where the
   * heap may be what the system under test broke */
  static sim_trace_rec recs[RING_READ];
  static size_t start[LINES_MAX], len[LINES_MAX];
  if (lines > LINES_MAX)
    lines = LINES_MAX;
  size_t k = sim_trace_last(w, recs, RING_READ);
  /* walk backwards to choose which records (or folded runs) to show */
  int shown = 0;
  size_t i = k;
  while (i > 0 && shown < lines) {
    size_t j = i - 1;
    while (j > 0 && recs[j - 1].kind == recs[i - 1].kind && recs[j - 1].node == recs[i - 1].node &&
           recs[i - 1].kind != SIM_EV_FAIL)
      j--;
    size_t run = i - j;
    if (run < 3) { /* show individually */
      start[shown] = i - 1;
      len[shown++] = 1;
      i--;
    } else {
      start[shown] = j;
      len[shown++] = run;
      i = j;
    }
  }
  fprintf(f, "==simfuzz== last events:\n");
  char line[512];
  for (int s = shown - 1; s >= 0; s--) {
    const sim_trace_rec *r = &recs[start[s]];
    sim_trace_format(w, r, line, sizeof line);
    if (len[s] == 1) {
      fprintf(f, "  %s\n", line);
    } else {
      const sim_trace_rec *e = &recs[start[s] + len[s] - 1];
      fprintf(f, "  %s\n  ... %zu %s events on n%d until %" PRIu64 ".%06" PRIu64 "s\n", line,
              len[s] - 1, sim_ev_name(r->kind), r->node, (uint64_t)(e->time / SIM_NS_PER_S),
              (uint64_t)(e->time % SIM_NS_PER_S / 1000));
    }
  }
}

/* The last line of a report: how to run the input again. */
static void print_replay_line(const sf_target *t, FILE *f, const char *input) {
  fprintf(f, "==simfuzz== replay: simfuzz-%s replay %s\n", t->name, input ? input : "<crash-file>");
}

void sf_print_report(const sf_target *t, const sf_scenario *s, const sf_result *r, sim_world *w,
                     FILE *f, const char *input, int last) {
  const sim_failure *fl = &r->failure;
  uint64_t secs = fl->time / SIM_NS_PER_S, us = fl->time % SIM_NS_PER_S / 1000;
  if (fl->name && !strcmp(fl->name, "assert"))
    fprintf(f, "==simfuzz== FAILURE in target %s: assert() failed", t->name);
  else
    fprintf(f, "==simfuzz== FAILURE in target %s: %s '%s'", t->name,
            fl->is_liveness ? "liveness" : "invariant", fl->name ? fl->name : "?");
  if (fl->node >= 0)
    fprintf(f, " on node n%d", fl->node);
  fprintf(f, " at t=%" PRIu64 ".%06" PRIu64 "s (event %" PRIu64 ")\n", secs, us, fl->event);
  fprintf(f, "==simfuzz==   %s\n", fl->message);
  fprintf(f, "==simfuzz==   checked at %s:%d\n", fl->file ? fl->file : "?", fl->line);
  if (r->nexec) {
    fprintf(f, "==simfuzz== steps executed:\n");
    char d[256];
    for (uint32_t i = 0; i < r->nexec; i++) {
      const sf_step *st = &s->steps[r->exec_step[i]];
      sf_step_describe(st, r->nodes, d, sizeof d);
      fprintf(f, "  %4" PRIu64 ".%06" PRIu64 "s %s\n", (uint64_t)(r->exec_time[i] / SIM_NS_PER_S),
              (uint64_t)(r->exec_time[i] % SIM_NS_PER_S / 1000), d);
    }
  }
  if (w && last > 0)
    print_last_events(w, f, last);
  fprintf(f, "==simfuzz== faults fired: ");
  if (w)
    sim_stats_print(w, f);
  else
    fprintf(f, "(n/a)\n");
  fprintf(f,
          "==simfuzz== scenario: %d nodes, %" PRIu32 " steps (%" PRIu32 " faults), %" PRIu32
          " choice bytes, seed %" PRIu64 "; trace hash %016" PRIx64 "\n",
          r->nodes, s->nsteps, sf_fault_steps(s), s->tape_len, s->seed, r->hash);
  print_replay_line(t, f, input);
}

static const char *signal_name(int sig) {
  switch (sig) {
  case SIGSEGV: return "SIGSEGV";
  case SIGBUS: return "SIGBUS";
  case SIGFPE: return "SIGFPE";
  case SIGILL: return "SIGILL";
  case SIGABRT: return "SIGABRT";
  default: return "signal";
  }
}

void sf_print_crash_report(const sf_target *t, const sim_world *w, int sig, const char *where,
                           FILE *f, const char *input, int last) {
  sim_trace_rec rec;
  int have = w && sim_trace_last(w, &rec, 1) == 1;
  if (sig > 0)
    fprintf(f, "==simfuzz== CRASH in target %s: signal %d (%s) in %s", t->name, sig,
            signal_name(sig), where ? where : "?");
  else
    fprintf(f, "==simfuzz== CRASH in target %s: the sanitizer's error above", t->name);
  if (have && rec.node >= 0)
    fprintf(f, " on node n%d", rec.node);
  if (w) {
    uint64_t now = sim_now(w);
    fprintf(f, " at t=%" PRIu64 ".%06" PRIu64 "s", (uint64_t)(now / SIM_NS_PER_S),
            (uint64_t)(now % SIM_NS_PER_S / 1000));
  }
  fprintf(f, "\n");
  if (have) {
    char line[512];
    sim_trace_format(w, &rec, line, sizeof line);
    fprintf(f, "==simfuzz==   the system under test crashed after: %s\n", line);
    if (last > 0)
      print_last_events(w, f, last);
    fprintf(f, "==simfuzz== faults fired: ");
    sim_stats_print(w, f);
  } else {
    fprintf(f, "==simfuzz==   before the run's first event\n");
  }
  print_replay_line(t, f, input);
}

/* Abort mode: print the report, re-run the same scenario in a fresh world
 * and compare trace hashes. A mismatch aborts here, from its own site. */
__attribute__((noinline)) static void determinism_failure(const sf_target *t, uint64_t a,
                                                          uint64_t b) {
  fprintf(stderr,
          "==simfuzz== DETERMINISM FAILURE in target %s: the same input gave trace hash "
          "%016" PRIx64 " then %016" PRIx64 ". The run depends on something outside the "
          "input (wall clock, random numbers, uninitialised memory, pointer order, global "
          "state).\n",
          t->name, a, b);
  abort();
}

static void report_and_recheck(void *p, sim_world *w) {
  run_state *rs = p;
  FILE *f = rs->o->report ? rs->o->report : stderr;
  sf_result r;
  fill_result(rs, &r, SIM_STOP_FAILURE);
  sf_print_report(rs->t, rs->s, &r, w, f, rs->o->input, 30);
  if (rs->t->exclusive) { /* its one run is the failed one, still live */
    fprintf(f,
            "==simfuzz== determinism check: not in this process (one run of %s at a time); "
            "check-determinism on the crash file re-runs it\n",
            rs->t->name);
    fflush(f);
    return;
  }
  sf_run_opts again;
  memset(&again, 0, sizeof again);
  again.max_events = rs->o->max_events;
  sf_result r2;
  run_scenario(rs->t, rs->s, &again, &r2);
  if (!r2.failed || r2.hash != r.hash)
    determinism_failure(rs->t, r.hash, r2.hash);
  fprintf(f, "==simfuzz== determinism check: re-run gave the same failure and trace hash\n");
  fflush(f);
}
