#include "chatter.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MSG_PING = 1, MSG_PONG = 2 };
enum { TAG_TICK = 1 };

typedef struct {
  int ticks;
  uint64_t disk_off;
  sim_conn out; /* our outgoing connection, 0 if none */
} node_state;

/* Fixed little-endian wire format: type, hops, from (2), tick (4), value (8). */
static size_t encode(uint8_t *b, int type, int hops, int from, uint32_t tick, uint64_t v) {
  b[0] = (uint8_t)type;
  b[1] = (uint8_t)hops;
  b[2] = (uint8_t)from;
  b[3] = (uint8_t)(from >> 8);
  for (int i = 0; i < 4; i++)
    b[4 + i] = (uint8_t)(tick >> (8 * i));
  for (int i = 0; i < 8; i++)
    b[8 + i] = (uint8_t)(v >> (8 * i));
  return 16;
}

void chatter_init(chatter *c) {
  memset(c, 0, sizeof *c);
  c->ticks = 20;
  c->fanout = 2;
  c->hops = 2;
  c->use_disk = 1;
  c->use_streams = 1;
  c->tick_ns = 20 * SIM_NS_PER_MS;
}

static void count(chatter *c, int node, size_t field) {
  ((uint64_t *)&c->total)[field]++;
  ((uint64_t *)&c->node[node])[field]++;
}
#define COUNT(c, node, f) count((c), (node), offsetof(chatter_counts, f) / sizeof(uint64_t))

static void arm(chatter *c, sim_world *w, int node) {
  uint64_t d = c->tick_ns / 2 + sim_node_random(w, node) % (c->tick_ns + 1);
  sim_timer_start(w, node, d, TAG_TICK);
}

static void boot(void *ctx, sim_world *w, int node, int restart) {
  chatter *c = ctx;
  node_state *s = calloc(1, sizeof *s);
  if (!s)
    abort();
  sim_node_set_data(w, node, s);
  COUNT(c, node, boots);
  if (restart)
    COUNT(c, node, restarts);
  s->disk_off = sim_disk_size(w, node);
  if (c->use_disk && s->disk_off >= 8) {
    uint8_t b[8];
    if (sim_disk_read(w, node, s->disk_off - 8, b, 8) < 0)
      COUNT(c, node, disk_errors);
  }
  arm(c, w, node);
}

static void tick(void *ctx, sim_world *w, int node, uint64_t tag) {
  chatter *c = ctx;
  node_state *s = sim_node_data(w, node);
  (void)tag;
  COUNT(c, node, ticks);
  s->ticks++;
  int n = sim_nodes(w);
  uint8_t buf[16];
  for (int i = 0; i < c->fanout && n > 1; i++) {
    int to = (int)(sim_node_random(w, node) % (uint64_t)(n - 1));
    if (to >= node)
      to++;
    sim_send(w, node, to, buf,
             encode(buf, MSG_PING, c->hops, node, (uint32_t)s->ticks, sim_now(w)));
  }
  if (c->use_disk) {
    encode(buf, 0, 0, node, (uint32_t)s->ticks, (uint64_t)sim_clock(w, node));
    int64_t r = sim_disk_write(w, node, s->disk_off, buf, sizeof buf);
    if (r > 0)
      s->disk_off += (uint64_t)r;
    else
      COUNT(c, node, disk_errors);
    if (s->ticks % 3 == 0 && sim_disk_sync(w, node) < 0)
      COUNT(c, node, disk_errors);
    if (s->disk_off > 4096 && sim_disk_truncate(w, node, 0) == 0)
      s->disk_off = 0;
  }
  if (c->use_streams && n > 1) {
    if (!s->out && s->ticks % 4 == 1) {
      int to = (node + 1) % n;
      int64_t h = sim_connect(w, node, to);
      if (h > 0)
        s->out = (sim_conn)h;
    } else if (s->out) {
      encode(buf, MSG_PING, 0, node, (uint32_t)s->ticks, 0);
      if (sim_conn_send(w, node, s->out, buf, sizeof buf) == -ECONNRESET)
        s->out = 0;
      if (s->ticks % 7 == 0) {
        sim_conn_close(w, node, s->out);
        s->out = 0;
      }
    }
  }
  if (sim_faultpoint(w, node, 1))
    COUNT(c, node, faults);
  if (c->ticks == 0 || s->ticks < c->ticks)
    arm(c, w, node);
}

static void recv_msg(void *ctx, sim_world *w, int node, int from, const void *msg, size_t len) {
  chatter *c = ctx;
  const uint8_t *b = msg;
  COUNT(c, node, recv);
  if (len == 16 && b[1] > 0 && b[1] <= c->hops) { /* reject corrupted hop counts */
    uint8_t out[16];
    memcpy(out, b, 16);
    out[0] = MSG_PONG;
    out[1] = (uint8_t)(b[1] - 1);
    sim_send(w, node, from, out, 16);
  }
}

