/* raft_kv: the protocol (see raft_kv.h). */
#include "raft_kv.h"

#include <simfuzz/simfuzz_wire.h>

#include <inttypes.h>
#include <stdio.h>

enum { M_RV = 1, M_RVR, M_AE, M_AER, M_REQ, M_RESP };
enum { R_OK = 1, R_REDIRECT = 2, R_FULL = 3 };
enum { T_ELECTION = 1, T_TICK = 2 };
enum { BATCH = 16 }; /* entries per AppendEntries */
#define MS 1000000ull
#define TICK_NS (50 * MS)
#define RETRY_TICKS 4 /* a gateway resends after 200 ms without a response */
#define META_MAGIC 0x52414654u
#define LEASE_NS ((int64_t)(150 * MS)) /* the shortest election timeout */

/* ---- encoding ---------------------------------------------------------- */

static void put_entry(sf_enc *e, const rk_entry *x) {
  sf_enc_u32(e, x->term);
  sf_enc_u8(e, x->kind);
  sf_enc_u8(e, x->key);
  sf_enc_u8(e, x->gw);
  sf_enc_u8(e, 0);
  sf_enc_u32(e, x->arg);
  sf_enc_u32(e, x->arg2);
  sf_enc_u32(e, x->req);
  sf_enc_u32(e, 0);
}

static void get_entry(sf_dec *d, rk_entry *x) {
  x->term = sf_dec_u32(d);
  x->kind = sf_dec_u8(d);
  x->key = sf_dec_u8(d);
  x->gw = sf_dec_u8(d);
  sf_dec_u8(d);
  x->arg = sf_dec_u32(d);
  x->arg2 = sf_dec_u32(d);
  x->req = sf_dec_u32(d);
  sf_dec_u32(d);
}

int rk_same_entry(const rk_entry *a, const rk_entry *b) {
  return a->term == b->term && a->kind == b->kind && a->key == b->key && a->gw == b->gw &&
         a->arg == b->arg && a->arg2 == b->arg2 && a->req == b->req;
}

/* ---- disk -------------------------------------------------------------- */

/* Term, vote and log length live in two slots, written in turn with a
 * sequence number: a crash or a failed sync that tears the slot being
 * written leaves the other one, the last durable state, to load. (With one
 * slot rewritten in place, a torn write read as a fresh disk: the node
 * forgot its term, its vote and its whole log.) */
#define META_BYTES 20
static uint64_t meta_slot(uint32_t seq) {
  return seq & 1 ? RK_MAX_LOG + 1 : 0;
}

static int write_meta(rk_node *p, uint32_t len, int sync) {
  uint8_t b[META_BYTES];
  uint32_t seq = p->meta_seq + 1;
  sf_enc e;
  sf_enc_init(&e, b, sizeof b);
  sf_enc_u32(&e, META_MAGIC);
  sf_enc_u32(&e, seq);
  sf_enc_u32(&e, p->term);
  sf_enc_u32(&e, (uint32_t)p->voted);
  sf_enc_u32(&e, len);
  int r = p->io->record_write(p->io, meta_slot(seq), b, sizeof b, sync);
  if (r >= 0)
    p->meta_seq = seq;
  return r;
}

/* Make term and vote durable (before answering anyone). A failed write or
 * sync: the node cannot trust what it has, so it crashes and recovers from
 * its durable state; -1 then, and the caller returns at once. */
static int save_meta(rk_node *p) {
  if (write_meta(p, p->durable, 1) < 0) {
    p->io->crash(p->io);
    return -1;
  }
  return 0;
}

#ifdef RAFT_BUG_VOTE_UNSYNCED
/* BUG: "the vote reaches the disk with the next log sync anyway". */
static int save_vote(rk_node *p) {
  if (write_meta(p, p->durable, 0) < 0) {
    p->io->crash(p->io);
    return -1;
  }
  return 0;
}
#else
static int save_vote(rk_node *p) {
  return save_meta(p);
}
#endif

