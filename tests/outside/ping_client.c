/* The CLIENT of the ping program (simfuzz_client.h): each operation is a
 * ping of a value to node 0, recorded as a PUT of its own key that the echo
 * completes; a probe pings again until it is answered. */
#define _DEFAULT_SOURCE
#include <simfuzz/linearize.h>
#include <simfuzz/simfuzz_client.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int echoed(int fd, const struct sockaddr_in *to, uint64_t v) {
  sendto(fd, &v, sizeof v, 0, (const struct sockaddr *)to, sizeof *to);
  for (;;) {
    uint64_t got = 0;
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, 100) != 1)
      return 0;
    if (recv(fd, &got, sizeof got, 0) == (ssize_t)sizeof got && got == v)
      return 1; /* else a late echo of an earlier ping */
  }
}

int main(int argc, char **argv) {
  (void)argc, (void)argv;
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  struct sockaddr_in to;
  memset(&to, 0, sizeof to);
  to.sin_family = AF_INET;
  to.sin_port = htons(9000);
  inet_pton(AF_INET, "10.0.0.1", &to.sin_addr);
  for (;;) {
    sf_client_op op;
    sf_client_next(&op);
    uint64_t v = 1000000u + op.seq;
    do {
      size_t id = sf_client_invoke(SF_KV_PUT, v, v, 0); /* a key of its own */
      if (echoed(fd, &to, v)) {
        sf_client_complete(id, 0);
        break;
      }
    } while (op.probe);
  }
}
