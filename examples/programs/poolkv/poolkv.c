/* poolkv: a threaded key-value server, an ordinary Linux program (POSIX
 * threads, TCP, a write-ahead log with fsync), and simfuzz's example of a
 * program with threads (docs/programs.md).
 *
 *   poolkv PORT            (its data directory is the working directory)
 *
 * The main thread accepts connections and queues them; a pool of worker
 * threads serves them, one connection at a time each. A request is one
 * line, its answer one line:
 *   GET k          -> VAL v        (0: never written)
 *   PUT k v        -> OK
 *   CAS k old new  -> OK | FAIL cur
 * Every write is a record of the log ("wal"), a 512-byte block of its own
 * with a sum. A background thread fsyncs the log whenever records wait,
 * one fsync for as many as came meanwhile (group commit), holding the
 * log's lock while it syncs. A write is
 * answered, and a value is read, only once its record is durable, so
 * whatever a client heard survives a crash: at boot the log is replayed
 * up to its first record that does not check out.
 *
 * Locks: the table's (table_mu) is taken before the log's (log_mu), never
 * the other way round.
 *
 * Planted bugs (compile-time):
 *   POOLKV_BUG_LOCK_ORDER   the fsync thread notes what is durable in the
 *                           table while it holds the log's lock: the other
 *                           order, and a deadlock with a writing worker
 *   POOLKV_BUG_LOST_UPDATE  CAS compares under the table's lock, lets go of
 *                           it while the record is logged and synced, and
 *                           takes it again to store: two CAS of the same
 *                           value both succeed */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define KEYS 16
#define WORKERS 3
#define QUEUE 16
#define BLOCK 512
#define MAX_RECORDS 1000 /* then writes are refused (FULL): no compaction here */
#define MAGIC 0x706f6f6cu

typedef struct record {
  uint32_t magic, key;
  uint64_t seq, value, sum;
} record;

static pthread_mutex_t table_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned long table[KEYS];
static uint64_t key_seq[KEYS];  /* the record of the key's last write */
static uint64_t checkpoint_seq; /* every record up to this one is durable (table_mu) */

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t log_cv = PTHREAD_COND_INITIALIZER;     /* records wait */
static pthread_cond_t durable_cv = PTHREAD_COND_INITIALIZER; /* synced moved on */
static int wal = -1;
static uint64_t written, synced; /* records in the log; durable ones */

static pthread_mutex_t q_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_cv = PTHREAD_COND_INITIALIZER;
static int queue[QUEUE], q_head, q_len;

static void die(const char *what) {
  fprintf(stderr, "poolkv: %s: %s\n", what, strerror(errno));
  exit(1);
}

static uint64_t sum_of(const record *r) {
  uint64_t h = 1469598103934665603ull ^ r->magic;
  h = (h ^ r->key) * 1099511628211ull;
  h = (h ^ r->seq) * 1099511628211ull;
  return (h ^ r->value) * 1099511628211ull;
}

/* Replay the log into the table; the next record goes after the last good one. */
static void recover(void) {
  wal = open("wal", O_RDWR | O_CREAT, 0644);
  int dir = open(".", O_RDONLY);
  if (wal < 0 || dir < 0 || fsync(dir) != 0) /* the log's name is durable too */
    die("open wal");
  close(dir);
  unsigned char block[BLOCK];
  for (;;) {
    ssize_t n = pread(wal, block, BLOCK, (off_t)(written * BLOCK));
    if (n < 0)
      die("read wal");
    record r;
    memcpy(&r, block, sizeof r);
    if (n != BLOCK || r.magic != MAGIC || r.seq != written + 1 || r.sum != sum_of(&r) ||
        r.key >= KEYS)
      break; /* the end, or a torn or lost record: nothing after it was answered */
    table[r.key] = r.value;
    key_seq[r.key] = r.seq;
    written++;
  }
  synced = checkpoint_seq = written;
}

/* Append a record (log_mu taken inside); its number, or 0 if the log is full. */
static uint64_t log_append(unsigned key, unsigned long value) {
  pthread_mutex_lock(&log_mu);
  if (written == MAX_RECORDS) {
    pthread_mutex_unlock(&log_mu);
    return 0;
  }
  unsigned char block[BLOCK];
  memset(block, 0, sizeof block);
  record r = {MAGIC, key, written + 1, value, 0};
  r.sum = sum_of(&r);
  memcpy(block, &r, sizeof r);
  if (pwrite(wal, block, BLOCK, (off_t)(written * BLOCK)) != BLOCK)
    die("write wal");
  uint64_t seq = ++written;
  pthread_cond_signal(&log_cv);
  pthread_mutex_unlock(&log_mu);
  return seq;
}

static void wait_durable(uint64_t seq) {
  pthread_mutex_lock(&log_mu);
  while (synced < seq)
    pthread_cond_wait(&durable_cv, &log_mu);
  pthread_mutex_unlock(&log_mu);
}

static void note_checkpoint(uint64_t seq) {
  pthread_mutex_lock(&table_mu);
  if (seq > checkpoint_seq)
    checkpoint_seq = seq;
  pthread_mutex_unlock(&table_mu);
}

/* The background fsync thread: one fsync for every record that waits. It
 * holds the log's lock through the fsync, so no record is appended while
 * the log syncs (the writers wait for it). */
