/*
 * raft_kv: a key-value store replicated with Raft over datagrams.
 *
 * Every node runs a Raft server (leader election, log replication, commit,
 * apply) and a client gateway. A client operation (put, get or cas) enters
 * at its gateway node, which sends it to the node it believes leads and
 * retries with the same request id until a response arrives, as real
 * clients do. Gets go through the log (so a deposed leader cannot answer
 * them) and a per-request result table in the state machine makes retried
 * and duplicated requests execute once.
 *
 * Persistence: sector 0 holds (term, vote, log length); entry i lives in
 * sector i. A node syncs its vote and term before answering, and its log
 * before acknowledging entries. Entries are written and synced before the
 * length that covers them, and a truncation is made durable before the
 * sectors are overwritten, so a crash at any point leaves a valid log.
 *
 * Oracles, each in its own function (after every event): election safety
 * (one leader per term), log matching (same index and term = same prefix),
 * leader completeness (a new leader holds every committed entry), state
 * machine safety (no two nodes apply different entries at one index; a
 * committed entry never changes). At the end: the client history is
 * linearizable (harness/linearize.h, key-value model). After heal:
 * liveness (a leader is up and every gateway's requests complete).
 *
 * Planted bugs (one fuzz target each; see docs/bug-zoo.md):
 *   RAFT_BUG_VOTE_UNSYNCED  a vote is written but not synced before the
 *                           reply: a crash can forget it -> two leaders.
 *   RAFT_BUG_LOCAL_READ     the leader answers gets from its own state
 *                           without going through the log -> stale reads
 *                           from a deposed or freshly elected leader.
 *   RAFT_BUG_NO_DEDUP       the state machine executes retried/duplicated
 *                           requests again -> a cas reports failure after
 *                           it succeeded.
 *   RAFT_BUG_COMMIT_OLD_TERM  a leader commits entries of earlier terms by
 *                           counting replicas (Raft paper, figure 8), and so
 *                           sees no need for a no-op entry at election.
 */
#include "../common/wire.h"
#include "linearize.h"
#include "simfuzz.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#ifndef SF_TARGET_NAME
#define SF_TARGET_NAME "raft_kv"
#endif
#ifndef SF_TARGET_SYMBOL
#define SF_TARGET_SYMBOL sf_target_raft_kv
#endif

enum {
  MAXN = 7,         /* nodes */
  MAX_LOG = 512,    /* entries per log (1-based) */
  MAX_OPS = 384,    /* client requests per run (request ids 0..MAX_OPS-1) */
  MAX_PEND = 8,     /* outstanding requests per gateway */
  NKEYS = 4,        /* keys */
  BATCH = 16,       /* entries per AppendEntries */
  MAX_TERMS = 8192, /* terms the oracle tracks */
  LM_SLOTS = 2048   /* (index, term) pairs the oracle remembers (power of 2) */
};
enum { FOLLOWER = 1, CANDIDATE = 2, LEADER = 3 };
enum { E_NOOP = 0, E_PUT = SF_KV_PUT, E_GET = SF_KV_GET, E_CAS = SF_KV_CAS };
enum { M_RV = 1, M_RVR, M_AE, M_AER, M_REQ, M_RESP };
enum { R_OK = 1, R_REDIRECT = 2, R_FULL = 3 };
enum { T_ELECTION = 1, T_TICK = 2 };
#define TICK_NS (50 * SIM_NS_PER_MS)
#define RETRY_TICKS 4 /* a gateway resends after 200 ms without a response */
#define ENTRY_BYTES 24
#define META_MAGIC 0x52414654u

typedef struct {
  uint32_t term;
  uint8_t kind, key, gw;
  uint32_t arg, arg2, req;
} entry;

typedef struct {
  uint32_t req; /* request id (sf_op.seq) */
  size_t hid;   /* history id */
  uint8_t kind, key;
  uint32_t arg, arg2;
  uint32_t ticks; /* since the last send */
} pending;

typedef struct {
  uint32_t term;
  int voted; /* -1: none */
  uint32_t len, durable;
  entry log[MAX_LOG + 1];
  int role, leader; /* leader: hint, -1 unknown */
  uint32_t commit, applied;
  uint32_t votes; /* bitmask of granted votes */
  uint32_t next[MAXN], match[MAXN];
  uint32_t sm[NKEYS];
  uint32_t done[MAX_OPS]; /* result + 1 of each executed request, 0 = not yet */
  sim_timer election;
  pending pend[MAX_PEND];
  int npend;
  int rr;         /* gateway: next node to try when no leader is known */
  uint32_t dirty; /* lowest log index changed since the oracle last looked */
} rnode;

