/* The beacon program (examples/programs/beacon) as target sf_target_x, for
 * tests/determinism_matrix.sh, which interposes the program's object as
 * simfuzz_add_program() does (cmake/SimfuzzProgram.cmake generates the
 * same for a real target). */
#include <simfuzz/simfuzz.h>
#include <simfuzz/simfuzz_program.h>

int sfp_main(int argc, char **argv);
extern unsigned char __start_sfp_globals[] __attribute__((weak));
extern unsigned char __stop_sfp_globals[] __attribute__((weak));
static const char *const args[] = {"beacon", "{node}", "{nodes}", "7000", NULL};
static const sf_program program = {"x",  sfp_main, __start_sfp_globals, __stop_sfp_globals, args, 4,
                                   NULL, 0};

static void *create(int nodes) {
  return sf_program_create(&program, nodes);
}

const sf_target sf_target_x = {.name = "x",
                               .summary = "the beacon program",
                               .min_nodes = 3,
                               .max_nodes = 5,
                               .default_nodes = 3,
                               .create = create,
                               .destroy = sf_program_destroy,
                               .ops = &sf_program_ops,
                               .observe = sf_program_observe,
                               .workload = sf_program_workload,
                               .end_checks = sf_program_end_checks,
                               .live = sf_program_live};
