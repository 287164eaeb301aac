/* Private structures of the simulator, shared by the files of sim/ only. */
#ifndef SIMFUZZ_SIM_INTERNAL_H
#define SIMFUZZ_SIM_INTERNAL_H

#include <simfuzz/sim.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

/* Purposes of internal decision streams (user streams use >= 0x80). A
 * fault added since has its stream named by its trace kind, P_EV(kind),
 * so that it needs no row here. */
/* In a function of the public API returning an errno code: a node number
 * out of range is -EINVAL. */
#define SIM__CHECK_NODE(w, i)                                                                      \
  do {                                                                                             \
    if ((i) < 0 || (i) >= (w)->n)                                                                  \
      return -EINVAL;                                                                              \
  } while (0)

#define P_EV(kind) (0x40u + (unsigned)(kind))
_Static_assert(SIM_EV__COUNT < 0x40, "P_EV: a purpose per trace kind below 0x80");
enum {
  P_LAT = 1,
  P_LOSS,
  P_DUP,
  P_DUPLAT,
  P_CORRUPT,
  P_CORRUPTBIT,
  P_REORDER,
  P_REORDERLAT,
  P_SCHED,
  P_DISK,
  P_DISKEIO,
  P_FP_EN,
  P_FP,
  P_SEGLOSS,
  P_SEGLAT,
  P_CONNLAT
};

/* Scheduler event kinds. */
enum {
  EVK_BOOT = 1,
  EVK_MSG,
  EVK_SEG,
  EVK_TIMER,
  EVK_SYN,
  EVK_CONNTO,
  EVK_NOTIFY,
  EVK_CALL,
  EVK_LIVE,
  EVK_DEAD
};

/* A pending event in the scheduler's heap, ordered by (time, key). The
 * key is (priority << 40) | sequence; the priority (the tie-break draw)
 * matters only between events of the same time, so it is drawn when two
 * such events first meet: until then k holds the draw's index and the
 * key's top bits the node + 1 (k == HEAP_DRAWN once drawn). */
typedef struct {
  uint64_t time, key;
  uint32_t ev;
  uint32_t k;
} heap_ent;

#define HEAP_DRAWN UINT32_MAX

typedef struct {
  uint32_t gen;  /* bumped on free: stale handles are detected */
  uint8_t kind;  /* EVK_*; 0 when free */
  uint8_t sub;   /* NOTIFY: sim_conn_event */
  int16_t node;  /* target node, -1 for world events */
  int16_t peer;  /* NOTIFY: the connection's other end */
  uint32_t inc;  /* target node incarnation when scheduled */
  uint32_t next; /* free list / deferred list */
  union {
    uint32_t idx; /* MSG, SEG: message; SYN, CONNTO: connection slot */
    uint64_t tag; /* TIMER: user tag; NOTIFY: connection handle */
    struct {
      sim_call_fn fn;
      void *arg;
    } call;
  } u;
} ev_t;

enum { MF_HELD = 1, MF_FORCED = 2, MF_FIN = 4, MF_SYNACK = 8, MF_DUP = 16 };

typedef struct {
  uint8_t *data;
  uint32_t len, cap;
  uint32_t ev;         /* pending delivery event, NONE if held/queued */
  uint32_t prev, next; /* link in-flight list, held list or connection queue */
  uint32_t kind;       /* classifier result */
  uint32_t conn;       /* connection slot for segments, NONE for datagrams */
  uint64_t id;         /* message id, for traces */
  uint64_t at;         /* segments: intended arrival */
  int16_t from, to;
  uint8_t flags;
  uint8_t dir; /* segments: 0 = a->b, 1 = b->a */
} msg_t;

typedef struct {
  uint32_t head, tail, n;
} mlist;

typedef struct {
  sim_link_params p;
  uint8_t blocked, held;
  uint8_t faulty;      /* any random fault or bandwidth/queue limit configured */
  uint64_t seq;        /* datagrams sent on the link (decision index) */
  uint64_t busy_until; /* bandwidth: link busy transmitting until */
  mlist fly;           /* in flight, in send order */
  mlist hold;          /* held */
} link_t;

typedef struct {
  uint8_t **cpage, **dpage; /* page tables of the cached and durable images */
  uint32_t npages;          /* entries in each table */
  uint64_t size, dsize;
  uint32_t *dirty;  /* dirty sector indices */
  uint8_t *isdirty; /* per sector flag */
  uint32_t ndirty, dirtycap;
  uint32_t fail_nth[3];
  uint64_t ops[3];
  uint32_t decided;   /* crash/EIO decisions so far (decision index base) */
  uint64_t stall_end; /* world time a stall ends (sim_disk_stall); 0: none */
  sim_disk_params p;
} disk_t;

