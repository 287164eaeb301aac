/* Trace records, the run's fingerprint hash, the report ring and the
 * timeline formatter. */
#include "internal.h"

#include <inttypes.h>

void sim__trace(sim_world *w, unsigned kind, unsigned reason, int node, int peer, uint64_t a,
                uint64_t b, uint32_t msg_kind, const void *payload, size_t len) {
  SIM_ASSERT(kind > 0 && kind < SIM_EV__COUNT); /* a row of SIM_EV_KINDS */
  SIM_ASSERT(payload || !len);
  sim__trace_inline(w, kind, reason, node, peer, a, b, msg_kind, payload, len);
}

uint64_t sim_trace_hash(const sim_world *w) {
  return sim__mix(w->trace_hash ^ sim__mix(w->trace_n));
}
uint64_t sim_trace_count(const sim_world *w) {
  return w->trace_n;
}

void sim_note(sim_world *w, int node, uint64_t a, uint64_t b) {
  sim__trace(w, SIM_EV_NOTE, 0, node, -1, a, b, 0, NULL, 0);
}

void sim_output(sim_world *w, int node, const char *text, size_t len) {
  SIM_ASSERT(node >= -1 && node < w->n);
  SIM_ASSERT(text || !len);
  sim__trace(w, SIM_EV_OUTPUT, 0, node, -1, 0, 0, 0, len ? text : NULL,
             len < SIM_OUTPUT_MAX ? len : SIM_OUTPUT_MAX);
}

void sim_thread_event(sim_world *w, int node, unsigned op, uint64_t a, uint64_t b) {
  SIM_ASSERT(op > 0 && op < SIM_THREAD__COUNT); /* a row of SIM_THREAD_OPS */
  SIM_ASSERT(node >= 0 && node < w->n);
  sim__trace(w, SIM_EV_THREAD, (uint16_t)op, node, -1, a, b, 0, NULL, 0);
}

static const char *thread_op_name(unsigned op) {
  static const char *const names[SIM_THREAD__COUNT] = {
#define SIM_THREAD_NAME_(op, name, what) [SIM_THREAD_##op] = name,
      SIM_THREAD_OPS(SIM_THREAD_NAME_)
#undef SIM_THREAD_NAME_
  };
  return op > 0 && op < SIM_THREAD__COUNT ? names[op] : "?";
}

size_t sim_trace_last(const sim_world *w, sim_trace_rec *out, size_t max) {
  uint64_t have = w->trace_n < w->ring_cap ? w->trace_n : w->ring_cap;
  if (max > have)
    max = (size_t)have;
  uint64_t first = w->trace_n - max;
  /* the ring holds the last ring_cap records, ring_cap a power of two
   * (sim_world_create; sim__trace_inline masks with it) */
  SIM_ASSERT(w->ring_cap && !(w->ring_cap & (w->ring_cap - 1)) && max <= w->ring_cap);
  for (size_t i = 0; i < max; i++)
    out[i] = w->ring[(first + i) & (w->ring_cap - 1)];
  return max;
}

/* What SIM_EV_KINDS says of each kind, by kind number. */
static const struct {
  const char *name;
  uint8_t groups, drawn;
} ev_kinds[SIM_EV__COUNT] = {
#define SIM_EV_ROW_(kind, name, fault, groups, drawn) [SIM_EV_##kind] = {name, groups, drawn},
    SIM_EV_KINDS(SIM_EV_ROW_)
#undef SIM_EV_ROW_
};

const char *sim_ev_name(unsigned kind) {
  SIM_ASSERT(kind >= SIM_EV__COUNT || ev_kinds[kind].name); /* SIM_EV_KINDS: no hole */
  return kind < SIM_EV__COUNT && ev_kinds[kind].name ? ev_kinds[kind].name : "?";
}

int sim_ev_is_fault(unsigned kind) {
  _Static_assert(SIM_EV__COUNT <= 64, "a bit per record kind");
  return kind < SIM_EV__COUNT && (SIM_EV_FAULT_MASK >> kind & 1);
}

unsigned sim_ev_groups(unsigned kind) {
  return kind < SIM_EV__COUNT ? ev_kinds[kind].groups : 0;
}

int sim_ev_drawn(unsigned kind) {
  SIM_ASSERT(kind >= SIM_EV__COUNT || ev_kinds[kind].drawn <= 1); /* a flag of the table */
  return kind < SIM_EV__COUNT && ev_kinds[kind].drawn;
}

const char *sim_drop_name(unsigned reason) {
  static const char *const names[] = {"?",    "loss",           "partition", "queue-full",
                                      "down", "sender-crashed", "reset",     "budget"};
  _Static_assert(sizeof names / sizeof names[0] == SIM_DROP_BUDGET + 1, "a name per reason");
  return reason < sizeof names / sizeof names[0] ? names[reason] : "?";
}

