/* The program runtime (harness/program/) without interposition, its
 * models called by their own names: two programs of different global sizes
 * run interleaved in one process, and each node finds its globals as it
 * left them; sleeps under clock drift; a program that stops after a disk
 * error; client nodes, their operations, history and probe. */
#include "testlib.h"
#include <simfuzz/simfuzz_program.h>

#include <simfuzz/linearize.h>
#include <simfuzz/simfuzz_client.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/timerfd.h>
#include <sys/types.h>

/* the runtime's models of the calls the programs below make */
int sfp_usleep(unsigned us);
int sfp_open(const char *path, int flags, ...);
ssize_t sfp_write(int fd, const void *buf, size_t len);
int sfp_fsync(int fd);
int sfp_close(int fd);
ssize_t sfp_read(int fd, void *buf, size_t len);
void sfp_exit(int status) __attribute__((noreturn));
int sfp_sf_client_next(sf_client_op *op);
size_t sfp_sf_client_invoke(uint32_t kind, uint64_t key, uint64_t arg, uint64_t arg2);
void sfp_sf_client_complete(size_t id, uint64_t out);
int sfp_timerfd_create(int clock, int flags);
int sfp_timerfd_settime(int fd, int flags, const struct itimerspec *nv, struct itimerspec *old);
int sfp_epoll_create1(int flags);
int sfp_epoll_ctl(int ep, int op, int fd, struct epoll_event *ev);
int sfp_epoll_wait(int ep, struct epoll_event *events, int max, int timeout_ms);
ssize_t sfp_read(int fd, void *buf, size_t len);
int sfp_printf(const char *fmt, ...);
int sfp_pipe(int fds[2]);
void *sfp_malloc(size_t n);
void sfp_abort(void) __attribute__((noreturn));
int sfp_clock_gettime(clockid_t clock, struct timespec *ts);
int sfp_select(int n, fd_set *rd, fd_set *wr, fd_set *ex, struct timeval *tv);

static unsigned char small_g[8];    /* program A's globals */
static unsigned char large_g[4096]; /* program B's */
static int a_ok = -1, b_ok = -1;    /* what their last checks saw */

static int main_a(int argc, char **argv) {
  (void)argc, (void)argv;
  small_g[7] = 7;
  for (;;) {
    sfp_usleep(1000);
    a_ok = small_g[7] == 7;
  }
  return 0; /* (never: for gcc's -Wreturn-type) */
}

static int main_b(int argc, char **argv) {
  (void)argc, (void)argv;
  large_g[4000] = 42;
  for (;;) {
    sfp_usleep(1000);
    b_ok = large_g[4000] == 42;
  }
  return 0; /* (never: for gcc's -Wreturn-type) */
}

static const char *const no_args[] = {NULL};
/* A program with no globals section of its own, no arguments, no client. */
#define SIMPLE(name, main_fn)                                                                      \
  { name, main_fn, NULL, NULL, no_args, 0, NULL, 0, NULL, 0, 0, NULL, 0 }

static const sf_program prog_a = {
    "a", main_a, small_g, small_g + sizeof small_g, no_args, 0, NULL, 0, NULL, 0, 0, NULL, 0};
static const sf_program prog_b = {
    "b", main_b, large_g, large_g + sizeof large_g, no_args, 0, NULL, 0, NULL, 0, 0, NULL, 0};

TEST(two_programs_interleaved_keep_their_globals) {
  void *ca = sf_program_create(&prog_a, 1), *cb = sf_program_create(&prog_b, 1);
  CHECK(ca && cb);
  sim_config c = ops_config(&sf_program_ops, 1);
  c.ctx = ca;
  sim_world *wa = sim_world_create(&c);
  c.ctx = cb;
  sim_world *wb = sim_world_create(&c);
  CHECK(wa && wb);
  for (int i = 0; i < 6; i++) { /* boots, then wake-ups, one world after the other */
    CHECK_EQ(sim_step(wa), 1);
    CHECK_EQ(sim_step(wb), 1);
  }
  CHECK_EQ(a_ok, 1);
  CHECK_EQ(b_ok, 1);
  sim_world_destroy(wa);
  sim_world_destroy(wb);
  sf_program_destroy(ca);
  sf_program_destroy(cb);
}

