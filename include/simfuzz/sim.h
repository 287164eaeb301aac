/*
 * simfuzz simulator core: a deterministic, single-threaded, in-process
 * simulation of a cluster of nodes running a user's protocol code.
 *
 * A world owns N nodes (at most SIM_MAX_NODES), a virtual clock in
 * nanoseconds, an event scheduler, a faulty datagram network, TCP-shaped
 * stream connections, a disk per node, a clock per node and code-level fault
 * points. Every decision that a real system leaves to chance (latency, loss,
 * duplication, corruption, reordering, which unsynced disk sectors survive a
 * crash, the order of simultaneous events, whether a fault point fires) is
 * drawn from the world's choice source: a caller-supplied byte tape over a
 * seeded PRNG. A run is a pure function of the configuration, the tape, the
 * calls made on the world and the user's callbacks.
 *
 * Conventions
 *   - Functions that can fail return 0 or a positive value on success and a
 *     negative errno value (-EINVAL, -ENOSPC, ...) on failure.
 *   - Node ids are ints in [0, nodes). Times are uint64_t nanoseconds of
 *     virtual "true" time unless a name says "local".
 *   - Rates are parts per million (ppm): 0 = never, 1000000 = always.
 *   - No function here reads the wall clock, calls rand() or starts a thread.
 *     Worlds are fully independent. The one global is per thread: the
 *     world (and node) whose event is running, for sim_current(); it is
 *     saved and restored around every event and run.
 *
 * Scheduler tie-break rule
 *   Events are ordered by (time, priority, sequence). `sequence` is the order
 *   in which events were scheduled. `priority` is 0 for every event under
 *   SIM_TIEBREAK_FIFO (so simultaneous events run in scheduling order, like
 *   libuv timers); under SIM_TIEBREAK_CHOICE (the default) it is a 24-bit
 *   draw from the choice source keyed by the event's identity (its node and
 *   that node's own scheduling counter), so the order of simultaneous events
 *   is a scenario decision and changing one node's behaviour does not reorder
 *   another node's simultaneous events. Stream data and FIN segments of one
 *   connection direction are always delivered in order.
 *
 * Choice source
 *   Decision n of stream s (a 64-bit stream id built from a purpose and the
 *   nodes/links concerned) is x = mix(seed, s, n). If the tape is non-empty,
 *   x selects a slot in [0, SIM_TAPE_MAX); when that slot is below the tape's
 *   length, the decision's top byte is replaced by the tape byte at that slot
 *   (0x00 makes a Bernoulli decision fire and a range draw take its minimum;
 *   0xff the opposite). Decisions whose slot lies beyond the tape fall back
 *   to the PRNG. Because each decision depends only on its own (s, n), one
 *   changed choice does not reshuffle unrelated later decisions.
 */
#ifndef SIMFUZZ_SIM_H
#define SIMFUZZ_SIM_H

#include "version.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SIM_MAX_NODES 64           /**< Hard upper bound on nodes per world. */
#define SIM_TAPE_MAX 4096          /**< Bytes of the choice tape that are used. */
#define SIM_PPM 1000000u           /**< "Always", for rates in ppm. */
#define SIM_TRACE_PREFIX 24        /**< Payload bytes kept in a trace record. */
#define SIM_NS_PER_MS 1000000ull   /**< Nanoseconds per millisecond. */
#define SIM_NS_PER_S 1000000000ull /**< Nanoseconds per second. */
#define SIM_MAX_DRIFT_PPM 200000   /**< Largest clock drift, either way (20 %). */

typedef struct sim_world sim_world;

/** Tie-break rule for simultaneous events (see the file comment). */
typedef enum { SIM_TIEBREAK_CHOICE = 0, SIM_TIEBREAK_FIFO = 1 } sim_tiebreak;

/** Latency distribution of a link. */
typedef enum {
  SIM_LAT_UNIFORM = 0,     /**< uniform in [min, max] */
  SIM_LAT_EXPONENTIAL = 1, /**< min + exponential with mean (max-min)/4, capped at max */
} sim_latency_dist;

/** Fault parameters of one directed datagram link (also used by streams). */
typedef struct sim_link_params {
  uint64_t latency_min_ns;   /**< minimum one-way delay */
  uint64_t latency_max_ns;   /**< maximum one-way delay (before reordering) */
  sim_latency_dist dist;     /**< how delays are drawn between min and max */
  uint32_t loss_ppm;         /**< datagram dropped; stream segment retransmitted */
  uint32_t dup_ppm;          /**< datagram delivered twice (independent delays) */
  uint32_t reorder_ppm;      /**< datagram delayed by up to reorder_delay_ns more */
  uint64_t reorder_delay_ns; /**< extra delay bound for reordered datagrams */
  uint32_t corrupt_ppm;      /**< one bit of the datagram flipped */
  uint64_t bandwidth_bps;    /**< bytes per second; 0 = unlimited */
  uint32_t queue_limit;      /**< max datagrams in flight on the link; 0 = unbounded
                                  (the world budget still applies) */
} sim_link_params;

/** Stream (TCP-shaped) connection parameters. */
typedef struct sim_stream_params {
  uint64_t connect_timeout_ns; /**< connect fails with SIM_CONN_TIMEOUT after this */
  uint64_t retransmit_ns;      /**< delay added per lost segment / stalled retry */
  uint64_t stall_timeout_ns;   /**< a segment stalled this long breaks the connection */
} sim_stream_params;

/** Disk fault parameters (per world; may be changed per node). */
typedef struct sim_disk_params {
  uint32_t sector_size;          /**< crash granularity, bytes (default 512) */
  uint32_t unsynced_keep_ppm;    /**< each dirty sector survives a crash with this rate */
  uint32_t unsynced_corrupt_ppm; /**< ... or is left corrupted with this rate */
  uint32_t read_eio_ppm;         /**< a read fails with -EIO */
  uint32_t write_eio_ppm;        /**< a write fails with -EIO */
  uint32_t sync_eio_ppm;         /**< a sync fails with -EIO (dirty sectors are then
                                      decided as at a crash, but stay readable) */
} sim_disk_params;

/** Code-level fault point (BUGGIFY-style) parameters. */
typedef struct sim_faultpoint_params {
  uint32_t enable_ppm; /**< each site is enabled for the whole run with this rate */
  uint32_t fire_ppm;   /**< an enabled site fires on each hit with this rate */
} sim_faultpoint_params;

