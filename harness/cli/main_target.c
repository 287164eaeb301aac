/* main() of a per-target command line, simfuzz-<target>: the command line
 * of the one target this binary was built with (sf_this_target, defined by
 * the stub that simfuzz_add_target() generates). */
#include "cli.h"

int main(int argc, char **argv) {
  return cli_main(argc, argv, sf_this_target);
}
