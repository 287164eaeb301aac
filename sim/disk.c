/* Simulated disk per node: a cached image that reads see at once and a
 * durable image that survives crashes. Writes dirty sectors of
 * `sector_size` bytes; sync copies dirty sectors to the durable image. On a
 * crash every dirty sector independently survives (unsynced_keep_ppm), is
 * corrupted (unsynced_corrupt_ppm) or is lost, so multi-sector writes can be
 * torn; a size change survives with unsynced_keep_ppm + unsynced_corrupt_ppm. */
#include "internal.h"

/* Both images are sparse: a table of pages of whole sectors per image, a
 * page allocated (zeroed) when a write or a dirty mark first touches it.
 * A missing page reads as zeros, so a record written far out (a second
 * metadata slot after the log, say) costs one page, not the gap before it. */

void sim__disk_free(disk_t *d) {
  SIM_ASSERT(d->ndirty <= d->dirtycap); /* the dirty list within its array */
  for (uint32_t i = 0; i < d->npages; i++) {
    if (d->cpage[i]) /* most are missing: skip the calls */
      free(d->cpage[i]);
    if (d->dpage[i])
      free(d->dpage[i]);
  }
  free(d->cpage);
  free(d->dpage);
  free(d->dirty);
  free(d->isdirty);
  memset(d, 0, sizeof *d);
}

/* Bytes per page: whole sectors, about 4 KiB. */
static uint32_t page_bytes(const disk_t *d) {
  uint32_t ss = d->p.sector_size;
  SIM_ASSERT(ss > 0); /* sim_world_create keeps a valid sector size */
  return ss >= 4096 ? ss : 4096 / ss * ss;
}

/* Grow the page tables and the dirty flags to cover `need` bytes; returns
 * 0 or -ENOSPC (past the disk budget; or the host is out of memory, which
 * also stops the run: sim__out_of_memory). */
static int disk_reserve(sim_world *w, disk_t *d, uint64_t need) {
  if (need > w->cfg.budgets.max_disk_bytes)
    return -ENOSPC;
  uint64_t pb = page_bytes(d);
  uint64_t want = (need + pb - 1) / pb;
  if (want <= d->npages)
    return 0;
  uint64_t n = d->npages ? d->npages : 4;
  while (n < want)
    n *= 2;
  uint64_t most = ((uint64_t)w->cfg.budgets.max_disk_bytes + pb - 1) / pb;
  if (n > most)
    n = most;
  uint64_t per = pb / d->p.sector_size;
  uint8_t **c = realloc(d->cpage, (size_t)n * sizeof *c);
  if (!c)
    return sim__out_of_memory(w), -ENOSPC;
  d->cpage = c;
  uint8_t **u = realloc(d->dpage, (size_t)n * sizeof *u);
  if (!u)
    return sim__out_of_memory(w), -ENOSPC;
  d->dpage = u;
  uint8_t *f = realloc(d->isdirty, (size_t)(n * per));
  if (!f)
    return sim__out_of_memory(w), -ENOSPC;
  d->isdirty = f;
  memset(c + d->npages, 0, (size_t)(n - d->npages) * sizeof *c);
  memset(u + d->npages, 0, (size_t)(n - d->npages) * sizeof *u);
  memset(f + d->npages * per, 0, (size_t)((n - d->npages) * per));
  d->npages = (uint32_t)n;
  SIM_ASSERT((uint64_t)d->npages * pb >= need); /* need is within the disk budget */
  return 0;
}

/* Page pi of both images, allocated if missing: 0, or -ENOSPC when the
 * host is out of memory (the run stops: sim__out_of_memory). */
static int page_pair(sim_world *w, disk_t *d, uint64_t pi) {
  SIM_ASSERT(pi < d->npages);
  size_t pb = page_bytes(d);
  if ((!d->cpage[pi] && !(d->cpage[pi] = calloc(1, pb))) ||
      (!d->dpage[pi] && !(d->dpage[pi] = calloc(1, pb))))
    return sim__out_of_memory(w), -ENOSPC;
  return 0;
}

/* The cached image's bytes [off, off + len), page by page: src is copied
 * into them (their pages exist: the sectors were marked dirty first), or
 * they are copied to dst (a missing page reads as zeros), or, with
 * neither, zeroed (a missing page is zeros already). */
