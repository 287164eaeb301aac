/*
 * craft_kv: a key-value store replicated with canonical/raft (Debian's
 * libraft-dev, a library nobody here wrote), as a simfuzz target.
 *
 * Each node runs an unmodified raft instance on craft_io (craft_io.h: the
 * simulator as raft's network, disk, clock and randomness) with a small
 * key-value state machine. Client operations from the scenario go to the
 * node they name, or to the leader it knows: PUT, GET and CAS become raft
 * log entries (raft_apply); a fourth kind asks for a leadership transfer.
 * A raft instance that stops after an error (RAFT_UNAVAILABLE) is
 * restarted, as a process supervisor would.
 *
 * Built from a source tree (CRAFT_FROM_SOURCE, bugs/trees.sh), the workload
 * is wider: pre-vote is on in half of the runs (a choice of the scenario),
 * snapshots in an independent half (a snapshot every 2-17 applied entries,
 * keeping 1-8 of them, so that a follower that falls behind gets an
 * InstallSnapshot; the state machine's snapshot is its keys' values), a
 * transfer names its target (op value % (nodes + 1); 0 lets raft pick),
 * and a transfer operation whose key is 3 mod 4 is a membership change
 * instead (a server made voter, standby or spare, removed, or added
 * back). Several entries reach raft_apply() at once when a scenario's
 * client operation repeats with no interval (raft since 2024 asserts one
 * buffer per raft_apply()). Debian's build keeps the workload its
 * regression scenarios were found with.
 *
 * Three builds of this file:
 *   craft_kv         disk errors are fail-stop (the node crashes, raft never
 *                    sees them), allocations do not fail: looks for protocol
 *                    bugs under every network, crash and clock fault
 *   craft_kv_errors  (CRAFT_ERRORS) disk errors are returned to raft and its
 *                    allocations can fail (a FaultPoint step with
 *                    k = SIM_FAULTPOINT_ALLOC): raft's error paths
 *   craft_kv_uninit  (CRAFT_RAW_MALLOC) raft's memory is not zero-filled
 * and, for source trees only, CRAFT_ALLOC_FAULTS alone: allocations can
 * fail, disk errors stay fail-stop (releases since 2024 assert that the v0
 * backend never returns a disk error).
 *
 * Oracles, from the Raft paper (figure 3):
 *   election_safety      at most one leader per term (after every event)
 *   log_matching         two logs with an entry of the same index and term
 *                        are identical up to it (after every change of a log;
 *                        checked pairwise: the same entry there and the same
 *                        term before it, so that logs that start after a
 *                        snapshot are checked too)
 *   leader_completeness  a new leader's log holds every entry committed
 *                        in an earlier term (when a node becomes leader;
 *                        entries in its snapshot count as held).
 *                        The term an entry was committed in is the current
 *                        term of the first node seen to commit it (the
 *                        leader). A node may still win an older term after
 *                        a commit, with votes granted before it and
 *                        delivered late: Raft allows that, and such a
 *                        leader cannot commit anything
 *   committed_stable     an index, once committed anywhere, is committed
 *                        with the same entry everywhere (after every event)
 *   state_machine_safety no two nodes apply different commands at an index
 *   linearizable         the clients' history is linearizable (end of run,
 *                        the key-value model of linearize.h)
 *   send_to_no_server    (craft_io) raft addresses every message to a server
 *                        id of the cluster, never to 0 ("no leader known")
 *   install_snapshot_term (craft_io) an InstallSnapshot names the term of
 *                        the snapshot loaded for it, not an older one's
 *                        (cowsql-raft finding 2, every tree: bugs/background)
 *   liveness             after every fault is healed, one leader that every
 *                        node it replicates to (voters and standbys of its
 *                        configuration) follows, every commit index at the
 *                        leader's
 */
#include "craft_compat.h"
#include "craft_io.h"
#include <simfuzz/linearize.h>
#include <simfuzz/simfuzz.h>
#include <simfuzz/simfuzz_libc.h>
#include <simfuzz/simfuzz_wire.h>

#include <raft.h>
#include <stdlib.h>
#include <string.h>

#if defined(CRAFT_ERRORS) && !defined(CRAFT_ALLOC_FAULTS)
#define CRAFT_ALLOC_FAULTS 1 /* raft's allocations can fail */
#endif

enum {
  KEYS = 8,
  MAX_INDEX = 8192,           /* committed entries tracked (the disk holds about as many) */
  MAX_TERMS = 4096,           /* terms tracked for election safety */
  LM_CAP = 1u << 15,          /* (index, term) pairs tracked for log matching */
  LM_FIRST = 1u << 10,        /* the table's first size: it doubles at half full */
  ELECTION_MS = 300,          /* raft's election timeout (randomized up to 2x) */
  HEARTBEAT_MS = 50,          /* raft's heartbeat timeout */
  INSTALL_SNAPSHOT_MS = 1000, /* raft's install snapshot timeout (source builds) */
  OP_PUT = 0,
  OP_GET = 1,
  OP_CAS = 2,
  OP_TRANSFER = 3,
  STREAM_RUN = 0x81 /* sim_draw() stream of the run's own choices (pre-vote) */
};

typedef struct cluster cluster;
typedef struct cnode cnode;

/* A client request in flight on a node. */
typedef struct creq {
  struct raft_apply apply;
  struct raft_transfer transfer;
  struct raft_change change;
  cnode *cn;
  size_t hist; /* history id, SIZE_MAX for transfers */
  struct creq *next;
} creq;

