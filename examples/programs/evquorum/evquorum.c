/* evquorum: a replicated register store on libevent, an ordinary Linux
 * program and simfuzz's example of a program built on an event-loop
 * library linked unmodified (docs/programs.md).
 *
 *   evquorum K HOST:PORT...   (node K of the listed nodes; its data
 *                              directory is the working directory)
 *
 * Every node serves clients and its peers on its one port, line by line.
 * Any node coordinates a client's request, ABD-style (Attiya, Bar-Noy,
 * Dolev), over a majority of the nodes, itself included:
 *   PUT k v  ask a majority for k's timestamp; store (highest + 1, node, v)
 *            at a majority; answer OK
 *   GET k    ask a majority for k's (timestamp, value); store the highest
 *            back at a majority (so that no later read returns an older
 *            value); answer VAL v
 * A node stores a register only if its timestamp is higher than what it
 * has, and fsyncs its file ("regs") before it acknowledges. Peers' lines:
 *   Q k id -> QR id ts node v      S k ts node v id -> SA id
 *
 * Planted bug: EVQ_BUG_NO_WRITEBACK, a GET answers from the query phase
 * without storing back: a write that reached only some nodes can be read,
 * then not read by a later GET (a new-old inversion). */
#define _GNU_SOURCE
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define KEYS 4
#define MAXN 5
#define OPS 32

typedef struct reg {
  uint64_t ts;
  unsigned node;
  unsigned long value;
} reg;

typedef struct op {
  int used, get, phase; /* phase 1: query; 2: store */
  int age;              /* ticks of the sweeper it has lived */
  unsigned long id;
  unsigned key;
  unsigned long value; /* a PUT's */
  struct bufferevent *client;
  unsigned answered; /* a bit per node */
  int count;
  reg best;
} op;

static int me, n;
static struct sockaddr_in addr[MAXN];
static struct event_base *base;
static struct bufferevent *peer[MAXN]; /* our connection to each peer, or NULL */
static reg regs[KEYS];
static op ops[OPS];
static unsigned long next_id;

static void die(const char *what) {
  perror(what);
  exit(1);
}

static int newer(const reg *a, const reg *b) {
  return a->ts > b->ts || (a->ts == b->ts && a->node > b->node);
}

static void persist(void) {
  int fd = open("regs.tmp", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || write(fd, regs, sizeof regs) != (ssize_t)sizeof regs || fsync(fd) != 0)
    die("write regs");
  close(fd);
  int dir = open(".", O_RDONLY);
  if (rename("regs.tmp", "regs") != 0 || dir < 0 || fsync(dir) != 0)
    die("rename regs");
  close(dir);
}

static void load(void) {
  int fd = open("regs", O_RDONLY);
  if (fd < 0)
    return; /* first boot */
  if (read(fd, regs, sizeof regs) != (ssize_t)sizeof regs)
    die("read regs");
  close(fd);
}

/* Store r for key k if it is newer than what this node has. */
static void store(unsigned k, const reg *r) {
  if (newer(r, &regs[k])) {
    regs[k] = *r;
    persist();
  }
}

static void on_peer_read(struct bufferevent *bev, void *arg);
static void on_peer_event(struct bufferevent *bev, short what, void *arg);

static struct bufferevent *peer_conn(int p) {
  if (!peer[p]) {
    peer[p] = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
    if (!peer[p])
      return NULL; /* out of memory: this peer misses the request */
    bufferevent_setcb(peer[p], on_peer_read, NULL, on_peer_event, (void *)(long)p);
    bufferevent_enable(peer[p], EV_READ | EV_WRITE);
    if (bufferevent_socket_connect(peer[p], (struct sockaddr *)&addr[p], sizeof addr[p]) != 0) {
      bufferevent_free(peer[p]);
      peer[p] = NULL;
    }
  }
  return peer[p];
}

static void to_peers(const char *fmt, unsigned long a, unsigned long b, unsigned long c,
                     unsigned long d, unsigned long e) {
  for (int p = 0; p < n; p++) {
    struct bufferevent *bev = p == me ? NULL : peer_conn(p);
    if (bev)
      evbuffer_add_printf(bufferevent_get_output(bev), fmt, a, b, c, d, e);
  }
}

