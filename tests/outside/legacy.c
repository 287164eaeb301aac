/* A source written for releases before 0.6, which installed simfuzz's
 * headers flat and had targets include them by their bare names. They
 * still build (simfuzz_add_target() notes them at configure time). */
#include "sim.h"
#include "simfuzz.h"
#include "simfuzz_record.h"

int kvstream_legacy_nodes(const sim_world *w);

int kvstream_legacy_nodes(const sim_world *w) {
  return sim_nodes(w);
}
