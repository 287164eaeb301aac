/* Simulator benchmark: events/s on a message-heavy workload at 3, 16 and 64
 * nodes, without and with network faults, beside a bare min-heap event
 * loop doing the same pattern, measured interleaved in one run; world
 * create+destroy time. Prints medians of several repetitions.
 *
 * Usage: bench_sim [reps] [events]
 *
 * Workload: every node keeps `inflight` 32-byte datagrams in circulation;
 * on each receive it sends one to a peer drawn from its random stream. Links
 * have 1-10 ms uniform latency; choice tie-break; trace on. With faults: 2 % loss,
 * 1 % duplication and reordering, 0.1 % corruption, and a datagram per node
 * every 10 ms to replace the lost ones.
 * Bare loop: a binary min-heap of (time, sequence, node) entries; each pop
 * pushes one entry at time + 1..10 ms for a pseudo-random node — the cost
 * floor of any discrete-event loop. */
#define _POSIX_C_SOURCE 200809L
#include <simfuzz/sim.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- simulated workload ---- */

enum { INFLIGHT_PER_NODE = 4, MSG = 32 };

static void pick_and_send(sim_world *w, int node, const uint8_t *msg) {
  int n = sim_nodes(w);
  int to = (int)(sim_node_random(w, node) % (uint64_t)(n - 1));
  if (to >= node)
    to++;
  sim_send(w, node, to, msg, MSG);
}

static void b_boot(void *ctx, sim_world *w, int node, int restart) {
  (void)ctx;
  (void)restart;
  uint8_t msg[MSG] = {0};
  for (int i = 0; i < INFLIGHT_PER_NODE; i++) {
    msg[0] = (uint8_t)i;
    pick_and_send(w, node, msg);
  }
}

static void b_recv(void *ctx, sim_world *w, int node, int from, const void *m, size_t len) {
  (void)ctx;
  (void)from;
  (void)len;
  pick_and_send(w, node, m);
}

static const sim_node_ops bench_ops = {b_boot, b_recv, NULL, NULL, NULL};

/* With faults: lost datagrams are replaced by one a node sends every
 * 10 ms, so the number in flight settles where loss meets injection. */
enum { TOPUP_NS = 10 * 1000000 };

static void f_boot(void *ctx, sim_world *w, int node, int restart) {
  b_boot(ctx, w, node, restart);
  sim_timer_start(w, node, TOPUP_NS, 0);
}

static void f_timer(void *ctx, sim_world *w, int node, uint64_t tag) {
  (void)ctx;
  uint8_t msg[MSG] = {0};
  pick_and_send(w, node, msg);
  sim_timer_start(w, node, TOPUP_NS, tag);
}

static const sim_node_ops fault_ops = {f_boot, b_recv, f_timer, NULL, NULL};

static double sim_rate(int nodes, int faults, uint64_t events, uint64_t *hash) {
  sim_config c;
  sim_config_default(&c);
  c.nodes = nodes;
  c.seed = 42;
  c.ops = &bench_ops;
  if (faults) { /* 2 % loss, 1 % duplication, 1 % reordering, 0.1 % corruption */
    c.ops = &fault_ops;
    c.net.loss_ppm = 20000;
    c.net.dup_ppm = 10000;
    c.net.reorder_ppm = 10000;
    c.net.corrupt_ppm = 1000;
  }
  c.budgets.max_events = events;
  sim_world *w = sim_world_create(&c);
  double t0 = now_s();
  sim_run(w, UINT64_MAX, 0);
  double dt = now_s() - t0;
  uint64_t done = sim_get_stats(w)->events;
  *hash = sim_trace_hash(w);
  sim_world_destroy(w);
  return (double)done / dt;
}

/* ---- bare min-heap loop ---- */

typedef struct {
  uint64_t time, seq;
  uint32_t node;
} bent;

