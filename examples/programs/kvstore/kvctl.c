/* kvctl: a command-line client of a real kvstore (not simulated).
 *
 *   kvctl HOST:PORT PUT KEY VALUE     prints OK
 *   kvctl HOST:PORT GET KEY           prints VAL value
 *
 * It connects (trying again for up to 5 s while the server starts), sends
 * one request line and prints the answer line. Exit status 0 if one came. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 4 || argc > 5) {
    fprintf(stderr, "usage: kvctl HOST:PORT PUT KEY VALUE | GET KEY\n");
    return 2;
  }
  char host[64];
  const char *colon = strrchr(argv[1], ':');
  if (!colon || (size_t)(colon - argv[1]) >= sizeof host)
    return 2;
  memcpy(host, argv[1], (size_t)(colon - argv[1]));
  host[colon - argv[1]] = 0;
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons((unsigned short)atoi(colon + 1));
  if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
    return 2;
  int fd = -1;
  for (int tries = 0; tries < 50 && fd < 0; tries++) {
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
      close(fd);
      fd = -1;
      usleep(100000);
    }
  }
  if (fd < 0) {
    perror("kvctl: connect");
    return 1;
  }
  char req[128], line[128];
  int n = argc == 5 ? snprintf(req, sizeof req, "%s %s %s\n", argv[2], argv[3], argv[4])
                    : snprintf(req, sizeof req, "%s %s\n", argv[2], argv[3]);
  if (write(fd, req, (size_t)n) != n)
    return 1;
  size_t len = 0;
  while (len + 1 < sizeof line) {
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, 5000) != 1 || read(fd, line + len, 1) != 1)
      return 1;
    if (line[len++] == '\n')
      break;
  }
  line[len] = 0;
  fputs(line, stdout);
  close(fd);
  return len && line[len - 1] == '\n' ? 0 : 1;
}
