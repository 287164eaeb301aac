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
#include "program/fiber.h"
#include <simfuzz/simfuzz.h>
#include <simfuzz/simfuzz_libc.h>
#include <simfuzz/simfuzz_program.h>
#include <simfuzz/simfuzz_runner.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>

#define SFP_STACK (256u * 1024u) /* a node's stack */
#define SFP_FDS 64               /* descriptors per node */
#define SFP_FD_FIRST 3           /* 0-2: the standard streams */
#define SFP_RXQ 64               /* datagrams queued per socket, then dropped */
#define SFP_DGRAM_MAX 65507u     /* a UDP payload, at most */
#define SFP_HDR 4                /* on the simulated wire: source port, destination port */
#define SFP_ATEXIT 32            /* atexit handlers per node */
#define SFP_ARG_BYTES 4096u      /* a node's command line, expanded */
#define SFP_WAKE_TAG 0x5f50u     /* the tag of a blocked call's wake-up timer */
#define SFP_EPHEMERAL 49152u     /* the first port of an unbound socket */
#define SFP_HEAP_MAX (64u << 20) /* bytes a node may hold */

typedef struct dgram {
  uint8_t *data;
  uint32_t len;
  uint32_t from_addr; /* host byte order */
  uint16_t from_port;
} dgram;

typedef struct sfp_fd {
  int used;
  int nonblock;
  uint16_t port; /* 0: not bound yet */
  dgram q[SFP_RXQ];
  uint32_t qhead, qlen;
} sfp_fd;

/* A block of the node's heap: the node frees all of them when it ends. */
typedef struct blk {
  struct blk *prev, *next;
  size_t size;
  uint64_t magic;
} blk;
#define BLK_LIVE 0x5346504c49564521ull

typedef enum { N_DOWN = 0, N_RUN, N_EXITED } nstate;

typedef struct sfp_node {
  nstate state;
  int blocked; /* in a blocking call, waiting for an event */
  int err;     /* errno */
  sfp_fiber *fiber;
  unsigned char *globals; /* this node's copy of the program's globals */
  sfp_fd fd[SFP_FDS];
  blk heap; /* list head of the node's blocks */
  size_t heap_bytes;
  void (*atexit_fn[SFP_ATEXIT])(void);
  int natexit;
  char argbuf[SFP_ARG_BYTES];
  char *argv[SF_PROGRAM_MAX_ARGS + 1];
  int argc;
  uint16_t next_port;
  char out[SF_PROGRAM_OUTPUT];
  size_t outlen;
} sfp_node;

typedef struct sfp_cluster {
  const sf_program *p;
  const unsigned char *image; /* the program's initial globals */
  int n;
  sfp_node *node;
} sfp_cluster;

/* The node whose fiber runs (set while it runs), and the node whose
 * globals are in the live section. */
static sfp_cluster *cur_c;
static int cur_n = -1;
static sim_world *cur_w;
static sfp_cluster *owner_c;
static int owner_n = -1;
/* Each program's globals as its image has them, taken before any of its
 * nodes ran (a binary may hold several programs). */
#define SFP_PROGRAMS 64
static struct {
  const sf_program *p;
  unsigned char *image;
} initial[SFP_PROGRAMS];

static size_t globals_len(const sf_program *p) {
  return p->globals && p->globals_end > p->globals ? (size_t)(p->globals_end - p->globals) : 0;
}

/* Copy without instrumentation or a memcpy call (see the top). */
__attribute__((no_sanitize("address"))) static void raw_copy(unsigned char *dst,
                                                             const unsigned char *src, size_t n) {
  volatile unsigned char *d = dst;
  for (size_t i = 0; i < n; i++)
    d[i] = src[i];
}

/* Make node n's globals the live ones. */
static void globals_in(sfp_cluster *c, int n) {
  size_t len = globals_len(c->p);
  if (!len || (owner_c == c && owner_n == n))
    return;
  if (owner_c && owner_n >= 0 && owner_c->node[owner_n].globals)
    raw_copy(owner_c->node[owner_n].globals, owner_c->p->globals, len);
  raw_copy(c->p->globals, c->node[n].globals, len);
  owner_c = c;
  owner_n = n;
}

/* ---- the node's life -------------------------------------------------- */

