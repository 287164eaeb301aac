/* ping: a small UDP program of this project, run unmodified as simulated
 * nodes (simfuzz_add_program). Node 0 answers; every other node sends
 * kvutil_value(k, i, 1) to node 0 until it has had ten answers, and exits 0. */
#define _DEFAULT_SOURCE
#include "kvutil.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static uint64_t answered; /* a global of each node's own */

int main(int argc, char **argv) {
  if (argc < 3)
    return 2;
  int id = atoi(argv[1]);
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons(9000);
  if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0)
    return 1;
  inet_pton(AF_INET, argv[2], &a.sin_addr);
  for (;;) {
    uint64_t v = 0;
    struct sockaddr_in from;
    socklen_t fl = sizeof from;
    if (id == 0) {
      if (recvfrom(fd, &v, sizeof v, 0, (struct sockaddr *)&from, &fl) == (ssize_t)sizeof v)
        sendto(fd, &v, sizeof v, 0, (struct sockaddr *)&from, fl);
      continue;
    }
    if (answered == 10)
      return 0;
    uint64_t want = kvutil_value((uint32_t)id, answered, 1);
    sendto(fd, &want, sizeof want, 0, (struct sockaddr *)&a, sizeof a);
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, 50) == 1 && recv(fd, &v, sizeof v, 0) == (ssize_t)sizeof v)
      answered += v == want; /* else a late answer to an earlier ping */
  }
}