struct cnode {
  struct raft raft;
  struct raft_io io;
  struct raft_fsm fsm;
  cluster *c;
  int node;
  int inited, started, closed;
  uint64_t kv[KEYS];
  creq *reqs;
  uint64_t log_fp;        /* shape of the log at the last log-matching check */
  raft_index commit_seen; /* commit index already recorded */
};

typedef struct {
  uint64_t index, term, hash; /* an entry's hash, and the term of the one before it: */
  uint64_t prev;              /* LM_UNKNOWN if no log that had it showed that one */
} lm_ent;

struct cluster {
  int n;
  sf_history hist;
  raft_term leader_term[MAX_TERMS];
  raft_id leader_id[MAX_TERMS];
  unsigned char leader_elected[MAX_TERMS]; /* 0: the term's leader never stood for election */
  raft_term follower_of[SIM_MAX_NODES];    /* a node's term when last seen a follower, else 0 */
  uint64_t commit_term[MAX_INDEX + 1], commit_hash[MAX_INDEX + 1];
  uint64_t commit_in[MAX_INDEX + 1]; /* the term an index was committed in */
  raft_index committed;              /* highest index known committed */
  uint64_t applied_hash[MAX_INDEX + 1];
  lm_ent *lm; /* open addressing, lm_cap slots (a power of two) */
  size_t lm_n, lm_cap;
  unsigned short last_state[SIM_MAX_NODES];
  raft_term last_term[SIM_MAX_NODES];
  struct ahdr *arena[SIM_MAX_NODES]; /* raft's live allocations per node */
  struct ahdr *quar[SIM_MAX_NODES];  /* blocks raft freed, oldest first (arena_free) */
  struct ahdr *quar_tail[SIM_MAX_NODES];
  uint32_t nquar[SIM_MAX_NODES];
  uint32_t perturb; /* craft_kv_uninit: allocations so far */
};

/* The cluster and node an allocation belongs to: the running node's. */
static cluster *arena_owner(int *node) {
  sim_world *w = sim_current(node);
  if (!w || *node < 0)
    return NULL;
  return sim_ctx(w);
}

static void arena_link(struct ahdr *h);
static void arena_unlink(struct ahdr *h);

/* ---- raft's memory: one arena per node ------------------------------------
 *
 * raft_heap_set() routes every allocation of raft through these hooks,
 * which file it under the node whose code is running (sim_current()). A
 * crashed process runs no code: crash teardown drops the node's arena
 * without calling into raft, exactly as a process's memory vanishes.
 *
 * canonical/raft 0.15 encodes a configuration into a raft_malloc() buffer
 * padded to 8 bytes and never writes the padding: up to 7 bytes of stale
 * heap memory go to disk and to the peers, and replicas of one entry differ
 * (docs/findings/canonical-raft.md). Zero-filled memory keeps every run a
 * function of its scenario; craft_kv_uninit (CRAFT_RAW_MALLOC) shows the
 * defect: like a debugging allocator (glibc's MALLOC_PERTURB_), it fills
 * memory raft did not ask to be zeroed with a byte that differs from one
 * allocation to the next, so the padding differs between replicas in every
 * build (the C library's and AddressSanitizer's allocators alike) and every
 * run. In craft_kv_errors (CRAFT_ERRORS) allocations can fail, when fault
 * point SIM_FAULTPOINT_ALLOC fires.
 *
 * A block raft frees is not given back at once: it waits in a quarantine of
 * the node's last QUARANTINE frees, marked freed, as AddressSanitizer's
 * allocator does. Freeing it again, which would corrupt the heap and make
 * the run depend on the allocator, is the invariant heap_misuse instead, in
 * every build (a double free older than the quarantine goes unseen). */

enum { ARENA_LIVE = 0x6c697665u, ARENA_FREED = 0x66726565u, QUARANTINE = 64 };

typedef struct ahdr {
  struct ahdr *prev, *next;
  cluster *owner; /* NULL: allocated outside a node (not in an arena) */
  int node;
  uint32_t magic; /* ARENA_LIVE, then ARENA_FREED in the quarantine */
  size_t size;
  void *base; /* 48 bytes in all: payloads stay 16-byte aligned */
} ahdr;
_Static_assert(sizeof(ahdr) % 16 == 0, "aligned payloads");

/* Blocks come from the running world's deterministic heap (sim_heap_alloc):
 * at the same addresses in every process, so that raft reading a pointer's
 * bits (docs/findings/cowsql-raft.md, finding 6) does not make a run depend
 * on ASLR. */
static void *raw_alloc(size_t n) {
#if defined(CRAFT_ALLOC_FAULTS)
  return sf_malloc(n); /* fails when the fault point fires */
#else
  sim_world *w = sim_current(NULL);
  void *p = w ? sim_heap_alloc(w, n) : malloc(n);
  SIM_ASSERT(!p || !w || !sim_heap_fixed(w) || sim_heap_owns(p)); /* raft's bytes at fixed places */
  return p;
#endif
}

static void raw_free(void *p) {
  sf_free(p); /* the heap's block to the heap, the C library's to free() */
}

static void *arena_alloc(size_t align, size_t n, int zero) {
  if (align < 16)
    align = 16;
  if (n > SIZE_MAX / 2)
    return NULL;
  uint8_t *base = raw_alloc(sizeof(ahdr) + n + (align > 16 ? align : 0));
  if (!base)
    return NULL;
  uintptr_t p = (uintptr_t)(base + sizeof(ahdr));
  p = (p + align - 1) / align * align;
  ahdr *h = (ahdr *)(p - sizeof(ahdr));
  h->base = base;
  h->size = n;
  h->owner = arena_owner(&h->node);
  h->magic = ARENA_LIVE;
  arena_link(h);
#if defined(CRAFT_RAW_MALLOC)
  if (!zero) { /* perturbed, never what the last run or another node had */
    memset((void *)p, (int)(0xa5u + 29u * (h->owner ? h->owner->perturb++ : 0u)) & 0xff, n);
    return (void *)p;
  }
#endif
  memset((void *)p, 0, n);
  return (void *)p;
}

