/* Scatter-gather I/O of program nodes: readv, writev, sendmsg and recvmsg
 * as the calls they gather for (program.c, net.c). A gathered write is one
 * write, so a datagram stays one datagram and a TCP write one write (which
 * the network may still cut in segments); a scattered read is one read.
 * Ancillary data is not modelled: a message's control part comes back
 * empty. */
#define _GNU_SOURCE
#include "program/internal.h"
#include <simfuzz/simfuzz_runner.h>

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#define SFP_IOV_BYTES (1u << 20) /* bytes one vectored call moves, at most */

ssize_t sfp_read(int fd, void *buf, size_t len);
ssize_t sfp_write(int fd, const void *buf, size_t len);
ssize_t sfp_sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *sa,
                   socklen_t salen);
ssize_t sfp_recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *sa,
                     socklen_t *salen);

/* The bytes of iov[0..n), or -1 (errno EINVAL) for a bad vector; at most
 * SFP_IOV_BYTES are moved. */
static ssize_t iov_bytes(const struct iovec *iov, int n) {
  if (n < 0 || n > IOV_MAX || (n && !iov))
    return sfp__fail_errno(EINVAL);
  size_t total = 0;
  for (int i = 0; i < n; i++) {
    if (iov[i].iov_len > SSIZE_MAX - total)
      return sfp__fail_errno(EINVAL);
    total += iov[i].iov_len;
  }
  return (ssize_t)(total < SFP_IOV_BYTES ? total : SFP_IOV_BYTES);
}

/* The vector's bytes in one buffer (the caller frees it), or NULL. */
static unsigned char *gather(const struct iovec *iov, size_t len) {
  unsigned char *b = malloc(len ? len : 1);
  if (!b)
    sf_out_of_memory("a program's vectored write");
  for (size_t o = 0, i = 0; o < len; i++) {
    size_t k = iov[i].iov_len < len - o ? iov[i].iov_len : len - o;
    memcpy(b + o, iov[i].iov_base, k);
    o += k;
  }
  return b;
}

static void scatter(const struct iovec *iov, const unsigned char *b, size_t len) {
  for (size_t o = 0, i = 0; o < len; i++) {
    size_t k = iov[i].iov_len < len - o ? iov[i].iov_len : len - o;
    memcpy(iov[i].iov_base, b + o, k);
    o += k;
  }
}

/* One write (or send) of the gathered vector. */
static ssize_t put_vec(int fd, const struct iovec *iov, int n, int flags, const struct sockaddr *to,
                       socklen_t tolen, int is_send) {
  ssize_t len = iov_bytes(iov, n);
  if (len < 0)
    return -1;
  unsigned char *b = gather(iov, (size_t)len);
  ssize_t r =
      is_send ? sfp_sendto(fd, b, (size_t)len, flags, to, tolen) : sfp_write(fd, b, (size_t)len);
  free(b);
  return r;
}

/* A read into one buffer, scattered over the vector. */
static ssize_t get_vec(int fd, const struct iovec *iov, int n, int flags, struct sockaddr *from,
                       socklen_t *fromlen, int is_recv) {
  ssize_t len = iov_bytes(iov, n);
  if (len < 0)
    return -1;
  unsigned char *b = malloc(len ? (size_t)len : 1);
  if (!b)
    sf_out_of_memory("a program's vectored read");
  ssize_t r = is_recv ? sfp_recvfrom(fd, b, (size_t)len, flags, from, fromlen)
                      : sfp_read(fd, b, (size_t)len);
  if (r > 0)
    scatter(iov, b, (size_t)r);
  free(b);
  return r;
}

ssize_t sfp_writev(int fd, const struct iovec *iov, int n);
ssize_t sfp_writev(int fd, const struct iovec *iov, int n) {
  return put_vec(fd, iov, n, 0, NULL, 0, 0);
}

ssize_t sfp_readv(int fd, const struct iovec *iov, int n);
ssize_t sfp_readv(int fd, const struct iovec *iov, int n) {
  return get_vec(fd, iov, n, 0, NULL, NULL, 0);
}

ssize_t sfp_sendmsg(int fd, const struct msghdr *m, int flags);
ssize_t sfp_sendmsg(int fd, const struct msghdr *m, int flags) {
  if (!m || m->msg_iovlen > INT_MAX)
    return sfp__fail_errno(EINVAL);
  return put_vec(fd, m->msg_iov, (int)m->msg_iovlen, flags, m->msg_name, m->msg_namelen, 1);
}

ssize_t sfp_recvmsg(int fd, struct msghdr *m, int flags);
ssize_t sfp_recvmsg(int fd, struct msghdr *m, int flags) {
  if (!m || m->msg_iovlen > INT_MAX)
    return sfp__fail_errno(EINVAL);
  socklen_t namelen = m->msg_namelen;
  ssize_t r = get_vec(fd, m->msg_iov, (int)m->msg_iovlen, flags, m->msg_name,
                      m->msg_name ? &namelen : NULL, 1);
  if (r >= 0) {
    m->msg_namelen = m->msg_name ? namelen : 0;
    m->msg_controllen = 0; /* no ancillary data */
    m->msg_flags = 0;
  }
  return r;
}
