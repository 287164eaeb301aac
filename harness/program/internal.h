/* Internals of the program runtime shared by program.c (the node's life,
 * process, memory, time, streams) and net.c (sockets, poll, epoll). */
#ifndef SIMFUZZ_PROGRAM_INTERNAL_H
#define SIMFUZZ_PROGRAM_INTERNAL_H

#include "program/fiber.h"
#include <simfuzz/linearize.h>
#include <simfuzz/scenario.h>
#include <simfuzz/simfuzz_client.h>
#include <simfuzz/simfuzz_program.h>

#include <stddef.h>
#include <stdint.h>

#define SFP_FDS 64     /* descriptors per node, beyond the standard three */
#define SFP_FD_FIRST 3 /* 0-2: the standard streams */
#define SFP_RXQ 64     /* datagrams queued per UDP socket, then dropped */
#define SFP_ATEXIT 32  /* atexit handlers per node */
#define SFP_ARG_BYTES 4096u
#define SFP_EPOLL_MAX 64         /* descriptors one epoll instance watches */
#define SFP_WAKE_TAG 0x5f50u     /* the tag of a blocked call's wake-up timer */
#define SFP_OPQ 32               /* a client's operations not yet taken, then dropped */
#define SFP_OUT_LINES 256        /* output lines per node and run in the trace, then cut */
#define SFP_STACK (256u * 1024u) /* a thread's stack */

typedef struct dgram {
  uint8_t *data;
  uint32_t len;
  uint32_t from_addr; /* host byte order */
  uint16_t from_port;
} dgram;

typedef enum {
  FD_FREE = 0,
  FD_UDP,
  FD_TCP,
  FD_LISTEN,
  FD_EPOLL,
  FD_FILE,
  FD_PIPE_R, /* a pipe's read end: its bytes in rx */
  FD_PIPE_W, /* its write end: peer is the read end's index */
  FD_EVENT,  /* an eventfd: its counter in count */
  FD_TIMER,  /* a timerfd: expirations not yet read in count */
  FD_RANDOM  /* /dev/urandom or /dev/random: reads from the node's random stream */
} fd_kind;

/* A TCP socket's state. */
typedef enum {
  T_NEW = 0,    /* socket(), not connected */
  T_CONNECTING, /* sim_connect() sent, no answer yet */
  T_HANDSHAKE,  /* connected; our port prelude sent, waiting for the accept */
  T_PRELUDE,    /* accepted by the simulator, waiting for the peer's prelude */
  T_OPEN,       /* established */
  T_DEAD        /* reset, refused or timed out: err says which */
} tcp_state;

typedef struct ep_item {
  int fd;
  uint32_t events;
  uint64_t data;
  int edge; /* readiness may have changed since the last report (EPOLLET) */
} ep_item;

typedef struct sfp_fd {
  fd_kind kind;
  int nonblock;
  uint16_t port; /* the local port, 0 before bind or first use */
  /* UDP */
  dgram *q; /* SFP_RXQ of them, allocated at the first datagram */
  uint32_t qhead, qlen;
  /* TCP */
  tcp_state state;
  int hidden;    /* accepted by the simulator, not yet by accept() */
  uint64_t seq;  /* the order of arrival in the accept queue */
  uint64_t conn; /* sim_conn */
  int peer;      /* the peer node */
  int lpeer;     /* TCP inside the node: 1 + the other end's index, else 0 */
  uint16_t peer_port;
  int err;      /* the error the next call reports (ECONNRESET...) */
  int peer_eof; /* the peer shut down writing, or closed */
  int wr_shut;  /* we shut down writing */
  uint8_t *rx;  /* bytes received: rx_len not yet read, from rx_off on */
  size_t rx_off, rx_len, rx_cap;
  /* LISTEN */
  int backlog;
  /* EPOLL */
  ep_item *ep;
  int ep_n;
  /* EVENT: the counter, and whether reads take one at a time */
  uint64_t count;
  int semaphore;
  /* TIMER: armed, its next expiry on the node's monotonic clock, its
   * period (0: once), the clock it was created on */
  int t_armed, t_clock;
  int64_t t_next, t_every;
  /* FILE: an inode of the node's file system, a position, open flags */
  int ino;
  uint64_t pos;
  int oflags;
} sfp_fd;

/* A node's file system (fs.c): it lives on across crashes, as a disk does.
 * File data is on the node's simulated disk, one slot of SFP_FILE_MAX
 * bytes per inode, so the scenario's disk faults apply to it (EIO, unsynced
 * sectors lost, torn or corrupted at a crash). The metadata has a
 * volatile and a durable copy: a file's size is durable after its fsync, a
 * directory entry (a create, rename or unlink) after an fsync of its
 * directory, as ext4 promises and ALICE (OSDI'14) tests. A crash brings the
 * durable copy back. */
