/*
 * node_io over simfuzz's simulator: the glue every example target shares.
 * A target keeps one node_io_sim per running node (in its node data) and
 * hands &s->io to the protocol.
 */
#ifndef EXAMPLES_NODE_IO_SIM_H
#define EXAMPLES_NODE_IO_SIM_H

#include "node_io.h"
#include <simfuzz/simfuzz_record.h>

typedef struct node_io_sim {
  node_io io;
  sim_world *w;
  sf_records records;
} node_io_sim;

/** Set up node `node`'s I/O in world w, with records of up to record_max
 *  bytes from disk offset 0. */
void node_io_sim_init(node_io_sim *s, sim_world *w, int node, uint32_t record_max);

/** Allocate a node's state of `size` bytes, zeroed, whose first member is a
 *  node_io_sim, set it up and attach it as the node's data (freed by
 *  node_io_sim_teardown). Aborts if memory runs out. */
void *node_io_sim_attach(sim_world *w, int node, size_t size, uint32_t record_max);

/** A target's cluster context of `size` bytes, zeroed, whose first member
 *  is `int n`, set to nodes (an sf_target create hook's work). Aborts if
 *  memory runs out. */
void *node_io_sim_cluster(size_t size, int nodes);

/** A sim_node_ops teardown that frees the attached state. */
void node_io_sim_teardown(void *ctx, sim_world *w, int node, sim_teardown_why why);

#endif
