/*
 * simfuzz adapter helpers: encoding messages and records with checksums.
 *
 * Header-only, built on the C library alone. A writer and a reader cursor
 * encode fixed-width little-endian fields in order, so no adapter computes
 * byte offsets by hand:
 *
 *     uint8_t m[64];
 *     sf_enc e;
 *     sf_enc_init(&e, m, sizeof m);
 *     sf_enc_u8(&e, MSG_VOTE);
 *     sf_enc_u64(&e, term);
 *     size_t len = sf_enc_seal(&e);          // 0 if the fields did not fit
 *     sim_send(w, node, peer, m, len);
 *
 *     sf_dec d;
 *     if (!sf_dec_unseal(&d, msg, len))      // damaged or truncated: drop it
 *       return;
 *     unsigned kind = sf_dec_u8(&d);
 *     uint64_t term = sf_dec_u64(&d);
 *     if (!sf_dec_ok(&d)) return;            // shorter than its fields
 *
 * The simulated network may flip bits (corruption faults) and the disk may
 * tear or corrupt unsynced sectors, as real ones do: a protocol must check
 * what it reads. A reader past the end returns zeros and remembers the
 * error, so decoding code needs one check at the end, not one per field.
 */
#ifndef SIMFUZZ_WIRE_H
#define SIMFUZZ_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Bytes sf_enc_seal() appends: a 64-bit checksum. */
#define SF_SEAL_BYTES 8u

/** Store v at b, little-endian. */
static inline void sf_put32(uint8_t *b, uint32_t v) {
  for (int i = 0; i < 4; i++)
    b[i] = (uint8_t)(v >> (8 * i));
}

/** Store v at b, little-endian. */
static inline void sf_put64(uint8_t *b, uint64_t v) {
  for (int i = 0; i < 8; i++)
    b[i] = (uint8_t)(v >> (8 * i));
}

