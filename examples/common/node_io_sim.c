/* node_io over the simulator (see node_io_sim.h). */
#include "node_io_sim.h"

#include <stdlib.h>

static sim_world *W(node_io *io) {
  return ((node_io_sim *)io)->w;
}

static int s_send(node_io *io, int to, const void *msg, size_t len) {
  return sim_send(W(io), io->self, to, msg, len);
}

static int64_t s_connect(node_io *io, int to) {
  return sim_connect(W(io), io->self, to);
}

static int s_conn_send(node_io *io, uint64_t conn, const void *msg, size_t len) {
  return sim_conn_send(W(io), io->self, (sim_conn)conn, msg, len);
}

static void s_conn_close(node_io *io, uint64_t conn) {
  sim_conn_close(W(io), io->self, (sim_conn)conn);
}

static int s_record_write(node_io *io, uint64_t n, const void *data, uint32_t len, int sync) {
  node_io_sim *s = (node_io_sim *)io;
  return sf_record_write(&s->records, s->w, io->self, n, data, len, sync);
}

static int64_t s_record_read(node_io *io, uint64_t n, void *out, uint32_t cap) {
  node_io_sim *s = (node_io_sim *)io;
  return sf_record_read(&s->records, s->w, io->self, n, out, cap);
}

static int s_sync(node_io *io) {
  return sim_disk_sync(W(io), io->self);
}

static uint64_t s_timer(node_io *io, uint64_t delay_ns, uint64_t tag) {
  return sim_timer_start(W(io), io->self, delay_ns, tag);
}

static int s_timer_cancel(node_io *io, uint64_t timer) {
  return sim_timer_cancel(W(io), timer);
}

static uint64_t s_random(node_io *io) {
  return sim_node_random(W(io), io->self);
}

static int64_t s_clock(node_io *io) {
  return sim_clock(W(io), io->self);
}

static int64_t s_clock_mono(node_io *io) {
  return sim_clock_mono(W(io), io->self);
}

static void s_crash(node_io *io) {
  sim_node_crash(W(io), io->self);
}

void node_io_sim_init(node_io_sim *s, sim_world *w, int node, uint32_t record_max) {
  s->w = w;
  sf_records_init(&s->records, w, node, 0, record_max);
  node_io *io = &s->io;
  io->self = node;
  io->nodes = sim_nodes(w);
  io->impl = s;
  io->send = s_send;
  io->connect = s_connect;
  io->conn_send = s_conn_send;
  io->conn_close = s_conn_close;
  io->record_write = s_record_write;
  io->record_read = s_record_read;
  io->sync = s_sync;
  io->timer = s_timer;
  io->timer_cancel = s_timer_cancel;
  io->clock = s_clock;
  io->clock_mono = s_clock_mono;
  io->random = s_random;
  io->crash = s_crash;
}

void *node_io_sim_attach(sim_world *w, int node, size_t size, uint32_t record_max) {
  node_io_sim *s = sim_node_alloc(w, node, size);
  node_io_sim_init(s, w, node, record_max);
  return s;
}

void *node_io_sim_cluster(size_t size, int nodes) {
  int *c = calloc(1, size);
  if (!c)
    abort();
  *c = nodes;
  return c;
}

void node_io_sim_teardown(void *ctx, sim_world *w, int node, sim_teardown_why why) {
  (void)ctx;
  (void)why;
  sim_node_free(w, node);
}
