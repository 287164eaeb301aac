/* World lifetime, scheduler, choice source, nodes, timers, clocks, fault
 * points and oracles. */
#include "internal.h"

#include <inttypes.h>
#include <stdarg.h>

/* ---- Choice source ------------------------------------------------------ */

uint64_t sim_stream_id(unsigned purpose, unsigned a, unsigned b) {
  return sim__sid(purpose, a, b);
}

uint64_t sim_draw(const sim_world *w, uint64_t stream, uint64_t n) {
  SIM_ASSERT(w->tape_len <= SIM_TAPE_MAX); /* sim__draw reads tape slots below tape_len */
  return sim__draw(w, stream, n);
}

int sim_chance(const sim_world *w, uint64_t stream, uint64_t n, uint32_t ppm) {
  return sim__chance(w, stream, n, ppm);
}

uint64_t sim_range(const sim_world *w, uint64_t stream, uint64_t n, uint64_t lo, uint64_t hi) {
  return sim__range(w, stream, n, lo, hi);
}

uint64_t sim_node_random(sim_world *w, int node) {
  if (node == -1) /* world-level code: a stream of its own */
    return sim__draw(w, sim__sid(0x80, 0xffff, 0), w->rnd_world++);
  if (node < 0 || node >= w->n)
    return 0;
  node_t *nd = &w->node[node];
  return sim__draw(w, sim__sid(0x80, (uint32_t)node, nd->inc), nd->rnd++);
}

/* ---- Configuration and lifetime ------------------------------------- */

void sim_config_default(sim_config *c) {
  memset(c, 0, sizeof *c);
  c->nodes = 3;
  c->net.latency_min_ns = 1 * SIM_NS_PER_MS;
  c->net.latency_max_ns = 10 * SIM_NS_PER_MS;
  c->net.reorder_delay_ns = 50 * SIM_NS_PER_MS;
  c->stream.connect_timeout_ns = 1 * SIM_NS_PER_S;
  c->stream.retransmit_ns = 200 * SIM_NS_PER_MS;
  c->stream.stall_timeout_ns = 5 * SIM_NS_PER_S;
  c->disk.sector_size = 512;
  c->disk.unsynced_keep_ppm = SIM_PPM / 2;
  c->faultpoints.enable_ppm = 0;
  c->faultpoints.fire_ppm = SIM_PPM / 4;
  c->budgets.max_events = 10000000;
  c->budgets.max_time_ns = 3600 * SIM_NS_PER_S;
  c->budgets.max_msg_size = 64 * 1024;
  c->budgets.max_inflight = 65536;
  c->budgets.max_pending = 1u << 20;
  c->budgets.max_conns = 4096;
  c->budgets.max_disk_bytes = 16u << 20;
  c->budgets.max_timers = 4096;
  c->trace_ring = 64;
  /* sim_world_create accepts its own defaults */
  SIM_ASSERT(c->net.latency_min_ns <= c->net.latency_max_ns && c->budgets.max_pending > 0);
}

sim_world *sim_world_create(const sim_config *c) {
  if (!c || !c->ops || c->nodes < 1 || c->nodes > SIM_MAX_NODES)
    return NULL;
  int n = c->nodes;
  uint32_t ring = 16;
  uint32_t want = c->trace_ring ? c->trace_ring : 64;
  if (want > (1u << 20))
    want = 1u << 20;
  while (ring < want)
    ring <<= 1;
  sim_world *w = calloc(1, sizeof *w);
  if (!w)
    return NULL;
  w->cfg = *c;
  w->cfg.tape = NULL;
  w->cfg.trace_ring = ring;
  w->n = n;
  w->ev_node = -1;
  w->tape_len = c->tape ? (uint32_t)(c->tape_len < SIM_TAPE_MAX ? c->tape_len : SIM_TAPE_MAX) : 0;
  if (w->tape_len)
    memcpy(w->tape, c->tape, w->tape_len);
  if (w->cfg.disk.sector_size == 0 || w->cfg.disk.sector_size > 65536)
    w->cfg.disk.sector_size = 512;
  w->node = calloc((size_t)n, sizeof *w->node);
  w->link = calloc((size_t)n, sizeof *w->link);
  for (int i = 0; w->link && i < n; i++)
    if (!(w->link[i] = calloc((size_t)n, sizeof **w->link))) {
      sim_world_destroy(w);
      return NULL;
    }
  w->ring = malloc((size_t)ring * sizeof *w->ring);
  w->ring_cap = ring;
  SIM_ASSERT(ring && !(ring & (ring - 1))); /* a power of two: sim__trace masks with it */
  w->ev_free = w->msg_free = w->conn_free = NONE;
  w->live_ev = NONE;
  if (!w->node || !w->link || !w->ring) {
    sim_world_destroy(w);
    return NULL;
  }
  for (int i = 0; i < n * n; i++) {
    link_t *l = &w->link[i / n][i % n];
    sim__link_params(l, &c->net);
    l->fly.head = l->fly.tail = l->hold.head = l->hold.tail = NONE;
  }
  for (int i = 0; i < n; i++) {
    node_t *nd = &w->node[i];
    nd->dhead = nd->dtail = NONE;
    nd->disk.p = w->cfg.disk;
  }
  for (int i = 0; i < n; i++) {
    if (sim__sched(w, 0, EVK_BOOT, i) == NONE) {
      sim_world_destroy(w);
      return NULL;
    }
  }
  return w;
}

