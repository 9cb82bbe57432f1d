/*
 * powercut.c: an LD_PRELOAD shim that models "everything not fsynced is lost at power
 * loss", for the power-loss fault test (test/faults/power-loss.sqlite.test.ts).
 *
 * Why a shim: a real power cut needs a filesystem that forgets unsynced writes. LazyFS
 * (a FUSE filesystem) does that but is not packaged by Debian and needs its sources and
 * a FUSE mount; a test that truncates the WAL to its last synced frame would only model
 * the WAL and trust our guess of where SQLite's syncs fall. This shim instead watches the
 * real calls SQLite makes (open, write/pwrite/writev, fsync/fdatasync, unlink) on files
 * under MAILROOM_POWERCUT_DIR, and keeps, for each such file, a shadow copy under
 * MAILROOM_POWERCUT_SHADOW holding the file as of its last fsync. A "cut" (done by the
 * test) is SIGKILL of every process, then each file replaced by its shadow.
 *
 * The model, and where it is weaker than a disk:
 *  - a write reaches the shadow only when an fsync or fdatasync of that file returns
 *    (either makes the whole file durable: data and size; both are treated alike);
 *  - granularity is the write call: no torn sectors, no reordering inside what one
 *    fsync made durable, and a write either happened before an fsync or did not;
 *  - a file created since the last cut and never synced comes back empty; directory
 *    entries (create, unlink) count as durable at once, as after a directory fsync;
 *  - the `-shm` WAL index is not tracked: it is volatile and the test deletes it;
 *  - sync_file_range, syncfs and sync() are counted, not modelled (SQLite uses none).
 * LazyFS's "clear-cache" fault drops the same thing (unsynced data) at page rather than
 * write granularity, and can also tear a write; it sees every process through the
 * kernel. Here, several processes share one dirty-range log per file (flock'd), so an
 * fsync in one process also makes durable what another process wrote before it, as the
 * page cache would.
 *
 * Compiled by the test with the machine's cc into a temp dir; never committed as a binary.
 * MAILROOM_POWERCUT_STATS=1 makes each process keep counters of what it saw in
 * <shadow>/stats.<pid>, so the test can show the shim really sits under SQLite.
 */
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
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

/* One record of the dirty-range log: bytes [offset, offset+length) were written. */
struct range {
  int64_t offset;
  int64_t length;
};

/* A watched file's bookkeeping in this process; kept for the process's life. */
struct tracked {
  char path[PATH_MAX];
  int shadow_fd; /* the file as of its last sync */
  int log_fd;    /* dirty ranges since the last sync, shared by every process */
  int read_fd;   /* the real file, read-only, to copy from at sync */
};

#define MAX_FDS 65536
#define MAX_TRACKED 64

static struct tracked tracked_files[MAX_TRACKED];
static int tracked_count;
static signed char fd_to_tracked_plus1[MAX_FDS]; /* 0: not watched; else index + 1 */
static pthread_mutex_t lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

static char watch_dir[PATH_MAX];
static size_t watch_dir_len;
static char shadow_dir[PATH_MAX];
static int keep_stats;
static struct {
  long opens, writes, write_bytes, fsyncs, fdatasyncs, sync_file_ranges, syncfs_calls, sync_calls, synced_bytes, unlinks;
} stats;

static int (*real_open)(const char *, int, ...);
static int (*real_open64)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_openat64)(int, const char *, int, ...);
static int (*real_close)(int);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_pwrite64)(int, const void *, size_t, off64_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static ssize_t (*real_pwritev)(int, const struct iovec *, int, off_t);
static ssize_t (*real_pwritev64)(int, const struct iovec *, int, off64_t);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_sync_file_range)(int, off64_t, off64_t, unsigned int);
static int (*real_syncfs)(int);
static void (*real_sync)(void);
static int (*real_unlink)(const char *);
static int (*real_unlinkat)(int, const char *, int);

#define RESOLVE(name) real_##name = dlsym(RTLD_NEXT, #name)

__attribute__((constructor)) static void powercut_init(void) {
  RESOLVE(open); RESOLVE(open64); RESOLVE(openat); RESOLVE(openat64); RESOLVE(close);
  RESOLVE(write); RESOLVE(pwrite); RESOLVE(pwrite64); RESOLVE(writev); RESOLVE(pwritev); RESOLVE(pwritev64);
  RESOLVE(fsync); RESOLVE(fdatasync); RESOLVE(sync_file_range); RESOLVE(syncfs); RESOLVE(sync);
  RESOLVE(unlink); RESOLVE(unlinkat);
  const char *dir = getenv("MAILROOM_POWERCUT_DIR");
  const char *shadow = getenv("MAILROOM_POWERCUT_SHADOW");
  if (!dir || !shadow || !realpath(dir, watch_dir) || !realpath(shadow, shadow_dir)) {
    watch_dir_len = 0; /* unset or missing: watch nothing, change nothing */
    return;
  }
  watch_dir_len = strlen(watch_dir);
  keep_stats = getenv("MAILROOM_POWERCUT_STATS") != NULL;
}

