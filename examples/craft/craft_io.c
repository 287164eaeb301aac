/* craft_io: canonical/raft's struct raft_io on the simfuzz simulator (see
 * craft_io.h for the model of network, disk, time and randomness). */
#include "craft_io.h"

#include "craft_compat.h"

#include <simfuzz/simfuzz_record.h>
#include <simfuzz/simfuzz_wire.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  MSG_MAGIC = 0xc7,
  META_LEN = 24,
  ENTRY_HEAD = 30,
  MAX_WIRE_ENTRIES = 4096,
  MAX_CONF = 64,   /* servers in a configuration we store or send */
  SNAP_HEAD = 60,  /* seq, index, term, conf_index, log_start, start_prev, trailing, length */
  SNAP_MAX = 2048, /* largest snapshot record: head, configuration and data */
  SNAP_SEQ = 0,    /* offsets in a snapshot record */
  SNAP_LOG_START = 32,
  SNAP_START_PREV = 40,
  SNAP_TRAILING = 48
};

/* A request whose callback runs later. */
typedef struct req {
  struct req *next;
  int64_t due; /* disk requests: monotonic time of completion */
  /* appends: where the entries went, and the failed syncs before they were
   * written (any failed sync after that may have dropped them) */
  raft_index first;
  raft_term prev_term;
  uint64_t sync_epoch;
  struct raft_io_append *append;
  raft_io_append_cb append_cb;
  struct raft_io_send *send;
  raft_io_send_cb send_cb;
  /* snapshots: the record to store (its head's seq and log start are
   * filled when it is written), or a read */
  uint8_t *snap_rec;
  uint32_t snap_len;
  int install;       /* trailing 0: the snapshot replaces the log */
  unsigned trailing; /* else the entries to keep before it */
  struct raft_io_snapshot_put *put;
  raft_io_snapshot_put_cb put_cb;
  struct raft_io_snapshot_get *get;
  raft_io_snapshot_get_cb get_cb;
  int status;
} req;

typedef struct {
  req *head, *tail;
  sim_timer timer; /* armed for the head, or 0 */
} queue;

typedef struct {
  sim_world *w;
  int node;
  sf_records meta, log;
  uint64_t meta_seq;
  /* snapshots (craft_io_init's `snapshots`): two records between the
   * metadata and the log; the log on disk starts at log_start, whose
   * record links to start_prev (an installed snapshot's term) */
  int snapshots;
  sf_records snap;
  uint64_t snap_seq;
  raft_index log_start;
  raft_term start_prev;
  /* the snapshot the last snapshot_get returned: raft's v0 layer sends
   * it at once, from that get's callback (install_snapshot_term) */
  raft_index got_index;
  raft_term got_term;
  raft_term term;
  raft_id vote;
  int disk_unreadable;   /* init could not read the disk: refuse to bootstrap */
  raft_index next_index; /* index of the next appended entry */
  raft_term last_term;   /* term of entry next_index - 1 (0: none) */
  unsigned tick_ms;
  raft_io_tick_cb tick;
  raft_io_recv_cb recv;
  sim_timer tick_timer;
  int started, closed;
  craft_disk_errors mode;
  int dead;               /* fail-stop: a disk error happened; the node crashes at once */
  uint64_t sync_failures; /* failed syncs so far (each decided the dirty sectors) */
  queue disk, net;
  craft_io_stats stats;
} impl;

static const char *const addresses[SIM_MAX_NODES] = {
    "n0",  "n1",  "n2",  "n3",  "n4",  "n5",  "n6",  "n7",  "n8",  "n9",  "n10", "n11", "n12",
    "n13", "n14", "n15", "n16", "n17", "n18", "n19", "n20", "n21", "n22", "n23", "n24", "n25",
    "n26", "n27", "n28", "n29", "n30", "n31", "n32", "n33", "n34", "n35", "n36", "n37", "n38",
    "n39", "n40", "n41", "n42", "n43", "n44", "n45", "n46", "n47", "n48", "n49", "n50", "n51",
    "n52", "n53", "n54", "n55", "n56", "n57", "n58", "n59", "n60", "n61", "n62", "n63"};

const char *craft_address(int node) {
  return node >= 0 && node < SIM_MAX_NODES ? addresses[node] : "?";
}

int craft_node_of(raft_id id, int nodes) {
  return id >= 1 && id <= (raft_id)nodes ? (int)(id - 1) : -1;
}

static void crash_now(sim_world *w, void *arg) {
  sim_node_crash(w, (int)(uintptr_t)arg - 1);
}

void craft_crash_soon(sim_world *w, int node) {
  sim_at(w, sim_now(w), crash_now, (void *)(uintptr_t)(node + 1));
}

/* A disk error. Under CRAFT_FAIL_STOP the node is dead from now on and
 * crashes before its next event; returns the error to give raft otherwise. */
static int disk_error(impl *s) {
  if (s->mode == CRAFT_RETURN_ERRORS)
    return RAFT_IOERR;
  if (!s->dead) {
    s->dead = 1;
    craft_crash_soon(s->w, s->node);
  }
  return 0;
}

/* ---- disk ---------------------------------------------------------------- */

/* Make the written-back cache durable. A failed sync decides every dirty
 * sector as a crash would (sim.h, sync_eio_ppm): whatever was written and
 * not yet synced may be gone, also for the appends still waiting for their
 * own sync, which complete() then fails (their sync_epoch is older). */
static int disk_sync(impl *s) {
  if (sim_disk_sync(s->w, s->node) == 0)
    return 0;
  s->sync_failures++;
  return -1;
}

static int meta_write(impl *s, raft_term term, raft_id vote) {
  if (s->dead)
    return 0; /* fail-stop: nothing more reaches the disk or the network */
  uint8_t b[META_LEN];
  sf_put64(b, s->meta_seq + 1);
  sf_put64(b + 8, term);
  sf_put64(b + 16, vote);
  int rv = sf_record_write(&s->meta, s->w, s->node, (s->meta_seq + 1) % 2, b, sizeof b, 0);
  if (rv != 0 || disk_sync(s) != 0)
    return disk_error(s);
  s->meta_seq++;
  s->term = term;
  s->vote = vote;
  return 0;
}

/* The entry record of log index `index` (slot index - 1). Each record also
 * holds the term of the entry before it (prev): a crash may keep any subset
 * of unsynced writes, old records next to new ones, and only a chain whose
 * links match is a log that was ever written (loading stops at the first
 * broken link). */