static void arena_link(ahdr *h) {
  h->prev = NULL;
  h->next = h->owner ? h->owner->arena[h->node] : NULL;
  if (h->next)
    h->next->prev = h;
  if (h->owner)
    h->owner->arena[h->node] = h;
}

static void arena_unlink(ahdr *h) {
  if (!h->owner)
    return;
  if (h->prev)
    h->prev->next = h->next;
  else
    h->owner->arena[h->node] = h->next;
  if (h->next)
    h->next->prev = h->prev;
}

/* Free everything raft holds for a node (its process is gone). Returns the
 * number of blocks. */
static size_t arena_drop(cluster *c, int node) {
  size_t n = 0;
  while (c->arena[node]) {
    ahdr *h = c->arena[node];
    c->arena[node] = h->next;
    raw_free(h->base);
    n++;
  }
  while (c->quar[node]) {
    ahdr *h = c->quar[node];
    c->quar[node] = h->next;
    raw_free(h->base);
  }
  c->quar_tail[node] = NULL;
  c->nquar[node] = 0;
  return n;
}

static void arena_free(void *p) {
  if (!p)
    return;
  ahdr *h = (ahdr *)((uint8_t *)p - sizeof(ahdr));
  if (h->magic != ARENA_LIVE) {
    int node;
    sim_world *w = sim_current(&node);
    if (w)
      SIM_INVARIANT(w, node, 0, "heap_misuse", "raft freed a block of %zu bytes %s", h->size,
                    h->magic == ARENA_FREED ? "twice" : "that it did not allocate");
    return; /* the run has failed: the block stays as it is */
  }
  arena_unlink(h);
  h->magic = ARENA_FREED;
  cluster *c = h->owner;
  if (!c) {
    raw_free(h->base);
    return;
  }
  int node = h->node;
  h->next = NULL;
  if (c->quar_tail[node])
    c->quar_tail[node]->next = h;
  else
    c->quar[node] = h;
  c->quar_tail[node] = h;
  if (++c->nquar[node] > QUARANTINE) { /* the oldest goes back to the C library */
    ahdr *old = c->quar[node];
    c->quar[node] = old->next;
    c->nquar[node]--;
    raw_free(old->base);
  }
  SIM_ASSERT(c->quar[node] && c->nquar[node] <= QUARANTINE);
}

static void *h_malloc(void *d, size_t n) {
  (void)d;
  return arena_alloc(16, n, 0);
}
static void h_free(void *d, void *p) {
  (void)d;
  arena_free(p);
}
static void *h_calloc(void *d, size_t n, size_t sz) {
  (void)d;
  return sz && n > SIZE_MAX / sz ? NULL : arena_alloc(16, n * sz, 1);
}
static void *h_realloc(void *d, void *p, size_t n) {
  (void)d;
  if (!p)
    return arena_alloc(16, n, 0);
  ahdr *h = (ahdr *)((uint8_t *)p - sizeof(ahdr));
  void *q = arena_alloc(16, n, 0);
  if (!q)
    return NULL; /* the old block is unchanged, as realloc leaves it */
  memcpy(q, p, h->size < n ? h->size : n);
  arena_free(p);
  return q;
}
static void *h_aligned(void *d, size_t a, size_t n) {
  (void)d;
  return a && (a & (a - 1)) == 0 ? arena_alloc(a, n, 0) : NULL;
}
static void h_aligned_free(void *d, size_t a, void *p) {
  (void)d;
  (void)a;
  arena_free(p);
}
static struct raft_heap heap = {NULL,      h_malloc,  h_free,        h_calloc,
                                h_realloc, h_aligned, h_aligned_free};

#if defined(CRAFT_ERRORS)
#define DISK_ERRORS CRAFT_RETURN_ERRORS
#else
#define DISK_ERRORS CRAFT_FAIL_STOP
#endif

/* ---- log helpers (raft's in-memory log: craft_compat.h) ---------------- */

static uint64_t entry_hash(const struct raft_entry *e) {
  return sf_checksum(e->term * 4 + e->type, e->buf.base, e->buf.len);
}

/* ---- the state machine --------------------------------------------------- */

/* Command: u8 op, u64 key, u64 arg, u64 arg2, u32 seq. */
static int fsm_apply(struct raft_fsm *fsm, const struct raft_buffer *buf, void **result) {
  cnode *cn = fsm->data;
  cluster *c = cn->c;
  sim_world *w = sim_current(NULL);
  raft_index index = cn->raft.last_applied + 1;
  uint64_t h = sf_checksum(0, buf->base, buf->len);
  if (w && index <= MAX_INDEX) {
    SIM_INVARIANT(w, cn->node, !c->applied_hash[index] || c->applied_hash[index] == h,
                  "state_machine_safety",
                  "n%d applies a different command at index %llu than another node", cn->node,
                  (unsigned long long)index);
    if (!c->applied_hash[index])
      c->applied_hash[index] = h;
  }
  sf_dec d;
  sf_dec_init(&d, buf->base, buf->len);
  unsigned op = sf_dec_u8(&d);
  uint64_t key = sf_dec_u64(&d) % KEYS, arg = sf_dec_u64(&d), arg2 = sf_dec_u64(&d);
  uint64_t out = 0;
  if (sf_dec_ok(&d)) {
    if (op == SF_KV_PUT) {
      cn->kv[key] = arg;
    } else if (op == SF_KV_GET) {
      out = cn->kv[key];
    } else if (op == SF_KV_CAS) {
      out = cn->kv[key] == arg;
      if (out)
        cn->kv[key] = arg2;
    }
  }
  *result = (void *)(uintptr_t)(out + 1); /* never NULL */
  return 0;
}

