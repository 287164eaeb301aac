/* beacon: an ordinary UDP program, and simfuzz's first unmodified program
 * target. Each of N nodes sends a numbered beacon to every other node
 * every 100 ms, for 40 rounds, and keeps the highest number it has heard
 * from each peer; it never goes backwards. Then it prints a summary and
 * exits 0.
 *
 *   beacon ID N PORT [HOST]   node ID of N; peer j is HOST:PORT+j, or
 *                             10.0.0.(j+1):PORT without HOST
 *
 * Built with -DBEACON_BUG_IN_ORDER it believes the network keeps order and
 * loses nothing: it asserts that each beacon is the one after the last.
 * No edit and no include of simfuzz's: simfuzz_add_program() runs it. */
#define _DEFAULT_SOURCE /* usleep, clock_gettime */
#include <arpa/inet.h>
#include <assert.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_NODES 16
#define ROUNDS 40
#define PERIOD_MS 100

static uint32_t heard[MAX_NODES]; /* the highest beacon from each peer */
static int received;              /* beacons taken in */

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void peer_addr(struct sockaddr_in *a, const char *host, int port, int j) {
  memset(a, 0, sizeof *a);
  a->sin_family = AF_INET;
  if (host) {
    inet_pton(AF_INET, host, &a->sin_addr);
    a->sin_port = htons((uint16_t)(port + j));
  } else {
    a->sin_addr.s_addr = htonl((10u << 24) | (uint32_t)(j + 1));
    a->sin_port = htons((uint16_t)port);
  }
}

static void take(int fd) {
  uint32_t msg[2];
  ssize_t n = recv(fd, msg, sizeof msg, 0);
  if (n != (ssize_t)sizeof msg || msg[0] >= MAX_NODES)
    return;
  uint32_t from = msg[0], seq = msg[1];
#ifdef BEACON_BUG_IN_ORDER
  assert(seq == heard[from] + 1); /* the bug: datagrams are not a stream */
#endif
  if (seq > heard[from])
    heard[from] = seq;
  received++;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: beacon ID N PORT [HOST]\n");
    return 2;
  }
  int id = atoi(argv[1]), n = atoi(argv[2]), port = atoi(argv[3]);
  const char *host = argc > 4 ? argv[4] : NULL;
  if (id < 0 || n < 1 || n > MAX_NODES || id >= n)
    return 2;
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  struct sockaddr_in me;
  peer_addr(&me, host, port, id);
  if (!host)
    me.sin_addr.s_addr = htonl(INADDR_ANY);
  if (fd < 0 || bind(fd, (struct sockaddr *)&me, sizeof me) != 0) {
    perror("beacon: socket");
    return 1;
  }
  int64_t next = now_ms();
  for (uint32_t round = 1; round <= ROUNDS;) {
    int64_t t = now_ms();
    if (t >= next) {
      for (int j = 0; j < n; j++) {
        if (j == id)
          continue;
        struct sockaddr_in to;
        peer_addr(&to, host, port, j);
        uint32_t msg[2] = {(uint32_t)id, round};
        sendto(fd, msg, sizeof msg, 0, (struct sockaddr *)&to, sizeof to);
      }
      round++;
      next += PERIOD_MS;
      continue;
    }
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, (int)(next - t)) > 0)
      take(fd);
  }
  usleep(200 * 1000); /* the last beacons of the others */
  struct pollfd p = {fd, POLLIN, 0};
  while (poll(&p, 1, 0) > 0)
    take(fd);
  printf("beacon %d: %d beacons in;", id, received);
  for (int j = 0; j < n; j++)
    printf(" %u", (unsigned)heard[j]);
  printf("\n");
  close(fd);
  return 0;
}