static int entry_write(impl *s, raft_index index, raft_term prev, const struct raft_entry *e) {
  if (e->buf.len > CRAFT_MAX_ENTRY)
    return RAFT_TOOBIG;
  uint8_t b[ENTRY_HEAD + CRAFT_MAX_ENTRY];
  sf_enc enc;
  sf_enc_init(&enc, b, sizeof b);
  sf_enc_u64(&enc, index);
  sf_enc_u64(&enc, e->term);
  sf_enc_u64(&enc, prev);
  sf_enc_u16(&enc, e->type);
  sf_enc_u32(&enc, (uint32_t)e->buf.len);
  sf_enc_bytes(&enc, e->buf.base, e->buf.len);
  size_t n = sf_enc_len(&enc);
  if (!n || sf_record_write(&s->log, s->w, s->node, index - 1, b, (uint32_t)n, 0) != 0)
    return RAFT_IOERR;
  return 0;
}

/* Read the entry record of `index`: 1 and *e and *prev filled (buf points
 * into b), 0 if there is none, -1 on a read error. */
static int entry_read(impl *s, raft_index index, uint8_t *b, struct raft_entry *e,
                      raft_term *prev) {
  int64_t r = sf_record_read(&s->log, s->w, s->node, index - 1, b, ENTRY_HEAD + CRAFT_MAX_ENTRY);
  if (r < 0)
    return -1;
  sf_dec d;
  sf_dec_init(&d, b, (size_t)r);
  uint64_t idx = sf_dec_u64(&d);
  e->term = sf_dec_u64(&d);
  *prev = sf_dec_u64(&d);
  e->type = sf_dec_u16(&d);
  uint32_t len = sf_dec_u32(&d);
  if (r == 0 || !sf_dec_ok(&d) || idx != index || len != sf_dec_left(&d) || e->term == 0)
    return 0;
  e->buf.base = b + ENTRY_HEAD;
  e->buf.len = len;
  e->batch = NULL;
  return 1;
}

/* Term and vote from the newer valid metadata record, and whether the log
 * has a first entry. -1 if the disk could not be read. */
static int read_state(impl *s) {
  uint64_t best = 0;
  for (uint64_t slot = 0; slot < 2; slot++) {
    uint8_t b[META_LEN];
    int64_t r = sf_record_read(&s->meta, s->w, s->node, slot, b, sizeof b);
    if (r < 0)
      return -1;
    if (r == META_LEN && sf_get64(b) > best) {
      best = sf_get64(b);
      s->term = sf_get64(b + 8);
      s->vote = sf_get64(b + 16);
    }
  }
  s->meta_seq = best;
  return 0;
}

/* ---- snapshots ------------------------------------------------------------ */

/* A configuration as (id, role) pairs; a server's address is its node's. */
static void conf_encode(sf_enc *e, const struct raft_configuration *c) {
  unsigned n = c->n < MAX_CONF ? c->n : MAX_CONF;
  sf_enc_u32(e, n);
  for (unsigned i = 0; i < n; i++) {
    sf_enc_u64(e, c->servers[i].id);
    sf_enc_u8(e, (uint8_t)c->servers[i].role);
  }
}

/* Into an initialised configuration; -1 if damaged or out of memory. */
static int conf_decode(sf_dec *d, struct raft_configuration *c) {
  uint32_t n = sf_dec_u32(d);
  if (!sf_dec_ok(d) || n > MAX_CONF)
    return -1;
  for (uint32_t i = 0; i < n; i++) {
    raft_id id = sf_dec_u64(d);
    int role = sf_dec_u8(d);
    if (!sf_dec_ok(d) || id == 0 || id > SIM_MAX_NODES ||
        raft_configuration_add(c, id, craft_address((int)id - 1), role) != 0)
      return -1;
  }
  return 0;
}

/* A snapshot's record (raft_malloc'd by nobody: malloc), its head's seq
 * and log start left for snap_store; NULL if it does not fit. */
static uint8_t *snap_encode(const struct raft_snapshot *sn, uint32_t *len) {
  size_t data = 0;
  for (unsigned i = 0; i < sn->n_bufs; i++)
    data += sn->bufs[i].len;
  uint8_t *b = malloc(SNAP_MAX);
  if (!b || data > SNAP_MAX) {
    free(b);
    return NULL;
  }
  sf_enc e;
  sf_enc_init(&e, b, SNAP_MAX);
  sf_enc_u64(&e, 0); /* SNAP_SEQ */
  sf_enc_u64(&e, sn->index);
  sf_enc_u64(&e, sn->term);
  sf_enc_u64(&e, sn->configuration_index);
  sf_enc_u64(&e, 0); /* SNAP_LOG_START */
  sf_enc_u64(&e, 0); /* SNAP_START_PREV */
  sf_enc_u64(&e, 0); /* SNAP_TRAILING */
  sf_enc_u32(&e, (uint32_t)data);
  for (unsigned i = 0; i < sn->n_bufs; i++)
    sf_enc_bytes(&e, sn->bufs[i].base, sn->bufs[i].len);
  conf_encode(&e, &sn->configuration);
  *len = (uint32_t)sf_enc_len(&e);
  if (!*len) {
    free(b);
    return NULL;
  }
  return b;
}

static void snap_free(struct raft_snapshot *sn) {
  if (!sn)
    return;
  raft_configuration_close(&sn->configuration);
  for (unsigned i = 0; i < sn->n_bufs; i++)
    raft_free(sn->bufs[i].base);
  raft_free(sn->bufs);
  raft_free(sn);
}

/* A snapshot from its record (raft's memory: raft frees it), with the log
 * start and the trailing entries it records; NULL if damaged or out of
 * memory. */
static struct raft_snapshot *snap_decode(const uint8_t *b, size_t len, raft_index *log_start,
                                         raft_term *start_prev, uint64_t *trailing) {
  sf_dec d;
  sf_dec_init(&d, b, len);
  sf_dec_u64(&d); /* SNAP_SEQ */
  struct raft_snapshot *sn = raft_calloc(1, sizeof *sn);
  struct raft_buffer *buf = raft_calloc(1, sizeof *buf);
  if (!sn || !buf) {
    raft_free(sn);
    raft_free(buf);
    return NULL;
  }
  raft_configuration_init(&sn->configuration);
  sn->bufs = buf;
  sn->n_bufs = 1;
  sn->index = sf_dec_u64(&d);
  sn->term = sf_dec_u64(&d);
  sn->configuration_index = sf_dec_u64(&d);
  *log_start = sf_dec_u64(&d);
  *start_prev = sf_dec_u64(&d);
  *trailing = sf_dec_u64(&d);
  uint32_t n = sf_dec_u32(&d);
  buf->base = n <= sf_dec_left(&d) ? raft_malloc(n ? n : 1) : NULL;
  buf->len = n;
  if (buf->base)
    sf_dec_bytes(&d, buf->base, n);
  if (!buf->base || conf_decode(&d, &sn->configuration) != 0 || !sf_dec_ok(&d) || sn->index == 0 ||
      *log_start == 0) {
    snap_free(sn); /* buf->base NULL or not: raft_free(NULL) is a no-op */
    return NULL;
  }
  return sn;
}

