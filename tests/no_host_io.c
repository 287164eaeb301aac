/* no_host_io COMMAND [ARG...]: run COMMAND where any attempt to reach the
 * host's network or to change its file system kills the process with
 * SIGSYS (a seccomp filter, inherited by its children). Read-only opens,
 * reads, writes to descriptors already open (the terminal), memory, fork
 * and exec stay allowed. tests/programs.sh runs program targets under it:
 * a call of a program that escaped the simulator to the host would end the
 * run. Exits 77 (skipped) where the kernel refuses a filter. */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#else
#error "no_host_io: an architecture the filter does not know"
#endif

#define NR offsetof(struct seccomp_data, nr)
#define ARG(i) offsetof(struct seccomp_data, args[i])
#define KILL BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)
#define ALLOW BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
/* the call `nr` is refused whatever its arguments */
#define REFUSE(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), KILL
/* the call `nr` is refused if its flags argument `i` asks to write or create */
#define WRITES(nr, i)                                                                              \
  BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 3), BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG(i)),     \
      BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, O_WRONLY | O_RDWR | O_CREAT | O_TRUNC, 0, 1), KILL

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: no_host_io COMMAND [ARG...]\n");
    return 2;
  }
  struct sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
      KILL,
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, NR),
      /* the network */
      REFUSE(SYS_socket),
      REFUSE(SYS_connect),
      REFUSE(SYS_bind),
      REFUSE(SYS_listen),
      REFUSE(SYS_accept),
      REFUSE(SYS_accept4),
      REFUSE(SYS_sendto),
      REFUSE(SYS_sendmsg),
      REFUSE(SYS_recvfrom),
      REFUSE(SYS_recvmsg),
      /* changes to the file system */
      REFUSE(SYS_renameat),
      REFUSE(SYS_renameat2),
      REFUSE(SYS_unlinkat),
      REFUSE(SYS_mkdirat),
      REFUSE(SYS_linkat),
      REFUSE(SYS_symlinkat),
      REFUSE(SYS_truncate),
      REFUSE(SYS_fsync),
      REFUSE(SYS_fdatasync),
#ifdef SYS_rename
      REFUSE(SYS_rename),
      REFUSE(SYS_unlink),
      REFUSE(SYS_mkdir),
      REFUSE(SYS_rmdir),
      REFUSE(SYS_link),
      REFUSE(SYS_symlink),
      REFUSE(SYS_creat),
      WRITES(SYS_open, 1),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, NR),
#endif
      WRITES(SYS_openat, 2),
      ALLOW,
  };
  struct sock_fprog prog = {(unsigned short)(sizeof f / sizeof f[0]), f};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
    fprintf(stderr, "no_host_io: no seccomp filter here (%s): skipped\n", strerror(errno));
    return 77;
  }
  execvp(argv[1], argv + 1);
  fprintf(stderr, "no_host_io: %s: %s\n", argv[1], strerror(errno));
  return 127;
}
