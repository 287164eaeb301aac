/*
 * twopc: two-phase commit with presumed abort, over datagrams: the protocol
 * alone (node_io only; twopc_target.c runs and checks it).
 *
 * Node 0 is the coordinator; nodes 1..n-1 are participants. A client
 * operation starts a transaction with a value; participant p votes no when
 * two bits of the value chosen by p are zero (a "constraint violation",
 * about one vote in four), else it logs PREPARED durably and votes yes. The
 * coordinator commits when every participant voted yes: it logs the COMMIT
 * decision durably, then tells everyone, resending until each acknowledges.
 * Any no vote, or no answer within a second, aborts (presumed abort: abort
 * decisions are not logged; whoever asks about an unknown transaction is
 * told to abort). A prepared participant never decides on its own: it asks
 * the coordinator until it hears the decision, across its own restarts and
 * the coordinator's. The coordinator takes no vote after its one-second
 * deadline, even one that comes before the tick that would have aborted.
 *
 * Built with TWOPC_COOPERATIVE (the twopc_ct targets), a participant in
 * doubt for half a second also asks the other participants (cooperative
 * termination): one that committed, aborted or voted no tells it so; one
 * that never voted aborts the transaction on the spot, durably, so that it
 * votes no when the prepare comes; one that is prepared does not know
 * either.
 *
 * Planted bugs (see docs/bug-zoo.md):
 *   TWOPC_BUG_UNSYNCED_DECISION  the COMMIT decision is sent before it is
 *       synced (the sync comes with the next tick): a coordinator crash can
 *       forget a commit that some participants already applied.
 *   TWOPC_BUG_COUNT_VOTES  the coordinator counts yes messages instead of
 *       distinct voters: a duplicated or re-sent yes stands in for a missing
 *       participant's no.
 *   TWOPC_BUG_PARTICIPANT_TIMEOUT  a prepared participant that hears
 *       nothing for a second aborts on its own.
 *   TWOPC_BUG_PEER_ABORT_UNLOGGED (with TWOPC_COOPERATIVE)  a participant
 *       that never voted aborts on a peer's question without a log record:
 *       after a crash and restart it votes yes to the prepare, while the
 *       peer aborted.
 *   TWOPC_BUG_PEER_ABORT_UNSYNCED (with TWOPC_COOPERATIVE)  that abort
 *       is logged, but synced only with the participant's next tick (group
 *       commit): a failed sync at that tick, or a crash before it, on a disk
 *       that loses unsynced writes, forgets it.
 */
#ifndef TWOPC_H
#define TWOPC_H

#include "../common/node_io.h"

#include <stdint.h>

enum { TP_MAX_TXN = 256, TP_MAX_REC = 1024, TP_MAX_OUT = 2 * TP_MAX_TXN, TP_RECORD = 9 };
enum { TP_PREPARE = 1, TP_VOTE, TP_COMMIT, TP_ABORT, TP_ACK, TP_STATUS, TP_QUERY, TP_ANSWER };
/** A participant's answer to a peer's TP_QUERY. */
enum { TP_A_UNKNOWN = 0, TP_A_COMMIT, TP_A_ABORT };
/* transaction states: coordinator (TP_C_*) and participant (TP_P_*); a
 * coordinator's transaction is finished once TP_C_DONE_* */
enum {
  TP_C_NONE = 0,
  TP_C_COLLECTING,
  TP_C_COMMITTING,
  TP_C_ABORTING,
  TP_C_DONE_ABORT,
  TP_C_DONE_COMMIT
};
enum { TP_P_NONE = 0, TP_P_VOTED_NO, TP_P_PREPARED, TP_P_COMMITTED, TP_P_ABORTED };
enum { TP_NST = 8 }; /* room for every state value of either kind */
_Static_assert((int)TP_C_DONE_COMMIT < (int)TP_NST && (int)TP_P_ABORTED < (int)TP_NST,
               "states fit TP_NST");
/** Outcomes a node records in its journal. */
enum { TP_O_COMMIT = 1, TP_O_ABORT = 2 };

typedef struct {
  uint8_t st;
  uint8_t ticks;
  uint32_t value;
  int64_t begun;       /* coordinator: its monotonic clock when the transaction began */
  uint32_t yes, acked; /* bitmasks of participants */
  uint32_t nyes;       /* (bug) yes messages counted */
} tp_txn;

typedef struct {
  uint32_t txn;
  uint8_t what; /* TP_O_* */
} tp_outcome;

typedef struct tp_node {
  node_io *io;
  uint32_t nrec, durable; /* records written / synced */
  tp_txn t[TP_MAX_TXN + 1];
  uint32_t top;               /* the highest transaction this node has heard of: the
                                 scans of t[] stop there */
  tp_outcome out[TP_MAX_OUT]; /* journal: outcomes since boot */
  uint32_t nout;
  uint32_t peer_aborts; /* transactions aborted on a peer's question, never voted */
  uint16_t nst[TP_NST]; /* transactions per state (not counted: state 0) */
  uint32_t held;        /* a bit per state that some transaction is in */
} tp_node;

/** Start (or restart) a node from its log. -1 if it crashed on an I/O error. */
int tp_boot(tp_node *p, node_io *io);

/** A datagram from `from`. */
void tp_recv(tp_node *p, int from, const void *msg, size_t len);

/** The node's tick. */
void tp_timer(tp_node *p, uint64_t tag);

/** At the coordinator: start transaction t (1..TP_MAX_TXN) with value.
 *  -1 if refused. */
int tp_begin(tp_node *p, uint32_t t, uint32_t value);

/** 1 if the node has unfinished business (an undecided or unacknowledged
 *  transaction at the coordinator, a prepared one at a participant). */
int tp_busy(const tp_node *p);

/** The set of transaction states in progress (bit per state), for feedback. */
uint32_t tp_phases(const tp_node *p);

/** tp_phases computed by a scan of the transaction table, without the
 *  per-state counts (for checking them). */
uint32_t tp_phases_scan(const tp_node *p);

/** Describe a message; -1 if not one. Its class for feedback. */
int tp_describe(void *ctx, const void *msg, size_t have, size_t len, char *buf, size_t cap);
uint32_t tp_classify(void *ctx, const void *msg, size_t len);

#endif