/* A world of `nodes` nodes running program p on `servers` of them (its
 * clients on the rest), booted, with its context in *ctx. */
static sim_world *world_of(const sf_program *p, int servers, int nodes, void **ctx) {
  *ctx = sf_program_create(p, servers);
  CHECK(*ctx);
  sim_config c = ops_config(&sf_program_ops, nodes);
  c.ctx = *ctx;
  sim_world *w = sim_world_create(&c);
  CHECK(w);
  for (int i = 0; i < nodes; i++)
    CHECK_EQ(sim_step(w), 1); /* the boots */
  return w;
}

static void world_end(sim_world *w, void *ctx) {
  sim_world_destroy(w);
  sf_program_destroy(ctx);
}

/* A program linked twice (simfuzz_add_program's copies): each copy's code
 * is bound to its own globals. */
static unsigned char copy_g[2][64] = {{5}, {5}};
static int copy_ok[2] = {-1, -1}, copy_boots[2];

static int copy_main(int j) {
  unsigned char *g = copy_g[j];
  copy_ok[j] = g[0] == 5 && g[1] == 0; /* the image's values at every boot */
  copy_boots[j]++;
  g[1] = (unsigned char)(10 + j);
  for (;;) {
    sfp_usleep(1000);
    copy_ok[j] &= g[1] == 10 + j;
  }
  return 0; /* (never: for gcc's -Wreturn-type) */
}
static int copy_main0(int argc, char **argv) {
  (void)argc, (void)argv;
  return copy_main(0);
}
static int copy_main1(int argc, char **argv) {
  (void)argc, (void)argv;
  return copy_main(1);
}

static const sf_program_copy two_copies[] = {{copy_main0, copy_g[0], copy_g[0] + 64},
                                             {copy_main1, copy_g[1], copy_g[1] + 64}};
static const sf_program copied = {"copied", copy_main0, copy_g[0], copy_g[0] + 64, no_args,
                                  0,        NULL,       0,         two_copies,     2,
                                  0,        NULL,       0};

/* Node k runs copy k on its own globals, with nothing copied when the
 * nodes take turns, and a restart loads the image into its copy. */
TEST(nodes_on_copies_of_their_own_keep_their_globals) {
  void *ctx;
  sim_world *w = world_of(&copied, 2, 2, &ctx);
  for (int i = 0; i < 20; i++)
    CHECK_EQ(sim_step(w), 1);
  CHECK_EQ(copy_ok[0], 1);
  CHECK_EQ(copy_ok[1], 1);
  CHECK_EQ(copy_g[1][1], 11); /* live in its section while node 0 runs too */
  CHECK_EQ(sim_node_crash(w, 1), 0);
  CHECK_EQ(sim_node_restart(w, 1), 0);
  for (int i = 0; i < 20; i++)
    CHECK_EQ(sim_step(w), 1);
  CHECK_EQ(copy_boots[1], 2);
  CHECK_EQ(copy_ok[1], 1); /* the restart saw the image's values */
  world_end(w, ctx);
}

/* A program of two versions (simfuzz_add_program's VERSIONS), each linked
 * twice: a node boots as the version the world names, on that version's
 * copy and image, and an upgrade (its process stopped and restarted as
 * the other version) finds the files it left, unsynced ones too. */
static unsigned char ver_g[2][2][32] = {{{7}, {7}}, {{9}, {9}}}; /* [version][copy] */
static int ver_booted[2] = {-1, -1}, ver_image_ok[2], ver_read_n[2];
static char ver_read[2][16];

static int ver_main(int v, int j) {
  unsigned char *g = ver_g[v][j];
  ver_booted[j] = v;
  ver_image_ok[j] = g[0] == (v ? 9 : 7) && g[1] == 0;
  g[1] = 1;
  if (v == 0) {
    int fd = sfp_open("f", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0 && sfp_write(fd, "left by v0", 10) == 10); /* never synced */
    sfp_close(fd);
  } else {
    int fd = sfp_open("f", O_RDONLY, 0);
    ver_read_n[j] = fd < 0 ? -1 : (int)sfp_read(fd, ver_read[j], sizeof ver_read[j] - 1);
  }
  for (;;)
    sfp_usleep(1000);
  return 0; /* (never: for gcc's -Wreturn-type) */
}
#define VER_MAIN(v, j)                                                                             \
  static int ver_main_##v##_##j(int argc, char **argv) {                                           \
    (void)argc, (void)argv;                                                                        \
    return ver_main(v, j);                                                                         \
  }
