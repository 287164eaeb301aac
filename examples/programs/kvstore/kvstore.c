/* kvstore: a small replicated key-value store, an ordinary Linux server.
 *
 *   kvstore ID HOST:PORT HOST:PORT HOST:PORT ...   (one address per node)
 *
 * Node 0 is the primary; the others are backups. Everything is one
 * single-threaded epoll loop over TCP, with line-based messages:
 *
 *   client -> primary   PUT key value      -> OK
 *   client -> any node  GET key            -> VAL value (0: never written),
 *                                             or NOLEASE from a backup
 *   primary -> backup   RESET, SET key value ..., UPTO seq  -> HAVE seq
 *                       REP seq key value  -> ACK seq
 *                       COMMIT seq key value
 *   backup -> primary   LEASE? n           -> GRANT n
 *
 * Writes. The primary logs a PUT in its write-ahead log (the file "wal",
 * one record "seq key value sum" per 512-byte block), fsyncs it and sends it to every
 * backup. It commits writes in order: one once one backup has logged it (a
 * majority of three) and every backup that may hold a read lease has too.
 * Then it answers the client, the value is what reads return, and the
 * backups hear of it (COMMIT). A write still waiting is sent again every
 * RETRY_MS, on a new connection if need be; a new connection first carries
 * the committed state (RESET, SET lines, UPTO). When the log holds COMPACT records, a node writes
 * every key to "snap.tmp", fsyncs it, renames it over "snap", fsyncs the
 * directory and empties the log. At start a node reads "snap", then "wal".
 *
 * Reads return committed values only. The primary answers any GET. A
 * backup answers one while it holds a read lease, unless the key has a
 * write it logged and has not seen committed (the primary may have
 * answered it, or may yet): it asks for a lease every RETRY_MS, and a
 * grant makes it valid for LEASE_B ms from the moment it asked. The primary
 * grants only to a backup that has every committed write (else it sends it
 * the state again), and counts the lease LEASE_P ms from the grant:
 * LEASE_B / 0.9 < LEASE_P / 1.1, so with clocks that drift by up to 10 %
 * the backup's lease ends first. A primary that restarts takes what it
 * logged as committed, and answers nothing for LEASE_P ms (its last life's
 * grants). Lease times are on CLOCK_MONOTONIC, which no one sets.
 *
 * Planted bugs, each behind a define (the top CMakeLists.txt):
 *   KV_BUG_DIRSYNC   the compaction's rename is not followed by an fsync
 *                    of the directory: after a crash "snap" may be the old
 *                    one while the emptied log is durable;
 *   KV_BUG_ACK_EARLY the primary syncs its log 20 ms after its first unsynced
 *                    record (a group commit), and a backup's ACK can come
 *                    first: the client hears OK before the primary's fsync;
 *   KV_BUG_REALTIME  a backup times its lease on CLOCK_REALTIME: a clock
 *                    stepped back stretches it past the primary's count;
 *   KV_BUG_PARTIAL   a read is taken to hold whole lines: a line split
 *                    across two TCP segments is parsed in two pieces.
 *
 * Versions (simfuzz_program_version, the top CMakeLists.txt): how a value
 * is written in records (log, snapshot, lines to backups) and read back.
 * This one writes and reads decimal. KV_READ_HEX (version 1.1) also reads
 * "0x" hexadecimal; KV_WRITE_HEX (version 2) writes it. The client's lines
 * stay decimal. Version 2 is right after 1.1 everywhere (the two-step
 * format change) and wrong straight after 1: in a cluster of both, a
 * version 1 backup reads "0x1f" as 0.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAXN 5
#define KEYS 64
#define CONNS 32
#define PENDING 64
#define LINE 128
#define RETRY_MS 200
#define COMPACT 6
#define LEASE_P 1000 /* ms: a lease as the primary counts it, from its grant */
#define LEASE_B 700  /* ms: as a backup counts it, from its request */
#define BLOCK 512    /* a log record's bytes: a disk sector of its own */
#ifdef KV_WRITE_HEX
#define VAL_OUT "0x%lx" /* a value in a record, as written */
#else
#define VAL_OUT "%lu"
#endif
#if defined(KV_READ_HEX) || defined(KV_WRITE_HEX)
#define VAL_IN "%li" /* and as read: decimal, or 0x hexadecimal */
#else
#define VAL_IN "%lu"
#endif

