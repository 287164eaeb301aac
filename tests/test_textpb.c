/* The protobuf text format parser: every case below was checked against
 * `protoc --encode=simfuzz.Scenario` (protobuf 3.21): the same bytes for
 * what protoc accepts, an error for what it rejects. */
#include "scenario/textpb.h"
#include "testlib.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *text;
  const char *hex; /* expected encoding, or NULL: must be rejected */
  const char *why; /* part of the error message */
} tcase;

static const tcase cases[] = {
    {"nodes: 5", "1005", NULL},
    {"nodes: 0005", "1005", NULL}, /* octal */
    {"nodes: 010", "1008", NULL},
    {"nodes: 09", NULL, "octal"},
    {"nodes: 0x10", "1010", NULL},
    {"nodes: 0X1F", "101f", NULL},
    {"nodes: 0x", NULL, "hex digits"},
    {"nodes: 00000000000000000000000000000000000000000000000000000000000000000000000005", "1005",
     NULL},
    {"seed: 18446744073709551615", "18ffffffffffffffffff01", NULL},
    {"seed: 18446744073709551616", NULL, "out of range"},
    {"seed: 0x10000000000000000", NULL, "out of range"},
    {"nodes: 4294967295", "10ffffffff0f", NULL},
    {"nodes: 4294967296", NULL, "out of range"},
    {"nodes: true", NULL, "expected integer"},
    {"nodes: t", NULL, "expected integer"},
    {"nodes: -true", NULL, "expected integer"},
    {"nodes: -5", NULL, "expected integer"}, /* no sign for unsigned fields */
    {"seed: -0", NULL, "expected integer"},
    {"nodes: +5", NULL, "expected integer"},
    {"nodes: 1.", NULL, "expected integer"},
    {"nodes: 1e3", NULL, "expected integer"},
    {"nodes: 5abc", NULL, "need space"},
    {"nodes: 5 nodes: 6", NULL, "specified multiple times"},
    {"nodes: 5;", "1005", NULL},
    {"nodes: 5,", "1005", NULL},
    {"nodes:5 seed:6", "10051806", NULL},
    {"#comment\nnodes: 5", "1005", NULL},
    {"fifo_tiebreak: t", "6001", NULL},
    {"fifo_tiebreak: True", "6001", NULL},
    {"fifo_tiebreak: 1", "6001", NULL},
    {"fifo_tiebreak: 0x1", "6001", NULL},
    {"fifo_tiebreak: 2", NULL, "out of range"},
    {"fifo_tiebreak: tRue", NULL, "boolean"},
    {"steps { clock { offset_us: -5 } }", "3205ba01021009", NULL},
    {"steps { clock { offset_us: - 5 } }", "3205ba01021009", NULL},
    {"steps { clock { offset_us: -0x10 } }", "3205ba0102101f", NULL},
    {"steps { clock { offset_us: -00 } }", "3203ba0100", NULL},
    {"steps { clock { offset_us: 07 } }", "3205ba0102100e", NULL},
    {"steps { clock { offset_us: -9223372036854775808 } }", "320eba010b10ffffffffffffffffff01",
     NULL},
    {"steps { clock { offset_us: -9223372036854775809 } }", NULL, "out of range"},
    {"steps { clock { drift_ppm: -2147483648 } }", "3209ba010618ffffffff0f", NULL},
    {"steps { clock { drift_ppm: -2147483649 } }", NULL, "out of range"},
    {"choices: \"\\x\"", NULL, "hex digits"},
    {"choices: \"\\777\"", "3a01ff", NULL},
    {"choices: \"\\400\"", "3a0100", NULL},
    {"choices: \"\\377\"", "3a01ff", NULL},
    {"choices: \"\\xfff\"", "3a02ff66", NULL},
    {"choices: \"\\u0041\"", "3a0141", NULL},
    {"choices: \"\\q\"", NULL, "invalid escape"},
    {"choices: 'ab' \"cd\"", "3a0461626364", NULL},
    {"choices: \"\\101\\x41\\n\\a\"", "3a0441410a07", NULL},
    {"choices: \"a\nb\"", NULL, "line"},
    {"choices: \"abc", NULL, "unterminated"},
    {"steps { at_us: 1 heal {} } steps: { at_us: 2 heal: {} }", "320408015a00320408025a00", NULL},
    {"steps < at_us: 1 heal <> >", "320408015a00", NULL},
    {"steps { at_us: 1 heal {} crash {} }", NULL, "oneof"},
    {"steps { at_us: 1", NULL, "end of input"},
    {"bogus: 1", NULL, "no field named \"bogus\""},
    {"steps { split { group: [1, 2, 3] } }", "32076a050a03010203", NULL},
};