static void answer(op *o) {
  if (o->client) {
    if (o->get)
      evbuffer_add_printf(bufferevent_get_output(o->client), "VAL %lu\n", o->best.value);
    else
      evbuffer_add_printf(bufferevent_get_output(o->client), "OK\n");
  }
  o->used = 0;
}

/* Node p answered op o's current phase (with r in the query phase). */
static void counted(op *o, int p, const reg *r) {
  if (o->answered >> p & 1)
    return;
  o->answered |= 1u << p;
  if (o->phase == 1 && newer(r, &o->best))
    o->best = *r;
  if (++o->count <= n / 2)
    return;
  if (o->phase == 2) {
    answer(o);
    return;
  }
#ifdef EVQ_BUG_NO_WRITEBACK
  if (o->get) { /* what the majority has, without storing it back */
    answer(o);
    return;
  }
#endif
  reg w = o->best;
  if (!o->get)
    w = (reg){o->best.ts + 1, (unsigned)me, o->value};
  o->best = w;
  o->phase = 2;
  o->answered = 0;
  o->count = 0;
  to_peers("S %lu %lu %lu %lu %lu\n", o->key, (unsigned long)w.ts, w.node, w.value, o->id);
  store(o->key, &w);
  counted(o, me, &w);
}

static op *op_of(unsigned long id) {
  for (int i = 0; i < OPS; i++)
    if (ops[i].used && ops[i].id == id)
      return &ops[i];
  return NULL;
}

static void start(struct bufferevent *client, int get, unsigned key, unsigned long value) {
  op *o = NULL;
  for (int i = 0; i < OPS && !o; i++)
    if (!ops[i].used)
      o = &ops[i];
  if (!o) {
    evbuffer_add_printf(bufferevent_get_output(client), "BUSY\n");
    return;
  }
  *o = (op){1, get, 1, 0, ++next_id, key, value, client, 0, 0, {0, 0, 0}};
  to_peers("Q %lu %lu\n", key, o->id, 0, 0, 0);
  counted(o, me, &regs[key]);
}

/* A connection closed: its requests are dropped (a write may have
 * reached some nodes: the client, which heard nothing, allows that). */
static void forget_client(struct bufferevent *bev) {
  for (int i = 0; i < OPS; i++)
    if (ops[i].used && ops[i].client == bev)
      ops[i].used = 0;
}

/* A line on a connection some node or client opened to us. */
static void on_line(struct bufferevent *bev, const char *line) {
  unsigned k;
  unsigned long v, ts, node, id;
  if (sscanf(line, "GET %u", &k) == 1 && k < KEYS)
    start(bev, 1, k, 0);
  else if (sscanf(line, "PUT %u %lu", &k, &v) == 2 && k < KEYS)
    start(bev, 0, k, v);
  else if (sscanf(line, "Q %u %lu", &k, &id) == 2 && k < KEYS)
    evbuffer_add_printf(bufferevent_get_output(bev), "QR %lu %lu %u %lu\n", id,
                        (unsigned long)regs[k].ts, regs[k].node, regs[k].value);
  else if (sscanf(line, "S %u %lu %lu %lu %lu", &k, &ts, &node, &v, &id) == 5 && k < KEYS &&
           node < MAXN) {
    reg r = {ts, (unsigned)node, v};
    store(k, &r);
    evbuffer_add_printf(bufferevent_get_output(bev), "SA %lu\n", id);
  }
}

static void on_read(struct bufferevent *bev, void *arg) {
  (void)arg;
  char *line;
  size_t len;
  while ((line = evbuffer_readln(bufferevent_get_input(bev), &len, EVBUFFER_EOL_LF))) {
    on_line(bev, line);
    free(line);
  }
}

static void on_event(struct bufferevent *bev, short what, void *arg) {
  (void)arg;
  if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
    forget_client(bev);
    bufferevent_free(bev);
  }
}

