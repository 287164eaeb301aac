/* simfuzz: the dispatcher. It holds no target's code: `simfuzz --target T
 * COMMAND ...` runs the per-target tool simfuzz-T, which was built with T's
 * sources alone, so two targets can never bind to each other's code (two
 * releases of one library define the same global symbols). Commands that
 * need no target (show, encode, gen, help, targets) run here.
 *
 * simfuzz-T is looked up, first match wins, in
 *   1. the directories of $SIMFUZZ_TARGET_PATH (colon-separated),
 *   2. the directory this program was started from (argv[0], then
 *      /proc/self/exe: the build's bin/ directory),
 *   3. $PATH.
 */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { MAX_DIRS = 64, MAX_FOUND = 1024, PATH_CAP = 4096 };

typedef struct {
  char dirs[MAX_DIRS][PATH_CAP];
  int n;
} search_path;

static void add_dir(search_path *sp, const char *d, size_t len) {
  if (len == 0 || len >= PATH_CAP || sp->n >= MAX_DIRS)
    return;
  for (int i = 0; i < sp->n; i++)
    if (strlen(sp->dirs[i]) == len && !memcmp(sp->dirs[i], d, len))
      return;
  memcpy(sp->dirs[sp->n], d, len);
  sp->dirs[sp->n++][len] = 0;
}

static void add_list(search_path *sp, const char *list) {
  while (list && *list) {
    size_t n = strcspn(list, ":");
    add_dir(sp, list, n);
    list += n + (list[n] == ':');
  }
}

static void add_dir_of(search_path *sp, const char *file) {
  const char *slash = strrchr(file, '/');
  if (slash)
    add_dir(sp, file, slash == file ? 1 : (size_t)(slash - file));
}

static void build_search_path(search_path *sp, const char *argv0) {
  sp->n = 0;
  add_list(sp, getenv("SIMFUZZ_TARGET_PATH"));
  if (strchr(argv0, '/'))
    add_dir_of(sp, argv0);
  static char self[PATH_CAP];
  ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
  if (k > 0) {
    self[k] = 0;
    add_dir_of(sp, self);
  }
  add_list(sp, getenv("PATH"));
}

/* Target names are [A-Za-z0-9_]: nothing that could leave a directory. */
static int valid_name(const char *t) {
  if (!*t || strlen(t) > 200)
    return 0;
  for (const char *p = t; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
          *p == '_'))
      return 0;
  return 1;
}

