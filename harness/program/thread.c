/* Threads of a program node as deterministic coroutines (issue 39).
 *
 * Each thread of a node is a fiber of its own; one runs at a time. The
 * node's scheduler (sfp__threads_run) runs on the simulator's stack: it
 * resumes a runnable thread, which runs until it blocks, ends, or gives
 * way at a switch point, and then it picks the next. When no thread can
 * run, the node waits for its next event, as a single-threaded node does.
 *
 * Every point where a real scheduler could switch threads is a decision
 * drawn from the scenario's choice source (sim_draw, on a stream of the
 * node's incarnation): a lock, an unlock, a condition's signal and which
 * waiter it wakes, a semaphore's post and wait, a thread's start and
 * join, sched_yield, an atomic operation (program_atomics.h), an fsync,
 * and whichever thread runs after one blocks. A node that never starts a
 * thread draws nothing and records nothing here: its runs are what they
 * were before threads existed.
 *
 * Lock state lives in the program's own objects (pthread_mutex_t and the
 * like, which their static initializers zero), so it is per node as the
 * program's globals and heap are, and a restart's fresh image unlocks it.
 * Waiters are found by scanning the node's threads in slot order, never
 * by an object's address order.
 *
 * A deadlock (every live thread waits for another, with no timer or event
 * that could wake one) fails the run, naming each thread's wait. */
#define _GNU_SOURCE
#include "program/internal.h"
#include <simfuzz/sim.h>
#include <simfuzz/simfuzz_runner.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define SFP_SWITCH_ONE_IN 4      /* at a switch point, another thread runs one time in 4 */
#define SFP_KEY_ROUNDS 4         /* PTHREAD_DESTRUCTOR_ITERATIONS */
#define SFP_IO_MIN_NS 50000      /* an fsync in a node with threads: 50 us ... */
#define SFP_IO_SPREAD_NS 1950000 /* ... to 2 ms */

/* What a thread in TH_SYNC waits for. */
enum { W_NONE = 0, W_MUTEX, W_COND, W_RDLOCK, W_WRLOCK, W_SEM, W_JOIN, W_ONCE };

/* Our state inside the program's objects (their initializers zero them). */
typedef struct {
  int readers, writer; /* read holders; the writing thread + 1 */
  uint32_t id;         /* the lock's number in the node, from 1 */
  int last;            /* the thread that took it last + 1 */
} rw_state;
typedef struct {
  int clock; /* the clock of timed waits: CLOCK_REALTIME (0) unless set */
} cond_state;
typedef struct {
  unsigned value;
} sem_state;
typedef struct {
  int detached;
  size_t stack;
} attr_state;
_Static_assert(sizeof(rw_state) <= sizeof(pthread_rwlock_t), "a rwlock holds its state");
_Static_assert(sizeof(cond_state) <= sizeof(pthread_cond_t), "a condition holds its state");
_Static_assert(sizeof(sem_state) <= sizeof(sem_t), "a semaphore holds its state");
_Static_assert(sizeof(attr_state) <= sizeof(pthread_attr_t), "attributes hold their state");
_Static_assert(sizeof(int) <= sizeof(pthread_mutexattr_t), "a mutex attribute holds a kind");
_Static_assert(sizeof(int) <= sizeof(pthread_condattr_t), "a condition attribute holds a clock");

static rw_state *rw_of(pthread_rwlock_t *l) {
  return (rw_state *)(void *)l;
}
static cond_state *cond_of(pthread_cond_t *c) {
  return (cond_state *)(void *)c;
}
static sem_state *sem_of(sem_t *s) {
  return (sem_state *)(void *)s;
}

/* ---- the scheduler ---------------------------------------------------- */

static uint64_t draw(sfp_node *me) {
  return sim_draw(sfp__cur_w, me->sched_stream, me->sched_draws++);
}

/* The runnable thread after `skip` others in slot order, not counting
 * `except` (-1: none). */
static int nth_runnable(const sfp_node *me, int skip, int except) {
  for (int i = 0; i < SFP_THREADS; i++)
    if (i != except && me->th[i].state == TH_RUN && skip-- == 0)
      return i;
  SIM_ASSERT(0 && "fewer runnable threads than counted");
  return -1;
}

static int runnable(const sfp_node *me, int except) {
  int n = 0;
  for (int i = 0; i < SFP_THREADS; i++)
    n += i != except && me->th[i].state == TH_RUN;
  return n;
}

/* The thread to run next: the one a switch point chose, the only one, or
 * one drawn among several; -1 if none can run. */
static int pick(sfp_node *me) {
  if (!me->spawned) /* one thread: no draw, no scan */
    return me->th[0].state == TH_RUN ? 0 : -1;
  int t = me->next;
  me->next = -1;
  if (t >= 0 && me->th[t].state == TH_RUN)
    return t;
  int n = runnable(me, -1);
  if (n <= 1)
    return n ? nth_runnable(me, 0, -1) : -1;
  return nth_runnable(me, (int)(draw(me) % (uint64_t)n), -1);
}