typedef struct {
  int n;
  sf_history hist;
  /* oracle memory (only the checks write it) */
  int8_t leader_of[MAX_TERMS];
  uint32_t committed_len;
  entry committed[MAX_LOG + 1];
  uint32_t first_applied_len;
  entry first_applied[MAX_LOG + 1];
  uint32_t checked_term[MAXN];   /* leader completeness: term last checked */
  uint32_t checked_apply[MAXN];  /* state machine safety: applied index checked */
  uint32_t checked_commit[MAXN]; /* a leader's commit index checked */
  uint32_t inc[MAXN];            /* incarnation seen by the checks */
  uint64_t ph[MAXN][MAX_LOG + 1];
  uint32_t ph_len[MAXN];
  struct {
    uint64_t key, ph;
  } lm[LM_SLOTS]; /* log matching: (index, term) -> prefix hash */
  uint32_t lm_used;
} cluster;

/* ---- encoding ---------------------------------------------------------- */

static void put_entry(uint8_t *b, const entry *e) {
  wire_put32(b, e->term);
  b[4] = e->kind;
  b[5] = e->key;
  b[6] = e->gw;
  b[7] = 0;
  wire_put32(b + 8, e->arg);
  wire_put32(b + 12, e->arg2);
  wire_put32(b + 16, e->req);
  wire_put32(b + 20, 0);
}

static void get_entry(const uint8_t *b, entry *e) {
  e->term = wire_get32(b);
  e->kind = b[4];
  e->key = b[5];
  e->gw = b[6];
  e->arg = wire_get32(b + 8);
  e->arg2 = wire_get32(b + 12);
  e->req = wire_get32(b + 16);
}

static int same_entry(const entry *a, const entry *b) {
  return a->term == b->term && a->kind == b->kind && a->key == b->key && a->gw == b->gw &&
         a->arg == b->arg && a->arg2 == b->arg2 && a->req == b->req;
}

/* ---- disk -------------------------------------------------------------- */

/* A failed write or sync: the node cannot trust what it has, so it crashes
 * and recovers from its durable state. Callers return at once. */
static void panic(sim_world *w, int node) {
  sim_node_crash(w, node);
}

static int write_meta(sim_world *w, int node, const rnode *p, uint32_t len, int sync) {
  uint8_t b[24];
  wire_put32(b, META_MAGIC);
  wire_put32(b + 4, p->term);
  wire_put32(b + 8, (uint32_t)p->voted);
  wire_put32(b + 12, len);
  wire_put64(b + 16, wire_checksum(0, b, 16));
  if (sim_disk_write(w, node, 0, b, sizeof b) != (int64_t)sizeof b)
    return -1;
  return sync ? sim_disk_sync(w, node) : 0;
}

/* Make term and vote durable (before answering anyone). -1 after a panic. */
static int save_meta(sim_world *w, int node, rnode *p) {
  if (write_meta(w, node, p, p->durable, 1) < 0) {
    panic(w, node);
    return -1;
  }
  return 0;
}

#ifdef RAFT_BUG_VOTE_UNSYNCED
/* BUG: "the vote reaches the disk with the next log sync anyway". */
static int save_vote(sim_world *w, int node, rnode *p) {
  if (write_meta(w, node, p, p->durable, 0) < 0) {
    panic(w, node);
    return -1;
  }
  return 0;
}
#else
static int save_vote(sim_world *w, int node, rnode *p) {
  return save_meta(w, node, p);
}
#endif

/* Make entries [from, len] durable. -1 after a panic. */
static int save_log(sim_world *w, int node, rnode *p, uint32_t from) {
  if (from <= p->durable && write_meta(w, node, p, from - 1, 1) < 0)
    goto fail; /* truncation first: never a durable length over stale sectors */
  for (uint32_t i = from; i <= p->len; i++) {
    uint8_t b[ENTRY_BYTES + 8];
    put_entry(b, &p->log[i]);
    wire_put64(b + ENTRY_BYTES, wire_checksum(i, b, ENTRY_BYTES));
    if (sim_disk_write(w, node, (uint64_t)i * 512, b, sizeof b) != (int64_t)sizeof b)
      goto fail;
  }
  if (sim_disk_sync(w, node) < 0 || write_meta(w, node, p, p->len, 1) < 0)
    goto fail;
  p->durable = p->len;
  return 0;
fail:
  panic(w, node);
  return -1;
}

static int read_retry(sim_world *w, int node, uint64_t off, uint8_t *b, size_t len) {
  int64_t r = -1;
  for (int attempt = 0; attempt < 3 && r < 0; attempt++)
    r = sim_disk_read(w, node, off, b, len);
  return r < 0 ? -1 : (int)r;
}

/* Load the durable state. -1 after a panic (a persistent read error). */
static int load(sim_world *w, int node, rnode *p) {
  uint8_t b[ENTRY_BYTES + 8];
  p->voted = -1;
  int r = read_retry(w, node, 0, b, 24);
  if (r < 0) {
    panic(w, node);
    return -1;
  }
  if (r != 24 || wire_get32(b) != META_MAGIC || wire_get64(b + 16) != wire_checksum(0, b, 16))
    return 0; /* a fresh disk */
  p->term = wire_get32(b + 4);
  p->voted = (int)wire_get32(b + 8);
  if (p->voted < -1 || p->voted >= MAXN)
    p->voted = -1;
  uint32_t len = wire_get32(b + 12);
  if (len > MAX_LOG)
    len = MAX_LOG;
  for (uint32_t i = 1; i <= len; i++) {
    r = read_retry(w, node, (uint64_t)i * 512, b, sizeof b);
    if (r < 0) {
      panic(w, node);
      return -1;
    }
    if (r != (int)sizeof b || wire_get64(b + ENTRY_BYTES) != wire_checksum(i, b, ENTRY_BYTES))
      break; /* cannot happen with the write order above; the oracles would see it */
    get_entry(b, &p->log[i]);
    p->len = i;
  }
  p->durable = p->len;
  return 0;
}