static const char *disk_op_name(unsigned op) {
  return op == SIM_DISK_READ ? "read" : op == SIM_DISK_WRITE ? "write" : "sync";
}

#define APPEND(...)                                                                                \
  do {                                                                                             \
    int k_ = snprintf(buf + (n < cap ? n : cap), n < cap ? cap - n : 0, __VA_ARGS__);              \
    if (k_ > 0)                                                                                    \
      n += (size_t)k_;                                                                             \
  } while (0)

/* Text as a quoted string, escaping what is not printable ASCII. */
static size_t quote(const uint8_t *t, size_t len, int cut, char *buf, size_t cap, size_t n) {
  APPEND(" \"");
  for (size_t i = 0; i < len; i++) {
    if (t[i] >= 0x20 && t[i] < 0x7f && t[i] != '"' && t[i] != '\\')
      APPEND("%c", t[i]);
    else if (t[i] == '\n')
      APPEND("\\n");
    else
      APPEND("\\x%02x", t[i]);
  }
  APPEND(cut ? "\"..." : "\"");
  return n;
}

static int format(const sim_world *w, const sim_trace_rec *r, const void *payload, size_t plen,
                  char *buf, size_t cap);

int sim_trace_format(const sim_world *w, const sim_trace_rec *r, char *buf, size_t cap) {
  return format(w, r, NULL, 0, buf, cap);
}

int sim_trace_format_payload(const sim_world *w, const sim_trace_rec *r, const void *payload,
                             size_t len, char *buf, size_t cap) {
  return format(w, r, payload, len, buf, cap);
}

/* The record's line; its text from payload when it has one (else from the
 * record's prefix). */
static int format(const sim_world *w, const sim_trace_rec *r, const void *payload, size_t plen,
                  char *buf, size_t cap) {
  size_t n = 0;
  if (cap)
    buf[0] = 0;
  uint64_t s = r->time / SIM_NS_PER_S, us = (r->time % SIM_NS_PER_S) / 1000;
  APPEND("%4" PRIu64 ".%06" PRIu64 "s ", s, us);
  if (r->node >= 0)
    APPEND("n%-2d ", r->node);
  else
    APPEND("--  ");
  APPEND("%-12s", sim_ev_name(r->kind));
  switch (r->kind) {
  case SIM_EV_SEND:
  case SIM_EV_DELIVER:
  case SIM_EV_HOLD:
  case SIM_EV_RELEASE:
  case SIM_EV_REORDER:
  case SIM_EV_CORRUPT:
  case SIM_EV_DUP:
  case SIM_EV_DROP:
    if (r->kind == SIM_EV_DELIVER)
      APPEND(" <- n%d", r->peer);
    else
      APPEND(" -> n%d", r->peer);
    if (r->kind == SIM_EV_DROP)
      APPEND(" [%s]", sim_drop_name(r->reason));
    if (r->kind == SIM_EV_CORRUPT)
      APPEND(" [bit %" PRIu64 "]", r->b);
    if (r->kind == SIM_EV_REORDER)
      APPEND(" [+%" PRIu64 "us]", r->b / 1000);
    APPEND(" #%" PRIu64, r->a);
    if (r->len || r->prefix_len) {
      char d[160];
      int k = -1;
      if (w && w->cfg.describe)
        k = w->cfg.describe(w->cfg.ctx, r->prefix, r->prefix_len, r->len, d, sizeof d);
      if (k > 0)
        APPEND(" %s", d);
      else
        APPEND(" (%" PRIu32 " bytes)", r->len);
    }
    break;
  case SIM_EV_BOOT:
    APPEND(" %s (incarnation %" PRIu64 ")", r->a ? "restart" : "first boot", r->b);
    break;
  case SIM_EV_TIMER: APPEND(" tag=%" PRIu64, r->a); break;
  case SIM_EV_CRASH:
    if (r->b)
      APPEND(" (its process stopped; its machine and page cache stay up)");
    break;
  case SIM_EV_VERSION: APPEND(" v%" PRIu64 " (was v%" PRIu64 ")", r->a, r->b); break;
  case SIM_EV_PARTITION: APPEND(" n%d -/-> n%d", r->node, r->peer); break;
  case SIM_EV_HEAL:
    if (r->peer < 0)
      APPEND(" all links");
    else
      APPEND(" n%d ---> n%d", r->node, r->peer);
    break;
  case SIM_EV_LINK:
    APPEND(" %s loss=%" PRIu64 "ppm latency<=%" PRIu64 "us", r->reason ? "all links" : "", r->a,
           r->b / 1000);
    if (!r->reason)
      APPEND(" n%d->n%d", r->node, r->peer);
    break;
  case SIM_EV_RESUME: APPEND(" (%" PRIu64 " deferred events)", r->a); break;
  case SIM_EV_CONN_OPEN:
  case SIM_EV_CONN_ACCEPT:
  case SIM_EV_CONN_UP:
  case SIM_EV_CONN_DATA:
  case SIM_EV_CONN_CLOSE:
  case SIM_EV_CONN_RESET:
  case SIM_EV_CONN_REFUSED:
  case SIM_EV_CONN_TIMEOUT:
  case SIM_EV_CONN_STALL:
    APPEND(" c%" PRIx64 " peer n%d", r->a, r->peer);
    if (r->kind == SIM_EV_CONN_DATA)
      APPEND(" (%" PRIu32 " bytes)", r->len);
    break;
  case SIM_EV_DISK_WRITE: APPEND(" off=%" PRIu64 " len=%" PRIu64, r->a, r->b); break;
  case SIM_EV_DISK_SYNC: APPEND(" %" PRIu64 " sectors", r->b); break;
  case SIM_EV_DISK_TRUNCATE: APPEND(" size=%" PRIu64, r->a); break;
  case SIM_EV_DISK_EIO: APPEND(" %s", disk_op_name(r->reason)); break;
  case SIM_EV_DISK_LOST:
    APPEND(" %" PRIu64 " unsynced sectors lost, %" PRIu64 " corrupted", r->a, r->b);
    break;
  case SIM_EV_CLOCK:
    APPEND(" offset=%" PRId64 "us drift=%" PRId64 "ppm", (int64_t)r->a / 1000, (int64_t)r->b);
    break;
  case SIM_EV_FAULTPOINT: APPEND(" site=%" PRIu64 " hit=%" PRIu64, r->a, r->b); break;
  case SIM_EV_NOTE: APPEND(" %" PRIu64 " %" PRIu64, r->a, r->b); break;
  case SIM_EV_OUTPUT:
    if (payload && plen == r->len)
      n = quote(payload, plen, 0, buf, cap, n);
    else
      n = quote(r->prefix, r->prefix_len, r->len > r->prefix_len, buf, cap, n);
    break;
  case SIM_EV_THREAD:
    APPEND(" %s", thread_op_name(r->reason));
    if (r->reason == SIM_THREAD_SPAWN)
      APPEND(" t%" PRIu64 " by t%" PRIu64, r->a, r->b);
    else if (r->reason == SIM_THREAD_SWITCH)
      APPEND(" t%" PRIu64 " -> t%" PRIu64, r->a, r->b);
    else if (r->reason == SIM_THREAD_HANDOFF)
      APPEND(" t%" PRIu64 " takes lock %" PRIu64, r->a, r->b);
    else
      APPEND(" t%" PRIu64, r->a);
    break;
  case SIM_EV_FAIL:
    if (w && w->failed)
      APPEND(" %s: %s", w->fail.name, w->fail.message);
    break;
  default: break;
  }
  SIM_ASSERT(!cap || memchr(buf, 0, cap)); /* terminated, however much was cut */
  return (int)n;
}

