/* Sockets of program nodes: UDP as the simulator's datagrams, TCP as its
 * stream connections, and their readiness (poll, epoll).
 *
 * UDP: a datagram carries a 4-byte header (source and destination port).
 * TCP: the simulator's connections join nodes, not ports, so every send
 * on one is a frame of a type byte and its bytes: the connecting side's
 * first frame names the port it wants (PRELUDE); the other side answers
 * ACCEPT if a socket listens there, else resets the connection, which the
 * connecting side reports as ECONNREFUSED, as Linux does for a closed port.
 * DATA frames carry the stream; FIN is a shutdown of writing (half-close),
 * which the simulator's close cannot say. Every network fault of the
 * scenario applies: a reset is ECONNRESET (EPIPE on a send), a crashed
 * peer resets its connections, a peer that is down refuses. */
#define _GNU_SOURCE
#include "program/internal.h"
#include <simfuzz/simfuzz.h>
#include <simfuzz/simfuzz_runner.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/types.h>

#define SFP_DGRAM_MAX 65507u  /* a UDP payload, at most */
#define SFP_HDR 4             /* UDP: source port, destination port */
#define SFP_EPHEMERAL 49152u  /* the first port of an unbound socket */
#define SFP_FRAME 32768u      /* TCP bytes per simulator send, at most */
#define SFP_SPLIT_ONE_IN 16   /* TCP writes cut in two segments: one in this many */
#define SFP_RX_MAX (4u << 20) /* TCP bytes a socket holds unread; more resets it */
#define SFP_PIPE_MAX 65536u   /* a pipe's capacity, as Linux's default */

enum { F_PRELUDE = 'P', F_ACCEPT = 'A', F_DATA = 'D', F_FIN = 'F' };

#define C sfp__cur_c
#define N sfp__cur_n
#define W sfp__cur_w

/* ---- descriptors --------------------------------------------------------- */

static sfp_fd *fd_of(int fd) {
  if (fd < SFP_FD_FIRST || fd >= SFP_FD_FIRST + SFP_FDS)
    return NULL;
  sfp_fd *f = &sfp__self()->fd[fd - SFP_FD_FIRST];
  return f->kind != FD_FREE && !f->hidden ? f : NULL;
}

sfp_fd *sfp__fd(int fd) {
  return fd_of(fd);
}

static int fd_num(const sfp_node *me, const sfp_fd *f) {
  return SFP_FD_FIRST + (int)(f - me->fd);
}

static sfp_fd *fd_new(sfp_node *me, fd_kind kind) {
  for (int i = 0; i < SFP_FDS; i++) {
    if (me->fd[i].kind == FD_FREE) {
      memset(&me->fd[i], 0, sizeof me->fd[i]);
      me->fd[i].kind = kind;
      return &me->fd[i];
    }
  }
  return NULL;
}

static void fd_free(sfp_fd *f) {
  SIM_ASSERT(f->q || !f->qlen); /* enqueue's pair */
  for (uint32_t i = 0; i < f->qlen; i++)
    free(f->q[(f->qhead + i) % SFP_RXQ].data);
  free(f->q);
  free(f->rx);
  free(f->ep);
  memset(f, 0, sizeof *f);
}

/* Mark f's readiness as changed for every epoll instance of the node that
 * watches it (edge-triggered reports). */
static void touch(sfp_node *me, const sfp_fd *f) {
  int num = fd_num(me, f);
  sfp__poke(me); /* its threads in blocking calls check again */
  for (int i = 0; i < SFP_FDS; i++)
    if (me->fd[i].kind == FD_EPOLL)
      for (int j = 0; j < me->fd[i].ep_n; j++)
        if (me->fd[i].ep[j].fd == num)
          me->fd[i].ep[j].edge = 1;
}

static sfp_fd *bound_to(sfp_node *me, fd_kind kind, uint16_t port) {
  for (int i = 0; i < SFP_FDS; i++)
    if (me->fd[i].kind == kind && me->fd[i].port == port && !me->fd[i].hidden)
      return &me->fd[i];
  return NULL;
}

static sfp_fd *by_conn(sfp_node *me, sim_conn c) {
  for (int i = 0; i < SFP_FDS; i++)
    if (me->fd[i].kind == FD_TCP && me->fd[i].conn == c && me->fd[i].state != T_NEW &&
        !me->fd[i].lpeer)
      return &me->fd[i];
  return NULL;
}

void sfp__net_boot(sfp_node *me) {
  memset(me->fd, 0, sizeof me->fd);
  me->next_port = SFP_EPHEMERAL;
  me->seg_draws = 0;
  me->has_timers = 0;
  me->accept_seq = 0;
}

void sfp__net_end(sfp_node *me, sim_world *w, int k) {
  (void)w, (void)k; /* the simulator resets a crashed node's connections itself */
  for (int i = 0; i < SFP_FDS; i++)
    fd_free(&me->fd[i]);
}

static int node_of(uint32_t addr) {
  uint32_t base = sf_program_addr(0);
  if ((addr >> 8) != (base >> 8) || addr < base || addr - base >= (uint32_t)C->total)
    return -1;
  return (int)(addr - base);
}

static void to_sockaddr(struct sockaddr *sa, socklen_t *len, uint32_t addr, uint16_t port) {
  if (!sa || !len)
    return;
  struct sockaddr_in in;
  memset(&in, 0, sizeof in);
  in.sin_family = AF_INET;
  in.sin_port = htons(port);
  in.sin_addr.s_addr = htonl(addr);
  memcpy(sa, &in, *len < sizeof in ? *len : sizeof in);
  *len = sizeof in;
}

/* ---- the simulator's callbacks ---------------------------------------- */

