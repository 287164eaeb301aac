/* Linearizability checker: per key, a depth-first search over the order in
 * which operations take effect (Wing & Gong), pruned by a memo of
 * (set of operations already linearized, model state) pairs seen before
 * (Lowe). Bounded: past its budget it answers "unknown", never a false
 * violation. */
#include <simfuzz/linearize.h>
#include <simfuzz/sim.h> /* SIM_ASSERT */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the key-value model ----------------------------------------------- */

static int kv_step(uint64_t state, const sf_lin_op *op, uint64_t *next) {
  int pending = op->ret == SF_LIN_PENDING;
  switch (op->kind) {
  case SF_KV_PUT: *next = op->arg; return 1;
  case SF_KV_DEL: *next = 0; return 1;
  case SF_KV_GET: *next = state; return pending || op->out == state;
  case SF_KV_CAS:
    if (pending) {
      *next = state == op->arg ? op->arg2 : state;
      return 1;
    }
    if (op->out) {
      *next = op->arg2;
      return state == op->arg;
    }
    *next = state;
    return state != op->arg;
  default: return 0;
  }
}

/* A time in ns as seconds with microseconds, like the timelines. */
static void fmt_time(uint64_t ns, char *buf, size_t cap) {
  SIM_ASSERT(cap >= 21); /* "18446744073.709551s" and its NUL: never cut */
  if (ns == SF_LIN_PENDING)
    snprintf(buf, cap, "never");
  else
    snprintf(buf, cap, "%" PRIu64 ".%06" PRIu64 "s", ns / 1000000000u, ns % 1000000000u / 1000u);
}

static int kv_describe(const sf_lin_op *op, char *buf, size_t cap) {
  static const char *const names[] = {"?", "put", "get", "cas", "del"};
  const char *n = op->kind <= SF_KV_DEL ? names[op->kind] : "?";
  char out[32], call[32], ret[32];
  if (op->ret == SF_LIN_PENDING)
    snprintf(out, sizeof out, "pending");
  else
    snprintf(out, sizeof out, "%" PRIu64, op->out);
  fmt_time(op->call, call, sizeof call);
  fmt_time(op->ret, ret, sizeof ret);
  return snprintf(buf, cap,
                  "client %" PRIu32 " %s(key=%" PRIu64 ", %" PRIu64 ", %" PRIu64
                  ") -> %s, called %s, returned %s",
                  op->client, n, op->key, op->arg, op->arg2, out, call, ret);
}

const sf_lin_model sf_kv_model = {"kv", 0, kv_step, kv_describe};

/* ---- memo: a hash set of (bitset, state) ------------------------------- */

typedef struct {
  size_t words;    /* bitset words */
  uint64_t *slots; /* per slot: hash, state, then `words` bitset words */
  uint8_t *used;
  size_t cap, n;
  uint64_t bytes, max_bytes;
} memo;

static size_t slot_words(const memo *m) {
  SIM_ASSERT(m->words >= 1); /* a bit per operation, at least one word */
  return 2 + m->words;
}

static int memo_grow(memo *m) {
  size_t cap = m->cap ? m->cap * 2 : 64;
  uint64_t bytes = (uint64_t)cap * (slot_words(m) * 8 + 1);
  if (bytes > m->max_bytes)
    return -1;
  uint64_t *slots = calloc(cap, slot_words(m) * 8);
  uint8_t *used = calloc(cap, 1);
  if (!slots || !used) {
    free(slots);
    free(used);
    return -1;
  }
  SIM_ASSERT(cap > m->n * 2 && !(cap & (cap - 1)));
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->used[i])
      continue;
    const uint64_t *s = m->slots + i * slot_words(m);
    size_t j = s[0] & (cap - 1);
    while (used[j])
      j = (j + 1) & (cap - 1);
    used[j] = 1;
    memcpy(slots + j * slot_words(m), s, slot_words(m) * 8);
  }
  free(m->slots);
  free(m->used);
  m->slots = slots;
  m->used = used;
  m->cap = cap;
  m->bytes = bytes;
  return 0;
}

/* Insert (bits, state); 1 if it was new, 0 if seen, -1 when out of budget. */
static int memo_add(memo *m, uint64_t h, uint64_t state, const uint64_t *bits) {
  if ((m->n + 1) * 2 > m->cap && memo_grow(m) < 0)
    return -1;
  /* at most half full, a power of two: the probe below always ends */
  SIM_ASSERT(m->cap && !(m->cap & (m->cap - 1)) && m->n * 2 < m->cap);
  h ^= state * 0x9e3779b97f4a7c15ull;
  size_t j = h & (m->cap - 1);
  while (m->used[j]) {
    const uint64_t *s = m->slots + j * slot_words(m);
    if (s[0] == h && s[1] == state && !memcmp(s + 2, bits, m->words * 8))
      return 0; /* compared in full: a hash collision never prunes */
    j = (j + 1) & (m->cap - 1);
  }
  m->used[j] = 1;
  uint64_t *s = m->slots + j * slot_words(m);
  s[0] = h;
  s[1] = state;
  memcpy(s + 2, bits, m->words * 8);
  m->n++;
  return 1;
}

