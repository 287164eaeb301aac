/* simfuzz: the command line's shared helpers (files, parsing of values)
 * and its dispatch. Each command lives in its own file with its help and
 * its options. Built once per target (simfuzz-<t>) and once with every
 * target (simfuzz --target T). */
#include "cli.h"

#include "scenario/textpb.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *cli_prog = "simfuzz";
const sf_target *cli_target;

int cli_error(const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "%s: ", cli_prog);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  return EXIT_USAGE;
}

/* ---- files ------------------------------------------------------------- */

cli_format cli_input_format = CLI_FMT_AUTO;

void *cli_grow(void *arr, size_t *cap, size_t n, size_t elem, size_t first) {
  if (n < *cap)
    return arr;
  size_t c = *cap ? *cap * 2 : first;
  while (c <= n)
    c *= 2;
  void *q = realloc(arr, c * elem);
  if (q)
    *cap = c;
  return q;
}

uint8_t *cli_read_file_max(const char *path, size_t *len, size_t max, int too_big_is_error) {
  struct stat st;
  /* non-blocking: a FIFO in place of a file must not hang the command */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 || fstat(fd, &st) != 0) {
    cli_error("%s: %s", path, strerror(errno));
    if (fd >= 0)
      close(fd);
    return NULL;
  }
  if (!S_ISREG(st.st_mode)) {
    cli_error("%s: %s", path, S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
    close(fd);
    return NULL;
  }
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    cli_error("%s: %s", path, strerror(errno));
    close(fd);
    return NULL;
  }
  cli_note_input(path);
  uint8_t *buf = malloc(max + 1);
  size_t n = buf ? fread(buf, 1, max + 1, f) : 0;
  int bad = !buf || ferror(f);
  fclose(f);
  if (bad) {
    cli_error("%s: %s", path, buf ? "read error" : "out of memory");
    free(buf);
    return NULL;
  }
  if (n > max) {
    if (too_big_is_error) {
      cli_error("%s: larger than %zu bytes", path, max);
      free(buf);
      return NULL;
    }
    n = max; /* the fuzzers read no more of an input either */
  }
  buf[n] = 0;
  *len = n;
  return buf;
}

uint8_t *cli_read_file(const char *path, size_t *len) {
  return cli_read_file_max(path, len, SF_MAX_INPUT, 0);
}

int cli_is_text_path(const char *path) {
  const char *dot = strrchr(path, '.');
  const char *slash = strrchr(path, '/');
  if (!dot || (slash && dot < slash))
    return 0;
  return !strcmp(dot, ".txt") || !strcmp(dot, ".textproto") || !strcmp(dot, ".textpb") ||
         !strcmp(dot, ".pbtxt");
}

int cli_same_file(const char *a, const char *b) {
  struct stat sa, sb;
  if (stat(a, &sa) != 0 || stat(b, &sb) != 0)
    return 0;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* ---- output: one path for every file a command writes -------------------
 *
 * Every file a command reads is noted (cli_read_file does it). An output is
 * refused if it is a symbolic link, or the same file as anything read, so
 * no command modifies an input or writes through a link. It is written to
 * an exclusively created temporary file in its own directory (mkstemp: no
 * predictable name to pre-place a link at), synced, then renamed over the
 * output, and the directory is synced; anything that fails on the way
 * removes the temporary file and reports one line. */

enum { MAX_NOTED = 4096 };
static struct {
  dev_t dev;
  ino_t ino;
} noted[MAX_NOTED];
static size_t n_noted;

void cli_note_input(const char *path) {
  struct stat st;
  if (n_noted < MAX_NOTED && stat(path, &st) == 0) {
    noted[n_noted].dev = st.st_dev;
    noted[n_noted].ino = st.st_ino;
    n_noted++;
  }
}

int cli_output_ok(const char *path) {
  struct stat st;
  if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
    return cli_error("%s: is a symbolic link; refusing to write through or over it", path), 0;
  if (stat(path, &st) == 0) {
    for (size_t i = 0; i < n_noted; i++)
      if (noted[i].dev == st.st_dev && noted[i].ino == st.st_ino)
        return cli_error("%s: is one of this command's inputs; refusing to overwrite it", path), 0;
    if (S_ISDIR(st.st_mode))
      return cli_error("%s: is a directory", path), 0;
  }
  return 1;
}

static int commit(FILE *f, const char *tmp, const char *path, int durable) {
  int err = ferror(f) != 0;
  err |= fflush(f) != 0;
  if (durable)
    err |= fsync(fileno(f)) != 0;
  int e = errno;
  err |= fclose(f) != 0;
  if (!err && !cli_output_ok(path)) { /* something appeared there meanwhile */
    remove(tmp);
    return -1;
  }
  if (err || rename(tmp, path) != 0) {
    if (!err)
      e = errno;
    remove(tmp);
    return cli_error("%s: write failed: %s", path, e ? strerror(e) : "error"), -1;
  }
  char dir[4300];
  const char *slash = strrchr(path, '/');
  snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path + 1) : 1, slash ? path : ".");
  int dfd = durable ? open(dir, O_RDONLY) : -1;
  if (dfd >= 0) { /* the rename itself is durable */
    fsync(dfd);
    close(dfd);
  }
  return 0;
}

