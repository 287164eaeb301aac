/* Internals shared by the files of the simfuzz command line. */
#ifndef SIMFUZZ_CLI_H
#define SIMFUZZ_CLI_H

#include <simfuzz/simfuzz_runner.h>

#include <signal.h>
#include <sys/types.h>

#define EXIT_OK 0
#define EXIT_FAILED 1
#define EXIT_USAGE 2
#define EXIT_NONDET 3

extern const char *cli_prog;
extern const sf_target *cli_target;

typedef enum { CLI_IN_TEXT, CLI_IN_PROTO, CLI_IN_SALVAGED, CLI_IN_GENERATED } cli_input_kind;

/** Print "prog: message" to stderr; returns EXIT_USAGE. */
int cli_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
#define SF_MAX_TEXT (16u << 20) /**< largest text scenario read */

/** How input files are read: text only when asked for or named so. */
typedef enum { CLI_FMT_AUTO, CLI_FMT_TEXT, CLI_FMT_BINARY } cli_format;
extern cli_format cli_input_format;

/** Read a file's first SF_MAX_INPUT bytes, as the fuzzers do; NULL after
 *  printing an error. The buffer is NUL-terminated. */
uint8_t *cli_read_file(const char *path, size_t *len);
/** Read at most max bytes; a larger file is an error if too_big_is_error,
 *  else cut at max. */
uint8_t *cli_read_file_max(const char *path, size_t *len, size_t max, int too_big_is_error);

/** Room for n + 1 elements of elem bytes in arr (capacity *cap, doubled
 *  from first as needed): the array to use from now on, or NULL if memory
 *  ran out (arr is then unchanged and still the caller's). */
void *cli_grow(void *arr, size_t *cap, size_t n, size_t elem, size_t first);
/** 1 if the name says protobuf text (.txt, .textproto, .textpb, .pbtxt). */
int cli_is_text_path(const char *path);
/** Parse text into protobuf bytes (*bin malloc'ed); -1 after an error. */
int cli_text_to_binary(const char *path, const uint8_t *text, size_t len, uint8_t **bin, size_t *n);
/** Note a file this command reads: no output may be it (cli_read_file
 *  notes every file it reads). */
void cli_note_input(const char *path);
/** 1 if path may be written: not a symbolic link, not a noted input, not a
 *  directory; else 0 after printing why. */
int cli_output_ok(const char *path);
/** Write a file atomically (cli_create, then cli_commit); -1 after an error. */
int cli_write_file(const char *path, const void *data, size_t len);
/** cli_write_file without the syncs (still atomic: a reader sees the whole
 *  file or none): for corpus files, where a file a power loss takes away
 *  costs some coverage and never a failure. -1 after an error. */
int cli_write_corpus_file(const char *path, const void *data, size_t len);
/** Create an exclusive temporary file beside path (tmp receives its name)
 *  after checking cli_output_ok(path); NULL after printing an error. */
FILE *cli_create(const char *path, char *tmp, size_t cap);
/** Flush, fsync and close f, rename tmp over path and sync the directory;
 *  -1 after an error (the temporary file is removed). */
int cli_commit(FILE *f, const char *tmp, const char *path);
/** Create directory d and its missing parents (as mkdir -p); 0, or -1 with
 *  errno set (ENOTDIR when d exists and is not a directory). Prints nothing. */
int cli_mkdirs(const char *d);
/** cli_mkdirs(d); 0, or -1 after printing "cmd: ..." when d cannot be created
 *  or is not a directory. */
int cli_make_dir(const char *cmd, const char *d);
/** path made absolute in buf (the working directory before a relative
 *  one), for a process that writes there while the system under test runs
 *  and may have changed its directory (libFuzzer's -artifact_prefix);
 *  path itself if the directory is unknown or buf too small. */
const char *cli_absolute(const char *path, char *buf, size_t cap);
/** 0 if a file can be written in directory d (one is created, written and
 *  removed); -1 after printing "cmd: cannot write in d: ...". */
