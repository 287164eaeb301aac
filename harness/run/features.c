/* Feature computation: the abstract protocol/fault states of a run (see
 * features.h). The buckets reached become code paths in feedback.c. */
#include "features.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef SF_FEEDBACK
#define SF_FEEDBACK 1
#endif

#define TAG(t) ((uint64_t)(t) << 60)

/* Reach bucket b, a state about node (-1: none named), by a feature of
 * kind (SF_FT_*: add() checks its feature's kind, a site's is SF_FT_SITE). */
static void reach(sf_features *f, uint32_t b, int node, unsigned kind) {
  SIM_ASSERT(b < f->nb && f->nb <= SF_FB_BUCKETS);
  uint64_t bit = 1ull << (b % 64);
  if (!(f->bits[b / 64] & bit)) {
    f->bits[b / 64] |= bit;
    f->count++;
    if (f->nfresh < SF_FRESH_MAX) {
      f->fresh_node[f->nfresh] = (int8_t)(node >= 0 && node < f->n ? node : -1);
      f->fresh_kind[f->nfresh] = (uint8_t)kind;
      f->fresh[f->nfresh++] = b;
    }
  }
}

/* Reach the bucket of feature v, of any kind but a site's. */
static void add(sf_features *f, uint64_t v) {
  SIM_ASSERT((v >> 60) > SF_FT__NONE && (v >> 60) < SF_FT__COUNT);
  if (f->off >> (v >> 60) & 1)
    return;
  reach(f, (uint32_t)(sim_mix64(v) % (f->nb - SF_FB_SITE_BUCKETS)), -1, (unsigned)(v >> 60));
}

static const char *const kind_name[SF_FT__COUNT] = {
#define SF_FT_NAME(tag, name, doc) [SF_FT_##tag] = #name,
    SF_FEATURE_MAP(SF_FT_NAME)
#undef SF_FT_NAME
};

_Static_assert(SF_FT__COUNT < 16, "feature kinds below SF_SEARCH_INFLIGHT");

const char *sf_feature_kind_name(unsigned kind) {
  return kind > SF_FT__NONE && kind < SF_FT__COUNT ? kind_name[kind] : "?";
}

/* The parts of the search other than feature kinds, by name. */
static const struct {
  const char *name;
  uint32_t bit;
} search_parts[] = {
    {"inflight", SF_SEARCH_INFLIGHT}, {"rerun", SF_SEARCH_RERUN},     {"yield", SF_SEARCH_YIELD},
    {"anchor", SF_SEARCH_ANCHOR},     {"wide", SF_SEARCH_WIDE},       {"even", SF_SEARCH_EVEN},
    {"split", SF_SEARCH_SPLIT},       {"oneshot", SF_SEARCH_ONESHOT},
};

int64_t sf_search_parse(const char *list, uint32_t def) {
  int64_t off = def;
  for (const char *p = list; *p;) {
    size_t len = strcspn(p, ",");
    const char *name = p + 1;
    int64_t bit = 0;
    for (size_t k = 0; k < sizeof search_parts / sizeof search_parts[0]; k++)
      if (len > 1 && strlen(search_parts[k].name) == len - 1 &&
          !strncmp(name, search_parts[k].name, len - 1))
        bit = search_parts[k].bit;
    for (int k = SF_FT__NONE + 1; k < SF_FT__COUNT; k++)
      if (len > 1 && strlen(kind_name[k]) == len - 1 && !strncmp(name, kind_name[k], len - 1))
        bit = 1ll << k;
    if (len && (!bit || (*p != '+' && *p != '-')))
      return -1;
    off = *p == '+' ? off & ~bit : *p == '-' ? off | bit : off;
    p += len + (p[len] == ',');
  }
  return off;
}