static void *syncer(void *arg) {
  (void)arg;
  for (;;) {
    pthread_mutex_lock(&log_mu);
    while (written == synced)
      pthread_cond_wait(&log_cv, &log_mu);
    uint64_t target = written;
    if (fsync(wal) != 0)
      die("fsync wal");
    synced = target;
#ifdef POOLKV_BUG_LOCK_ORDER
    note_checkpoint(target); /* table_mu under log_mu */
#endif
    pthread_cond_broadcast(&durable_cv);
    pthread_mutex_unlock(&log_mu);
#ifndef POOLKV_BUG_LOCK_ORDER
    note_checkpoint(target);
#endif
  }
  return NULL;
}

/* PUT, or CAS when cas is set: the answer line in out. */
static void write_op(int cas, unsigned key, unsigned long old, unsigned long value, char *out,
                     size_t cap) {
  pthread_mutex_lock(&table_mu);
  unsigned long cur = table[key];
#ifdef POOLKV_BUG_LOST_UPDATE
  if (cas) { /* compare now, store once durable: the lock is let go meanwhile */
    pthread_mutex_unlock(&table_mu);
    if (cur != old) {
      snprintf(out, cap, "FAIL %lu\n", cur);
      return;
    }
    uint64_t seq = log_append(key, value);
    if (seq)
      wait_durable(seq);
    pthread_mutex_lock(&table_mu);
    if (seq)
      table[key] = value, key_seq[key] = seq;
    pthread_mutex_unlock(&table_mu);
    snprintf(out, cap, seq ? "OK\n" : "FULL\n");
    return;
  }
#endif
  if (cas && cur != old) {
    uint64_t need = key_seq[key];
    pthread_mutex_unlock(&table_mu);
    wait_durable(need); /* what it read is durable before it is said */
    snprintf(out, cap, "FAIL %lu\n", cur);
    return;
  }
  uint64_t seq = log_append(key, value);
  if (seq)
    table[key] = value, key_seq[key] = seq;
  pthread_mutex_unlock(&table_mu);
  if (seq)
    wait_durable(seq);
  snprintf(out, cap, seq ? "OK\n" : "FULL\n");
}

static void handle(const char *req, char *out, size_t cap) {
  unsigned key;
  unsigned long a, b;
  if (sscanf(req, "GET %u", &key) == 1 && key < KEYS) {
    pthread_mutex_lock(&table_mu);
    unsigned long v = table[key];
    uint64_t need = key_seq[key];
    pthread_mutex_unlock(&table_mu);
    wait_durable(need);
    snprintf(out, cap, "VAL %lu\n", v);
  } else if (sscanf(req, "PUT %u %lu", &key, &a) == 2 && key < KEYS) {
    write_op(0, key, 0, a, out, cap);
  } else if (sscanf(req, "CAS %u %lu %lu", &key, &a, &b) == 3 && key < KEYS) {
    write_op(1, key, a, b, out, cap);
  } else {
    snprintf(out, cap, "ERR\n");
  }
}

/* Serve one connection until its client closes it. */
static void serve(int fd) {
  char line[128];
  size_t len = 0;
  for (;;) {
    ssize_t n = read(fd, line + len, sizeof line - 1 - len);
    if (n <= 0)
      break;
    len += (size_t)n;
    char *nl;
    while ((nl = memchr(line, '\n', len))) {
      *nl = 0;
      char out[64];
      handle(line, out, sizeof out);
      if (send(fd, out, strlen(out), MSG_NOSIGNAL) < 0)
        break;
      len -= (size_t)(nl + 1 - line);
      memmove(line, nl + 1, len);
    }
    if (len == sizeof line - 1)
      break; /* a line too long: not our client */
  }
  close(fd);
}

static void *worker(void *arg) {
  (void)arg;
  for (;;) {
    pthread_mutex_lock(&q_mu);
    while (!q_len)
      pthread_cond_wait(&q_cv, &q_mu);
    int fd = queue[q_head];
    q_head = (q_head + 1) % QUEUE;
    q_len--;
    pthread_mutex_unlock(&q_mu);
    serve(fd);
  }
  return NULL;
}

int main(int argc, char **argv) {
  int port = argc > 1 ? atoi(argv[1]) : 7000;
  recover();
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons((uint16_t)port);
  if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) != 0 || listen(ls, 16) != 0)
    die("listen");
  pthread_t t;
  if (pthread_create(&t, NULL, syncer, NULL) != 0)
    die("syncer");
  pthread_detach(t);
  for (int i = 0; i < WORKERS; i++) {
    if (pthread_create(&t, NULL, worker, NULL) != 0)
      die("worker");
    pthread_detach(t);
  }
  printf("poolkv: %llu records, listening on %d\n", (unsigned long long)written, port);
  fflush(stdout);
  for (;;) {
    int fd = accept(ls, NULL, NULL);
    if (fd < 0)
      continue;
    pthread_mutex_lock(&q_mu);
    if (q_len == QUEUE) {
      pthread_mutex_unlock(&q_mu);
      close(fd); /* too many waiting: the client tries again */
      continue;
    }
    queue[(q_head + q_len++) % QUEUE] = fd;
    pthread_cond_signal(&q_cv);
    pthread_mutex_unlock(&q_mu);
  }
}