VER_MAIN(0, 0)
VER_MAIN(0, 1)
VER_MAIN(1, 0)
VER_MAIN(1, 1)
static const sf_program_copy v0_copies[] = {{ver_main_0_0, ver_g[0][0], ver_g[0][0] + 32},
                                            {ver_main_0_1, ver_g[0][1], ver_g[0][1] + 32}};
static const sf_program_copy v1_copies[] = {{ver_main_1_0, ver_g[1][0], ver_g[1][0] + 32},
                                            {ver_main_1_1, ver_g[1][1], ver_g[1][1] + 32}};
static const sf_program version_1 = {
    "v1", ver_main_1_0, ver_g[1][0], ver_g[1][0] + 32, no_args, 0, NULL, 0, v1_copies, 2, 0, NULL,
    0};
static const sf_program *const other_versions[] = {&version_1};
static const sf_program versioned = {"v0",
                                     ver_main_0_0,
                                     ver_g[0][0],
                                     ver_g[0][0] + 32,
                                     no_args,
                                     0,
                                     NULL,
                                     0,
                                     v0_copies,
                                     2,
                                     0,
                                     other_versions,
                                     1};

TEST(a_node_boots_as_its_version_and_an_upgrade_finds_its_files) {
  void *ctx;
  sim_world *w = world_of(&versioned, 2, 2, &ctx);
  for (int i = 0; i < 10; i++)
    CHECK_EQ(sim_step(w), 1);
  CHECK(ver_booted[0] == 0 && ver_booted[1] == 0);
  CHECK(ver_image_ok[0] && ver_image_ok[1]);
  CHECK_EQ(sim_node_set_version(w, 1, 1), 0); /* the runner's upgrade step */
  CHECK_EQ(sim_node_stop(w, 1), 0);
  CHECK_EQ(sim_node_restart(w, 1), 0);
  for (int i = 0; i < 10; i++)
    CHECK_EQ(sim_step(w), 1);
  CHECK(ver_booted[0] == 0 && ver_booted[1] == 1);
  CHECK(ver_image_ok[1]); /* version 1's image, on version 1's copy 1 */
  CHECK_EQ(ver_g[1][1][1], 1);
  CHECK_EQ(ver_g[1][0][1], 0); /* node 0's copy of version 1: untouched */
  CHECK_EQ(ver_read_n[1], 10);
  CHECK(memcmp(ver_read[1], "left by v0", 10) == 0); /* the page cache outlived the process */
  CHECK_EQ(sim_node_crash(w, 1), 0);                 /* a crash keeps the version installed */
  CHECK_EQ(sim_node_restart(w, 1), 0);
  ver_booted[1] = -1;
  for (int i = 0; i < 10; i++)
    CHECK_EQ(sim_step(w), 1);
  CHECK_EQ(ver_booted[1], 1);
  world_end(w, ctx);
}

static int naps;

static int main_napper(int argc, char **argv) {
  (void)argc, (void)argv;
  for (;;) {
    sfp_usleep(1000);
    naps++;
  }
  return 0; /* (never: for gcc's -Wreturn-type) */
}

static const sf_program napper = SIMPLE("napper", main_napper);

/* Under drift a local wait of d ns is a timer of d * 1e6 / (1e6 + drift)
 * true ns, rounded down; the clock can then read a nanosecond short of the
 * wait's end, and a timer for that nanosecond is one of no true time. The
 * old runtime waited again at the same moment, for ever. */
TEST(a_sleep_under_drift_moves_time_on) {
  void *ctx;
  sim_world *w = world_of(&napper, 1, 1, &ctx);
  CHECK_EQ(sim_clock_set_drift(w, 0, 37123), 0);
  naps = 0;
  for (int i = 0; i < 3000 && sim_step(w) == 1; i++)
    ;
  CHECK(naps >= 1000);                      /* a nap per millisecond or so */
  CHECK(sim_now(w) >= 900 * SIM_NS_PER_MS); /* time went on */
  world_end(w, ctx);
}

