/*
 * raft_kv: a key-value store replicated with Raft over datagrams, the
 * protocol alone (node_io only; raft_kv_target.c runs and checks it).
 *
 * Every node runs a Raft server (leader election, log replication, commit,
 * apply) and a client gateway. A client operation (put, get or cas) enters
 * at its gateway node, which sends it to the node it believes leads and
 * retries with the same request id until a response arrives, as real
 * clients do. Gets go through the log (so a deposed leader cannot answer
 * them) and a per-request result table in the state machine makes retried
 * and duplicated requests execute once.
 *
 * Membership changes (RK_CONFIG requests; none unless a client sends one):
 * one server at a time, as in Ongaro's dissertation (section 4.1). A
 * configuration is a log entry holding the new member set, in force on a
 * node as soon as the entry is in its log, committed or not; elections and
 * commits count majorities of members only. A leader starts a change only
 * once the previous one is committed and it has committed an entry of its
 * own term; it never removes itself, and a configuration keeps at least 3
 * members. Nodes outside it follow the leader's log but do not campaign.
 *
 * Persistence: records 0 and RK_MAX_LOG + 1 hold (sequence, term, vote,
 * log length), written in turn (the later valid one counts); entry i is
 * record i. A node syncs its vote and term before answering, and its log before
 * acknowledging entries. Entries are written and synced before the length
 * that covers them, and a truncation is made durable before the records
 * are overwritten, so a crash at any point leaves a valid log.
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
 * Ones that need several faults in order (docs/bug-zoo.md):
 *   RAFT_BUG_TRUNCATE_UNSYNCED  a follower that replaces conflicting entries
 *                           acknowledges the rewrite before syncing it: a
 *                           crash brings the old suffix back and an
 *                           acknowledged, committed entry is lost.
 *   RAFT_BUG_LEASE_READ     leaders serve gets from a read lease that runs
 *                           from when a majority's acknowledgements arrived
 *                           (not from when the heartbeat was sent): a late
 *                           acknowledgement stretches it past a new leader's
 *                           first write -> a stale read.
 *   RAFT_BUG_STALE_VOTE     a candidate counts granted votes from its
 *                           earlier elections: a vote held back by a
 *                           one-way partition and delivered when it heals
 *                           makes a second leader of the term.
 *   RAFT_BUG_EARLY_CHANGE   a new leader starts a membership change before
 *                           it has committed an entry of its own term
 *                           (Ongaro, raft-dev, 2015): with an earlier
 *                           leader's uncommitted change, two configurations
 *                           whose majorities need not overlap -> two
 *                           leaders commit different entries at one index.
 */
#ifndef RAFT_KV_H
#define RAFT_KV_H

#include "../common/node_io.h"

#include <stdint.h>

enum {
  RK_MAXN = 7,      /* nodes */
  RK_MAX_LOG = 512, /* entries per log (1-based) */
  RK_MAX_OPS = 384, /* client requests per run (request ids 0..RK_MAX_OPS-1) */
  RK_MAX_PEND = 8,  /* outstanding requests per gateway */
  RK_NKEYS = 4,     /* keys */
  RK_RECORD = 24    /* bytes of the largest record (an entry) */
};
enum { RK_FOLLOWER = 1, RK_CANDIDATE = 2, RK_LEADER = 3 };
/** Entry kinds: a no-op, the key-value model's operations (linearize.h),
 *  or a membership change (request: arg = the node to add or remove;
 *  entry: arg = the new member set, a bit per node). */
enum { RK_NOOP = 0, RK_PUT = 1, RK_GET = 2, RK_CAS = 3, RK_CONFIG = 4 };

typedef struct {
  uint32_t term;
  uint8_t kind, key, gw;
  uint32_t arg, arg2, req;
} rk_entry;

typedef struct {
  uint32_t req; /* request id */
  uint64_t tag; /* the submitter's (history id) */
  uint8_t kind, key;
  uint32_t arg, arg2;
  uint32_t ticks; /* since the last send */
} rk_pending;

/** Called when a gateway's request got its result. */
typedef void (*rk_result_fn)(void *arg, uint64_t tag, uint32_t result);

typedef struct rk_node {
  node_io *io;
  rk_result_fn on_result;
  void *result_arg;
  uint32_t term;
  int voted; /* -1: none */
  uint32_t len, durable;
  uint32_t meta_seq; /* sequence number of the last metadata record written */
  rk_entry log[RK_MAX_LOG + 1];
  int role, leader; /* leader: hint, -1 unknown */
  uint32_t commit, applied;
  uint32_t votes; /* bitmask of granted votes */
  uint32_t next[RK_MAXN], match[RK_MAXN];
  uint32_t sm[RK_NKEYS];
  uint32_t done[RK_MAX_OPS]; /* result + 1 of each executed request, 0 = not yet */
  uint64_t election;         /* timer */
  rk_pending pend[RK_MAX_PEND];
  int npend;
  int rr;                  /* gateway: next node to try when no leader is known */
  uint32_t dirty;          /* lowest log index changed since rk_changes_seen */
  uint32_t rewrites;       /* entries replaced by a leader's (conflicts), for the checker */
  int64_t ack_at[RK_MAXN]; /* leader, lease reads: when each follower's ack arrived */
  uint32_t initial;        /* members before any change (set before rk_boot; 0: every node) */
  uint32_t members;        /* the configuration in force: a bit per member */
  uint32_t config_at;      /* index of the entry that set it (0: initial) */
} rk_node;

/** Start (or restart) a node from its records; results of its gateway's
 *  requests go to on_result. -1 if it crashed on an I/O error. */
int rk_boot(rk_node *p, node_io *io, rk_result_fn on_result, void *arg);

/** A datagram from `from`. */
void rk_recv(rk_node *p, int from, const void *msg, size_t len);

/** The node's timer fired. */
void rk_timer(rk_node *p, uint64_t tag);

/** Submit a client request at this node's gateway: kind RK_PUT/GET/CAS,
 *  or RK_CONFIG to add or remove node arg (result 1: done; 0: refused, it
 *  would remove the leader or leave fewer than 3 members); request id req
 *  (< RK_MAX_OPS, unique), tag for on_result. Returns 0, or -1 if refused
 *  (too many pending). */
int rk_submit(rk_node *p, uint8_t kind, uint8_t key, uint32_t arg, uint32_t arg2, uint32_t req,
              uint64_t tag);

/** 1 if the two entries are the same. */
int rk_same_entry(const rk_entry *a, const rk_entry *b);

/** Nanoseconds left of the leader's read lease on its monotonic clock; 0
 *  if it holds none (always 0 unless built with RAFT_BUG_LEASE_READ). */
int64_t rk_lease_left(const rk_node *p);

/** 1 in a build whose leaders hold read leases (RAFT_BUG_LEASE_READ). */
#ifdef RAFT_BUG_LEASE_READ
#define RK_LEASES 1
#else
#define RK_LEASES 0
#endif

/** Describe a message; -1 if not one. */
int rk_describe(void *ctx, const void *msg, size_t have, size_t len, char *buf, size_t cap);

/** A message's class for feedback: its type. */
uint32_t rk_classify(void *ctx, const void *msg, size_t len);

#endif
