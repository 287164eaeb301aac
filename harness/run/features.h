/* The abstract states a run reaches, as feature buckets: what simfuzz adds
 * to code coverage as fuzzing feedback. Computed here (uninstrumented, in
 * the harness library) from the trace records and the target's observe()
 * hook; emitted as instrumented code paths by harness/run/feedback.c.
 * Internal to the runner. */
#ifndef SIMFUZZ_FEATURES_H
#define SIMFUZZ_FEATURES_H

#include <simfuzz/simfuzz.h>
#include <simfuzz/simfuzz_runner.h>

#include <stdint.h>

#define SF_FB_WORDS (SF_FB_BUCKETS / 64)

/** The feedback bucket of assertion site number `site` (its position in
 *  the catalog, sf_sites) at `value`: the state a run reaches when the
 *  site is first hit (value 0 for SOMETIMES and REACHABLE sites), or when
 *  a MAXIMIZE site's value first enters the value's class. Two states of
 *  the catalog never share a bucket while it has at most 10 sites (at
 *  most 1024 / n value classes of each of n sites, from the lowest). */
uint32_t sf_features_site_bucket(uint32_t site, uint64_t value);

/** Value classes of a MAXIMIZE site: 0..31 as themselves, then class
 *  37 + j for [2^(5+j), 2^(6+j)). */
#define SF_VALUE_CLASSES 96

/** The smallest value of class k; UINT64_MAX for the classes that hold
 *  none (32..36, and k >= SF_VALUE_CLASSES). */
uint64_t sf_features_class_value(uint32_t k);

/* Assertion sites' states have buckets of their own, the top
 * SF_FB_SITE_BUCKETS: sharing one with a common state would hide a rare
 * site state (no longer new in a run that reached the other) and make it
 * look common to the explorer, which counts runs per bucket. */
#define SF_FB_SITE_BUCKETS 1024u

/** The kinds of feature, XX(TAG, name, description): the tag is the top 4
 *  bits of a feature's 64-bit value, the name is what SIMFUZZ_SEARCH
 *  names (see sf_search_off). */
#define SF_FEATURE_MAP(XX)                                                                         \
  XX(FAULT, fault, "fault kind x message kind x role of the node it hit")                          \
  XX(PAIR, pair, "an ordered pair of consecutive fault/protocol events")                           \
  XX(TRANSITION, transition, "one node's role changed from one value to another")                  \
  XX(ROLES, roles, "the cluster's roles, as a sorted multiset")                                    \
  XX(STEP, step, "a step kind run in a given cluster role vector")                                 \
  XX(SITE, site, "an assertion site hit, or a new best value of one")                              \
  XX(STALE, stale,                                                                                 \
     "a delivery: message kind x whether sender and receiver changed state since the send "        \
     "x log2 of the time in flight")                                                               \
  XX(LOCK, lock,                                                                                   \
     "a lock handed from one thread of a node to another, after the node's last such handoff "     \
     "(the order of lock acquisitions across threads)")                                            \
  XX(DWELL, dwell,                                                                                 \
     "at a role change, the cluster's roles with how long each node has held its own (the "        \
     "changing node: its old one), in log4 buckets of ms, as a sorted multiset")                   \
  XX(EPOCH, epoch,                                                                                 \
     "a delivery, for targets with an epoch observer: message kind x its epoch against the "       \
     "receiver's (older, the same, newer; by one or more) x whether the receiver's role and "      \
     "epoch changed on it")                                                                        \
  XX(TIMELINE, timeline,                                                                           \
     "a delivery as a step of a Lamport timeline (sender's role at the send, message kind, "       \
     "receiver's role), with the step its sender last received before the send")

/** What a feature describes: the top 4 bits of its 64-bit value. */
typedef enum {
  SF_FT__NONE = 0,
#define SF_FT_ENUM(tag, name, doc) SF_FT_##tag,
  SF_FEATURE_MAP(SF_FT_ENUM)
#undef SF_FT_ENUM
      SF_FT__COUNT
} sf_feature_tag;

/** Slots of the table of messages in flight (by message id, a newer one
 *  takes an older one's slot): what a delivery is compared with. */
#define SF_FLY_SLOTS 128u

#define SF_FRESH_MAX 32 /**< new buckets remembered between two drains */

