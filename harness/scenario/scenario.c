/* Scenario decoding (protobuf and generated), normalisation and encoding. */
#include "scenario.h"

#include "scenario.pb-c.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---- names ------------------------------------------------------------ */

static const char *const step_names[SF_STEP__COUNT] = {
    [SF_STEP_PARTITION] = "partition",
    [SF_STEP_HEAL] = "heal",
    [SF_STEP_ISOLATE] = "isolate",
    [SF_STEP_SPLIT] = "split",
    [SF_STEP_RESET] = "reset",
    [SF_STEP_LINK] = "link",
    [SF_STEP_HOLD] = "hold",
    [SF_STEP_RELEASE] = "release",
    [SF_STEP_DELIVER] = "deliver",
    [SF_STEP_CRASH] = "crash",
    [SF_STEP_RESTART] = "restart",
    [SF_STEP_PAUSE] = "pause",
    [SF_STEP_RESUME] = "resume",
    [SF_STEP_CLOCK] = "clock",
    [SF_STEP_DISK] = "disk",
    [SF_STEP_FAULTPOINT] = "faultpoint",
    [SF_STEP_OP] = "op",
    [SF_STEP_LIVENESS] = "liveness",
};

const char *sf_step_name(unsigned kind) {
  return kind < SF_STEP__COUNT && step_names[kind] ? step_names[kind] : "?";
}

static int mask_str(uint64_t m, int n, char c, char *buf, size_t cap) {
  size_t k = 0;
  int first = 1;
  if (cap)
    buf[0] = 0;
  k += (size_t)snprintf(buf, cap, "{");
  for (int i = 0; i < n && i < 64; i++)
    if (m >> i & 1) {
      k += (size_t)snprintf(buf + (k < cap ? k : cap), k < cap ? cap - k : 0, "%s%c%d",
                            first ? "" : ",", c, i);
      first = 0;
    }
  k += (size_t)snprintf(buf + (k < cap ? k : cap), k < cap ? cap - k : 0, "}");
  return (int)k;
}

int sf_step_describe(const sf_step *st, int n, char *buf, size_t cap) {
  if (n < 1)
    n = 1;
  int a = (int)(st->node % (uint32_t)n), b = (int)(st->peer % (uint32_t)n);
  uint64_t all = n >= 64 ? ~0ull : (1ull << n) - 1;
  char m1[200], m2[200];
  char c = st->by_state ? 'r' : 'n'; /* r2: the node ranked 2 by observed state */
  switch (st->kind) {
  case SF_STEP_PARTITION: {
    uint64_t ma = st->mask_a & all;
    uint64_t mb = st->mask_b ? st->mask_b & all & ~ma : all & ~ma;
    mask_str(ma, n, c, m1, sizeof m1);
    mask_str(mb, n, c, m2, sizeof m2);
    return snprintf(buf, cap, "partition %s %s %s", m1, st->flag ? "-/->" : "-/-", m2);
  }
  case SF_STEP_ISOLATE:
  case SF_STEP_CRASH:
  case SF_STEP_RESTART:
  case SF_STEP_PAUSE:
  case SF_STEP_RESUME: return snprintf(buf, cap, "%s %c%d", sf_step_name(st->kind), c, a);
  case SF_STEP_SPLIT: {
    int k = snprintf(buf, cap, "split groups");
    for (int i = 0; i < n && k >= 0 && (size_t)k < cap; i++)
      k += snprintf(buf + k, cap - (size_t)k, " %c%d:%u", c, i, i < st->ngroups ? st->group[i] : 0);
    return k;
  }
  case SF_STEP_RESET:
    if (st->flag || a == b)
      return snprintf(buf, cap, "reset all connections of %c%d", c, a);
    return snprintf(buf, cap, "reset %c%d<->%c%d", c, a, c, b);
  case SF_STEP_LINK:
    return snprintf(
        buf, cap, "link %s%c%d->%c%d loss=%u dup=%u reorder=%u corrupt=%u ppm, latency %u-%u us",
        st->flag ? "(all) " : "", c, a, c, b, st->net.loss_ppm, st->net.dup_ppm,
        st->net.reorder_ppm, st->net.corrupt_ppm, st->net.latency_min_us, st->net.latency_max_us);
  case SF_STEP_HOLD:
  case SF_STEP_RELEASE:
    return snprintf(buf, cap, "%s %c%d->%c%d", sf_step_name(st->kind), c, a, c, b);
  case SF_STEP_DELIVER:
    return snprintf(buf, cap, "deliver message #%u pending on %c%d->%c%d now", st->k, c, a, c, b);
  case SF_STEP_CLOCK:
    return snprintf(buf, cap, "clock %c%d offset=%lldus drift=%dppm jump=%lldus", c, a,
                    (long long)st->offset_us, st->drift_ppm, (long long)st->jump_us);
  case SF_STEP_DISK:
    return snprintf(buf, cap, "disk %c%d keep=%u corrupt=%u eio r/w/s=%u/%u/%u ppm%s%s", c, a,
                    st->disk.keep_ppm, st->disk.corrupt_ppm, st->disk.read_eio_ppm,
                    st->disk.write_eio_ppm, st->disk.sync_eio_ppm, st->k ? ", fail the next " : "",
                    st->k == 1   ? "read"
                    : st->k == 2 ? "write"
                    : st->k == 3 ? "sync"
                                 : "");
  case SF_STEP_FAULTPOINT:
    if (st->flag)
      return snprintf(buf, cap, "faultpoint site %u off", st->k);
    return snprintf(buf, cap, "faultpoint site %u fires %u ppm", st->k, st->rate_ppm);
  case SF_STEP_OP:
    return snprintf(buf, cap, "client op %u key=%llu value=%llu via %c%d x%u every %uus", st->k,
                    (unsigned long long)st->key, (unsigned long long)st->value, c, a, st->count,
                    st->interval_us);
  case SF_STEP_LIVENESS:
    return snprintf(buf, cap, "heal everything; require liveness within %u ms", st->count);
  default: return snprintf(buf, cap, "%s", sf_step_name(st->kind));
  }
}

