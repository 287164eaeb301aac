/*
 * simfuzz scenarios in memory: the decoded, clamped form of
 * proto/scenario.proto, and the conversions every tool shares.
 *
 * Any byte string decodes into a valid, bounded scenario:
 *   - bytes that parse as a Scenario protobuf are converted and clamped;
 *   - a damaged protobuf keeps its top-level fields that still parse
 *     (steps, network, tape, ...), so a byte-level mutation changes one
 *     step rather than the whole scenario;
 *   - other bytes (e.g. random ones from AFL++'s raw havoc) are read as a
 *     choice stream by the scenario generator (sf_generate), so they still
 *     run a meaningful fault scenario.
 * The random-seed sweep feeds the same generator from a PRNG.
 */
#ifndef SIMFUZZ_SCENARIO_H
#define SIMFUZZ_SCENARIO_H

#include "sim.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SF_MAX_STEPS 256                /**< steps kept per scenario */
#define SF_MAX_ON_CHANGE 4              /**< a step waits for at most this many rises */
#define SF_MAX_AT_US 60000000ull        /**< latest step time: 60 s */
#define SF_MAX_TAIL_MS 60000u           /**< longest run after the last step */
#define SF_DEFAULT_TAIL_MS 2000u        /**< run after the last step, by default */
#define SF_MAX_OP_COUNT 64u             /**< repetitions of one client op step */
#define SF_MAX_LATENCY_US 10000000u     /**< 10 s */
#define SF_MAX_LIVENESS_MS 60000u       /**< longest liveness deadline */
#define SF_DEFAULT_LIVENESS_MS 10000u   /**< liveness deadline by default */
#define SF_MAX_INPUT 65536u             /**< bytes of input read; the rest is ignored */
#define SF_MAX_CLOCK_US 3600000000ll    /**< largest clock offset or jump: one hour */
#define SF_MAX_DELIVER_K 1024u          /**< deepest pending message a deliver step names */
#define SF_MAX_DISK_NTH 1000u           /**< latest disk operation a disk step fails */
#define SF_MAX_STALL_US 10000000u       /**< longest disk stall: 10 s */
#define SF_MAX_FP_NTH 1000000u          /**< latest hit a fault point step fails */
#define SF_GEN_STALL_US 64000u          /**< generated disk stalls: 1 to 16 of these */
#define SF_MAX_OP_INTERVAL_US 10000000u /**< longest interval between repeated client ops */
#define SF_MAX_BANDWIDTH_KBPS 10000000u /**< highest link bandwidth */
#define SF_MAX_QUEUE 65536u             /**< longest link queue */
#define SF_MAX_SWARM_PCT 1000u          /**< largest swarm rate multiplier (10x) */
#define SF_FORMAT_VERSION 1u            /**< version written by this build */
#define SF_MAX_VERSIONS 16u             /**< versions of a target's code, at most */

/** What a step's arguments look like: which sf_step fields it uses. One
 *  shape per message type of proto/scenario.proto; the kinds of one shape
 *  share the codec, normalisation, generator, mutator and minimizer code,
 *  so a new kind of an existing shape needs none of it. */
typedef enum {
  SF_SHAPE_NONE,       /**< no argument (Heal) */
  SF_SHAPE_NODE,       /**< node (Isolate, NodeOp) */
  SF_SHAPE_MASKS,      /**< mask_a, mask_b, flag = one way (Partition) */
  SF_SHAPE_GROUPS,     /**< group[], ngroups (Split) */
  SF_SHAPE_RESET,      /**< node, peer, flag = all peers (Reset) */
  SF_SHAPE_LINK,       /**< node = from, peer = to, flag = all links, net (LinkFaults) */
  SF_SHAPE_PAIR,       /**< node = from, peer = to (LinkOp) */
  SF_SHAPE_DELIVER,    /**< node = from, peer = to, k = which message (DeliverKth) */
  SF_SHAPE_CLOCK,      /**< node, offset_us, drift_ppm, jump_us (Clock) */
  SF_SHAPE_DISK,       /**< node, disk, k = op to fail, count = its nth,
                            interval_us = a stall (DiskFaults) */
  SF_SHAPE_FAULTPOINT, /**< k = site, rate_ppm, flag = disable, count = nth (FaultPoint) */
  SF_SHAPE_OP,         /**< node, k = op code, key, value, count, interval_us (ClientOp) */
  SF_SHAPE_DEADLINE,   /**< count = deadline in ms (Liveness) */
  SF_SHAPE_VERSION,    /**< node, k = version (Upgrade) */
  SF_SHAPE__COUNT
} sf_step_shape;

