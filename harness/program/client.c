/* The clients of a program target (simfuzz_client.h): client nodes run the
 * CLIENT's main() on fibers as servers run theirs (program.c); here are the
 * scenario's operations handed to them, the history they record, and the
 * oracles on it: linearizability at the end of a run, and liveness (each
 * client completes an operation after the heal). */
#define _GNU_SOURCE
#include "program/internal.h"
#include <simfuzz/linearize.h>
#include <simfuzz/simfuzz.h>

#include <stdio.h>
#include <string.h>

/* The running node, which must be a client. */
static sfp_node *client_self(const char *call) {
  sfp_node *me = sfp__self();
  if (sfp__cur_n < sfp__cur_c->n) {
    char msg[160];
    snprintf(msg, sizeof msg, "server node %d called %s(), which only a CLIENT may call",
             sfp__cur_n, call);
    sfp__fail_node("client_api", __FILE__, __LINE__, msg);
  }
  return me;
}

/* Queue op for client node k and wake it if it waits for one. A full
 * queue drops the operation (a probe takes the last place instead). */
static void hand_over(sfp_cluster *c, sim_world *w, int k, const sf_client_op *op) {
  sfp_node *me = &c->node[k];
  SIM_ASSERT(k >= c->n && k < c->total && me->opq_len <= SFP_OPQ);
  if (me->opq_len == SFP_OPQ) {
    if (!op->probe)
      return;
    me->opq_len--;
  }
  me->opq[(me->opq_head + me->opq_len++) % SFP_OPQ] = *op;
  if (me->waits_op && me->state == N_RUN)
    sim_timer_start(w, k, 0, SFP_WAKE_TAG);
}

void sf_program_workload(void *ctx, sim_world *w, const sf_op *op) {
  sfp_cluster *c = ctx;
  if (c->total == c->n)
    return; /* no CLIENT: operations have no one to do them */
  /* the client of the server the step names; with one server, which says
   * nothing, the clients take the operations in turn */
  uint32_t who = c->n > 1 ? (uint32_t)op->node : op->seq;
  int k = c->n + (int)(who % (uint32_t)(c->total - c->n));
  sf_client_op o = {op->op, op->node, op->key, op->value, op->seq, 0};
  hand_over(c, w, k, &o);
}

int sfp_sf_client_next(sf_client_op *op);
int sfp_sf_client_next(sf_client_op *op) {
  sfp_node *me = client_self("sf_client_next");
  while (!me->opq_len) {
    me->waits_op = 1;
    sfp__block_until(INT64_MAX);
    me->waits_op = 0;
  }
  *op = me->opq[me->opq_head];
  me->opq_head = (me->opq_head + 1) % SFP_OPQ;
  me->opq_len--;
  if (op->probe) {
    SIM_ASSERT(me->probed == 1); /* hand_over's pair: one probe per client */
    me->probed = 2;
  }
  return 1;
}

size_t sfp_sf_client_invoke(uint32_t kind, uint64_t key, uint64_t arg, uint64_t arg2);
size_t sfp_sf_client_invoke(uint32_t kind, uint64_t key, uint64_t arg, uint64_t arg2) {
  sfp_node *me = client_self("sf_client_invoke");
  size_t id = sf_history_invoke(&sfp__cur_c->hist, (uint32_t)(sfp__cur_n - sfp__cur_c->n), kind,
                                key, arg, arg2, sim_now(sfp__cur_w));
  me->last_op = id;
  return id;
}

void sfp_sf_client_complete(size_t id, uint64_t out);
void sfp_sf_client_complete(size_t id, uint64_t out) {
  sfp_node *me = client_self("sf_client_complete");
  sf_history_complete(&sfp__cur_c->hist, id, out, sim_now(sfp__cur_w));
  if (id == me->last_op && id != SIZE_MAX && me->probed == 2)
    me->probed = 3; /* an operation invoked after the probe completed */
}

/* The recorded history is linearizable (operations never completed may or
 * may not have taken effect). */
SF_ORACLE void sf_program_check_history(void *ctx, sim_world *w) {
  sfp_cluster *c = ctx;
  sf_lin_report rep;
  sf_lin_result r = sf_history_check(&c->hist, &sf_kv_model, NULL, &rep);
  SIM_INVARIANT(w, -1, r != SF_LIN_VIOLATION, "linearizable",
                "the clients' history is not linearizable: %s", rep.message);
}

const sf_check sf_program_end_checks[] = {
    {"linearizable", sf_program_check_history},
    {NULL, NULL},
};

/* At the first call (the Liveness step's window opens) each client gets a
 * probe; then live once each completed an operation invoked after it took
 * its probe. Without a CLIENT: live at once (the program's exits and
 * failures are its oracles). */
int sf_program_live(void *ctx, sim_world *w) {
  sfp_cluster *c = ctx;
  if (!c->probing) {
    c->probing = 1;
    for (int k = c->n; k < c->total; k++) {
      sf_client_op probe = {0, (k - c->n) % c->n, 0, 0, UINT32_MAX, 1};
      c->node[k].probed = 1;
      hand_over(c, w, k, &probe);
    }
  }
  for (int k = c->n; k < c->total; k++)
    if (c->node[k].probed != 3)
      return 0;
  return 1;
}
