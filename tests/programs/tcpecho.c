/* tcpecho: a test program for TCP in program nodes (tests/programs.sh).
 * An ordinary Linux echo service:
 *   tcpecho 0 N PORT   the server: non-blocking sockets, epoll, edge-triggered
 *                      connections; it echoes what it reads, and closes at
 *                      the client's end of file
 *   tcpecho K N PORT   a client (K > 0): round after round, it connects to
 *                      the server (blocking, or non-blocking with poll and
 *                      SO_ERROR on odd rounds), writes a message of a random
 *                      length in pieces, shuts its writing down, reads the
 *                      echo until end of file and checks it byte for byte;
 *                      a refused, reset or timed-out connection is retried.
 * It also checks that a port nobody listens on refuses, and that a reset
 * connection fails with ECONNRESET or EPIPE, not with wrong bytes. */
#define _GNU_SOURCE /* accept4 */
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_MSG 20000

static char out[MAX_MSG], in[MAX_MSG + 1];
static unsigned rounds_done;

static void server_addr(struct sockaddr_in *a, int port) {
  memset(a, 0, sizeof *a);
  a->sin_family = AF_INET;
  a->sin_port = htons((uint16_t)port);
  a->sin_addr.s_addr = htonl((10u << 24) | 1u);
}

static int retryable(int e) {
  return e == ECONNREFUSED || e == ECONNRESET || e == ETIMEDOUT || e == EPIPE || e == EAGAIN;
}

/* Echo what is readable on an edge-triggered connection; 1 when it is done. */
static int echo(int fd) {
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n == 0)
      return 1;
    if (n < 0)
      return errno != EAGAIN;
    for (ssize_t off = 0; off < n;) {
      ssize_t w = write(fd, buf + off, (size_t)(n - off));
      if (w < 0)
        return 1;
      off += w;
    }
  }
}

static int serve(int port) {
  int l = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  int one = 1;
  setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a;
  server_addr(&a, port);
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) != 0 || listen(l, 16) != 0)
    return 1;
  int ep = epoll_create1(0);
  struct epoll_event ev = {.events = EPOLLIN, .data.fd = l};
  epoll_ctl(ep, EPOLL_CTL_ADD, l, &ev);
  for (;;) {
    struct epoll_event got[16];
    int n = epoll_wait(ep, got, 16, -1);
    for (int i = 0; i < n; i++) {
      int fd = got[i].data.fd;
      if (fd == l) {
        int c;
        while ((c = accept4(l, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
          struct epoll_event cev = {.events = EPOLLIN | EPOLLET | EPOLLRDHUP, .data.fd = c};
          epoll_ctl(ep, EPOLL_CTL_ADD, c, &cev);
        }
        assert(errno == EAGAIN);
      } else if (echo(fd)) {
        close(fd);
      }
    }
  }
}

/* Connect to node0 (by name), blocking or not; the socket, or -1 with errno. */
static int dial(int port, int nonblocking) {
  char service[16];
  snprintf(service, sizeof service, "%d", port);
  struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai;
  if (getaddrinfo("node0", service, &hints, &ai) != 0) { /* out of memory: try again */
    errno = EAGAIN;
    return -1;
  }
  int fd = socket(AF_INET, SOCK_STREAM | (nonblocking ? SOCK_NONBLOCK : 0), 0);
  int rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
  freeaddrinfo(ai);
  if (rc == 0)
    return fd;
  if (!nonblocking || errno != EINPROGRESS) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  struct pollfd p = {fd, POLLOUT, 0};
  while (poll(&p, 1, -1) == 0) {
  }
  int err = 0;
  socklen_t len = sizeof err;
  getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
  if (err) {
    close(fd);
    errno = err;
    return -1;
  }
  fcntl(fd, F_SETFL, 0); /* blocking from here */
  return fd;
}

static void client(int id, int port) {
  int fd = dial(port + 1, 0); /* nobody listens there */
  assert(fd < 0 && retryable(errno));
  for (unsigned round = 0;; round++) {
    fd = dial(port, round & 1);
    if (fd < 0) {
      assert(retryable(errno));
      usleep(50000);
      continue;
    }
    uint32_t r;
    getrandom(&r, sizeof r, 0);
    size_t len = 1 + r % MAX_MSG;
    for (size_t i = 0; i < len; i++)
      out[i] = (char)('a' + (i * 7 + (size_t)id + round) % 26);
    int broken = 0;
    for (size_t off = 0, piece = len / 3 + 1; off < len && !broken; off += piece) {
      size_t n = len - off < piece ? len - off : piece;
      broken = write(fd, out + off, n) != (ssize_t)n;
    }
    assert(!broken || retryable(errno));
    size_t got = 0;
    if (!broken) {
      shutdown(fd, SHUT_WR);
      for (;;) {
        ssize_t n = read(fd, in + got, sizeof in - got);
        if (n <= 0) {
          broken = n < 0;
          assert(!broken || retryable(errno));
          break;
        }
        got += (size_t)n;
        assert(got <= len);
      }
    }
    if (!broken) {
      assert(got == len && memcmp(in, out, len) == 0);
      rounds_done++;
    }
    close(fd);
  }
}

int main(int argc, char **argv) {
  if (argc < 4)
    return 2;
  int id = atoi(argv[1]), port = atoi(argv[3]);
  if (id == 0)
    return serve(port);
  client(id, port);
  return 0;
}