/* The newer valid snapshot record into b (its length), 0 if there is none,
 * -1 if the disk could not be read. Sets snap_seq. */
static int64_t snap_read(impl *s, uint8_t *b) {
  int64_t best_len = 0;
  uint64_t best = 0;
  uint8_t tmp[SNAP_MAX];
  for (uint64_t slot = 0; slot < 2; slot++) {
    int64_t r = sf_record_read(&s->snap, s->w, s->node, slot, tmp, sizeof tmp);
    if (r < 0)
      return -1;
    if (r >= SNAP_HEAD && sf_get64(tmp + SNAP_SEQ) > best) {
      best = sf_get64(tmp + SNAP_SEQ);
      memcpy(b, tmp, (size_t)r);
      best_len = r;
    }
  }
  s->snap_seq = best;
  return best_len;
}

/* Store r's snapshot (the disk requests before it have completed): write
 * and sync its record; an installed one (trailing 0) then replaces the log,
 * whose old records are erased. 0, or what disk_error() says. */
static int snap_store(impl *s, req *r) {
  if (s->dead)
    return 0;
  uint64_t seq = s->snap_seq + 1;
  raft_index index = sf_get64(r->snap_rec + 8);
  raft_term term = sf_get64(r->snap_rec + 16);
  sf_put64(r->snap_rec + SNAP_SEQ, seq);
  sf_put64(r->snap_rec + SNAP_LOG_START, r->install ? index + 1 : s->log_start);
  sf_put64(r->snap_rec + SNAP_START_PREV, r->install ? term : s->start_prev);
  sf_put64(r->snap_rec + SNAP_TRAILING, r->install ? 0 : r->trailing);
  if (sf_record_write(&s->snap, s->w, s->node, seq % 2, r->snap_rec, r->snap_len, 0) != 0 ||
      disk_sync(s) != 0)
    return disk_error(s);
  s->snap_seq = seq;
  s->stats.snapshots++;
  if (!r->install)
    return 0;
  s->stats.installs++;
  raft_index old_start = s->log_start, old_next = s->next_index;
  s->log_start = index + 1; /* the snapshot is durable: this is the log now */
  s->start_prev = term;
  s->next_index = index + 1;
  s->last_term = term;
  for (raft_index i = old_start; i < old_next && !s->dead; i++)
    if (sf_record_erase(&s->log, s->w, s->node, i - 1, 0) != 0)
      return disk_error(s);
  return s->dead || disk_sync(s) == 0 ? 0 : disk_error(s);
}

/* ---- request queues ------------------------------------------------------ */

static void arm(impl *s, queue *q, uint64_t tag) {
  if (q->timer || !q->head || s->closed)
    return;
  int64_t now = sim_clock_mono(s->w, s->node);
  uint64_t delay = q->head->due > now ? (uint64_t)(q->head->due - now) : 0;
  q->timer = sim_timer_start(s->w, s->node, delay, tag);
}

static void push(impl *s, queue *q, req *r, uint64_t tag) {
  r->next = NULL;
  if (q->tail)
    q->tail->next = r;
  else
    q->head = r;
  q->tail = r;
  arm(s, q, tag);
}

static req *pop(queue *q) {
  req *r = q->head;
  if (r) {
    q->head = r->next;
    if (!q->head)
      q->tail = NULL;
  }
  return r;
}

/* An append failed (returning errors to raft): as libuv's backend does, the
 * appends queued behind it fail with it (they continue its entries, and
 * were written before the failed sync), and the next entry goes where its
 * first one went. Raft truncates its own log at that index. */
static void append_failed(impl *s, queue *q, const req *r) {
  for (req *o = q->head; o; o = o->next)
    if (o->append && o->status == 0) {
      o->status = RAFT_IOERR;
      o->due = r->due; /* completes in this same pass, in order */
    }
  if (r->first < s->next_index) {
    s->next_index = r->first;
    s->last_term = r->prev_term;
  }
  SIM_ASSERT(s->next_index >= 1);
}

/* An append's entries reach the disk: its sync, which must not come after
 * a failed one that may have dropped them. */
static int append_done(impl *s, const req *r) {
  s->stats.syncs++;
  if (disk_sync(s) != 0) {
    s->stats.sync_errors++;
    return disk_error(s);
  }
  return r->sync_epoch != s->sync_failures ? RAFT_IOERR : 0;
}

/* The stored snapshot, for a snapshot_get. */
static int snap_get(impl *s, struct raft_snapshot **sn) {
  uint8_t b[SNAP_MAX];
  raft_index start;
  raft_term prev;
  uint64_t trailing;
  int64_t n = snap_read(s, b);
  if (n < 0)
    return disk_error(s) ? RAFT_IOERR : 0;
  *sn = n > 0 ? snap_decode(b, (size_t)n, &start, &prev, &trailing) : NULL;
  if (*sn) {
    s->got_index = (*sn)->index;
    s->got_term = (*sn)->term;
  }
  return *sn ? 0 : RAFT_NOTFOUND;
}

/* Complete every request that is due (all of them, with RAFT_CANCELED, when
 * the backend closes). A callback may submit new requests. */
static void complete(impl *s, queue *q, uint64_t tag, int cancel) {
  for (;;) {
    req *r = q->head;
    if (!r || (!cancel && r->due > sim_clock_mono(s->w, s->node)))
      break;
    pop(q);
    int status = cancel ? RAFT_CANCELED : r->status;
    int disk = r->append || r->put || r->get;
    struct raft_snapshot *sn = NULL;
    if (!cancel && status == 0) { /* the write-back cache reaches the disk */
      if (r->append)
        status = append_done(s, r);
      else if (r->put)
        status = snap_store(s, r); /* nothing once dead */
      else if (r->get && !s->dead)
        status = snap_get(s, &sn);
    }
    if (disk && s->dead && !cancel) { /* fail-stop: never acknowledged; the crash cancels it */
      r->next = q->head;
      q->head = r;
      if (!q->tail)
        q->tail = r;
      return;
    }
    if (r->append) {
      if (status != 0 && !cancel)
        append_failed(s, q, r);
      if (r->append_cb)
        r->append_cb(r->append, status);
    } else if (r->put) {
      SIM_ASSERT(!r->install || s->stats.installing > 0); /* counted at m_snapshot_put */
      s->stats.installing -= r->install != 0;
      if (r->put_cb)
        r->put_cb(r->put, status);
    } else if (r->get) {
      if (r->get_cb)
        r->get_cb(r->get, sn, status);
    } else if (r->send_cb) {
      r->send_cb(r->send, status);
    }
    free(r->snap_rec);
    free(r);
  }
  if (!cancel)
    arm(s, q, tag);
}