void sim_world_destroy(sim_world *w) {
  if (!w)
    return;
  SIM_ASSERT(sim__cur.w != w); /* never from inside one of its own events */
  if (w->node) {
    for (int i = 0; i < w->n; i++) {
      node_t *nd = &w->node[i];
      if (nd->up && w->cfg.ops->teardown)
        SIM__AS(w, i, w->cfg.ops->teardown(w->cfg.ctx, w, i, SIM_TEARDOWN_DESTROY));
      sim__disk_free(&nd->disk);
    }
  }
  sim__net_free(w);
  sim__conn_free_all(w);
  free(w->heap);
  free(w->ev);
  free(w->node);
  for (int i = 0; w->link && i < w->n; i++)
    free(w->link[i]);
  free(w->link);
  free(w->ring);
  free(w->fp_force);
  free(w->fp_count);
  free(w->fp_nth);
  sim__mem_release(w); /* last: teardown above may still free blocks */
  free(w);
}

uint64_t sim_now(const sim_world *w) {
  /* time never passes a pending event (sim__sched clamps to now) */
  SIM_ASSERT(w->heap_n == 0 || w->heap[0].time >= w->now);
  return w->now;
}
int sim_nodes(const sim_world *w) {
  SIM_ASSERT(w->n >= 1 && w->n <= SIM_MAX_NODES); /* sim_world_create's bounds */
  return w->n;
}
void *sim_ctx(const sim_world *w) {
  return w->cfg.ctx;
}
sim_budget sim_budget_kind(const sim_world *w) {
  SIM_ASSERT(w->budget == SIM_BUDGET_NONE || w->stopped); /* sim__budget_stop stops the run */
  return w->budget;
}
const char *sim_budget_reason(const sim_world *w) {
  static const char *const text[] = {NULL,
#define SIM_BUDGET_TEXT_(name, t) t,
                                     SIM_BUDGET_MAP(SIM_BUDGET_TEXT_)
#undef SIM_BUDGET_TEXT_
  };
  SIM_ASSERT((size_t)w->budget < sizeof text / sizeof text[0]);
  return text[w->budget];
}
int sim_event_node(const sim_world *w) {
  SIM_ASSERT(w->ev_node >= -1 && w->ev_node < w->n); /* a node, or the world's own event */
  return w->ev_node;
}
const sim_stats *sim_get_stats(const sim_world *w) {
  /* a datagram is delivered at most once, a duplicate once more */
  SIM_ASSERT(w->stats.delivered <= w->stats.sent + w->stats.duplicated);
  return &w->stats;
}

void sim__budget_stop(sim_world *w, sim_budget why) {
  SIM_ASSERT(why != SIM_BUDGET_NONE);
  if (!w->stopped) {
    w->stopped = 1;
    w->budget = why;
  }
}

/* ---- Event pool and heap -------------------------------------------- */

/* The tie-break priority of e, drawn now (see heap_ent). */
static void heap_draw(const sim_world *w, heap_ent *e) {
  /* drawn once: until then the key's top bits hold the node (heap_insert),
   * afterwards the priority */
  SIM_ASSERT(e->k != HEAP_DRAWN && w->cfg.tiebreak == SIM_TIEBREAK_CHOICE);
  int node = (int)(e->key >> 40) - 1;
  SIM_ASSERT(node >= -1 && node < w->n);
  uint64_t sid = node >= 0 ? sim__sid(P_SCHED, (uint32_t)node, 0) : sim__sid(P_SCHED, 0xffffff, 0);
  uint64_t prio = sim__draw(w, sid, e->k) >> 40;
  e->key = prio << 40 | (e->key & 0xffffffffffull);
  e->k = HEAP_DRAWN;
}

/* (time, key) order of two events of the same time. */
static __attribute__((noinline)) int heap_tie_less(const sim_world *w, heap_ent *a, heap_ent *b) {
  if (a->k != HEAP_DRAWN)
    heap_draw(w, a);
  if (b->k != HEAP_DRAWN)
    heap_draw(w, b);
  return a->key < b->key;
}

/* (time, key) order. Times rarely tie: the time comparison is branchless
 * (the sifts' outcomes are random, predicted branches would miss half the
 * time), and only a tie looks at the keys. */
static inline int heap_less(const sim_world *w, heap_ent *a, heap_ent *b) {
  if (__builtin_expect(a->time == b->time, 0))
    return heap_tie_less(w, a, b);
  return a->time < b->time;
}

/* Put h at slot i (a free slot: the end, or the root) and restore the
 * heap order. h comes by value, not through the array: an entry just
 * stored field by field and read back whole stalls the store forwarding. */
static void sift_up(sim_world *w, uint32_t i, heap_ent h) {
  heap_ent *hp = w->heap; /* (a tie's draw never moves the array) */
  while (i > 0) {
    uint32_t p = (i - 1) / 2;
    if (!heap_less(w, &h, &hp[p]))
      break;
    hp[i] = hp[p];
    i = p;
  }
  hp[i] = h;
}

static inline __attribute__((always_inline)) void sift_down(sim_world *w, uint32_t i, heap_ent h) {
  heap_ent *hp = w->heap;
  uint32_t n = w->heap_n;
  for (;;) {
    uint32_t c = 2 * i + 1;
    if (c >= n)
      break;
    if (c + 1 < n)
      c += (uint32_t)heap_less(w, &hp[c + 1], &hp[c]);
    if (!heap_less(w, &hp[c], &h))
      break;
    hp[i] = hp[c];
    i = c;
  }
  hp[i] = h;
}