/** Resource budgets. Exceeding a run budget ends the run cleanly. */
typedef struct sim_budgets {
  uint64_t max_events;     /**< events processed per world (run budget) */
  uint64_t max_time_ns;    /**< run budget of virtual time, ns */
  uint32_t max_msg_size;   /**< larger sends fail with -EMSGSIZE */
  uint32_t max_inflight;   /**< pending messages+segments in the world (run budget) */
  uint32_t max_pending;    /**< pending events in the scheduler (run budget) */
  uint32_t max_conns;      /**< open connections; connect fails with -EMFILE */
  uint32_t max_disk_bytes; /**< per node; writes past it fail with -ENOSPC */
  uint32_t max_timers;     /**< pending timers per node; start fails with -ENOSPC */
} sim_budgets;

/** Why a node's volatile state is being torn down. */
typedef enum {
  SIM_TEARDOWN_CRASH = 0,   /**< the machine crashed (sim_node_crash) */
  SIM_TEARDOWN_DESTROY = 1, /**< the world is being destroyed */
  SIM_TEARDOWN_STOP = 2     /**< the process stopped, its machine did not (sim_node_stop) */
} sim_teardown_why;

/** Connection events delivered to a node's conn callback. */
typedef enum {
  SIM_CONN_ACCEPTED = 1,  /**< a peer connected to this node */
  SIM_CONN_CONNECTED = 2, /**< this node's connect completed */
  SIM_CONN_DATA = 3,      /**< bytes arrived, in order */
  SIM_CONN_CLOSED = 4,    /**< the peer closed gracefully, after all its data */
  SIM_CONN_RESET = 5,     /**< reset: in-flight bytes lost; the handle is dead */
  SIM_CONN_REFUSED = 6,   /**< connect refused: the peer is down */
  SIM_CONN_TIMEOUT = 7,   /**< connect or stalled stream timed out; handle dead */
} sim_conn_event;

/** Connection handle. 0 is never a valid handle. */
typedef uint64_t sim_conn;
/** Timer handle. 0 is never a valid handle. */
typedef uint64_t sim_timer;

/**
 * Callbacks of the system under test. Every callback runs "as" one node,
 * inside sim_run()/sim_step(); it may call any function of this header.
 * Pointers to payloads are valid only during the callback. Any callback
 * may be NULL: its events still happen (and are traced), nobody hears them.
 */
typedef struct sim_node_ops {
  /** Node starts: first boot (restart == 0) or restart after a crash. Its
   *  disk holds what survived. Allocate volatile state here. */
  void (*boot)(void *ctx, sim_world *w, int node, int restart);
  /** A datagram from `from` arrived. */
  void (*recv)(void *ctx, sim_world *w, int node, int from, const void *msg, size_t len);
  /** A timer started with sim_timer_start() fired. */
  void (*timer)(void *ctx, sim_world *w, int node, uint64_t tag);
  /** A connection event (see sim_conn_event). data/len only for DATA. */
  void (*conn)(void *ctx, sim_world *w, int node, sim_conn c, sim_conn_event ev, const void *data,
               size_t len);
  /** Free volatile state: on crash and, for live nodes, at world destroy. */
  void (*teardown)(void *ctx, sim_world *w, int node, sim_teardown_why why);
} sim_node_ops;

/** Groups of trace record kinds (a bit each), as `--kinds` names them
 *  (messages, conn, disk, nodes; "faults" is every fault kind). */
#define SIM_EVG_MESSAGES 1u /**< datagrams, and stream bytes delivered */
#define SIM_EVG_CONN 2u     /**< stream connections */
#define SIM_EVG_DISK 4u     /**< the disk */
#define SIM_EVG_NODES 8u    /**< a node's life: boot, crash, pause, timers, clock */

/** The trace record kinds, one row each; every list about them derives
 *  from this one: the enum, sim_ev_name(), sim_ev_is_fault() and
 *  SIM_EV_FAULT_MASK, the groups the command line selects by
 *  (sim_ev_groups) and the kinds the HTML timeline draws (sim_ev_drawn).
 *    X(KIND, name, fault, groups, drawn)
 *  KIND    SIM_EV_<KIND>, numbered from 1 in this order; traces and their
 *          hashes record the numbers, so a new kind goes at the end
 *  name    the kind in timelines and `--kinds`
 *  fault   1 if its records report a fault (a drop, a crash, a partition,
 *          a reset, a disk error, a clock change, a failure, ...)
 *  groups  SIM_EVG_* bits, 0 for none
 *  drawn   1 if the HTML timeline draws it as a marker or an arrow */