/* ---- raft_io methods ----------------------------------------------------- */

static int m_init(struct raft_io *io, raft_id id, const char *address) {
  (void)io;
  (void)id;
  (void)address;
  return 0;
}

static void m_close(struct raft_io *io, raft_io_close_cb cb) {
  impl *s = io->impl;
  s->closed = 1;
  if (s->tick_timer)
    sim_timer_cancel(s->w, s->tick_timer);
  if (s->disk.timer)
    sim_timer_cancel(s->w, s->disk.timer);
  if (s->net.timer)
    sim_timer_cancel(s->w, s->net.timer);
  s->tick_timer = s->disk.timer = s->net.timer = 0;
  complete(s, &s->disk, CRAFT_TAG_DISK, 1);
  complete(s, &s->net, CRAFT_TAG_NET, 1);
  if (cb)
    cb(io);
}

/* The log on disk from `start`, whose first record links to `prev`: the
 * records start, start + 1, ... up to the first missing or damaged one or
 * one of another version of the log (a broken link). Their count, payload
 * bytes and last term; -1 if the disk could not be read. */
static int log_scan(impl *s, raft_index start, raft_term prev, size_t *n, size_t *bytes,
                    raft_term *last) {
  uint8_t b[ENTRY_HEAD + CRAFT_MAX_ENTRY];
  struct raft_entry e;
  raft_term link;
  *n = *bytes = 0;
  *last = prev;
  for (;;) {
    int r = entry_read(s, start + *n, b, &e, &link);
    if (r < 0)
      return -1;
    if (r == 0 || link != *last)
      return 0;
    (*n)++;
    *bytes += e.buf.len;
    *last = e.term;
  }
}

/* The log's n entries from `start`, in one batch as raft expects. */
static int log_copy(impl *s, raft_index start, size_t n, size_t bytes, struct raft_entry **out) {
  *out = NULL;
  if (!n)
    return 0;
  struct raft_entry *arr = raft_calloc(n, sizeof *arr);
  uint8_t *batch = raft_malloc(bytes ? bytes : 1);
  if (!arr || !batch) {
    raft_free(arr);
    raft_free(batch);
    return RAFT_NOMEM;
  }
  uint8_t b[ENTRY_HEAD + CRAFT_MAX_ENTRY];
  struct raft_entry e;
  raft_term prev;
  size_t off = 0;
  for (size_t i = 0; i < n; i++) {
    if (entry_read(s, start + i, b, &e, &prev) != 1) { /* read it a moment ago */
      raft_free(arr);
      raft_free(batch);
      return RAFT_IOERR;
    }
    arr[i] = e;
    arr[i].buf.base = batch + off;
    memcpy(batch + off, e.buf.base, e.buf.len);
    arr[i].batch = batch;
    off += e.buf.len;
  }
  *out = arr;
  return 0;
}

/* The stored snapshot, if any, and where the log starts after it: where an
 * installed snapshot left it, or, after a snapshot that kept `trailing`
 * entries, at the first of those, as libuv's backend (which deletes the
 * older segments) would have it. Entries before that stay on disk,
 * covered by the snapshot, and are never loaded. */
static int load_snapshot(impl *s, struct raft_snapshot **sn) {
  *sn = NULL;
  s->log_start = 1;
  s->start_prev = 0;
  if (!s->snapshots)
    return 0;
  uint8_t b[SNAP_MAX];
  uint64_t trailing;
  int64_t k = snap_read(s, b);
  if (k < 0)
    return RAFT_IOERR;
  if (k > 0 && !(*sn = snap_decode(b, (size_t)k, &s->log_start, &s->start_prev, &trailing)))
    return RAFT_NOMEM;
  raft_index from = *sn && (*sn)->index > trailing ? (*sn)->index - trailing + 1 : 1;
  if (from > s->log_start) {
    uint8_t e[ENTRY_HEAD + CRAFT_MAX_ENTRY];
    struct raft_entry entry;
    raft_term link;
    int r = entry_read(s, from, e, &entry, &link);
    if (r < 0)
      return RAFT_IOERR;
    if (r > 0) { /* the log goes on from there, linked to what it had before */
      s->log_start = from;
      s->start_prev = link;
    }
  }
  return 0;
}

static int m_load(struct raft_io *io, raft_term *term, raft_id *voted_for,
                  struct raft_snapshot **snapshot, raft_index *start_index,
                  struct raft_entry *entries[], size_t *n_entries) {
  impl *s = io->impl;
  *snapshot = NULL;
  *start_index = 1;
  *entries = NULL;
  *n_entries = 0;
  struct raft_snapshot *sn;
  if (s->disk_unreadable || read_state(s) != 0)
    return RAFT_IOERR;
  int rv = load_snapshot(s, &sn);
  if (rv != 0)
    return rv;
  size_t n, bytes;
  raft_term last;
  raft_index start = s->log_start;
  rv = log_scan(s, start, s->start_prev, &n, &bytes, &last) != 0 ? RAFT_IOERR : 0;
  if (rv == 0 && sn && start + n <= sn->index) {
    /* the log ends before the snapshot (whose entries were never all
     * written here): the snapshot covers it; the log goes on after it */
    start = s->log_start = sn->index + 1;
    s->start_prev = sn->term;
    rv = log_scan(s, start, s->start_prev, &n, &bytes, &last) != 0 ? RAFT_IOERR : 0;
  }
  /* Bootstrap writes the first entry and then the term, and syncs both; a
   * crash (or a failed sync) can keep the entry alone. Term 0 means that
   * bootstrap never completed: no log (raft asserts as much at start). */
  if (s->term == 0) {
    n = bytes = 0;
    last = s->start_prev;
  }
  /* Stale records may lie beyond the end (an erase or a write before them
   * lost in a crash): erase them, or a later append could make them part of
   * the log again. */
  uint64_t slots = sim_disk_size(s->w, s->node);
  slots = slots > s->log.base ? (slots - s->log.base) / s->log.slot : 0;
  uint8_t b[ENTRY_HEAD + CRAFT_MAX_ENTRY];
  struct raft_entry e;
  raft_term prev;
  for (uint64_t i = start - 1 + n; i < slots && rv == 0; i++) {
    int r = entry_read(s, i + 1, b, &e, &prev);
    if (r < 0 || (r > 0 && sf_record_erase(&s->log, s->w, s->node, i, 0) != 0))
      rv = RAFT_IOERR;
  }
  if (rv == 0 && disk_sync(s) != 0)
    rv = RAFT_IOERR;
  if (rv == 0)
    rv = log_copy(s, start, n, bytes, entries);
  if (rv != 0) {
    snap_free(sn);
    return rv;
  }
  *term = s->term;
  *voted_for = s->vote;
  *snapshot = sn;
  *start_index = start;
  *n_entries = n;
  s->next_index = start + n;
  s->last_term = last;
  return 0;
}