static int main_stopper(int argc, char **argv) {
  (void)argc, (void)argv;
  int fd = sfp_open("log", O_WRONLY | O_CREAT, 0644);
  for (;;) {
    if (sfp_write(fd, "x", 1) != 1 || sfp_fsync(fd) != 0)
      sfp_exit(1); /* as a careful server does at EIO */
    sfp_usleep(1000);
  }
  return 0; /* (never: for gcc's -Wreturn-type) */
}

static const sf_program stopper = SIMPLE("stopper", main_stopper);

/* A program that exits with an error status after the disk failed it is a
 * fail-stop: the node goes down as at a crash, and the run goes on. */
TEST(an_exit_after_a_disk_error_is_a_crash_not_a_failure) {
  void *ctx;
  sim_world *w = world_of(&stopper, 1, 1, &ctx); /* its boot: one write and fsync */
  CHECK_EQ(sim_disk_fail_nth(w, 0, SIM_DISK_SYNC, 3), 0);
  for (int i = 0; i < 20 && sim_node_up(w, 0); i++)
    sim_step(w);
  CHECK(!sim_node_up(w, 0));
  CHECK(!sim_failed(w));
  CHECK_EQ(sim_get_stats(w)->crashes, 1);
  CHECK_EQ(sim_node_restart(w, 0), 0); /* and it can come back */
  CHECK_EQ(sim_step(w), 1);
  CHECK(sim_node_up(w, 0));
  world_end(w, ctx);
}

/* Two files: b synced with "old", then overwritten with "new" and not
 * synced; a written and synced. After a crash (unsynced sectors lost), b
 * holds "old": an fsync makes its own file durable, no other. */
off_t sfp_lseek(int fd, off_t off, int whence);
static char seen_b[4];
static int main_twofiles(int argc, char **argv) {
  (void)argc, (void)argv;
  int b = sfp_open("b", O_RDWR | O_CREAT, 0644), d = sfp_open(".", O_RDONLY | O_DIRECTORY);
  char buf[4] = {0};
  if (sfp_read(b, buf, 3) == 3) { /* a restart: what survived */
    memcpy(seen_b, buf, 3);
    for (;;)
      sfp_usleep(1000000);
  }
  CHECK(b >= 0 && d >= 0 && sfp_write(b, "old", 3) == 3 && sfp_fsync(b) == 0);
  CHECK_EQ(sfp_fsync(d), 0); /* b's entry */
  CHECK(sfp_lseek(b, 0, SEEK_SET) == 0 && sfp_write(b, "new", 3) == 3);
  int a = sfp_open("a", O_WRONLY | O_CREAT, 0644);
  CHECK(a >= 0 && sfp_write(a, "aaa", 3) == 3 && sfp_fsync(a) == 0);
  for (;;)
    sfp_usleep(1000000);
  return 0; /* (never: for gcc's -Wreturn-type) */
}
static const sf_program twofiles = SIMPLE("twofiles", main_twofiles);

TEST(an_fsync_makes_its_own_file_durable_and_no_other) {
  void *ctx;
  sim_world *w = world_of(&twofiles, 1, 1, &ctx); /* its boot: all of the above */
  sim_disk_params p = {512, 0, 0, 0, 0, 0};       /* unsynced sectors: all lost */
  CHECK_EQ(sim_disk_set_params(w, 0, &p), 0);
  char got[8] = {0}; /* what an end check reads (sf_program_read_file): now */
  CHECK_EQ(sf_program_read_file(ctx, w, 0, "a", got, sizeof got), 3);
  CHECK(memcmp(got, "aaa", 3) == 0);
  CHECK_EQ(sf_program_read_file(ctx, w, 0, "./b", got, 2), 2);
  CHECK(memcmp(got, "ne", 2) == 0);
  CHECK_EQ(sf_program_read_file(ctx, w, 0, "none", got, sizeof got), -ENOENT);
  CHECK_EQ(sf_program_read_file(ctx, w, 1, "a", got, sizeof got), -EINVAL);
  CHECK_EQ(sim_node_crash(w, 0), 0);
  CHECK_EQ(sf_program_read_file(ctx, w, 0, "b", got, sizeof got), 3); /* what survived */
  CHECK(memcmp(got, "old", 3) == 0);
  CHECK_EQ(sim_node_restart(w, 0), 0);
  memset(seen_b, 0, sizeof seen_b);
  CHECK_EQ(sim_step(w), 1);
  CHECK(memcmp(seen_b, "old", 3) == 0);
  world_end(w, ctx);
}

