/* AFL++ custom mutator library (AFL_CUSTOM_MUTATOR_LIBRARY): the same
 * scenario-level mutations as the libFuzzer hooks, plus a trim that
 * removes one step at a time. Output buffers belong to the mutator. */
#include "mutate.h"

#include <stdlib.h>
#include <string.h>

/* The library is built with hidden visibility: only the entry points that
 * afl-fuzz looks up are exported, never the scenario code inside it. */
#if defined(__GNUC__)
#define SF_EXPORT __attribute__((visibility("default")))
#else
#define SF_EXPORT
#endif

typedef struct {
  uint64_t seed, calls;
  uint8_t *out;
  size_t out_cap;
  /* trimming */
  sf_scenario trim_base, trim_try;
  uint32_t trim_pos, trim_max;
  uint8_t *trim_buf;
  size_t trim_cap;
} mstate;

SF_EXPORT void *afl_custom_init(void *afl, unsigned int seed);
SF_EXPORT size_t afl_custom_fuzz(void *data, unsigned char *buf, size_t buf_size,
                                 unsigned char **out_buf, unsigned char *add_buf,
                                 size_t add_buf_size, size_t max_size);
SF_EXPORT const char *afl_custom_describe(void *data, size_t max_description_len);
SF_EXPORT int afl_custom_init_trim(void *data, unsigned char *buf, size_t buf_size);
SF_EXPORT size_t afl_custom_trim(void *data, unsigned char **out_buf);
SF_EXPORT int afl_custom_post_trim(void *data, unsigned char success);
SF_EXPORT void afl_custom_deinit(void *data);

void *afl_custom_init(void *afl, unsigned int seed) {
  (void)afl;
  mstate *m = calloc(1, sizeof *m);
  if (m)
    m->seed = seed;
  return m;
}

static uint8_t *reserve(uint8_t **buf, size_t *cap, size_t need) {
  if (*cap < need) {
    uint8_t *p = realloc(*buf, need);
    if (!p)
      return NULL;
    *buf = p;
    *cap = need;
  }
  return *buf;
}

size_t afl_custom_fuzz(void *data, unsigned char *buf, size_t buf_size, unsigned char **out_buf,
                       unsigned char *add_buf, size_t add_buf_size, size_t max_size) {
  mstate *m = data;
  uint64_t seed = m->seed * 0x9e3779b97f4a7c15ull + ++m->calls;
  if (max_size > SF_MAX_INPUT)
    max_size = SF_MAX_INPUT;
  if (!reserve(&m->out, &m->out_cap, max_size > buf_size ? max_size : buf_size)) {
    *out_buf = buf;
    return buf_size;
  }
  size_t n;
  if (add_buf && add_buf_size && (seed >> 60) == 0) {
    n = sf_crossover(buf, buf_size, add_buf, add_buf_size, m->out, max_size, seed);
  } else {
    size_t in = buf_size < max_size ? buf_size : max_size;
    memcpy(m->out, buf, in);
    n = sf_mutate(m->out, in, max_size, seed, NULL);
  }
  *out_buf = m->out;
  return n;
}

const char *afl_custom_describe(void *data, size_t max_description_len) {
  (void)data;
  return max_description_len >= 8 ? "simfuzz" : "";
}

int afl_custom_init_trim(void *data, unsigned char *buf, size_t buf_size) {
  mstate *m = data;
  sf_decode(buf, buf_size, &m->trim_base);
  m->trim_pos = 0;
  m->trim_max = m->trim_base.nsteps;
  return (int)m->trim_max;
}

size_t afl_custom_trim(void *data, unsigned char **out_buf) {
  mstate *m = data;
  m->trim_try = m->trim_base;
  sf_scenario *s = &m->trim_try;
  if (m->trim_pos < s->nsteps) {
    memmove(&s->steps[m->trim_pos], &s->steps[m->trim_pos + 1],
            (s->nsteps - m->trim_pos - 1) * sizeof s->steps[0]);
    s->nsteps--;
  }
  size_t need = sf_encoded_size(s);
  if (!reserve(&m->trim_buf, &m->trim_cap, need ? need : 1)) {
    *out_buf = NULL;
    return 0;
  }
  size_t n = sf_encode(s, m->trim_buf, m->trim_cap);
  *out_buf = m->trim_buf;
  return n;
}

int afl_custom_post_trim(void *data, unsigned char success) {
  mstate *m = data;
  if (success)
    m->trim_base = m->trim_try; /* the step was not needed */
  else
    m->trim_pos++;
  /* AFL++ stops when the index reaches what init_trim returned */
  return m->trim_pos >= m->trim_base.nsteps ? (int)m->trim_max : (int)m->trim_pos;
}

void afl_custom_deinit(void *data) {
  mstate *m = data;
  if (!m)
    return;
  free(m->out);
  free(m->trim_buf);
  free(m);
}
