/* simfuzz triage, and the isolated run that it shares with minimize:
 * failure signatures for deduplicating crashes. */
#include "cli.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Signature of a crash from its stderr: sanitizer error type + top frame. */
static void crash_sig(const char *err, int signo, char *sig, size_t cap) {
  const char *e = strstr(err, "ERROR: ");
  char type[128] = "", frame[160] = "";
  if (e) {
    e += 7;
    size_t n = strcspn(e, "\n");
    /* "AddressSanitizer: heap-use-after-free on address ..." -> 2 words */
    const char *sp = memchr(e, ' ', n);
    const char *sp2 = sp ? memchr(sp + 1, ' ', (size_t)(e + n - sp - 1)) : NULL;
    size_t tl = sp2 ? (size_t)(sp2 - e) : n;
    snprintf(type, sizeof type, "%.*s", (int)(tl < sizeof type - 1 ? tl : sizeof type - 1), e);
  }
  const char *ub = strstr(err, "SUMMARY: UndefinedBehaviorSanitizer: ");
  if (!e && ub) { /* UBSan without a stack: its summary names kind and place */
    ub += 37;
    size_t n = strcspn(ub, "\n");
    snprintf(type, sizeof type, "UBSan %.*s", (int)(n < 100 ? n : 100), ub);
  }
  const char *f = strstr(err, "#0 ");
  if (f) {
    size_t line = strcspn(f, "\n");
    const char *in = strstr(f, " in ");
    const char *mod = memchr(f, '(', line);
    if (in && in < f + line) { /* symbolized: the function */
      in += 4;
      size_t n = strcspn(in, " \n");
      snprintf(frame, sizeof frame, "%.*s", (int)(n < sizeof frame - 1 ? n : sizeof frame - 1), in);
    } else if (mod) { /* not symbolized: module+offset, stable for one binary */
      const char *base = mod + 1;
      for (const char *q = base; q < f + line && *q != ')'; q++)
        if (*q == '/')
          base = q + 1;
      size_t n = strcspn(base, ")\n");
      snprintf(frame, sizeof frame, "%.*s", (int)(n < sizeof frame - 1 ? n : sizeof frame - 1),
               base);
    }
  }
  if (signo > 0)
    snprintf(sig, cap, "crash: signal %d %s %s", signo, type, frame);
  else /* sanitizers report, then exit with a status */
    snprintf(sig, cap, "crash: exit %d %s %s", -signo, type, frame);
}

