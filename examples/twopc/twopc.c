/* twopc: the protocol (see twopc.h). */
#include "twopc.h"

#include <simfuzz/simfuzz_wire.h>

#include <inttypes.h>
#include <stdio.h>

/* durable records */
enum { R_COMMIT = 1, R_PREPARED, R_COMMITTED, R_ABORTED };
#define TICK_NS 50000000ull /* 50 ms */
#define VOTE_TICKS 20       /* coordinator: no decision after 1 s -> abort */
#define RESEND_TICKS 2
#define STATUS_TICKS 4
#define PEER_TICKS 10 /* in doubt this long: ask the other participants too */

/* ---- disk: one record per sector ------------------------------------------ */

/* Append a record; synced unless sync == 0. -1 after a crash. */
static int log_rec(tp_node *p, uint8_t type, uint32_t t, uint32_t v, int sync) {
  if (p->nrec >= TP_MAX_REC)
    return 0; /* full: keep running from memory (bounded run) */
  uint8_t b[TP_RECORD];
  sf_enc e;
  sf_enc_init(&e, b, sizeof b);
  sf_enc_u8(&e, type);
  sf_enc_u32(&e, t);
  sf_enc_u32(&e, v);
  if (p->io->record_write(p->io, p->nrec, b, TP_RECORD, sync) < 0) {
    p->io->crash(p->io);
    return -1;
  }
  p->nrec++;
  if (sync)
    p->durable = p->nrec;
  return 0;
}

/* Sync the records written without a sync since the last one (the bugs
 * that leave a record to the next tick's group commit). -1 after a crash. */
#if defined(TWOPC_BUG_UNSYNCED_DECISION) || defined(TWOPC_BUG_PEER_ABORT_UNSYNCED)
static int sync_pending(tp_node *p) {
  if (p->durable < p->nrec) {
    if (p->io->sync(p->io) < 0) {
      p->io->crash(p->io);
      return -1;
    }
    p->durable = p->nrec;
  }
  return 0;
}
#endif

/* Transaction t (1..TP_MAX_TXN), which the node has now heard of: the
 * scans of the table stop at the highest such one. */
static tp_txn *txn(tp_node *p, uint32_t t) {
  if (t > p->top)
    p->top = t;
  return &p->t[t];
}

/* Set a transaction's state. The node counts its transactions per state,
 * so that tp_phases need not scan the table. */
static void set_st(tp_node *p, tp_txn *x, uint8_t st) {
  if (x->st != TP_C_NONE && --p->nst[x->st] == 0)
    p->held &= ~(1u << x->st);
  if (st != TP_C_NONE && p->nst[st]++ == 0)
    p->held |= 1u << st;
  x->st = st;
}

static void note(tp_node *p, uint32_t t, uint8_t what) {
  if (p->nout < TP_MAX_OUT)
    p->out[p->nout++] = (tp_outcome){t, what};
}

static int load(tp_node *p) {
  uint8_t b[TP_RECORD];
  while (p->nrec < TP_MAX_REC) {
    int64_t r = p->io->record_read(p->io, p->nrec, b, sizeof b);
    if (r < 0) {
      p->io->crash(p->io);
      return -1;
    }
    if (r != TP_RECORD)
      break;
    sf_dec d;
    sf_dec_init(&d, b, sizeof b);
    uint8_t type = sf_dec_u8(&d);
    uint32_t t = sf_dec_u32(&d), v = sf_dec_u32(&d);
    p->nrec++;
    if (t == 0 || t > TP_MAX_TXN)
      continue;
    tp_txn *x = txn(p, t);
    switch (type) {
    case R_COMMIT: /* coordinator: tell everyone again */
      set_st(p, x, TP_C_COMMITTING);
      x->acked = 0;
      note(p, t, TP_O_COMMIT); /* it may have been written by a sync that failed */
      break;
    case R_PREPARED:
      set_st(p, x, TP_P_PREPARED);
      x->value = v;
      break;
    case R_COMMITTED:
      set_st(p, x, TP_P_COMMITTED);
      note(p, t, TP_O_COMMIT);
      break;
    case R_ABORTED:
      set_st(p, x, TP_P_ABORTED);
      note(p, t, TP_O_ABORT);
      break;
    default: break;
    }
  }
  p->durable = p->nrec;
  return 0;
}