/* ---- messages ---------------------------------------------------------- */

/* Every datagram carries a checksum (the network may flip bits). m must
 * have WIRE_SEAL bytes of room after len. */
static void net_send(sim_world *w, int from, int to, uint8_t *m, size_t len) {
  sim_send(w, from, to, m, wire_seal(m, len));
}

static void send_rv(sim_world *w, int node, rnode *p, int to) {
  uint8_t m[13 + WIRE_SEAL];
  m[0] = M_RV;
  wire_put32(m + 1, p->term);
  wire_put32(m + 5, p->len);
  wire_put32(m + 9, p->log[p->len].term);
  net_send(w, node, to, m, 13);
}

static void send_ae(sim_world *w, int node, rnode *p, int to) {
  uint8_t m[18 + BATCH * ENTRY_BYTES + WIRE_SEAL];
  uint32_t prev = p->next[to] - 1, cnt = 0;
  m[0] = M_AE;
  wire_put32(m + 1, p->term);
  wire_put32(m + 5, prev);
  wire_put32(m + 9, p->log[prev].term);
  wire_put32(m + 13, p->commit);
  for (uint32_t i = prev + 1; i <= p->len && cnt < BATCH; i++, cnt++)
    put_entry(m + 18 + cnt * ENTRY_BYTES, &p->log[i]);
  m[17] = (uint8_t)cnt;
  net_send(w, node, to, m, 18 + cnt * ENTRY_BYTES);
}

static void on_resp(cluster *c, sim_world *w, rnode *p, const uint8_t *m, size_t len);

/* A response to gateway `to`; a node's own gateway gets it in-process. */
static void send_resp(sim_world *w, int node, int to, uint32_t req, int status, uint32_t result,
                      int hint) {
  uint8_t m[11 + WIRE_SEAL];
  m[0] = M_RESP;
  wire_put32(m + 1, req);
  m[5] = (uint8_t)status;
  wire_put32(m + 6, result);
  m[10] = (uint8_t)(hint < 0 ? 0xff : hint);
  if (to == node)
    on_resp(sim_ctx(w), w, sim_node_data(w, node), m, 11);
  else
    net_send(w, node, to, m, 11);
}

/* ---- roles --------------------------------------------------------------- */

static void reset_election(sim_world *w, int node, rnode *p) {
  if (p->election)
    sim_timer_cancel(w, p->election);
  uint64_t d = (150 + sim_node_random(w, node) % 150) * SIM_NS_PER_MS;
  p->election = sim_timer_start(w, node, d, T_ELECTION);
}

/* Adopt a newer term as a follower (the caller persists it). A leader
 * that steps down starts waiting for a leader again. */
static void step_down(sim_world *w, int node, rnode *p, uint32_t term) {
  if (term > p->term) {
    p->term = term;
    p->voted = -1;
  }
  p->role = FOLLOWER;
  if (!p->election)
    reset_election(w, node, p);
}

static void apply_committed(sim_world *w, int node, rnode *p);

static uint32_t execute(rnode *p, const entry *e) {
  uint32_t *v = &p->sm[e->key % NKEYS];
  switch (e->kind) {
  case E_PUT: *v = e->arg; return 0;
  case E_GET: return *v;
  case E_CAS:
    if (*v != e->arg)
      return 0;
    *v = e->arg2;
    return 1;
  default: return 0;
  }
}

static void apply_committed(sim_world *w, int node, rnode *p) {
  while (p->applied < p->commit && p->applied < p->len) {
    const entry *e = &p->log[++p->applied];
    if (e->kind == E_NOOP || e->req >= MAX_OPS)
      continue;
    uint32_t result;
#ifdef RAFT_BUG_NO_DEDUP
    /* BUG: "request ids are for the client's bookkeeping": a retried or
     * duplicated request runs again */
    result = execute(p, e);
    p->done[e->req] = result + 1;
#else
    if (p->done[e->req]) {
      result = p->done[e->req] - 1; /* a retry or duplicate: already executed */
    } else {
      result = execute(p, e);
      p->done[e->req] = result + 1;
    }
#endif
    if (p->role == LEADER)
      send_resp(w, node, e->gw, e->req, R_OK, result, node);
  }
}