typedef struct {
  void *data;
  uint8_t up, paused;
  uint8_t booting;  /* a restart's boot event is pending (sim_node_restart) */
  uint32_t inc;     /* incarnation: bumped on crash */
  uint32_t version; /* the code its boots run (sim_node_set_version) */
  uint64_t evseq;   /* node's own scheduling counter (tie-break identity) */
  uint64_t rnd;     /* sim_node_random counter */
  uint32_t timers;  /* pending timers */
  uint32_t dhead, dtail, ndeferred;
  int64_t clk_off; /* local = true + clk_off + drift since anchor */
  int32_t drift;   /* ppm */
  uint64_t anchor;
  int64_t mono_drift; /* monotonic clock: drift accumulated before anchor */
  disk_t disk;
} node_t;

enum { CS_FREE = 0, CS_CONNECTING, CS_OPEN };

typedef struct {
  mlist q;
  uint64_t last_at, stall_since, seq;
} cdir_t;

typedef struct {
  uint32_t gen;
  uint8_t state;
  uint8_t open[2]; /* end a (0) / b (1) still holds a live handle */
  uint8_t up[2];   /* end is established (may send) */
  int16_t end[2];  /* node of end a (initiator) and b */
  uint32_t inc[2];
  uint32_t timeout_ev;
  uint32_t next; /* free list */
  cdir_t d[2];   /* d[0]: a->b, d[1]: b->a */
} conn_t;

typedef struct {
  uint32_t key; /* site, or node<<24 ^ site for counters */
  uint32_t used;
  int64_t val;
} fp_ent;

#define FP_SLOTS 256

struct sim_world {
  sim_config cfg;
  int n;
  uint64_t now;
  int ev_node;        /* node of the event being (or last) dispatched, -1: world */
  uint64_t seq;       /* scheduling sequence */
  uint64_t wseq;      /* world events' scheduling counter */
  uint64_t rnd_world; /* sim_node_random(w, -1) counter */
  uint64_t msg_id;
  uint8_t tape[SIM_TAPE_MAX];
  uint32_t tape_len;

  heap_ent *heap;
  uint32_t heap_n, heap_cap;
  uint8_t hole; /* the root is the event being dispatched: the first event
                   scheduled meanwhile replaces it (one sift, not two) */
  ev_t *ev;
  uint32_t ev_cap, ev_free;

  msg_t *msg;
  uint32_t msg_cap, msg_free, inflight;

  conn_t *conn;
  uint32_t conn_cap, conn_free, conns_open;

  node_t *node;
  link_t **link; /* n rows of n links: link[from][to] (rows, not one n*n
                    block, so that a 64-node world's links come from the
                    allocator's caches instead of a fresh mapping per run) */

  fp_ent *fp_force, *fp_count, *fp_nth; /* lazily allocated */
  struct sim__mem *mem;                 /* the deterministic heap (heap.c), lazily */

  /* trace */
  uint64_t trace_n, trace_hash; /* records so far, their fingerprint */
  sim_trace_rec *ring;
  uint32_t ring_cap; /* power of two */

  sim_stats stats;
  sim_budget budget; /* SIM_BUDGET_NONE until a budget stops the run */
  uint8_t stopped;   /* failure or budget */
  uint8_t finished;
  uint8_t live_armed;
  uint32_t live_ev;
  uint64_t live_from; /* when the open liveness window opened (its event fires at its end) */
  sim_failure fail;
  uint8_t failed;
};

/* splitmix64 finaliser (the public sim_mix64) */
static inline uint64_t sim__mix(uint64_t x) {
  return sim_mix64(x);
}

/* stream id: purpose (8 bits), a (24 bits), b (32 bits) */
static inline uint64_t sim__sid(unsigned purpose, uint32_t a, uint32_t b) {
  return ((uint64_t)(purpose & 0xff) << 56) ^ ((uint64_t)(a & 0xffffff) << 32) ^ b;
}

/* ---- Decisions (inline: several per event; sim_draw & co. wrap these) ---- */

static inline uint64_t sim__draw(const sim_world *w, uint64_t stream, uint64_t n) {
  /* x identifies the decision (and its tape slot); v is its value */
  uint64_t x = sim__mix((stream * 0x9e3779b97f4a7c15ull + w->cfg.seed) ^
                        (n * 0xd6e8feb86659fd93ull + 0x632be59bd9b4e019ull));
  uint64_t v = sim__mix(x + 0x8cb92ba72f3d8dd7ull);
  if (w->tape_len) {
    uint32_t slot = (uint32_t)(x >> 52); /* 12 bits: SIM_TAPE_MAX slots */
    if (slot < w->tape_len)
      v = (v & 0x00ffffffffffffffull) | ((uint64_t)w->tape[slot] << 56);
  }
  return v;
}