int cli_dir_writable(const char *cmd, const char *d);
/** 0 if path is a regular file that lines can be appended to (created if
 *  missing, its contents kept); -1 after printing "cmd: ..." when it cannot
 *  be opened so, or is not a regular file (a FIFO, a directory). */
int cli_file_appendable(const char *cmd, const char *path);
/** Remove the temporary files of cli_create (".NAME.tmp-XXXXXX") that a
 *  write cut short by a signal left in directory d. */
void cli_remove_stale_tmp(const char *d);
/** 1 if path is a regular file itself (not a link, FIFO, device or
 *  directory): the only kind a command takes from a directory listing. */
int cli_regular_file(const char *path);
/** Call fn(ctx, path, name) for each regular file (cli_regular_file) of
 *  directory dir whose name does not start with '.', in the directory's
 *  order; a path longer than 4 KiB is passed over. Returns the sum of fn's
 *  results (0 if dir cannot be read). */
unsigned cli_each_file(const char *dir,
                       unsigned (*fn)(void *ctx, const char *path, const char *name), void *ctx);
/** 1 if both paths name the same existing file. */
int cli_same_file(const char *a, const char *b);
/** Load any scenario file (text, binary, crash file); -1 after an error. */
int cli_load(const char *path, sf_scenario *s, cli_input_kind *kind, size_t *bytes);
/** Write s as the contents of a JSON string (without the quotes), also
 *  safe inside an HTML <script>. */
void cli_json_str(FILE *f, const char *s);

/* ---- the JSON writer (json.c) --------------------------------------------- */
#define CJ_MAX_DEPTH 32
/** A JSON writer: commas and escaping are its business. */
typedef struct cli_json {
  FILE *f;
  int depth, after_key;
  unsigned count[CJ_MAX_DEPTH];
} cli_json;
void cj_begin(cli_json *j, FILE *f);
void cj_obj(cli_json *j);
void cj_end_obj(cli_json *j);
void cj_arr(cli_json *j);
void cj_end_arr(cli_json *j);
void cj_key(cli_json *j, const char *k);
void cj_str(cli_json *j, const char *s);
void cj_int(cli_json *j, int64_t v);
void cj_bool(cli_json *j, int v);
void cj_uint(cli_json *j, uint64_t v);
/** Nanoseconds as microseconds with three decimals (exact: "1234.567"). */
void cj_micros(cli_json *j, uint64_t ns);
/** A line break between values (layout only: the JSON is the same). */
void cj_newline(cli_json *j);
/** A key and its value in one call; a key opening an object or an array. */
void cj_kobj(cli_json *j, const char *k);
void cj_karr(cli_json *j, const char *k);
void cj_kstr(cli_json *j, const char *k, const char *s);
void cj_kint(cli_json *j, const char *k, int64_t v);
void cj_kbool(cli_json *j, const char *k, int v);
void cj_kmicros(cli_json *j, const char *k, uint64_t ns);
/** The value of key in a JSON object this writer wrote (a string
 *  unescaped; a number, a word, an array or an object as written, cut to
 *  cap bytes); -1 if absent or malformed. */
int cli_json_field(const char *obj, const char *key, char *out, size_t cap);
/** The unsigned count under key in a JSON object this writer wrote; 0 if
 *  obj is NULL or the key absent. */
uint64_t cli_json_count(const char *obj, const char *key);
/** Where the value of key starts in a JSON object this writer wrote (its
 *  arrays and objects may hold others); NULL if absent or malformed. */
const char *cli_json_value(const char *obj, const char *key);
/** The next element of a JSON array: *it starts at the array's '['
 *  (cli_json_value) and moves past each element; returns where the
 *  element starts, or NULL after the last one (or on malformed input). */
const char *cli_json_next(const char **it);

