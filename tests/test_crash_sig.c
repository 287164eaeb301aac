/* The signature of a crash (harness/cli/isolate.c, cli_crash_sig): what
 * crash deduplication and confirmation compare, so the same failure must
 * give the same signature however the process chose to end. */
#include "cli/cli.h"
#include "testlib.h"

#include <string.h>
#include <sys/wait.h>

static const char leak_report[] =
    "INFO: Running with entropic power schedule (0xFF, 100).\n"
    "Running: crash-99ede\n"
    "\n"
    "=================================================================\n"
    "==18147==ERROR: LeakSanitizer: detected memory leaks\n"
    "\n"
    "Direct leak of 4096 byte(s) in 1 object(s) allocated from:\n"
    "    #0 0x5581d33f2c9e in malloc (/b/attack_leak_fuzzer+0x127c9e)\n"
    "    #1 0x5581d342e0fc in misbehave /src/attack.c:124:14\n"
    "    #2 0x5581d345ea30 in after_event /src/run.c:169:5\n"
    "\n"
    "SUMMARY: AddressSanitizer: 4096 byte(s) leaked in 1 allocation(s).\n";

static int exited(int code) {
  return (code & 0xff) << 8; /* a wait status as waitpid gives it */
}

/* libFuzzer ends a leak found at exit with 77 most times and with
 * LeakSanitizer's 1 now and then: one failure, one signature. */
TEST(a_sanitizer_report_is_one_failure_whatever_the_exit_code) {
  char a[512], b[512];
  CHECK(WIFEXITED(exited(77)) && WEXITSTATUS(exited(77)) == 77);
  cli_crash_sig(leak_report, exited(77), CLI_END_CRASH, a, sizeof a);
  cli_crash_sig(leak_report, exited(1), CLI_END_CRASH, b, sizeof b);
  CHECK(strcmp(a, b) == 0);
  CHECK(strstr(a, "LeakSanitizer: detected") != NULL);
  CHECK(strstr(a, "misbehave") != NULL);
}

/* Without a sanitizer's report, the exit code is all there is to tell
 * failures apart: exit(3) and exit(4) stay two failures. */
TEST(a_plain_exit_keeps_its_code) {
  char a[512], b[512];
  cli_crash_sig("some output\n", exited(3), CLI_END_CRASH, a, sizeof a);
  cli_crash_sig("some output\n", exited(4), CLI_END_CRASH, b, sizeof b);
  CHECK(strcmp(a, "crash: exit 3") == 0);
  CHECK(strcmp(b, "crash: exit 4") == 0);
}

TEST_MAIN(T(a_sanitizer_report_is_one_failure_whatever_the_exit_code),
          T(a_plain_exit_keeps_its_code))
