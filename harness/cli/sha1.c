/* SHA-1 (FIPS 180-4), for checking files that libFuzzer names by the SHA-1
 * of their contents (corpus inputs, crash-<sha1> files): a file cut short
 * by a full disk no longer matches its name. Not for security. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

typedef struct {
  uint32_t h[5];
  uint64_t len;
  uint8_t block[64];
  size_t fill;
} sha1_ctx;

static uint32_t rol(uint32_t x, unsigned n) {
  return x << n | x >> (32 - n);
}

static void sha1_block(sha1_ctx *c, const uint8_t *b) {
  uint32_t w[80];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)b[4 * i] << 24 | (uint32_t)b[4 * i + 1] << 16 | (uint32_t)b[4 * i + 2] << 8 |
           b[4 * i + 3];
  for (int i = 16; i < 80; i++)
    w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
  uint32_t a = c->h[0], bb = c->h[1], cc = c->h[2], d = c->h[3], e = c->h[4];
  for (int i = 0; i < 80; i++) {
    uint32_t f, k;
    if (i < 20) {
      f = (bb & cc) | (~bb & d);
      k = 0x5a827999;
    } else if (i < 40) {
      f = bb ^ cc ^ d;
      k = 0x6ed9eba1;
    } else if (i < 60) {
      f = (bb & cc) | (bb & d) | (cc & d);
      k = 0x8f1bbcdc;
    } else {
      f = bb ^ cc ^ d;
      k = 0xca62c1d6;
    }
    uint32_t t = rol(a, 5) + f + e + k + w[i];
    e = d;
    d = cc;
    cc = rol(bb, 30);
    bb = a;
    a = t;
  }
  c->h[0] += a;
  c->h[1] += bb;
  c->h[2] += cc;
  c->h[3] += d;
  c->h[4] += e;
}

static void sha1_init(sha1_ctx *c) {
  static const uint32_t iv[5] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};
  memcpy(c->h, iv, sizeof iv);
  c->len = 0;
  c->fill = 0;
}

static void sha1_update(sha1_ctx *c, const uint8_t *p, size_t n) {
  c->len += n;
  while (n) {
    size_t k = 64 - c->fill < n ? 64 - c->fill : n;
    memcpy(c->block + c->fill, p, k);
    c->fill += k;
    p += k;
    n -= k;
    if (c->fill == 64) {
      sha1_block(c, c->block);
      c->fill = 0;
    }
  }
}

static void sha1_final(sha1_ctx *c, char hex[41]) {
  uint64_t bits = c->len * 8;
  uint8_t pad = 0x80;
  sha1_update(c, &pad, 1);
  pad = 0;
  while (c->fill != 56)
    sha1_update(c, &pad, 1);
  uint8_t lenb[8];
  for (int i = 0; i < 8; i++)
    lenb[i] = (uint8_t)(bits >> (56 - 8 * i));
  sha1_update(c, lenb, 8);
  for (int i = 0; i < 5; i++)
    snprintf(hex + 8 * i, 9, "%08x", c->h[i]);
}

void cli_sha1_hex(const void *data, size_t len, char hex[41]) {
  sha1_ctx c;
  sha1_init(&c);
  sha1_update(&c, data, len);
  sha1_final(&c, hex);
}

int cli_sha1_file(const char *path, char hex[41]) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return -1;
  sha1_ctx c;
  sha1_init(&c);
  uint8_t buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0)
    sha1_update(&c, buf, n);
  int bad = ferror(f);
  fclose(f);
  if (bad)
    return -1;
  sha1_final(&c, hex);
  return 0;
}