/* Write entries [from, len] (not synced). -1 on a disk error. */
static int write_entries(rk_node *p, uint32_t from) {
  for (uint32_t i = from; i <= p->len; i++) {
    uint8_t b[RK_RECORD];
    sf_enc e;
    sf_enc_init(&e, b, sizeof b);
    put_entry(&e, &p->log[i]);
    if (p->io->record_write(p->io, i, b, sizeof b, 0) < 0)
      return -1;
  }
  return 0;
}

/* Make entries [from, len] durable. -1 after a crash. */
static int save_log(rk_node *p, uint32_t from) {
#ifdef RAFT_BUG_TRUNCATE_UNSYNCED
  /* BUG: "a rewrite of entries already on disk needs no sync of its own:
   * the next append's sync covers it" */
  if (from <= p->durable) {
    if (write_entries(p, from) < 0 || write_meta(p, p->len, 0) < 0)
      goto fail;
    p->durable = p->len;
    return 0;
  }
#endif
  if (from <= p->durable && write_meta(p, from - 1, 1) < 0)
    goto fail; /* truncation first: never a durable length over stale records */
  if (write_entries(p, from) < 0 || p->io->sync(p->io) < 0 || write_meta(p, p->len, 1) < 0)
    goto fail;
  p->durable = p->len;
  return 0;
fail:
  p->io->crash(p->io);
  return -1;
}

/* Load the durable state. -1 after a crash (a persistent read error). */
static int load(rk_node *p) {
  uint8_t b[RK_RECORD];
  p->voted = -1;
  sf_dec d;
  int found = 0;
  for (uint32_t k = 0; k < 2; k++) { /* the valid slot with the later sequence */
    int64_t r = p->io->record_read(p->io, meta_slot(k), b, sizeof b);
    if (r < 0) {
      p->io->crash(p->io);
      return -1;
    }
    sf_dec_init(&d, b, (size_t)r);
    if (r != META_BYTES || sf_dec_u32(&d) != META_MAGIC)
      continue;
    uint32_t seq = sf_dec_u32(&d);
    if (found && (int32_t)(seq - p->meta_seq) <= 0)
      continue;
    found = 1;
    p->meta_seq = seq;
    p->term = sf_dec_u32(&d);
    p->voted = (int)sf_dec_u32(&d);
    p->len = sf_dec_u32(&d); /* the entries' count, for now */
  }
  if (!found)
    return 0; /* a fresh disk */
  if (p->voted < -1 || p->voted >= RK_MAXN)
    p->voted = -1;
  uint32_t len = p->len;
  p->len = 0;
  if (len > RK_MAX_LOG)
    len = RK_MAX_LOG;
  for (uint32_t i = 1; i <= len; i++) {
    int64_t r = p->io->record_read(p->io, i, b, sizeof b);
    if (r < 0) {
      p->io->crash(p->io);
      return -1;
    }
    if (r != RK_RECORD)
      break; /* cannot happen with the write order above; the oracles would see it */
    sf_dec_init(&d, b, sizeof b);
    get_entry(&d, &p->log[i]);
    p->len = i;
  }
  p->durable = p->len;
  return 0;
}

/* ---- messages ---------------------------------------------------------- */

/* Start encoding a message of `type` into m. */
static void msg_start(sf_enc *e, uint8_t *m, size_t cap, uint8_t type) {
  sf_enc_init(e, m, cap);
  sf_enc_u8(e, type);
}

/* Every datagram carries a checksum (the network may flip bits). */
static void net_send(rk_node *p, int to, sf_enc *e) {
  size_t n = sf_enc_seal(e);
  if (n)
    p->io->send(p->io, to, e->buf, n);
}

static void send_rv(rk_node *p, int to) {
  uint8_t m[13 + SF_SEAL_BYTES];
  sf_enc e;
  msg_start(&e, m, sizeof m, M_RV);
  sf_enc_u32(&e, p->term);
  sf_enc_u32(&e, p->len);
  sf_enc_u32(&e, p->log[p->len].term);
  net_send(p, to, &e);
}

