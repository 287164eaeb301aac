/* kvrep 1.1: "writers send a key's versions in order, so an update older
 * than the current one cannot happen" - but datagram networks reorder. */
#include "kvrep.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

const char kvrep_release[] = "kvrep " KVREP_VERSION;

void kvrep_init(struct kvrep *r) {
  memset(r, 0, sizeof *r);
}

int kvrep_apply(struct kvrep *r, uint32_t key, uint64_t version, uint64_t value) {
  assert(key < KVREP_MAX_KEYS);
  struct kvrep_slot *s = &r->slot[key];
  if (version == s->version)
    return 0; /* a duplicate */
  assert(version > s->version && "updates of a key arrive in version order");
  s->version = version;
  s->value = value;
  r->applied++;
  return 1;
}

unsigned kvrep_resend_ms(void) {
  return 40 + (unsigned)(rand() % 40);
}