static sfp_node *self(void) {
  SIM_ASSERT(cur_c && cur_n >= 0 && sfp_fiber_current()); /* only from a program's fiber */
  return &cur_c->node[cur_n];
}

/* The node stops for good: its fiber is never resumed again. */
static void __attribute__((noreturn)) stop_node(void) {
  sfp_node *me = self();
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
  if (sim__invariant_failed(cur_w, cur_n, name, file, line, "%s", msg))
    abort();
  stop_node();
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
    free(b);
    b = next;
  }
  me->heap.next = me->heap.prev = &me->heap;
  me->heap_bytes = 0;
}

static void fd_close(sfp_fd *f) {
  for (uint32_t i = 0; i < f->qlen; i++)
    free(f->q[(f->qhead + i) % SFP_RXQ].data);
  memset(f, 0, sizeof *f);
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

static void boot(void *ctx, sim_world *w, int k, int restart) {
  (void)restart;
  sfp_cluster *c = ctx;
  sfp_node *me = &c->node[k];
  SIM_ASSERT(me->state == N_DOWN && !me->fiber); /* teardown's pair */
  memset(me->fd, 0, sizeof me->fd);
  me->heap.next = me->heap.prev = &me->heap;
  me->natexit = 0;
  me->err = 0;
  me->next_port = SFP_EPHEMERAL;
  size_t len = globals_len(c->p);
  if (len)
    raw_copy(me->globals, c->image, len); /* a restart starts from the image */
  if (owner_c == c && owner_n == k)
    owner_c = NULL, owner_n = -1;
  size_t used = 0;
  me->argc = 0;
  for (int i = 0; i < c->p->nargs && i < SF_PROGRAM_MAX_ARGS; i++) {
    me->argv[me->argc++] = me->argbuf + used;
    used += expand(c->p->args[i], k, c->n, me->argbuf + used, sizeof me->argbuf - used);
    if (used >= sizeof me->argbuf)
      break;
  }
  me->argv[me->argc] = NULL;
  me->fiber = sfp_fiber_new(node_main, me, SFP_STACK);
  if (!me->fiber)
    sf_out_of_memory("a program node's stack");
  me->state = N_RUN;
  /* run main until it first blocks */
  sfp_cluster *pc = cur_c;
  int pn = cur_n;
  sim_world *pw = cur_w;
  cur_c = c, cur_n = k, cur_w = w;
  globals_in(c, k);
  sfp_fiber_resume(me->fiber);
  cur_c = pc, cur_n = pn, cur_w = pw;
}

/* Resume node k if it waits for an event. */
static void wake(sfp_cluster *c, sim_world *w, int k) {
  sfp_node *me = &c->node[k];
  if (me->state != N_RUN || !me->blocked || sim_failed(w))
    return;
  sfp_cluster *pc = cur_c;
  int pn = cur_n;
  sim_world *pw = cur_w;
  cur_c = c, cur_n = k, cur_w = w;
  globals_in(c, k);
  sfp_fiber_resume(me->fiber);
  cur_c = pc, cur_n = pn, cur_w = pw;
}

static sfp_fd *bound_to(sfp_node *me, uint16_t port) {
  for (int i = 0; i < SFP_FDS; i++)
    if (me->fd[i].used && me->fd[i].port == port)
      return &me->fd[i];
  return NULL;
}

static void enqueue(sfp_fd *f, const uint8_t *data, size_t len, uint32_t from_addr,
                    uint16_t from_port) {
  if (f->qlen == SFP_RXQ)
    return; /* a full socket buffer drops, as UDP does */
  dgram *d = &f->q[(f->qhead + f->qlen) % SFP_RXQ];
  d->data = malloc(len ? len : 1);
  if (!d->data)
    sf_out_of_memory("a program's datagram");
  memcpy(d->data, data, len);
  d->len = (uint32_t)len;
  d->from_addr = from_addr;
  d->from_port = from_port;
  f->qlen++;
}

static void recv_cb(void *ctx, sim_world *w, int k, int from, const void *msg, size_t len) {
  sfp_cluster *c = ctx;
  const uint8_t *m = msg;
  if (len < SFP_HDR || c->node[k].state != N_RUN)
    return;
  uint16_t sport = (uint16_t)(m[0] | m[1] << 8), dport = (uint16_t)(m[2] | m[3] << 8);
  sfp_fd *f = bound_to(&c->node[k], dport);
  if (f)
    enqueue(f, m + SFP_HDR, len - SFP_HDR, sf_program_addr(from), sport);
  wake(c, w, k);
}

static void timer_cb(void *ctx, sim_world *w, int k, uint64_t tag) {
  if (tag == SFP_WAKE_TAG)
    wake(ctx, w, k);
}

static void teardown(void *ctx, sim_world *w, int k, sim_teardown_why why) {
  (void)w, (void)why;
  sfp_cluster *c = ctx;
  sfp_node *me = &c->node[k];
  sfp_fiber_free(me->fiber); /* its frames are dropped, as a crash drops them */
  me->fiber = NULL;
  for (int i = 0; i < SFP_FDS; i++)
    fd_close(&me->fd[i]);
  heap_free_all(me);
  me->state = N_DOWN;
  me->blocked = 0;
  if (owner_c == c && owner_n == k)
    owner_c = NULL, owner_n = -1;
}

const sim_node_ops sf_program_ops = {
    .boot = boot, .recv = recv_cb, .timer = timer_cb, .teardown = teardown};

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

void *sf_program_create(const sf_program *p, int nodes) {
  size_t len = globals_len(p);
  const unsigned char *image = len ? image_of(p) : NULL;
  if (len && !image)
    return NULL;
  sfp_cluster *c = calloc(1, sizeof *c);
  if (!c)
    return NULL;
  c->p = p;
  c->image = image;
  c->n = nodes;
  c->node = calloc((size_t)nodes, sizeof *c->node);
  if (!c->node) {
    free(c);
    return NULL;
  }
  for (int k = 0; k < nodes; k++) {
    c->node[k].globals = len ? malloc(len) : NULL;
    if (len && !c->node[k].globals) {
      sf_program_destroy(c);
      return NULL;
    }
  }
  return c;
}

void sf_program_destroy(void *ctx) {
  sfp_cluster *c = ctx;
  if (!c)
    return;
  for (int k = 0; k < c->n; k++) {
    SIM_ASSERT(!c->node[k].fiber); /* the world tore every node down first */
    free(c->node[k].globals);
  }
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
  if (!c || k < 0 || k >= c->n)
    return "";
  return c->node[k].out;
}

/* ---- blocking --------------------------------------------------------- */

/* Wait for the node's next event, or until the node's monotonic clock
 * reads `until` (INT64_MAX: no deadline). */
static void block_until(int64_t until) {
  sfp_node *me = self();
  sim_timer t = 0;
  if (until != INT64_MAX) {
    int64_t now = sim_clock_mono(cur_w, cur_n);
    t = sim_timer_start(cur_w, cur_n, until > now ? (uint64_t)(until - now) : 0, SFP_WAKE_TAG);
  }
  me->blocked = 1;
  sfp_fiber_yield();
  me->blocked = 0;
  if (t)
    sim_timer_cancel(cur_w, t);
}

static int64_t mono_now(void) {
  return sim_clock_mono(cur_w, cur_n);
}

/* ---- process ---------------------------------------------------------- */

int sfp_getpid(void);
int sfp_getpid(void) {
  return 1000 + cur_n;
}

char *sfp_getenv(const char *name);
char *sfp_getenv(const char *name) {
  (void)name;
  return NULL;
}

int sfp_atexit(void (*fn)(void));
int sfp_atexit(void (*fn)(void)) {
  sfp_node *me = self();
  if (me->natexit == SFP_ATEXIT)
    return -1;
  me->atexit_fn[me->natexit++] = fn;
  return 0;
}

void sfp__exit(int status) __attribute__((noreturn));
void sfp__exit(int status) {
  if (status != 0)
    FAIL_NODE("exit", "node %d exited with status %d", cur_n, status);
  stop_node();
}

void sfp__Exit(int status) __attribute__((noreturn));
void sfp__Exit(int status) {
  sfp__exit(status);
}

void sfp_exit(int status) __attribute__((noreturn));

static void node_main(void *arg) {
  sfp_node *me = arg;
  sfp_exit(cur_c->p->main(me->argc, me->argv)); /* main returned */
}

void sfp_exit(int status) {
  sfp_node *me = self();
  while (me->natexit > 0)
    me->atexit_fn[--me->natexit]();
  sfp__exit(status);
}

void sfp_abort(void) __attribute__((noreturn));
void sfp_abort(void) {
  FAIL_NODE("abort", "the program called abort() on node %d", cur_n);
}

void sfp___assert_fail(const char *expr, const char *file, unsigned line, const char *func)
    __attribute__((noreturn));
void sfp___assert_fail(const char *expr, const char *file, unsigned line, const char *func) {
  if (sim__invariant_failed(cur_w, cur_n, "assert", file, (int)line, "Assertion `%s' failed in %s",
                            expr, func))
    abort();
  stop_node();
}

int *sfp___errno_location(void);
int *sfp___errno_location(void) {
  if (!cur_c || cur_n < 0)
    return __errno_location();
  return &cur_c->node[cur_n].err;
}

static int fail_errno(int e) {
  self()->err = e;
  return -1;
}

/* ---- memory ----------------------------------------------------------- */

void *sfp_malloc(size_t n);
void *sfp_malloc(size_t n) {
  sfp_node *me = self();
  if (n > SFP_HEAP_MAX - me->heap_bytes || n > SFP_HEAP_MAX) {
    me->err = ENOMEM;
    return NULL;
  }
  blk *b = sf_malloc(sizeof *b + (n ? n : 1)); /* fails at the allocation fault point */
  if (!b) {
    me->err = ENOMEM;
    return NULL;
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
  sfp_node *me = self();
  blk *b = (blk *)p - 1;
  if (b->magic != BLK_LIVE)
    FAIL_NODE("heap_misuse",
              "free() of a block that is not live (freed twice, or not from malloc)");
  b->magic = 0;
  b->prev->next = b->next;
  b->next->prev = b->prev;
  me->heap_bytes -= b->size;
  free(b);
}

void *sfp_calloc(size_t n, size_t size);
void *sfp_calloc(size_t n, size_t size) {
  size_t total;
  if (__builtin_mul_overflow(n, size, &total))
    return self()->err = ENOMEM, NULL;
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

int sfp_clock_gettime(clockid_t clock, struct timespec *ts);
int sfp_clock_gettime(clockid_t clock, struct timespec *ts) {
  return sf_libc_clock(clock, ts) == 0 ? 0 : fail_errno(EINVAL);
}

int sfp_gettimeofday(struct timeval *tv, void *tz);
int sfp_gettimeofday(struct timeval *tv, void *tz) {
  (void)tz;
  struct timespec ts;
  sf_libc_clock(CLOCK_REALTIME, &ts);
  tv->tv_sec = ts.tv_sec;
  tv->tv_usec = ts.tv_nsec / 1000;
  return 0;
}

time_t sfp_time(time_t *t);
time_t sfp_time(time_t *t) {
  struct timespec ts;
  sf_libc_clock(CLOCK_REALTIME, &ts);
  if (t)
    *t = ts.tv_sec;
  return ts.tv_sec;
}

/* Sleep ns of the node's monotonic clock. */
static void sleep_ns(int64_t ns) {
  int64_t until = mono_now() + ns;
  while (mono_now() < until)
    block_until(until);
}

int sfp_nanosleep(const struct timespec *req, struct timespec *rem);
int sfp_nanosleep(const struct timespec *req, struct timespec *rem) {
  if (!req || req->tv_nsec < 0 || req->tv_nsec >= 1000000000L || req->tv_sec < 0)
    return fail_errno(EINVAL);
  int64_t s = req->tv_sec > 1000000000 ? 1000000000 : req->tv_sec;
  sleep_ns(s * 1000000000ll + req->tv_nsec);
  if (rem)
    rem->tv_sec = 0, rem->tv_nsec = 0;
  return 0;
}

int sfp_usleep(unsigned us);
int sfp_usleep(unsigned us) {
  sleep_ns((int64_t)us * 1000);
  return 0;
}

unsigned sfp_sleep(unsigned s);
unsigned sfp_sleep(unsigned s) {
  sleep_ns((int64_t)s * 1000000000ll);
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

void sfp_srand(unsigned seed);
void sfp_srand(unsigned seed) {
  (void)seed;
}

void sfp_srandom(unsigned seed);
void sfp_srandom(unsigned seed) {
  (void)seed;
}

/* ---- sockets ---------------------------------------------------------- */

static sfp_fd *fd_of(int fd) {
  if (fd < SFP_FD_FIRST || fd >= SFP_FD_FIRST + SFP_FDS)
    return NULL;
  sfp_fd *f = &self()->fd[fd - SFP_FD_FIRST];
  return f->used ? f : NULL;
}

int sfp_socket(int domain, int type, int protocol);
int sfp_socket(int domain, int type, int protocol) {
  if (domain != AF_INET)
    return fail_errno(EAFNOSUPPORT);
  if ((type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC)) != SOCK_DGRAM ||
      (protocol != 0 && protocol != IPPROTO_UDP))
    return fail_errno(EPROTONOSUPPORT);
  sfp_node *me = self();
  for (int i = 0; i < SFP_FDS; i++) {
    if (!me->fd[i].used) {
      memset(&me->fd[i], 0, sizeof me->fd[i]);
      me->fd[i].used = 1;
      me->fd[i].nonblock = (type & SOCK_NONBLOCK) != 0;
      return SFP_FD_FIRST + i;
    }
  }
  return fail_errno(EMFILE);
}

int sfp_bind(int fd, const struct sockaddr *sa, socklen_t len);
int sfp_bind(int fd, const struct sockaddr *sa, socklen_t len) {
  sfp_fd *f = fd_of(fd);
  if (!f)
    return fail_errno(EBADF);
  if (!sa || len < sizeof(struct sockaddr_in) || sa->sa_family != AF_INET)
    return fail_errno(EINVAL);
  const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;
  uint32_t a = ntohl(in->sin_addr.s_addr);
  if (a != INADDR_ANY && a != INADDR_LOOPBACK && a != sf_program_addr(cur_n))
    return fail_errno(EADDRNOTAVAIL);
  uint16_t port = ntohs(in->sin_port);
  if (f->port)
    return fail_errno(EINVAL);
  if (port && bound_to(self(), port))
    return fail_errno(EADDRINUSE);
  f->port = port ? port : self()->next_port++;
  return 0;
}

ssize_t sfp_sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *sa,
                   socklen_t salen);
ssize_t sfp_sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *sa,
                   socklen_t salen) {
  (void)flags;
  sfp_fd *f = fd_of(fd);
  if (!f)
    return fail_errno(EBADF);
  if (!sa || salen < sizeof(struct sockaddr_in) || sa->sa_family != AF_INET)
    return fail_errno(EDESTADDRREQ);
  if (len > SFP_DGRAM_MAX)
    return fail_errno(EMSGSIZE);
  if (!f->port)
    f->port = self()->next_port++;
  const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;
  uint32_t a = ntohl(in->sin_addr.s_addr);
  uint16_t dport = ntohs(in->sin_port);
  if (a == INADDR_LOOPBACK || a == sf_program_addr(cur_n)) { /* to itself: no network */
    sfp_fd *to = bound_to(self(), dport);
    if (to)
      enqueue(to, buf, len, a, f->port);
    return (ssize_t)len;
  }
  int to = (int)(a - sf_program_addr(0));
  if ((a >> 8) != (sf_program_addr(0) >> 8) || to < 0 || to >= cur_c->n)
    return (ssize_t)len; /* no such host: the datagram is lost */
  uint8_t *m = malloc(SFP_HDR + len);
  if (!m)
    sf_out_of_memory("a program's datagram");
  m[0] = (uint8_t)f->port, m[1] = (uint8_t)(f->port >> 8);
  m[2] = (uint8_t)dport, m[3] = (uint8_t)(dport >> 8);
  memcpy(m + SFP_HDR, buf, len);
  sim_send(cur_w, cur_n, to, m, SFP_HDR + len);
  free(m);
  return (ssize_t)len;
}

ssize_t sfp_recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *sa,
                     socklen_t *salen);
