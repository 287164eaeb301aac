/* renamer: a test program for files in program nodes (tests/programs.sh).
 * The usual way to replace a file atomically: write a new one, fsync it,
 * rename it over the old one. Node 1 then fsyncs the directory, as it
 * must for the rename to survive a crash; node 0 forgets to. At its first
 * boot a node leaves a durable marker (through stdio: fopen, fprintf,
 * fflush, fsync of fileno, and an fsync of the directory); after a crash
 * and restart it finds the marker and checks that the rename survived. */
#define _DEFAULT_SOURCE
#include <assert.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void sync_dir(void) {
  int d = open(".", O_RDONLY | O_DIRECTORY);
  assert(d >= 0 && fsync(d) == 0);
  close(d);
}

int main(int argc, char **argv) {
  if (argc < 3 || chdir(argv[2]) != 0) /* {dir} */
    return 2;
  int id = atoi(argv[1]);
  FILE *m = fopen("booted", "r");
  if (m) { /* a restart: the first boot's rename must be there */
    char v[8] = "";
    fclose(m);
    int fd = open("data", O_RDONLY);
    assert(fd >= 0 && "the rename survived the crash");
    assert(read(fd, v, sizeof v) == 2 && memcmp(v, "v2", 2) == 0);
    close(fd);
  } else {
    m = fopen("booted", "w");
    assert(m && fprintf(m, "node %d\n", id) > 0 && fflush(m) == 0 && fsync(fileno(m)) == 0);
    fclose(m);
    sync_dir();
    int fd = open("data.tmp", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert(fd >= 0 && write(fd, "v2", 2) == 2 && fsync(fd) == 0);
    close(fd);
    assert(rename("data.tmp", "data") == 0);
    if (id == 1)
      sync_dir();
    struct stat st;
    assert(stat("data", &st) == 0 && st.st_size == 2 && access("data.tmp", F_OK) != 0);
  }
  for (;;)
    sleep(1);
}
