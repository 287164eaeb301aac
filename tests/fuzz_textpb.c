/* A libFuzzer fuzzer of the protobuf text format parser. Every input must
 * parse or fail cleanly (no crash, leak or hang under the sanitizers); with
 * SIMFUZZ_PROTOC=/path/to/protoc and SIMFUZZ_PROTO_DIR=proto/, every input
 * the parser accepts is also encoded by `protoc --encode=simfuzz.Scenario`,
 * which must accept it too and give the same bytes. */
#define _POSIX_C_SOURCE 200809L
#include "scenario/textpb.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* protoc's encoding of text (at most cap bytes); -1 if protoc rejects it. */
static long protoc_encode(const char *protoc, const char *dir, const uint8_t *text, size_t len,
                          uint8_t *out, size_t cap) {
  char tmp[] = "/tmp/sf-textpb-XXXXXX";
  int fd = mkstemp(tmp);
  if (fd < 0)
    abort();
  if (write(fd, text, len) != (ssize_t)len)
    abort();
  lseek(fd, 0, SEEK_SET);
  int pipefd[2];
  if (pipe(pipefd) != 0)
    abort();
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fd, 0);
    dup2(pipefd[1], 1);
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 2);
    char inc[4200], file[4200];
    snprintf(inc, sizeof inc, "-I%s", dir);
    snprintf(file, sizeof file, "%s/scenario.proto", dir);
    execl(protoc, protoc, "--encode=simfuzz.Scenario", inc, file, (char *)NULL);
    _exit(127);
  }
  close(pipefd[1]);
  close(fd);
  unlink(tmp);
  long n = 0;
  ssize_t k;
  while ((k = read(pipefd[0], out + n, cap - (size_t)n)) > 0)
    n += k;
  close(pipefd[0]);
  int st;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? n : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *bin;
  size_t n;
  char err[256];
  if (sf_text_to_binary((const char *)data, size, &bin, &n, err, sizeof err) != 0)
    return 0;
  const char *protoc = getenv("SIMFUZZ_PROTOC"), *dir = getenv("SIMFUZZ_PROTO_DIR");
  if (protoc && dir && memchr(data, 0, size) == NULL) {
    static uint8_t ref[1 << 20];
    long m = protoc_encode(protoc, dir, data, size, ref, sizeof ref);
    if (m < 0) {
      fprintf(stderr, "textpb: protoc rejects what simfuzz accepts\n");
      abort();
    }
    if ((size_t)m != n || memcmp(ref, bin, n)) {
      fprintf(stderr, "textpb: simfuzz and protoc encode differently (%zu vs %ld bytes)\n", n, m);
      abort();
    }
  }
  free(bin);
  return 0;
}