uint32_t sf_search_off(void) {
  static int read;
  static uint32_t off;
  if (!read) {
    const char *env = getenv("SIMFUZZ_SEARCH");
    int64_t m = env ? sf_search_parse(env, SF_SEARCH_DEFAULT_OFF) : SF_SEARCH_DEFAULT_OFF;
    if (m < 0) {
      fprintf(stderr, "simfuzz: SIMFUZZ_SEARCH=%s: a list of +name and -name, the names", env);
      for (int k = SF_FT__NONE + 1; k < SF_FT__COUNT; k++)
        fprintf(stderr, " %s,", kind_name[k]);
      for (size_t k = 0; k < sizeof search_parts / sizeof search_parts[0]; k++)
        fprintf(stderr, " %s%s", search_parts[k].name,
                k + 1 < sizeof search_parts / sizeof search_parts[0] ? "," : "\n");
      exit(2);
    }
    off = (uint32_t)m;
    read = 1;
  }
  return off;
}

uint32_t sf_fb_buckets(void) {
  return sf_search_off() & SF_SEARCH_WIDE ? SF_FB_NARROW : SF_FB_BUCKETS;
}

/* Fault records that count as features: every fault but repairs and the
 * failure itself. Protocol records take part in the ordered-pair features. */
#define FAULT_KINDS                                                                                \
  (SIM_EV_FAULT_MASK & ~((1ull << SIM_EV_HEAL) | (1ull << SIM_EV_LINK) | (1ull << SIM_EV_FAIL)))
#define FEATURE_KINDS                                                                              \
  (FAULT_KINDS | (1ull << SIM_EV_DELIVER) | (1ull << SIM_EV_CONN_DATA) | (1ull << SIM_EV_BOOT) |   \
   (1ull << SIM_EV_CONN_UP) | (1ull << SIM_EV_CONN_ACCEPT) | (1ull << SIM_EV_CONN_CLOSE))

void sf_features_init(sf_features *f, int n) {
  memset(f, 0, sizeof *f);
  SIM_ASSERT(n > 0 && n <= SIM_MAX_NODES);
  f->n = n;
  f->last_node = -1;
  f->pend_node = -1;
  f->off = sf_search_off() & (SF_SEARCH_INFLIGHT - 1);
  f->nb = sf_fb_buckets();
}

void sf_features_bind(sf_features *f, const sf_target *t, void *ctx, sim_world *w) {
  SIM_ASSERT(f->n > 0 && t && w);
  f->t = t;
  f->ctx = ctx;
  f->w = w;
}

/* Whether the epoch features are computed: on, and an observer to read. */
static int epochs_on(const sf_features *f) {
  return !(f->off >> SF_FT_EPOCH & 1) && f->t && f->t->epoch; /* bind sets t and w together */
}

/* A message's epoch e against its receiver's r: 0 the same, 1 older by
 * one, 2 older by more, 3 newer by one, 4 newer by more. */
static uint64_t epoch_relation(uint64_t e, uint64_t r) {
  if (e == r)
    return 0;
  if (e < r)
    return r - e == 1 ? 1 : 2;
  return e - r == 1 ? 3 : 4;
}

/* A delivery to `to` of a message sent in epoch e: its feature waits for
 * the end of the event, which tells whether the receiver moved on it. */
static void epoch_delivered(sf_features *f, uint32_t msg_kind, int to, uint64_t e) {
  SIM_ASSERT(to >= 0 && to < f->n);
  uint64_t r = f->t->epoch(f->ctx, f->w, to);
  f->pend_node = to;
  f->pend_val = (uint64_t)(msg_kind & 0xff) << 16 | epoch_relation(e, r) << 4;
  f->pend_epoch = r;
  f->pend_role = f->role[to];
}

/* The end of the event of a delivery: whether its receiver's role (as
 * last observed) and epoch changed on it. */
static void epoch_settled(sf_features *f) {
  int to = f->pend_node;
  SIM_ASSERT(to >= 0 && to < f->n);
  f->pend_node = -1;
  if (!sim_node_up(f->w, to))
    return; /* it crashed on it: its state is gone */
  uint64_t role_moved = f->role[to] != f->pend_role;
  uint64_t epoch_moved = f->t->epoch(f->ctx, f->w, to) != f->pend_epoch;
  add(f, TAG(SF_FT_EPOCH) | f->pend_val | role_moved << 1 | epoch_moved);
}

/* log2 buckets of a time in flight in ms: 0 below 1 ms, then 1 + log2,
 * at most 15 (16 s and more). */
