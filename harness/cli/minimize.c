/* simfuzz minimize: scenario-level reduction that keeps the same failure
 * (and, with --passes or --differs, what a control build does with it). */
#include "cli.h"

#include "engine/mutate.h"
#include "scenario/textpb.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
  uint64_t tries, max_tries;
  const char *want; /* the signature to keep */
  int quiet;
  uint32_t steps0;
  const char *control;  /* --passes or --differs: the control program, or NULL */
  int strict;           /* --passes: the control must pass every kept candidate */
  const char *want_inv; /* the invariant kept ("crash" for a crash), compared with the control's */
  char dir[4200];       /* its private directory for the candidate file */
  char file[4300];      /* the candidate the control replays */
  uint64_t control_runs;
  size_t bytes0;       /* the input's size */
  cli_input_kind kind; /* and how it was read */
} minimizer;

/* The control's replay runs a candidate twice: twice the run limit. */
static uint64_t control_limit_ms(void) {
  return 2 * (cli_run_limits.time_ms ? cli_run_limits.time_ms : CLI_DEFAULT_TIMEOUT_MS);
}

static const char *control_opt(const minimizer *m) {
  return m->strict ? "--passes" : "--differs";
}

/* Scenario s encoded, in a new buffer of *len bytes (free it); NULL if
 * out of memory. */
static uint8_t *encoded(const sf_scenario *s, size_t *len) {
  *len = sf_encoded_size(s);
  uint8_t *buf = malloc(*len ? *len : 1);
  if (buf) {
    size_t n = sf_encode(s, buf, *len);
    SIM_ASSERT(n == *len);
  }
  return buf;
}

/* Write scenario c to the control's candidate file; 0 or -1. */
static int write_candidate(const minimizer *m, const sf_scenario *c) {
  size_t len;
  uint8_t *buf = encoded(c, &len);
  int rc = buf ? cli_write_corpus_file(m->file, buf, len) : -1;
  free(buf);
  return rc;
}

/* What the control's `replay -q` said of the candidate, from its summary
 * line: "" if it passed, else the invariant it failed ("liveness"
 * included), or "?" (a crash, or no summary). */
static void control_verdict(const char *text, char *inv, size_t cap) {
  const char *at = NULL;
  for (const char *p = strstr(text, "-> "); p; p = strstr(p + 1, "-> "))
    at = p;
  snprintf(inv, cap, "?");
  if (at && !strncmp(at, "-> ok", 5))
    inv[0] = 0;
  else if (at && !strncmp(at, "-> FAILED ", 10))
    snprintf(inv, cap, "%.*s", (int)strcspn(at + 10, " \n"), at + 10);
}

/* Is the failure kept a crash of the system under test (or a timeout, or
 * out of memory) rather than an invariant or liveness? */
static int kept_crash(const minimizer *m) {
  return !strcmp(m->want_inv, "crash") || !strcmp(m->want_inv, "timeout") ||
         !strcmp(m->want_inv, "out-of-memory");
}

/* Does the control program keep candidate c? It replays the candidate
 * file (`PROG replay -q FILE`, two runs) within twice the run limit.
 * It passes it: yes. --differs: it fails another invariant, or crashes
 * where this target fails an invariant: yes too. It fails the same
 * invariant, or crashes when this target crashes, or does not start, or
 * outlives the limit: no. */
