/* The runtime of program targets (simfuzz_program.h): node k of the
 * cluster runs the program's main() on a fiber; the program's references
 * to the calls of calls.h land on the sfp_* functions here. They run on
 * the node's fiber, inside the simulator's callback that resumed it, so
 * sim_current() names the world and the node.
 *
 * A call that would block (a recv with no datagram, poll, a sleep) arms a
 * wake-up timer if it has a deadline and yields; the node's next event (a
 * datagram for it, its timer) resumes it, and the call checks again.
 *
 * Globals: the program's writable data is one section (simfuzz_add_program
 * merges .data and .bss). Each node keeps a copy; the live section belongs
 * to one node at a time and is swapped (saved and loaded) only when another
 * node runs. The copy loops are not instrumented: AddressSanitizer poisons
 * the red zones between globals, and the copy moves them as they are. */
#define _GNU_SOURCE
#include "program/calls.h"
#include "program/internal.h"
#include <simfuzz/simfuzz.h>
#include <simfuzz/simfuzz_libc.h>
#include <simfuzz/simfuzz_program.h>
#include <simfuzz/simfuzz_runner.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define SFP_HEAP_MAX (64u << 20) /* bytes a node may hold */
#define SFP_MIN_WAIT 1000u       /* ns: the shortest wait of a blocked call */
#define BLK_LIVE 0x5346504c49564521ull

/* The node whose fiber runs (set while it runs), and the node whose
 * globals are in the live section. */
sfp_cluster *sfp__cur_c;
int sfp__cur_n = -1;
sim_world *sfp__cur_w;

static sfp_cluster *owner_c;
static int owner_n = -1;
/* Each program's globals as its image has them, taken before any of its
 * nodes ran (a binary may hold several programs). */
#define SFP_PROGRAMS 64
static struct {
  const sf_program *p;
  unsigned char *image;
  int busy; /* a live cluster runs on its copies */
} initial[SFP_PROGRAMS];

static size_t globals_len(const sf_program *p) {
  return p->globals && p->globals_end > p->globals ? (size_t)(p->globals_end - p->globals) : 0;
}

/* Copy without instrumentation or a call to memcpy (see the top; ASan
 * intercepts memcpy and would check the red zones), in 8-byte words where
 * both sides allow it, which the compiler may vectorize: a node switch
 * copies the globals twice, and byte by byte that was most of a program
 * run's time. */
#if defined(__clang__)
#define SFP_NO_MEMCPY __attribute__((no_sanitize("address"), no_builtin("memcpy")))
#else
#define SFP_NO_MEMCPY                                                                              \
  __attribute__((no_sanitize("address"), optimize("no-tree-loop-distribute-patterns")))
#endif
SFP_NO_MEMCPY static void raw_copy(unsigned char *dst, const unsigned char *src, size_t n) {
  size_t i = 0;
  if (((uintptr_t)dst & 7) == ((uintptr_t)src & 7)) {
    for (; i < n && ((uintptr_t)(dst + i) & 7); i++)
      dst[i] = src[i];
    uint64_t *dw = (uint64_t *)(void *)(dst + i);
    const uint64_t *sw = (const uint64_t *)(const void *)(src + i);
    size_t words = (n - i) / 8;
    for (size_t w = 0; w < words; w++)
      dw[w] = sw[w];
    i += words * 8;
  }
  for (; i < n; i++)
    dst[i] = src[i];
}

/* The program node k runs: the version of the target's program it booted
 * as, or on a client node the CLIENT's. */
static const sf_program *prog_of(const sfp_cluster *c, int k) {
  SIM_ASSERT(c->node[k].prog); /* set at create, and at a boot as a version */
  return c->node[k].prog;
}

/* Version v of the cluster's program (0: the program itself). */
static const sf_program *version_of(const sfp_cluster *c, uint32_t v) {
  SIM_ASSERT(v <= (uint32_t)c->p->nversions);
  return v ? c->p->versions[v - 1] : c->p;
}

/* Node k (of the program's, not a client) runs version v from its next
 * boot: its program, its copy and that copy's globals. */
static void set_version(sfp_cluster *c, int k, uint32_t v) {
  const sf_program *pv = version_of(c, v);
  sfp_node *me = &c->node[k];
  SIM_ASSERT(k < c->n && pv->copies && k < pv->ncopies); /* sf_program_create's checks */
  me->prog = pv;
  me->copy = &pv->copies[k];
  me->globals = pv->copies[k].globals;
}

/* Make node n's globals the live ones. The owner's go back to its copy
 * first, at its own program's size (a binary may hold several, and a
 * client's globals are not its servers'). */
static void globals_in(sfp_cluster *c, int n) {
  const sf_program *p = prog_of(c, n);
  size_t len = globals_len(p);
  if (!len || (owner_c == c && owner_n == n) || c->node[n].copy)
    return; /* (a node on a copy of its own has its globals live for good) */
  if (owner_c && owner_n >= 0 && owner_c->node[owner_n].globals) {
    const sf_program *op = prog_of(owner_c, owner_n);
    raw_copy(owner_c->node[owner_n].globals, op->globals, globals_len(op));
  }
  raw_copy(p->globals, c->node[n].globals, len);
  owner_c = c;
  owner_n = n;
}

/* ---- the node's life -------------------------------------------------- */

sfp_node *sfp__self(void) {
  SIM_ASSERT(sfp__cur_c && sfp__cur_n >= 0 &&
             sfp_fiber_current()); /* only from a program's fiber */
  return &sfp__cur_c->node[sfp__cur_n];
}

static void flush_line(sfp_node *me);