sf_fault_kind sf_step_fault(unsigned kind) {
  switch (kind) {
  case SF_STEP_PARTITION:
  case SF_STEP_ISOLATE:
  case SF_STEP_SPLIT: return SF_FAULT_PARTITION;
  case SF_STEP_RESET: return SF_FAULT_RESET;
  case SF_STEP_LINK: return SF_FAULT_LOSS;
  case SF_STEP_HOLD:
  case SF_STEP_RELEASE:
  case SF_STEP_DELIVER: return SF_FAULT_HOLD;
  case SF_STEP_CRASH:
  case SF_STEP_RESTART: return SF_FAULT_CRASH;
  case SF_STEP_PAUSE:
  case SF_STEP_RESUME: return SF_FAULT_PAUSE;
  case SF_STEP_CLOCK: return SF_FAULT_CLOCK;
  case SF_STEP_DISK: return SF_FAULT_DISK;
  case SF_STEP_FAULTPOINT: return SF_FAULT_FAULTPOINT;
  default: return (sf_fault_kind)0;
  }
}

uint32_t sf_fault_steps(const sf_scenario *s) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < s->nsteps; i++)
    n += sf_step_fault(s->steps[i].kind) != 0 && s->steps[i].kind != SF_STEP_RESTART &&
         s->steps[i].kind != SF_STEP_RESUME && s->steps[i].kind != SF_STEP_RELEASE;
  return n;
}

void sf_scenario_init(sf_scenario *s) {
  /* steps[] and tape[] beyond their counts are never read: zero the
   * header only (the full struct is ~60 KB and this runs per execution) */
  memset(s, 0, offsetof(sf_scenario, steps));
  s->tape_len = 0;
  s->version = SF_FORMAT_VERSION;
}

/* ---- normalisation ------------------------------------------------------ */

static uint32_t clamp32(uint64_t v, uint32_t hi) {
  return v > hi ? hi : (uint32_t)v;
}

static int64_t clamp_s64(int64_t v, int64_t lim) {
  return v > lim ? lim : v < -lim ? -lim : v;
}

static void norm_net(sf_net *n) {
  n->latency_min_us = clamp32(n->latency_min_us, SF_MAX_LATENCY_US);
  n->latency_max_us = clamp32(n->latency_max_us, SF_MAX_LATENCY_US);
  if (n->latency_max_us < n->latency_min_us)
    n->latency_max_us = n->latency_min_us;
  n->exponential = n->exponential ? 1 : 0;
  n->loss_ppm = clamp32(n->loss_ppm, SIM_PPM);
  n->dup_ppm = clamp32(n->dup_ppm, SIM_PPM);
  n->reorder_ppm = clamp32(n->reorder_ppm, SIM_PPM);
  n->reorder_delay_us = clamp32(n->reorder_delay_us, SF_MAX_LATENCY_US);
  n->corrupt_ppm = clamp32(n->corrupt_ppm, SIM_PPM);
  n->bandwidth_kbps = clamp32(n->bandwidth_kbps, 10000000u);
  n->queue_limit = clamp32(n->queue_limit, 65536u);
}

static void norm_disk(sf_disk *d) {
  d->keep_ppm = clamp32(d->keep_ppm, SIM_PPM);
  d->corrupt_ppm = clamp32(d->corrupt_ppm, SIM_PPM - d->keep_ppm);
  d->read_eio_ppm = clamp32(d->read_eio_ppm, SIM_PPM);
  d->write_eio_ppm = clamp32(d->write_eio_ppm, SIM_PPM);
  d->sync_eio_ppm = clamp32(d->sync_eio_ppm, SIM_PPM);
}

#define MAX_CLOCK_US 3600000000ll /* one hour */

