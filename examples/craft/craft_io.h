/*
 * craft_io: canonical/raft's I/O interface (struct raft_io) implemented on
 * the simfuzz simulator, for one node. This is the part of the example a
 * user copies to fuzz their own canonical/raft application.
 *
 * Network: every RPC is one sealed datagram (simfuzz_wire.h) sent with
 * sim_send(), so the simulator's loss, duplication, reordering, corruption,
 * partitions and held links apply; a damaged datagram is dropped.
 * Disk: the term and vote live in two alternating records and each log
 * entry in a record of its own (simfuzz_record.h) on the node's simulated
 * disk. Appends and truncations are written when raft submits them and made
 * durable (sim_disk_sync) when the append completes, after a simulated disk
 * latency; set_term and set_vote are written and synced before they return,
 * as raft requires. A crash keeps, loses or tears what was not synced.
 * Time: the node's monotonic clock (drift applies); randomness: the node's
 * decision stream. Callbacks of raft's asynchronous requests always run in
 * a later event, in submission order.
 *
 * Disk errors (injected read, write and sync failures) follow one of two
 * policies. CRAFT_FAIL_STOP, what careful deployments do ("a failed fsync
 * is a crash", as in PostgreSQL and etcd): the node stops at once - nothing
 * it does from then on is sent or made durable, and it crashes at the same
 * virtual instant; raft never sees the error. CRAFT_RETURN_ERRORS hands the
 * error to raft (RAFT_IOERR), which exercises its error paths. There, as in
 * libuv's backend, a failed append fails the appends queued behind it and
 * the next append goes to its index; and no append is acknowledged whose
 * entries a failed sync may have dropped (a failed sync decides unsynced
 * sectors as a crash does), whichever request that sync was made for.
 *
 * Snapshots, when the backend is set up with them: the newest snapshot
 * (metadata, configuration and the state machine's data) lives in two
 * alternating records between the metadata and the log, written and synced
 * when the request completes, after every disk request before it (as
 * libuv's backend puts a barrier before a snapshot). A snapshot with
 * trailing 0 (one installed from the leader) replaces the log: the log on
 * disk then starts after the snapshot's index. Other snapshots leave the
 * log on disk as it is, and a load returns it from the first of the
 * trailing entries raft asked to keep (as libuv's backend, which deletes
 * older segments). Without snapshots the disk layout is the one the
 * Debian build's regression scenarios were found with, and
 * snapshot_put/snapshot_get fail with RAFT_IOERR.
 */
#ifndef CRAFT_IO_H
#define CRAFT_IO_H

#include <simfuzz/sim.h>

#include <raft.h>

#define CRAFT_TAG_TICK 0x7261667401ull /**< timer tags of the backend */
#define CRAFT_TAG_DISK 0x7261667402ull
#define CRAFT_TAG_NET 0x7261667403ull
#define CRAFT_MAX_ENTRY 512u /**< largest entry payload stored */

/** Disk activity counters of one backend (for oracles and reports). */
typedef struct craft_io_stats {
  uint64_t appends, truncates, syncs, sync_errors, sends, send_errors;
  uint64_t snapshots, installs; /* snapshots stored; of them, installed (trailing 0) */
  uint64_t stalls;              /* times the disk queue waited for a stall to end */
  uint64_t installing;          /* InstallSnapshot stores queued and not completed (a gauge) */
} craft_io_stats;

/** What the backend does with a disk error (see the file comment). */
typedef enum { CRAFT_FAIL_STOP = 0, CRAFT_RETURN_ERRORS = 1 } craft_disk_errors;

/** Set up io as node `node`'s backend (raft id node + 1, address "n<node>"),
 *  with snapshots stored or not (`snapshots`: the same for every boot of a
 *  node, as it decides the disk layout). Returns 0, or RAFT_NOMEM. */
int craft_io_init(struct raft_io *io, sim_world *w, int node, craft_disk_errors mode,
                  int snapshots);

/** Crash `node` at the current virtual instant, after the running callback
 *  returns (never from inside raft's call stack, which the crash's teardown
 *  would free under it). */
void craft_crash_soon(sim_world *w, int node);

/** Release the backend after raft_close() has completed. */
void craft_io_free(struct raft_io *io);

/** 1 if tag is one of the backend's timer tags: pass it to craft_io_timer. */
int craft_io_owns_timer(uint64_t tag);

/** A timer of the backend fired (tick, disk or network completion). */
void craft_io_timer(struct raft_io *io, uint64_t tag);

/** A datagram arrived from node `from`: decode it and hand it to raft. */
void craft_io_recv(struct raft_io *io, int from, const void *msg, size_t len);

/** The backend's counters. */
const craft_io_stats *craft_io_get_stats(const struct raft_io *io);

/** The node number of a raft server id (id - 1), or -1. */
int craft_node_of(raft_id id, int nodes);

/** The address of a node ("n0", "n1", ...: static strings). */
const char *craft_address(int node);

/** A one-line description of an RPC datagram, for timelines. */
int craft_describe(const void *msg, size_t have, size_t len, char *buf, size_t cap);

/** The RPC type of a datagram (RAFT_IO_*), 0 if unknown. */
unsigned craft_msg_type(const void *msg, size_t len);

#endif