ssize_t sfp_recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *sa,
                     socklen_t *salen) {
  sfp_fd *f = fd_of(fd);
  if (!f)
    return fail_errno(EBADF);
  while (f->qlen == 0) {
    if (f->nonblock || (flags & MSG_DONTWAIT))
      return fail_errno(EAGAIN);
    block_until(INT64_MAX);
    f = fd_of(fd);
    if (!f)
      return fail_errno(EBADF);
  }
  dgram *d = &f->q[f->qhead];
  size_t n = d->len < len ? d->len : len;
  memcpy(buf, d->data, n);
  if (sa && salen && *salen >= sizeof(struct sockaddr_in)) {
    struct sockaddr_in in;
    memset(&in, 0, sizeof in);
    in.sin_family = AF_INET;
    in.sin_port = htons(d->from_port);
    in.sin_addr.s_addr = htonl(d->from_addr);
    memcpy(sa, &in, sizeof in);
    *salen = sizeof in;
  }
  if (!(flags & MSG_PEEK)) {
    free(d->data);
    f->qhead = (f->qhead + 1) % SFP_RXQ;
    f->qlen--;
  }
  return (ssize_t)n;
}

ssize_t sfp_recv(int fd, void *buf, size_t len, int flags);
ssize_t sfp_recv(int fd, void *buf, size_t len, int flags) {
  return sfp_recvfrom(fd, buf, len, flags, NULL, NULL);
}

