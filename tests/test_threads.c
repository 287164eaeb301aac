/* Threads of a program node (harness/program/thread.c), their models
 * called by their own names: threads run one at a time and switch only at
 * the switch points, drawn from the world's choice source (a seed is a
 * schedule, the same every time); mutexes, conditions, semaphores,
 * read-write locks, once, keys, join and detach; a lock cycle and a node
 * whose every thread waits for another are deadlocks that name each
 * thread's wait; a blocked thread wakes when another thread of its node
 * writes what it waits for. */
#include "testlib.h"
#include <simfuzz/simfuzz_program.h>

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <string.h>
#include <time.h>

/* the runtime's models of the calls the programs below make */
int sfp_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
int sfp_pthread_join(pthread_t t, void **ret);
int sfp_pthread_detach(pthread_t t);
pthread_t sfp_pthread_self(void);
void sfp_pthread_exit(void *ret) __attribute__((noreturn));
int sfp_pthread_mutex_lock(pthread_mutex_t *m);
int sfp_pthread_mutex_trylock(pthread_mutex_t *m);
int sfp_pthread_mutex_unlock(pthread_mutex_t *m);
int sfp_pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m);
int sfp_pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abs);
int sfp_pthread_cond_signal(pthread_cond_t *c);
int sfp_pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a);
int sfp_pthread_condattr_init(pthread_condattr_t *a);
int sfp_pthread_condattr_setclock(pthread_condattr_t *a, clockid_t clock);
int sfp_pthread_rwlock_rdlock(pthread_rwlock_t *l);
int sfp_pthread_rwlock_wrlock(pthread_rwlock_t *l);
int sfp_pthread_rwlock_tryrdlock(pthread_rwlock_t *l);
int sfp_pthread_rwlock_unlock(pthread_rwlock_t *l);
int sfp_pthread_once(pthread_once_t *once, void (*fn)(void));
int sfp_pthread_key_create(pthread_key_t *key, void (*dtor)(void *));
int sfp_pthread_setspecific(pthread_key_t key, const void *v);
void *sfp_pthread_getspecific(pthread_key_t key);
int sfp_sem_init(sem_t *s, int shared, unsigned value);
int sfp_sem_wait(sem_t *s);
int sfp_sem_post(sem_t *s);
int sfp_sched_yield(void);
void sfp_sf_atomic_point(void);
int sfp_clock_gettime(clockid_t clock, struct timespec *ts);
int sfp_pipe(int fds[2]);
ssize_t sfp_read(int fd, void *buf, size_t len);
ssize_t sfp_write(int fd, const void *buf, size_t len);
int sfp_usleep(unsigned us);
void sfp_exit(int status) __attribute__((noreturn));

static const char *const no_args[] = {NULL};
#define SIMPLE(name, main_fn)                                                                      \
  { name, main_fn, NULL, NULL, no_args, 0, NULL, 0, NULL, 0, 0, NULL, 0 }

/* Run p on one node with the world's seed until it stops or fails, at
 * most `steps` events; the world, for the caller to read and end. */
static sim_world *run(const sf_program *p, uint64_t seed, int steps, void **ctx) {
  *ctx = sf_program_create(p, 1);
  CHECK(*ctx);
  sim_config c = ops_config(&sf_program_ops, 1);
  c.ctx = *ctx;
  c.seed = seed;
  sim_world *w = sim_world_create(&c);
  CHECK(w);
  for (int i = 0; i < steps && !sim_failed(w) && sim_step(w) == 1; i++)
    ;
  return w;
}

static void end(sim_world *w, void *ctx) {
  sim_world_destroy(w);
  sf_program_destroy(ctx);
}

/* ---- a counter, with and without its lock ------------------------------ */

static pthread_mutex_t count_mu = PTHREAD_MUTEX_INITIALIZER;
static int counter, use_lock, use_atomic_point, done_main;

static void *bump(void *arg) {
  for (int i = 0; i < 20; i++) {
    if (use_lock)
      sfp_pthread_mutex_lock(&count_mu);
    int v = counter;
    if (use_atomic_point)    /* a switch point between the read and the write */
      sfp_sf_atomic_point(); /* (what program_atomics.h puts before an atomic store) */
    else
      sfp_sched_yield();
    counter = v + 1;
    if (use_lock)
      sfp_pthread_mutex_unlock(&count_mu);
  }
  return (char *)arg + 1;
}

static char tags[3];