/* The state machine's snapshot: the keys' values, in one buffer of raft's
 * memory (raft frees it once stored). */
static int fsm_snapshot(struct raft_fsm *fsm, struct raft_buffer *bufs[], unsigned *n) {
  cnode *cn = fsm->data;
  struct raft_buffer *b = raft_malloc(sizeof *b);
  uint8_t *data = raft_malloc(8 * KEYS);
  if (!b || !data) {
    raft_free(b);
    raft_free(data);
    return RAFT_NOMEM;
  }
  for (int k = 0; k < KEYS; k++)
    sf_put64(data + 8 * k, cn->kv[k]);
  b->base = data;
  b->len = 8 * KEYS;
  *bufs = b;
  *n = 1;
  return 0;
}

/* Back to a snapshot's state; the buffer is the state machine's to free
 * (as raft's own test state machine does). */
static int fsm_restore(struct raft_fsm *fsm, struct raft_buffer *buf) {
  cnode *cn = fsm->data;
  if (buf->len != 8 * KEYS)
    return RAFT_MALFORMED;
  for (int k = 0; k < KEYS; k++)
    cn->kv[k] = sf_get64((const uint8_t *)buf->base + 8 * k);
  raft_free(buf->base);
  return 0;
}

/* ---- nodes --------------------------------------------------------------- */

static void *create(int n) {
  cluster *c = calloc(1, sizeof *c);
  if (!c)
    return NULL;
  c->n = n;
  c->lm_cap = LM_FIRST; /* small: a run zeroes 24 KiB, not 768 */
  c->lm = calloc(c->lm_cap, sizeof *c->lm);
  if (!c->lm) {
    free(c);
    return NULL;
  }
  raft_heap_set(&heap); /* process-wide, constant: routes into the current world */
  return c;
}

static void destroy(void *ctx) {
  cluster *c = ctx;
  sf_history_free(&c->hist);
  free(c->lm);
  free(c);
}

static void unlink_req(cnode *cn, creq *q) {
  for (creq **p = &cn->reqs; *p; p = &(*p)->next)
    if (*p == q) {
      *p = q->next;
      return;
    }
}

static void panic(sim_world *w, int node) {
  craft_crash_soon(w, node);
}

/* raft stops for good after an error it cannot handle (RAFT_UNAVAILABLE);
 * the application, like a process supervisor, restarts it. */
static void restart_if_failed(sim_world *w, cnode *cn) {
  if (cn->started && !cn->closed && raft_state(&cn->raft) == RAFT_UNAVAILABLE) {
    cn->started = 0;
    panic(w, cn->node);
  }
}

static void boot(void *ctx, sim_world *w, int node, int restart) {
  (void)restart;
  cluster *c = ctx;
  cnode *cn = calloc(1, sizeof *cn);
  if (!cn) {
    panic(w, node);
    return;
  }
  cn->c = c;
  cn->node = node;
  c->last_state[node] = 0;
  c->follower_of[node] = 0;
  sim_node_set_data(w, node, cn);
  cn->fsm.version = 1;
  cn->fsm.data = cn;
  cn->fsm.apply = fsm_apply;
  cn->fsm.snapshot = fsm_snapshot;
  cn->fsm.restore = fsm_restore;
  int snapshots = 0; /* a deployment's settings: one choice per run, the same on every node */
#if defined(CRAFT_FROM_SOURCE)
  uint64_t setting = sim_draw(w, sim_stream_id(STREAM_RUN, 1, 0), 0);
  snapshots = setting & 1; /* in half of the runs */
#endif
  if (craft_io_init(&cn->io, w, node, DISK_ERRORS, snapshots) != 0 ||
      raft_init(&cn->raft, &cn->io, &cn->fsm, (raft_id)node + 1, craft_address(node)) != 0) {
    panic(w, node);
    return;
  }
  cn->inited = 1;
  cn->raft.data = cn;
  struct raft_configuration conf;
  raft_configuration_init(&conf);
  int rv = 0;
  for (int i = 0; i < c->n && rv == 0; i++)
    rv = raft_configuration_add(&conf, (raft_id)i + 1, craft_address(i), RAFT_VOTER);
  if (rv == 0)
    rv = raft_bootstrap(&cn->raft, &conf); /* RAFT_CANTBOOTSTRAP once there is state */
  raft_configuration_close(&conf);
  if (rv != 0 && rv != RAFT_CANTBOOTSTRAP) {
    panic(w, node);
    return;
  }
  raft_set_election_timeout(&cn->raft, ELECTION_MS);
  raft_set_heartbeat_timeout(&cn->raft, HEARTBEAT_MS);
  raft_set_snapshot_threshold(&cn->raft, 1u << 30);
#if defined(CRAFT_FROM_SOURCE)
  raft_set_pre_vote(&cn->raft, sim_draw(w, sim_stream_id(STREAM_RUN, 0, 0), 0) & 1);
  if (snapshots) { /* a snapshot every 2-17 entries, keeping 1-8 of them (0 is for installs) */
    raft_set_snapshot_threshold(&cn->raft, 2 + (unsigned)(setting >> 1) % 16);
    raft_set_snapshot_trailing(&cn->raft, 1 + (unsigned)(setting >> 6) % 8);
    /* an InstallSnapshot lost on the way is sent again after this long
     * (raft's default, 30 s, is longer than any liveness window here) */
    raft_set_install_snapshot_timeout(&cn->raft, INSTALL_SNAPSHOT_MS);
  }
#endif
  if (raft_start(&cn->raft) != 0) {
    panic(w, node); /* for example the disk could not be read: retry after a restart */
    return;
  }
  cn->started = 1;
}