static void enqueue(sfp_fd *f, const uint8_t *data, size_t len, uint32_t from_addr,
                    uint16_t from_port) {
  if (f->qlen == SFP_RXQ)
    return; /* a full socket buffer drops, as UDP does */
  if (!f->q && !(f->q = calloc(SFP_RXQ, sizeof *f->q)))
    sf_out_of_memory("a program's datagram queue");
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

void sfp__recv_cb(void *ctx, sim_world *w, int k, int from, const void *msg, size_t len) {
  sfp_cluster *c = ctx;
  sfp_node *me = &c->node[k];
  const uint8_t *m = msg;
  if (len < SFP_HDR || me->state != N_RUN)
    return;
  uint16_t sport = (uint16_t)(m[0] | m[1] << 8), dport = (uint16_t)(m[2] | m[3] << 8);
  sfp_fd *f = bound_to(me, FD_UDP, dport);
  if (f) {
    enqueue(f, m + SFP_HDR, len - SFP_HDR, sf_program_addr(from), sport);
    touch(me, f);
  }
  sfp__wake(c, w, k);
}

static int frame(sim_world *w, int k, sim_conn c, uint8_t type, const void *data, size_t len) {
  uint8_t buf[1 + SFP_FRAME];
  SIM_ASSERT(len <= SFP_FRAME);
  buf[0] = type;
  if (len)
    memcpy(buf + 1, data, len);
  return sim_conn_send(w, k, c, buf, 1 + len);
}

/* Append bytes to a descriptor's unread buffer (a stream's, a pipe's). */
static void buf_put(sfp_fd *f, const void *data, size_t len) {
  if (f->rx_off && f->rx_off + f->rx_len + len > f->rx_cap) { /* the read part goes */
    memmove(f->rx, f->rx + f->rx_off, f->rx_len);
    f->rx_off = 0;
  }
  if (f->rx_len + len > f->rx_cap) {
    size_t cap = f->rx_cap ? f->rx_cap : 4096;
    while (cap < f->rx_len + len)
      cap *= 2;
    uint8_t *rx = realloc(f->rx, cap);
    if (!rx)
      sf_out_of_memory("a program's stream");
    f->rx = rx;
    f->rx_cap = cap;
  }
  memcpy(f->rx + f->rx_off + f->rx_len, data, len);
  f->rx_len += len;
}

/* Take up to len unread bytes (only look, with peek); how many. */
static size_t buf_take(sfp_fd *f, void *buf, size_t len, int peek) {
  size_t n = f->rx_len < len ? f->rx_len : len;
  memcpy(buf, f->rx + f->rx_off, n);
  if (!peek) {
    f->rx_off += n;
    f->rx_len -= n;
    if (!f->rx_len)
      f->rx_off = 0;
  }
  return n;
}

static void rx_append(sim_world *w, sfp_fd *f, const uint8_t *data, size_t len) {
  if (f->rx_len + len > SFP_RX_MAX) { /* a reader that never reads: the stream breaks */
    sim_conn_reset(w, f->conn);
    return;
  }
  buf_put(f, data, len);
}

/* Connections accepted on the port and not yet taken by accept(). */
static int queued_on(const sfp_node *me, uint16_t port) {
  int n = 0;
  for (int i = 0; i < SFP_FDS; i++)
    n += me->fd[i].kind == FD_TCP && me->fd[i].hidden && me->fd[i].port == port &&
         me->fd[i].state == T_OPEN;
  return n;
}

/* The peer's first frame: the port it connects to. */
static void on_prelude(sim_world *w, int k, sfp_node *me, sfp_fd *f, const uint8_t *d, size_t len) {
  uint16_t port = len >= 4 ? (uint16_t)(d[0] | d[1] << 8) : 0;
  sfp_fd *l = len >= 4 ? bound_to(me, FD_LISTEN, port) : NULL;
  int queued = l ? queued_on(me, port) : 0;
  if (!l || queued >= l->backlog) { /* nobody listens, or the backlog is full */
    sim_conn_reset(w, f->conn);
    fd_free(f);
    return;
  }
  f->peer_port = (uint16_t)(d[2] | d[3] << 8);
  f->port = port;
  f->state = T_OPEN;
  f->seq = ++me->accept_seq;
  frame(w, k, f->conn, F_ACCEPT, NULL, 0);
  touch(me, l);
}

static void on_data(sim_world *w, int k, sfp_node *me, sfp_fd *f, const uint8_t *d, size_t len) {
  if (!len)
    return;
  if (d[0] == F_PRELUDE && f->state == T_PRELUDE)
    on_prelude(w, k, me, f, d + 1, len - 1);
  else if (d[0] == F_ACCEPT && f->state == T_HANDSHAKE)
    f->state = T_OPEN;
  else if (d[0] == F_DATA && f->state == T_OPEN)
    rx_append(w, f, d + 1, len - 1);
  else if (d[0] == F_FIN && f->state == T_OPEN)
    f->peer_eof = 1;
}

void sfp__conn_cb(void *ctx, sim_world *w, int k, sim_conn c, sim_conn_event ev, const void *data,
                  size_t len) {
  sfp_cluster *cl = ctx;
  sfp_node *me = &cl->node[k];
  if (me->state != N_RUN)
    return;
  sfp_fd *f = by_conn(me, c);
  if (ev == SIM_CONN_ACCEPTED) {
    f = fd_new(me, FD_TCP);
    if (!f) { /* out of descriptors: the connection is refused */
      sim_conn_reset(w, c);
      return;
    }
    f->hidden = 1;
    f->conn = c;
    f->peer = sim_conn_peer(w, c, k);
    f->state = T_PRELUDE;
    return;
  }
  if (!f)
    return;
  switch (ev) {
  case SIM_CONN_CONNECTED: {
    uint8_t pre[4] = {(uint8_t)f->peer_port, (uint8_t)(f->peer_port >> 8), (uint8_t)f->port,
                      (uint8_t)(f->port >> 8)};
    f->state = T_HANDSHAKE;
    frame(w, k, c, F_PRELUDE, pre, sizeof pre);
    break;
  }
  case SIM_CONN_DATA: on_data(w, k, me, f, data, len); break;
  case SIM_CONN_CLOSED: f->peer_eof = 1; break;
  case SIM_CONN_RESET:
  case SIM_CONN_REFUSED:
  case SIM_CONN_TIMEOUT:
    if (f->hidden) { /* never accepted: it goes as it came */
      fd_free(f);
      return;
    }
    f->err = ev == SIM_CONN_TIMEOUT                       ? ETIMEDOUT
             : f->state == T_OPEN && ev == SIM_CONN_RESET ? ECONNRESET
                                                          : ECONNREFUSED;
    f->state = T_DEAD;
    break;
  default: break;
  }
  if (f->kind != FD_FREE)
    touch(me, f);
  sfp__wake(cl, w, k);
}

/* ---- sockets ---------------------------------------------------------- */

int sfp_socket(int domain, int type, int protocol);
int sfp_socket(int domain, int type, int protocol) {
  if (domain != AF_INET)
    return sfp__fail_errno(EAFNOSUPPORT);
  int base = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
  fd_kind kind = base == SOCK_DGRAM ? FD_UDP : base == SOCK_STREAM ? FD_TCP : FD_FREE;
  if (kind == FD_FREE || (protocol != 0 && protocol != IPPROTO_UDP && protocol != IPPROTO_TCP))
    return sfp__fail_errno(EPROTONOSUPPORT);
  sfp_node *me = sfp__self();
  sfp_fd *f = fd_new(me, kind);
  if (!f)
    return sfp__fail_errno(EMFILE);
  f->nonblock = (type & SOCK_NONBLOCK) != 0;
  return fd_num(me, f);
}

static int in_addr_of(const struct sockaddr *sa, socklen_t len, uint32_t *addr, uint16_t *port) {
  if (!sa || len < sizeof(struct sockaddr_in) || sa->sa_family != AF_INET)
    return -1;
  struct sockaddr_in in;
  memcpy(&in, sa, sizeof in);
  *addr = ntohl(in.sin_addr.s_addr);
  *port = ntohs(in.sin_port);
  return 0;
}

int sfp_bind(int fd, const struct sockaddr *sa, socklen_t len);
int sfp_bind(int fd, const struct sockaddr *sa, socklen_t len) {
  sfp_fd *f = fd_of(fd);
  uint32_t a;
  uint16_t port;
  if (!f)
    return sfp__fail_errno(EBADF);
  if (in_addr_of(sa, len, &a, &port) != 0 || f->port)
    return sfp__fail_errno(EINVAL);
  if (a != INADDR_ANY && a != INADDR_LOOPBACK && a != sf_program_addr(N))
    return sfp__fail_errno(EADDRNOTAVAIL);
  sfp_node *me = sfp__self();
  if (port && (bound_to(me, f->kind, port) || (f->kind == FD_TCP && bound_to(me, FD_LISTEN, port))))
    return sfp__fail_errno(EADDRINUSE);
  f->port = port ? port : me->next_port++;
  return 0;
}

int sfp_listen(int fd, int backlog);
int sfp_listen(int fd, int backlog) {
  sfp_fd *f = fd_of(fd);
  if (!f || f->kind != FD_TCP || f->state != T_NEW)
    return sfp__fail_errno(f ? EINVAL : EBADF);
  if (!f->port)
    f->port = sfp__self()->next_port++;
  f->kind = FD_LISTEN;
  f->backlog = backlog < 1 ? 1 : backlog > SFP_FDS ? SFP_FDS : backlog;
  return 0;
}

/* Block until the TCP socket is no longer being connected. */
static int connect_wait(int fd) {
  for (;;) {
    sfp_fd *f = fd_of(fd);
    if (!f)
      return sfp__fail_errno(EBADF);
    if (f->state == T_OPEN)
      return 0;
    if (f->state == T_DEAD) {
      int e = f->err;
      f->err = 0;
      return sfp__fail_errno(e);
    }
    sfp__block_until(INT64_MAX);
  }
}

static int local_connect(sfp_fd *f, uint16_t port);

int sfp_connect(int fd, const struct sockaddr *sa, socklen_t len);
int sfp_connect(int fd, const struct sockaddr *sa, socklen_t len) {
  sfp_fd *f = fd_of(fd);
  uint32_t a;
  uint16_t port;
  if (!f)
    return sfp__fail_errno(EBADF);
  if (in_addr_of(sa, len, &a, &port) != 0)
    return sfp__fail_errno(EAFNOSUPPORT);
  if (f->kind == FD_UDP) { /* a default destination: not modelled yet */
    return sfp__fail_errno(EOPNOTSUPP);
  }
  if (f->kind != FD_TCP)
    return sfp__fail_errno(EINVAL);
  if (f->state == T_CONNECTING || f->state == T_HANDSHAKE)
    return sfp__fail_errno(EALREADY);
  if (f->state != T_NEW)
    return sfp__fail_errno(EISCONN);
  int to = a == INADDR_LOOPBACK ? N : node_of(a);
  if (to < 0)
    return sfp__fail_errno(ENETUNREACH);
  if (to == N)
    return local_connect(f, port);
  int64_t c = sim_connect(W, N, to);
  if (c < 0)
    return sfp__fail_errno(c == -EMFILE ? EAGAIN : ENETUNREACH);
  if (!f->port)
    f->port = sfp__self()->next_port++;
  f->conn = (sim_conn)c;
  f->peer = to;
  f->peer_port = port;
  f->state = T_CONNECTING;
  if (f->nonblock)
    return sfp__fail_errno(EINPROGRESS);
  return connect_wait(fd);
}

/* The other end of a TCP connection inside the node, or NULL once it is
 * closed (its slot free, or another descriptor's). */
static sfp_fd *local_end(sfp_node *me, const sfp_fd *f) {
  SIM_ASSERT(f->lpeer > 0 && f->lpeer <= SFP_FDS);
  sfp_fd *p = &me->fd[f->lpeer - 1];
  return p->kind == FD_TCP && p->lpeer == 1 + (int)(f - me->fd) ? p : NULL;
}

static sfp_fd *first_queued(sfp_node *me, uint16_t port);

/* A connect to the node's own address: both ends are descriptors of the
 * node, joined with no network between them (the scenario's faults are
 * the network's, and loopback has none); the accepted end waits in the
 * listener's queue. Open at once; EINPROGRESS when non-blocking, as Linux
 * says for TCP, with the socket already writable. */
static int local_connect(sfp_fd *f, uint16_t port) {
  sfp_node *me = sfp__self();
  sfp_fd *l = bound_to(me, FD_LISTEN, port);
  int queued = l ? queued_on(me, port) : 0;
  if (!l || queued >= l->backlog)
    return sfp__fail_errno(ECONNREFUSED);
  sfp_fd *a = fd_new(me, FD_TCP);
  if (!a)
    return sfp__fail_errno(EAGAIN); /* as a remote connect out of resources */
  if (!f->port)
    f->port = me->next_port++;
  a->hidden = 1;
  a->state = T_OPEN;
  a->port = port;
  a->peer = N;
  a->peer_port = f->port;
  a->seq = ++me->accept_seq;
  a->lpeer = 1 + (int)(f - me->fd);
  f->state = T_OPEN;
  f->peer = N;
  f->peer_port = port;
  f->lpeer = 1 + (int)(a - me->fd);
  SIM_ASSERT(local_end(me, f) == a && local_end(me, a) == f);
  touch(me, l);
  touch(me, f);
  return f->nonblock ? sfp__fail_errno(EINPROGRESS) : 0;
}

static sfp_fd *first_queued(sfp_node *me, uint16_t port) {
  sfp_fd *best = NULL;
  for (int i = 0; i < SFP_FDS; i++) {
    sfp_fd *f = &me->fd[i];
    if (f->kind == FD_TCP && f->hidden && f->port == port && f->state == T_OPEN &&
        (!best || f->seq < best->seq))
      best = f;
  }
  return best;
}

int sfp_accept4(int fd, struct sockaddr *sa, socklen_t *len, int flags);
int sfp_accept4(int fd, struct sockaddr *sa, socklen_t *len, int flags) {
  for (;;) {
    sfp_fd *l = fd_of(fd);
    if (!l || l->kind != FD_LISTEN)
      return sfp__fail_errno(l ? EINVAL : EBADF);
    sfp_node *me = sfp__self();
    sfp_fd *f = first_queued(me, l->port);
    if (f) {
      f->hidden = 0;
      f->nonblock = (flags & SOCK_NONBLOCK) != 0;
      to_sockaddr(sa, len, sf_program_addr(f->peer), f->peer_port);
      return fd_num(me, f);
    }
    if (l->nonblock)
      return sfp__fail_errno(EAGAIN);
    sfp__block_until(INT64_MAX);
  }
}

int sfp_accept(int fd, struct sockaddr *sa, socklen_t *len);
int sfp_accept(int fd, struct sockaddr *sa, socklen_t *len) {
  return sfp_accept4(fd, sa, len, 0);
}

/* Where a write of len bytes is cut in two segments, as TCP may send it
 * (a reader can then see the first part alone), or len for one piece: a
 * write in SFP_SPLIT_ONE_IN is cut, at a uniform point. The draws are the
 * node's own (one stream per incarnation), apart from its random stream. */
static size_t segment_cut(size_t len) {
  sfp_node *me = sfp__self();
  if (len < 2)
    return len;
  uint64_t stream = sim_stream_id(0xc5, (unsigned)N, sim_node_incarnation(W, N));
  uint64_t r = sim_draw(W, stream, me->seg_draws++);
  return r % SFP_SPLIT_ONE_IN ? len : 1 + (size_t)((r >> 8) % (len - 1));
}

static ssize_t tcp_send(int fd, sfp_fd *f, const void *buf, size_t len) {
  (void)fd;
  if (f->state == T_DEAD) {
    int e = f->err == ECONNRESET ? ECONNRESET : EPIPE;
    return sfp__fail_errno(e);
  }
  if (f->state != T_OPEN)
    return sfp__fail_errno(ENOTCONN);
  if (f->wr_shut)
    return sfp__fail_errno(EPIPE);
  if (f->lpeer) { /* inside the node: into the other end's bytes, whole */
    sfp_node *me = sfp__self();
    sfp_fd *p = local_end(me, f);
    if (!p || p->state != T_OPEN)
      return sfp__fail_errno(EPIPE);
    if (p->rx_len + len > SFP_RX_MAX) { /* a reader that never reads, as below */
      p->state = f->state = T_DEAD;
      p->err = f->err = ECONNRESET;
      touch(me, p);
      touch(me, f);
      return sfp__fail_errno(ECONNRESET);
    }
    buf_put(p, buf, len);
    touch(me, p);
    return (ssize_t)len;
  }
  const uint8_t *b = buf;
  size_t cut = segment_cut(len);
  for (size_t off = 0; off < len;) {
    size_t n = len - off < SFP_FRAME ? len - off : SFP_FRAME;
    if (off < cut && off + n > cut)
      n = cut - off;
    if (frame(W, N, f->conn, F_DATA, b + off, n) != 0)
      return off ? (ssize_t)off : sfp__fail_errno(EPIPE);
    off += n;
  }
  return (ssize_t)len;
}

static ssize_t tcp_recv(int fd, void *buf, size_t len, int flags) {
  for (;;) {
    sfp_fd *f = fd_of(fd);
    if (!f)
      return sfp__fail_errno(EBADF);
    if (f->rx_len)
      return (ssize_t)buf_take(f, buf, len, flags & MSG_PEEK);
    if (f->peer_eof || len == 0)
      return 0;
    if (f->state == T_DEAD)
      return sfp__fail_errno(f->err ? f->err : ECONNRESET);
    if (f->state == T_NEW)
      return sfp__fail_errno(ENOTCONN);
    if (f->nonblock || (flags & MSG_DONTWAIT))
      return sfp__fail_errno(EAGAIN);
    sfp__block_until(INT64_MAX);
  }
}

ssize_t sfp_sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *sa,
                   socklen_t salen);
