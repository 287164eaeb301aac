/* Scenarios: any bytes decode to a bounded scenario; normalisation is
 * idempotent; encode/decode round-trips; mutator and crossover outputs
 * always decode, fit and are deterministic; AFL++ trim removes steps. */
#include "engine/mutate.h"
#include "scenario.pb-c.h"
#include "scenario/draw.h"
#include "scenario/textpb.h"
#include "testlib.h"
#include <simfuzz/scenario.h>

#include <string.h>

/* AFL++ custom mutator entry points (harness/engine/afl_mutator.c). */
void *afl_custom_init(void *afl, unsigned int seed);
size_t afl_custom_fuzz(void *data, unsigned char *buf, size_t buf_size, unsigned char **out_buf,
                       unsigned char *add_buf, size_t add_buf_size, size_t max_size);
int afl_custom_init_trim(void *data, unsigned char *buf, size_t buf_size);
size_t afl_custom_trim(void *data, unsigned char **out_buf);
int afl_custom_post_trim(void *data, unsigned char success);
void afl_custom_deinit(void *data);

static sf_scenario *alloc_s(void) {
  return test_alloc(sizeof(sf_scenario));
}

/* Every field within the documented bounds. */
static void check_bounded(const sf_scenario *s) {
  CHECK(s->nsteps <= SF_MAX_STEPS);
  CHECK(s->tape_len <= SIM_TAPE_MAX);
  CHECK(s->nodes <= SIM_MAX_NODES);
  CHECK(s->tail_ms <= SF_MAX_TAIL_MS);
  CHECK(s->net.latency_min_us <= s->net.latency_max_us || !s->has_net);
  CHECK(s->net.latency_max_us <= SF_MAX_LATENCY_US);
  CHECK(s->net.loss_ppm <= SIM_PPM && s->net.dup_ppm <= SIM_PPM);
  CHECK(s->disk.keep_ppm + s->disk.corrupt_ppm <= SIM_PPM);
  for (uint32_t i = 0; i < s->nsteps; i++) {
    const sf_step *st = &s->steps[i];
    CHECK(st->kind >= 1 && st->kind < SF_STEP__COUNT);
    CHECK(st->at_us <= SF_MAX_AT_US);
    CHECK(i == 0 || st->at_us >= s->steps[i - 1].at_us);
    CHECK(st->node < SIM_MAX_NODES && st->peer < SIM_MAX_NODES);
    if (st->kind == SF_STEP_OP)
      CHECK(st->count >= 1 && st->count <= SF_MAX_OP_COUNT);
    if (st->kind == SF_STEP_CLOCK)
      CHECK(st->drift_ppm >= -SIM_MAX_DRIFT_PPM && st->drift_ppm <= SIM_MAX_DRIFT_PPM);
  }
}

/* decode(encode(s)) re-encodes to the same bytes. */
static void check_roundtrip(const sf_scenario *s) {
  static uint8_t a[SF_MAX_INPUT], b[SF_MAX_INPUT];
  size_t na = sf_encode(s, a, sizeof a);
  CHECK(na <= sizeof a);
  sf_scenario *t = alloc_s();
  CHECK_EQ(sf_decode_proto(a, na, t), 0);
  size_t nb = sf_encode(t, b, sizeof b);
  CHECK_EQ(na, nb);
  CHECK(memcmp(a, b, na) == 0);
  CHECK_EQ(t->nsteps, s->nsteps);
  CHECK_EQ(t->tape_len, s->tape_len);
  free(t);
}

/* When a run ends: the last step scheduled from the start plus the tail
 * (the default if 0); a step injected after an event does not count. */
TEST(run_end_is_the_last_root_step_plus_the_tail) {
  sf_scenario *s = test_alloc(sizeof *s);
  sf_scenario_init(s);
  CHECK_EQ(sf_run_end_us(s), SF_DEFAULT_TAIL_MS * 1000ull);
  s->nsteps = 3;
  memset(s->steps, 0, 3 * sizeof s->steps[0]);
  s->steps[0].kind = SF_STEP_HEAL, s->steps[0].at_us = 700000;
  s->steps[1].kind = SF_STEP_HEAL, s->steps[1].at_us = 400000;
  s->steps[2].kind = SF_STEP_HEAL, s->steps[2].at_us = 5000000, s->steps[2].after_event = 9;
  s->tail_ms = 300;
  CHECK_EQ(sf_run_end_us(s), 1000000);
  s->tail_ms = 0;
  CHECK_EQ(sf_run_end_us(s), 700000 + SF_DEFAULT_TAIL_MS * 1000ull);
  free(s);
}

TEST(random_bytes_decode_bounded) {
  sf_scenario *s = alloc_s(), *t = alloc_s();
  uint8_t buf[2048];
  uint64_t x = 1;
  int generated = 0;
  for (int i = 0; i < 20000; i++) {
    size_t len = test_rand(&x) % sizeof buf;
    for (size_t k = 0; k < len; k++)
      buf[k] = (uint8_t)test_rand(&x);
    generated += sf_decode(buf, len, s) == SF_DECODED_GENERATED;
    check_bounded(s);
    memcpy(t, s, sizeof *s);
    sf_normalize(t); /* idempotent */
    CHECK_EQ(sf_encoded_size(t), sf_encoded_size(s));
    if (i % 50 == 0)
      check_roundtrip(s);
  }
  CHECK(generated > 15000); /* random bytes are rarely a valid protobuf */
  /* empty and one-byte inputs */
  sf_decode(NULL, 0, s);
  check_bounded(s);
  sf_decode((const uint8_t *)"\x32", 1, s);
  check_bounded(s);
  free(s);
  free(t);
}

