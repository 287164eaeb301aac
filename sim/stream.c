/* TCP-shaped stream connections: connect/accept/refuse, in-order delivery
 * with retransmission delays, stalls under partitions, timeouts, close and
 * reset.
 *
 * Each direction is a FIFO of segments (SYN-ACK, data, FIN); only its head
 * has a scheduled event, so order holds whatever the tie-break rule. A lost
 * segment costs a retransmission delay; a segment whose link is blocked is
 * retried every retransmit_ns and breaks the connection with TIMEOUT once it
 * has stalled for stall_timeout_ns. */
#include "internal.h"

static sim_conn handle(const sim_world *w, uint32_t idx) {
  SIM_ASSERT(idx < w->conn_cap && w->conn[idx].gen != 0); /* conn_get's pair: gen 0 is no one's */
  return ((uint64_t)w->conn[idx].gen << 32) | idx;
}

static conn_t *conn_get(const sim_world *w, sim_conn h, uint32_t *idx) {
  uint32_t i = (uint32_t)h;
  if (h == 0 || i >= w->conn_cap)
    return NULL;
  conn_t *c = &w->conn[i];
  if (c->state == CS_FREE || c->gen != (uint32_t)(h >> 32))
    return NULL;
  SIM_ASSERT(c->end[0] != c->end[1]); /* a live connection joins two nodes */
  if (idx)
    *idx = i;
  return c;
}

static int end_of(const conn_t *c, int node) {
  SIM_ASSERT(c->state != CS_FREE); /* only a connection's ends are asked for */
  return c->end[0] == node ? 0 : c->end[1] == node ? 1 : -1;
}

static uint32_t conn_alloc(sim_world *w) {
  if (w->conns_open >= w->cfg.budgets.max_conns)
    return NONE;
  if (w->conn_free == NONE) {
    conn_t *c = sim__pool_grow(w->conn, &w->conn_cap, &w->conn_free, sizeof *c,
                               offsetof(conn_t, next), 8, UINT32_MAX); /* CS_FREE is 0 */
    if (!c) { /* the host's memory, not a fault the target may see: the run stops */
      sim__out_of_memory(w);
      return NONE;
    }
    w->conn = c;
  }
  uint32_t i = w->conn_free;
  conn_t *c = &w->conn[i];
  SIM_ASSERT(i < w->conn_cap && c->state == CS_FREE); /* the free list holds free slots */
  w->conn_free = c->next;
  c->gen++;
  if (c->gen == 0)
    c->gen = 1;
  c->timeout_ev = NONE;
  for (int k = 0; k < 2; k++) {
    c->open[k] = 0;
    c->up[k] = 0;
    c->inc[k] = 0;
    c->d[k].q.head = c->d[k].q.tail = NONE;
    c->d[k].q.n = 0;
    c->d[k].last_at = 0;
    c->d[k].stall_since = 0;
    c->d[k].seq = 0;
  }
  w->conns_open++;
  SIM_ASSERT(w->conns_open <= w->cfg.budgets.max_conns);
  return i;
}

/* Drop every queued segment and free the slot. */
static void conn_release(sim_world *w, uint32_t idx) {
  conn_t *c = &w->conn[idx];
  SIM_ASSERT(c->state != CS_FREE && w->conns_open > 0); /* released once */
  for (int k = 0; k < 2; k++) {
    while (c->d[k].q.head != NONE) {
      uint32_t m = c->d[k].q.head;
      msg_t *mm = &w->msg[m];
      sim__ml_remove(w, &c->d[k].q, m);
      if (mm->ev != NONE)
        sim__ev_cancel(w, mm->ev);
      if (!(mm->flags & (MF_FIN | MF_SYNACK)))
        sim__trace(w, SIM_EV_DROP, SIM_DROP_RESET, mm->from, mm->to, mm->id, handle(w, idx),
                   mm->kind, mm->data, mm->len);
      sim__msg_free(w, m);
    }
    SIM_ASSERT(c->d[k].q.n == 0 && c->d[k].q.tail == NONE);
  }
  if (c->timeout_ev != NONE)
    sim__ev_cancel(w, c->timeout_ev);
  c->timeout_ev = NONE;
  c->state = CS_FREE;
  c->gen++;
  c->next = w->conn_free;
  w->conn_free = idx;
  w->conns_open--;
}