ssize_t sfp_sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *sa,
                   socklen_t salen) {
  (void)flags;
  sfp_fd *f = fd_of(fd);
  uint32_t a;
  uint16_t dport;
  if (!f)
    return sfp__fail_errno(EBADF);
  if (f->kind == FD_TCP)
    return tcp_send(fd, f, buf, len);
  if (f->kind != FD_UDP)
    return sfp__fail_errno(ENOTSOCK);
  if (in_addr_of(sa, salen, &a, &dport) != 0)
    return sfp__fail_errno(EDESTADDRREQ);
  if (len > SFP_DGRAM_MAX)
    return sfp__fail_errno(EMSGSIZE);
  sfp_node *me = sfp__self();
  if (!f->port)
    f->port = me->next_port++;
  if (a == INADDR_LOOPBACK || a == sf_program_addr(N)) { /* to itself: no network */
    sfp_fd *to = bound_to(me, FD_UDP, dport);
    if (to) {
      enqueue(to, buf, len, a, f->port);
      touch(me, to);
    }
    return (ssize_t)len;
  }
  int to = node_of(a);
  if (to < 0)
    return (ssize_t)len; /* no such host: the datagram is lost */
  uint8_t *m = malloc(SFP_HDR + len);
  if (!m)
    sf_out_of_memory("a program's datagram");
  m[0] = (uint8_t)f->port, m[1] = (uint8_t)(f->port >> 8);
  m[2] = (uint8_t)dport, m[3] = (uint8_t)(dport >> 8);
  memcpy(m + SFP_HDR, buf, len);
  sim_send(W, N, to, m, SFP_HDR + len);
  free(m);
  return (ssize_t)len;
}