/* ---- messages ------------------------------------------------------------ */

static void msg(tp_node *p, int to, uint8_t type, uint32_t t, uint32_t v) {
  node_io_send_small(p->io, to, type, t, v);
}

static uint32_t all_participants(const tp_node *p) {
  return ((1u << p->io->nodes) - 1) & ~1u;
}

/* ---- coordinator ----------------------------------------------------------- */

static void send_decision(tp_node *p, uint32_t t) {
  tp_txn *x = &p->t[t];
  for (int k = 1; k < p->io->nodes; k++)
    if (!(x->acked & 1u << k))
      msg(p, k, x->st == TP_C_COMMITTING ? TP_COMMIT : TP_ABORT, t, 0);
}

static void decide(tp_node *p, uint32_t t, int commit) {
  tp_txn *x = &p->t[t];
  if (commit) {
#ifdef TWOPC_BUG_UNSYNCED_DECISION
    /* BUG: "the decision reaches the disk with the next tick's sync" */
    if (log_rec(p, R_COMMIT, t, 0, 0) < 0)
      return;
#else
    if (log_rec(p, R_COMMIT, t, 0, 1) < 0)
      return;
#endif
  }
  set_st(p, x, commit ? TP_C_COMMITTING : TP_C_ABORTING);
  x->acked = 0;
  x->ticks = 0;
  note(p, t, commit ? TP_O_COMMIT : TP_O_ABORT);
  send_decision(p, t);
}

static void coord_recv(tp_node *p, int from, uint8_t type, uint32_t t, uint32_t v) {
  tp_txn *x = &p->t[t];
  switch (type) {
  case TP_VOTE:
    if (x->st == TP_C_COLLECTING) {
      /* a vote after the deadline is too late, even if the tick that would
       * have aborted has not run yet (the coordinator was paused) */
      if (!v || p->io->clock_mono(p->io) - x->begun > (int64_t)(VOTE_TICKS * TICK_NS)) {
        decide(p, t, 0);
        return;
      }
      x->yes |= 1u << from; /* prepares are resent to the others only */
#ifdef TWOPC_BUG_COUNT_VOTES
      /* BUG: "every participant votes once": count yes messages */
      if (++x->nyes >= (uint32_t)(p->io->nodes - 1))
        decide(p, t, 1);
#else
      if (x->yes == all_participants(p))
        decide(p, t, 1);
#endif
      return;
    }
    /* fall through - a late vote is answered like a status query */
  case TP_STATUS:
    if (x->st == TP_C_COLLECTING)
      return; /* the decision is coming */
    msg(p, from, x->st == TP_C_COMMITTING || x->st == TP_C_DONE_COMMIT ? TP_COMMIT : TP_ABORT, t,
        0);
    return;
  case TP_ACK:
    if (x->st == TP_C_COMMITTING || x->st == TP_C_ABORTING) {
      x->acked |= 1u << from;
      if (x->acked == all_participants(p))
        set_st(p, x, x->st == TP_C_COMMITTING ? TP_C_DONE_COMMIT : TP_C_DONE_ABORT);
    }
    return;
  default: return;
  }
}

static void coord_tick(tp_node *p) {
#ifdef TWOPC_BUG_UNSYNCED_DECISION
  if (sync_pending(p) < 0)
    return;
#endif
  for (uint32_t t = 1; t <= p->top; t++) {
    tp_txn *x = &p->t[t];
    if (x->st == TP_C_NONE || x->st >= TP_C_DONE_ABORT)
      continue;
    x->ticks++;
    if (x->st == TP_C_COLLECTING) {
      if (x->ticks >= VOTE_TICKS) {
        decide(p, t, 0);
        continue;
      }
      if (x->ticks % RESEND_TICKS == 0)
        for (int k = 1; k < p->io->nodes; k++)
          if (!(x->yes & 1u << k))
            msg(p, k, TP_PREPARE, t, x->value);
    } else if (x->ticks % RESEND_TICKS == 0) {
      send_decision(p, t);
    }
  }
}

/* ---- participants ---------------------------------------------------------- */

static int votes_yes(int node, uint32_t v) {
  return ((v >> (2 * (node % 16))) & 3u) != 0;
}

