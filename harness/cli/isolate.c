/* Isolated runs: the system under test runs in a forked child, so that its
 * abort(), assert(), crash, endless loop or memory blow-up ends the child
 * and is recorded as that run's failure, never the tool.
 *
 * The child reports each result as a fixed-size binary record in memory
 * shared with the parent (a ring of CLI_RING records after the heartbeat
 * words), and rings a doorbell, a byte on a pipe of its own, to wake the
 * parent. A descriptor is not a safe channel: a system under test that
 * closes every descriptor from 3 up, as a daemon does at start, and opens
 * its log on the freed number would lose the records or receive them; the
 * doorbell rings only while the descriptor is still the pipe, and without
 * it the parent looks every 5 ms. Everything the child prints goes to a
 * second pipe that the parent drains continuously, keeping the last
 * CLI_TAIL bytes, so a talkative system can neither block nor kill itself
 * with SIGPIPE, and a crash's report (sanitizer error, assertion, signal)
 * is at hand for its signature. The heartbeat is the number of runs the
 * child has started, for per-run time limits over a child that runs many
 * scenarios. */
#define _GNU_SOURCE /* dladdr, MAP_ANONYMOUS */
#include "cli.h"
#include "run/hooks.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif
#if defined(__GLIBC__)
#include <dlfcn.h>
#include <execinfo.h>
#endif

cli_limits cli_run_limits = {CLI_DEFAULT_TIMEOUT_MS, CLI_DEFAULT_RSS_MB};

int cli_limit_option(int argc, char **argv, int *i) {
  const char *o = argv[*i];
  if (strcmp(o, "--timeout") && strcmp(o, "--rss-limit-mb"))
    return 0;
  if (*i + 1 >= argc)
    return cli_error("%s needs a value", o), -1;
  uint64_t v;
  if (cli_parse_u64(argv[++*i], &v) < 0 || v > 1000000)
    return cli_error("%s: bad value '%s'", o, argv[*i]), -1;
  if (!strcmp(o, "--timeout"))
    cli_run_limits.time_ms = v * 1000;
  else
    cli_run_limits.rss_mb = v;
  return 1;
}
volatile sig_atomic_t cli_interrupted;
volatile sig_atomic_t cli_stop_signal;
static int signals_reset; /* reset_signals ran here or in a parent since the last change */

void cli_signals_changed(void) {
  signals_reset = 0;
}

void cli_on_stop(int sig) {
  cli_stop_signal = sig;
  cli_interrupted = 1;
}

void cli_catch_stop(struct sigaction old[2]) {
  cli_signals_changed(); /* a child of this process resets them again */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = cli_on_stop; /* no SA_RESTART: the wait loops wake up */
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old[0]);
  sigaction(SIGTERM, &sa, &old[1]);
}

void cli_restore_stop(const struct sigaction old[2]) {
  sigaction(SIGINT, &old[0], NULL);
  sigaction(SIGTERM, &old[1], NULL);
}

/* Monotonic milliseconds: supervising a child is not part of any run. */
uint64_t cli_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts); /* simfuzz-allow-nondeterminism */
  return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- the child's side --------------------------------------------------- */

/* The memory a child shares with its parent: the heartbeat words
 * (CLI_BEAT_*, what cli_child_io.beat points at), then the record ring.
 * One process writes at a time (the child, or a branch it forked and waits
 * for): it fills slot head % CLI_RING and publishes head; the parent reads
 * up to head and publishes tail. A crash's line is kept there too: a
 * system under test that sends its standard error to /dev/null or a log,
 * as a daemon does, would take the crash's site out of its signature, and
 * two crashes of different sites would be one kind. */
#define CRASH_LINE 400
#define CRASH_MARK "==simfuzz== crash: "
typedef struct {
  uint64_t beat[8];
  uint64_t head, tail;
  cli_record slot[CLI_RING];
  char crash[CRASH_LINE]; /* the child's crash line, as crash_report printed it */
} shared_io;
#define SHARED_BYTES ((sizeof(shared_io) + 4095) & ~(size_t)4095)

static shared_io *shared_of(volatile uint64_t *beat) {
  return (shared_io *)(uintptr_t)beat;
}

/* This process's crash line slot: in the shared memory of the child that
 * cli_child_fork made it (NULL in a child without a result channel: the
 * page is its parent's). */
static char *crash_slot;

