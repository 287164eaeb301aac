/* simfuzz-<target>: the command line for one target. */
#include "simfuzz.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_OK 0
#define EXIT_FAILED 1
#define EXIT_USAGE 2

static const char *prog = "simfuzz";

static int usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, "%s: ", prog);
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n");
  return EXIT_USAGE;
}

/* Read a whole file (at most SF_MAX_INPUT bytes are used). */
static uint8_t *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
    return NULL;
  }
  uint8_t *buf = malloc(SF_MAX_INPUT + 1);
  size_t n = buf ? fread(buf, 1, SF_MAX_INPUT, f) : 0;
  int bad = !buf || ferror(f);
  fclose(f);
  if (bad) {
    fprintf(stderr, "%s: %s: read error\n", prog, path);
    free(buf);
    return NULL;
  }
  *len = n;
  return buf;
}

/* Write atomically: to path.tmp, then rename. */
static int write_file(const char *path, const uint8_t *data, size_t len) {
  char tmp[4096];
  if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
    return -1;
  FILE *f = fopen(tmp, "wb");
  if (!f) {
    fprintf(stderr, "%s: %s: %s\n", prog, tmp, strerror(errno));
    return -1;
  }
  size_t w = fwrite(data, 1, len, f);
  int err = fflush(f) != 0 || w != len;
  err |= fclose(f) != 0;
  if (err || rename(tmp, path) != 0) {
    fprintf(stderr, "%s: %s: write failed\n", prog, path);
    remove(tmp);
    return -1;
  }
  return 0;
}

static void print_summary(const char *name, const sf_result *r) {
  printf("%s: %s, %d nodes, %" PRIu32 " steps run (%" PRIu32 " faults, %" PRIu32
         " client ops), %" PRIu64 " events, t=%.3fs, hash %016" PRIx64 "%s%s\n",
         name, r->decoded == SF_DECODED_PROTO      ? "scenario"
         : r->decoded == SF_DECODED_SALVAGED ? "salvaged scenario"
                                             : "generated from raw bytes", r->nodes,
         r->steps_run, r->fault_steps_run, r->ops_run, r->stats.events,
         (double)r->end_time / 1e9, r->hash, r->failed ? " -> FAILED " : " -> ok",
         r->failed ? r->failure.name : "");
}

typedef struct {
  const sf_scenario *s;
  const char *input;
  int quiet;
} replay_ctx;

static void replay_finish(void *p, sim_world *w, const sf_result *r) {
  replay_ctx *c = p;
  if (r->failed && !c->quiet)
    sf_print_report(sf_this_target, c->s, r, w, stdout, c->input, 30);
}

static int cmd_replay(int argc, char **argv) {
  int quiet = 0, rc = EXIT_OK, files = 0;
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet")) {
      quiet = 1;
      continue;
    }
    size_t len;
    uint8_t *data = read_file(argv[i], &len);
    if (!data)
      return EXIT_USAGE;
    files++;
    sf_scenario *s = malloc(sizeof *s);
    sf_decode_kind k = sf_decode(data, len, s);
    sf_run_opts o;
    memset(&o, 0, sizeof o);
    o.trace_ring = 1024;
    replay_ctx rc_ctx = {s, argv[i], quiet};
    o.on_finish = replay_finish;
    o.finish_ctx = &rc_ctx;
    sf_result r;
    sf_run(sf_this_target, s, &o, &r);
    r.decoded = k;
    print_summary(argv[i], &r);
    if (r.failed)
      rc = EXIT_FAILED;
    free(s);
    free(data);
  }
  if (!files)
    return usage_error("replay: no input files%s", "");
  return rc;
}

static int parse_range(const char *s, uint64_t *a, uint64_t *b) {
  char *end;
  errno = 0;
  *a = strtoull(s, &end, 10);
  if (errno || end == s)
    return -1;
  if (*end == 0) {
    *b = *a;
    return 0;
  }
  if (*end != '-' && *end != ':')
    return -1;
  const char *t = end + 1;
  *b = strtoull(t, &end, 10);
  if (errno || end == t || *end || *b < *a)
    return -1;
  return 0;
}