/** SHA-1 of data as 40 hex digits (sha1.c): libFuzzer's file names. */
void cli_sha1_hex(const void *data, size_t len, char hex[41]);
/** SHA-1 of a file's contents; -1 if it cannot be read. */
int cli_sha1_file(const char *path, char hex[41]);
/** How a file was read, in words. */
const char *cli_kind_name(cli_input_kind k);
/** A heap scenario (exits on out of memory). */
sf_scenario *cli_new_scenario(void);
/** "1.5", "300ms", "20us", "7s" -> ns; -1 if malformed. */
int cli_parse_time(const char *s, uint64_t *ns);
/** Unsigned decimal integer (digits only: "010" is ten); -1 if malformed. */
int cli_parse_u64(const char *s, uint64_t *v);
/** "A-B" or "A" -> range; -1 if malformed. */
int cli_parse_range(const char *s, uint64_t *a, uint64_t *b);

/** How an isolated run of a scenario ended. */
typedef struct cli_outcome {
  char sig[512];       /**< failure signature; "" when the run passed */
  uint64_t events;     /**< events of the run */
  uint64_t hash;       /**< trace hash at the end or at the failure */
  uint64_t time_ns;    /**< virtual time of the failure (or the end) */
  int node;            /**< node of the failure, -1 if none */
  char invariant[128]; /**< failed invariant, "liveness", or "" */
  char message[256];   /**< failure message, or the crash's first report line */
  int nondet;          /**< (twice) the second run in the same process differed */
} cli_outcome;

/* ---- isolated runs (isolate.c) ------------------------------------------ */

#define CLI_DEFAULT_TIMEOUT_MS 20000u /**< per-run wall-clock limit of isolated runs */
#define CLI_DEFAULT_RSS_MB 2048u      /**< per-child resident memory limit */
#define CLI_TAIL 65536u               /**< bytes of a child's output kept */
#define CLI_RING 64u                  /**< records a child can send ahead of its parent */

/** Limits of a supervised child (0 = none). */
typedef struct cli_limits {
  uint64_t time_ms; /**< per run: since the child's last heartbeat */
  uint64_t rss_mb;  /**< resident memory */
} cli_limits;

/** Limits of every isolated run of this process (commands set them from
 *  --timeout and --rss-limit-mb). */
extern cli_limits cli_run_limits;
/** Set by the tools' SIGINT/SIGTERM handlers: supervised children are
 *  killed and reaped, and the command ends with a summary. */
extern volatile sig_atomic_t cli_interrupted;
/** The stop signal (SIGINT, SIGTERM) that set cli_interrupted, or 0. */
extern volatile sig_atomic_t cli_stop_signal;
/** The tools' handler of SIGINT and SIGTERM: sets cli_stop_signal and
 *  cli_interrupted. */
void cli_on_stop(int sig);
/** Install cli_on_stop for SIGINT and SIGTERM (without SA_RESTART, so wait
 *  loops wake up), keeping the dispositions they replace in old. */
void cli_catch_stop(struct sigaction old[2]);
/** Say that this process changed a signal's disposition (a handler of its
 *  own): its children reset it (cli_fork_tied). cli_catch_stop says so. */
void cli_signals_changed(void);
/** Put back what cli_catch_stop replaced. */
void cli_restore_stop(const struct sigaction old[2]);

/** What a child sends on its result channel. */
typedef struct cli_record {
  uint32_t kind; /**< CLI_REC_* */
  uint64_t seed; /**< the sweep's seed (0 for single runs) */
  cli_outcome o;
} cli_record;
enum {
  CLI_REC_RESULT = 1,   /**< a run's outcome */
  CLI_REC_DONE = 2,     /**< the worker finished its seeds; seed = the last one run */
  CLI_REC_PROGRESS = 3, /**< seed = the last one run */
  CLI_REC_RESUME = 4,   /**< the worker stops after a crashed run (o.nondet: the
                             CLI_WORN_* bits of a worker that wore out): go on at seed */
  CLI_REC_FOUND = 5,    /**< explore: a failure; o.message = the file saved ("" if none) */
};

