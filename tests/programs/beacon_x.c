/* The beacon program (examples/programs/beacon) as target sf_target_x, for
 * tests/determinism_matrix.sh, which interposes the program's object as
 * simfuzz_add_program() does, a copy per node (cmake/SimfuzzProgram.cmake
 * generates the same for a real target). */
#include "program_x.h"

#define COPY(j)                                                                                    \
  int sfp_main_##j(int argc, char **argv);                                                         \
  extern unsigned char __start_sfp_globals_##j[] __attribute__((weak));                            \
  extern unsigned char __stop_sfp_globals_##j[] __attribute__((weak));
COPY(0)
COPY(1)
COPY(2)
COPY(3)
COPY(4)
#define ENTRY(j)                                                                                   \
  { sfp_main_##j, __start_sfp_globals_##j, __stop_sfp_globals_##j }
static const sf_program_copy copies[] = {ENTRY(0), ENTRY(1), ENTRY(2), ENTRY(3), ENTRY(4)};
static const char *const args[] = {"beacon", "{node}", "{nodes}", "7000", NULL};
static const sf_program program = {
    "x",  sfp_main_0, __start_sfp_globals_0, __stop_sfp_globals_0, args, 4, NULL, 0, copies, 5, 0,
    NULL, 0};

PROGRAM_X(program, "the beacon program", 3, 5, 0);