/*
 * Rewrites this process's counters in place, padded to a fixed width: the process can be
 * killed mid-call, and a truncate-then-write would then leave an empty file.
 */
static void write_stats(void) {
  static int stats_fd = -1;
  if (!keep_stats) return;
  if (stats_fd < 0) {
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/stats.%d", shadow_dir, (int)getpid()) >= (int)sizeof path) return;
    stats_fd = real_open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (stats_fd < 0) return;
  }
  char text[256];
  int n = snprintf(text, sizeof text,
                   "opens=%ld writes=%ld writeBytes=%ld fsync=%ld fdatasync=%ld syncFileRange=%ld syncfs=%ld sync=%ld syncedBytes=%ld unlinks=%ld",
                   stats.opens, stats.writes, stats.write_bytes, stats.fsyncs, stats.fdatasyncs, stats.sync_file_ranges,
                   stats.syncfs_calls, stats.sync_calls, stats.synced_bytes, stats.unlinks);
  if (n < 0 || n >= (int)sizeof text - 1) return;
  memset(text + n, ' ', sizeof text - 1 - (size_t)n);
  text[sizeof text - 1] = '\n';
  if (real_pwrite(stats_fd, text, sizeof text, 0) < 0) { /* counters are best effort */ }
}

/* Absolute path of `path` opened relative to `dirfd`, without resolving the file itself. */
static int absolute_path(int dirfd, const char *path, char *out) {
  if (path[0] == '/') {
    if (strlen(path) >= PATH_MAX) return -1;
    strcpy(out, path);
    return 0;
  }
  char base[PATH_MAX];
  if (dirfd == AT_FDCWD) {
    if (!getcwd(base, sizeof base)) return -1;
  } else {
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
    ssize_t n = readlink(link, base, sizeof base - 1);
    if (n < 0) return -1;
    base[n] = '\0';
  }
  if (snprintf(out, PATH_MAX, "%s/%s", base, path) >= PATH_MAX) return -1;
  return 0;
}

/* Is this path a watched file? The WAL index (-shm) is volatile by design: never. */
static int is_watched(const char *abs) {
  if (watch_dir_len == 0 || strncmp(abs, watch_dir, watch_dir_len) != 0 || abs[watch_dir_len] != '/') return 0;
  size_t len = strlen(abs);
  return !(len >= 4 && strcmp(abs + len - 4, "-shm") == 0);
}

/* <shadow>/<path below the watched dir, '/' as '%'><suffix> */
static void shadow_name(const char *abs, const char *suffix, char *out) {
  char flat[PATH_MAX];
  snprintf(flat, sizeof flat, "%s", abs + watch_dir_len + 1);
  for (char *c = flat; *c; c++)
    if (*c == '/') *c = '%';
  if (snprintf(out, PATH_MAX, "%s/%s%s", shadow_dir, flat, suffix) >= PATH_MAX) out[0] = '\0';
}

static void copy_range(int from, int to, int64_t offset, int64_t length) {
  char buffer[65536];
  while (length > 0) {
    ssize_t n = pread(from, buffer, length < (int64_t)sizeof buffer ? (size_t)length : sizeof buffer, offset);
    if (n <= 0) return;
    if (real_pwrite(to, buffer, (size_t)n, offset) != n) return;
    stats.synced_bytes += n;
    offset += n;
    length -= n;
  }
}

/*
 * Starts watching an fd just opened on `abs`. The first process to open a path since the
 * last cut creates its shadow: empty when this open created the file (nothing of it is
 * durable yet), else a copy of the file as it is now (the test restored it at the cut,
 * so all of it is durable).
 */