typedef struct conn {
  int fd;         /* -1: free */
  int peer;       /* the primary's link to backup `peer`; -1: accepted */
  int connecting; /* a link whose connect is in progress */
  char in[4 * LINE];
  size_t len;
} conn;

typedef struct pending {
  int used;
  unsigned long seq;
  int client; /* the client's descriptor */
  unsigned key;
  unsigned long value;
  int64_t sent;      /* when it was last sent to the backups (ms) */
  unsigned acked_by; /* the backups that logged it (bit k) */
} pending;

static int id, nodes;
static struct sockaddr_in addr[MAXN];
static unsigned long val[KEYS];   /* the latest value logged */
static unsigned long cval[KEYS];  /* the latest value committed: what reads return */
static unsigned long dirty[KEYS]; /* a backup: a logged write not known committed */
static unsigned long committed;   /* a backup: every write up to this one is committed */
static int syncing;               /* a backup: between RESET and UPTO (no reads) */
static conn conns[CONNS];
static pending pend[PENDING];
static unsigned long next_seq;
static int ep, wal = -1, wal_records;
static int64_t last_retry;
/* the primary's view of the backups */
static int64_t lease_until[MAXN];  /* a lease it granted may last until */
static unsigned long have[MAXN];   /* the backup has every write up to */
static int synced[MAXN];           /* its link carried the whole state */
static unsigned long acknowledged; /* the last write answered OK */
static int64_t quiet_until;        /* no OK before (an earlier life's leases) */
/* a backup's lease */
static int primary_fd = -1;
static unsigned long asked;
static int64_t asked_at, lease_end;
#ifdef KV_BUG_ACK_EARLY
static int unsynced;
static int64_t unsynced_since;
#endif

static void die(const char *what) {
  fprintf(stderr, "kvstore %d: %s: %s\n", id, what, strerror(errno));
  exit(1);
}

