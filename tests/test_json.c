/* The command line's JSON writer and reader (harness/cli/json.c): what one
 * tool writes (explore --json, reach --json, triage), another reads back
 * (the nightly job), nested arrays and objects included. */
#include "cli/cli.h"
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Write a reach-like object, as the tools do, into a string. */
static char *written(void) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CHECK(f != NULL);
  cli_json j;
  cj_begin(&j, f);
  cj_obj(&j);
  cj_kstr(&j, "target", "a \"quoted\", name]");
  cj_kint(&j, "inputs", 3);
  cj_karr(&j, "assertions");
  for (int i = 0; i < 3; i++) {
    cj_obj(&j);
    char name[32];
    snprintf(name, sizeof name, "site {%d}, [x]", i);
    cj_kstr(&j, "name", name);
    cj_kint(&j, "hits", i == 1 ? 0 : 10 + i);
    cj_karr(&j, "empty");
    cj_end_arr(&j);
    cj_end_obj(&j);
  }
  cj_end_arr(&j);
  cj_karr(&j, "crashed");
  cj_end_arr(&j);
  cj_kbool(&j, "done", 1);
  cj_end_obj(&j);
  fclose(f);
  return buf;
}

TEST(reader_finds_values_past_nested_arrays) {
  char *o = written(), v[64];
  CHECK_EQ(cli_json_field(o, "inputs", v, sizeof v), 0);
  CHECK_EQ(strcmp(v, "3"), 0);
  CHECK_EQ(cli_json_field(o, "target", v, sizeof v), 0);
  CHECK_EQ(strcmp(v, "a \"quoted\", name]"), 0);
  CHECK_EQ(cli_json_field(o, "done", v, sizeof v), 0); /* after two arrays */
  CHECK_EQ(strcmp(v, "true"), 0);
  CHECK_EQ(cli_json_field(o, "missing", v, sizeof v), -1);
  const char *it = cli_json_value(o, "assertions"), *e;
  CHECK(it && *it == '[');
  int n = 0, zero = -1;
  while ((e = cli_json_next(&it))) {
    char name[32], hits[16], want[32];
    CHECK_EQ(cli_json_field(e, "name", name, sizeof name), 0);
    CHECK_EQ(cli_json_field(e, "hits", hits, sizeof hits), 0);
    snprintf(want, sizeof want, "site {%d}, [x]", n);
    CHECK_EQ(strcmp(name, want), 0);
    if (!strcmp(hits, "0"))
      zero = n;
    n++;
  }
  CHECK_EQ(n, 3);
  CHECK_EQ(zero, 1);
  it = cli_json_value(o, "crashed");
  CHECK(it && cli_json_next(&it) == NULL); /* an empty array */
  free(o);
}

TEST(reader_refuses_what_does_not_end) {
  char v[16];
  static const char *const bad[] = {
      "",
      "[1]",
      "{\"a\": \"open",
      "{\"a\": [1, {\"b\": 2}",
      "{\"a\" 1, \"b\": 2",
      ("{\"a\": "
       "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]], "
       "\"b\": 1}")};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    CHECK_EQ(cli_json_field(bad[i], "b", v, sizeof v), -1);
  const char *it = "[1, \"unterminated";
  CHECK(cli_json_next(&it) != NULL); /* 1 */
  CHECK(cli_json_next(&it) == NULL);
  char tiny[4];
  CHECK_EQ(cli_json_field("{\"a\": 123456}", "a", tiny, sizeof tiny), 0);
  CHECK_EQ(strcmp(tiny, "123"), 0); /* cut to the room given */
}

TEST_MAIN(T(reader_finds_values_past_nested_arrays), T(reader_refuses_what_does_not_end))