/* The node stops for good: its fiber is never resumed again. */
static void __attribute__((noreturn)) stop_node(void) {
  sfp_node *me = sfp__self();
  me->state = N_EXITED;
  for (;;)
    sfp_fiber_yield();
}

/* Fail the run from the program's fiber, then stop the node. In abort
 * mode (fuzzers) the failure aborts here, on the program's stack. The
 * site (file, line) is the caller's (FAIL_NODE), so failures of different
 * kinds have different signatures. */
static void __attribute__((noreturn))
fail_node(const char *name, const char *file, int line, const char *msg) {
  flush_line(sfp__self());
  if (sim__invariant_failed(sfp__cur_w, sfp__cur_n, name, file, line, "%s", msg))
    abort();
  stop_node();
}
void sfp__fail_node(const char *name, const char *file, int line, const char *msg) {
  fail_node(name, file, line, msg);
}
#define FAIL_NODE(name, ...)                                                                       \
  do {                                                                                             \
    char msg_[200];                                                                                \
    snprintf(msg_, sizeof msg_, __VA_ARGS__);                                                      \
    fail_node(name, __FILE__, __LINE__, msg_);                                                     \
  } while (0)

static void node_main(void *arg);

static void heap_free_all(sfp_node *me) {
  for (blk *b = me->heap.next; b && b != &me->heap;) {
    blk *next = b->next;
    b->magic = 0;
    sf_free(b);
    b = next;
  }
  me->heap.next = me->heap.prev = &me->heap;
  me->heap_bytes = 0;
}