TEST(truncated_and_oversized_protobufs) {
  sf_scenario *s = alloc_s(), *t = alloc_s();
  static uint8_t buf[1 << 20];
  for (uint64_t seed = 0; seed < 50; seed++) {
    sf_generate_seed(seed, s);
    size_t n = sf_encode(s, buf, sizeof buf);
    for (size_t cut = 0; cut < n; cut += 1 + n / 40) {
      sf_decode(buf, cut, t);
      check_bounded(t);
    }
  }
  /* 1 MiB of repeated steps: only SF_MAX_INPUT bytes are read */
  const uint8_t step[] = {0x32, 0x05, 0x9a, 0x01, 0x02, 0x08, 0x01};
  for (size_t i = 0; i + sizeof step <= sizeof buf; i += sizeof step)
    memcpy(buf + i, step, sizeof step);
  sf_decode(buf, sizeof buf, t); /* cut mid-step at SF_MAX_INPUT: generated */
  check_bounded(t);
  size_t aligned = SF_MAX_INPUT / sizeof step * sizeof step;
  CHECK_EQ(sf_decode(buf, aligned, t), SF_DECODED_PROTO);
  CHECK_EQ(t->nsteps, SF_MAX_STEPS); /* only the first 256 steps are kept */
  free(s);
  free(t);
}

TEST(extreme_values_are_clamped) {
  sf_scenario *s = alloc_s();
  sf_scenario_init(s);
  s->nodes = 1000;
  s->has_net = 1;
  s->net.latency_min_us = UINT32_MAX;
  s->net.latency_max_us = 5;
  s->net.loss_ppm = UINT32_MAX;
  s->has_disk = 1;
  s->disk.keep_ppm = UINT32_MAX;
  s->disk.corrupt_ppm = UINT32_MAX;
  s->tail_ms = UINT32_MAX;
  s->tape_len = UINT32_MAX;
  s->nsteps = 4;
  memset(s->steps, 0, 4 * sizeof s->steps[0]);
  s->steps[0].kind = SF_STEP_OP;
  s->steps[0].at_us = UINT64_MAX;
  s->steps[0].count = UINT32_MAX;
  s->steps[0].interval_us = UINT32_MAX;
  s->steps[0].node = UINT32_MAX;
  s->steps[1].kind = SF_STEP_CLOCK;
  s->steps[1].drift_ppm = INT32_MIN;
  s->steps[1].jump_us = INT64_MIN;
  s->steps[1].offset_us = INT64_MAX;
  s->steps[2].kind = 200; /* unknown kind: dropped */
  s->steps[3].kind = SF_STEP_LIVENESS;
  s->steps[3].count = UINT32_MAX;
  sf_normalize(s);
  check_bounded(s);
  CHECK_EQ(s->nsteps, 3);
  CHECK_EQ(s->nodes, SIM_MAX_NODES);
  CHECK_EQ(s->net.latency_max_us, SF_MAX_LATENCY_US);
  CHECK_EQ(s->disk.keep_ppm, SIM_PPM);
  CHECK_EQ(s->disk.corrupt_ppm, 0);
  CHECK_EQ(s->steps[0].kind, SF_STEP_CLOCK); /* sorted: the op moved to 60 s */
  CHECK_EQ(s->steps[0].drift_ppm, -SIM_MAX_DRIFT_PPM);
  CHECK_EQ(s->steps[2].kind, SF_STEP_OP);
  CHECK_EQ(s->steps[2].count, SF_MAX_OP_COUNT);
  check_roundtrip(s);
  free(s);
}

/* A FaultPoint step's one-shot (nth): clamped, kept by the codec, described;
 * 0 is no one-shot. */
TEST(fault_point_nth_is_clamped_described_and_roundtrips) {
  sf_scenario *s = alloc_s();
  sf_scenario_init(s);
  s->nsteps = 1;
  memset(s->steps, 0, sizeof s->steps[0]);
  s->steps[0].kind = SF_STEP_FAULTPOINT;
  s->steps[0].k = SIM_FAULTPOINT_ALLOC;
  s->steps[0].count = UINT32_MAX;
  sf_normalize(s);
  CHECK_EQ(s->steps[0].count, SF_MAX_FP_NTH);
  check_roundtrip(s);
  char d[512];
  sf_step_describe(&s->steps[0], 3, d, sizeof d);
  CHECK(strstr(d, "site 65281 fires 0 ppm, fails hit 1000000") != NULL);
  s->steps[0].count = 0;
  sf_step_describe(&s->steps[0], 3, d, sizeof d);
  CHECK(strstr(d, "fails hit") == NULL);
  free(s);
}