static int control_keeps(minimizer *m, const sf_scenario *c) {
  int fd[2];
  if (write_candidate(m, c) != 0 || pipe(fd) != 0)
    return 0;
  /* the read end: not the child's, and never blocking (read once the
   * child has ended) */
  fcntl(fd[0], F_SETFD, FD_CLOEXEC);
  fcntl(fd[0], F_SETFL, O_NONBLOCK);
  m->control_runs++;
  char *argv[] = {(char *)m->control, "replay", "-q", m->file, NULL};
  pid_t pid = cli_spawn_program(m->control, argv, fd[1], -1);
  close(fd[1]);
  int st = 0, ended = pid >= 0 && cli_wait_program_within(pid, control_limit_ms(), &st) == 0;
  char text[4096], inv[128];
  ssize_t k = 0, got = 0;
  while (ended && got < (ssize_t)sizeof text - 1 &&
         (k = read(fd[0], text + got, sizeof text - 1 - (size_t)got)) > 0)
    got += k; /* the child has ended: the pipe holds what it wrote (a line) */
  close(fd[0]);
  text[got] = 0;
  if (ended && WIFEXITED(st) && WEXITSTATUS(st) == EXIT_OK)
    return 1;
  if (m->strict || !ended || !WIFEXITED(st) || WEXITSTATUS(st) > EXIT_FAILED)
    return !m->strict && ended && WIFSIGNALED(st) && !kept_crash(m); /* crash vs invariant */
  control_verdict(text, inv, sizeof inv);
  return !inv[0] || (strcmp(inv, "?") && strcmp(inv, m->want_inv));
}

/* Does candidate c still fail the same way (and does the control, if any,
 * still keep it)? Counts the try. */
static int keeps(minimizer *m, sf_scenario *c, cli_outcome *o) {
  if (m->tries >= m->max_tries)
    return 0;
  m->tries++;
  sf_normalize(c);
  cli_run_isolated(c, o, 0);
  if (!m->quiet && (m->tries % 20 == 0))
    fprintf(stderr, "\rminimize: %" PRIu64 " tries, %" PRIu32 " -> %" PRIu32 " steps   ", m->tries,
            m->steps0, c->nsteps);
  return !strcmp(o->sig, m->want) && (!m->control || control_keeps(m, c));
}

/* Delta debugging over steps: remove chunks of size n/2, n/4, ..., 1. */
static int ddmin_steps(minimizer *m, sf_scenario *s, sf_scenario *c) {
  int changed = 0;
  cli_outcome o;
  for (uint32_t chunk = s->nsteps / 2 ? s->nsteps / 2 : 1; chunk >= 1; chunk /= 2) {
    for (uint32_t at = 0; at < s->nsteps && m->tries < m->max_tries;) {
      *c = *s;
      uint32_t len = at + chunk > c->nsteps ? c->nsteps - at : chunk;
      memmove(&c->steps[at], &c->steps[at + len], (c->nsteps - at - len) * sizeof c->steps[0]);
      c->nsteps -= len;
      if (keeps(m, c, &o)) {
        *s = *c;
        changed = 1; /* the same position now holds the next steps */
      } else {
        at += chunk;
      }
    }
    if (chunk == 1)
      break;
  }
  return changed;
}

/* Equal scenarios (only the defined parts: steps and tape beyond their
 * counts are never read). */
static int same(const sf_scenario *a, const sf_scenario *b) {
  return !memcmp(a, b, offsetof(sf_scenario, steps)) &&
         !memcmp(a->steps, b->steps, a->nsteps * sizeof a->steps[0]) &&
         a->tape_len == b->tape_len && !memcmp(a->tape, b->tape, a->tape_len);
}

/* Try one modified copy; keep it if it still fails the same way. */
#define TRY(m, s, c, edit)                                                                         \
  do {                                                                                             \
    cli_outcome o_;                                                                                \
    *(c) = *(s);                                                                                   \
    edit;                                                                                          \
    if (!same((c), (s)) && keeps((m), (c), &o_)) {                                                 \
      *(s) = *(c);                                                                                 \
      changed = 1;                                                                                 \
    }                                                                                              \
  } while (0)

/* Simpler arguments a step of a shape may do with, tried in this order:
 * one field (or a whole parameter block) set to a plain value. */
typedef struct {
  sf_step_shape shape;
  size_t off, size; /* the field in sf_step */
  uint64_t value;   /* what it becomes (0 for a block: zeroed) */
} simplification;

