/* Datagram network: per-link faults, partitions, hold/release. */
#include "internal.h"

#define MSG_KEEP_CAP 4096 /* free-list entries keep buffers up to this size */

/* ---- Message pool ---------------------------------------------------- */

static inline __attribute__((always_inline)) uint32_t msg_alloc(sim_world *w, const void *data,
                                                                size_t len) {
  if (w->inflight >= w->cfg.budgets.max_inflight) {
    sim__budget_stop(w, SIM_BUDGET_INFLIGHT);
    return NONE;
  }
  if (w->msg_free == NONE) {
    msg_t *m = sim__pool_grow(w->msg, &w->msg_cap, &w->msg_free, sizeof *m, offsetof(msg_t, next),
                              32, w->cfg.budgets.max_inflight + 32u);
    if (!m) {
      sim__budget_stop(w, SIM_BUDGET_MEMORY);
      return NONE;
    }
    w->msg = m;
  }
  uint32_t i = w->msg_free;
  SIM_ASSERT(i < w->msg_cap && w->inflight < w->msg_cap);
  msg_t *m = &w->msg[i];
  if (m->cap < len) {
    uint32_t c = m->cap ? m->cap : 64;
    while (c < len)
      c *= 2;
    uint8_t *d = realloc(m->data, c);
    if (!d) {
      sim__budget_stop(w, SIM_BUDGET_MEMORY);
      return NONE;
    }
    m->data = d;
    m->cap = c;
  }
  w->msg_free = m->next;
  if (len)
    memcpy(m->data, data, len);
  m->len = (uint32_t)len;
  m->ev = NONE;
  m->prev = m->next = NONE;
  m->flags = 0;
  m->conn = NONE;
  m->kind = 0;
  m->at = 0;
  m->dir = 0;
  w->inflight++;
  return i;
}

uint32_t sim__msg_alloc(sim_world *w, const void *data, size_t len) {
  return msg_alloc(w, data, len);
}

void sim__msg_free(sim_world *w, uint32_t i) {
  SIM_ASSERT(i < w->msg_cap && w->inflight > 0);
  msg_t *m = &w->msg[i];
  if (m->cap > MSG_KEEP_CAP) {
    free(m->data);
    m->data = NULL;
    m->cap = 0;
  }
  m->next = w->msg_free;
  w->msg_free = i;
  w->inflight--;
}

void sim__net_free(sim_world *w) {
  SIM_ASSERT(w->inflight <= w->msg_cap); /* msg_alloc's count: the pool holds them all */
  for (uint32_t i = 0; i < w->msg_cap; i++)
    free(w->msg[i].data);
  free(w->msg);
}

void sim__ml_push(sim_world *w, mlist *l, uint32_t i) {
  SIM_ASSERT(i < w->msg_cap && i != l->tail); /* not already the list's last */
  msg_t *m = &w->msg[i];
  m->next = NONE;
  m->prev = l->tail;
  if (l->tail == NONE)
    l->head = i;
  else
    w->msg[l->tail].next = i;
  l->tail = i;
  l->n++;
}

void sim__ml_remove(sim_world *w, mlist *l, uint32_t i) {
  SIM_ASSERT(i < w->msg_cap && l->n > 0);
  msg_t *m = &w->msg[i];
  /* on this list, as sim__ml_push left it: an end of it, or linked both
   * ways (each neighbour's link checked where it is rewritten) */
  uint32_t *back = m->prev == NONE ? &l->head : &w->msg[m->prev].next;
  uint32_t *fwd = m->next == NONE ? &l->tail : &w->msg[m->next].prev;
  SIM_ASSERT(*back == i && *fwd == i);
  *back = m->next;
  *fwd = m->prev;
  m->prev = m->next = NONE;
  l->n--;
}

static link_t *L(sim_world *w, int from, int to) {
  SIM_ASSERT(from >= 0 && from < w->n && to >= 0 && to < w->n);
  return &w->link[from][to];
}

void sim__link_params(link_t *l, const sim_link_params *p) {
  l->p = *p;
  l->faulty = p->loss_ppm || p->dup_ppm || p->reorder_ppm || p->corrupt_ppm || p->bandwidth_bps ||
              p->queue_limit;
}

/* A message's trace record, off the hot paths: the send and the delivery
 * of every datagram call sim__trace_inline themselves. */
static void trace_msg(sim_world *w, unsigned kind, unsigned reason, int node, int peer,
                      const msg_t *m, uint64_t b) {
  SIM_ASSERT(m->len == 0 || m->data);
  sim__trace_inline(w, kind, reason, node, peer, m->id, b, m->kind, m->data, m->len);
}