static int write_file(const char *path, const void *data, size_t len, int durable) {
  char tmp[4300];
  FILE *f = cli_create(path, tmp, sizeof tmp);
  if (!f)
    return -1;
  if (len && fwrite(data, 1, len, f) != len) {
    int e = errno;
    fclose(f);
    remove(tmp);
    return cli_error("%s: write failed: %s", path, e ? strerror(e) : "short write"), -1;
  }
  return commit(f, tmp, path, durable);
}

int cli_write_file(const char *path, const void *data, size_t len) {
  return write_file(path, data, len, 1);
}

int cli_write_corpus_file(const char *path, const void *data, size_t len) {
  return write_file(path, data, len, 0);
}

FILE *cli_create(const char *path, char *tmp, size_t cap) {
  if (!cli_output_ok(path))
    return NULL;
  const char *slash = strrchr(path, '/');
  int dirlen = slash ? (int)(slash - path + 1) : 0;
  if (snprintf(tmp, cap, "%.*s.%s.tmp-XXXXXX", dirlen, path, slash ? slash + 1 : path) >=
      (int)cap) {
    cli_error("%s: path too long", path);
    return NULL;
  }
  int fd = mkstemp(tmp); /* O_CREAT|O_EXCL, mode 0600 */
  if (fd < 0) {
    cli_error("%s: cannot create a temporary file: %s", path, strerror(errno));
    return NULL;
  }
  mode_t um = umask(0);
  umask(um);
  fchmod(fd, 0666 & ~um); /* what a plain create would have given */
  FILE *f = fdopen(fd, "w");
  if (!f) {
    close(fd);
    remove(tmp);
    cli_error("%s: %s", path, strerror(errno));
  }
  return f;
}

int cli_commit(FILE *f, const char *tmp, const char *path) {
  return commit(f, tmp, path, 1);
}

const char *cli_kind_name(cli_input_kind k) {
  switch (k) {
  case CLI_IN_TEXT: return "text scenario";
  case CLI_IN_PROTO: return "scenario";
  case CLI_IN_SALVAGED: return "damaged scenario (intact fields kept)";
  default: return "raw bytes (read by the scenario generator)";
  }
}

int cli_text_to_binary(const char *path, const uint8_t *text, size_t len, uint8_t **bin,
                       size_t *n) {
  char err[256];
  if (sf_text_to_binary((const char *)text, len, bin, n, err, sizeof err) != 0) {
    cli_error("%s: malformed text scenario: %s", path, err);
    return -1;
  }
  return 0;
}

