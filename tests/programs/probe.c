/* probe: a test program for simfuzz_add_program (tests/programs.sh). An
 * ordinary C program; what it does depends on the number of nodes N:
 *   1  calls fork(), which simfuzz refuses
 *   2  node 1 exits with status 3
 *   3  every node checks, in a loop with sleeps between, that its globals,
 *      its errno and its heap are its own, and that a restart begins from
 *      the program's initial values; time only moves forward; pipes,
 *      eventfd, readv/writev, sendmsg/recvmsg and a periodic timerfd
 *      under epoll work, TCP inside the node (to 127.0.0.1),
 *      clock_nanosleep and /dev/urandom
 *   4  node 0 calls abort()
 *   5  node 0 writes past a buffer on its stack (AddressSanitizer must see
 *      it on the node's fiber)
 *   6  node 0 calls gethostname(), which simfuzz's table does not list */
#define _GNU_SOURCE /* pipe2 */
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static int my_id = -1;        /* .data: written once, read after others ran */
static int boots;             /* .bss: 1 after every boot, restarts included */
static char name[16] = "new"; /* .data with an initial value */
static char *note;            /* a heap block of this node */

/* Out of line, so that only AddressSanitizer knows the buffer's size. */
__attribute__((noinline)) static void poke(char *p, size_t i) {
  p[i] = 1;
}

static int64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A self-pipe and an eventfd, as event loops use them, checked with select. */
static void check_pipes(int pfd[2], int efd) {
  char c = 'x';
  assert(write(pfd[1], &c, 1) == 1);
  uint64_t three = 3, got = 0;
  assert(write(efd, &three, sizeof three) == sizeof three);
  fd_set rd;
  FD_ZERO(&rd);
  FD_SET(pfd[0], &rd);
  FD_SET(efd, &rd);
  struct timeval tv = {0, 0};
  assert(select((pfd[0] > efd ? pfd[0] : efd) + 1, &rd, NULL, NULL, &tv) == 2);
  assert(read(pfd[0], &c, 1) == 1 && c == 'x' && read(pfd[0], &c, 1) < 0 && errno == EAGAIN);
  assert(read(efd, &got, sizeof got) == sizeof got && got == 3);
}

/* readv and writev over the self-pipe; sendmsg and recvmsg of a datagram
 * to the node's own socket, its sender's port returned. */
static void check_vectors(int pfd[2], int udp, uint16_t port) {
  char a[3] = "ab", b[4] = "cde", x[2], y[8];
  struct iovec out[2] = {{a, 2}, {b, 3}}, in[2] = {{x, 2}, {y, sizeof y}};
  assert(writev(pfd[1], out, 2) == 5);
  assert(readv(pfd[0], in, 2) == 5 && memcmp(x, "ab", 2) == 0 && memcmp(y, "cde", 3) == 0);
  struct sockaddr_in to = {0}, from = {0};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  struct msghdr m = {0};
  m.msg_name = &to;
  m.msg_namelen = sizeof to;
  m.msg_iov = out;
  m.msg_iovlen = 2;
  assert(sendmsg(udp, &m, 0) == 5);
  memset(&m, 0, sizeof m);
  memset(y, 0, sizeof y);
  m.msg_name = &from;
  m.msg_namelen = sizeof from;
  m.msg_iov = in;
  m.msg_iovlen = 2;
  assert(recvmsg(udp, &m, 0) == 5 && memcmp(y, "cde", 3) == 0);
  assert(m.msg_namelen == sizeof from && ntohs(from.sin_port) == port && m.msg_controllen == 0);
}

/* A periodic timerfd of 3 ms: its expirations since the last read add up,
 * and epoll wakes for the next one. */
static void check_timer(int tfd, int ep) {
  uint64_t n = 0;
  assert(read(tfd, &n, sizeof n) == sizeof n && n >= 3); /* after the ~10 ms sleep */
  struct epoll_event ev; /* (how soon: test_program; a pause may hold it up here) */
  int64_t t0 = mono_ns();
  assert(epoll_wait(ep, &ev, 1, -1) == 1 && ev.data.fd == tfd && mono_ns() > t0);
  assert(read(tfd, &n, sizeof n) == sizeof n && n >= 1);
  struct itimerspec cur;
  assert(timerfd_gettime(tfd, &cur) == 0 && cur.it_interval.tv_nsec == 3000000);
}

static void check_own_state(int id) {
  int64_t before = mono_ns();
  usleep(10000 + (unsigned)id * 1000); /* let the other nodes run */
  assert(mono_ns() - before >= 10000000);
  assert(my_id == id);
  assert(boots == 1);
  assert(errno == 100 + id);
  char want[16];
  snprintf(want, sizeof want, "node%d", id);
  assert(strcmp(name, want) == 0);
  assert(strcmp(note, want) == 0);
}

/* TCP to the node itself: a non-blocking connect to 127.0.0.1, writable at
 * once; bytes both ways; a half close read as end of file; a second
 * connection refused once the listener is closed. */
