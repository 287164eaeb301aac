/* Files of program nodes: a small file system per node on its simulated
 * disk (internal.h, sfp_fs), with the crash semantics a careful program
 * must cope with. Paths are the node's own: relative ones from its data
 * directory (the working directory, empty at first boot), absolute ones in
 * the same tree; nothing reaches the host's file system. */
#define _GNU_SOURCE
#include "program/internal.h"
#include <simfuzz/simfuzz.h>
#include <simfuzz/simfuzz_runner.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define W sfp__cur_w
#define N sfp__cur_n

static sfp_fs *fs(void) {
  return &sfp__self()->fs;
}

/* The path in the node's tree: "./a//b" and "a/b" and "/a/b" are "a/b";
 * "" is the top directory. -1 if too long or it climbs out (".."). */
static int norm(const char *in, char *out) {
  size_t o = 0;
  for (const char *s = in; *s;) {
    while (*s == '/')
      s++;
    const char *e = strchr(s, '/');
    size_t n = e ? (size_t)(e - s) : strlen(s);
    if (n == 0 || (n == 1 && s[0] == '.')) {
      s += n;
      continue;
    }
    if (n == 2 && s[0] == '.' && s[1] == '.')
      return -1;
    if (o + n + 2 > SFP_PATH)
      return -1;
    if (o)
      out[o++] = '/';
    memcpy(out + o, s, n);
    o += n;
    s += n;
  }
  out[o] = 0;
  return 0;
}

static void parent_of(const char *path, char *out) {
  const char *slash = strrchr(path, '/');
  size_t n = slash ? (size_t)(slash - path) : 0;
  memcpy(out, path, n);
  out[n] = 0;
}

static fs_dent *lookup(fs_dent *t, const char *path) {
  for (int i = 0; i < SFP_FILES; i++)
    if (t[i].used && strcmp(t[i].path, path) == 0)
      return &t[i];
  return NULL;
}

/* The inode of a path now (the top directory is -2), or -1. */
static int ino_of(const char *path) {
  if (!*path)
    return -2;
  fs_dent *d = lookup(fs()->vol, path);
  return d ? d->ino : -1;
}

static int is_dir(const char *path) {
  int i = ino_of(path);
  return i == -2 || (i >= 0 && fs()->ino[i].is_dir);
}

static uint64_t slot(int ino) {
  return (uint64_t)ino * SFP_FILE_MAX;
}

/* Free the inodes that no entry (now or durable) and no descriptor uses. */
static void collect(sfp_node *me) {
  sfp_fs *f = &me->fs;
  int used[SFP_FILES] = {0};
  for (int j = 0; j < SFP_FILES; j++) {
    if (f->vol[j].used)
      used[f->vol[j].ino] = 1;
    if (f->dur[j].used)
      used[f->dur[j].ino] = 1;
  }
  for (int j = 0; j < SFP_FDS; j++)
    if (me->fd[j].kind == FD_FILE && me->fd[j].ino >= 0)
      used[me->fd[j].ino] = 1;
  for (int i = 0; i < SFP_FILES; i++)
    if (!used[i])
      f->ino[i].used = 0;
}

/* The disk failed an operation with -r (the scenario's fault): the call
 * fails with EIO, or ENOSPC, and the node remembers that it was told (a
 * stop with an error status after it is a fail-stop: program.c). */
static int disk_error(int64_t r) {
  sfp__self()->env_failed = 1;
  return sfp__fail_errno(r == -ENOSPC ? ENOSPC : EIO);
}

static int new_entry(const char *path, int dir) {
  sfp_fs *f = fs();
  int i = 0, j = 0;
  while (i < SFP_FILES && f->ino[i].used)
    i++;
  while (j < SFP_FILES && f->vol[j].used)
    j++;
  if (i == SFP_FILES || j == SFP_FILES)
    return sfp__fail_errno(ENOSPC);
  f->ino[i] = (fs_inode){1, dir, 0, 0};
  f->vol[j].used = 1;
  f->vol[j].ino = i;
  snprintf(f->vol[j].path, sizeof f->vol[j].path, "%s", path);
  return i;
}