/* A prepared participant learns (or decides) the outcome: logged durably,
 * then journaled. -1 if the node crashed. */
static int finish(tp_node *p, uint32_t t, int commit) {
  if (log_rec(p, commit ? R_COMMITTED : R_ABORTED, t, 0, 1) < 0)
    return -1;
  set_st(p, &p->t[t], commit ? TP_P_COMMITTED : TP_P_ABORTED);
  note(p, t, commit ? TP_O_COMMIT : TP_O_ABORT);
  return 0;
}

static void part_recv(tp_node *p, int from, uint8_t type, uint32_t t, uint32_t v) {
  tp_txn *x = &p->t[t];
  switch (type) {
  case TP_PREPARE:
    if (x->st == TP_P_NONE) {
      if (!votes_yes(p->io->self, v)) {
        set_st(p, x, TP_P_VOTED_NO);
        note(p, t, TP_O_ABORT);
      } else {
        if (log_rec(p, R_PREPARED, t, v, 1) < 0)
          return;
        set_st(p, x, TP_P_PREPARED);
        x->value = v;
        x->ticks = 0;
      }
    }
    msg(p, from, TP_VOTE, t, x->st == TP_P_PREPARED || x->st == TP_P_COMMITTED);
    return;
  case TP_COMMIT:
  case TP_ABORT:
    if (x->st == TP_P_PREPARED && finish(p, t, type == TP_COMMIT) < 0)
      return;
    if (x->st == TP_P_NONE && type == TP_ABORT)
      set_st(p, x, TP_P_ABORTED); /* a late prepare will be voted down */
    msg(p, from, TP_ACK, t, 0);
    return;
  default: return;
  }
}

/* A peer asks what this participant knows of transaction t. */
static void answer_peer(tp_node *p, int from, uint32_t t) {
  tp_txn *x = &p->t[t];
  if (x->st == TP_P_NONE) { /* never voted: abort now, and vote no later */
#if defined(TWOPC_BUG_PEER_ABORT_UNLOGGED)
    /* BUG: "a participant that never voted holds no locks: its abort needs
     * no log record" */
#elif defined(TWOPC_BUG_PEER_ABORT_UNSYNCED)
    /* BUG: "nobody waits on this abort: it can ride the next tick's group
     * commit" (a crash before that tick loses it) */
    if (log_rec(p, R_ABORTED, t, 0, 0) < 0)
      return;
#else
    if (log_rec(p, R_ABORTED, t, 0, 1) < 0)
      return;
#endif
    set_st(p, x, TP_P_ABORTED);
    p->peer_aborts++;
    note(p, t, TP_O_ABORT);
  }
  uint32_t a = x->st == TP_P_COMMITTED  ? TP_A_COMMIT
               : x->st == TP_P_PREPARED ? TP_A_UNKNOWN
                                        : TP_A_ABORT;
  msg(p, from, TP_ANSWER, t, a);
}

static void peer_recv(tp_node *p, int from, uint8_t type, uint32_t t, uint32_t v) {
  if (type == TP_QUERY)
    answer_peer(p, from, t);
  else if (type == TP_ANSWER && p->t[t].st == TP_P_PREPARED && v != TP_A_UNKNOWN)
    finish(p, t, v == TP_A_COMMIT);
}

static void part_tick(tp_node *p) {
#ifdef TWOPC_BUG_PEER_ABORT_UNSYNCED
  if (sync_pending(p) < 0)
    return;
#endif
  for (uint32_t t = 1; t <= p->top; t++) {
    tp_txn *x = &p->t[t];
    if (x->st != TP_P_PREPARED)
      continue;
    x->ticks++;
#ifdef TWOPC_BUG_PARTICIPANT_TIMEOUT
    /* BUG: "if the coordinator has not answered in a second, it aborted" */
    if (x->ticks >= 20) {
      if (finish(p, t, 0) < 0)
        return;
      continue;
    }
#endif
    if (x->ticks % STATUS_TICKS == 0) {
      msg(p, 0, TP_STATUS, t, 0);
#ifdef TWOPC_COOPERATIVE
      for (int k = 1; x->ticks >= PEER_TICKS && k < p->io->nodes; k++)
        if (k != p->io->self)
          msg(p, k, TP_QUERY, t, 0);
#endif
    }
  }
}