/** A run's features so far. Plain data; zero it, then sf_features_init. */
typedef struct sf_features {
  uint64_t bits[SF_FB_WORDS]; /* buckets reached */
  uint32_t count;             /* distinct buckets reached */
  uint32_t prev_class;        /* class of the last fault/protocol record */
  int last_node;              /* node of the last record, -1 before any */
  int n;                      /* nodes */
  uint32_t off;               /* bit t: kind t is not computed (sf_search_off) */
  uint32_t nb;                /* the run's buckets (sf_fb_buckets) */
  uint32_t role[SIM_MAX_NODES];
  uint32_t moves[SIM_MAX_NODES];   /* how often each node's role changed */
  uint64_t since[SIM_MAX_NODES];   /* when each node's role last changed (ns) */
  uint64_t role_vec;               /* hash of the sorted roles */
  uint32_t handoff[SIM_MAX_NODES]; /* each node's last lock handoff: thread << 16 | lock */
  /* messages in flight: id + 1 (0: empty), send time, and how often sender
   * and receiver had changed role at the send */
  struct {
    uint64_t id1, sent;
    uint32_t from_moves, to_moves;
    uint64_t epoch1;    /* the sender's epoch + 1 at the send (0: none) */
    uint32_t from_role; /* the sender's role at the send */
    uint32_t cause;     /* the timeline step the sender last received */
  } fly[SF_FLY_SLOTS];
  uint32_t cause[SIM_MAX_NODES]; /* the timeline step each node last received */
  /* the epoch observer (sf_features_bind; NULL: none), and a delivery that
   * waits for the end of its event: its feature so far, the receiver, and
   * the receiver's role and epoch at the delivery */
  const sf_target *t;
  void *ctx;
  sim_world *w;
  uint64_t pend_val, pend_epoch;
  uint32_t pend_role;
  int pend_node; /* -1: none */
  /* buckets first reached since the last sf_features_drain (for the
   * explorer; the rest are dropped when more arrive between drains) */
  uint32_t nfresh;
  uint32_t fresh[SF_FRESH_MAX];
  int8_t fresh_node[SF_FRESH_MAX];  /* the node a site named for it, or -1 */
  uint8_t fresh_kind[SF_FRESH_MAX]; /* the kind (SF_FT_*) of the feature that reached it */
} sf_features;

/** The name of feature kind `kind` (SF_FT_*), as SIMFUZZ_SEARCH spells it;
 *  "?" for a number that is none. */
const char *sf_feature_kind_name(unsigned kind);

/** Start over for a run of n nodes. */
void sf_features_init(sf_features *f, int n);

/** After sf_features_init: the run's target, context and world, whose
 *  observers (t->observe and t->epoch, if set) the features read after
 *  events and while messages are sent and delivered. */
void sf_features_bind(sf_features *f, const sf_target *t, void *ctx, sim_world *w);

/** Node `node`'s observed role is now `role` (not its last one), at
 *  virtual time `now` (ns): its transition, the cluster's role vector and
 *  the dwell multiset, each a feature of its kind (sf_features_observe
 *  calls it on a change). */
void sf_features_role(sf_features *f, int node, uint32_t role, uint64_t now);

/** In a search mask: the explorer's futures that act on the messages in
 *  flight at the fork (explore.c). Bits below it are feature kinds. */
#define SF_SEARCH_INFLIGHT (1u << 16)

/** In a search mask: the explorer's branches as re-runs from scratch in
 *  the worker's own process, not forks of the running world (explore.c,
 *  "Branches by re-run"). Off (the bit set, "-rerun") means fork(). */
#define SF_SEARCH_RERUN (1u << 17)

/** In a search mask: the branches' share of the time weighed by the
 *  failures they find per unit of cost against the roots' (explore.c,
 *  explore/share.h). On by default since a paired A/B said it helps
 *  (docs/bench-history.md); "-yield" turns it off. */
#define SF_SEARCH_YIELD (1u << 18)

/** In a search mask: some of the explorer's futures wait for a rise to the
 *  top rank (Step.on_change: "as soon as a leader is elected") and act on
 *  the nodes by rank (sf_fork.anchor). Off by default ("+anchor" turns it
 *  on): its paired A/B lost 10 pairs to 1 (docs/bench-history.md). */
#define SF_SEARCH_ANCHOR (1u << 19)

/** In a search mask: the run's features hash into all SF_FB_BUCKETS
 *  buckets, not the first SF_FB_NARROW, so that fewer states share one
 *  (sf_fb_buckets). Off by default ("+wide" turns it on): its paired A/B
 *  lost 41 pairs to 66 (docs/bench-history.md). */
#define SF_SEARCH_WIDE (1u << 20)

/** In a search mask: the explorer gives a state reached at an assertion
 *  site the branches any state of its rarity gets, not more (explore.c,
 *  energy_for): by default a site's state reached by 1 run in 10 gets
 *  --energy branches, another kind's none until 1 in 30, so that in
 *  examples/craft 99 % of the branches fork at its three hazard sites.
 *  Off by default ("+even" turns it on): its preview lost 6 pairs of 6,
 *  and the milder +split its A/B (docs/bench-history.md). */
#define SF_SEARCH_EVEN (1u << 21)