static uint64_t flight_bucket(uint64_t ns) {
  uint64_t ms = ns / 1000000;
  if (ms == 0)
    return 0;
  uint64_t b = 1 + 63 - (uint64_t)__builtin_clzll(ms);
  return b < 15 ? b : 15;
}

/* What the message features need of the messages in flight (fly[]). */
enum { FLY_STALE = 1, FLY_EPOCH = 2, FLY_TIMELINE = 4 };

static unsigned fly_wanted(const sf_features *f) {
  return (f->off >> SF_FT_STALE & 1 ? 0u : FLY_STALE) | (epochs_on(f) ? FLY_EPOCH : 0u) |
         (f->off >> SF_FT_TIMELINE & 1 ? 0u : FLY_TIMELINE);
}

/* A step of a Lamport timeline: the sender's observed role at the send,
 * the message kind, and the receiver's at the delivery, in 24 bits. */
static uint32_t timeline_step(uint32_t from_role, uint32_t kind, uint32_t to_role) {
  uint64_t h = sim_mix64((uint64_t)from_role << 8 | (kind & 0xff));
  return (uint32_t)(sim_mix64(h ^ to_role) & 0xffffff);
}

/* A send from `from`: what its delivery will be compared with. */
static void fly_send(sf_features *f, uint32_t slot, const sim_trace_rec *r, int from, int to,
                     unsigned want) {
  f->fly[slot].sent = r->time;
  f->fly[slot].from_moves = f->moves[from];
  f->fly[slot].to_moves = f->moves[to];
  f->fly[slot].epoch1 = want & FLY_EPOCH ? f->t->epoch(f->ctx, f->w, from) + 1 : 0;
  f->fly[slot].from_role = f->role[from];
  f->fly[slot].cause = f->cause[from];
}

/* Its delivery to `to`. Staleness: the message kind, whether its sender
 * and receiver changed role since the send, and how long it was in
 * flight. Timeline (after Mallory's Lamport-timeline abstraction): the
 * step the sender last received before the send, and this one, a path of
 * two along happens-before, whatever else ran in between. */
static void fly_deliver(sf_features *f, uint32_t slot, const sim_trace_rec *r, int from, int to,
                        unsigned want) {
  SIM_ASSERT(r->time >= f->fly[slot].sent);
  uint64_t kind = r->msg_kind & 0xff;
  if (want & FLY_STALE) {
    uint64_t from_changed = f->moves[from] != f->fly[slot].from_moves;
    uint64_t to_changed = f->moves[to] != f->fly[slot].to_moves;
    add(f, TAG(SF_FT_STALE) | kind << 16 | from_changed << 9 | to_changed << 8 |
               flight_bucket(r->time - f->fly[slot].sent));
  }
  if (want & FLY_TIMELINE) {
    uint32_t step = timeline_step(f->fly[slot].from_role, (uint32_t)kind, f->role[to]);
    add(f, TAG(SF_FT_TIMELINE) | (uint64_t)f->fly[slot].cause << 24 | step);
    f->cause[to] = step;
  }
  if (want & FLY_EPOCH && f->fly[slot].epoch1)
    epoch_delivered(f, r->msg_kind, to, f->fly[slot].epoch1 - 1);
}

/* A message sent, or delivered (a datagram, or a stream's message). */
static void in_flight(sf_features *f, const sim_trace_rec *r, unsigned want) {
  int send = r->kind == SIM_EV_SEND;
  int from = send ? r->node : r->peer, to = send ? r->peer : r->node;
  if (from < 0 || from >= f->n || to < 0 || to >= f->n)
    return;
  uint64_t id = r->kind == SIM_EV_CONN_DATA ? r->b : r->a;
  SIM_ASSERT(id < UINT64_MAX);
  uint32_t slot = (uint32_t)(sim_mix64(id) % SF_FLY_SLOTS);
  if (send) {
    f->fly[slot].id1 = id + 1;
    fly_send(f, slot, r, from, to, want);
    return;
  }
  if (f->fly[slot].id1 != id + 1) /* its slot was taken by a later one */
    return;
  fly_deliver(f, slot, r, from, to, want);
  if (r->kind == SIM_EV_DELIVER) /* a stream's segment may carry more */
    f->fly[slot].id1 = 0;
}