static void send_ae(rk_node *p, int to) {
  uint8_t m[18 + BATCH * RK_RECORD + SF_SEAL_BYTES];
  uint32_t prev = p->next[to] - 1, cnt = 0;
  while (prev + 1 + cnt <= p->len && cnt < BATCH)
    cnt++;
  sf_enc e;
  msg_start(&e, m, sizeof m, M_AE);
  sf_enc_u32(&e, p->term);
  sf_enc_u32(&e, prev);
  sf_enc_u32(&e, p->log[prev].term);
  sf_enc_u32(&e, p->commit);
  sf_enc_u8(&e, (uint8_t)cnt);
  for (uint32_t k = 0; k < cnt; k++)
    put_entry(&e, &p->log[prev + 1 + k]);
  net_send(p, to, &e);
}

static void on_resp(rk_node *p, sf_dec *d);

/* A response to gateway `to`; a node's own gateway gets it in-process. */
static void send_resp(rk_node *p, int to, uint32_t req, int status, uint32_t result, int hint) {
  uint8_t m[11 + SF_SEAL_BYTES];
  sf_enc e;
  msg_start(&e, m, sizeof m, M_RESP);
  sf_enc_u32(&e, req);
  sf_enc_u8(&e, (uint8_t)status);
  sf_enc_u32(&e, result);
  sf_enc_u8(&e, (uint8_t)(hint < 0 ? 0xff : hint));
  if (to == p->io->self) {
    sf_dec d;
    sf_dec_init(&d, m, sf_enc_len(&e));
    sf_dec_u8(&d);
    on_resp(p, &d);
  } else {
    net_send(p, to, &e);
  }
}

/* ---- roles --------------------------------------------------------------- */

static void reset_election(rk_node *p) {
  if (p->election)
    p->io->timer_cancel(p->io, p->election);
  uint64_t d = (150 + p->io->random(p->io) % 150) * MS;
  p->election = p->io->timer(p->io, d, T_ELECTION);
}

/* Adopt a newer term as a follower (the caller persists it). A leader
 * that steps down starts waiting for a leader again. */
static void step_down(rk_node *p, uint32_t term) {
  if (term > p->term) {
    p->term = term;
    p->voted = -1;
  }
  p->role = RK_FOLLOWER;
  if (!p->election)
    reset_election(p);
}

static void touch(rk_node *p, uint32_t i) {
  if (i < p->dirty)
    p->dirty = i;
}

/* ---- membership ------------------------------------------------------------ */

static uint32_t all_nodes(const rk_node *p) {
  return p->io->nodes >= 32 ? UINT32_MAX : (1u << p->io->nodes) - 1;
}

/* The configuration in force: the last change in the log, else the initial
 * members. Called after the log changed from index `from` on. */
static void update_config(rk_node *p, uint32_t from) {
  if (p->config_at >= from) { /* that entry is gone: look below */
    p->config_at = 0;
    for (uint32_t i = from - 1 < p->len ? from - 1 : p->len; i > 0 && !p->config_at; i--)
      if (p->log[i].kind == RK_CONFIG)
        p->config_at = i;
  }
  for (uint32_t i = from; i <= p->len; i++)
    if (p->log[i].kind == RK_CONFIG)
      p->config_at = i;
  uint32_t all = all_nodes(p), set = p->config_at ? p->log[p->config_at].arg : p->initial;
  p->members = set & all ? set & all : all;
}

/* 1 if the nodes in `set` are a majority of the members. */
static int majority(const rk_node *p, uint32_t set) {
  return 2 * __builtin_popcount(set & p->members) > __builtin_popcount(p->members);
}

static uint32_t execute(rk_node *p, const rk_entry *e) {
  uint32_t *v = &p->sm[e->key % RK_NKEYS];
  switch (e->kind) {
  case RK_PUT: *v = e->arg; return 0;
  case RK_GET: return *v;
  case RK_CAS:
    if (*v != e->arg)
      return 0;
    *v = e->arg2;
    return 1;
  case RK_CONFIG: return 1; /* in force since it was appended */
  default: return 0;
  }
}

