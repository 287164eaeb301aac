#include "testlib.h"

#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void *test_alloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  return p;
}

uint64_t test_rand(uint64_t *state) {
  return sim_mix64(*state += 0x9e3779b97f4a7c15ull);
}

int test_main(const test_case *cases, size_t n, int argc, char **argv) {
  if (argc > 1) {
    int rc = 0;
    for (int a = 1; a < argc; a++) {
      size_t i = 0;
      while (i < n && strcmp(cases[i].name, argv[a]) != 0)
        i++;
      if (i == n) {
        fprintf(stderr, "no test named %s\n", argv[a]);
        rc = 2;
        continue;
      }
      cases[i].fn();
      printf("ok %s\n", cases[i].name);
    }
    return rc;
  }
  size_t passed = 0, failed = 0;
  for (size_t i = 0; i < n; i++) {
    if (cases[i].helper)
      continue;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      cases[i].fn();
      exit(0);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      printf("FAIL %s\n", cases[i].name);
      failed++;
    } else {
      printf("ok   %s\n", cases[i].name);
      passed++;
    }
  }
  printf("%zu passed, %zu failed\n", passed, failed);
  return failed ? 1 : 0;
}

/* ---- recorder ---- */
static void rec_add(recorder *r, int kind, sim_world *w, int node, int peer, uint64_t val,
                    size_t len) {
  if (r->n >= REC_MAX)
    return;
  rec_event *e = &r->ev[r->n++];
  memset(e, 0, sizeof *e);
  e->kind = kind;
  e->node = node;
  e->peer = peer;
  e->time = sim_now(w);
  e->val = val;
  e->len = len;
}

static void r_boot(void *ctx, sim_world *w, int node, int restart) {
  rec_add(ctx, R_BOOT, w, node, -1, (uint64_t)restart, 0);
}

static uint64_t le64(const void *p, size_t len) {
  uint64_t v = 0;
  const uint8_t *b = p;
  for (size_t i = 0; i < 8 && i < len; i++)
    v |= (uint64_t)b[i] << (8 * i);
  return v;
}

static void r_recv(void *ctx, sim_world *w, int node, int from, const void *msg, size_t len) {
  recorder *r = ctx;
  rec_add(r, R_RECV, w, node, from, le64(msg, len), len);
  if (r->echo)
    sim_send(w, node, from, msg, len);
}

static void r_timer(void *ctx, sim_world *w, int node, uint64_t tag) {
  rec_add(ctx, R_TIMER, w, node, -1, tag, 0);
}

static void r_conn(void *ctx, sim_world *w, int node, sim_conn c, sim_conn_event ev,
                   const void *data, size_t len) {
  recorder *r = ctx;
  rec_add(r, R_CONN, w, node, sim_conn_peer(w, c, node), data ? le64(data, len) : 0, len);
  if (r->n > 0 && r->n <= REC_MAX) {
    r->ev[r->n - 1].cev = ev;
    r->ev[r->n - 1].conn = c;
  }
}

static void r_teardown(void *ctx, sim_world *w, int node, sim_teardown_why why) {
  rec_add(ctx, R_TEARDOWN, w, node, -1, (uint64_t)why, 0);
}

const sim_node_ops recorder_ops = {r_boot, r_recv, r_timer, r_conn, r_teardown};

sim_config recorder_config(recorder *r, int nodes, uint64_t seed) {
  sim_config c;
  sim_config_default(&c);
  c.nodes = nodes, c.seed = seed, c.ops = &recorder_ops, c.ctx = r;
  c.tiebreak = SIM_TIEBREAK_FIFO;
  c.net.latency_min_ns = c.net.latency_max_ns = SIM_NS_PER_MS;
  return c;
}

sim_config ops_config(const sim_node_ops *ops, int nodes) {
  sim_config c;
  sim_config_default(&c);
  c.nodes = nodes;
  c.ops = ops;
  return c;
}

recorder *recorder_new(void) {
  recorder *r = calloc(1, sizeof *r);
  if (!r) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  return r;
}

sim_world *recorder_world(const sim_config *cfg) {
  sim_world *w = sim_world_create(cfg);
  if (!w) {
    fprintf(stderr, "sim_world_create failed\n");
    exit(1);
  }
  sim_run(w, 0, 0);
  return w;
}

int rec_count(const recorder *r, int kind, int node) {
  int k = 0;
  for (int i = 0; i < r->n; i++)
    if (r->ev[i].kind == kind && (node < 0 || r->ev[i].node == node))
      k++;
  return k;
}

const rec_event *rec_next(const recorder *r, const rec_event *after, int kind, int node) {
  for (int i = after ? (int)(after - r->ev) + 1 : 0; i < r->n; i++)
    if (r->ev[i].kind == kind && (node < 0 || r->ev[i].node == node))
      return &r->ev[i];
  return NULL;
}

int send_u64(sim_world *w, int from, int to, uint64_t v) {
  uint8_t b[8];
  for (int i = 0; i < 8; i++)
    b[i] = (uint8_t)(v >> (8 * i));
  return sim_send(w, from, to, b, 8);
}