/* Bytes [from, to) of a file read as zeros (a hole, or a truncation's
 * growth): written so. */
static int zero_fill(int ino, uint64_t from, uint64_t to) {
  static const uint8_t zeros[4096];
  while (from < to) {
    size_t n = to - from < sizeof zeros ? (size_t)(to - from) : sizeof zeros;
    int64_t r = sim_disk_write(W, N, slot(ino) + from, zeros, n);
    if (r < 0)
      return disk_error(r);
    from += n;
  }
  return 0;
}

/* ---- descriptors -------------------------------------------------------- */

/* The node's lowest free descriptor, cleared and of this kind; NULL (errno
 * EMFILE) if it has none. */
static sfp_fd *new_fd(fd_kind kind) {
  sfp_node *me = sfp__self();
  int i = 0;
  while (i < SFP_FDS && me->fd[i].kind != FD_FREE)
    i++;
  if (i == SFP_FDS) {
    sfp__fail_errno(EMFILE);
    return NULL;
  }
  memset(&me->fd[i], 0, sizeof me->fd[i]);
  me->fd[i].kind = kind;
  return &me->fd[i];
}

static int num_of(const sfp_fd *f) {
  return SFP_FD_FIRST + (int)(f - sfp__self()->fd);
}

/* A descriptor of the node's random stream (/dev/urandom, /dev/random). */
static int random_fd(void) {
  sfp_fd *f = new_fd(FD_RANDOM);
  return f ? num_of(f) : -1;
}

int sfp_open(const char *path, int flags, ...);
int sfp_open(const char *path, int flags, ...) {
  if (path && (strcmp(path, "/dev/urandom") == 0 || strcmp(path, "/dev/random") == 0))
    return random_fd();
  char p[SFP_PATH];
  if (!path || norm(path, p) != 0)
    return sfp__fail_errno(ENAMETOOLONG);
  char dir[SFP_PATH];
  parent_of(p, dir);
  int ino = ino_of(p);
  if (ino == -1) {
    if (!(flags & O_CREAT))
      return sfp__fail_errno(ENOENT);
    if (!is_dir(dir))
      return sfp__fail_errno(ENOENT);
    ino = new_entry(p, 0);
    if (ino < 0)
      return -1;
  } else if ((flags & O_CREAT) && (flags & O_EXCL)) {
    return sfp__fail_errno(EEXIST);
  }
  int dirent = ino == -2 || fs()->ino[ino].is_dir;
  if (dirent && (flags & O_ACCMODE) != O_RDONLY)
    return sfp__fail_errno(EISDIR);
  if (!dirent && (flags & O_DIRECTORY))
    return sfp__fail_errno(ENOTDIR);
  sfp_fd *f = new_fd(FD_FILE);
  if (!f)
    return -1;
  f->ino = ino; /* -2: the top directory */
  f->oflags = flags;
  if ((flags & O_TRUNC) && !dirent && (flags & O_ACCMODE) != O_RDONLY)
    fs()->ino[ino].size = 0;
  return num_of(f);
}

int sfp_open64(const char *path, int flags, ...);
int sfp_open64(const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  int mode = va_arg(ap, int);
  va_end(ap);
  return sfp_open(path, flags, mode);
}

int sfp_openat(int dirfd, const char *path, int flags, ...);
int sfp_openat(int dirfd, const char *path, int flags, ...) {
  if (dirfd != AT_FDCWD && path && path[0] != '/')
    return sfp__fail_errno(EINVAL); /* relative to a directory descriptor: not yet */
  return sfp_open(path, flags, 0644);
}

int sfp_creat(const char *path, mode_t mode);
int sfp_creat(const char *path, mode_t mode) {
  return sfp_open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
}

static sfp_fd *file_fd(int fd, int want_write) {
  sfp_fd *f = sfp__fd(fd);
  if (!f || f->kind != FD_FILE) {
    sfp__fail_errno(EBADF);
    return NULL;
  }
  int acc = f->oflags & O_ACCMODE;
  if (want_write ? acc == O_RDONLY : acc == O_WRONLY) {
    sfp__fail_errno(EBADF);
    return NULL;
  }
  return f;
}