TEST(disk_stalls_are_clamped_described_and_generated) {
  sf_scenario *s = alloc_s();
  sf_scenario_init(s);
  s->nsteps = 1;
  memset(s->steps, 0, sizeof s->steps[0]);
  s->steps[0].kind = SF_STEP_DISK;
  s->steps[0].interval_us = UINT32_MAX;
  sf_normalize(s);
  CHECK_EQ(s->steps[0].interval_us, SF_MAX_STALL_US);
  check_roundtrip(s);
  char d[512];
  sf_step_describe(&s->steps[0], 3, d, sizeof d);
  CHECK(strstr(d, ", stall 10000000 us") != NULL);
  s->steps[0].interval_us = 0;
  sf_step_describe(&s->steps[0], 3, d, sizeof d);
  CHECK(strstr(d, "stall") == NULL);
  int stalls = 0, disks = 0;
  for (uint64_t seed = 0; seed < 2000; seed++) {
    sf_generate_seed(seed, s);
    for (uint32_t i = 0; i < s->nsteps; i++) {
      const sf_step *st = &s->steps[i];
      if (st->kind != SF_STEP_DISK)
        continue;
      disks++;
      if (st->interval_us) { /* only with no failure, 64 ms to 1 s */
        stalls++;
        CHECK_EQ(st->k, 0);
        CHECK(st->interval_us >= 64000 && st->interval_us <= 1024000);
      }
    }
  }
  CHECK(disks > 100);
  CHECK(stalls > disks / 8 && stalls < disks / 2); /* a quarter of them */
  free(s);
}

TEST(generated_scenarios_roundtrip_and_inject_faults) {
  sf_scenario *s = alloc_s();
  int with_faults = 0;
  for (uint64_t seed = 0; seed < 2000; seed++) {
    sf_generate_seed(seed, s);
    check_bounded(s);
    check_roundtrip(s);
    with_faults += sf_fault_steps(s) > 0;
    sf_scenario *t = alloc_s();
    sf_generate_seed(seed, t); /* a pure function of the seed */
    CHECK_EQ(sf_encoded_size(t), sf_encoded_size(s));
    free(t);
  }
  CHECK(with_faults > 1700);
  free(s);
}

TEST(mutator_outputs_decode_fit_and_are_deterministic) {
  sf_scenario *s = alloc_s();
  static uint8_t a[4096], b[4096];
  int changed = 0;
  for (uint64_t seed = 0; seed < 3000; seed++) {
    sf_generate_seed(seed % 50, s);
    size_t n = sf_encode(s, a, sizeof a);
    CHECK(n <= sizeof a);
    memcpy(b, a, n);
    size_t max = seed % 7 == 0 ? 200 : sizeof a; /* sometimes a tight limit */
    if (n > max)
      n = max; /* a truncated input is still an input */
    size_t na = sf_mutate(a, n, max, seed, NULL);
    size_t nb = sf_mutate(b, n, max, seed, NULL);
    CHECK(na <= max);
    CHECK_EQ(na, nb);
    CHECK(memcmp(a, b, na) == 0);
    CHECK_EQ(sf_decode_proto(a, na, s), 0); /* always a valid scenario */
    check_bounded(s);
    changed += na != n;
  }
  CHECK(changed > 1000);
  free(s);
}

TEST(crossover_outputs_decode) {
  sf_scenario *s = alloc_s();
  static uint8_t a[4096], b[4096], out[4096];
  for (uint64_t seed = 0; seed < 500; seed++) {
    sf_generate_seed(seed, s);
    size_t na = sf_encode(s, a, sizeof a);
    sf_generate_seed(seed + 1000, s);
    size_t nb = sf_encode(s, b, sizeof b);
    size_t n = sf_crossover(a, na, b, nb, out, sizeof out, seed);
    CHECK(n > 0 && n <= sizeof out);
    CHECK_EQ(sf_decode_proto(out, n, s), 0);
    check_bounded(s);
  }
  free(s);
}

TEST(afl_custom_mutator_and_trim) {
  void *m = afl_custom_init(NULL, 7);
  CHECK(m);
  sf_scenario *s = alloc_s();
  static uint8_t in[4096], add[4096];
  for (uint64_t seed = 0; seed < 300; seed++) {
    sf_generate_seed(seed, s);
    size_t n = sf_encode(s, in, sizeof in);
    sf_generate_seed(seed + 1, s);
    size_t an = sf_encode(s, add, sizeof add);
    unsigned char *out = NULL;
    size_t k = afl_custom_fuzz(m, in, n, &out, add, an, 1024);
    CHECK(out && k <= 1024);
    CHECK_EQ(sf_decode_proto(out, k, s), 0);
  }
  /* trim: pretend every removal keeps the crash except that of step 2 */
  sf_generate_seed(3, s);
  size_t n = sf_encode(s, in, sizeof in);
  int steps = afl_custom_init_trim(m, in, n);
  CHECK_EQ(steps, (int)s->nsteps);
  CHECK(steps >= 3);
  int pos = 0, rounds = 0;
  while (pos < steps && rounds++ < 1000) {
    unsigned char *out = NULL;
    size_t k = afl_custom_trim(m, &out);
    CHECK(out);
    sf_scenario *t = alloc_s();
    CHECK_EQ(sf_decode_proto(out, k, t), 0);
    CHECK(t->nsteps < s->nsteps); /* one step fewer than the current base */
    free(t);
    pos = afl_custom_post_trim(m, pos != 0); /* first removal "fails" */
    CHECK(pos >= 0);
  }
  CHECK(rounds < 1000); /* terminates */
  afl_custom_deinit(m);
  free(s);
}