static void drop(sim_world *w, uint32_t i, unsigned reason) {
  msg_t *m = &w->msg[i];
  /* off every list, its delivery event gone (cancelled or run) */
  SIM_ASSERT(m->ev == NONE && m->prev == NONE && m->next == NONE);
  SIM_ASSERT(reason >= SIM_DROP_LOSS && reason <= SIM_DROP_SENDER_CRASH);
  switch (reason) {
  case SIM_DROP_LOSS: w->stats.lost++; break;
  case SIM_DROP_PARTITION: w->stats.dropped_partition++; break;
  case SIM_DROP_QUEUE: w->stats.dropped_queue++; break;
  case SIM_DROP_DOWN: w->stats.dropped_down++; break;
  case SIM_DROP_SENDER_CRASH: w->stats.dropped_sender_crash++; break;
  default: break;
  }
  trace_msg(w, SIM_EV_DROP, reason, m->from, m->to, m, 0);
  sim__msg_free(w, i);
}

/* ---- Sending -------------------------------------------------------- */

/* One-way delay drawn for decision n of link from->to. */
static uint64_t latency(sim_world *w, const sim_link_params *p, unsigned purpose, int from, int to,
                        uint64_t n) {
  uint64_t lo = p->latency_min_ns, hi = p->latency_max_ns;
  if (hi <= lo)
    return lo;
  uint64_t sid = sim__sid(purpose, (uint32_t)from, (uint32_t)to);
  if (p->dist == SIM_LAT_EXPONENTIAL) {
    /* Integer exponential: -ln(u) ~= ln2 * (leading zeros + linear mantissa);
     * mean (hi-lo)/4, capped at hi. u's top byte follows the tape. */
    uint64_t u = sim__draw(w, sid, n) | 1;
    unsigned lz = 0;
    while (!(u & (1ull << 63))) {
      u <<= 1;
      lz++;
    }
    uint64_t frac = (u >> 47) & 0xffff; /* mantissa after the leading one */
    /* -log2(u) ~= lz + (1 - frac/65536) for u in [2^-lz-1, 2^-lz) */
    uint64_t log2x65536 = (uint64_t)lz * 65536 + (65536 - frac);
    uint64_t mean = (hi - lo) / 4;
    uint64_t d = (mean / 65536) * log2x65536 * 45426 / 65536 +
                 ((mean % 65536) * log2x65536 / 65536) * 45426 / 65536; /* * ln2 */
    return d > hi - lo ? hi : lo + d;
  }
  return sim__range(w, sid, n, lo, hi);
}

static int schedule_delivery(sim_world *w, uint32_t i, uint64_t t) {
  msg_t *m = &w->msg[i];
  SIM_ASSERT(m->ev == NONE); /* one delivery event (sim__sched checks its time) */
  uint32_t e = sim__sched(w, t, EVK_MSG, m->to);
  if (e == NONE)
    return -1;
  w->ev[e].u.idx = i;
  m->ev = e;
  return 0;
}

/* Put a copy in flight with its own delay (decision index n of `purpose`). */
static inline __attribute__((always_inline)) void launch(sim_world *w, link_t *l, uint32_t i,
                                                         uint64_t n, unsigned lat_purpose) {
  msg_t *m = &w->msg[i];
  const sim_link_params *p = &l->p;
  uint64_t d = latency(w, p, lat_purpose, m->from, m->to, n);
  if (!l->faulty)
    goto go;
  if (p->bandwidth_bps) {
    uint64_t start = l->busy_until > w->now ? l->busy_until : w->now;
    uint64_t ser = ((uint64_t)m->len * SIM_NS_PER_S + p->bandwidth_bps - 1) / p->bandwidth_bps;
    l->busy_until = start + ser;
    d += l->busy_until - w->now;
  }
  if (sim__chance(w, sim__sid(P_REORDER, (uint32_t)m->from, (uint32_t)m->to),
                  n * 2 + (lat_purpose == P_DUPLAT), p->reorder_ppm)) {
    uint64_t extra = sim__range(w, sim__sid(P_REORDERLAT, (uint32_t)m->from, (uint32_t)m->to),
                                n * 2 + (lat_purpose == P_DUPLAT), 1, p->reorder_delay_ns);
    d += extra;
    w->stats.reordered++;
    trace_msg(w, SIM_EV_REORDER, 0, m->from, m->to, m, extra);
  }
go:
  sim__ml_push(w, &l->fly, i);
  if (schedule_delivery(w, i, w->now + d) < 0) {
    sim__ml_remove(w, &l->fly, i);
    sim__msg_free(w, i);
  }
}

