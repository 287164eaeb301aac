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
/** 0 if a file can be written in directory d (one is created, written and
 *  removed); -1 after printing "cmd: cannot write in d: ...". */
int cli_dir_writable(const char *cmd, const char *d);
/** Remove the temporary files of cli_create (".NAME.tmp-XXXXXX") that a
 *  write cut short by a signal left in directory d. */
void cli_remove_stale_tmp(const char *d);
/** 1 if path is a regular file itself (not a link, FIFO, device or
 *  directory): the only kind a command takes from a directory listing. */
int cli_regular_file(const char *path);
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
/** A key and its value in one call; a key opening an object or an array. */
void cj_kobj(cli_json *j, const char *k);
void cj_karr(cli_json *j, const char *k);
void cj_kstr(cli_json *j, const char *k, const char *s);
void cj_kint(cli_json *j, const char *k, int64_t v);
void cj_kbool(cli_json *j, const char *k, int v);
/** The value of key in a JSON object this writer wrote (a string
 *  unescaped; a number, a word, an array or an object as written, cut to
 *  cap bytes); -1 if absent or malformed. */
int cli_json_field(const char *obj, const char *key, char *out, size_t cap);
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
  CLI_REC_RESUME = 4,   /**< the worker stops after a crashed run: go on at seed */
  CLI_REC_FOUND = 5,    /**< explore: a failure; o.message = the file saved ("" if none) */
};

/** Heartbeat words in the shared page. */
enum { CLI_BEAT_SEED = 0, CLI_BEAT_RUNS = 1 };

/** The child's end: where results go and its heartbeat. */
typedef struct cli_child_io {
  int res_fd;
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
  size_t pending_len;
  cli_record pending;
  size_t tail_len;
  char tail[CLI_TAIL + 1]; /**< the last output, NUL-terminated after wait */
} cli_child;

typedef void (*cli_on_record)(void *ctx, const cli_record *rec);

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
/** Send a record on the result channel; -1 if the tool is gone. */
int cli_record_send(int fd, const cli_record *rec);
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

/** The command line: parse argv and run one command on `target` (NULL in
 *  the dispatcher, which runs only the commands that need no target). */
int cli_main(int argc, char **argv, const sf_target *target);
/** 1 if the command runs a target's code (the dispatcher forwards it). */
int cli_command_needs_target(const char *cmd);
/** The usage overview. */
void cli_overview(FILE *f);