static int64_t ms_of(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t now_ms(void) {
  return ms_of(CLOCK_MONOTONIC);
}

/* The clock of a backup's lease. */
static int64_t lease_clock(void) {
#ifdef KV_BUG_REALTIME
  return ms_of(CLOCK_REALTIME);
#else
  return ms_of(CLOCK_MONOTONIC);
#endif
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

/* ---- files ------------------------------------------------------------ */

static void sync_dir(void) {
  int d = open(".", O_RDONLY | O_DIRECTORY);
  if (d < 0 || fsync(d) != 0)
    die("fsync .");
  close(d);
}

static unsigned long record_sum(unsigned long seq, unsigned k, unsigned long v) {
  unsigned long h = 14695981039346656037ul, x[3] = {seq, k, v};
  for (int i = 0; i < 3; i++)
    h = (h ^ x[i]) * 1099511628211ul;
  return h & 0xfffffffful;
}

/* Read "snap" (lines "key value", then "S seq") or the log (blocks
 * "seq key value sum"); returns the bytes of its whole records. */
static long load(const char *path, int log) {
  FILE *f = fopen(path, "r");
  long good = 0;
  if (!f && errno != ENOENT)
    die(path);
  if (!f)
    return 0;
  char line[BLOCK + 1];
  while (fgets(line, sizeof line, f)) {
    unsigned long seq = 0, v = 0, sum = 0;
    unsigned k = 0;
    size_t n = strlen(line);
    int ok = n && line[n - 1] == '\n' &&
             (log ? n == BLOCK && sscanf(line, "%lu %u " VAL_IN " %lx", &seq, &k, &v, &sum) == 4 &&
                        sum == record_sum(seq, k, v)
                  : sscanf(line, "%u " VAL_IN, &k, &v) == 2 || sscanf(line, "S %lu", &seq) == 1);
    if (!ok || k >= KEYS)
      break; /* a torn last record: what follows is not ours */
    if (line[0] != 'S')
      val[k] = v;
    if (seq > next_seq)
      next_seq = seq;
    wal_records += log;
    good += (long)n;
  }
  if (ferror(f))
    die(path); /* a read error is no torn tail: what follows may be committed */
  fclose(f);
  return good;
}

static void wal_sync(void) {
  if (fsync(wal) != 0)
    die("fsync wal");
}

/* A log record: "seq key value sum", padded to a block that ends in a
 * newline. A torn or corrupted sector damages its own record only (a
 * record that shared a sector with the next one's unsynced write could
 * lose bytes it had made durable), and the sum tells a damaged record
 * from a whole one. */
static void wal_append(unsigned long seq, unsigned k, unsigned long v) {
  char rec[BLOCK + 1];
  int n = snprintf(rec, sizeof rec, "%lu %u " VAL_OUT " %lx", seq, k, v, record_sum(seq, k, v));
  memset(rec + n, ' ', BLOCK - 1 - (size_t)n);
  rec[BLOCK - 1] = '\n';
  if (write(wal, rec, BLOCK) != BLOCK)
    die("write wal");
  wal_records++;
}

/* Every key into "snap" (atomically: a new file renamed over the old one),
 * then an empty log. */
static void compact(void) {
  int fd = open("snap.tmp", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    die("open snap.tmp");
  for (unsigned k = 0; k < KEYS; k++) {
    char rec[LINE];
    int n = snprintf(rec, sizeof rec, "%u " VAL_OUT "\n", k, val[k]);
    if (val[k] && write(fd, rec, (size_t)n) != n)
      die("write snap.tmp");
  }
  char rec[LINE];
  int n = snprintf(rec, sizeof rec, "S %lu\n", next_seq); /* sequence numbers go on */
  if (write(fd, rec, (size_t)n) != n)
    die("write snap.tmp");
  if (fsync(fd) != 0)
    die("fsync snap.tmp");
  close(fd);
  if (rename("snap.tmp", "snap") != 0)
    die("rename");
#ifndef KV_BUG_DIRSYNC
  sync_dir();
#endif
  if (ftruncate(wal, 0) != 0 || lseek(wal, 0, SEEK_SET) != 0)
    die("truncate wal");
  wal_sync();
  wal_records = 0;
}

/* ---- connections ------------------------------------------------------ */

static conn *add_conn(int fd, int peer, int connecting) {
  for (int i = 0; i < CONNS; i++)
    if (conns[i].fd < 0) {
      conns[i].fd = fd;
      conns[i].peer = peer;
      conns[i].connecting = connecting;
      conns[i].len = 0;
      struct epoll_event e = {.events = connecting ? EPOLLOUT : EPOLLIN, .data.u32 = (uint32_t)i};
      if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e) != 0)
        die("epoll_ctl");
      return &conns[i];
    }
  close(fd);
  return NULL;
}

static void drop_conn(conn *c) {
  for (int i = 0; i < PENDING; i++)
    if (pend[i].used && pend[i].client == c->fd)
      pend[i].client = -1; /* its client is gone: log it, answer no one */
  if (c->fd == primary_fd)
    primary_fd = -1;
  if (c->peer > 0)
    synced[c->peer] = 0;
  epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
  close(c->fd);
  c->fd = -1;
}

static void say(int fd, const char *line) {
  size_t n = strlen(line);
  if (fd >= 0 && send(fd, line, n, MSG_NOSIGNAL) != (ssize_t)n)
    return; /* the peer's problem: it reconnects */
}

/* The primary's link to backup k (connected or not yet), or NULL. */
static conn *link_to(int k) {
  for (int i = 0; i < CONNS; i++)
    if (conns[i].fd >= 0 && conns[i].peer == k)
      return &conns[i];
  return NULL;
}

/* A new link to a backup carries the committed state first (and so does
 * a link whose backup lacks a committed write when it asks for a lease). */
static void send_state(conn *c) {
  char line[LINE];
  say(c->fd, "RESET\n");
  for (unsigned k = 0; k < KEYS; k++)
    if (cval[k]) {
      snprintf(line, sizeof line, "SET %u " VAL_OUT "\n", k, cval[k]);
      say(c->fd, line);
    }
  snprintf(line, sizeof line, "UPTO %lu\n", acknowledged);
  say(c->fd, line);
}

/* A link's connect finished: in use from now on, or closed. */
static void connected(conn *c) {
  int err = 0;
  socklen_t len = sizeof err;
  if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
    drop_conn(c);
    return;
  }
  c->connecting = 0;
  struct epoll_event e = {.events = EPOLLIN, .data.u32 = (uint32_t)(c - conns)};
  if (epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &e) != 0)
    die("epoll_ctl");
  send_state(c);
}