void sfp__threads_boot(sfp_node *me, sim_world *w, int k, void (*fn)(void *), void *arg) {
  memset(me->th, 0, sizeof me->th);
  me->th[0].fiber = sfp_fiber_new(fn, arg, SFP_STACK);
  if (!me->th[0].fiber)
    sf_out_of_memory("a program node's stack");
  me->th[0].state = TH_RUN;
  me->th[0].until = INT64_MAX;
  me->cur = 0;
  me->next = -1;
  me->spawned = 0;
  me->sched_stream = sim_stream_id(0xc6, (unsigned)k, (unsigned)sim_node_incarnation(w, k));
  me->sched_draws = 0;
  me->locks = 0;
  memset(me->key_used, 0, sizeof me->key_used);
}

void sfp__threads_end(sfp_node *me) {
  for (int i = 0; i < SFP_THREADS; i++) {
    sfp_fiber_free(me->th[i].fiber); /* (NULL: nothing) */
    me->th[i].fiber = NULL;
    me->th[i].state = TH_FREE;
  }
}

static const char *wait_name(int w) {
  static const char *const names[] = {"?",          "waits for lock",  "waits on a condition",
                                      "reads lock", "writes lock",     "waits on a semaphore",
                                      "joins",      "waits for a once"};
  return w > 0 && w < (int)(sizeof names / sizeof *names) ? names[w] : "?";
}

/* Every live thread waits for another thread, with no deadline. */
static int deadlocked(const sfp_node *me) {
  int sync = 0;
  for (int i = 0; i < SFP_THREADS; i++) {
    const sfp_thread *t = &me->th[i];
    if (t->state == TH_RUN || t->state == TH_IO)
      return 0;
    if (t->state == TH_SYNC && t->until != INT64_MAX)
      return 0; /* its timeout will wake it */
    sync += t->state == TH_SYNC;
  }
  return sync > 0;
}

/* One thread's wait, for the report: "t1 waits for lock 2 (held by t0)".
 * Returns the length written into out (cap > 0), cut to fit. */
