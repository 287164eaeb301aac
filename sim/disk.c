/* Simulated disk per node: a cached image that reads see at once and a
 * durable image that survives crashes. Writes dirty sectors of
 * `sector_size` bytes; sync copies dirty sectors to the durable image. On a
 * crash every dirty sector independently survives (unsynced_keep_ppm), is
 * corrupted (unsynced_corrupt_ppm) or is lost, so multi-sector writes can be
 * torn; a size change survives with unsynced_keep_ppm + unsynced_corrupt_ppm. */
#include "internal.h"

void sim__disk_free(disk_t *d) {
  free(d->cache);
  free(d->durable);
  free(d->dirty);
  free(d->isdirty);
  memset(d, 0, sizeof *d);
}

/* Grow both images to hold `need` bytes; returns 0 or -ENOSPC. */
static int disk_reserve(sim_world *w, disk_t *d, uint64_t need) {
  if (need > w->cfg.budgets.max_disk_bytes)
    return -ENOSPC;
  if (need <= d->cap)
    return 0;
  uint64_t ss = d->p.sector_size;
  uint64_t cap = d->cap ? d->cap : 4096;
  while (cap < need)
    cap *= 2;
  if (cap > w->cfg.budgets.max_disk_bytes)
    cap = w->cfg.budgets.max_disk_bytes;
  cap = (cap + ss - 1) / ss * ss;
  uint8_t *c = realloc(d->cache, cap);
  if (!c)
    return -ENOSPC;
  d->cache = c;
  uint8_t *u = realloc(d->durable, cap);
  if (!u)
    return -ENOSPC;
  d->durable = u;
  uint8_t *f = realloc(d->isdirty, cap / ss);
  if (!f)
    return -ENOSPC;
  d->isdirty = f;
  memset(c + d->cap, 0, cap - d->cap);
  memset(u + d->cap, 0, cap - d->cap);
  memset(f + d->cap / ss, 0, (cap - d->cap) / ss);
  d->cap = cap;
  return 0;
}

static int mark_dirty(disk_t *d, uint32_t s) {
  SIM_ASSERT((uint64_t)s * d->p.sector_size < d->cap);
  if (d->isdirty[s])
    return 0;
  if (d->ndirty == d->dirtycap) {
    uint32_t cap = d->dirtycap ? d->dirtycap * 2 : 16;
    uint32_t *p = realloc(d->dirty, (size_t)cap * sizeof *p);
    if (!p)
      return -ENOSPC;
    d->dirty = p;
    d->dirtycap = cap;
  }
  d->isdirty[s] = 1;
  d->dirty[d->ndirty++] = s;
  return 0;
}

/* Injected error for the next `op`? Countdown faults first, then the rate. */
static int inject(sim_world *w, int node, sim_disk_op op) {
  disk_t *d = &w->node[node].disk;
  uint64_t n = d->ops[op]++;
  int fail = 0;
  if (d->fail_nth[op]) {
    if (--d->fail_nth[op] == 0)
      fail = 1;
  }
  uint32_t ppm = op == SIM_DISK_READ    ? d->p.read_eio_ppm
                 : op == SIM_DISK_WRITE ? d->p.write_eio_ppm
                                        : d->p.sync_eio_ppm;
  if (!fail && sim_chance(w, sim__sid(P_DISKEIO, (uint32_t)node, op), n, ppm))
    fail = 1;
  if (fail) {
    w->stats.disk_eio++;
    sim__trace(w, SIM_EV_DISK_EIO, op, node, -1, n, 0, 0, NULL, 0);
  }
  return fail;
}

#define CHECK_DISK_NODE(w, node)                                                                   \
  do {                                                                                             \
    if ((node) < 0 || (node) >= (w)->n)                                                            \
      return -EINVAL;                                                                              \
  } while (0)

int64_t sim_disk_write(sim_world *w, int node, uint64_t off, const void *buf, size_t len) {
  CHECK_DISK_NODE(w, node);
  if (!buf && len)
    return -EINVAL;
  disk_t *d = &w->node[node].disk;
  if (off > UINT32_MAX || len > UINT32_MAX || off + len > w->cfg.budgets.max_disk_bytes)
    return -ENOSPC;
  if (inject(w, node, SIM_DISK_WRITE))
    return -EIO;
  if (disk_reserve(w, d, off + len) < 0)
    return -ENOSPC;
  if (len == 0)
    return 0;
  uint32_t ss = d->p.sector_size;
  for (uint64_t s = off / ss; s <= (off + len - 1) / ss; s++)
    if (mark_dirty(d, (uint32_t)s) < 0)
      return -ENOSPC;
  memcpy(d->cache + off, buf, len);
  if (off + len > d->size)
    d->size = off + len;
  w->stats.disk_writes++;
  sim__trace(w, SIM_EV_DISK_WRITE, 0, node, -1, off, len, 0, buf, len);
  return (int64_t)len;
}

int64_t sim_disk_read(sim_world *w, int node, uint64_t off, void *buf, size_t len) {
  CHECK_DISK_NODE(w, node);
  if (!buf && len)
    return -EINVAL;
  disk_t *d = &w->node[node].disk;
  if (inject(w, node, SIM_DISK_READ))
    return -EIO;
  if (off >= d->size)
    return 0;
  if (len > d->size - off)
    len = (size_t)(d->size - off);
  memcpy(buf, d->cache + off, len);
  return (int64_t)len;
}