/* The order of lock acquisitions across a node's threads: each handoff
 * of a lock to another thread, with the node's handoff before it. */
static void handoff(sf_features *f, const sim_trace_rec *r) {
  if (r->reason != SIM_THREAD_HANDOFF || r->node < 0 || r->node >= f->n)
    return;
  uint32_t now = (uint32_t)(r->a & 0xff) << 16 | (uint32_t)(r->b & 0xffff); /* 24 bits */
  add(f, TAG(SF_FT_LOCK) | (uint64_t)f->handoff[r->node] << 24 | now);
  f->handoff[r->node] = now;
}

void sf_features_trace(sf_features *f, const sim_trace_rec *r) {
  unsigned k = r->kind;
  if (r->node >= 0)
    f->last_node = r->node;
  if (k == SIM_EV_THREAD && !(f->off >> SF_FT_LOCK & 1))
    handoff(f, r);
  if (k == SIM_EV_SEND || k == SIM_EV_DELIVER || k == SIM_EV_CONN_DATA) {
    unsigned want = fly_wanted(f);
    if (want)
      in_flight(f, r, want);
  }
  if (k >= SIM_EV__COUNT || !(FEATURE_KINDS >> k & 1))
    return;
  int fault = (int)(FAULT_KINDS >> k & 1);
  uint32_t role = r->node >= 0 && r->node < f->n ? f->role[r->node] : 0;
  uint32_t cls = (uint32_t)k << 16 | (uint32_t)r->reason << 8 | (r->msg_kind & 0xff);
  if (fault)
    add(f, TAG(SF_FT_FAULT) | (uint64_t)cls << 20 | role);
  add(f, TAG(SF_FT_PAIR) | (uint64_t)f->prev_class << 28 | cls);
  f->prev_class = cls;
}

void sf_features_on_trace(void *f, const sim_world *w, const sim_trace_rec *r, const void *payload,
                          size_t len) {
  (void)w;
  (void)payload;
  (void)len;
  sf_features_trace(f, r);
}

/* The hash of a multiset of n values: sorted, so node numbering does not
 * matter. */
static uint64_t multiset_hash(uint64_t *v, int n) {
  for (int a = 1; a < n; a++)
    for (int b = a; b > 0 && v[b - 1] > v[b]; b--) {
      uint64_t tmp = v[b];
      v[b] = v[b - 1];
      v[b - 1] = tmp;
    }
  uint64_t h = 0;
  for (int a = 0; a < n; a++)
    h = sim_mix64(h ^ v[a]);
  return h;
}

/* log4 buckets of a time held in ms: below 2 ms, below 8, 32, 128, 512,
 * 2,048, 8,192, then 7 for the rest (an election timeout and a heartbeat
 * fall in different buckets, and so do one and several timeouts). */
static uint64_t dwell_bucket(uint64_t ns) {
  uint64_t ms = ns / 1000000;
  uint64_t b = ms ? (uint64_t)(64 - __builtin_clzll(ms)) / 2 : 0;
  return b < 7 ? b : 7;
}

void sf_features_role(sf_features *f, int i, uint32_t role, uint64_t now) {
  SIM_ASSERT(i >= 0 && i < f->n);
  SIM_ASSERT(role != f->role[i]);
  SIM_ASSERT(now >= f->since[i]);
  /* the node's transition, then the cluster's role vector */
  add(f, TAG(SF_FT_TRANSITION) | (uint64_t)(f->role[i] & 0xffffff) << 24 | (role & 0xffffff));
  uint64_t v[SIM_MAX_NODES];
  if (!(f->off >> SF_FT_DWELL & 1)) {
    for (int a = 0; a < f->n; a++)
      v[a] = (uint64_t)(a == i ? role : f->role[a]) << 3 | dwell_bucket(now - f->since[a]);
    add(f, TAG(SF_FT_DWELL) | (multiset_hash(v, f->n) & 0x0fffffffffffffffull));
  }
  f->role[i] = role;
  f->moves[i]++;
  f->since[i] = now;
  for (int a = 0; a < f->n; a++)
    v[a] = f->role[a];
  f->role_vec = multiset_hash(v, f->n);
  add(f, TAG(SF_FT_ROLES) | (f->role_vec & 0x0fffffffffffffffull));
}