#if defined(__GLIBC__)
__attribute__((noinline)) const char *cli_crash_site(char *buf, size_t cap) {
  void *fr[32];
  int n = backtrace(fr, 32);
  const char *where = "?";
  /* The handler's own frames (and a sanitizer's wrapper of it) come first,
   * then the C library's (the signal's return path, raise, abort): the
   * first frame after those is where the program crashed. */
  int i = 1, in_libc = 0;
  for (; i < n; i++) {
    Dl_info info;
    int libc = dladdr(fr[i], &info) && info.dli_fname &&
               (strstr(info.dli_fname, "libc.so") || strstr(info.dli_fname, "libc-"));
    if (libc)
      in_libc = 1;
    else if (in_libc)
      break;
  }
  if (i >= n) /* no C library frame: a statically linked program */
    i = 3 < n ? 3 : n - 1;
  for (; i < n; i++) {
    Dl_info info;
    if (!dladdr(fr[i], &info) || !info.dli_fname)
      continue;
    if (info.dli_sname && info.dli_saddr) {
      snprintf(buf, cap, "%s", info.dli_sname);
    } else {
      const char *base = strrchr(info.dli_fname, '/');
      snprintf(buf, cap, "%s+0x%lx", base ? base + 1 : info.dli_fname,
               (unsigned long)((char *)fr[i] - (char *)info.dli_fbase));
    }
    where = buf;
    break;
  }
  return where;
}

void cli_crash_site_warm(void) {
  void *warm[2];
  backtrace(warm, 2); /* loads the unwinder now, not inside a signal */
}

/* Without a sanitizer nothing reports where a crash happened (and no
 * sanitizer reports an abort()): print the signal and the first frame
 * outside the C library, then die of it. */
static void crash_report(int sig) {
  char buf[300];
  const char *where = cli_crash_site(buf, sizeof buf);
  char line[CRASH_LINE];
  int k = snprintf(line, sizeof line, "\n" CRASH_MARK "signal %d in %s\n", sig, where);
  if (k > 0 && write(2, line, (size_t)k) < 0) {
  }
  if (crash_slot && k > 0) /* the line without its first newline, and its NUL */
    memcpy(crash_slot, line + 1, (size_t)k < sizeof line ? (size_t)k : sizeof line - 1);
  signal(sig, SIG_DFL);
  raise(sig);
}
#else
const char *cli_crash_site(char *buf, size_t cap) {
  (void)buf;
  (void)cap;
  return "?";
}

void cli_crash_site_warm(void) {}
#endif

/* The dispositions this tool's commands install (stop signals, deadlines,
 * ignored SIGPIPE) and the signal mask: a child starts as a fresh process
 * would, so a branch's alarm() ends the branch, not the campaign. The
 * sanitizers' handlers (SIGSEGV, SIGBUS, ...) are left alone. */
static void reset_signals(void) {
  if (signals_reset)
    return;
  signals_reset = 1;
  static const int sigs[] = {SIGINT,  SIGTERM, SIGHUP,  SIGQUIT, SIGALRM,
                             SIGPIPE, SIGCHLD, SIGUSR1, SIGUSR2};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
    signal(sigs[i], SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
}

static uint64_t rss_mb(pid_t pid);

void cli_baseline_take(cli_baseline *b) {
  b->fd = sf__lowest_free_fd();
  b->rss_mb = rss_mb(getpid()); /* simfuzz-allow-nondeterminism: the worker's own size */
}

int cli_worn(const cli_baseline *b) {
  int worn = 0, now = sf__lowest_free_fd();
  struct rlimit rl;
  long room = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
                  ? (long)rl.rlim_cur - b->fd
                  : 512;
  long slack = room / 2 < 256 ? room / 2 : 256;
  if (now < 0 || (b->fd >= 0 && now - b->fd >= (slack > 8 ? slack : 8)))
    worn |= CLI_WORN_FDS;
  uint64_t lim = cli_run_limits.rss_mb;
  uint64_t rss = lim && b->rss_mb ? rss_mb(getpid()) : 0; /* simfuzz-allow-nondeterminism */
  if (rss && lim > b->rss_mb && rss > b->rss_mb + (lim - b->rss_mb) / 2)
    worn |= CLI_WORN_MEMORY;
  return worn;
}

void cli_print_worn(const char *cmd, uint64_t fd_restarts, uint64_t memory_restarts) {
  if (fd_restarts)
    printf("%s: the system under test leaves file descriptors open across runs: %" PRIu64
           " workers started afresh before it ran out (close in the target's destroy what its "
           "runs opened)\n",
           cmd, fd_restarts);
  if (memory_restarts)
    printf("%s: a worker's memory grew across runs to half the limit: %" PRIu64
           " workers started afresh before it (a leak of the system under test? its sanitized "
           "build's LeakSanitizer names one)\n",
           cmd, memory_restarts);
}

pid_t cli_fork_tied(void) {
  pid_t parent = getpid(); /* simfuzz-allow-nondeterminism: the child checks its parent */
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid != 0)
    return pid;
#if defined(__linux__)
  prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the tool */
#endif
  if (getppid() != parent)
    _exit(0); /* the parent is already gone */
  reset_signals();
  return 0;
}