static long pread_at(sfp_fd *f, void *buf, size_t len, uint64_t off) {
  if (f->ino < 0 || fs()->ino[f->ino].is_dir)
    return sfp__fail_errno(EISDIR);
  uint64_t size = fs()->ino[f->ino].size;
  if (off >= size)
    return 0;
  size_t n = size - off < len ? (size_t)(size - off) : len;
  int64_t r = sim_disk_read(W, N, slot(f->ino) + off, buf, n);
  return r < 0 ? disk_error(r) : (long)n;
}

static long pwrite_at(sfp_fd *f, const void *buf, size_t len, uint64_t off) {
  if (f->ino < 0 || fs()->ino[f->ino].is_dir)
    return sfp__fail_errno(EISDIR);
  fs_inode *in = &fs()->ino[f->ino];
  if (off > SFP_FILE_MAX || len > SFP_FILE_MAX - off)
    return sfp__fail_errno(EFBIG);
  if (off > in->size && zero_fill(f->ino, in->size, off) != 0)
    return -1;
  int64_t r = sim_disk_write(W, N, slot(f->ino) + off, buf, len);
  if (r < 0)
    return disk_error(r);
  if (off + len > in->size)
    in->size = off + len;
  return (long)len;
}

long sfp__file_read(sfp_fd *f, void *buf, size_t len) {
  long r = pread_at(f, buf, len, f->pos);
  if (r > 0)
    f->pos += (uint64_t)r;
  return r;
}

long sfp__file_write(sfp_fd *f, const void *buf, size_t len) {
  if ((f->oflags & O_ACCMODE) == O_RDONLY)
    return sfp__fail_errno(EBADF);
  if ((f->oflags & O_APPEND) && f->ino >= 0)
    f->pos = fs()->ino[f->ino].size;
  long r = pwrite_at(f, buf, len, f->pos);
  if (r > 0)
    f->pos += (uint64_t)r;
  return r;
}

ssize_t sfp_pread(int fd, void *buf, size_t len, off_t off);
ssize_t sfp_pread(int fd, void *buf, size_t len, off_t off) {
  sfp_fd *f = file_fd(fd, 0);
  if (!f)
    return -1;
  return off < 0 ? sfp__fail_errno(EINVAL) : pread_at(f, buf, len, (uint64_t)off);
}

ssize_t sfp_pwrite(int fd, const void *buf, size_t len, off_t off);
ssize_t sfp_pwrite(int fd, const void *buf, size_t len, off_t off) {
  sfp_fd *f = file_fd(fd, 1);
  if (!f)
    return -1;
  return off < 0 ? sfp__fail_errno(EINVAL) : pwrite_at(f, buf, len, (uint64_t)off);
}

off_t sfp_lseek(int fd, off_t off, int whence);
off_t sfp_lseek(int fd, off_t off, int whence) {
  sfp_fd *f = sfp__fd(fd);
  if (!f || f->kind != FD_FILE)
    return f ? sfp__fail_errno(ESPIPE) : sfp__fail_errno(EBADF);
  int64_t base = whence == SEEK_SET                  ? 0
                 : whence == SEEK_CUR                ? (int64_t)f->pos
                 : whence == SEEK_END && f->ino >= 0 ? (int64_t)fs()->ino[f->ino].size
                                                     : -1;
  if (base < 0 || (off < 0 && -off > base) || base + off > (int64_t)SFP_FILE_MAX)
    return sfp__fail_errno(EINVAL);
  f->pos = (uint64_t)(base + off);
  return (off_t)f->pos;
}

int sfp_ftruncate(int fd, off_t len);
int sfp_ftruncate(int fd, off_t len) {
  sfp_fd *f = file_fd(fd, 1);
  if (!f)
    return -1;
  if (f->ino < 0 || fs()->ino[f->ino].is_dir)
    return sfp__fail_errno(EISDIR);
  if (len < 0 || (uint64_t)len > SFP_FILE_MAX)
    return sfp__fail_errno(len < 0 ? EINVAL : EFBIG);
  fs_inode *in = &fs()->ino[f->ino];
  if ((uint64_t)len > in->size && zero_fill(f->ino, in->size, (uint64_t)len) != 0)
    return -1;
  in->size = (uint64_t)len;
  return 0;
}