void sim_trace_dump(const sim_world *w, FILE *f, size_t n) {
  sim_trace_rec *recs = malloc(sizeof *recs * (n ? n : 1));
  if (!recs)
    return;
  size_t k = sim_trace_last(w, recs, n);
  char line[512];
  for (size_t i = 0; i < k; i++) {
    sim_trace_format(w, &recs[i], line, sizeof line);
    fprintf(f, "%s\n", line);
  }
  free(recs);
}

void sim_stats_print(const sim_world *w, FILE *f) {
  const sim_stats *s = &w->stats;
  SIM_ASSERT(s->duplicated <= s->sent); /* one duplication draw per datagram sent */
  SIM_ASSERT(s->stream_bytes == 0 || s->conns_opened > 0); /* bytes flow on connections */
  const struct {
    const char *name;
    uint64_t v;
  } c[] = {
      {"datagrams_sent", s->sent},
      {"delivered", s->delivered},
      {"conns", s->conns_opened},
      {"stream_bytes", s->stream_bytes},
      {"lost", s->lost},
      {"duplicated", s->duplicated},
      {"corrupted", s->corrupted},
      {"reordered", s->reordered},
      {"dropped_partition", s->dropped_partition},
      {"dropped_queue", s->dropped_queue},
      {"dropped_down", s->dropped_down},
      {"held", s->held},
      {"partitions", s->partitions},
      {"crashes", s->crashes},
      {"restarts", s->restarts},
      {"pauses", s->pauses},
      {"conn_resets", s->conns_reset},
      {"conn_refused", s->conns_refused},
      {"conn_timeouts", s->conns_timeout},
      {"retransmits", s->seg_retransmits},
      {"disk_eio", s->disk_eio},
      {"sectors_lost", s->sectors_lost},
      {"sectors_corrupted", s->sectors_corrupted},
      {"clock_changes", s->clock_changes},
      {"faultpoints", s->faultpoints_fired},
  };
  fprintf(f, "events=%" PRIu64, s->events);
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
    if (c[i].v)
      fprintf(f, " %s=%" PRIu64, c[i].name, c[i].v);
  fprintf(f, "\n");
}