/* Tell end k of a connection about its end (RESET/TIMEOUT/REFUSED) at t. */
static void notify(sim_world *w, uint32_t idx, int k, sim_conn_event ev, uint64_t t) {
  SIM_ASSERT(k == 0 || k == 1);
  SIM_ASSERT(ev == SIM_CONN_RESET || ev == SIM_CONN_TIMEOUT || ev == SIM_CONN_REFUSED);
  conn_t *c = &w->conn[idx];
  int node = c->end[k];
  if (!c->open[k] || !w->node[node].up || w->node[node].inc != c->inc[k])
    return;
  c->open[k] = 0;
  uint32_t e = sim__sched(w, t, EVK_NOTIFY, node);
  if (e == NONE)
    return;
  w->ev[e].sub = (uint8_t)ev;
  w->ev[e].peer = c->end[1 - k];
  w->ev[e].u.tag = handle(w, idx);
}

/* Kill a connection: each open end hears `ev` now; the slot is freed. */
static void conn_kill(sim_world *w, uint32_t idx, sim_conn_event ev) {
  SIM_ASSERT(idx < w->conn_cap && w->conn[idx].state != CS_FREE);
  for (int k = 0; k < 2; k++)
    notify(w, idx, k, ev, w->now);
  conn_release(w, idx);
  SIM_ASSERT(w->conn[idx].state == CS_FREE);
}

static void call_conn(sim_world *w, int node, sim_conn h, sim_conn_event ev, const void *d,
                      size_t len) {
  SIM_ASSERT(node >= 0 && node < w->n && (len == 0 || d));
  if (w->cfg.ops->conn)
    SIM__AS(w, node, w->cfg.ops->conn(w->cfg.ctx, w, node, h, ev, d, len));
}

/* Delay of decision n for a segment from->to: latency plus a retransmission
 * delay per lost transmission (at most 8). */
static uint64_t seg_delay(sim_world *w, int from, int to, uint64_t n) {
  const sim_link_params *p = &w->link[from][to].p;
  uint64_t sid = sim__sid(P_SEGLAT, (uint32_t)from, (uint32_t)to);
  uint64_t d = sim__range(w, sid, n, p->latency_min_ns, p->latency_max_ns);
  uint64_t lsid = sim__sid(P_SEGLOSS, (uint32_t)from, (uint32_t)to);
  for (int t = 0; t < 8 && sim__chance(w, lsid, n * 8 + (uint64_t)t, p->loss_ppm); t++) {
    d += w->cfg.stream.retransmit_ns;
    w->stats.seg_retransmits++;
  }
  SIM_ASSERT(d >= p->latency_min_ns);
  return d;
}

static int sched_head(sim_world *w, cdir_t *d) {
  uint32_t m = d->q.head;
  if (m == NONE)
    return 0;
  msg_t *mm = &w->msg[m];
  SIM_ASSERT(mm->ev == NONE); /* one event per segment, the head's */
  uint32_t e = sim__sched(w, mm->at > w->now ? mm->at : w->now, EVK_SEG, mm->to);
  if (e == NONE)
    return -1;
  w->ev[e].u.idx = m;
  mm->ev = e;
  return 0;
}

/* Append a segment from end k. */
static int enqueue(sim_world *w, uint32_t idx, int k, const void *data, size_t len, uint8_t flags) {
  conn_t *c = &w->conn[idx];
  int from = c->end[k], to = c->end[1 - k];
  cdir_t *d = &c->d[k];
  uint64_t n = d->seq++;
  uint32_t m = sim__msg_alloc(w, data, len);
  if (m == NONE)
    return -ENOBUFS;
  c = &w->conn[idx];
  d = &c->d[k];
  msg_t *mm = &w->msg[m];
  mm->from = (int16_t)from;
  mm->to = (int16_t)to;
  mm->conn = idx;
  mm->dir = (uint8_t)k;
  mm->flags = flags;
  mm->id = ++w->msg_id;
  if (!flags) {
    mm->kind = w->cfg.classify ? w->cfg.classify(w->cfg.ctx, data, len) : 0;
    sim__trace(w, SIM_EV_SEND, 1, from, to, mm->id, handle(w, idx), mm->kind, data, len);
  }
  uint64_t at = w->now + seg_delay(w, from, to, n);
  link_t *l = &w->link[from][to];
  if (l->p.bandwidth_bps && len) {
    uint64_t start = l->busy_until > w->now ? l->busy_until : w->now;
    l->busy_until =
        start + ((uint64_t)len * SIM_NS_PER_S + l->p.bandwidth_bps - 1) / l->p.bandwidth_bps;
    at += l->busy_until - w->now;
  }
  if (at <= d->last_at)
    at = d->last_at + 1;
  d->last_at = at;
  mm->at = at;
  /* FIFO: due after the segment queued before it, and never in the past
   * (its pair: only the head is delivered, once due, in sim__seg_event) */
  SIM_ASSERT(at >= w->now && at == d->last_at);
  sim__ml_push(w, &d->q, m);
  if (d->q.n == 1 && sched_head(w, d) < 0)
    return -ENOBUFS;
  return 0;
}