#define SIM_EV_KINDS(X)                                                                            \
  X(BOOT, "boot", 0, SIM_EVG_NODES, 0)              /* node booted; a = restart flag */            \
  X(SEND, "send", 0, SIM_EVG_MESSAGES, 0)           /* datagram sent; a = message id */            \
  X(DELIVER, "deliver", 0, SIM_EVG_MESSAGES, 1)     /* datagram delivered; a = message id */       \
  X(DROP, "drop", 1, SIM_EVG_MESSAGES, 1)           /* dropped; reason = sim_drop_reason */        \
  X(DUP, "duplicate", 1, SIM_EVG_MESSAGES, 0)       /* a = copy id, b = original id */             \
  X(CORRUPT, "corrupt", 1, SIM_EVG_MESSAGES, 1)     /* a bit flipped; a = id, b = bit index */     \
  X(REORDER, "reorder", 1, SIM_EVG_MESSAGES, 0)     /* delayed for reordering; b = extra ns */     \
  X(HOLD, "hold", 1, SIM_EVG_MESSAGES, 0)           /* datagram held on a held link */             \
  X(RELEASE, "release", 1, SIM_EVG_MESSAGES, 0)     /* held one released; b = 1: k-th */           \
  X(TIMER, "timer", 0, SIM_EVG_NODES, 0)            /* timer fired; a = tag */                     \
  X(CRASH, "crash", 1, SIM_EVG_NODES, 1)            /* node crashed */                             \
  X(RESTART, "restart", 1, SIM_EVG_NODES, 0)        /* node restart requested */                   \
  X(PAUSE, "pause", 1, SIM_EVG_NODES, 1)            /* node paused */                              \
  X(RESUME, "resume", 1, SIM_EVG_NODES, 1)          /* node resumed; a = deferred events */        \
  X(PARTITION, "partition", 1, 0, 1)                /* link node->peer blocked */                  \
  X(HEAL, "heal", 1, 0, 1)                          /* unblocked (peer -1: all links) */           \
  X(LINK, "link", 1, 0, 0)                          /* link parameters changed */                  \
  X(CONN_OPEN, "conn-open", 0, SIM_EVG_CONN, 0)     /* connect issued; a = conn */                 \
  X(CONN_ACCEPT, "conn-accept", 0, SIM_EVG_CONN, 0) /* peer accepted; a = conn */                  \
  X(CONN_UP, "conn-up", 0, SIM_EVG_CONN, 0)         /* connect completed; a = conn */              \
  X(CONN_DATA, "conn-data", 0, SIM_EVG_MESSAGES | SIM_EVG_CONN, 1) /* bytes; a = conn */           \
  X(CONN_CLOSE, "conn-close", 0, SIM_EVG_CONN, 0)                  /* graceful close delivered */  \
  X(CONN_RESET, "conn-reset", 1, SIM_EVG_CONN, 1)       /* reset delivered; reason = cause */      \
  X(CONN_REFUSED, "conn-refused", 1, SIM_EVG_CONN, 1)   /* connect refused; a = conn */            \
  X(CONN_TIMEOUT, "conn-timeout", 1, SIM_EVG_CONN, 1)   /* connect or stall timeout */             \
  X(CONN_STALL, "conn-stall", 1, SIM_EVG_CONN, 0)       /* segment stalled by a partition */       \
  X(DISK_WRITE, "disk-write", 0, SIM_EVG_DISK, 0)       /* a = offset, b = length */               \
  X(DISK_SYNC, "disk-sync", 0, SIM_EVG_DISK, 0)         /* b = dirty sectors made durable */       \
  X(DISK_TRUNCATE, "disk-truncate", 0, SIM_EVG_DISK, 0) /* a = new size */                         \
  X(DISK_EIO, "disk-eio", 1, SIM_EVG_DISK, 1)           /* injected error; reason = sim_disk_op */ \
  X(DISK_LOST, "disk-lost", 1, SIM_EVG_DISK, 1)         /* a = sectors lost, b = corrupted */      \
  X(CLOCK, "clock", 1, SIM_EVG_NODES, 1)                /* a = offset, b = drift ppm (int64) */    \
  X(FAULTPOINT, "faultpoint", 1, 0, 1)                  /* code fault point fired; a = site */     \
  X(NOTE, "note", 0, 0, 0)                              /* sim_note(); a, b its values */          \
  X(FAIL, "FAIL", 1, 0, 1)                              /* an invariant or liveness failed */      \
  X(OUTPUT, "output", 0, SIM_EVG_NODES, 0)              /* sim_output(); payload: the text */      \
  X(THREAD, "thread", 0, SIM_EVG_NODES, 0)              /* sim_thread_event(); reason: the op */   \
  X(VERSION, "version", 0, SIM_EVG_NODES, 1) /* sim_node_set_version(); a = new, b = old */

/** Trace record kinds (see SIM_EV_KINDS). */
typedef enum {
  SIM_EV__NONE, /* 0: no record's kind */
#define SIM_EV_ENUM_(kind, name, fault, groups, drawn) SIM_EV_##kind,
  SIM_EV_KINDS(SIM_EV_ENUM_)
#undef SIM_EV_ENUM_
      SIM_EV__COUNT
} sim_ev_kind;

/** Why a datagram or segment was dropped. */
typedef enum {
  SIM_DROP_LOSS = 1,     /**< random loss */
  SIM_DROP_PARTITION,    /**< link blocked at send or delivery */
  SIM_DROP_QUEUE,        /**< link queue full */
  SIM_DROP_DOWN,         /**< destination crashed or not running */
  SIM_DROP_SENDER_CRASH, /**< sender crashed while it was in flight */
  SIM_DROP_RESET,        /**< connection reset/broken */
  SIM_DROP_BUDGET,       /**< world in-flight budget */
} sim_drop_reason;

/** Disk operations, for fault injection. */
typedef enum { SIM_DISK_READ = 0, SIM_DISK_WRITE = 1, SIM_DISK_SYNC = 2 } sim_disk_op;

/** One trace record. `node`/`peer` are -1 when not applicable. */
typedef struct sim_trace_rec {
  uint64_t index;     /**< record number in this run, from 0 */
  uint64_t time;      /**< true virtual time, ns */
  uint16_t kind;      /**< sim_ev_kind */
  uint16_t reason;    /**< kind-specific (drop reason, disk op, ...) */
  int16_t node;       /**< acting/receiving node */
  int16_t peer;       /**< other node (sender, destination, ...) */
  uint32_t msg_kind;  /**< classifier result for messages, else 0 */
  uint32_t len;       /**< payload length for messages/data */
  uint64_t a, b;      /**< kind-specific values (see sim_ev_kind) */
  uint8_t prefix_len; /**< bytes of payload kept in prefix */
  uint8_t prefix[SIM_TRACE_PREFIX];
} sim_trace_rec;

/** Trace hook: called for every record; payload (full) valid during the
 *  call; w allows sim_trace_format() with the world's describer. */
typedef void (*sim_trace_fn)(void *ctx, const sim_world *w, const sim_trace_rec *r,
                             const void *payload, size_t len);
/** Message classifier: a small protocol-level kind for a payload (>= 0). */
typedef uint32_t (*sim_classify_fn)(void *ctx, const void *msg, size_t len);
/** Message describer: writes a one-line description of a payload prefix
 *  (`have` bytes of a `len`-byte message) into buf; returns chars written. */
typedef int (*sim_describe_fn)(void *ctx, const void *msg, size_t have, size_t len, char *buf,
                               size_t cap);
/** Check hook: after every event / at the end of a run. */
typedef void (*sim_check_fn)(void *ctx, sim_world *w);
/** Liveness predicate: nonzero once the system has made the required progress. */
typedef int (*sim_live_fn)(void *ctx, sim_world *w);
/** World-level callback scheduled with sim_at(). */
typedef void (*sim_call_fn)(sim_world *w, void *arg);

/** What happens when an invariant fails. */
typedef enum {
  SIM_FAIL_RECORD = 0, /**< record it, stop the run; sim_run returns SIM_STOP_FAILURE */
  SIM_FAIL_ABORT = 1,  /**< record it, call on_failure, abort() at the invariant's site */
} sim_fail_mode;

