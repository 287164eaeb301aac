/* simfuzz programs: an unmodified C program as the nodes of a simulated
 * cluster. simfuzz_add_program() (CMake) compiles the program's sources,
 * links them into one relocatable object, points every reference to a
 * modelled POSIX call at simfuzz's model of it, and generates the target
 * file that fills an sf_program and declares the target. Node k runs the
 * program's main(argc, argv) on a fiber (a stack of its own) with its own
 * copy of the program's globals; a call that would block yields to the
 * simulator, which resumes the node when the call can go on.
 *
 * This header is what that generated file uses; a program's own sources
 * never include it. See docs/programs.md. */
#ifndef SIMFUZZ_PROGRAM_H
#define SIMFUZZ_PROGRAM_H

#include <simfuzz/sim.h>
#include <simfuzz/simfuzz.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SF_PROGRAM_MAX_ARGS 32 /**< command-line words of a node, at most */

/** One of a program's copies (simfuzz_add_program links one per node, each
 *  with its own globals, so that switching nodes copies nothing). */
typedef struct sf_program_copy {
  int (*main)(int argc, char **argv);   /**< this copy's main */
  unsigned char *globals, *globals_end; /**< this copy's globals section */
} sf_program_copy;

/** A program, as simfuzz_add_program() describes it. */
typedef struct sf_program {
  const char *name;                   /**< the target's name */
  int (*main)(int argc, char **argv); /**< the program's main, renamed */
  /** The program's writable globals (its .data and .bss, merged into one
   *  section): each node has its own copy, switched in when it runs.
   *  NULL, NULL if the program has none. */
  unsigned char *globals, *globals_end;
  /** Node k's command line; in each word {node} becomes k, {nodes} the
   *  number of nodes, {addr:K} node K's IPv4 address as text and {dir} the
   *  node's data directory ("."). */
  const char *const *args;
  int nargs;
  /** The CLIENT (simfuzz_client.h), a program of its own that runs on the
   *  client nodes, after the servers; NULL without one. */
  const struct sf_program *client;
  int clients; /**< client nodes (the target's client_nodes) */
  /** Copies of the program, node k running copy k on its own globals (and
   *  client j copy j of the client); NULL, 0: one copy, whose globals
   *  section each node's saved globals are swapped in and out of. With
   *  copies, one run at a time in a process may use the program. */
  const sf_program_copy *copies;
  int ncopies;
  /** Virtual time each call of the table costs the node (CALL_COST_NS):
   *  its clock runs on by it as it computes, and it spends the time at its
   *  next blocking call. 0: calls are free. Counted only in a program
   *  object built with the cost (simfuzz_add_program). */
  uint64_t call_cost_ns;
  /** The program's other versions (simfuzz_add_program's VERSIONS):
   *  versions[i] is version i + 1, a program of its own (its main, its
   *  globals, its copies; its args, client and cost are this one's). A node
   *  boots as the version sim_node_version() names (0: this program), on
   *  what its disk holds. NULL, 0 for a program of one version. Each
   *  version needs its copies, at least one per node. */
  const struct sf_program *const *versions;
  int nversions;
} sf_program;

/** The per-run context of a program target (sf_target.create). NULL if
 *  out of memory. A program's globals are the process's, so its target
 *  sets sf_target.exclusive (the generated one does). */
void *sf_program_create(const sf_program *p, int nodes);

/** Free it (sf_target.destroy). */
void sf_program_destroy(void *ctx);

/** The node callbacks of every program target (sf_target.ops). */
extern const sim_node_ops sf_program_ops;

/** Hand a scenario's client operation to a client node (sf_target.workload):
 *  client op->node modulo the clients. Without a CLIENT, nothing. */
void sf_program_workload(void *ctx, sim_world *w, const sf_op *op);

/** The end checks of a program target with a CLIENT (sf_target.end_checks):
 *  the clients' history is linearizable. */
extern const sf_check sf_program_end_checks[];

/** That check alone: the clients' history is linearizable (nothing to
 *  check without a CLIENT). */
void sf_program_check_history(void *ctx, sim_world *w);

/** Liveness of a program target with a CLIENT (sf_target.live): each
 *  client completed an operation after the heal (simfuzz_client.h). */
int sf_program_live(void *ctx, sim_world *w);

/** Abstract state of a program node for feedback (sf_target.observe):
 *  running, blocked in a call, exited. */
uint32_t sf_program_observe(void *ctx, sim_world *w, int node);

/** Node k's IPv4 address (10.0.0.k+1), in host byte order. */
uint32_t sf_program_addr(int node);

/** The node's captured standard output and error so far (the last
 *  SF_PROGRAM_OUTPUT bytes), NUL-terminated; "" for a bad node. */
const char *sf_program_output(void *ctx, int node);

#define SF_PROGRAM_OUTPUT 4096 /**< bytes of output kept per node */

/** For end checks (simfuzz_add_program's CHECKS): read up to cap bytes of
 *  the file at path (as the program names it, from its data directory) in
 *  node's file system as it is now (a node that crashed: what survived),
 *  with no fault injected. Returns the bytes read (the file's size, at
 *  most cap), or -ENOENT, -EISDIR, -ENAMETOOLONG, -EINVAL. */
int64_t sf_program_read_file(void *ctx, const sim_world *w, int node, const char *path, void *buf,
                             size_t cap);

#ifdef __cplusplus
}
#endif

#endif