static void cache_span(disk_t *d, uint64_t off, size_t len, const uint8_t *src, uint8_t *dst) {
  uint64_t pb = page_bytes(d);
  while (len) {
    uint64_t pi = off / pb, in = off % pb;
    size_t k = (size_t)(pb - in < len ? pb - in : len);
    SIM_ASSERT(pi < d->npages && (d->cpage[pi] || !src));
    uint8_t *page = d->cpage[pi];
    if (src) {
      memcpy(page + in, src, k);
      src += k;
    } else if (dst) {
      if (page)
        memcpy(dst, page + in, k);
      else
        memset(dst, 0, k);
      dst += k;
    } else if (page) {
      memset(page + in, 0, k);
    }
    off += k;
    len -= k;
  }
}

/* Sector s of an image (its page exists: the sector is or was dirty). */
static uint8_t *sector(const disk_t *d, uint8_t **tab, uint32_t s) {
  uint64_t at = (uint64_t)s * d->p.sector_size, pb = page_bytes(d);
  SIM_ASSERT(at / pb < d->npages && tab[at / pb]);
  return tab[at / pb] + at % pb;
}

static int mark_dirty(sim_world *w, disk_t *d, uint32_t s) {
  uint64_t per = page_bytes(d) / d->p.sector_size;
  SIM_ASSERT(s / per < d->npages);
  if (d->isdirty[s])
    return 0;
  if (page_pair(w, d, s / per) < 0)
    return -ENOSPC;
  if (d->ndirty == d->dirtycap) {
    uint32_t cap = d->dirtycap ? d->dirtycap * 2 : 16;
    uint32_t *p = realloc(d->dirty, (size_t)cap * sizeof *p);
    if (!p)
      return sim__out_of_memory(w), -ENOSPC;
    d->dirty = p;
    d->dirtycap = cap;
  }
  d->isdirty[s] = 1;
  d->dirty[d->ndirty++] = s;
  SIM_ASSERT(d->ndirty <= d->dirtycap); /* the list holds each marked sector once */
  return 0;
}

/* Injected error for the next `op`? Countdown faults first, then the rate. */
static int inject(sim_world *w, int node, sim_disk_op op) {
  SIM_ASSERT(op == SIM_DISK_READ || op == SIM_DISK_WRITE || op == SIM_DISK_SYNC);
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
  if (!fail && sim__chance(w, sim__sid(P_DISKEIO, (uint32_t)node, op), n, ppm))
    fail = 1;
  if (fail) {
    w->stats.disk_eio++;
    sim__trace(w, SIM_EV_DISK_EIO, op, node, -1, n, 0, 0, NULL, 0);
  }
  return fail;
}

int64_t sim_disk_write(sim_world *w, int node, uint64_t off, const void *buf, size_t len) {
  SIM__CHECK_NODE(w, node);
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
    if (mark_dirty(w, d, (uint32_t)s) < 0)
      return -ENOSPC;
  cache_span(d, off, len, buf, NULL);
  if (off + len > d->size)
    d->size = off + len;
  SIM_ASSERT(d->size >= off + len && d->ndirty > 0); /* the written span is dirty until synced */
  w->stats.disk_writes++;
  sim__trace(w, SIM_EV_DISK_WRITE, 0, node, -1, off, len, 0, buf, len);
  return (int64_t)len;
}

int64_t sim_disk_read(sim_world *w, int node, uint64_t off, void *buf, size_t len) {
  SIM__CHECK_NODE(w, node);
  if (!buf && len)
    return -EINVAL;
  disk_t *d = &w->node[node].disk;
  if (inject(w, node, SIM_DISK_READ))
    return -EIO;
  if (off >= d->size)
    return 0;
  if (len > d->size - off)
    len = (size_t)(d->size - off);
  SIM_ASSERT(off + len <= d->size); /* never past what was written */
  cache_span(d, off, len, NULL, buf);
  return (int64_t)len;
}

int64_t sim_disk_peek(const sim_world *w, int node, uint64_t off, void *buf, size_t len) {
  if (node < 0 || node >= w->n || (!buf && len))
    return -EINVAL;
  const disk_t *d = &w->node[node].disk;
  if (off >= d->size)
    return 0;
  if (len > d->size - off)
    len = (size_t)(d->size - off);
  cache_span((disk_t *)d, off, len, NULL, buf); /* (reads only, when given no source) */
  return (int64_t)len;
}

/* Decide the fate of every dirty sector (crash or failed sync). With
 * `reload`, the cache becomes the durable image (crash); otherwise the
 * cache keeps the new data the durable image may now lack (fsync EIO). */
static void decide_dirty_in(sim_world *w, int node, int reload, uint64_t lo, uint64_t hi);

static void decide_dirty(sim_world *w, int node, int reload) {
  decide_dirty_in(w, node, reload, 0, UINT64_MAX);
}