TEST(damaged_protobufs_are_salvaged) {
  sf_scenario *s = alloc_s(), *t = alloc_s();
  static uint8_t buf[8192];
  int salvaged = 0;
  for (uint64_t seed = 0; seed < 200; seed++) {
    sf_generate_seed(seed, s);
    /* steps and tape only, so that steps come first in the encoding */
    s->version = s->nodes = 0;
    s->seed = 0;
    s->has_net = s->has_disk = s->fifo = 0;
    memset(&s->swarm, 0, sizeof s->swarm);
    s->fp_enable_ppm = s->fp_fire_ppm = s->tail_ms = 0;
    size_t n = sf_encode(s, buf, sizeof buf);
    /* trailing garbage: a cut field */
    buf[n] = 0x32;
    buf[n + 1] = 0x7f;
    CHECK_EQ(sf_decode(buf, n + 2, t), SF_DECODED_SALVAGED);
    CHECK_EQ(t->nsteps, s->nsteps);
    CHECK_EQ(t->tape_len, s->tape_len);
    /* a step whose length byte is damaged: the steps before it survive */
    size_t at = 0, steps_seen = 0;
    while (at < n && steps_seen < s->nsteps / 2) {
      uint8_t key = buf[at];
      size_t flen = buf[at + 1]; /* short fields: one-byte lengths */
      if ((key & 7) != 2 || flen >= 128)
        break;
      if (key == 0x32)
        steps_seen++;
      at += 2 + flen;
    }
    if (at < n && buf[at] == 0x32 && buf[at + 1] < 128 && steps_seen > 0) {
      buf[at + 1] = 0x7f;                      /* now claims 127 bytes: the step no longer parses */
      sf_decode_kind k = sf_decode(buf, n, t); /* rarely still valid: the
                                                  swallowed bytes may parse */
      if (k == SF_DECODED_SALVAGED) {
        CHECK(t->nsteps >= steps_seen);        /* those before the damage */
        CHECK(t->nsteps + 1 >= s->nsteps - 1); /* and, resynchronised, most after */
        salvaged++;
      }
      check_bounded(t);
    }
  }
  CHECK(salvaged > 20);
  free(s);
  free(t);
}

TEST(unknown_fields_are_ignored) {
  /* files written by a newer version (fields this build does not know, at
   * the top level and inside a step) still replay the same scenario */
  sf_scenario *s = alloc_s(), *t = alloc_s();
  static uint8_t a[8192], b[8192];
  sf_generate_seed(5, s);
  size_t n = sf_encode(s, a, sizeof a);
  memcpy(b, a, n);
  const uint8_t unknown_top[] = {0xf8, 0x06, 0x2a};       /* field 111, varint 42 */
  const uint8_t unknown_step[] = {0x32, 0x05, 0x08, 0x01, /* a step at 1 us ... */
                                  0xa8, 0x1f, 0x07};      /* ... with field 501 = 7 */
  memcpy(b + n, unknown_top, sizeof unknown_top);
  memcpy(b + n + sizeof unknown_top, unknown_step, sizeof unknown_step);
  CHECK_EQ(sf_decode(b, n + sizeof unknown_top + sizeof unknown_step, t), SF_DECODED_PROTO);
  CHECK_EQ(t->nsteps, s->nsteps); /* the step of unknown kind is dropped */
  size_t m = sf_encode(t, b, sizeof b);
  CHECK_EQ(m, n);
  CHECK(memcmp(a, b, n) == 0);
  free(s);
  free(t);
}

/* The proto's FaultKind has exactly SF_FAULT_KINDS's values, number for
 * number and name for name (the codec's static asserts check each C kind
 * against the proto; this checks that the proto has no kind C lacks). */
TEST(fault_kinds_are_the_protos) {
  static const char *const names[] = {"FAULT_NONE",
#define SF_FAULT_NAME_(kind) "FAULT_" #kind,
                                      SF_FAULT_KINDS(SF_FAULT_NAME_)
#undef SF_FAULT_NAME_
  };
  _Static_assert(sizeof names / sizeof names[0] == SF_FAULT__COUNT, "a name per kind");
  const ProtobufCEnumDescriptor *d = &simfuzz__fault_kind__descriptor;
  CHECK_EQ(d->n_values, SF_FAULT__COUNT);
  for (unsigned k = 0; k < SF_FAULT__COUNT; k++) {
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(d, (int)k);
    CHECK(v != NULL);
    CHECK_EQ(strcmp(v->name, names[k]), 0);
  }
}

/* The mutators insert every kind but those written by hand only
 * (SF_SK_HAND, e.g. NOP), whatever their place in SF_STEP_KINDS, and the
 * kinds about versions (SF_SK_VERSIONS) only into a scenario about
 * versions; the generator never draws either. */
TEST(mutators_insert_every_kind_but_hand_written_ones) {
  sf_scenario *s = alloc_s();
  unsigned seen[SF_STEP__COUNT] = {0}, seen_v[SF_STEP__COUNT] = {0};
  for (uint64_t seed = 0; seed < 4000; seed++) {
    sf_scenario_init(s);
    sf_mutate_scenario(s, seed);
    for (uint32_t i = 0; i < s->nsteps; i++)
      seen[s->steps[i].kind]++;
    CHECK_EQ(s->nversions, 0);
    sf_scenario_init(s); /* a scenario about versions: one node starts at 1 */
    s->nversions = 1;
    s->versions[0] = 1;
    sf_mutate_scenario(s, seed);
    for (uint32_t i = 0; i < s->nsteps; i++)
      seen_v[s->steps[i].kind]++;
    sf_generate_seed(seed, s);
    for (uint32_t i = 0; i < s->nsteps; i++)
      CHECK(!(sf_step_flags(s->steps[i].kind) & (SF_SK_HAND | SF_SK_VERSIONS)));
    CHECK_EQ(s->nversions, 0);
  }
  for (unsigned k = 1; k < SF_STEP__COUNT; k++) {
    if (sf_step_flags(k) & (SF_SK_HAND | SF_SK_VERSIONS))
      CHECK_EQ(seen[k], 0);
    else
      CHECK(seen[k] > 0);
    if (sf_step_flags(k) & SF_SK_VERSIONS)
      CHECK(seen_v[k] > 0);
  }
  CHECK(sf_step_flags(SF_STEP_NOP) & SF_SK_HAND);
  CHECK(sf_step_flags(SF_STEP_UPGRADE) & SF_SK_VERSIONS);
  free(s);
}

