/* SIM_ASSERT's report (sim.h). Its own file: code that uses the simulator's
 * headers without the simulator (the AFL++ mutator library) links it. */
#include <simfuzz/sim.h>

#include <stdio.h>
#include <stdlib.h>

void sim__assert_failed(const char *expr, const char *file, int line) {
  fprintf(stderr,
          "simfuzz: internal assertion failed: %s at %s:%d (a simfuzz bug: please report it)\n",
          expr, file, line);
  fflush(stderr);
  abort();
}
