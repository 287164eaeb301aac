/* The target sf_target_x of tests/determinism_matrix.sh's interposed
 * programs (beacon_x.c, poolkv_x.c, atomics_x.c): PROGRAM_X(program,
 * summary, min, max, clients) defines it on the sf_program `program`, as
 * cmake/SimfuzzProgram.cmake generates a real target's, with min nodes
 * by default. */
#ifndef SIMFUZZ_TESTS_PROGRAM_X_H
#define SIMFUZZ_TESTS_PROGRAM_X_H
#include <simfuzz/simfuzz.h>
#include <simfuzz/simfuzz_program.h>

#define PROGRAM_X(program, summary_, min_, max_, clients_)                                         \
  static void *create(int nodes) {                                                                 \
    return sf_program_create(&(program), nodes);                                                   \
  }                                                                                                \
  const sf_target sf_target_x = {.name = "x",                                                      \
                                 .summary = (summary_),                                            \
                                 .min_nodes = (min_),                                              \
                                 .max_nodes = (max_),                                              \
                                 .default_nodes = (min_),                                          \
                                 .client_nodes = (clients_),                                       \
                                 .create = create,                                                 \
                                 .destroy = sf_program_destroy,                                    \
                                 .ops = &sf_program_ops,                                           \
                                 .observe = sf_program_observe,                                    \
                                 .workload = sf_program_workload,                                  \
                                 .end_checks = sf_program_end_checks,                              \
                                 .live = sf_program_live,                                          \
                                 .exclusive = 1}

#endif