static void track(int fd, const char *abs, int existed_before) {
  struct stat st;
  if (fd < 0 || fd >= MAX_FDS || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return;
  pthread_mutex_lock(&lock);
  int index = -1;
  for (int i = 0; i < tracked_count; i++)
    if (strcmp(tracked_files[i].path, abs) == 0) index = i;
  if (index < 0 && tracked_count < MAX_TRACKED) {
    struct tracked *t = &tracked_files[tracked_count];
    char shadow[PATH_MAX], log[PATH_MAX];
    shadow_name(abs, "", shadow);
    shadow_name(abs, ".dirty", log);
    t->shadow_fd = real_open(shadow, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (t->shadow_fd >= 0) {
      int from = real_open(abs, O_RDONLY | O_CLOEXEC);
      if (existed_before && from >= 0) copy_range(from, t->shadow_fd, 0, INT64_MAX);
      if (from >= 0) real_close(from);
    } else {
      t->shadow_fd = real_open(shadow, O_RDWR | O_CLOEXEC);
    }
    t->log_fd = real_open(log, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    t->read_fd = real_open(abs, O_RDONLY | O_CLOEXEC);
    if (t->shadow_fd >= 0 && t->log_fd >= 0 && t->read_fd >= 0) {
      snprintf(t->path, sizeof t->path, "%s", abs);
      index = tracked_count++;
    } else {
      fprintf(stderr, "powercut: cannot shadow %s: %s\n", abs, strerror(errno));
    }
  }
  if (index >= 0) {
    fd_to_tracked_plus1[fd] = (signed char)(index + 1);
    stats.opens++;
  }
  pthread_mutex_unlock(&lock);
}

static struct tracked *tracked_of(int fd) {
  if (fd < 0 || fd >= MAX_FDS || watch_dir_len == 0) return NULL;
  int i = fd_to_tracked_plus1[fd];
  return i > 0 ? &tracked_files[i - 1] : NULL;
}

/* Appends a dirty range to the shared log, after the write happened (see powercut_sync). */
static void note_write(int fd, int64_t offset, ssize_t length) {
  struct tracked *t = tracked_of(fd);
  if (!t || length <= 0) return;
  struct range r = {offset, length};
  pthread_mutex_lock(&lock);
  flock(t->log_fd, LOCK_EX);
  if (real_write(t->log_fd, &r, sizeof r) != (ssize_t)sizeof r) fprintf(stderr, "powercut: dirty log write failed\n");
  flock(t->log_fd, LOCK_UN);
  stats.writes++;
  stats.write_bytes += length;
  pthread_mutex_unlock(&lock);
  write_stats();
}

static int compare_ranges(const void *a, const void *b) {
  int64_t x = ((const struct range *)a)->offset, y = ((const struct range *)b)->offset;
  return x < y ? -1 : x > y;
}

/*
 * What an fsync makes durable: every range any process wrote to the file since the last
 * sync, and the file's size. A range written but not yet logged (another process between
 * its write and its log append) waits for the next sync: stricter than the page cache,
 * never looser.
 */
static void powercut_sync(struct tracked *t) {
  pthread_mutex_lock(&lock);
  flock(t->log_fd, LOCK_EX);
  struct stat st;
  off_t size = lseek(t->log_fd, 0, SEEK_END);
  struct range *ranges = size > 0 ? malloc((size_t)size) : NULL;
  size_t count = 0;
  if (ranges && pread(t->log_fd, ranges, (size_t)size, 0) == size) count = (size_t)size / sizeof *ranges;
  if (fstat(t->read_fd, &st) == 0) {
    qsort(ranges, count, sizeof *ranges, compare_ranges);
    int64_t start = -1, end = -1;
    for (size_t i = 0; i <= count; i++) {
      if (i < count && start >= 0 && ranges[i].offset <= end) {
        if (ranges[i].offset + ranges[i].length > end) end = ranges[i].offset + ranges[i].length;
        continue;
      }
      if (start >= 0 && start < st.st_size) copy_range(t->read_fd, t->shadow_fd, start, (end < st.st_size ? end : st.st_size) - start);
      if (i < count) {
        start = ranges[i].offset;
        end = ranges[i].offset + ranges[i].length;
      }
    }
    if (ftruncate(t->shadow_fd, st.st_size) != 0) fprintf(stderr, "powercut: shadow resize failed\n");
    if (ftruncate(t->log_fd, 0) != 0) fprintf(stderr, "powercut: dirty log reset failed\n");
  }
  free(ranges);
  flock(t->log_fd, LOCK_UN);
  pthread_mutex_unlock(&lock);
}

static void forget_fd(int fd) {
  if (fd >= 0 && fd < MAX_FDS) fd_to_tracked_plus1[fd] = 0;
}

/* A directory entry removed is gone at once in this model: so is its shadow. */
static void forget_path(int dirfd, const char *path) {
  char abs[PATH_MAX], name[PATH_MAX];
  if (absolute_path(dirfd, path, abs) != 0 || !is_watched(abs)) return;
  shadow_name(abs, "", name);
  real_unlink(name);
  shadow_name(abs, ".dirty", name);
  real_unlink(name);
  pthread_mutex_lock(&lock);
  for (int i = 0; i < tracked_count; i++)
    if (strcmp(tracked_files[i].path, abs) == 0) tracked_files[i].path[0] = '\0';
  stats.unlinks++;
  pthread_mutex_unlock(&lock);
  write_stats();
}

/* ---- the interposed calls ---- */

static int open_common(int (*real)(int, const char *, int, ...), int dirfd, const char *path, int flags, mode_t mode) {
  char abs[PATH_MAX];
  int watched = watch_dir_len > 0 && absolute_path(dirfd, path, abs) == 0 && is_watched(abs);
  struct stat st;
  int existed_before = watched && stat(abs, &st) == 0;
  int fd = real(dirfd, path, flags, mode);
  if (watched && fd >= 0) {
    track(fd, abs, existed_before);
    write_stats();
  }
  return fd;
}

static mode_t mode_arg(int flags, va_list args) {
  return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(args, int) : 0;
}

/* The optional mode argument of an open call (present only with O_CREAT or O_TMPFILE). */
#define OPEN_MODE(flags)                 \
  ({                                     \
    va_list args_;                       \
    va_start(args_, flags);              \
    mode_t mode_ = mode_arg(flags, args_); \
    va_end(args_);                       \
    mode_;                               \
  })

/* open(2) and open64 through openat's signature, so one path handles all four. */
static int via_open(int dirfd, const char *path, int flags, ...) {
  (void)dirfd;
  return real_open(path, flags, OPEN_MODE(flags));
}

static int via_open64(int dirfd, const char *path, int flags, ...) {
  (void)dirfd;
  return real_open64(path, flags, OPEN_MODE(flags));
}

int open(const char *path, int flags, ...) { return open_common(via_open, AT_FDCWD, path, flags, OPEN_MODE(flags)); }

int open64(const char *path, int flags, ...) { return open_common(via_open64, AT_FDCWD, path, flags, OPEN_MODE(flags)); }

int openat(int dirfd, const char *path, int flags, ...) { return open_common(real_openat, dirfd, path, flags, OPEN_MODE(flags)); }

int openat64(int dirfd, const char *path, int flags, ...) { return open_common(real_openat64, dirfd, path, flags, OPEN_MODE(flags)); }

int close(int fd) {
  forget_fd(fd);
  return real_close(fd);
}

ssize_t write(int fd, const void *buffer, size_t count) {
  ssize_t n = real_write(fd, buffer, count);
  if (n > 0 && tracked_of(fd)) note_write(fd, (int64_t)lseek(fd, 0, SEEK_CUR) - n, n);
  return n;
}

ssize_t pwrite(int fd, const void *buffer, size_t count, off_t offset) {
  ssize_t n = real_pwrite(fd, buffer, count, offset);
  note_write(fd, offset, n);
  return n;
}

ssize_t pwrite64(int fd, const void *buffer, size_t count, off64_t offset) {
  ssize_t n = real_pwrite64(fd, buffer, count, offset);
  note_write(fd, offset, n);
  return n;
}

ssize_t writev(int fd, const struct iovec *iov, int iovcnt) {
  ssize_t n = real_writev(fd, iov, iovcnt);
  if (n > 0 && tracked_of(fd)) note_write(fd, (int64_t)lseek(fd, 0, SEEK_CUR) - n, n);
  return n;
}

ssize_t pwritev(int fd, const struct iovec *iov, int iovcnt, off_t offset) {
  ssize_t n = real_pwritev(fd, iov, iovcnt, offset);
  note_write(fd, offset, n);
  return n;
}

ssize_t pwritev64(int fd, const struct iovec *iov, int iovcnt, off64_t offset) {
  ssize_t n = real_pwritev64(fd, iov, iovcnt, offset);
  note_write(fd, offset, n);
  return n;
}

/* After a successful fsync or fdatasync of a watched file: its shadow catches up. */
static int after_sync(int fd, int rc, long *counter) {
  struct tracked *t = tracked_of(fd);
  if (rc == 0 && t) {
    (*counter)++;
    powercut_sync(t);
    write_stats();
  }
  return rc;
}

int fsync(int fd) { return after_sync(fd, real_fsync(fd), &stats.fsyncs); }

int fdatasync(int fd) { return after_sync(fd, real_fdatasync(fd), &stats.fdatasyncs); }

/* Not a durability call (it writes no metadata and promises nothing after a crash): counted only. */
int sync_file_range(int fd, off64_t offset, off64_t nbytes, unsigned int flags) {
  if (tracked_of(fd)) {
    stats.sync_file_ranges++;
    write_stats();
  }
  return real_sync_file_range(fd, offset, nbytes, flags);
}

int syncfs(int fd) {
  stats.syncfs_calls++;
  return real_syncfs(fd);
}

void sync(void) {
  stats.sync_calls++;
  real_sync();
}

int unlink(const char *path) {
  int rc = real_unlink(path);
  if (rc == 0) forget_path(AT_FDCWD, path);
  return rc;
}

int unlinkat(int dirfd, const char *path, int flags) {
  int rc = real_unlinkat(dirfd, path, flags);
  if (rc == 0 && !(flags & AT_REMOVEDIR)) forget_path(dirfd, path);
  return rc;
}
