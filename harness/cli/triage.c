/* simfuzz triage: failure signatures for deduplicating crashes. */
#include "cli.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define HELP_TRIAGE                                                                                \
  "triage FILE... : name each input's failure, for deduplication\n\n"                              \
  "SYNOPSIS\n"                                                                                     \
  "  triage [--json] [--timeout S] [--rss-limit-mb MB] FILE...\n\n"                                \
  "DESCRIPTION\n"                                                                                  \
  "  Runs every FILE in forked children, so a crash or hang cannot take triage down:\n"            \
  "  twice in one child and once in another. It prints the failure signature: the\n"               \
  "  invariant and its check site, 'liveness', or for crashes of the system under test the\n"      \
  "  signal or exit status, sanitizer error and top frame, or the failed assert() and its\n"       \
  "  site; 'timeout' after --timeout S (default 20), 'out-of-memory' over --rss-limit-mb\n"        \
  "  MB (default 2048). Inputs\n"                                                                  \
  "  with equal signatures are the same bug. The three runs must agree on the signature\n"         \
  "  and trace hash, else the line says NOT\n"                                                     \
  "  DETERMINISTIC. With --json, one JSON object per line: file, target, status (ok,\n"            \
  "  failed, crash, timeout), signature, invariant, node, time_ns, events, hash,\n"                \
  "  deterministic, message. No file is written.\n\n"                                              \
  "EXIT STATUS\n"                                                                                  \
  "  0 every input passed, 1 some input failed, 2 an input could not be read (the others\n"        \
  "  are still triaged)\n"

static int cmd_triage(int argc, char **argv) {
  int json = 0, failed = 0, bad = 0;
  const cli_opt opts[] = {CLI_FLAG("--json", NULL, &json), CLI_LIMITS, CLI_END};
  int nfiles = cli_parse("triage", argc, argv, opts);
  if (nfiles < 0)
    return EXIT_USAGE;
  if (!nfiles)
    return cli_error("triage: usage: %s triage [--json] FILE...", cli_prog);
  sf_scenario *s = cli_new_scenario();
  for (int i = 0; i < nfiles; i++) {
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

const cli_command cli_cmd_triage = {"triage", cmd_triage, 1, HELP_TRIAGE};