static size_t describe_wait(const sfp_node *me, int i, char *out, size_t cap) {
  SIM_ASSERT(cap > 0);
  const sfp_thread *t = &me->th[i];
  char what[48] = "";
  if (t->wait == W_MUTEX) {
    const pthread_mutex_t *m = t->on;
    snprintf(what, sizeof what, " %u (held by t%d)", m->__data.__nusers, m->__data.__owner - 1);
  } else if (t->wait == W_RDLOCK || t->wait == W_WRLOCK) {
    snprintf(what, sizeof what, " %u", ((const rw_state *)t->on)->id);
  } else if (t->wait == W_JOIN) {
    snprintf(what, sizeof what, " t%d", (int)((const sfp_thread *)t->on - me->th));
  }
  int n = snprintf(out, cap, "t%d %s%s", i, wait_name(t->wait), what);
  return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

/* Append "; " (a space before the first) and thread i's wait to msg, of
 * which n bytes are used (n < cap); the new length, cut to fit. */
static size_t append_wait(const sfp_node *me, int i, int first, char *msg, size_t cap, size_t n) {
  SIM_ASSERT(n < cap);
  int k = snprintf(msg + n, cap - n, "%s", first ? " " : "; ");
  n += k > 0 && (size_t)k < cap - n ? (size_t)k : cap - n - 1;
  return n + (n < cap - 1 ? describe_wait(me, i, msg + n, cap - n) : 0);
}

/* msg's header: its length, cut to fit. */
static size_t header(char *msg, size_t cap, const char *what, int k) {
  int h = snprintf(msg, cap, "node %d: %s:", k, what);
  return h > 0 && (size_t)h < cap ? (size_t)h : cap - 1;
}

static void deadlock(sfp_node *me, sim_world *w, int k) {
  char msg[400];
  size_t n = header(msg, sizeof msg, "every thread waits for another", k);
  int first = 1;
  for (int i = 0; i < SFP_THREADS; i++)
    if (me->th[i].state == TH_SYNC) {
      n = append_wait(me, i, first, msg, sizeof msg, n);
      first = 0;
    }
  me->state = N_EXITED; /* no thread of it runs again */
  if (sim__invariant_failed(w, k, "deadlock", __FILE__, __LINE__, "%s", msg))
    abort();
}

void sfp__threads_run(sfp_node *me, sim_world *w, int k) {
  me->blocked = 0;
  for (;;) {
    int t = pick(me);
    if (t < 0)
      break;
    if (t != me->cur && me->spawned)
      sim_thread_event(w, k, SIM_THREAD_SWITCH, (uint64_t)me->cur, (uint64_t)t);
    me->cur = t;
    sfp_fiber_resume(me->th[t].fiber);
    if (me->state != N_RUN)
      return; /* it exited, or failed: none of its threads runs again */
    sfp_thread *th = &me->th[t];
    if (th->state == TH_DONE || th->state == TH_FREE) { /* it ended: drop its stack */
      sfp_fiber_free(th->fiber);
      th->fiber = NULL;
    }
  }
  if (deadlocked(me)) {
    deadlock(me, w, k);
    return;
  }
  me->blocked = 1;
}

void sfp__poke(sfp_node *me) {
  for (int i = 0; i < (me->spawned ? SFP_THREADS : 1); i++) {
    sfp_thread *t = &me->th[i];
    if (t->state == TH_IO || (t->state == TH_SYNC && t->until != INT64_MAX))
      t->state = TH_RUN; /* it checks again (a timed wait: its deadline) */
  }
}

void sfp__thread_wait_io(void) {
  sfp_node *me = sfp__self();
  SIM_ASSERT(me->th[me->cur].state == TH_RUN);
  me->th[me->cur].state = TH_IO;
  sfp_fiber_yield();
  SIM_ASSERT(me->th[me->cur].state == TH_RUN); /* sfp__poke's pair */
}

void sfp__switch_point(void) {
  sfp_node *me = sfp__self();
  if (!me->spawned)
    return;
  int n = runnable(me, me->cur);
  if (!n)
    return;
  uint64_t d = draw(me);
  if (d % SFP_SWITCH_ONE_IN)
    return;
  me->next = nth_runnable(me, (int)((d >> 8) % (uint64_t)n), me->cur);
  sfp_fiber_yield(); /* the scheduler runs `next`; this one stays runnable */
  SIM_ASSERT(me->th[me->cur].state == TH_RUN);
}

/* The thread that holds what thread i waits for, or -1 (it does not
 * wait, or for something no one thread holds: a condition, a semaphore, a
 * lock that readers hold). */
static int holder(const sfp_node *me, int i) {
  const sfp_thread *t = &me->th[i];
  if (t->state != TH_SYNC || t->until != INT64_MAX)
    return -1; /* a timed wait ends by itself */
  if (t->wait == W_MUTEX)
    return ((const pthread_mutex_t *)t->on)->__data.__owner - 1;
  if (t->wait == W_RDLOCK || t->wait == W_WRLOCK)
    return ((const rw_state *)t->on)->writer - 1;
  if (t->wait == W_JOIN)
    return (int)((const sfp_thread *)t->on - me->th);
  return -1;
}

/* The running thread has just begun a wait: if it closes a cycle of
 * threads each waiting for what the next holds, none of them can ever go
 * on (a lock-order deadlock), whatever the rest of the node does. */
static void check_cycle(sfp_node *me) {
  int seen = 0, u = holder(me, me->cur);
  while (u >= 0 && u != me->cur && seen++ < SFP_THREADS)
    u = holder(me, u);
  if (u != me->cur)
    return;
  char msg[400];
  size_t n = header(msg, sizeof msg, "a cycle of threads, each waiting for the next", sfp__cur_n);
  u = me->cur;
  int first = 1;
  do {
    n = append_wait(me, u, first, msg, sizeof msg, n);
    first = 0;
    u = holder(me, u);
  } while (u != me->cur);
  sfp__fail_node("deadlock", __FILE__, __LINE__, msg);
}

void sfp__io_pause(void) {
  sfp_node *me = sfp__self();
  if (!me->spawned)
    return;
  sfp__sleep_ns(SFP_IO_MIN_NS + (int64_t)(draw(me) % SFP_IO_SPREAD_NS));
}

/* Wait for another thread (kind, on), or until `until`; another thread's
 * release or the deadline (checked by the caller) makes it runnable. */
static void wait_sync(sfp_node *me, int kind, const void *on, int64_t until) {
  sfp_thread *t = &me->th[me->cur];
  t->state = TH_SYNC;
  t->wait = kind;
  t->on = on;
  t->until = until;
  check_cycle(me);
  sim_timer timer = sfp__wake_at(until);
  sfp_fiber_yield();
  SIM_ASSERT(t->state == TH_RUN); /* wake_all's or sfp__poke's pair */
  t->wait = W_NONE;
  t->on = NULL;
  t->until = INT64_MAX;
  if (timer)
    sim_timer_cancel(sfp__cur_w, timer);
}

/* Make every thread that waits (kind, on) runnable: each checks again. */
static void wake_all(sfp_node *me, int kind, const void *on) {
  for (int i = 0; i < SFP_THREADS; i++)
    if (me->th[i].state == TH_SYNC && me->th[i].wait == kind && me->th[i].on == on)
      me->th[i].state = TH_RUN;
}

int sfp_clock_gettime(clockid_t clock, struct timespec *ts);

/* The node's monotonic time when `clock` reads *abs (an absolute deadline). */
static int64_t deadline_of(clockid_t clock, const struct timespec *abs) {
  struct timespec now;
  if (sfp_clock_gettime(clock, &now) != 0)
    return sfp__mono_now();
  int64_t left = ((int64_t)abs->tv_sec - now.tv_sec) * 1000000000 + (abs->tv_nsec - now.tv_nsec);
  return sfp__mono_now() + (left > 0 ? left : 0);
}

static int bad_timespec(const struct timespec *t) {
  return !t || t->tv_nsec < 0 || t->tv_nsec >= 1000000000;
}

/* ---- threads ---------------------------------------------------------- */

int sfp_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
void sfp_pthread_exit(void *ret) __attribute__((noreturn));

static void thread_main(void *arg) {
  sfp_thread *t = arg;
  sfp_pthread_exit(t->fn(t->arg));
}

int sfp_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg) {
  sfp_node *me = sfp__self();
  int i = 1;
  while (i < SFP_THREADS && me->th[i].state != TH_FREE)
    i++;
  if (i == SFP_THREADS || !fn)
    return !fn ? EINVAL : EAGAIN;
  sfp_thread *th = &me->th[i];
  SIM_ASSERT(!th->fiber); /* the scheduler dropped an ended thread's stack */
  memset(th, 0, sizeof *th);
  th->fiber = sfp_fiber_new(thread_main, th, SFP_STACK);
  if (!th->fiber)
    return EAGAIN;
  th->fn = fn;
  th->arg = arg;
  th->until = INT64_MAX;
  th->detached = attr ? ((const attr_state *)(const void *)attr)->detached : 0;
  th->state = TH_RUN;
  if (t)
    *t = (pthread_t)(i + 1);
  me->spawned = 1;
  sim_thread_event(sfp__cur_w, sfp__cur_n, SIM_THREAD_SPAWN, (uint64_t)i, (uint64_t)me->cur);
  sfp__switch_point();
  return 0;
}