/** Heartbeat words in the shared page. */
enum { CLI_BEAT_SEED = 0, CLI_BEAT_RUNS = 1 };

/** The child's end: where results go and its heartbeat. Records travel
 *  through shared memory (a ring after the heartbeat words); the pipe
 *  res_fd only wakes the parent, and only while it is still the pipe the
 *  parent made (res_dev, res_ino): a system under test that closes
 *  descriptors it does not own, as a daemon does at start, and opens files
 *  on their numbers, must neither lose the records nor receive them. */
typedef struct cli_child_io {
  int res_fd;
  uint64_t res_dev, res_ino;
  volatile uint64_t *beat;
} cli_child_io;

/** How a supervised child ended. */
enum {
  CLI_END_OK = 0,          /**< exited with status 0 */
  CLI_END_CRASH = 1,       /**< killed by a signal or a non-zero exit status */
  CLI_END_TIMEOUT = 2,     /**< no heartbeat within the time limit: killed */
  CLI_END_OOM = 3,         /**< over the memory limit: killed */
  CLI_END_INTERRUPTED = 4, /**< the tool was interrupted: killed */
};

/** A supervised child process (a few KiB: allocate it). */
typedef struct cli_child {
  long pid;
  int out_fd, res_fd;
  volatile uint64_t *beat;
  int status;   /**< waitpid status */
  int ended_by; /**< CLI_END_* when the parent killed it */
  uint64_t last_seed, runs;
  uint64_t out_bytes;
  size_t tail_len;
  char tail[CLI_TAIL + 1]; /**< the last output, NUL-terminated */
} cli_child;

typedef void (*cli_on_record)(void *ctx, const cli_record *rec);

/** What a worker process held when it started: its lowest free file
 *  descriptor and its resident memory. */
typedef struct cli_baseline {
  int fd;          /**< -1: none was free */
  uint64_t rss_mb; /**< 0: unknown */
} cli_baseline;
/** Why a worker gives way to a fresh process (cli_worn). */
enum {
  CLI_WORN_FDS = 1,    /**< the system under test leaves file descriptors open across runs */
  CLI_WORN_MEMORY = 2, /**< the worker's memory grew across runs, to half the room left */
};
/** Take the baseline of this worker process. */
void cli_baseline_take(cli_baseline *b);
/** 0, or CLI_WORN_* bits when the system under test has been leaving
 *  resources behind across runs, so that the worker should give way to a
 *  fresh process before it runs out: its lowest free descriptor climbed
 *  by half the room the limit left it (at most 256), or none is free; or
 *  its resident memory grew by half the room that cli_run_limits.rss_mb
 *  left it. Running out would change what the system does (EMFILE), cost
 *  the worker its files, or be filed as the out-of-memory failure of
 *  whichever run was then going. */
int cli_worn(const cli_baseline *b);
/** The summary's lines for workers that wore out (cli_worn), if any: "CMD:
 *  the system under test leaves file descriptors open across runs: N
 *  workers started afresh ...", and the same for memory. */
void cli_print_worn(const char *cmd, uint64_t fd_restarts, uint64_t memory_restarts);
/** fork() after flushing stdio, for a child that must never outlive this
 *  process: it dies with it (PR_SET_PDEATHSIG on Linux), and exits at once
 *  if this process was already gone when it started. The child starts with
 *  the default dispositions of the signals the tools handle (stop signals,
 *  SIGALRM, SIGPIPE, SIGCHLD) and an empty signal mask. 0 in the child, its
 *  pid in the parent, -1 on failure. */
pid_t cli_fork_tied(void);

