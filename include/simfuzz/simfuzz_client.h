/* simfuzz clients: the CLIENT of a program target (simfuzz_add_program's
 * CLIENT file.c). A client is a C program of the user's, main(argc, argv)
 * with argv = {"client", "<its number>", "<the servers' count>"}, run on
 * client nodes of the simulated cluster: the world's nodes after the
 * servers, which the scenario's faults never crash or pause. It talks to
 * the servers over the same simulated sockets (node K's address is
 * 10.0.0.K+1), takes the scenario's client operations one at a time with
 * sf_client_next(), and records each operation's invocation and response
 * with sf_client_invoke() and sf_client_complete(). At the end of a run
 * that did not fail, the recorded history must be linearizable against
 * the key-value model (sf_kv_model, linearize.h); an operation invoked and
 * never completed (a timeout: the client cannot know whether it took
 * effect) is pending, which the checker allows.
 *
 * Liveness: once a Liveness step heals every fault, each client is handed
 * one more operation marked `probe`; the run's liveness holds when every
 * client has completed an operation it invoked after taking its probe.
 *
 * These calls exist only on a client node; a server that calls them fails
 * the run. See docs/programs.md. */
#ifndef SIMFUZZ_CLIENT_H
#define SIMFUZZ_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** One client operation of the scenario. */
typedef struct sf_client_op {
  uint32_t op;  /**< the scenario's operation code: the client's to interpret */
  int node;     /**< the server node the scenario names (0 .. servers - 1) */
  uint64_t key; /**< the scenario's key and value: the client's to interpret */
  uint64_t value;
  uint32_t seq; /**< unique in the run: 0, 1, 2, ... in the order the scenario gives them */
  int probe;    /**< 1: the liveness probe after the heal (do it as any other) */
} sf_client_op;

/** Wait until the scenario gives this client an operation, and fill *op
 *  with it. Returns 1. Operations queue up while the client is busy (at
 *  most 32; later ones are dropped). */
int sf_client_next(sf_client_op *op);

/** Record that the client invokes an operation now: kind is SF_KV_PUT,
 *  SF_KV_GET, SF_KV_CAS or SF_KV_DEL (linearize.h), with its key and
 *  arguments (PUT: arg = the value; CAS: arg = expected, arg2 = new).
 *  Returns the operation's id for sf_client_complete(). */
size_t sf_client_invoke(uint32_t kind, uint64_t key, uint64_t arg, uint64_t arg2);

/** Record the response of operation id now, with its output (GET: the
 *  value read, 0 for none; CAS: 1 if it swapped; PUT, DEL: 0). */
void sf_client_complete(size_t id, uint64_t out);

#ifdef __cplusplus
}
#endif

#endif