static void advance_commit(sim_world *w, int node, rnode *p) {
  int n = sim_nodes(w);
  for (uint32_t i = p->len; i > p->commit; i--) {
#ifndef RAFT_BUG_COMMIT_OLD_TERM
    if (p->log[i].term != p->term)
      break; /* only entries of the current term are committed by counting */
#endif
    int cnt = 0;
    for (int k = 0; k < n; k++)
      cnt += k == node ? 1 : p->match[k] >= i;
    if (2 * cnt > n) {
      p->commit = i;
      apply_committed(w, node, p);
      return;
    }
  }
}

static void touch(rnode *p, uint32_t i) {
  if (i < p->dirty)
    p->dirty = i;
}

static void append_local(sim_world *w, int node, rnode *p, const entry *e) {
  p->log[++p->len] = *e;
  touch(p, p->len);
  if (save_log(w, node, p, p->len) < 0)
    return;
  p->match[node] = p->len;
  for (int k = 0; k < sim_nodes(w); k++)
    if (k != node)
      send_ae(w, node, p, k);
  advance_commit(w, node, p);
}

static void become_leader(sim_world *w, int node, rnode *p) {
  p->role = LEADER;
  p->leader = node;
  if (p->election) {
    sim_timer_cancel(w, p->election);
    p->election = 0;
  }
  for (int k = 0; k < MAXN; k++) {
    p->next[k] = p->len + 1;
    p->match[k] = 0;
  }
#ifdef RAFT_BUG_COMMIT_OLD_TERM
  int noop = 0; /* BUG: "earlier entries commit by counting: no no-op needed" */
#else
  int noop = p->len < MAX_LOG;
#endif
  if (noop) { /* a no-op of the new term commits what came before */
    entry e = {p->term, E_NOOP, 0, (uint8_t)node, 0, 0, UINT32_MAX};
    append_local(w, node, p, &e);
  } else {
    for (int k = 0; k < sim_nodes(w); k++)
      if (k != node)
        send_ae(w, node, p, k);
  }
}

static void start_election(sim_world *w, int node, rnode *p) {
  p->term++;
  p->role = CANDIDATE;
  p->voted = node;
  p->votes = 1u << node;
  p->leader = -1;
  if (save_meta(w, node, p) < 0)
    return;
  reset_election(w, node, p);
  if (sim_nodes(w) == 1) {
    become_leader(w, node, p);
    return;
  }
  for (int k = 0; k < sim_nodes(w); k++)
    if (k != node)
      send_rv(w, node, p, k);
}

/* ---- handlers ------------------------------------------------------------ */

static void on_rv(sim_world *w, int node, rnode *p, int from, const uint8_t *m, size_t len) {
  if (len != 13)
    return;
  uint32_t term = wire_get32(m + 1), lidx = wire_get32(m + 5), lterm = wire_get32(m + 9);
  int changed = 0;
  if (term > p->term) {
    step_down(w, node, p, term);
    changed = 1;
  }
  uint32_t myterm = p->log[p->len].term;
  int uptodate = lterm > myterm || (lterm == myterm && lidx >= p->len);
  int grant = term == p->term && (p->voted < 0 || p->voted == from) && uptodate;
  if (grant && p->voted != from) {
    p->voted = from;
    if (save_vote(w, node, p) < 0)
      return;
    changed = 0;
  }
  if (changed && save_meta(w, node, p) < 0)
    return;
  if (grant)
    reset_election(w, node, p);
  uint8_t r[6 + WIRE_SEAL];
  r[0] = M_RVR;
  wire_put32(r + 1, p->term);
  r[5] = (uint8_t)grant;
  net_send(w, node, from, r, 6);
}

static void on_rvr(sim_world *w, int node, rnode *p, int from, const uint8_t *m, size_t len) {
  if (len != 6)
    return;
  uint32_t term = wire_get32(m + 1);
  if (term > p->term) {
    step_down(w, node, p, term);
    save_meta(w, node, p);
    return;
  }
  if (p->role != CANDIDATE || term != p->term || !m[5])
    return;
  p->votes |= 1u << from;
  if (2 * __builtin_popcount(p->votes) > sim_nodes(w))
    become_leader(w, node, p);
}

static void on_ae(sim_world *w, int node, rnode *p, int from, const uint8_t *m, size_t len) {
  if (len < 18)
    return;
  uint32_t term = wire_get32(m + 1), prev = wire_get32(m + 5), pterm = wire_get32(m + 9);
  uint32_t lcommit = wire_get32(m + 13), cnt = m[17];
  if (cnt > BATCH || len != 18 + cnt * ENTRY_BYTES)
    return;
  uint8_t r[10 + WIRE_SEAL];
  r[0] = M_AER;
  if (term < p->term) {
    wire_put32(r + 1, p->term);
    r[5] = 0;
    wire_put32(r + 6, p->len);
    net_send(w, node, from, r, 10);
    return;
  }
  if (term > p->term || p->role != FOLLOWER) {
    int newer = term > p->term;
    step_down(w, node, p, term);
    if (newer && save_meta(w, node, p) < 0)
      return;
  }
  p->leader = from;
  reset_election(w, node, p);
  wire_put32(r + 1, p->term);
  if (prev > p->len || p->log[prev].term != pterm || prev + cnt > MAX_LOG) {
    r[5] = 0;
    wire_put32(r + 6, prev > p->len ? p->len : prev - 1);
    net_send(w, node, from, r, 10);
    return;
  }
  uint32_t from_idx = 0;
  for (uint32_t k = 0; k < cnt; k++) {
    entry e;
    get_entry(m + 18 + k * ENTRY_BYTES, &e);
    uint32_t i = prev + 1 + k;
    if (i <= p->len && p->log[i].term == e.term)
      continue; /* already have it (a stale or duplicated message) */
    if (i <= p->len)
      p->len = i - 1; /* conflict: drop it and everything after */
    p->log[++p->len] = e;
    touch(p, i);
    if (!from_idx)
      from_idx = i;
  }
  if (from_idx && save_log(w, node, p, from_idx) < 0)
    return;
  uint32_t last = prev + cnt;
  if (lcommit > p->commit) {
    p->commit = lcommit < last ? lcommit : last;
    apply_committed(w, node, p);
  }
  r[5] = 1;
  wire_put32(r + 6, last);
  net_send(w, node, from, r, 10);
}