#if defined(CRAFT_ERRORS)
static void closed_cb(struct raft *r) {
  cnode *cn = r->data;
  cn->closed = 1;
}
#endif

static void teardown(void *ctx, sim_world *w, int node, sim_teardown_why why) {
  cluster *c = ctx;
  (void)why;
  cnode *cn = sim_node_data(w, node);
  if (!cn)
    return;
#if defined(CRAFT_ERRORS)
  /* this build stops nodes the graceful way (raft_close), which exercises
   * raft's close path: pending requests are canceled (RAFT_CANCELED), as
   * raft's libuv backend does; craft_io completes the close at once */
  if (cn->inited && !cn->closed)
    raft_close(&cn->raft, closed_cb);
#endif
  /* a crashed process runs no code: whatever raft still holds goes away */
  arena_drop(c, node);
  while (cn->reqs) { /* requests raft never called back (their outcome stays unknown) */
    creq *q = cn->reqs;
    cn->reqs = q->next;
    free(q);
  }
  craft_io_free(&cn->io);
  free(cn);
}

static void recv(void *ctx, sim_world *w, int node, int from, const void *msg, size_t len) {
  (void)ctx;
  cnode *cn = sim_node_data(w, node);
  if (cn && cn->started) {
    craft_io_recv(&cn->io, from, msg, len);
    restart_if_failed(w, cn);
  }
}

static void timer(void *ctx, sim_world *w, int node, uint64_t tag) {
  (void)ctx;
  cnode *cn = sim_node_data(w, node);
  if (cn && craft_io_owns_timer(tag)) {
    craft_io_timer(&cn->io, tag);
    restart_if_failed(w, cn);
  }
}

/* ---- clients ------------------------------------------------------------- */

/* One command of the state machine, in raft_malloc() memory (base NULL if
 * there is none). */
static struct raft_buffer command(uint32_t k, uint64_t key, uint64_t arg, uint64_t arg2,
                                  uint32_t seq) {
  uint8_t cmd[64];
  sf_enc e;
  sf_enc_init(&e, cmd, sizeof cmd);
  sf_enc_u8(&e, (uint8_t)k);
  sf_enc_u64(&e, key);
  sf_enc_u64(&e, arg);
  sf_enc_u64(&e, arg2);
  sf_enc_u32(&e, seq);
  struct raft_buffer buf = {raft_malloc(sf_enc_len(&e)), sf_enc_len(&e)};
  if (buf.base)
    memcpy(buf.base, cmd, buf.len);
  return buf;
}

static void apply_cb(struct raft_apply *a, int status, void *result) {
  creq *q = a->data;
  cnode *cn = q->cn;
  sim_world *w = sim_current(NULL);
  if (status == 0 && w) /* otherwise the outcome is unknown: it stays pending */
    sf_history_complete(&cn->c->hist, q->hist, (uint64_t)(uintptr_t)result - 1, sim_now(w));
  unlink_req(cn, q);
  free(q);
}

static void transfer_cb(struct raft_transfer *t) {
  creq *q = t->data;
  unlink_req(q->cn, q);
  free(q);
}

#if defined(CRAFT_FROM_SOURCE)
static void change_cb(struct raft_change *ch, int status) {
  (void)status; /* refused or not: the configuration says what happened */
  creq *q = ch->data;
  unlink_req(q->cn, q);
  free(q);
}

/* A membership change at the leader, from an operation of the transfer
 * kind whose key is 3 mod 4: on server 1 + value % nodes, by (value /
 * nodes) % 5, make it a voter, a standby or a spare, remove it, or add it
 * back (as a spare). raft refuses what does not apply (RAFT_BADROLE, ...). */
static int change(cnode *cn, creq *q, const sf_op *op, int nodes) {
  raft_id id = 1 + (raft_id)(op->value % (uint64_t)nodes);
  static const int roles[] = {RAFT_VOTER, RAFT_STANDBY, RAFT_SPARE};
  unsigned how = (unsigned)(op->value / (uint64_t)nodes % 5);
  q->change.data = q;
  if (how < 3)
    return raft_assign(&cn->raft, &q->change, id, roles[how], change_cb);
  if (how == 3)
    return raft_remove(&cn->raft, &q->change, id, change_cb);
  return raft_add(&cn->raft, &q->change, id, craft_address((int)id - 1), change_cb);
}
#endif

/* The node a client reaches: the one it asked, or the leader that one knows
 * of; it must be up, running and the leader. */
static cnode *leader_via(sim_world *w, int node) {
  cnode *cn = sim_node_up(w, node) && !sim_node_paused(w, node) ? sim_node_data(w, node) : NULL;
  if (!cn || !cn->started)
    return NULL;
  if (raft_state(&cn->raft) == RAFT_LEADER)
    return cn;
  raft_id id;
  const char *addr;
  raft_leader(&cn->raft, &id, &addr);
  int l = craft_node_of(id, sim_nodes(w));
  if (l < 0 || l == node || !sim_node_up(w, l) || sim_node_paused(w, l))
    return NULL;
  cnode *ln = sim_node_data(w, l);
  return ln && ln->started && raft_state(&ln->raft) == RAFT_LEADER ? ln : NULL;
}

