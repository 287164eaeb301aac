/* The threaded poolkv program (examples/programs/poolkv) and its client as
 * target sf_target_x, for tests/determinism_matrix.sh, which interposes
 * their objects as simfuzz_add_program() does (cmake/SimfuzzProgram.cmake
 * generates the same for a real target). */
#include "program_x.h"

int sfp_main_0(int argc, char **argv);
int sfp_cmain_0(int argc, char **argv);
int sfp_cmain_1(int argc, char **argv);
extern unsigned char __start_sfp_globals_0[] __attribute__((weak));
extern unsigned char __stop_sfp_globals_0[] __attribute__((weak));
extern unsigned char __start_sfp_cglobals_0[] __attribute__((weak));
extern unsigned char __stop_sfp_cglobals_0[] __attribute__((weak));
extern unsigned char __start_sfp_cglobals_1[] __attribute__((weak));
extern unsigned char __stop_sfp_cglobals_1[] __attribute__((weak));

static const sf_program_copy server_copies[] = {
    {sfp_main_0, __start_sfp_globals_0, __stop_sfp_globals_0}};
static const sf_program_copy client_copies[] = {
    {sfp_cmain_0, __start_sfp_cglobals_0, __stop_sfp_cglobals_0},
    {sfp_cmain_1, __start_sfp_cglobals_1, __stop_sfp_cglobals_1}};
static const char *const client_args[] = {"client", "{node}", "{nodes}", NULL};
static const sf_program client = {"x-client",
                                  sfp_cmain_0,
                                  __start_sfp_cglobals_0,
                                  __stop_sfp_cglobals_0,
                                  client_args,
                                  3,
                                  NULL,
                                  0,
                                  client_copies,
                                  2,
                                  0,
                                  NULL,
                                  0};
static const char *const args[] = {"poolkv", "7000", NULL};
static const sf_program program = {"x",
                                   sfp_main_0,
                                   __start_sfp_globals_0,
                                   __stop_sfp_globals_0,
                                   args,
                                   2,
                                   &client,
                                   2,
                                   server_copies,
                                   1,
                                   0,
                                   NULL,
                                   0};

PROGRAM_X(program, "the poolkv program", 1, 1, 2);
