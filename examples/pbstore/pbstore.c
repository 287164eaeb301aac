/* pbstore: the protocol (see pbstore.h). */
#include "pbstore.h"

#include <simfuzz/simfuzz_wire.h>

#include <inttypes.h>
#include <stdio.h>

enum { TICK = 1 };
#define TICK_NS 50000000ull  /* 50 ms */
#define STALL_NS 500000000ll /* the bug's "window full for long" */

/* ---- disk ---- */

static int store(pb_node *p, uint32_t idx, uint64_t v, int sync) {
  uint8_t rec[PB_RECORD];
  sf_put64(rec, v);
  return p->io->record_write(p->io, idx, rec, sizeof rec, sync);
}

/* Load records up to the first missing or damaged one. A read that keeps
 * failing crashes the node rather than serve a truncated log: -1. */
static int load(pb_node *p) {
  uint8_t rec[PB_RECORD];
  p->len = 0;
  while (p->len < PB_MAX_LOG) {
    int64_t r = p->io->record_read(p->io, p->len, rec, sizeof rec);
    if (r < 0) {
      p->io->crash(p->io);
      return -1;
    }
    if (r != PB_RECORD || sf_get64(rec) == 0)
      return 0;
    p->log[p->len++] = sf_get64(rec);
  }
  return 0;
}

/* ---- primary ---- */

static int send_entry(pb_node *p, int b) {
  pb_peer *pe = &p->peer[b];
  uint8_t m[13];
  sf_enc e;
  sf_enc_init(&e, m, sizeof m);
  sf_enc_u8(&e, PB_MSG_ENTRY);
  sf_enc_u32(&e, pe->next);
  sf_enc_u64(&e, p->log[pe->next]);
  if (p->io->conn_send(p->io, pe->conn, m, sf_enc_len(&e)) != 0)
    return -1; /* not connected (yet) or out of buffers: retry on the next ack */
  pe->next++;
  return 0;
}

static void pump(pb_node *p, int b) {
  pb_peer *pe = &p->peer[b];
  if (!pe->conn || !pe->hello)
    return;
  while (pe->next < p->durable && pe->next - pe->acked < PB_WINDOW)
    if (send_entry(p, b) < 0)
      break;
  if (pe->next - pe->acked == PB_WINDOW && pe->full_since < 0)
    pe->full_since = p->io->clock(p->io);
}

/* Sync the primary's log and publish the new entries; -1 after a crash. */
static int make_durable(pb_node *p) {
  if (p->io->sync(p->io) < 0) {
    p->io->crash(p->io); /* a failed sync may have lost what the cache shows */
    return -1;
  }
  p->durable = p->len;
  return 0;
}

static void primary_tick(pb_node *p) {
  for (int b = 1; b < p->io->nodes; b++) {
    if (!p->peer[b].conn) {
      int64_t h = p->io->connect(p->io, b);
      if (h > 0) {
        p->peer[b].conn = (uint64_t)h;
        p->peer[b].hello = 0;
      }
    }
  }
  p->io->timer(p->io, TICK_NS, TICK);
}

static int peer_of(const pb_node *p, uint64_t h) {
  for (int b = 1; b < p->io->nodes; b++)
    if (p->peer[b].conn == h)
      return b;
  return -1;
}

static void primary_conn(pb_node *p, uint64_t h, node_conn_event ev, const uint8_t *d, size_t len) {
  int b = peer_of(p, h);
  if (b < 0)
    return;
  pb_peer *pe = &p->peer[b];
  sf_dec in;
  sf_dec_init(&in, d, len);
  switch (ev) {
  case NODE_CONN_CONNECTED:
    if (pe->skip_hello) { /* only ever set by the planted bug */
      pe->skip_hello = 0;
      pe->hello = 1;
      pump(p, b);
    }
    break;
  case NODE_CONN_DATA:
    if (len == 5 && sf_dec_u8(&in) == PB_MSG_ACK) {
      uint32_t l = sf_dec_u32(&in);
      if (!pe->hello) { /* the backup's hello: resume from its length */
        pe->hello = 1;
        pe->acked = l;
        pe->next = l;
      } else if (l > pe->acked) {
        pe->acked = l;
        pe->full_since = -1; /* progress: the window is open again */
      }
      pump(p, b);
    }
    break;
  case NODE_CONN_RESET:
#ifdef PBSTORE_BUG_RESET_SKIP
    /* BUG: "a window that stayed full for long must be sitting in the
     * backup's buffer": count it as delivered and resume after it without
     * waiting for the hello. */
    if (pe->hello && pe->next - pe->acked == PB_WINDOW && pe->full_since >= 0 &&
        p->io->clock(p->io) - pe->full_since > STALL_NS) {
      pe->acked = pe->next;
      pe->skip_hello = 1;
    }
#endif
    /* fall through */
  default: /* closed, timeout, refused: reconnect on the next tick */
    p->io->conn_close(p->io, h);
    pe->conn = 0;
    pe->hello = 0;
    pe->full_since = -1;
    break;
  }
}