/* Rebuild a step from the fields its kind uses, clamped; 0 if unusable. */
static int norm_step(const sf_step *in, sf_step *o) {
  if (in->kind == 0 || in->kind >= SF_STEP__COUNT)
    return 0;
  memset(o, 0, sizeof *o);
  o->kind = in->kind;
  o->at_us = in->at_us > SF_MAX_AT_US ? SF_MAX_AT_US : in->at_us;
  o->by_state = in->by_state && in->kind != SF_STEP_HEAL && in->kind != SF_STEP_FAULTPOINT &&
                in->kind != SF_STEP_LIVENESS;
  uint32_t node = in->node % SIM_MAX_NODES, peer = in->peer % SIM_MAX_NODES;
  switch (in->kind) {
  case SF_STEP_PARTITION:
    o->mask_a = in->mask_a;
    o->mask_b = in->mask_b;
    o->flag = in->flag ? 1 : 0;
    break;
  case SF_STEP_HEAL: break;
  case SF_STEP_ISOLATE:
  case SF_STEP_CRASH:
  case SF_STEP_RESTART:
  case SF_STEP_PAUSE:
  case SF_STEP_RESUME: o->node = node; break;
  case SF_STEP_SPLIT:
    o->ngroups = in->ngroups > SIM_MAX_NODES ? SIM_MAX_NODES : in->ngroups;
    for (unsigned i = 0; i < o->ngroups; i++)
      o->group[i] = (uint8_t)(in->group[i] % SIM_MAX_NODES);
    break;
  case SF_STEP_RESET:
    o->node = node;
    o->flag = in->flag ? 1 : 0;
    o->peer = o->flag ? 0 : peer; /* all peers: no peer */
    break;
  case SF_STEP_LINK:
    o->flag = in->flag ? 1 : 0;
    o->node = o->flag ? 0 : node; /* all links: no link */
    o->peer = o->flag ? 0 : peer;
    o->net = in->net;
    norm_net(&o->net);
    break;
  case SF_STEP_HOLD:
  case SF_STEP_RELEASE:
    o->node = node;
    o->peer = peer;
    break;
  case SF_STEP_DELIVER:
    o->node = node;
    o->peer = peer;
    o->k = in->k > 1024 ? 1024 : in->k;
    break;
  case SF_STEP_CLOCK:
    o->node = node;
    o->offset_us = clamp_s64(in->offset_us, MAX_CLOCK_US);
    o->jump_us = clamp_s64(in->jump_us, MAX_CLOCK_US);
    o->drift_ppm = (int32_t)clamp_s64(in->drift_ppm, 200000);
    break;
  case SF_STEP_DISK:
    o->node = node;
    o->disk = in->disk;
    norm_disk(&o->disk);
    o->k = in->k > 3 ? 3 : in->k;
    o->count = o->k ? clamp32(in->count, 1000) : 0;
    break;
  case SF_STEP_FAULTPOINT:
    o->k = in->k;
    o->flag = in->flag ? 1 : 0;
    o->rate_ppm = o->flag ? 0 : clamp32(in->rate_ppm, SIM_PPM);
    break;
  case SF_STEP_OP:
    o->node = node;
    o->k = in->k;
    o->key = in->key;
    o->value = in->value;
    o->count = in->count == 0 ? 1 : clamp32(in->count, SF_MAX_OP_COUNT);
    o->interval_us = o->count > 1 ? clamp32(in->interval_us, 10000000u) : 0;
    break;
  case SF_STEP_LIVENESS:
    o->count = in->count == 0 ? SF_DEFAULT_LIVENESS_MS : clamp32(in->count, SF_MAX_LIVENESS_MS);
    break;
  default: return 0;
  }
  return 1;
}

void sf_normalize(sf_scenario *s) {
  s->nodes = clamp32(s->nodes, SIM_MAX_NODES);
  s->fifo = s->fifo ? 1 : 0;
  s->has_net = s->has_net ? 1 : 0;
  s->has_disk = s->has_disk ? 1 : 0;
  if (s->has_net)
    norm_net(&s->net);
  else
    memset(&s->net, 0, sizeof s->net);
  if (s->has_disk)
    norm_disk(&s->disk);
  else
    memset(&s->disk, 0, sizeof s->disk);
  s->swarm.disabled &= ((1u << SF_FAULT__COUNT) - 1) & ~1u;
  s->swarm.loss_pct = clamp32(s->swarm.loss_pct, 1000);
  s->swarm.dup_pct = clamp32(s->swarm.dup_pct, 1000);
  s->swarm.reorder_pct = clamp32(s->swarm.reorder_pct, 1000);
  s->swarm.corrupt_pct = clamp32(s->swarm.corrupt_pct, 1000);
  s->swarm.latency_pct = clamp32(s->swarm.latency_pct, 1000);
  s->swarm.disk_pct = clamp32(s->swarm.disk_pct, 1000);
  s->fp_enable_ppm = clamp32(s->fp_enable_ppm, SIM_PPM);
  s->fp_fire_ppm = clamp32(s->fp_fire_ppm, SIM_PPM);
  s->tail_ms = clamp32(s->tail_ms, SF_MAX_TAIL_MS);
  s->tape_len = clamp32(s->tape_len, SIM_TAPE_MAX);
  uint32_t n = 0;
  uint32_t count = s->nsteps > SF_MAX_STEPS ? SF_MAX_STEPS : s->nsteps;
  for (uint32_t i = 0; i < count; i++) {
    sf_step tmp;
    if (norm_step(&s->steps[i], &tmp))
      s->steps[n++] = tmp;
  }
  s->nsteps = n;
  /* stable insertion sort by time */
  for (uint32_t i = 1; i < n; i++) {
    if (s->steps[i].at_us >= s->steps[i - 1].at_us)
      continue;
    sf_step tmp = s->steps[i];
    uint32_t j = i;
    while (j > 0 && s->steps[j - 1].at_us > tmp.at_us) {
      s->steps[j] = s->steps[j - 1];
      j--;
    }
    s->steps[j] = tmp;
  }
}

/* ---- protobuf -> scenario ---------------------------------------------- */

static void from_net(const Simfuzz__Network *m, sf_net *n) {
  memset(n, 0, sizeof *n);
  if (!m)
    return;
  n->latency_min_us = m->latency_min_us;
  n->latency_max_us = m->latency_max_us;
  n->exponential = m->exponential ? 1 : 0;
  n->loss_ppm = m->loss_ppm;
  n->dup_ppm = m->dup_ppm;
  n->reorder_ppm = m->reorder_ppm;
  n->reorder_delay_us = m->reorder_delay_us;
  n->corrupt_ppm = m->corrupt_ppm;
  n->bandwidth_kbps = m->bandwidth_kbps;
  n->queue_limit = m->queue_limit;
}

static void from_disk(const Simfuzz__Disk *m, sf_disk *d) {
  memset(d, 0, sizeof *d);
  if (!m)
    return;
  d->keep_ppm = m->keep_ppm;
  d->corrupt_ppm = m->corrupt_ppm;
  d->read_eio_ppm = m->read_eio_ppm;
  d->write_eio_ppm = m->write_eio_ppm;
  d->sync_eio_ppm = m->sync_eio_ppm;
}