/* The starting versions: clamped, kept in one form (no trailing zeros),
 * through the codec and the text format alike. */
TEST(starting_versions_are_clamped_and_roundtrip) {
  sf_scenario *s = alloc_s(), *t = alloc_s();
  static uint8_t buf[SF_MAX_INPUT];
  sf_scenario_init(s);
  s->nversions = 5;
  s->versions[0] = 1, s->versions[1] = 0, s->versions[2] = SF_MAX_VERSIONS + 3;
  s->versions[3] = 0, s->versions[4] = 0;
  sf_normalize(s);
  CHECK_EQ(s->nversions, 3); /* the trailing zeros go */
  CHECK_EQ(s->versions[2], 3);
  size_t n = sf_encode(s, buf, sizeof buf);
  CHECK(n > 0 && n <= sizeof buf);
  CHECK_EQ(sf_decode_proto(buf, n, t), 0);
  CHECK_EQ(t->nversions, 3);
  CHECK(memcmp(t->versions, s->versions, 3) == 0);
  const char *text = "versions: [2, 0, 1]\nsteps { upgrade { node: 1 version: 17 } }\n";
  uint8_t *bin = NULL;
  size_t len = 0;
  char err[200];
  CHECK_EQ(sf_text_to_binary(text, strlen(text), &bin, &len, err, sizeof err), 0);
  CHECK_EQ(sf_decode_proto(bin, len, t), 0);
  free(bin);
  CHECK_EQ(t->nversions, 3);
  CHECK(t->versions[0] == 2 && t->versions[1] == 0 && t->versions[2] == 1);
  CHECK_EQ(t->nsteps, 1);
  CHECK(t->steps[0].kind == SF_STEP_UPGRADE && t->steps[0].node == 1 && t->steps[0].k == 1);
  free(s);
  free(t);
}

/* A target's version plan: nothing for a target of one version (its sweep
 * keeps its scenarios); for one of several, drawn from the seed after the
 * rest (which stays as sf_generate_seed drew it): half the seeds start a
 * mixed cluster, the other half upgrade nodes one at a time to the last
 * version. */
TEST(version_plans_leave_the_rest_of_the_scenario_alone) {
  sf_scenario *s = alloc_s(), *t = alloc_s();
  unsigned mixed = 0, rolling = 0;
  for (uint64_t seed = 1; seed <= 400; seed++) {
    sf_generate_seed(seed, s);
    *t = *s;
    sf_generate_versions(1, t);
    CHECK(memcmp(t, s, sizeof *t) == 0);
    sf_generate_versions(3, t);
    uint32_t ups = 0, kept = 0;
    for (uint32_t i = 0; i < t->nsteps; i++) {
      const sf_step *st = &t->steps[i];
      if (st->kind == SF_STEP_UPGRADE) {
        CHECK_EQ(st->k, 2); /* to the last version */
        ups++;
        continue;
      }
      CHECK(kept < s->nsteps && memcmp(st, &s->steps[kept], sizeof *st) == 0);
      kept++;
    }
    CHECK_EQ(kept, s->nsteps);
    CHECK(t->seed == s->seed && t->tape_len == s->tape_len);
    for (uint32_t i = 0; i < t->nversions; i++)
      CHECK(t->versions[i] < 3);
    CHECK(!(ups && t->nversions)); /* one plan or the other */
    mixed += t->nversions > 0;
    rolling += ups > 0;
    sf_scenario *u = alloc_s();
    sf_generate_seed(seed, u);
    sf_generate_versions(3, u);
    static uint8_t eu[SF_MAX_INPUT], et[SF_MAX_INPUT];
    size_t nu = sf_encode(u, eu, sizeof eu), nt = sf_encode(t, et, sizeof et);
    CHECK(nu == nt && nu <= sizeof eu && memcmp(eu, et, nu) == 0); /* a function of the seed */
    free(u);
  }
  CHECK(mixed > 120 && rolling > 120);
  free(s);
  free(t);
}

/* The one draw (harness/scenario/draw.c): kinds come in the proportion of
 * SF_STEP_KINDS' weights, from bytes and from a generator alike, and the
 * sweep's seeds draw every swarm amplifier and every disk fault (five of
 * the six amplifiers were never drawn before the draw was shared). */
