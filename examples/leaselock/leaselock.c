/* leaselock: the protocol (see leaselock.h). */
#include "leaselock.h"

#include <simfuzz/simfuzz_wire.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

enum { T_TICK = 1, T_WORK = 2, T_LEASE = 3, T_GRACE = 4 };
#define MS 1000000ll
#define LEASE_NS (1000 * MS)
#define TICK_NS (100 * MS)
#define WORK_NS (20 * MS)
#define MIN_LEFT_NS (100 * MS) /* lease left to start a write */
#ifdef LEASELOCK_BUG_DRIFT
/* BUG: "clocks tick at the same rate; allow 20 ms for the grant's trip" */
#define CLIENT_LEASE_NS (LEASE_NS - 20 * MS)
#else
#define CLIENT_LEASE_NS (LEASE_NS / 2)
#endif

/* ---- server and resource (node 0) --------------------------------------- */

/* The server's state lives in records 0 and 1, written in turn with a
 * sequence number: a crash or failed sync that tears the record being
 * written leaves the other, the last durable state. (With one record
 * rewritten in place, a torn write read as a fresh disk: the server went
 * back to token 1 and the resource forgot every token it had accepted.) */
static int save(ll_node *p) {
  uint8_t b[LL_RECORD];
  uint32_t seq = p->seq + 1;
  sf_put32(b, seq);
  sf_put32(b + 4, p->token);
  sf_put32(b + 8, p->accepted);
  if (p->io->record_write(p->io, seq & 1, b, sizeof b, 1) < 0) {
    p->io->crash(p->io); /* cannot trust its disk: recover from it */
    return -1;
  }
  p->seq = seq;
  return 0;
}

static void msg(ll_node *p, int to, uint8_t type, uint32_t a, uint32_t b) {
  node_io_send_small(p->io, to, type, a, b);
}

static void server_recv(ll_node *p, int from, uint8_t type, uint32_t a, uint32_t b) {
  switch (type) {
  case LL_ACQUIRE:
#ifdef LEASELOCK_BUG_WALL_GRACE
    /* BUG: "the grace period is a deadline; deadlines are clock readings":
     * the wall clock, which a time sync can jump forward */
    if (p->grace && p->io->clock(p->io) >= p->grace_until)
      p->grace = 0;
#endif
    if (p->grace || p->holder >= 0) {
      msg(p, from, LL_BUSY, a, 0);
      return;
    }
    p->token++;
    if (save(p) < 0)
      return;
    p->holder = from;
    p->holder_token = p->token;
    p->io->timer(p->io, LEASE_NS, (uint64_t)p->token << 8 | T_LEASE);
    msg(p, from, LL_GRANT, a, p->token);
    return;
  case LL_RELEASE:
    if (p->holder == from && p->holder_token == a)
      p->holder = -1;
    return;
  case LL_WRITE:
#ifndef LEASELOCK_BUG_NO_FENCING
    if (a < p->accepted) {
      msg(p, from, LL_WACK, a, 0); /* fenced off: a newer holder wrote */
      return;
    }
#endif
    if (a > p->accepted) {
      p->accepted = a;
#ifdef LEASELOCK_BUG_UNSYNCED_FENCE
      /* BUG: "the fence only rises, and every grant saves it anyway" */
#else
      if (save(p) < 0)
        return;
#endif
    }
    if (p->nacc < LL_MAX_ACCEPTED)
      p->acc[p->nacc++] = a;
    (void)b; /* the register's value: what matters here is who wrote */
    msg(p, from, LL_WACK, a, 1);
    return;
  default: return;
  }
}

/* ---- clients -------------------------------------------------------------- */

static void acquire(ll_node *p) {
  p->st = LL_ACQUIRING;
  p->req++;
  p->sent = p->io->clock_mono(p->io);
  msg(p, 0, LL_ACQUIRE, p->req, 0);
}

static void next_op(ll_node *p) {
  p->st = LL_IDLE;
  if (p->nq > 0)
    acquire(p);
}

static void done_op(ll_node *p) {
  memmove(p->queue, p->queue + 1, (size_t)(p->nq - 1) * sizeof p->queue[0]);
  p->nq--;
  next_op(p);
}

static void client_recv(ll_node *p, uint8_t type, uint32_t a, uint32_t b) {
  switch (type) {
  case LL_GRANT:
    if (p->st != LL_ACQUIRING || a != p->req) {
      if (p->st == LL_IDLE || p->st == LL_ACQUIRING || b != p->my_token)
        msg(p, 0, LL_RELEASE, b, 0); /* a grant it no longer waits for */
      return;                        /* (or a duplicate of the grant it holds) */
    }
    p->my_token = b;
    p->expiry = p->sent + (int64_t)CLIENT_LEASE_NS;
    if (p->io->clock_mono(p->io) + (int64_t)MIN_LEFT_NS > p->expiry) {
      msg(p, 0, LL_RELEASE, b, 0); /* too little left: try again */
      acquire(p);
      return;
    }
    p->st = LL_WORKING; /* the lease is checked here; the write goes out after WORK */
    p->io->timer(p->io, WORK_NS, T_WORK);
    return;
  case LL_WACK:
    if (p->st == LL_WRITING && a == p->my_token) {
      p->st = LL_IDLE;
      msg(p, 0, LL_RELEASE, a, 0);
      if (b)
        done_op(p);
      else
        next_op(p); /* fenced off: try again with a new lease */
    }
    return;
  default: return;
  }
}

