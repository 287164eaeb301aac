/* AFL++ driver: persistent mode with shared-memory test cases, for the
 * target this binary was built for. Build with afl-clang-fast. With file
 * arguments it runs each file once (for replaying AFL++ crashes). */
#include <simfuzz/simfuzz_runner.h>

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

/* Optional execution statistics (SIMFUZZ_EXEC_STATS=file): how inputs were
 * read and how many executed a fault step. Written every 1000 executions as
 * one line per process: "pid execs proto generated with_fault_step
 * salvaged". They describe the engine's inputs, never influence a run. */
typedef struct {
  FILE *f;
  unsigned long execs, proto, generated, faulted, salvaged;
} exec_stats;

static void run_counted(exec_stats *st, const unsigned char *buf, size_t len) {
  sf_run_opts o = {0};
  o.abort_on_failure = 1;
  o.feedback = 1;
  sf_result r;
  sf_run_input(sf_this_target, buf, len, &o, &r);
  st->execs++;
  st->proto += r.decoded == SF_DECODED_PROTO;
  st->generated += r.decoded == SF_DECODED_GENERATED;
  st->faulted += r.fault_steps_run > 0;
  st->salvaged += r.decoded == SF_DECODED_SALVAGED;
  if (st->execs % 1000 == 0) {
    long pid = (long)getpid(); /* engine statistics, not a run: simfuzz-allow-nondeterminism */
    fprintf(st->f, "%ld %lu %lu %lu %lu %lu\n", pid, st->execs, st->proto, st->generated,
            st->faulted, st->salvaged);
    fflush(st->f);
  }
}

int main(int argc, char **argv) {
  sf_driver_init();
  if (argc > 1) {
    int rc = 0;
    for (int i = 1; i < argc; i++)
      rc |= run_file(argv[i]);
    return rc;
  }
  exec_stats st = {0};
  const char *stats = getenv("SIMFUZZ_EXEC_STATS");
  if (stats)
    st.f = fopen(stats, "a");
  __AFL_INIT();
  unsigned char *buf = __AFL_FUZZ_TESTCASE_BUF;
  while (__AFL_LOOP(100000)) {
    size_t len = (size_t)__AFL_FUZZ_TESTCASE_LEN;
    if (st.f)
      run_counted(&st, buf, len);
    else
      sf_fuzz_one(sf_this_target, buf, len);
  }
  if (st.f)
    fclose(st.f);
  return 0;
}
