/* The one random draw of scenario parts (see draw.h). */
#include "draw.h"

#include <string.h>

/* Every kind a draw may pick has a weight, and only those. */
#define X(K, name, shape, fault, flags, weight, ends)                                              \
  &&(((flags) & (SF_SK_HAND | SF_SK_VERSIONS)) != 0) == ((weight) == 0)
_Static_assert(1 SF_STEP_KINDS(X),
               "SF_STEP_KINDS: a kind has weight 0 if and only if SF_SK_HAND or SF_SK_VERSIONS");
#undef X
#define X(K, name, shape, fault, flags, weight, ends) +(weight)
enum { KIND_WEIGHTS = 0 SF_STEP_KINDS(X) };
#undef X
_Static_assert(KIND_WEIGHTS > 0 && KIND_WEIGHTS <= 256, "SF_STEP_KINDS: weights sum to 1..256");

sf_choice sf_choice_bytes(const uint8_t *bytes, size_t len) {
  sf_choice c = {bytes, bytes ? len : 0, 0, 0, 1};
  return c;
}

sf_choice sf_choice_rng(uint64_t seed) {
  sf_choice c = {NULL, 0, 0, seed, 0};
  return c;
}

static uint32_t byte(sf_choice *c) {
  SIM_ASSERT(c->bytes && c->i <= c->n && (c->p != NULL || c->n == 0));
  return c->i < c->n ? c->p[c->i++] : 0;
}

/* nbytes bytes, little-endian, or the generator's next 64 bits. */
static uint64_t bits(sf_choice *c, unsigned nbytes) {
  SIM_ASSERT(nbytes >= 1 && nbytes <= 8);
  if (!c->bytes)
    return sim_mix64(c->x += 0x9e3779b97f4a7c15ull);
  uint64_t v = 0;
  for (unsigned k = 0; k < nbytes; k++)
    v |= (uint64_t)byte(c) << (8 * k);
  return v;
}

uint64_t sf_u64(sf_choice *c) {
  return bits(c, 8);
}

uint32_t sf_below(sf_choice *c, uint32_t n) {
  if (n == 0)
    return 0;
  uint64_t v = bits(c, n <= 256 ? 1 : n <= 65536 ? 2 : 4);
  uint32_t r = (uint32_t)(v % n);
  SIM_ASSERT(r < n);
  return r;
}

uint32_t sf_draw_rate(sf_choice *c) {
  static const uint32_t table[8] = {0, 0, 0, 1000, 10000, 50000, 200000, 500000};
  uint32_t r = table[sf_below(c, 8)];
  SIM_ASSERT(r <= SIM_PPM);
  return r;
}

uint32_t sf_draw_keep(sf_choice *c) {
  static const uint32_t table[7] = {0, 1000, 10000, 50000, 100000, 300000, 1000000};
  uint32_t r = table[sf_below(c, 7)];
  SIM_ASSERT(r <= SIM_PPM);
  return r;
}

uint32_t sf_draw_long_tail_us(sf_choice *c) {
  uint32_t d = sf_below(c, 256);
  uint32_t us = d < 240 ? d * 400 : (d - 239) * 250000;
  SIM_ASSERT(us <= 4000000);
  return us;
}

uint32_t sf_draw_amp(sf_choice *c) {
  uint32_t pct = sf_below(c, 4) ? 0 : 25 * (1 + sf_below(c, 16));
  SIM_ASSERT(pct <= SF_MAX_SWARM_PCT);
  return pct;
}

uint32_t sf_draw_disabled(sf_choice *c) {
  _Static_assert(SF_FAULT__COUNT <= 32, "sf_swarm.disabled has a bit per fault kind");
  uint32_t off = 0;
  for (unsigned k = 1; k < SF_FAULT__COUNT; k++)
    if (sf_below(c, 4) == 0)
      off |= 1u << k;
  SIM_ASSERT((off & 1u) == 0);
  return off;
}

void sf_draw_net(sf_choice *c, sf_net *n) {
#define DRAW_(field, type, bound, draw) n->field = (type)(draw);
  SF_NET_FIELDS(DRAW_)
#undef DRAW_
  SIM_ASSERT(n->latency_max_us >= n->latency_min_us);
}

void sf_draw_disk(sf_choice *c, sf_disk *d) {
#define DRAW_(field, type, bound, draw, sim, fault) d->field = (type)(draw);
  SF_DISK_FIELDS(DRAW_)
#undef DRAW_
  SIM_ASSERT(d->keep_ppm <= SIM_PPM);
}

void sf_draw_swarm(sf_choice *c, sf_swarm *w) {
#define DRAW_(field, type, bound, draw) w->field = (type)(draw);
  SF_SWARM_FIELDS(DRAW_)
#undef DRAW_
  SIM_ASSERT((w->disabled & 1u) == 0);
}