/* The primary's links to the backups: opened again if they broke. */
static void connect_backups(void) {
  for (int k = 1; k < nodes; k++) {
    if (link_to(k))
      continue;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd < 0)
      die("socket");
    int r = connect(fd, (struct sockaddr *)&addr[k], sizeof addr[k]);
    if (r != 0 && errno != EINPROGRESS) {
      close(fd);
      continue;
    }
    conn *c = add_conn(fd, k, r != 0);
    if (c && r == 0)
      send_state(c);
  }
}

/* A line to every backup the primary has a link up to. */
static void to_backups(const char *line) {
  for (int k = 1; k < nodes; k++) {
    conn *c = link_to(k);
    if (c && !c->connecting)
      say(c->fd, line);
  }
}

static void replicate(const pending *p) {
  char line[LINE];
  snprintf(line, sizeof line, "REP %lu %u " VAL_OUT "\n", p->seq, p->key, p->value);
  to_backups(line);
}

/* ---- the primary -------------------------------------------------------- */

/* The waiting write with the lowest sequence number, or NULL. */
static pending *oldest(void) {
  pending *o = NULL;
  for (int i = 0; i < PENDING; i++)
    if (pend[i].used && (!o || pend[i].seq < o->seq))
      o = &pend[i];
  return o;
}

/* Commit the waiting writes that may be, in order: one backup logged the
 * oldest, and so did every backup that may hold a lease. Committed, a
 * value is what reads return, and the backups hear of it. */
static void try_answer(void) {
  int64_t now = now_ms();
  for (pending *p; now >= quiet_until && (p = oldest()) != NULL;) {
    if (!p->acked_by)
      return;
    for (int k = 1; k < nodes; k++)
      if (lease_until[k] > now && !(p->acked_by & 1u << k))
        return;
    say(p->client, "OK\n");
    acknowledged = p->seq;
    cval[p->key] = p->value;
    char line[LINE];
    snprintf(line, sizeof line, "COMMIT %lu %u " VAL_OUT "\n", p->seq, p->key, p->value);
    to_backups(line);
    p->used = 0;
  }
  if (!oldest() && wal_records >= COMPACT)
    compact();
}

/* Send the waiting PUTs again (a backup that restarted lost them), and
 * answer those whose leases ran out. */
static void retry(void) {
  int64_t now = now_ms();
  try_answer();
  if (now - last_retry < RETRY_MS)
    return;
  last_retry = now;
  connect_backups();
  for (int i = 0; i < PENDING; i++)
    if (pend[i].used && now - pend[i].sent >= RETRY_MS) {
      pend[i].sent = now;
      replicate(&pend[i]);
    }
}

static void put(conn *c, unsigned k, unsigned long v) {
  int slot = -1;
  for (int i = 0; i < PENDING && slot < 0; i++)
    if (!pend[i].used)
      slot = i;
  if (slot < 0) {
    say(c->fd, "BUSY\n");
    return;
  }
  pending *p = &pend[slot];
  p->used = 1;
  p->seq = ++next_seq;
  p->client = c->fd;
  p->key = k;
  p->value = v;
  p->sent = now_ms();
  p->acked_by = 0;
  wal_append(p->seq, k, v);
#ifdef KV_BUG_ACK_EARLY
  if (!unsynced)
    unsynced_since = now_ms(); /* the loop syncs the log 20 ms later */
  unsynced = 1;
#else
  wal_sync();
#endif
  val[k] = v;
  replicate(p);
}

/* Backup k has every committed write up to seq (HAVE: the state it was
 * sent), or logged write seq (ACK). */