/* A line from peer p on our connection to it: an answer to our request. */
static void on_peer_read(struct bufferevent *bev, void *arg) {
  int p = (int)(long)arg;
  char *line;
  size_t len;
  while ((line = evbuffer_readln(bufferevent_get_input(bev), &len, EVBUFFER_EOL_LF))) {
    unsigned long id, ts, v;
    unsigned node;
    op *o;
    if (sscanf(line, "QR %lu %lu %u %lu", &id, &ts, &node, &v) == 4 && (o = op_of(id)) &&
        o->phase == 1) {
      reg r = {ts, node, v};
      counted(o, p, &r);
    } else if (sscanf(line, "SA %lu", &id) == 1 && (o = op_of(id)) && o->phase == 2) {
      counted(o, p, &o->best);
    }
    free(line);
  }
}

static void on_peer_event(struct bufferevent *bev, short what, void *arg) {
  int p = (int)(long)arg;
  if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
    bufferevent_free(bev);
    peer[p] = NULL; /* the next request connects again */
  }
}

static void on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int len,
                      void *arg) {
  (void)l, (void)sa, (void)len, (void)arg;
  struct bufferevent *bev = bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);
  if (!bev) {
    close(fd);
    return;
  }
  bufferevent_setcb(bev, on_read, NULL, on_event, NULL);
  bufferevent_enable(bev, EV_READ | EV_WRITE);
}

/* Every 250 ms: a request that has not heard from a majority within a
 * second is dropped (its client, which waits a second, gave up), and our
 * connections to the nodes that did not answer it are closed, so that the
 * next request connects again (a connection can be dead without an error:
 * a peer that restarted, or a registration the library lost). */
static void sweep_ops(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what, (void)arg;
  for (int i = 0; i < OPS; i++) {
    op *o = &ops[i];
    if (!o->used || ++o->age < 4)
      continue;
    for (int p = 0; p < n; p++)
      if (p != me && peer[p] && !(o->answered >> p & 1)) {
        bufferevent_free(peer[p]);
        peer[p] = NULL;
      }
    o->used = 0;
  }
}

static int parse_addr(const char *s, struct sockaddr_in *a) {
  char host[64];
  const char *colon = strrchr(s, ':');
  if (!colon || (size_t)(colon - s) >= sizeof host)
    return -1;
  memcpy(host, s, (size_t)(colon - s));
  host[colon - s] = 0;
  memset(a, 0, sizeof *a);
  a->sin_family = AF_INET;
  a->sin_port = htons((uint16_t)atoi(colon + 1));
  return inet_pton(AF_INET, host, &a->sin_addr) == 1 ? 0 : -1;
}

int main(int argc, char **argv) {
  if (argc < 3 || argc - 2 > MAXN) {
    fprintf(stderr, "usage: evquorum K HOST:PORT...\n");
    return 2;
  }
  me = atoi(argv[1]);
  n = argc - 2;
  for (int i = 0; i < n; i++)
    if (parse_addr(argv[2 + i], &addr[i]) != 0)
      return 2;
  if (me < 0 || me >= n)
    return 2;
  load();
  base = event_base_new();
  if (!base)
    die("event_base_new");
  struct sockaddr_in any = addr[me];
  any.sin_addr.s_addr = htonl(INADDR_ANY);
  /* created disabled, then enabled with its result checked: libevent
   * 2.1's evconnlistener_new ignores a failure to enable (an allocation in
   * event_add) and returns a listener that never accepts */
  struct evconnlistener *l = evconnlistener_new_bind(
      base, on_accept, NULL, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_DISABLED, 16,
      (struct sockaddr *)&any, sizeof any);
  if (!l || evconnlistener_enable(l) != 0)
    die("listen");
  struct event *sweeper = event_new(base, -1, EV_PERSIST, sweep_ops, NULL);
  struct timeval every = {0, 250000};
  if (!sweeper || event_add(sweeper, &every) != 0)
    die("timer");
  printf("evquorum: node %d of %d, on %s\n", me, n, event_base_get_method(base));
  fflush(stdout);
  int rc = event_base_dispatch(base); /* returns only if it fails: a server stops */
  fprintf(stderr, "evquorum: the event loop ended (%d)\n", rc);
  return 1;
}
