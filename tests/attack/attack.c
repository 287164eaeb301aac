/*
 * attack: the ladder test target (tests/targets/ladder.c) that misbehaves,
 * for the default job's attack tests (tests/attacks.sh, docs/RELIABILITY.md).
 *
 * Three nodes exchange heartbeats. Once node 0 has been crashed and
 * restarted twice and is then paused (a state that random roots almost
 * never reach and the explorer's branches do), the system under test does
 * what ATTACK names instead of failing an invariant:
 *   1 hang         an endless loop
 *   2 blowup       allocates 3 GiB (no limit the tests set lets it get there),
 *                  then spins
 *   3 two_aborts   abort() from one of two sites (by which node's event)
 *   4 exit0        exit(0)
 *   5 exit3        exit(3)
 *   6 leak         loses an allocation (LeakSanitizer's finding)
 *   7 overflow     reads past a heap block, in the libFuzzer binary only: a
 *                  finding only a sanitizer sees, as in a release build
 *                  of the command line (the tests' package is sanitized)
 *   8 spawn        forks and execs `sleep 25.25`, then aborts
 *   9 nondet       fails an invariant on every second run in a process
 *  10 assert       a library's assert() (lib/attack_lib.c) fails
 *  11 chatty       prints varying text and a fake error line, then aborts
 *  12 chdir        changes the working directory (to $ATTACK_CHDIR, as a
 *                  daemon does at start), then fails an invariant; in the
 *                  libFuzzer binary it aborts there instead (a crash file
 *                  written from inside the run)
 *  13 fdleak       leaves a file descriptor open on every run (a world's
 *                  creation opens /dev/null), then fails an invariant
 *  14 memleak      loses 1 MiB on every run (a world's creation allocates
 *                  and touches it), then fails an invariant
 *  15 closefds     closes every descriptor from 3 up, as a daemon does at
 *                  start, opens /dev/null three times (its log and pid
 *                  files, on the lowest free numbers), then fails an
 *                  invariant
 *  16 quiet        sends its standard output and error to /dev/null, as a
 *                  daemon does, then aborts from one of two sites (as 3)
 */
#include "attack_lib.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef ATTACK
#error "ATTACK must name the misbehaviour (1..16)"
#endif

static unsigned runs_in_process; /* ATTACK 9: state that survives a run, on purpose */
static void *volatile lost;

static void on_create(void) {
  runs_in_process++;
  if (ATTACK == 13) /* a descriptor that survives the run, on purpose */
    (void)open("/dev/null", O_RDONLY);
  if (ATTACK == 14) { /* memory that survives the run, on purpose */
    lost = malloc(1u << 20);
    if (lost)
      memset(lost, 3, 1u << 20);
  }
}
#define LADDER_ON_CREATE() on_create()
#include "../targets/ladder.h"

__attribute__((noinline)) static void abort_site_one(void) {
  fprintf(stderr, "attack: site one\n");
  abort();
}

__attribute__((noinline)) static void abort_site_two(void) {
  fprintf(stderr, "attack: site two\n");
  abort();
}

/* Defined in the libFuzzer binary only. */
extern int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) __attribute__((weak));

__attribute__((noinline)) static void misbehave(ladder *l, sim_world *w) {
  switch (ATTACK) {
  case 1: {
    volatile unsigned long spin = 0;
    for (;;)
      spin++;
  }
  case 2: {
    void *volatile keep = NULL;
    for (int i = 0; i < 192; i++) {
      void **p = malloc(16u << 20);
      if (p) {
        memset(p, 1, 16u << 20);
        *p = keep;
        keep = p;
      }
    }
    for (volatile unsigned long spin = 0;;)
      spin++;
  }
  case 3:
    if (sim_now(w) / SIM_NS_PER_MS % 2)
      abort_site_one();
    abort_site_two();
  case 4: exit(0);
  case 5: exit(3);
  case 6:
    if (!l->done) {
      lost = malloc(4096);
      memset(lost, 2, 4096);
      lost = NULL;
    }
    break;
  case 7:
    if (!l->done && LLVMFuzzerTestOneInput) {
      char *p = malloc(16);
      volatile char c = p[16 + (sim_now(w) & 1)];
      (void)c;
      free(p);
    }
    break;
  case 8: {
    pid_t p = fork();
    if (p == 0) {
      execlp("sleep", "sleep", "25.25", (char *)NULL);
      _exit(127);
    }
    abort();
  }
  case 9: SIM_INVARIANT(w, 0, runs_in_process % 2 == 0, "odd_runs", "an odd-numbered run"); break;
  case 10: attack_lib_check(l->boots[0]); break;
  case 11:
    fprintf(stderr, "ERROR: tab\there now, at %llu\n", (unsigned long long)sim_now(w));
    abort();
  case 12: {
    const char *dir = getenv("ATTACK_CHDIR");
    if (!dir || chdir(dir) != 0 || LLVMFuzzerTestOneInput)
      abort();
    SIM_INVARIANT(w, 0, 0, "moved", "the system under test changed the working directory");
    break;
  }
  case 13: SIM_INVARIANT(w, 0, 0, "leaky", "a state reached with descriptors left open"); break;
  case 14: SIM_INVARIANT(w, 0, 0, "leaky", "a state reached with memory lost"); break;
  case 15:
    for (int fd = 3; fd < 1024; fd++)
      close(fd);
    for (int i = 0; i < 3; i++)
      (void)open("/dev/null", O_WRONLY);
    SIM_INVARIANT(w, 0, 0, "daemonized", "the system closed descriptors it does not own");
    break;
  case 16: {
    int null = open("/dev/null", O_WRONLY);
    if (null < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
      break;
    close(null);
    if (sim_now(w) / SIM_NS_PER_MS % 2)
      abort_site_one();
    abort_site_two();
  }
  default: break;
  }
  l->done = 1;
}

SF_ORACLE static void check_ladder(void *ctx, sim_world *w) {
  ladder *l = ctx;
  int rung = l->boots[0] >= 3;
  SF_SOMETIMES(w, rung, "n0 restarted twice");
  SF_MAXIMIZE(w, "boots of n0", l->boots[0]);
  if (rung && sim_node_paused(w, 0))
    misbehave(l, w);
}

static const sf_check invariants[] = {{"ladder", check_ladder}, {NULL, NULL}};

SF_TARGET(.summary = "test only: a misbehaving ladder (attacks)", .min_nodes = 3, .max_nodes = 3,
          .default_nodes = 3, .create = create, .destroy = destroy, .ops = &ops,
          .invariants = invariants);