int cli_load(const char *path, sf_scenario *s, cli_input_kind *kind, size_t *bytes) {
  /* Text only when it is asked for (--text) or the name says so: a crash
   * file is always read as the fuzzers read it, whatever its bytes. */
  int text = cli_input_format == CLI_FMT_TEXT ||
             (cli_input_format == CLI_FMT_AUTO && cli_is_text_path(path));
  size_t len;
  uint8_t *data = text ? cli_read_file_max(path, &len, SF_MAX_TEXT, 1) : cli_read_file(path, &len);
  if (!data)
    return -1;
  if (bytes)
    *bytes = len;
  if (text) {
    uint8_t *bin;
    size_t n;
    int rc = cli_text_to_binary(path, data, len, &bin, &n);
    free(data);
    if (rc != 0)
      return -1;
    if (n > SF_MAX_INPUT || sf_decode_proto(bin, n, s) != 0) {
      free(bin);
      return cli_error("%s: the scenario encodes to %zu bytes, more than a run reads (%u)", path, n,
                       SF_MAX_INPUT),
             -1;
    }
    free(bin);
    *kind = CLI_IN_TEXT;
    return 0;
  }
  sf_decode_kind k = sf_decode(data, len, s);
  *kind = k == SF_DECODED_PROTO      ? CLI_IN_PROTO
          : k == SF_DECODED_SALVAGED ? CLI_IN_SALVAGED
                                     : CLI_IN_GENERATED;
  free(data);
  return 0;
}

sf_scenario *cli_new_scenario(void) {
  sf_scenario *s = malloc(sizeof *s);
  if (!s)
    sf_out_of_memory(cli_prog);
  return s;
}

/* ---- argument helpers --------------------------------------------------- */

int cli_parse_time(const char *s, uint64_t *ns) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || !(v >= 0) || !(v <= 1e12)) /* also refuses nan and inf */
    return -1;
  double mul = 1e9; /* seconds by default */
  if (!strcmp(end, "ms"))
    mul = 1e6;
  else if (!strcmp(end, "us"))
    mul = 1e3;
  else if (!strcmp(end, "ns"))
    mul = 1;
  else if (*end && strcmp(end, "s"))
    return -1;
  double r = v * mul; /* argument parsing only: never part of a run */
  if (!(r <= 1.8e19))
    return -1;
  *ns = (uint64_t)r;
  return 0;
}

int cli_parse_u64(const char *s, uint64_t *v) {
  char *end;
  errno = 0;
  if (s[0] < '0' || s[0] > '9') /* no sign, no space: digits only */
    return -1;
  *v = strtoull(s, &end, 10); /* decimal everywhere: "010" is ten, as in sweep --seeds */
  return errno || end == s || *end ? -1 : 0;
}

int cli_parse_range(const char *s, uint64_t *a, uint64_t *b) {
  char *end;
  errno = 0;
  if (s[0] == '-')
    return -1;
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

int cli_mkdirs(const char *d) {
  char b[4096];
  size_t n = strlen(d);
  if (n >= sizeof b) {
    errno = ENAMETOOLONG;
    return -1;
  }
  memcpy(b, d, n + 1);
  for (char *p = b + 1; *p; p++) { /* the missing parents first */
    if (*p != '/')
      continue;
    *p = 0;
    int bad = mkdir(b, 0777) < 0 && errno != EEXIST;
    *p = '/';
    if (bad)
      return -1;
  }
  struct stat sb;
  if ((mkdir(b, 0777) < 0 && errno != EEXIST) || stat(b, &sb) < 0)
    return -1;
  if (!S_ISDIR(sb.st_mode)) {
    errno = ENOTDIR;
    return -1;
  }
  return 0;
}

const char *cli_absolute(const char *path, char *buf, size_t cap) {
  char cwd[PATH_MAX];
  if (path[0] == '/' || !getcwd(cwd, sizeof cwd))
    return path;
  int k = snprintf(buf, cap, "%s/%s", cwd, path);
  return k > 0 && (size_t)k < cap ? buf : path;
}

int cli_make_dir(const char *cmd, const char *d) {
  if (cli_mkdirs(d) == 0)
    return 0;
  if (errno == ENOTDIR)
    cli_error("%s: %s is not a directory", cmd, d);
  else
    cli_error("%s: cannot create %s: %s", cmd, d, strerror(errno));
  return -1;
}

int cli_file_appendable(const char *cmd, const char *path) {
  /* O_NONBLOCK: a FIFO with no reader fails at once rather than block */
  int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0644);
  if (fd < 0)
    return cli_error("%s: cannot write %s: %s", cmd, path, strerror(errno)), -1;
  struct stat st;
  int regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  close(fd);
  if (!regular)
    return cli_error("%s: %s is not a regular file", cmd, path), -1;
  return 0;
}

