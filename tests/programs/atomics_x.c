/* The atomics test program (tests/programs/atomics.c) as target
 * sf_target_x, for tests/determinism_matrix.sh, which interposes the
 * program's object as simfuzz_add_program() does, program_atomics.h forced
 * in: gcc's <stdatomic.h> and clang's spell an atomic operation with
 * different builtins, and each must be one switch point, so that a seed is
 * the same schedule in every build. */
#include "program_x.h"

int sfp_main_0(int argc, char **argv);
extern unsigned char __start_sfp_globals_0[] __attribute__((weak));
extern unsigned char __stop_sfp_globals_0[] __attribute__((weak));
static const sf_program_copy copies[] = {{sfp_main_0, __start_sfp_globals_0, __stop_sfp_globals_0}};
static const char *const args[] = {"atomics", NULL};
static const sf_program program = {
    "x",  sfp_main_0, __start_sfp_globals_0, __stop_sfp_globals_0, args, 1, NULL, 0, copies, 1, 0,
    NULL, 0};

PROGRAM_X(program, "the atomics test program", 1, 1, 0);