/* Expand the placeholders of one word of the command line. */
static size_t expand(const char *word, int k, int n, char *out, size_t cap) {
  size_t o = 0;
  for (const char *s = word; *s && o + 1 < cap;) {
    int node = -1;
    char tmp[32] = "";
    if (strncmp(s, "{node}", 6) == 0) {
      snprintf(tmp, sizeof tmp, "%d", k);
      s += 6;
    } else if (strncmp(s, "{dir}", 5) == 0) {
      snprintf(tmp, sizeof tmp, "."); /* the node's data directory: where it runs */
      s += 5;
    } else if (strncmp(s, "{nodes}", 7) == 0) {
      snprintf(tmp, sizeof tmp, "%d", n);
      s += 7;
    } else if (strncmp(s, "{addr:", 6) == 0 && sscanf(s + 6, "%d}", &node) == 1 && node >= 0) {
      uint32_t a = sf_program_addr(node);
      snprintf(tmp, sizeof tmp, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
      s = strchr(s, '}') + 1;
    } else {
      out[o++] = *s++;
      continue;
    }
    for (const char *t = tmp; *t && o + 1 < cap; t++)
      out[o++] = *t;
  }
  out[o] = 0;
  return o + 1;
}

uint64_t sfp__calls;

/* The time a node's calls cost it since it resumed joins what it owes. */
static void bank_calls(sfp_cluster *c, int k) {
  sfp_node *me = &c->node[k];
  SIM_ASSERT(sfp__calls >= me->mark); /* run_node's pair: marked at each resume */
  /* Nothing changed: always so without CALL_COST_NS. */
  if (sfp__calls == me->mark)
    return;
  uint64_t cost = prog_of(c, k)->call_cost_ns;
  me->owed += (int64_t)((sfp__calls - me->mark) * cost);
  me->mark = sfp__calls;
}

/* What the running node's calls cost it and it has not spent yet (ns). */
int64_t sfp__owed(void) {
  if (!sfp__cur_c || sfp__cur_n < 0)
    return 0;
  bank_calls(sfp__cur_c, sfp__cur_n);
  return sfp__cur_c->node[sfp__cur_n].owed;
}

/* Run node k's fiber, with its globals live, until it yields; the
 * running node is saved and restored around it (callbacks may nest: the
 * outer node's calls are banked first, and its count goes on after). */
static void run_node(sfp_cluster *c, sim_world *w, int k) {
  sfp_cluster *pc = sfp__cur_c;
  int pn = sfp__cur_n;
  sim_world *pw = sfp__cur_w;
  if (pc && pn >= 0)
    bank_calls(pc, pn);
  sfp__cur_c = c, sfp__cur_n = k, sfp__cur_w = w;
  globals_in(c, k);
  c->node[k].mark = sfp__calls;
  sfp__threads_run(&c->node[k], w, k);
  bank_calls(c, k);
  sfp__cur_c = pc, sfp__cur_n = pn, sfp__cur_w = pw;
  if (pc && pn >= 0)
    pc->node[pn].mark = sfp__calls;
}

static void boot(void *ctx, sim_world *w, int k, int restart) {
  (void)restart;
  sfp_cluster *c = ctx;
  sfp_node *me = &c->node[k];
  SIM_ASSERT(me->state == N_DOWN && !me->th[0].fiber); /* teardown's pair */
  sfp__net_boot(me);
  me->heap.next = me->heap.prev = &me->heap;
  me->natexit = 0;
  me->env_failed = 0;
  me->linelen = 0; /* a crash dropped its last line unfinished */
  me->owed = 0;
  uint32_t v = 0;
  if (k < c->n && c->p->nversions) { /* it boots as the version the scenario installed */
    v = sim_node_version(w, k) % (uint32_t)(c->p->nversions + 1);
    set_version(c, k, v);
  }
  const sf_program *p = prog_of(c, k);
  size_t len = globals_len(p);
  if (len)
    raw_copy(me->globals, k < c->n ? c->image[v] : c->client_image, len); /* a restart: the image */
  SIM_ASSERT(owner_c != c || owner_n != k); /* teardown's pair: the live copy is no one's */
  size_t used = 0;
  me->argc = 0;
  for (int i = 0; i < p->nargs && i < SF_PROGRAM_MAX_ARGS; i++) {
    me->argv[me->argc++] = me->argbuf + used; /* a client's {node}: its number among clients */
    used += expand(p->args[i], k < c->n ? k : k - c->n, c->n, me->argbuf + used,
                   sizeof me->argbuf - used);
    if (used >= sizeof me->argbuf)
      break;
  }
  me->argv[me->argc] = NULL;
  sfp__threads_boot(me, w, k, node_main, me);
  me->state = N_RUN;
  run_node(c, w, k); /* main, until it first blocks */
}

void sfp__wake(sfp_cluster *c, sim_world *w, int k) {
  sfp_node *me = &c->node[k];
  if (me->state != N_RUN || sim_failed(w))
    return;
  sfp__poke(me);   /* its threads in blocking calls check again */
  if (me->blocked) /* (else it runs: a callback nested in its own call) */
    run_node(c, w, k);
}

static void timer_cb(void *ctx, sim_world *w, int k, uint64_t tag) {
  if (tag == SFP_WAKE_TAG)
    sfp__wake(ctx, w, k);
}

static void teardown(void *ctx, sim_world *w, int k, sim_teardown_why why) {
  sfp_cluster *c = ctx;
  sfp_node *me = &c->node[k];
  sfp__threads_end(me); /* their frames are dropped, as a crash drops them */
  sfp__net_end(me, w, k);
  sfp__fs_end(me, why);
  heap_free_all(me);
  me->state = N_DOWN;
  me->blocked = 0;
  if (owner_c == c && owner_n == k)
    owner_c = NULL, owner_n = -1;
}

const sim_node_ops sf_program_ops = {.boot = boot,
                                     .recv = sfp__recv_cb,
                                     .timer = timer_cb,
                                     .conn = sfp__conn_cb,
                                     .teardown = teardown};

/* The program's initial globals, taken at its first run (before any of
 * its nodes ran, so the live section still holds the image's values). */
static const unsigned char *image_of(const sf_program *p) {
  size_t len = globals_len(p), i = 0;
  while (i < SFP_PROGRAMS && initial[i].p && initial[i].p != p)
    i++;
  if (i == SFP_PROGRAMS)
    return NULL;
  if (!initial[i].p) {
    initial[i].image = malloc(len);
    if (!initial[i].image)
      return NULL;
    raw_copy(initial[i].image, p->globals, len);
    initial[i].p = p;
  }
  return initial[i].image;
}

/* The copies of a program (and of its client) belong to one cluster at a
 * time: take them (take = 1) or give them back. */
static void claim_copies(const sfp_cluster *c, int take) {
  const sf_program *ps[SF_MAX_VERSIONS + 1] = {c->p->client};
  int nps = 1;
  for (uint32_t v = 0; v <= (uint32_t)c->p->nversions; v++)
    ps[nps++] = version_of(c, v);
  for (int i = 0; i < nps; i++) {
    if (!ps[i] || !ps[i]->copies)
      continue;
    size_t slot = 0;
    while (slot < SFP_PROGRAMS && initial[slot].p != ps[i])
      slot++;
    if (slot == SFP_PROGRAMS)
      continue; /* no globals (image_of registers the others): nothing to share */
    /* one run at a time uses a program's copies (simfuzz_program.h) */
    SIM_ASSERT(initial[slot].busy != take);
    initial[slot].busy = take;
  }
}

/* The initial globals of every version of the program and of its client,
 * in c (their copies are checked: a version runs on its own copies). 0, or
 * -1 if out of memory. */
static int take_images(sfp_cluster *c, int nodes) {
  const sf_program *p = c->p;
  SIM_ASSERT(p->nversions >= 0 && (uint32_t)p->nversions < SF_MAX_VERSIONS);
  for (uint32_t v = 0; v <= (uint32_t)p->nversions; v++) {
    const sf_program *pv = version_of(c, v);
    SIM_ASSERT(!p->nversions || (pv->copies && pv->ncopies >= nodes)); /* a version's copies */
    size_t len = globals_len(pv);
    c->image[v] = len ? image_of(pv) : NULL;
    if (len && !c->image[v])
      return -1;
  }
  size_t clen = p->client ? globals_len(p->client) : 0;
  c->client_image = clen ? image_of(p->client) : NULL;
  return clen && !c->client_image ? -1 : 0;
}

void *sf_program_create(const sf_program *p, int nodes) {
  sfp_cluster *c = calloc(1, sizeof *c);
  if (!c)
    return NULL;
  c->p = p;
  if (take_images(c, nodes) < 0) {
    free(c);
    return NULL;
  }
  c->n = nodes;
  c->total = nodes + (p->client ? p->clients : 0);
  c->node = calloc((size_t)c->total, sizeof *c->node);
  if (!c->node) {
    free(c);
    return NULL;
  }
  for (int k = 0; k < c->total; k++) {
    c->node[k].prog = k < nodes ? p : p->client; /* version 0 until it boots */
    const sf_program *pk = prog_of(c, k);
    int j = k < nodes ? k : k - nodes;
    size_t l = globals_len(pk);
    if (pk->copies && j < pk->ncopies) { /* its own copy: its section is its globals */
      c->node[k].copy = &pk->copies[j];
      c->node[k].globals = pk->copies[j].globals;
      SIM_ASSERT((size_t)(pk->copies[j].globals_end - pk->copies[j].globals) == l);
      continue;
    }
    c->node[k].globals = l ? malloc(l) : NULL;
    if (l && !c->node[k].globals) {
      sf_program_destroy(c);
      return NULL;
    }
  }
  claim_copies(c, 1);
  return c;
}

void sf_program_destroy(void *ctx) {
  sfp_cluster *c = ctx;
  if (!c)
    return;
  for (int k = 0; k < c->total; k++) {
    SIM_ASSERT(!c->node[k].th[0].fiber); /* the world tore every node down first */
    if (!c->node[k].copy)
      free(c->node[k].globals);
  }
  claim_copies(c, 0);
  sf_history_free(&c->hist);
  if (owner_c == c)
    owner_c = NULL, owner_n = -1;
  free(c->node);
  free(c);
}

uint32_t sf_program_observe(void *ctx, sim_world *w, int k) {
  (void)w;
  sfp_cluster *c = ctx;
  if (k < 0 || k >= c->n)
    return 0;
  const sfp_node *me = &c->node[k];
  return me->state == N_DOWN ? 0 : me->state == N_EXITED ? 3 : me->blocked ? 2 : 1;
}

uint32_t sf_program_addr(int node) {
  return (10u << 24) | (uint32_t)(node + 1);
}

const char *sf_program_output(void *ctx, int k) {
  sfp_cluster *c = ctx;
  if (!c || k < 0 || k >= c->total)
    return "";
  return c->node[k].out;
}

/* ---- blocking --------------------------------------------------------- */

static void wait_once(int64_t until);

/* Wait for the node's next event, or until the node's monotonic clock
 * reads `until` (INT64_MAX: no deadline). First the node spends the time
 * its calls cost (CALL_COST_NS): events for it wait meanwhile. */
void sfp__block_until(int64_t until) {
  int64_t owed = sfp__owed();
  if (owed > 0) {
    sfp__self()->owed = 0;
    int64_t spent = sfp__mono_now() + owed;
    while (sfp__mono_now() < spent)
      wait_once(spent);
  }
  wait_once(until);
}

sim_timer sfp__wake_at(int64_t until) {
  if (until == INT64_MAX)
    return 0;
  /* at least 1 us: under drift, a wait of a few ns can be a timer of no
   * true time, after which the clock has not reached `until` yet and the
   * caller would wait again at the same moment, for ever */
  int64_t now = sfp__mono_now();
  uint64_t d = until > now ? (uint64_t)(until - now) : 0;
  return sim_timer_start(sfp__cur_w, sfp__cur_n, d && d < SFP_MIN_WAIT ? SFP_MIN_WAIT : d,
                         SFP_WAKE_TAG);
}

static void wait_once(int64_t until) {
  int64_t timers = sfp__timers_next(); /* a timerfd's expiry makes a call ready */
  sim_timer t = sfp__wake_at(timers < until ? timers : until);
  sfp__thread_wait_io();
  if (t)
    sim_timer_cancel(sfp__cur_w, t);
}

int64_t sfp__mono_now(void) {
  return sim_clock_mono(sfp__cur_w, sfp__cur_n);
}

/* ---- process ---------------------------------------------------------- */

int sfp_getpid(void);
int sfp_getpid(void) {
  return 1000 + sfp__cur_n;
}

/* Every node runs as root, as in a container. */
#define SFP_ROOT_ID(name)                                                                          \
  unsigned sfp_##name(void);                                                                       \
  unsigned sfp_##name(void) {                                                                      \
    return 0;                                                                                      \
  }