static void apply_committed(rk_node *p) {
  while (p->applied < p->commit && p->applied < p->len) {
    const rk_entry *e = &p->log[++p->applied];
    if (e->kind == RK_NOOP || e->req >= RK_MAX_OPS)
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
    if (p->role == RK_LEADER)
      send_resp(p, e->gw, e->req, R_OK, result, p->io->self);
  }
}

static void advance_commit(rk_node *p) {
  int n = p->io->nodes, self = p->io->self;
  for (uint32_t i = p->len; i > p->commit; i--) {
#ifndef RAFT_BUG_COMMIT_OLD_TERM
    if (p->log[i].term != p->term)
      break; /* only entries of the current term are committed by counting */
#endif
    uint32_t have = 0;
    for (int k = 0; k < n; k++)
      have |= (uint32_t)(k == self || p->match[k] >= i) << k;
    if (majority(p, have)) {
      p->commit = i;
      apply_committed(p);
      return;
    }
  }
}

/* -1 if the node crashed (p is gone). */
static int append_local(rk_node *p, const rk_entry *e) {
  p->log[++p->len] = *e;
  touch(p, p->len);
  update_config(p, p->len);
  if (save_log(p, p->len) < 0)
    return -1;
  p->match[p->io->self] = p->len;
  for (int k = 0; k < p->io->nodes; k++)
    if (k != p->io->self)
      send_ae(p, k);
  advance_commit(p);
  return 0;
}

static void become_leader(rk_node *p) {
  p->role = RK_LEADER;
  p->leader = p->io->self;
  if (p->election) {
    p->io->timer_cancel(p->io, p->election);
    p->election = 0;
  }
  for (int k = 0; k < RK_MAXN; k++) {
    p->next[k] = p->len + 1;
    p->match[k] = 0;
    p->ack_at[k] = INT64_MIN;
  }
#ifdef RAFT_BUG_COMMIT_OLD_TERM
  int noop = 0; /* BUG: "earlier entries commit by counting: no no-op needed" */
#else
  int noop = p->len < RK_MAX_LOG;
#endif
  if (noop) { /* a no-op of the new term commits what came before */
    rk_entry e = {p->term, RK_NOOP, 0, (uint8_t)p->io->self, 0, 0, UINT32_MAX};
    append_local(p, &e);
  } else {
    for (int k = 0; k < p->io->nodes; k++)
      if (k != p->io->self)
        send_ae(p, k);
  }
}

static void start_election(rk_node *p) {
  int self = p->io->self;
  if (!(p->members >> self & 1)) { /* not a member: it follows, never leads */
    reset_election(p);
    return;
  }
  p->term++;
  p->role = RK_CANDIDATE;
  p->voted = self;
  p->votes = 1u << self;
  p->leader = -1;
  if (save_meta(p) < 0)
    return;
  reset_election(p);
  if (p->io->nodes == 1) {
    become_leader(p);
    return;
  }
  for (int k = 0; k < p->io->nodes; k++)
    if (k != self)
      send_rv(p, k);
}

/* ---- handlers (d is past the type byte) ---------------------------------- */

static void on_rv(rk_node *p, int from, sf_dec *d) {
  uint32_t term = sf_dec_u32(d), lidx = sf_dec_u32(d), lterm = sf_dec_u32(d);
  if (!sf_dec_ok(d) || sf_dec_left(d))
    return;
  int changed = 0;
  if (term > p->term) {
    step_down(p, term);
    changed = 1;
  }
  uint32_t myterm = p->log[p->len].term;
  int uptodate = lterm > myterm || (lterm == myterm && lidx >= p->len);
  int grant = term == p->term && (p->voted < 0 || p->voted == from) && uptodate;
  if (grant && p->voted != from) {
    p->voted = from;
    if (save_vote(p) < 0)
      return;
    changed = 0;
  }
  if (changed && save_meta(p) < 0)
    return;
  if (grant)
    reset_election(p);
  uint8_t r[6 + SF_SEAL_BYTES];
  sf_enc e;
  msg_start(&e, r, sizeof r, M_RVR);
  sf_enc_u32(&e, p->term);
  sf_enc_u8(&e, (uint8_t)grant);
  net_send(p, from, &e);
}