/* fsync: of a file, its data (the sectors of its slot) and its size become
 * durable, and no other file's; of a directory, its entries. */
int sfp_fsync(int fd);
int sfp_fsync(int fd) {
  sfp_fd *f = sfp__fd(fd);
  if (!f || f->kind != FD_FILE)
    return sfp__fail_errno(f ? EINVAL : EBADF);
  sfp__io_pause(); /* in a node with threads it takes time: the others run meanwhile */
  /* a stalled device answers when the stall ends (its time is true time:
   * under drift the node's clock may need more than one wait) */
  for (uint64_t left; (left = sim_disk_stall_left(W, N)) > 0;)
    sfp__block_until(sfp__mono_now() + (int64_t)(left < INT64_MAX / 2 ? left : INT64_MAX / 2));
  sfp_fs *s = fs();
  int file = f->ino >= 0 && !s->ino[f->ino].is_dir;
  int64_t r = file ? sim_disk_sync_range(W, N, slot(f->ino), SFP_FILE_MAX)
                   : sim_disk_sync_range(W, N, 0, 0); /* no data; it can still fail */
  if (r != 0)
    return disk_error(r);
  if (file) {
    s->ino[f->ino].dsize = s->ino[f->ino].size;
    return 0;
  }
  char dir[SFP_PATH] = "";
  for (int i = 0; f->ino >= 0 && i < SFP_FILES; i++)
    if (s->vol[i].used && s->vol[i].ino == f->ino)
      snprintf(dir, sizeof dir, "%s", s->vol[i].path);
  for (int i = 0; i < SFP_FILES; i++) { /* the directory's entries, as they are now */
    char pd[SFP_PATH];
    parent_of(s->dur[i].path, pd);
    if (s->dur[i].used && strcmp(pd, dir) == 0)
      s->dur[i].used = 0;
  }
  for (int i = 0; i < SFP_FILES; i++) {
    char pd[SFP_PATH];
    parent_of(s->vol[i].path, pd);
    if (!s->vol[i].used || strcmp(pd, dir) != 0)
      continue;
    int j = 0;
    while (j < SFP_FILES && s->dur[j].used)
      j++;
    if (j < SFP_FILES)
      s->dur[j] = s->vol[i];
  }
  return 0;
}

int sfp_fdatasync(int fd);
int sfp_fdatasync(int fd) {
  return sfp_fsync(fd);
}

/* ---- names -------------------------------------------------------------- */

int sfp_rename(const char *from, const char *to);
int sfp_rename(const char *from, const char *to) {
  char a[SFP_PATH], b[SFP_PATH], pb[SFP_PATH];
  if (!from || !to || norm(from, a) != 0 || norm(to, b) != 0)
    return sfp__fail_errno(ENAMETOOLONG);
  fs_dent *d = lookup(fs()->vol, a);
  parent_of(b, pb);
  if (!d || !is_dir(pb))
    return sfp__fail_errno(ENOENT);
  if (strcmp(a, b) == 0)
    return 0;
  fs_dent *old = lookup(fs()->vol, b);
  if (old)
    old->used = 0; /* replaced, atomically */
  snprintf(d->path, sizeof d->path, "%s", b);
  collect(sfp__self());
  return 0;
}

int sfp_unlink(const char *path);
int sfp_unlink(const char *path) {
  char p[SFP_PATH];
  if (!path || norm(path, p) != 0)
    return sfp__fail_errno(ENAMETOOLONG);
  fs_dent *d = lookup(fs()->vol, p);
  if (!d)
    return sfp__fail_errno(ENOENT);
  if (fs()->ino[d->ino].is_dir)
    return sfp__fail_errno(EISDIR);
  d->used = 0;
  collect(sfp__self());
  return 0;
}