/* Decide the fate of the dirty sectors lo..hi-1 (kept, corrupted or lost),
 * as a crash or a failed sync does; the others stay dirty. */
static void decide_dirty_in(sim_world *w, int node, int reload, uint64_t lo, uint64_t hi) {
  disk_t *d = &w->node[node].disk;
  uint32_t ss = d->p.sector_size;
  uint64_t sid = sim__sid(P_DISK, (uint32_t)node, 0);
  uint64_t base = (uint64_t)d->decided++ << 32;
  uint64_t lost = 0, bad = 0;
  uint32_t left = 0; /* the dirty sectors outside the range, kept in order */
  SIM_ASSERT(!reload || (lo == 0 && hi == UINT64_MAX)); /* a crash decides every one */
  for (uint32_t i = 0; i < d->ndirty; i++) {
    uint32_t s = d->dirty[i];
    SIM_ASSERT(d->isdirty[s]); /* each dirty sector once */
    if (s < lo || s >= hi) {
      d->dirty[left++] = s;
      continue;
    }
    uint64_t v = sim__draw(w, sid, base + i);
    uint64_t u = ((v >> 32) * SIM_PPM) >> 32;
    uint8_t *dst = sector(d, d->dpage, s);
    if (u < d->p.unsynced_keep_ppm) {
      memcpy(dst, sector(d, d->cpage, s), ss);
    } else if (u < (uint64_t)d->p.unsynced_keep_ppm + d->p.unsynced_corrupt_ppm) {
      memcpy(dst, sector(d, d->cpage, s), ss);
      dst[(v & 0xffffffffu) % ss] ^= (uint8_t)(1u << (v >> 29 & 7)) | 1u;
      bad++;
    } else {
      lost++;
    }
    d->isdirty[s] = 0;
  }
  /* the size change was written if the data was (kept or corrupted) */
  uint64_t written = (uint64_t)d->p.unsynced_keep_ppm + d->p.unsynced_corrupt_ppm;
  if (lo != 0 || hi != UINT64_MAX) { /* a failed sync of a range: the rest and the size wait */
    d->ndirty = left;
    w->stats.sectors_lost += lost;
    w->stats.sectors_corrupted += bad;
    if (lost || bad)
      sim__trace(w, SIM_EV_DISK_LOST, 0, node, -1, lost, bad, 0, NULL, 0);
    return;
  }
  if (d->size != d->dsize && sim__chance(w, sim__sid(P_DISK, (uint32_t)node, 1), d->decided,
                                         (uint32_t)(written > SIM_PPM ? SIM_PPM : written)))
    d->dsize = d->size;
  d->ndirty = 0;
  if (reload) {
    /* bytes beyond max(size, dsize) are zero in both images: copy the rest */
    uint64_t used = d->size > d->dsize ? d->size : d->dsize;
    used = (used + ss - 1) / ss * ss;
    uint64_t pb = page_bytes(d);
    for (uint64_t pi = 0; pi < d->npages && pi * pb < used; pi++) {
      size_t k = (size_t)(used - pi * pb < pb ? used - pi * pb : pb);
      if (d->dpage[pi] && d->cpage[pi])
        memcpy(d->cpage[pi], d->dpage[pi], k);
      else if (d->cpage[pi])
        memset(d->cpage[pi], 0, k);
      else
        SIM_ASSERT(!d->dpage[pi]); /* pages come in pairs */
    }
    d->size = d->dsize;
  }
  SIM_ASSERT(d->ndirty == 0 && (!reload || d->size == d->dsize));
  w->stats.sectors_lost += lost;
  w->stats.sectors_corrupted += bad;
  if (lost || bad)
    sim__trace(w, SIM_EV_DISK_LOST, 0, node, -1, lost, bad, 0, NULL, 0);
}

int sim_disk_sync(sim_world *w, int node) {
  return sim_disk_sync_range(w, node, 0, UINT64_MAX); /* the whole disk, its size too */
}