/* ---- the API --------------------------------------------------------------- */

void tp_recv(tp_node *p, int from, const void *data, size_t len) {
  uint8_t type;
  uint32_t t, v;
  if (!node_io_read_small(data, len, &type, &t, &v) || from < 0 || from >= p->io->nodes)
    return; /* damaged in flight */
  if (t == 0 || t > TP_MAX_TXN)
    return;
  txn(p, t); /* heard of now, whoever handles it */
  if (p->io->self == 0)
    coord_recv(p, from, type, t, v);
  else if (from == 0)
    part_recv(p, from, type, t, v);
  else if (from != p->io->self)
    peer_recv(p, from, type, t, v);
}

void tp_timer(tp_node *p, uint64_t tag) {
  (void)tag;
  p->io->timer(p->io, TICK_NS, 1);
  if (p->io->self == 0)
    coord_tick(p);
  else
    part_tick(p);
}

int tp_boot(tp_node *p, node_io *io) {
  p->io = io;
  if (load(p) < 0)
    return -1;
  io->timer(io, TICK_NS, 1);
  return 0;
}

int tp_begin(tp_node *p, uint32_t t, uint32_t value) {
  if (p->io->self != 0 || t == 0 || t > TP_MAX_TXN || p->t[t].st != TP_C_NONE)
    return -1;
  tp_txn *x = txn(p, t);
  set_st(p, x, TP_C_COLLECTING);
  x->value = value;
  x->begun = p->io->clock_mono(p->io);
  for (int k = 1; k < p->io->nodes; k++)
    msg(p, k, TP_PREPARE, t, x->value);
  return 0;
}

int tp_busy(const tp_node *p) {
  return tp_phases(p) != 0;
}

/* The states in which a transaction is in progress at this node, a bit per
 * state: undecided or unacknowledged at the coordinator, prepared at a
 * participant. */
static uint32_t in_progress(const tp_node *p) {
  return p->io->self == 0 ? 1u << TP_C_COLLECTING | 1u << TP_C_COMMITTING | 1u << TP_C_ABORTING
                          : 1u << TP_P_PREPARED;
}

uint32_t tp_phases(const tp_node *p) {
  return p->held & in_progress(p);
}

uint32_t tp_phases_scan(const tp_node *p) {
  uint32_t s = 0;
  for (uint32_t t = 1; t <= p->top; t++)
    s |= 1u << p->t[t].st;
  return s & in_progress(p);
}

int tp_describe(void *ctx, const void *data, size_t have, size_t len, char *buf, size_t cap) {
  (void)ctx;
  static const char *const names[] = {"?",     "PREPARE", "VOTE",   "COMMIT",
                                      "ABORT", "ACK",     "STATUS", "QUERY"};
  static const char *const answers[] = {"unknown", "commit", "abort"};
  uint8_t type;
  uint32_t t, v;
  if (!node_io_peek_small(data, have, len, &type, &t, &v) || type < TP_PREPARE || type > TP_ANSWER)
    return -1;
  if (type == TP_ANSWER)
    return snprintf(buf, cap, "ANSWER t%" PRIu32 " %s", t, v <= TP_A_ABORT ? answers[v] : "?");
  if (type == TP_VOTE)
    return snprintf(buf, cap, "VOTE t%" PRIu32 " %s", t, v ? "yes" : "no");
  if (type == TP_PREPARE)
    return snprintf(buf, cap, "PREPARE t%" PRIu32 " v=%08" PRIx32, t, v);
  return snprintf(buf, cap, "%s t%" PRIu32, names[type], t);
}

uint32_t tp_classify(void *ctx, const void *data, size_t len) {
  (void)ctx;
  if (len < 9)
    return 0;
  sf_dec d;
  sf_dec_init(&d, data, len);
  uint8_t type = sf_dec_u8(&d);
  sf_dec_u32(&d);
  if (type == TP_QUERY)
    return 8;
  if (type == TP_ANSWER)
    return 9 + (sf_dec_u32(&d) % 3u);
  return type == TP_VOTE ? 6 + (sf_dec_u32(&d) != 0) : type & 7u;
}
