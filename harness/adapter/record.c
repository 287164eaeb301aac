/* Durable checksummed records on the simulated disk (simfuzz_record.h).
 * Slot layout: u32 length, u64 checksum(slot number, length + payload),
 * payload. An all-zero slot (never written, or erased) has length 0 and a
 * checksum that does not match, so it reads as empty. */
#include <simfuzz/simfuzz_record.h>

#include <simfuzz/simfuzz_wire.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int sf_records_init(sf_records *r, const sim_world *w, int node, uint64_t base, uint32_t max_len) {
  if (!r || !w || max_len == 0 || max_len > SF_RECORD_MAX)
    return -EINVAL;
  uint64_t ss = sim_disk_sector_size(w, node);
  if (ss == 0)
    return -EINVAL;
  uint64_t need = SF_RECORD_HEADER + (uint64_t)max_len;
  r->base = (base + ss - 1) / ss * ss;
  r->max_len = max_len;
  r->slot = (uint32_t)((need + ss - 1) / ss * ss);
  return 0;
}

uint64_t sf_records_end(const sf_records *r, uint64_t n) {
  return r->base + (n + 1) * r->slot;
}

/* Checksum of a slot's length field and payload, bound to the slot. */
static uint64_t slot_sum(uint64_t n, const uint8_t *len_field, const void *data, uint32_t len) {
  uint64_t a = sf_checksum(n, len_field, 4);
  return sf_checksum(a, data, len);
}

/* Records of up to this many bytes (header included) go through a buffer
 * on the caller's stack: most records, so no allocation per disk access. */
#define SMALL_RECORD (SF_RECORD_HEADER + 256)

/* A buffer of want bytes: small (SMALL_RECORD bytes) when it fits, else
 * allocated (NULL when memory ran out). buf_done gives it back. */
static uint8_t *buf_get(uint8_t *small, size_t want) {
  return want <= SMALL_RECORD ? small : malloc(want);
}

static void buf_done(uint8_t *buf, const uint8_t *small) {
  if (buf != small)
    free(buf);
}

int sf_record_write(const sf_records *r, sim_world *w, int node, uint64_t n, const void *data,
                    uint32_t len, int sync) {
  if (!r || len > r->max_len || (len && !data) || n > (UINT64_MAX - r->base) / r->slot - 1)
    return -EINVAL;
  uint8_t small[SMALL_RECORD];
  uint8_t *buf = buf_get(small, SF_RECORD_HEADER + (size_t)len);
  if (!buf)
    return -ENOMEM;
  sf_put32(buf, len);
  sf_put64(buf + 4, slot_sum(n, buf, data, len));
  if (len)
    memcpy(buf + SF_RECORD_HEADER, data, len);
  int64_t wr = sim_disk_write(w, node, r->base + n * r->slot, buf, SF_RECORD_HEADER + len);
  buf_done(buf, small);
  if (wr < 0)
    return (int)wr;
  return sync ? sim_disk_sync(w, node) : 0;
}

int64_t sf_record_read(const sf_records *r, sim_world *w, int node, uint64_t n, void *out,
                       uint32_t cap) {
  if (!r || n > (UINT64_MAX - r->base) / r->slot - 1)
    return -EINVAL;
  uint32_t want = SF_RECORD_HEADER + r->max_len;
  uint8_t small[SMALL_RECORD];
  uint8_t *buf = buf_get(small, want);
  if (!buf)
    return -ENOMEM;
  int64_t got = -EIO;
  for (unsigned i = 0; i < SF_RECORD_READ_TRIES && got < 0; i++)
    got = sim_disk_read(w, node, r->base + n * r->slot, buf, want);
  int64_t res = 0;
  if (got < 0) {
    res = got;
  } else if (got >= SF_RECORD_HEADER) {
    uint32_t len = sf_get32(buf);
    if (len > 0 && len <= r->max_len && len <= got - SF_RECORD_HEADER && len <= cap &&
        sf_get64(buf + 4) == slot_sum(n, buf, buf + SF_RECORD_HEADER, len)) {
      memcpy(out, buf + SF_RECORD_HEADER, len);
      res = len;
    }
  }
  buf_done(buf, small);
  return res;
}

int sf_record_erase(const sf_records *r, sim_world *w, int node, uint64_t n, int sync) {
  if (!r || n > (UINT64_MAX - r->base) / r->slot - 1)
    return -EINVAL;
  uint8_t zero[SF_RECORD_HEADER] = {0};
  int64_t wr = sim_disk_write(w, node, r->base + n * r->slot, zero, sizeof zero);
  if (wr < 0)
    return (int)wr;
  return sync ? sim_disk_sync(w, node) : 0;
}