SFP_ROOT_ID(getuid)
SFP_ROOT_ID(geteuid)
SFP_ROOT_ID(getgid)
SFP_ROOT_ID(getegid)
#undef SFP_ROOT_ID

long sfp_sysconf(int name);
long sfp_sysconf(int name) {
  switch (name) {
  case _SC_PAGESIZE: return 4096;
  case _SC_NPROCESSORS_ONLN:
  case _SC_NPROCESSORS_CONF: return 1;
  case _SC_OPEN_MAX: return SFP_FD_FIRST + SFP_FDS;
  case _SC_CLK_TCK: return 100;
  default: return sfp__fail_errno(EINVAL);
  }
}

long sfp___sysconf(int name);
long sfp___sysconf(int name) {
  return sfp_sysconf(name);
}

int sfp_getpagesize(void);
int sfp_getpagesize(void) {
  return (int)sfp_sysconf(_SC_PAGESIZE);
}

int sfp_getrlimit(int resource, struct rlimit *r);
int sfp_getrlimit(int resource, struct rlimit *r) {
  if (!r)
    return sfp__fail_errno(EFAULT);
  r->rlim_cur = r->rlim_max = RLIM_INFINITY;
  if (resource == RLIMIT_STACK)
    r->rlim_cur = r->rlim_max = 8u << 20;
  if (resource == RLIMIT_NOFILE)
    r->rlim_cur = r->rlim_max = SFP_FD_FIRST + SFP_FDS;
  return 0;
}

int sfp_getrlimit64(int resource, struct rlimit *r);
int sfp_getrlimit64(int resource, struct rlimit *r) {
  return sfp_getrlimit(resource, r);
}

int sfp_uname(struct utsname *u);
int sfp_uname(struct utsname *u) {
  memset(u, 0, sizeof *u);
  snprintf(u->sysname, sizeof u->sysname, "Linux");
  snprintf(u->nodename, sizeof u->nodename, "node%d", sfp__cur_n);
  snprintf(u->release, sizeof u->release, "6.1.0");
  snprintf(u->version, sizeof u->version, "#1 simfuzz");
  snprintf(u->machine, sizeof u->machine, "x86_64");
  return 0;
}