static void conn_ev(void *ctx, sim_world *w, int node, sim_conn h, sim_conn_event ev,
                    const void *data, size_t len) {
  chatter *c = ctx;
  node_state *s = sim_node_data(w, node);
  (void)data;
  switch (ev) {
  case SIM_CONN_CONNECTED: COUNT(c, node, conn_up); break;
  case SIM_CONN_ACCEPTED: COUNT(c, node, conn_accepted); break;
  case SIM_CONN_DATA:
    COUNT(c, node, conn_data);
    if (len == 16 && ((const uint8_t *)data)[0] == MSG_PING) {
      uint8_t out[16];
      encode(out, MSG_PONG, 0, node, 0, 0);
      sim_conn_send(w, node, h, out, sizeof out);
    }
    break;
  case SIM_CONN_CLOSED: sim_conn_close(w, node, h); break;
  default:
    COUNT(c, node, conn_errors);
    if (s && s->out == h)
      s->out = 0;
    break;
  }
}

static void teardown(void *ctx, sim_world *w, int node, sim_teardown_why why) {
  (void)ctx;
  (void)why;
  sim_node_free(w, node);
}

const sim_node_ops chatter_ops = {boot, recv_msg, tick, conn_ev, teardown};

int chatter_describe(void *ctx, const void *msg, size_t have, size_t len, char *buf, size_t cap) {
  (void)ctx;
  const uint8_t *b = msg;
  if (have < 8 || len != 16)
    return -1;
  uint32_t tick =
      (uint32_t)b[4] | (uint32_t)b[5] << 8 | (uint32_t)b[6] << 16 | (uint32_t)b[7] << 24;
  return snprintf(buf, cap, "%s from=n%d tick=%u hops=%d", b[0] == MSG_PING ? "PING" : "PONG",
                  b[2] | b[3] << 8, tick, b[1]);
}

sim_config chatter_config(chatter *c, int nodes, uint64_t seed) {
  sim_config cfg;
  sim_config_default(&cfg);
  cfg.nodes = nodes;
  cfg.seed = seed;
  cfg.ops = &chatter_ops;
  cfg.ctx = c;
  cfg.describe = chatter_describe;
  return cfg;
}

uint64_t chatter_run(const sim_config *cfg, uint64_t until) {
  sim_world *w = sim_world_create(cfg);
  if (!w)
    abort();
  sim_run(w, until, 0);
  uint64_t h = sim_trace_hash(w);
  sim_world_destroy(w);
  return h;
}

/* Test-only decision stream for choosing configurations and faults. */
static uint64_t pick(uint64_t seed, uint64_t n, uint64_t mod) {
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + n * 0xbf58476d1ce4e5b9ull + 1;
  x ^= x >> 31;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 29;
  return mod ? x % mod : x;
}

sim_config chatter_random_config(chatter *c, uint64_t seed) {
  sim_config cfg = chatter_config(c, 2 + (int)pick(seed, 0, 7), seed);
  cfg.tiebreak = pick(seed, 1, 2) ? SIM_TIEBREAK_CHOICE : SIM_TIEBREAK_FIFO;
  cfg.net.latency_min_ns = pick(seed, 2, 5) * SIM_NS_PER_MS;
  cfg.net.latency_max_ns = cfg.net.latency_min_ns + pick(seed, 3, 20) * SIM_NS_PER_MS;
  cfg.net.dist = pick(seed, 4, 2) ? SIM_LAT_EXPONENTIAL : SIM_LAT_UNIFORM;
  cfg.net.loss_ppm = (uint32_t)pick(seed, 5, 200000);
  cfg.net.dup_ppm = (uint32_t)pick(seed, 6, 200000);
  cfg.net.reorder_ppm = (uint32_t)pick(seed, 7, 200000);
  cfg.net.corrupt_ppm = (uint32_t)pick(seed, 8, 50000);
  cfg.net.bandwidth_bps = pick(seed, 9, 2) ? 0 : 10000 + pick(seed, 10, 1000000);
  cfg.net.queue_limit = (uint32_t)pick(seed, 11, 8);
  cfg.disk.unsynced_keep_ppm = (uint32_t)pick(seed, 12, SIM_PPM);
  cfg.disk.unsynced_corrupt_ppm =
      (uint32_t)pick(seed, 13, SIM_PPM - cfg.disk.unsynced_keep_ppm + 1);
  cfg.disk.read_eio_ppm = (uint32_t)pick(seed, 14, 20000);
  cfg.disk.write_eio_ppm = (uint32_t)pick(seed, 15, 20000);
  cfg.disk.sync_eio_ppm = (uint32_t)pick(seed, 16, 20000);
  cfg.faultpoints.enable_ppm = (uint32_t)pick(seed, 17, SIM_PPM);
  c->ticks = 5 + (int)pick(seed, 18, 20);
  return cfg;
}