static void workload(void *ctx, sim_world *w, const sf_op *op) {
  cluster *c = ctx;
  cnode *cn = leader_via(w, op->node);
  if (!cn)
    return; /* no leader reachable: the client gives up before sending */
  int prev = sim_set_current_node(w, cn->node);
  creq *q = calloc(1, sizeof *q);
  if (!q)
    goto out;
  q->cn = cn;
  unsigned kind = op->op % 4;
  if (kind == OP_TRANSFER) {
    q->hist = SIZE_MAX;
    q->transfer.data = q;
    q->next = cn->reqs;
    cn->reqs = q;
    raft_id to = 0; /* raft picks the most up-to-date voter */
#if defined(CRAFT_FROM_SOURCE)
    to = (raft_id)(op->value % ((uint64_t)c->n + 1));
    if (op->key % 4 == 3) {
      if (change(cn, q, op, c->n) != 0) {
        unlink_req(cn, q);
        free(q);
      }
      goto out;
    }
#endif
    if (raft_transfer(&cn->raft, &q->transfer, to, transfer_cb) != 0) {
      unlink_req(cn, q);
      free(q);
    }
    goto out;
  }
  uint32_t k = kind == OP_GET ? SF_KV_GET : kind == OP_CAS ? SF_KV_CAS : SF_KV_PUT;
  uint64_t key = op->key % KEYS, arg = op->value, arg2 = 0;
  if (k == SF_KV_CAS) { /* expect a small value so that some swaps succeed */
    arg = op->value % 4;
    arg2 = op->value;
  }
  struct raft_buffer buf = command(k, key, arg, arg2, op->seq);
  if (!buf.base) {
    free(q);
    goto out;
  }
  q->apply.data = q;
  if (raft_apply(&cn->raft, &q->apply, &buf, 1, apply_cb) != 0) {
    raft_free(buf.base); /* refused before anything happened: not part of the history */
    free(q);
    goto out;
  }
  /* accepted: from now on it may take effect (raft calls back later, never
   * from inside raft_apply) */
  q->hist = sf_history_invoke(&c->hist, (uint32_t)op->node, k, key, arg, arg2, sim_now(w));
  q->next = cn->reqs;
  cn->reqs = q;
out:
  restart_if_failed(w, cn);
  sim_set_current_node(w, prev);
}

/* ---- oracles --------------------------------------------------------------- */

static cnode *running(sim_world *w, int i) {
  cnode *cn = sim_node_up(w, i) ? sim_node_data(w, i) : NULL;
  return cn && cn->started && !cn->closed ? cn : NULL;
}

/* The running nodes that the last event can have changed, in node order:
 * the nodes a check looks at after an event. */
typedef struct {
  int node; /* the node next_changed() returned */
  int to;   /* one past the last node the event can have changed */
} changed_iter;

/* Starts an iteration over the nodes the last event can have changed. */
static changed_iter changed_nodes(sim_world *w) {
  int from, to;
  sf_changed_nodes(w, &from, &to);
  SIM_ASSERT(from <= to);
  return (changed_iter){from - 1, to};
}

/* The next running node of it (it->node is its index), or NULL after the
 * last. */
static cnode *next_changed(sim_world *w, changed_iter *it) {
  while (++it->node < it->to) {
    cnode *cn = running(w, it->node);
    if (cn)
      return cn;
  }
  return NULL;
}

/* At most one leader per term. A leader of a term that it was a follower
 * in never stood for election (Raft, section 5.2: a follower increments its
 * term to begin one), so a second leader of such a term fails as
 * leader_without_election, told apart from the other ways to two leaders:
 * HEAD has that bug (docs/findings/cowsql-raft.md, finding 3), and a
 * variant's run must not pass it off as the variant's own. */
static SF_ORACLE void election_safety(void *ctx, sim_world *w) {
  cluster *c = ctx;
  changed_iter it = changed_nodes(w);
  for (cnode *cn; (cn = next_changed(w, &it));) {
    int i = it.node;
    int state = raft_state(&cn->raft);
    raft_term t = cn->raft.current_term;
    int elected = c->follower_of[i] != t; /* 0 if it leads the term it followed in */
    c->follower_of[i] = state == RAFT_FOLLOWER ? t : 0;
    if (state != RAFT_LEADER)
      continue;
    size_t slot = t % MAX_TERMS;
    if (c->leader_term[slot] != t) {
      c->leader_term[slot] = t;
      c->leader_id[slot] = cn->raft.id;
      c->leader_elected[slot] = (unsigned char)elected;
      continue;
    }
    if (c->leader_id[slot] == cn->raft.id) {
      c->leader_elected[slot] &= (unsigned char)elected;
      continue;
    }
    int unelected = !elected || !c->leader_elected[slot];
    SIM_INVARIANT(w, i, !unelected, "leader_without_election",
                  "n%d and n%llu are both leaders of term %llu, and n%llu never stood for "
                  "election in it",
                  i, (unsigned long long)c->leader_id[slot] - 1, (unsigned long long)t,
                  elected ? (unsigned long long)c->leader_id[slot] - 1 : (unsigned long long)i);
    if (unelected)
      return;
    SIM_INVARIANT(w, i, 0, "election_safety", "n%d and n%llu are both leaders of term %llu", i,
                  (unsigned long long)c->leader_id[slot] - 1, (unsigned long long)t);
  }
}

#define LM_UNKNOWN UINT64_MAX

/* (index, term) -> the entry's hash and the term before it: the pair's
 * slot, or an empty one to put it in; NULL when the table is full (LM_CAP
 * pairs). */