static int m_start(struct raft_io *io, unsigned msecs, raft_io_tick_cb tick, raft_io_recv_cb recv) {
  impl *s = io->impl;
  s->tick_ms = msecs ? msecs : 1;
  s->tick = tick;
  s->recv = recv;
  s->started = 1;
  s->tick_timer =
      sim_timer_start(s->w, s->node, (uint64_t)s->tick_ms * SIM_NS_PER_MS, CRAFT_TAG_TICK);
  return 0;
}

static int m_bootstrap(struct raft_io *io, const struct raft_configuration *conf) {
  impl *s = io->impl;
  if (s->disk_unreadable)
    return RAFT_IOERR;
  uint8_t b[ENTRY_HEAD + CRAFT_MAX_ENTRY];
  struct raft_entry e;
  raft_term prev;
  if (entry_read(s, 1, b, &e, &prev) < 0)
    return RAFT_IOERR;
  /* Term 0: no bootstrap ever completed (an entry 1 without a term is what
   * a crash left of one, and load() ignores it): bootstrap again. */
  if (s->term != 0)
    return RAFT_CANTBOOTSTRAP;
  struct raft_buffer buf;
  int rv = raft_configuration_encode(conf, &buf);
  if (rv != 0)
    return rv;
  e.term = 1;
  e.type = RAFT_CHANGE;
  e.buf = buf;
  e.batch = NULL;
  rv = entry_write(s, 1, 0, &e);
  raft_free(buf.base);
  if (rv == 0)
    rv = meta_write(s, 1, 0); /* syncs the entry too */
  if (rv == 0) {
    s->next_index = 2;
    s->last_term = 1;
  }
  return rv;
}

static int m_recover(struct raft_io *io, const struct raft_configuration *conf) {
  (void)io;
  (void)conf;
  return RAFT_INVALID; /* not part of what the example exercises */
}

static int m_set_term(struct raft_io *io, raft_term term) {
  return meta_write(io->impl, term, 0);
}

static int m_set_vote(struct raft_io *io, raft_id id) {
  impl *s = io->impl;
  return meta_write(s, s->term, id);
}

/* ---- messages ------------------------------------------------------------ */

/* The fixed fields of each message, in wire order: one list that encode()
 * and decode() both expand, so the two cannot drift apart. */
#define RV_FIELDS(X) X(u64, term) X(u64, candidate_id) X(u64, last_log_index) X(u64, last_log_term)
#define AE_FIELDS(X)                                                                               \
  X(u64, term) X(u64, prev_log_index) X(u64, prev_log_term) X(u64, leader_commit) X(u32, n_entries)
#define AER_FIELDS(X) X(u64, term) X(u64, rejected) X(u64, last_log_index)
#define TN_FIELDS(X) X(u64, term) X(u64, last_log_index) X(u64, last_log_term)
#define IS_FIELDS(X) X(u64, term) X(u64, last_index) X(u64, last_term) X(u64, conf_index)
#if defined(CRAFT_HAS_CAPACITY)
#define CAPACITY_FIELDS(X) X(u16, features) X(u16, capacity)
#else
#define CAPACITY_FIELDS(X)
#endif
#define ENC_FIELD(type, field) sf_enc_##type(&e, p->field);
#define DEC_FIELD(type, field) p->field = sf_dec_##type(d);

/* Bytes of a message's encoding (before the seal). */
static size_t wire_size(const struct raft_message *m) {
  size_t n = 2 + 8 * 5 + CRAFT_WIRE_EXTRA; /* craft_compat.h: version, capacity */
  if (m->type == RAFT_IO_APPEND_ENTRIES)
    for (unsigned i = 0; i < m->append_entries.n_entries; i++)
      n += 14 + m->append_entries.entries[i].buf.len;
  if (m->type == RAFT_IO_INSTALL_SNAPSHOT)
    n += 4 + 9 * (size_t)m->install_snapshot.conf.n + 4 + m->install_snapshot.data.len;
  return n + 4;
}

static size_t encode(const struct raft_message *m, uint8_t *buf, size_t cap) {
  sf_enc e;
  sf_enc_init(&e, buf, cap);
  sf_enc_u8(&e, MSG_MAGIC);
  sf_enc_u8(&e, (uint8_t)m->type);
#if defined(CRAFT_HAS_MSG_VERSION)
  /* Only the results' versions mean something to raft (which fields a
   * RequestVoteResult has); releases until 2024 never set the others, so
   * sending them would send stack garbage (and runs would differ), and
   * raft's libuv backend decodes them as 0. */
  int results = m->type == RAFT_IO_REQUEST_VOTE_RESULT || m->type == RAFT_IO_APPEND_ENTRIES_RESULT;
  sf_enc_u8(&e, results ? craft_msg_version(m) : 0);
#endif
  switch (m->type) {
  case RAFT_IO_REQUEST_VOTE: {
    const struct raft_request_vote *p = &m->request_vote;
    RV_FIELDS(ENC_FIELD)
    sf_enc_u8(&e, (uint8_t)(p->disrupt_leader | p->pre_vote << 1));
    break;
  }
  case RAFT_IO_REQUEST_VOTE_RESULT: {
    const struct raft_request_vote_result *p = &m->request_vote_result;
    sf_enc_u64(&e, p->term);
    sf_enc_u8(&e, p->vote_granted);
    sf_enc_u8(&e, (uint8_t)p->pre_vote);
    CAPACITY_FIELDS(ENC_FIELD)
    break;
  }
  case RAFT_IO_APPEND_ENTRIES: {
    const struct raft_append_entries *p = &m->append_entries;
    AE_FIELDS(ENC_FIELD)
    for (unsigned i = 0; i < p->n_entries; i++) {
      sf_enc_u64(&e, p->entries[i].term);
      sf_enc_u16(&e, p->entries[i].type);
      sf_enc_u32(&e, (uint32_t)p->entries[i].buf.len);
      sf_enc_bytes(&e, p->entries[i].buf.base, p->entries[i].buf.len);
    }
    break;
  }
  case RAFT_IO_APPEND_ENTRIES_RESULT: {
    const struct raft_append_entries_result *p = &m->append_entries_result;
    AER_FIELDS(ENC_FIELD)
    CAPACITY_FIELDS(ENC_FIELD)
    break;
  }
  case RAFT_IO_TIMEOUT_NOW: {
    const struct raft_timeout_now *p = &m->timeout_now;
    TN_FIELDS(ENC_FIELD)
    break;
  }
  case RAFT_IO_INSTALL_SNAPSHOT: {
    const struct raft_install_snapshot *p = &m->install_snapshot;
    IS_FIELDS(ENC_FIELD)
    conf_encode(&e, &p->conf);
    sf_enc_u32(&e, (uint32_t)p->data.len);
    sf_enc_bytes(&e, p->data.base, p->data.len);
    break;
  }
  default: return 0;
  }
  return sf_enc_seal(&e);
}