static int main_counter(int argc, char **argv) {
  (void)argc, (void)argv;
  memset(&count_mu, 0, sizeof count_mu);
  counter = 0;
  pthread_t t[3];
  for (int i = 0; i < 3; i++)
    CHECK_EQ(sfp_pthread_create(&t[i], NULL, bump, &tags[i]), 0);
  for (int i = 0; i < 3; i++) {
    void *ret = NULL;
    CHECK_EQ(sfp_pthread_join(t[i], &ret), 0);
    CHECK(ret == &tags[i] + 1);
  }
  CHECK_EQ(sfp_pthread_join(t[0], NULL), ESRCH); /* joined: gone */
  CHECK_EQ((int)sfp_pthread_self(), 1);          /* main is thread 1 */
  done_main = 1;
  return 0;
}
static const sf_program counter_prog = SIMPLE("counter", main_counter);

/* Of seeds 1..20, how many schedules of the counter lost an update (each
 * run whole and passing). */
static int schedules_losing_updates(void) {
  int lost = 0;
  for (uint64_t seed = 1; seed <= 20; seed++) {
    void *ctx;
    done_main = 0;
    sim_world *w = run(&counter_prog, seed, 100, &ctx);
    CHECK(!sim_failed(w));
    CHECK_EQ(done_main, 1);
    lost += counter < 60;
    end(w, ctx);
  }
  return lost;
}

TEST(a_lock_keeps_every_update_and_a_missing_one_loses_some_in_some_schedule) {
  use_lock = 1; /* the lock: no update lost, whatever the schedule */
  CHECK_EQ(schedules_losing_updates(), 0);
  use_lock = 0; /* some schedules interleave the read and the write */
  CHECK(schedules_losing_updates() > 0);
}

TEST(an_atomic_operation_is_a_switch_point_and_outside_a_node_only_itself) {
  sfp_sf_atomic_point(); /* no node runs (a constructor's atomic): nothing happens */
  use_lock = 0;
  use_atomic_point = 1;
  int lost = schedules_losing_updates();
  use_atomic_point = 0;
  CHECK(lost > 0);
}

TEST(a_seed_is_one_schedule_every_time) {
  use_lock = 0;
  uint64_t hash[2];
  int got[2];
  for (int i = 0; i < 2; i++) {
    void *ctx;
    sim_world *w = run(&counter_prog, 7, 100, &ctx);
    hash[i] = sim_trace_hash(w);
    got[i] = counter;
    end(w, ctx);
  }
  CHECK_EQ(hash[0], hash[1]);
  CHECK_EQ(got[0], got[1]);
}

/* ---- deadlocks --------------------------------------------------------- */

static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER, lock_b = PTHREAD_MUTEX_INITIALIZER;

static void *b_then_a(void *arg) {
  (void)arg;
  sfp_pthread_mutex_lock(&lock_b);
  sfp_sched_yield();
  sfp_pthread_mutex_lock(&lock_a);
  sfp_pthread_mutex_unlock(&lock_a);
  sfp_pthread_mutex_unlock(&lock_b);
  return NULL;
}

static int main_inversion(int argc, char **argv) {
  (void)argc, (void)argv;
  memset(&lock_a, 0, sizeof lock_a);
  memset(&lock_b, 0, sizeof lock_b);
  pthread_t t;
  CHECK_EQ(sfp_pthread_create(&t, NULL, b_then_a, NULL), 0);
  sfp_pthread_mutex_lock(&lock_a);
  sfp_sched_yield();
  sfp_pthread_mutex_lock(&lock_b);
  sfp_pthread_mutex_unlock(&lock_b);
  sfp_pthread_mutex_unlock(&lock_a);
  sfp_pthread_join(t, NULL);
  return 0;
}
static const sf_program inversion = SIMPLE("inversion", main_inversion);

TEST(a_lock_cycle_is_a_deadlock_that_names_each_wait) {
  int deadlocks = 0, clean = 0;
  for (uint64_t seed = 1; seed <= 40; seed++) {
    void *ctx;
    sim_world *w = run(&inversion, seed, 50, &ctx);
    if (sim_failed(w)) {
      const sim_failure *f = sim_get_failure(w);
      CHECK_EQ(strcmp(f->name, "deadlock"), 0);
      CHECK(strstr(f->message, "a cycle of threads") != NULL);
      CHECK(strstr(f->message, "t0 waits for lock") != NULL);
      CHECK(strstr(f->message, "t1 waits for lock") != NULL);
      deadlocks++;
    } else {
      clean++;
    }
    end(w, ctx);
  }
  CHECK(deadlocks > 0); /* the schedules that interleave the two first locks */
  CHECK(clean > 0);     /* and those that do not */
}