ssize_t sfp_send(int fd, const void *buf, size_t len, int flags);
ssize_t sfp_send(int fd, const void *buf, size_t len, int flags) {
  sfp_fd *f = fd_of(fd);
  if (f && f->kind == FD_UDP)
    return sfp__fail_errno(EDESTADDRREQ);
  return sfp_sendto(fd, buf, len, flags, NULL, 0);
}

ssize_t sfp_recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *sa,
                     socklen_t *salen);
ssize_t sfp_recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *sa,
                     socklen_t *salen) {
  sfp_fd *f = fd_of(fd);
  if (!f)
    return sfp__fail_errno(EBADF);
  if (f->kind == FD_TCP) {
    ssize_t r = tcp_recv(fd, buf, len, flags);
    f = fd_of(fd);
    if (r >= 0 && f)
      to_sockaddr(sa, salen, sf_program_addr(f->peer), f->peer_port);
    return r;
  }
  if (f->kind != FD_UDP)
    return sfp__fail_errno(ENOTSOCK);
  while (f->qlen == 0) {
    if (f->nonblock || (flags & MSG_DONTWAIT))
      return sfp__fail_errno(EAGAIN);
    sfp__block_until(INT64_MAX);
    f = fd_of(fd);
    if (!f)
      return sfp__fail_errno(EBADF);
  }
  dgram *d = &f->q[f->qhead];
  size_t n = d->len < len ? d->len : len;
  memcpy(buf, d->data, n);
  to_sockaddr(sa, salen, d->from_addr, d->from_port);
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

static long pipe_read(int fd, void *buf, size_t len);
static long pipe_write(sfp_fd *f, const void *buf, size_t len);
static long event_read(int fd, void *buf, size_t len);
static long event_write(sfp_fd *f, const void *buf, size_t len);

static long timer_read(int fd, void *buf, size_t len);

long sfp__sock_read(int fd, void *buf, size_t len) {
  sfp_fd *f = fd_of(fd);
  if (f && f->kind == FD_PIPE_R)
    return pipe_read(fd, buf, len);
  if (f && f->kind == FD_EVENT)
    return event_read(fd, buf, len);
  if (f && f->kind == FD_TIMER)
    return timer_read(fd, buf, len);
  if (f && f->kind == FD_PIPE_W)
    return sfp__fail_errno(EBADF);
  return sfp_recvfrom(fd, buf, len, 0, NULL, NULL);
}

long sfp__sock_write(int fd, const void *buf, size_t len) {
  sfp_fd *f = fd_of(fd);
  if (f && f->kind == FD_PIPE_W)
    return pipe_write(f, buf, len);
  if (f && f->kind == FD_EVENT)
    return event_write(f, buf, len);
  if (f && (f->kind == FD_PIPE_R || f->kind == FD_TIMER))
    return sfp__fail_errno(f->kind == FD_TIMER ? EINVAL : EBADF);
  return sfp_send(fd, buf, len, 0);
}

int sfp_shutdown(int fd, int how);
int sfp_shutdown(int fd, int how) {
  sfp_fd *f = fd_of(fd);
  if (!f)
    return sfp__fail_errno(EBADF);
  if (f->kind != FD_TCP || f->state != T_OPEN)
    return sfp__fail_errno(ENOTCONN);
  if ((how == SHUT_WR || how == SHUT_RDWR) && !f->wr_shut) {
    f->wr_shut = 1;
    sfp_fd *p = f->lpeer ? local_end(sfp__self(), f) : NULL;
    if (p) { /* inside the node: the other end reads end of file */
      p->peer_eof = 1;
      touch(sfp__self(), p);
    } else if (!f->lpeer) {
      frame(W, N, f->conn, F_FIN, NULL, 0);
    }
  }
  return 0;
}

int sfp_close(int fd);
int sfp_close(int fd) {
  sfp_fd *f = fd_of(fd);
  if (!f)
    return sfp__fail_errno(EBADF);
  sfp_node *me = sfp__self();
  sfp_fd *lp = f->kind == FD_TCP && f->lpeer ? local_end(me, f) : NULL;
  if (lp) { /* inside the node: the other end reads end of file */
    lp->peer_eof = 1;
    touch(me, lp);
  } else if (f->kind == FD_TCP && !f->lpeer && f->state != T_NEW && f->state != T_DEAD) {
    sim_conn_close(W, N, f->conn);
  }
  if (f->kind == FD_LISTEN) /* its queue goes with it: those peers see a reset */
    for (sfp_fd *q; (q = first_queued(me, f->port)) != NULL;) {
      sfp_fd *c = q->lpeer ? local_end(me, q) : NULL;
      if (c) {
        c->state = T_DEAD;
        c->err = ECONNRESET;
        touch(me, c);
      } else if (!q->lpeer) {
        sim_conn_reset(W, q->conn);
      }
      fd_free(q);
    }
  if (f->kind == FD_PIPE_W && me->fd[f->peer].kind == FD_PIPE_R) {
    me->fd[f->peer].peer_eof = 1; /* its reader reads end of file */
    touch(me, &me->fd[f->peer]);
  }
  if (f->kind == FD_PIPE_R) /* its writers get EPIPE */
    for (int i = 0; i < SFP_FDS; i++)
      if (me->fd[i].kind == FD_PIPE_W && &me->fd[me->fd[i].peer] == f)
        me->fd[i].err = EPIPE;
  int num = fd_num(me, f);
  fd_free(f);
  for (int i = 0; i < SFP_FDS; i++) /* epoll instances forget it, as Linux does */
    for (int j = 0; me->fd[i].kind == FD_EPOLL && j < me->fd[i].ep_n; j++)
      if (me->fd[i].ep[j].fd == num)
        me->fd[i].ep[j--] = me->fd[i].ep[--me->fd[i].ep_n];
  return 0;
}

int sfp_setsockopt(int fd, int level, int name, const void *val, socklen_t len);
int sfp_setsockopt(int fd, int level, int name, const void *val, socklen_t len) {
  (void)level, (void)name, (void)val, (void)len;
  return fd_of(fd) ? 0 : sfp__fail_errno(EBADF);
}

int sfp_getsockopt(int fd, int level, int name, void *val, socklen_t *len);
int sfp_getsockopt(int fd, int level, int name, void *val, socklen_t *len) {
  sfp_fd *f = fd_of(fd);
  if (!f)
    return sfp__fail_errno(EBADF);
  int v = 0;
  if (level == SOL_SOCKET && name == SO_ERROR) { /* a non-blocking connect's outcome */
    v = f->state == T_DEAD ? f->err : 0;
    if (f->state == T_DEAD)
      f->err = 0;
  } else if (level == SOL_SOCKET && name == SO_TYPE) {
    v = f->kind == FD_UDP ? SOCK_DGRAM : SOCK_STREAM;
  }
  if (val && len && *len >= sizeof v) {
    memcpy(val, &v, sizeof v);
    *len = sizeof v;
  }
  return 0;
}

int sfp_getsockname(int fd, struct sockaddr *sa, socklen_t *len);
int sfp_getsockname(int fd, struct sockaddr *sa, socklen_t *len) {
  sfp_fd *f = fd_of(fd);
  if (!f)
    return sfp__fail_errno(EBADF);
  to_sockaddr(sa, len, sf_program_addr(N), f->port);
  return 0;
}

int sfp_getpeername(int fd, struct sockaddr *sa, socklen_t *len);
int sfp_getpeername(int fd, struct sockaddr *sa, socklen_t *len) {
  sfp_fd *f = fd_of(fd);
  if (!f)
    return sfp__fail_errno(EBADF);
  if (f->kind != FD_TCP || f->state != T_OPEN)
    return sfp__fail_errno(ENOTCONN);
  to_sockaddr(sa, len, sf_program_addr(f->peer), f->peer_port);
  return 0;
}

int sfp_fcntl(int fd, int cmd, ...);
int sfp_fcntl(int fd, int cmd, ...) {
  sfp_fd *f = fd_of(fd);
  if (!f)
    return sfp__fail_errno(EBADF);
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
  return sfp__fail_errno(EINVAL);
}

int sfp_fcntl64(int fd, int cmd, ...);
int sfp_fcntl64(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  long arg = va_arg(ap, long); /* (a word whatever the command; unused by some) */
  va_end(ap);
  return sfp_fcntl(fd, cmd, arg);
}

int sfp_ioctl(int fd, unsigned long req, ...);
int sfp_ioctl(int fd, unsigned long req, ...) {
  sfp_fd *f = fd_of(fd);
  if (!f)
    return sfp__fail_errno(EBADF);
  va_list ap;
  va_start(ap, req);
  int *arg = va_arg(ap, int *);
  va_end(ap);
  if (req == FIONREAD) {
    size_t n = f->kind == FD_UDP ? (f->qlen ? f->q[f->qhead].len : 0) : f->rx_len;
    *arg = n > 0x7fffffff ? 0x7fffffff : (int)n;
    return 0;
  }
  if (req == FIONBIO) {
    f->nonblock = *arg != 0;
    return 0;
  }
  return sfp__fail_errno(ENOTTY);
}

/* ---- readiness ---------------------------------------------------------- */

/* A timerfd's expirations up to now join its count; returns the count. */
static uint64_t timer_update(sfp_fd *f) {
  int64_t now = sfp__mono_now();
  if (!f->t_armed || now < f->t_next)
    return f->count;
  uint64_t n = 1;
  if (f->t_every > 0) {
    n += (uint64_t)((now - f->t_next) / f->t_every);
    f->t_next += (int64_t)n * f->t_every;
  } else {
    f->t_armed = 0;
  }
  f->count = n > UINT64_MAX - f->count ? UINT64_MAX : f->count + n;
  touch(sfp__self(), f);
  return f->count;
}

/* What a descriptor is ready for now, as poll's bits (POLLNVAL if it is
 * not one). */
static short ready_for(int fd) {
  sfp_fd *f = fd_of(fd);
  if (!f)
    return POLLNVAL;
  switch (f->kind) {
  case FD_UDP: return (short)((f->qlen ? POLLIN : 0) | POLLOUT);
  case FD_LISTEN: return first_queued(sfp__self(), f->port) ? POLLIN : 0;
  case FD_PIPE_R: /* readable with bytes, or at end of file (no write end) */
    return (short)(f->rx_len || f->peer_eof ? POLLIN : 0) | (f->peer_eof ? POLLHUP : 0);
  case FD_PIPE_W: {
    const sfp_fd *r = &sfp__self()->fd[f->peer];
    return r->kind != FD_PIPE_R ? POLLERR : r->rx_len < SFP_PIPE_MAX ? POLLOUT : 0;
  }
  case FD_EVENT:
    return (short)((f->count ? POLLIN : 0) | (f->count < UINT64_MAX - 1 ? POLLOUT : 0));
  case FD_TIMER: return timer_update(f) ? POLLIN : 0;
  case FD_RANDOM: return POLLIN | POLLOUT;
  case FD_TCP: {
    short r = 0;
    if (f->rx_len || f->peer_eof || f->state == T_DEAD)
      r |= POLLIN;
    if (f->peer_eof)
      r |= POLLRDHUP;
    if (f->state == T_OPEN && !f->wr_shut)
      r |= POLLOUT;
    if (f->state == T_DEAD)
      r |= POLLERR | POLLHUP;
    if (f->peer_eof && f->wr_shut)
      r |= POLLHUP;
    return r;
  }
  default: return 0;
  }
}

int sfp_poll(struct pollfd *fds, nfds_t n, int timeout_ms);
int sfp_poll(struct pollfd *fds, nfds_t n, int timeout_ms) {
  if (n > SFP_FDS + SFP_FD_FIRST)
    return sfp__fail_errno(EINVAL);
  int64_t until = timeout_ms < 0 ? INT64_MAX : sfp__mono_now() + (int64_t)timeout_ms * 1000000;
  for (;;) {
    int ready = 0;
    for (nfds_t i = 0; i < n; i++) {
      fds[i].revents = 0;
      if (fds[i].fd < 0)
        continue;
      short r = ready_for(fds[i].fd);
      fds[i].revents = (short)(r & (fds[i].events | POLLERR | POLLHUP | POLLNVAL));
      ready += fds[i].revents != 0;
    }
    if (ready || timeout_ms == 0 || sfp__mono_now() >= until)
      return ready;
    sfp__block_until(until);
  }
}

int sfp_epoll_create1(int flags);
int sfp_epoll_create1(int flags) {
  (void)flags;
  sfp_node *me = sfp__self();
  sfp_fd *f = fd_new(me, FD_EPOLL);
  if (!f)
    return sfp__fail_errno(EMFILE);
  f->ep = calloc(SFP_EPOLL_MAX, sizeof *f->ep);
  if (!f->ep)
    sf_out_of_memory("a program's epoll instance");
  return fd_num(me, f);
}

int sfp_epoll_create(int size);
int sfp_epoll_create(int size) {
  return size <= 0 ? sfp__fail_errno(EINVAL) : sfp_epoll_create1(0);
}

int sfp_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev);
int sfp_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev) {
  sfp_fd *e = fd_of(epfd);
  if (!e || !fd_of(fd))
    return sfp__fail_errno(EBADF);
  if (e->kind != FD_EPOLL || fd == epfd)
    return sfp__fail_errno(EINVAL);
  sfp__poke(sfp__self()); /* a thread in epoll_wait on it checks again */
  int j = 0;
  while (j < e->ep_n && e->ep[j].fd != fd)
    j++;
  if (op == EPOLL_CTL_DEL) {
    if (j == e->ep_n)
      return sfp__fail_errno(ENOENT);
    e->ep[j] = e->ep[--e->ep_n];
    return 0;
  }
  if (!ev)
    return sfp__fail_errno(EFAULT);
  if (op == EPOLL_CTL_ADD && j < e->ep_n)
    return sfp__fail_errno(EEXIST);
  if (op == EPOLL_CTL_MOD && j == e->ep_n)
    return sfp__fail_errno(ENOENT);
  if (op != EPOLL_CTL_ADD && op != EPOLL_CTL_MOD)
    return sfp__fail_errno(EINVAL);
  if (j == e->ep_n) {
    if (e->ep_n == SFP_EPOLL_MAX)
      return sfp__fail_errno(ENOSPC);
    e->ep_n++;
  }
  e->ep[j] = (ep_item){fd, ev->events, ev->data.u64, 1}; /* reported once if ready now */
  return 0;
}