int sfp_close(int fd);
int sfp_close(int fd) {
  sfp_fd *f = fd_of(fd);
  if (!f)
    return fail_errno(EBADF);
  fd_close(f);
  return 0;
}

int sfp_setsockopt(int fd, int level, int name, const void *val, socklen_t len);
int sfp_setsockopt(int fd, int level, int name, const void *val, socklen_t len) {
  (void)level, (void)name, (void)val, (void)len;
  return fd_of(fd) ? 0 : fail_errno(EBADF);
}

int sfp_fcntl(int fd, int cmd, ...);
int sfp_fcntl(int fd, int cmd, ...) {
  sfp_fd *f = fd_of(fd);
  if (!f)
    return fail_errno(EBADF);
  if (cmd == F_GETFL)
    return O_RDWR | (f->nonblock ? O_NONBLOCK : 0);
  if (cmd == F_SETFL) {
    va_list ap;
    va_start(ap, cmd);
    int flags = va_arg(ap, int);
    va_end(ap);
    f->nonblock = (flags & O_NONBLOCK) != 0;
    return 0;
  }
  if (cmd == F_GETFD || cmd == F_SETFD)
    return 0;
  return fail_errno(EINVAL);
}

static int poll_ready(struct pollfd *fds, nfds_t n) {
  int ready = 0;
  for (nfds_t i = 0; i < n; i++) {
    fds[i].revents = 0;
    if (fds[i].fd < 0)
      continue;
    sfp_fd *f = fd_of(fds[i].fd);
    if (!f)
      fds[i].revents = POLLNVAL;
    else
      fds[i].revents = (short)(((fds[i].events & POLLIN) && f->qlen ? POLLIN : 0) |
                               (fds[i].events & POLLOUT ? POLLOUT : 0));
    ready += fds[i].revents != 0;
  }
  return ready;
}