/* Node i's role now (0 while it is down), from the target's observe(): a
 * role change if it differs from the last. */
static void observe_node(sf_features *f, int i) {
  SIM_ASSERT(i >= 0 && i < f->n && f->t->observe);
  uint32_t role = sim_node_up(f->w, i) ? f->t->observe(f->ctx, f->w, i) : 0;
  if (role != f->role[i])
    sf_features_role(f, i, role, sim_now(f->w));
}

void sf_features_observe(sf_features *f) {
  if (!f->t) /* not bound: no target to read */
    return;
  int i = f->last_node;
  int has_role = f->t->observe != NULL;
  if (has_role && i >= 0 && i < f->n)
    observe_node(f, i);
  if (f->pend_node < 0)
    return;
  if (has_role && f->pend_node != i) /* the receiver, if the event's last record was not its */
    observe_node(f, f->pend_node);
  epoch_settled(f);
}

void sf_features_step(sf_features *f, unsigned kind) {
  add(f, TAG(SF_FT_STEP) | (uint64_t)kind << 40 | (f->role_vec & 0xffffffffffull));
}

/* Values as buckets: exact below 32, then by power of two, so a larger
 * value is a new feature whatever its size. */
static uint64_t value_bucket(uint64_t v) {
  return v < 32 ? v : 32 + 63 - (uint64_t)__builtin_clzll(v);
}

/* Within the sites' buckets, value class k of site i (of the catalog's n)
 * has bucket k * n + i of its own, for every class below 1024 / n: no two
 * states of a catalog of up to 10 sites ever share one. Hashed before, 68
 * of raft_kv_reconf's 279 site states shared a bucket (10 of the 30 below
 * class 8): "membership changes on diverging logs", reached by 1 run in
 * 400, shared one with rung 5 of the early-change ladder. Higher classes
 * (and sites past the catalog) hash into the buckets past the dedicated
 * ones, or, when none are left over, into all of them. */
uint32_t sf_features_site_bucket(uint32_t site, uint64_t value) {
  size_t n = 0;
  sf_sites(&n);
  uint64_t k = value_bucket(value), per = n ? SF_FB_SITE_BUCKETS / n : 0;
  uint32_t base = sf_fb_buckets() - SF_FB_SITE_BUCKETS;
  if (site < n && k < per)
    return base + (uint32_t)(k * n + site);
  uint64_t used = per * n, spare = SF_FB_SITE_BUCKETS - used;
  uint64_t h = sim_mix64(TAG(SF_FT_SITE) | (uint64_t)site << 8 | k);
  return base + (uint32_t)(spare ? used + h % spare : h % SF_FB_SITE_BUCKETS);
}

uint64_t sf_features_class_value(uint32_t k) {
  if (k < 32)
    return k;
  return k >= 37 && k < SF_VALUE_CLASSES ? 1ull << (k - 32) : UINT64_MAX; /* 32: 2^5 */
}

void sf_features_site(sf_features *f, uint32_t site, uint64_t value, int node) {
  if (f->off >> SF_FT_SITE & 1)
    return;
  reach(f, sf_features_site_bucket(site, value), node, SF_FT_SITE);
}

uint32_t sf_features_drain(sf_features *f, uint32_t *out, int *node, int *kind) {
  uint32_t n = f->nfresh;
  memcpy(out, f->fresh, n * sizeof *out);
  for (uint32_t i = 0; i < n; i++) {
    node[i] = f->fresh_node[i];
    kind[i] = f->fresh_kind[i];
  }
  f->nfresh = 0;
  return n;
}

void sf_features_emit(const sf_features *f) {
#if SF_FEEDBACK
  for (uint32_t wd = 0; wd < SF_FB_WORDS; wd++)
    for (uint64_t bits = f->bits[wd]; bits; bits &= bits - 1)
      sf_feedback_path(wd * 64 + (uint32_t)__builtin_ctzll(bits));
#else
  (void)f;
#endif
}

int sf_feedback_enabled(void) {
  return SF_FEEDBACK;
}