/** World configuration. Initialise with sim_config_default(). */
typedef struct sim_config {
  int nodes;                         /**< 1..SIM_MAX_NODES */
  uint64_t seed;                     /**< PRNG seed of the choice source */
  const uint8_t *tape;               /**< choice tape (copied; first SIM_TAPE_MAX bytes) */
  size_t tape_len;                   /**< length of tape */
  sim_tiebreak tiebreak;             /**< simultaneous-event order */
  sim_link_params net;               /**< initial parameters of every link */
  sim_stream_params stream;          /**< stream connection parameters */
  sim_disk_params disk;              /**< disk fault parameters */
  sim_faultpoint_params faultpoints; /**< code fault point parameters */
  sim_budgets budgets;               /**< resource budgets */
  const sim_node_ops *ops;           /**< callbacks of the system under test */
  void *ctx;                         /**< passed to ops, classify and describe */
  void *hook_ctx;                    /**< passed to after_event, at_end, live, on_failure */
  sim_classify_fn classify;          /**< optional: message kind for trace records */
  sim_describe_fn describe;          /**< optional: message text for timelines */
  sim_check_fn after_event;          /**< optional: invariant checks after every event */
  sim_check_fn at_end;               /**< optional: checks when sim_finish() is called */
  sim_live_fn live;                  /**< optional: liveness predicate */
  sim_trace_fn trace;                /**< optional: every trace record */
  void *trace_ctx;                   /**< passed to trace */
  uint32_t trace_ring;               /**< last records kept for reports (0 = default 64) */
  sim_fail_mode fail_mode;           /**< see sim_fail_mode */
  void (*on_failure)(void *hook_ctx, sim_world *w); /**< SIM_FAIL_ABORT: report hook */
} sim_config;

/** Why sim_run() returned. */
typedef enum {
  SIM_STOP_QUIESCENT = 0, /**< no events left */
  SIM_STOP_TIME,          /**< reached the requested time */
  SIM_STOP_STEPS,         /**< processed the requested number of events */
  SIM_STOP_FAILURE,       /**< an invariant or liveness check failed */
  SIM_STOP_BUDGET,        /**< a run budget was exceeded; see sim_budget_reason() */
} sim_stop;

/** Fault counters: how often each fault actually fired in this run. */
typedef struct sim_stats {
  uint64_t events;          /**< scheduler events processed */
  uint64_t sent, delivered; /**< datagrams */
  uint64_t lost, duplicated, corrupted, reordered;
  uint64_t dropped_partition, dropped_queue, dropped_down, dropped_sender_crash;
  uint64_t held, released;
  uint64_t partitions, heals; /**< link block/unblock operations */
  uint64_t crashes, restarts, pauses, resumes;
  uint64_t conns_opened, conns_reset, conns_refused, conns_timeout, seg_retransmits;
  uint64_t stream_bytes;
  uint64_t disk_writes, disk_syncs, disk_eio, sectors_lost, sectors_corrupted;
  uint64_t clock_changes, faultpoints_fired, timers_fired;
} sim_stats;

/** Failure details (valid when sim_failed() is nonzero). */
typedef struct sim_failure {
  int is_liveness;   /**< 1 for a liveness failure */
  const char *name;  /**< invariant name (static string) */
  char message[256]; /**< formatted message */
  int node;          /**< node the invariant concerns, or -1 */
  uint64_t time;     /**< virtual time of the failure */
  uint64_t event;    /**< events processed before the failure */
  const char *file;  /**< call site (static string) */
  int line;          /**< call site line */
} sim_failure;

/* ---- Configuration and lifetime ------------------------------------- */

/** Fill `c` with defaults: 3 nodes, seed 0, 1-10 ms uniform latency, no
 *  faults, default budgets. ops must still be set. */
void sim_config_default(sim_config *c);

/** Create a world (nodes boot at time 0 when the run starts). Returns NULL on
 *  invalid config (bad node count, NULL ops) or out of memory. */
sim_world *sim_world_create(const sim_config *c);

/** Tear down live nodes (teardown with SIM_TEARDOWN_DESTROY) and free all
 *  memory of the world. NULL is accepted. */
void sim_world_destroy(sim_world *w);

/* ---- Running -------------------------------------------------------- */

/** Process events in order until none is left at or before `until_ns`,
 *  `max_steps` events were processed (0 = no limit), a failure, or a budget.
 *  Unless stopped early, virtual time then advances to until_ns (when it is
 *  not UINT64_MAX). Returns SIM_STOP_QUIESCENT if no event is pending,
 *  SIM_STOP_TIME if later events remain. */
sim_stop sim_run(sim_world *w, uint64_t until_ns, uint64_t max_steps);

/** Process exactly one event. Returns 1 if one ran, 0 if none was pending or
 *  the world had stopped (failure or budget). */
int sim_step(sim_world *w);

/** Run the end-of-run checks (config at_end) once; returns sim_failed(w). */
int sim_finish(sim_world *w);

/** Current virtual (true) time in ns. */
uint64_t sim_now(const sim_world *w);

/** Number of nodes of the world. */
int sim_nodes(const sim_world *w);

/** The ctx pointer of the world's configuration. */
void *sim_ctx(const sim_world *w);

/** Schedule fn(w, arg) at absolute virtual time t (>= now), as a world
 *  event (never deferred by pause). Returns 0 or -ENOSPC (budget). */
int sim_at(sim_world *w, uint64_t t, sim_call_fn fn, void *arg);

/** The world whose code is running in this thread, or NULL. While a world
 *  processes an event (sim_run, sim_step, sim_finish, sim_world_destroy),
 *  this is that world, and *node (if node is not NULL) the node whose
 *  callback is running: boot, recv, timer, conn and teardown run as their
 *  node; sim_at() calls and checks run as -1 (world-level code). Outside
 *  a world, NULL and -1. It is saved and restored around every callback,
 *  so it is correct for nested worlds and never outlives a run.
 *
 *  This is how context-free code finds its world: a library's call to
 *  rand(), time() or malloc(), a logging hook, an assertion handler
 *  (simfuzz_libc.h routes rand() and time this way). */
sim_world *sim_current(int *node);

/** The node the world's latest event was for: the receiver of a message
 *  or segment, the owner of a timer, the node that booted; -1 for a
 *  world-level event (a step, a sim_at() call) or if none ran yet.
 *  From an after_event hook, the node whose state the event just changed. */