/* Run the thread's key destructors, as many rounds as POSIX allows. */
static void run_key_dtors(sfp_node *me, sfp_thread *th) {
  for (int round = 0; round < SFP_KEY_ROUNDS; round++) {
    int any = 0;
    for (int k = 0; k < SFP_KEYS; k++) {
      void *v = th->key[k];
      if (!v || !me->key_used[k] || !me->key_dtor[k])
        continue;
      th->key[k] = NULL;
      me->key_dtor[k](v);
      any = 1;
    }
    if (!any)
      return;
  }
}

static int alive(const sfp_node *me) {
  int n = 0;
  for (int i = 0; i < SFP_THREADS; i++)
    n += me->th[i].state == TH_RUN || me->th[i].state == TH_IO || me->th[i].state == TH_SYNC;
  return n;
}

void sfp_exit(int status) __attribute__((noreturn));

void sfp_pthread_exit(void *ret) {
  sfp_node *me = sfp__self();
  sfp_thread *th = &me->th[me->cur];
  run_key_dtors(me, th);
  th->ret = ret;
  wake_all(me, W_JOIN, th);
  th->state = th->detached ? TH_FREE : TH_DONE;
  if (me->spawned)
    sim_thread_event(sfp__cur_w, sfp__cur_n, SIM_THREAD_EXIT, (uint64_t)me->cur, 0);
  if (!alive(me))
    sfp_exit(0); /* the last thread ended: the process exits with 0 */
  for (;;)
    sfp_fiber_yield(); /* never resumed: the scheduler drops this stack */
}

/* The slot of a pthread_t of the running node, or -1. */
static int slot_of(sfp_node *me, pthread_t t) {
  if (t < 1 || t > SFP_THREADS)
    return -1;
  int i = (int)t - 1;
  return me->th[i].state == TH_FREE ? -1 : i;
}

int sfp_pthread_join(pthread_t t, void **ret);
int sfp_pthread_join(pthread_t t, void **ret) {
  sfp_node *me = sfp__self();
  int i = slot_of(me, t);
  if (i < 0)
    return ESRCH;
  if (i == me->cur)
    return EDEADLK;
  if (me->th[i].detached)
    return EINVAL;
  while (me->th[i].state != TH_DONE)
    wait_sync(me, W_JOIN, &me->th[i], INT64_MAX);
  if (ret)
    *ret = me->th[i].ret;
  me->th[i].state = TH_FREE;
  return 0;
}

int sfp_pthread_detach(pthread_t t);
int sfp_pthread_detach(pthread_t t) {
  sfp_node *me = sfp__self();
  int i = slot_of(me, t);
  if (i < 0)
    return ESRCH;
  if (me->th[i].state == TH_DONE)
    me->th[i].state = TH_FREE;
  else
    me->th[i].detached = 1;
  return 0;
}