int64_t sim_connect(sim_world *w, int node, int to) {
  if (node < 0 || node >= w->n || to < 0 || to >= w->n || node == to)
    return -EINVAL;
  if (!w->node[node].up)
    return -EHOSTDOWN;
  uint32_t idx = conn_alloc(w);
  if (idx == NONE)
    return -EMFILE;
  conn_t *c = &w->conn[idx];
  SIM_ASSERT(c->state == CS_FREE && c->timeout_ev == NONE); /* conn_alloc's */
  c->state = CS_CONNECTING;
  c->end[0] = (int16_t)node;
  c->end[1] = (int16_t)to;
  c->inc[0] = w->node[node].inc;
  c->open[0] = 1;
  sim_conn h = handle(w, idx);
  w->stats.conns_opened++;
  sim__trace(w, SIM_EV_CONN_OPEN, 0, node, to, h, 0, 0, NULL, 0);
  uint32_t e = sim__sched(w, w->now + w->cfg.stream.connect_timeout_ns, EVK_CONNTO, node);
  if (e == NONE) {
    conn_release(w, idx);
    return -ENOBUFS;
  }
  w->ev[e].u.tag = h;
  w->conn[idx].timeout_ev = e;
  if (!w->link[node][to].blocked) {
    uint64_t n = w->conn[idx].d[0].seq++;
    e = sim__sched(w, w->now + seg_delay(w, node, to, n), EVK_SYN, to);
    if (e != NONE)
      w->ev[e].u.tag = h;
  }
  return (int64_t)h;
}

void sim__syn_event(sim_world *w, uint32_t e) {
  sim_conn h = w->ev[e].u.tag;
  sim__ev_free(w, e);
  uint32_t idx;
  conn_t *c = conn_get(w, h, &idx);
  if (!c || c->state != CS_CONNECTING || c->open[1])
    return;
  int a = c->end[0], b = c->end[1];
  if (w->link[a][b].blocked)
    return; /* SYN lost; the connect times out */
  uint64_t back = w->now + seg_delay(w, b, a, c->d[1].seq++);
  SIM_ASSERT(a != b && c->open[0]);
  if (!w->node[b].up) {
    if (w->link[b][a].blocked)
      return; /* RST lost; the connect times out */
    w->stats.conns_refused++;
    notify(w, idx, 0, SIM_CONN_REFUSED, back);
    conn_release(w, idx);
    return;
  }
  c->state = CS_OPEN;
  c->open[1] = 1;
  c->up[1] = 1;
  c->inc[1] = w->node[b].inc;
  c->d[1].last_at = back - 1;
  if (enqueue(w, idx, 1, NULL, 0, MF_SYNACK) < 0)
    return;
  sim__trace(w, SIM_EV_CONN_ACCEPT, 0, b, a, h, 0, 0, NULL, 0);
  call_conn(w, b, h, SIM_CONN_ACCEPTED, NULL, 0);
}

void sim__connto_event(sim_world *w, uint32_t e) {
  sim_conn h = w->ev[e].u.tag;
  sim__ev_free(w, e);
  uint32_t idx;
  conn_t *c = conn_get(w, h, &idx);
  if (!c)
    return;
  c->timeout_ev = NONE;
  if (c->up[0])
    return;
  SIM_ASSERT(c->state == CS_CONNECTING || c->state == CS_OPEN);
  w->stats.conns_timeout++;
  conn_kill(w, idx, SIM_CONN_TIMEOUT);
}