static int ticks;
static int64_t tick_gap_max;

/* A periodic timerfd of 3 ms under epoll, with no timeout of its own. */
static int main_ticker(int argc, char **argv) {
  (void)argc, (void)argv;
  int t = sfp_timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK), ep = sfp_epoll_create1(0);
  struct itimerspec every = {{0, 3000000}, {0, 3000000}};
  struct epoll_event ev = {.events = EPOLLIN, .data.fd = t};
  CHECK(t >= 0 && ep >= 0 && sfp_timerfd_settime(t, 0, &every, NULL) == 0);
  CHECK_EQ(sfp_epoll_ctl(ep, EPOLL_CTL_ADD, t, &ev), 0);
  int64_t last = sim_clock_mono(sim_current(NULL), 0);
  for (;;) {
    CHECK_EQ(sfp_epoll_wait(ep, &ev, 1, -1), 1);
    uint64_t n = 0;
    CHECK_EQ(sfp_read(t, &n, sizeof n), (ssize_t)sizeof n);
    CHECK_EQ(n, 1);
    int64_t now = sim_clock_mono(sim_current(NULL), 0);
    if (now - last > tick_gap_max)
      tick_gap_max = now - last;
    last = now;
    ticks++;
  }
  return 0; /* (never: for gcc's -Wreturn-type) */
}

static const sf_program ticker = SIMPLE("ticker", main_ticker);

/* A blocked call wakes at a timerfd's expiry: epoll with no timeout sees
 * each of a periodic timer's expirations, 3 ms apart. */
TEST(a_timerfd_wakes_a_blocked_epoll_at_each_expiry) {
  void *ctx;
  sim_world *w = world_of(&ticker, 1, 1, &ctx);
  ticks = 0;
  tick_gap_max = 0;
  for (int i = 0; i < 400 && sim_step(w) == 1; i++)
    ;
  CHECK(ticks >= 300);
  CHECK(tick_gap_max <= 3001000); /* each expiry, to the wait's 1 us */
  world_end(w, ctx);
}

/* Lines a node printed: an OUTPUT record each, whole or cut at
 * SIM_OUTPUT_MAX, a line unfinished at exit too; then at most
 * SFP_OUT_LINES (256) per node and run, and one that says so. */
static int main_talker(int argc, char **argv) {
  (void)argc, (void)argv;
  char big[301];
  memset(big, 'b', 300);
  big[300] = 0;
  sfp_printf("hello from %d\n", 7);
  sfp_printf("%s\n", big); /* 256 bytes, then 44 */
  sfp_printf("a \"quoted\"\tline\n");
  for (int i = 0; i < 300; i++)
    sfp_printf("line %d\n", i);
  sfp_printf("unfinished");
  sfp_exit(0);
  return 0; /* (never: for gcc's -Wreturn-type) */
}
static const sf_program talker = SIMPLE("talker", main_talker);

static char out_text[400][SIM_OUTPUT_MAX + 1];
static int n_out;
static char out_line[3][SIM_OUTPUT_MAX * 4 + 128];

static void on_output(void *ctx, const sim_world *w, const sim_trace_rec *r, const void *payload,
                      size_t len) {
  (void)ctx;
  if (r->kind != SIM_EV_OUTPUT || n_out == 400)
    return;
  CHECK(len <= SIM_OUTPUT_MAX && r->node == 0 && r->len == len);
  memcpy(out_text[n_out], payload, len);
  out_text[n_out][len] = 0;
  if (n_out < 3)
    sim_trace_format_payload(w, r, payload, len, out_line[n_out], sizeof out_line[0]);
  n_out++;
}