/** In a search mask: the explorer's new branches are split in two parts
 *  of its share of the time: those forked at assertion sites' states may
 *  use at most two thirds of it (with the sites' energy), and the states of
 *  other kinds have the last third to themselves, where they branch from
 *  1 run in 10 (explore.c, EX_SPLIT_SITE). A milder +even: by default the
 *  sites take the whole share first. Off by default ("+split" turns it
 *  on): its paired A/B lost 30 pairs to 39 (docs/bench-history.md). */
#define SF_SEARCH_SPLIT (1u << 22)

/** In a search mask: some of the explorer's branches make one allocation
 *  through sf_malloc() fail soon after the fork (a FaultPoint step on
 *  SIM_FAULTPOINT_ALLOC, fire rate 0, its nth hit from then on: one of the
 *  next few allocations on any node), as SQLite's fault tests fail one
 *  allocation at a time; the sweep's allocation failures come only from a
 *  scenario's rates, so the one failure at the rare state is out of reach.
 *  Off by default ("+oneshot" turns it on): its preview found the one
 *  allocation-failure bug of the set in 6 pairs of 6, the default in none,
 *  but the idea came from that bug (docs/bench-history.md). */
#define SF_SEARCH_ONESHOT (1u << 23)

/** The parts of the search that are off unless SIMFUZZ_SEARCH turns them
 *  on: those that a paired A/B has not shown to help (docs/BENCHMARKS.md,
 *  "Every explorer change, kept or dropped"). */
#define SF_SEARCH_DEFAULT_OFF                                                                      \
  ((1u << SF_FT_STALE) | (1u << SF_FT_DWELL) | (1u << SF_FT_EPOCH) | (1u << SF_FT_TIMELINE) |      \
   SF_SEARCH_INFLIGHT | SF_SEARCH_ANCHOR | SF_SEARCH_WIDE | SF_SEARCH_EVEN | SF_SEARCH_SPLIT |     \
   SF_SEARCH_ONESHOT)

/** The parts of the search that are off in this process: SF_SEARCH_DEFAULT_OFF
 *  as changed by the environment's SIMFUZZ_SEARCH, a comma-separated list of
 *  "+name" (on) and "-name" (off), where a name is a feature kind
 *  (SF_FEATURE_MAP: bit SF_FT_x), "inflight" (SF_SEARCH_INFLIGHT), "rerun"
 *  (SF_SEARCH_RERUN), "yield" (SF_SEARCH_YIELD), "anchor"
 *  (SF_SEARCH_ANCHOR), "wide" (SF_SEARCH_WIDE), "even" (SF_SEARCH_EVEN),
 *  "split" (SF_SEARCH_SPLIT) or "oneshot" (SF_SEARCH_ONESHOT): for A/B
 *  measurements of the search. Read once per process; a bad list is a
 *  usage error (exit 2). Runs are the same either way: only the feedback
 *  and the explorer's choices change. */
uint32_t sf_search_off(void);

/** The feature buckets of this process's runs: SF_FB_NARROW, or
 *  SF_FB_BUCKETS when SIMFUZZ_SEARCH turns "wide" on. The top
 *  SF_FB_SITE_BUCKETS of them are the assertion sites'. */
uint32_t sf_fb_buckets(void);

/** The off mask that list makes of def (empty items are skipped); -1 if an
 *  item has no sign or an unknown name. */
int64_t sf_search_parse(const char *list, uint32_t def);

/** Account for one trace record. */
void sf_features_trace(sf_features *f, const sim_trace_rec *r);

/** The same as a simulator trace hook (sim_config.trace) whose context is
 *  the sf_features: one call per record when nothing else is traced. */
void sf_features_on_trace(void *f, const sim_world *w, const sim_trace_rec *r, const void *payload,
                          size_t len);

/** After an event: the role of the node it touched, from the bound
 *  target's observe() hook (if set), and the end of a delivery's epoch
 *  feature (whether its receiver's role and epoch changed on it). Nothing
 *  before sf_features_bind. */
void sf_features_observe(sf_features *f);

/** A step of `kind` starts. */
void sf_features_step(sf_features *f, unsigned kind);

/** An assertion site (its catalog index) was hit with a new best value
 *  (value 0 for the first hit of a SOMETIMES or REACHABLE site), about
 *  node (-1: none named). */
void sf_features_site(sf_features *f, uint32_t site, uint64_t value, int node);

/** Take the buckets first reached since the last call: copies at most
 *  SF_FRESH_MAX into out, into node the node each one's site named (-1 for
 *  none), and into kind the kind (SF_FT_*) of the feature that reached it
 *  (of two kinds hashed into one bucket, the first this run reached); returns
 *  how many. */
uint32_t sf_features_drain(sf_features *f, uint32_t *out, int *node, int *kind);

/** Run the feedback code path of every bucket reached (no-op when the build
 *  has no feedback). */
void sf_features_emit(const sf_features *f);

#endif