#define SIMPLER(sh, field, v)                                                                      \
  { SF_SHAPE_##sh, offsetof(sf_step, field), sizeof((sf_step *)0)->field, v }
static const simplification simpler[] = {
    SIMPLER(OP, count, 1),
    SIMPLER(OP, interval_us, 0),
    SIMPLER(OP, value, 0),
    SIMPLER(OP, key, 0),
    SIMPLER(OP, k, 0),
    SIMPLER(LINK, net, 0),
#define SIMPLER_LINK_FAULT_(field, fault, amp) SIMPLER(LINK, net.field, 0),
    SF_NET_FAULTS(SIMPLER_LINK_FAULT_)
#undef SIMPLER_LINK_FAULT_
        SIMPLER(LINK, flag, 0),
    SIMPLER(MASKS, flag, 0),
    SIMPLER(MASKS, mask_b, 0),
    SIMPLER(RESET, flag, 1),
    SIMPLER(CLOCK, offset_us, 0),
    SIMPLER(CLOCK, drift_ppm, 0),
    SIMPLER(CLOCK, jump_us, 0),
    SIMPLER(DISK, disk, 0),
    SIMPLER(DISK, k, 0),
    SIMPLER(DISK, interval_us, 0),
    SIMPLER(DEADLINE, count, SF_DEFAULT_LIVENESS_MS),
};
#undef SIMPLER

static void set_arg(sf_step *st, const simplification *x) {
  unsigned char *p = (unsigned char *)st + x->off;
  switch (x->size) {
  case 1: *p = (uint8_t)x->value; break;
  case 4: {
    uint32_t v = (uint32_t)x->value;
    memcpy(p, &v, 4);
    break;
  }
  case 8: memcpy(p, &x->value, 8); break;
  default: memset(p, 0, x->size); break; /* a parameter block */
  }
}

static int simplify_steps(minimizer *m, sf_scenario *s, sf_scenario *c) {
  int changed = 0;
  for (uint32_t i = 0; i < s->nsteps && m->tries < m->max_tries; i++) {
    static const uint64_t grains[] = {100000, 10000, 1000};
    if (s->steps[i].after_event) /* scheduled at the start, like a step written by hand */
      TRY(m, s, c, c->steps[i].after_event = 0);
    if (s->steps[i].on_change) /* at its time, not at a rise to the top rank */
      TRY(m, s, c, c->steps[i].on_change = 0);
    for (size_t g = 0; g < 3; g++) /* rounder times */
      TRY(m, s, c, c->steps[i].at_us = c->steps[i].at_us / grains[g] * grains[g]);
    if (i > 0) /* the same time as the step before */
      TRY(m, s, c, c->steps[i].at_us = c->steps[i - 1].at_us);
    sf_step_shape sh = sf_step_shape_of(s->steps[i].kind);
    for (size_t k = 0; k < sizeof simpler / sizeof simpler[0]; k++) /* simpler arguments */
      if (simpler[k].shape == sh)
        TRY(m, s, c, set_arg(&c->steps[i], &simpler[k]));
    if (sh == SF_SHAPE_OP) /* fewer repetitions */
      TRY(m, s, c, c->steps[i].count = c->steps[i].count / 2 ? c->steps[i].count / 2 : 1);
    if (sh == SF_SHAPE_MASKS) /* the lowest node of the first side alone */
      TRY(m, s, c, c->steps[i].mask_a &= c->steps[i].mask_a & (0 - c->steps[i].mask_a));
    if (i < s->nsteps && s->steps[i].at_us) /* as early as possible */
      TRY(m, s, c, c->steps[i].at_us = 0);
  }
  return changed;
}

/* Replace steps by simpler ones of another kind (a split or a partition by
 * isolating one node, a liveness step by a plain heal): the step count stays,
 * but the next round of delta debugging often removes more. */
static int substitute_steps(minimizer *m, sf_scenario *s, sf_scenario *c) {
  int changed = 0;
  uint32_t n = (uint32_t)sf_nodes_for(cli_target, s);
  for (uint32_t i = 0; i < s->nsteps && m->tries < m->max_tries; i++) {
    uint8_t k = s->steps[i].kind;
    sf_step_shape sh = sf_step_shape_of(k);
    if (sh == SF_SHAPE_GROUPS || sh == SF_SHAPE_MASKS) {
      for (uint32_t node = 0; node < n && s->steps[i].kind == k; node++) {
        sf_step iso;
        memset(&iso, 0, sizeof iso);
        iso.kind = SF_STEP_ISOLATE;
        iso.at_us = s->steps[i].at_us;
        iso.node = node;
        TRY(m, s, c, c->steps[i] = iso);
      }
    } else if (sh == SF_SHAPE_DEADLINE) {
      sf_step heal;
      memset(&heal, 0, sizeof heal);
      heal.kind = SF_STEP_HEAL;
      heal.at_us = s->steps[i].at_us;
      TRY(m, s, c, c->steps[i] = heal);
    }
  }
  return changed;
}

/* The starting versions: none past the node count, each taken modulo the
 * target's versions, then each one at 0 (the first version) if it can. */
static int simplify_versions(minimizer *m, sf_scenario *s, sf_scenario *c, uint32_t n) {
  int changed = 0;
  uint32_t versions = cli_target->versions > 1 ? cli_target->versions : 1;
  TRY(m, s, c, c->nversions = 0);
  TRY(m, s, c, if (c->nversions > n) c->nversions = n;
      for (uint32_t i = 0; i < c->nversions; i++) c->versions[i] %= versions;);
  for (uint32_t i = 0; i < s->nversions && m->tries < m->max_tries; i++)
    if (s->versions[i])
      TRY(m, s, c, c->versions[i] = 0);
  return changed;
}

static int simplify_globals(minimizer *m, sf_scenario *s, sf_scenario *c) {
  int changed = 0;
  int min_nodes = cli_target->min_nodes > 0 ? cli_target->min_nodes : 1;
  int nodes = sf_nodes_for(cli_target, s);
  for (int n = min_nodes; n < nodes; n++) { /* fewer nodes, smallest first */
    uint32_t before = s->nodes;
    TRY(m, s, c, c->nodes = (uint32_t)n);
    if (s->nodes != before)
      break;
  }
  /* the count the run has (a count past the target's range is clamped) */
  TRY(m, s, c, c->nodes = (uint32_t)sf_nodes_for(cli_target, c));
  /* node numbers are taken modulo the node count: write them that way */
  uint32_t n = (uint32_t)sf_nodes_for(cli_target, s);
  TRY(
      m, s, c, for (uint32_t i = 0; i < c->nsteps; i++) {
        c->steps[i].node %= n;
        c->steps[i].peer %= n;
        for (unsigned g = 0; g < c->steps[i].ngroups; g++)
          c->steps[i].group[g] = (uint8_t)(g < n ? c->steps[i].group[g] : 0);
        if (c->steps[i].ngroups > n)
          c->steps[i].ngroups = (uint8_t)n;
        if (sf_step_shape_of(c->steps[i].kind) == SF_SHAPE_VERSION && cli_target->versions > 1)
          c->steps[i].k %= cli_target->versions;
      });
  changed |= simplify_versions(m, s, c, n);
  TRY(m, s, c, c->tape_len = 0);
  while (s->tape_len > 1 && m->tries < m->max_tries) {
    uint32_t before = s->tape_len;
    TRY(m, s, c, c->tape_len /= 2);
    if (s->tape_len == before)
      break;
  }
  TRY(m, s, c, c->seed = 0);
  TRY(m, s, c, c->has_net = 0);
#define NO_LINK_FAULT_(field, fault, amp) c->net.field = 0,
  TRY(m, s, c, (SF_NET_FAULTS(NO_LINK_FAULT_)(void) 0)); /* every random link fault off */
#undef NO_LINK_FAULT_
#define NO_DISK_FAULT_(field, type, bound, draw, sim, fault) c->disk.field *= !(fault),
  TRY(m, s, c, (SF_DISK_FIELDS(NO_DISK_FAULT_)(void) 0)); /* every disk fault off */
#undef NO_DISK_FAULT_
  TRY(m, s, c, c->has_disk = 0);
  TRY(m, s, c, memset(&c->swarm, 0, sizeof c->swarm));
  TRY(m, s, c, (c->fp_enable_ppm = 0, c->fp_fire_ppm = 0));
  TRY(m, s, c, c->fifo = 0);
  TRY(m, s, c, c->tail_ms = 0);
  TRY(m, s, c, c->version = SF_FORMAT_VERSION);
  return changed;
}

/* Smaller: fewer steps, then fewer encoded bytes. */
static int smaller(const sf_scenario *a, const sf_scenario *b) {
  return a->nsteps < b->nsteps ||
         (a->nsteps == b->nsteps && sf_encoded_size(a) < sf_encoded_size(b));
}

/* Reduction alone stops in local minima (a step that cannot go because
 * another one needs it). Search around the minimum: mutate the scenario at
 * scenario level (retime, retarget, replace parameters, network, tape, ...);
 * when a mutant with no more steps still fails the same way, try deleting
 * each of its steps; keep the result only if it is smaller. Deterministic:
 * the mutations are seeded by the try number. */
static int mutation_search(minimizer *m, sf_scenario *s, sf_scenario *c, uint64_t budget) {
  int changed = 0;
  sf_scenario *d = cli_new_scenario(), *walk = cli_new_scenario();
  *walk = *s; /* walks the plateau of same-size scenarios that fail the same way */
  cli_outcome o;
  uint64_t stop = s->nsteps <= 1 ? m->tries : m->tries + budget; /* one step: minimal */
  uint64_t since = m->tries;
  for (uint64_t seed = 1; m->tries < stop && m->tries < m->max_tries; seed++) {
    if (m->tries - since > 150) { /* restart the walk from the best so far */
      *walk = *s;
      since = m->tries;
    }
    *c = *walk;
    sf_mutate_scenario(c, seed * 0x9e3779b97f4a7c15ull);
    if (c->nsteps > s->nsteps || !keeps(m, c, &o))
      continue;
    if (smaller(c, s)) {
      *s = *walk = *c;
      changed = 1;
      continue;
    }
    int found = 0;
    for (uint32_t i = 0; i < c->nsteps && m->tries < stop && !found; i++) {
      *d = *c;
      memmove(&d->steps[i], &d->steps[i + 1], (d->nsteps - i - 1) * sizeof d->steps[0]);
      d->nsteps--;
      if (smaller(d, s) && keeps(m, d, &o)) {
        *s = *walk = *d;
        changed = found = 1;
      }
    }
    if (!found)
      *walk = *c; /* a lateral move: explore from there */
  }
  free(d);
  free(walk);
  return changed;
}

/* Output of `replay` for the minimized scenario, for OUT.timeline.txt. */
static int write_timeline(const char *path, const char *scenario_path) {
  char tmp[4300];
  FILE *f = cli_create(path, tmp, sizeof tmp);
  if (!f)
    return -1;
  fflush(f);
  char *argv[] = {(char *)cli_prog,      "--target", (char *)cli_target->name, "replay",
                  (char *)scenario_path, NULL};
  int st;
  if (cli_run_program("/proc/self/exe", argv, fileno(f), fileno(f), &st) != 0) {
    fclose(f);
    remove(tmp);
    return cli_error("%s: cannot run the replay for the timeline: %s", path, strerror(errno)), -1;
  }
  if (WIFSIGNALED(st)) { /* the system under test crashed: that is the timeline's end */
    fprintf(f, "(the replay was killed by signal %d here)\n", WTERMSIG(st));
    return cli_commit(f, tmp, path);
  }
  if (!WIFEXITED(st) || WEXITSTATUS(st) >= EXIT_USAGE) {
    fclose(f);
    remove(tmp);
    return cli_error("%s: could not write the timeline (out of space?)", path), -1;
  }
  return cli_commit(f, tmp, path);
}

/* Crashing candidates under ASan print a report; symbolizing it costs far
 * more than the run. ASan reads its options at start-up only, so minimize
 * re-executes itself once with symbolization off; the forked candidates
 * inherit it. Returns only if no re-exec was needed or possible. */
static void reexec_unsymbolized(int argc, char **argv) {
  if (getenv("SIMFUZZ_MINIMIZE_REEXEC"))
    return;
  const char *old = getenv("ASAN_OPTIONS");
  char opts[2048];
  snprintf(opts, sizeof opts, "%s%ssymbolize=0", old ? old : "", old && *old ? ":" : "");
  setenv("ASAN_OPTIONS", opts, 1);
  setenv("SIMFUZZ_MINIMIZE_REEXEC", "1", 1);
  char **args = calloc((size_t)argc + 6, sizeof *args);
  if (!args)
    return;
  int k = 0;
  args[k++] = (char *)cli_prog;
  args[k++] = "--target";
  args[k++] = (char *)cli_target->name;
  if (cli_input_format != CLI_FMT_AUTO) /* cli_main took it off argv */
    args[k++] = cli_input_format == CLI_FMT_TEXT ? "--text" : "--binary";
  args[k++] = "minimize";
  for (int i = 0; i < argc; i++)
    args[k++] = argv[i];
  fflush(stdout);
  execv("/proc/self/exe", args);
  free(args); /* exec failed: go on in this process */
}

/* Rounds of reduction (delta debugging, substitution, simplification) and,
 * at each fixpoint, a search around it, until nothing changes or the tries
 * are spent (some kept for a last round of reduction). */
static void reduce(minimizer *m, sf_scenario *s, sf_scenario *c) {
  for (int round = 0; round < 20 && m->tries < m->max_tries; round++) {
    int changed = ddmin_steps(m, s, c);
    changed |= substitute_steps(m, s, c);
    changed |= simplify_steps(m, s, c);
    changed |= simplify_globals(m, s, c);
    if (!changed && m->tries + 400 < m->max_tries)
      changed = mutation_search(m, s, c, m->max_tries - m->tries - 400);
    if (!changed)
      break;
  }
  SIM_ASSERT(s->nsteps <= m->steps0);
}

/* The three outputs, each through the checked path (none may be an
 * input): OUT (enc bytes), OUT.txt and OUT.timeline.txt. */
/* The three files minimize writes: OUT, OUT.txt and OUT.timeline.txt. */
static const char *const out_ext[] = {"", ".txt", ".timeline.txt"};

/* 1 if every output may be written (none is an input, a link or a
 * directory), checked before the work rather than after it; else 0 after
 * saying why. */
static int outputs_ok(const char *in, const char *out) {
  cli_note_input(in);
  char path[4200];
  for (size_t i = 0; i < sizeof out_ext / sizeof out_ext[0]; i++)
    if (snprintf(path, sizeof path, "%s%s", out, out_ext[i]) >= (int)sizeof path ||
        !cli_output_ok(path))
      return 0;
  return 1;
}

static int write_outputs(const sf_scenario *s, const char *out) {
  size_t enc;
  uint8_t *buf = encoded(s, &enc);
  if (!buf)
    return cli_error("minimize: out of memory");
  int rc = EXIT_OK;
  char path[4200], tmp[4300];
  if (cli_write_file(out, buf, enc) != 0) {
    free(buf);
    return EXIT_USAGE;
  }
  free(buf);
  snprintf(path, sizeof path, "%s%s", out, out_ext[1]);
  FILE *tf = cli_create(path, tmp, sizeof tmp);
  if (!tf) {
    rc = EXIT_USAGE;
  } else if (sf_text_print(s, tf) != 0) {
    fclose(tf);
    remove(tmp);
    rc = cli_error("%s: out of memory", path);
  } else if (cli_commit(tf, tmp, path) != 0) {
    rc = EXIT_USAGE;
  }
  snprintf(path, sizeof path, "%s%s", out, out_ext[2]);
  if (write_timeline(path, out) != 0)
    rc = EXIT_USAGE;
  return rc;
}

/* --passes/--differs PROG: its candidate file in a private directory of $TMPDIR (or
 * /tmp). 0, or an exit status after saying why. */
static int control_open(minimizer *m) {
  if (access(m->control, X_OK) != 0)
    return cli_error("minimize: %s %s: not an executable program: %s", control_opt(m), m->control,
                     strerror(errno));
  const char *tmp = getenv("TMPDIR");
  if (!tmp || !*tmp)
    tmp = "/tmp";
  if (snprintf(m->dir, sizeof m->dir, "%s/simfuzz-minimize-XXXXXX", tmp) >= (int)sizeof m->dir ||
      !mkdtemp(m->dir)) {
    m->dir[0] = 0;
    return cli_error("minimize: cannot make a directory in %s for %s: %s", tmp, control_opt(m),
                     strerror(errno));
  }
  snprintf(m->file, sizeof m->file, "%s/candidate", m->dir);
  return EXIT_OK;
}

static void control_close(minimizer *m) {
  if (!m->dir[0])
    return;
  remove(m->file);
  rmdir(m->dir);
  m->dir[0] = 0;
}

/* The reduction itself, on a scenario s that fails (sig) and that the
 * control does not fail alike: reduce, check the result again, write the outputs. */
static int minimize_to(minimizer *m, sf_scenario *s, sf_scenario *c, const char *in,
                       const char *out, const cli_outcome *o0) {
  uint32_t steps0 = s->nsteps;
  size_t enc0 = sf_encoded_size(s);
  reduce(m, s, c);
  if (!m->quiet)
    fprintf(stderr, "\r\033[K");
  cli_outcome o1;
  cli_run_isolated(s, &o1, 0);
  if (strcmp(o1.sig, o0->sig)) /* cannot happen: every kept candidate was checked */
    return cli_error("minimize: internal error: the result fails differently (%s)", o1.sig);
  if (m->control && !control_keeps(m, s)) /* nor this: each was checked */
    return cli_error("minimize: %s no longer keeps the result (is it deterministic?)", m->control);
  size_t enc = sf_encoded_size(s);
  int rc = write_outputs(s, out);
  printf("minimize: %s -> %s\n", in, out);
  printf("  failure kept: %s\n", o0->sig);
  if (m->control)
    printf("  control: %s %s it (%" PRIu64 " replays)\n", m->control,
           m->strict ? "passes" : "does not fail the same way", m->control_runs);
  printf("  steps:  %" PRIu32 " -> %" PRIu32 "\n", steps0, s->nsteps);
  printf("  bytes:  %zu -> %zu (input %zu bytes, %s)\n", enc0, enc, m->bytes0,
         cli_kind_name(m->kind));
  printf("  events: %" PRIu64 " -> %" PRIu64 "\n", o0->events, o1.events);
  printf("  tries:  %" PRIu64 "%s\n", m->tries, m->tries >= m->max_tries ? " (limit reached)" : "");
  if (rc == EXIT_OK)
    printf("  wrote %s, %s.txt, %s.timeline.txt\n", out, out, out);
  else
    printf("  NOT all outputs were written (see the error above)\n");
  return rc;
}

/* Why there is nothing to keep, or EXIT_OK: s must fail here (o0) and,
 * with a control, the control must keep it. */
static int check_input(minimizer *m, const sf_scenario *s, const char *in, const cli_outcome *o0) {
  if (!o0->sig[0]) {
    fprintf(stderr, "%s: minimize: %s does not fail on target %s: nothing to keep\n", cli_prog, in,
            cli_target->name);
    return EXIT_FAILED;
  }
  if (m->control && !control_keeps(m, s)) {
    fprintf(stderr, "%s: minimize: %s %s %s: nothing to keep\n", cli_prog, m->control,
            m->strict ? "does not pass" : "fails the same way,", in);
    if (!m->strict)
      fprintf(stderr, "  (as %s)\n", o0->invariant);
    return EXIT_FAILED;
  }
  return EXIT_OK;
}

#define HELP_MINIMIZE                                                                              \
  "minimize FILE -o OUT : shrink a failing scenario, keeping the same failure\n\n"                 \
  "SYNOPSIS\n"                                                                                     \
  "  minimize [--max-tries N] [--passes PROG | --differs PROG] [--timeout S] [--rss-limit-mb MB] " \
  "[-q]\n"                                                                                         \
  "           FILE -o OUT\n\n"                                                                     \
  "DESCRIPTION\n"                                                                                  \
  "  Reduces a failing scenario at the level of scenario steps and keeps only candidates\n"        \
  "  that fail the same way: the same invariant at the same check site (or liveness; for\n"        \
  "  crashes of the system under test, the same signal, sanitizer error and top frame).\n"         \
  "  Delta debugging over steps, then simplification of what remains (fewer nodes, rounder\n"      \
  "  and fewer times, rates to 0, a shorter choice tape, fewer client operations, default\n"       \
  "  network and disk), and a search around the result with scenario-level mutations that\n"       \
  "  keeps only smaller scenarios failing the same way, repeated until nothing changes or\n"       \
  "  the budget of tries is spent. Candidates run in forked children,\n"                           \
  "  so a candidate that crashes cannot take the minimizer down. FILE is never changed.\n"         \
  "  Writes OUT (binary, atomically), OUT.txt (text form) and OUT.timeline.txt.\n\n"               \
  "OPTIONS\n"                                                                                      \
  "  --max-tries N   stop after N candidate runs (default 4000)\n"                                 \
  "  --passes PROG   differential: also keep only candidates that the simfuzz target\n"            \
  "                  program PROG (a path: the build with the fix, say) passes. Run as\n"          \
  "                  `PROG replay -q CANDIDATE`, the file in a private directory of $TMPDIR,\n"    \
  "                  within twice the --timeout (a hang is a failure). FILE must pass it.\n"       \
  "                  Without it, a reduction may drift to a failure of the same kind that\n"       \
  "                  the fixed build has too\n"                                                    \
  "  --differs PROG  the same, but PROG may also fail a candidate with another invariant\n"        \
  "                  (or crash where this target fails an invariant): for a control that\n"        \
  "                  fails FILE its own way\n"                                                     \
  "  -q              no progress line\n\n"                                                         \
  "EXIT STATUS\n"                                                                                  \
  "  0 minimized, 1 FILE does not fail, or PROG does not keep it (nothing to keep),\n"             \
  "  2 bad input or usage\n\n"                                                                     \
  "EXAMPLES\n"                                                                                     \
  "  minimize crash-4f1e... -o min.pb\n"                                                           \
  "  minimize --passes build/bin/target_fixed crash-4f1e... -o min.pb\n"

static int cmd_minimize(int argc, char **argv) {
  reexec_unsymbolized(argc, argv);
  const char *out = NULL, *passes = NULL, *differs = NULL;
  minimizer m;
  memset(&m, 0, sizeof m);
  m.max_tries = 4000;
  const cli_opt opts[] = {CLI_STR("-o", NULL, &out),
                          CLI_U64("--max-tries", &m.max_tries, 1, 0),
                          CLI_STR("--passes", NULL, &passes),
                          CLI_STR("--differs", NULL, &differs),
                          CLI_FLAG("--quiet", "-q", &m.quiet),
                          CLI_LIMITS,
                          CLI_END};
  const char *in;
  if (cli_parse_in_out("minimize", argc, argv, opts, &in, &out, "FILE") < 0 || !outputs_ok(in, out))
    return EXIT_USAGE;
  if (passes && differs)
    return cli_error("minimize: --passes and --differs: one control at a time");
  m.control = passes ? passes : differs;
  m.strict = passes != NULL;
  sf_scenario *s = cli_new_scenario(), *c = cli_new_scenario();
  int rc = cli_load(in, s, &m.kind, &m.bytes0) < 0 ? EXIT_USAGE : EXIT_OK;
  if (rc == EXIT_OK && m.control)
    rc = control_open(&m);
  cli_outcome o0;
  if (rc == EXIT_OK) {
    cli_run_isolated(s, &o0, 0);
    m.want_inv = o0.invariant;
    rc = check_input(&m, s, in, &o0);
  }
  if (rc == EXIT_OK) {
    m.want = o0.sig;
    m.steps0 = s->nsteps;
    if (!m.quiet)
      fprintf(stderr, "minimize: keeping failure: %s\n", o0.sig);
    rc = minimize_to(&m, s, c, in, out, &o0);
  }
  control_close(&m);
  free(s);
  free(c);
  return rc;
}

const cli_command cli_cmd_minimize = {"minimize", cmd_minimize, 1, HELP_MINIMIZE};