int sim_disk_sync_range(sim_world *w, int node, uint64_t off, uint64_t len) {
  SIM__CHECK_NODE(w, node);
  disk_t *d = &w->node[node].disk;
  uint32_t ss = d->p.sector_size;
  int whole = off == 0 && len == UINT64_MAX; /* sim_disk_sync */
  uint64_t end = len > UINT64_MAX - off ? UINT64_MAX : off + len;
  uint64_t lo = off / ss, hi = whole ? UINT64_MAX : end / ss + (end % ss != 0);
  if (inject(w, node, SIM_DISK_SYNC)) {
    decide_dirty_in(w, node, 0, lo, hi);
    return -EIO;
  }
  uint64_t n = 0;
  uint32_t left = 0;
  for (uint32_t i = 0; i < d->ndirty; i++) {
    uint32_t s = d->dirty[i];
    SIM_ASSERT(d->isdirty[s]); /* mark_dirty's pair: listed once, marked */
    if (s < lo || s >= hi) {
      d->dirty[left++] = s;
      continue;
    }
    memcpy(sector(d, d->dpage, s), sector(d, d->cpage, s), ss);
    d->isdirty[s] = 0;
    n++;
  }
  d->ndirty = left;
  /* a disk that grew is durable up to the range's end (a shrink waits for
   * a whole sync) */
  if (whole)
    d->dsize = d->size;
  else if (d->size > d->dsize && end > d->dsize)
    d->dsize = end < d->size ? end : d->size;
  w->stats.disk_syncs++;
  sim__trace(w, SIM_EV_DISK_SYNC, 0, node, -1, off, n, 0, NULL, 0);
  return 0;
}

uint64_t sim_disk_size(const sim_world *w, int node) {
  if (node < 0 || node >= w->n)
    return 0;
  const disk_t *d = &w->node[node].disk;
  /* disk_reserve's pair: every byte of the size has its page */
  SIM_ASSERT(d->size == 0 || (uint64_t)d->npages * page_bytes(d) >= d->size);
  return d->size;
}

int sim_disk_truncate(sim_world *w, int node, uint64_t size) {
  SIM__CHECK_NODE(w, node);
  disk_t *d = &w->node[node].disk;
  if (disk_reserve(w, d, size) < 0)
    return -ENOSPC;
  if (size < d->size) {
    /* zero the cut tail so a later extension reads zeros */
    uint32_t ss = d->p.sector_size;
    for (uint64_t s = size / ss; s * ss < d->size; s++)
      if (mark_dirty(w, d, (uint32_t)s) < 0)
        return -ENOSPC;
    cache_span(d, size, (size_t)(d->size - size), NULL, NULL);
  }
  d->size = size;
  SIM_ASSERT((uint64_t)d->npages * page_bytes(d) >= size || size == 0);
  sim__trace(w, SIM_EV_DISK_TRUNCATE, 0, node, -1, size, 0, 0, NULL, 0);
  return 0;
}

int sim_disk_set_params(sim_world *w, int node, const sim_disk_params *p) {
  SIM__CHECK_NODE(w, node);
  if (!p)
    return -EINVAL;
  disk_t *d = &w->node[node].disk;
  uint32_t ss = d->p.sector_size;
  d->p = *p;
  d->p.sector_size = ss; /* the geometry is fixed for the world */
  SIM_ASSERT(d->p.sector_size == w->cfg.disk.sector_size);
  return 0;
}

uint32_t sim_disk_sector_size(const sim_world *w, int node) {
  /* the geometry is the world's (sim_disk_set_params keeps it) */
  SIM_ASSERT(node < 0 || node >= w->n ||
             w->node[node].disk.p.sector_size == w->cfg.disk.sector_size);
  return w->cfg.disk.sector_size;
}

int sim_disk_fail_nth(sim_world *w, int node, sim_disk_op op, uint32_t nth) {
  SIM__CHECK_NODE(w, node);
  if ((unsigned)op > SIM_DISK_SYNC)
    return -EINVAL;
  _Static_assert(SIM_DISK_SYNC + 1 == sizeof((disk_t *)0)->fail_nth / sizeof(uint32_t),
                 "a fail_nth slot per disk operation");
  w->node[node].disk.fail_nth[op] = nth;
  return 0;
}

int sim_disk_stall(sim_world *w, int node, uint64_t ns) {
  SIM__CHECK_NODE(w, node);
  disk_t *d = &w->node[node].disk;
  if (!ns) {
    d->stall_end = 0;
    return 0;
  }
  uint64_t end = ns > UINT64_MAX - w->now ? UINT64_MAX : w->now + ns; /* saturates */
  if (end > d->stall_end)
    d->stall_end = end;
  SIM_ASSERT(d->stall_end > w->now);
  return 0;
}

uint64_t sim_disk_stall_left(const sim_world *w, int node) {
  if (!w || node < 0 || node >= w->n)
    return 0;
  const disk_t *d = &w->node[node].disk;
  return d->stall_end > w->now ? d->stall_end - w->now : 0;
}

void sim__disk_crash(sim_world *w, int node) {
  SIM_ASSERT(node >= 0 && node < w->n && !w->node[node].up); /* after the crash's teardown */
  decide_dirty(w, node, 1);
}