static void check_local_tcp(uint16_t port) {
  int l = socket(AF_INET, SOCK_STREAM, 0), c = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  assert(l >= 0 && c >= 0 && bind(l, (struct sockaddr *)&a, sizeof a) == 0 && listen(l, 4) == 0);
  assert(fcntl(c, F_SETFL, O_NONBLOCK) == 0);
  int r = connect(c, (struct sockaddr *)&a, sizeof a);
  assert(r == 0 || errno == EINPROGRESS);
  struct pollfd pw = {c, POLLOUT, 0};
  assert(poll(&pw, 1, 0) == 1 && (pw.revents & POLLOUT));
  int s = accept(l, NULL, NULL);
  char buf[16];
  assert(s >= 0 && write(c, "ping", 4) == 4 && read(s, buf, sizeof buf) == 4);
  assert(memcmp(buf, "ping", 4) == 0 && send(s, "pong!", 5, 0) == 5);
  assert(recv(c, buf, sizeof buf, 0) == 5 && memcmp(buf, "pong!", 5) == 0);
  assert(read(c, buf, sizeof buf) == -1 && errno == EAGAIN);
  assert(shutdown(s, SHUT_WR) == 0 && read(c, buf, sizeof buf) == 0);
  assert(close(s) == 0 && close(l) == 0 && close(c) == 0);
  c = socket(AF_INET, SOCK_STREAM, 0);
  assert(connect(c, (struct sockaddr *)&a, sizeof a) == -1 && errno == ECONNREFUSED);
  assert(close(c) == 0);
}

/* clock_nanosleep to an absolute time and for a while; reads of
 * /dev/urandom, by a descriptor and by a stdio stream. */
static void check_clock_and_random(void) {
  struct timespec a, t, b, rel = {0, 1000000};
  assert(clock_gettime(CLOCK_MONOTONIC, &a) == 0);
  t = a;
  t.tv_nsec += 2000000;
  if (t.tv_nsec >= 1000000000L)
    t.tv_sec++, t.tv_nsec -= 1000000000L;
  assert(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == 0);
  assert(clock_gettime(CLOCK_MONOTONIC, &b) == 0);
  assert(b.tv_sec > t.tv_sec || (b.tv_sec == t.tv_sec && b.tv_nsec >= t.tv_nsec));
  assert(clock_nanosleep(CLOCK_MONOTONIC, 0, &rel, NULL) == 0);
  unsigned char r[16], z[16] = {0};
  int fd = open("/dev/urandom", O_RDONLY);
  assert(fd >= 0 && read(fd, r, sizeof r) == (ssize_t)sizeof r && close(fd) == 0);
  assert(memcmp(r, z, sizeof r) != 0);
  FILE *f = fopen("/dev/urandom", "r");
  assert(f && fread(r, 1, sizeof r, f) == sizeof r && fclose(f) == 0);
}

int main(int argc, char **argv) {
  if (argc < 3)
    return 2;
  int id = atoi(argv[1]), n = atoi(argv[2]);
  boots++;
  assert(strcmp(name, "new") == 0 && my_id == -1); /* a fresh image, restart or not */
  if (n == 1) {
    fork();
    return 0;
  }
  if (n == 2 && id == 1) {
    fprintf(stderr, "probe %d: exiting with status 3", id); /* no newline: exit flushes it */
    exit(3);
  }
  if (n == 4 && id == 0)
    abort();
  if (n == 5 && id == 0) {
    char buf[8];
    poke(buf, (size_t)n + 3); /* past the end of a buffer on the node's stack */
  }
  if (n == 6 && id == 0) {
    char host[64];
    gethostname(host, sizeof host);
  }
  my_id = id;
  snprintf(name, sizeof name, "node%d", id);
  note = strdup(name);
  errno = 100 + id;
  unsigned r;
  if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
    return 1;
  printf("probe %d of %d up, random %u\n", id, n, r);
  int pfd[2];
  int efd = eventfd(0, EFD_NONBLOCK);
  assert(pipe2(pfd, O_NONBLOCK) == 0 && efd >= 0);
  int udp = socket(AF_INET, SOCK_DGRAM, 0);
  struct sockaddr_in me = {0};
  me.sin_family = AF_INET;
  me.sin_port = htons((uint16_t)(9100 + id));
  assert(udp >= 0 && bind(udp, (struct sockaddr *)&me, sizeof me) == 0);
  check_local_tcp((uint16_t)(9200 + id));
  check_clock_and_random();
  int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK), ep = epoll_create1(0);
  struct itimerspec every3ms = {{0, 3000000}, {0, 3000000}};
  struct epoll_event tev = {.events = EPOLLIN, .data.fd = tfd};
  assert(tfd >= 0 && timerfd_settime(tfd, 0, &every3ms, NULL) == 0);
  assert(ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &tev) == 0);
  for (;;) {
    check_pipes(pfd, efd);
    errno = 100 + id; /* (the checks above set it) */
    check_own_state(id);
    if (n == 3) {
      check_vectors(pfd, udp, (uint16_t)(9100 + id));
      check_timer(tfd, ep);
    }
  }
}