static void on_aer(sim_world *w, int node, rnode *p, int from, const uint8_t *m, size_t len) {
  if (len != 10)
    return;
  uint32_t term = wire_get32(m + 1), idx = wire_get32(m + 6);
  if (term > p->term) {
    step_down(w, node, p, term);
    save_meta(w, node, p);
    return;
  }
  if (p->role != LEADER || term != p->term)
    return;
  if (m[5]) {
    if (idx > p->len)
      return;
    if (idx > p->match[from])
      p->match[from] = idx;
    if (idx + 1 > p->next[from])
      p->next[from] = idx + 1;
    advance_commit(w, node, p);
    if (p->role == LEADER && p->next[from] <= p->len)
      send_ae(w, node, p, from);
  } else {
    uint32_t nx = idx + 1 < p->next[from] ? idx + 1 : p->next[from] - 1;
    p->next[from] = nx < 1 ? 1 : nx;
    if (p->next[from] <= p->match[from])
      p->next[from] = p->match[from] + 1;
    send_ae(w, node, p, from);
  }
}

static void on_req(sim_world *w, int node, rnode *p, int from, const uint8_t *m, size_t len) {
  if (len != 16)
    return;
  entry e = {p->term,           m[1], m[2], (uint8_t)from, wire_get32(m + 3), wire_get32(m + 7),
             wire_get32(m + 11)};
  if (e.kind < E_PUT || e.kind > E_CAS || e.req >= MAX_OPS)
    return;
  if (p->role != LEADER) {
    send_resp(w, node, from, e.req, R_REDIRECT, 0, p->leader);
    return;
  }
#ifndef RAFT_BUG_NO_DEDUP
  if (p->done[e.req]) { /* executed already: answer from the result table */
    send_resp(w, node, from, e.req, R_OK, p->done[e.req] - 1, node);
    return;
  }
#endif
#ifdef RAFT_BUG_LOCAL_READ
  /* BUG: "the leader has the latest state; reads need no round trip" */
  if (e.kind == E_GET) {
    send_resp(w, node, from, e.req, R_OK, p->sm[e.key % NKEYS], node);
    return;
  }
#endif
  /* A retry of a request still in the log is appended again: the state
   * machine executes a request id once (see apply_committed). */
  if (p->len >= MAX_LOG) {
    send_resp(w, node, from, e.req, R_FULL, 0, node);
    return;
  }
  append_local(w, node, p, &e);
}

/* Gateway: a response for one of its pending requests. */
static void on_resp(cluster *c, sim_world *w, rnode *p, const uint8_t *m, size_t len) {
  if (len != 11)
    return;
  uint32_t req = wire_get32(m + 1);
  for (int i = 0; i < p->npend; i++) {
    pending *q = &p->pend[i];
    if (q->req != req)
      continue;
    if (m[5] == R_REDIRECT) {
      p->leader = m[10] < sim_nodes(w) ? m[10] : -1;
      return; /* resent on a later tick */
    }
    if (m[5] == R_OK)
      sf_history_complete(&c->hist, q->hid, wire_get32(m + 6), sim_now(w));
    /* R_FULL: the request may or may not have run; it stays pending */
    p->pend[i] = p->pend[--p->npend];
    return;
  }
}

static void gateway_send(sim_world *w, int node, rnode *p, pending *q) {
  uint8_t m[16 + WIRE_SEAL];
  m[0] = M_REQ;
  m[1] = q->kind;
  m[2] = q->key;
  wire_put32(m + 3, q->arg);
  wire_put32(m + 7, q->arg2);
  wire_put32(m + 11, q->req);
  m[15] = 0;
  int to = p->leader;
  if (to < 0) {
    to = p->rr % sim_nodes(w);
    p->rr++;
  }
  q->ticks = 0;
  if (to == node)
    on_req(w, node, p, node, m, 16); /* its own server: no network */
  else
    net_send(w, node, to, m, 16);
}

/* ---- callbacks ----------------------------------------------------------- */

