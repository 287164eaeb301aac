/* kvclient: the CLIENT of the kvstore target (simfuzz_client.h). It takes
 * the scenario's operations one at a time, sends each to the primary (node
 * 0) over one TCP connection, and records each in the history: an odd op
 * code is a GET, an even one a PUT of a value unique in the run. An answer
 * that does not come within a second leaves the operation pending (the
 * client cannot know whether it took effect) and the connection is opened
 * again for the next one. The liveness probe is a read, tried again until
 * one is answered. */
#define _GNU_SOURCE
#include <simfuzz/linearize.h>
#include <simfuzz/simfuzz_client.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define KEYS 4 /* few keys: operations meet */

static int conn_fd = -1;

static int open_conn(void) {
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons(7000);
  inet_pton(AF_INET, "10.0.0.1", &a.sin_addr); /* node 0, the primary */
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
    close(fd);
    fd = -1;
  }
  return fd;
}

/* One line of answer within a second, or -1. */
static int answer(char *line, size_t cap) {
  size_t len = 0;
  while (len + 1 < cap) {
    struct pollfd p = {conn_fd, POLLIN, 0};
    if (poll(&p, 1, 1000) != 1)
      return -1;
    ssize_t n = read(conn_fd, line + len, 1);
    if (n != 1)
      return -1;
    if (line[len++] == '\n') {
      line[len] = 0;
      return 0;
    }
  }
  return -1;
}

/* Do one operation: 1 if it completed, 0 if it stays pending. */
static int attempt(int get, unsigned key, unsigned long value) {
  if (conn_fd < 0)
    conn_fd = open_conn();
  char req[64], line[64];
  snprintf(req, sizeof req, get ? "GET %u\n" : "PUT %u %lu\n", key, value);
  size_t id = sf_client_invoke(get ? SF_KV_GET : SF_KV_PUT, key, get ? 0 : value, 0);
  unsigned long got = 0;
  if (conn_fd >= 0 && send(conn_fd, req, strlen(req), MSG_NOSIGNAL) == (ssize_t)strlen(req) &&
      answer(line, sizeof line) == 0 &&
      (get ? sscanf(line, "VAL %lu", &got) == 1 : strcmp(line, "OK\n") == 0)) {
    sf_client_complete(id, get ? got : 0);
    return 1;
  }
  if (conn_fd >= 0)
    close(conn_fd); /* no answer: the next attempt opens a new connection */
  conn_fd = -1;
  return 0;
}

int main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  for (;;) {
    sf_client_op op;
    sf_client_next(&op);
    unsigned key = (unsigned)(op.key % KEYS);
    if (op.probe) { /* after the heal: reads until one is answered */
      while (!attempt(1, key, 0))
        usleep(100000);
      continue;
    }
    attempt(op.op & 1, key, 100000ul + op.seq % 800000ul); /* a value never 0, six digits */
  }
}