static void logged(int k, unsigned long seq, int all) {
  if (k <= 0 || k >= nodes)
    return;
  if (all) {
    have[k] = seq;
    synced[k] = 1;
    return;
  }
  if (synced[k] && seq == have[k] + 1)
    have[k] = seq; /* it had every write before this one */
  for (int i = 0; i < PENDING; i++)
    if (pend[i].used && pend[i].seq == seq)
      pend[i].acked_by |= 1u << k;
  try_answer();
}

/* A backup asks for a lease: granted if it has every committed write;
 * else it is sent the committed state, and asks again. */
static void lease_asked(conn *c, unsigned long n) {
  int k = c->peer;
  if (k <= 0 || k >= nodes)
    return;
  if (!synced[k] || have[k] < acknowledged) {
    if (synced[k]) { /* (a state is on its way otherwise) */
      synced[k] = 0;
      send_state(c);
    }
    return;
  }
  lease_until[k] = now_ms() + LEASE_P;
  char line[LINE];
  snprintf(line, sizeof line, "GRANT %lu\n", n);
  say(c->fd, line);
}

/* ---- a backup ------------------------------------------------------------- */

static void ask_lease(void) {
  static int64_t last;
  int64_t now = now_ms();
  if (primary_fd < 0 || now - last < RETRY_MS)
    return;
  last = now;
  char line[LINE];
  snprintf(line, sizeof line, "LEASE? %lu\n", ++asked);
  asked_at = lease_clock();
  say(primary_fd, line);
}

static void granted(unsigned long n) {
  if (n == asked)
    lease_end = asked_at + LEASE_B;
}

static void from_primary(conn *c) {
  primary_fd = c->fd;
}

/* ---- messages ------------------------------------------------------- */

static void handle(conn *c, char *line) {
  unsigned long seq, v;
  unsigned k;
  char reply[LINE];
  if (sscanf(line, "PUT %u %lu", &k, &v) == 2 && id == 0 && k < KEYS) {
    put(c, k, v);
  } else if (sscanf(line, "GET %u", &k) == 1 && k < KEYS) {
    /* the primary once its last life's leases are over; a backup while it
     * holds one, for a key with no write it logged and has not seen
     * committed */
    if (id == 0 ? now_ms() >= quiet_until : lease_clock() < lease_end && !dirty[k] && !syncing)
      snprintf(reply, sizeof reply, "VAL %lu\n", cval[k]);
    else
      snprintf(reply, sizeof reply, "NOLEASE\n");
    say(c->fd, reply);
  } else if (sscanf(line, "REP %lu %u " VAL_IN, &seq, &k, &v) == 3 && id != 0 && k < KEYS) {
    from_primary(c);
    wal_append(seq, k, v);
    wal_sync();
    val[k] = v;
    if (seq > committed) /* (a write sent again after its commit is not news) */
      dirty[k] = seq;
    snprintf(reply, sizeof reply, "ACK %lu\n", seq);
    say(c->fd, reply);
  } else if (sscanf(line, "COMMIT %lu %u " VAL_IN, &seq, &k, &v) == 3 && id != 0 && k < KEYS) {
    cval[k] = v;
    if (seq > committed)
      committed = seq;
    if (dirty[k] <= seq)
      dirty[k] = 0;
  } else if (strcmp(line, "RESET") == 0 && id != 0) {
    from_primary(c);
    memset(cval, 0, sizeof cval);
    memset(dirty, 0, sizeof dirty);
    syncing = 1;
  } else if (sscanf(line, "SET %u " VAL_IN, &k, &v) == 2 && id != 0 && k < KEYS) {
    from_primary(c);
    wal_append(0, k, v);
    val[k] = cval[k] = v;
  } else if (sscanf(line, "UPTO %lu", &seq) == 1 && id != 0) {
    from_primary(c);
    wal_sync();
    if (seq > next_seq)
      next_seq = seq;
    committed = seq;
    syncing = 0;
    snprintf(reply, sizeof reply, "HAVE %lu\n", seq);
    say(c->fd, reply);
    if (wal_records >= 8 * COMPACT)
      compact();
  } else if (sscanf(line, "GRANT %lu", &seq) == 1 && id != 0) {
    granted(seq);
  } else if (sscanf(line, "ACK %lu", &seq) == 1 && id == 0) {
    logged(c->peer, seq, 0);
  } else if (sscanf(line, "HAVE %lu", &seq) == 1 && id == 0) {
    logged(c->peer, seq, 1);
  } else if (sscanf(line, "LEASE? %lu", &seq) == 1 && id == 0) {
    lease_asked(c, seq);
  }
}