TEST(one_draw_follows_the_weights_and_draws_every_amplifier) {
  static const unsigned weight[SF_STEP__COUNT] = {
#define X(K, name, shape, fault, flags, w, ends) [SF_STEP_##K] = (w),
      SF_STEP_KINDS(X)
#undef X
  };
  unsigned total = 0, seen[SF_STEP__COUNT] = {0}, n = 64000;
  for (unsigned k = 1; k < SF_STEP__COUNT; k++)
    total += weight[k];
  sf_choice c = sf_choice_rng(7);
  for (unsigned i = 0; i < n; i++)
    seen[sf_draw_kind(&c)]++;
  for (unsigned k = 1; k < SF_STEP__COUNT; k++) { /* within 25 % of its share */
    double want = (double)n * weight[k] / total;
    CHECK(seen[k] >= 0.75 * want && seen[k] <= 1.25 * want + 1);
  }
  uint8_t bytes[1] = {0};
  c = sf_choice_bytes(bytes, sizeof bytes); /* byte 0 and then zeros: the first row */
  CHECK_EQ(sf_draw_kind(&c), SF_STEP_PARTITION);
  sf_scenario *s = alloc_s();
  sf_swarm any = {0};
  sf_disk disk = {0};
  for (uint64_t seed = 0; seed < 400; seed++) {
    sf_generate_seed(seed, s);
#define OR_(field, type, bound, draw) any.field |= s->swarm.field;
    SF_SWARM_FIELDS(OR_)
#undef OR_
#define OR_(field, type, bound, draw, sim, fault) disk.field |= s->disk.field;
    SF_DISK_FIELDS(OR_)
#undef OR_
  }
#define NONZERO_(field, type, bound, ...) CHECK(any.field != 0);
  SF_SWARM_FIELDS(NONZERO_)
#undef NONZERO_
#define NONZERO_(field, type, bound, ...) CHECK(disk.field != 0);
  SF_DISK_FIELDS(NONZERO_)
#undef NONZERO_
  free(s);
}

/* Every row of SF_STEP_KINDS: a Step oneof field of its name, and a step of
 * it with every argument of its shape set survives normalisation and the
 * protobuf round trip unchanged; its description names it. */
TEST(every_step_kind_roundtrips) {
  sf_scenario *s = alloc_s(), *t = alloc_s();
  static uint8_t buf[SF_MAX_INPUT];
  for (unsigned k = 1; k < SF_STEP__COUNT; k++) {
    const char *name = sf_step_name(k);
    const ProtobufCFieldDescriptor *f =
        protobuf_c_message_descriptor_get_field_by_name(&simfuzz__step__descriptor, name);
    CHECK(f && (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) && f->type == PROTOBUF_C_TYPE_MESSAGE);
    sf_scenario_init(s);
    s->nsteps = 1;
    sf_step *st = &s->steps[0];
    memset(st, 0, sizeof *st);
    st->kind = (uint8_t)k;
    st->at_us = 1234;
    st->by_state = 1;
    st->after_event = 77;
    st->node = 3, st->peer = 5, st->flag = 0, st->k = 2, st->count = 3, st->interval_us = 7000;
    st->rate_ppm = 1234, st->mask_a = 5, st->mask_b = 2, st->key = 9, st->value = 11;
    st->offset_us = -5000, st->jump_us = 6000, st->drift_ppm = -1200;
    st->net.loss_ppm = 100, st->net.latency_min_us = 10, st->net.latency_max_us = 20;
    st->disk.write_eio_ppm = 50;
    st->ngroups = 3, st->group[0] = 1, st->group[2] = 2;
    sf_normalize(s);
    CHECK_EQ(s->nsteps, 1);
    size_t n = sf_encode(s, buf, sizeof buf);
    CHECK(n > 0 && n <= sizeof buf);
    CHECK_EQ(sf_decode_proto(buf, n, t), 0);
    CHECK_EQ(t->nsteps, 1);
    CHECK_EQ(t->steps[0].kind, k);
    CHECK(memcmp(&t->steps[0], st, sizeof *st) == 0);
    char d[512];
    sf_step_describe(st, 8, d, sizeof d);
    CHECK(strstr(d, name) != NULL);
    CHECK_EQ(sf_fault_steps(s), sf_step_fault(k) && !(sf_step_flags(k) & SF_SK_UNDO));
  }
  free(s);
  free(t);
}

/* A branch's future: at most max steps, in order of time, from the fork
 * on and within 2 s of it, each as a replay reads it back; half the faults
 * that have an end get it later: the restart of the crashed node itself. */
TEST(branch_futures_are_bounded_ordered_and_end_some_faults) {
  sf_scenario *s = alloc_s();
  sf_step out[6];
  uint32_t crashes = 0, restarted = 0, total = 0;
  for (uint64_t seed = 0; seed < 4000; seed++) {
    sf_generate_seed(seed % 40, s);
    uint64_t now = 100000 + seed % 900000;
    uint32_t max = 1 + seed % 6;
    uint32_t n = sf_branch_steps(s, now, seed, NULL, out, max);
    CHECK(n <= max);
    total += n;
    for (uint32_t i = 0; i < n; i++) {
      CHECK(out[i].at_us >= now && out[i].at_us <= now + 2000000);
      CHECK(i == 0 || out[i - 1].at_us <= out[i].at_us);
      sf_step again = out[i];
      CHECK(sf_step_normalize(&again) && memcmp(&again, &out[i], sizeof again) == 0);
      if (out[i].kind != SF_STEP_CRASH)
        continue;
      crashes++;
      for (uint32_t j = i + 1; j < n; j++)
        if (out[j].kind == SF_STEP_RESTART && out[j].node == out[i].node && !out[i].by_state &&
            !out[j].by_state) {
          restarted++;
          break;
        }
    }
    uint32_t m = sf_branch_steps(s, now, seed, NULL, out, max); /* deterministic */
    CHECK_EQ(m, n);
  }
  CHECK(total > 4000);
  CHECK(crashes > 100);
  CHECK(restarted * 4 > crashes && restarted * 4 < 3 * crashes); /* about half */
  free(s);
}

/* With a focus node, most of a future's steps that name one node name
 * that node by number (half of all steps are aimed, and a quarter of those
 * made crashes), and about one step in eight crashes it;
 * without, only chance does (1 in 8 numbers, half of them ranks). */