void *sim__pool_grow(void *arr, uint32_t *cap, uint32_t *free_head, size_t elem, size_t next_off,
                     uint32_t first, uint32_t limit) {
  SIM_ASSERT(*cap <= limit && first >= 1 && next_off + sizeof(uint32_t) <= elem);
  uint32_t n = *cap ? *cap * 2 : first;
  if (n > limit)
    n = limit;
  if (n <= *cap)
    return NULL;
  unsigned char *p = realloc(arr, (size_t)n * elem);
  if (!p)
    return NULL;
  memset(p + (size_t)*cap * elem, 0, (size_t)(n - *cap) * elem);
  for (uint32_t i = *cap; i < n; i++) {
    uint32_t next = i + 1 < n ? i + 1 : NONE;
    memcpy(p + (size_t)i * elem + next_off, &next, sizeof next);
  }
  *free_head = *cap;
  *cap = n;
  return p;
}

static uint32_t ev_alloc(sim_world *w) {
  if (w->ev_free == NONE) {
    ev_t *ev = sim__pool_grow(w->ev, &w->ev_cap, &w->ev_free, sizeof *ev, offsetof(ev_t, next), 64,
                              w->cfg.budgets.max_pending + 64u);
    if (!ev)
      return NONE;
    w->ev = ev;
  }
  uint32_t e = w->ev_free;
  SIM_ASSERT(e < w->ev_cap && w->ev[e].kind == 0); /* the free list holds free events */
  w->ev_free = w->ev[e].next;
  return e;
}

static inline __attribute__((always_inline)) void heap_insert(sim_world *w, uint32_t e,
                                                              uint64_t t) {
  ev_t *x = &w->ev[e];
  heap_ent h = {t, w->seq++ & 0xffffffffffull, e, HEAP_DRAWN}; /* FIFO: priority 0 */
  if (w->cfg.tiebreak == SIM_TIEBREAK_CHOICE) {
    uint64_t k = x->node >= 0 ? w->node[x->node].evseq++ : w->wseq++;
    h.key |= (uint64_t)(x->node + 1) << 40;
    h.k = (uint32_t)k;
    if (k >= HEAP_DRAWN) /* an index past 32 bits: draw it now */
      heap_draw(w, &h);
  }
  SIM_ASSERT(t >= w->now); /* never in the past */
  if (w->hole) {           /* take the dispatched root's place */
    /* the hole is the root step() is dispatching: due now (its pair) */
    SIM_ASSERT(w->heap_n > 0 && w->heap[0].time == w->now);
    w->hole = 0;
    sift_down(w, 0, h);
    return;
  }
  SIM_ASSERT(w->heap_n < w->heap_cap); /* never past the array */
  sift_up(w, w->heap_n++, h);
}

/* Room in the heap for one more event: 0, or -1 when the pending-event
 * budget is exhausted or memory ran out (the run then stops). */
static int heap_reserve(sim_world *w) {
  if (w->hole) /* the dispatched root's place is free */
    return 0;
  if (w->heap_n >= w->cfg.budgets.max_pending) {
    sim__budget_stop(w, SIM_BUDGET_PENDING);
    return -1;
  }
  if (w->heap_n == w->heap_cap) {
    uint32_t cap = w->heap_cap ? w->heap_cap * 2 : 64;
    heap_ent *h = realloc(w->heap, (size_t)cap * sizeof *h);
    if (!h) {
      sim__budget_stop(w, SIM_BUDGET_MEMORY);
      return -1;
    }
    w->heap = h;
    w->heap_cap = cap;
  }
  SIM_ASSERT(w->heap_n < w->heap_cap); /* the room heap_insert takes */
  return 0;
}

/* Schedule an event of `kind` for `node` at time t; returns its index or NONE
 * when the pending-event budget is exhausted (the run then stops). */
uint32_t sim__sched(sim_world *w, uint64_t t, uint8_t kind, int node) {
  SIM_ASSERT(kind >= EVK_BOOT && kind < EVK_DEAD && node >= -1 && node < w->n);
  if (heap_reserve(w) != 0)
    return NONE;
  uint32_t e = ev_alloc(w);
  if (e == NONE) {
    sim__budget_stop(w, SIM_BUDGET_PENDING);
    return NONE;
  }
  ev_t *x = &w->ev[e];
  x->kind = kind;
  x->sub = 0;
  x->node = (int16_t)node;
  x->inc = node >= 0 ? w->node[node].inc : 0;
  x->next = NONE;
  heap_insert(w, e, t < w->now ? w->now : t);
  return e;
}

/* Cancel a pending event. Cancelled events stay in the heap (or in a paused
 * node's deferred list) as tombstones and are freed when they come up, so
 * the heap never tracks positions. */
void sim__ev_cancel(sim_world *w, uint32_t e) {
  SIM_ASSERT(e < w->ev_cap && w->ev[e].kind != 0); /* a pending event, never a free one */
  w->ev[e].kind = EVK_DEAD;
}

/* Remove the root (the dispatched event, when nothing took its place). */
static void heap_remove_root(sim_world *w) {
  SIM_ASSERT(w->heap_n > 0);
  heap_ent top = w->heap[0];
  if (--w->heap_n > 0) {
    sift_down(w, 0, w->heap[w->heap_n]);
    SIM_ASSERT(!heap_less(w, &w->heap[0], &top)); /* heap order: (time, key) never decreases */
  }
}

int sim_at(sim_world *w, uint64_t t, sim_call_fn fn, void *arg) {
  if (!fn)
    return -EINVAL;
  uint32_t e = sim__sched(w, t, EVK_CALL, -1);
  if (e == NONE)
    return -ENOSPC;
  w->ev[e].u.call.fn = fn;
  w->ev[e].u.call.arg = arg;
  return 0;
}

