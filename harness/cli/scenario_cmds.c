/* The commands about scenario files themselves: show, encode, gen,
 * features, targets. Each
 * command's help and table row sit beside its code. */
#include "cli.h"
#include "run/features.h"

#include "scenario/textpb.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HELP_SHOW                                                                                  \
  "show FILE : print a scenario in protobuf text format\n\n"                                       \
  "SYNOPSIS\n"                                                                                     \
  "  show FILE\n\n"                                                                                \
  "DESCRIPTION\n"                                                                                  \
  "  Decodes FILE (binary, text or any crash file) as the fuzzers do and prints it in the\n"       \
  "  text format of `protoc --decode=simfuzz.Scenario proto/scenario.proto`. Crash files\n"        \
  "  that are not valid protobuf are shown as the scenario they decode to.\n\n"                    \
  "EXIT STATUS\n"                                                                                  \
  "  0 shown, 2 bad input or usage\n"

#define HELP_ENCODE                                                                                \
  "encode TEXT -o FILE : turn a text scenario into a scenario file\n\n"                            \
  "SYNOPSIS\n"                                                                                     \
  "  encode TEXT -o FILE\n\n"                                                                      \
  "DESCRIPTION\n"                                                                                  \
  "  Parses TEXT (protobuf text format, as `protoc --encode=simfuzz.Scenario` reads it) and\n"     \
  "  writes its binary encoding to FILE atomically. Refuses to overwrite TEXT.\n\n"                \
  "EXIT STATUS\n"                                                                                  \
  "  0 written, 2 malformed text, unreadable input, unwritable output or usage\n"

#define HELP_GEN                                                                                   \
  "gen SEED -o FILE : write the random scenario of SEED\n\n"                                       \
  "SYNOPSIS\n"                                                                                     \
  "  gen SEED -o FILE\n\n"                                                                         \
  "DESCRIPTION\n"                                                                                  \
  "  Writes the scenario that `sweep` runs for SEED.\n\n"                                          \
  "EXIT STATUS\n"                                                                                  \
  "  0 written, 2 usage or unwritable output\n"

#define HELP_FEATURES                                                                              \
  "features FILE... : count the abstract states a corpus reaches\n\n"                              \
  "SYNOPSIS\n"                                                                                     \
  "  features FILE...\n\n"                                                                         \
  "DESCRIPTION\n"                                                                                  \
  "  Runs every FILE and prints how many distinct feedback features (fault x message kind x\n"     \
  "  role, event pairs, role transitions, role vectors) they reach together.\n"

#define HELP_TARGETS "targets : list the targets built into this binary\n"

static int cmd_show(int argc, char **argv) {
  const cli_opt none[] = {CLI_END};
  argc = cli_parse("show", argc, argv, none);
  if (argc < 0)
    return EXIT_USAGE;
  if (argc != 1)
    return cli_error("show: want exactly one FILE (see: %s help show)", cli_prog);
  sf_scenario *s = cli_new_scenario();
  cli_input_kind k;
  size_t bytes;
  if (cli_load(argv[0], s, &k, &bytes) < 0) {
    free(s);
    return EXIT_USAGE;
  }
  printf("# %s: %s, %zu bytes; %" PRIu32 " steps (%" PRIu32 " faults)\n", argv[0], cli_kind_name(k),
         bytes, s->nsteps, sf_fault_steps(s));
  if (k == CLI_IN_GENERATED || k == CLI_IN_SALVAGED)
    printf("# shown as decoded: encode this text to get a scenario file that runs the same\n");
  int rc = sf_text_print(s, stdout) == 0 ? EXIT_OK : EXIT_USAGE;
  free(s);
  return rc;
}

static int cmd_encode(int argc, char **argv) {
  const char *out = NULL;
  const cli_opt opts[] = {CLI_STR("-o", NULL, &out), CLI_END};
  const char *in;
  if (cli_parse_in_out("encode", argc, argv, opts, &in, &out, "TEXT") < 0)
    return EXIT_USAGE;
  size_t len;
  uint8_t *text = cli_read_file_max(in, &len, SF_MAX_TEXT, 1);
  if (!text)
    return EXIT_USAGE;
  uint8_t *bin;
  size_t n;
  int rc = EXIT_OK;
  if (cli_text_to_binary(in, text, len, &bin, &n) != 0) {
    rc = EXIT_USAGE;
  } else {
    if (cli_write_file(out, bin, n) != 0)
      rc = EXIT_USAGE;
    else
      fprintf(stderr, "%s: wrote %s (%zu bytes)\n", cli_prog, out, n);
    free(bin);
  }
  free(text);
  return rc;
}

static int cmd_gen(int argc, char **argv) {
  const char *out = NULL;
  const cli_opt opts[] = {CLI_STR("-o", NULL, &out), CLI_END};
  argc = cli_parse("gen", argc, argv, opts);
  if (argc < 0)
    return EXIT_USAGE;
  if (argc != 1 || !out)
    return cli_error("gen: usage: %s gen SEED -o FILE", cli_prog);
  uint64_t seed;
  if (cli_parse_u64(argv[0], &seed) < 0)
    return cli_error("gen: bad seed '%s'", argv[0]);
  sf_scenario *s = cli_new_scenario();
  static uint8_t buf[SF_MAX_INPUT];
  sf_target_seed_scenario(cli_target, seed, s);
  size_t n = sf_encode(s, buf, sizeof buf);
  int rc = n <= sizeof buf && cli_write_file(out, buf, n) == 0 ? EXIT_OK : EXIT_USAGE;
  free(s);
  return rc;
}

static int cmd_features(int argc, char **argv) {
  uint64_t bits[SF_FB_BUCKETS / 64] = {0};
  sf_run_opts o;
  memset(&o, 0, sizeof o);
  o.feature_bits = bits;
  const cli_opt none[] = {CLI_END};
  argc = cli_parse("features", argc, argv, none);
  if (argc < 0)
    return EXIT_USAGE;
  if (argc == 0)
    return cli_error("features: no input files");
  sf_scenario *s = cli_new_scenario();
  for (int i = 0; i < argc; i++) {
    cli_input_kind k;
    if (cli_load(argv[i], s, &k, NULL) < 0) {
      free(s);
      return EXIT_USAGE;
    }
    sf_result r;
    sf_run(cli_target, s, &o, &r);
  }
  free(s);
  unsigned n = 0;
  for (unsigned i = 0; i < SF_FB_BUCKETS / 64; i++)
    n += (unsigned)__builtin_popcountll(bits[i]);
  printf("%d inputs, %u distinct feature buckets of %u\n", argc, n, sf_fb_buckets());
  return EXIT_OK;
}

static int cmd_targets(int argc, char **argv) {
  (void)argc;
  (void)argv;
  if (cli_target) /* the dispatcher lists the per-target tools it finds */
    printf("%-32s %s\n", cli_target->name, cli_target->summary ? cli_target->summary : "");
  return EXIT_OK;
}

const cli_command cli_cmd_show = {"show", cmd_show, 0, HELP_SHOW};
const cli_command cli_cmd_encode = {"encode", cmd_encode, 0, HELP_ENCODE};
const cli_command cli_cmd_gen = {"gen", cmd_gen, 0, HELP_GEN};
const cli_command cli_cmd_features = {"features", cmd_features, 1, HELP_FEATURES};
const cli_command cli_cmd_targets = {"targets", cmd_targets, 0, HELP_TARGETS};