void sim__notify_event(sim_world *w, uint32_t e) {
  ev_t *x = &w->ev[e];
  int node = x->node, peer = x->peer;
  sim_conn h = x->u.tag;
  sim_conn_event ev = (sim_conn_event)x->sub;
  SIM_ASSERT(node >= 0 && node < w->n && peer >= 0 && peer < w->n);
  int live = w->node[node].up && w->node[node].inc == x->inc;
  sim__ev_free(w, e);
  if (!live)
    return;
  unsigned kind = ev == SIM_CONN_RESET     ? SIM_EV_CONN_RESET
                  : ev == SIM_CONN_REFUSED ? SIM_EV_CONN_REFUSED
                                           : SIM_EV_CONN_TIMEOUT;
  sim__trace(w, kind, 0, node, peer, h, 0, 0, NULL, 0);
  call_conn(w, node, h, ev, NULL, 0);
}

void sim__seg_event(sim_world *w, uint32_t e) {
  uint32_t m = w->ev[e].u.idx;
  sim__ev_free(w, e);
  msg_t *mm = &w->msg[m];
  mm->ev = NONE;
  uint32_t idx = mm->conn;
  SIM_ASSERT(idx < w->conn_cap && mm->dir <= 1);
  conn_t *c = &w->conn[idx];
  int k = mm->dir;
  cdir_t *d = &c->d[k];
  /* a released connection cancelled its segments' events: this one is live,
   * the head of its direction, and between the connection's two ends */
  SIM_ASSERT(c->state != CS_FREE && d->q.head == m);
  SIM_ASSERT(mm->from == c->end[k] && mm->to == c->end[1 - k] && mm->at <= w->now);
  int from = c->end[k], to = c->end[1 - k];
  sim_conn h = handle(w, idx);
  if (w->link[from][to].blocked) {
    if (!d->stall_since) {
      d->stall_since = w->now + 1;
      sim__trace(w, SIM_EV_CONN_STALL, 0, to, from, h, 0, 0, NULL, 0);
    }
    if (w->now + 1 - d->stall_since >= w->cfg.stream.stall_timeout_ns) {
      w->stats.conns_timeout++;
      conn_kill(w, idx, SIM_CONN_TIMEOUT);
      return;
    }
    w->stats.seg_retransmits++;
    mm->at = w->now + w->cfg.stream.retransmit_ns;
    sched_head(w, d);
    return;
  }
  d->stall_since = 0;
  sim__ml_remove(w, &d->q, m);
  if (sched_head(w, d) < 0) {
    sim__msg_free(w, m);
    return;
  }
  uint8_t flags = mm->flags;
  int rk = 1 - k; /* receiving end */
  if (flags & MF_SYNACK) {
    sim__msg_free(w, m);
    if (c->timeout_ev != NONE) {
      sim__ev_cancel(w, c->timeout_ev);
      c->timeout_ev = NONE;
    }
    if (!c->open[rk])
      return;
    c->up[rk] = 1;
    sim__trace(w, SIM_EV_CONN_UP, 0, to, from, h, 0, 0, NULL, 0);
    call_conn(w, to, h, SIM_CONN_CONNECTED, NULL, 0);
    return;
  }
  if (flags & MF_FIN) {
    sim__msg_free(w, m);
    if (!c->open[rk])
      return;
    c->open[rk] = 0;
    sim__trace(w, SIM_EV_CONN_CLOSE, 0, to, from, h, 0, 0, NULL, 0);
    if (!c->open[k])
      conn_release(w, idx);
    call_conn(w, to, h, SIM_CONN_CLOSED, NULL, 0);
    return;
  }
  if (!c->open[rk]) {
    sim__msg_free(w, m);
    return;
  }
  w->stats.stream_bytes += mm->len;
  sim__trace(w, SIM_EV_CONN_DATA, 0, to, from, h, mm->id, mm->kind, mm->data, mm->len);
  /* m is off the queue and not free: its buffer survives the callback */
  call_conn(w, to, h, SIM_CONN_DATA, mm->data, mm->len);
  sim__msg_free(w, m);
}