#define SFP_FILES 32                /* inodes per node */
#define SFP_FILE_MAX (512u * 1024u) /* bytes per file */
#define SFP_PATH 96                 /* a path's bytes, at most */

typedef struct fs_inode {
  int used, is_dir;
  uint64_t size, dsize; /* now, and as a crash would leave it */
} fs_inode;

typedef struct fs_dent {
  int used;
  int ino;
  char path[SFP_PATH];
} fs_dent;

typedef struct sfp_fs {
  fs_inode ino[SFP_FILES];
  fs_dent vol[SFP_FILES], dur[SFP_FILES];
} sfp_fs;

typedef enum { N_DOWN = 0, N_RUN, N_EXITED } nstate;

/* Threads of a node (thread.c): coroutines, one running at a time. */
#define SFP_THREADS 16 /* threads per node, main's included */
#define SFP_KEYS 32    /* pthread keys per node */

typedef enum {
  TH_FREE = 0, /* the slot is unused */
  TH_RUN,      /* runnable, or running (the node's cur) */
  TH_IO,       /* in a blocking call: waits for an event of the node or a deadline */
  TH_SYNC,     /* waits for another thread: a lock, a condition, a join */
  TH_DONE      /* ended, not yet joined */
} th_state;

typedef struct sfp_thread {
  th_state state;
  sfp_fiber *fiber; /* NULL once it ended */
  int err;          /* its errno */
  void *(*fn)(void *);
  void *arg, *ret;
  int detached;
  int wait;       /* TH_SYNC: what it waits for (thread.c's W_*) */
  const void *on; /* ... on which object (a join: the thread's slot) */
  int64_t until;  /* a timed wait's deadline (monotonic), else INT64_MAX */
  int woken;      /* a condition variable's signal chose it */
  void *key[SFP_KEYS];
} sfp_thread;

/* Calls of the table made so far by programs built with a call cost (each
 * one's trampoline counts it: cmake/program_check.cmake). */
extern uint64_t sfp__calls;

/* A block of the node's heap: the node frees all of them when it ends. */
typedef struct blk {
  struct blk *prev, *next;
  size_t size;
  uint64_t magic;
} blk;

typedef struct sfp_node {
  nstate state;
  int blocked; /* no thread runs: the node waits for an event */
  sfp_thread th[SFP_THREADS];
  int cur;               /* the thread running (or that ran last) */
  int next;              /* the thread a switch point chose to run next, or -1 */
  int spawned;           /* it created a thread in this incarnation: its switches are traced */
  uint64_t sched_stream; /* the stream its scheduling decisions are drawn from */
  uint64_t sched_draws;  /* ... and how many were drawn so far */
  uint32_t locks;        /* locks numbered so far (for the trace and feedback) */
  void (*key_dtor[SFP_KEYS])(void *);
  uint8_t key_used[SFP_KEYS];
  const sf_program *prog;      /* the program it runs: a server's version, or the client */
  unsigned char *globals;      /* this node's copy of the program's globals */
  const sf_program_copy *copy; /* or the copy of the program it runs on its own */
  sfp_fd fd[SFP_FDS];
  uint64_t accept_seq;
  blk heap; /* list head of the node's blocks */
  size_t heap_bytes;
  void (*atexit_fn[SFP_ATEXIT])(void);
  int natexit;
  char argbuf[SFP_ARG_BYTES];
  char *argv[SF_PROGRAM_MAX_ARGS + 1];
  int argc;
  uint16_t next_port;
  uint64_t seg_draws; /* TCP writes cut or not so far (net.c) */
  int env_failed;     /* the disk (fs.c) or the heap failed a call of this incarnation */
  int has_timers;     /* it created a timerfd in this incarnation (net.c) */
  char out[SF_PROGRAM_OUTPUT];
  size_t outlen;
  char line[SIM_OUTPUT_MAX]; /* the output line not yet in the trace */
  size_t linelen;            /* (a crash drops it, as a line-buffered stream) */
  uint32_t lines;            /* lines traced in this run, to SFP_OUT_LINES */
  /* CALL_COST_NS: the calls' time not yet spent (ns), and sfp__calls when
   * the node last resumed */
  int64_t owed;
  uint64_t mark;
  sfp_fs fs;       /* survives a crash (fs.c) */
  void *dirs[8];   /* open directory streams (fs.c), freed at the node's end */
  void *files[16]; /* open stdio streams on files (fs.c), closed at its end */
  /* a client node (client.c): the operations the scenario gave it, not
   * yet taken; whether it waits in sf_client_next(); the operation it
   * invoked last; its probe: 0 none, 1 given, 2 taken, 3 an operation
   * invoked after it completed */
  sf_client_op opq[SFP_OPQ];
  uint32_t opq_head, opq_len;
  int waits_op;
  size_t last_op;
  int probed;
} sfp_node;

