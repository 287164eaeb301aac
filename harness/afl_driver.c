/* AFL++ driver: persistent mode with shared-memory test cases, for the
 * target this binary was built for. Build with afl-clang-fast. With file
 * arguments it runs each file once (for replaying AFL++ crashes). */
#include "simfuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifndef __AFL_FUZZ_TESTCASE_LEN
/* Plain compiler: read stdin once (keeps the file buildable for tests). */
static unsigned char sf_stdin_buf[SF_MAX_INPUT];
#define __AFL_FUZZ_INIT()
#define __AFL_INIT()
#define __AFL_FUZZ_TESTCASE_BUF sf_stdin_buf
#define __AFL_FUZZ_TESTCASE_LEN sf_stdin_len
#define __AFL_LOOP(n) sf_once(&sf_stdin_len)
static ssize_t sf_stdin_len;
static int sf_once(ssize_t *len) {
  static int done;
  if (done)
    return 0;
  done = 1;
  *len = read(0, sf_stdin_buf, sizeof sf_stdin_buf);
  return *len >= 0;
}
#endif

__AFL_FUZZ_INIT();

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "%s: cannot open\n", path);
    return 2;
  }
  static unsigned char buf[SF_MAX_INPUT];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  sf_fuzz_one(sf_this_target, buf, n);
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1) {
    int rc = 0;
    for (int i = 1; i < argc; i++)
      rc |= run_file(argv[i]);
    return rc;
  }
  __AFL_INIT();
  unsigned char *buf = __AFL_FUZZ_TESTCASE_BUF;
  while (__AFL_LOOP(100000)) {
    size_t len = (size_t)__AFL_FUZZ_TESTCASE_LEN;
    sf_fuzz_one(sf_this_target, buf, len);
  }
  return 0;
}