static int cmd_sweep(int argc, char **argv) {
  uint64_t a = 0, b = 999;
  const char *out = NULL;
  int first = 0, verbose = 0;
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "--seeds") && i + 1 < argc) {
      if (parse_range(argv[++i], &a, &b) < 0)
        return usage_error("sweep: bad seed range '%s' (want A-B)", argv[i]);
    } else if ((!strcmp(argv[i], "-o") || !strcmp(argv[i], "--out")) && i + 1 < argc) {
      out = argv[++i];
    } else if (!strcmp(argv[i], "--stop-on-first")) {
      first = 1;
    } else if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose")) {
      verbose = 1;
    } else {
      return usage_error("sweep: unknown argument '%s'", argv[i]);
    }
  }
  sf_scenario *s = malloc(sizeof *s);
  uint8_t *buf = malloc(SF_MAX_INPUT);
  uint64_t failures = 0, runs = 0;
  for (uint64_t seed = a;; seed++) {
    sf_generate_seed(seed, s);
    sf_result r;
    runs++;
    int failed = sf_run(sf_this_target, s, NULL, &r);
    if (verbose)
      printf("seed %" PRIu64 " hash %016" PRIx64 " events %" PRIu64 "\n", seed, r.hash,
             r.stats.events);
    if (failed) {
      failures++;
      printf("seed %" PRIu64 ": FAILED %s: %s\n", seed, r.failure.name, r.failure.message);
      if (out) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s-seed-%" PRIu64 ".pb", out, sf_this_target->name, seed);
        size_t n = sf_encode(s, buf, SF_MAX_INPUT);
        if (n <= SF_MAX_INPUT && write_file(path, buf, n) == 0)
          printf("  saved %s\n", path);
      }
      if (first)
        break;
    }
    if (seed == b)
      break;
  }
  printf("sweep: %" PRIu64 " seeds, %" PRIu64 " failures\n", runs, failures);
  free(s);
  free(buf);
  return failures ? EXIT_FAILED : EXIT_OK;
}

static int cmd_gen(int argc, char **argv) {
  if (argc < 3 || strcmp(argv[1], "-o"))
    return usage_error("gen: usage: gen SEED -o FILE%s", "");
  uint64_t seed, b;
  if (parse_range(argv[0], &seed, &b) < 0)
    return usage_error("gen: bad seed '%s'", argv[0]);
  sf_scenario *s = malloc(sizeof *s);
  uint8_t *buf = malloc(SF_MAX_INPUT);
  sf_generate_seed(seed, s);
  size_t n = sf_encode(s, buf, SF_MAX_INPUT);
  int rc = n <= SF_MAX_INPUT && write_file(argv[2], buf, n) == 0 ? EXIT_OK : EXIT_USAGE;
  free(s);
  free(buf);
  return rc;
}

/* Union of the abstract-state features reached by a set of inputs. */
static int cmd_features(int argc, char **argv) {
  uint64_t bits[SF_FB_BUCKETS / 64] = {0};
  sf_run_opts o;
  memset(&o, 0, sizeof o);
  o.feature_bits = bits;
  int files = 0;
  for (int i = 0; i < argc; i++) {
    size_t len;
    uint8_t *data = read_file(argv[i], &len);
    if (!data)
      return EXIT_USAGE;
    sf_result r;
    sf_run_input(sf_this_target, data, len, &o, &r);
    free(data);
    files++;
  }
  unsigned n = 0;
  for (unsigned i = 0; i < SF_FB_BUCKETS / 64; i++)
    n += (unsigned)__builtin_popcountll(bits[i]);
  printf("%d inputs, %u distinct feature buckets of %u\n", files, n, SF_FB_BUCKETS);
  return EXIT_OK;
}

static void help(void) {
  printf("usage: %s COMMAND [ARGS]\n\n"
         "Target %s: %s\n\n"
         "Commands:\n"
         "  replay FILE...          run each scenario (protobuf, or any bytes: a libFuzzer or\n"
         "                          AFL++ crash file) and print what happened; exit 1 if a\n"
         "                          run failed, 2 on bad input or usage\n"
         "  sweep --seeds A-B [-o DIR] [--stop-on-first] [-v]\n"
         "                          random-seed simulation: run the random swarm scenario of\n"
         "                          every seed in A..B, save failures as scenario files;\n"
         "                          -v prints every seed's trace hash\n"
         "  gen SEED -o FILE        write the random scenario of SEED as a scenario file\n"
         "  features FILE...        distinct abstract-state features the inputs reach\n"
         "  help                    this text\n",
         prog, sf_this_target->name, sf_this_target->summary ? sf_this_target->summary : "");
}

int main(int argc, char **argv) {
  static char name[256];
  snprintf(name, sizeof name, "simfuzz-%s", sf_this_target->name);
  prog = name;
  if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    help();
    return argc < 2 ? EXIT_USAGE : EXIT_OK;
  }
  if (!strcmp(argv[1], "replay"))
    return cmd_replay(argc - 2, argv + 2);
  if (!strcmp(argv[1], "sweep"))
    return cmd_sweep(argc - 2, argv + 2);
  if (!strcmp(argv[1], "gen"))
    return cmd_gen(argc - 2, argv + 2);
  if (!strcmp(argv[1], "features"))
    return cmd_features(argc - 2, argv + 2);
  return usage_error("unknown command '%s' (try help)", argv[1]);
}