int sfp_mkdir(const char *path, mode_t mode);
int sfp_mkdir(const char *path, mode_t mode) {
  (void)mode;
  char p[SFP_PATH], dir[SFP_PATH];
  if (!path || norm(path, p) != 0)
    return sfp__fail_errno(ENAMETOOLONG);
  if (ino_of(p) != -1)
    return sfp__fail_errno(EEXIST);
  parent_of(p, dir);
  if (!is_dir(dir))
    return sfp__fail_errno(ENOENT);
  return new_entry(p, 1) < 0 ? -1 : 0;
}

int sfp_rmdir(const char *path);
int sfp_rmdir(const char *path) {
  char p[SFP_PATH], pd[SFP_PATH];
  if (!path || norm(path, p) != 0)
    return sfp__fail_errno(ENAMETOOLONG);
  fs_dent *d = lookup(fs()->vol, p);
  if (!d || !fs()->ino[d->ino].is_dir)
    return sfp__fail_errno(d ? ENOTDIR : ENOENT);
  for (int i = 0; i < SFP_FILES; i++) {
    parent_of(fs()->vol[i].path, pd);
    if (fs()->vol[i].used && strcmp(pd, p) == 0)
      return sfp__fail_errno(ENOTEMPTY);
  }
  d->used = 0;
  collect(sfp__self());
  return 0;
}

static void fill_stat(int ino, struct stat *st) {
  memset(st, 0, sizeof *st);
  int dir = ino == -2 || fs()->ino[ino].is_dir;
  st->st_mode = dir ? (S_IFDIR | 0755) : (S_IFREG | 0644);
  st->st_ino = (ino_t)(ino + 3);
  st->st_nlink = 1;
  st->st_size = dir ? 4096 : (off_t)fs()->ino[ino].size;
  st->st_blksize = 4096;
}

int sfp_stat(const char *path, struct stat *st);
int sfp_stat(const char *path, struct stat *st) {
  char p[SFP_PATH];
  if (!path || norm(path, p) != 0)
    return sfp__fail_errno(ENAMETOOLONG);
  int ino = ino_of(p);
  if (ino == -1)
    return sfp__fail_errno(ENOENT);
  fill_stat(ino, st);
  return 0;
}

int sfp_fstat(int fd, struct stat *st);
int sfp_fstat(int fd, struct stat *st) {
  sfp_fd *f = sfp__fd(fd);
  if (!f)
    return sfp__fail_errno(EBADF);
  if (f->kind != FD_FILE) {
    memset(st, 0, sizeof *st);
    st->st_mode = S_IFSOCK | 0777;
    return 0;
  }
  fill_stat(f->ino, st);
  return 0;
}

int sfp_access(const char *path, int mode);
int sfp_access(const char *path, int mode) {
  (void)mode;
  struct stat st;
  return sfp_stat(path, &st);
}

/* ---- directories -------------------------------------------------------- */

typedef struct sfp_dir {
  char path[SFP_PATH];
  int next; /* the next entry of vol[] to look at */
  struct dirent ent;
} sfp_dir;

DIR *sfp_opendir(const char *path);
DIR *sfp_opendir(const char *path) {
  char p[SFP_PATH];
  if (!path || norm(path, p) != 0) {
    sfp__fail_errno(ENAMETOOLONG);
    return NULL;
  }
  if (!is_dir(p)) {
    sfp__fail_errno(ino_of(p) == -1 ? ENOENT : ENOTDIR);
    return NULL;
  }
  sfp_node *me = sfp__self();
  int i = 0;
  while (i < 8 && me->dirs[i])
    i++;
  sfp_dir *d = i < 8 ? calloc(1, sizeof *d) : NULL;
  if (!d) {
    sfp__fail_errno(EMFILE);
    return NULL;
  }
  snprintf(d->path, sizeof d->path, "%s", p);
  me->dirs[i] = d;
  return (DIR *)(void *)d;
}