/* ---- Liveness and failures ------------------------------------------ */

static void record_failure(sim_world *w, int live, int node, const char *name, const char *file,
                           int line) {
  SIM_ASSERT(!w->failed); /* the first failure is the one kept */
  w->failed = 1;
  w->stopped = 1;
  w->fail.is_liveness = live;
  w->fail.name = name;
  w->fail.node = node;
  w->fail.time = w->now;
  w->fail.event = w->stats.events;
  w->fail.file = file;
  w->fail.line = line;
  sim__trace(w, SIM_EV_FAIL, (unsigned)live, node, -1, 0, 0, 0, NULL, 0);
}

int sim__invariant_failed(sim_world *w, int node, const char *name, const char *file, int line,
                          const char *fmt, ...) {
  if (w->failed || w->budget == SIM_BUDGET_MEMORY) /* not a finding: the host's memory */
    return 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(w->fail.message, sizeof w->fail.message, fmt, ap);
  va_end(ap);
  record_failure(w, 0, node, name, file, line);
  if (w->cfg.fail_mode == SIM_FAIL_ABORT) {
    if (w->cfg.on_failure)
      w->cfg.on_failure(w->cfg.hook_ctx, w);
    return 1;
  }
  return 0;
}

static void liveness_failed(sim_world *w) {
  if (w->failed || w->budget == SIM_BUDGET_MEMORY)
    return;
  /* called by the window's event, at its end */
  uint64_t ms = (w->now - w->live_from) / SIM_NS_PER_MS, at = w->live_from / SIM_NS_PER_MS;
  snprintf(w->fail.message, sizeof w->fail.message,
           "liveness predicate did not hold in the %" PRIu64 ".%03" PRIu64
           " s window opened at %" PRIu64 ".%03" PRIu64 " s (after heal)",
           ms / 1000, ms % 1000, at / 1000, at % 1000);
  record_failure(w, 1, -1, "liveness", __FILE__, __LINE__);
  SIM_ASSERT(w->failed && w->stopped && w->fail.is_liveness);
  if (w->cfg.fail_mode == SIM_FAIL_ABORT) {
    if (w->cfg.on_failure)
      w->cfg.on_failure(w->cfg.hook_ctx, w);
    abort();
  }
}

int sim_require_liveness(sim_world *w, uint64_t deadline_ns) {
  if (!w->cfg.live)
    return -EINVAL;
  if (w->live_ev != NONE) {
    sim__ev_cancel(w, w->live_ev);
    w->live_ev = NONE;
  }
  w->live_armed = 1;
  w->live_from = w->now;
  if (w->cfg.live(w->cfg.hook_ctx, w)) {
    w->live_armed = 0;
    return 0;
  }
  uint64_t t = deadline_ns > UINT64_MAX - w->now ? UINT64_MAX : w->now + deadline_ns;
  w->live_ev = sim__sched(w, t, EVK_LIVE, -1);
  return w->live_ev == NONE ? -ENOSPC : 0;
}

int sim_liveness_pending(const sim_world *w) {
  /* a deadline event exists only while a window is open (step, EVK_LIVE) */
  SIM_ASSERT(w->live_armed || w->live_ev == NONE);
  return w->live_armed;
}
int sim_failed(const sim_world *w) {
  SIM_ASSERT(!w->failed || w->stopped); /* record_failure stops the run */
  return w->failed;
}
const sim_failure *sim_get_failure(const sim_world *w) {
  SIM_ASSERT(!w->failed || (w->fail.name && w->fail.time <= w->now)); /* record_failure */
  return w->failed ? &w->fail : NULL;
}

int sim_finish(sim_world *w) {
  SIM_ASSERT(!w->hole); /* never from inside an event */
  if (!w->finished && !w->failed) {
    w->finished = 1;
    if (w->cfg.at_end)
      SIM__AS(w, -1, w->cfg.at_end(w->cfg.hook_ctx, w));
  }
  return w->failed;
}

/* ---- Running -------------------------------------------------------- */

static void boot_node(sim_world *w, int i) {
  node_t *nd = &w->node[i];
  SIM_ASSERT(!nd->up && nd->timers == 0 && nd->dhead == NONE); /* a crash left nothing behind */
  int restart = nd->inc > 0;
  nd->booting = 0;
  nd->up = 1;
  nd->paused = 0;
  sim__trace(w, SIM_EV_BOOT, 0, i, -1, (uint64_t)restart, nd->inc, 0, NULL, 0);
  if (w->cfg.ops->boot)
    SIM__AS(w, i, w->cfg.ops->boot(w->cfg.ctx, w, i, restart));
}

static void defer(sim_world *w, node_t *nd, uint32_t e) {
  SIM_ASSERT(nd->paused && nd->up && (nd->dtail == NONE) == (nd->dhead == NONE));
  w->ev[e].next = NONE;
  if (nd->dtail == NONE)
    nd->dhead = e;
  else
    w->ev[nd->dtail].next = e;
  nd->dtail = e;
  nd->ndeferred++;
}