/* ---- per-key search ---------------------------------------------------- */

/* Entries of the doubly linked list of calls and returns, in time order. */
typedef struct {
  size_t op; /* index into the key's ops */
  int is_call;
  size_t match; /* the other entry of the same op */
  size_t prev, next;
} entry;

#define NIL SIZE_MAX

/* Lift entry x out of the list (its neighbours still point past it). */
static void list_lift(entry *e, size_t x) {
  SIM_ASSERT(e[e[x].prev].next == x); /* linked, as list_restore left it */
  e[e[x].prev].next = e[x].next;
  if (e[x].next != NIL) {
    SIM_ASSERT(e[e[x].next].prev == x);
    e[e[x].next].prev = e[x].prev;
  }
}

/* Put a lifted entry back where it was: its own links were kept, and the
 * entries lifted after it are back already (the reverse order of lifting). */
static void list_restore(entry *e, size_t x) {
  SIM_ASSERT(e[e[x].prev].next == e[x].next); /* its neighbours skip it */
  SIM_ASSERT(e[x].next == NIL || e[e[x].next].prev == e[x].prev);
  e[e[x].prev].next = x;
  if (e[x].next != NIL)
    e[e[x].next].prev = x;
}

typedef struct {
  size_t entry;   /* the call entry that was linearized */
  uint64_t state; /* the state before */
} frame;

static uint64_t zobrist(size_t i) {
  uint64_t x = (uint64_t)i * 0xd1b54a32d192ed03ull + 0x8cb92ba72f3d8dd7ull;
  x ^= x >> 31;
  x *= 0x7fb5d329728ea185ull;
  x ^= x >> 27;
  x *= 0x81dadef4bc2dd44dull;
  return x ^ (x >> 33);
}

typedef struct {
  uint64_t t;
  int is_call;
  size_t op;
} tev;

static int tev_cmp(const void *a, const void *b) {
  const tev *x = a, *y = b;
  /* an operation has one call and one return: no two events compare equal */
  SIM_ASSERT(x == y || x->op != y->op || x->is_call != y->is_call);
  if (x->t != y->t)
    return x->t < y->t ? -1 : 1;
  if (x->is_call != y->is_call) /* at equal times, calls first: overlap */
    return x->is_call ? -1 : 1;
  return x->op < y->op ? -1 : x->op > y->op;
}