struct dirent *sfp_readdir(DIR *dir);
struct dirent *sfp_readdir(DIR *dir) {
  sfp_dir *d = (sfp_dir *)(void *)dir;
  sfp_fs *s = fs();
  while (d->next < SFP_FILES) {
    fs_dent *e = &s->vol[d->next++];
    char pd[SFP_PATH];
    parent_of(e->path, pd);
    if (!e->used || strcmp(pd, d->path) != 0)
      continue;
    memset(&d->ent, 0, sizeof d->ent);
    const char *base = *pd ? e->path + strlen(pd) + 1 : e->path;
    snprintf(d->ent.d_name, sizeof d->ent.d_name, "%s", base);
    d->ent.d_ino = (ino_t)(e->ino + 3);
    d->ent.d_type = s->ino[e->ino].is_dir ? DT_DIR : DT_REG;
    return &d->ent;
  }
  return NULL;
}

int sfp_closedir(DIR *dir);
int sfp_closedir(DIR *dir) {
  sfp_node *me = sfp__self();
  for (int i = 0; i < 8; i++)
    if (me->dirs[i] == (void *)dir) {
      free(me->dirs[i]);
      me->dirs[i] = NULL;
      return 0;
    }
  return sfp__fail_errno(EBADF);
}

/* ---- stdio on files ----------------------------------------------------- */

/* A stream's cookie is its descriptor; at the node's end the stream is
 * closed without touching the node (the descriptor is gone already). */
static int ending;

ssize_t sfp_getrandom(void *buf, size_t len, unsigned flags);

static ssize_t ck_read(void *ck, char *buf, size_t len) {
  sfp_fd *f = ending ? NULL : sfp__fd((int)(intptr_t)ck);
  if (f && f->kind == FD_RANDOM)
    return sfp_getrandom(buf, len, 0);
  return f ? sfp__file_read(f, buf, len) : -1;
}

static ssize_t ck_write(void *ck, const char *buf, size_t len) {
  sfp_fd *f = ending ? NULL : sfp__fd((int)(intptr_t)ck);
  if (f && f->kind == FD_RANDOM)
    return (ssize_t)len;
  long r = f ? sfp__file_write(f, buf, len) : -1;
  return r < 0 ? 0 : r; /* stdio: 0 is the error */
}

static int ck_seek(void *ck, off64_t *off, int whence) {
  if (ending)
    return -1;
  off_t r = sfp_lseek((int)(intptr_t)ck, (off_t)*off, whence);
  if (r < 0)
    return -1;
  *off = r;
  return 0;
}

int sfp_close(int fd);
static int ck_close(void *ck) {
  int fd = (int)(intptr_t)ck;
  if (ending)
    return 0;
  sfp_node *me = sfp__self();
  for (int i = 0; i < 16; i++)
    if (me->files[i] && (int)(intptr_t)((void **)me->files[i])[0] == fd) {
      free(me->files[i]);
      me->files[i] = NULL;
    }
  return sfp_close(fd);
}

FILE *sfp_fopen(const char *path, const char *mode);
FILE *sfp_fopen(const char *path, const char *mode) {
  int flags = mode[0] == 'r'   ? O_RDONLY
              : mode[0] == 'w' ? O_WRONLY | O_CREAT | O_TRUNC
              : mode[0] == 'a' ? O_WRONLY | O_CREAT | O_APPEND
                               : -1;
  if (flags < 0) {
    sfp__fail_errno(EINVAL);
    return NULL;
  }
  if (strchr(mode, '+'))
    flags = (flags & ~O_ACCMODE) | O_RDWR;
  sfp_node *me = sfp__self();
  int slot_i = 0;
  while (slot_i < 16 && me->files[slot_i])
    slot_i++;
  if (slot_i == 16) {
    sfp__fail_errno(EMFILE);
    return NULL;
  }
  int fd = sfp_open(path, flags, 0644);
  if (fd < 0)
    return NULL;
  cookie_io_functions_t io = {ck_read, ck_write, ck_seek, ck_close};
  FILE *f = fopencookie((void *)(intptr_t)fd, mode, io);
  void **rec = malloc(2 * sizeof *rec);
  if (!f || !rec)
    sf_out_of_memory("a program's file stream");
  rec[0] = (void *)(intptr_t)fd;
  rec[1] = f;
  me->files[slot_i] = rec;
  return f;
}

FILE *sfp_fopen64(const char *path, const char *mode);
FILE *sfp_fopen64(const char *path, const char *mode) {
  return sfp_fopen(path, mode);
}