static int from_step(const Simfuzz__Step *m, sf_step *o) {
  memset(o, 0, sizeof *o);
  o->at_us = m->at_us;
  o->by_state = m->by_state ? 1 : 0;
  switch (m->kind_case) {
  case SIMFUZZ__STEP__KIND_PARTITION:
    o->kind = SF_STEP_PARTITION;
    o->mask_a = m->partition->a;
    o->mask_b = m->partition->b;
    o->flag = m->partition->oneway;
    break;
  case SIMFUZZ__STEP__KIND_HEAL: o->kind = SF_STEP_HEAL; break;
  case SIMFUZZ__STEP__KIND_ISOLATE:
    o->kind = SF_STEP_ISOLATE;
    o->node = m->isolate->node;
    break;
  case SIMFUZZ__STEP__KIND_SPLIT:
    o->kind = SF_STEP_SPLIT;
    o->ngroups = (uint8_t)(m->split->n_group > SIM_MAX_NODES ? SIM_MAX_NODES : m->split->n_group);
    for (unsigned i = 0; i < o->ngroups; i++)
      o->group[i] = (uint8_t)(m->split->group[i] % SIM_MAX_NODES);
    break;
  case SIMFUZZ__STEP__KIND_RESET:
    o->kind = SF_STEP_RESET;
    o->node = m->reset->a;
    o->peer = m->reset->b;
    o->flag = m->reset->all_peers;
    break;
  case SIMFUZZ__STEP__KIND_LINK:
    o->kind = SF_STEP_LINK;
    o->node = m->link->from;
    o->peer = m->link->to;
    o->flag = m->link->all_links;
    from_net(m->link->params, &o->net);
    break;
  case SIMFUZZ__STEP__KIND_HOLD:
  case SIMFUZZ__STEP__KIND_RELEASE: {
    const Simfuzz__LinkOp *op = m->kind_case == SIMFUZZ__STEP__KIND_HOLD ? m->hold : m->release;
    o->kind = m->kind_case == SIMFUZZ__STEP__KIND_HOLD ? SF_STEP_HOLD : SF_STEP_RELEASE;
    o->node = op->from;
    o->peer = op->to;
    break;
  }
  case SIMFUZZ__STEP__KIND_DELIVER:
    o->kind = SF_STEP_DELIVER;
    o->node = m->deliver->from;
    o->peer = m->deliver->to;
    o->k = m->deliver->k;
    break;
  case SIMFUZZ__STEP__KIND_CRASH:
    o->kind = SF_STEP_CRASH;
    o->node = m->crash->node;
    break;
  case SIMFUZZ__STEP__KIND_RESTART:
    o->kind = SF_STEP_RESTART;
    o->node = m->restart->node;
    break;
  case SIMFUZZ__STEP__KIND_PAUSE:
    o->kind = SF_STEP_PAUSE;
    o->node = m->pause->node;
    break;
  case SIMFUZZ__STEP__KIND_RESUME:
    o->kind = SF_STEP_RESUME;
    o->node = m->resume->node;
    break;
  case SIMFUZZ__STEP__KIND_CLOCK:
    o->kind = SF_STEP_CLOCK;
    o->node = m->clock->node;
    o->offset_us = m->clock->offset_us;
    o->drift_ppm = m->clock->drift_ppm;
    o->jump_us = m->clock->jump_us;
    break;
  case SIMFUZZ__STEP__KIND_DISK:
    o->kind = SF_STEP_DISK;
    o->node = m->disk->node;
    from_disk(m->disk->params, &o->disk);
    o->k = m->disk->fail_op;
    o->count = m->disk->fail_nth;
    break;
  case SIMFUZZ__STEP__KIND_FAULTPOINT:
    o->kind = SF_STEP_FAULTPOINT;
    o->k = m->faultpoint->site;
    o->rate_ppm = m->faultpoint->fire_ppm;
    o->flag = m->faultpoint->disable;
    break;
  case SIMFUZZ__STEP__KIND_OP:
    o->kind = SF_STEP_OP;
    o->node = m->op->node;
    o->k = m->op->op;
    o->key = m->op->key;
    o->value = m->op->value;
    o->count = m->op->count;
    o->interval_us = m->op->interval_us;
    break;
  case SIMFUZZ__STEP__KIND_LIVENESS:
    o->kind = SF_STEP_LIVENESS;
    o->count = m->liveness->deadline_ms;
    break;
  default: return 0;
  }
  return 1;
}

int sf_decode_proto(const uint8_t *data, size_t len, sf_scenario *out) {
  if (len > SF_MAX_INPUT)
    len = SF_MAX_INPUT;
  Simfuzz__Scenario *m = simfuzz__scenario__unpack(NULL, len, data);
  if (!m)
    return -1;
  sf_scenario_init(out);
  out->version = m->version;
  out->nodes = m->nodes;
  out->seed = m->seed;
  out->fifo = m->fifo_tiebreak;
  out->has_net = m->network != NULL;
  from_net(m->network, &out->net);
  out->has_disk = m->disk != NULL;
  from_disk(m->disk, &out->disk);
  if (m->swarm) {
    out->swarm.disabled = m->swarm->disabled;
    out->swarm.loss_pct = m->swarm->loss_pct;
    out->swarm.dup_pct = m->swarm->dup_pct;
    out->swarm.reorder_pct = m->swarm->reorder_pct;
    out->swarm.corrupt_pct = m->swarm->corrupt_pct;
    out->swarm.latency_pct = m->swarm->latency_pct;
    out->swarm.disk_pct = m->swarm->disk_pct;
  }
  out->fp_enable_ppm = m->faultpoint_enable_ppm;
  out->fp_fire_ppm = m->faultpoint_fire_ppm;
  out->tail_ms = m->tail_ms;
  uint32_t n = 0;
  for (size_t i = 0; i < m->n_steps && n < SF_MAX_STEPS; i++)
    if (m->steps[i] && from_step(m->steps[i], &out->steps[n]))
      n++;
  out->nsteps = n;
  size_t tl = m->choices.len < SIM_TAPE_MAX ? m->choices.len : SIM_TAPE_MAX;
  if (tl)
    memcpy(out->tape, m->choices.data, tl);
  out->tape_len = (uint32_t)tl;
  simfuzz__scenario__free_unpacked(m, NULL);
  sf_normalize(out);
  return 0;
}