/* A child in a process group of its own: whatever the system under test
 * starts is in it, and is killed with it (cli_child_reap). */
static pid_t fork_group(void) {
  pid_t pid = cli_fork_tied();
  if (pid == 0)
    setpgid(0, 0);
  else if (pid > 0)
    setpgid(pid, pid); /* no race with the parent's kill of the group */
  return pid;
}

int cli_child_reap(pid_t pid, int *status) {
  int st = 0;
  if (pid <= 0)
    return -1;
#if defined(__linux__)
  siginfo_t info;
  while (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
#endif
  kill(-pid, SIGKILL); /* the group's stragglers: the leader's id is still taken */
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR)
      return -1;
  if (status)
    *status = st;
  return 0;
}

static void child_setup(int out_fd) {
  static int handlers_set; /* inherited: a branch's parent set them */
  dup2(out_fd, 1);
  dup2(out_fd, 2);
  if (out_fd > 2)
    close(out_fd);
  if (handlers_set++)
    return;
#if defined(__GLIBC__)
  cli_crash_site_warm();
  signal(SIGABRT, crash_report);
#if !defined(SF_ASAN) /* the sanitizers report these themselves */
  int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
    signal(sigs[i], crash_report);
#endif
#endif
}

void cli_record_fill(cli_record *rec, uint64_t seed, const sf_result *r) {
  memset(rec, 0, sizeof *rec);
  rec->kind = CLI_REC_RESULT;
  rec->seed = seed;
  cli_outcome *o = &rec->o;
  o->node = -1;
  o->events = r->stats.events;
  o->hash = r->hash;
  o->time_ns = r->failed ? r->failure.time : r->end_time;
  if (!r->failed)
    return;
  const sim_failure *fl = &r->failure;
  o->node = fl->node;
  if (fl->is_liveness) {
    snprintf(o->sig, sizeof o->sig, "liveness");
    snprintf(o->invariant, sizeof o->invariant, "liveness");
  } else {
    snprintf(o->sig, sizeof o->sig, "invariant %s at %s:%d", fl->name ? fl->name : "?",
             fl->file ? fl->file : "?", fl->line);
    snprintf(o->invariant, sizeof o->invariant, "%s", fl->name ? fl->name : "?");
  }
  snprintf(o->message, sizeof o->message, "%s", fl->message);
}

/* Wake the parent: a byte on the doorbell pipe, if the descriptor is still
 * that pipe (the system under test may have closed it, or opened a file of
 * its own on its number). */
static void ring_doorbell(const cli_child_io *io) {
  if (!sf__fd_is(io->res_fd, io->res_dev, io->res_ino))
    return;
  char b = 1;
  ssize_t k = write(io->res_fd, &b, 1); /* non-blocking: a full pipe rings already */
  (void)k;
}

int cli_record_send(const cli_child_io *io, const cli_record *rec) {
  if (!io || !io->beat)
    return -1;
  shared_io *sh = shared_of(io->beat);
  uint64_t head = __atomic_load_n(&sh->head, __ATOMIC_RELAXED);
  while (head - __atomic_load_n(&sh->tail, __ATOMIC_ACQUIRE) >= CLI_RING) {
    ring_doorbell(io); /* full: the parent reads, or kills this child on its limits */
    struct timespec nap = {0, 1000000};
    nanosleep(&nap, NULL);
  }
  memcpy(&sh->slot[head % CLI_RING], rec, sizeof *rec);
  __atomic_store_n(&sh->head, head + 1, __ATOMIC_RELEASE);
  ring_doorbell(io);
  return 0;
}

/* ---- the parent's side ------------------------------------------------- */

static void close_pair(int fd[2]) {
  if (fd[0] >= 0)
    close(fd[0]);
  if (fd[1] >= 0)
    close(fd[1]);
}

pid_t cli_child_fork(cli_child *c, cli_child_io *io) {
  memset(c, 0, offsetof(cli_child, tail)); /* the tail's bytes count from tail_len */
  c->tail[0] = 0;
  c->pid = -1;
  c->out_fd = c->res_fd = -1;
  int out[2] = {-1, -1}, res[2] = {-1, -1};
  void *page = MAP_FAILED;
  if (pipe(out) != 0 || (io && pipe(res) != 0) ||
      (io && (page = mmap(NULL, SHARED_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                          -1, 0)) == MAP_FAILED)) {
    close_pair(out);
    close_pair(res);
    return -1;
  }
  c->beat = page == MAP_FAILED ? NULL : page;
  pid_t pid = fork_group();
  if (pid < 0) {
    if (c->beat)
      munmap((void *)c->beat, SHARED_BYTES);
    c->beat = NULL;
    close_pair(out);
    close_pair(res);
    return -1;
  }
  if (pid == 0) {
    close(out[0]);
    if (io) {
      close(res[0]);
      struct stat st;
      int ok = fstat(res[1], &st) == 0 && fcntl(res[1], F_SETFL, O_NONBLOCK) == 0;
      io->res_fd = ok ? res[1] : -1; /* without it, the parent looks every 5 ms */
      io->res_dev = ok ? (uint64_t)st.st_dev : 0;
      io->res_ino = ok ? (uint64_t)st.st_ino : 0;
      io->beat = c->beat;
    }
    crash_slot = io && c->beat ? shared_of(c->beat)->crash : NULL;
    child_setup(out[1]);
    return 0;
  }
  close(out[1]);
  if (io)
    close(res[1]);
  c->pid = pid;
  c->out_fd = out[0];
  c->res_fd = io ? res[0] : -1;
  return pid;
}

