// A power-loss journal, loaded with LD_PRELOAD into a process that writes a directory.
//
// Every call that writes or syncs a file under $EVLEDGER_PL_DIR is passed to the kernel as
// usual and also recorded, in order, in the journal $EVLEDGER_PL_JOURNAL (appended, one
// write(2) per record, so a process killed mid-record leaves only a torn last record, which
// materialise.py ignores). materialise.py rebuilds from the journal what a disk could hold
// after a power cut: each file as of its last completed fsync/fdatasync, plus a chosen subset
// of the 4 KiB pieces written after it. Writes through a descriptor opened with O_DSYNC or
// O_SYNC (LMDB writes its meta page that way) are durable when the call returns.
//
// The calls seen: open/openat/creat (and their 64 variants) to learn which descriptors name
// files under the directory; write, writev, pwrite, pwrite64, pwritev, pwritev2; fsync,
// fdatasync, sync_file_range (recorded, never counted as durable: it syncs no metadata and
// promises nothing), msync (recorded so that materialise.py refuses: a writable shared
// mapping is not modelled); ftruncate; close. glibc's internal writes (stdio's fwrite) do
// not pass through here; LMDB 0.9 writes its data file with pwrite/writev after lseek,
// fdatasync, and its meta page with pwrite on an O_DSYNC descriptor (strace of evledger).
//
// Environment:
//   EVLEDGER_PL_DIR              the directory whose files are journalled (required)
//   EVLEDGER_PL_JOURNAL          the journal file (required; outside EVLEDGER_PL_DIR)
//   EVLEDGER_PL_CUT_AFTER_SYNCS  N: after the N-th completed sync (fsync, fdatasync, or a
//                                write on an O_DSYNC descriptor) the process _exit()s with
//                                status 86, as if the power failed there
//   EVLEDGER_PL_EIO_WRITE        N: the N-th write call on a journalled file fails with EIO
//                                and writes nothing (a disk fault)
//   EVLEDGER_PL_EIO_SYNC         N: the N-th fsync/fdatasync fails with EIO
//   EVLEDGER_PL_EIO_DSYNC_WRITE  N: the N-th write call on an O_DSYNC/O_SYNC descriptor fails
//                                with EIO and writes nothing (LMDB's N-th meta-page write)
//   EVLEDGER_PL_UNSAFE           "nosync": a disk that lies. Syncs reach the kernel but are
//                                not journalled as syncs and O_DSYNC writes as plain writes,
//                                so materialise.py may drop writes the program synced. Only
//                                the test's self-check uses it, to show the check can fail.
//
// Journal record: u32 total length | u8 type | u8 0 | u16 path length | u64 offset |
// u64 length | path | data. Types: 'W' write, 'D' durable write, 'S' sync, 'T' truncate to
// offset, 'O' open (the file exists), 'M' msync (path empty).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_FDS 65536

static ssize_t (*real_write)(int, const void*, size_t);
static ssize_t (*real_writev)(int, const struct iovec*, int);
static ssize_t (*real_pwrite)(int, const void*, size_t, off_t);
static ssize_t (*real_pwrite64)(int, const void*, size_t, off_t);
static ssize_t (*real_pwritev)(int, const struct iovec*, int, off_t);
static ssize_t (*real_pwritev2)(int, const struct iovec*, int, off_t, int);
static int (*real_open)(const char*, int, ...);
static int (*real_open64)(const char*, int, ...);
static int (*real_openat)(int, const char*, int, ...);
static int (*real_openat64)(int, const char*, int, ...);
static int (*real_creat)(const char*, mode_t);
static int (*real_creat64)(const char*, mode_t);
static int (*real_close)(int);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_msync)(void*, size_t, int);
static int (*real_sync_file_range)(int, off_t, off_t, unsigned int);
static int (*real_ftruncate)(int, off_t);
static int (*real_ftruncate64)(int, off_t);

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char dir[PATH_MAX];
static size_t dir_len;
static int journal = -1;
static long cut_after = -1, eio_write = -1, eio_sync = -1, eio_dsync_write = -1;
static long syncs, writes, dsync_writes, sync_calls;
static int unsafe_nosync;
static char* paths[MAX_FDS];  // the path under dir of each journalled descriptor, or NULL
static unsigned char durable[MAX_FDS];

