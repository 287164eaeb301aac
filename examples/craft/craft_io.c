/* craft_io: canonical/raft's struct raft_io on the simfuzz simulator (see
 * craft_io.h for the model of network, disk, time and randomness). */
#include "craft_io.h"

#include "craft_compat.h"

#include "simfuzz_record.h"
#include "simfuzz_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MSG_MAGIC = 0xc7, META_LEN = 24, ENTRY_HEAD = 30, MAX_WIRE_ENTRIES = 4096 };

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

/* Complete every request that is due (all of them, with RAFT_CANCELED, when
 * the backend closes). A callback may submit new requests. */
static void complete(impl *s, queue *q, uint64_t tag, int cancel) {
  for (;;) {
    req *r = q->head;
    if (!r || (!cancel && r->due > sim_clock_mono(s->w, s->node)))
      break;
    pop(q);
    int status = cancel ? RAFT_CANCELED : r->status;
    if (r->append) {
      if (!cancel && status == 0) { /* the write-back cache reaches the disk */
        s->stats.syncs++;
        if (disk_sync(s) != 0) {
          s->stats.sync_errors++;
          status = disk_error(s);
        } else if (r->sync_epoch != s->sync_failures) {
          status = RAFT_IOERR; /* an earlier failed sync decided these entries */
        }
      }
      if (s->dead && !cancel) { /* fail-stop: never acknowledged; the crash cancels it */
        r->next = q->head;
        q->head = r;
        if (!q->tail)
          q->tail = r;
        return;
      }
      if (status != 0 && !cancel)
        append_failed(s, q, r);
      if (r->append_cb)
        r->append_cb(r->append, status);
    } else if (r->send_cb) {
      r->send_cb(r->send, status);
    }
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

static int m_load(struct raft_io *io, raft_term *term, raft_id *voted_for,
                  struct raft_snapshot **snapshot, raft_index *start_index,
                  struct raft_entry *entries[], size_t *n_entries) {
  impl *s = io->impl;
  *snapshot = NULL;
  *start_index = 1;
  *entries = NULL;
  *n_entries = 0;
  if (s->disk_unreadable || read_state(s) != 0)
    return RAFT_IOERR;
  /* the entries: records 1, 2, ... up to the first missing or damaged one */
  uint8_t b[ENTRY_HEAD + CRAFT_MAX_ENTRY];
  struct raft_entry e;
  raft_term prev, last = 0;
  size_t n = 0, bytes = 0;
  for (;;) {
    int r = entry_read(s, n + 1, b, &e, &prev);
    if (r < 0)
      return RAFT_IOERR;
    if (r == 0 || prev != last)
      break; /* the end, or a record of another version of the log */
    n++;
    bytes += e.buf.len;
    last = e.term;
  }
  /* Bootstrap writes the first entry and then the term, and syncs both; a
   * crash (or a failed sync) can keep the entry alone. Term 0 means that
   * bootstrap never completed: no log (raft asserts as much at start). */
  if (s->term == 0)
    n = bytes = last = 0;
  /* Stale records may lie beyond the end (an erase or a write before them
   * lost in a crash): erase them, or a later append could make them part of
   * the log again. */
  uint64_t slots = sim_disk_size(s->w, s->node);
  slots = slots > s->log.base ? (slots - s->log.base) / s->log.slot : 0;
  for (uint64_t i = n; i < slots; i++) {
    int r = entry_read(s, i + 1, b, &e, &prev);
    if (r < 0)
      return RAFT_IOERR;
    if (r > 0 && sf_record_erase(&s->log, s->w, s->node, i, 0) != 0)
      return RAFT_IOERR;
  }
  if (disk_sync(s) != 0)
    return RAFT_IOERR;
  struct raft_entry *arr = NULL;
  uint8_t *batch = NULL;
  if (n) {
    arr = raft_calloc(n, sizeof *arr);
    batch = raft_malloc(bytes ? bytes : 1);
    if (!arr || !batch) {
      raft_free(arr);
      raft_free(batch);
      return RAFT_NOMEM;
    }
  }
  size_t off = 0;
  for (size_t i = 0; i < n; i++) {
    if (entry_read(s, i + 1, b, &e, &prev) != 1) { /* read it a moment ago */
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
  *term = s->term;
  *voted_for = s->vote;
  *entries = arr;
  *n_entries = n;
  s->next_index = n + 1;
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

/* Bytes of a message's encoding (before the seal). */
static size_t wire_size(const struct raft_message *m) {
  size_t n = 2 + 8 * 5 + CRAFT_WIRE_EXTRA; /* craft_compat.h: version, capacity */
  if (m->type == RAFT_IO_APPEND_ENTRIES)
    for (unsigned i = 0; i < m->append_entries.n_entries; i++)
      n += 14 + m->append_entries.entries[i].buf.len;
  return n + 4;
}

static size_t encode(const struct raft_message *m, uint8_t *buf, size_t cap) {
  sf_enc e;
  sf_enc_init(&e, buf, cap);
  sf_enc_u8(&e, MSG_MAGIC);
  sf_enc_u8(&e, (uint8_t)m->type);
#if defined(CRAFT_HAS_MSG_VERSION)
  sf_enc_u8(&e, craft_msg_version(m));
#endif
  switch (m->type) {
  case RAFT_IO_REQUEST_VOTE: {
    const struct raft_request_vote *p = &m->request_vote;
    sf_enc_u64(&e, p->term);
    sf_enc_u64(&e, p->candidate_id);
    sf_enc_u64(&e, p->last_log_index);
    sf_enc_u64(&e, p->last_log_term);
    sf_enc_u8(&e, (uint8_t)(p->disrupt_leader | p->pre_vote << 1));
    break;
  }
  case RAFT_IO_REQUEST_VOTE_RESULT: {
    const struct raft_request_vote_result *p = &m->request_vote_result;
    sf_enc_u64(&e, p->term);
    sf_enc_u8(&e, p->vote_granted);
    sf_enc_u8(&e, (uint8_t)p->pre_vote);
#if defined(CRAFT_HAS_CAPACITY)
    sf_enc_u16(&e, p->features);
    sf_enc_u16(&e, p->capacity);
#endif
    break;
  }
  case RAFT_IO_APPEND_ENTRIES: {
    const struct raft_append_entries *p = &m->append_entries;
    sf_enc_u64(&e, p->term);
    sf_enc_u64(&e, p->prev_log_index);
    sf_enc_u64(&e, p->prev_log_term);
    sf_enc_u64(&e, p->leader_commit);
    sf_enc_u32(&e, p->n_entries);
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
    sf_enc_u64(&e, p->term);
    sf_enc_u64(&e, p->rejected);
    sf_enc_u64(&e, p->last_log_index);
#if defined(CRAFT_HAS_CAPACITY)
    sf_enc_u16(&e, p->features);
    sf_enc_u16(&e, p->capacity);
#endif
    break;
  }
  case RAFT_IO_TIMEOUT_NOW: {
    const struct raft_timeout_now *p = &m->timeout_now;
    sf_enc_u64(&e, p->term);
    sf_enc_u64(&e, p->last_log_index);
    sf_enc_u64(&e, p->last_log_term);
    break;
  }
  default: return 0; /* InstallSnapshot: no snapshots in this backend */
  }
  return sf_enc_seal(&e);
}

static int m_send(struct raft_io *io, struct raft_io_send *sreq, const struct raft_message *m,
                  raft_io_send_cb cb) {
  impl *s = io->impl;
  int to = craft_node_of(m->server_id, sim_nodes(s->w));
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
    p->term = sf_dec_u64(d);
    p->candidate_id = sf_dec_u64(d);
    p->last_log_index = sf_dec_u64(d);
    p->last_log_term = sf_dec_u64(d);
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
#if defined(CRAFT_HAS_CAPACITY)
    p->features = sf_dec_u16(d);
    p->capacity = sf_dec_u16(d);
#endif
    break;
  }
  case RAFT_IO_APPEND_ENTRIES: {
    struct raft_append_entries *p = &m->append_entries;
    p->term = sf_dec_u64(d);
    p->prev_log_index = sf_dec_u64(d);
    p->prev_log_term = sf_dec_u64(d);
    p->leader_commit = sf_dec_u64(d);
    p->n_entries = sf_dec_u32(d);
    p->entries = NULL;
    if (!sf_dec_ok(d) || p->n_entries > MAX_WIRE_ENTRIES)
      return -1;
    break; /* the entries follow: decode_entries */
  }
  case RAFT_IO_APPEND_ENTRIES_RESULT: {
    struct raft_append_entries_result *p = &m->append_entries_result;
    p->term = sf_dec_u64(d);
    p->rejected = sf_dec_u64(d);
    p->last_log_index = sf_dec_u64(d);
#if defined(CRAFT_HAS_CAPACITY)
    p->features = sf_dec_u16(d);
    p->capacity = sf_dec_u16(d);
#endif
    break;
  }
  case RAFT_IO_TIMEOUT_NOW: {
    struct raft_timeout_now *p = &m->timeout_now;
    p->term = sf_dec_u64(d);
    p->last_log_index = sf_dec_u64(d);
    p->last_log_term = sf_dec_u64(d);
    break;
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
  m.server_id = (raft_id)from + 1;
  m.server_address = craft_address(from);
  s->recv(io, &m);
}

/* ---- log writes ---------------------------------------------------------- */

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
  /* disk latency 0.5-4 ms, completions in submission order */
  int64_t now = sim_clock_mono(s->w, s->node);
  int64_t lat = 500000 + (int64_t)(sim_node_random(s->w, s->node) % 3500000);
  r->due = s->disk.tail && s->disk.tail->due > now + lat ? s->disk.tail->due : now + lat;
  push(s, &s->disk, r, CRAFT_TAG_DISK);
  return 0;
}

static int m_truncate(struct raft_io *io, raft_index index) {
  impl *s = io->impl;
  if (index == 0 || index > s->next_index)
    return RAFT_INVALID;
  s->stats.truncates++;
  raft_term last = 0; /* the new last entry's term: the next append links to it */
  if (index > 1) {
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

static int m_snapshot_put(struct raft_io *io, unsigned trailing, struct raft_io_snapshot_put *preq,
                          const struct raft_snapshot *snapshot, raft_io_snapshot_put_cb cb) {
  (void)io;
  (void)trailing;
  (void)preq;
  (void)snapshot;
  (void)cb;
  return RAFT_IOERR;
}

static int m_snapshot_get(struct raft_io *io, struct raft_io_snapshot_get *greq,
                          raft_io_snapshot_get_cb cb) {
  (void)io;
  (void)greq;
  (void)cb;
  return RAFT_IOERR;
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

int craft_io_init(struct raft_io *io, sim_world *w, int node, craft_disk_errors mode) {
  memset(io, 0, sizeof *io);
  impl *s = calloc(1, sizeof *s);
  if (!s)
    return RAFT_NOMEM;
  s->w = w;
  s->node = node;
  s->mode = mode;
  s->next_index = 1;
  sf_records_init(&s->meta, w, node, 0, META_LEN);
  sf_records_init(&s->log, w, node, sf_records_end(&s->meta, 1), ENTRY_HEAD + CRAFT_MAX_ENTRY);
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
  while ((r = pop(&s->disk)))
    free(r);
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
  default: return snprintf(buf, cap, "?");
  }
}