/** The one way to start a supervised child: cli_fork_tied(), in a process
 *  group of its own (killed with it: cli_child_reap), with stdout and
 *  stderr on a pipe that cli_child_wait drains. With io, also a result
 *  channel and a heartbeat page (set in *io in the child). Returns 0 in the
 *  child, its pid in the parent, -1 (nothing started). */
pid_t cli_child_fork(cli_child *c, cli_child_io *io);
/** Fork a child that runs body(arg, io) with stdout and stderr on a
 *  drained pipe, then exits 0. Returns 0, or -1 (nothing started). */
int cli_child_spawn(cli_child *c, void (*body)(void *arg, const cli_child_io *io), void *arg);
/** Start the program argv[0] as a supervised child (stdin /dev/null; its
 *  output is the child's tail); 0, or -1 (nothing started). */
int cli_child_exec(cli_child *c, char *const argv[]);
/** Start the program at path (argv its arguments) in a tied child in a
 *  process group of its own, stdin /dev/null, stdout on out_fd and stderr
 *  on err_fd (-1: /dev/null); wait for it with cli_child_reap. Its pid, or
 *  -1 (nothing started). */
pid_t cli_spawn_program(const char *path, char *const argv[], int out_fd, int err_fd);
/** Run this program again in place (execv of /proc/self/exe with argv)
 *  without address-space randomization, as `setarch -R` does, unless it
 *  already runs so. Returns only if it cannot (the kernel or a seccomp
 *  filter refuses): then the process goes on as it is. */
void cli_reexec_fixed_layout(char *const argv[]);
/* SF_ASAN: built with a sanitizer that reports crashes itself (SIGSEGV,
 * SIGBUS, ...: not abort()). */
#if defined(__SANITIZE_ADDRESS__)
#define SF_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define SF_ASAN 1
#endif
#endif

/** Where a crash happened, called from a signal handler (directly): the
 *  name of the first function past the handler's and the C library's
 *  frames, else module+offset, in buf; "?" when nothing is known. Not
 *  async-signal-safe (the process is dying of the signal anyway). */
const char *cli_crash_site(char *buf, size_t cap);
/** Loads the unwinder that cli_crash_site uses, before any signal. */
void cli_crash_site_warm(void);
/** Monotonic milliseconds, for supervising children and budgets (never
 *  inside a run). */
uint64_t cli_now_ms(void);
/** Wait for pid (cli_spawn_program's) to end; once cli_interrupted is set,
 *  its process group gets SIGTERM, then SIGKILL 3 s later. Then what is
 *  left of the group is killed. *status its wait status; 0, or -1. */
int cli_wait_program(pid_t pid, int *status);
/** cli_wait_program for at most limit_ms: past that, or once
 *  cli_interrupted is set, its process group is killed at once and it is
 *  reaped. 0 if it ended by itself (what is left of its group is killed
 *  then too), -1 if not; *status its wait status. */
int cli_wait_program_within(pid_t pid, uint64_t limit_ms, int *status);
/** Run the program at path to its end (cli_spawn_program, then wait; when
 *  cli_interrupted is set meanwhile, its process group gets SIGTERM and 3 s
 *  later SIGKILL); *status its wait status. 0, or -1 (nothing started,
 *  errno says why). */
int cli_run_program(const char *path, char *const argv[], int out_fd, int err_fd, int *status);
/** cli_run_program with stdout on a pipe (stderr on err_fd, -1 /dev/null):
 *  what it prints, cut to cap - 1 bytes and NUL-terminated, into buf (the
 *  rest is read and dropped, so the child never blocks). The bytes kept,
 *  or -1 (nothing started). */
long cli_program_output(const char *path, char *const argv[], int err_fd, char *buf, size_t cap,
                        int *status);
/** Wait for pid (a child started in its own group) to end, kill what is
 *  left of its process group, then reap it; *status its wait status.
 *  0, or -1 if it was no child of this process. */
