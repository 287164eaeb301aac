/* kvrep 1.0: a table of versioned registers that replicas apply updates to.
 * (A stand-in for a third-party library: it has global symbols, asserts on
 * its own invariants and calls rand().) */
#ifndef KVREP_H
#define KVREP_H

#include <stdint.h>

#ifndef KVREP_VERSION
#define KVREP_VERSION "1.0"
#endif
#ifndef KVREP_MAX_KEYS
#define KVREP_MAX_KEYS 8
#endif

struct kvrep_slot {
  uint64_t version, value;
};

struct kvrep {
  struct kvrep_slot slot[KVREP_MAX_KEYS];
  uint64_t applied;
};

extern const char kvrep_release[];

/** Empty table. */
void kvrep_init(struct kvrep *r);
/** Apply update (key, version, value): 1 if applied, 0 if stale. */
int kvrep_apply(struct kvrep *r, uint32_t key, uint64_t version, uint64_t value);
/** Resend interval for a writer, ms (jittered with rand()). */
unsigned kvrep_resend_ms(void);

#endif