/* Check one key's ops (pointers into the input). */
static sf_lin_result check_key(const sf_lin_model *mdl, const sf_lin_op *const *ops, size_t n,
                               uint64_t *steps, uint64_t max_steps, uint64_t max_bytes,
                               size_t *failed, size_t *prefix) {
  size_t ne = 2 * n;
  tev *tv = malloc(ne * sizeof *tv);
  entry *e = malloc((ne + 1) * sizeof *e);
  frame *stack = malloc((n + 1) * sizeof *stack);
  memo mm = {(n + 63) / 64, NULL, NULL, 0, 0, 0, max_bytes};
  uint64_t *bits = calloc(mm.words ? mm.words : 1, 8);
  sf_lin_result res = SF_LIN_UNKNOWN;
  size_t completed = 0;
  if (!tv || !e || !stack || !bits)
    goto out;
  for (size_t i = 0; i < n; i++) {
    tv[2 * i] = (tev){ops[i]->call, 1, i};
    tv[2 * i + 1] = (tev){ops[i]->ret, 0, i};
    completed += ops[i]->ret != SF_LIN_PENDING;
  }
  qsort(tv, ne, sizeof *tv, tev_cmp);
  /* entry ne is the list head */
  size_t *call_of = malloc(n * sizeof *call_of);
  if (!call_of)
    goto out;
  for (size_t k = 0; k < ne; k++) {
    e[k].op = tv[k].op;
    e[k].is_call = tv[k].is_call;
    e[k].prev = k == 0 ? ne : k - 1;
    e[k].next = k + 1 < ne ? k + 1 : NIL;
    if (tv[k].is_call)
      call_of[tv[k].op] = k;
  }
  for (size_t k = 0; k < ne; k++)
    if (!e[k].is_call) {
      e[k].match = call_of[e[k].op];
      e[call_of[e[k].op]].match = k;
    }
  free(call_of);
  e[ne].next = ne ? 0 : NIL;
  e[ne].prev = NIL;

  uint64_t state = mdl->initial, h = 0;
  size_t depth = 0, done_completed = 0, best = 0;
  size_t cur = e[ne].next;
  *failed = NIL;
  for (;;) {
    SIM_ASSERT(depth <= n && done_completed <= completed);
    if (done_completed == completed) { /* only pending ops may remain */
      res = SF_LIN_OK;
      break;
    }
    if (++*steps > max_steps)
      break;
    if (cur != NIL && e[cur].is_call) {
      const sf_lin_op *op = ops[e[cur].op];
      uint64_t next;
      int ok = mdl->step(state, op, &next);
      if (ok) {
        size_t i = e[cur].op;
        bits[i / 64] |= 1ull << (i % 64);
        int fresh = memo_add(&mm, h ^ zobrist(i), next, bits);
        if (fresh < 0)
          break; /* memo budget: unknown */
        if (fresh) {
          stack[depth++] = (frame){cur, state};
          state = next;
          h ^= zobrist(i);
          done_completed += op->ret != SF_LIN_PENDING;
          if (depth > best) {
            best = depth;
            *failed = NIL;
          }
          /* lift the op's call and return entries out of the list */
          size_t r = e[cur].match;
          SIM_ASSERT(!e[r].is_call && e[r].match == cur && e[r].op == i);
          list_lift(e, cur);
          list_lift(e, r);
          cur = e[ne].next;
          continue;
        }
        bits[i / 64] &= ~(1ull << (i % 64));
      }
      cur = e[cur].next;
      continue;
    }
    /* a return (or the end) reached before its op was linearized:
     * backtrack */
    if (cur != NIL && depth == best && *failed == NIL)
      *failed = e[cur].op;
    if (depth == 0) {
      res = SF_LIN_VIOLATION;
      break;
    }
    frame f = stack[--depth];
    size_t c = f.entry, r = e[c].match, i = e[c].op;
    SIM_ASSERT(e[c].is_call && bits[i / 64] & (1ull << (i % 64))); /* linearized, so lifted */
    /* put the op's entries back, in reverse order of removal */
    list_restore(e, r);
    list_restore(e, c);
    bits[i / 64] &= ~(1ull << (i % 64));
    h ^= zobrist(i);
    done_completed -= ops[i]->ret != SF_LIN_PENDING;
    state = f.state;
    cur = e[c].next;
  }
  *prefix = best;
out:
  free(tv);
  free(e);
  free(stack);
  free(bits);
  free(mm.slots);
  free(mm.used);
  return res;
}

typedef struct {
  const sf_lin_op *op;
  size_t index;
} keyed;

