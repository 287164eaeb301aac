/* probe: a test program for simfuzz_add_program (tests/programs.sh). An
 * ordinary C program; what it does depends on the number of nodes N:
 *   1  calls fork(), which simfuzz refuses
 *   2  node 1 exits with status 3
 *   3  every node checks, in a loop with sleeps between, that its globals,
 *      its errno and its heap are its own, and that a restart begins from
 *      the program's initial values; time only moves forward
 *   4  node 0 calls abort()
 *   5  node 0 writes past a buffer on its stack (AddressSanitizer must see
 *      it on the node's fiber)
 *   6  node 0 calls gethostname(), which simfuzz's table does not list */
#define _GNU_SOURCE /* pipe2 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/select.h>
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
  if (n == 2 && id == 1)
    exit(3);
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
  for (;;) {
    check_pipes(pfd, efd);
    errno = 100 + id; /* (the checks above set it) */
    check_own_state(id);
  }
}
