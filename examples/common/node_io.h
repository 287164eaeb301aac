/*
 * node_io: everything one node of an example protocol does to the outside
 * world, as a small struct of functions in the style of canonical/raft's
 * raft_io. A protocol's .c file includes this header and nothing of the
 * simulator: it could run over sockets and files as well. node_io_sim.c
 * implements it over simfuzz's simulator (the target glue uses that);
 * a real deployment would implement it over the operating system.
 *
 * Conventions: functions return 0 (or a non-negative value) on success and
 * a negative errno on failure; a node is a number 0..nodes-1; times are
 * nanoseconds; records are numbered and survive crashes once synced.
 */
#ifndef EXAMPLES_NODE_IO_H
#define EXAMPLES_NODE_IO_H

#include <simfuzz/simfuzz_wire.h>

#include <stddef.h>
#include <stdint.h>

typedef struct node_io node_io;

/** What happened on a stream connection (the handler's `event`). */
typedef enum {
  NODE_CONN_ACCEPTED = 1,  /**< a peer connected to this node */
  NODE_CONN_CONNECTED = 2, /**< this node's connect completed */
  NODE_CONN_DATA = 3,      /**< bytes arrived, in order */
  NODE_CONN_CLOSED = 4,    /**< the peer closed gracefully */
  NODE_CONN_RESET = 5,     /**< reset: in-flight bytes lost; the handle is dead */
  NODE_CONN_REFUSED = 6,   /**< connect refused */
  NODE_CONN_TIMEOUT = 7,   /**< connect or stalled stream timed out; handle dead */
} node_conn_event;

struct node_io {
  int self;   /**< this node's number */
  int nodes;  /**< nodes in the cluster */
  void *impl; /**< the implementation's state */

  /** Send a datagram to node `to` (may be lost, duplicated, reordered or
   *  corrupted on the way: seal it). */
  int (*send)(node_io *io, int to, const void *msg, size_t len);
  /** Open a stream connection to `to`: a handle (> 0) or a negative errno. */
  int64_t (*connect)(node_io *io, int to);
  /** Queue bytes on a connection. */
  int (*conn_send)(node_io *io, uint64_t conn, const void *msg, size_t len);
  /** Close a connection (the handle is then invalid). */
  void (*conn_close)(node_io *io, uint64_t conn);

  /** Write record n of the node's log store (sync: make it durable). */
  int (*record_write)(node_io *io, uint64_t n, const void *data, uint32_t len, int sync);
  /** Read record n: its length (> 0), 0 if empty or damaged, or a negative
   *  errno if the disk kept failing (the caller crashes: see crash). */
  int64_t (*record_read)(node_io *io, uint64_t n, void *out, uint32_t cap);
  /** Make every record written so far durable. */
  int (*sync)(node_io *io);

  /** Call the protocol's timer handler with `tag` after delay_ns of this
   *  node's clock: a handle (> 0), or 0 if none could be started. */
  uint64_t (*timer)(node_io *io, uint64_t delay_ns, uint64_t tag);
  /** Cancel a timer that has not fired (0 or a negative errno). */
  int (*timer_cancel)(node_io *io, uint64_t timer);
  /** The node's wall clock (may jump) and monotonic clock, ns. */
  int64_t (*clock)(node_io *io);
  int64_t (*clock_mono)(node_io *io);
  /** A pseudo-random 64-bit number (randomized timeouts and the like). */
  uint64_t (*random)(node_io *io);

  /** Stop the node as a failed process does (an I/O error it cannot trust
   *  its way around): it restarts later from its durable records. The
   *  caller must return at once: its state is gone. */
  void (*crash)(node_io *io);
};

/** Send the small message twopc and leaselock speak: a type byte and two
 *  32-bit values, sealed (see simfuzz_wire.h). */
static inline void node_io_send_small(node_io *io, int to, uint8_t type, uint32_t a, uint32_t b) {
  uint8_t m[9 + SF_SEAL_BYTES];
  sf_enc e;
  sf_enc_init(&e, m, sizeof m);
  sf_enc_u8(&e, type);
  sf_enc_u32(&e, a);
  sf_enc_u32(&e, b);
  io->send(io, to, m, sf_enc_seal(&e));
}

/** For describing a traced small message (have bytes of len kept): 1 and
 *  its fields if it is one, else 0. */
static inline int node_io_peek_small(const void *msg, size_t have, size_t len, uint8_t *type,
                                     uint32_t *a, uint32_t *b) {
  sf_dec d;
  sf_dec_init(&d, msg, have);
  *type = sf_dec_u8(&d);
  *a = sf_dec_u32(&d);
  *b = sf_dec_u32(&d);
  return have >= 9 && len == 9 + SF_SEAL_BYTES;
}

/** Read a small message: 1 and its fields, or 0 if damaged or of another
 *  size (drop it). */
static inline int node_io_read_small(const void *msg, size_t len, uint8_t *type, uint32_t *a,
                                     uint32_t *b) {
  sf_dec d;
  if (!sf_dec_unseal(&d, msg, len) || sf_dec_left(&d) != 9)
    return 0;
  *type = sf_dec_u8(&d);
  *a = sf_dec_u32(&d);
  *b = sf_dec_u32(&d);
  return 1;
}

#endif