/* Length of the top-level protobuf field at p[0..n), or 0 if it is cut or
 * malformed (groups, oversized lengths, bad varints). */
static size_t field_len(const uint8_t *p, size_t n) {
  size_t i = 0;
  uint64_t key = 0, v = 0;
  for (int sh = 0;; sh += 7) { /* key */
    if (i >= n || sh > 63)
      return 0;
    key |= (uint64_t)(p[i] & 0x7f) << sh;
    if (!(p[i++] & 0x80))
      break;
  }
  if ((key >> 3) == 0)
    return 0;
  switch (key & 7) {
  case 0:
    for (int k = 0;; k++) {
      if (i >= n || k >= 10)
        return 0;
      if (!(p[i++] & 0x80))
        return i;
    }
  case 1: return i + 8 <= n ? i + 8 : 0;
  case 5: return i + 4 <= n ? i + 4 : 0;
  case 2:
    for (int sh = 0;; sh += 7) {
      if (i >= n || sh > 63)
        return 0;
      v |= (uint64_t)(p[i] & 0x7f) << sh;
      if (!(p[i++] & 0x80))
        break;
    }
    return v <= n - i ? i + (size_t)v : 0;
  default: return 0;
  }
}

/* Keys of the Scenario's top-level fields: where resynchronisation may
 * resume after damage. */
static int known_key(uint8_t k) {
  switch (k) {
  case 0x08:
  case 0x10:
  case 0x18:
  case 0x22:
  case 0x2a:
  case 0x32:
  case 0x3a:
  case 0x40:
  case 0x4a:
  case 0x50:
  case 0x58:
  case 0x60: return 1;
  default: return 0;
  }
}

#define SALVAGE_RESYNC_TRIES 256 /* bounds the work on hostile input */

/* Keep every top-level field that parses on its own; after a damaged
 * field, resynchronise at the next known key whose field parses (a bounded
 * number of tries). 0 if no step survived. */
static int salvage(const uint8_t *data, size_t len, sf_scenario *out) {
  uint8_t *keep = malloc(len ? len : 1);
  if (!keep)
    return 0;
  size_t kept = 0, at = 0;
  int tries = 0;
  while (at < len) {
    size_t fl = field_len(data + at, len - at);
    Simfuzz__Scenario *m = NULL;
    if (fl && known_key(data[at]) && tries++ < SALVAGE_RESYNC_TRIES * 4)
      m = simfuzz__scenario__unpack(NULL, fl, data + at);
    if (m) {
      simfuzz__scenario__free_unpacked(m, NULL);
      memcpy(keep + kept, data + at, fl);
      kept += fl;
      at += fl;
      continue;
    }
    /* damaged here: resynchronise at the next known key */
    do
      at++;
    while (at < len && !known_key(data[at]));
    if (tries > SALVAGE_RESYNC_TRIES * 4)
      break;
  }
  int ok = kept > 0 && sf_decode_proto(keep, kept, out) == 0 && out->nsteps > 0;
  free(keep);
  return ok;
}

sf_decode_kind sf_decode(const uint8_t *data, size_t len, sf_scenario *out) {
  if (len > SF_MAX_INPUT)
    len = SF_MAX_INPUT;
  if (sf_decode_proto(data, len, out) == 0)
    return SF_DECODED_PROTO;
  if (salvage(data, len, out))
    return SF_DECODED_SALVAGED;
  sf_generate(data, len, out);
  return SF_DECODED_GENERATED;
}

/* ---- scenario -> protobuf ---------------------------------------------- */

typedef struct {
  Simfuzz__Step st;
  union {
    Simfuzz__Partition partition;
    Simfuzz__Heal heal;
    Simfuzz__Isolate isolate;
    Simfuzz__Split split;
    Simfuzz__Reset reset;
    Simfuzz__LinkFaults link;
    Simfuzz__LinkOp linkop;
    Simfuzz__DeliverKth deliver;
    Simfuzz__NodeOp nodeop;
    Simfuzz__Clock clock;
    Simfuzz__DiskFaults disk;
    Simfuzz__FaultPoint fp;
    Simfuzz__ClientOp op;
    Simfuzz__Liveness live;
  } u;
  Simfuzz__Network net;
  Simfuzz__Disk dsk;
  uint32_t groups[SIM_MAX_NODES];
} step_msg;

static void to_net(const sf_net *n, Simfuzz__Network *m) {
  simfuzz__network__init(m);
  m->latency_min_us = n->latency_min_us;
  m->latency_max_us = n->latency_max_us;
  m->exponential = n->exponential;
  m->loss_ppm = n->loss_ppm;
  m->dup_ppm = n->dup_ppm;
  m->reorder_ppm = n->reorder_ppm;
  m->reorder_delay_us = n->reorder_delay_us;
  m->corrupt_ppm = n->corrupt_ppm;
  m->bandwidth_kbps = n->bandwidth_kbps;
  m->queue_limit = n->queue_limit;
}