static int bless(const bent *a, const bent *b) {
  return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static double bare_rate(int nodes, uint64_t events, uint64_t *sink) {
  uint32_t cap = (uint32_t)nodes * INFLIGHT_PER_NODE + 1;
  bent *h = malloc(cap * sizeof *h);
  uint32_t n = 0;
  uint64_t seq = 0, x = 42, acc = 0;
  for (int i = 0; i < nodes * INFLIGHT_PER_NODE; i++) {
    bent e = {0, seq++, (uint32_t)(i % nodes)};
    uint32_t k = n++;
    while (k && bless(&e, &h[(k - 1) / 2])) {
      h[k] = h[(k - 1) / 2];
      k = (k - 1) / 2;
    }
    h[k] = e;
  }
  double t0 = now_s();
  for (uint64_t ev = 0; ev < events; ev++) {
    bent top = h[0];
    acc += top.node;
    /* splitmix64 step: latency and destination */
    x += 0x9e3779b97f4a7c15ull;
    uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    bent e = {top.time + 1000000 + z % 9000001, seq++, (uint32_t)((z >> 32) % (uint64_t)nodes)};
    /* replace the root and sift down */
    uint32_t k = 0;
    for (;;) {
      uint32_t c = 2 * k + 1;
      if (c >= n)
        break;
      if (c + 1 < n && bless(&h[c + 1], &h[c]))
        c++;
      if (!bless(&h[c], &e))
        break;
      h[k] = h[c];
      k = c;
    }
    h[k] = e;
  }
  double dt = now_s() - t0;
  free(h);
  *sink += acc;
  return (double)events / dt;
}

/* ---- create + destroy ---- */

static double create_destroy_us(int nodes, int iters, int boot) {
  sim_config c;
  sim_config_default(&c);
  c.nodes = nodes;
  c.ops = &bench_ops;
  double t0 = now_s();
  for (int i = 0; i < iters; i++) {
    c.seed = (uint64_t)i;
    sim_world *w = sim_world_create(&c);
    if (boot)
      sim_run(w, 0, 0);
    sim_world_destroy(w);
  }
  return (now_s() - t0) / iters * 1e6;
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 5;
  uint64_t events = argc > 2 ? strtoull(argv[2], NULL, 10) : 4000000;
  if (reps < 1 || reps > 99)
    reps = 5;
  int sizes[] = {3, 16, 64};
  uint64_t sink = 0;
  printf("simfuzz bench_sim: %d repetitions, %" PRIu64 " events each, medians\n", reps, events);
  printf("%-6s %-7s %16s %16s %8s %16s\n", "nodes", "faults", "sim events/s", "bare events/s",
         "ratio", "trace hash");
  for (int s = 0; s < 6; s++) {
    int faults = s >= 3, nodes = sizes[s % 3];
    double sr[99], br[99], ratio[99];
    uint64_t hash = 0, h;
    for (int r = 0; r < reps; r++) {
      sr[r] = sim_rate(nodes, faults, events, &h);
      if (r && h != hash) {
        fprintf(stderr, "nondeterministic: hash changed between repetitions\n");
        return 1;
      }
      hash = h;
      br[r] = bare_rate(nodes, events, &sink);
      ratio[r] = sr[r] / br[r];
    }
    printf("%-6d %-7s %16.0f %16.0f %7.1f%% %016" PRIx64 "\n", nodes, faults ? "yes" : "no",
           median(sr, reps), median(br, reps), 100 * median(ratio, reps), hash);
  }
  double cd[99], cdb[99];
  for (int r = 0; r < reps; r++) {
    cd[r] = create_destroy_us(5, 200000, 0);
    cdb[r] = create_destroy_us(5, 200000, 1);
  }
  printf("create+destroy, 5 nodes: %.2f us; with boot events run: %.2f us\n", median(cd, reps),
         median(cdb, reps));
  if (sink == 42)
    printf(" \n");
  return 0;
}