int sim_event_node(const sim_world *w);

/** Run world-level code on a node's behalf: makes `node` the current node
 *  of w (see sim_current) and returns the previous one, which the caller
 *  restores with another call when done. For example a client operation
 *  submitted to node 2 from a sim_at() callback:
 *      int prev = sim_set_current_node(w, 2); submit(...);
 *      sim_set_current_node(w, prev);
 *  No effect (returns -1) unless w is the current world. */
int sim_set_current_node(sim_world *w, int node);

/** For crash hooks only (the harness's assert() hook): after a callback of
 *  w was left by longjmp, stop w for good (it runs no further event and
 *  must not be destroyed, as its nodes' state may be damaged) and make
 *  (prev, prev_node) current again, as sim_current() read them before w
 *  was entered. */
void sim__abandon(sim_world *w, sim_world *prev, int prev_node);

/** The budgets a run can stop on: XX(name, text). MEMORY is the host's
 *  memory: an allocation of the simulator failed, which no run may see as
 *  a fault (the harness ends the process as out of memory), since a finding
 *  must not depend on the host. */
#define SIM_BUDGET_MAP(XX)                                                                         \
  XX(EVENTS, "event budget")                                                                       \
  XX(TIME, "virtual time budget")                                                                  \
  XX(INFLIGHT, "in-flight messages budget")                                                        \
  XX(PENDING, "pending events budget")                                                             \
  XX(MEMORY, "out of memory")

/** Which budget stopped a run (SIM_BUDGET_NONE: none). */
typedef enum {
  SIM_BUDGET_NONE = 0,
#define SIM_BUDGET_ENUM_(name, text) SIM_BUDGET_##name,
  SIM_BUDGET_MAP(SIM_BUDGET_ENUM_)
#undef SIM_BUDGET_ENUM_
} sim_budget;

/** The budget of the last SIM_STOP_BUDGET, or SIM_BUDGET_NONE. */
sim_budget sim_budget_kind(const sim_world *w);
/** Reason text for the last SIM_STOP_BUDGET (its budget's text), or NULL. */
const char *sim_budget_reason(const sim_world *w);

/** Counters of faults and events so far. */
const sim_stats *sim_get_stats(const sim_world *w);

/* ---- Choice source -------------------------------------------------- */

/** Draw decision n of stream `stream` (pure: same args, same value). User
 *  code may use streams with purpose byte >= 0x80 (see sim_stream_id). */
uint64_t sim_draw(const sim_world *w, uint64_t stream, uint64_t n);

/** Build a stream id from a purpose byte and two subjects: `a` keeps its
 *  low 24 bits and `b` its 32 (ids from different (purpose, a, b) differ). */
uint64_t sim_stream_id(unsigned purpose, unsigned a, unsigned b);

/** The splitmix64 finaliser: a fast bijective 64-bit mix, for hashing and
 *  for deriving decisions (header-only, usable without a world). */
static inline uint64_t sim_mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

/** Bernoulli decision with rate ppm drawn from (stream, n). */
int sim_chance(const sim_world *w, uint64_t stream, uint64_t n, uint32_t ppm);

/** Uniform value in [lo, hi] drawn from (stream, n). */
uint64_t sim_range(const sim_world *w, uint64_t stream, uint64_t n, uint64_t lo, uint64_t hi);

/** A decision stream private to `node` (purpose 0x80 + user purpose &0x7f):
 *  draws from it with an increasing per-node counter. For the SUT's own
 *  randomness (e.g. election timeouts). Each incarnation of a node has its
 *  own stream. node -1 draws from a stream of world-level code (sim_at
 *  callbacks, workloads); other invalid nodes give 0. */
uint64_t sim_node_random(sim_world *w, int node);

/* ---- Nodes ---------------------------------------------------------- */

/** Attach user data to a node (volatile: owned by the user, freed in teardown). */
void sim_node_set_data(sim_world *w, int node, void *data);

/** The node's user data, or NULL. */
void *sim_node_data(const sim_world *w, int node);

/** The usual boot: allocate `size` zeroed bytes of volatile node state and
 *  attach them as the node's data (abort() if memory runs out: a process
 *  that cannot start). Returns them. */
void *sim_node_alloc(sim_world *w, int node, size_t size);

/** The usual teardown: free the node's data (from sim_node_alloc or any
 *  malloc) and detach it. */
void sim_node_free(sim_world *w, int node);

/** 1 if the node is running (booted, not crashed; a paused node is up). */
int sim_node_up(const sim_world *w, int node);

/** 1 if the node is paused. */
int sim_node_paused(const sim_world *w, int node);

/** How many times the node has (re)booted. */
uint32_t sim_node_incarnation(const sim_world *w, int node);

/** Crash a node now: teardown(CRASH), pending timers and in-flight traffic to
 *  and from it dropped, its connections reset at the peers, unsynced disk
 *  sectors decided per disk params. No-op if already down. */
int sim_node_crash(sim_world *w, int node);

/** Stop a node's process while its machine stays up (killed, or stopped
 *  for an upgrade): as a crash, except that teardown gets STOP and the
 *  disk keeps every write, synced or not, as an operating system's page
 *  cache outlives a process. Traced as a crash record with b = 1. No-op if
 *  already down. */
int sim_node_stop(sim_world *w, int node);

/** Set the version of the code the node runs (0 at first: the build's
 *  first version). The node's next boot runs it; a running node goes on
 *  with the code it booted. Survives crashes (it is what is installed).
 *  Traced (a VERSION record) when it changes. Returns 0 or -EINVAL. */
int sim_node_set_version(sim_world *w, int node, uint32_t version);

/** The version the node's next (or current) boot runs; 0 for a bad node. */
uint32_t sim_node_version(const sim_world *w, int node);

/** Restart a crashed node: boot(restart=1) runs as an event at now.
 *  -EALREADY if the node is up or a restart's boot is already pending. */
int sim_node_restart(sim_world *w, int node);

/** Pause a node: its events (deliveries, timers, connection events) are
 *  deferred until it resumes. */
int sim_node_pause(sim_world *w, int node);

/** Resume a paused node: deferred events run at now, in their original order. */
int sim_node_resume(sim_world *w, int node);

/* ---- Timers --------------------------------------------------------- */

