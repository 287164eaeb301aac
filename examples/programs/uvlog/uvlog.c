/* uvlog: a primary-backup key-value log on libuv, an ordinary Linux
 * program and simfuzz's example of a program on libuv linked unmodified:
 * its TCP handles, its timers, and uv_fs_* with fsync, which libuv runs on
 * its thread pool (docs/programs.md).
 *
 *   uvlog K HOST:PORT...   (node K of the listed nodes, node 0 the primary;
 *                           its data directory is the working directory)
 *
 * Lines, as the kvstore example's: PUT k v -> OK (at the primary; a backup
 * answers NOTPRIMARY); GET k -> VAL v (a backup asks the primary). The primary appends each write
 * to its log ("log": a 512-byte record each, with a sum) and sends it to the backups (REP seq k v),
 * which log it too and answer ACK seq once it is synced. A write is answered once its record is
 * synced at the primary and every backup acknowledged it; a read at the primary sees what it
 * logged. A node that restarts reads its log back.
 *
 * Planted bugs:
 *   UVLOG_BUG_EARLY_OK  the primary answers a write once the backups
 *                       acknowledged it, without waiting for its own fsync:
 *                       a primary that crashes meanwhile comes back without
 *                       the write it confirmed;
 *   UVLOG_BUG_PARTIAL   a read callback is taken to end at a line's end (as
 *                       if libuv delivered whole messages): the piece of a
 *                       line left at the end of a read is handled as a line,
 *                       and "PUT 3 77" cut after "PUT 3 7" writes 7. */
#define _GNU_SOURCE
#include <uv.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEYS 16
#define MAXN 5
#define BLOCK 512
#define MAX_RECORDS 1000
#define PENDING 64
#define MAGIC 0x75766c67u

typedef struct record {
  uint32_t magic, key;
  uint64_t seq, value, sum;
} record;

typedef struct conn {
  uv_tcp_t tcp;
  int peer; /* the node it leads to (we opened it), else -1 */
  char buf[256];
  size_t len;
} conn;

typedef struct write_req { /* a PUT in flight at the primary */
  int used, synced;
  int age;       /* ticks of the watchdog it has lived */
  unsigned acks; /* a bit per backup */
  uint64_t seq;
  conn *client;
} write_req;

typedef struct fs_job { /* one record's write and fsync */
  uv_fs_t req;
  uint64_t seq;
  conn *from; /* a backup: the primary's connection to answer on */
  unsigned char block[BLOCK];
} fs_job;

static uv_loop_t *loop;
static int me, n;
static struct sockaddr_in addr[MAXN];
static conn *to_node[MAXN];    /* the primary's to each backup, a backup's to the primary */
static conn *waiting[PENDING]; /* a backup: clients whose reads went to the primary, in order */
static int wait_head, wait_len, wait_age; /* wait_age: ticks the oldest has waited */
static uv_file log_fd;
static uint64_t next_seq = 1;
static unsigned long table[KEYS];
static write_req pend[PENDING];
static uv_timer_t tick;

static void die(const char *what, int err) {
  fprintf(stderr, "uvlog: %s: %s\n", what, uv_strerror(err));
  exit(1);
}

static uint64_t sum_of(const record *r) {
  uint64_t h = 1469598103934665603ull ^ r->magic;
  h = (h ^ r->key) * 1099511628211ull;
  h = (h ^ r->seq) * 1099511628211ull;
  return (h ^ r->value) * 1099511628211ull;
}

/* ---- connections ------------------------------------------------------- */

static void on_closed(uv_handle_t *h) {
  free(h->data);
}

static void drop(conn *c) {
  for (int i = 0; i < PENDING; i++) {
    if (pend[i].used && pend[i].client == c)
      pend[i].used = 0; /* its client gave up: a backup may never acknowledge it now */
    if (waiting[i] == c)
      waiting[i] = NULL; /* its answer goes nowhere */
  }
  if (c->peer >= 0)
    to_node[c->peer] = NULL;
  if (c->peer == 0)
    wait_len = 0; /* the primary's answers on it are lost */
  if (!uv_is_closing((uv_handle_t *)&c->tcp))
    uv_close((uv_handle_t *)&c->tcp, on_closed);
}