pthread_t sfp_pthread_self(void);
pthread_t sfp_pthread_self(void) {
  return (pthread_t)(sfp__self()->cur + 1);
}

int sfp_pthread_equal(pthread_t a, pthread_t b);
int sfp_pthread_equal(pthread_t a, pthread_t b) {
  return a == b;
}

int sfp_sched_yield(void);
int sfp_sched_yield(void) {
  sfp__switch_point();
  return 0;
}

/* An atomic operation of the program's sources (the forced header
 * program_atomics.h puts this before each one): a switch point. One in a
 * constructor, before any node runs, is only the operation. */
void sfp_sf_atomic_point(void);
void sfp_sf_atomic_point(void) {
  if (sfp_fiber_current() && sfp__cur_c)
    sfp__switch_point();
}

int sfp_pthread_attr_init(pthread_attr_t *a);
int sfp_pthread_attr_init(pthread_attr_t *a) {
  memset(a, 0, sizeof *a);
  ((attr_state *)(void *)a)->stack = SFP_STACK;
  return 0;
}

int sfp_pthread_attr_destroy(pthread_attr_t *a);
int sfp_pthread_attr_destroy(pthread_attr_t *a) {
  (void)a;
  return 0;
}

int sfp_pthread_attr_setdetachstate(pthread_attr_t *a, int state);
int sfp_pthread_attr_setdetachstate(pthread_attr_t *a, int state) {
  if (state != PTHREAD_CREATE_DETACHED && state != PTHREAD_CREATE_JOINABLE)
    return EINVAL;
  ((attr_state *)(void *)a)->detached = state == PTHREAD_CREATE_DETACHED;
  return 0;
}

int sfp_pthread_attr_getdetachstate(const pthread_attr_t *a, int *state);
int sfp_pthread_attr_getdetachstate(const pthread_attr_t *a, int *state) {
  *state = ((const attr_state *)(const void *)a)->detached ? PTHREAD_CREATE_DETACHED
                                                           : PTHREAD_CREATE_JOINABLE;
  return 0;
}

int sfp_pthread_attr_setstacksize(pthread_attr_t *a, size_t size);
int sfp_pthread_attr_setstacksize(pthread_attr_t *a, size_t size) {
  if (size < (size_t)PTHREAD_STACK_MIN)
    return EINVAL;
  ((attr_state *)(void *)a)->stack = size; /* recorded; every thread gets SFP_STACK */
  return 0;
}

int sfp_pthread_attr_getstacksize(const pthread_attr_t *a, size_t *size);
int sfp_pthread_attr_getstacksize(const pthread_attr_t *a, size_t *size) {
  size_t s = ((const attr_state *)(const void *)a)->stack;
  *size = s ? s : SFP_STACK;
  return 0;
}

int sfp_pthread_setname_np(pthread_t t, const char *name);
int sfp_pthread_setname_np(pthread_t t, const char *name) {
  (void)t;
  return name && strlen(name) < 16 ? 0 : ERANGE;
}

int sfp_pthread_sigmask(int how, const sigset_t *set, sigset_t *old);
int sfp_pthread_sigmask(int how, const sigset_t *set, sigset_t *old) {
  (void)how, (void)set; /* no signal is ever delivered to a node */
  if (old)
    memset(old, 0, sizeof *old);
  return 0;
}

int sfp_sigprocmask(int how, const sigset_t *set, sigset_t *old);
int sfp_sigprocmask(int how, const sigset_t *set, sigset_t *old) {
  return sfp_pthread_sigmask(how, set, old) ? sfp__fail_errno(EINVAL) : 0;
}

int sfp_pthread_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void));
int sfp_pthread_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void)) {
  (void)prepare, (void)parent, (void)child; /* a node never forks */
  return 0;
}

/* ---- mutexes ---------------------------------------------------------- */
/* In the program's pthread_mutex_t (glibc's fields, which its initializers
 * set): __owner the holding thread + 1, __count its depth, __kind the type,
 * __nusers the lock's number in the node (from 1, given at first use),
 * __spins the thread that took it last + 1. */

/* Thread `self` took the lock numbered *id (numbered now if new), which
 * `*last` + 1 took before: a handoff between threads is traced, the order
 * of lock acquisitions across threads that the fuzzers' feedback sees. */
static void took(sfp_node *me, unsigned *id, int *last) {
  if (!*id)
    *id = ++me->locks;
  if (me->spawned && *last && *last != me->cur + 1)
    sim_thread_event(sfp__cur_w, sfp__cur_n, SIM_THREAD_HANDOFF, (uint64_t)me->cur, *id);
  *last = me->cur + 1;
}