/* The ready items of an epoll instance into out (at most max). */
static int ep_collect(sfp_fd *e, struct epoll_event *out, int max) {
  int n = 0;
  for (int j = 0; j < e->ep_n && n < max; j++) {
    ep_item *it = &e->ep[j];
    uint32_t want = it->events | EPOLLERR | EPOLLHUP;
    uint32_t r = (uint32_t)(unsigned short)ready_for(it->fd) & want;
    if (!r || (it->events & EPOLLONESHOT && it->events & 0x80000000u))
      continue;
    if (it->events & EPOLLET) {
      if (!it->edge)
        continue;
      it->edge = 0;
    }
    if (it->events & EPOLLONESHOT)
      it->events |= 0x80000000u; /* disabled until EPOLL_CTL_MOD */
    out[n].events = r;
    out[n].data.u64 = it->data;
    n++;
  }
  return n;
}

int sfp_epoll_wait(int epfd, struct epoll_event *events, int max, int timeout_ms);
int sfp_epoll_wait(int epfd, struct epoll_event *events, int max, int timeout_ms) {
  if (max <= 0 || !events)
    return sfp__fail_errno(EINVAL);
  int64_t until = timeout_ms < 0 ? INT64_MAX : sfp__mono_now() + (int64_t)timeout_ms * 1000000;
  for (;;) {
    sfp_fd *e = fd_of(epfd);
    if (!e || e->kind != FD_EPOLL)
      return sfp__fail_errno(e ? EINVAL : EBADF);
    int n = ep_collect(e, events, max);
    if (n || timeout_ms == 0 || sfp__mono_now() >= until)
      return n;
    sfp__block_until(until);
  }
}