const char *sfp_gnu_get_libc_version(void);
const char *sfp_gnu_get_libc_version(void) {
  return "2.36"; /* fixed: a run does not depend on the host's C library */
}

int sfp_sched_getaffinity(int pid, size_t size, cpu_set_t *mask);
int sfp_sched_getaffinity(int pid, size_t size, cpu_set_t *mask) {
  (void)pid;
  if (!mask || size == 0)
    return sfp__fail_errno(EINVAL);
  memset(mask, 0, size);
  ((unsigned char *)mask)[0] = 1; /* processor 0 */
  return 0;
}

int sfp_isatty(int fd);
int sfp_isatty(int fd) {
  (void)fd;
  sfp__fail_errno(ENOTTY);
  return 0;
}

int sfp_chdir(const char *path);
int sfp_chdir(const char *path) {
  return path && (strcmp(path, ".") == 0 || strcmp(path, "./") == 0) ? 0 : sfp__fail_errno(ENOENT);
}

char *sfp_getenv(const char *name);
char *sfp_getenv(const char *name) {
  (void)name;
  return NULL;
}

int sfp_atexit(void (*fn)(void));
int sfp_atexit(void (*fn)(void)) {
  sfp_node *me = sfp__self();
  if (me->natexit == SFP_ATEXIT)
    return -1;
  me->atexit_fn[me->natexit++] = fn;
  return 0;
}

/* The last line of the running node's output (at most 120 bytes), or "". */
static const char *last_line(char *buf, size_t cap) {
  sfp_node *me = sfp__self();
  size_t end = me->outlen < sizeof me->out ? me->outlen : sizeof me->out - 1;
  while (end > 0 && me->out[end - 1] == '\n')
    end--;
  size_t start = end;
  while (start > 0 && me->out[start - 1] != '\n' && end - start < 120)
    start--;
  snprintf(buf, cap, "%.*s", (int)(end - start), me->out + start);
  return buf;
}

static void crash_now(sim_world *w, void *arg) {
  sim_node_crash(w, (int)(uintptr_t)arg);
}

/* The node stopped after the disk or the heap failed it: a fail-stop, as
 * a crash (the heal restarts it), not a failure of the run. */
static void __attribute__((noreturn)) fail_stop(sfp_node *me) {
  SIM_ASSERT(me->env_failed); /* set where a call of the disk or the heap failed */
  sim_at(sfp__cur_w, sim_now(sfp__cur_w), crash_now, (void *)(uintptr_t)sfp__cur_n);
  stop_node();
}

void sfp__exit(int status) __attribute__((noreturn));
void sfp__exit(int status) {
  sfp_node *me = sfp__self();
  flush_line(me);
  if (status != 0 && me->env_failed && sfp__cur_n < sfp__cur_c->n)
    fail_stop(me);
  char line[128];
  if (status != 0)
    FAIL_NODE("exit", "node %d exited with status %d; its last output: \"%s\"", sfp__cur_n, status,
              last_line(line, sizeof line));
  stop_node();
}

void sfp__Exit(int status) __attribute__((noreturn));
void sfp__Exit(int status) {
  sfp__exit(status);
}

void sfp_exit(int status) __attribute__((noreturn));

static void node_main(void *arg) {
  sfp_node *me = arg;
  int (*entry)(int, char **) = me->copy ? me->copy->main : prog_of(sfp__cur_c, sfp__cur_n)->main;
  sfp_exit(entry(me->argc, me->argv)); /* main returned */
}

void sfp_exit(int status) {
  sfp_node *me = sfp__self();
  while (me->natexit > 0)
    me->atexit_fn[--me->natexit]();
  sfp__exit(status);
}

void sfp_abort(void) __attribute__((noreturn));
void sfp_abort(void) {
  sfp_node *me = sfp__self();
  if (me->env_failed && sfp__cur_n < sfp__cur_c->n)
    fail_stop(me); /* as libuv does when an allocation fails: a crash, not a bug */
  FAIL_NODE("abort", "the program called abort() on node %d", sfp__cur_n);
}

void sfp___assert_fail(const char *expr, const char *file, unsigned line, const char *func)
    __attribute__((noreturn));
void sfp___assert_fail(const char *expr, const char *file, unsigned line, const char *func) {
  flush_line(sfp__self());
  if (sim__invariant_failed(sfp__cur_w, sfp__cur_n, "assert", file, (int)line,
                            "Assertion `%s' failed in %s", expr, func))
    abort();
  stop_node();
}

int *sfp___errno_location(void);
int *sfp___errno_location(void) {
  if (!sfp__cur_c || sfp__cur_n < 0)
    return __errno_location();
  sfp_node *me = &sfp__cur_c->node[sfp__cur_n];
  return &me->th[me->cur].err;
}

int sfp__fail_errno(int e) {
  sfp_node *me = sfp__self();
  me->th[me->cur].err = e;
  return -1;
}

/* ---- memory ----------------------------------------------------------- */

void *sfp_malloc(size_t n);
void *sfp_malloc(size_t n) {
  sfp_node *me = sfp__self();
  if (n > SFP_HEAP_MAX - me->heap_bytes || n > SFP_HEAP_MAX)
    return sfp__fail_errno(ENOMEM), NULL;
  blk *b = sf_malloc(sizeof *b + (n ? n : 1)); /* fails at the allocation fault point */
  if (!b) {
    me->env_failed = 1; /* an exit with an error status now is a fail-stop */
    return sfp__fail_errno(ENOMEM), NULL;
  }
  b->size = n;
  b->magic = BLK_LIVE;
  b->next = me->heap.next;
  b->prev = &me->heap;
  me->heap.next->prev = b;
  me->heap.next = b;
  me->heap_bytes += n;
  return b + 1;
}

