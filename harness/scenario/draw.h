/*
 * The one random draw of scenario parts, internal to the harness. The
 * generator (sf_generate: the sweep's seeds and raw bytes), the mutator
 * and the explorer's futures all draw kinds, steps, link, disk and swarm
 * parameters here, from one choice source, so they cannot drift apart.
 *
 * A choice source is either a byte string read from the front (the
 * generator: the bytes are its choices, and the rest is the choice tape)
 * or a 64-bit generator (the mutator). Its draws are deterministic for a
 * given source and never fail: a byte string past its end reads zeros.
 */
#ifndef SIMFUZZ_DRAW_H
#define SIMFUZZ_DRAW_H

#include <simfuzz/scenario.h>

#include <stddef.h>
#include <stdint.h>

/** A choice source (caller-owned; see sf_choice_bytes, sf_choice_rng). */
typedef struct sf_choice {
  const uint8_t *p; /* bytes mode: the bytes (NULL when there are none), */
  size_t n, i;      /* their length and the next one read */
  uint64_t x;       /* generator mode: its state */
  int bytes;        /* 1 in bytes mode */
} sf_choice;

/** A choice source reading bytes[0..len) from the front. */
sf_choice sf_choice_bytes(const uint8_t *bytes, size_t len);

/** A choice source drawing from a 64-bit generator seeded with seed. */
sf_choice sf_choice_rng(uint64_t seed);

/** 64 random bits (8 bytes in bytes mode). */
uint64_t sf_u64(sf_choice *c);

/** A value in [0, n), 0 if n is 0: in bytes mode one byte when n <= 256,
 *  two when n <= 65536, else four, taken modulo n. */
uint32_t sf_below(sf_choice *c, uint32_t n);

/** A fault rate (ppm) from a small table: mostly off, sometimes heavy. */
uint32_t sf_draw_rate(sf_choice *c);

/** A disk's chance to keep an unsynced write at a crash (ppm), from a
 *  table that mostly loses them (0 to 30 %, a seventh of the time all
 *  kept): keeping most of them hides the states a crash is for. */
uint32_t sf_draw_keep(sf_choice *c);

/** A reorder delay (us): mostly under 0.1 s, one in 16 a long tail of up
 *  to 4 s (the clogging of a node or a pair). */
uint32_t sf_draw_long_tail_us(sf_choice *c);

/** A swarm amplifier (percent): mostly 0 (as stated), a quarter of the
 *  time 25 % to 400 %. */
uint32_t sf_draw_amp(sf_choice *c);

/** A swarm's disabled fault kinds: each off with probability 1/4. */
uint32_t sf_draw_disabled(sf_choice *c);

/** Link parameters, as SF_NET_FIELDS' draw column says. */
void sf_draw_net(sf_choice *c, sf_net *n);

/** Disk fault parameters, as SF_DISK_FIELDS' draw column says. */
void sf_draw_disk(sf_choice *c, sf_disk *d);

/** Swarm knobs, as SF_SWARM_FIELDS' draw column says. */
void sf_draw_swarm(sf_choice *c, sf_swarm *w);

/** A step kind by SF_STEP_KINDS' weights (never an SF_SK_HAND or
 *  SF_SK_VERSIONS kind). */
uint8_t sf_draw_kind(sf_choice *c);

/** The arguments of st's kind (its shape's fields), st->kind kept. */
void sf_draw_params(sf_choice *c, sf_step *st);

/** A whole step but its time: zeroed, then a kind (sf_draw_kind), a node
 *  and a peer, by role a quarter of the time, and its arguments. */
void sf_draw_step(sf_choice *c, sf_step *st);

#endif