int sfp_inet_pton(int af, const char *src, void *dst);
int sfp_inet_pton(int af, const char *src, void *dst) {
  if (af != AF_INET)
    return sfp__fail_errno(EAFNOSUPPORT);
  unsigned a, b, c, d;
  char end;
  if (sscanf(src, "%3u.%3u.%3u.%3u%c", &a, &b, &c, &d, &end) != 4 || a > 255 || b > 255 ||
      c > 255 || d > 255)
    return 0;
  uint32_t v = htonl(a << 24 | b << 16 | c << 8 | d);
  memcpy(dst, &v, 4);
  return 1;
}

/* ---- names ------------------------------------------------------------- */

/* A host name of the cluster: "nodeK", "localhost", or IPv4 text. */
static int host_addr(const char *host, uint32_t *addr) {
  unsigned k;
  char end;
  if (strcmp(host, "localhost") == 0) {
    *addr = INADDR_LOOPBACK;
    return 0;
  }
  if (sscanf(host, "node%u%c", &k, &end) == 1 && k < (unsigned)sfp__cur_c->n) {
    *addr = sf_program_addr((int)k);
    return 0;
  }
  uint32_t be;
  if (sfp_inet_pton(AF_INET, host, &be) == 1) {
    *addr = ntohl(be);
    return 0;
  }
  return -1;
}