static void dispatch(sim_world *w, uint32_t e) {
  ev_t *x = &w->ev[e];
  SIM_ASSERT(x->node >= -1 && x->node < w->n);
  w->ev_node = x->node;
  if (x->node >= 0 && x->kind != EVK_BOOT) {
    node_t *nd = &w->node[x->node];
    if (nd->paused && nd->up && x->inc == nd->inc) {
      defer(w, nd, e);
      return;
    }
  }
  switch (x->kind) {
  case EVK_BOOT: {
    int i = x->node;
    int ok = !w->node[i].up && x->inc == w->node[i].inc;
    sim__ev_free(w, e);
    if (ok)
      boot_node(w, i);
    break;
  }
  case EVK_MSG: sim__deliver_msg(w, e); break;
  case EVK_SEG: sim__seg_event(w, e); break;
  case EVK_SYN: sim__syn_event(w, e); break;
  case EVK_CONNTO: sim__connto_event(w, e); break;
  case EVK_NOTIFY: sim__notify_event(w, e); break;
  case EVK_TIMER: {
    int i = x->node;
    uint64_t tag = x->u.tag;
    node_t *nd = &w->node[i];
    int live = nd->up && x->inc == nd->inc;
    sim__ev_free(w, e);
    if (live) {
      nd->timers--;
      w->stats.timers_fired++;
      sim__trace_inline(w, SIM_EV_TIMER, 0, i, -1, tag, 0, 0, NULL, 0);
      if (w->cfg.ops->timer)
        SIM__AS(w, i, w->cfg.ops->timer(w->cfg.ctx, w, i, tag));
    }
    break;
  }
  case EVK_CALL: {
    sim_call_fn fn = x->u.call.fn;
    void *arg = x->u.call.arg;
    sim__ev_free(w, e);
    fn(w, arg);
    break;
  }
  case EVK_LIVE:
    sim__ev_free(w, e);
    w->live_ev = NONE;
    if (w->live_armed)
      liveness_failed(w);
    break;
  default: sim__ev_free(w, e); break;
  }
}

_Thread_local sim__cur_t sim__cur = {NULL, -1};

sim_world *sim_current(int *node) {
  /* sim_set_current_node's pair: a node of the current world, or -1 */
  SIM_ASSERT(!sim__cur.w || (sim__cur.node >= -1 && sim__cur.node < sim__cur.w->n));
  if (node)
    *node = sim__cur.w ? sim__cur.node : -1;
  return sim__cur.w;
}

int sim_set_current_node(sim_world *w, int node) {
  int prev = sim__cur.w == w ? sim__cur.node : -1;
  if (sim__cur.w == w)
    sim__cur.node = node >= 0 && node < w->n ? node : -1;
  SIM_ASSERT(prev >= -1 && prev < w->n);
  return prev;
}

void sim__abandon(sim_world *w, sim_world *prev, int prev_node) {
  SIM_ASSERT(prev != w); /* a world never runs inside itself */
  w->stopped = 1;
  w->hole = 0; /* the event left by longjmp: it never comes up again either */
  sim__cur.w = prev;
  sim__cur.node = prev ? prev_node : -1;
}

static void step(sim_world *w);

/* The event and virtual-time budgets, before the next event (there is
 * one): 1 to go on, else 0 and the run stops. */
static inline int within_budgets(sim_world *w) {
  if (w->stats.events >= w->cfg.budgets.max_events) {
    sim__budget_stop(w, SIM_BUDGET_EVENTS);
    return 0;
  }
  if (w->heap[0].time > w->cfg.budgets.max_time_ns) {
    sim__budget_stop(w, SIM_BUDGET_TIME);
    return 0;
  }
  return 1;
}

int sim_step(sim_world *w) {
  if (w->stopped || w->heap_n == 0 || !within_budgets(w))
    return 0;
  SIM_ASSERT(w->heap_n <= w->heap_cap);
  SIM__AS(w, -1, step(w));
  return 1;
}

/* One event and the checks after it (sim_step has checked the budgets). */
static void step(sim_world *w) {
  SIM_ASSERT(!w->hole); /* not re-entered from an event */
  uint64_t t = w->heap[0].time;
  uint32_t e = w->heap[0].ev;
  w->now = t;
  w->stats.events++;
  w->hole = 1; /* the root stays until an event replaces it or dispatch ends */
  dispatch(w, e);
  if (w->hole) {
    w->hole = 0;
    heap_remove_root(w);
  }
  if (!w->stopped) {
    if (w->live_armed && w->cfg.live(w->cfg.hook_ctx, w)) {
      w->live_armed = 0;
      if (w->live_ev != NONE) {
        sim__ev_cancel(w, w->live_ev);
        w->live_ev = NONE;
      }
    }
    if (w->cfg.after_event && !w->stopped)
      w->cfg.after_event(w->cfg.hook_ctx, w);
  }
}

sim_stop sim_run(sim_world *w, uint64_t until_ns, uint64_t max_steps) {
  uint64_t steps = 0;
  sim_stop r;
  sim__cur_t saved = sim__cur; /* as in sim_step, once for the whole run */
  sim__cur.w = w;
  sim__cur.node = -1;
  for (;;) {
    if (w->failed) {
      r = SIM_STOP_FAILURE;
      break;
    }
    if (w->stopped) {
      r = SIM_STOP_BUDGET;
      break;
    }
    if (max_steps && steps >= max_steps) {
      r = SIM_STOP_STEPS;
      break;
    }
    if (w->heap_n == 0 || w->heap[0].time > until_ns) {
      if (until_ns != UINT64_MAX && until_ns > w->now)
        w->now = until_ns;
      r = w->heap_n == 0 ? SIM_STOP_QUIESCENT : SIM_STOP_TIME;
      break;
    }
    if (within_budgets(w)) {
      step(w);
      steps++;
    }
  }
  sim__cur = saved;
  SIM_ASSERT(r != SIM_STOP_FAILURE || w->failed);
  return r;
}

/* ---- Nodes ---------------------------------------------------------- */

void sim_node_set_data(sim_world *w, int node, void *data) {
  if (node >= 0 && node < w->n)
    w->node[node].data = data;
}