#define SF_SK_UNDO 1u    /**< kind flag: ends a fault (not counted as one) */
#define SF_SK_NO_RANK 2u /**< kind flag: names no node, so by_state does not apply */
#define SF_SK_HAND                                                                                 \
  4u /**< kind flag: written by hand only, never generated or                                      \
          inserted by a mutator (its weight is 0) */
#define SF_SK_VERSIONS                                                                             \
  8u /**< kind flag: about a target's versions; drawn only for a target                            \
          that has several (sf_generate_versions), never by the shared                             \
          step draw (its weight is 0) */

/* NOP does nothing (files of older explorers used it as a placeholder). */

/** The step kinds, one row each; every table about step kinds derives from
 *  this list (names, shapes, fault classes, the protobuf codec, the
 *  generator's draw, the describer, the mutator's and minimizer's choices).
 *    X(KIND, name, shape, fault, flags, weight, ends)
 *  KIND   SF_STEP_<KIND>; Step.<name> in proto/scenario.proto, the oneof
 *         field SIMFUZZ__STEP__KIND_<KIND>
 *  name   the kind in reports, traces and text scenarios
 *  shape  SF_SHAPE_<shape>: its arguments
 *  fault  SF_FAULT_<fault>: the swarm switch that turns it off, NONE if none
 *  flags  SF_SK_* bits
 *  weight how often the shared step draw (harness/scenario/draw.c: the
 *         generator, the mutator and the explorer's futures) picks this
 *         kind, against the sum of the weights; 0 if and only if the kind
 *         is SF_SK_HAND or SF_SK_VERSIONS (checked at compile time)
 *  ends   the kind of the step that ends a fault of this kind (a crash's
 *         restart, a partition's heal), _NONE if none
 *  Kinds are numbered from 1 in this order, and the numbers are stable
 *  (traces record them): add a kind at the end. Adding one touches this
 *  list (a weight changes the draw: the sweep's seeds then map to other
 *  scenarios), the Step oneof in proto/scenario.proto (its field name is
 *  the row's name), the runner's action (harness/run/run.c), the
 *  dictionary's st_<name> tag (harness/scenario/scenario.dict), and a test
 *  (tests/test_scenario.c's every_step_kind_roundtrips covers the codec, the
 *  text format and the describer from the row). A new shape also needs its
 *  fields in the codec, the describer, the shared draw (sf_draw_params) and
 *  the minimizer's simplifications. */
#define SF_STEP_KINDS(X)                                                                           \
  X(PARTITION, partition, MASKS, PARTITION, 0, 3, HEAL)                                            \
  X(HEAL, heal, NONE, NONE, SF_SK_NO_RANK, 2, _NONE)                                               \
  X(ISOLATE, isolate, NODE, PARTITION, 0, 1, HEAL)                                                 \
  X(SPLIT, split, GROUPS, PARTITION, 0, 1, HEAL)                                                   \
  X(RESET, reset, RESET, RESET, 0, 3, _NONE)                                                       \
  X(LINK, link, LINK, LOSS, 0, 2, _NONE)                                                           \
  X(HOLD, hold, PAIR, HOLD, 0, 1, RELEASE)                                                         \
  X(RELEASE, release, PAIR, HOLD, SF_SK_UNDO, 1, _NONE)                                            \
  X(DELIVER, deliver, DELIVER, HOLD, 0, 1, _NONE)                                                  \
  X(CRASH, crash, NODE, CRASH, 0, 2, RESTART)                                                      \
  X(RESTART, restart, NODE, CRASH, SF_SK_UNDO, 2, _NONE)                                           \
  X(PAUSE, pause, NODE, PAUSE, 0, 1, RESUME)                                                       \
  X(RESUME, resume, NODE, PAUSE, SF_SK_UNDO, 1, _NONE)                                             \
  X(CLOCK, clock, CLOCK, CLOCK, 0, 1, _NONE)                                                       \
  X(DISK, disk, DISK, DISK, 0, 1, _NONE)                                                           \
  X(FAULTPOINT, faultpoint, FAULTPOINT, FAULTPOINT, SF_SK_NO_RANK, 1, _NONE)                       \
  X(OP, op, OP, NONE, 0, 7, _NONE)                                                                 \
  X(LIVENESS, liveness, DEADLINE, NONE, SF_SK_NO_RANK, 1, _NONE)                                   \
  X(NOP, nop, NONE, NONE, SF_SK_NO_RANK | SF_SK_UNDO | SF_SK_HAND, 0, _NONE)                       \
  X(UPGRADE, upgrade, VERSION, NONE, SF_SK_VERSIONS, 0, _NONE)