static void recv(void *ctx, sim_world *w, int node, int from, const void *msg, size_t len) {
  rnode *p = sim_node_data(w, node);
  const uint8_t *m = msg;
  len = wire_unseal(m, len);
  if (!p || len == 0 || from < 0 || from >= sim_nodes(w))
    return; /* damaged in flight: as good as lost */
  switch (m[0]) {
  case M_RV: on_rv(w, node, p, from, m, len); break;
  case M_RVR: on_rvr(w, node, p, from, m, len); break;
  case M_AE: on_ae(w, node, p, from, m, len); break;
  case M_AER: on_aer(w, node, p, from, m, len); break;
  case M_REQ: on_req(w, node, p, from, m, len); break;
  case M_RESP: on_resp(ctx, w, p, m, len); break;
  default: break;
  }
}

static void timer(void *ctx, sim_world *w, int node, uint64_t tag) {
  (void)ctx;
  rnode *p = sim_node_data(w, node);
  if (tag == T_ELECTION) {
    p->election = 0;
    if (p->role != LEADER)
      start_election(w, node, p);
    return;
  }
  sim_timer_start(w, node, TICK_NS, T_TICK);
  if (p->role == LEADER)
    for (int k = 0; k < sim_nodes(w); k++)
      if (k != node)
        send_ae(w, node, p, k);
  for (int i = 0; i < p->npend; i++)
    if (++p->pend[i].ticks >= RETRY_TICKS) {
      gateway_send(w, node, p, &p->pend[i]);
      if (!sim_node_up(w, node))
        return; /* it panicked while serving its own request */
    }
}

static void boot(void *ctx, sim_world *w, int node, int restart) {
  (void)ctx;
  (void)restart;
  rnode *p = calloc(1, sizeof *p);
  if (!p)
    abort();
  sim_node_set_data(w, node, p);
  p->role = FOLLOWER;
  p->leader = -1;
  p->rr = node;
  p->dirty = 1;
  if (load(w, node, p) < 0)
    return;
  reset_election(w, node, p);
  sim_timer_start(w, node, TICK_NS, T_TICK);
}

static void teardown(void *ctx, sim_world *w, int node, sim_teardown_why why) {
  (void)ctx;
  (void)why;
  free(sim_node_data(w, node));
  sim_node_set_data(w, node, NULL);
}

static const sim_node_ops ops = {boot, recv, timer, NULL, teardown};

/* Client operations: op % 3 = put / get / cas on one of NKEYS keys, with
 * small values so that cas often matches and reads see conflicts. */
static void workload(void *ctx, sim_world *w, const sf_op *op) {
  cluster *c = ctx;
  rnode *p = sim_node_data(w, op->node);
  if (!p || sim_node_paused(w, op->node) || p->npend >= MAX_PEND || op->seq >= MAX_OPS)
    return; /* the client could not even submit it: no history entry */
  pending *q = &p->pend[p->npend];
  q->req = op->seq;
  q->kind = (uint8_t)(E_PUT + op->op % 3);
  q->key = (uint8_t)(op->key % NKEYS);
  q->arg = q->kind == E_CAS ? (uint32_t)(op->value % 6) : (uint32_t)(op->value % 5 + 1);
  q->arg2 = q->kind == E_CAS ? (uint32_t)((op->value >> 8) % 5 + 1) : 0;
  if (q->kind == E_GET)
    q->arg = 0;
  size_t hid =
      sf_history_invoke(&c->hist, (uint32_t)op->node, q->kind, q->key, q->arg, q->arg2, sim_now(w));
  if (hid == SIZE_MAX)
    return;
  q->hid = hid;
  p->npend++;
  gateway_send(w, op->node, p, q);
}

/* ---- oracles ------------------------------------------------------------- */

SF_ORACLE static rnode *live_node(sim_world *w, int k) {
  return sim_node_up(w, k) ? sim_node_data(w, k) : NULL;
}

/* A running node for the checks; after a reboot the checks' memory of it
 * starts over (its log was reloaded from disk). */
SF_ORACLE static rnode *checked_node(cluster *c, sim_world *w, int k) {
  rnode *p = live_node(w, k);
  if (p && c->inc[k] != sim_node_incarnation(w, k)) {
    c->inc[k] = sim_node_incarnation(w, k);
    c->ph_len[k] = 0;
    c->checked_term[k] = 0;
    c->checked_apply[k] = 0;
    c->checked_commit[k] = 0;
  }
  return p;
}

/* At most one leader per term, ever. */
SF_ORACLE static void check_election_safety(void *ctx, sim_world *w) {
  cluster *c = ctx;
  for (int k = 0; k < c->n; k++) {
    rnode *p = live_node(w, k);
    if (!p || p->role != LEADER || p->term >= MAX_TERMS)
      continue;
    if (c->leader_of[p->term] < 0)
      c->leader_of[p->term] = (int8_t)k;
    SIM_INVARIANT(w, k, c->leader_of[p->term] == k, "election_safety",
                  "n%d and n%d are both leaders of term %" PRIu32, c->leader_of[p->term], k,
                  p->term);
  }
}