void *sfp_malloc(size_t n);
void sfp_free(void *p);
void sfp_freeaddrinfo(struct addrinfo *ai);

int sfp_getaddrinfo(const char *host, const char *service, const struct addrinfo *hints,
                    struct addrinfo **res);
int sfp_getaddrinfo(const char *host, const char *service, const struct addrinfo *hints,
                    struct addrinfo **res) {
  int family = hints ? hints->ai_family : AF_UNSPEC;
  int type = hints ? hints->ai_socktype : 0;
  int flags = hints ? hints->ai_flags : 0;
  if (family != AF_UNSPEC && family != AF_INET)
    return EAI_FAMILY;
  uint32_t addr = flags & AI_PASSIVE ? INADDR_ANY : INADDR_LOOPBACK;
  if (host && host_addr(host, &addr) != 0)
    return EAI_NONAME;
  unsigned long port = 0;
  if (service) {
    char *end;
    port = strtoul(service, &end, 10);
    if (*end || port > 65535)
      return EAI_SERVICE;
  }
  int types[2] = {type ? type : SOCK_STREAM, type ? 0 : SOCK_DGRAM};
  struct addrinfo *head = NULL, **tail = &head;
  for (int i = 0; i < 2 && types[i]; i++) {
    struct addrinfo *ai = sfp_malloc(sizeof *ai + sizeof(struct sockaddr_in));
    if (!ai) {
      sfp_freeaddrinfo(head);
      return EAI_MEMORY;
    }
    memset(ai, 0, sizeof *ai + sizeof(struct sockaddr_in));
    struct sockaddr_in *in = (struct sockaddr_in *)(void *)(ai + 1);
    in->sin_family = AF_INET;
    in->sin_port = htons((uint16_t)port);
    in->sin_addr.s_addr = htonl(addr);
    ai->ai_family = AF_INET;
    ai->ai_socktype = types[i];
    ai->ai_protocol = types[i] == SOCK_STREAM ? IPPROTO_TCP : IPPROTO_UDP;
    ai->ai_addrlen = sizeof *in;
    ai->ai_addr = (struct sockaddr *)in;
    *tail = ai;
    tail = &ai->ai_next;
  }
  *res = head;
  return 0;
}

void sfp_freeaddrinfo(struct addrinfo *ai) {
  while (ai) {
    struct addrinfo *next = ai->ai_next;
    sfp_free(ai);
    ai = next;
  }
}

/* ---- pipes and eventfd: inside the node --------------------------------- */

int sfp_pipe2(int fds[2], int flags);
int sfp_pipe2(int fds[2], int flags) {
  sfp_node *me = sfp__self();
  sfp_fd *r = fd_new(me, FD_PIPE_R);
  sfp_fd *w = r ? fd_new(me, FD_PIPE_W) : NULL;
  if (!w) {
    if (r)
      fd_free(r);
    return sfp__fail_errno(EMFILE);
  }
  r->nonblock = w->nonblock = (flags & O_NONBLOCK) != 0;
  w->peer = (int)(r - me->fd);
  fds[0] = fd_num(me, r);
  fds[1] = fd_num(me, w);
  return 0;
}

int sfp_pipe(int fds[2]);
int sfp_pipe(int fds[2]) {
  return sfp_pipe2(fds, 0);
}

static long pipe_write(sfp_fd *f, const void *buf, size_t len) {
  sfp_node *me = sfp__self();
  sfp_fd *r = &me->fd[f->peer];
  if (f->err || r->kind != FD_PIPE_R)
    return sfp__fail_errno(EPIPE);
  size_t room = SFP_PIPE_MAX - r->rx_len;
  if (!room && len) {
    if (f->nonblock)
      return sfp__fail_errno(EAGAIN);
    /* one thread, and it alone reads this pipe: it would wait forever */
    return sfp__fail_errno(EDEADLK);
  }
  size_t n = len < room ? len : room;
  buf_put(r, buf, n);
  touch(me, r);
  return (long)n;
}

static long pipe_read(int fd, void *buf, size_t len) {
  for (;;) {
    sfp_fd *f = fd_of(fd);
    if (!f)
      return sfp__fail_errno(EBADF);
    if (f->rx_len)
      return (long)buf_take(f, buf, len, 0);
    if (f->peer_eof || !len)
      return 0;
    if (f->nonblock)
      return sfp__fail_errno(EAGAIN);
    sfp__block_until(INT64_MAX); /* (only a signal could fill it: none will) */
  }
}

int sfp_eventfd(unsigned initval, int flags);
int sfp_eventfd(unsigned initval, int flags) {
  sfp_node *me = sfp__self();
  sfp_fd *f = fd_new(me, FD_EVENT);
  if (!f)
    return sfp__fail_errno(EMFILE);
  f->count = initval;
  f->nonblock = (flags & O_NONBLOCK) != 0;
  f->semaphore = (flags & 1) != 0; /* EFD_SEMAPHORE */
  return fd_num(me, f);
}

static long event_write(sfp_fd *f, const void *buf, size_t len) {
  uint64_t v;
  if (len < sizeof v)
    return sfp__fail_errno(EINVAL);
  memcpy(&v, buf, sizeof v);
  if (v == UINT64_MAX)
    return sfp__fail_errno(EINVAL);
  if (v > UINT64_MAX - 1 - f->count)
    return sfp__fail_errno(EAGAIN);
  f->count += v;
  touch(sfp__self(), f);
  return (long)sizeof v;
}

/* A read of an eventfd's or a timerfd's 8-byte count: what `take` takes
 * from the descriptor (0: nothing yet), waiting for it unless the
 * descriptor is non-blocking. */
static long counter_read(int fd, void *buf, size_t len, uint64_t (*take)(sfp_fd *f)) {
  if (len < sizeof(uint64_t))
    return sfp__fail_errno(EINVAL);
  for (;;) {
    sfp_fd *f = fd_of(fd);
    if (!f)
      return sfp__fail_errno(EBADF);
    uint64_t v = take(f);
    if (v) {
      memcpy(buf, &v, sizeof v);
      return (long)sizeof v;
    }
    if (f->nonblock)
      return sfp__fail_errno(EAGAIN);
    sfp__block_until(f->kind == FD_TIMER && f->t_armed ? f->t_next : INT64_MAX);
  }
}

static uint64_t event_take(sfp_fd *f) {
  uint64_t v = f->semaphore && f->count ? 1 : f->count;
  f->count -= v;
  return v;
}

static long event_read(int fd, void *buf, size_t len) {
  return counter_read(fd, buf, len, event_take);
}

/* ---- timerfd: a timer as a descriptor ------------------------------------ */