static inline int sim__chance(const sim_world *w, uint64_t stream, uint64_t n, uint32_t ppm) {
  if (ppm == 0)
    return 0;
  if (ppm >= SIM_PPM)
    return 1;
  uint64_t u = ((sim__draw(w, stream, n) >> 32) * SIM_PPM) >> 32;
  return u < ppm;
}

static inline uint64_t sim__range(const sim_world *w, uint64_t stream, uint64_t n, uint64_t lo,
                                  uint64_t hi) {
  if (hi <= lo)
    return lo;
  uint64_t span = hi - lo;
  uint64_t v = sim__draw(w, stream, n);
  if (span == UINT64_MAX)
    return v;
  /* Multiply-high keeps the top (tape-controlled) bits significant. */
  uint64_t s1 = span + 1, hi32 = v >> 32, lo32 = v & 0xffffffffu;
  uint64_t r =
      hi32 * (s1 >> 32) + ((hi32 * (s1 & 0xffffffffu)) >> 32) + ((lo32 * (s1 >> 32)) >> 32);
  return lo + (r > span ? span : r);
}

/* world.c */
uint32_t sim__sched(sim_world *w, uint64_t t, uint8_t kind, int node);
/* The world and node whose code is running in this thread (sim_current).
 * Set around every call into user code and restored afterwards, so it
 * never outlives a run. */
typedef struct {
  sim_world *w;
  int node;
} sim__cur_t;
extern _Thread_local sim__cur_t sim__cur;

/* Run `call` as `node` of w (node -1: world-level code). */
#define SIM__AS(world, nd, call)                                                                   \
  do {                                                                                             \
    sim__cur_t saved_ = sim__cur;                                                                  \
    sim__cur.w = (world);                                                                          \
    sim__cur.node = (nd);                                                                          \
    call;                                                                                          \
    sim__cur = saved_;                                                                             \
  } while (0)

/* Return event e to the pool (inline: one per dispatched event). */
static inline void sim__ev_free(sim_world *w, uint32_t e) {
  SIM_ASSERT(e < w->ev_cap);
  ev_t *x = &w->ev[e];
  x->kind = 0;
  x->gen++;
  x->next = w->ev_free;
  w->ev_free = e;
}
void sim__ev_cancel(sim_world *w, uint32_t e);
/* Set a link's parameters, and whether it has any random fault or limit
 * (the one test of "faulty": the datagram paths' fast path skips the rest). */
void sim__link_params(link_t *l, const sim_link_params *p);
void sim__budget_stop(sim_world *w, sim_budget why);
/** The host refused the simulator memory: the run stops (SIM_BUDGET_MEMORY)
 *  and no failure after this counts. */
#define sim__out_of_memory(w) sim__budget_stop((w), SIM_BUDGET_MEMORY)
uint64_t sim__local_to_true(const node_t *nd, uint64_t d);

/* ---- Trace records (inline: two per delivered message) ---- */

/* The k (1..8) bytes at p as a big-endian number. */
static inline uint64_t sim__load_be(const uint8_t *p, size_t k) {
  uint64_t v = 0;
  if (k == 8) {
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap64(v);
#elif !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_BIG_ENDIAN__
#error "unknown byte order"
#endif
    return v;
  }
  for (size_t i = 0; i < k; i++)
    v = v << 8 | p[i];
  return v;
}

/* Append a record to the ring and the fingerprint, and pass it to the
 * trace hook (inline, for the hot paths; sim__trace below otherwise). The
 * fingerprint takes one multiply-rotate step per record, of the xor of the
 * record's words each multiplied by its own odd constant: the products are
 * independent of each other and of the chain, so a record costs about one
 * multiply's latency. Payload bytes enter where they are produced (send,
 * disk write, corruption), as big-endian words (the same on every host).
 * sim_trace_hash() finalises. */