TEST(a_programs_output_lines_are_in_the_trace_and_bounded) {
  void *ctx = sf_program_create(&talker, 1);
  CHECK(ctx);
  sim_config c = ops_config(&sf_program_ops, 1);
  c.ctx = ctx;
  c.trace = on_output;
  n_out = 0;
  sim_world *w = sim_world_create(&c);
  CHECK(w);
  CHECK_EQ(sim_step(w), 1); /* its one life */
  CHECK(!sim_failed(w));
  CHECK_EQ(n_out, 3 + 1 + 252 + 1); /* 256 lines, then the cut's */
  CHECK(strcmp(out_text[0], "hello from 7") == 0);
  CHECK_EQ(strlen(out_text[1]), SIM_OUTPUT_MAX);
  CHECK_EQ(strlen(out_text[2]), 44);
  CHECK(strcmp(out_text[3], "a \"quoted\"\tline") == 0);
  CHECK(strcmp(out_text[255], "line 251") == 0);
  CHECK(strstr(out_text[256], "more output") != NULL);
  CHECK(strstr(out_line[0], "n0  output       \"hello from 7\"") != NULL);
  /* the ring keeps 24 bytes: the report's line shows them, and that it was cut */
  sim_trace_rec last;
  CHECK_EQ(sim_trace_last(w, &last, 1), 1);
  char line[256];
  sim_trace_format(w, &last, line, sizeof line);
  CHECK(last.kind == SIM_EV_OUTPUT && strstr(line, "\"(more output: see the no\"...") != NULL);
  sim_world_destroy(w);
  sf_program_destroy(ctx);
}

static int main_idle(int argc, char **argv) {
  (void)argc, (void)argv;
  for (;;)
    sfp_usleep(100000);
  return 0; /* (never: for gcc's -Wreturn-type) */
}

static uint32_t client_saw[8];
static int nsaw;

/* Each operation a PUT of its value, answered at once. */
static int main_client(int argc, char **argv) {
  CHECK_EQ(argc, 3); /* client, its number, the servers' count */
  CHECK(argv[2][0] == '2');
  for (;;) {
    sf_client_op op;
    sfp_sf_client_next(&op);
    if (nsaw < 8)
      client_saw[nsaw++] = op.probe ? 1000 + (uint32_t)(argv[1][0] - '0') : op.seq;
    size_t id = sfp_sf_client_invoke(SF_KV_PUT, op.key, op.value + 1, 0);
    sfp_sf_client_complete(id, 0);
  }
  return 0; /* (never: for gcc's -Wreturn-type) */
}

static const char *const client_args[] = {"client", "{node}", "{nodes}", NULL};
static const sf_program client_prog = {"c", main_client, NULL, NULL, client_args, 3, NULL,
                                       0,   NULL,        0,    0,    NULL,        0};
static const sf_program served = {"s", main_idle, NULL, NULL, no_args, 0, &client_prog,
                                  2,   NULL,      0,    0,    NULL,    0};

/* Two servers and two clients: operation k goes to client k % 2, each in
 * its turn; the probe, when liveness is first asked, to both; the history
 * is the clients' and is checked. */
TEST(client_nodes_take_operations_and_record_a_history) {
  void *ctx;
  sim_world *w = world_of(&served, 2, 4, &ctx); /* the servers, then the clients */
  nsaw = 0;
  for (uint32_t k = 0; k < 3; k++) {
    sf_op op = {(int)k, 0, k, 10 * k, k};
    sf_program_workload(ctx, w, &op);
  }
  for (int i = 0; i < 6; i++)
    sim_step(w);
  CHECK_EQ(nsaw, 3);
  CHECK_EQ(client_saw[0] + client_saw[1] + client_saw[2], 0 + 1 + 2);
  CHECK_EQ(sf_program_live(ctx, w), 0); /* the probes go out */
  for (int i = 0; i < 6; i++)
    sim_step(w);
  CHECK_EQ(nsaw, 5);
  CHECK_EQ(client_saw[3] + client_saw[4], 1000 + 1001);
  CHECK_EQ(sf_program_live(ctx, w), 1);
  for (const sf_check *k = sf_program_end_checks; k->fn; k++)
    k->fn(ctx, w);
  CHECK(!sim_failed(w));
  world_end(w, ctx);
}

/* select() with sets sized for its first argument, as libevent's select
 * backend allocates them: it writes only the words that hold descriptors
 * below n (it used to clear whole fd_sets: a heap overflow, which the
 * sanitizer build reports and which hung a release build's run). */
static int select_ok = -1;