/** Start a one-shot timer on `node` firing after `delay_ns` of the node's
 *  local clock (drift applies). Returns a handle, or 0 if the node is down or
 *  over its timer budget. */
sim_timer sim_timer_start(sim_world *w, int node, uint64_t delay_ns, uint64_t tag);

/** Cancel a pending timer. Returns 0, or -ENOENT if it already fired, was
 *  cancelled or was dropped by a crash. */
int sim_timer_cancel(sim_world *w, sim_timer t);

/* ---- Datagram network ---------------------------------------------- */

/** Send a datagram from `from` to `to` (copied). Faults of the link apply.
 *  Returns 0 (even if the network then drops it), -EINVAL for bad nodes,
 *  -EMSGSIZE over the size budget, -EHOSTDOWN if `from` is down. */
int sim_send(sim_world *w, int from, int to, const void *msg, size_t len);

/** Set the parameters of the directed link from->to. */
int sim_link_set(sim_world *w, int from, int to, const sim_link_params *p);

/** Get the parameters of the directed link from->to. */
int sim_link_get(const sim_world *w, int from, int to, sim_link_params *p);

/** Set the parameters of every link. */
void sim_net_set_all(sim_world *w, const sim_link_params *p);

/** Block (blocked=1) or unblock the single directed link from->to. */
int sim_link_block(sim_world *w, int from, int to, int blocked);

/** Partition: block links from every node in `a` to every node in `b`, and
 *  (unless oneway) from `b` to `a`. Masks are bit sets of node ids. */
int sim_partition(sim_world *w, uint64_t a, uint64_t b, int oneway);

/** Isolate one node from every other node, both ways. */
int sim_isolate(sim_world *w, int node);

/** Split into groups: group[i] is node i's group; links between different
 *  groups are blocked, links inside a group are unblocked. */
int sim_split(sim_world *w, const uint8_t *group);

/** Unblock every link and release every held link. */
void sim_heal(sim_world *w);

/** 1 if the link from->to is blocked. */
int sim_link_blocked(const sim_world *w, int from, int to);

/** Hold the link from->to: datagrams that would be delivered are queued. */
int sim_link_hold(sim_world *w, int from, int to);

/** Release a held link: its queued datagrams are delivered now, in order. */
int sim_link_release(sim_world *w, int from, int to);

/** Deliver the k-th (0-based) pending datagram of link from->to now: held
 *  ones first, then those in flight in send order. -ENOENT if none. */
int sim_link_deliver_kth(sim_world *w, int from, int to, uint32_t k);

/** Pending datagrams (held + in flight) on link from->to. */
uint32_t sim_link_pending(const sim_world *w, int from, int to);

/** The virtual time by which every datagram and stream segment now in
 *  flight is due to arrive (or to be dropped, at a node that is down), if
 *  nothing more is sent: the latest of their delivery times, bandwidth
 *  queueing included, and sim_now() when nothing is in flight. Datagrams
 *  on a held link wait for its release and are not counted. */
uint64_t sim_in_flight_due(const sim_world *w);

/* ---- Stream connections -------------------------------------------- */

/** Open a connection from `node` to `to`. The result arrives later as
 *  CONNECTED, REFUSED or TIMEOUT. Returns the handle, or a negative errno
 *  cast to int64 (-EHOSTDOWN, -EMFILE, -EINVAL). */
int64_t sim_connect(sim_world *w, int node, int to);

/** Send bytes on an open connection from `node`'s end (copied; delivered in
 *  order as one DATA event). Returns 0, -ENOTCONN, -ECONNRESET, -EMSGSIZE. */
int sim_conn_send(sim_world *w, int node, sim_conn c, const void *data, size_t len);

/** Close `node`'s end gracefully; the peer gets CLOSED after pending data.
 *  `node` gets no further events for c. */
int sim_conn_close(sim_world *w, int node, sim_conn c);

/** The node at the other end of c from `node`, or -1. */
int sim_conn_peer(const sim_world *w, sim_conn c, int node);

/** Reset a connection (fault): both live ends get RESET now; in-flight
 *  bytes are dropped. */
int sim_conn_reset(sim_world *w, sim_conn c);

/** Reset every connection between a and b (b = -1: every connection of a).
 *  Returns how many were reset. */
int sim_reset_conns(sim_world *w, int a, int b);

/** Number of open (not closed/broken) connections in the world. */
uint32_t sim_conns_open(const sim_world *w);

/* ---- Disk ----------------------------------------------------------- */

/** Write len bytes at off (visible to reads at once; durable after sync).
 *  Returns bytes written, -ENOSPC past the disk budget, -EIO if injected. */
int64_t sim_disk_write(sim_world *w, int node, uint64_t off, const void *buf, size_t len);

/** Read up to len bytes at off. Returns bytes read (0 at/after end), -EIO if
 *  injected. */
int64_t sim_disk_read(sim_world *w, int node, uint64_t off, void *buf, size_t len);

/** What the node would read at off now, for checks outside the run: no
 *  fault is injected, nothing is traced, nothing changes. Returns the bytes
 *  copied (0 at/after the end) or -EINVAL. */
int64_t sim_disk_peek(const sim_world *w, int node, uint64_t off, void *buf, size_t len);

/** Make all writes durable. Returns 0 or -EIO if injected (see sync_eio_ppm). */
int sim_disk_sync(sim_world *w, int node);

/** Make the writes to bytes off..off+len-1 durable (the sectors they
 *  touch), as an fsync of one file makes its own data durable and no other
 *  file's; a disk that grew is durable up to the range's end. len 0 syncs
 *  no data, and can still fail. Returns 0 or -EIO if injected (a failure
 *  decides the range's unsynced sectors as a crash would; the rest stay
 *  unsynced). */
int sim_disk_sync_range(sim_world *w, int node, uint64_t off, uint64_t len);

/** Current (cached) size of the node's disk. */
uint64_t sim_disk_size(const sim_world *w, int node);

/** Set the size; growth reads as zeros. Durable after sync. */
int sim_disk_truncate(sim_world *w, int node, uint64_t size);

/** Replace the disk fault parameters of one node. */
int sim_disk_set_params(sim_world *w, int node, const sim_disk_params *p);

/** The disk's sector size (bytes): the granularity at which a crash or a
 *  failed sync keeps, loses or corrupts unsynced writes. A record that
 *  must never be damaged by a write to its neighbour gets sectors of its
 *  own (simfuzz_record.h does this). */