static int mutex_take(sfp_node *me, pthread_mutex_t *m, int try, int64_t until) {
  int self = me->cur + 1;
  for (;;) {
    if (m->__data.__owner == 0) {
      m->__data.__owner = self;
      m->__data.__count = 1;
      m->__data.__lock = 1;
      int last = m->__data.__spins;
      took(me, &m->__data.__nusers, &last);
      m->__data.__spins = (short)last;
      return 0;
    }
    if (m->__data.__owner == self && m->__data.__kind == PTHREAD_MUTEX_RECURSIVE) {
      m->__data.__count++;
      return 0;
    }
    if (m->__data.__owner == self && m->__data.__kind == PTHREAD_MUTEX_ERRORCHECK)
      return EDEADLK;
    if (try)
      return EBUSY;
    if (sfp__mono_now() >= until)
      return ETIMEDOUT;
    wait_sync(me, W_MUTEX, m, until); /* (a normal mutex taken twice: a deadlock) */
  }
}

int sfp_pthread_mutex_lock(pthread_mutex_t *m);
int sfp_pthread_mutex_lock(pthread_mutex_t *m) {
  sfp_node *me = sfp__self();
  sfp__switch_point();
  return mutex_take(me, m, 0, INT64_MAX);
}

int sfp_pthread_mutex_trylock(pthread_mutex_t *m);
int sfp_pthread_mutex_trylock(pthread_mutex_t *m) {
  sfp_node *me = sfp__self();
  sfp__switch_point();
  return mutex_take(me, m, 1, INT64_MAX);
}

int sfp_pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abs);
int sfp_pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abs) {
  sfp_node *me = sfp__self();
  if (bad_timespec(abs))
    return EINVAL;
  sfp__switch_point();
  return mutex_take(me, m, 0, deadline_of(CLOCK_REALTIME, abs));
}

/* Release m wholly (a condition wait) or once; EPERM if not ours. */
static int mutex_give(sfp_node *me, pthread_mutex_t *m, int wholly) {
  if (m->__data.__owner != me->cur + 1)
    return EPERM;
  SIM_ASSERT(m->__data.__count > 0); /* mutex_take's pair */
  if (!wholly && --m->__data.__count > 0)
    return 0;
  m->__data.__count = 0;
  m->__data.__owner = 0;
  m->__data.__lock = 0;
  wake_all(me, W_MUTEX, m);
  return 0;
}

int sfp_pthread_mutex_unlock(pthread_mutex_t *m);
int sfp_pthread_mutex_unlock(pthread_mutex_t *m) {
  sfp_node *me = sfp__self();
  int rc = mutex_give(me, m, 0);
  if (!rc)
    sfp__switch_point();
  return rc;
}

int sfp_pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a);
int sfp_pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a) {
  memset(m, 0, sizeof *m);
  m->__data.__kind = a ? *(const int *)(const void *)a : PTHREAD_MUTEX_NORMAL;
  return 0;
}

int sfp_pthread_mutex_destroy(pthread_mutex_t *m);
int sfp_pthread_mutex_destroy(pthread_mutex_t *m) {
  return m->__data.__owner ? EBUSY : 0;
}

int sfp_pthread_mutexattr_init(pthread_mutexattr_t *a);
int sfp_pthread_mutexattr_init(pthread_mutexattr_t *a) {
  memset(a, 0, sizeof *a);
  return 0;
}

int sfp_pthread_mutexattr_destroy(pthread_mutexattr_t *a);
int sfp_pthread_mutexattr_destroy(pthread_mutexattr_t *a) {
  (void)a;
  return 0;
}

int sfp_pthread_mutexattr_settype(pthread_mutexattr_t *a, int kind);
int sfp_pthread_mutexattr_settype(pthread_mutexattr_t *a, int kind) {
  if (kind != PTHREAD_MUTEX_NORMAL && kind != PTHREAD_MUTEX_RECURSIVE &&
      kind != PTHREAD_MUTEX_ERRORCHECK)
    return EINVAL;
  *(int *)(void *)a = kind;
  return 0;
}

int sfp_pthread_mutexattr_gettype(const pthread_mutexattr_t *a, int *kind);
int sfp_pthread_mutexattr_gettype(const pthread_mutexattr_t *a, int *kind) {
  *kind = *(const int *)(const void *)a;
  return 0;
}

/* ---- condition variables ---------------------------------------------- */

static int cond_wait(pthread_cond_t *c, pthread_mutex_t *m, int64_t until) {
  sfp_node *me = sfp__self();
  sfp_thread *self = &me->th[me->cur];
  unsigned depth = m->__data.__count;
  if (mutex_give(me, m, 1))
    return EPERM;
  self->woken = 0;
  while (!self->woken && sfp__mono_now() < until)
    wait_sync(me, W_COND, c, until);
  int rc = self->woken ? 0 : ETIMEDOUT;
  self->woken = 0;
  mutex_take(me, m, 0, INT64_MAX); /* as the real call: it takes the mutex back */
  m->__data.__count = depth;
  return rc;
}