uint8_t sf_draw_kind(sf_choice *c) {
  /* (a table, not a chain of ifs: gcc's -Wtype-limits refuses pick < 0 for
   * a kind of weight 0) */
  static const struct {
    uint8_t kind;
    uint32_t weight;
  } kinds[] = {
#define X(K, name, shape, fault, flags, weight, ends) {SF_STEP_##K, (weight)},
      SF_STEP_KINDS(X)
#undef X
  };
  uint32_t pick = sf_below(c, KIND_WEIGHTS);
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    if (pick < kinds[i].weight)
      return kinds[i].kind;
    pick -= kinds[i].weight;
  }
  SIM_ASSERT(!"sf_draw_kind: the weights sum to KIND_WEIGHTS");
  return SF_STEP_OP;
}

/* A clock step's arguments: an offset and a jump within +-1 s (whole
 * milliseconds), a drift within +-10 %. */
static void draw_clock(sf_choice *c, sf_step *st) {
  st->offset_us = (int64_t)sf_below(c, 2001) * 1000 - 1000000;
  st->drift_ppm = (int32_t)sf_below(c, 200001) - 100000;
  st->jump_us = sf_below(c, 4) ? 0 : (int64_t)sf_below(c, 2001) * 1000 - 1000000;
  SIM_ASSERT(st->drift_ppm >= -SIM_MAX_DRIFT_PPM && st->drift_ppm <= SIM_MAX_DRIFT_PPM);
}

/* A disk step's arguments: its fault rates; then k = the operation to fail
 * (0 none, 1 read, 2 write, 3 sync), count = its nth; with none, a stall. */
static void draw_disk_step(sf_choice *c, sf_step *st) {
  sf_draw_disk(c, &st->disk);
  st->k = sf_below(c, 4);
  st->count = 1 + sf_below(c, 8);
  st->interval_us = st->k ? 0 : (1 + sf_below(c, 16)) * SF_GEN_STALL_US;
  SIM_ASSERT(st->interval_us <= SF_MAX_STALL_US);
}

/* A client operation's arguments: any op code (the target maps it), one
 * of 16 keys, a value, 1 to 8 repetitions, mostly tens of ms apart. */
static void draw_op(sf_choice *c, sf_step *st) {
  st->k = sf_below(c, 256);
  st->key = sf_below(c, 16);
  st->value = sf_u64(c) & 0xffffffffu;
  st->count = 1 + sf_below(c, 8);
  st->interval_us = sf_below(c, 4) ? sf_below(c, 50) * 1000 : 0;
  SIM_ASSERT(st->count <= SF_MAX_OP_COUNT);
}

void sf_draw_params(sf_choice *c, sf_step *st) {
  SIM_ASSERT(st->kind > SF_STEP__NONE && st->kind < SF_STEP__COUNT);
  switch (sf_step_shape_of(st->kind)) {
  case SF_SHAPE_MASKS:
    st->mask_a = 1ull << sf_below(c, 8) | (sf_below(c, 2) ? 1ull << sf_below(c, 8) : 0);
    st->mask_b = sf_below(c, 2) ? 0 : 1ull << sf_below(c, 8);
    st->flag = sf_below(c, 4) == 0;
    break;
  case SF_SHAPE_GROUPS: {
    uint32_t sides = sf_below(c, 4) ? 2 : 3;
    st->ngroups = 8;
    for (int i = 0; i < 8; i++)
      st->group[i] = (uint8_t)sf_below(c, sides);
    break;
  }
  case SF_SHAPE_RESET: st->flag = sf_below(c, 4) == 0; break;
  case SF_SHAPE_LINK:
    st->flag = sf_below(c, 4) == 0;
    sf_draw_net(c, &st->net);
    break;
  case SF_SHAPE_DELIVER: st->k = sf_below(c, 4); break;
  case SF_SHAPE_CLOCK: draw_clock(c, st); break;
  case SF_SHAPE_DISK: draw_disk_step(c, st); break;
  case SF_SHAPE_FAULTPOINT:
    st->k = sf_below(c, 16);
    st->rate_ppm = sf_draw_rate(c);
    st->flag = sf_below(c, 8) == 0;
    break;
  case SF_SHAPE_OP: draw_op(c, st); break;
  case SF_SHAPE_DEADLINE: st->count = 2000 + sf_below(c, 16) * 1000; break;
  case SF_SHAPE_VERSION: st->k = sf_below(c, SF_MAX_VERSIONS); break;
  default: break;
  }
}

void sf_draw_step(sf_choice *c, sf_step *st) {
  memset(st, 0, sizeof *st);
  st->kind = sf_draw_kind(c);
  st->node = sf_below(c, 8);
  st->peer = sf_below(c, 8);
  st->by_state = sf_below(c, 4) == 0; /* "the leader", "a follower", ... */
  sf_draw_params(c, st);
  SIM_ASSERT(!(sf_step_flags(st->kind) & (SF_SK_HAND | SF_SK_VERSIONS)));
}