/* A reply of a newer term: step down (persisting the term); 1 if so. */
static int newer_term(rk_node *p, uint32_t term) {
  if (term <= p->term)
    return 0;
  step_down(p, term);
  save_meta(p);
  return 1;
}

static void on_rvr(rk_node *p, int from, sf_dec *d) {
  uint32_t term = sf_dec_u32(d);
  uint8_t granted = sf_dec_u8(d);
  if (!sf_dec_ok(d) || sf_dec_left(d) || newer_term(p, term))
    return;
#ifdef RAFT_BUG_STALE_VOTE
  /* BUG: "a granted vote is a granted vote": a reply from one of this
   * candidate's earlier elections, held back by a one-way partition and
   * delivered when it heals, counts in the current one. */
  if (p->role != RK_CANDIDATE || term > p->term || !granted)
    return;
#else
  if (p->role != RK_CANDIDATE || term != p->term || !granted)
    return;
#endif
  p->votes |= 1u << from;
  if (majority(p, p->votes))
    become_leader(p);
}

static void send_aer(rk_node *p, int to, int ok, uint32_t idx) {
  uint8_t r[10 + SF_SEAL_BYTES];
  sf_enc e;
  msg_start(&e, r, sizeof r, M_AER);
  sf_enc_u32(&e, p->term);
  sf_enc_u8(&e, (uint8_t)ok);
  sf_enc_u32(&e, idx);
  net_send(p, to, &e);
}

static void on_ae(rk_node *p, int from, sf_dec *d) {
  uint32_t term = sf_dec_u32(d), prev = sf_dec_u32(d), pterm = sf_dec_u32(d);
  uint32_t lcommit = sf_dec_u32(d), cnt = sf_dec_u8(d);
  if (!sf_dec_ok(d) || cnt > BATCH || sf_dec_left(d) != cnt * RK_RECORD)
    return;
  if (term < p->term) {
    send_aer(p, from, 0, p->len);
    return;
  }
  if (term > p->term || p->role != RK_FOLLOWER) {
    int newer = term > p->term;
    step_down(p, term);
    if (newer && save_meta(p) < 0)
      return;
  }
  p->leader = from;
  reset_election(p);
  if (prev > p->len || p->log[prev].term != pterm || prev + cnt > RK_MAX_LOG) {
    send_aer(p, from, 0, prev > p->len ? p->len : prev - 1);
    return;
  }
  uint32_t from_idx = 0;
  for (uint32_t k = 0; k < cnt; k++) {
    rk_entry e;
    get_entry(d, &e);
    uint32_t i = prev + 1 + k;
    if (i <= p->len && p->log[i].term == e.term)
      continue; /* already have it (a stale or duplicated message) */
    if (i <= p->len) {
      p->len = i - 1; /* conflict: drop it and everything after */
      p->rewrites++;
    }
    p->log[++p->len] = e;
    touch(p, i);
    if (!from_idx)
      from_idx = i;
  }
  if (from_idx)
    update_config(p, from_idx);
  if (from_idx && save_log(p, from_idx) < 0)
    return;
  uint32_t last = prev + cnt;
  if (lcommit > p->commit) {
    p->commit = lcommit < last ? lcommit : last;
    apply_committed(p);
  }
  send_aer(p, from, 1, last);
}

static void on_aer(rk_node *p, int from, sf_dec *d) {
  uint32_t term = sf_dec_u32(d);
  uint8_t ok = sf_dec_u8(d);
  uint32_t idx = sf_dec_u32(d);
  if (!sf_dec_ok(d) || sf_dec_left(d) || newer_term(p, term))
    return;
  if (p->role != RK_LEADER || term != p->term)
    return;
  if (ok) {
    if (idx > p->len)
      return;
#ifdef RAFT_BUG_LEASE_READ
    /* BUG: "a follower waits an election timeout after it hears from me;
     * its ack is how I know it heard": the lease should run from when the
     * heartbeat was sent, and the ack may have been long on its way */
    p->ack_at[from] = p->io->clock_mono(p->io);
#endif
    if (idx > p->match[from])
      p->match[from] = idx;
    if (idx + 1 > p->next[from])
      p->next[from] = idx + 1;
    advance_commit(p);
    if (p->role == RK_LEADER && p->next[from] <= p->len)
      send_ae(p, from);
  } else {
    uint32_t nx = idx + 1 < p->next[from] ? idx + 1 : p->next[from] - 1;
    p->next[from] = nx < 1 ? 1 : nx;
    if (p->next[from] <= p->match[from])
      p->next[from] = p->match[from] + 1;
    send_ae(p, from);
  }
}