int cli_child_reap(pid_t pid, int *status);
/** Supervise the child until it ends: drain its output (keeping the tail),
 *  pass each result record to fn, kill it on the limits or when
 *  cli_interrupted is set, reap it. Returns CLI_END_*. */
int cli_child_wait(cli_child *c, const cli_limits *lim, cli_on_record fn, void *ctx);
/** A run's result as a record. */
void cli_record_fill(cli_record *rec, uint64_t seed, const sf_result *r);
/** Send a record on the child's result channel (io of cli_child_fork);
 *  waits while the parent has CLI_RING records still to read; -1 without
 *  a channel. */
int cli_record_send(const cli_child_io *io, const cli_record *rec);
/** The signature of a crash from the child's output and wait status:
 *  "crash: assert FILE:LINE 'EXPR'", "crash: signal N [sanitizer error]
 *  [top frame]", "crash: exit N [top frame]", "crash: SANITIZER ERROR
 *  [top frame]" (a sanitizer's report, whatever exit code it chose),
 *  "timeout" or "out-of-memory". */
void cli_crash_sig(const char *out, int status, int ended_by, char *sig, size_t cap);
/** The outcome of a child that ended without a result (crash, limits). */
void cli_crash_outcome(const cli_child *c, int ended, cli_outcome *o);

/** Run s in a supervised child (cli_run_limits), so that a crash, hang or
 *  memory blow-up of the system under test cannot take the tool down, and
 *  sum up how it ended. The signature identifies a failure for
 *  deduplication: invariant and check site, "liveness", the crash's
 *  signature (cli_crash_sig), "timeout" or "out-of-memory". With twice, the
 *  child runs s a second time and sets nondet if that run differs (state
 *  surviving a run). */
void cli_run_isolated(const sf_scenario *s, cli_outcome *o, int twice);

/* ---- options and commands (opts.c) ---------------------------------------- */

/** What an option takes and where it puts it. */
typedef enum {
  CLI_OPT_FLAG,    /**< no value: *(int *)dst = 1 */
  CLI_OPT_STR,     /**< *(const char **)dst = the value */
  CLI_OPT_U64,     /**< *(uint64_t *)dst, a decimal within [min, max] (max 0: none) */
  CLI_OPT_U32,     /**< *(uint32_t *)dst, likewise (max at most UINT32_MAX) */
  CLI_OPT_SECONDS, /**< *(double *)dst, seconds, more than 0 and under 10^7 */
  CLI_OPT_TIME,    /**< *(uint64_t *)dst, nanoseconds ("1.5", "300ms", "20us") */
  CLI_OPT_RANGE,   /**< ((uint64_t *)dst)[0..1], "A-B" or "A" */
  CLI_OPT_FN,      /**< fn(cmd, value, dst): 0, or -1 after printing why */
  CLI_OPT_LIMITS   /**< --timeout S and --rss-limit-mb MB (cli_run_limits) */
} cli_opt_kind;

/** One option of a command's table (a row with name NULL ends it). */
typedef struct cli_opt {
  const char *name, *alias; /**< "--quiet", "-q" (alias may be NULL) */
  cli_opt_kind kind;
  void *dst;
  uint64_t min, max;
  int (*fn)(const char *cmd, const char *value, void *dst);
} cli_opt;

/* The rows of an option table, one macro per kind; CLI_END ends it. */
#define CLI_FLAG(name, alias, dst)                                                                 \
  { name, alias, CLI_OPT_FLAG, dst, 0, 0, NULL }
#define CLI_STR(name, alias, dst)                                                                  \
  { name, alias, CLI_OPT_STR, dst, 0, 0, NULL }
#define CLI_U64(name, dst, min, max)                                                               \
  { name, NULL, CLI_OPT_U64, dst, min, max, NULL }
#define CLI_U32(name, dst, min, max)                                                               \
  { name, NULL, CLI_OPT_U32, dst, min, max, NULL }