typedef struct sfp_cluster {
  const sf_program *p;
  /* the initial globals of each version of the program (version 0 is p),
   * and of the client */
  const unsigned char *image[SF_MAX_VERSIONS];
  const unsigned char *client_image;
  int n;     /* the program's nodes: 0 .. n-1 */
  int total; /* and its clients': n .. total-1 */
  sfp_node *node;
  sf_history hist; /* what the clients recorded (client.c) */
  int probing;     /* the liveness window opened: each client got a probe */
} sfp_cluster;

/* The node whose fiber runs (set while it runs). */
extern sfp_cluster *sfp__cur_c;
extern int sfp__cur_n;
extern sim_world *sfp__cur_w;

/* The running node (only from a program's fiber). */
sfp_node *sfp__self(void);

/* errno = e, and -1. */
int sfp__fail_errno(int e);

/* Wait for the node's next event, or until its monotonic clock reads
 * `until` (INT64_MAX: no deadline). */
void sfp__block_until(int64_t until);

/* Arm the running node's wake-up timer for when its monotonic clock reads
 * `until` (0, no timer, for INT64_MAX). The caller cancels it once awake. */
sim_timer sfp__wake_at(int64_t until);

/* Wait until the node's monotonic clock has moved on by ns (a sleep). */
void sfp__sleep_ns(int64_t ns);

/* The node's monotonic clock. */
int64_t sfp__mono_now(void);
/* The time the running node's calls cost it and it has not spent (ns). */
int64_t sfp__owed(void);

/* Threads (thread.c). The node's first thread runs fn(arg) (its main). */
void sfp__threads_boot(sfp_node *me, sim_world *w, int k, void (*fn)(void *), void *arg);
/* Free every thread's stack (the node ended: its frames are dropped). */
void sfp__threads_end(sfp_node *me);
/* Run the node's threads, one at a time, until none can run (from the
 * scheduler's stack, with the node current); then the node waits for an
 * event, or, if every thread waits for another, fails the run: a deadlock. */
void sfp__threads_run(sfp_node *me, sim_world *w, int k);
/* An event of the node: threads in a blocking call check again (and
 * timed waits whose deadline passed). */
void sfp__poke(sfp_node *me);
/* From a thread: wait in a blocking call, until an event of the node or
 * `until` (the caller arms the wake-up). */
void sfp__thread_wait_io(void);
/* From a thread: a point where a real scheduler could switch threads. */
void sfp__switch_point(void);

/* From a thread: a call that takes the device time (an fsync). In a node
 * that started threads, the thread waits 50 us to 2 ms (drawn) while the
 * others run and events arrive; in a node with one thread it takes no
 * time, as every call does. */
void sfp__io_pause(void);

/* Resume node k if it waits for an event (from a simulator callback). */
void sfp__wake(sfp_cluster *c, sim_world *w, int k);

/* Fail the run from the running node's fiber, naming `name`, and stop the
 * node (the caller's site: file, line). */
void sfp__fail_node(const char *name, const char *file, int line, const char *msg)
    __attribute__((noreturn));

/* Sockets (net.c): a node's descriptors at boot and at its end; the
 * simulator's datagram and connection callbacks. */
void sfp__net_boot(sfp_node *me);
void sfp__net_end(sfp_node *me, sim_world *w, int k);
void sfp__recv_cb(void *ctx, sim_world *w, int k, int from, const void *msg, size_t len);
void sfp__conn_cb(void *ctx, sim_world *w, int k, sim_conn c, sim_conn_event ev, const void *data,
                  size_t len);

/* Files (fs.c): the node's end (its crash makes the durable metadata the
 * file system; its streams and directories are dropped); read() and
 * write() on a file's descriptor. */
void sfp__fs_end(sfp_node *me, sim_teardown_why why);
long sfp__file_read(sfp_fd *f, void *buf, size_t len);
long sfp__file_write(sfp_fd *f, const void *buf, size_t len);

/* The descriptor fd of the running node, of any kind, or NULL. */
sfp_fd *sfp__fd(int fd);

/* The earliest expiry still to come of the running node's armed timerfds
 * (monotonic clock), or INT64_MAX: a blocked call wakes then too. */
int64_t sfp__timers_next(void);

/* read() and write() on a socket's descriptor (EBADF if it is none). */
long sfp__sock_read(int fd, void *buf, size_t len);
long sfp__sock_write(int fd, const void *buf, size_t len);

#endif