void *sim_node_data(const sim_world *w, int node) {
  return node >= 0 && node < w->n ? w->node[node].data : NULL;
}

void *sim_node_alloc(sim_world *w, int node, size_t size) {
  SIM_ASSERT(node >= 0 && node < w->n); /* else nobody would ever free it */
  void *p = calloc(1, size ? size : 1);
  if (!p)
    abort();
  sim_node_set_data(w, node, p);
  return p;
}

void sim_node_free(sim_world *w, int node) {
  SIM_ASSERT(node >= 0 && node < w->n); /* sim_node_alloc's pair */
  free(sim_node_data(w, node));
  sim_node_set_data(w, node, NULL);
}

int sim_node_up(const sim_world *w, int node) {
  if (node < 0 || node >= w->n)
    return 0;
  /* up only once its boot ran (boot_node clears booting as it sets up) */
  SIM_ASSERT(!w->node[node].up || !w->node[node].booting);
  return w->node[node].up;
}

int sim_node_paused(const sim_world *w, int node) {
  if (node < 0 || node >= w->n)
    return 0;
  /* only a running node pauses, and a crash unpauses (sim_node_pause, _crash) */
  SIM_ASSERT(!w->node[node].paused || w->node[node].up);
  return w->node[node].paused;
}

uint32_t sim_node_incarnation(const sim_world *w, int node) {
  /* bumped only by a crash (sim_node_crash) */
  SIM_ASSERT(node < 0 || node >= w->n || w->node[node].inc <= w->stats.crashes);
  return node >= 0 && node < w->n ? w->node[node].inc : 0;
}

static void drop_deferred(sim_world *w, node_t *nd) {
  uint32_t e = nd->dhead;
  while (e != NONE) {
    uint32_t next = w->ev[e].next;
    /* messages and segments were purged by the crash; only events remain */
    sim__ev_free(w, e);
    e = next;
  }
  nd->dhead = nd->dtail = NONE;
  nd->ndeferred = 0;
  SIM_ASSERT(!nd->paused); /* dropped at a crash, which unpauses first */
}

/* The node goes down: a crash (stop = 0) or its process stops (stop = 1,
 * the disk keeps its cache). */
static int node_down(sim_world *w, int node, int stop) {
  SIM__CHECK_NODE(w, node);
  node_t *nd = &w->node[node];
  if (!nd->up)
    return 0;
  w->stats.crashes++;
  sim__trace(w, SIM_EV_CRASH, 0, node, -1, nd->inc, (uint64_t)stop, 0, NULL, 0);
  if (w->cfg.ops->teardown)
    SIM__AS(
        w, node,
        w->cfg.ops->teardown(w->cfg.ctx, w, node, stop ? SIM_TEARDOWN_STOP : SIM_TEARDOWN_CRASH));
  nd->data = NULL;
  nd->up = 0;
  nd->paused = 0;
  nd->inc++; /* every pending event of the old incarnation is now stale */
  nd->timers = 0;
  sim__net_purge_node(w, node);
  sim__conn_purge_node(w, node);
  drop_deferred(w, nd);
  if (!stop)
    sim__disk_crash(w, node);
  SIM_ASSERT(!nd->up && nd->dhead == NONE && nd->ndeferred == 0);
  return 0;
}

int sim_node_crash(sim_world *w, int node) {
  return node_down(w, node, 0);
}

int sim_node_stop(sim_world *w, int node) {
  return node_down(w, node, 1);
}

int sim_node_set_version(sim_world *w, int node, uint32_t version) {
  SIM__CHECK_NODE(w, node);
  node_t *nd = &w->node[node];
  if (nd->version == version)
    return 0;
  sim__trace(w, SIM_EV_VERSION, 0, node, -1, version, nd->version, 0, NULL, 0);
  nd->version = version;
  SIM_ASSERT(sim_node_version(w, node) == version); /* sim_node_version's pair */
  return 0;
}

uint32_t sim_node_version(const sim_world *w, int node) {
  return node >= 0 && node < w->n ? w->node[node].version : 0;
}

int sim_node_restart(sim_world *w, int node) {
  SIM__CHECK_NODE(w, node);
  node_t *nd = &w->node[node];
  if (nd->up || nd->booting) /* up, or its boot already on the way */
    return -EALREADY;
  w->stats.restarts++;
  sim__trace(w, SIM_EV_RESTART, 0, node, -1, nd->inc, 0, 0, NULL, 0);
  if (sim__sched(w, w->now, EVK_BOOT, node) == NONE)
    return -ENOSPC; /* no boot on the way: a later restart may try again */
  nd->booting = 1;
  SIM_ASSERT(!nd->up); /* up only when its boot event comes */
  return 0;
}

int sim_node_pause(sim_world *w, int node) {
  SIM__CHECK_NODE(w, node);
  node_t *nd = &w->node[node];
  if (!nd->up || nd->paused)
    return -EALREADY;
  nd->paused = 1;
  SIM_ASSERT(nd->dhead == NONE && nd->ndeferred == 0); /* nothing deferred before a pause */
  w->stats.pauses++;
  sim__trace(w, SIM_EV_PAUSE, 0, node, -1, 0, 0, 0, NULL, 0);
  return 0;
}