static lm_ent *lm_slot(cluster *c, uint64_t index, uint64_t term) {
  size_t mask = c->lm_cap - 1;
  size_t h = (size_t)(sim_mix64(index * 0x9e3779b97f4a7c15ull ^ term) & mask);
  for (size_t k = 0; k < c->lm_cap; k++) {
    lm_ent *e = &c->lm[(h + k) & mask];
    if (e->index == 0 || (e->index == index && e->term == term))
      return e;
  }
  return NULL;
}

/* Double the table (up to LM_CAP) before it is half full; the pairs it
 * holds, and so every check's outcome, are the same at any size. 1 if it
 * grew (the pairs moved). */
static int lm_make_room(cluster *c) {
  if (c->lm_cap >= LM_CAP || c->lm_n + 1 <= c->lm_cap / 2)
    return 0;
  lm_ent *old = c->lm;
  size_t ocap = c->lm_cap;
  lm_ent *t = calloc(ocap * 2, sizeof *t);
  if (!t)
    return 0; /* keep the smaller table: it still answers */
  c->lm = t;
  c->lm_cap = ocap * 2;
  for (size_t i = 0; i < ocap; i++)
    if (old[i].index)
      *lm_slot(c, old[i].index, old[i].term) = old[i];
  free(old);
  return 1;
}

/* Log matching, one entry at a time: two logs with an entry of the same
 * index and term have the same entry there and the same term before it;
 * by induction they are identical up to it. Pairs, not whole prefixes, so
 * that a log whose start is in a snapshot is checked as far as it goes. */
static SF_ORACLE void log_matching(void *ctx, sim_world *w) {
  cluster *c = ctx;
  changed_iter it = changed_nodes(w);
  for (cnode *cn; (cn = next_changed(w, &it));) {
    int i = it.node;
    struct raft *r = &cn->raft;
    size_t n = craft_log_count(r);
    raft_index offset = craft_log_offset(r);
    const craft_io_stats *st = craft_io_get_stats(&cn->io);
    /* every change of raft's log goes through an append or a truncate */
    uint64_t fp = sim_mix64(st->appends ^ sim_mix64(st->truncates ^ sim_mix64(n ^ offset << 32)));
    if (fp == cn->log_fp)
      continue;
    cn->log_fp = fp;
    uint64_t prev = offset == 0 ? 0 : LM_UNKNOWN; /* the term before the first in memory */
    for (size_t k = 0; k < n; k++) {
      raft_index index = offset + 1 + k;
      const struct raft_entry *e = craft_log_at(r, index);
      uint64_t h = entry_hash(e);
      lm_ent *s = lm_slot(c, index, e->term);
      if (s && s->index == 0 && lm_make_room(c)) /* a new pair: room first */
        s = lm_slot(c, index, e->term);
      if (!s)
        break;
      if (s->index == 0) {
        *s = (lm_ent){index, e->term, h, prev};
        c->lm_n++;
      } else {
        int same = s->hash == h && (s->prev == prev || s->prev == LM_UNKNOWN || prev == LM_UNKNOWN);
        SIM_INVARIANT(w, i, same, "log_matching",
                      "n%d's log differs from another log with the same entry at index %llu, "
                      "term %llu",
                      i, (unsigned long long)index, (unsigned long long)e->term);
        if (!same)
          return;
        if (s->prev == LM_UNKNOWN)
          s->prev = prev;
      }
      prev = e->term;
    }
  }
}

static SF_ORACLE void committed_stable(void *ctx, sim_world *w) {
  cluster *c = ctx;
  changed_iter it = changed_nodes(w);
  for (cnode *cn; (cn = next_changed(w, &it));) {
    int i = it.node;
    raft_index ci = cn->raft.commit_index;
    for (raft_index x = cn->commit_seen + 1; x <= ci && x <= MAX_INDEX; x++) {
      const struct raft_entry *e = craft_log_at(&cn->raft, x);
      if (!e)
        continue;
      uint64_t h = entry_hash(e);
      if (!c->commit_term[x]) {
        c->commit_term[x] = e->term;
        c->commit_hash[x] = h;
        c->commit_in[x] = cn->raft.current_term;
        if (x > c->committed)
          c->committed = x;
        continue;
      }
      SIM_INVARIANT(w, i, c->commit_hash[x] == h, "committed_stable",
                    "n%d committed a different entry at index %llu (term %llu, was term %llu)", i,
                    (unsigned long long)x, (unsigned long long)e->term,
                    (unsigned long long)c->commit_term[x]);
    }
    if (ci > cn->commit_seen)
      cn->commit_seen = ci;
  }
}

static SF_ORACLE void leader_completeness(void *ctx, sim_world *w) {
  cluster *c = ctx;
  int from, to; /* the nodes the event can have changed */
  sf_changed_nodes(w, &from, &to);
  for (int i = from; i < to; i++) {
    cnode *cn = running(w, i);
    unsigned short st = cn ? (unsigned short)raft_state(&cn->raft) : 0;
    raft_term t = cn ? cn->raft.current_term : 0;
    int new_leader = st == RAFT_LEADER && (c->last_state[i] != RAFT_LEADER || c->last_term[i] != t);
    c->last_state[i] = st;
    c->last_term[i] = t;
    if (!new_leader)
      continue;
    /* entries up to the offset are in the leader's snapshot */
    for (raft_index x = craft_log_offset(&cn->raft) + 1; x <= c->committed; x++) {
      if (!c->commit_term[x] || c->commit_in[x] >= t)
        continue;
      const struct raft_entry *e = craft_log_at(&cn->raft, x);
      SIM_INVARIANT(w, i, e && e->term == c->commit_term[x] && entry_hash(e) == c->commit_hash[x],
                    "leader_completeness",
                    "n%d became leader of term %llu without the entry committed at index %llu "
                    "(term %llu) in term %llu",
                    i, (unsigned long long)t, (unsigned long long)x,
                    (unsigned long long)c->commit_term[x], (unsigned long long)c->commit_in[x]);
      if (!e || e->term != c->commit_term[x])
        return;
    }
  }
}