void cli_run_isolated(const sf_scenario *s, cli_outcome *o, int twice) {
  int fd[2];
  memset(o, 0, sizeof *o);
  o->node = -1;
  if (pipe(fd) != 0) {
    snprintf(o->sig, sizeof o->sig, "internal: pipe failed");
    return;
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    dup2(fd[1], 2);
    alarm(20); /* a hanging run ends as a timeout */
    sf_result r, r2;
    sf_run(cli_target, s, NULL, &r);
    int nondet = 0;
    if (twice) { /* again in this process: state that survives a run shows */
      sf_run(cli_target, s, NULL, &r2);
      nondet = r2.hash != r.hash || r2.failed != r.failed;
    }
    char line[1024];
    const sim_failure *fl = &r.failure;
    if (r.failed && fl->is_liveness)
      snprintf(line, sizeof line,
               "\nSFRESULT %" PRIu64 " %016" PRIx64 " %" PRIu64 " %d liveness|liveness|%s\n",
               r.stats.events, r.hash, fl->time, fl->node, fl->message);
    else if (r.failed)
      snprintf(line, sizeof line,
               "\nSFRESULT %" PRIu64 " %016" PRIx64 " %" PRIu64 " %d invariant %s at %s:%d|%s|%s\n",
               r.stats.events, r.hash, fl->time, fl->node, fl->name, fl->file ? fl->file : "?",
               fl->line, fl->name ? fl->name : "?", fl->message);
    else
      snprintf(line, sizeof line, "\nSFRESULT %" PRIu64 " %016" PRIx64 " %" PRIu64 " -1 ok||\n",
               r.stats.events, r.hash, r.end_time);
    ssize_t w = write(2, line, strlen(line));
    if (nondet)
      w = write(2, "SFNONDET\n", 9);
    (void)w;
    _exit(0);
  }
  close(fd[1]);
  static char buf[65536];
  size_t n = 0;
  ssize_t k;
  while ((k = read(fd[0], buf + n, sizeof buf - 1 - n)) > 0)
    n += (size_t)k;
  buf[n] = 0;
  close(fd[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  if (WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st) != 0)) {
    int signo = WIFSIGNALED(st) ? WTERMSIG(st) : -WEXITSTATUS(st);
    if (signo == SIGALRM) {
      snprintf(o->sig, sizeof o->sig, "timeout");
      snprintf(o->invariant, sizeof o->invariant, "timeout");
    } else {
      crash_sig(buf, signo, o->sig, sizeof o->sig);
      snprintf(o->invariant, sizeof o->invariant, "crash");
      const char *e = strstr(buf, "ERROR: ");
      if (e)
        snprintf(o->message, sizeof o->message, "%.*s", (int)strcspn(e, "\n"), e);
    }
    return;
  }
  const char *r = strstr(buf, "SFRESULT ");
  if (!r)
    return;
  o->nondet = strstr(r, "SFNONDET") != NULL;
  char rest[900] = "";
  if (sscanf(r, "SFRESULT %" SCNu64 " %" SCNx64 " %" SCNu64 " %d %899[^\n]", &o->events, &o->hash,
             &o->time_ns, &o->node, rest) != 5)
    return;
  /* rest: "signature|invariant|message" */
  char *bar1 = strchr(rest, '|');
  char *bar2 = bar1 ? strchr(bar1 + 1, '|') : NULL;
  if (!bar1 || !bar2)
    return;
  *bar1 = *bar2 = 0;
  if (strcmp(rest, "ok")) {
    snprintf(o->sig, sizeof o->sig, "%s", rest);
    snprintf(o->invariant, sizeof o->invariant, "%s", bar1 + 1);
    snprintf(o->message, sizeof o->message, "%s", bar2 + 1);
  }
}

int cmd_triage(int argc, char **argv) {
  int json = 0, nfiles = 0, failed = 0, bad = 0;
  for (int i = 0; i < argc; i++) {
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
    if (argv[i][0] == '-' && argv[i][1])
      continue;
    cli_input_kind kind;
    if (cli_load(argv[i], s, &kind, NULL) < 0) {
      bad = 1;
      continue;
    }
    cli_outcome a, b;
    cli_run_isolated(s, &a, 1); /* twice in one process ... */
    cli_run_isolated(s, &b, 0); /* ... and once in a fresh one: all must agree */
    int det = !a.nondet && !strcmp(a.sig, b.sig) && (a.invariant[0] == 'c' || a.hash == b.hash);
    if (a.sig[0])
      failed = 1;
    if (json) {
      printf("{\"file\": \"");
      cli_json_str(stdout, argv[i]);
      printf("\", \"target\": \"%s\", \"status\": \"%s\", \"signature\": \"", cli_target->name,
             !a.sig[0]                         ? "ok"
             : !strcmp(a.invariant, "crash")   ? "crash"
             : !strcmp(a.invariant, "timeout") ? "timeout"
                                               : "failed");
      cli_json_str(stdout, a.sig);
      printf("\", \"invariant\": \"");
      cli_json_str(stdout, a.invariant);
      printf("\", \"node\": %d, \"time_ns\": %" PRIu64 ", \"events\": %" PRIu64
             ", \"hash\": \"%016" PRIx64 "\", \"deterministic\": %s, \"message\": \"",
             a.node, a.time_ns, a.events, a.hash, det ? "true" : "false");
      cli_json_str(stdout, a.message);
      printf("\"}\n");
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