int sfp_timerfd_create(int clock, int flags);
int sfp_timerfd_create(int clock, int flags) {
  if (clock != CLOCK_MONOTONIC && clock != CLOCK_REALTIME && clock != CLOCK_BOOTTIME)
    return sfp__fail_errno(EINVAL);
  sfp_node *me = sfp__self();
  sfp_fd *f = fd_new(me, FD_TIMER);
  if (!f)
    return sfp__fail_errno(EMFILE);
  f->nonblock = (flags & TFD_NONBLOCK) != 0;
  f->t_clock = clock;
  me->has_timers = 1;
  return fd_num(me, f);
}

static int64_t ts_ns(const struct timespec *t) {
  int64_t s = t->tv_sec > 1000000000 ? 1000000000 : t->tv_sec; /* bounded: no overflow */
  return s * 1000000000ll + t->tv_nsec;
}

static struct timespec ns_ts(int64_t ns) {
  struct timespec t = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
  return t;
}

int sfp_timerfd_gettime(int fd, struct itimerspec *cur);
int sfp_timerfd_gettime(int fd, struct itimerspec *cur) {
  sfp_fd *f = fd_of(fd);
  if (!f || f->kind != FD_TIMER)
    return sfp__fail_errno(f ? EINVAL : EBADF);
  timer_update(f);
  int64_t left = f->t_armed ? f->t_next - sfp__mono_now() : 0;
  cur->it_value = ns_ts(left > 0 ? left : 0);
  cur->it_interval = ns_ts(f->t_every);
  return 0;
}

/* Arm (or with a zero value disarm) a timerfd. An absolute time on the
 * realtime clock is taken as the distance to it now: a later step of the
 * clock does not move the expiry. */
int sfp_timerfd_settime(int fd, int flags, const struct itimerspec *nv, struct itimerspec *old);
int sfp_timerfd_settime(int fd, int flags, const struct itimerspec *nv, struct itimerspec *old) {
  sfp_fd *f = fd_of(fd);
  if (!f || f->kind != FD_TIMER)
    return sfp__fail_errno(f ? EINVAL : EBADF);
  if (!nv || nv->it_value.tv_nsec < 0 || nv->it_value.tv_nsec >= 1000000000 ||
      nv->it_interval.tv_nsec < 0 || nv->it_interval.tv_nsec >= 1000000000 ||
      nv->it_value.tv_sec < 0 || nv->it_interval.tv_sec < 0)
    return sfp__fail_errno(EINVAL);
  if (old && sfp_timerfd_gettime(fd, old) != 0)
    return -1;
  int64_t v = ts_ns(&nv->it_value), now = sfp__mono_now();
  f->count = 0;
  f->t_armed = v != 0;
  f->t_every = ts_ns(&nv->it_interval);
  if (!(flags & TFD_TIMER_ABSTIME))
    f->t_next = now + v;
  else if (f->t_clock == CLOCK_REALTIME)
    f->t_next = now + (v - sim_clock(W, N));
  else
    f->t_next = v;
  return 0;
}

static uint64_t timer_take(sfp_fd *f) {
  uint64_t n = timer_update(f);
  f->count = 0;
  return n;
}

static long timer_read(int fd, void *buf, size_t len) {
  return counter_read(fd, buf, len, timer_take);
}

int64_t sfp__timers_next(void) {
  sfp_node *me = sfp__self();
  if (!me->has_timers)
    return INT64_MAX; /* (every blocked call asks: most programs have none) */
  int64_t next = INT64_MAX, now = sfp__mono_now();
  for (int i = 0; i < SFP_FDS; i++) { /* (one due already is ready: a wake-up is no use) */
    const sfp_fd *f = &me->fd[i];
    if (f->kind == FD_TIMER && f->t_armed && f->t_next > now && f->t_next < next)
      next = f->t_next;
  }
  return next;
}

/* ---- select and ppoll: poll by other names ------------------------------- */

/* select()'s sets as the kernel reads and writes them: only the words that
 * hold descriptors below its first argument, which a caller may size for
 * that (libevent's select backend does), not whole fd_sets. */
#define FD_WORD_BITS (8 * sizeof(unsigned long))
static int fd_bit(const fd_set *set, int fd) {
  const unsigned long *w = (const unsigned long *)(const void *)set;
  return set && (w[(size_t)fd / FD_WORD_BITS] >> ((size_t)fd % FD_WORD_BITS) & 1);
}
static void fd_bit_set(fd_set *set, int fd) {
  unsigned long *w = (unsigned long *)(void *)set;
  w[(size_t)fd / FD_WORD_BITS] |= 1ul << ((size_t)fd % FD_WORD_BITS);
}

int sfp_select(int n, fd_set *rd, fd_set *wr, fd_set *ex, struct timeval *tv);
int sfp_select(int n, fd_set *rd, fd_set *wr, fd_set *ex, struct timeval *tv) {
  if (n < 0 || n > FD_SETSIZE)
    return sfp__fail_errno(EINVAL);
  struct pollfd p[SFP_FDS + SFP_FD_FIRST];
  nfds_t np = 0;
  for (int fd = 0; fd < n; fd++) {
    short ev = (short)((fd_bit(rd, fd) ? POLLIN : 0) | (fd_bit(wr, fd) ? POLLOUT : 0) |
                       (fd_bit(ex, fd) ? POLLPRI : 0));
    if (!ev)
      continue;
    if (np == sizeof p / sizeof *p || !fd_of(fd))
      return sfp__fail_errno(EBADF);
    p[np++] = (struct pollfd){fd, ev, 0};
  }
  int ms = -1;
  if (tv) {
    if (tv->tv_sec < 0 || tv->tv_usec < 0)
      return sfp__fail_errno(EINVAL);
    int64_t t = (int64_t)tv->tv_sec * 1000 + (tv->tv_usec + 999) / 1000;
    ms = t > 0x7fffffff ? 0x7fffffff : (int)t;
  }
  int r = sfp_poll(p, np, ms);
  if (r < 0)
    return r;
  size_t bytes = ((size_t)n + FD_WORD_BITS - 1) / FD_WORD_BITS * sizeof(unsigned long);
  if (rd)
    memset(rd, 0, bytes);
  if (wr)
    memset(wr, 0, bytes);
  if (ex)
    memset(ex, 0, bytes);
  int bits = 0;
  for (nfds_t i = 0; i < np; i++) {
    if (rd && p[i].revents & (POLLIN | POLLHUP | POLLERR) && p[i].events & POLLIN)
      fd_bit_set(rd, p[i].fd), bits++;
    if (wr && p[i].revents & (POLLOUT | POLLERR) && p[i].events & POLLOUT)
      fd_bit_set(wr, p[i].fd), bits++;
  }
  if (tv)
    tv->tv_sec = 0, tv->tv_usec = 0; /* (Linux leaves what was left; 0 when it timed out) */
  return bits;
}

int sfp_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts, const void *sigmask);
int sfp_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts, const void *sigmask) {
  (void)sigmask; /* no signals are delivered to a program node */
  int ms = -1;
  if (ts) {
    int64_t t = (int64_t)ts->tv_sec * 1000 + (ts->tv_nsec + 999999) / 1000000;
    ms = t > 0x7fffffff ? 0x7fffffff : (int)t;
  }
  return sfp_poll(fds, n, ms);
}