enum {
  F_PART,
  F_ONEWAY,
  F_ISOLATE,
  F_HEAL,
  F_CRASH,
  F_RESTART,
  F_PAUSE,
  F_RESUME,
  F_RESET,
  F_HOLD,
  F_RELEASE,
  F_KTH,
  F_DRIFT,
  F_JUMP,
  F_SPLIT,
  F__N
};

static void apply_fault(sim_world *w, void *arg) {
  uintptr_t a = (uintptr_t)arg;
  int kind = (int)(a & 0xff), x = (int)(a >> 8 & 0xff), y = (int)(a >> 16 & 0xff);
  int n = sim_nodes(w);
  x %= n;
  y %= n;
  switch (kind) {
  case F_PART: sim_partition(w, 1ull << x, 1ull << y, 0); break;
  case F_ONEWAY: sim_link_block(w, x, y, 1); break;
  case F_ISOLATE: sim_isolate(w, x); break;
  case F_HEAL: sim_heal(w); break;
  case F_CRASH: sim_node_crash(w, x); break;
  case F_RESTART: sim_node_restart(w, x); break;
  case F_PAUSE: sim_node_pause(w, x); break;
  case F_RESUME: sim_node_resume(w, x); break;
  case F_RESET: sim_reset_conns(w, x, -1); break;
  case F_HOLD: sim_link_hold(w, x, y); break;
  case F_RELEASE: sim_link_release(w, x, y); break;
  case F_KTH: sim_link_deliver_kth(w, x, y, (uint32_t)(a >> 24 & 3)); break;
  case F_DRIFT: sim_clock_set_drift(w, x, (int32_t)(a >> 24 & 0xffff) - 30000); break;
  case F_JUMP: sim_clock_jump(w, x, ((int64_t)(a >> 24 & 0xffff) - 30000) * 1000); break;
  case F_SPLIT: {
    uint8_t g[SIM_MAX_NODES];
    for (int i = 0; i < n; i++)
      g[i] = (uint8_t)((a >> (24 + i % 8)) & 1);
    sim_split(w, g);
    break;
  }
  default: break;
  }
}

void chatter_schedule_faults(sim_world *w, uint64_t seed, int count) {
  for (int i = 0; i < count; i++) {
    uint64_t t = pick(seed, 100 + (uint64_t)i, 600) * SIM_NS_PER_MS;
    uintptr_t a = (uintptr_t)pick(seed, 200 + (uint64_t)i, F__N) |
                  (uintptr_t)pick(seed, 300 + (uint64_t)i, 64) << 8 |
                  (uintptr_t)pick(seed, 400 + (uint64_t)i, 64) << 16 |
                  (uintptr_t)pick(seed, 500 + (uint64_t)i, 60000) << 24;
    sim_at(w, t, apply_fault, (void *)a);
  }
  /* heal everything and restart crashed nodes late in the run */
  sim_at(w, 700 * SIM_NS_PER_MS, apply_fault, (void *)(uintptr_t)F_HEAL);
  for (int i = 0; i < sim_nodes(w); i++) {
    sim_at(w, 701 * SIM_NS_PER_MS, apply_fault, (void *)(uintptr_t)(F_RESTART | i << 8));
    sim_at(w, 701 * SIM_NS_PER_MS, apply_fault, (void *)(uintptr_t)(F_RESUME | i << 8));
  }
}

uint64_t chatter_swarm_hash(uint64_t seed, sim_stats *stats) {
  chatter c;
  chatter_init(&c);
  sim_config cfg = chatter_random_config(&c, seed);
  uint8_t tape[256];
  size_t tl = (size_t)pick(seed, 19, sizeof tape + 1);
  for (size_t i = 0; i < tl; i++)
    tape[i] = (uint8_t)pick(seed, 1000 + i, 256);
  cfg.tape = tape;
  cfg.tape_len = tl;
  sim_world *w = sim_world_create(&cfg);
  if (!w)
    abort();
  chatter_schedule_faults(w, seed, (int)pick(seed, 20, 12));
  sim_run(w, UINT64_MAX, 0);
  uint64_t h = sim_trace_hash(w);
  if (stats)
    *stats = *sim_get_stats(w);
  sim_world_destroy(w);
  return h;
}
