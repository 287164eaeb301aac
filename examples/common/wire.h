/*
 * Little helpers shared by the example systems: fixed-width little-endian
 * encoding for messages and disk records, and a record checksum. Header-only
 * and built on nothing but the C library, like a real project's own utils.
 */
#ifndef SIMFUZZ_EXAMPLES_WIRE_H
#define SIMFUZZ_EXAMPLES_WIRE_H

#include <stddef.h>
#include <stdint.h>

/** Store v at b, little-endian. */
static inline void wire_put32(uint8_t *b, uint32_t v) {
  for (int i = 0; i < 4; i++)
    b[i] = (uint8_t)(v >> (8 * i));
}

/** Store v at b, little-endian. */
static inline void wire_put64(uint8_t *b, uint64_t v) {
  for (int i = 0; i < 8; i++)
    b[i] = (uint8_t)(v >> (8 * i));
}

/** Load a little-endian 32-bit value from b. */
static inline uint32_t wire_get32(const uint8_t *b) {
  return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/** Load a little-endian 64-bit value from b. */
static inline uint64_t wire_get64(const uint8_t *b) {
  return (uint64_t)wire_get32(b) | (uint64_t)wire_get32(b + 4) << 32;
}

/** Checksum of len bytes stored at position `where` (a slot or index), so
 *  that a record copied to the wrong place does not verify either. */
static inline uint64_t wire_checksum(uint64_t where, const uint8_t *p, size_t len) {
  uint64_t x = 0x5bd1e9955bd1e995ull ^ (where * 0x9e3779b97f4a7c15ull);
  for (size_t i = 0; i < len; i++) {
    x ^= p[i];
    x *= 0x100000001b3ull;
  }
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  return x ^ (x >> 29);
}

/** Bytes wire_seal() appends. */
#define WIRE_SEAL 8

/** Append a checksum to the len-byte message at m (which must have room for
 *  WIRE_SEAL more bytes), as a datagram protocol must when the network may
 *  flip bits. Returns the sealed length. */
static inline size_t wire_seal(uint8_t *m, size_t len) {
  wire_put64(m + len, wire_checksum(len, m, len));
  return len + WIRE_SEAL;
}

/** Check a sealed message; returns the payload length, or 0 if it is too
 *  short or damaged (drop it). */
static inline size_t wire_unseal(const uint8_t *m, size_t len) {
  if (len <= WIRE_SEAL)
    return 0;
  len -= WIRE_SEAL;
  return wire_get64(m + len) == wire_checksum(len, m, len) ? len : 0;
}

#endif