static void to_disk(const sf_disk *d, Simfuzz__Disk *m) {
  simfuzz__disk__init(m);
  m->keep_ppm = d->keep_ppm;
  m->corrupt_ppm = d->corrupt_ppm;
  m->read_eio_ppm = d->read_eio_ppm;
  m->write_eio_ppm = d->write_eio_ppm;
  m->sync_eio_ppm = d->sync_eio_ppm;
}

static void to_step(const sf_step *s, step_msg *o) {
  Simfuzz__Step *m = &o->st;
  simfuzz__step__init(m);
  m->at_us = s->at_us;
  m->by_state = s->by_state ? 1 : 0;
  switch (s->kind) {
  case SF_STEP_PARTITION:
    simfuzz__partition__init(&o->u.partition);
    o->u.partition.a = s->mask_a;
    o->u.partition.b = s->mask_b;
    o->u.partition.oneway = s->flag;
    m->kind_case = SIMFUZZ__STEP__KIND_PARTITION;
    m->partition = &o->u.partition;
    break;
  case SF_STEP_HEAL:
    simfuzz__heal__init(&o->u.heal);
    m->kind_case = SIMFUZZ__STEP__KIND_HEAL;
    m->heal = &o->u.heal;
    break;
  case SF_STEP_ISOLATE:
    simfuzz__isolate__init(&o->u.isolate);
    o->u.isolate.node = s->node;
    m->kind_case = SIMFUZZ__STEP__KIND_ISOLATE;
    m->isolate = &o->u.isolate;
    break;
  case SF_STEP_SPLIT:
    simfuzz__split__init(&o->u.split);
    for (unsigned i = 0; i < s->ngroups; i++)
      o->groups[i] = s->group[i];
    o->u.split.n_group = s->ngroups;
    o->u.split.group = o->groups;
    m->kind_case = SIMFUZZ__STEP__KIND_SPLIT;
    m->split = &o->u.split;
    break;
  case SF_STEP_RESET:
    simfuzz__reset__init(&o->u.reset);
    o->u.reset.a = s->node;
    o->u.reset.b = s->peer;
    o->u.reset.all_peers = s->flag;
    m->kind_case = SIMFUZZ__STEP__KIND_RESET;
    m->reset = &o->u.reset;
    break;
  case SF_STEP_LINK:
    simfuzz__link_faults__init(&o->u.link);
    o->u.link.from = s->node;
    o->u.link.to = s->peer;
    o->u.link.all_links = s->flag;
    to_net(&s->net, &o->net);
    o->u.link.params = &o->net;
    m->kind_case = SIMFUZZ__STEP__KIND_LINK;
    m->link = &o->u.link;
    break;
  case SF_STEP_HOLD:
  case SF_STEP_RELEASE:
    simfuzz__link_op__init(&o->u.linkop);
    o->u.linkop.from = s->node;
    o->u.linkop.to = s->peer;
    if (s->kind == SF_STEP_HOLD) {
      m->kind_case = SIMFUZZ__STEP__KIND_HOLD;
      m->hold = &o->u.linkop;
    } else {
      m->kind_case = SIMFUZZ__STEP__KIND_RELEASE;
      m->release = &o->u.linkop;
    }
    break;
  case SF_STEP_DELIVER:
    simfuzz__deliver_kth__init(&o->u.deliver);
    o->u.deliver.from = s->node;
    o->u.deliver.to = s->peer;
    o->u.deliver.k = s->k;
    m->kind_case = SIMFUZZ__STEP__KIND_DELIVER;
    m->deliver = &o->u.deliver;
    break;
  case SF_STEP_CRASH:
  case SF_STEP_RESTART:
  case SF_STEP_PAUSE:
  case SF_STEP_RESUME:
    simfuzz__node_op__init(&o->u.nodeop);
    o->u.nodeop.node = s->node;
    if (s->kind == SF_STEP_CRASH) {
      m->kind_case = SIMFUZZ__STEP__KIND_CRASH;
      m->crash = &o->u.nodeop;
    } else if (s->kind == SF_STEP_RESTART) {
      m->kind_case = SIMFUZZ__STEP__KIND_RESTART;
      m->restart = &o->u.nodeop;
    } else if (s->kind == SF_STEP_PAUSE) {
      m->kind_case = SIMFUZZ__STEP__KIND_PAUSE;
      m->pause = &o->u.nodeop;
    } else {
      m->kind_case = SIMFUZZ__STEP__KIND_RESUME;
      m->resume = &o->u.nodeop;
    }
    break;
  case SF_STEP_CLOCK:
    simfuzz__clock__init(&o->u.clock);
    o->u.clock.node = s->node;
    o->u.clock.offset_us = s->offset_us;
    o->u.clock.drift_ppm = s->drift_ppm;
    o->u.clock.jump_us = s->jump_us;
    m->kind_case = SIMFUZZ__STEP__KIND_CLOCK;
    m->clock = &o->u.clock;
    break;
  case SF_STEP_DISK:
    simfuzz__disk_faults__init(&o->u.disk);
    o->u.disk.node = s->node;
    to_disk(&s->disk, &o->dsk);
    if (s->disk.keep_ppm || s->disk.corrupt_ppm || s->disk.read_eio_ppm || s->disk.write_eio_ppm ||
        s->disk.sync_eio_ppm)
      o->u.disk.params = &o->dsk; /* an all-default message is left out */
    o->u.disk.fail_op = s->k;
    o->u.disk.fail_nth = s->count;
    m->kind_case = SIMFUZZ__STEP__KIND_DISK;
    m->disk = &o->u.disk;
    break;
  case SF_STEP_FAULTPOINT:
    simfuzz__fault_point__init(&o->u.fp);
    o->u.fp.site = s->k;
    o->u.fp.fire_ppm = s->rate_ppm;
    o->u.fp.disable = s->flag;
    m->kind_case = SIMFUZZ__STEP__KIND_FAULTPOINT;
    m->faultpoint = &o->u.fp;
    break;
  case SF_STEP_OP:
    simfuzz__client_op__init(&o->u.op);
    o->u.op.node = s->node;
    o->u.op.op = s->k;
    o->u.op.key = s->key;
    o->u.op.value = s->value;
    o->u.op.count = s->count;
    o->u.op.interval_us = s->interval_us;
    m->kind_case = SIMFUZZ__STEP__KIND_OP;
    m->op = &o->u.op;
    break;
  case SF_STEP_LIVENESS:
    simfuzz__liveness__init(&o->u.live);
    o->u.live.deadline_ms = s->count;
    m->kind_case = SIMFUZZ__STEP__KIND_LIVENESS;
    m->liveness = &o->u.live;
    break;
  default: break;
  }
}