int sim_conn_send(sim_world *w, int node, sim_conn h, const void *data, size_t len) {
  uint32_t idx;
  conn_t *c = conn_get(w, h, &idx);
  if (!c)
    return -ECONNRESET;
  int k = end_of(c, node);
  if (k < 0 || (!data && len))
    return -EINVAL;
  if (!c->open[k] || !c->up[k])
    return -ENOTCONN;
  if (len > w->cfg.budgets.max_msg_size)
    return -EMSGSIZE;
  SIM_ASSERT(c->end[k] == node && c->state == CS_OPEN);
  return enqueue(w, idx, k, data, len, 0);
}

int sim_conn_close(sim_world *w, int node, sim_conn h) {
  uint32_t idx;
  conn_t *c = conn_get(w, h, &idx);
  if (!c)
    return -ENOTCONN;
  int k = end_of(c, node);
  if (k < 0)
    return -EINVAL;
  if (!c->open[k])
    return -ENOTCONN;
  SIM_ASSERT(c->end[k] == node);
  c->open[k] = 0;
  if (!c->up[k]) {
    /* abort a connect in progress; an accepting peer hears a reset */
    conn_kill(w, idx, SIM_CONN_RESET);
    return 0;
  }
  if (!c->open[1 - k]) {
    conn_release(w, idx);
    return 0;
  }
  return enqueue(w, idx, k, NULL, 0, MF_FIN) < 0 ? -ENOBUFS : 0;
}

int sim_conn_peer(const sim_world *w, sim_conn h, int node) {
  conn_t *c = conn_get(w, h, NULL);
  if (!c)
    return -1;
  int k = end_of(c, node);
  SIM_ASSERT(k < 0 || c->end[1 - k] != node);
  return k < 0 ? -1 : c->end[1 - k];
}

int sim_conn_reset(sim_world *w, sim_conn h) {
  uint32_t idx;
  if (!conn_get(w, h, &idx))
    return -ENOENT;
  w->stats.conns_reset++;
  conn_kill(w, idx, SIM_CONN_RESET);
  SIM_ASSERT(!conn_get(w, h, &idx)); /* the handle is stale now */
  return 0;
}

int sim_reset_conns(sim_world *w, int a, int b) {
  if (a < 0 || a >= w->n || b >= w->n)
    return -EINVAL;
  int count = 0;
  uint32_t open = w->conns_open;
  for (uint32_t i = 0; i < w->conn_cap; i++) {
    conn_t *c = &w->conn[i];
    if (c->state == CS_FREE || end_of(c, a) < 0)
      continue;
    if (b >= 0 && end_of(c, b) < 0)
      continue;
    w->stats.conns_reset++;
    conn_kill(w, i, SIM_CONN_RESET);
    count++;
  }
  SIM_ASSERT((uint32_t)count <= open && w->conns_open <= open - (uint32_t)count);
  return count;
}

uint32_t sim_conns_open(const sim_world *w) {
  /* conn_alloc's pair: never more open than the budget lets it make */
  SIM_ASSERT(w->conns_open <= w->cfg.budgets.max_conns && w->conns_open <= w->conn_cap);
  return w->conns_open;
}

void sim__conn_purge_node(sim_world *w, int node) {
  for (uint32_t i = 0; i < w->conn_cap; i++) {
    conn_t *c = &w->conn[i];
    int k;
    if (c->state == CS_FREE || (k = end_of(c, node)) < 0)
      continue;
    c->open[k] = 0; /* the crashed end hears nothing */
    conn_kill(w, i, SIM_CONN_RESET);
    SIM_ASSERT(c->state == CS_FREE);
  }
}

uint64_t sim__conn_due(const sim_world *w, uint64_t t) {
  uint64_t t0 = t;
  for (uint32_t c = 0; c < w->conn_cap; c++) {
    if (w->conn[c].state == CS_FREE)
      continue;
    for (int k = 0; k < 2; k++) {
      const cdir_t *d = &w->conn[c].d[k];
      if (d->q.n && d->last_at > t)
        t = d->last_at;
    }
  }
  SIM_ASSERT(t >= t0); /* the latest of the given time and every queued segment's */
  return t;
}

void sim__conn_free_all(sim_world *w) {
  SIM_ASSERT(w->conn_cap == 0 || w->conn); /* a capacity has its array */
  free(w->conn);
}