static SF_ORACLE void linearizable(void *ctx, sim_world *w) {
  cluster *c = ctx;
  sf_lin_report rep;
  sf_lin_result r = sf_history_check(&c->hist, &sf_kv_model, NULL, &rep);
  SIM_INVARIANT(w, -1, r != SF_LIN_VIOLATION, "linearizable", "%s", rep.message);
}

/* 1 if the leader's configuration has server id as a voter or standby. */
static int replicates_to(cnode *leader, raft_id id) {
  const struct raft_configuration *conf = &leader->raft.configuration;
  for (unsigned k = 0; k < conf->n; k++)
    if (conf->servers[k].id == id)
      return conf->servers[k].role == RAFT_VOTER || conf->servers[k].role == RAFT_STANDBY;
  return 0;
}

static SF_ORACLE int live(void *ctx, sim_world *w) {
  cluster *c = ctx;
  cnode *leader = NULL;
  for (int i = 0; i < c->n; i++) {
    cnode *cn = running(w, i);
    if (!cn)
      return 0;
    if (raft_state(&cn->raft) == RAFT_LEADER)
      leader = cn;
  }
  if (!leader)
    return 0;
  for (int i = 0; i < c->n; i++) {
    cnode *cn = running(w, i);
    if (!replicates_to(leader, (raft_id)i + 1))
      continue; /* a spare, or removed: the leader sends it nothing */
    raft_id id;
    const char *addr;
    raft_leader(&cn->raft, &id, &addr);
    /* a follower may keep uncommitted entries of an old term beyond the
     * leader's log until the leader overwrites them: compare what is
     * committed, not log lengths */
    if (cn->raft.current_term != leader->raft.current_term || id != leader->raft.id ||
        cn->raft.commit_index != leader->raft.commit_index)
      return 0;
  }
  return 1;
}

/* Hazard states of Raft that a designer names before knowing any bug (the
 * three that issue 36 gives as examples, none chosen from a bug of the set):
 * they never fail a run. Each is a node's own state, named at that node:
 * where one is rare the explorer branches and aims its futures there. A
 * sweep or a replay skips them. */
static SF_ORACLE void hazards(void *ctx, sim_world *w) {
  (void)ctx;
  if (!sf_sites_wanted(w))
    return;
  int old = -1, change = -1, install = -1;
  changed_iter it = changed_nodes(w);
  for (cnode *cn; (cn = next_changed(w, &it));) {
    int i = it.node;
    struct raft *r = &cn->raft;
    /* terms never decrease along a log: the first uncommitted entry tells */
    const struct raft_entry *e =
        raft_state(r) == RAFT_LEADER ? craft_log_at(r, r->commit_index + 1) : NULL;
    if (old < 0 && e && e->term < r->current_term)
      old = i;
    if (change < 0 && r->configuration_uncommitted_index > r->commit_index)
      change = i;
    if (install < 0 && craft_io_get_stats(&cn->io)->installing > 0)
      install = i;
  }
  SF_SOMETIMES_ON(w, old >= 0, old, "leader with uncommitted entries of an earlier term");
  SF_SOMETIMES_ON(w, change >= 0, change, "a configuration change is uncommitted");
  SF_SOMETIMES_ON(w, install >= 0, install, "a snapshot is being installed");
}

static SF_ORACLE uint32_t observe(void *ctx, sim_world *w, int node) {
  (void)ctx;
  cnode *cn = running(w, node);
  return cn ? (uint32_t)raft_state(&cn->raft) : 0; /* follower 1, candidate 2, leader 3 */
}

/* The node's term: the epoch of the feedback's "message of an older term". */
static SF_ORACLE uint64_t epoch(void *ctx, sim_world *w, int node) {
  (void)ctx;
  cnode *cn = running(w, node);
  return cn ? (uint64_t)cn->raft.current_term : 0;
}

static int describe(void *ctx, const void *msg, size_t have, size_t len, char *buf, size_t cap) {
  (void)ctx;
  return craft_describe(msg, have, len, buf, cap);
}

static uint32_t classify(void *ctx, const void *msg, size_t len) {
  (void)ctx;
  return craft_msg_type(msg, len);
}

static const sim_node_ops ops = {boot, recv, timer, NULL, teardown};
static const sf_check invariants[] = {
    {"election_safety", election_safety},
    {"log_matching", log_matching},
    {"committed_stable", committed_stable},
    {"leader_completeness", leader_completeness},
    {"hazards", hazards}, /* never fails: the hazard states above */
    {NULL, NULL},
};
static const sf_check end_checks[] = {{"linearizable", linearizable}, {NULL, NULL}};

#if defined(CRAFT_FROM_SOURCE)
#define CRAFT_SUMMARY "key-value store on raft built from source (tree " CRAFT_RAFT_VERSION ")"
#else
#define CRAFT_SUMMARY                                                                              \
  "key-value store on canonical/raft " CRAFT_RAFT_VERSION " (Debian libraft-dev)"
#endif
SF_TARGET(.summary = CRAFT_SUMMARY, .min_nodes = 3, .max_nodes = 7, .default_nodes = 3,
          .create = create, .destroy = destroy, .ops = &ops, .workload = workload,
          .invariants = invariants, .end_checks = end_checks, .live = live, .liveness_ms = 5000,
          .describe = describe, .classify = classify, .observe = observe, .epoch = epoch);