void sfp_free(void *p);
void sfp_free(void *p) {
  if (!p)
    return;
  sfp_node *me = sfp__self();
  blk *b = (blk *)p - 1;
  if (b->magic != BLK_LIVE)
    FAIL_NODE("heap_misuse",
              "free() of a block that is not live (freed twice, or not from malloc)");
  b->magic = 0;
  b->prev->next = b->next;
  b->next->prev = b->prev;
  me->heap_bytes -= b->size;
  sf_free(b);
}

void *sfp_calloc(size_t n, size_t size);
void *sfp_calloc(size_t n, size_t size) {
  size_t total;
  if (__builtin_mul_overflow(n, size, &total))
    return sfp__fail_errno(ENOMEM), NULL;
  void *p = sfp_malloc(total);
  if (p)
    memset(p, 0, total);
  return p;
}

void *sfp_realloc(void *p, size_t n);
void *sfp_realloc(void *p, size_t n) {
  if (!p)
    return sfp_malloc(n);
  size_t old = ((blk *)p - 1)->size;
  void *q = sfp_malloc(n);
  if (!q)
    return NULL;
  memcpy(q, p, old < n ? old : n);
  sfp_free(p);
  return q;
}

char *sfp_strndup(const char *s, size_t n);
char *sfp_strndup(const char *s, size_t n) {
  size_t len = strnlen(s, n);
  char *d = sfp_malloc(len + 1);
  if (d) {
    memcpy(d, s, len);
    d[len] = 0;
  }
  return d;
}

char *sfp_strdup(const char *s);
char *sfp_strdup(const char *s) {
  return sfp_strndup(s, SIZE_MAX);
}

/* ---- time and randomness ---------------------------------------------- */

/* The node's clock as the program reads it: on by the time its calls
 * cost and it has not spent yet (CALL_COST_NS). */
static int node_clock(clockid_t clock, struct timespec *ts) {
  if (sf_libc_clock(clock, ts) != 0)
    return -1;
  int64_t owed = sfp__owed();
  if (owed > 0) {
    int64_t ns = (int64_t)ts->tv_nsec + owed % 1000000000;
    ts->tv_sec += (time_t)(owed / 1000000000 + ns / 1000000000);
    ts->tv_nsec = (long)(ns % 1000000000);
  }
  return 0;
}

int sfp_clock_getres(clockid_t clock, struct timespec *res);
int sfp_clock_getres(clockid_t clock, struct timespec *res) {
  (void)clock;
  if (res)
    res->tv_sec = 0, res->tv_nsec = 1;
  return 0;
}

int sfp_clock_gettime(clockid_t clock, struct timespec *ts);
int sfp_clock_gettime(clockid_t clock, struct timespec *ts) {
  return node_clock(clock, ts) == 0 ? 0 : sfp__fail_errno(EINVAL);
}

int sfp_gettimeofday(struct timeval *tv, void *tz);
int sfp_gettimeofday(struct timeval *tv, void *tz) {
  (void)tz;
  struct timespec ts;
  node_clock(CLOCK_REALTIME, &ts);
  tv->tv_sec = ts.tv_sec;
  tv->tv_usec = ts.tv_nsec / 1000;
  return 0;
}

time_t sfp_time(time_t *t);
time_t sfp_time(time_t *t) {
  struct timespec ts;
  node_clock(CLOCK_REALTIME, &ts);
  if (t)
    *t = ts.tv_sec;
  return ts.tv_sec;
}

/* Sleep ns of the node's monotonic clock. */
void sfp__sleep_ns(int64_t ns) {
  int64_t until = sfp__mono_now() + ns;
  while (sfp__mono_now() < until)
    sfp__block_until(until);
}

int sfp_nanosleep(const struct timespec *req, struct timespec *rem);
int sfp_nanosleep(const struct timespec *req, struct timespec *rem) {
  if (!req || req->tv_nsec < 0 || req->tv_nsec >= 1000000000L || req->tv_sec < 0)
    return sfp__fail_errno(EINVAL);
  int64_t s = req->tv_sec > 1000000000 ? 1000000000 : req->tv_sec;
  sfp__sleep_ns(s * 1000000000ll + req->tv_nsec);
  if (rem)
    rem->tv_sec = 0, rem->tv_nsec = 0;
  return 0;
}

/* clock_nanosleep: relative, or to an absolute time of the clock, checked
 * again at each wake-up (a realtime clock may be stepped meanwhile); it
 * returns the error number, as POSIX says, not -1. */
int sfp_clock_nanosleep(clockid_t clock, int flags, const struct timespec *req,
                        struct timespec *rem);
int sfp_clock_nanosleep(clockid_t clock, int flags, const struct timespec *req,
                        struct timespec *rem) {
  struct timespec now;
  if (!req || req->tv_nsec < 0 || req->tv_nsec >= 1000000000L || req->tv_sec < 0 ||
      node_clock(clock, &now) != 0)
    return EINVAL;
  if (!(flags & TIMER_ABSTIME))
    return sfp_nanosleep(req, rem) == 0 ? 0 : EINVAL;
  int64_t s = req->tv_sec > 1000000000 ? 1000000000 : req->tv_sec;
  int64_t target = s * 1000000000ll + req->tv_nsec;
  for (;;) {
    node_clock(clock, &now);
    int64_t left = target - ((int64_t)now.tv_sec * 1000000000ll + now.tv_nsec);
    if (left <= 0)
      return 0;
    int64_t until = sfp__mono_now() + left;
    while (sfp__mono_now() < until) /* (another event may wake it first) */
      sfp__block_until(until);
  }
}

