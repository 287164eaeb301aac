/* The POSIX calls of a program target: the one table. Each row is a call
 * the program's objects may reference, and what simfuzz does with it:
 *
 *   X(name, how, what)
 *   name  the C library symbol the program's objects reference
 *   how   MODEL: every reference becomes sfp_<name>, simfuzz's model of it
 *               (program.c defines it; a row without one does not link);
 *         REFUSE: every reference becomes a stub that fails the run with
 *               a message naming the call (it would reach the host, or
 *               simfuzz does not model it yet)
 *   what  one line for the docs and the refusal message
 *
 * simfuzz_add_program() turns the table into the symbol map of
 * `objcopy --redefine-syms` (cmake/SimfuzzProgram.cmake reads the rows),
 * so a program's call to one of these never reaches the host's C library.
 * A call not in the table goes to the C library as it is: pure functions
 * (string.h, ctype.h, math) and formatting into memory. */
#ifndef SIMFUZZ_PROGRAM_CALLS_H
#define SIMFUZZ_PROGRAM_CALLS_H

/* clang-format off */
#define SFP_CALLS(X)                                                                     \
  /* process */                                                                          \
  X(main, MODEL, "the program's entry point, run as node k's fiber")                    \
  X(exit, MODEL, "the node stops; a status other than 0 fails the run")                \
  X(_exit, MODEL, "as exit, without atexit handlers")                                    \
  X(_Exit, MODEL, "as _exit")                                                            \
  X(atexit, MODEL, "handlers run at exit, per node")                                     \
  X(abort, MODEL, "fails the run: the program aborted")                                  \
  X(__assert_fail, MODEL, "fails the run at the assertion's site")                       \
  X(getpid, MODEL, "a per-node process id")                                             \
  X(getenv, MODEL, "no variables: NULL")                                                 \
  /* memory: per node, freed when it crashes or exits */                                 \
  X(malloc, MODEL, "per-node heap, fails at the allocation fault point")                \
  X(calloc, MODEL, "per-node heap")                                                      \
  X(realloc, MODEL, "per-node heap")                                                     \
  X(free, MODEL, "per-node heap")                                                        \
  X(strdup, MODEL, "per-node heap")                                                      \
  X(strndup, MODEL, "per-node heap")                                                     \
  X(__errno_location, MODEL, "errno, per node")                                          \
  /* time: the node's simulated clock, with its drift and jumps */                       \
  X(clock_gettime, MODEL, "REALTIME, MONOTONIC, BOOTTIME from the node's clock")         \
  X(gettimeofday, MODEL, "the node's realtime clock")                                    \
  X(time, MODEL, "the node's realtime clock")                                            \
  X(nanosleep, MODEL, "yields until the node's clock has moved on")                      \
  X(usleep, MODEL, "as nanosleep")                                                       \
  X(sleep, MODEL, "as nanosleep")                                                        \
  /* randomness: the node's random stream */                                             \
  X(getrandom, MODEL, "the node's random stream")                                        \
  X(rand, MODEL, "the node's random stream")                                             \
  X(random, MODEL, "the node's random stream")                                           \
  X(srand, MODEL, "ignored: the stream is the scenario's")                               \
  X(srandom, MODEL, "ignored: the stream is the scenario's")                             \
  /* sockets: UDP as the simulator's datagrams, every network fault applies */           \
  X(socket, MODEL, "AF_INET SOCK_DGRAM; others fail with EAFNOSUPPORT/EPROTONOSUPPORT") \
  X(bind, MODEL, "a port of the node's address (or any)")                               \
  X(sendto, MODEL, "a datagram to 10.0.0.(k+1) or 127.0.0.1")                            \
  X(recvfrom, MODEL, "blocks (yields) until a datagram arrives, or EAGAIN")             \
  X(recv, MODEL, "as recvfrom")                                                          \
  X(close, MODEL, "a socket")                                                            \
  X(setsockopt, MODEL, "accepted and ignored (SO_REUSEADDR and the like)")              \
  X(fcntl, MODEL, "F_GETFL/F_SETFL O_NONBLOCK")                                          \
  X(poll, MODEL, "POLLIN/POLLOUT on sockets; yields until ready or the timeout")         \
  X(inet_pton, MODEL, "IPv4 text to an address")                                         \
  /* standard streams: captured per node, bounded */                                     \
  X(stdout, MODEL, "the node's captured output")                                         \
  X(stderr, MODEL, "the node's captured output")                                         \
  X(printf, MODEL, "to the node's captured output")                                      \
  X(vprintf, MODEL, "to the node's captured output")                                     \
  X(puts, MODEL, "to the node's captured output")                                        \
  X(putchar, MODEL, "to the node's captured output")                                     \
  X(perror, MODEL, "to the node's captured output")                                      \
  /* refused: they would reach the host, or are not modelled yet */                      \
  X(fork, REFUSE, "a second process")                                                    \
  X(vfork, REFUSE, "a second process")                                                   \
  X(execve, REFUSE, "another program")                                                   \
  X(execv, REFUSE, "another program")                                                    \
  X(execvp, REFUSE, "another program")                                                   \
  X(execl, REFUSE, "another program")                                                    \
  X(execlp, REFUSE, "another program")                                                   \
  X(system, REFUSE, "a shell")                                                           \
  X(popen, REFUSE, "a shell")                                                            \
  X(daemon, REFUSE, "a second process")                                                  \
  X(pthread_create, REFUSE, "threads (issue 39)")                                        \
  X(signal, REFUSE, "signal handlers")                                                   \
  X(sigaction, REFUSE, "signal handlers")                                                \
  X(raise, REFUSE, "signals")                                                            \
  X(kill, REFUSE, "signals")                                                             \
  X(mmap, REFUSE, "mapped files and memory")                                             \
  X(syscall, REFUSE, "raw system calls")                                                 \
  X(open, REFUSE, "files (not modelled yet)")                                            \
  X(open64, REFUSE, "files (not modelled yet)")                                          \
  X(openat, REFUSE, "files (not modelled yet)")                                          \
  X(fopen, REFUSE, "files (not modelled yet)")                                           \
  X(fopen64, REFUSE, "files (not modelled yet)")                                         \
  X(creat, REFUSE, "files (not modelled yet)")                                           \
  X(read, REFUSE, "descriptors (not modelled yet: use recv)")                            \
  X(write, REFUSE, "descriptors (not modelled yet: use sendto)")                         \
  X(connect, REFUSE, "TCP (not modelled yet)")                                           \
  X(listen, REFUSE, "TCP (not modelled yet)")                                            \
  X(accept, REFUSE, "TCP (not modelled yet)")                                            \
  X(accept4, REFUSE, "TCP (not modelled yet)")                                           \
  X(send, REFUSE, "TCP (not modelled yet: use sendto)")                                  \
  X(epoll_create1, REFUSE, "epoll (not modelled yet: use poll)")                         \
  X(epoll_create, REFUSE, "epoll (not modelled yet: use poll)")                          \
  X(select, REFUSE, "select (not modelled yet: use poll)")                               \
  X(getaddrinfo, REFUSE, "name lookup (not modelled yet: use inet_pton)")                \
  X(gethostbyname, REFUSE, "name lookup")                                                \
  X(dlopen, REFUSE, "loading code")
/* clang-format on */

#endif
