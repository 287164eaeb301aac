/* Scenario decoding (protobuf and generated), normalisation and encoding. */
#include <simfuzz/scenario.h>

#include "draw.h"
#include "scenario.pb-c.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---- the step kinds' table (SF_STEP_KINDS) -------------------------------- */

typedef struct {
  const char *name;
  sf_step_shape shape;
  sf_fault_kind fault;
  unsigned flags;
  unsigned ends;
} kind_info;

static const kind_info kinds[SF_STEP__COUNT] = {
#define X(K, name, shape, fault, flags, weight, ends)                                              \
  [SF_STEP_##K] = {#name, SF_SHAPE_##shape, SF_FAULT_##fault, flags, SF_STEP_##ends},
    SF_STEP_KINDS(X)
#undef X
};

/* The C fault kinds are the proto's, number for number. */
#define SF_FAULT_SAME_(kind)                                                                       \
  _Static_assert((int)SF_FAULT_##kind == (int)SIMFUZZ__FAULT_KIND__FAULT_##kind,                   \
                 "SF_FAULT_KINDS and scenario.proto's FaultKind differ at " #kind);
SF_FAULT_KINDS(SF_FAULT_SAME_)
#undef SF_FAULT_SAME_

const char *sf_step_name(unsigned kind) {
  return kind > 0 && kind < SF_STEP__COUNT ? kinds[kind].name : "?";
}

sf_fault_kind sf_step_fault(unsigned kind) {
  return kind < SF_STEP__COUNT ? kinds[kind].fault : SF_FAULT_NONE;
}

sf_step_shape sf_step_shape_of(unsigned kind) {
  return kind < SF_STEP__COUNT ? kinds[kind].shape : SF_SHAPE_NONE;
}

unsigned sf_step_flags(unsigned kind) {
  return kind < SF_STEP__COUNT ? kinds[kind].flags : 0;
}

unsigned sf_step_ends(unsigned kind) {
  return kind < SF_STEP__COUNT ? kinds[kind].ends : 0;
}

/* ---- descriptions --------------------------------------------------------- */

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

static const char *const disk_ops[] = {"", "read", "write", "sync"};

/* What the step does (sf_step_describe without its anchor). */
static int describe_action(const sf_step *st, int n, char *buf, size_t cap) {
  if (n < 1)
    n = 1;
  int a = (int)(st->node % (uint32_t)n), b = (int)(st->peer % (uint32_t)n);
  uint64_t all = n >= 64 ? ~0ull : (1ull << n) - 1;
  char m1[200], m2[200];
  char c = st->by_state ? 'r' : 'n'; /* r2: the node ranked 2 by observed state */
  const char *name = sf_step_name(st->kind);
  switch (sf_step_shape_of(st->kind)) {
  case SF_SHAPE_MASKS: {
    uint64_t ma = st->mask_a & all;
    uint64_t mb = st->mask_b ? st->mask_b & all & ~ma : all & ~ma;
    mask_str(ma, n, c, m1, sizeof m1);
    mask_str(mb, n, c, m2, sizeof m2);
    return snprintf(buf, cap, "%s %s %s %s", name, m1, st->flag ? "-/->" : "-/-", m2);
  }
  case SF_SHAPE_NODE: return snprintf(buf, cap, "%s %c%d", name, c, a);
  case SF_SHAPE_GROUPS: {
    int k = snprintf(buf, cap, "%s groups", name);
    for (int i = 0; i < n && k >= 0 && (size_t)k < cap; i++)
      k += snprintf(buf + k, cap - (size_t)k, " %c%d:%u", c, i, i < st->ngroups ? st->group[i] : 0);
    return k;
  }
  case SF_SHAPE_RESET:
    if (st->flag || a == b)
      return snprintf(buf, cap, "%s all connections of %c%d", name, c, a);
    return snprintf(buf, cap, "%s %c%d<->%c%d", name, c, a, c, b);
  case SF_SHAPE_LINK:
    return snprintf(
        buf, cap, "%s %s%c%d->%c%d loss=%u dup=%u reorder=%u corrupt=%u ppm, latency %u-%u us",
        name, st->flag ? "(all) " : "", c, a, c, b, st->net.loss_ppm, st->net.dup_ppm,
        st->net.reorder_ppm, st->net.corrupt_ppm, st->net.latency_min_us, st->net.latency_max_us);
  case SF_SHAPE_PAIR: return snprintf(buf, cap, "%s %c%d->%c%d", name, c, a, c, b);
  case SF_SHAPE_DELIVER:
    return snprintf(buf, cap, "%s message #%u pending on %c%d->%c%d now", name, st->k, c, a, c, b);
  case SF_SHAPE_CLOCK:
    return snprintf(buf, cap, "%s %c%d offset=%lldus drift=%dppm jump=%lldus", name, c, a,
                    (long long)st->offset_us, st->drift_ppm, (long long)st->jump_us);
  case SF_SHAPE_DISK: {
    char stall[32] = "";
    if (st->interval_us)
      snprintf(stall, sizeof stall, ", stall %u us", st->interval_us);
    return snprintf(buf, cap, "%s %c%d keep=%u corrupt=%u eio r/w/s=%u/%u/%u ppm%s%s%s", name, c, a,
                    st->disk.keep_ppm, st->disk.corrupt_ppm, st->disk.read_eio_ppm,
                    st->disk.write_eio_ppm, st->disk.sync_eio_ppm, st->k ? ", fail the next " : "",
                    disk_ops[st->k < 4 ? st->k : 0], stall);
  }
  case SF_SHAPE_FAULTPOINT: {
    char nth[40] = "";
    if (st->count)
      snprintf(nth, sizeof nth, ", fails hit %u", st->count);
    if (st->flag)
      return snprintf(buf, cap, "%s site %u off%s", name, st->k, nth);
    return snprintf(buf, cap, "%s site %u fires %u ppm%s", name, st->k, st->rate_ppm, nth);
  }
  case SF_SHAPE_OP:
    return snprintf(buf, cap, "client %s %u key=%llu value=%llu via %c%d x%u every %uus", name,
                    st->k, (unsigned long long)st->key, (unsigned long long)st->value, c, a,
                    st->count, st->interval_us);
  case SF_SHAPE_DEADLINE:
    return snprintf(buf, cap, "heal everything; require %s within %u ms", name, st->count);
  case SF_SHAPE_VERSION:
    return snprintf(buf, cap, "%s %c%d to version %u (stop, restart on its files)", name, c, a,
                    st->k);
  default: return snprintf(buf, cap, "%s", name);
  }
}

int sf_step_describe(const sf_step *st, int n, char *buf, size_t cap) {
  int k = describe_action(st, n, buf, cap);
  if (!st->on_change || k < 0)
    return k;
  size_t at = (size_t)k < cap ? (size_t)k : cap;
  return k + snprintf(buf + at, cap - at, " (at rise %u to the top rank)", st->on_change);
}

uint32_t sf_fault_steps(const sf_scenario *s) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < s->nsteps; i++)
    n += sf_step_fault(s->steps[i].kind) != SF_FAULT_NONE &&
         !(sf_step_flags(s->steps[i].kind) & SF_SK_UNDO);
  return n;
}