int sfp_pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m);
int sfp_pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m) {
  return cond_wait(c, m, INT64_MAX);
}

int sfp_pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abs);
int sfp_pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abs) {
  if (bad_timespec(abs))
    return EINVAL;
  return cond_wait(c, m, deadline_of(cond_of(c)->clock, abs));
}

/* Wake one waiter of c (drawn among several) or all of them. */
static void cond_wake(pthread_cond_t *c, int all) {
  sfp_node *me = sfp__self();
  int n = 0, only = -1;
  for (int i = 0; i < SFP_THREADS; i++)
    if (me->th[i].state == TH_SYNC && me->th[i].wait == W_COND && me->th[i].on == c)
      n++, only = i;
  if (n > 1 && !all) {
    int skip = (int)(draw(me) % (uint64_t)n);
    for (int i = 0; i < SFP_THREADS; i++)
      if (me->th[i].state == TH_SYNC && me->th[i].wait == W_COND && me->th[i].on == c &&
          skip-- == 0)
        only = i;
  }
  for (int i = 0; i < SFP_THREADS; i++)
    if (me->th[i].state == TH_SYNC && me->th[i].wait == W_COND && me->th[i].on == c &&
        (all || i == only)) {
      me->th[i].woken = 1;
      me->th[i].state = TH_RUN;
    }
  sfp__switch_point();
}

int sfp_pthread_cond_signal(pthread_cond_t *c);
int sfp_pthread_cond_signal(pthread_cond_t *c) {
  cond_wake(c, 0);
  return 0;
}

int sfp_pthread_cond_broadcast(pthread_cond_t *c);
int sfp_pthread_cond_broadcast(pthread_cond_t *c) {
  cond_wake(c, 1);
  return 0;
}

int sfp_pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a);
int sfp_pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a) {
  memset(c, 0, sizeof *c);
  cond_of(c)->clock = a ? *(const int *)(const void *)a : CLOCK_REALTIME;
  return 0;
}

int sfp_pthread_cond_destroy(pthread_cond_t *c);
int sfp_pthread_cond_destroy(pthread_cond_t *c) {
  (void)c;
  return 0;
}

int sfp_pthread_condattr_init(pthread_condattr_t *a);
int sfp_pthread_condattr_init(pthread_condattr_t *a) {
  memset(a, 0, sizeof *a);
  return 0;
}

int sfp_pthread_condattr_destroy(pthread_condattr_t *a);
int sfp_pthread_condattr_destroy(pthread_condattr_t *a) {
  (void)a;
  return 0;
}

int sfp_pthread_condattr_setclock(pthread_condattr_t *a, clockid_t clock);
int sfp_pthread_condattr_setclock(pthread_condattr_t *a, clockid_t clock) {
  if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
    return EINVAL;
  *(int *)(void *)a = (int)clock;
  return 0;
}

/* ---- read-write locks ------------------------------------------------- */

static int rw_take(pthread_rwlock_t *l, int write, int try) {
  sfp_node *me = sfp__self();
  rw_state *r = rw_of(l);
  int self = me->cur + 1;
  sfp__switch_point();
  for (;;) {
    if (r->writer == self)
      return EDEADLK;
    if (!r->writer && (!write || !r->readers)) {
      if (write)
        r->writer = self;
      else
        r->readers++;
      took(me, &r->id, &r->last);
      return 0;
    }
    if (try)
      return EBUSY;
    wait_sync(me, write ? W_WRLOCK : W_RDLOCK, r, INT64_MAX);
  }
}

int sfp_pthread_rwlock_rdlock(pthread_rwlock_t *l);
int sfp_pthread_rwlock_rdlock(pthread_rwlock_t *l) {
  return rw_take(l, 0, 0);
}

int sfp_pthread_rwlock_wrlock(pthread_rwlock_t *l);
int sfp_pthread_rwlock_wrlock(pthread_rwlock_t *l) {
  return rw_take(l, 1, 0);
}

int sfp_pthread_rwlock_tryrdlock(pthread_rwlock_t *l);
int sfp_pthread_rwlock_tryrdlock(pthread_rwlock_t *l) {
  return rw_take(l, 0, 1);
}

int sfp_pthread_rwlock_trywrlock(pthread_rwlock_t *l);
int sfp_pthread_rwlock_trywrlock(pthread_rwlock_t *l) {
  return rw_take(l, 1, 1);
}

int sfp_pthread_rwlock_unlock(pthread_rwlock_t *l);
int sfp_pthread_rwlock_unlock(pthread_rwlock_t *l) {
  sfp_node *me = sfp__self();
  rw_state *r = rw_of(l);
  if (r->writer == me->cur + 1)
    r->writer = 0;
  else if (r->readers > 0)
    r->readers--;
  else
    return EPERM;
  wake_all(me, W_RDLOCK, r);
  wake_all(me, W_WRLOCK, r);
  sfp__switch_point();
  return 0;
}