int sim_node_resume(sim_world *w, int node) {
  SIM__CHECK_NODE(w, node);
  node_t *nd = &w->node[node];
  if (!nd->paused)
    return -EALREADY;
  nd->paused = 0;
  w->stats.resumes++;
  sim__trace(w, SIM_EV_RESUME, 0, node, -1, nd->ndeferred, 0, 0, NULL, 0);
  /* Re-queue deferred events at now, 1 ns apart, so they keep their order
   * whatever the tie-break rule. */
  uint32_t e = nd->dhead;
  uint64_t t = w->now;
  nd->dhead = nd->dtail = NONE;
  nd->ndeferred = 0;
  while (e != NONE) {
    uint32_t next = w->ev[e].next;
    /* events scheduled while the node was paused may have filled the heap
     * the deferred ones came out of: grow it, within the budget */
    if (heap_reserve(w) != 0)
      sim__ev_free(w, e);
    else
      heap_insert(w, e, t++);
    e = next;
  }
  SIM_ASSERT(nd->dhead == NONE && !nd->paused);
  return 0;
}

/* ---- Timers and clocks ---------------------------------------------- */

/* Convert a delay on a node's (drifting) clock into true time. */
uint64_t sim__local_to_true(const node_t *nd, uint64_t d) {
  SIM_ASSERT(nd->drift >= -SIM_MAX_DRIFT_PPM && nd->drift <= SIM_MAX_DRIFT_PPM);
  if (nd->drift == 0)
    return d;
  uint64_t den = (uint64_t)((int64_t)SIM_PPM + nd->drift);
  return (d / den) * SIM_PPM + ((d % den) * SIM_PPM) / den;
}

sim_timer sim_timer_start(sim_world *w, int node, uint64_t delay_ns, uint64_t tag) {
  if (node < 0 || node >= w->n)
    return 0;
  node_t *nd = &w->node[node];
  if (!nd->up || nd->timers >= w->cfg.budgets.max_timers)
    return 0;
  uint64_t d = sim__local_to_true(nd, delay_ns);
  uint64_t t = d > UINT64_MAX - w->now ? UINT64_MAX : w->now + d;
  uint32_t e = sim__sched(w, t, EVK_TIMER, node);
  if (e == NONE)
    return 0;
  /* stamped with this incarnation: sim_timer_cancel and the dispatch of
   * the timer tell a live timer from a stale one by it */
  SIM_ASSERT(w->ev[e].node == node && w->ev[e].inc == nd->inc);
  w->ev[e].u.tag = tag;
  nd->timers++;
  return ((uint64_t)(w->ev[e].gen + 1) << 32) | e;
}

int sim_timer_cancel(sim_world *w, sim_timer t) {
  uint32_t e = (uint32_t)t;
  uint32_t gen = (uint32_t)(t >> 32);
  if (t == 0 || e >= w->ev_cap || gen == 0)
    return -ENOENT;
  ev_t *x = &w->ev[e];
  if (x->kind != EVK_TIMER || x->gen + 1 != gen)
    return -ENOENT;
  node_t *nd = &w->node[x->node];
  int live = nd->up && x->inc == nd->inc;
  SIM_ASSERT(!live || nd->timers > 0); /* a live timer is counted (sim_timer_start) */
  sim__ev_cancel(w, e);
  if (!live)
    return -ENOENT;
  nd->timers--;
  return 0;
}

/* saturating signed addition: clocks never overflow, whatever the inputs */
static int64_t sat_add(int64_t a, int64_t b) {
  if (b > 0 && a > INT64_MAX - b)
    return INT64_MAX;
  if (b < 0 && a < INT64_MIN - b)
    return INT64_MIN;
  return a + b;
}

/* drift contribution of `dt` ns at `drift` ppm (|drift| <= SIM_MAX_DRIFT_PPM), without
 * overflow: |q * drift| <= 1.9e13 * 2e5 < 2^63 */
static int64_t drift_of(uint64_t dt, int32_t drift) {
  SIM_ASSERT(drift >= -SIM_MAX_DRIFT_PPM && drift <= SIM_MAX_DRIFT_PPM);
  int64_t q = (int64_t)(dt / SIM_PPM), r = (int64_t)(dt % SIM_PPM);
  return q * drift + (r * drift) / (int64_t)SIM_PPM;
}

/* A node's clock: true time, plus an offset, plus the drift since anchor. */
static int64_t node_clock(const sim_world *w, int node, int mono) {
  if (node < 0 || node >= w->n)
    return 0;
  const node_t *nd = &w->node[node];
  SIM_ASSERT(nd->anchor <= w->now); /* set to a past moment (the clock setters) */
  int64_t t = w->now > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)w->now;
  return sat_add(sat_add(t, mono ? nd->mono_drift : nd->clk_off),
                 drift_of(w->now - nd->anchor, nd->drift));
}

int64_t sim_clock(const sim_world *w, int node) {
  return node_clock(w, node, 0);
}

int64_t sim_clock_mono(const sim_world *w, int node) {
  return node_clock(w, node, 1);
}

static void clock_changed(sim_world *w, int node) {
  node_t *nd = &w->node[node];
  /* what the setters wrote: sim__local_to_true and node_clock read it */
  SIM_ASSERT(nd->drift >= -SIM_MAX_DRIFT_PPM && nd->drift <= SIM_MAX_DRIFT_PPM);
  SIM_ASSERT(nd->anchor <= w->now);
  w->stats.clock_changes++;
  sim__trace(w, SIM_EV_CLOCK, 0, node, -1, (uint64_t)nd->clk_off, (uint64_t)(int64_t)nd->drift, 0,
             NULL, 0);
}

int sim_clock_set_offset(sim_world *w, int node, int64_t offset_ns) {
  SIM__CHECK_NODE(w, node);
  node_t *nd = &w->node[node];
  SIM_ASSERT(nd->anchor <= w->now); /* anchors are set to now, never ahead */
  nd->clk_off = sat_add(offset_ns, -drift_of(w->now - nd->anchor, nd->drift));
  clock_changed(w, node);
  return 0;
}