/** Step kinds (see SF_STEP_KINDS). */
typedef enum {
  SF_STEP__NONE = 0,
#define SF_X_(K, name, shape, fault, flags, weight, ends) SF_STEP_##K,
  SF_STEP_KINDS(SF_X_)
#undef SF_X_
      SF_STEP__COUNT
} sf_step_kind;

/** Fault kinds for swarm switches (bit 1 << kind in sf_swarm.disabled),
 *  numbered from 1 in this order, as proto/scenario.proto's FaultKind
 *  (FAULT_<KIND>; the codec asserts at compile time that the two agree). */
#define SF_FAULT_KINDS(X)                                                                          \
  X(PARTITION) /* partition, isolate, split, one-way */                                            \
  X(LOSS)                                                                                          \
  X(DUP)                                                                                           \
  X(REORDER)                                                                                       \
  X(CORRUPT)                                                                                       \
  X(CRASH) /* crash and restart */                                                                 \
  X(PAUSE)                                                                                         \
  X(RESET) /* connection resets */                                                                 \
  X(CLOCK)                                                                                         \
  X(DISK)                                                                                          \
  X(FAULTPOINT)                                                                                    \
  X(HOLD) /* hold, release, deliver the k-th */

/** Fault kinds (see SF_FAULT_KINDS). */
typedef enum {
  SF_FAULT_NONE = 0,
#define SF_FAULT_ENUM_(kind) SF_FAULT_##kind,
  SF_FAULT_KINDS(SF_FAULT_ENUM_)
#undef SF_FAULT_ENUM_
      SF_FAULT__COUNT
} sf_fault_kind;

/** The fields of a scenario's link parameters (proto Network, sf_net), one
 *  row each, in the struct's order; the struct, sf_normalize's clamps, the
 *  protobuf codec and the shared draw (generator, mutator) derive from it.
 *    X(field, type, bound, draw)
 *  field  the member of sf_net and the field of Network of that name
 *  type   its C type
 *  bound  the largest value kept (n is the sf_net being normalised)
 *  draw   its random value (sf_draw_net; c is the choice source of
 *         harness/scenario/draw.h, n the sf_net being drawn, whose earlier
 *         rows are drawn), in row order: a new row changes the sweep's
 *         scenarios from its draw on */
#define SF_NET_FIELDS(X)                                                                           \
  X(latency_min_us, uint32_t, SF_MAX_LATENCY_US, 500 + sf_below(c, 20) * 500)                      \
  X(latency_max_us, uint32_t, SF_MAX_LATENCY_US, n->latency_min_us + sf_below(c, 40) * 500)        \
  X(exponential, uint8_t, 1, sf_below(c, 2)) /* exponential instead of uniform latency */          \
  X(loss_ppm, uint32_t, SIM_PPM, sf_draw_rate(c))                                                  \
  X(dup_ppm, uint32_t, SIM_PPM, sf_draw_rate(c))                                                   \
  X(reorder_ppm, uint32_t, SIM_PPM, sf_draw_rate(c))                                               \
  X(reorder_delay_us, uint32_t, SF_MAX_LATENCY_US, sf_draw_long_tail_us(c))                        \
  X(corrupt_ppm, uint32_t, SIM_PPM, sf_draw_rate(c) / 4)                                           \
  X(bandwidth_kbps, uint32_t, SF_MAX_BANDWIDTH_KBPS, sf_below(c, 8) ? 0 : 1 + sf_below(c, 1000))   \
  X(queue_limit, uint32_t, SF_MAX_QUEUE, sf_below(c, 8) ? 0 : 1 + sf_below(c, 16))

/** The random link faults among SF_NET_FIELDS: each is the
 *  sim_link_params member of the same name, turned off by its swarm switch
 *  and scaled by its swarm amplifier (the runner's to_link); the minimizer
 *  tries each at 0, and all of them at once.
 *    X(field, fault, amp)
 *  fault  SF_FAULT_<fault>, the swarm switch
 *  amp    the member of sf_swarm that scales it (percent, 0 = 100) */
#define SF_NET_FAULTS(X)                                                                           \
  X(loss_ppm, LOSS, loss_pct)                                                                      \
  X(dup_ppm, DUP, dup_pct)                                                                         \
  X(reorder_ppm, REORDER, reorder_pct)                                                             \
  X(corrupt_ppm, CORRUPT, corrupt_pct)