/* ---- backup ---- */

static void send_ack(pb_node *p, uint64_t h) {
  uint8_t ack[5];
  sf_enc e;
  sf_enc_init(&e, ack, sizeof ack);
  sf_enc_u8(&e, PB_MSG_ACK);
  sf_enc_u32(&e, p->len);
  p->io->conn_send(p->io, h, ack, sf_enc_len(&e));
}

static void backup_conn(pb_node *p, uint64_t h, node_conn_event ev, const uint8_t *d, size_t len) {
  sf_dec in;
  sf_dec_init(&in, d, len);
  switch (ev) {
  case NODE_CONN_ACCEPTED: /* hello: tell the primary where to resume */ send_ack(p, h); break;
  case NODE_CONN_DATA:
    if (len == 13 && sf_dec_u8(&in) == PB_MSG_ENTRY) {
      uint32_t i = sf_dec_u32(&in);
      uint64_t v = sf_dec_u64(&in);
      if (i >= PB_MAX_LOG || v == 0)
        break;
      /* the backup trusts the index the primary gives */
      if (store(p, i, v, 1) < 0) {
        p->io->crash(p->io); /* cannot trust its disk: recover from it on restart */
        return;
      }
      p->log[i] = v;
      if (i + 1 > p->len)
        p->len = i + 1;
      if (i < p->changed_from)
        p->changed_from = i;
      send_ack(p, h);
    }
    break;
  case NODE_CONN_CLOSED: p->io->conn_close(p->io, h); break;
  default: break;
  }
}

/* ---- the API ---- */

int pb_boot(pb_node *p, node_io *io) {
  p->io = io;
  for (int b = 0; b < PB_MAX_NODES; b++)
    p->peer[b].full_since = -1;
  p->changed_from = 0; /* everything loaded from disk is new to the oracle */
  if (load(p) < 0)
    return -1;
  if (io->self == 0) {
    if (make_durable(p) < 0)
      return -1;
    primary_tick(p);
  }
  return 0;
}

void pb_timer(pb_node *p, uint64_t tag) {
  (void)tag;
  if (p->io->self == 0)
    primary_tick(p);
}

void pb_conn(pb_node *p, uint64_t conn, node_conn_event ev, const uint8_t *data, size_t len) {
  if (p->io->self == 0)
    primary_conn(p, conn, ev, data, len);
  else
    backup_conn(p, conn, ev, data, len);
}

int pb_write(pb_node *p, uint64_t value) {
  if (p->io->self != 0 || p->len >= PB_MAX_LOG || value == 0)
    return -1; /* the client gets an error */
  if (store(p, p->len, value, 0) < 0)
    return -1;
  p->log[p->len++] = value;
  if (make_durable(p) < 0)
    return -1;
  for (int b = 1; b < p->io->nodes; b++)
    pump(p, b);
  return 0;
}

int pb_describe(void *ctx, const void *msg, size_t have, size_t len, char *buf, size_t cap) {
  (void)ctx;
  sf_dec d;
  sf_dec_init(&d, msg, have);
  uint8_t type = sf_dec_u8(&d);
  if (have >= 13 && len == 13 && type == PB_MSG_ENTRY) {
    uint32_t idx = sf_dec_u32(&d);
    return snprintf(buf, cap, "ENTRY idx=%" PRIu32 " op=%" PRIu64, idx, (sf_dec_u64(&d) >> 32) - 1);
  }
  if (have >= 5 && len == 5 && type == PB_MSG_ACK)
    return snprintf(buf, cap, "ACK len=%" PRIu32, sf_dec_u32(&d));
  return -1;
}

uint32_t pb_peer_state(const pb_node *p, int b) {
  const pb_peer *pe = &p->peer[b];
  return !pe->conn ? 0 : !pe->hello ? 1 : 2 + (pe->next - pe->acked);
}

uint32_t pb_classify(void *ctx, const void *msg, size_t len) {
  (void)ctx;
  return len ? ((const uint8_t *)msg)[0] & 3u : 0;
}
