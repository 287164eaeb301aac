/* poolclient: the CLIENT of the poolkv target (simfuzz_client.h). It takes
 * the scenario's operations one at a time, does each at the server (node
 * 0) and records it in the history: by op code, a PUT of a value unique in
 * the run, a GET, or an update: a GET, then a CAS from the value read to a
 * new unique value (a read-modify-write, as clients of a store do). An answer that does not come
 * within a second leaves the operation pending (the client cannot know whether it took effect), and
 * the connection is opened again for the next one. The liveness probe is a read, tried again until
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

#define KEYS 3 /* few keys: operations meet */

static int conn_fd = -1;
static unsigned long known[KEYS]; /* the value this client saw last */

static int open_conn(void) {
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons(7000);
  inet_pton(AF_INET, "10.0.0.1", &a.sin_addr);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
    close(fd);
    fd = -1;
  }
  return fd;
}

/* One line of answer within a second, or -1. */
static int answer(int fd, char *line, size_t cap) {
  size_t len = 0;
  while (len + 1 < cap) {
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, 1000) != 1)
      return -1;
    if (read(fd, line + len, 1) != 1)
      return -1;
    if (line[len++] == '\n') {
      line[len] = 0;
      return 0;
    }
  }
  return -1;
}

/* Do one operation (SF_KV_GET, SF_KV_PUT, SF_KV_CAS): 1 if it completed. */
static int attempt(unsigned kind, unsigned key, unsigned long value) {
  if (conn_fd < 0)
    conn_fd = open_conn();
  char req[80], line[64];
  unsigned long old = known[key];
  if (kind == SF_KV_GET)
    snprintf(req, sizeof req, "GET %u\n", key);
  else if (kind == SF_KV_PUT)
    snprintf(req, sizeof req, "PUT %u %lu\n", key, value);
  else
    snprintf(req, sizeof req, "CAS %u %lu %lu\n", key, old, value);
  size_t id =
      sf_client_invoke(kind, key, kind == SF_KV_CAS ? old : value, kind == SF_KV_CAS ? value : 0);
  unsigned long got = 0;
  if (conn_fd >= 0 && send(conn_fd, req, strlen(req), MSG_NOSIGNAL) == (ssize_t)strlen(req) &&
      answer(conn_fd, line, sizeof line) == 0) {
    if (kind == SF_KV_GET && sscanf(line, "VAL %lu", &got) == 1) {
      sf_client_complete(id, got);
      known[key] = got;
      return 1;
    }
    if (kind != SF_KV_GET && strcmp(line, "OK\n") == 0) {
      sf_client_complete(id, kind == SF_KV_CAS ? 1 : 0);
      known[key] = value;
      return 1;
    }
    if (kind == SF_KV_CAS && sscanf(line, "FAIL %lu", &got) == 1) {
      sf_client_complete(id, 0);
      known[key] = got;
      return 1;
    }
    return 0; /* FULL: it did not happen; pending allows that */
  }
  if (conn_fd >= 0)
    close(conn_fd); /* no answer: the next attempt opens a new connection */
  conn_fd = -1;
  return 0;
}

int main(int argc, char **argv) {
  unsigned long me = argc > 1 ? strtoul(argv[1], NULL, 10) : 0;
  for (;;) {
    sf_client_op op;
    sf_client_next(&op);
    unsigned key = (unsigned)(op.key % KEYS);
    if (op.probe) { /* after the heal: reads until one is answered */
      while (!attempt(SF_KV_GET, key, 0))
        usleep(100000);
      continue;
    }
    unsigned long value = 100000ul + (op.seq % 400000ul) * 2 + me; /* unique, never 0 */
    if (op.op % 3 == 0)
      attempt(SF_KV_PUT, key, value);
    else if (op.op % 3 == 1)
      attempt(SF_KV_GET, key, 0);
    else if (attempt(SF_KV_GET, key, 0)) /* read, then swap what was read */
      attempt(SF_KV_CAS, key, value);
  }
}