static int executable(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* The path of simfuzz-<t>, or NULL. */
static const char *find_tool(const search_path *sp, const char *t) {
  static char path[PATH_CAP + 256];
  for (int i = 0; i < sp->n; i++) {
    if (snprintf(path, sizeof path, "%s/simfuzz-%s", sp->dirs[i], t) >= (int)sizeof path)
      continue;
    if (executable(path))
      return path;
  }
  return NULL;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Names of every simfuzz-<t> on the search path, sorted, first match of a
 * name only. Returns the count; names are heap strings. */
static int list_targets(const search_path *sp, char **names, int cap) {
  int n = 0;
  for (int i = 0; i < sp->n; i++) {
    DIR *d = opendir(sp->dirs[i]);
    if (!d)
      continue;
    struct dirent *e;
    while ((e = readdir(d)) && n < cap) {
      if (strncmp(e->d_name, "simfuzz-", 8) || !valid_name(e->d_name + 8))
        continue;
      const char *t = e->d_name + 8;
      int dup = 0;
      for (int j = 0; j < n && !dup; j++)
        dup = !strcmp(names[j], t);
      if (dup || find_tool(sp, t) == NULL)
        continue;
      names[n] = strdup(t);
      if (names[n])
        n++;
    }
    closedir(d);
  }
  qsort(names, (size_t)n, sizeof *names, cmp_str);
  return n;
}

static void free_names(char **names, int n) {
  for (int i = 0; i < n; i++)
    free(names[i]);
}

static void print_targets(FILE *f, const search_path *sp, int with_summary) {
  char *names[MAX_FOUND];
  int n = list_targets(sp, names, MAX_FOUND);
  for (int i = 0; i < n; i++) {
    if (!with_summary) {
      fprintf(f, " %s", names[i]);
      continue;
    }
    /* each tool prints its own name and summary */
    const char *tool = find_tool(sp, names[i]);
    char line[512] = "";
    int st;
    char *argv[] = {(char *)tool, "targets", NULL};
    if (!tool || cli_program_output(tool, argv, -1, line, sizeof line - 1, &st) <= 0) {
      snprintf(line, sizeof line, "%s\n", names[i]);
    } else {
      line[strcspn(line, "\n")] = 0;
      strcat(line, "\n");
    }
    fputs(line, f);
  }
  if (!with_summary)
    fputc('\n', f);
  if (n == 0)
    fprintf(f,
            "%s(no simfuzz-<target> tools found: build targets with simfuzz_add_target(), or "
            "set SIMFUZZ_TARGET_PATH)\n",
            with_summary ? "" : "  ");
  free_names(names, n);
}

/* With no --target: the one target found is the one meant; NULL after
 * telling the user to choose (none, or several). */
static const char *only_target(search_path *sp, const char *cmd) {
  char *names[MAX_FOUND];
  int n = list_targets(sp, names, MAX_FOUND);
  static char only[256];
  const char *want = NULL;
  if (n == 1) {
    snprintf(only, sizeof only, "%s", names[0]);
    want = only;
  }
  free_names(names, n);
  if (!want) {
    fprintf(stderr, "simfuzz: %s: %s: choose one with --target NAME; targets:", cmd,
            n ? "several targets" : "no target");
    print_targets(stderr, sp, 0);
  }
  return want;
}

/* Commands that run here, without a target: the list of targets, the
 * overview (with what is built), help and the commands that need none.
 * Returns the exit status, or -1 if the command needs a target. */
static int run_here(int argc, char **argv, search_path *sp, const char *cmd) {
  int help = !cmd || !strcmp(cmd, "help");
  if (cmd && !strcmp(cmd, "targets")) {
    print_targets(stdout, sp, 1);
    return EXIT_OK;
  }
  if (help && (!cmd || argv[argc - 1] == cmd)) { /* the overview, and what is built */
    int rc = cli_main(argc, argv, NULL);
    FILE *f = rc == EXIT_OK ? stdout : stderr;
    fprintf(f, "Targets:");
    print_targets(f, sp, 0);
    return rc;
  }
  for (int i = 1; i < argc && !help; i++)
    help = !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h");
  if (help || !cli_command_needs_target(cmd))
    return cli_main(argc, argv, NULL);
  return -1;
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--version"))
    return cli_main(argc, argv, NULL);
  search_path *sp = calloc(1, sizeof *sp);
  if (!sp)
    return cli_error("out of memory");
  build_search_path(sp, argv[0]);
  /* find --target (before or after the command) and the command */
  const char *want = NULL, *cmd = NULL;
  for (int i = 1; i < argc; i++) {
    if ((!strcmp(argv[i], "--target") || !strcmp(argv[i], "-t")) && i + 1 < argc)
      want = argv[++i];
    else if (!cmd && argv[i][0] != '-')
      cmd = argv[i];
    else if (!cmd && strcmp(argv[i], "--help") && strcmp(argv[i], "-h"))
      break; /* an unknown leading option: cli_main reports it */
  }
  if (!want) {
    int rc = run_here(argc, argv, sp, cmd);
    if (rc < 0 && !(want = only_target(sp, cmd)))
      rc = EXIT_USAGE;
    if (rc >= 0) {
      free(sp);
      return rc;
    }
  }
  if (!valid_name(want)) {
    free(sp);
    return cli_error("bad target name '%s' (letters, digits and _)", want);
  }
  const char *tool = find_tool(sp, want);
  if (!tool) {
    fprintf(stderr, "simfuzz: unknown target '%s' (no simfuzz-%s found); targets:", want, want);
    print_targets(stderr, sp, 0);
    free(sp);
    return EXIT_USAGE;
  }
  static char path[PATH_CAP + 256];
  snprintf(path, sizeof path, "%s", tool);
  free(sp);
  fflush(stdout);
  fflush(stderr);
  argv[0] = path;
  execv(path, argv);
  return cli_error("cannot run %s: %s", path, strerror(errno));
}