static void on_written(uv_write_t *w, int status) {
  (void)status;
  free(w);
}

static void say(conn *c, const char *line) {
  if (!c)
    return;
  size_t len = strlen(line);
  uv_write_t *w = malloc(sizeof *w + len);
  if (!w)
    return; /* out of memory: the line is lost, as on a reset */
  memcpy(w + 1, line, len);
  uv_buf_t b = uv_buf_init((char *)(w + 1), (unsigned)len);
  if (uv_write(w, (uv_stream_t *)&c->tcp, &b, 1, on_written) != 0)
    free(w);
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *b) {
  (void)hint;
  conn *c = h->data;
  *b = uv_buf_init(c->buf + c->len, (unsigned)(sizeof c->buf - 1 - c->len));
}

static void on_line(conn *c, const char *line);

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *b) {
  (void)b;
  conn *c = s->data;
  if (nread < 0 || (nread == 0 && c->len == sizeof c->buf - 1)) {
    drop(c);
    return;
  }
  c->len += (size_t)nread;
  char *nl;
  while ((nl = memchr(c->buf, '\n', c->len))) {
    *nl = 0;
    on_line(c, c->buf);
    c->len -= (size_t)(nl + 1 - c->buf);
    memmove(c->buf, nl + 1, c->len);
  }
#ifdef UVLOG_BUG_PARTIAL
  if (c->len && c->len < sizeof c->buf - 1) { /* the rest of a read is taken for a line */
    c->buf[c->len] = 0;
    on_line(c, c->buf);
    c->len = 0;
  }
#endif
}

static conn *new_conn(int peer) {
  conn *c = calloc(1, sizeof *c);
  if (!c || uv_tcp_init(loop, &c->tcp) != 0) {
    free(c);
    return NULL;
  }
  c->tcp.data = c;
  c->peer = peer;
  return c;
}

static void on_connect(uv_connect_t *req, int status) {
  conn *c = req->data;
  free(req);
  if (status != 0 || uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) != 0)
    drop(c);
}

/* Our connection to node p, opened if we have none. */
static conn *node_conn(int p) {
  if (to_node[p])
    return to_node[p];
  conn *c = new_conn(p);
  uv_connect_t *req = malloc(sizeof *req);
  if (!c || !req) {
    free(req);
    if (c)
      uv_close((uv_handle_t *)&c->tcp, on_closed);
    return NULL;
  }
  req->data = c;
  if (uv_tcp_connect(req, &c->tcp, (struct sockaddr *)&addr[p], on_connect) != 0) {
    free(req);
    uv_close((uv_handle_t *)&c->tcp, on_closed);
    return NULL;
  }
  return to_node[p] = c;
}

/* ---- the log ----------------------------------------------------------- */

static void answer_if_done(write_req *w) {
  unsigned all = 0;
  for (int p = 1; p < n; p++)
    all |= 1u << p;
#ifdef UVLOG_BUG_EARLY_OK
  int ready = w->acks == all; /* its own fsync not awaited */
#else
  int ready = w->synced && w->acks == all;
#endif
  if (!ready)
    return;
  say(w->client, "OK\n");
  w->used = 0;
}

static write_req *pending_of(uint64_t seq) {
  for (int i = 0; i < PENDING; i++)
    if (pend[i].used && pend[i].seq == seq)
      return &pend[i];
  return NULL;
}

static void on_synced(uv_fs_t *req) {
  fs_job *j = req->data;
  if (req->result < 0)
    die("fsync log", (int)req->result); /* a careful server stops */
  uv_fs_req_cleanup(req);
  if (me == 0) {
    write_req *w = pending_of(j->seq);
    if (w) {
      w->synced = 1;
      answer_if_done(w);
    }
  } else {
    char line[48];
    snprintf(line, sizeof line, "ACK %llu\n", (unsigned long long)j->seq);
    say(j->from, line);
  }
  free(j);
}