/** The fields of a scenario's disk faults (proto Disk, sf_disk), as
 *  SF_NET_FIELDS (d is the sf_disk being normalised or drawn), and:
 *    X(field, type, bound, draw, sim, fault)
 *  sim    the member of sim_disk_params it sets (the runner's to_disk)
 *  fault  1 if it is a fault: off by the DISK swarm switch, scaled by the
 *         swarm's disk_pct, 0 in the minimizer's "all faults off"
 *  (a sector corrupted at a crash is one that was not kept) */
#define SF_DISK_FIELDS(X)                                                                          \
  X(keep_ppm, uint32_t, SIM_PPM, sf_draw_keep(c), unsynced_keep_ppm, 0)                            \
  X(corrupt_ppm, uint32_t, SIM_PPM - d->keep_ppm, sf_draw_rate(c) / 8, unsynced_corrupt_ppm, 1)    \
  X(read_eio_ppm, uint32_t, SIM_PPM, sf_draw_rate(c) / 16, read_eio_ppm, 1)                        \
  X(write_eio_ppm, uint32_t, SIM_PPM, sf_draw_rate(c) / 16, write_eio_ppm, 1)                      \
  X(sync_eio_ppm, uint32_t, SIM_PPM, sf_draw_rate(c) / 8, sync_eio_ppm, 1)

/** The swarm's fields (proto Swarm, sf_swarm), as SF_NET_FIELDS: disabled
 *  fault kinds (bit 1 << kind), then rate multipliers (percent, 0 = 100),
 *  every one drawn per seed as TigerBeetle's options_swarm does. */
#define SF_SWARM_FIELDS(X)                                                                         \
  X(disabled, uint32_t, UINT32_MAX,                                                                \
    sf_draw_disabled(c)) /* sf_normalize keeps fault kinds' bits */                                \
  X(loss_pct, uint32_t, SF_MAX_SWARM_PCT, sf_draw_amp(c))                                          \
  X(dup_pct, uint32_t, SF_MAX_SWARM_PCT, sf_draw_amp(c))                                           \
  X(reorder_pct, uint32_t, SF_MAX_SWARM_PCT, sf_draw_amp(c))                                       \
  X(corrupt_pct, uint32_t, SF_MAX_SWARM_PCT, sf_draw_amp(c))                                       \
  X(latency_pct, uint32_t, SF_MAX_SWARM_PCT, sf_draw_amp(c))                                       \
  X(disk_pct, uint32_t, SF_MAX_SWARM_PCT, sf_draw_amp(c))

#define SF_FIELD_MEMBER_(field, type, bound, ...) type field;

/** Link parameters as the scenario states them (microseconds, ppm). */
typedef struct sf_net {
  SF_NET_FIELDS(SF_FIELD_MEMBER_)
} sf_net;

/** Disk fault parameters as the scenario states them. */
typedef struct sf_disk {
  SF_DISK_FIELDS(SF_FIELD_MEMBER_)
} sf_disk;

/** Swarm knobs: disabled fault kinds and rate multipliers (percent). */
typedef struct sf_swarm {
  SF_SWARM_FIELDS(SF_FIELD_MEMBER_)
} sf_swarm;

#undef SF_FIELD_MEMBER_

/** One timed step. Which fields a kind uses is its shape (sf_step_shape);
 *  a disk step's k is 0 none, 1 read, 2 write, 3 sync; its interval_us
 *  stalls the disk (sim_disk_stall) that long.
 *  by_state: node, peer, mask bits and group positions are ranks by the
 *  target's observed state (rank 0 = highest, e.g. the leader). */
typedef struct sf_step {
  uint64_t at_us;
  uint8_t kind; /* sf_step_kind */
  uint8_t flag;
  uint8_t by_state;     /* node numbers are ranks by observed state (see proto) */
  uint32_t after_event; /* 0: scheduled at the start; N: after event N (proto) */
  uint8_t on_change;    /* 0: at at_us; K: at the K-th rise to the top rank after it (proto) */
  uint32_t node, peer, k, count, interval_us, rate_ppm;
  uint64_t mask_a, mask_b, key, value;
  int64_t offset_us, jump_us;
  int32_t drift_ppm;
  sf_net net;
  sf_disk disk;
  uint8_t ngroups;
  uint8_t group[SIM_MAX_NODES];
} sf_step;

/** A decoded scenario. Plain data: copy it with memcpy/assignment. */
typedef struct sf_scenario {
  uint32_t version;
  uint32_t nodes; /* 0 = the target's default */
  uint64_t seed;
  uint8_t has_net, has_disk, fifo;
  sf_net net;
  sf_disk disk;
  sf_swarm swarm;
  uint32_t fp_enable_ppm, fp_fire_ppm;
  uint32_t tail_ms;
  /* node i starts as version versions[i] (i < nversions; else 0), taken
   * modulo the target's versions; nversions 0 when every node starts at 0 */
  uint32_t nversions;
  uint8_t versions[SIM_MAX_NODES];
  uint32_t nsteps;
  sf_step steps[SF_MAX_STEPS];
  uint32_t tape_len;
  uint8_t tape[SIM_TAPE_MAX];
} sf_scenario;

