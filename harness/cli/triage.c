/* simfuzz triage: failure signatures for deduplicating crashes. */
#include "cli.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int cmd_triage(int argc, char **argv) {
  int json = 0, nfiles = 0, failed = 0, bad = 0;
  for (int i = 0; i < argc; i++) {
    int lim = cli_limit_option(argc, argv, &i);
    if (lim < 0)
      return EXIT_USAGE;
    if (lim) {
      argv[i - 1] = argv[i] = "";
      continue;
    }
    if (!strcmp(argv[i], "--json"))
      json = 1;
    else if (argv[i][0] == '-' && argv[i][1])
      return cli_error("triage: unknown option '%s' (see: %s help triage)", argv[i], cli_prog);
    else
      nfiles++;
  }
  if (!nfiles)
    return cli_error("triage: usage: %s triage [--json] FILE...", cli_prog);
  sf_scenario *s = cli_new_scenario();
  for (int i = 0; i < argc; i++) {
    if ((argv[i][0] == '-' && argv[i][1]) || !argv[i][0])
      continue; /* options, and the limit options blanked above */
    cli_input_kind kind;
    if (cli_load(argv[i], s, &kind, NULL) < 0) {
      bad = 1;
      continue;
    }
    cli_outcome a, b;
    cli_run_isolated(s, &a, 1); /* twice in one process ... */
    cli_run_isolated(s, &b, 0); /* ... and once in a fresh one: all must agree */
    /* a crash, hang or blow-up has no trace hash to compare */
    int ended_early = !strcmp(a.invariant, "crash") || !strcmp(a.invariant, "timeout") ||
                      !strcmp(a.invariant, "out-of-memory");
    int det = !a.nondet && !strcmp(a.sig, b.sig) && (ended_early || a.hash == b.hash);
    if (a.sig[0])
      failed = 1;
    if (json) {
      cli_json j;
      cj_begin(&j, stdout);
      cj_obj(&j);
      cj_kstr(&j, "file", argv[i]);
      cj_kstr(&j, "target", cli_target->name);
      cj_kstr(&j, "status",
              !a.sig[0]                               ? "ok"
              : !strcmp(a.invariant, "crash")         ? "crash"
              : !strcmp(a.invariant, "timeout")       ? "timeout"
              : !strcmp(a.invariant, "out-of-memory") ? "out-of-memory"
                                                      : "failed");
      cj_kstr(&j, "signature", a.sig);
      cj_kstr(&j, "invariant", a.invariant);
      cj_kint(&j, "node", a.node);
      cj_kint(&j, "time_ns", (int64_t)a.time_ns);
      cj_kint(&j, "events", (int64_t)a.events);
      char hex[17];
      snprintf(hex, sizeof hex, "%016" PRIx64, a.hash);
      cj_kstr(&j, "hash", hex);
      cj_kbool(&j, "deterministic", det);
      cj_kstr(&j, "message", a.message);
      cj_end_obj(&j);
      putchar('\n');
    } else if (a.sig[0]) {
      printf("%s: %s%s\n", argv[i], a.sig, det ? "" : " [NOT DETERMINISTIC]");
    } else {
      printf("%s: ok%s\n", argv[i], det ? "" : " [NOT DETERMINISTIC]");
    }
    fflush(stdout);
  }
  free(s);
  return bad ? EXIT_USAGE : failed ? EXIT_FAILED : EXIT_OK;
}