static void on_logged(uv_fs_t *req) {
  fs_job *j = req->data;
  if (req->result != BLOCK)
    die("write log", req->result < 0 ? (int)req->result : UV_EIO);
  uv_fs_req_cleanup(req);
  if (uv_fs_fsync(loop, &j->req, log_fd, on_synced) != 0)
    die("fsync log", UV_EIO);
}

/* Log record seq (key k := v) at its place, then fsync; on_synced follows. */
static void log_record(uint64_t seq, unsigned k, unsigned long v, conn *from) {
  fs_job *j = calloc(1, sizeof *j);
  if (!j)
    die("log", UV_ENOMEM);
  record r = {MAGIC, k, seq, v, 0};
  r.sum = sum_of(&r);
  memcpy(j->block, &r, sizeof r);
  j->seq = seq;
  j->from = from;
  j->req.data = j;
  uv_buf_t b = uv_buf_init((char *)j->block, BLOCK);
  if (uv_fs_write(loop, &j->req, log_fd, &b, 1, (int64_t)((seq - 1) * BLOCK), on_logged) != 0)
    die("write log", UV_EIO);
}

/* Read the log back: the table, and the next record's number. */
static void recover(void) {
  uv_fs_t req;
  log_fd = uv_fs_open(loop, &req, "log", O_RDWR | O_CREAT, 0644, NULL);
  uv_fs_req_cleanup(&req);
  if (log_fd < 0)
    die("open log", log_fd);
  int dir = uv_fs_open(loop, &req, ".", O_RDONLY, 0, NULL);
  uv_fs_req_cleanup(&req);
  if (dir < 0 || uv_fs_fsync(loop, &req, dir, NULL) != 0) /* the log's name is durable */
    die("sync dir", dir < 0 ? dir : UV_EIO);
  uv_fs_req_cleanup(&req);
  uv_fs_close(loop, &req, dir, NULL);
  uv_fs_req_cleanup(&req);
  for (;;) {
    unsigned char block[BLOCK];
    uv_buf_t b = uv_buf_init((char *)block, BLOCK);
    int got = uv_fs_read(loop, &req, log_fd, &b, 1, (int64_t)((next_seq - 1) * BLOCK), NULL);
    uv_fs_req_cleanup(&req);
    if (got < 0)
      die("read log", got);
    record r;
    memcpy(&r, block, sizeof r);
    if (got != BLOCK || r.magic != MAGIC || r.seq != next_seq || r.sum != sum_of(&r) ||
        r.key >= KEYS)
      break; /* the end, or a torn record: nothing after it was answered */
    table[r.key] = r.value;
    next_seq++;
  }
}

/* ---- requests ---------------------------------------------------------- */

static void put(conn *c, unsigned k, unsigned long v) {
  write_req *w = NULL;
  for (int i = 0; i < PENDING && !w; i++)
    if (!pend[i].used)
      w = &pend[i];
  if (!w || next_seq > MAX_RECORDS) {
    say(c, "BUSY\n");
    return;
  }
  *w = (write_req){1, 0, 0, 0, next_seq++, c};
  table[k] = v;
  char line[64];
  snprintf(line, sizeof line, "REP %llu %u %lu\n", (unsigned long long)w->seq, k, v);
  for (int p = 1; p < n; p++)
    say(node_conn(p), line);
  log_record(w->seq, k, v, NULL);
}