/** Load a little-endian 32-bit value from b. */
static inline uint32_t sf_get32(const uint8_t *b) {
  return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/** Load a little-endian 64-bit value from b. */
static inline uint64_t sf_get64(const uint8_t *b) {
  return (uint64_t)sf_get32(b) | (uint64_t)sf_get32(b + 4) << 32;
}

/** Checksum of len bytes that belong at position `where` (a slot, an index,
 *  a length): a record copied to the wrong place does not verify either.
 *  Two multiply-rotate lanes over alternate little-endian 64-bit words
 *  (each step is a bijection of the lane and of the word, so any one
 *  changed word changes the result), then a 64-bit finaliser. */
static inline uint64_t sf_checksum(uint64_t where, const void *p, size_t len) {
  const uint8_t *b = (const uint8_t *)p;
  uint64_t x = 0x5bd1e9955bd1e995ull ^ (where * 0x9e3779b97f4a7c15ull);
  uint64_t y = (uint64_t)len * 0xc2b2ae3d27d4eb4full + 0x165667b19e3779f9ull;
  size_t i = 0;
  for (; i + 16 <= len; i += 16) {
    x = (x ^ sf_get64(b + i)) * 0x87c37b91114253d5ull;
    y = (y ^ sf_get64(b + i + 8)) * 0x4cf5ad432745937full;
    x = x << 31 | x >> 33;
    y = y << 27 | y >> 37;
  }
  if (i + 8 <= len) {
    x = (x ^ sf_get64(b + i)) * 0x87c37b91114253d5ull;
    x = x << 31 | x >> 33;
    i += 8;
  }
  uint64_t t = 0;
  for (size_t k = len; k > i; k--)
    t = t << 8 | b[k - 1];
  y = (y ^ t) * 0x4cf5ad432745937full;
  x ^= y << 27 | y >> 37;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  return x ^ (x >> 29);
}

/** A writer cursor over a caller's buffer. */
typedef struct sf_enc {
  uint8_t *buf;
  size_t cap, len;
  int overflow; /**< a field did not fit: the encoding is invalid */
} sf_enc;

/** Start writing into buf (cap bytes). */
static inline void sf_enc_init(sf_enc *e, void *buf, size_t cap) {
  e->buf = (uint8_t *)buf;
  e->cap = cap;
  e->len = 0;
  e->overflow = 0;
}

/** Append len raw bytes. */
static inline void sf_enc_bytes(sf_enc *e, const void *p, size_t len) {
  if (e->overflow || len > e->cap - e->len) {
    e->overflow = 1;
    return;
  }
  if (len)
    memcpy(e->buf + e->len, p, len);
  e->len += len;
}

/** Append one byte. */
static inline void sf_enc_u8(sf_enc *e, uint8_t v) {
  sf_enc_bytes(e, &v, 1);
}

/** Append a little-endian 16-bit value. */
static inline void sf_enc_u16(sf_enc *e, uint16_t v) {
  uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
  sf_enc_bytes(e, b, 2);
}

/** Append a little-endian 32-bit value. */
static inline void sf_enc_u32(sf_enc *e, uint32_t v) {
  uint8_t b[4];
  sf_put32(b, v);
  sf_enc_bytes(e, b, 4);
}

/** Append a little-endian 64-bit value. */
static inline void sf_enc_u64(sf_enc *e, uint64_t v) {
  uint8_t b[8];
  sf_put64(b, v);
  sf_enc_bytes(e, b, 8);
}

/** Bytes written so far, or 0 after an overflow. */
static inline size_t sf_enc_len(const sf_enc *e) {
  return e->overflow ? 0 : e->len;
}

/** Append the checksum of everything written (bound to its length) and
 *  return the sealed length, or 0 if anything did not fit. */
static inline size_t sf_enc_seal(sf_enc *e) {
  if (e->overflow)
    return 0;
  size_t len = e->len;
  sf_enc_u64(e, sf_checksum(len, e->buf, len));
  return sf_enc_len(e);
}

/** A reader cursor over received or loaded bytes. */
typedef struct sf_dec {
  const uint8_t *buf;
  size_t len, pos;
  int error; /**< read past the end (or the seal did not verify) */
} sf_dec;

/** Start reading len bytes at buf. */
static inline void sf_dec_init(sf_dec *d, const void *buf, size_t len) {
  d->buf = (const uint8_t *)buf;
  d->len = len;
  d->pos = 0;
  d->error = 0;
}

/** Start reading a sealed message: returns 1 if its checksum verifies (the
 *  reader then covers the payload without the seal), 0 if it is damaged or
 *  too short (drop it). */
static inline int sf_dec_unseal(sf_dec *d, const void *buf, size_t len) {
  sf_dec_init(d, buf, 0);
  if (len < SF_SEAL_BYTES) {
    d->error = 1;
    return 0;
  }
  size_t n = len - SF_SEAL_BYTES;
  if (sf_get64(d->buf + n) != sf_checksum(n, buf, n)) {
    d->error = 1;
    return 0;
  }
  d->len = n;
  return 1;
}

/** Copy len raw bytes out (zeros past the end, which sets the error). */
static inline void sf_dec_bytes(sf_dec *d, void *out, size_t len) {
  if (d->error || len > d->len - d->pos) {
    d->error = 1;
    if (len)
      memset(out, 0, len);
    return;
  }
  if (len)
    memcpy(out, d->buf + d->pos, len);
  d->pos += len;
}

/** Read one byte. */
static inline uint8_t sf_dec_u8(sf_dec *d) {
  uint8_t v;
  sf_dec_bytes(d, &v, 1);
  return v;
}

/** Read a little-endian 16-bit value. */
static inline uint16_t sf_dec_u16(sf_dec *d) {
  uint8_t b[2];
  sf_dec_bytes(d, b, 2);
  return (uint16_t)(b[0] | b[1] << 8);
}

/** Read a little-endian 32-bit value. */
static inline uint32_t sf_dec_u32(sf_dec *d) {
  uint8_t b[4];
  sf_dec_bytes(d, b, 4);
  return sf_get32(b);
}

/** Read a little-endian 64-bit value. */
static inline uint64_t sf_dec_u64(sf_dec *d) {
  uint8_t b[8];
  sf_dec_bytes(d, b, 8);
  return sf_get64(b);
}

/** Bytes not read yet. */
static inline size_t sf_dec_left(const sf_dec *d) {
  return d->error ? 0 : d->len - d->pos;
}

/** 1 if every field read so far was there. */
static inline int sf_dec_ok(const sf_dec *d) {
  return !d->error;
}

#ifdef __cplusplus
}
#endif
#endif
