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
 * A call not in the table goes to the C library as it is only if it is in
 * the list of pure calls below (string.h, ctype.h, math, formatting into
 * memory, stdio on a FILE that can only be one of simfuzz's). Any other
 * call the program's objects make is refused at build time by
 * simfuzz_add_program: a stub that fails the run naming the call takes its
 * place (cmake/program_check.cmake). Nothing reaches the host unnamed.
 *
 * pure-begin
 * memcpy memmove memset memcmp memchr memrchr memmem rawmemchr bzero bcopy bcmp
 * explicit_bzero strlen strnlen strcpy strncpy strcat strncat strcmp strncmp
 * strcasecmp strncasecmp strchr strrchr strstr strcasestr strspn strcspn strpbrk
 * strtok strtok_r strsep strerror strerror_r strsignal stpcpy stpncpy strcoll strxfrm
 * __memcpy_chk __memmove_chk __memset_chk __strcpy_chk __strncpy_chk __strcat_chk
 * __strncat_chk __stpcpy_chk __explicit_bzero_chk __rawmemchr
 * isalpha isdigit isalnum isspace isupper islower isxdigit isprint ispunct iscntrl
 * isgraph toupper tolower __ctype_b_loc __ctype_tolower_loc __ctype_toupper_loc
 * atoi atol atoll atof strtol strtoul strtoll strtoull strtod strtof strtold
 * __isoc23_strtol __isoc23_strtoul __isoc23_strtoll __isoc23_strtoull
 * abs labs llabs div ldiv qsort bsearch
 * snprintf sprintf vsnprintf vsprintf sscanf vsscanf __isoc99_sscanf
 * __isoc99_vsscanf __snprintf_chk __sprintf_chk __vsnprintf_chk __vsprintf_chk
 * fprintf vfprintf fputs fputc putc fwrite fflush fclose fgets fgetc getc fread
 * feof ferror clearerr setvbuf setbuf fseek ftell rewind fscanf __isoc99_fscanf
 * ungetc __fprintf_chk __vfprintf_chk __fgets_chk __fread_chk _IO_putc _IO_getc
 * sqrt pow exp log log2 log10 floor ceil round fabs fmod sin cos tan atan atan2
 * lrint lround trunc sqrtf powf floorf ceilf fabsf fmin fmax
 * gmtime gmtime_r strftime timegm
 * htons htonl ntohs ntohl inet_ntop inet_ntoa inet_addr inet_aton
 * getopt getopt_long optind optarg opterr optopt basename dirname __xpg_basename
 * gai_strerror __fdelt_chk __sched_cpucount sigemptyset sigfillset sigaddset sigdelset sigismember
 * _setjmp setjmp longjmp __longjmp_chk __sigsetjmp siglongjmp
 * __stack_chk_fail __cxa_finalize __cxa_atexit
 * pure-end */
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
  X(getuid, MODEL, "0: root, as in a container")                                       \
  X(geteuid, MODEL, "0")                                                               \
  X(getgid, MODEL, "0")                                                                \
  X(getegid, MODEL, "0")                                                               \
  X(sysconf, MODEL, "page size, processors (1), open files, clock ticks; else EINVAL") \
  X(__sysconf, MODEL, "as sysconf")                                                    \
  X(getpagesize, MODEL, "4096")                                                        \
  X(getrlimit, MODEL, "stack 8 MiB, open files as many as a node's descriptors; else unlimited")\
  X(getrlimit64, MODEL, "as getrlimit")                                                \
  X(uname, MODEL, "Linux, host name nodeK")                                            \
  X(gnu_get_libc_version, MODEL, "the C library simfuzz was built with")               \
  X(sched_getaffinity, MODEL, "one processor")                                         \
  X(isatty, MODEL, "no terminal: ENOTTY")                                              \
  X(chdir, MODEL, "only to the node's data directory (.)")                               \
  X(getenv, MODEL, "no variables: NULL")                                                 \
  /* memory: per node, freed when it crashes or exits */                                 \
  X(malloc, MODEL, "per-node heap at fixed addresses, fails at the allocation fault point") \
  X(calloc, MODEL, "per-node heap")                                                      \
  X(realloc, MODEL, "per-node heap")                                                     \
  X(free, MODEL, "per-node heap")                                                        \
  X(strdup, MODEL, "per-node heap")                                                      \
  X(strndup, MODEL, "per-node heap")                                                     \
  X(__errno_location, MODEL, "errno, per node")                                          \
  /* time: the node's simulated clock, with its drift and jumps */                       \
  X(clock_gettime, MODEL, "REALTIME, MONOTONIC, BOOTTIME from the node's clock")         \
  X(clock_getres, MODEL, "1 ns on every clock")                                        \
  X(syscall, MODEL, "raw calls: close, getrandom; statx, preadv, pwritev, copy_file_range ENOSYS (callers fall back); any other fails the run, named")\
  X(gettimeofday, MODEL, "the node's realtime clock")                                    \
  X(time, MODEL, "the node's realtime clock")                                            \
  X(nanosleep, MODEL, "yields until the node's clock has moved on")                      \
  X(clock_nanosleep, MODEL, "relative, or TIMER_ABSTIME on the node's clock")             \
  X(usleep, MODEL, "as nanosleep")                                                       \
  X(sleep, MODEL, "as nanosleep")                                                        \
  /* randomness: the node's random stream */                                             \
  X(getrandom, MODEL, "the node's random stream")                                        \
  X(rand, MODEL, "the node's random stream")                                             \
  X(random, MODEL, "the node's random stream")                                           \
  X(srand, MODEL, "ignored: the stream is the scenario's")                               \
  X(srandom, MODEL, "ignored: the stream is the scenario's")                             \
  X(arc4random, MODEL, "the node's random stream")                                     \
  X(arc4random_buf, MODEL, "the node's random stream")                                 \
  X(arc4random_uniform, MODEL, "the node's random stream, unbiased")                   \
  /* sockets: UDP as the simulator's datagrams, TCP as its stream connections; */         \
  /* every network fault of the scenario applies */                                      \
  X(socket, MODEL, "AF_INET, SOCK_DGRAM (UDP) or SOCK_STREAM (TCP)")                    \
  X(bind, MODEL, "a port of the node's address (or any)")                               \
  X(listen, MODEL, "TCP: a backlog of accepted connections")                            \
  X(accept, MODEL, "TCP: yields until a connection is queued, or EAGAIN")               \
  X(accept4, MODEL, "as accept, with SOCK_NONBLOCK")                                     \
  X(connect, MODEL, "TCP to 10.0.0.(k+1), or inside the node; ECONNREFUSED if no one listens") \
  X(send, MODEL, "TCP: EPIPE/ECONNRESET after a reset")                                  \
  X(sendto, MODEL, "UDP: a datagram to 10.0.0.(k+1) or 127.0.0.1; TCP: as send")        \
  X(recv, MODEL, "yields until bytes or a datagram arrive; 0 at the peer's shutdown")   \
  X(recvfrom, MODEL, "as recv, with the sender's address")                               \
  X(read, MODEL, "a socket: as recv; standard input: end of file")                       \
  X(write, MODEL, "a socket: as send; standard output and error: captured")             \
  X(shutdown, MODEL, "TCP half-close: the peer reads end of file")                       \
  X(close, MODEL, "a socket or epoll instance; TCP: the peer reads end of file")         \
  X(setsockopt, MODEL, "accepted and ignored (SO_REUSEADDR, TCP_NODELAY and the like)") \
  X(getsockopt, MODEL, "SO_ERROR (a non-blocking connect's outcome), SO_TYPE")           \
  X(getsockname, MODEL, "the node's address and the socket's port")                      \
  X(getpeername, MODEL, "TCP: the peer's address and port")                              \
  X(fcntl, MODEL, "F_GETFL/F_SETFL O_NONBLOCK")                                          \
  X(fcntl64, MODEL, "as fcntl")                                                        \
  X(ioctl, MODEL, "FIONREAD, FIONBIO")                                                   \
  X(poll, MODEL, "yields until a descriptor is ready or the timeout")                   \
  X(epoll_create1, MODEL, "an epoll instance of the node")                              \
  X(epoll_create, MODEL, "as epoll_create1")                                             \
  X(epoll_ctl, MODEL, "ADD, MOD, DEL; EPOLLET, EPOLLONESHOT")                            \
  X(epoll_wait, MODEL, "level- and edge-triggered; yields until ready or the timeout")  \
  X(select, MODEL, "as poll")                                                            \
  X(ppoll, MODEL, "as poll (no signals are delivered)")                                  \
  X(pipe, MODEL, "inside the node, 64 KiB; a blocking write to a full one: EDEADLK")    \
  X(pipe2, MODEL, "as pipe, with O_NONBLOCK")                                            \
  X(eventfd, MODEL, "a counter, EFD_SEMAPHORE and EFD_NONBLOCK")                         \
  X(inet_pton, MODEL, "IPv4 text to an address")                                         \
  X(getaddrinfo, MODEL, "IPv4: hosts nodeK, localhost or numeric; numeric services")    \
  X(freeaddrinfo, MODEL, "the list getaddrinfo gave")                                    \
  /* _FORTIFY_SOURCE's checked forms */                                                  \
  X(__read_chk, MODEL, "as read, and the buffer's size checked")                         \
  X(__recv_chk, MODEL, "as recv, and the buffer's size checked")                         \
  X(__recvfrom_chk, MODEL, "as recvfrom, and the buffer's size checked")                 \
  X(__poll_chk, MODEL, "as poll, and the array's size checked")                          \
  X(__printf_chk, MODEL, "as printf")                                                    \
  X(__vprintf_chk, MODEL, "as vprintf")                                                  \
  /* files: the node's own tree on its simulated disk (fs.c) */                       \
  X(open, MODEL, "files of the node's tree (O_CREAT, O_EXCL, O_TRUNC, O_APPEND, O_DIRECTORY); /dev/urandom") \
  X(__open64_2, MODEL, "as open (_FORTIFY_SOURCE's form, no mode)")                    \
  X(open64, MODEL, "as open")                                                            \
  X(openat, MODEL, "AT_FDCWD or an absolute path")                                       \
  X(creat, MODEL, "as open")                                                             \
  X(pread, MODEL, "from the disk; EIO as the scenario's disk faults say")                \
  X(pwrite, MODEL, "to the disk; durable only after fsync")                              \
  X(pread64, MODEL, "as pread")                                                          \
  X(pwrite64, MODEL, "as pwrite")                                                        \
  X(lseek, MODEL, "SEEK_SET, SEEK_CUR, SEEK_END")                                        \
  X(lseek64, MODEL, "as lseek")                                                          \
  X(ftruncate, MODEL, "a file's size, durable after fsync")                             \
  X(fsync, MODEL, "a file: its data and size durable; a directory: its entries")         \
  X(fdatasync, MODEL, "as fsync")                                                        \
  X(rename, MODEL, "atomic; durable after an fsync of the directory")                    \
  X(unlink, MODEL, "durable after an fsync of the directory")                            \
  X(mkdir, MODEL, "durable after an fsync of its parent")                                \
  X(rmdir, MODEL, "an empty directory")                                                  \
  X(stat, MODEL, "size and type")                                                        \
  X(fstat, MODEL, "size and type; a socket is S_IFSOCK")                                 \
  X(fstat64, MODEL, "as fstat")                                                        \
  X(access, MODEL, "whether the path exists")                                            \
  X(opendir, MODEL, "a directory of the node's tree")                                    \
  X(readdir, MODEL, "its entries now")                                                   \
  X(readdir64, MODEL, "as readdir")                                                      \
  X(closedir, MODEL, "frees it")                                                               \
  X(fopen, MODEL, "a stdio stream on a file of the node's tree (fopencookie)")           \
  X(fopen64, MODEL, "as fopen")                                                          \
  X(fileno, MODEL, "a file stream's descriptor; 1 and 2 for the standard streams")        \
  /* standard streams: captured per node, bounded */                                     \
  X(stdout, MODEL, "the node's captured output")                                         \
  X(stderr, MODEL, "the node's captured output")                                         \
  X(stdin, MODEL, "empty: end of file")                                                  \
  X(printf, MODEL, "to the node's captured output")                                      \
  X(vprintf, MODEL, "to the node's captured output")                                     \
  X(puts, MODEL, "to the node's captured output")                                        \
  X(putchar, MODEL, "to the node's captured output")                                     \
  X(perror, MODEL, "to the node's captured output")                                      \
  /* scatter-gather: one read or write of the whole vector (iov.c) */                   \
  X(readv, MODEL, "one read, scattered")                                                 \
  X(writev, MODEL, "one write, gathered")                                                \
  X(sendmsg, MODEL, "one send of the gathered vector; no ancillary data")                \
  X(recvmsg, MODEL, "one receive, scattered; no ancillary data")                         \
  /* timerfd: a timer as a descriptor (net.c) */                                         \
  X(timerfd_create, MODEL, "monotonic, boottime or realtime; readable when it expires")  \
  X(timerfd_settime, MODEL, "relative or absolute, once or periodic")                    \
  X(timerfd_gettime, MODEL, "the time left and the period")                              \
  /* a CLIENT's (simfuzz_client.h; only on a client node) */                          \
  X(sf_client_next, MODEL, "the client's next operation of the scenario")                \
  X(sf_client_invoke, MODEL, "records an operation's invocation in the history")          \
  X(sf_client_complete, MODEL, "records its response")                                     \
  /* threads: coroutines of the node, one running at a time (thread.c) */              \
  X(pthread_create, MODEL, "a coroutine of the node, run one thread at a time")        \
  X(pthread_exit, MODEL, "the thread ends; the last one ends the process with 0")      \
  X(pthread_join, MODEL, "waits for the thread to end")                                \
  X(pthread_detach, MODEL, "its slot is freed when it ends")                           \
  X(pthread_self, MODEL, "the thread's number in the node, from 1")                    \
  X(pthread_equal, MODEL, "compares two threads")                                      \
  X(pthread_attr_init, MODEL, "attributes: detach state and stack size")               \
  X(pthread_attr_destroy, MODEL, "attributes: nothing to free")                        \
  X(pthread_attr_setdetachstate, MODEL, "joinable or detached")                        \
  X(pthread_attr_getdetachstate, MODEL, "joinable or detached")                        \
  X(pthread_attr_setstacksize, MODEL, "recorded; every thread has a 256 KiB stack")    \
  X(pthread_attr_getstacksize, MODEL, "the recorded size")                             \
  X(pthread_setname_np, MODEL, "accepted and ignored")                                 \
  X(pthread_sigmask, MODEL, "accepted: no signal reaches a node")                      \
  X(sigprocmask, MODEL, "accepted: no signal reaches a node")                          \
  X(pthread_atfork, MODEL, "accepted: a node never forks")                             \
  X(sched_yield, MODEL, "a switch point")                                              \
  X(sf_atomic_point, MODEL, "an atomic operation (program_atomics.h): a switch point") \
  X(pthread_mutex_init, MODEL, "normal, recursive or error-checking")                  \
  X(pthread_mutex_destroy, MODEL, "EBUSY while held")                                  \
  X(pthread_mutex_lock, MODEL, "a switch point; waits while another thread holds it")  \
  X(pthread_mutex_trylock, MODEL, "a switch point; EBUSY while held")                  \
  X(pthread_mutex_timedlock, MODEL, "as lock, until a realtime deadline")              \
  X(pthread_mutex_unlock, MODEL, "wakes its waiters; a switch point")                  \
  X(pthread_mutexattr_init, MODEL, "the default type")                                 \
  X(pthread_mutexattr_destroy, MODEL, "nothing to free")                               \
  X(pthread_mutexattr_settype, MODEL, "normal, recursive or error-checking")           \
  X(pthread_mutexattr_gettype, MODEL, "the type")                                      \
  X(pthread_cond_init, MODEL, "a condition variable, on its clock")                    \
  X(pthread_cond_destroy, MODEL, "nothing to free")                                    \
  X(pthread_cond_wait, MODEL, "releases the mutex and waits for a signal")             \
  X(pthread_cond_timedwait, MODEL, "as wait, until a deadline on the condition's clock")\
  X(pthread_cond_signal, MODEL, "wakes one waiter, drawn among them; a switch point")  \
  X(pthread_cond_broadcast, MODEL, "wakes every waiter; a switch point")               \
  X(pthread_condattr_init, MODEL, "realtime clock")                                    \
  X(pthread_condattr_destroy, MODEL, "nothing to free")                                \
  X(pthread_condattr_setclock, MODEL, "realtime or monotonic")                         \
  X(pthread_rwlock_init, MODEL, "a read-write lock")                                   \
  X(pthread_rwlock_destroy, MODEL, "EBUSY while held")                                 \
  X(pthread_rwlock_rdlock, MODEL, "a switch point; waits while a writer holds it")     \
  X(pthread_rwlock_wrlock, MODEL, "a switch point; waits while anyone holds it")       \
  X(pthread_rwlock_tryrdlock, MODEL, "a switch point; EBUSY while a writer holds it")  \
  X(pthread_rwlock_trywrlock, MODEL, "a switch point; EBUSY while anyone holds it")    \
  X(pthread_rwlock_unlock, MODEL, "wakes its waiters; a switch point")                 \
  X(pthread_once, MODEL, "runs the function once per node incarnation")                \
  X(pthread_key_create, MODEL, "a per-thread value, with a destructor at thread exit") \
  X(pthread_key_delete, MODEL, "frees the key")                                        \
  X(pthread_getspecific, MODEL, "the thread's value")                                  \
  X(pthread_setspecific, MODEL, "sets the thread's value")                             \
  X(sem_init, MODEL, "an unnamed semaphore of the node (not shared between processes)")\
  X(sem_destroy, MODEL, "nothing to free")                                             \
  X(sem_wait, MODEL, "a switch point; waits while it is 0")                            \
  X(sem_trywait, MODEL, "a switch point; EAGAIN while it is 0")                        \
  X(sem_timedwait, MODEL, "as wait, until a realtime deadline")                        \
  X(sem_post, MODEL, "wakes its waiters; a switch point")                              \
  X(sem_getvalue, MODEL, "its value")                                                  \
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
  X(pthread_cancel, REFUSE, "thread cancellation")                                     \
  X(pthread_kill, REFUSE, "signals to a thread")                                        \
  X(signal, REFUSE, "signal handlers")                                                   \
  X(sigaction, REFUSE, "signal handlers")                                                \
  X(raise, REFUSE, "signals")                                                            \
  X(kill, REFUSE, "signals")                                                             \
  X(mmap, REFUSE, "mapped files and memory")                                             \
  X(epoll_pwait, REFUSE, "epoll_pwait (not modelled yet: use epoll_wait)")               \
  X(socketpair, REFUSE, "socket pairs (not modelled yet)")                               \
  X(dup, REFUSE, "duplicated descriptors (not modelled yet)")                            \
  X(dup2, REFUSE, "duplicated descriptors (not modelled yet)")                           \
  X(gethostbyname, REFUSE, "name lookup")                                                \
  X(dlopen, REFUSE, "loading code")
/* clang-format on */

#endif