static void on_line(conn *c, const char *line) {
  unsigned k;
  unsigned long v;
  unsigned long long seq;
  char out[48];
  if (sscanf(line, "GET %u", &k) == 1 && k < KEYS) {
    if (me == 0) {
      snprintf(out, sizeof out, "VAL %lu\n", table[k]);
      say(c, out);
      return;
    }
    conn *p = node_conn(0); /* a backup asks the primary */
    if (!p || wait_len == PENDING) {
      say(c, "NOTPRIMARY\n");
      return;
    }
    if (!wait_len)
      wait_age = 0;
    waiting[(wait_head + wait_len++) % PENDING] = c;
    say(p, line);
    say(p, "\n");
  } else if (sscanf(line, "PUT %u %lu", &k, &v) == 2 && k < KEYS) {
    if (me != 0)
      say(c, "NOTPRIMARY\n");
    else
      put(c, k, v);
  } else if (sscanf(line, "REP %llu %u %lu", &seq, &k, &v) == 3 && k < KEYS && me != 0 &&
             seq >= 1 && seq <= MAX_RECORDS) {
    table[k] = v;
    log_record(seq, k, v, c);
  } else if (sscanf(line, "VAL %lu", &v) == 1 && c->peer == 0 && wait_len > 0) {
    conn *client = waiting[wait_head]; /* the primary's answer to the oldest read */
    wait_head = (wait_head + 1) % PENDING;
    wait_len--;
    wait_age = 0;
    snprintf(out, sizeof out, "VAL %lu\n", v);
    say(client, out);
  } else if (sscanf(line, "ACK %llu", &seq) == 1 && c->peer > 0) {
    write_req *w = pending_of(seq);
    if (w) {
      w->acks |= 1u << c->peer;
      answer_if_done(w);
    }
  }
}

static void on_connection(uv_stream_t *server, int status) {
  if (status != 0)
    return;
  conn *c = new_conn(-1);
  if (!c) /* libuv stops listening until the connection is accepted: stop */
    die("accept", UV_ENOMEM);
  if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0 ||
      uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) != 0)
    drop(c);
}

/* Every 200 ms, a watchdog: what waited a second for a node is given up
 * and our connection to that node closed, so that the next request opens
 * a new one (a connection can be dead without an error: a peer that
 * restarted, or an allocation the library failed); and the primary
 * connects again to a backup it lost. */
static void on_tick(uv_timer_t *t) {
  (void)t;
  for (int i = 0; i < PENDING && me == 0; i++) {
    write_req *w = &pend[i];
    if (!w->used || ++w->age < 5)
      continue;
    for (int p = 1; p < n; p++)
      if (to_node[p] && !(w->acks >> p & 1))
        drop(to_node[p]);
    w->used = 0;
  }
  if (me != 0 && wait_len && ++wait_age >= 5 && to_node[0])
    drop(to_node[0]); /* the reads waiting on it go unanswered */
  for (int p = 1; p < n && me == 0; p++)
    node_conn(p);
}

static int parse_addr(const char *s, struct sockaddr_in *a) {
  char host[64];
  const char *colon = strrchr(s, ':');
  if (!colon || (size_t)(colon - s) >= sizeof host)
    return -1;
  memcpy(host, s, (size_t)(colon - s));
  host[colon - s] = 0;
  return uv_ip4_addr(host, atoi(colon + 1), a);
}

int main(int argc, char **argv) {
  if (argc < 3 || argc - 2 > MAXN) {
    fprintf(stderr, "usage: uvlog K HOST:PORT...\n");
    return 2;
  }
  me = atoi(argv[1]);
  n = argc - 2;
  for (int i = 0; i < n; i++)
    if (parse_addr(argv[2 + i], &addr[i]) != 0)
      return 2;
  if (me < 0 || me >= n)
    return 2;
  loop = uv_default_loop();
  if (!loop)
    die("loop", UV_ENOMEM);
  recover();
  uv_tcp_t server;
  struct sockaddr_in any = addr[me];
  any.sin_addr.s_addr = htonl(INADDR_ANY);
  int r = uv_tcp_init(loop, &server);
  if (!r)
    r = uv_tcp_bind(&server, (struct sockaddr *)&any, 0);
  if (!r)
    r = uv_listen((uv_stream_t *)&server, 16, on_connection);
  if (r)
    die("listen", r);
  if ((r = uv_timer_init(loop, &tick)) || (r = uv_timer_start(&tick, on_tick, 200, 200)))
    die("timer", r);
  printf("uvlog: node %d of %d, %llu records\n", me, n, (unsigned long long)(next_seq - 1));
  fflush(stdout);
  r = uv_run(loop, UV_RUN_DEFAULT); /* returns only if it fails: a server stops */
  fprintf(stderr, "uvlog: the loop ended (%d)\n", r);
  return 1;
}