#define CLI_SECONDS(name, dst)                                                                     \
  { name, NULL, CLI_OPT_SECONDS, dst, 0, 0, NULL }
#define CLI_TIME(name, dst)                                                                        \
  { name, NULL, CLI_OPT_TIME, dst, 0, 0, NULL }
#define CLI_RANGE(name, dst)                                                                       \
  { name, NULL, CLI_OPT_RANGE, dst, 0, 0, NULL }
#define CLI_FN(name, dst, fn)                                                                      \
  { name, NULL, CLI_OPT_FN, dst, 0, 0, fn }
/** The row that takes the isolation limits (--timeout, --rss-limit-mb). */
#define CLI_LIMITS                                                                                 \
  { "--timeout", "--rss-limit-mb", CLI_OPT_LIMITS, NULL, 0, 0, NULL }
#define CLI_END                                                                                    \
  { NULL, NULL, CLI_OPT_FLAG, NULL, 0, 0, NULL }

/** Parse a command's arguments against its option table: every option is
 *  stored, the positional arguments stay in argv[0..n) in their order.
 *  Returns n, or -1 after printing the error ("CMD: unknown option ...").
 *  "--help" never reaches a command: cli_main answers it. */
int cli_parse(const char *cmd, int argc, char **argv, const cli_opt *opts);

/** cli_parse for a command of one input: 0 with *in the input (NULL if
 *  none was given), or -1 after printing the error (also for a second
 *  input). */
int cli_parse_one(const char *cmd, int argc, char **argv, const cli_opt *opts, const char **in);

/** cli_parse_one for a command that reads one input and writes -o OUT
 *  (out points at the -o option's value; what names the input in the
 *  usage line): both given and not one file, or -1 after printing why. */
int cli_parse_in_out(const char *cmd, int argc, char **argv, const cli_opt *opts, const char **in,
                     const char *const *out, const char *what);

/** cli_parse for a command of options only: 0, or -1 after printing the
 *  error (also for a positional argument). */
int cli_parse_none(const char *cmd, int argc, char **argv, const cli_opt *opts);

/** Run s on the target with one trace consumer (fn, ctx; every other run
 *  option off) into r. */
void cli_run_traced(const sf_scenario *s, sim_trace_fn fn, void *ctx, sf_result *r);

/** A command: its name, its function, whether it runs a target's code and
 *  its help (first line "usage : description", then the manual page);
 *  each command's file defines its own, beside its code. */
typedef struct cli_command {
  const char *name;
  int (*fn)(int argc, char **argv);
  int needs_target;
  const char *help; /**< NULL: not listed (internal commands) */
} cli_command;

/** The usage and the description of a command's help's first line. */
const char *cli_help_line(const cli_command *c, size_t *usage_len, const char **desc,
                          size_t *desc_len);

extern const cli_command cli_cmd_replay, cli_cmd_minimize, cli_cmd_triage, cli_cmd_show,
    cli_cmd_encode, cli_cmd_trace, cli_cmd_sweep, cli_cmd_check, cli_cmd_gen, cli_cmd_features,
    cli_cmd_targets, cli_cmd_nightly, cli_cmd_fuzz, cli_cmd_explore, cli_cmd_reach, cli_cmd_hash;

/** The command line: parse argv and run one command on `target` (NULL in
 *  the dispatcher, which runs only the commands that need no target). */
int cli_main(int argc, char **argv, const sf_target *target);
/** 1 if the command runs a target's code (the dispatcher forwards it). */
int cli_command_needs_target(const char *cmd);
/** The usage overview. */
void cli_overview(FILE *f);

/** Parse the isolation options shared by sweep, triage and minimize
 *  (--timeout SECONDS, --rss-limit-mb MB) at argv[*i]; returns 1 if one was
 *  consumed, 0 if argv[*i] is not one, -1 after an error. */
int cli_limit_option(int argc, char **argv, int *i);
int cmd_explore(int argc, char **argv);

#endif