static int main_selector(int argc, char **argv) {
  (void)argc, (void)argv;
  int p[2];
  select_ok = 0;
  if (sfp_pipe(p) != 0 || sfp_write(p[1], "x", 1) != 1)
    return 1;
  unsigned long *rd = malloc(sizeof *rd), *wr = malloc(sizeof *wr); /* one word: fds 0..63 */
  if (!rd || !wr)
    return 1;
  *rd = 1ul << p[0]; /* (set by hand: FD_SET would reach past the word) */
  *wr = 1ul << p[1];
  struct timeval now = {0, 0};
  int r = sfp_select(p[1] + 1, (fd_set *)(void *)rd, (fd_set *)(void *)wr, NULL, &now);
  select_ok = r == 2 && *rd == 1ul << p[0] && *wr == 1ul << p[1];
  free(rd);
  free(wr);
  for (;;)
    sfp_usleep(1000);
  return 0; /* (never: for gcc's -Wreturn-type) */
}

static const sf_program selector = SIMPLE("selector", main_selector);

TEST(select_writes_only_the_words_of_its_first_argument) {
  void *ctx;
  sim_world *w = world_of(&selector, 1, 1, &ctx);
  CHECK_EQ(select_ok, 1);
  world_end(w, ctx);
}

/* A program that aborts when an allocation fails (libuv does, glib's
 * g_malloc does) is failing stop, as one that exits with an error status
 * after a disk error: a crash, not a failure of the run. An abort with no
 * failed call before it is still a failure. */
static int main_oom_aborter(int argc, char **argv) {
  (void)argc, (void)argv;
  for (;;) {
    if (!sfp_malloc(64))
      sfp_abort();
    sfp_usleep(1000);
  }
  return 0; /* (never: for gcc's -Wreturn-type) */
}
static const sf_program oom_aborter = SIMPLE("oom_aborter", main_oom_aborter);

TEST(an_abort_after_a_failed_allocation_is_a_crash_not_a_failure) {
  void *ctx;
  sim_world *w = world_of(&oom_aborter, 1, 1, &ctx);
  CHECK_EQ(sim_faultpoint_nth(w, SIM_FAULTPOINT_ALLOC, 3), 0);
  for (int i = 0; i < 20 && sim_node_up(w, 0); i++)
    sim_step(w);
  CHECK(!sim_node_up(w, 0));
  CHECK(!sim_failed(w));
  CHECK_EQ(sim_get_stats(w)->crashes, 1);
  world_end(w, ctx);
}

/* An fsync on a stalled disk returns when the stall ends. */
static int64_t synced_at = -1;

static int main_staller(int argc, char **argv) {
  (void)argc, (void)argv;
  int fd = sfp_open("f", O_WRONLY | O_CREAT, 0644);
  sfp_write(fd, "x", 1);
  sfp_usleep(1000); /* the test stalls the disk meanwhile */
  if (sfp_fsync(fd) == 0) {
    struct timespec t;
    sfp_clock_gettime(CLOCK_MONOTONIC, &t);
    synced_at = (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
  }
  for (;;)
    sfp_usleep(1000000);
  return 0; /* (never: for gcc's -Wreturn-type) */
}
static const sf_program staller = SIMPLE("staller", main_staller);

TEST(an_fsync_on_a_stalled_disk_returns_when_the_stall_ends) {
  void *ctx;
  synced_at = -1;
  sim_world *w = world_of(&staller, 1, 1, &ctx);
  CHECK_EQ(sim_disk_stall(w, 0, 50 * SIM_NS_PER_MS), 0);
  for (int i = 0; i < 20 && synced_at < 0; i++)
    sim_step(w);
  CHECK(synced_at >= 1000000000 + 50 * (int64_t)SIM_NS_PER_MS); /* (the clock starts at 1 s) */
  world_end(w, ctx);
}

TEST_MAIN(T(two_programs_interleaved_keep_their_globals),
          T(select_writes_only_the_words_of_its_first_argument),
          T(an_abort_after_a_failed_allocation_is_a_crash_not_a_failure),
          T(an_fsync_on_a_stalled_disk_returns_when_the_stall_ends),
          T(a_programs_output_lines_are_in_the_trace_and_bounded),
          T(an_fsync_makes_its_own_file_durable_and_no_other), T(a_sleep_under_drift_moves_time_on),
          T(an_exit_after_a_disk_error_is_a_crash_not_a_failure),
          T(client_nodes_take_operations_and_record_a_history),
          T(a_timerfd_wakes_a_blocked_epoll_at_each_expiry),
          T(nodes_on_copies_of_their_own_keep_their_globals),
          T(a_node_boots_as_its_version_and_an_upgrade_finds_its_files))