int cli_dir_writable(const char *cmd, const char *d) {
  char probe[4200];
  if (snprintf(probe, sizeof probe, "%s/.simfuzz-probe-XXXXXX", d) >= (int)sizeof probe)
    return cli_error("%s: path too long: %s", cmd, d), -1;
  int fd = mkstemp(probe);
  if (fd < 0)
    return cli_error("%s: cannot write in %s: %s", cmd, d, strerror(errno)), -1;
  int bad = write(fd, "x", 1) != 1; /* a full disk refuses data, not always names */
  close(fd);
  remove(probe);
  if (bad)
    return cli_error("%s: cannot write in %s: %s", cmd, d, strerror(errno)), -1;
  return 0;
}

/* The name of a temporary file of cli_create: ".<name>.tmp-XXXXXX". */
static int is_tmp_name(const char *n) {
  size_t l = strlen(n);
  return n[0] == '.' && l > 12 && !strncmp(n + l - 11, ".tmp-", 5);
}

void cli_remove_stale_tmp(const char *d) {
  DIR *dir = opendir(d);
  if (!dir)
    return;
  struct dirent *e;
  while ((e = readdir(dir))) {
    char p[4400];
    struct stat st;
    if (!is_tmp_name(e->d_name) || snprintf(p, sizeof p, "%s/%s", d, e->d_name) >= (int)sizeof p)
      continue;
    if (lstat(p, &st) == 0 && S_ISREG(st.st_mode))
      remove(p);
  }
  closedir(dir);
}

int cli_regular_file(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

unsigned cli_each_file(const char *dir,
                       unsigned (*fn)(void *ctx, const char *path, const char *name), void *ctx) {
  DIR *d = opendir(dir);
  if (!d)
    return 0;
  unsigned sum = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    char p[4096];
    if (e->d_name[0] == '.' || snprintf(p, sizeof p, "%s/%s", dir, e->d_name) >= (int)sizeof p)
      continue;
    if (cli_regular_file(p))
      sum += fn(ctx, p, e->d_name);
  }
  closedir(d);
  return sum;
}

/* ---- dispatch ------------------------------------------------------------ */