/* -1 if the node crashed (p is gone). */
static int on_req(rk_node *p, int from, sf_dec *d) {
  rk_entry e = {p->term, 0, 0, (uint8_t)from, 0, 0, 0};
  e.kind = sf_dec_u8(d);
  e.key = sf_dec_u8(d);
  e.arg = sf_dec_u32(d);
  e.arg2 = sf_dec_u32(d);
  e.req = sf_dec_u32(d);
  sf_dec_u8(d);
  if (!sf_dec_ok(d) || sf_dec_left(d) || e.kind < RK_PUT || e.kind > RK_CONFIG ||
      e.req >= RK_MAX_OPS)
    return 0;
  int self = p->io->self;
  if (p->role != RK_LEADER) {
    send_resp(p, from, e.req, R_REDIRECT, 0, p->leader);
    return 0;
  }
#ifndef RAFT_BUG_NO_DEDUP
  if (p->done[e.req]) { /* executed already: answer from the result table */
    send_resp(p, from, e.req, R_OK, p->done[e.req] - 1, self);
    return 0;
  }
#endif
  if (e.kind == RK_CONFIG) { /* arg: the node; arg2: 1 to add it, 0 to remove it */
    uint32_t x = e.arg, add = e.arg2 != 0;
    if (x >= (uint32_t)p->io->nodes || x == (uint32_t)self) {
      send_resp(p, from, e.req, R_OK, 0, self); /* refused: a leader never removes itself */
      return 0;
    }
    /* one change at a time, each from a configuration this leader knows
     * is committed: its predecessor's, and (by committing an entry of its
     * own term) no change of an earlier leader can still commit */
#ifdef RAFT_BUG_EARLY_CHANGE
    /* BUG: "the previous change is committed: that is all single-server
     * changes need" (the rule Ongaro added in 2015 is missing) */
    int busy = p->config_at > p->commit;
#else
    int busy = p->config_at > p->commit || p->log[p->commit].term != p->term;
#endif
    if (busy) { /* the gateway asks again on a later tick */
      send_resp(p, from, e.req, R_REDIRECT, 0, self);
      return 0;
    }
    uint32_t next = add ? p->members | 1u << x : p->members & ~(1u << x);
    if (next == p->members || __builtin_popcount(next) < 3) {
      send_resp(p, from, e.req, R_OK, next == p->members, self); /* so already, or refused */
      return 0;
    }
    e.arg = next;
    e.arg2 = 0;
  }
#ifdef RAFT_BUG_LEASE_READ
  if (e.kind == RK_GET && rk_lease_left(p) > 0) { /* a read under the lease */
    send_resp(p, from, e.req, R_OK, p->sm[e.key % RK_NKEYS], self);
    return 0;
  }
#endif
#ifdef RAFT_BUG_LOCAL_READ
  /* BUG: "the leader has the latest state; reads need no round trip" */
  if (e.kind == RK_GET) {
    send_resp(p, from, e.req, R_OK, p->sm[e.key % RK_NKEYS], self);
    return 0;
  }
#endif
  /* A retry of a request still in the log is appended again: the state
   * machine executes a request id once (see apply_committed). */
  if (p->len >= RK_MAX_LOG) {
    send_resp(p, from, e.req, R_FULL, 0, self);
    return 0;
  }
  return append_local(p, &e);
}