int sfp_pthread_rwlock_init(pthread_rwlock_t *l, const void *attr);
int sfp_pthread_rwlock_init(pthread_rwlock_t *l, const void *attr) {
  (void)attr;
  memset(l, 0, sizeof *l);
  return 0;
}

int sfp_pthread_rwlock_destroy(pthread_rwlock_t *l);
int sfp_pthread_rwlock_destroy(pthread_rwlock_t *l) {
  return rw_of(l)->writer || rw_of(l)->readers ? EBUSY : 0;
}

/* ---- once and keys ---------------------------------------------------- */

int sfp_pthread_once(pthread_once_t *once, void (*fn)(void));
int sfp_pthread_once(pthread_once_t *once, void (*fn)(void)) {
  sfp_node *me = sfp__self();
  while (*once == 1) /* another thread runs fn */
    wait_sync(me, W_ONCE, once, INT64_MAX);
  if (*once == 0) {
    *once = 1;
    fn();
    *once = 2;
    wake_all(me, W_ONCE, once);
  }
  return 0;
}

int sfp_pthread_key_create(pthread_key_t *key, void (*dtor)(void *));
int sfp_pthread_key_create(pthread_key_t *key, void (*dtor)(void *)) {
  sfp_node *me = sfp__self();
  for (int k = 0; k < SFP_KEYS; k++)
    if (!me->key_used[k]) {
      me->key_used[k] = 1;
      me->key_dtor[k] = dtor;
      for (int i = 0; i < SFP_THREADS; i++)
        me->th[i].key[k] = NULL;
      *key = (pthread_key_t)k;
      return 0;
    }
  return EAGAIN;
}

int sfp_pthread_key_delete(pthread_key_t key);
int sfp_pthread_key_delete(pthread_key_t key) {
  sfp_node *me = sfp__self();
  if (key >= SFP_KEYS || !me->key_used[key])
    return EINVAL;
  me->key_used[key] = 0;
  return 0;
}

void *sfp_pthread_getspecific(pthread_key_t key);
void *sfp_pthread_getspecific(pthread_key_t key) {
  sfp_node *me = sfp__self();
  return key < SFP_KEYS && me->key_used[key] ? me->th[me->cur].key[key] : NULL;
}

int sfp_pthread_setspecific(pthread_key_t key, const void *v);
int sfp_pthread_setspecific(pthread_key_t key, const void *v) {
  sfp_node *me = sfp__self();
  if (key >= SFP_KEYS || !me->key_used[key])
    return EINVAL;
  me->th[me->cur].key[key] = (void *)(uintptr_t)v;
  return 0;
}

/* ---- semaphores ------------------------------------------------------- */

int sfp_sem_init(sem_t *s, int shared, unsigned value);
int sfp_sem_init(sem_t *s, int shared, unsigned value) {
  if (shared)
    return sfp__fail_errno(ENOSYS); /* between processes: there is one */
  memset(s, 0, sizeof *s);
  sem_of(s)->value = value;
  return 0;
}

int sfp_sem_destroy(sem_t *s);
int sfp_sem_destroy(sem_t *s) {
  (void)s;
  return 0;
}

static int sem_take(sem_t *s, int try, int64_t until) {
  sfp_node *me = sfp__self();
  sem_state *v = sem_of(s);
  sfp__switch_point();
  while (!v->value) {
    if (try)
      return sfp__fail_errno(EAGAIN);
    if (sfp__mono_now() >= until)
      return sfp__fail_errno(ETIMEDOUT);
    wait_sync(me, W_SEM, v, until);
  }
  v->value--;
  return 0;
}

int sfp_sem_wait(sem_t *s);
int sfp_sem_wait(sem_t *s) {
  return sem_take(s, 0, INT64_MAX);
}

int sfp_sem_trywait(sem_t *s);
int sfp_sem_trywait(sem_t *s) {
  return sem_take(s, 1, INT64_MAX);
}

int sfp_sem_timedwait(sem_t *s, const struct timespec *abs);
int sfp_sem_timedwait(sem_t *s, const struct timespec *abs) {
  if (bad_timespec(abs))
    return sfp__fail_errno(EINVAL);
  return sem_take(s, 0, deadline_of(CLOCK_REALTIME, abs));
}

int sfp_sem_post(sem_t *s);
int sfp_sem_post(sem_t *s) {
  sfp_node *me = sfp__self();
  sem_state *v = sem_of(s);
  v->value++;
  wake_all(me, W_SEM, v);
  sfp__switch_point();
  return 0;
}

int sfp_sem_getvalue(sem_t *s, int *value);
int sfp_sem_getvalue(sem_t *s, int *value) {
  *value = (int)sem_of(s)->value;
  return 0;
}