/* Build the protobuf message for s; the caller frees *steps_out. */
static int build(const sf_scenario *s, Simfuzz__Scenario *m, Simfuzz__Network *net,
                 Simfuzz__Disk *disk, Simfuzz__Swarm *swarm, step_msg **steps_out,
                 Simfuzz__Step ***ptrs_out) {
  simfuzz__scenario__init(m);
  m->version = s->version;
  m->nodes = s->nodes;
  m->seed = s->seed;
  m->fifo_tiebreak = s->fifo;
  if (s->has_net) {
    to_net(&s->net, net);
    m->network = net;
  }
  if (s->has_disk) {
    to_disk(&s->disk, disk);
    m->disk = disk;
  }
  const sf_swarm *w = &s->swarm;
  if (w->disabled || w->loss_pct || w->dup_pct || w->reorder_pct || w->corrupt_pct ||
      w->latency_pct || w->disk_pct) {
    simfuzz__swarm__init(swarm);
    swarm->disabled = w->disabled;
    swarm->loss_pct = w->loss_pct;
    swarm->dup_pct = w->dup_pct;
    swarm->reorder_pct = w->reorder_pct;
    swarm->corrupt_pct = w->corrupt_pct;
    swarm->latency_pct = w->latency_pct;
    swarm->disk_pct = w->disk_pct;
    m->swarm = swarm;
  }
  m->faultpoint_enable_ppm = s->fp_enable_ppm;
  m->faultpoint_fire_ppm = s->fp_fire_ppm;
  m->tail_ms = s->tail_ms;
  uint32_t n = s->nsteps > SF_MAX_STEPS ? SF_MAX_STEPS : s->nsteps;
  step_msg *sm = n ? malloc(n * sizeof *sm) : NULL;
  Simfuzz__Step **ptrs = n ? malloc(n * sizeof *ptrs) : NULL;
  if (n && (!sm || !ptrs)) {
    free(sm);
    free(ptrs);
    return -1;
  }
  for (uint32_t i = 0; i < n; i++) {
    to_step(&s->steps[i], &sm[i]);
    ptrs[i] = &sm[i].st;
  }
  m->n_steps = n;
  m->steps = ptrs;
  m->choices.len = s->tape_len > SIM_TAPE_MAX ? SIM_TAPE_MAX : s->tape_len;
  m->choices.data = (uint8_t *)s->tape;
  *steps_out = sm;
  *ptrs_out = ptrs;
  return 0;
}

size_t sf_encode(const sf_scenario *s, uint8_t *buf, size_t cap) {
  Simfuzz__Scenario m;
  Simfuzz__Network net;
  Simfuzz__Disk disk;
  Simfuzz__Swarm swarm;
  step_msg *sm;
  Simfuzz__Step **ptrs;
  if (build(s, &m, &net, &disk, &swarm, &sm, &ptrs) < 0)
    return 0;
  size_t need = simfuzz__scenario__get_packed_size(&m);
  if (need <= cap)
    simfuzz__scenario__pack(&m, buf);
  free(sm);
  free(ptrs);
  return need;
}

size_t sf_encoded_size(const sf_scenario *s) {
  return sf_encode(s, NULL, 0);
}

/* ---- generator: bytes as a choice stream -------------------------------- */

typedef struct {
  const uint8_t *p;
  size_t n, i;
} reader;

static uint32_t r8(reader *r) {
  return r->i < r->n ? r->p[r->i++] : 0;
}
static uint32_t r16(reader *r) {
  return r8(r) | r8(r) << 8;
}
static uint32_t r32(reader *r) {
  return r16(r) | r16(r) << 16;
}
static uint64_t r64(reader *r) {
  return (uint64_t)r32(r) | (uint64_t)r32(r) << 32;
}

/* Small tables keep generated rates meaningful: mostly off, sometimes
 * heavy. */
static const uint32_t rate_table[8] = {0, 0, 0, 1000, 10000, 50000, 200000, 500000};

static uint32_t rate(reader *r) {
  return rate_table[r8(r) & 7];
}

/* Step kinds by weight: faults dominate, client ops keep work flowing. */
static const uint8_t kind_table[32] = {
    SF_STEP_OP,      SF_STEP_OP,        SF_STEP_OP,        SF_STEP_OP,        SF_STEP_OP,
    SF_STEP_OP,      SF_STEP_PARTITION, SF_STEP_PARTITION, SF_STEP_PARTITION, SF_STEP_ISOLATE,
    SF_STEP_SPLIT,   SF_STEP_HEAL,      SF_STEP_HEAL,      SF_STEP_RESET,     SF_STEP_RESET,
    SF_STEP_RESET,   SF_STEP_LINK,      SF_STEP_LINK,      SF_STEP_HOLD,      SF_STEP_RELEASE,
    SF_STEP_DELIVER, SF_STEP_CRASH,     SF_STEP_CRASH,     SF_STEP_RESTART,   SF_STEP_RESTART,
    SF_STEP_PAUSE,   SF_STEP_RESUME,    SF_STEP_CLOCK,     SF_STEP_DISK,      SF_STEP_FAULTPOINT,
    SF_STEP_OP,      SF_STEP_LIVENESS,
};