/* Gateway: a response for one of its pending requests. */
static void on_resp(rk_node *p, sf_dec *d) {
  uint32_t req = sf_dec_u32(d);
  uint8_t status = sf_dec_u8(d);
  uint32_t result = sf_dec_u32(d);
  uint8_t hint = sf_dec_u8(d);
  if (!sf_dec_ok(d) || sf_dec_left(d))
    return;
  for (int i = 0; i < p->npend; i++) {
    rk_pending *q = &p->pend[i];
    if (q->req != req)
      continue;
    if (status == R_REDIRECT) {
      p->leader = hint < p->io->nodes ? hint : -1;
      return; /* resent on a later tick */
    }
    if (status == R_OK && p->on_result)
      p->on_result(p->result_arg, q->tag, result);
    /* R_FULL: the request may or may not have run; it stays pending */
    p->pend[i] = p->pend[--p->npend];
    return;
  }
}

/* -1 if the node crashed (p is gone). */
static int gateway_send(rk_node *p, rk_pending *q) {
  uint8_t m[16 + SF_SEAL_BYTES];
  sf_enc e;
  msg_start(&e, m, sizeof m, M_REQ);
  sf_enc_u8(&e, q->kind);
  sf_enc_u8(&e, q->key);
  sf_enc_u32(&e, q->arg);
  sf_enc_u32(&e, q->arg2);
  sf_enc_u32(&e, q->req);
  sf_enc_u8(&e, 0);
  int to = p->leader;
  if (to < 0) {
    to = p->rr % p->io->nodes;
    p->rr++;
  }
  q->ticks = 0;
  if (to != p->io->self) {
    net_send(p, to, &e);
    return 0;
  }
  sf_dec d; /* its own server: no network */
  sf_dec_init(&d, m, sf_enc_len(&e));
  sf_dec_u8(&d);
  return on_req(p, p->io->self, &d);
}

/* ---- the API ------------------------------------------------------------- */

void rk_recv(rk_node *p, int from, const void *msg, size_t len) {
  sf_dec d;
  if (!sf_dec_unseal(&d, msg, len) || sf_dec_left(&d) == 0 || from < 0 || from >= p->io->nodes)
    return; /* damaged in flight: as good as lost */
  switch (sf_dec_u8(&d)) {
  case M_RV: on_rv(p, from, &d); break;
  case M_RVR: on_rvr(p, from, &d); break;
  case M_AE: on_ae(p, from, &d); break;
  case M_AER: on_aer(p, from, &d); break;
  case M_REQ: on_req(p, from, &d); break;
  case M_RESP: on_resp(p, &d); break;
  default: break;
  }
}

void rk_timer(rk_node *p, uint64_t tag) {
  if (tag == T_ELECTION) {
    p->election = 0;
    if (p->role != RK_LEADER)
      start_election(p);
    return;
  }
  p->io->timer(p->io, TICK_NS, T_TICK);
  if (p->role == RK_LEADER)
    for (int k = 0; k < p->io->nodes; k++)
      if (k != p->io->self)
        send_ae(p, k);
  for (int i = 0; i < p->npend; i++)
    if (++p->pend[i].ticks >= RETRY_TICKS && gateway_send(p, &p->pend[i]) < 0)
      return; /* it crashed while serving its own request */
}

int rk_boot(rk_node *p, node_io *io, rk_result_fn on_result, void *arg) {
  p->io = io;
  p->on_result = on_result;
  p->result_arg = arg;
  p->role = RK_FOLLOWER;
  p->leader = -1;
  p->rr = io->self;
  p->dirty = 1;
  p->config_at = 0;
  if (load(p) < 0)
    return -1;
  update_config(p, 1);
  reset_election(p);
  io->timer(io, TICK_NS, T_TICK);
  return 0;
}

int rk_submit(rk_node *p, uint8_t kind, uint8_t key, uint32_t arg, uint32_t arg2, uint32_t req,
              uint64_t tag) {
  if (p->npend >= RK_MAX_PEND || req >= RK_MAX_OPS)
    return -1;
  rk_pending *q = &p->pend[p->npend++];
  q->req = req;
  q->tag = tag;
  q->kind = kind;
  q->key = key;
  q->arg = arg;
  q->arg2 = arg2;
  gateway_send(p, q);
  return 0;
}