uint32_t sim_disk_sector_size(const sim_world *w, int node);

/** Countdown fault: the nth (1-based) next `op` on the node fails with -EIO. */
int sim_disk_fail_nth(sim_world *w, int node, sim_disk_op op, uint32_t nth);

/** Stall the node's disk for ns nanoseconds of true time from now (0 ends
 *  a stall), as a device that stops answering (a firmware hiccup, a full
 *  write cache, a saturated volume). The disk calls above are synchronous
 *  and are not delayed: a backend that models asynchronous I/O completes
 *  no request, queued or new, before sim_disk_stall_left() is 0. A longer
 *  stall replaces a shorter one; a crash does not end it (the device is
 *  not the process). Returns 0, or -EINVAL for a bad node. */
int sim_disk_stall(sim_world *w, int node, uint64_t ns);

/** Nanoseconds of true time until the node's disk stall ends; 0 if none. */
uint64_t sim_disk_stall_left(const sim_world *w, int node);

/* ---- Clocks --------------------------------------------------------- */

/** The node's local clock (true time + offset + drift), ns, may be negative. */
int64_t sim_clock(const sim_world *w, int node);

/** The node's monotonic clock, ns since the world began, like
 *  CLOCK_MONOTONIC: it runs at the node's drift rate but ignores offsets and
 *  jumps, so durations measured with it (leases, timeouts) are off only by
 *  drift. (A timer's delay is converted at the drift in force when it starts.) */
int64_t sim_clock_mono(const sim_world *w, int node);

/** Set the node clock's offset from true time (ns), keeping its drift. */
int sim_clock_set_offset(sim_world *w, int node, int64_t offset_ns);

/** Set the drift rate (ppm, within +-SIM_MAX_DRIFT_PPM; +1000 = runs 0.1% fast); takes
 *  effect from now. -EINVAL outside the range. Clock values saturate at the
 *  int64 limits instead of overflowing. */
int sim_clock_set_drift(sim_world *w, int node, int32_t drift_ppm);

/** Jump the node's clock by delta ns (forwards or backwards). */
int sim_clock_jump(sim_world *w, int node, int64_t delta_ns);

/* ---- Code-level fault points ---------------------------------------- */

/** Fault point site of allocation failures routed through sf_malloc()
 *  (simfuzz_libc.h): a scenario's FaultPoint step with k = this site makes
 *  a node's allocations fail. Sites of the system under test are below
 *  0xff00. */
#define SIM_FAULTPOINT_ALLOC 0xff01u

/** A spot in the SUT where a fault could be injected. Returns 1 if it fires.
 *  site: a small stable number chosen by the SUT. A site is enabled for the
 *  run per enable_ppm (or by sim_faultpoint_force), then fires per fire_ppm. */
int sim_faultpoint(sim_world *w, int node, uint32_t site);

/** Force a site: ppm >= 0 sets its fire rate and enables it; -1 disables it. */
int sim_faultpoint_force(sim_world *w, uint32_t site, int64_t ppm);

/** Arm a one-shot on a site: counting from now, its nth hit (on any node)
 *  fires whatever its rate, once; every other hit follows the rate as
 *  before. The fault-injection loop of SQLite's malloc tests: nth = 1, 2, ...
 *  reaches each allocation in turn. nth = 0 disarms. Returns 0 or -ENOSPC. */
int sim_faultpoint_nth(sim_world *w, uint32_t site, uint32_t nth);

/** Replace the world's fault point parameters (e.g. all zero to stop every
 *  unforced site from firing). */
void sim_faultpoints_set(sim_world *w, const sim_faultpoint_params *p);

/** The world's default link parameters (from its configuration). */
const sim_link_params *sim_net_defaults(const sim_world *w);

/* ---- Deterministic heap -------------------------------------------- */

/** The largest block sim_heap_alloc() hands out: 1 GiB. */
#define SIM_HEAP_MAX ((size_t)1 << 30)

/** Allocate n bytes, zero-filled and 16-byte aligned, from the world's
 *  deterministic heap: a region at a fixed address (the same in every
 *  process whatever ASLR does), reset when the world is destroyed, so a
 *  block's address is a function of the run's allocations and frees alone.
 *  Route a library's allocator here when it may read a pointer's bits or
 *  memory it never wrote (simfuzz_libc.h's sf_malloc() does). Under
 *  AddressSanitizer, overflows past a block and uses after free are still
 *  reported. Blocks live until sim_heap_free() or the world's destruction.
 *  w NULL, or no fixed region on this machine (sim_heap_fixed()): calloc().
 *  Returns NULL if n > SIM_HEAP_MAX or the world's region (4 GiB) is full. */
void *sim_heap_alloc(sim_world *w, size_t n);

/** Free a block of sim_heap_alloc() (NULL is accepted; a block that came
 *  from calloc() goes to free()). Returns 0, or -EINVAL, changing nothing,
 *  for a block freed twice or a pointer into the region that is no block's
 *  start: the caller reports the system's heap misuse. A freed block waits
 *  in a quarantine (256 blocks, 4 MiB) before it is reused. */
int sim_heap_free(void *p);

/** The size a live block of the fixed region was allocated with; 0 for
 *  anything else (NULL, a freed block, a pointer from elsewhere). */
size_t sim_heap_size(const void *p);

/** 1 if p points into the fixed regions of the deterministic heap. */
int sim_heap_owns(const void *p);

/** 1 if the world's blocks come from a fixed region, 0 if from calloc()
 *  (a 32-bit process, or the region's addresses are taken). */
int sim_heap_fixed(sim_world *w);

/* ---- Trace and reports ---------------------------------------------- */

/** Running 64-bit hash over every trace record so far: the run's fingerprint. */
uint64_t sim_trace_hash(const sim_world *w);

/** Records so far in this run. */
uint64_t sim_trace_count(const sim_world *w);

/** Add a user note to the trace (a, b: user values) for node (-1: the world). */
void sim_note(sim_world *w, int node, uint64_t a, uint64_t b);

/** Maximum bytes of text in one OUTPUT record (sim_output cuts the rest). */
#define SIM_OUTPUT_MAX 256

/** Add a line of text that node's code wrote (its standard output, say) to
 *  the trace as an OUTPUT record, at the current virtual time: `len` bytes
 *  of `text` (at most SIM_OUTPUT_MAX are kept), any bytes (the timeline
 *  escapes what is not printable). Like every record, it enters the hash:
 *  the same run prints the same text. */