extern FILE *sfp_stdout, *sfp_stderr;
int sfp_fileno(FILE *f);
int sfp_fileno(FILE *f) {
  if (f == sfp_stdout)
    return 1; /* (stdout and stderr are one stream: 1) */
  sfp_node *me = sfp__self();
  for (int i = 0; i < 16; i++)
    if (me->files[i] && ((FILE **)me->files[i])[1] == f)
      return (int)(intptr_t)((void **)me->files[i])[0];
  return sfp__fail_errno(EBADF);
}

void sfp__fs_end(sfp_node *me, sim_teardown_why why) {
  ending = 1; /* the streams go without their descriptors' help */
  for (int i = 0; i < 16; i++) {
    if (me->files[i]) {
      fclose(((FILE **)me->files[i])[1]);
      free(me->files[i]);
      me->files[i] = NULL;
    }
  }
  ending = 0;
  for (int i = 0; i < 8; i++) {
    free(me->dirs[i]);
    me->dirs[i] = NULL;
  }
  if (why != SIM_TEARDOWN_CRASH)
    return;
  sfp_fs *s = &me->fs; /* the crash: what was durable is what there is */
  memcpy(s->vol, s->dur, sizeof s->vol);
  for (int i = 0; i < SFP_FILES; i++)
    s->ino[i].size = s->ino[i].dsize;
  collect(me);
}

/* ---- end checks ----------------------------------------------------------- */

int64_t sf_program_read_file(void *ctx, const sim_world *w, int node, const char *path, void *buf,
                             size_t cap) {
  sfp_cluster *c = ctx;
  char p[SFP_PATH];
  if (!c || !w || node < 0 || node >= c->total || !path || (!buf && cap))
    return -EINVAL;
  if (norm(path, p) != 0)
    return -ENAMETOOLONG;
  sfp_fs *s = &c->node[node].fs;
  const fs_dent *d = lookup(s->vol, p);
  if (!d)
    return -ENOENT;
  SIM_ASSERT(d->ino >= 0 && d->ino < SFP_FILES && s->ino[d->ino].used); /* an entry's inode */
  if (s->ino[d->ino].is_dir)
    return -EISDIR;
  uint64_t size = s->ino[d->ino].size;
  size_t n = size < cap ? (size_t)size : cap;
  int64_t r = sim_disk_peek(w, node, slot(d->ino), buf, n);
  if (r >= 0 && (size_t)r < n) /* past the disk's end: zeros, as a read gives */
    memset((uint8_t *)buf + r, 0, n - (size_t)r);
  return r < 0 ? r : (int64_t)n;
}

/* The large-file names (a program built with _FILE_OFFSET_BITS=64, as
 * Debian's libuv is, references them): on x86-64 off_t is 64 bits and
 * struct dirent64 is struct dirent, so each is its plain call. */
ssize_t sfp_pread64(int fd, void *buf, size_t len, off_t off);
ssize_t sfp_pread64(int fd, void *buf, size_t len, off_t off) {
  return sfp_pread(fd, buf, len, off);
}

ssize_t sfp_pwrite64(int fd, const void *buf, size_t len, off_t off);
ssize_t sfp_pwrite64(int fd, const void *buf, size_t len, off_t off) {
  return sfp_pwrite(fd, buf, len, off);
}

off_t sfp_lseek64(int fd, off_t off, int whence);
off_t sfp_lseek64(int fd, off_t off, int whence) {
  return sfp_lseek(fd, off, whence);
}

_Static_assert(sizeof(off_t) == 8, "off_t is off64_t (x86-64)");
struct dirent *sfp_readdir64(DIR *dir);
struct dirent *sfp_readdir64(DIR *dir) {
  return sfp_readdir(dir);
}

int sfp___open64_2(const char *path, int flags);
int sfp___open64_2(const char *path, int flags) {
  return sfp_open(path, flags);
}

int sfp_fstat64(int fd, struct stat *st);
int sfp_fstat64(int fd, struct stat *st) {
  return sfp_fstat(fd, st);
}