static long env_number(const char* name) {
  const char* v = getenv(name);
  return v && *v ? strtol(v, NULL, 10) : -1;
}

static void init(void) {
#define BIND(f) *(void**)(&real_##f) = dlsym(RTLD_NEXT, #f)
  BIND(write); BIND(writev); BIND(pwrite); BIND(pwrite64); BIND(pwritev); BIND(pwritev2);
  BIND(open); BIND(open64); BIND(openat); BIND(openat64); BIND(creat); BIND(creat64);
  BIND(close); BIND(fsync); BIND(fdatasync); BIND(msync); BIND(sync_file_range);
  BIND(ftruncate); BIND(ftruncate64);
#undef BIND
  const char* d = getenv("EVLEDGER_PL_DIR");
  const char* j = getenv("EVLEDGER_PL_JOURNAL");
  if (!d || !j) return;
  if (!realpath(d, dir)) {
    fprintf(stderr, "powerloss shim: EVLEDGER_PL_DIR %s: %s\n", d, strerror(errno));
    _exit(2);
  }
  dir_len = strlen(dir);
  journal = real_open(j, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (journal < 0) {
    fprintf(stderr, "powerloss shim: cannot open the journal %s: %s\n", j, strerror(errno));
    _exit(2);
  }
  cut_after = env_number("EVLEDGER_PL_CUT_AFTER_SYNCS");
  eio_write = env_number("EVLEDGER_PL_EIO_WRITE");
  eio_sync = env_number("EVLEDGER_PL_EIO_SYNC");
  eio_dsync_write = env_number("EVLEDGER_PL_EIO_DSYNC_WRITE");
  const char* u = getenv("EVLEDGER_PL_UNSAFE");
  unsafe_nosync = u && strcmp(u, "nosync") == 0;
}

static void ready(void) { pthread_once(&once, init); }

// One record, written with one write(2) under the lock. Called with the lock held.
static void record(char type, const char* path, uint64_t offset, const struct iovec* iov,
                   int iovcnt, uint64_t length) {
  size_t path_len = path ? strlen(path) : 0;
  size_t data_len = iov ? length : 0;
  size_t total = 24 + path_len + data_len;
  unsigned char* buf = malloc(total);
  if (!buf) {
    fprintf(stderr, "powerloss shim: out of memory\n");
    _exit(2);
  }
  uint32_t t32 = (uint32_t)total;
  uint16_t p16 = (uint16_t)path_len;
  memcpy(buf, &t32, 4);
  buf[4] = (unsigned char)type;
  buf[5] = 0;
  memcpy(buf + 6, &p16, 2);
  memcpy(buf + 8, &offset, 8);
  memcpy(buf + 16, &length, 8);
  memcpy(buf + 24, path, path_len);
  size_t at = 24 + path_len, left = data_len;
  for (int i = 0; i < iovcnt && left > 0; i++) {
    size_t n = iov[i].iov_len < left ? iov[i].iov_len : left;
    memcpy(buf + at, iov[i].iov_base, n);
    at += n;
    left -= n;
  }
  size_t done = 0;
  while (done < total) {
    ssize_t n = real_write(journal, buf + done, total - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      fprintf(stderr, "powerloss shim: cannot write the journal: %s\n", strerror(errno));
      _exit(2);
    }
    done += (size_t)n;
  }
  free(buf);
}

static void maybe_cut(void) {
  if (cut_after >= 0 && syncs >= cut_after) _exit(86);
}

static void opened(int fd, int flags) {
  if (fd < 0 || fd >= MAX_FDS || journal < 0 || fd == journal) return;
  char link[64], target[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, target, sizeof target - 1);
  if (n <= 0) return;
  target[n] = 0;
  if ((size_t)n <= dir_len || strncmp(target, dir, dir_len) != 0 || target[dir_len] != '/')
    return;
  int saved = errno;
  pthread_mutex_lock(&lock);
  free(paths[fd]);
  paths[fd] = strdup(target + dir_len + 1);
  durable[fd] = (flags & O_DSYNC) != 0;
  record('O', paths[fd], 0, NULL, 0, 0);
  pthread_mutex_unlock(&lock);
  errno = saved;
}

static int tracked(int fd) { return journal >= 0 && fd >= 0 && fd < MAX_FDS && paths[fd]; }

// Whether this write call on `fd` is the one to fail with EIO. Called with the lock held.
static int fail_this_write(int fd) {
  writes++;
  if (durable[fd] && ++dsync_writes == eio_dsync_write) return 1;
  return eio_write >= 0 && writes == eio_write;
}

static void wrote(int fd, uint64_t offset, const struct iovec* iov, int iovcnt, ssize_t n) {
  if (n <= 0) return;
  int saved = errno;
  int is_durable = durable[fd] && !unsafe_nosync;
  record(is_durable ? 'D' : 'W', paths[fd], offset, iov, iovcnt, (uint64_t)n);
  if (is_durable) syncs++;
  errno = saved;
}

#define OPEN_MODE(flags, mode)                                            \
  mode_t mode = 0;                                                        \
  if ((flags) & (O_CREAT | O_TMPFILE)) {                                  \
    va_list ap;                                                           \
    va_start(ap, flags);                                                  \
    mode = va_arg(ap, mode_t);                                            \
    va_end(ap);                                                           \
  }

int open(const char* path, int flags, ...) {
  ready();
  OPEN_MODE(flags, mode);
  int fd = real_open(path, flags, mode);
  opened(fd, flags);
  return fd;
}

int open64(const char* path, int flags, ...) {
  ready();
  OPEN_MODE(flags, mode);
  int fd = real_open64(path, flags, mode);
  opened(fd, flags);
  return fd;
}

int openat(int at, const char* path, int flags, ...) {
  ready();
  OPEN_MODE(flags, mode);
  int fd = real_openat(at, path, flags, mode);
  opened(fd, flags);
  return fd;
}

int openat64(int at, const char* path, int flags, ...) {
  ready();
  OPEN_MODE(flags, mode);
  int fd = real_openat64(at, path, flags, mode);
  opened(fd, flags);
  return fd;
}

int creat(const char* path, mode_t mode) {
  ready();
  int fd = real_creat(path, mode);
  opened(fd, O_WRONLY);
  return fd;
}

int creat64(const char* path, mode_t mode) {
  ready();
  int fd = real_creat64(path, mode);
  opened(fd, O_WRONLY);
  return fd;
}

int close(int fd) {
  ready();
  if (tracked(fd)) {
    pthread_mutex_lock(&lock);
    free(paths[fd]);
    paths[fd] = NULL;
    durable[fd] = 0;
    pthread_mutex_unlock(&lock);
  }
  return real_close(fd);
}

enum call { kWrite, kPwrite, kPwrite64, kWritev, kPwritev, kPwritev2 };

// Every write call on a journalled descriptor: the call, then its record, under the lock.
static ssize_t do_write(enum call call, int fd, const struct iovec* iov, int iovcnt,
                        off_t offset, int flags) {
  pthread_mutex_lock(&lock);
  if (fail_this_write(fd)) {
    pthread_mutex_unlock(&lock);
    errno = EIO;
    return -1;
  }
  ssize_t n = -1;
  switch (call) {
    case kWrite: n = real_write(fd, iov[0].iov_base, iov[0].iov_len); break;
    case kPwrite: n = real_pwrite(fd, iov[0].iov_base, iov[0].iov_len, offset); break;
    case kPwrite64: n = real_pwrite64(fd, iov[0].iov_base, iov[0].iov_len, offset); break;
    case kWritev: n = real_writev(fd, iov, iovcnt); break;
    case kPwritev: n = real_pwritev(fd, iov, iovcnt, offset); break;
    case kPwritev2: n = real_pwritev2(fd, iov, iovcnt, offset, flags); break;
  }
  int saved = errno;
  int positioned = call != kWrite && call != kWritev;
  if (n > 0) {
    uint64_t at = positioned ? (uint64_t)offset : (uint64_t)(lseek(fd, 0, SEEK_CUR) - n);
    wrote(fd, at, iov, iovcnt, n);
  }
  int cut = n > 0 && durable[fd] && !unsafe_nosync;
  pthread_mutex_unlock(&lock);
  if (cut) maybe_cut();
  errno = saved;
  return n;
}

ssize_t write(int fd, const void* buf, size_t count) {
  ready();
  if (!tracked(fd)) return real_write(fd, buf, count);
  struct iovec one = {(void*)buf, count};
  return do_write(kWrite, fd, &one, 1, 0, 0);
}

ssize_t pwrite(int fd, const void* buf, size_t count, off_t offset) {
  ready();
  if (!tracked(fd)) return real_pwrite(fd, buf, count, offset);
  struct iovec one = {(void*)buf, count};
  return do_write(kPwrite, fd, &one, 1, offset, 0);
}

ssize_t pwrite64(int fd, const void* buf, size_t count, off_t offset) {
  ready();
  if (!tracked(fd)) return real_pwrite64(fd, buf, count, offset);
  struct iovec one = {(void*)buf, count};
  return do_write(kPwrite64, fd, &one, 1, offset, 0);
}

ssize_t writev(int fd, const struct iovec* iov, int iovcnt) {
  ready();
  if (!tracked(fd)) return real_writev(fd, iov, iovcnt);
  return do_write(kWritev, fd, iov, iovcnt, 0, 0);
}

ssize_t pwritev(int fd, const struct iovec* iov, int iovcnt, off_t offset) {
  ready();
  if (!tracked(fd)) return real_pwritev(fd, iov, iovcnt, offset);
  return do_write(kPwritev, fd, iov, iovcnt, offset, 0);
}

ssize_t pwritev64(int fd, const struct iovec* iov, int iovcnt, off_t offset) {
  return pwritev(fd, iov, iovcnt, offset);
}

ssize_t pwritev2(int fd, const struct iovec* iov, int iovcnt, off_t offset, int flags) {
  ready();
  if (!tracked(fd) || offset == -1) return real_pwritev2(fd, iov, iovcnt, offset, flags);
  return do_write(kPwritev2, fd, iov, iovcnt, offset, flags);
}

static int do_sync(int fd, int data_only) {
  ready();
  int (*call)(int) = data_only ? real_fdatasync : real_fsync;
  if (!tracked(fd)) return call(fd);
  pthread_mutex_lock(&lock);
  sync_calls++;
  if (eio_sync >= 0 && sync_calls == eio_sync) {
    pthread_mutex_unlock(&lock);
    errno = EIO;
    return -1;
  }
  pthread_mutex_unlock(&lock);
  int rc = call(fd);
  int saved = errno;
  if (rc == 0 && !unsafe_nosync) {
    pthread_mutex_lock(&lock);
    record('S', paths[fd] ? paths[fd] : "", 0, NULL, 0, 0);
    syncs++;
    pthread_mutex_unlock(&lock);
    maybe_cut();
  }
  errno = saved;
  return rc;
}

int fsync(int fd) { return do_sync(fd, 0); }
int fdatasync(int fd) { return do_sync(fd, 1); }

int sync_file_range(int fd, off_t offset, off_t nbytes, unsigned int flags) {
  ready();
  return real_sync_file_range(fd, offset, nbytes, flags);
}

int msync(void* addr, size_t length, int flags) {
  ready();
  if (journal >= 0) {
    pthread_mutex_lock(&lock);
    record('M', NULL, 0, NULL, 0, 0);
    pthread_mutex_unlock(&lock);
  }
  return real_msync(addr, length, flags);
}

static int do_truncate(int fd, off_t length, int (*call)(int, off_t)) {
  int rc = call(fd, length);
  if (rc == 0 && tracked(fd)) {
    int saved = errno;
    pthread_mutex_lock(&lock);
    record('T', paths[fd], (uint64_t)length, NULL, 0, 0);
    pthread_mutex_unlock(&lock);
    errno = saved;
  }
  return rc;
}

int ftruncate(int fd, off_t length) {
  ready();
  return do_truncate(fd, length, real_ftruncate);
}

int ftruncate64(int fd, off_t length) {
  ready();
  return do_truncate(fd, length, real_ftruncate64);
}