/* Read what arrived on a connection and handle each whole line. */
static void input(conn *c) {
  ssize_t n = read(c->fd, c->in + c->len, sizeof c->in - c->len - 1);
  if (n <= 0) {
    if (n == 0 || (errno != EAGAIN && errno != EINTR))
      drop_conn(c);
    return;
  }
  c->len += (size_t)n;
  c->in[c->len] = 0;
  char *start = c->in, *nl;
  while ((nl = memchr(start, '\n', c->len - (size_t)(start - c->in)))) {
    *nl = 0;
    int fd = c->fd;
    handle(c, start);
    if (c->fd != fd)
      return; /* dropped meanwhile */
    start = nl + 1;
  }
#ifdef KV_BUG_PARTIAL
  if (start < c->in + c->len)
    handle(c, start); /* "the rest of the read is a line too" */
  c->len = 0;
#else
  c->len -= (size_t)(start - c->in);
  memmove(c->in, start, c->len);
  if (c->len == sizeof c->in - 1)
    drop_conn(c); /* a line longer than any message */
#endif
}

int main(int argc, char **argv) {
  if (argc < 3 || argc - 2 > MAXN) {
    fprintf(stderr, "usage: kvstore ID HOST:PORT HOST:PORT ...\n");
    return 2;
  }
  id = atoi(argv[1]);
  nodes = argc - 2;
  for (int k = 0; k < nodes; k++)
    if (parse_addr(argv[2 + k], &addr[k]) != 0) {
      fprintf(stderr, "kvstore: bad address %s\n", argv[2 + k]);
      return 2;
    }
  for (int i = 0; i < CONNS; i++)
    conns[i].fd = -1;
  int restart = access("wal", F_OK) == 0;
  load("snap", 0);
  long good = load("wal", 1);
  if (id == 0) { /* what it logged is committed from now on (after its quiet time) */
    memcpy(cval, val, sizeof cval);
    acknowledged = next_seq;
  }
  wal = open("wal", O_WRONLY | O_CREAT, 0644);
  if (wal < 0 || ftruncate(wal, good) != 0 || lseek(wal, good, SEEK_SET) != good)
    die("open wal"); /* a torn tail goes: new records follow the last whole one */
  wal_sync();
  sync_dir(); /* the log's name, the first time */

  int lfd = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr[id], sizeof addr[id]) != 0 ||
      listen(lfd, 16) != 0)
    die("listen");
  ep = epoll_create1(0);
  struct epoll_event le = {.events = EPOLLIN, .data.u32 = UINT32_MAX};
  if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &le) != 0)
    die("epoll");
  last_retry = now_ms() - RETRY_MS;
  if (restart)
    quiet_until = now_ms() + LEASE_P; /* the leases of its last life */
  for (;;) {
    struct epoll_event ev[16];
    int n = epoll_wait(ep, ev, 16, 50);
    if (n < 0 && errno != EINTR)
      die("epoll_wait");
    for (int i = 0; i < n; i++) {
      if (ev[i].data.u32 == UINT32_MAX) {
        int fd = accept(lfd, NULL, NULL);
        if (fd >= 0)
          add_conn(fd, -1, 0);
      } else if (conns[ev[i].data.u32].fd < 0) {
        continue; /* closed by an earlier event of this round */
      } else if (conns[ev[i].data.u32].connecting) {
        connected(&conns[ev[i].data.u32]);
      } else {
        input(&conns[ev[i].data.u32]);
      }
    }
#ifdef KV_BUG_ACK_EARLY
    if (unsynced && now_ms() - unsynced_since >= 20) { /* a group commit */
      wal_sync();
      unsynced = 0;
    }
#endif
    if (id == 0)
      retry();
    else
      ask_lease();
  }
}
