/* kvclient: the CLIENT of the kvstore target (simfuzz_client.h). It takes
 * the scenario's operations one at a time and records each in the history:
 * an odd op code is a GET at the node the scenario names (a backup answers
 * while it holds a read lease), an even one a PUT of a value unique in the
 * run, at the primary (node 0). An answer that does not come within a
 * second leaves the operation pending (the client cannot know whether it
 * took effect), and the connection is opened again for the next one. The
 * liveness probe is a read, tried again until one is answered. */
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
#define MAXN 8

static int conn_fd[MAXN];

static int open_conn(int node) {
  char host[32];
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons(7000);
  snprintf(host, sizeof host, "10.0.0.%d", node + 1);
  inet_pton(AF_INET, host, &a.sin_addr);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
    close(fd);
    fd = -1;
  }
  return fd;
}

/* One line of answer on fd within a second, or -1. */
static int answer(int fd, char *line, size_t cap) {
  size_t len = 0;
  while (len + 1 < cap) {
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, 1000) != 1)
      return -1;
    ssize_t n = read(fd, line + len, 1);
    if (n != 1)
      return -1;
    if (line[len++] == '\n') {
      line[len] = 0;
      return 0;
    }
  }
  return -1;
}

/* Do one operation at a node: 1 if it completed, 0 if it stays pending. */
static int attempt(int node, int get, unsigned key, unsigned long value) {
  if (conn_fd[node] < 0)
    conn_fd[node] = open_conn(node);
  int fd = conn_fd[node];
  char req[64], line[64];
  snprintf(req, sizeof req, get ? "GET %u\n" : "PUT %u %lu\n", key, value);
  size_t id = sf_client_invoke(get ? SF_KV_GET : SF_KV_PUT, key, get ? 0 : value, 0);
  unsigned long got = 0;
  if (fd >= 0 && send(fd, req, strlen(req), MSG_NOSIGNAL) == (ssize_t)strlen(req) &&
      answer(fd, line, sizeof line) == 0) {
    if (get ? sscanf(line, "VAL %lu", &got) == 1 : strcmp(line, "OK\n") == 0) {
      sf_client_complete(id, get ? got : 0);
      return 1;
    }
    return 0; /* NOLEASE, BUSY: it did not happen; it stays pending, which allows that */
  }
  if (fd >= 0)
    close(fd); /* no answer: the next attempt opens a new connection */
  conn_fd[node] = -1;
  return 0;
}

int main(int argc, char **argv) {
  int servers = argc > 2 ? atoi(argv[2]) : 1;
  if (servers < 1 || servers > MAXN)
    return 2;
  for (int k = 0; k < MAXN; k++)
    conn_fd[k] = -1;
  for (;;) {
    sf_client_op op;
    sf_client_next(&op);
    unsigned key = (unsigned)(op.key % KEYS);
    int node = op.node % servers;
    if (op.probe) { /* after the heal: reads until one is answered */
      while (!attempt(node, 1, key, 0))
        usleep(100000);
      continue;
    }
    if (op.op & 1) /* a read, at the node the scenario names */
      attempt(node, 1, key, 0);
    else /* a write, at the primary; a value never 0, six digits */
      attempt(0, 0, key, 100000ul + op.seq % 800000ul);
  }
}