/* Every command, in the order the overview lists them. */
static const cli_command *const commands[] = {
    &cli_cmd_replay, &cli_cmd_minimize, &cli_cmd_triage,  &cli_cmd_show,
    &cli_cmd_encode, &cli_cmd_trace,    &cli_cmd_sweep,   &cli_cmd_check,
    &cli_cmd_gen,    &cli_cmd_features, &cli_cmd_targets, &cli_cmd_nightly,
    &cli_cmd_fuzz,   &cli_cmd_explore,  &cli_cmd_reach,   &cli_cmd_hash,
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static const cli_command *find_command(const char *name) {
  for (size_t k = 0; k < NCOMMANDS; k++)
    if (!strcmp(commands[k]->name, name))
      return commands[k];
  return NULL;
}

static void overview(FILE *f) {
  fprintf(f,
          "usage: %s [--target NAME] COMMAND [ARGS]\n\n"
          "simfuzz replays, minimizes and explains scenarios of a simfuzz target: the\n"
          "crash files of libFuzzer and AFL++ runs, scenario files in binary or text form.\n\n"
          "Commands:\n",
          cli_prog);
  for (size_t i = 0; i < NCOMMANDS; i++)
    if (commands[i]->help) { /* "usage : description" on the help's first line */
      size_t ulen, dlen;
      const char *desc, *h = cli_help_line(commands[i], &ulen, &desc, &dlen);
      fprintf(f, "  %-28.*s %.*s\n", (int)ulen, h, (int)dlen, desc);
    }
  fprintf(f,
          "\n%s help COMMAND (or COMMAND --help) describes one command; --version prints "
          "the release.\n",
          cli_prog);
  if (cli_target)
    fprintf(f, "Target: %s\n", cli_target->name);
  fprintf(f, "Exit status: 0 success, 1 a run failed, 2 bad input or usage, 3 determinism "
             "mismatch.\n");
}

int cli_command_needs_target(const char *cmd) {
  const cli_command *c = find_command(cmd);
  return c ? c->needs_target : 1;
}

void cli_overview(FILE *f) {
  overview(f);
}

/* --text / --binary, anywhere: how to read every input file (default:
 * text only for .txt, .textproto, .textpb and .pbtxt names). Removes them
 * from argv; returns the new argc. */
static int take_format_options(int argc, char **argv) {
  int kept = 1;
  for (int j = 1; j < argc; j++) {
    if (!strcmp(argv[j], "--text"))
      cli_input_format = CLI_FMT_TEXT;
    else if (!strcmp(argv[j], "--binary"))
      cli_input_format = CLI_FMT_BINARY;
    else
      argv[kept++] = argv[j];
  }
  SIM_ASSERT(kept >= 1 && kept <= argc);
  return kept;
}

/* help [COMMAND]. */
static int help(int argc, char **argv) {
  if (argc == 0) {
    overview(stdout);
    return EXIT_OK;
  }
  const cli_command *c = find_command(argv[0]);
  if (!c || !c->help)
    return cli_error("no command '%s' (try: %s help)", argv[0], cli_prog);
  printf("%s %s\n", cli_prog, c->help);
  return EXIT_OK;
}

/* Run command c on its arguments: its help if asked for; --target, which
 * may also follow the command, must name this binary's target. */
static int run_command(const cli_command *c, int argc, char **argv, const char *want) {
  for (int j = 0; j < argc; j++)
    if ((!strcmp(argv[j], "--help") || !strcmp(argv[j], "-h")) && c->help) {
      printf("%s %s\n", cli_prog, c->help);
      return EXIT_OK;
    }
  int n = 0;
  for (int j = 0; j < argc; j++) {
    if ((!strcmp(argv[j], "--target") || !strcmp(argv[j], "-t")) && j + 1 < argc) {
      want = argv[++j];
      continue;
    }
    argv[n++] = argv[j];
  }
  /* One binary holds one target's code: a request for another one is an
   * error here (the simfuzz dispatcher runs simfuzz-<target>). */
  if (want && (!cli_target || strcmp(cli_target->name, want)))
    return cli_error("this is %s; target '%s' is not built into it (run simfuzz --target %s, "
                     "or simfuzz-%s)",
                     cli_target ? cli_target->name : "simfuzz without targets", want, want, want);
  if (c->needs_target && !cli_target)
    return cli_error("%s: needs a target: %s --target NAME %s ...", c->name, cli_prog, c->name);
  int rc = c->fn(n, argv);
  /* output that could not be written (a full disk, a closed pipe) is an
   * error too, not a silently truncated report */
  if (fflush(stdout) != 0 || ferror(stdout))
    rc = cli_error("%s: cannot write the output: %s", c->name, strerror(errno));
  return rc;
}

int cli_main(int argc, char **argv, const sf_target *target) {
  /* A file size limit (ulimit -f) must fail a write with EFBIG, which the
   * tools report in one line, rather than kill them halfway through. */
  signal(SIGXFSZ, SIG_IGN);
  /* Likewise a closed pipe (`replay ... | head -1`): the write fails with
   * EPIPE and the command ends with one line and status 2, not SIGPIPE. */
  signal(SIGPIPE, SIG_IGN);
  /* the sweep and the explorer run many scenarios, as fuzzers do: keep the
   * heap instead of returning it and zeroing it again for every run */
  sf_driver_init();
  static char name[256];
  cli_target = target;
  if (target) {
    snprintf(name, sizeof name, "simfuzz-%s", target->name);
    cli_prog = name;
  }
  argc = take_format_options(argc, argv);
  int i = 1;
  const char *want = NULL;
  for (; i < argc && argv[i][0] == '-'; i++) {
    if ((!strcmp(argv[i], "--target") || !strcmp(argv[i], "-t")) && i + 1 < argc) {
      want = argv[++i];
    } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      overview(stdout);
      return EXIT_OK;
    } else if (!strcmp(argv[i], "--version")) {
      printf("simfuzz %s\n", simfuzz_version_string());
      return EXIT_OK;
    } else {
      return cli_error("unknown option '%s' (try: %s help)", argv[i], cli_prog);
    }
  }
  if (i >= argc) {
    overview(stderr);
    return EXIT_USAGE;
  }
  const char *cmd = argv[i++];
  if (!strcmp(cmd, "help"))
    return help(argc - i, argv + i);
  const cli_command *c = find_command(cmd);
  if (!c)
    return cli_error("unknown command '%s' (try: %s help)", cmd, cli_prog);
  return run_command(c, argc - i, argv + i, want);
}