TEST(branch_futures_aim_at_the_focus_node) {
  sf_scenario *s = alloc_s();
  sf_step out[6];
  for (int focus = -1; focus < 3; focus++) {
    uint32_t node_steps = 0, aimed = 0, crashes = 0, steps = 0;
    for (uint64_t seed = 0; seed < 3000; seed++) {
      sf_generate_seed(seed % 40, s);
      uint32_t f = focus < 0 ? (uint32_t)(seed % 3) : (uint32_t)focus;
      sf_fork at;
      memset(&at, 0, sizeof at);
      at.focus = focus;
      uint32_t n = sf_branch_steps(s, 200000, seed, &at, out, 6);
      steps += n;
      for (uint32_t i = 0; i < n; i++) {
        crashes += out[i].kind == SF_STEP_CRASH && out[i].node == f && !out[i].by_state;
        if (sf_step_shape_of(out[i].kind) != SF_SHAPE_NODE ||
            (sf_step_flags(out[i].kind) & SF_SK_UNDO))
          continue;
        node_steps++;
        aimed += out[i].node == f && !out[i].by_state;
      }
    }
    CHECK(node_steps > 500);
    if (focus < 0) {
      CHECK(aimed * 5 < node_steps);
      CHECK(crashes * 50 < steps);
    } else {
      CHECK(aimed * 2 > node_steps && aimed * 10 < node_steps * 9);
      CHECK(crashes * 12 > steps && crashes * 5 < steps); /* about 1 in 8, plus chance */
    }
  }
  free(s);
}

/* Scenario `seed % 40` in s, and a fork of it with nothing in play but a
 * focus node by the seed (none, n0, n1 or n2). */
static sf_fork fork_of_seed(sf_scenario *s, uint64_t seed) {
  sf_generate_seed(seed % 40, s);
  sf_fork at;
  memset(&at, 0, sizeof at);
  at.focus = (int)(seed % 4) - 1;
  return at;
}

/* With sf_fork.anchor, about a quarter of a future's drawn steps wait for
 * the first, second or third rise to the top rank and name nodes by rank;
 * a cut among them may heal at the rise after. Without it, no step waits, and the futures are the
 * same as before anchors existed (the draws are the same). */
TEST(branch_futures_wait_for_rises_with_anchor) {
  sf_scenario *s = alloc_s();
  sf_step out[6], plain[6];
  uint32_t steps = 0, anchored = 0, by_count[SF_MAX_ON_CHANGE + 1] = {0}, heals = 0;
  for (uint64_t seed = 0; seed < 3000; seed++) {
    sf_fork at = fork_of_seed(s, seed);
    uint32_t m = sf_branch_steps(s, 200000, seed, &at, plain, 6);
    for (uint32_t i = 0; i < m; i++)
      CHECK_EQ(plain[i].on_change, 0);
    at.anchor = 1;
    uint32_t n = sf_branch_steps(s, 200000, seed, &at, out, 6);
    steps += n;
    for (uint32_t i = 0; i < n; i++) {
      const sf_step *st = &out[i];
      CHECK(st->on_change <= SF_MAX_ON_CHANGE);
      if (!st->on_change)
        continue;
      anchored++;
      by_count[st->on_change]++;
      CHECK(st->by_state || (sf_step_flags(st->kind) & SF_SK_NO_RANK));
      for (uint32_t j = 0; j < i && st->kind == SF_STEP_HEAL; j++) /* a cut's end */
        heals += out[j].at_us == st->at_us && out[j].on_change + 1 == st->on_change &&
                 sf_step_ends(out[j].kind) == SF_STEP_HEAL;
    }
  }
  CHECK(anchored * 8 > steps && anchored * 3 < steps);
  CHECK(by_count[1] > 100 && by_count[2] > 100 && by_count[3] > 100);
  CHECK(heals > 10);
  free(s);
}

/* With sf_fork.one_shot, about a quarter of the futures fail one allocation
 * (a FaultPoint step on SIM_FAULTPOINT_ALLOC, rate 0, one of the next 64
 * hits), at the fork or a little after; without it, none names that site,
 * and the futures are the same as before (the draws are the same). */
TEST(branch_futures_fail_one_allocation_with_one_shot) {
  sf_scenario *s = alloc_s();
  sf_step out[6], plain[6];
  uint32_t futures = 0, with = 0, at_fork = 0;
  for (uint64_t seed = 0; seed < 3000; seed++) {
    sf_fork at = fork_of_seed(s, seed);
    uint32_t m = sf_branch_steps(s, 200000, seed, &at, plain, 6);
    for (uint32_t i = 0; i < m; i++)
      CHECK(plain[i].kind != SF_STEP_FAULTPOINT || plain[i].k != SIM_FAULTPOINT_ALLOC);
    at.one_shot = 1;
    uint32_t n = sf_branch_steps(s, 200000, seed, &at, out, 6);
    futures += n > 0;
    int found = 0;
    for (uint32_t i = 0; i < n; i++) {
      const sf_step *st = &out[i];
      if (st->kind != SF_STEP_FAULTPOINT || st->k != SIM_FAULTPOINT_ALLOC)
        continue;
      CHECK(!found); /* one per future */
      found = 1;
      CHECK_EQ(st->rate_ppm, 0);
      CHECK_EQ(st->flag, 0);
      CHECK(st->count >= 1 && st->count <= 64);
      CHECK(st->at_us >= 200000);
      at_fork += st->at_us == 200000;
    }
    with += (uint32_t)found;
  }
  CHECK(with * 6 > futures && with * 3 < futures); /* about 1 in 4 */
  CHECK(at_fork * 3 > with);                       /* half at the fork itself */
  free(s);
}