static void client_tick(ll_node *p) {
  int64_t now = p->io->clock_mono(p->io);
  if (p->st == LL_ACQUIRING) {
    msg(p, 0, LL_ACQUIRE, p->req, 0); /* same request id: same lease start */
  } else if (p->st == LL_WRITING) {
    if (now >= p->expiry)
      next_op(p); /* lost the lease without an answer: start over */
    else
      msg(p, 0, LL_WRITE, p->my_token, p->queue[0]);
  }
}

/* ---- the API ---------------------------------------------------------------- */

void ll_recv(ll_node *p, int from, const void *data, size_t len) {
  uint8_t type;
  uint32_t a, b;
  if (!node_io_read_small(data, len, &type, &a, &b) || from < 0 || from >= p->io->nodes)
    return; /* damaged in flight */
  if (p->io->self == 0)
    server_recv(p, from, type, a, b);
  else if (from == 0)
    client_recv(p, type, a, b);
}

void ll_timer(ll_node *p, uint64_t tag) {
  switch (tag & 0xff) {
  case T_TICK:
    p->io->timer(p->io, TICK_NS, T_TICK);
    client_tick(p);
    return;
  case T_WORK:
    if (p->st == LL_WORKING) { /* BUG-prone spot: no second look at the lease */
      p->st = LL_WRITING;
      msg(p, 0, LL_WRITE, p->my_token, p->queue[0]);
    }
    return;
  case T_LEASE:
    if (p->holder >= 0 && p->holder_token == (uint32_t)(tag >> 8))
      p->holder = -1;
    return;
  case T_GRACE: p->grace = 0; return;
  default: return;
  }
}

int ll_boot(ll_node *p, node_io *io, int restart) {
  p->io = io;
  p->holder = -1;
  if (io->self != 0) {
    io->timer(io, TICK_NS, T_TICK); /* clients: resends */
    return 0;
  }
  int found = 0;
  for (uint64_t k = 0; k < 2; k++) { /* the valid record with the later sequence */
    uint8_t b[LL_RECORD];
    int64_t r = io->record_read(io, k, b, sizeof b);
    if (r < 0) {
      io->crash(io);
      return -1;
    }
    if (r != LL_RECORD || (found && (int32_t)(sf_get32(b) - p->seq) <= 0))
      continue;
    found = 1;
    p->seq = sf_get32(b);
    p->token = sf_get32(b + 4);
    p->accepted = sf_get32(b + 8);
  }
  if (restart) { /* some client may still hold a lease it does not know of */
    p->grace = 1;
    p->grace_until = io->clock(io) + LEASE_NS;
    io->timer(io, LEASE_NS, T_GRACE);
  }
  return 0;
}

int ll_request(ll_node *p, uint32_t value) {
  if (p->io->self == 0 || p->nq >= LL_QUEUE)
    return -1;
  p->queue[p->nq++] = value;
  if (p->st == LL_IDLE)
    acquire(p);
  return 0;
}

int ll_holds(ll_node *p) {
  return (p->st == LL_WORKING || p->st == LL_WRITING) && p->io->clock_mono(p->io) < p->expiry;
}

int ll_describe(void *ctx, const void *data, size_t have, size_t len, char *buf, size_t cap) {
  (void)ctx;
  static const char *const names[] = {
      "?", "ACQUIRE #", "GRANT #", "BUSY #", "RELEASE token=", "WRITE token=", "WRITE-ACK token="};
  uint8_t type;
  uint32_t a, b;
  if (!node_io_peek_small(data, have, len, &type, &a, &b) || type < LL_ACQUIRE || type > LL_WACK)
    return -1;
  if (type == LL_GRANT)
    return snprintf(buf, cap, "GRANT #%" PRIu32 " token=%" PRIu32, a, b);
  if (type == LL_WACK)
    return snprintf(buf, cap, "WRITE-ACK token=%" PRIu32 " %s", a, b ? "accepted" : "fenced");
  return snprintf(buf, cap, "%s%" PRIu32, names[type], a);
}

uint32_t ll_classify(void *ctx, const void *msg, size_t len) {
  (void)ctx;
  return len ? ((const uint8_t *)msg)[0] & 7u : 0;
}