SF_ORACLE static uint64_t entry_hash(uint64_t h, const entry *e) {
  uint64_t x = h ^ ((uint64_t)e->term << 32 | e->req);
  x = sim_mix64(x ^ ((uint64_t)e->kind << 56 | (uint64_t)e->key << 48 | (uint64_t)e->gw << 40));
  return sim_mix64(x ^ ((uint64_t)e->arg << 32 | e->arg2));
}

/* If two logs hold an entry with the same index and term, the logs are
 * identical up to that index: (index, term) determines the prefix hash. */
SF_ORACLE static void check_log_matching(void *ctx, sim_world *w) {
  cluster *c = ctx;
  for (int k = 0; k < c->n; k++) {
    rnode *p = checked_node(c, w, k);
    if (!p)
      continue;
    uint32_t i = p->dirty; /* entries before it are unchanged since last time */
    if (i > c->ph_len[k] + 1)
      i = c->ph_len[k] + 1;
    if (i < 1)
      i = 1;
    p->dirty = UINT32_MAX;
    for (; i <= p->len; i++) {
      c->ph[k][i] = entry_hash(c->ph[k][i - 1], &p->log[i]);
      uint64_t key = (uint64_t)i << 32 | p->log[i].term;
      uint32_t s = (uint32_t)sim_mix64(key) & (LM_SLOTS - 1);
      while (c->lm[s].key && c->lm[s].key != key + 1)
        s = (s + 1) & (LM_SLOTS - 1);
      if (!c->lm[s].key) {
        if (c->lm_used >= LM_SLOTS / 4 * 3)
          continue; /* table full: stop learning (bounded memory) */
        c->lm[s].key = key + 1;
        c->lm[s].ph = c->ph[k][i];
        c->lm_used++;
        continue;
      }
      SIM_INVARIANT(w, k, c->lm[s].ph == c->ph[k][i], "log_matching",
                    "n%d's entry %" PRIu32 " has term %" PRIu32
                    " like another node's, but the logs before it differ",
                    k, i, p->log[i].term);
    }
    c->ph_len[k] = p->len;
  }
}

/* Every committed entry is in the log of every later leader. Committed
 * entries are learnt from leaders' commit indexes and never change. */
SF_ORACLE static void check_leader_completeness(void *ctx, sim_world *w) {
  cluster *c = ctx;
  for (int k = 0; k < c->n; k++) {
    rnode *p = checked_node(c, w, k);
    if (!p || p->role != LEADER)
      continue;
    if (c->checked_term[k] != p->term) {
      c->checked_term[k] = p->term;
      for (uint32_t i = 1; i <= c->committed_len; i++)
        if (c->committed[i].term < p->term)
          SIM_INVARIANT(
              w, k, i <= p->len && same_entry(&p->log[i], &c->committed[i]), "leader_completeness",
              "n%d leads term %" PRIu32 " without committed entry %" PRIu32 " (term %" PRIu32 ")",
              k, p->term, i, c->committed[i].term);
    }
  }
}

/* No two nodes apply different entries at one index, and an entry once
 * committed is never replaced. */
SF_ORACLE static void check_state_machine_safety(void *ctx, sim_world *w) {
  cluster *c = ctx;
  for (int k = 0; k < c->n; k++) {
    rnode *p = checked_node(c, w, k);
    if (!p)
      continue;
    uint32_t upto = p->commit < p->len ? p->commit : p->len;
    for (uint32_t i = c->checked_commit[k] + 1; p->role == LEADER && i <= upto; i++) {
      if (i > c->committed_len) {
        c->committed[i] = p->log[i];
        c->committed_len = i;
      }
      SIM_INVARIANT(w, k, same_entry(&c->committed[i], &p->log[i]), "committed_entry_changed",
                    "n%d commits entry %" PRIu32 " of term %" PRIu32
                    " but a different one (term %" PRIu32 ") was committed there",
                    k, i, p->log[i].term, c->committed[i].term);
      c->checked_commit[k] = i;
    }
    for (uint32_t i = c->checked_apply[k] + 1; i <= p->applied; i++) {
      if (i > c->first_applied_len) {
        c->first_applied[i] = p->log[i];
        c->first_applied_len = i;
      }
      SIM_INVARIANT(w, k, same_entry(&c->first_applied[i], &p->log[i]), "state_machine_safety",
                    "n%d applied entry %" PRIu32 " (term %" PRIu32
                    ") but another node applied a different one (term %" PRIu32 ")",
                    k, i, p->log[i].term, c->first_applied[i].term);
    }
    c->checked_apply[k] = p->applied;
  }
}

static const sf_check invariants[] = {
    {"election_safety", check_election_safety},
    {"log_matching", check_log_matching},
    {"leader_completeness", check_leader_completeness},
    {"state_machine_safety", check_state_machine_safety},
    {NULL, NULL},
};

/* The clients' history is linearizable (pending requests may or may not
 * have taken effect). */