int sfp_usleep(unsigned us);
int sfp_usleep(unsigned us) {
  sfp__sleep_ns((int64_t)us * 1000);
  return 0;
}

unsigned sfp_sleep(unsigned s);
unsigned sfp_sleep(unsigned s) {
  sfp__sleep_ns((int64_t)s * 1000000000ll);
  return 0;
}

ssize_t sfp_getrandom(void *buf, size_t len, unsigned flags);
ssize_t sfp_getrandom(void *buf, size_t len, unsigned flags) {
  (void)flags;
  uint8_t *b = buf;
  for (size_t i = 0; i < len; i += 8) {
    uint64_t r = sf_libc_random();
    memcpy(b + i, &r, len - i < 8 ? len - i : 8);
  }
  return (ssize_t)len;
}

int sfp_rand(void);
int sfp_rand(void) {
  return (int)(sf_libc_random() % ((uint64_t)RAND_MAX + 1));
}

long sfp_random(void);
long sfp_random(void) {
  return (long)(sf_libc_random() & 0x7fffffff);
}

uint32_t sfp_arc4random(void);
uint32_t sfp_arc4random(void) {
  return (uint32_t)sf_libc_random();
}

void sfp_arc4random_buf(void *buf, size_t len);
void sfp_arc4random_buf(void *buf, size_t len) {
  sfp_getrandom(buf, len, 0);
}

uint32_t sfp_arc4random_uniform(uint32_t bound);
uint32_t sfp_arc4random_uniform(uint32_t bound) {
  if (bound < 2)
    return 0;
  uint32_t floor = (uint32_t)-bound % bound; /* below it, a draw would bias the rest */
  for (;;) {
    uint32_t r = (uint32_t)sf_libc_random();
    if (r >= floor)
      return r % bound;
  }
}

void sfp_srand(unsigned seed);
void sfp_srand(unsigned seed) {
  (void)seed;
}

void sfp_srandom(unsigned seed);
void sfp_srandom(unsigned seed) {
  (void)seed;
}

/* ---- standard streams ------------------------------------------------- */

/* The node's pending output line into the trace, as an OUTPUT record, up
 * to SFP_OUT_LINES per node and run (then one that says so). */
static void flush_line(sfp_node *me) {
  SIM_ASSERT(me->linelen <= sizeof me->line);
  if (!me->linelen)
    return;
  if (me->lines < SFP_OUT_LINES)
    sim_output(sfp__cur_w, sfp__cur_n, me->line, me->linelen);
  else if (me->lines == SFP_OUT_LINES)
    sim_output(sfp__cur_w, sfp__cur_n, "(more output: see the node's last lines)", 40);
  me->lines += me->lines <= SFP_OUT_LINES;
  me->linelen = 0;
}

static ssize_t out_write(void *cookie, const char *buf, size_t len) {
  (void)cookie;
  if (!sfp__cur_c || sfp__cur_n < 0)
    return (ssize_t)len;
  sfp_node *me = &sfp__cur_c->node[sfp__cur_n];
  for (size_t i = 0; i < len; i++) {
    if (buf[i] == '\n' || me->linelen == sizeof me->line)
      flush_line(me);
    if (buf[i] != '\n')
      me->line[me->linelen++] = buf[i];
    if (me->outlen + 1 >= sizeof me->out) { /* keep the last half */
      size_t keep = sizeof me->out / 2;
      memmove(me->out, me->out + me->outlen - keep, keep);
      me->outlen = keep;
    }
    me->out[me->outlen++] = buf[i];
  }
  me->out[me->outlen] = 0;
  return (ssize_t)len;
}

/* The program's stdout and stderr: unbuffered streams into the output of
 * whichever node runs. */
static FILE *out_stream(void) {
  static FILE *f;
  if (!f) {
    f = fopencookie(NULL, "w", (cookie_io_functions_t){.write = out_write});
    if (!f)
      sf_out_of_memory("a program's output stream");
    setvbuf(f, NULL, _IONBF, 0);
  }
  return f;
}

static ssize_t in_read(void *cookie, char *buf, size_t len) {
  (void)cookie, (void)buf, (void)len;
  return 0; /* no input: end of file */
}

FILE *sfp_stdout, *sfp_stderr, *sfp_stdin;
__attribute__((constructor)) static void streams(void) {
  sfp_stdout = sfp_stderr = out_stream();
  sfp_stdin = fopencookie(NULL, "r", (cookie_io_functions_t){.read = in_read});
  if (!sfp_stdin)
    sf_out_of_memory("a program's input stream");
}

int sfp_vprintf(const char *fmt, va_list ap);
int sfp_vprintf(const char *fmt, va_list ap) {
  return vfprintf(sfp_stdout, fmt, ap);
}

int sfp_printf(const char *fmt, ...);
int sfp_printf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = vfprintf(sfp_stdout, fmt, ap);
  va_end(ap);
  return r;
}

int sfp_puts(const char *s);
int sfp_puts(const char *s) {
  return fputs(s, sfp_stdout) < 0 || fputc('\n', sfp_stdout) < 0 ? EOF : 1;
}

int sfp_putchar(int ch);
int sfp_putchar(int ch) {
  return fputc(ch, sfp_stdout);
}

void sfp_perror(const char *s);
void sfp_perror(const char *s) {
  fprintf(sfp_stderr, "%s%s%s\n", s && *s ? s : "", s && *s ? ": " : "",
          strerror(*sfp___errno_location()));
}