TEST(cases_match_protoc) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const tcase *c = &cases[i];
    uint8_t *bin = NULL;
    size_t n = 0;
    char err[256];
    int rc = sf_text_to_binary(c->text, strlen(c->text), &bin, &n, err, sizeof err);
    if (!c->hex) {
      if (rc == 0 || !strstr(err, c->why)) {
        fprintf(stderr, "case %zu (%s): want an error with '%s', got rc %d '%s'\n", i, c->text,
                c->why, rc, err);
        exit(1);
      }
      continue;
    }
    char hex[512] = "";
    for (size_t k = 0; rc == 0 && k < n && k < 200; k++)
      snprintf(hex + 2 * k, sizeof hex - 2 * k, "%02x", bin[k]);
    if (rc != 0 || strcmp(hex, c->hex)) {
      fprintf(stderr, "case %zu (%s): want %s, got rc %d '%s' %s\n", i, c->text, c->hex, rc, hex,
              rc ? err : "");
      exit(1);
    }
    free(bin);
  }
}

/* Big inputs: nothing is cut, and the time is linear (a quadratic parser
 * took 8.6 s for 64 KiB under ASan; this is 4 MiB). */
TEST(large_text_is_whole_and_linear) {
  size_t steps = 60000, cap = steps * 40 + 1024, len = 0;
  char *t = test_alloc(cap);
  for (size_t i = 0; i < steps; i++)
    len += (size_t)snprintf(t + len, cap - len, "steps { at_us: %zu heal { } }\n", i);
  len += (size_t)snprintf(t + len, cap - len, "choices: \"");
  for (int i = 0; i < 100000; i++)
    t[len++] = 'x';
  len += (size_t)snprintf(t + len, cap - len, "\"\n");
  uint8_t *bin;
  size_t n;
  char err[256];
  CHECK_EQ(sf_text_to_binary(t, len, &bin, &n, err, sizeof err), 0);
  CHECK(n > 100000 + steps * 4);
  free(bin);
  free(t);
}

TEST(every_byte_prefix_of_a_scenario_is_safe) {
  const char *t = "version: 1 nodes: 3 seed: 7 steps { at_us: 100 partition { a: 1 b: 6 } }\n"
                  "steps { at_us: 200 clock { node: 1 offset_us: -50 drift_ppm: 100 } }\n"
                  "choices: \"\\001\\xff\\u00e9ab\" fifo_tiebreak: true\n";
  size_t len = strlen(t);
  int whole = 0;
  for (size_t k = 0; k <= len; k++) { /* never crashes, leaks or reads past k */
    char *p = test_alloc(k ? k : 1);
    memcpy(p, t, k);
    uint8_t *bin = NULL;
    size_t n;
    char err[64];
    int rc = sf_text_to_binary(p, k, &bin, &n, err, sizeof err);
    if (rc == 0)
      free(bin);
    whole = k == len && rc == 0; /* the whole text is a scenario */
    free(p);
  }
  CHECK(whole);
}

TEST_MAIN(T(cases_match_protoc), T(large_text_is_whole_and_linear),
          T(every_byte_prefix_of_a_scenario_is_safe))