int sfp_poll(struct pollfd *fds, nfds_t n, int timeout_ms);
int sfp_poll(struct pollfd *fds, nfds_t n, int timeout_ms) {
  if (n > SFP_FDS + SFP_FD_FIRST)
    return fail_errno(EINVAL);
  int64_t until = timeout_ms < 0 ? INT64_MAX : mono_now() + (int64_t)timeout_ms * 1000000;
  for (;;) {
    int r = poll_ready(fds, n);
    if (r || timeout_ms == 0 || mono_now() >= until)
      return r;
    block_until(until);
  }
}

int sfp_inet_pton(int af, const char *src, void *dst);
int sfp_inet_pton(int af, const char *src, void *dst) {
  if (af != AF_INET)
    return fail_errno(EAFNOSUPPORT);
  unsigned a, b, c, d;
  char end;
  if (sscanf(src, "%3u.%3u.%3u.%3u%c", &a, &b, &c, &d, &end) != 4 || a > 255 || b > 255 ||
      c > 255 || d > 255)
    return 0;
  uint32_t v = htonl(a << 24 | b << 16 | c << 8 | d);
  memcpy(dst, &v, 4);
  return 1;
}

/* ---- standard streams ------------------------------------------------- */

static ssize_t out_write(void *cookie, const char *buf, size_t len) {
  (void)cookie;
  if (!cur_c || cur_n < 0)
    return (ssize_t)len;
  sfp_node *me = &cur_c->node[cur_n];
  for (size_t i = 0; i < len; i++) {
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

FILE *sfp_stdout, *sfp_stderr;
__attribute__((constructor)) static void streams(void) {
  sfp_stdout = sfp_stderr = out_stream();
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
  fprintf(sfp_stderr, "%s%s%s\n", s && *s ? s : "", s && *s ? ": " : "", strerror(self()->err));
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