int sim_send(sim_world *w, int from, int to, const void *msg, size_t len) {
  if (from < 0 || from >= w->n || to < 0 || to >= w->n || (!msg && len))
    return -EINVAL;
  if (len > w->cfg.budgets.max_msg_size)
    return -EMSGSIZE;
  if (!w->node[from].up)
    return -EHOSTDOWN;
  if (w->stopped)
    return 0;
  link_t *l = L(w, from, to);
  uint64_t n = l->seq++;
  uint32_t i = msg_alloc(w, msg, len);
  if (i == NONE)
    return 0;
  msg_t *m = &w->msg[i];
  m->from = (int16_t)from;
  m->to = (int16_t)to;
  m->id = ++w->msg_id;
  m->kind = w->cfg.classify ? w->cfg.classify(w->cfg.ctx, msg, len) : 0;
  w->stats.sent++;
  sim__trace_inline(w, SIM_EV_SEND, 0, from, to, m->id, 0, m->kind, m->data, m->len);
  const sim_link_params *p = &l->p;
  if (l->blocked) {
    drop(w, i, SIM_DROP_PARTITION);
    return 0;
  }
  if (!l->faulty) { /* fast path: latency only */
    launch(w, l, i, n, P_LAT);
    return 0;
  }
  if (sim__chance(w, sim__sid(P_LOSS, (uint32_t)from, (uint32_t)to), n, p->loss_ppm)) {
    drop(w, i, SIM_DROP_LOSS);
    return 0;
  }
  if (p->queue_limit && l->fly.n + l->hold.n >= p->queue_limit) {
    drop(w, i, SIM_DROP_QUEUE);
    return 0;
  }
  uint64_t csid = sim__sid(P_CORRUPT, (uint32_t)from, (uint32_t)to);
  if (len && sim__chance(w, csid, n, p->corrupt_ppm)) {
    uint64_t bit = sim__range(w, sim__sid(P_CORRUPTBIT, (uint32_t)from, (uint32_t)to), n, 0,
                              (uint64_t)len * 8 - 1);
    m->data[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    w->stats.corrupted++;
    trace_msg(w, SIM_EV_CORRUPT, 0, from, to, m, bit);
  }
  int dup = sim__chance(w, sim__sid(P_DUP, (uint32_t)from, (uint32_t)to), n, p->dup_ppm);
  launch(w, l, i, n, P_LAT);
  if (dup && !w->stopped) {
    uint32_t j = sim__msg_alloc(w, w->msg[i].data, len);
    if (j != NONE) {
      msg_t *c = &w->msg[j];
      c->from = (int16_t)from;
      c->to = (int16_t)to;
      c->id = ++w->msg_id;
      c->kind = w->msg[i].kind;
      c->flags = MF_DUP;
      w->stats.duplicated++;
      sim__trace(w, SIM_EV_DUP, 0, from, to, c->id, w->msg[i].id, c->kind, c->data, len);
      launch(w, l, j, n, P_DUPLAT);
    }
  }
  return 0;
}

/* ---- Delivery ------------------------------------------------------- */

uint64_t sim_in_flight_due(const sim_world *w) {
  uint64_t t = w->now;
  /* datagrams, and each stream's next segment: their delivery events (the
   * root, while its event is dispatched, is that event's stale entry) */
  for (uint32_t i = w->hole; i < w->heap_n; i++) {
    const heap_ent *h = &w->heap[i];
    uint8_t kind = w->ev[h->ev].kind;
    if ((kind == EVK_MSG || kind == EVK_SEG) && h->time > t)
      t = h->time;
  }
  SIM_ASSERT(t >= w->now);
  return sim__conn_due(w, t); /* and the segments queued behind those */
}

void sim__deliver_msg(sim_world *w, uint32_t e) {
  uint32_t i = w->ev[e].u.idx;
  sim__ev_free(w, e);
  msg_t *m = &w->msg[i];
  SIM_ASSERT(m->ev == e); /* schedule_delivery's pair: its own event */
  m->ev = NONE;
  link_t *l = L(w, m->from, m->to);
  sim__ml_remove(w, &l->fly, i);
  if (!w->node[m->to].up) {
    drop(w, i, SIM_DROP_DOWN);
    return;
  }
  if (l->blocked) {
    drop(w, i, SIM_DROP_PARTITION);
    return;
  }
  if (l->held && !(m->flags & MF_FORCED)) {
    m->flags |= MF_HELD;
    sim__ml_push(w, &l->hold, i);
    w->stats.held++;
    trace_msg(w, SIM_EV_HOLD, 0, m->from, m->to, m, 0);
    return;
  }
  int from = m->from, to = m->to;
  w->stats.delivered++;
  sim__trace_inline(w, SIM_EV_DELIVER, 0, to, from, m->id, 0, m->kind, m->data, m->len);
  /* The entry is off every list and not free, so its buffer stays valid
   * while recv runs even if the callback sends (the pool may move). */
  uint8_t *data = m->data;
  uint32_t len = m->len;
  if (w->cfg.ops->recv)
    SIM__AS(w, to, w->cfg.ops->recv(w->cfg.ctx, w, to, from, data, len));
  sim__msg_free(w, i);
}

/* Drop every datagram to or from `node` (crash). */
void sim__net_purge_node(sim_world *w, int node) {
  for (int o = 0; o < w->n; o++) {
    link_t *ls[2] = {L(w, node, o), L(w, o, node)};
    for (int k = 0; k < 2; k++) {
      if (k == 1 && o == node)
        continue;
      link_t *l = ls[k];
      mlist *lists[2] = {&l->fly, &l->hold};
      for (int j = 0; j < 2; j++) {
        while (lists[j]->head != NONE) {
          uint32_t i = lists[j]->head;
          msg_t *m = &w->msg[i];
          sim__ml_remove(w, lists[j], i);
          if (m->ev != NONE) {
            sim__ev_cancel(w, m->ev);
            m->ev = NONE;
          }
          drop(w, i, m->from == node ? SIM_DROP_SENDER_CRASH : SIM_DROP_DOWN);
        }
        SIM_ASSERT(lists[j]->n == 0 && lists[j]->tail == NONE);
      }
    }
  }
}

/* ---- Link control ---------------------------------------------------- */

int sim_link_set(sim_world *w, int from, int to, const sim_link_params *p) {
  SIM__CHECK_NODE(w, from);
  SIM__CHECK_NODE(w, to);
  if (!p)
    return -EINVAL;
  link_t *l = L(w, from, to);
  /* new parameters apply to new sends; what flies keeps its schedule */
  SIM_ASSERT((l->fly.n == 0) == (l->fly.head == NONE));
  sim__link_params(l, p);
  sim__trace(w, SIM_EV_LINK, 0, from, to, p->loss_ppm, p->latency_max_ns, 0, NULL, 0);
  return 0;
}

int sim_link_get(const sim_world *w, int from, int to, sim_link_params *p) {
  SIM__CHECK_NODE(w, from);
  SIM__CHECK_NODE(w, to);
  SIM_ASSERT(p != NULL);
  *p = w->link[from][to].p;
  return 0;
}

void sim_net_set_all(sim_world *w, const sim_link_params *p) {
  SIM_ASSERT(w->n >= 1 && w->n <= SIM_MAX_NODES); /* i / n and i % n below */
  for (int i = 0; i < w->n * w->n; i++)
    sim__link_params(&w->link[i / w->n][i % w->n], p);
  sim__trace(w, SIM_EV_LINK, 1, -1, -1, p->loss_ppm, p->latency_max_ns, 0, NULL, 0);
}

int sim_link_block(sim_world *w, int from, int to, int blocked) {
  SIM__CHECK_NODE(w, from);
  SIM__CHECK_NODE(w, to);
  link_t *l = L(w, from, to);
  SIM_ASSERT(!L(w, to, to)->blocked); /* a node always reaches itself */
  if (from == to || !l->blocked == !blocked)
    return 0;
  l->blocked = blocked ? 1 : 0;
  if (blocked)
    w->stats.partitions++;
  else
    w->stats.heals++;
  sim__trace(w, blocked ? SIM_EV_PARTITION : SIM_EV_HEAL, 0, from, to, 0, 0, 0, NULL, 0);
  return 0;
}

int sim_link_blocked(const sim_world *w, int from, int to) {
  if (from < 0 || from >= w->n || to < 0 || to >= w->n)
    return 0;
  SIM_ASSERT(!w->link[to][to].blocked); /* sim_link_block's pair: never a loopback */
  return w->link[from][to].blocked;
}

int sim_partition(sim_world *w, uint64_t a, uint64_t b, int oneway) {
  SIM_ASSERT(w->n <= 64); /* a mask's bit per node */
  for (int i = 0; i < w->n; i++)
    for (int j = 0; j < w->n; j++) {
      if ((a >> i & 1) && (b >> j & 1))
        sim_link_block(w, i, j, 1);
      if (!oneway && (b >> i & 1) && (a >> j & 1))
        sim_link_block(w, i, j, 1);
    }
  return 0;
}

int sim_isolate(sim_world *w, int node) {
  SIM__CHECK_NODE(w, node);
  SIM_ASSERT(w->n <= 64); /* a bit per node */
  uint64_t all = w->n == 64 ? ~0ull : ((1ull << w->n) - 1);
  return sim_partition(w, 1ull << node, all & ~(1ull << node), 0);
}

int sim_split(sim_world *w, const uint8_t *group) {
  if (!group)
    return -EINVAL;
  for (int i = 0; i < w->n; i++)
    for (int j = 0; j < w->n; j++)
      if (i != j)
        sim_link_block(w, i, j, group[i] != group[j]);
  return 0;
}

void sim_heal(sim_world *w) {
  int any = 0;
  for (int i = 0; i < w->n; i++)
    for (int j = 0; j < w->n; j++) {
      link_t *l = L(w, i, j);
      if (l->blocked) {
        l->blocked = 0;
        w->stats.heals++;
        any = 1;
      }
      if (l->held)
        sim_link_release(w, i, j);
      SIM_ASSERT(!l->blocked && !l->held);
    }
  sim__trace(w, SIM_EV_HEAL, (unsigned)any, -1, -1, 0, 0, 0, NULL, 0);
}

int sim_link_hold(sim_world *w, int from, int to) {
  SIM__CHECK_NODE(w, from);
  SIM__CHECK_NODE(w, to);
  link_t *l = L(w, from, to);
  SIM_ASSERT(l->held || l->hold.n == 0); /* only a held link holds messages */
  l->held = 1;
  return 0;
}

/* Schedule a held or in-flight message for forced delivery at time t. */
static int force(sim_world *w, link_t *l, uint32_t i, uint64_t t) {
  msg_t *m = &w->msg[i];
  SIM_ASSERT(i < w->msg_cap && t >= w->now); /* a pending message, delivered from now on */
  if (m->flags & MF_HELD) {
    sim__ml_remove(w, &l->hold, i);
    m->flags &= (uint8_t)~MF_HELD;
  } else {
    sim__ml_remove(w, &l->fly, i);
    if (m->ev != NONE) {
      sim__ev_cancel(w, m->ev);
      m->ev = NONE;
    }
  }
  m->flags |= MF_FORCED;
  w->stats.released++;
  sim__ml_push(w, &l->fly, i);
  if (schedule_delivery(w, i, t) < 0) {
    sim__ml_remove(w, &l->fly, i);
    sim__msg_free(w, i);
    return -ENOSPC;
  }
  return 0;
}

int sim_link_release(sim_world *w, int from, int to) {
  SIM__CHECK_NODE(w, from);
  SIM__CHECK_NODE(w, to);
  link_t *l = L(w, from, to);
  l->held = 0;
  uint64_t t = w->now;
  while (l->hold.head != NONE) {
    uint32_t i = l->hold.head;
    trace_msg(w, SIM_EV_RELEASE, 0, from, to, &w->msg[i], 0);
    if (force(w, l, i, t++) < 0)
      return -ENOSPC;
  }
  SIM_ASSERT(l->hold.n == 0 && !l->held);
  return 0;
}

int sim_link_deliver_kth(sim_world *w, int from, int to, uint32_t k) {
  SIM__CHECK_NODE(w, from);
  SIM__CHECK_NODE(w, to);
  link_t *l = L(w, from, to);
  uint32_t i;
  if (k < l->hold.n) {
    i = l->hold.head;
  } else if (k - l->hold.n < l->fly.n) {
    k -= l->hold.n;
    i = l->fly.head;
  } else {
    return -ENOENT;
  }
  while (k--)
    i = w->msg[i].next;
  SIM_ASSERT(i != NONE && w->msg[i].from == from && w->msg[i].to == to);
  trace_msg(w, SIM_EV_RELEASE, 0, from, to, &w->msg[i], 1);
  return force(w, l, i, w->now);
}

uint32_t sim_link_pending(const sim_world *w, int from, int to) {
  if (from < 0 || from >= w->n || to < 0 || to >= w->n)
    return 0;
  const link_t *l = &w->link[from][to];
  /* each list's count and ends agree (sim__ml_push, sim__ml_remove) */
  SIM_ASSERT((l->hold.n == 0) == (l->hold.head == NONE) &&
             (l->fly.n == 0) == (l->fly.head == NONE));
  return l->hold.n + l->fly.n;
}