static inline __attribute__((always_inline)) void
sim__trace_inline(sim_world *w, unsigned kind, unsigned reason, int node, int peer, uint64_t a,
                  uint64_t b, uint32_t msg_kind, const void *payload, size_t len) {
  SIM_ASSERT(kind < SIM_EV__COUNT && node >= -1 && node < w->n && peer >= -1 && peer < w->n);
  sim_trace_rec *r = &w->ring[w->trace_n & (w->ring_cap - 1)];
  r->index = w->trace_n++;
  r->time = w->now;
  r->kind = (uint16_t)kind;
  r->reason = (uint16_t)reason;
  r->node = (int16_t)node;
  r->peer = (int16_t)peer;
  r->msg_kind = msg_kind;
  r->len = (uint32_t)len;
  r->a = a;
  r->b = b;
  size_t pl = len < SIM_TRACE_PREFIX ? len : SIM_TRACE_PREFIX;
  r->prefix_len = (uint8_t)(payload ? pl : 0);
  if (payload && pl == SIM_TRACE_PREFIX) /* the common case, a fixed-size copy */
    memcpy(r->prefix, payload, SIM_TRACE_PREFIX);
  else if (payload && pl)
    memcpy(r->prefix, payload, pl);
  uint64_t u = w->now * 0x9e3779b97f4a7c15ull ^
               ((uint64_t)kind | (uint64_t)reason << 16 | (uint64_t)(uint16_t)node << 32 |
                (uint64_t)(uint16_t)peer << 48) *
                   0xc2b2ae3d27d4eb4full ^
               a * 0x165667b19e3779f9ull ^
               (b ^ ((uint64_t)msg_kind << 32 | (uint64_t)(uint32_t)len)) * 0xd6e8feb86659fd93ull;
  if (payload && pl &&
      (kind == SIM_EV_SEND || kind == SIM_EV_DISK_WRITE || kind == SIM_EV_CORRUPT ||
       kind == SIM_EV_OUTPUT)) {
    static const uint64_t mul[] = {0x27d4eb2f165667c5ull, 0x94d049bb133111ebull,
                                   0xbf58476d1ce4e5b9ull};
    _Static_assert(sizeof mul / sizeof mul[0] * 8 == SIM_TRACE_PREFIX, "a constant per word");
    const uint8_t *p = payload;
    if (pl == SIM_TRACE_PREFIX) /* the common case: three whole words, no loop */
      u ^= sim__load_be(p, 8) * mul[0] ^ sim__load_be(p + 8, 8) * mul[1] ^
           sim__load_be(p + 16, 8) * mul[2];
    else
      for (size_t i = 0; i < pl; i += 8)
        u ^= sim__load_be(p + i, pl - i < 8 ? pl - i : 8) * mul[i / 8];
  }
  uint64_t h = (w->trace_hash ^ u) * 0x9fb21c651e98df25ull;
  w->trace_hash = ((h << 29) | (h >> 35)) ^ 0x632be59bd9b4e019ull;
  if (w->cfg.trace)
    w->cfg.trace(w->cfg.trace_ctx, w, r, payload, len);
}

/* The same, out of line (trace.c), for the many call sites off the hot
 * paths: sim__trace_inline is for the records of every message and timer. */
void sim__trace(sim_world *w, unsigned kind, unsigned reason, int node, int peer, uint64_t a,
                uint64_t b, uint32_t msg_kind, const void *payload, size_t len);

/* Pools (events, messages, connections): arrays of elements with a uint32_t
 * free-list link at next_off. Grow one from *cap to the smaller of twice
 * as many (first, if empty) and limit elements; the new elements are zeroed
 * and become the free list (lowest index first). Returns the array to use,
 * or NULL if it cannot grow (arr and *cap unchanged). */
void *sim__pool_grow(void *arr, uint32_t *cap, uint32_t *free_head, size_t elem, size_t next_off,
                     uint32_t first, uint32_t limit);

/* net.c */
uint32_t sim__msg_alloc(sim_world *w, const void *data, size_t len);
void sim__msg_free(sim_world *w, uint32_t m);
void sim__ml_push(sim_world *w, mlist *l, uint32_t m);
void sim__ml_remove(sim_world *w, mlist *l, uint32_t m);
void sim__deliver_msg(sim_world *w, uint32_t e);
void sim__net_purge_node(sim_world *w, int node);
void sim__net_free(sim_world *w);

/* stream.c */
void sim__seg_event(sim_world *w, uint32_t e);
void sim__syn_event(sim_world *w, uint32_t e);
void sim__connto_event(sim_world *w, uint32_t e);
void sim__notify_event(sim_world *w, uint32_t e);
void sim__conn_purge_node(sim_world *w, int node);
void sim__conn_free_all(sim_world *w);
/* The later of t and the arrival of the last segment queued on any
 * connection (sim_in_flight_due). */
uint64_t sim__conn_due(const sim_world *w, uint64_t t);

/* heap.c: give back the world's deterministic heap (its blocks die with it) */
void sim__mem_release(sim_world *w);

/* disk.c */
void sim__disk_crash(sim_world *w, int node);
void sim__disk_free(disk_t *d);

#endif