int cli_child_spawn(cli_child *c, void (*body)(void *arg, const cli_child_io *io), void *arg) {
  cli_child_io io;
  pid_t pid = cli_child_fork(c, &io);
  if (pid < 0)
    return -1;
  if (pid == 0) {
    body(arg, &io);
    fflush(stdout);
    fflush(stderr);
    _exit(0);
  }
  return 0;
}

pid_t cli_spawn_program(const char *path, char *const argv[], int out_fd, int err_fd) {
  pid_t pid = fork_group();
  if (pid != 0)
    return pid;
  int null = open("/dev/null", O_RDWR);
  if (null >= 0) {
    dup2(null, 0);
    if (out_fd < 0)
      dup2(null, 1);
    if (err_fd < 0)
      dup2(null, 2);
  }
  if (out_fd >= 0)
    dup2(out_fd, 1);
  if (err_fd >= 0)
    dup2(err_fd, 2);
  execv(path, argv);
  _exit(127);
}

int cli_wait_program(pid_t pid, int *status) {
  int polls = 0;
  for (;;) {
    pid_t w = waitpid(pid, status, cli_interrupted ? WNOHANG : 0);
    if (w == pid)
      break;
    if (w < 0 && errno != EINTR)
      return -1;
    if (cli_interrupted) {
      if (polls == 0 || polls >= 60)
        kill(-pid, polls ? SIGKILL : SIGTERM);
      polls++;
      struct timespec ts = {0, 50000000};
      nanosleep(&ts, NULL);
    }
  }
  kill(-pid, SIGKILL); /* the group's stragglers */
  return 0;
}

int cli_wait_program_within(pid_t pid, uint64_t limit_ms, int *status) {
  uint64_t end = cli_now_ms() + limit_ms;
  long nap_ns = 100000;
  for (;;) {
    pid_t w = waitpid(pid, status, WNOHANG);
    if (w == pid) {
      kill(-pid, SIGKILL); /* the group's stragglers */
      return 0;
    }
    if ((w < 0 && errno != EINTR) || cli_interrupted || cli_now_ms() > end) {
      kill(-pid, SIGKILL);
      cli_child_reap(pid, status);
      return -1;
    }
    struct timespec nap = {0, nap_ns};
    nanosleep(&nap, NULL);
    nap_ns = nap_ns < 10000000 ? nap_ns * 2 : nap_ns; /* up to 20 ms between polls */
  }
}

int cli_run_program(const char *path, char *const argv[], int out_fd, int err_fd, int *status) {
  *status = 0;
  pid_t pid = cli_spawn_program(path, argv, out_fd, err_fd);
  if (pid < 0)
    return -1;
  return cli_wait_program(pid, status);
}

void cli_reexec_fixed_layout(char *const argv[]) {
  int cur = personality(0xffffffff);
  if (cur == -1 || (cur & ADDR_NO_RANDOMIZE) ||
      personality((unsigned long)cur | ADDR_NO_RANDOMIZE) == -1)
    return;
  execv("/proc/self/exe", argv);
  personality((unsigned long)cur); /* could not: go on as we are */
}

long cli_program_output(const char *path, char *const argv[], int err_fd, char *buf, size_t cap,
                        int *status) {
  int fd[2];
  *status = 0;
  if (cap == 0)
    return -1;
  buf[0] = 0;
  if (pipe(fd) != 0)
    return -1;
  pid_t pid = cli_spawn_program(path, argv, fd[1], err_fd);
  close(fd[1]);
  if (pid < 0) {
    close(fd[0]);
    return -1;
  }
  size_t n = 0;
  for (;;) { /* to the end, so the child never blocks on a full pipe */
    char tmp[4096];
    ssize_t k = read(fd[0], tmp, sizeof tmp);
    if (k < 0 && errno == EINTR) {
      if (cli_interrupted)
        kill(-pid, SIGKILL);
      continue;
    }
    if (k <= 0)
      break;
    size_t take = (size_t)k < cap - 1 - n ? (size_t)k : cap - 1 - n;
    memcpy(buf + n, tmp, take);
    n += take;
  }
  close(fd[0]);
  buf[n] = 0;
  if (cli_wait_program(pid, status) != 0)
    return -1;
  return (long)n;
}