uint64_t sf_run_end_us(const sf_scenario *s) {
  uint64_t last = 0;
  for (uint32_t i = 0; i < s->nsteps; i++)
    if (!s->steps[i].after_event && s->steps[i].at_us > last)
      last = s->steps[i].at_us;
  return last + (uint64_t)(s->tail_ms ? s->tail_ms : SF_DEFAULT_TAIL_MS) * 1000;
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

/* Each field of a table clamped to its bound, in the table's order. */
#define CLAMP_(s_, field, type, bound) s_->field = (type)clamp32(s_->field, (bound));
#define CLAMP_NET_(field, type, bound, ...) CLAMP_(n, field, type, bound)
#define CLAMP_DISK_(field, type, bound, ...) CLAMP_(d, field, type, bound)
#define CLAMP_SWARM_(field, type, bound, ...) CLAMP_(w, field, type, bound)

static void norm_net(sf_net *n) {
  SF_NET_FIELDS(CLAMP_NET_)
  if (n->latency_max_us < n->latency_min_us)
    n->latency_max_us = n->latency_min_us;
}

static void norm_disk(sf_disk *d) {
  SF_DISK_FIELDS(CLAMP_DISK_)
}

static void norm_swarm(sf_swarm *w) {
  SF_SWARM_FIELDS(CLAMP_SWARM_)
  w->disabled &= ((1u << SF_FAULT__COUNT) - 1) & ~1u;
}
#undef CLAMP_SWARM_
#undef CLAMP_DISK_
#undef CLAMP_NET_
#undef CLAMP_

/* Rebuild a step from the fields its shape uses, clamped; 0 if unusable. */
static int norm_step(const sf_step *in, sf_step *o) {
  if (in->kind == 0 || in->kind >= SF_STEP__COUNT)
    return 0;
  memset(o, 0, sizeof *o);
  o->kind = in->kind;
  o->at_us = in->at_us > SF_MAX_AT_US ? SF_MAX_AT_US : in->at_us;
  o->by_state = in->by_state && !(sf_step_flags(in->kind) & SF_SK_NO_RANK);
  o->after_event = in->after_event;
  o->on_change = in->on_change > SF_MAX_ON_CHANGE ? SF_MAX_ON_CHANGE : in->on_change;
  uint32_t node = in->node % SIM_MAX_NODES, peer = in->peer % SIM_MAX_NODES;
  switch (sf_step_shape_of(in->kind)) {
  case SF_SHAPE_NONE: break;
  case SF_SHAPE_MASKS:
    o->mask_a = in->mask_a;
    o->mask_b = in->mask_b;
    o->flag = in->flag ? 1 : 0;
    break;
  case SF_SHAPE_NODE: o->node = node; break;
  case SF_SHAPE_GROUPS:
    o->ngroups = in->ngroups > SIM_MAX_NODES ? SIM_MAX_NODES : in->ngroups;
    for (unsigned i = 0; i < o->ngroups; i++)
      o->group[i] = (uint8_t)(in->group[i] % SIM_MAX_NODES);
    break;
  case SF_SHAPE_RESET:
    o->node = node;
    o->flag = in->flag ? 1 : 0;
    o->peer = o->flag ? 0 : peer; /* all peers: no peer */
    break;
  case SF_SHAPE_LINK:
    o->flag = in->flag ? 1 : 0;
    o->node = o->flag ? 0 : node; /* all links: no link */
    o->peer = o->flag ? 0 : peer;
    o->net = in->net;
    norm_net(&o->net);
    break;
  case SF_SHAPE_PAIR:
    o->node = node;
    o->peer = peer;
    break;
  case SF_SHAPE_DELIVER:
    o->node = node;
    o->peer = peer;
    o->k = clamp32(in->k, SF_MAX_DELIVER_K);
    break;
  case SF_SHAPE_CLOCK:
    o->node = node;
    o->offset_us = clamp_s64(in->offset_us, SF_MAX_CLOCK_US);
    o->jump_us = clamp_s64(in->jump_us, SF_MAX_CLOCK_US);
    o->drift_ppm = (int32_t)clamp_s64(in->drift_ppm, SIM_MAX_DRIFT_PPM);
    break;
  case SF_SHAPE_DISK:
    o->node = node;
    o->disk = in->disk;
    norm_disk(&o->disk);
    o->k = in->k > 3 ? 3 : in->k;
    o->count = o->k ? clamp32(in->count, SF_MAX_DISK_NTH) : 0;
    o->interval_us = clamp32(in->interval_us, SF_MAX_STALL_US);
    break;
  case SF_SHAPE_FAULTPOINT:
    o->k = in->k;
    o->flag = in->flag ? 1 : 0;
    o->rate_ppm = o->flag ? 0 : clamp32(in->rate_ppm, SIM_PPM);
    o->count = clamp32(in->count, SF_MAX_FP_NTH);
    break;
  case SF_SHAPE_OP:
    o->node = node;
    o->k = in->k;
    o->key = in->key;
    o->value = in->value;
    o->count = in->count == 0 ? 1 : clamp32(in->count, SF_MAX_OP_COUNT);
    o->interval_us = o->count > 1 ? clamp32(in->interval_us, SF_MAX_OP_INTERVAL_US) : 0;
    break;
  case SF_SHAPE_DEADLINE:
    o->count = in->count == 0 ? SF_DEFAULT_LIVENESS_MS : clamp32(in->count, SF_MAX_LIVENESS_MS);
    break;
  case SF_SHAPE_VERSION:
    o->node = node;
    o->k = in->k % SF_MAX_VERSIONS;
    break;
  default: return 0;
  }
  return 1;
}

int sf_step_normalize(sf_step *st) {
  sf_step tmp;
  if (!norm_step(st, &tmp))
    return 0;
  *st = tmp;
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
  norm_swarm(&s->swarm);
  s->fp_enable_ppm = clamp32(s->fp_enable_ppm, SIM_PPM);
  s->fp_fire_ppm = clamp32(s->fp_fire_ppm, SIM_PPM);
  s->tail_ms = clamp32(s->tail_ms, SF_MAX_TAIL_MS);
  s->tape_len = clamp32(s->tape_len, SIM_TAPE_MAX);
  s->nversions = clamp32(s->nversions, SIM_MAX_NODES);
  for (uint32_t i = 0; i < s->nversions; i++)
    s->versions[i] = (uint8_t)(s->versions[i] % SF_MAX_VERSIONS);
  while (s->nversions && !s->versions[s->nversions - 1]) /* one form: no trailing zeros */
    s->nversions--;
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

/* Which field of a shape's protobuf message holds which sf_step member.
 * The codec below is generic over these maps and the protobuf-c
 * descriptors: a kind of an existing shape needs no code here. */
typedef enum { F_U8, F_U32, F_U64, F_S32, F_S64, F_NET, F_DISK, F_GROUPS } ftype;

typedef struct {
  const char *field; /* protobuf field name; NULL ends a map */
  size_t off;        /* offset in sf_step (or sf_net, sf_disk, sf_swarm) */
  ftype type;
} fmap;

#define F(name, member, type)                                                                      \
  { name, offsetof(sf_step, member), type }
static const fmap shape_fields[SF_SHAPE__COUNT][7] = {
    [SF_SHAPE_NODE] = {F("node", node, F_U32)},
    [SF_SHAPE_MASKS] = {F("a", mask_a, F_U64), F("b", mask_b, F_U64), F("oneway", flag, F_U8)},
    [SF_SHAPE_GROUPS] = {F("group", group, F_GROUPS)},
    [SF_SHAPE_RESET] = {F("a", node, F_U32), F("b", peer, F_U32), F("all_peers", flag, F_U8)},
    [SF_SHAPE_LINK] = {F("from", node, F_U32), F("to", peer, F_U32), F("all_links", flag, F_U8),
                       F("params", net, F_NET)},
    [SF_SHAPE_PAIR] = {F("from", node, F_U32), F("to", peer, F_U32)},
    [SF_SHAPE_DELIVER] = {F("from", node, F_U32), F("to", peer, F_U32), F("k", k, F_U32)},
    [SF_SHAPE_CLOCK] = {F("node", node, F_U32), F("offset_us", offset_us, F_S64),
                        F("drift_ppm", drift_ppm, F_S32), F("jump_us", jump_us, F_S64)},
    [SF_SHAPE_DISK] = {F("node", node, F_U32), F("params", disk, F_DISK), F("fail_op", k, F_U32),
                       F("fail_nth", count, F_U32), F("stall_us", interval_us, F_U32)},
    [SF_SHAPE_FAULTPOINT] = {F("site", k, F_U32), F("fire_ppm", rate_ppm, F_U32),
                             F("disable", flag, F_U8), F("nth", count, F_U32)},
    [SF_SHAPE_OP] = {F("node", node, F_U32), F("op", k, F_U32), F("key", key, F_U64),
                     F("value", value, F_U64), F("count", count, F_U32),
                     F("interval_us", interval_us, F_U32)},
    [SF_SHAPE_DEADLINE] = {F("deadline_ms", count, F_U32)},
    [SF_SHAPE_VERSION] = {F("node", node, F_U32), F("version", k, F_U32)},
};
#undef F

/* The Step oneof field of each kind: one row per kind, read both ways. */
static const struct {
  unsigned kind, field;
} kind_field[] = {
#define X(K, name, shape, fault, flags, weight, ends) {SF_STEP_##K, SIMFUZZ__STEP__KIND_##K},
    SF_STEP_KINDS(X)
#undef X
};

/* The field of a kind (by == 0) or the kind of a field (by == 1); 0 if none. */
static unsigned kind_field_map(unsigned v, int by_field) {
  for (size_t i = 0; i < sizeof kind_field / sizeof kind_field[0]; i++)
    if ((by_field ? kind_field[i].field : kind_field[i].kind) == v)
      return by_field ? kind_field[i].kind : kind_field[i].field;
  return 0;
}

static uint64_t get_scalar(const void *msg, const ProtobufCFieldDescriptor *f) {
  const char *p = (const char *)msg + f->offset;
  switch (f->type) {
  case PROTOBUF_C_TYPE_BOOL: return *(const protobuf_c_boolean *)p ? 1 : 0;
  case PROTOBUF_C_TYPE_INT32:
  case PROTOBUF_C_TYPE_SINT32:
  case PROTOBUF_C_TYPE_SFIXED32: return (uint64_t)(int64_t) * (const int32_t *)p;
  case PROTOBUF_C_TYPE_UINT32:
  case PROTOBUF_C_TYPE_FIXED32: return *(const uint32_t *)p;
  case PROTOBUF_C_TYPE_INT64:
  case PROTOBUF_C_TYPE_SINT64:
  case PROTOBUF_C_TYPE_SFIXED64:
  case PROTOBUF_C_TYPE_UINT64:
  case PROTOBUF_C_TYPE_FIXED64: return *(const uint64_t *)p;
  default: return 0;
  }
}

static void set_scalar(void *msg, const ProtobufCFieldDescriptor *f, uint64_t v) {
  char *p = (char *)msg + f->offset;
  switch (f->type) {
  case PROTOBUF_C_TYPE_BOOL: *(protobuf_c_boolean *)p = v != 0; break;
  case PROTOBUF_C_TYPE_INT32:
  case PROTOBUF_C_TYPE_SINT32:
  case PROTOBUF_C_TYPE_SFIXED32:
  case PROTOBUF_C_TYPE_UINT32:
  case PROTOBUF_C_TYPE_FIXED32: *(uint32_t *)p = (uint32_t)v; break;
  case PROTOBUF_C_TYPE_INT64:
  case PROTOBUF_C_TYPE_SINT64:
  case PROTOBUF_C_TYPE_SFIXED64:
  case PROTOBUF_C_TYPE_UINT64:
  case PROTOBUF_C_TYPE_FIXED64: *(uint64_t *)p = v; break;
  default: break;
  }
}

static uint64_t get_member(const void *o, const fmap *f) {
  const char *p = (const char *)o + f->off;
  switch (f->type) {
  case F_U8: return *(const uint8_t *)p;
  case F_U32: return *(const uint32_t *)p;
  case F_U64: return *(const uint64_t *)p;
  case F_S32: return (uint64_t)(int64_t) * (const int32_t *)p;
  case F_S64: return (uint64_t) * (const int64_t *)p;
  default: return 0;
  }
}

static void set_member(void *o, const fmap *f, uint64_t v) {
  char *p = (char *)o + f->off;
  switch (f->type) {
  case F_U8: *(uint8_t *)p = (uint8_t)v; break;
  case F_U32: *(uint32_t *)p = (uint32_t)v; break;
  case F_U64: *(uint64_t *)p = v; break;
  case F_S32: *(int32_t *)p = (int32_t)(int64_t)v; break;
  case F_S64: *(int64_t *)p = (int64_t)v; break;
  default: break;
  }
}

/* The plain structs' fields, by protobuf field name (SF_NET_FIELDS and
 * its kin: a field of the struct is the proto field of its name). */
#define G(st, name, type) {#name, offsetof(st, name), sizeof(((st *)0)->name) == 1 ? F_U8 : F_U32},
#define G_NET_(name, type, ...) G(sf_net, name, type)
#define G_DISK_(name, type, ...) G(sf_disk, name, type)
#define G_SWARM_(name, type, ...) G(sf_swarm, name, type)
static const fmap net_fields[] = {SF_NET_FIELDS(G_NET_){NULL, 0, F_U8}};
static const fmap disk_fields[] = {SF_DISK_FIELDS(G_DISK_){NULL, 0, F_U8}};
static const fmap swarm_fields[] = {SF_SWARM_FIELDS(G_SWARM_){NULL, 0, F_U8}};
#undef G_SWARM_
#undef G_DISK_
#undef G_NET_
#undef G

/* Copy the scalar fields a map names between a message and a struct. */
static void from_message(const ProtobufCMessage *m, void *dst, const fmap *map) {
  for (const fmap *f = map; f->field; f++) {
    const ProtobufCFieldDescriptor *fd =
        protobuf_c_message_descriptor_get_field_by_name(m->descriptor, f->field);
    SIM_ASSERT(fd); /* the maps name fields of proto/scenario.proto */
    if (fd)
      set_member(dst, f, get_scalar(m, fd));
  }
}

static void to_message(ProtobufCMessage *m, const void *src, const fmap *map) {
  for (const fmap *f = map; f->field; f++) {
    const ProtobufCFieldDescriptor *fd =
        protobuf_c_message_descriptor_get_field_by_name(m->descriptor, f->field);
    SIM_ASSERT(fd);
    if (fd)
      set_scalar(m, fd, get_member(src, f));
  }
}

static void from_net(const Simfuzz__Network *m, sf_net *n) {
  memset(n, 0, sizeof *n);
  if (m)
    from_message(&m->base, n, net_fields);
}

static void from_disk(const Simfuzz__Disk *m, sf_disk *d) {
  memset(d, 0, sizeof *d);
  if (m)
    from_message(&m->base, d, disk_fields);
}

static int from_step(const Simfuzz__Step *m, sf_step *o) {
  memset(o, 0, sizeof *o);
  o->at_us = m->at_us;
  o->by_state = m->by_state ? 1 : 0;
  o->after_event = m->after_event;
  o->on_change = (uint8_t)(m->on_change > SF_MAX_ON_CHANGE ? SF_MAX_ON_CHANGE : m->on_change);
  unsigned kind = kind_field_map(m->kind_case, 1);
  const ProtobufCFieldDescriptor *sf =
      protobuf_c_message_descriptor_get_field(&simfuzz__step__descriptor, m->kind_case);
  if (!kind || !sf)
    return 0;
  const ProtobufCMessage *arg = *(ProtobufCMessage *const *)((const char *)m + sf->offset);
  o->kind = (uint8_t)kind;
  if (!arg)
    return 1;
  const ProtobufCMessageDescriptor *d = sf->descriptor;
  for (const fmap *f = shape_fields[sf_step_shape_of(kind)]; f->field; f++) {
    const ProtobufCFieldDescriptor *fd =
        protobuf_c_message_descriptor_get_field_by_name(d, f->field);
    SIM_ASSERT(fd); /* the maps name fields of proto/scenario.proto */
    if (!fd)
      continue;
    const void *at = (const char *)arg + fd->offset;
    switch (f->type) {
    case F_NET: from_net(*(const Simfuzz__Network *const *)at, &o->net); break;
    case F_DISK: from_disk(*(const Simfuzz__Disk *const *)at, &o->disk); break;
    case F_GROUPS: {
      size_t n = *(const size_t *)((const char *)arg + fd->quantifier_offset);
      const uint32_t *g = *(const uint32_t *const *)at;
      o->ngroups = (uint8_t)(n > SIM_MAX_NODES ? SIM_MAX_NODES : n);
      for (unsigned i = 0; i < o->ngroups; i++)
        o->group[i] = (uint8_t)(g[i] % SIM_MAX_NODES);
      break;
    }
    default: set_member(o, f, get_scalar(arg, fd)); break;
    }
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
  if (m->swarm)
    from_message(&m->swarm->base, &out->swarm, swarm_fields);
  out->fp_enable_ppm = m->faultpoint_enable_ppm;
  out->fp_fire_ppm = m->faultpoint_fire_ppm;
  out->tail_ms = m->tail_ms;
  out->nversions = (uint32_t)(m->n_versions < SIM_MAX_NODES ? m->n_versions : SIM_MAX_NODES);
  for (uint32_t i = 0; i < out->nversions; i++) /* sf_normalize takes them modulo */
    out->versions[i] = (uint8_t)m->versions[i];
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

/* The one-byte keys of the top-level Scenario fields (their numbers and
 * wire types, read from the protobuf-c descriptor): where resynchronisation
 * may resume after damage. Fields 1..15 have one-byte keys. */
static void known_keys(uint8_t known[128]) {
  memset(known, 0, 128);
  const ProtobufCMessageDescriptor *d = &simfuzz__scenario__descriptor;
  for (unsigned i = 0; i < d->n_fields; i++) {
    const ProtobufCFieldDescriptor *f = &d->fields[i];
    unsigned wire;
    switch (f->type) {
    case PROTOBUF_C_TYPE_MESSAGE:
    case PROTOBUF_C_TYPE_BYTES:
    case PROTOBUF_C_TYPE_STRING: wire = 2; break;
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_DOUBLE: wire = 1; break;
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_FLOAT: wire = 5; break;
    default: wire = 0; break;
    }
    if (f->label == PROTOBUF_C_LABEL_REPEATED && wire != 2)
      wire = 2; /* packed */
    if (f->id < 16)
      known[f->id << 3 | wire] = 1;
  }
}

#define SALVAGE_RESYNC_TRIES 256 /* bounds the work on hostile input */

/* Keep every top-level field that parses on its own; after a damaged
 * field, resynchronise at the next known key whose field parses (a bounded
 * number of tries). 0 if no step survived. */
static int salvage(const uint8_t *data, size_t len, sf_scenario *out) {
  uint8_t known[128];
  known_keys(known);
  uint8_t *keep = malloc(len ? len : 1);
  if (!keep)
    return 0;
  size_t kept = 0, at = 0;
  int tries = 0;
  while (at < len) {
    size_t fl = field_len(data + at, len - at);
    Simfuzz__Scenario *m = NULL;
    if (fl && data[at] < 128 && known[data[at]] && tries++ < SALVAGE_RESYNC_TRIES * 4)
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
    while (at < len && !(data[at] < 128 && known[data[at]]));
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
  union { /* the kind's message: one member per message type */
    ProtobufCMessage base;
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
    Simfuzz__Upgrade upgrade;
  } u;
  Simfuzz__Network net;
  Simfuzz__Disk dsk;
  uint32_t groups[SIM_MAX_NODES];
} step_msg;

static void to_net(const sf_net *n, Simfuzz__Network *m) {
  simfuzz__network__init(m);
  to_message(&m->base, n, net_fields);
}

static void to_disk(const sf_disk *d, Simfuzz__Disk *m) {
  simfuzz__disk__init(m);
  to_message(&m->base, d, disk_fields);
}

static void to_step(const sf_step *s, step_msg *o) {
  Simfuzz__Step *m = &o->st;
  simfuzz__step__init(m);
  m->at_us = s->at_us;
  m->by_state = s->by_state ? 1 : 0;
  m->after_event = s->after_event;
  m->on_change = s->on_change;
  unsigned field = kind_field_map(s->kind, 0);
  const ProtobufCFieldDescriptor *sf =
      protobuf_c_message_descriptor_get_field(&simfuzz__step__descriptor, field);
  if (!field || !sf)
    return;
  const ProtobufCMessageDescriptor *d = sf->descriptor;
  SIM_ASSERT(d->sizeof_message <= sizeof o->u);
  if (d->sizeof_message > sizeof o->u)
    return;
  protobuf_c_message_init(d, &o->u);
  for (const fmap *f = shape_fields[sf_step_shape_of(s->kind)]; f->field; f++) {
    const ProtobufCFieldDescriptor *fd =
        protobuf_c_message_descriptor_get_field_by_name(d, f->field);
    SIM_ASSERT(fd);
    if (!fd)
      continue;
    void *at = (char *)&o->u + fd->offset;
    switch (f->type) {
    case F_NET:
      to_net(&s->net, &o->net);
      *(Simfuzz__Network **)at = &o->net;
      break;
    case F_DISK:
      to_disk(&s->disk, &o->dsk);
      if (s->disk.keep_ppm || s->disk.corrupt_ppm || s->disk.read_eio_ppm ||
          s->disk.write_eio_ppm || s->disk.sync_eio_ppm)
        *(Simfuzz__Disk **)at = &o->dsk; /* an all-default message is left out */
      break;
    case F_GROUPS:
      for (unsigned i = 0; i < s->ngroups; i++)
        o->groups[i] = s->group[i];
      *(size_t *)((char *)&o->u + fd->quantifier_offset) = s->ngroups;
      *(uint32_t **)at = o->groups;
      break;
    default: set_scalar(&o->u, fd, get_member(s, f)); break;
    }
  }
  m->kind_case = (Simfuzz__Step__KindCase)field;
  *(ProtobufCMessage **)((char *)m + sf->offset) = &o->u.base;
}

/* Build the protobuf message for s; the caller frees *steps_out. */
static int build(const sf_scenario *s, Simfuzz__Scenario *m, Simfuzz__Network *net,
                 Simfuzz__Disk *disk, Simfuzz__Swarm *swarm, uint32_t *versions,
                 step_msg **steps_out, Simfuzz__Step ***ptrs_out) {
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
    to_message(&swarm->base, w, swarm_fields);
    m->swarm = swarm;
  }
  m->faultpoint_enable_ppm = s->fp_enable_ppm;
  m->faultpoint_fire_ppm = s->fp_fire_ppm;
  m->tail_ms = s->tail_ms;
  m->n_versions = s->nversions;
  m->versions = versions;
  for (uint32_t i = 0; i < s->nversions && i < SIM_MAX_NODES; i++)
    versions[i] = s->versions[i];
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
  uint32_t versions[SIM_MAX_NODES];
  step_msg *sm;
  Simfuzz__Step **ptrs;
  if (build(s, &m, &net, &disk, &swarm, versions, &sm, &ptrs) < 0)
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

/* The generator reads its bytes as a choice source (draw.h): every part of
 * the scenario is drawn as the mutator and the explorer's futures draw it;
 * the bytes left over are the choice tape. */
void sf_generate(const uint8_t *bytes, size_t len, sf_scenario *s) {
  sf_choice src = sf_choice_bytes(bytes, len > SF_MAX_INPUT ? SF_MAX_INPUT : len), *c = &src;
  sf_scenario_init(s);
  s->nodes = sf_below(c, 8) == 0 ? 0 : 2 + sf_below(c, 6);
  s->seed = sf_u64(c);
  s->fifo = sf_below(c, 8) == 0;
  s->has_net = 1;
  sf_draw_net(c, &s->net);
  s->has_disk = 1;
  sf_draw_disk(c, &s->disk);
  sf_draw_swarm(c, &s->swarm);
  s->fp_enable_ppm = sf_draw_rate(c);
  s->fp_fire_ppm = sf_draw_rate(c);
  uint32_t nsteps = 1 + sf_below(c, 24);
  uint64_t t = 0;
  for (uint32_t i = 0; i < nsteps; i++) {
    sf_step *st = &s->steps[s->nsteps++];
    t += (uint64_t)sf_below(c, 400) * 1000;
    sf_draw_step(c, st);
    st->at_us = t;
  }
  s->tail_ms = 500 + sf_below(c, 32) * 100;
  SIM_ASSERT(src.i <= src.n);
  size_t rest = src.n - src.i;
  s->tape_len = (uint32_t)(rest < SIM_TAPE_MAX ? rest : SIM_TAPE_MAX);
  if (s->tape_len)
    memcpy(s->tape, bytes + src.i, s->tape_len);
  sf_normalize(s);
}

void sf_generate_versions(uint32_t versions, sf_scenario *s) {
  if (versions < 2 || versions > SF_MAX_VERSIONS)
    return;
  /* a stream of its own, from the seed: nothing else drawn moves */
  sf_choice src = sf_choice_rng(s->seed ^ 0x76657273696f6e73ull), *c = &src;
  if (sf_below(c, 2)) { /* a mixed cluster from the start */
    s->nversions = 8;
    for (uint32_t i = 0; i < s->nversions; i++)
      s->versions[i] = (uint8_t)sf_below(c, versions);
  } else { /* a rolling upgrade, one node at a time, to the last version */
    uint64_t t = (uint64_t)sf_below(c, 2000) * 1000;
    uint32_t nodes = 1 + sf_below(c, 8), first = sf_below(c, 8);
    for (uint32_t i = 0; i < nodes && s->nsteps < SF_MAX_STEPS; i++) {
      sf_step *st = &s->steps[s->nsteps++];
      memset(st, 0, sizeof *st);
      st->kind = SF_STEP_UPGRADE;
      st->node = (first + i) % 8;
      st->k = versions - 1;
      st->at_us = t;
      t += 100000 + (uint64_t)sf_below(c, 15) * 100000;
    }
  }
  sf_normalize(s);
  SIM_ASSERT(s->nversions <= SIM_MAX_NODES);
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