static int m_send(struct raft_io *io, struct raft_io_send *sreq, const struct raft_message *m,
                  raft_io_send_cb cb) {
  impl *s = io->impl;
  int to = craft_node_of(m->server_id, sim_nodes(s->w));
  /* The recipient is a server of some configuration (ids 1..nodes here): id
   * 0 is "no leader known", and raft's libuv backend dereferences the
   * message's address, which raft leaves NULL then. */
  SIM_INVARIANT(s->w, s->node, to >= 0, "send_to_no_server",
                "raft sent message type %d to server id %llu", (int)m->type,
                (unsigned long long)m->server_id);
  /* An InstallSnapshot names the snapshot it carries: raft's v0 layer
   * loads the data after filling in the message, and may load a newer
   * snapshot, whose index it takes but not its term (finding 2 of
   * docs/findings/cowsql-raft.md, in every tree of the bug-history set).
   * The follower then stores the wrong term and later shuts down; checked
   * here, where it happens, that bug is told apart from a variant's. */
  if (m->type == RAFT_IO_INSTALL_SNAPSHOT && m->install_snapshot.last_index == s->got_index)
    SIM_INVARIANT(
        s->w, s->node, m->install_snapshot.last_term == s->got_term, "install_snapshot_term",
        "InstallSnapshot to n%d names snapshot %llu of term %llu, but the snapshot "
        "loaded for it is of term %llu",
        to, (unsigned long long)m->install_snapshot.last_index,
        (unsigned long long)m->install_snapshot.last_term, (unsigned long long)s->got_term);
  req *r = calloc(1, sizeof *r);
  if (!r)
    return RAFT_NOMEM;
  size_t cap = wire_size(m) + SF_SEAL_BYTES;
  uint8_t *buf = malloc(cap);
  size_t len = buf ? encode(m, buf, cap) : 0;
  s->stats.sends++;
  if (s->dead) {
    /* fail-stop: the process is gone; raft hears back when it is torn down */
  } else if (to < 0 || !len || sim_send(s->w, s->node, to, buf, len) != 0) {
    r->status = to < 0 ? RAFT_NOCONNECTION : RAFT_IOERR;
    s->stats.send_errors++;
  }
  free(buf);
  r->send = sreq;
  r->send_cb = cb;
  r->due = sim_clock_mono(s->w, s->node); /* the datagram left: done in the next event */
  push(s, &s->net, r, CRAFT_TAG_NET);
  return 0;
}

static int decode(sf_dec *d, struct raft_message *m) {
  if (sf_dec_u8(d) != MSG_MAGIC)
    return -1;
  m->type = sf_dec_u8(d);
#if defined(CRAFT_HAS_MSG_VERSION)
  uint8_t version = sf_dec_u8(d);
#endif
  switch (m->type) {
  case RAFT_IO_REQUEST_VOTE: {
    struct raft_request_vote *p = &m->request_vote;
    RV_FIELDS(DEC_FIELD)
    uint8_t f = sf_dec_u8(d);
    p->disrupt_leader = f & 1;
    p->pre_vote = (f >> 1) & 1;
    break;
  }
  case RAFT_IO_REQUEST_VOTE_RESULT: {
    struct raft_request_vote_result *p = &m->request_vote_result;
    p->term = sf_dec_u64(d);
    p->vote_granted = sf_dec_u8(d) != 0;
    uint8_t pv = sf_dec_u8(d);
#if defined(CRAFT_HAS_TRIBOOL)
    p->pre_vote = pv <= raft_tribool_false ? (raft_tribool)pv : raft_tribool_unknown;
#else
    p->pre_vote = pv != 0;
#endif
    CAPACITY_FIELDS(DEC_FIELD)
    break;
  }
  case RAFT_IO_APPEND_ENTRIES: {
    struct raft_append_entries *p = &m->append_entries;
    AE_FIELDS(DEC_FIELD)
    p->entries = NULL;
    if (!sf_dec_ok(d) || p->n_entries > MAX_WIRE_ENTRIES)
      return -1;
    break; /* the entries follow: decode_entries */
  }
  case RAFT_IO_APPEND_ENTRIES_RESULT: {
    struct raft_append_entries_result *p = &m->append_entries_result;
    AER_FIELDS(DEC_FIELD)
    CAPACITY_FIELDS(DEC_FIELD)
    break;
  }
  case RAFT_IO_TIMEOUT_NOW: {
    struct raft_timeout_now *p = &m->timeout_now;
    TN_FIELDS(DEC_FIELD)
    break;
  }
  case RAFT_IO_INSTALL_SNAPSHOT: {
    struct raft_install_snapshot *p = &m->install_snapshot;
    IS_FIELDS(DEC_FIELD)
    break; /* the configuration and data follow: decode_snapshot */
  }
  default: return -1;
  }
#if defined(CRAFT_HAS_MSG_VERSION)
  craft_set_msg_version(m, version);
#endif
  return sf_dec_ok(d) ? 0 : -1;
}

/* The entries of an AppendEntries, in one batch as raft expects of received
 * entries (raft owns them once delivered). */
static int decode_entries(sf_dec *d, struct raft_append_entries *p) {
  if (p->n_entries == 0)
    return 0;
  sf_dec probe = *d; /* first pass: sizes */
  size_t bytes = 0;
  for (unsigned i = 0; i < p->n_entries; i++) {
    sf_dec_u64(&probe);
    sf_dec_u16(&probe);
    uint32_t len = sf_dec_u32(&probe);
    if (!sf_dec_ok(&probe) || len > sf_dec_left(&probe))
      return -1;
    probe.pos += len;
    bytes += len;
  }
  struct raft_entry *arr = raft_calloc(p->n_entries, sizeof *arr);
  uint8_t *batch = raft_malloc(bytes ? bytes : 1);
  if (!arr || !batch) {
    raft_free(arr);
    raft_free(batch);
    return -1;
  }
  size_t off = 0;
  for (unsigned i = 0; i < p->n_entries; i++) {
    arr[i].term = sf_dec_u64(d);
    arr[i].type = sf_dec_u16(d);
    arr[i].buf.len = sf_dec_u32(d);
    arr[i].buf.base = batch + off;
    arr[i].batch = batch;
    sf_dec_bytes(d, batch + off, arr[i].buf.len);
    off += arr[i].buf.len;
  }
  p->entries = arr;
  return 0;
}

/* The configuration and data of an InstallSnapshot, in raft's memory (raft
 * owns them once delivered). */