static pthread_mutex_t wait_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;

static void *waits_for_ever(void *arg) {
  (void)arg;
  sfp_pthread_mutex_lock(&wait_mu);
  sfp_pthread_cond_wait(&never, &wait_mu); /* no one signals */
  sfp_pthread_mutex_unlock(&wait_mu);
  return NULL;
}

static int main_stuck(int argc, char **argv) {
  (void)argc, (void)argv;
  pthread_t t;
  CHECK_EQ(sfp_pthread_create(&t, NULL, waits_for_ever, NULL), 0);
  sfp_pthread_join(t, NULL);
  return 0;
}
static const sf_program stuck = SIMPLE("stuck", main_stuck);

TEST(a_node_whose_every_thread_waits_for_another_is_a_deadlock) {
  void *ctx;
  sim_world *w = run(&stuck, 1, 20, &ctx);
  CHECK(sim_failed(w));
  const sim_failure *f = sim_get_failure(w);
  CHECK_EQ(strcmp(f->name, "deadlock"), 0);
  CHECK(strstr(f->message, "every thread waits for another") != NULL);
  CHECK(strstr(f->message, "t0 joins t1") != NULL);
  CHECK(strstr(f->message, "t1 waits on a condition") != NULL);
  end(w, ctx);
}

/* ---- conditions, semaphores, rwlocks, once, keys ------------------------ */

static pthread_mutex_t q_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_cv = PTHREAD_COND_INITIALIZER;
static int items, consumed, once_runs, dtor_runs, timed_out;
static int64_t waited_ns;
static sem_t sem;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_key_t key;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;

static void init_once(void) {
  once_runs++;
  sfp_sched_yield(); /* another thread comes to the once meanwhile, and waits */
}
static void dtor(void *v) {
  (void)v;
  dtor_runs++;
}

static void *consumer(void *arg) {
  (void)arg;
  sfp_pthread_once(&once, init_once);
  CHECK_EQ(sfp_pthread_setspecific(key, &dtor_runs), 0);
  CHECK(sfp_pthread_getspecific(key) == &dtor_runs);
  for (int i = 0; i < 5; i++) {
    sfp_pthread_mutex_lock(&q_mu);
    while (!items)
      sfp_pthread_cond_wait(&q_cv, &q_mu);
    items--, consumed++;
    sfp_pthread_mutex_unlock(&q_mu);
    sfp_sem_post(&sem);
  }
  CHECK_EQ(sfp_pthread_rwlock_rdlock(&rw), 0);
  CHECK_EQ(sfp_pthread_rwlock_unlock(&rw), 0);
  return NULL;
}