/* Decide the fate of every dirty sector (crash or failed sync). With
 * `reload`, the cache becomes the durable image (crash); otherwise the
 * cache keeps the new data the durable image may now lack (fsync EIO). */
static void decide_dirty(sim_world *w, int node, int reload) {
  disk_t *d = &w->node[node].disk;
  uint32_t ss = d->p.sector_size;
  uint64_t sid = sim__sid(P_DISK, (uint32_t)node, 0);
  uint64_t base = (uint64_t)d->decided++ << 32;
  uint64_t lost = 0, bad = 0;
  for (uint32_t i = 0; i < d->ndirty; i++) {
    uint32_t s = d->dirty[i];
    SIM_ASSERT(d->isdirty[s] && (uint64_t)(s + 1) * ss <= d->cap); /* each dirty sector once */
    uint64_t v = sim_draw(w, sid, base + i);
    uint64_t u = ((v >> 32) * SIM_PPM) >> 32;
    uint8_t *dst = d->durable + (uint64_t)s * ss;
    if (u < d->p.unsynced_keep_ppm) {
      memcpy(dst, d->cache + (uint64_t)s * ss, ss);
    } else if (u < (uint64_t)d->p.unsynced_keep_ppm + d->p.unsynced_corrupt_ppm) {
      memcpy(dst, d->cache + (uint64_t)s * ss, ss);
      dst[(v & 0xffffffffu) % ss] ^= (uint8_t)(1u << (v >> 29 & 7)) | 1u;
      bad++;
    } else {
      lost++;
    }
    d->isdirty[s] = 0;
  }
  /* the size change was written if the data was (kept or corrupted) */
  uint64_t written = (uint64_t)d->p.unsynced_keep_ppm + d->p.unsynced_corrupt_ppm;
  if (d->size != d->dsize && sim_chance(w, sim__sid(P_DISK, (uint32_t)node, 1), d->decided,
                                        (uint32_t)(written > SIM_PPM ? SIM_PPM : written)))
    d->dsize = d->size;
  d->ndirty = 0;
  if (reload) {
    /* bytes beyond max(size, dsize) are zero in both images: copy the rest */
    uint64_t used = d->size > d->dsize ? d->size : d->dsize;
    used = (used + ss - 1) / ss * ss;
    if (used > d->cap)
      used = d->cap;
    if (used)
      memcpy(d->cache, d->durable, used);
    d->size = d->dsize;
  }
  w->stats.sectors_lost += lost;
  w->stats.sectors_corrupted += bad;
  if (lost || bad)
    sim__trace(w, SIM_EV_DISK_LOST, 0, node, -1, lost, bad, 0, NULL, 0);
}

int sim_disk_sync(sim_world *w, int node) {
  CHECK_DISK_NODE(w, node);
  disk_t *d = &w->node[node].disk;
  if (inject(w, node, SIM_DISK_SYNC)) {
    decide_dirty(w, node, 0);
    return -EIO;
  }
  uint32_t ss = d->p.sector_size;
  uint64_t n = d->ndirty;
  for (uint32_t i = 0; i < d->ndirty; i++) {
    uint32_t s = d->dirty[i];
    memcpy(d->durable + (uint64_t)s * ss, d->cache + (uint64_t)s * ss, ss);
    d->isdirty[s] = 0;
  }
  d->ndirty = 0;
  d->dsize = d->size;
  w->stats.disk_syncs++;
  sim__trace(w, SIM_EV_DISK_SYNC, 0, node, -1, 0, n, 0, NULL, 0);
  return 0;
}

uint64_t sim_disk_size(const sim_world *w, int node) {
  return node >= 0 && node < w->n ? w->node[node].disk.size : 0;
}

int sim_disk_truncate(sim_world *w, int node, uint64_t size) {
  CHECK_DISK_NODE(w, node);
  disk_t *d = &w->node[node].disk;
  if (disk_reserve(w, d, size) < 0)
    return -ENOSPC;
  if (size < d->size) {
    /* zero the cut tail so a later extension reads zeros */
    uint32_t ss = d->p.sector_size;
    for (uint64_t s = size / ss; s * ss < d->size; s++)
      if (mark_dirty(d, (uint32_t)s) < 0)
        return -ENOSPC;
    memset(d->cache + size, 0, d->size - size);
  }
  d->size = size;
  sim__trace(w, SIM_EV_DISK_TRUNCATE, 0, node, -1, size, 0, 0, NULL, 0);
  return 0;
}

int sim_disk_set_params(sim_world *w, int node, const sim_disk_params *p) {
  CHECK_DISK_NODE(w, node);
  if (!p)
    return -EINVAL;
  disk_t *d = &w->node[node].disk;
  uint32_t ss = d->p.sector_size;
  d->p = *p;
  d->p.sector_size = ss; /* the geometry is fixed for the world */
  return 0;
}

uint32_t sim_disk_sector_size(const sim_world *w, int node) {
  (void)node; /* the geometry is the world's */
  return w->cfg.disk.sector_size;
}

int sim_disk_fail_nth(sim_world *w, int node, sim_disk_op op, uint32_t nth) {
  CHECK_DISK_NODE(w, node);
  if ((unsigned)op > SIM_DISK_SYNC)
    return -EINVAL;
  w->node[node].disk.fail_nth[op] = nth;
  return 0;
}

void sim__disk_crash(sim_world *w, int node) {
  decide_dirty(w, node, 1);
}