static int decode_snapshot(sf_dec *d, struct raft_install_snapshot *p) {
  raft_configuration_init(&p->conf);
  uint32_t n = 0;
  if (conf_decode(d, &p->conf) == 0)
    n = sf_dec_u32(d);
  p->data.base = sf_dec_ok(d) && n <= sf_dec_left(d) ? raft_malloc(n ? n : 1) : NULL;
  p->data.len = n;
  if (p->data.base)
    sf_dec_bytes(d, p->data.base, n);
  if (!p->data.base || !sf_dec_ok(d)) {
    raft_configuration_close(&p->conf);
    raft_free(p->data.base);
    return -1;
  }
  return 0;
}

void craft_io_recv(struct raft_io *io, int from, const void *msg, size_t len) {
  impl *s = io->impl;
  if (!s->started || s->closed)
    return;
  sf_dec d;
  struct raft_message m;
  memset(&m, 0, sizeof m);
  if (!sf_dec_unseal(&d, msg, len) || decode(&d, &m) != 0)
    return; /* damaged or not ours: a real network stack would drop it too */
  if (m.type == RAFT_IO_APPEND_ENTRIES && decode_entries(&d, &m.append_entries) != 0)
    return;
  if (m.type == RAFT_IO_INSTALL_SNAPSHOT && decode_snapshot(&d, &m.install_snapshot) != 0)
    return;
  m.server_id = (raft_id)from + 1;
  m.server_address = craft_address(from);
  s->recv(io, &m);
}

/* ---- log writes ---------------------------------------------------------- */

/* A stall of the simulated disk (sim_disk_stall) holds every queued
 * request until it ends: 1 if it does, and the queue waits for it. The
 * wait is counted on this node's clock, which may run 20 % slow: a quarter
 * more, so that one wait is enough. */
static int disk_stalled(impl *s) {
  uint64_t left = sim_disk_stall_left(s->w, s->node);
  if (!left || !s->disk.head)
    return 0;
  if (left > (uint64_t)INT64_MAX / 4) /* a stall without end (the API saturates): no overflow */
    left = (uint64_t)INT64_MAX / 4;
  int64_t end = sim_clock_mono(s->w, s->node) + (int64_t)(left + left / 4);
  for (req *r = s->disk.head; r; r = r->next) /* in order still: dues never decrease */
    if (r->due < end)
      r->due = end;
  s->stats.stalls++;
  arm(s, &s->disk, CRAFT_TAG_DISK);
  SIM_ASSERT(s->disk.timer);
  return 1;
}

/* Queue a disk request: a latency of 0.5-4 ms, completions in submission
 * order. */
static void push_disk(impl *s, req *r) {
  int64_t now = sim_clock_mono(s->w, s->node);
  int64_t lat = 500000 + (int64_t)(sim_node_random(s->w, s->node) % 3500000);
  r->due = s->disk.tail && s->disk.tail->due > now + lat ? s->disk.tail->due : now + lat;
  push(s, &s->disk, r, CRAFT_TAG_DISK);
}

static int m_append(struct raft_io *io, struct raft_io_append *areq,
                    const struct raft_entry entries[], unsigned n, raft_io_append_cb cb) {
  impl *s = io->impl;
  req *r = calloc(1, sizeof *r);
  if (!r)
    return RAFT_NOMEM;
  s->stats.appends++;
  r->first = s->next_index;
  r->prev_term = s->last_term;
  for (unsigned i = 0; i < n && r->status == 0 && !s->dead; i++) /* cached now, durable later */
    if ((r->status = entry_write(s, s->next_index + i, i ? entries[i - 1].term : s->last_term,
                                 &entries[i])) == RAFT_IOERR)
      r->status = disk_error(s);
  if (r->status == 0 && n) {
    s->next_index += n;
    s->last_term = entries[n - 1].term;
  }
  r->sync_epoch = s->sync_failures;
  r->append = areq;
  r->append_cb = cb;
  push_disk(s, r);
  return 0;
}

static int m_truncate(struct raft_io *io, raft_index index) {
  impl *s = io->impl;
  if (index == 0 || index > s->next_index)
    return RAFT_INVALID;
  s->stats.truncates++;
  if (index < s->log_start)
    return RAFT_INVALID;          /* before the log on disk: in the installed snapshot */
  raft_term last = s->start_prev; /* the new last entry's term: the next append links to it */
  if (index > s->log_start) {
    uint8_t b[ENTRY_HEAD + CRAFT_MAX_ENTRY];
    struct raft_entry e;
    raft_term prev;
    int r = s->dead ? 0 : entry_read(s, index - 1, b, &e, &prev);
    if (r < 0 && disk_error(s))
      return RAFT_IOERR;
    if (r == 0 && !s->dead)
      return RAFT_IOERR; /* the entry before was never written whole */
    last = r > 0 ? e.term : 0;
  }
  for (raft_index i = index; i < s->next_index && !s->dead; i++)
    if (sf_record_erase(&s->log, s->w, s->node, i - 1, 0) != 0 && disk_error(s))
      return RAFT_IOERR;
  s->next_index = index; /* durable with the next sync */
  s->last_term = last;
  return 0;
}

/* Snapshots go through the disk queue: stored (or read) when every disk
 * request before them has completed. */

/* A snapshot request for the disk queue, or NULL with *rv raft's error. */
static req *snapshot_req(impl *s, int *rv) {
  req *r = s->snapshots ? calloc(1, sizeof *r) : NULL;
  if (!r)
    *rv = s->snapshots ? RAFT_NOMEM : RAFT_IOERR;
  return r;
}

static int m_snapshot_put(struct raft_io *io, unsigned trailing, struct raft_io_snapshot_put *preq,
                          const struct raft_snapshot *snapshot, raft_io_snapshot_put_cb cb) {
  impl *s = io->impl;
  int rv;
  req *r = snapshot_req(s, &rv);
  if (!r)
    return rv;
  if (!(r->snap_rec = snap_encode(snapshot, &r->snap_len))) {
    free(r);
    return RAFT_TOOBIG;
  }
  r->install = trailing == 0;
  r->trailing = trailing;
  s->stats.installing += r->install != 0; /* until its completion, or its cancel */
  r->put = preq;
  r->put_cb = cb;
  push_disk(s, r);
  return 0;
}

static int m_snapshot_get(struct raft_io *io, struct raft_io_snapshot_get *greq,
                          raft_io_snapshot_get_cb cb) {
  impl *s = io->impl;
  int rv;
  req *r = snapshot_req(s, &rv);
  if (!r)
    return rv;
  r->get = greq;
  r->get_cb = cb;
  push_disk(s, r);
  return 0;
}

static raft_time m_time(struct raft_io *io) {
  impl *s = io->impl;
  int64_t t = sim_clock_mono(s->w, s->node);
  return t > 0 ? (raft_time)(t / (int64_t)SIM_NS_PER_MS) : 0;
}

