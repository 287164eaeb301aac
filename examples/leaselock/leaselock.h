/*
 * leaselock: a lease-based lock service guarding a fenced resource, the
 * protocol alone (node_io only; leaselock_target.c runs and checks it).
 *
 * Node 0 runs the lock server and the resource (a register); nodes 1..n-1
 * are clients. A client operation asks the client to write a value under
 * the lock: it sends ACQUIRE (resent every 100 ms with the same request id)
 * and the server grants a lease of LL_LEASE_NS on its own clock, with a new
 * fencing token (persisted before the grant). The client counts its lease
 * from when it first sent that request, on its monotonic clock, and only
 * half as long as the server: clocks may drift by up to 20 % each way
 * (0.5 / 0.8 < 1 / 1.2). If enough lease is left, it prepares the write
 * (WORK ms), sends WRITE(token, value), and releases the lock when the
 * write is acknowledged. The resource rejects a token lower than the
 * highest it has accepted (fencing), persisting that token before it
 * answers. A restarted server grants nothing for a full lease.
 *
 * Planted bugs (see docs/bug-zoo.md):
 *   LEASELOCK_BUG_DRIFT      the client trusts its clock: it keeps the lease
 *       for the server's full term less a small allowance for latency.
 *   LEASELOCK_BUG_NO_FENCING the resource accepts any token: a client paused
 *       between its lease check and its write overwrites its successor.
 *   LEASELOCK_BUG_WALL_GRACE (deep) a restarted server ends its grace period
 *       by its wall clock, which a time sync can jump forward: it grants a
 *       lease that a client from before the restart still holds.
 *   LEASELOCK_BUG_UNSYNCED_FENCE the resource raises its fence (the highest
 *       token it accepted) in memory and leaves the record to the next
 *       grant's save: a crash before that grant lowers the fence, and a late
 *       write of an earlier holder gets through.
 */
#ifndef LEASELOCK_H
#define LEASELOCK_H

#include "../common/node_io.h"

#include <stdint.h>

enum { LL_QUEUE = 8, LL_MAX_ACCEPTED = 4096, LL_RECORD = 12 };
enum { LL_ACQUIRE = 1, LL_GRANT, LL_BUSY, LL_RELEASE, LL_WRITE, LL_WACK };
/** A client's state. */
enum { LL_IDLE = 0, LL_ACQUIRING, LL_WORKING, LL_WRITING };

typedef struct ll_node {
  node_io *io;
  /* server */
  uint32_t seq;      /* sequence number of the last state record written */
  uint32_t token;    /* last token granted (durable) */
  uint32_t accepted; /* highest token the resource accepted (durable) */
  int holder;        /* -1: free */
  uint32_t holder_token;
  int grace;           /* after a restart: no grants for a lease */
  int64_t grace_until; /* (LEASELOCK_BUG_WALL_GRACE) wall-clock end of the grace */
  /* client */
  int st;
  uint32_t req;             /* current acquire request id */
  int64_t sent;             /* mono time of its first send */
  uint32_t my_token;        /* held token */
  int64_t expiry;           /* mono time the held lease ends */
  uint32_t queue[LL_QUEUE]; /* values to write */
  int nq;
  /* the resource's journal: tokens of accepted writes since boot */
  uint32_t acc[LL_MAX_ACCEPTED];
  uint32_t nacc;
} ll_node;

/** Start (or restart) a node. Returns -1 if it crashed on an I/O error. */
int ll_boot(ll_node *p, node_io *io, int restart);

/** A datagram from `from`. */
void ll_recv(ll_node *p, int from, const void *msg, size_t len);

/** The node's timer fired. */
void ll_timer(ll_node *p, uint64_t tag);

/** A client is asked to write `value` under the lock. -1 if refused. */
int ll_request(ll_node *p, uint32_t value);

/** 1 if a client holds a lease by its own clock. */
int ll_holds(ll_node *p);

/** Describe a message; -1 if not one. */
int ll_describe(void *ctx, const void *msg, size_t have, size_t len, char *buf, size_t cap);

/** A message's class for feedback: its type. */
uint32_t ll_classify(void *ctx, const void *msg, size_t len);

#endif