static int keyed_cmp(const void *a, const void *b) {
  const keyed *x = a, *y = b;
  SIM_ASSERT(x == y || x->index != y->index); /* a total order: indices are distinct */
  if (x->op->key != y->op->key)
    return x->op->key < y->op->key ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

sf_lin_result sf_linearizable(const sf_lin_model *m, const sf_lin_op *ops, size_t n,
                              const sf_lin_budget *budget, sf_lin_report *rep) {
  sf_lin_budget b = {0, 0, 0};
  if (budget)
    b = *budget;
  if (!b.max_steps)
    b.max_steps = 1000000;
  if (!b.max_cache_bytes)
    b.max_cache_bytes = 16ull << 20;
  if (!b.max_ops_per_key)
    b.max_ops_per_key = 4096;
  sf_lin_report r;
  memset(&r, 0, sizeof r);
  r.result = SF_LIN_OK;
  keyed *k = malloc((n ? n : 1) * sizeof *k);
  const sf_lin_op **group = malloc((n ? n : 1) * sizeof *group);
  size_t *index = malloc((n ? n : 1) * sizeof *index);
  if (!k || !group || !index) {
    r.result = SF_LIN_UNKNOWN;
    snprintf(r.message, sizeof r.message, "out of memory");
    goto out;
  }
  for (size_t i = 0; i < n; i++) {
    k[i].op = &ops[i];
    k[i].index = i;
  }
  qsort(k, n, sizeof *k, keyed_cmp);
  int unknown = 0;
  for (size_t lo = 0; lo < n;) {
    size_t hi = lo;
    while (hi < n && k[hi].op->key == k[lo].op->key)
      hi++;
    size_t cnt = hi - lo;
    SIM_ASSERT(cnt >= 1 && hi <= n); /* a key's group: at least the op at lo */
    for (size_t i = 0; i < cnt; i++) {
      group[i] = k[lo + i].op;
      index[i] = k[lo + i].index;
    }
    sf_lin_result kr;
    size_t failed = NIL, prefix = 0;
    if (cnt > b.max_ops_per_key)
      kr = SF_LIN_UNKNOWN;
    else
      kr = check_key(m, group, cnt, &r.steps, b.max_steps, b.max_cache_bytes, &failed, &prefix);
    if (kr == SF_LIN_VIOLATION) {
      SIM_ASSERT(failed == NIL || failed < cnt);
      r.result = SF_LIN_VIOLATION;
      r.key = k[lo].op->key;
      r.ops_on_key = cnt;
      r.prefix = prefix;
      r.failed_op = failed == NIL ? SIZE_MAX : index[failed];
      char d[160] = "?";
      if (failed != NIL && m->describe)
        m->describe(group[failed], d, sizeof d);
      snprintf(r.message, sizeof r.message,
               "key %" PRIu64 " is not linearizable (%zu ops; longest linearizable prefix %zu; "
               "cannot place: %s)",
               r.key, cnt, prefix, d);
      goto out;
    }
    if (kr == SF_LIN_UNKNOWN && !unknown) {
      unknown = 1;
      r.key = k[lo].op->key;
      r.ops_on_key = cnt;
    }
    lo = hi;
  }
  if (unknown) {
    r.result = SF_LIN_UNKNOWN;
    snprintf(r.message, sizeof r.message,
             "unknown: key %" PRIu64 " (%zu ops) exceeded the search budget", r.key, r.ops_on_key);
  }
out:
  free(k);
  free(group);
  free(index);
  if (rep)
    *rep = r;
  return r.result;
}

/* ---- history recording ----------------------------------------------------- */

/* now, or just after the last time recorded: the order of recording is
 * the order of the times (see linearize.h). */
static uint64_t stamp(sf_history *h, uint64_t now) {
  if (h->n > 0 && now <= h->last && h->last < SF_LIN_PENDING - 1)
    now = h->last + 1;
  h->last = now;
  return now;
}

size_t sf_history_invoke(sf_history *h, uint32_t client, uint32_t kind, uint64_t key, uint64_t arg,
                         uint64_t arg2, uint64_t now) {
  size_t max = h->max ? h->max : 100000;
  if (h->n >= max) {
    h->dropped++;
    return SIZE_MAX;
  }
  if (h->n == h->cap) {
    size_t cap = h->cap ? h->cap * 2 : 64;
    if (cap > max)
      cap = max;
    sf_lin_op *ops = realloc(h->ops, cap * sizeof *ops);
    if (!ops) {
      h->dropped++;
      return SIZE_MAX;
    }
    h->ops = ops;
    h->cap = cap;
  }
  SIM_ASSERT(h->n < h->cap && h->cap <= max);
  sf_lin_op *o = &h->ops[h->n];
  o->key = key;
  o->kind = kind;
  o->arg = arg;
  o->arg2 = arg2;
  o->out = 0;
  o->call = stamp(h, now);
  o->ret = SF_LIN_PENDING;
  o->client = client;
  return h->n++;
}

void sf_history_complete(sf_history *h, size_t id, uint64_t out, uint64_t now) {
  if (id >= h->n || h->ops[id].ret != SF_LIN_PENDING)
    return;
  h->ops[id].out = out;
  now = now == SF_LIN_PENDING ? now : stamp(h, now);
  h->ops[id].ret = now < h->ops[id].call ? h->ops[id].call : now;
  SIM_ASSERT(h->ops[id].ret != SF_LIN_PENDING || now == SF_LIN_PENDING); /* completed now */
}

sf_lin_result sf_history_check(const sf_history *h, const sf_lin_model *m,
                               const sf_lin_budget *budget, sf_lin_report *rep) {
  SIM_ASSERT(h->n <= h->cap && (h->n == 0 || h->ops));
  if (h->dropped) {
    if (rep) {
      memset(rep, 0, sizeof *rep);
      rep->result = SF_LIN_UNKNOWN;
      snprintf(rep->message, sizeof rep->message,
               "unknown: %zu operations were not recorded (history full)", h->dropped);
    }
    return SF_LIN_UNKNOWN;
  }
  return sf_linearizable(m, h->ops, h->n, budget, rep);
}

void sf_history_free(sf_history *h) {
  SIM_ASSERT(h->n <= h->cap && (h->cap == 0 || h->ops)); /* sf_history_call's pair */
  free(h->ops);
  memset(h, 0, sizeof *h);
}