int sim_clock_set_drift(sim_world *w, int node, int32_t drift_ppm) {
  SIM__CHECK_NODE(w, node);
  if (drift_ppm < -SIM_MAX_DRIFT_PPM || drift_ppm > SIM_MAX_DRIFT_PPM)
    return -EINVAL;
  node_t *nd = &w->node[node];
  SIM_ASSERT(nd->anchor <= w->now); /* anchors are set to now, never ahead */
  int64_t since = drift_of(w->now - nd->anchor, nd->drift);
  nd->clk_off = sat_add(nd->clk_off, since);
  nd->mono_drift = sat_add(nd->mono_drift, since);
  nd->anchor = w->now;
  nd->drift = drift_ppm;
  clock_changed(w, node);
  return 0;
}

int sim_clock_jump(sim_world *w, int node, int64_t delta_ns) {
  SIM__CHECK_NODE(w, node);
  int64_t before = w->node[node].clk_off;
  w->node[node].clk_off = sat_add(before, delta_ns);
  SIM_ASSERT(delta_ns < 0 ? w->node[node].clk_off <= before : w->node[node].clk_off >= before);
  clock_changed(w, node);
  return 0;
}

/* ---- Code-level fault points ---------------------------------------- */

/* Find or insert key in a fixed open-addressing table; NULL when full (or
 * the host is out of memory, which stops the run: sim__out_of_memory). */
static fp_ent *fp_slot(sim_world *w, fp_ent **tab, uint32_t key, int insert) {
  if (!*tab) {
    if (!insert)
      return NULL;
    *tab = calloc(FP_SLOTS, sizeof **tab);
    if (!*tab) {
      sim__out_of_memory(w);
      return NULL;
    }
  }
  uint32_t h = (uint32_t)sim__mix(key) & (FP_SLOTS - 1);
  for (uint32_t i = 0; i < FP_SLOTS; i++) {
    fp_ent *s = &(*tab)[(h + i) & (FP_SLOTS - 1)];
    SIM_ASSERT(s->used <= 1); /* a flag: set once, at insertion */
    if (s->used && s->key == key)
      return s;
    if (!s->used) {
      if (!insert)
        return NULL;
      s->used = 1;
      s->key = key;
      s->val = 0;
      return s;
    }
  }
  return NULL;
}

int sim_faultpoint_force(sim_world *w, uint32_t site, int64_t ppm) {
  fp_ent *s = fp_slot(w, &w->fp_force, site, 1);
  if (!s)
    return -ENOSPC;
  SIM_ASSERT(s->used && s->key == site); /* fp_slot's pair: the site's own slot */
  s->val = ppm < 0 ? -1 : (ppm > SIM_PPM ? SIM_PPM : ppm);
  return 0;
}

int sim_faultpoint_nth(sim_world *w, uint32_t site, uint32_t nth) {
  fp_ent *s = fp_slot(w, &w->fp_nth, site, nth != 0);
  if (!s)
    return nth ? -ENOSPC : 0;
  s->val = nth;
  return 0;
}

/* The one-shot of sim_faultpoint_nth: counts this hit down, 1 when it is
 * the armed one. */
static int fp_countdown(sim_world *w, uint32_t site) {
  fp_ent *s = fp_slot(w, &w->fp_nth, site, 0);
  if (!s || s->val == 0)
    return 0;
  SIM_ASSERT(s->val > 0 && s->val <= UINT32_MAX); /* sim_faultpoint_nth's pair */
  return --s->val == 0;
}

void sim_faultpoints_set(sim_world *w, const sim_faultpoint_params *p) {
  w->cfg.faultpoints = *p;
}

const sim_link_params *sim_net_defaults(const sim_world *w) {
  return &w->cfg.net;
}

/* A fault point fires: counted and traced (a = site, b = the node's hit
 * under a rate, 0 for sim_faultpoint_nth's one-shot). */
static int fp_fired(sim_world *w, int node, uint32_t site, uint64_t hit) {
  w->stats.faultpoints_fired++;
  sim__trace(w, SIM_EV_FAULTPOINT, 0, node, -1, site, hit, 0, NULL, 0);
  return 1;
}

int sim_faultpoint(sim_world *w, int node, uint32_t site) {
  if (node < 0 || node >= w->n)
    return 0;
  if (fp_countdown(w, site))
    return fp_fired(w, node, site, 0);
  uint32_t rate;
  fp_ent *f = fp_slot(w, &w->fp_force, site, 0);
  if (f) {
    /* sim_faultpoint_force's pair: -1 (never) or a rate in 0..SIM_PPM */
    SIM_ASSERT(f->val >= -1 && f->val <= SIM_PPM);
    rate = f->val < 0 ? 0 : (uint32_t)f->val;
  } else {
    const sim_faultpoint_params *p = &w->cfg.faultpoints;
    if (!p->enable_ppm || !p->fire_ppm)
      return 0;
    rate = sim__chance(w, sim__sid(P_FP_EN, 0, site), 0, p->enable_ppm) ? p->fire_ppm : 0;
  }
  if (!rate)
    return 0;
  fp_ent *c = fp_slot(w, &w->fp_count, ((uint32_t)node << 24) ^ site, 1);
  uint64_t n = c ? (uint64_t)c->val++ : w->stats.faultpoints_fired;
  if (!sim__chance(w, sim__sid(P_FP, (uint32_t)node, site), n, rate))
    return 0;
  return fp_fired(w, node, site, n);
}