SF_ORACLE static void check_linearizable(void *ctx, sim_world *w) {
  cluster *c = ctx;
  sf_lin_report rep;
  sf_lin_result r = sf_history_check(&c->hist, &sf_kv_model, NULL, &rep);
  SIM_INVARIANT(w, -1, r != SF_LIN_VIOLATION, "linearizable", "%s", rep.message);
}

static const sf_check end_checks[] = {
    {"linearizable", check_linearizable},
    {NULL, NULL},
};

/* A leader that every running node follows, and no request waiting. */
SF_ORACLE static int live(void *ctx, sim_world *w) {
  cluster *c = ctx;
  int leader = -1;
  uint32_t top = 0;
  for (int k = 0; k < c->n; k++) {
    rnode *p = live_node(w, k);
    if (!p)
      return 0;
    if (p->npend)
      return 0;
    if (p->term > top)
      top = p->term;
  }
  for (int k = 0; k < c->n; k++) {
    rnode *p = sim_node_data(w, k);
    if (p->role == LEADER && p->term == top)
      leader = k;
  }
  return leader >= 0;
}

static void *create(int nodes) {
  cluster *c = calloc(1, sizeof *c);
  if (!c)
    abort();
  c->n = nodes;
  c->hist.max = MAX_OPS;
  memset(c->leader_of, -1, sizeof c->leader_of);
  return c;
}

static void destroy(void *ctx) {
  cluster *c = ctx;
  sf_history_free(&c->hist);
  free(c);
}

static int describe(void *ctx, const void *msg, size_t have, size_t len, char *buf, size_t cap) {
  const uint8_t *m = msg;
  static const char *const kinds[] = {"noop", "put", "get", "cas"};
  (void)ctx;
  if (have < 1)
    return -1;
  switch (m[0]) {
  case M_RV:
    if (have >= 13)
      return snprintf(buf, cap, "RequestVote term=%" PRIu32 " last=%" PRIu32 "/t%" PRIu32,
                      wire_get32(m + 1), wire_get32(m + 5), wire_get32(m + 9));
    break;
  case M_RVR:
    if (have >= 6)
      return snprintf(buf, cap, "Vote term=%" PRIu32 " %s", wire_get32(m + 1),
                      m[5] ? "granted" : "denied");
    break;
  case M_AE:
    if (have >= 18)
      return snprintf(
          buf, cap, "Append term=%" PRIu32 " prev=%" PRIu32 "/t%" PRIu32 " commit=%" PRIu32 " n=%u",
          wire_get32(m + 1), wire_get32(m + 5), wire_get32(m + 9), wire_get32(m + 13), m[17]);
    break;
  case M_AER:
    if (have >= 10)
      return snprintf(buf, cap, "AppendReply term=%" PRIu32 " %s idx=%" PRIu32, wire_get32(m + 1),
                      m[5] ? "ok" : "reject", wire_get32(m + 6));
    break;
  case M_REQ:
    if (have >= 16 && len == 16 + WIRE_SEAL)
      return snprintf(buf, cap, "Request #%" PRIu32 " %s k%u %" PRIu32 " %" PRIu32,
                      wire_get32(m + 11), m[1] <= E_CAS ? kinds[m[1]] : "?", m[2],
                      wire_get32(m + 3), wire_get32(m + 7));
    break;
  case M_RESP:
    if (have >= 11)
      return snprintf(buf, cap, "Response #%" PRIu32 " %s %" PRIu32, wire_get32(m + 1),
                      m[5] == R_OK         ? "ok"
                      : m[5] == R_REDIRECT ? "redirect"
                                           : "full",
                      wire_get32(m + 6));
    break;
  default: break;
  }
  return -1;
}

static uint32_t classify(void *ctx, const void *msg, size_t len) {
  (void)ctx;
  return len ? ((const uint8_t *)msg)[0] & 7u : 0;
}

/* Role; whether the log holds uncommitted entries, and whether any of them
 * are from an earlier term than the node's (the precondition of the Raft
 * paper's figure 8); whether its gateway waits for responses. */
SF_ORACLE static uint32_t observe(void *ctx, sim_world *w, int node) {
  (void)ctx;
  rnode *p = sim_node_data(w, node);
  if (!p)
    return 0;
  uint32_t ahead = p->len > p->commit;
  uint32_t old = ahead && p->log[p->commit + 1].term < p->term;
  return (uint32_t)p->role * 8 + ahead * 4 + old * 2 + (p->npend > 0);
}

const sf_target SF_TARGET_SYMBOL = {
    .name = SF_TARGET_NAME,
    .summary = "key-value store replicated with Raft; linearizability checked",
    .min_nodes = 3,
    .max_nodes = MAXN,
    .default_nodes = 3,
    .create = create,
    .destroy = destroy,
    .ops = &ops,
    .workload = workload,
    .invariants = invariants,
    .end_checks = end_checks,
    .live = live,
    /* a few election rounds (<= 300 ms each, split votes retried) plus a
     * retry round for every gateway's requests */
    .liveness_ms = 5000,
    .describe = describe,
    .classify = classify,
    .observe = observe,
};