int64_t rk_lease_left(const rk_node *p) {
#ifndef RAFT_BUG_LEASE_READ
  (void)p;
  return 0; /* no read leases in this build */
#else
  /* only a leader that has applied everything up to an entry of its own
   * term knows the latest state */
  if (p->role != RK_LEADER || p->applied != p->commit || p->log[p->commit].term != p->term)
    return 0;
  int64_t now = p->io->clock_mono(p->io), left[RK_MAXN];
  int n = 0;
  for (int k = 0; k < p->io->nodes; k++)
    if (k != p->io->self && p->ack_at[k] != INT64_MIN && now - p->ack_at[k] < LEASE_NS)
      left[n++] = p->ack_at[k] + LEASE_NS - now;
  int need = p->io->nodes / 2; /* acks besides its own vote for a majority */
  if (n < need || need == 0)
    return need == 0 ? LEASE_NS : 0;
  for (int i = 0; i < n; i++) /* the need-th longest */
    for (int j = i + 1; j < n; j++)
      if (left[j] > left[i]) {
        int64_t t = left[i];
        left[i] = left[j];
        left[j] = t;
      }
  return left[need - 1];
#endif
}

int rk_describe(void *ctx, const void *msg, size_t have, size_t len, char *buf, size_t cap) {
  (void)ctx;
  static const char *const kinds[] = {"noop", "put", "get", "cas", "config"};
  sf_dec d;
  sf_dec_init(&d, msg, have);
  uint8_t type = sf_dec_u8(&d);
  if (have < 1)
    return -1;
  uint32_t a = sf_dec_u32(&d);
  switch (type) {
  case M_RV:
    if (have >= 13) {
      uint32_t idx = sf_dec_u32(&d);
      return snprintf(buf, cap, "RequestVote term=%" PRIu32 " last=%" PRIu32 "/t%" PRIu32, a, idx,
                      sf_dec_u32(&d));
    }
    break;
  case M_RVR:
    if (have >= 6)
      return snprintf(buf, cap, "Vote term=%" PRIu32 " %s", a,
                      sf_dec_u8(&d) ? "granted" : "denied");
    break;
  case M_AE:
    if (have >= 18) {
      uint32_t prev = sf_dec_u32(&d), pterm = sf_dec_u32(&d), commit = sf_dec_u32(&d);
      return snprintf(
          buf, cap, "Append term=%" PRIu32 " prev=%" PRIu32 "/t%" PRIu32 " commit=%" PRIu32 " n=%u",
          a, prev, pterm, commit, sf_dec_u8(&d));
    }
    break;
  case M_AER:
    if (have >= 10) {
      uint8_t ok = sf_dec_u8(&d);
      return snprintf(buf, cap, "AppendReply term=%" PRIu32 " %s idx=%" PRIu32, a,
                      ok ? "ok" : "reject", sf_dec_u32(&d));
    }
    break;
  case M_REQ:
    if (have >= 16 && len == 16 + SF_SEAL_BYTES) {
      sf_dec_init(&d, msg, have);
      sf_dec_u8(&d);
      uint8_t kind = sf_dec_u8(&d), key = sf_dec_u8(&d);
      uint32_t arg = sf_dec_u32(&d), arg2 = sf_dec_u32(&d), req = sf_dec_u32(&d);
      return snprintf(buf, cap, "Request #%" PRIu32 " %s k%u %" PRIu32 " %" PRIu32, req,
                      kind <= RK_CONFIG ? kinds[kind] : "?", key, arg, arg2);
    }
    break;
  case M_RESP:
    if (have >= 11) {
      uint8_t status = sf_dec_u8(&d);
      return snprintf(buf, cap, "Response #%" PRIu32 " %s %" PRIu32, a,
                      status == R_OK         ? "ok"
                      : status == R_REDIRECT ? "redirect"
                                             : "full",
                      sf_dec_u32(&d));
    }
    break;
  default: break;
  }
  return -1;
}

uint32_t rk_classify(void *ctx, const void *msg, size_t len) {
  (void)ctx;
  return len ? ((const uint8_t *)msg)[0] & 7u : 0;
}