static int m_random(struct raft_io *io, int min, int max) {
  impl *s = io->impl;
  if (max <= min)
    return min;
  return min + (int)(sim_node_random(s->w, s->node) % (uint64_t)(max - min + 1));
}

/* ---- the backend --------------------------------------------------------- */

int craft_io_init(struct raft_io *io, sim_world *w, int node, craft_disk_errors mode,
                  int snapshots) {
  memset(io, 0, sizeof *io);
  impl *s = calloc(1, sizeof *s);
  if (!s)
    return RAFT_NOMEM;
  s->w = w;
  s->node = node;
  s->mode = mode;
  s->next_index = 1;
  s->log_start = 1;
  s->snapshots = snapshots;
  sf_records_init(&s->meta, w, node, 0, META_LEN);
  uint64_t log_base = sf_records_end(&s->meta, 1);
  if (snapshots) { /* meta | snapshot | log; without, the layout stays as it was */
    sf_records_init(&s->snap, w, node, log_base, SNAP_MAX);
    log_base = sf_records_end(&s->snap, 1);
  }
  sf_records_init(&s->log, w, node, log_base, ENTRY_HEAD + CRAFT_MAX_ENTRY);
  s->disk_unreadable = read_state(s) != 0;
  io->version = 1;
#if defined(CRAFT_HAS_CAPACITY)
  io->capacity = 0xffff; /* the reserved disk capacity: the simulated disk has room */
#endif
  io->impl = s;
  io->init = m_init;
  io->close = m_close;
  io->load = m_load;
  io->start = m_start;
  io->bootstrap = m_bootstrap;
  io->recover = m_recover;
  io->set_term = m_set_term;
  io->set_vote = m_set_vote;
  io->send = m_send;
  io->append = m_append;
  io->truncate = m_truncate;
  io->snapshot_put = m_snapshot_put;
  io->snapshot_get = m_snapshot_get;
  io->time = m_time;
  io->random = m_random;
  return 0;
}

void craft_io_free(struct raft_io *io) {
  impl *s = io->impl;
  if (!s)
    return;
  req *r;
  while ((r = pop(&s->disk))) {
    free(r->snap_rec);
    free(r);
  }
  while ((r = pop(&s->net)))
    free(r);
  free(s);
  io->impl = NULL;
}

int craft_io_owns_timer(uint64_t tag) {
  return tag == CRAFT_TAG_TICK || tag == CRAFT_TAG_DISK || tag == CRAFT_TAG_NET;
}

void craft_io_timer(struct raft_io *io, uint64_t tag) {
  impl *s = io->impl;
  if (!s || s->closed)
    return;
  if (tag == CRAFT_TAG_TICK) {
    s->tick_timer =
        sim_timer_start(s->w, s->node, (uint64_t)s->tick_ms * SIM_NS_PER_MS, CRAFT_TAG_TICK);
    if (s->started && s->tick)
      s->tick(io);
  } else if (tag == CRAFT_TAG_DISK) {
    s->disk.timer = 0;
    if (!disk_stalled(s))
      complete(s, &s->disk, CRAFT_TAG_DISK, 0);
  } else if (tag == CRAFT_TAG_NET) {
    s->net.timer = 0;
    complete(s, &s->net, CRAFT_TAG_NET, 0);
  }
}

const craft_io_stats *craft_io_get_stats(const struct raft_io *io) {
  const impl *s = io->impl;
  return &s->stats;
}

/* ---- reports -------------------------------------------------------------- */

static const char *type_name(unsigned t) {
  switch (t) {
  case RAFT_IO_APPEND_ENTRIES: return "AppendEntries";
  case RAFT_IO_APPEND_ENTRIES_RESULT: return "AppendEntriesResult";
  case RAFT_IO_REQUEST_VOTE: return "RequestVote";
  case RAFT_IO_REQUEST_VOTE_RESULT: return "RequestVoteResult";
  case RAFT_IO_TIMEOUT_NOW: return "TimeoutNow";
  case RAFT_IO_INSTALL_SNAPSHOT: return "InstallSnapshot";
  default: return "?";
  }
}

unsigned craft_msg_type(const void *msg, size_t len) {
  const uint8_t *b = msg;
  return len >= 2 && b[0] == MSG_MAGIC && b[1] >= 1 && b[1] <= RAFT_IO_TIMEOUT_NOW ? b[1] : 0;
}

int craft_describe(const void *msg, size_t have, size_t len, char *buf, size_t cap) {
  (void)len;
  sf_dec d;
  sf_dec_init(&d, msg, have);
  struct raft_message m;
  memset(&m, 0, sizeof m);
  if (decode(&d, &m) != 0) { /* a prefix (timelines keep 24 bytes): type and term */
    unsigned t = craft_msg_type(msg, have);
    if (t && have >= 10 + CRAFT_WIRE_VERSION)
      return snprintf(buf, cap, "%s t%llu", type_name(t),
                      (unsigned long long)sf_get64((const uint8_t *)msg + 2 + CRAFT_WIRE_VERSION));
    return snprintf(buf, cap, "%s", type_name(t));
  }
  switch (m.type) {
  case RAFT_IO_REQUEST_VOTE:
    return snprintf(buf, cap, "RequestVote%s t%llu cand n%llu last %llu/t%llu",
                    m.request_vote.pre_vote ? "(pre)" : "", m.request_vote.term,
                    m.request_vote.candidate_id - 1, m.request_vote.last_log_index,
                    m.request_vote.last_log_term);
  case RAFT_IO_REQUEST_VOTE_RESULT:
    return snprintf(buf, cap, "RequestVoteResult t%llu %s", m.request_vote_result.term,
                    m.request_vote_result.vote_granted ? "granted" : "denied");
  case RAFT_IO_APPEND_ENTRIES:
    return snprintf(buf, cap, "AppendEntries t%llu prev %llu/t%llu commit %llu n=%u",
                    m.append_entries.term, m.append_entries.prev_log_index,
                    m.append_entries.prev_log_term, m.append_entries.leader_commit,
                    m.append_entries.n_entries);
  case RAFT_IO_APPEND_ENTRIES_RESULT:
    return snprintf(buf, cap, "AppendEntriesResult t%llu %s last %llu",
                    m.append_entries_result.term,
                    m.append_entries_result.rejected ? "rejected" : "ok",
                    m.append_entries_result.last_log_index);
  case RAFT_IO_TIMEOUT_NOW: return snprintf(buf, cap, "TimeoutNow t%llu", m.timeout_now.term);
  case RAFT_IO_INSTALL_SNAPSHOT:
    return snprintf(buf, cap, "InstallSnapshot t%llu last %llu/t%llu", m.install_snapshot.term,
                    m.install_snapshot.last_index, m.install_snapshot.last_term);
  default: return snprintf(buf, cap, "?");
  }
}