static int64_t mono(void) {
  struct timespec t;
  sfp_clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int main_queue(int argc, char **argv) {
  (void)argc, (void)argv;
  items = consumed = once_runs = dtor_runs = timed_out = 0;
  memset(&once, 0, sizeof once);
  CHECK_EQ(sfp_sem_init(&sem, 0, 0), 0);
  CHECK_EQ(sfp_pthread_key_create(&key, dtor), 0);
  CHECK(sfp_pthread_getspecific(key) == NULL);
  pthread_t t[2];
  for (int i = 0; i < 2; i++)
    CHECK_EQ(sfp_pthread_create(&t[i], NULL, consumer, NULL), 0);
  CHECK_EQ(sfp_pthread_rwlock_wrlock(&rw), 0); /* readers wait for the writer */
  for (int i = 0; i < 10; i++) {
    sfp_pthread_mutex_lock(&q_mu);
    items++;
    sfp_pthread_cond_signal(&q_cv);
    sfp_pthread_mutex_unlock(&q_mu);
    sfp_usleep(100);
  }
  for (int i = 0; i < 10; i++)
    sfp_sem_wait(&sem); /* one post per item consumed */
  CHECK_EQ(consumed, 10);
  CHECK_EQ(sfp_pthread_rwlock_tryrdlock(&rw), EDEADLK); /* its own write lock */
  CHECK_EQ(sfp_pthread_rwlock_unlock(&rw), 0);
  for (int i = 0; i < 2; i++)
    CHECK_EQ(sfp_pthread_join(t[i], NULL), 0);
  CHECK_EQ(once_runs, 1);
  CHECK_EQ(dtor_runs, 2); /* each consumer's key value, at its exit */
  /* a timed wait on the monotonic clock ends at its deadline */
  pthread_condattr_t ca;
  pthread_cond_t cv;
  sfp_pthread_condattr_init(&ca);
  CHECK_EQ(sfp_pthread_condattr_setclock(&ca, CLOCK_MONOTONIC), 0);
  sfp_pthread_cond_init(&cv, &ca);
  struct timespec until;
  sfp_clock_gettime(CLOCK_MONOTONIC, &until);
  until.tv_nsec += 5000000;
  if (until.tv_nsec >= 1000000000)
    until.tv_sec++, until.tv_nsec -= 1000000000;
  int64_t t0 = mono();
  sfp_pthread_mutex_lock(&q_mu);
  timed_out = sfp_pthread_cond_timedwait(&cv, &q_mu, &until) == ETIMEDOUT;
  CHECK_EQ(sfp_pthread_mutex_trylock(&q_mu), EBUSY); /* it took the mutex back */
  sfp_pthread_mutex_unlock(&q_mu);
  waited_ns = mono() - t0;
  done_main = 1;
  return 0;
}
static const sf_program queue_prog = SIMPLE("queue", main_queue);

TEST(conditions_semaphores_rwlocks_once_and_keys_work_in_every_schedule) {
  for (uint64_t seed = 1; seed <= 10; seed++) {
    void *ctx;
    done_main = 0;
    sim_world *w = run(&queue_prog, seed, 500, &ctx);
    CHECK(!sim_failed(w));
    CHECK_EQ(done_main, 1);
    CHECK_EQ(timed_out, 1);
    CHECK(waited_ns >= 5000000);
    end(w, ctx);
  }
}

/* ---- a pipe between threads; exits ----------------------------------- */

static int pipe_fd[2], got_byte;

static void *reader(void *arg) {
  (void)arg;
  char c = 0;
  got_byte = sfp_read(pipe_fd[0], &c, 1) == 1 && c == 'x'; /* blocks until the write */
  return NULL;
}

static void *exits_all(void *arg) {
  (void)arg;
  sfp_usleep(1000);
  sfp_exit(0); /* from a thread: the whole process ends */
}

static int main_pipe(int argc, char **argv) {
  (void)argc, (void)argv;
  got_byte = 0;
  CHECK_EQ(sfp_pipe(pipe_fd), 0);
  pthread_t t;
  CHECK_EQ(sfp_pthread_create(&t, NULL, reader, NULL), 0);
  sfp_usleep(1000); /* the reader blocks meanwhile */
  CHECK_EQ(sfp_write(pipe_fd[1], "x", 1), 1);
  CHECK_EQ(sfp_pthread_join(t, NULL), 0);
  CHECK_EQ(sfp_pthread_create(&t, NULL, exits_all, NULL), 0);
  CHECK_EQ(sfp_pthread_detach(t), 0);
  done_main = 1;
  sfp_pthread_exit(NULL); /* main ends; the process goes on with the other thread */
}
static const sf_program pipe_prog = SIMPLE("pipe", main_pipe);

TEST(a_thread_blocked_on_a_pipe_wakes_at_another_threads_write_and_exit_ends_all) {
  void *ctx;
  done_main = 0;
  sim_world *w = run(&pipe_prog, 3, 100, &ctx);
  CHECK(!sim_failed(w));
  CHECK_EQ(done_main, 1);
  CHECK_EQ(got_byte, 1);
  CHECK_EQ(sf_program_observe(ctx, w, 0), 3u); /* exited */
  CHECK(sim_now(w) >= 2 * SIM_NS_PER_MS);
  end(w, ctx);
}

TEST_MAIN(T(a_lock_keeps_every_update_and_a_missing_one_loses_some_in_some_schedule),
          T(an_atomic_operation_is_a_switch_point_and_outside_a_node_only_itself),
          T(a_seed_is_one_schedule_every_time), T(a_lock_cycle_is_a_deadlock_that_names_each_wait),
          T(a_node_whose_every_thread_waits_for_another_is_a_deadlock),
          T(conditions_semaphores_rwlocks_once_and_keys_work_in_every_schedule),
          T(a_thread_blocked_on_a_pipe_wakes_at_another_threads_write_and_exit_ends_all))