int cli_child_exec(cli_child *c, char *const argv[]) {
  pid_t pid = cli_child_fork(c, NULL);
  if (pid < 0)
    return -1;
  if (pid == 0) {
    int null = open("/dev/null", O_RDONLY);
    if (null >= 0 && null != 0) {
      dup2(null, 0);
      close(null);
    }
    execv(argv[0], argv);
    fprintf(stderr, "%s: cannot run: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  return 0;
}

static void tail_add(cli_child *c, const char *p, size_t n) {
  c->out_bytes += n;
  if (n >= CLI_TAIL) {
    memcpy(c->tail, p + n - CLI_TAIL, CLI_TAIL);
    c->tail_len = CLI_TAIL;
    c->tail[CLI_TAIL] = 0;
    return;
  }
  if (c->tail_len + n > CLI_TAIL) {
    size_t drop = c->tail_len + n - CLI_TAIL;
    memmove(c->tail, c->tail + drop, c->tail_len - drop);
    c->tail_len -= drop;
  }
  memcpy(c->tail + c->tail_len, p, n);
  c->tail_len += n;
  c->tail[c->tail_len] = 0; /* the tail is a string at all times */
}

/* Resident memory of pid in MiB, or 0 if unknown. */
static uint64_t rss_mb(pid_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%ld/statm", (long)pid);
  FILE *f = fopen(path, "r");
  if (!f)
    return 0;
  unsigned long size = 0, res = 0;
  int ok = fscanf(f, "%lu %lu", &size, &res) == 2;
  fclose(f);
  long page = sysconf(_SC_PAGESIZE);
  return ok && page > 0 ? (uint64_t)res * (uint64_t)page >> 20 : 0;
}

static void kill_child(cli_child *c, int why) {
  if (!c->ended_by) {
    c->ended_by = why;
    kill(-(pid_t)c->pid, SIGKILL); /* the child's group: what it started too */
  }
}

/* Read what is ready on the child's pipe i (0: its output, kept as the
 * tail; 1: its doorbell); closes the pipe at its end or on an error. */
static void drain_pipe(cli_child *c, int i) {
  static char buf[65536];
  int *fd = i == 0 ? &c->out_fd : &c->res_fd;
  SIM_ASSERT(*fd >= 0);
  ssize_t n = read(*fd, buf, sizeof buf);
  if (n > 0 && i == 0)
    tail_add(c, buf, (size_t)n);
  if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
    close(*fd);
    *fd = -1;
  }
}

/* Hand each record the child has published to fn, in order. The ring is
 * the child's memory too: a head that a wild write moved past the ring's
 * size drops what it holds, and a record's strings are cut to their
 * arrays. */
static void drain_ring(cli_child *c, cli_on_record fn, void *ctx) {
  if (!c->beat)
    return;
  shared_io *sh = shared_of(c->beat);
  uint64_t head = __atomic_load_n(&sh->head, __ATOMIC_ACQUIRE);
  uint64_t tail = __atomic_load_n(&sh->tail, __ATOMIC_RELAXED);
  if (head - tail > CLI_RING) /* a wild write: what the ring held is lost */
    __atomic_store_n(&sh->tail, tail = head, __ATOMIC_RELEASE);
  while (tail != head) {
    cli_record rec;
    memcpy(&rec, &sh->slot[tail % CLI_RING], sizeof rec);
    __atomic_store_n(&sh->tail, ++tail, __ATOMIC_RELEASE);
    rec.o.sig[sizeof rec.o.sig - 1] = 0;
    rec.o.invariant[sizeof rec.o.invariant - 1] = 0;
    rec.o.message[sizeof rec.o.message - 1] = 0;
    if (fn)
      fn(ctx, &rec);
  }
}

/* The crash line the child kept in shared memory, at the tail's end if its
 * output lacks it (the system under test sent its standard error away):
 * the crash's signature names its site either way. */
static void keep_crash_line(cli_child *c, const char *slot) {
  char line[CRASH_LINE];
  memcpy(line, slot, sizeof line);
  line[sizeof line - 1] = 0;
  if (strncmp(line, CRASH_MARK, strlen(CRASH_MARK)) || strstr(c->tail, line))
    return;
  tail_add(c, "\n", 1);
  tail_add(c, line, strlen(line));
}

/* After the child's pipes closed: reap it, read its last heartbeat, and
 * say how it ended. */
static int child_ended(cli_child *c) {
  if (c->out_fd >= 0)
    close(c->out_fd);
  if (c->res_fd >= 0)
    close(c->res_fd);
  c->out_fd = c->res_fd = -1;
  int st = 0;
  cli_child_reap((pid_t)c->pid, &st);
  c->status = st;
  if (c->beat) {
    c->last_seed = __atomic_load_n(&c->beat[CLI_BEAT_SEED], __ATOMIC_RELAXED);
    c->runs = __atomic_load_n(&c->beat[CLI_BEAT_RUNS], __ATOMIC_RELAXED);
    keep_crash_line(c, shared_of(c->beat)->crash);
    munmap((void *)c->beat, SHARED_BYTES);
    c->beat = NULL;
  }
  if (c->ended_by)
    return c->ended_by;
  if (WIFSIGNALED(c->status))
    return CLI_END_CRASH;
  if (WIFEXITED(c->status) && WEXITSTATUS(c->status) != 0)
    return CLI_END_CRASH;
  return CLI_END_OK;
}

int cli_child_wait(cli_child *c, const cli_limits *lim, cli_on_record fn, void *ctx) {
  uint64_t beat = c->beat ? __atomic_load_n(&c->beat[CLI_BEAT_RUNS], __ATOMIC_RELAXED) : 0;
  uint64_t since = cli_now_ms(), last_rss = since;
  int exited = 0;
  long nap_ns = 50000;
  for (;;) { /* until the child has ended, even if it closed both pipes */
    struct pollfd p[2] = {{c->out_fd, POLLIN, 0}, {c->res_fd, POLLIN, 0}};
    int k = 0;
    if (exited || c->out_fd >= 0 || c->res_fd >= 0) {
      k = poll(p, 2, exited ? 0 : c->res_fd >= 0 ? 50 : 5);
    } else { /* both pipes closed: an ending child, most often; wait short, then longer */
      struct timespec nap = {0, nap_ns};
      nanosleep(&nap, NULL);
      nap_ns = nap_ns < 5000000 ? nap_ns * 2 : nap_ns;
    }
    if (k < 0 && errno != EINTR)
      break;
    if (cli_interrupted)
      kill_child(c, CLI_END_INTERRUPTED);
    for (int i = 0; i < 2 && k > 0; i++)
      if (p[i].revents & (POLLIN | POLLHUP | POLLERR))
        drain_pipe(c, i);
    drain_ring(c, fn, ctx);
    if (exited && k == 0)
      break;       /* the child is gone and its pipes and ring are drained */
    if (!exited) { /* ended? (reaped below, after its group is killed) */
      siginfo_t info;
      memset(&info, 0, sizeof info);
      if (waitid(P_PID, (id_t)c->pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
          info.si_pid == c->pid) {
        exited = 1;
        continue;
      }
    }
    uint64_t now = cli_now_ms();
    uint64_t b = c->beat ? __atomic_load_n(&c->beat[CLI_BEAT_RUNS], __ATOMIC_RELAXED) : 0;
    if (b != beat) {
      beat = b;
      since = now;
    }
    if (!exited && lim && lim->time_ms && now - since > lim->time_ms)
      kill_child(c, CLI_END_TIMEOUT);
    if (!exited && lim && lim->rss_mb && now - last_rss >= 100) {
      last_rss = now;
      if (rss_mb(c->pid) > lim->rss_mb)
        kill_child(c, CLI_END_OOM);
    }
  }
  return child_ended(c);
}

/* ---- signatures of crashes --------------------------------------------- */

/* The last occurrence of needle in hay, or NULL. */
static const char *last_of(const char *hay, const char *needle) {
  const char *found = NULL;
  for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
    found = p;
  return found;
}

/* "prog: file.c:42: func: Assertion `x > 0' failed." -> "file.c:42 'x > 0'" */
static int assert_sig(const char *out, char *sig, size_t cap) {
  const char *a = last_of(out, ": Assertion `");
  if (!a)
    return 0;
  const char *line = a;
  while (line > out && line[-1] != '\n')
    line--;
  /* back over ": func" to "file:line" */
  const char *f_end = a;
  const char *p = f_end;
  while (p > line && !(p[-1] == ' ' && p - 2 >= line && p[-2] == ':'))
    p--;
  const char *site_end = p >= line + 2 ? p - 2 : line;
  const char *q = site_end;
  while (q > line && !(q[-1] == ' ' && q - 2 >= line && q[-2] == ':'))
    q--;
  const char *expr = a + strlen(": Assertion `");
  const char *expr_end = strstr(expr, "' failed");
  size_t el = expr_end ? (size_t)(expr_end - expr) : strcspn(expr, "\n");
  if (el > 200)
    el = 200;
  snprintf(sig, cap, "crash: assert %.*s '%.*s'", (int)(site_end - q), q, (int)el, expr);
  return 1;
}

/* The text after "ERROR: " of the last sanitizer or libFuzzer report line
 * ("==123==ERROR: AddressSanitizer: ...", "==123== ERROR: libFuzzer: ...")
 * in out, or NULL: text the system under test prints never counts. */
static const char *sanitizer_error(const char *out) {
  const char *found = NULL;
  for (const char *p = strstr(out, "ERROR: "); p; p = strstr(p + 1, "ERROR: ")) {
    const char *q = p;
    if (q > out && q[-1] == ' ')
      q--;
    if (q - out < 3 || q[-1] != '=' || q[-2] != '=')
      continue;
    q -= 2;
    const char *d = q;
    while (d > out && d[-1] >= '0' && d[-1] <= '9')
      d--;
    if (d == q || d - out < 2 || d[-1] != '=' || d[-2] != '=' || (d - 2 > out && d[-3] != '\n'))
      continue;
    found = p + 7;
  }
  return found;
}

/* Frames of the sanitizers, libFuzzer and the C library, which every crash
 * of their kind shares: never a crash's identity. */
static int runtime_frame(const char *name, size_t n) {
  static const char *const pre[] = {"__sanitizer",   "__asan",   "__ubsan",      "__lsan",
                                    "__interceptor", "fuzzer::", "__GI_",        "__libc",
                                    "abort",         "raise",    "gsignal",      "__pthread_kill",
                                    "pthread_kill",  "__assert", "malloc",       "calloc",
                                    "realloc",       "free",     "operator new", "__sigaction",
                                    "_start",        "main"};
  for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++) {
    size_t l = strlen(pre[i]);
    if (n >= l && !strncmp(name, pre[i], l))
      return 1;
  }
  return 0;
}

/* The first frame of a sanitizer's stack (from "#0 ") that is the
 * program's own: its function when symbolized, else module+offset
 * (stable for one binary); "" if none. */
static void top_frame(const char *from, char *frame, size_t cap) {
  frame[0] = 0;
  for (const char *f = strstr(from, "#0 "); f && *f == '#';) {
    size_t line = strcspn(f, "\n");
    const char *in = strstr(f, " in ");
    const char *mod = memchr(f, '(', line);
    if (in && in < f + line) { /* symbolized: the function */
      in += 4;
      size_t n = strcspn(in, " \n");
      if (!runtime_frame(in, n)) {
        snprintf(frame, cap, "%.*s", (int)(n < cap - 1 ? n : cap - 1), in);
        return;
      }
    } else if (mod) {
      const char *base = mod + 1;
      for (const char *q = base; q < f + line && *q != ')'; q++)
        if (*q == '/')
          base = q + 1;
      size_t n = strcspn(base, ")\n");
      if (strncmp(base, "libc.so", 7) && strncmp(base, "libc-", 5)) {
        snprintf(frame, cap, "%.*s", (int)(n < cap - 1 ? n : cap - 1), base);
        return;
      }
    }
    f += line;
    while (*f == '\n' || *f == ' ')
      f++;
  }
}

void cli_crash_sig(const char *err, int status, int ended_by, char *sig, size_t cap) {
  if (ended_by == CLI_END_TIMEOUT ||
      (ended_by == CLI_END_CRASH && WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)) {
    snprintf(sig, cap, "timeout"); /* SIGALRM: a branch's own time limit (explore) */
    return;
  }
  if (ended_by == CLI_END_OOM) {
    snprintf(sig, cap, "out-of-memory");
    return;
  }
  if (ended_by == CLI_END_INTERRUPTED) {
    snprintf(sig, cap, "interrupted");
    return;
  }
  if (assert_sig(err, sig, cap))
    return;
  const char *e = sanitizer_error(err);
  /* libFuzzer's own limits are the same kinds as ours (its stack at the
   * moment of a timeout is no identity) */
  if (e && (!strncmp(e, "libFuzzer: timeout", 18) || !strncmp(e, "libFuzzer: out-of-memory", 24))) {
    snprintf(sig, cap, "%s", e[11] == 't' ? "timeout" : "out-of-memory");
    return;
  }
  char type[128] = "", frame[160] = "";
  if (e) {
    size_t n = strcspn(e, "\n");
    /* "AddressSanitizer: heap-use-after-free on address ..." -> 2 words */
    const char *sp = memchr(e, ' ', n);
    const char *sp2 = sp ? memchr(sp + 1, ' ', (size_t)(e + n - sp - 1)) : NULL;
    size_t tl = sp2 ? (size_t)(sp2 - e) : n;
    snprintf(type, sizeof type, "%.*s", (int)(tl < sizeof type - 1 ? tl : sizeof type - 1), e);
  }
  const char *ub = last_of(err, "SUMMARY: UndefinedBehaviorSanitizer: ");
  if (!e && ub) { /* UBSan without a stack: its summary names kind and place */
    ub += 37;
    size_t n = strcspn(ub, "\n");
    snprintf(type, sizeof type, "UBSan %.*s", (int)(n < 100 ? n : 100), ub);
  }
  const char *mine = last_of(err, "\n==simfuzz== crash: signal ");
  if (e)
    top_frame(e, frame, sizeof frame);
  if (!frame[0] && mine) { /* our own handler (an abort(), or an unsanitized build) */
    const char *in = strstr(mine + 1, " in ");
    if (in) {
      in += 4;
      size_t n = strcspn(in, "\n");
      snprintf(frame, sizeof frame, "%.*s", (int)(n < sizeof frame - 1 ? n : sizeof frame - 1), in);
    }
  }
  char how[32];
  if (WIFSIGNALED(status))
    snprintf(how, sizeof how, "signal %d", WTERMSIG(status));
  else if (type[0]) /* the sanitizer's report names it; its exit code is a */
    how[0] = 0;     /* choice (1, or libFuzzer's 77, and not always the same) */
  else
    snprintf(how, sizeof how, "exit %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  int k = snprintf(sig, cap, "crash:%s%s", how[0] ? " " : "", how);
  if (k > 0 && (size_t)k < cap && type[0])
    k += snprintf(sig + k, cap - (size_t)k, " %s", type);
  if (k > 0 && (size_t)k < cap && frame[0])
    snprintf(sig + k, cap - (size_t)k, " %s", frame);
}

void cli_crash_outcome(const cli_child *c, int ended, cli_outcome *o) {
  memset(o, 0, sizeof *o);
  o->node = -1;
  if (ended == CLI_END_CRASH && WIFEXITED(c->status) && WEXITSTATUS(c->status) == 2 &&
      last_of(c->tail, "simfuzz: out of memory in "))
    ended = CLI_END_OOM; /* simfuzz's own allocation failed: sf_out_of_memory */
  cli_crash_sig(c->tail, c->status, ended, o->sig, sizeof o->sig);
  const char *inv = !strcmp(o->sig, "timeout")         ? "timeout"
                    : !strcmp(o->sig, "out-of-memory") ? "out-of-memory"
                    : !strcmp(o->sig, "interrupted")   ? "interrupted"
                                                       : "crash";
  snprintf(o->invariant, sizeof o->invariant, "%s", inv);
  const char *e = sanitizer_error(c->tail);
  if (!e)
    e = last_of(c->tail, "Assertion `");
  if (!e)
    e = last_of(c->tail, CRASH_MARK);
  if (e)
    snprintf(o->message, sizeof o->message, "%.*s", (int)strcspn(e, "\n"), e);
}

/* ---- one scenario, isolated -------------------------------------------- */

typedef struct {
  const sf_scenario *s;
  int twice;
} one_run;

static void run_one(void *arg, const cli_child_io *io) {
  const one_run *a = arg;
  __atomic_store_n(&io->beat[CLI_BEAT_RUNS], 1, __ATOMIC_RELAXED);
  sf_result r, r2;
  sf_run(cli_target, a->s, NULL, &r);
  cli_record rec;
  cli_record_fill(&rec, 0, &r);
  if (a->twice) { /* again in this process: state that survives a run shows */
    sf_run(cli_target, a->s, NULL, &r2);
    rec.o.nondet = r2.hash != r.hash || r2.failed != r.failed;
  }
  cli_record_send(io, &rec);
}

typedef struct {
  cli_record rec;
  int got;
} one_result;

static void keep_record(void *ctx, const cli_record *rec) {
  one_result *r = ctx;
  if (rec->kind == CLI_REC_RESULT && !r->got) {
    r->rec = *rec;
    r->got = 1;
  }
}

void cli_run_isolated(const sf_scenario *s, cli_outcome *o, int twice) {
  one_run arg = {s, twice};
  cli_child *c = malloc(sizeof *c);
  memset(o, 0, sizeof *o);
  o->node = -1;
  if (!c || cli_child_spawn(c, run_one, &arg) != 0) {
    snprintf(o->sig, sizeof o->sig, "internal: cannot start a child process");
    snprintf(o->invariant, sizeof o->invariant, "internal");
    free(c);
    return;
  }
  one_result res = {.got = 0};
  int ended = cli_child_wait(c, &cli_run_limits, keep_record, &res);
  if (ended == CLI_END_OK && res.got)
    *o = res.rec.o;
  else if (ended == CLI_END_OK) /* exited 0 without a result: the SUT called exit */
    cli_crash_outcome(c, CLI_END_CRASH, o);
  else
    cli_crash_outcome(c, ended, o);
  free(c);
}