int cmd_replay(int argc, char **argv);
int cmd_triage(int argc, char **argv);
int cmd_check_determinism(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
/** Parse the isolation options shared by sweep, triage and minimize
 *  (--timeout SECONDS, --rss-limit-mb MB) at argv[*i]; returns 1 if one was
 *  consumed, 0 if argv[*i] is not one, -1 after an error. */
int cli_limit_option(int argc, char **argv, int *i);
int cmd_minimize(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_nightly(int argc, char **argv);
int cmd_explore(int argc, char **argv);
int cmd_fuzz(int argc, char **argv);
int cmd_reach(int argc, char **argv);

#define HELP_REPLAY                                                                                \
  "replay FILE... : run scenarios and print what happened\n\n"                                     \
  "SYNOPSIS\n"                                                                                     \
  "  replay [--from T] [--to T] [--node N]... [--kinds K,...] [--no-timeline] [-q] FILE...\n\n"    \
  "DESCRIPTION\n"                                                                                  \
  "  Runs each FILE on the target and prints its timeline (virtual time, node, event,\n"           \
  "  the message as the target describes it, the fault's reason), then a summary and,\n"           \
  "  when the run fails, the failure report: invariant, node, time, the steps executed,\n"         \
  "  the last events and the faults that fired. FILE may be a libFuzzer or AFL++ crash\n"          \
  "  file or a scenario in binary or text form: a file is read as the fuzzers read it\n"           \
  "  (bytes) unless its name ends in .txt, .textproto, .textpb or .pbtxt, or --text is\n"          \
  "  given. Each file is run twice and the trace hashes compared.\n\n"                             \
  "OPTIONS\n"                                                                                      \
  "  --from T, --to T   only events in this window (T: 1.5, 1.5s, 300ms, 20us)\n"                  \
  "  --node N           only events of node N (repeatable)\n"                                      \
  "  --kinds K,...      only these event kinds (send, deliver, drop, timer, crash, ...)\n"         \
  "                     or groups: messages, faults, conn, disk, nodes\n"                          \
  "  --no-timeline      summary and report only\n"                                                 \
  "  -q, --quiet        one summary line per file\n\n"                                             \
  "EXIT STATUS\n"                                                                                  \
  "  0 no failure, 1 an invariant or liveness failure, 2 bad input or usage,\n"                    \
  "  3 determinism mismatch (the two runs differed)\n\n"                                           \
  "EXAMPLES\n"                                                                                     \
  "  replay crash-4f1e...            what the fuzzer found\n"                                      \
  "  replay --kinds faults,conn --node 1 min.pb\n"

#define HELP_MINIMIZE                                                                              \
  "minimize FILE -o OUT : shrink a failing scenario, keeping the same failure\n\n"                 \
  "SYNOPSIS\n"                                                                                     \
  "  minimize [--max-tries N] [--timeout S] [--rss-limit-mb MB] [-q] FILE -o OUT\n\n"              \
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
  "  -q              no progress line\n\n"                                                         \
  "EXIT STATUS\n"                                                                                  \
  "  0 minimized, 1 FILE does not fail (nothing to keep), 2 bad input or usage\n"

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

#define HELP_TRACE                                                                                 \
  "trace FILE : export a run as a Chrome trace or a space-time diagram\n\n"                        \
  "SYNOPSIS\n"                                                                                     \
  "  trace FILE [--chrome OUT.json] [--html OUT.html]\n\n"                                         \
  "DESCRIPTION\n"                                                                                  \
  "  Runs FILE and writes:\n"                                                                      \
  "  --chrome OUT.json  Chrome trace-event JSON (open it in Perfetto or chrome://tracing):\n"      \
  "                     a track per node, flow arrows from each send to its delivery,\n"           \
  "                     instant events for faults and the failure\n"                               \
  "  --html OUT.html    one self-contained page with a space-time diagram: a line per node,\n"     \
  "                     an arrow per message, drops, duplicates, resets, partitions, crashes\n"    \
  "                     and restarts marked, the failure highlighted; hover for details\n\n"       \
  "EXIT STATUS\n"                                                                                  \
  "  0 written (the run may fail; the export shows it), 2 bad input or usage\n"

#define HELP_SWEEP                                                                                 \
  "sweep --seeds A-B : random-seed simulation\n\n"                                                 \
  "SYNOPSIS\n"                                                                                     \
  "  sweep --seeds A-B [-o DIR] [--stop-on-first] [--timeout S] [--rss-limit-mb MB] [-v] [-q]\n\n" \
  "DESCRIPTION\n"                                                                                  \
  "  Runs the random scenario of every seed in A..B (swarm: each seed draws its own fault\n"       \
  "  mix, network, disk and steps), the way FoundationDB-style simulators test. Prints a\n"        \
  "  progress line and a summary; each failing seed's scenario is saved to DIR as\n"               \
  "  <target>-seed-<N>.pb, a file every other command accepts.\n\n"                                \
  "  The seeds run in a worker process. If the system under test aborts, fails an assert(),\n"     \
  "  crashes, runs past the time limit or over the memory limit, that seed is recorded as a\n"     \
  "  failure with the crash's signature (the assertion and its site, or the signal and top\n"      \
  "  frame; 'timeout'; 'out-of-memory') and a new worker goes on with the next seed.\n"            \
  "  SIGINT or SIGTERM stops the sweep with its summary.\n\n"                                      \
  "OPTIONS\n"                                                                                      \
  "  -o DIR             save failures here\n"                                                      \
  "  --stop-on-first    stop at the first failure\n"                                               \
  "  --timeout S        wall-clock limit per seed (default 20)\n"                                  \
  "  --rss-limit-mb MB  memory limit of the worker (default 2048)\n"                               \
  "  -v                 print every seed's trace hash\n"                                           \
  "  -q                 no progress line\n\n"                                                      \
  "EXIT STATUS\n"                                                                                  \
  "  0 no failure, 1 failures found, 2 usage or a failure that could not be saved,\n"              \
  "  128+N stopped by signal N before any failure\n"

#define HELP_CHECK                                                                                 \
  "check-determinism FILE... : check that each input replays identically\n\n"                      \
  "SYNOPSIS\n"                                                                                     \
  "  check-determinism [--runs N] FILE...\n\n"                                                     \
  "DESCRIPTION\n"                                                                                  \
  "  Replays each FILE N times in this process (default 3) and once in a fresh process, and\n"     \
  "  compares the trace hashes. On a mismatch it prints the first event where the runs\n"          \
  "  diverge, from both runs.\n\n"                                                                 \
  "EXIT STATUS\n"                                                                                  \
  "  0 deterministic, 3 a mismatch, 2 bad input or usage\n"

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

#define HELP_FUZZ                                                                                  \
  "fuzz -o DIR : the default fuzzing job for this target\n\n"                                      \
  "SYNOPSIS\n"                                                                                     \
  "  fuzz -o DIR [--time S] [--jobs N] [--seed N] [--engine FUZZER | --no-engine]\n"               \
  "       [--confirm SANITIZED_TOOL] [--stop-on-first] [--timeout S] [--rss-limit-mb MB] [-q]\n\n" \
  "DESCRIPTION\n"                                                                                  \
  "  Runs the explorer (see explore: the sweep's scenarios as roots, branching at rare\n"          \
  "  states) in this build for S seconds (default 60, at least 0.001) on N jobs, saving crash\n"   \
  "  files in DIR/crashes and new states in DIR/corpus. With N >= 2 and the target's\n"            \
  "  libFuzzer binary (--engine, or BUILD/fuzz/<target>_fuzzer beside this tool), one job runs\n"  \
  "  libFuzzer over DIR/corpus; its findings are "                                                 \
  "DIR/crashes/libfuzzer-{crash,leak,timeout,oom}-*\n"                                             \
  "  (log: DIR/libfuzzer.log). Then every failure file is confirmed by the engine that found\n"    \
  "  it: the explorer's must fail the same way with the same trace hash in three isolated\n"       \
  "  runs of this tool and, with --confirm, also in a sanitized build of this tool (e.g.\n"        \
  "  build/asan/bin/simfuzz-<target>); libFuzzer's must fail the same way twice in the\n"          \
  "  libFuzzer binary, and are labelled 'fails only under sanitizers' when this build passes\n"    \
  "  them. A run fails when it reports a failure or dies (a signal, a limit). Files that do\n"     \
  "  not confirm are moved to DIR/unconfirmed. Failures that did not fail again when re-run\n"     \
  "  from their scenario (DIR/crashes/diverged-*) show that the target is not deterministic.\n"    \
  "  SIGINT or SIGTERM stop the job: what was not confirmed yet stays in DIR/crashes.\n\n"         \
  "OPTIONS\n"                                                                                      \
  "  --timeout S        wall-clock limit per run, branches included (default 20)\n"                \
  "  --rss-limit-mb MB  memory limit of every run, branches included (default 2048)\n"             \
  "  --seed N           first root seed (decimal); libFuzzer gets a fixed seed from it\n\n"        \
  "EXIT STATUS\n"                                                                                  \
  "  0 no failure, 1 confirmed failures, 2 usage, or a failure that could not be saved,\n"         \
  "  3 only unconfirmed or nondeterministic failures, 128+N stopped by signal N\n"

#define HELP_EXPLORE                                                                               \
  "explore -o DIR : checkpoint-and-branch exploration\n\n"                                         \
  "SYNOPSIS\n"                                                                                     \
  "  explore -o DIR [--time S] [--jobs N] [--seed N] [--roots N] [--depth D] [--energy K]\n"       \
  "          [--budget B] [--warmup W] [--keep N] [--worn V] [--corpus DIR]\n"                     \
  "          [--stop-on-first] [--timeout S] [--rss-limit-mb MB] [--stats] [--json FILE] [-q]\n\n" \
  "DESCRIPTION\n"                                                                                  \
  "  Runs the sweep's random scenarios (seeds N, N+1, ...) as roots. When a run reaches an\n"      \
  "  abstract state (feature bucket, sometimes-assertion, new best value) that is rare across\n"   \
  "  the campaign, the process forks: each child is a snapshot of the whole world and the\n"       \
  "  system under test, and runs on with another future (1 to 6 random fault steps or client\n"    \
  "  operations injected soon after that moment, most within a few milliseconds to a second,\n"    \
  "  half of them aimed at the node the state is about: the one its SF_SOMETIMES_ON or\n"          \
  "  SF_MAXIMIZE_ON site names, else the node whose event reached it).\n"                          \
  "  Rarer states get more branches (up to K at a state never seen before); branches branch\n"     \
  "  again up to depth D; each root's tree runs at most B branches. Nothing branches before\n"     \
  "  the first W roots ran (default 1000): until then no state can be called rare, and a bug\n"    \
  "  the sweep finds in its first seeds costs what it costs the sweep. Each job keeps up to N\n"   \
  "  of the rarest assertion-site states it reached (default 16): between roots it re-runs\n"      \
  "  the scenario that reached one (going round the sites), up to that moment, and branches\n"     \
  "  there again, so a state reached once deep in a branch gets many more futures. A rare\n"       \
  "  state first reached by a revisit's branch is kept in turn, so a ladder of rare states\n"      \
  "  is climbed one kept state after another, past depth D (up to 48 injected steps on top\n"      \
  "  of the root). One way to each state is kept; after V revisits (--worn, default 16; 0:\n"      \
  "  never), the next run that reaches it again brings a new one. These revisits take 12 of\n"     \
  "  the 33 percent of the time the branches get (--keep 0: none). Every failure is re-run\n"      \
  "  from its scenario file before it is kept: DIR/crash-<sha1> replays, minimizes and\n"          \
  "  triages like any crash file (at most 3 files per kind of failure). With --corpus,\n"          \
  "  runs that reach states no run reached before are saved there as seeds for the\n"              \
  "  fuzzers.\n"                                                                                   \
  "  Stops after S seconds (default 60), N roots, or the first failure; SIGINT or SIGTERM\n"       \
  "  stop it with its summary. Each branch is held to the time and memory limits\n"                \
  "  (--timeout, --rss-limit-mb): one that hangs, blows up, crashes or exits is saved as its\n"    \
  "  own failure (timeout, out-of-memory, the signal and top frame, exit N), as a root's\n"        \
  "  would be, and the campaign goes on. No process outlives the command: every worker and\n"      \
  "  branch runs in a process group of its own, killed when it ends. --stats adds, per\n"          \
  "  assertion-site state, the runs that reached it, and the states the first job kept\n"          \
  "  (each with its moment and the end of its run, in virtual time). --json FILE writes the\n"     \
  "  summary's counts as one JSON object (roots, branches, revisits, failures, kinds, ...).\n\n"   \
  "OPTIONS\n"                                                                                      \
  "  --jobs N   parallel workers (default 1)     --depth D   default 3\n"                          \
  "  --energy K default 8 (0: no branches)       --budget B  default 256\n"                        \
  "  --seed N   first root seed (decimal, default 0)\n\n"                                          \
  "EXIT STATUS\n"                                                                                  \
  "  0 no failure, 1 failures found, 2 usage or a failure that could not be saved (one line\n"     \
  "  says so), 3 only failures that did not fail again when re-run (DIR/diverged-*: the\n"         \
  "  target is not deterministic), 128+N stopped by signal N\n"

#define HELP_REACH                                                                                 \
  "reach FILE|DIR... : which sometimes/reachable/maximize assertions a corpus reaches\n\n"         \
  "SYNOPSIS\n"                                                                                     \
  "  reach [--json] [--require-all] FILE|DIR...\n\n"                                               \
  "DESCRIPTION\n"                                                                                  \
  "  Runs every input (the files of a directory, not its subdirectories) and reports, for\n"       \
  "  every assertion site of the target's catalog (SF_SOMETIMES, SF_REACHABLE, SF_MAXIMIZE),\n"    \
  "  how many inputs reached it, the first input that did and, for SF_MAXIMIZE, the best\n"        \
  "  value and the input that reached it. Sites no input reached are listed as NEVER.\n"           \
  "  --json prints one JSON object instead.\n\n"                                                   \
  "EXIT STATUS\n"                                                                                  \
  "  0 done, 1 (--require-all) a sometimes or reachable site was never reached, 2 usage or an\n"   \
  "  unreadable input\n"

#define HELP_TARGETS "targets : list the targets built into this binary\n"

#define HELP_NIGHTLY                                                                               \
  "nightly : fuzz every target for a budget, report what is new\n\n"                               \
  "SYNOPSIS\n"                                                                                     \
  "  nightly [--state DIR] [--build DIR] [--budget SECONDS] [--jobs N] [--targets \"T1 T2\"]\n\n"  \
  "DESCRIPTION\n"                                                                                  \
  "  For each target of the build (BUILD/fuzz/<t>_fuzzer and BUILD/bin/simfuzz-<t>): fuzz\n"       \
  "  for the budget with N libFuzzer workers over STATE's corpus, merge the corpus, then\n"        \
  "  triage every crash file, deduplicate it on the exact (target, signature) key against\n"       \
  "  STATE/known.tsv, minimize each new failure into STATE/crashes/<t>/<id>.pb (at most\n"         \
  "  100 tries per second of budget, 100 to 4000: a short night stays short), and write\n"         \
  "  STATE/reports/night-<n>.{md,json,sarif} (and latest.*). Crash files wait in\n"                \
  "  STATE/inbox/ until a night has reported them. The state is locked for the night; a\n"         \
  "  failed or stopped night (full disk, SIGINT, SIGTERM) leaves it as it was, reaps every\n"      \
  "  child, and the next night resumes. Defaults: STATE out/nightly, BUILD the build this\n"       \
  "  binary belongs to, budget 600 s, N the number of cores.\n\n"                                  \
  "EXIT STATUS\n"                                                                                  \
  "  0 nothing new, 1 new failures (see the report), 2 the job failed (one 'nightly: ...'\n"       \
  "  line says why), 128+N stopped by signal N\n"

#endif