/** How sf_decode read its input. */
typedef enum {
  SF_DECODED_PROTO = 0,     /**< a valid Scenario protobuf */
  SF_DECODED_GENERATED = 1, /**< not a protobuf: the generator read the bytes */
  SF_DECODED_SALVAGED = 2,  /**< a damaged protobuf: its intact fields were kept */
} sf_decode_kind;

/** Decode any bytes into a valid scenario (see the file comment): a valid
 *  protobuf as is; a damaged one (e.g. after a byte-level mutation) by
 *  keeping every top-level field that still parses, as long as at least one
 *  step survives; anything else through the generator. Never fails;
 *  allocation is bounded by SF_MAX_INPUT. */
sf_decode_kind sf_decode(const uint8_t *data, size_t len, sf_scenario *out);

/** Parse bytes strictly as a Scenario protobuf and clamp it. Returns 0, or
 *  -1 if the bytes are not a valid protobuf (out is then undefined). */
int sf_decode_proto(const uint8_t *data, size_t len, sf_scenario *out);

/** Encode a scenario as protobuf into buf (cap bytes). Returns the encoded
 *  size, which may exceed cap (then nothing useful was written). */
size_t sf_encode(const sf_scenario *s, uint8_t *buf, size_t cap);

/** Encoded size of a scenario. */
size_t sf_encoded_size(const sf_scenario *s);

/** Clamp every field to the harness's bounds and sort steps by time
 *  (stable). Idempotent. Called by every decoder. */
void sf_normalize(sf_scenario *s);

/** Clamp one step's fields as sf_normalize() does. Returns 0 if the step
 *  is unusable (sf_normalize() would drop it), 1 otherwise. */
int sf_step_normalize(sf_step *st);

/** Generate a scenario from a choice stream of bytes: the lenient reading
 *  of non-protobuf input. Bytes left over become the choice tape. */
void sf_generate(const uint8_t *bytes, size_t len, sf_scenario *out);

/** Generate the random scenario of a 64-bit seed (swarm: a random fault
 *  mix per seed) — the random-seed sweep's scenario. */
void sf_generate_seed(uint64_t seed, sf_scenario *out);

/** For a target of `versions` versions of its code (2 to SF_MAX_VERSIONS;
 *  nothing otherwise): give the generated scenario s a version plan drawn
 *  from its seed, after everything else was drawn, so that targets of one
 *  version keep their scenarios. Half the plans start a mixed cluster;
 *  the other half start every node at version 0 and upgrade some nodes,
 *  one at a time, to the last version (a rolling upgrade). */
void sf_generate_versions(uint32_t versions, sf_scenario *s);

/** An empty scenario (no steps, defaults everywhere). */
void sf_scenario_init(sf_scenario *s);

/** Name of a step kind ("partition", "crash", ...). */
const char *sf_step_name(unsigned kind);

/** One-line description of a step for reports ("partition {n0} -/- {n1}",
 *  with " (at rise K to the top rank)" for a step that waits, on_change).
 *  n: node count (node numbers are taken modulo n); returns the length. */
int sf_step_describe(const sf_step *st, int n, char *buf, size_t cap);

/** The fault kind a step kind belongs to (0 for client ops, heal, liveness). */
sf_fault_kind sf_step_fault(unsigned kind);

/** The shape of a step kind's arguments (SF_SHAPE_NONE for an unknown kind). */
sf_step_shape sf_step_shape_of(unsigned kind);

/** The SF_SK_* flags of a step kind (0 for an unknown kind). */
unsigned sf_step_flags(unsigned kind);

/** The kind of the step that ends a fault of this kind (a crash's restart,
 *  a partition's heal), or 0 if none. */
unsigned sf_step_ends(unsigned kind);

/** When a run of s ends, in microseconds of virtual time: its last step
 *  scheduled from the start (after_event 0; a step injected after an event
 *  does not count) plus its tail (tail_ms, SF_DEFAULT_TAIL_MS if 0). An
 *  open liveness window may keep the run going past it. */
uint64_t sf_run_end_us(const sf_scenario *s);

/** Number of steps that inject a fault (not heal, ops or liveness). */
uint32_t sf_fault_steps(const sf_scenario *s);

#ifdef __cplusplus
}
#endif
#endif
