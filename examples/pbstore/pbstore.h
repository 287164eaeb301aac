/*
 * pbstore: primary-backup log replication over stream connections, the
 * protocol alone. It talks to the world only through node_io (disk
 * records, connections, timers, clock); pbstore_target.c runs it in
 * simfuzz's simulator and checks it.
 *
 * Node 0 is the primary; every other node is a backup. A client write
 * appends a value to the primary's log. The primary writes the entry to its
 * disk and syncs it; only then is the entry "durable" and sent to the
 * backups, each over its own stream connection, with at most PB_WINDOW
 * entries unacknowledged per backup. A backup writes what it receives at
 * the index the primary gives, syncs, and acknowledges with its log length.
 * After every (re)connection the backup first sends a hello (an ACK with
 * its length) and the primary resumes from there. A node loads its records
 * up to the first missing or damaged one.
 *
 * Planted bug (PBSTORE_BUG_RESET_SKIP): when a connection is reset while the
 * backup's window has been full (no ack progress) for over 500 ms, the
 * primary assumes the backup had buffered the window, counts it as
 * delivered and, on reconnect, resumes after it instead of waiting for the
 * hello. The entries lost with the reset leave a hole in the backup's log.
 */
#ifndef PBSTORE_H
#define PBSTORE_H

#include "../common/node_io.h"

#include <stdint.h>

enum { PB_MAX_LOG = 256, PB_WINDOW = 3, PB_MAX_NODES = 64 };
enum { PB_MSG_ENTRY = 1, PB_MSG_ACK = 2 };
enum { PB_RECORD = 8 }; /* bytes of one log record: the value */

typedef struct {
  uint64_t conn;      /* primary: connection to this backup, 0 if none */
  int hello;          /* primary: the backup's hello arrived on conn */
  int skip_hello;     /* primary (bug): resume without waiting for a hello */
  uint32_t next;      /* primary: next index to send */
  uint32_t acked;     /* primary: backup's acknowledged length */
  int64_t full_since; /* primary: clock when the window filled, or -1 */
} pb_peer;

/** One node's state. */
typedef struct pb_node {
  node_io *io;
  uint32_t len;          /* entries in log */
  uint32_t durable;      /* primary: entries synced (and so sendable) */
  uint32_t changed_from; /* lowest index written since pb_changes_seen */
  uint64_t log[PB_MAX_LOG];
  pb_peer peer[PB_MAX_NODES];
} pb_node;

/** Start (or restart) a node over io: load the log; the primary starts
 *  connecting. Returns -1 if the node crashed on an I/O error (p is gone). */
int pb_boot(pb_node *p, node_io *io);

/** The node's timer fired. */
void pb_timer(pb_node *p, uint64_t tag);

/** A connection event on conn. */
void pb_conn(pb_node *p, uint64_t conn, node_conn_event ev, const uint8_t *data, size_t len);

/** A client write of `value` (nonzero) at the primary: appended, synced and
 *  replicated. Returns 0, or -1 if refused (log full) or the node crashed. */
int pb_write(pb_node *p, uint64_t value);

/** Describe a message ("ENTRY idx=3 op=7", "ACK len=4"); -1 if not one. */
int pb_describe(void *ctx, const void *msg, size_t have, size_t len, char *buf, size_t cap);

/** The primary's replication state for a backup, coarsely (for feedback):
 *  0 no connection, 1 waiting for the hello, 2 + unacknowledged entries. */
uint32_t pb_peer_state(const pb_node *p, int backup);

/** A message's class for feedback: its type. */
uint32_t pb_classify(void *ctx, const void *msg, size_t len);

#endif