void sim_output(sim_world *w, int node, const char *text, size_t len);

/** What a THREAD record says happened among one node's threads (the
 *  threads of a program node, simfuzz_program.h):
 *    XX(OP, name, what a and b are) */
#define SIM_THREAD_OPS(XX)                                                                         \
  XX(SPAWN, "spawn", "a = the new thread, b = its creator")                                        \
  XX(EXIT, "exit", "a = the thread that ended")                                                    \
  XX(SWITCH, "switch", "a = the thread that ran, b = the thread that runs now")                    \
  XX(HANDOFF, "handoff", "a = the thread that took lock b, which another thread held last")

/** The ops of THREAD records (see SIM_THREAD_OPS). */
typedef enum {
  SIM_THREAD__NONE,
#define SIM_THREAD_ENUM_(op, name, what) SIM_THREAD_##op,
  SIM_THREAD_OPS(SIM_THREAD_ENUM_)
#undef SIM_THREAD_ENUM_
      SIM_THREAD__COUNT
} sim_thread_op;

/** Add a THREAD record for node: what happened among its threads (op, a
 *  sim_thread_op) with its two values. */
void sim_thread_event(sim_world *w, int node, unsigned op, uint64_t a, uint64_t b);

/** Copy the last up to `max` records (oldest first) into out; returns count. */
size_t sim_trace_last(const sim_world *w, sim_trace_rec *out, size_t max);

/** Name of a trace kind ("send", "drop", ...). */
const char *sim_ev_name(unsigned kind);

/** 1 if records of this kind report a fault (a drop, duplicate, crash,
 *  partition, reset, disk error, clock change, fault point, failure, ...). */
int sim_ev_is_fault(unsigned kind);

/** The record kinds sim_ev_is_fault() calls faults, bit k for kind k: for
 *  a test per record with no call. */
#define SIM_EV_FAULT_BIT_(kind, name, fault, groups, drawn) | ((uint64_t)(fault) << SIM_EV_##kind)
#define SIM_EV_FAULT_MASK (0 SIM_EV_KINDS(SIM_EV_FAULT_BIT_))

/** The SIM_EVG_* groups of a trace kind (0 for none, or an unknown kind). */
unsigned sim_ev_groups(unsigned kind);

/** 1 if the HTML timeline draws records of this kind. */
int sim_ev_drawn(unsigned kind);

/** Name of a drop reason ("loss", "partition", ...). */
const char *sim_drop_name(unsigned reason);

/** Format one record as a timeline line (no newline) using the configured
 *  describer. Returns the length that was (or would be) written. */
int sim_trace_format(const sim_world *w, const sim_trace_rec *r, char *buf, size_t cap);

/** sim_trace_format() with the record's whole payload at hand (a trace
 *  hook's `payload` and `len`), where the record keeps only its first
 *  SIM_TRACE_PREFIX bytes: an OUTPUT record's line is then shown whole. */
int sim_trace_format_payload(const sim_world *w, const sim_trace_rec *r, const void *payload,
                             size_t len, char *buf, size_t cap);

/** Print the last `n` records as a timeline to f. */
void sim_trace_dump(const sim_world *w, FILE *f, size_t n);

/** Print a one-line summary of the fault counters to f. */
void sim_stats_print(const sim_world *w, FILE *f);

/* ---- Oracles -------------------------------------------------------- */

/** 1 if an invariant or liveness failure was recorded. */
int sim_failed(const sim_world *w);

/** The recorded failure, or NULL. */
const sim_failure *sim_get_failure(const sim_world *w);

/** Record an invariant failure (use SIM_INVARIANT instead). Returns 1 if the
 *  caller must abort() (SIM_FAIL_ABORT), else 0. Only the first is kept. */
int sim__invariant_failed(sim_world *w, int node, const char *name, const char *file, int line,
                          const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;

/**
 * Check an invariant. On failure the world records name, message, node and
 * virtual time and stops; under SIM_FAIL_ABORT the abort() happens here, at
 * the caller's site, so fuzzers' crash deduplication tells invariants apart
 * (keep each invariant in its own function for distinct stack signatures).
 *
 * Under SIM_FAIL_RECORD (the command line's replay, sweep, triage and
 * minimize, and tests) a failed check does not return early: execution
 * continues after the macro until the callback or check that contains it
 * returns, and the world then stops before the next event. Only the first
 * failure of a run is recorded. Code after a check must therefore be safe
 * to run when the check failed (do not dereference what the check just
 * found missing; `return` after it when in doubt).
 */
#define SIM_INVARIANT(w, node, cond, name, ...)                                                    \
  do {                                                                                             \
    if (!(cond) && sim__invariant_failed((w), (node), (name), __FILE__, __LINE__, __VA_ARGS__))    \
      abort();                                                                                     \
  } while (0)

/** Report a failed SIM_ASSERT and abort() (use SIM_ASSERT instead). */
void sim__assert_failed(const char *expr, const char *file, int line)
#if defined(__GNUC__)
    __attribute__((noreturn))
#endif
    ;

/**
 * simfuzz's own assertions, at the invariants of the simulator and the
 * harness (scheduler order, pool and queue bounds, clock arithmetic, codec
 * maps). A failure is a simfuzz bug, never the target's: it prints
 * "simfuzz: internal assertion failed" with the expression and site and
 * calls abort(), so a fuzzer keeps the input as a crash. It does not go
 * through assert(), which a target build may hook. Live in every build;
 * defining SIM_NO_ASSERT (there is no CMake option for it) compiles the
 * checks out.
 * Targets check their own invariants with SIM_INVARIANT or assert().
 */
#ifdef SIM_NO_ASSERT
#define SIM_ASSERT(cond) ((void)0)
#else
#define SIM_ASSERT(cond) ((cond) ? (void)0 : sim__assert_failed(#cond, __FILE__, __LINE__))
#endif

/** After all faults are healed: the liveness predicate must hold within
 *  deadline_ns of now, else a liveness failure is recorded. The predicate
 *  is checked after every event until it holds. */
int sim_require_liveness(sim_world *w, uint64_t deadline_ns);

/** 1 if a liveness window is open and not yet satisfied. */
int sim_liveness_pending(const sim_world *w);

#ifdef __cplusplus
}
#endif
#endif