static void gen_net(reader *r, sf_net *n) {
  n->latency_min_us = 500 + r8(r) % 20 * 500;
  n->latency_max_us = n->latency_min_us + r8(r) % 40 * 500;
  n->exponential = r8(r) & 1;
  n->loss_ppm = rate(r);
  n->dup_ppm = rate(r);
  n->reorder_ppm = rate(r);
  n->reorder_delay_us = r8(r) * 400;
  n->corrupt_ppm = rate(r) / 4;
  n->bandwidth_kbps = 0;
  n->queue_limit = 0;
}

void sf_generate(const uint8_t *bytes, size_t len, sf_scenario *s) {
  reader rd = {bytes, len > SF_MAX_INPUT ? SF_MAX_INPUT : len, 0}, *r = &rd;
  sf_scenario_init(s);
  uint32_t b = r8(r);
  s->nodes = b % 8 == 0 ? 0 : 2 + b % 6;
  s->seed = r64(r);
  s->fifo = (r8(r) & 7) == 0;
  s->has_net = 1;
  gen_net(r, &s->net);
  s->has_disk = 1;
  s->disk.keep_ppm = r8(r) * 3921;
  s->disk.corrupt_ppm = rate(r) / 8;
  s->disk.read_eio_ppm = rate(r) / 16;
  s->disk.write_eio_ppm = rate(r) / 16;
  s->disk.sync_eio_ppm = rate(r) / 16;
  /* swarm: each fault kind off with probability 1/4 */
  uint32_t off = r32(r);
  for (int k = 1; k < SF_FAULT__COUNT; k++)
    if (((off >> (2 * k)) & 3) == 0)
      s->swarm.disabled |= 1u << k;
  s->fp_enable_ppm = rate(r);
  s->fp_fire_ppm = rate(r);
  uint32_t nsteps = 1 + r8(r) % 24;
  uint64_t t = 0;
  for (uint32_t i = 0; i < nsteps; i++) {
    sf_step *st = &s->steps[s->nsteps++];
    memset(st, 0, sizeof *st);
    t += (uint64_t)(r16(r) % 400) * 1000;
    st->at_us = t;
    st->kind = kind_table[r8(r) & 31];
    uint32_t x = r8(r), y = r8(r);
    st->node = x;
    st->peer = y;
    st->by_state = (x & 0xc0) == 0xc0; /* a quarter of the steps: by role */
    switch (st->kind) {
    case SF_STEP_PARTITION:
      st->mask_a = (uint64_t)1 << (x % 8) | (uint64_t)(y & 1) << ((x + 1) % 8);
      st->mask_b = r8(r) & 1 ? 0 : (uint64_t)1 << (y % 8);
      st->flag = (r8(r) & 3) == 0;
      break;
    case SF_STEP_SPLIT:
      st->ngroups = 8;
      for (int g = 0; g < 8; g++)
        st->group[g] = (uint8_t)((x >> g) & 1);
      break;
    case SF_STEP_RESET: st->flag = (r8(r) & 3) == 0; break;
    case SF_STEP_LINK:
      st->flag = (r8(r) & 3) == 0;
      gen_net(r, &st->net);
      break;
    case SF_STEP_DELIVER: st->k = r8(r) % 4; break;
    case SF_STEP_CLOCK:
      st->offset_us = (int64_t)(r16(r) % 2001) * 1000 - 1000000;
      st->drift_ppm = (int32_t)(r16(r) % 200001) - 100000;
      st->jump_us = (r8(r) & 3) ? 0 : (int64_t)(r16(r) % 2001) * 1000 - 1000000;
      break;
    case SF_STEP_DISK:
      st->disk.keep_ppm = r8(r) * 3921;
      st->disk.sync_eio_ppm = rate(r) / 4;
      st->k = r8(r) % 4;
      st->count = 1 + r8(r) % 8;
      break;
    case SF_STEP_FAULTPOINT:
      st->k = r8(r) % 16;
      st->rate_ppm = rate(r);
      break;
    case SF_STEP_OP:
      st->k = r8(r);
      st->key = r8(r) % 16;
      st->value = r32(r);
      st->count = 1 + r8(r) % 8;
      st->interval_us = (r8(r) % 50) * 1000;
      break;
    case SF_STEP_LIVENESS: st->count = 2000 + r8(r) % 16 * 1000; break;
    default: break;
    }
  }
  s->tail_ms = 500 + r8(r) % 32 * 100;
  size_t rest = rd.n > rd.i ? rd.n - rd.i : 0;
  s->tape_len = (uint32_t)(rest < SIM_TAPE_MAX ? rest : SIM_TAPE_MAX);
  if (s->tape_len)
    memcpy(s->tape, rd.p + rd.i, s->tape_len);
  sf_normalize(s);
}

void sf_generate_seed(uint64_t seed, sf_scenario *s) {
  uint8_t bytes[384];
  uint64_t x = seed;
  for (size_t i = 0; i < sizeof bytes; i += 8) {
    uint64_t z = sim_mix64(x += 0x9e3779b97f4a7c15ull);
    for (int k = 0; k < 8; k++)
      bytes[i + (size_t)k] = (uint8_t)(z >> (8 * k));
  }
  sf_generate(bytes, sizeof bytes, s);
}