/* A node down (or paused) at the fork is restarted (resumed), by number,
 * in about half the futures; without one, a restart of that node is rare. */
TEST(branch_futures_bring_back_nodes_out_of_play) {
  sf_scenario *s = alloc_s();
  sf_step out[6];
  for (int c = 0; c < 3; c++) {
    sf_fork at;
    memset(&at, 0, sizeof at);
    at.down = c == 1 ? 1u << 2 : 0;
    at.paused = c == 2 ? 1u << 2 : 0;
    uint8_t back = c == 2 ? SF_STEP_RESUME : SF_STEP_RESTART;
    uint32_t with = 0, futures = 0;
    for (uint64_t seed = 0; seed < 2000; seed++) {
      sf_generate_seed(seed % 40, s);
      uint32_t n = sf_branch_steps(s, 200000, seed, &at, out, 6);
      futures += n > 0;
      for (uint32_t i = 0; i < n; i++)
        if (out[i].kind == back && out[i].node == 2 && !out[i].by_state) {
          with++;
          break;
        }
    }
    CHECK(futures > 1900);
    if (c == 0)
      CHECK(with * 10 < futures);
    else
      CHECK(with * 5 > futures * 2 && with * 5 < futures * 3);
  }
  free(s);
}

/* A future forked with messages in flight acts on one of those links, by
 * number, in about half the futures (three in four of them on the focus
 * node's link): a hold now released late, a deliver of one of its pending
 * datagrams now, or a hold now and its last datagram delivered late (at
 * least 12.8 ms later).
 * Without links listed, such steps on those links are chance. */
TEST(branch_futures_act_on_messages_in_flight) {
  sf_scenario *s = alloc_s();
  sf_step out[6];
  for (int c = 0; c < 2; c++) {
    sf_fork at;
    memset(&at, 0, sizeof at);
    at.focus = 1;
    if (c) {
      at.nlinks = 2;
      at.link[0].from = 1, at.link[0].to = 2, at.link[0].pending = 3; /* the focus node's */
      at.link[1].from = 0, at.link[1].to = 2, at.link[1].pending = 1;
    }
    uint32_t futures = 0, moved = 0, mine = 0, late = 0, kinds[3] = {0, 0, 0};
    for (uint64_t seed = 0; seed < 2000; seed++) {
      sf_generate_seed(seed % 40, s);
      uint32_t n = sf_branch_steps(s, 200000, seed, &at, out, 6);
      futures += n > 0;
      for (uint32_t i = 0; i < n; i++) {
        const sf_step *st = &out[i];
        int focus_link = st->node == 1 && st->peer == 2, other = st->node == 0 && st->peer == 2;
        if (st->by_state || !(focus_link || other) || st->at_us != 200000 ||
            (st->kind != SF_STEP_HOLD && st->kind != SF_STEP_DELIVER))
          continue;
        moved++;
        mine += focus_link;
        kinds[st->kind == SF_STEP_DELIVER ? 0 : 1]++;
        CHECK(st->kind != SF_STEP_DELIVER || st->k < (focus_link ? 3u : 1u));
        for (uint32_t j = i + 1; j < n; j++) /* the held link's late step */
          if (st->kind == SF_STEP_HOLD && out[j].node == st->node && out[j].peer == st->peer &&
              (out[j].kind == SF_STEP_RELEASE || out[j].kind == SF_STEP_DELIVER)) {
            late += out[j].at_us >= 200000 + 12800; /* unless the run ends sooner */
            kinds[2] += out[j].kind == SF_STEP_DELIVER;
            break;
          }
        break;
      }
    }
    CHECK(futures > 1900);
    if (!c) {
      CHECK(moved * 50 < futures);
      continue;
    }
    CHECK(moved * 5 > futures * 2 && moved * 5 < futures * 3);
    CHECK(mine * 10 > moved * 7 && mine * 10 < moved * 9); /* 3/4 + 1/4 * 1/2 */
    CHECK(kinds[0] * 4 > moved && kinds[1] * 2 > moved && kinds[2] * 5 > moved);
    CHECK(late * 10 > kinds[1] * 9);
  }
  free(s);
}

TEST_MAIN(T(every_step_kind_roundtrips), T(fault_kinds_are_the_protos),
          T(starting_versions_are_clamped_and_roundtrip),
          T(version_plans_leave_the_rest_of_the_scenario_alone),
          T(one_draw_follows_the_weights_and_draws_every_amplifier),
          T(mutators_insert_every_kind_but_hand_written_ones),
          T(disk_stalls_are_clamped_described_and_generated),
          T(fault_point_nth_is_clamped_described_and_roundtrips),
          T(branch_futures_bring_back_nodes_out_of_play),
          T(branch_futures_act_on_messages_in_flight),
          T(branch_futures_are_bounded_ordered_and_end_some_faults),
          T(branch_futures_aim_at_the_focus_node), T(branch_futures_wait_for_rises_with_anchor),
          T(branch_futures_fail_one_allocation_with_one_shot), T(random_bytes_decode_bounded),
          T(unknown_fields_are_ignored), T(damaged_protobufs_are_salvaged),
          T(truncated_and_oversized_protobufs), T(extreme_values_are_clamped),
          T(generated_scenarios_roundtrip_and_inject_faults),
          T(mutator_outputs_decode_fit_and_are_deterministic), T(crossover_outputs_decode),
          T(afl_custom_mutator_and_trim), T(run_end_is_the_last_root_step_plus_the_tail))