/* ---- descriptors: the standard streams and sockets -------------------- */

ssize_t sfp_write(int fd, const void *buf, size_t len);
ssize_t sfp_write(int fd, const void *buf, size_t len) {
  if (fd == 1 || fd == 2)
    return out_write(NULL, buf, len);
  sfp_fd *f = sfp__fd(fd);
  if (f && f->kind == FD_FILE)
    return sfp__file_write(f, buf, len);
  if (f && f->kind == FD_RANDOM)
    return (ssize_t)len; /* (entropy offered: taken, and nothing changes) */
  return sfp__sock_write(fd, buf, len);
}

ssize_t sfp_read(int fd, void *buf, size_t len);
ssize_t sfp_read(int fd, void *buf, size_t len) {
  if (fd == 0)
    return 0; /* no input: end of file */
  sfp_fd *f = sfp__fd(fd);
  if (f && f->kind == FD_FILE)
    return sfp__file_read(f, buf, len);
  if (f && f->kind == FD_RANDOM)
    return sfp_getrandom(buf, len, 0);
  return sfp__sock_read(fd, buf, len);
}

/* _FORTIFY_SOURCE's checked forms: the same calls, with a buffer size. */
ssize_t sfp___read_chk(int fd, void *buf, size_t len, size_t buflen);
ssize_t sfp___read_chk(int fd, void *buf, size_t len, size_t buflen) {
  if (len > buflen)
    FAIL_NODE("fortify", "read() of %zu bytes into a buffer of %zu", len, buflen);
  return sfp_read(fd, buf, len);
}

ssize_t sfp_recv(int fd, void *buf, size_t len, int flags);
ssize_t sfp___recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags);
ssize_t sfp___recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags) {
  if (len > buflen)
    FAIL_NODE("fortify", "recv() of %zu bytes into a buffer of %zu", len, buflen);
  return sfp_recv(fd, buf, len, flags);
}

ssize_t sfp_recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *sa,
                     socklen_t *salen);
ssize_t sfp___recvfrom_chk(int fd, void *buf, size_t len, size_t buflen, int flags,
                           struct sockaddr *sa, socklen_t *salen);
ssize_t sfp___recvfrom_chk(int fd, void *buf, size_t len, size_t buflen, int flags,
                           struct sockaddr *sa, socklen_t *salen) {
  if (len > buflen)
    FAIL_NODE("fortify", "recvfrom() of %zu bytes into a buffer of %zu", len, buflen);
  return sfp_recvfrom(fd, buf, len, flags, sa, salen);
}

int sfp_poll(struct pollfd *fds, nfds_t n, int timeout_ms);
int sfp___poll_chk(struct pollfd *fds, nfds_t n, int timeout_ms, size_t fdslen);
int sfp___poll_chk(struct pollfd *fds, nfds_t n, int timeout_ms, size_t fdslen) {
  if (fdslen / sizeof *fds < n)
    FAIL_NODE("fortify", "poll() of %zu descriptors in an array of %zu", (size_t)n,
              fdslen / sizeof *fds);
  return sfp_poll(fds, n, timeout_ms);
}

int sfp___printf_chk(int flag, const char *fmt, ...);
int sfp___printf_chk(int flag, const char *fmt, ...) {
  (void)flag;
  va_list ap;
  va_start(ap, fmt);
  int r = vfprintf(sfp_stdout, fmt, ap);
  va_end(ap);
  return r;
}

int sfp___vprintf_chk(int flag, const char *fmt, va_list ap);
int sfp___vprintf_chk(int flag, const char *fmt, va_list ap) {
  (void)flag;
  return vfprintf(sfp_stdout, fmt, ap);
}

/* A call the table neither models nor lists as pure: simfuzz_add_program
 * made every reference to it a stub that lands here with its name. */
void sfp__refused(const char *name);
void sfp__refused(const char *name) {
  char msg[200];
  snprintf(msg, sizeof msg,
           "the program called %s(), which simfuzz does not model (not in harness/program/calls.h)",
           name);
  fail_node("unsupported_call", name, 0, msg);
}

/* A raw system call: the few a library makes so (libuv closes through
 * one), or ENOSYS where the caller falls back to a plain call. */
long sfp_syscall(long nr, ...);
int sfp_close(int fd);
long sfp_syscall(long nr, ...) {
  va_list ap;
  va_start(ap, nr);
  long a = va_arg(ap, long), b = va_arg(ap, long), c = va_arg(ap, long);
  va_end(ap);
  switch (nr) {
  case SYS_close: return sfp_close((int)a);
  case SYS_getrandom: return sfp_getrandom((void *)a, (size_t)b, (unsigned)c);
  case SYS_statx:
  case SYS_preadv:
  case SYS_pwritev:
  case SYS_copy_file_range: return sfp__fail_errno(ENOSYS);
  default:
    FAIL_NODE("unsupported_call",
              "the program made raw system call %ld, which simfuzz does not model", nr);
  }
}

/* ---- refused calls ---------------------------------------------------- */

/* A refused call fails the run where the program made it, naming it. */
#define SFP_REFUSED_MODEL(name, what)
#define SFP_REFUSED_REFUSE(name, what)                                                             \
  void sfp_##name(void);                                                                           \
  void sfp_##name(void) {                                                                          \
    fail_node("unsupported_call", #name "()", 0,                                                   \
              "the program called " #name "(), which simfuzz does not model: " what);              \
  }
#define SFP_REFUSED_(name, how, what) SFP_REFUSED_##how(name, what)
SFP_CALLS(SFP_REFUSED_)
