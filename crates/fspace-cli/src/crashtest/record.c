/*
 * libfspace-record.so: the recording preload of `fspace crashtest record`.
 *
 * Loaded with LD_PRELOAD into an unmodified program, it appends one binary
 * record per file operation under $FSPACE_CRASHTEST_ROOT to the file
 * $FSPACE_CRASHTEST_OPS. The format (version 1) and what is recorded are
 * specified in the crashtest raw-format document; the Rust decoder reads the
 * same format. Choices where that document leaves room:
 *  - ACK: b = the bytes the call wrote (its return value; 0 when it
 *    failed); data is their first 65536. Failed ACK writes are recorded.
 *  - Path-based calls (rename, link, unlink, mkdir, rmdir, truncate) have
 *    fd = -1 (their paths are made absolute); dev is the st_dev of the
 *    file when known.
 *  - DUP that fails: fd = the requested number (dup2/dup3) or -1.
 *  - raw-syscall LIMITs are written only when the call concerns the root
 *    (its descriptor is recorded or a path is under it); syscall(SYS_sync)
 *    and io_uring always.
 *  - copy_file_range, sendfile, splice into a recorded descriptor: the
 *    kernel copies bytes the preload never holds, so after a call that
 *    copied n > 0 bytes they are read back from the destination (pread at
 *    the explicit out offset's value before the call, else at the position
 *    after it minus n, or at the size minus n for O_APPEND; through a
 *    read-only open of /proc/self/fd/N when the descriptor is write-only)
 *    and recorded as the WRITE a pwrite of them gives (a = offset, b = n,
 *    d = status flags). LIMIT copy-range only when they cannot be read
 *    back. A call that copied nothing (0, failure) gives no record.
 *  - stdio streams: glibc opens, writes and closes a FILE through internal
 *    calls no preload sees. fopen/fopen64/freopen/freopen64 for writing on
 *    a path under the root give the OPEN open(2) would (flags from the
 *    mode, mode 0666) and LIMIT stdio-stream (a limit on granularity, not
 *    a loss); fdopen of a recorded descriptor gives the LIMIT. Such streams
 *    are remembered (up to 256): at each fflush of one (fflush(NULL): all)
 *    and at fclose (flushed first) the file's whole contents are read
 *    through /proc/self/fd/N and recorded as ONE WRITE at offset 0 (b = its
 *    size; none when empty; O_APPEND left out of d), since a stream's bytes
 *    reach the kernel when it is flushed; fclose then gives CLOSE. Writes a
 *    full buffer makes between flushes are not separate records: they are
 *    in the next flush's. Streams open at exit: an atexit handler
 *    registered by the constructor flushes and records them; it runs before
 *    glibc's own flush at exit (checked with glibc 2.36: without its own
 *    fflush the file it reads is still empty). A program's atexit handlers
 *    run before it. _exit flushes nothing and nothing is recorded.
 *  - msync LIMIT: for a range that overlaps a mapping that got an
 *    mmap-shared-writable LIMIT in this process.
 *  - close_range/closefrom are not recorded (no kind); they only make the
 *    preload forget the descriptors they close. dup2/dup3 over a recorded
 *    descriptor gives the DUP record only (no CLOSE for the one replaced).
 *  - LIMIT mmap-shared-writable: ret = 0 (not the address).
 *  - Besides reopening on EBADF, the record file's descriptor is checked
 *    (fstat dev/ino) before each record and reopened when the program has
 *    put another file at its number.
 *  - A fork without exec gets no START (no constructor runs); its records
 *    carry the child's pid.
 * Raw system calls (x86_64): code outside libc's text that issues the
 * syscall instruction itself (rustix's linux_raw backend, Go, inline asm)
 * is caught with Syscall User Dispatch (Linux >= 5.11): the allowed range
 * is libc's text, so a libc caller never traps and nothing is recorded
 * twice. The SIGSYS handler gives a recorded call to the same wrapper a
 * libc caller reaches (identical records) and performs any other through
 * libc's syscall(). Ways of it:
 *  - Not inherited by threads nor fork children (checked on 6.18): turned
 *    on again in pthread_create's new thread, glibc's fork child and the
 *    child of a raw fork/vfork/clone without CLONE_VM.
 *  - The handler runs on a 256 KiB signal stack each captured thread gets
 *    unless it has one (a goroutine's stack is a few KiB); Go with cgo and
 *    Rust's std keep one that is there.
 *  - A raw clone with a new stack (CLONE_VM) is made from the handler; the
 *    child lands after the program's syscall instruction with its
 *    registers. Its TLS may not be glibc's, so that thread is NOT captured:
 *    LIMIT raw-syscall-capture-off. A raw vfork (CLONE_VM, no stack: Go's
 *    os/exec) becomes a copy: its child cannot share the handler's frame.
 *  - A raw clone3 whose struct is over 128 bytes fails ENOSYS (callers
 *    fall back to clone).
 *  - rt_sigreturn from a restorer outside libc (Go's) is re-issued from
 *    libc's restorer on the program's stack.
 *  - SIGSYS is kept out of every mask the program sets (sigprocmask,
 *    sigaction sa_mask, raw or not): blocked, a trap would kill.
 *  - The program's own SIGSYS disposition (sigaction, signal, raw
 *    rt_sigaction) is kept aside and shown back to it; a SIGSYS that is not
 *    a trap (kill, seccomp) goes to it.
 *  - Calls made by ld.so or the vDSO trap and are performed, unrecorded.
 *  - LIMIT raw-syscalls-not-captured (path2: why) when it cannot be turned
 *    on (not x86_64, old kernel) or when FSPACE_CRASHTEST_NO_DISPATCH=1
 *    turns it off.
 *  - Each trapped call costs a signal delivery (about 8 us a write instead
 *    of 0.5); calls through libc cost nothing more.
 * Not followed at all: stdio's writes to what is not a recorded file
 * (printf to stdout or a pipe is no ACK: glibc calls its internal write,
 * which no preload sees); calls made by a signal handler
 * that interrupted the preload's own recording (they are forwarded
 * unrecorded, so that the handler cannot wait on the preload's mutex).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#undef _FORTIFY_SOURCE

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <link.h>
#include <signal.h>
#include <sys/prctl.h>
#include <ucontext.h>
#endif

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the record format is little-endian; this writer copies host structs"
#endif

#ifndef O_TMPFILE
#define O_TMPFILE (020000000 | O_DIRECTORY)
#endif
#ifndef RWF_APPEND
#define RWF_APPEND 0x10
#endif
#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif
#ifndef F_GET_SEALS
#define F_ADD_SEALS 1033
#define F_GET_SEALS 1034
#endif

/* Older glibc lacks these; dlsym then finds nothing and they fail ENOSYS. */
#if !__GLIBC_PREREQ(2, 34)
int close_range(unsigned first, unsigned last, int flags);
void closefrom(int lowfd);
#endif
#if !__GLIBC_PREREQ(2, 30)
#define gettid() ((pid_t)syscall_raw(SYS_gettid))
static long syscall_raw(long nr);
#endif

/* Not in glibc's headers unless fortified. */
int __open_2(const char *, int);
int __open64_2(const char *, int);
int __openat_2(int, const char *, int);
int __openat64_2(int, const char *, int);
/* liburing's; declared here so the preload needs no liburing headers. */
int io_uring_setup(unsigned entries, void *params);
int io_uring_queue_init(unsigned entries, void *ring, unsigned flags);

#define EXPORT __attribute__((visibility("default")))

enum {
    K_OPEN = 1, K_CLOSE, K_WRITE, K_TRUNCATE, K_FALLOCATE, K_POSIX_FALLOCATE,
    K_RENAME, K_LINK, K_UNLINK, K_MKDIR, K_RMDIR, K_FSYNC, K_FDATASYNC,
    K_SYNC_FILE_RANGE, K_SYNCFS, K_SYNC, K_ACK, K_LIMIT, K_START,
    K_INHERITED, K_DUP
};

struct rec {
    uint32_t len;
    uint16_t kind;
    uint16_t version;
    uint32_t pid;
    uint32_t tid;
    uint64_t t_ns;
    int64_t ret;
    int32_t err;
    int32_t fd;
    uint64_t ino;
    uint64_t ino2;
    uint64_t a, b, c, d;
    uint64_t dev;
    uint32_t path1_len;
    uint32_t path2_len;
    uint32_t data_len;
    uint32_t reserved;
} __attribute__((packed));

_Static_assert(sizeof(struct rec) == 112, "record header is 112 bytes");
_Static_assert(offsetof(struct rec, t_ns) == 16, "t_ns at 16");
_Static_assert(offsetof(struct rec, ino) == 40, "ino at 40");
_Static_assert(offsetof(struct rec, dev) == 88, "dev at 88");
_Static_assert(offsetof(struct rec, path1_len) == 96, "path1_len at 96");

#define ACK_MAX 65536
#define LOG_FD_MIN 900
/* Room for a cwd of PATH_MAX joined with a relative path of PATH_MAX. */
#define PBUF (2 * PATH_MAX)

/* ---- the real functions ---------------------------------------------- */

/* One atomic slot per symbol: no lock, so a wrapper called from inside
 * dlsym or before the constructor cannot deadlock. */
static void *resolve(void **slot, const char *name)
{
    void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!p) {
        p = dlsym(RTLD_NEXT, name);
        __atomic_store_n(slot, p, __ATOMIC_RELEASE);
    }
    return p;
}
#define REAL(name)                                                       \
    ({                                                                   \
        static void *slot_;                                              \
        (__typeof__(&name))resolve(&slot_, #name);                       \
    })
/* Calls the real function, or fails with ENOSYS when there is none. */
#define CALL(name, fail, ...)                                            \
    ({                                                                   \
        __typeof__(&name) f_ = REAL(name);                               \
        f_ ? f_(__VA_ARGS__) : (errno = ENOSYS, (fail));                 \
    })

#if !__GLIBC_PREREQ(2, 30)
/* Our own syscall() is a wrapper: reach glibc's. */
static long syscall_raw(long nr)
{
    return CALL(syscall, -1, nr);
}
#endif

/* ---- state --------------------------------------------------------- */

enum { FD_UNKNOWN = 0, FD_RECORDED, FD_ACK, FD_IGNORED };

struct fdent {
    uint64_t dev, ino;
    int32_t flags;    /* status flags, FD_RECORDED only */
    uint8_t state;
    uint8_t chan;     /* ACK channel */
};

/* Indexed by descriptor; bss, so untouched pages cost nothing. Higher
 * descriptors are classified afresh on every call. */
#define NCACHE 65536
static struct fdent g_cache[NCACHE];
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;

#define NMAPS 64
static struct { uintptr_t start, len; uint64_t ino, dev; } g_maps[NMAPS];

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_active;
static char g_root[PATH_MAX];
static size_t g_root_len;
static uint64_t g_root_dev;
static const char *g_ops;
static int g_logfd = -1;
static uint64_t g_log_dev, g_log_ino;
static int g_disabled;
static int g_reported;

static __thread int t_busy __attribute__((tls_model("initial-exec")));

static void report(const char *what, int err)
{
    if (__atomic_exchange_n(&g_reported, 1, __ATOMIC_ACQ_REL))
        return;
    char line[512];
    int n = snprintf(line, sizeof line, "fspace-record: %s failed: %s\n",
                     what, strerror(err));
    if (n > (int)sizeof line - 1)
        n = sizeof line - 1;
    if (n > 0) {
        ssize_t (*w)(int, const void *, size_t) = REAL(write);
        if (w && w(2, line, (size_t)n) < 0) {
            /* nothing left to tell anyone */
        }
    }
}

static void sud_thread_on(void);

static void atfork_child(void)
{
    /* Another thread may have held it at fork; the child has only us. */
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    g_mu = fresh;
    /* Syscall User Dispatch is not inherited by a fork's child. */
    sud_thread_on();
}

static void init_env(void)
{
    const char *ops = getenv("FSPACE_CRASHTEST_OPS");
    if (!ops || !*ops)
        return;
    const char *root = getenv("FSPACE_CRASHTEST_ROOT");
    size_t n = root ? strlen(root) : 0;
    if (n == 0 || n >= sizeof g_root || root[0] != '/') {
        report("reading FSPACE_CRASHTEST_ROOT", EINVAL);
        return;
    }
    memcpy(g_root, root, n + 1);
    while (n > 1 && g_root[n - 1] == '/')
        g_root[--n] = '\0';
    g_root_len = n;
    struct stat st;
    if (stat(g_root, &st) == 0)
        g_root_dev = st.st_dev;
    g_ops = ops;
    pthread_atfork(NULL, NULL, atfork_child);
    g_active = 1;
}

static inline int active(void)
{
    pthread_once(&g_once, init_env);
    return g_active && !t_busy;
}

/* ---- the record file ------------------------------------------------- */

static int log_open_locked(void)
{
    int (*ro)(int, const char *, int, ...) = REAL(openat);
    int (*rf)(int, int, ...) = REAL(fcntl);
    int (*rc)(int) = REAL(close);
    if (!ro || !rf || !rc) {
        report("finding the real openat/fcntl/close", ENOSYS);
        __atomic_store_n(&g_disabled, 1, __ATOMIC_RELEASE);
        return -1;
    }
    int fd = ro(AT_FDCWD, g_ops, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) {
        report("opening FSPACE_CRASHTEST_OPS", errno);
        __atomic_store_n(&g_disabled, 1, __ATOMIC_RELEASE);
        return -1;
    }
    if (fd < LOG_FD_MIN) {
        int hi = rf(fd, F_DUPFD_CLOEXEC, LOG_FD_MIN);
        /* Below RLIMIT_NOFILE of 900 keep the low one: better than none. */
        if (hi >= 0) {
            rc(fd);
            fd = hi;
        }
    }
    struct stat st;
    if (fstat(fd, &st) == 0) {
        __atomic_store_n(&g_log_dev, (uint64_t)st.st_dev, __ATOMIC_RELAXED);
        __atomic_store_n(&g_log_ino, (uint64_t)st.st_ino, __ATOMIC_RELAXED);
    }
    __atomic_store_n(&g_logfd, fd, __ATOMIC_RELEASE);
    return fd;
}

/* The record file's descriptor, checked against the file it was opened on:
 * the program may have closed it, dup2'd over it or got its number back
 * from open. Checking here rather than in close/dup2/close_range also keeps
 * a vfork child (shared memory, its own descriptors) from reopening it
 * under the parent. */
static int log_fd(void)
{
    int fd = __atomic_load_n(&g_logfd, __ATOMIC_ACQUIRE);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 &&
        (uint64_t)st.st_dev == __atomic_load_n(&g_log_dev, __ATOMIC_RELAXED) &&
        (uint64_t)st.st_ino == __atomic_load_n(&g_log_ino, __ATOMIC_RELAXED))
        return fd;
    if (__atomic_load_n(&g_disabled, __ATOMIC_ACQUIRE))
        return -1;
    pthread_mutex_lock(&g_mu);
    if (g_logfd == fd && !g_disabled)
        fd = log_open_locked();
    else
        fd = g_logfd;
    pthread_mutex_unlock(&g_mu);
    return fd;
}

static void log_forget(int fd)
{
    int cur = fd;
    __atomic_compare_exchange_n(&g_logfd, &cur, -1, 0, __ATOMIC_ACQ_REL,
                                __ATOMIC_ACQUIRE);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void rec_init(struct rec *r, int kind, int64_t ret, int err, int fd)
{
    memset(r, 0, sizeof *r);
    r->kind = (uint16_t)kind;
    r->version = 1;
    r->pid = (uint32_t)getpid();
    r->tid = (uint32_t)gettid();
    r->t_ns = now_ns();
    r->ret = ret;
    r->err = ret < 0 ? err : 0;
    r->fd = fd;
}

/* Appends the record with ONE writev (O_APPEND makes it atomic against
 * other writers); data is the first dlen bytes of the iovecs. */
static void emit(struct rec *r, const char *p1, const char *p2,
                 const struct iovec *data, int dcnt, size_t dlen)
{
    size_t l1 = p1 ? strlen(p1) : 0, l2 = p2 ? strlen(p2) : 0;
    struct iovec stackv[64], flatv;
    struct iovec *v = stackv;
    char *flat = NULL;
    int nv = 0;
    if (dcnt + 3 > IOV_MAX) {
        /* One writev takes at most IOV_MAX pieces: copy the data into one. */
        flat = malloc(dlen ? dlen : 1);
        size_t got = 0;
        for (int i = 0; flat && i < dcnt && got < dlen; i++) {
            size_t n = data[i].iov_len < dlen - got ? data[i].iov_len : dlen - got;
            memcpy(flat + got, data[i].iov_base, n);
            got += n;
        }
        flatv = (struct iovec){flat, dlen};
        data = &flatv;
        dcnt = 1;
    } else if (dcnt + 3 > (int)(sizeof stackv / sizeof stackv[0])) {
        v = malloc(sizeof(*v) * ((size_t)dcnt + 3));
    }
    if (!v || (dcnt == 1 && data == &flatv && !flat)) {
        /* No memory: the record without its data rather than none. */
        report("allocating a record", ENOMEM);
        v = stackv;
        dcnt = 0;
        dlen = 0;
    }
    r->path1_len = (uint32_t)l1;
    r->path2_len = (uint32_t)l2;
    r->data_len = (uint32_t)dlen;
    r->len = (uint32_t)(sizeof *r + l1 + l2 + dlen);
    v[nv++] = (struct iovec){r, sizeof *r};
    if (l1)
        v[nv++] = (struct iovec){(void *)p1, l1};
    if (l2)
        v[nv++] = (struct iovec){(void *)p2, l2};
    size_t left = dlen;
    for (int i = 0; i < dcnt && left > 0; i++) {
        size_t n = data[i].iov_len < left ? data[i].iov_len : left;
        if (n)
            v[nv++] = (struct iovec){data[i].iov_base, n};
        left -= n;
    }
    ssize_t (*wv)(int, const struct iovec *, int) = REAL(writev);
    for (int tries = 0; wv && tries < 2; tries++) {
        int fd = log_fd();
        if (fd < 0)
            break;
        ssize_t w;
        do
            w = wv(fd, v, nv);
        while (w < 0 && errno == EINTR);
        if (w == (ssize_t)r->len)
            break;
        if (w < 0 && errno == EBADF) {
            log_forget(fd);
            continue;
        }
        report("writing a record to FSPACE_CRASHTEST_OPS", w < 0 ? errno : EIO);
        break;
    }
    if (v != stackv)
        free(v);
    free(flat);
}

static void emit_simple(struct rec *r, const char *p1, const char *p2)
{
    emit(r, p1, p2, NULL, 0, 0);
}

/* ---- paths ----------------------------------------------------------- */

static int fd_path(int fd, char *out, size_t cap)
{
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, out, cap - 1);
    if (n < 0 || (size_t)n >= cap - 1)
        return -1;
    out[n] = '\0';
    return 0;
}

/* Removes "." and ".." and repeated slashes of an absolute path in place. */
static void normalize(char *p)
{
    size_t n = strlen(p), i = 0, o = 0;
    while (i < n) {
        while (i < n && p[i] == '/')
            i++;
        size_t st = i;
        while (i < n && p[i] != '/')
            i++;
        size_t len = i - st;
        if (len == 0 || (len == 1 && p[st] == '.'))
            continue;
        if (len == 2 && p[st] == '.' && p[st + 1] == '.') {
            while (o > 0 && p[o - 1] != '/')
                o--;
            if (o > 0)
                o--;
            continue;
        }
        p[o++] = '/';
        memmove(p + o, p + st, len);
        o += len;
    }
    if (o == 0)
        p[o++] = '/';
    p[o] = '\0';
}

static int abs_path(int dirfd, const char *path, char *out, size_t cap)
{
    if (!path)
        return -1;
    size_t pl = strlen(path);
    if (path[0] == '/') {
        if (pl >= cap)
            return -1;
        memcpy(out, path, pl + 1);
    } else {
        if (dirfd == AT_FDCWD) {
            if (!getcwd(out, cap))
                return -1;
        } else if (fd_path(dirfd, out, cap) < 0) {
            return -1;
        }
        size_t bl = strlen(out);
        if (out[0] != '/' || bl + 1 + pl >= cap)
            return -1;
        if (pl) {
            out[bl] = '/';
            memcpy(out + bl + 1, path, pl + 1);
        }
    }
    normalize(out);
    return 0;
}

static int under_root(const char *p)
{
    if (g_root_len == 1)
        return p[0] == '/';
    return strncmp(p, g_root, g_root_len) == 0 &&
           (p[g_root_len] == '\0' || p[g_root_len] == '/');
}

/* ---- descriptors ----------------------------------------------------- */

static void cache_put(int fd, const struct fdent *e)
{
    if (fd < 0 || fd >= NCACHE)
        return;
    pthread_mutex_lock(&g_mu);
    g_cache[fd] = *e;
    pthread_mutex_unlock(&g_mu);
}

static void cache_forget(int fd)
{
    if (fd < 0 || fd >= NCACHE)
        return;
    pthread_mutex_lock(&g_mu);
    g_cache[fd].state = FD_UNKNOWN;
    pthread_mutex_unlock(&g_mu);
}

/* Forgets every descriptor of this file: their status flags may differ now. */
static void cache_forget_file(uint64_t dev, uint64_t ino)
{
    pthread_mutex_lock(&g_mu);
    for (int i = 0; i < NCACHE; i++)
        if (g_cache[i].state && g_cache[i].dev == dev && g_cache[i].ino == ino)
            g_cache[i].state = FD_UNKNOWN;
    pthread_mutex_unlock(&g_mu);
}

static int get_fl(int fd)
{
    int (*rf)(int, int, ...) = REAL(fcntl);
    return rf ? rf(fd, F_GETFL) : 0;
}

/* What fd is now: the cache entry if fstat's dev/ino still match it, else
 * classified afresh (readlink) and cached. st gets fstat's answer. Returns
 * FD_UNKNOWN when fd is not open. */
static int classify(int fd, struct fdent *e, struct stat *st)
{
    if (fd < 0 || fstat(fd, st) < 0)
        return FD_UNKNOWN;
    if (fd < NCACHE) {
        pthread_mutex_lock(&g_mu);
        *e = g_cache[fd];
        pthread_mutex_unlock(&g_mu);
        if (e->state && e->dev == (uint64_t)st->st_dev &&
            e->ino == (uint64_t)st->st_ino)
            return e->state;
    }
    memset(e, 0, sizeof *e);
    e->dev = st->st_dev;
    e->ino = st->st_ino;
    e->state = FD_IGNORED;
    if (S_ISREG(st->st_mode) || S_ISDIR(st->st_mode)) {
        char p[PATH_MAX + 16];
        if (fd_path(fd, p, sizeof p) == 0 && under_root(p)) {
            e->state = FD_RECORDED;
            e->flags = get_fl(fd);
        }
    }
    if (e->state != FD_RECORDED) {
        e->chan = fd == 1 ? 1
                  : fd == 2 ? 2
                  : S_ISFIFO(st->st_mode) ? 3
                  : S_ISSOCK(st->st_mode) ? 4
                  : S_ISCHR(st->st_mode) ? 5 : 0;
        if (e->chan)
            e->state = FD_ACK;
    }
    cache_put(fd, e);
    return e->state;
}

static void fill_file(struct rec *r, const struct stat *st)
{
    r->ino = st->st_ino;
    r->dev = st->st_dev;
}

/* ---- shared wrapper bodies ------------------------------------------- */

/* Save errno at entry of the recording part, restore at its end. */
#define BEGIN_REC(e) int e = errno; t_busy = 1
#define END_REC(e) t_busy = 0; errno = e

static size_t iov_sum(const struct iovec *iov, int cnt)
{
    size_t s = 0;
    if (!iov || cnt < 0 || cnt > IOV_MAX)
        return 0;
    for (int i = 0; i < cnt; i++)
        s += iov[i].iov_len;
    return s;
}

static void emit_ack(int fd, const struct fdent *e, ssize_t ret, int err,
                     const struct iovec *iov, int cnt)
{
    struct rec r;
    rec_init(&r, K_ACK, ret, err, fd);
    r.a = e->chan;
    r.b = ret > 0 ? (uint64_t)ret : 0;
    size_t dl = ret > 0 ? (size_t)ret : 0;
    if (dl > ACK_MAX)
        dl = ACK_MAX;
    emit(&r, NULL, NULL, iov, cnt, dl);
}

enum { OFF_POS, OFF_GIVEN };

/* After any write-family call: WRITE for a recorded descriptor, ACK for an
 * ACK one. off is the offset argument for OFF_GIVEN. */
static void after_write(int fd, const struct iovec *iov, int cnt, int mode,
                        int64_t off, int rwf, ssize_t ret, int err)
{
    struct fdent e;
    struct stat st;
    int state = classify(fd, &e, &st);
    int iov_ok = ret >= 0 || (err != EFAULT && err != EINVAL);
    if (state == FD_ACK) {
        emit_ack(fd, &e, ret, err, iov_ok ? iov : NULL, iov_ok ? cnt : 0);
        return;
    }
    if (state != FD_RECORDED)
        return;
    struct rec r;
    rec_init(&r, K_WRITE, ret, err, fd);
    fill_file(&r, &st);
    size_t done = ret > 0 ? (size_t)ret : 0;
    int append = (e.flags & O_APPEND) || (rwf & RWF_APPEND);
    if (mode == OFF_GIVEN && off != -1 && append) {
        /* Linux appends and leaves the position alone. */
        r.a = (uint64_t)st.st_size - done;
    } else if (mode == OFF_GIVEN && off != -1) {
        r.a = (uint64_t)off;
    } else {
        off_t pos = lseek(fd, 0, SEEK_CUR);
        r.a = pos >= 0 ? (uint64_t)pos - done : 0;
    }
    r.b = iov_ok ? iov_sum(iov, cnt) : 0;
    r.c = (uint64_t)(unsigned)rwf;
    r.d = (uint64_t)(unsigned)e.flags;
    emit(&r, NULL, NULL, iov, iov_ok ? cnt : 0, done);
}

static int needs_mode(int flags)
{
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

struct open_ctx {
    char path[PBUF];
    int rec;
    int existed;
};

static void open_pre(struct open_ctx *c, int dirfd, const char *path, int flags)
{
    c->rec = abs_path(dirfd, path, c->path, sizeof c->path) == 0 &&
             under_root(c->path);
    c->existed = 1;
    if (c->rec && (flags & O_CREAT)) {
        struct stat st;
        c->existed = !(fstatat(dirfd, path, &st, 0) < 0 && errno == ENOENT);
    }
}

static void open_post(struct open_ctx *c, int fd, int err, int flags, mode_t mode)
{
    if (!c->rec) {
        cache_forget(fd);
        return;
    }
    struct rec r;
    rec_init(&r, K_OPEN, fd, err, fd);
    r.a = (uint64_t)(unsigned)flags;
    r.b = mode;
    if ((flags & O_TMPFILE) == O_TMPFILE)
        r.c = 2;
    else if (fd >= 0 && (flags & O_CREAT) && (!c->existed || (flags & O_EXCL)))
        r.c = 1;
    if (fd >= 0) {
        struct stat st;
        if (fstat(fd, &st) == 0) {
            fill_file(&r, &st);
            struct fdent e = {.dev = st.st_dev, .ino = st.st_ino,
                              .flags = get_fl(fd), .state = FD_RECORDED};
            cache_put(fd, &e);
        } else {
            cache_forget(fd);
        }
    }
    emit_simple(&r, c->path, NULL);
}

#define OPEN_BODY(call, dirfd, path, flags, mode)                        \
    do {                                                                 \
        if (!active())                                                   \
            return call;                                                 \
        struct open_ctx c_;                                              \
        t_busy = 1;                                                      \
        int e0_ = errno;                                                 \
        open_pre(&c_, dirfd, path, flags);                               \
        errno = e0_;                                                     \
        t_busy = 0;                                                      \
        int fd_ = call;                                                  \
        BEGIN_REC(e_);                                                   \
        open_post(&c_, fd_, e_, flags, mode);                            \
        END_REC(e_);                                                     \
        return fd_;                                                      \
    } while (0)

#define READ_MODE(last, flags)                                           \
    mode_t mode = 0;                                                     \
    if (needs_mode(flags)) {                                             \
        va_list ap;                                                      \
        va_start(ap, last);                                              \
        mode = va_arg(ap, mode_t);                                       \
        va_end(ap);                                                      \
    }

/* ---- open ------------------------------------------------------------ */

EXPORT int open(const char *path, int flags, ...)
{
    READ_MODE(flags, flags);
    OPEN_BODY(CALL(open, -1, path, flags, mode), AT_FDCWD, path, flags, mode);
}

EXPORT int open64(const char *path, int flags, ...)
{
    READ_MODE(flags, flags);
    OPEN_BODY(CALL(open64, -1, path, flags, mode), AT_FDCWD, path, flags, mode);
}

EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
    READ_MODE(flags, flags);
    OPEN_BODY(CALL(openat, -1, dirfd, path, flags, mode), dirfd, path, flags, mode);
}

EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
    READ_MODE(flags, flags);
    OPEN_BODY(CALL(openat64, -1, dirfd, path, flags, mode), dirfd, path, flags, mode);
}

EXPORT int creat(const char *path, mode_t mode)
{
    OPEN_BODY(CALL(creat, -1, path, mode), AT_FDCWD, path,
              O_CREAT | O_WRONLY | O_TRUNC, mode);
}

EXPORT int creat64(const char *path, mode_t mode)
{
    OPEN_BODY(CALL(creat64, -1, path, mode), AT_FDCWD, path,
              O_CREAT | O_WRONLY | O_TRUNC, mode);
}

EXPORT int __open_2(const char *path, int flags)
{
    OPEN_BODY(CALL(__open_2, -1, path, flags), AT_FDCWD, path, flags, 0);
}

EXPORT int __open64_2(const char *path, int flags)
{
    OPEN_BODY(CALL(__open64_2, -1, path, flags), AT_FDCWD, path, flags, 0);
}

EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
    OPEN_BODY(CALL(__openat_2, -1, dirfd, path, flags), dirfd, path, flags, 0);
}

EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
    OPEN_BODY(CALL(__openat64_2, -1, dirfd, path, flags), dirfd, path, flags, 0);
}

/* ---- close, dup ------------------------------------------------------ */

EXPORT int close(int fd)
{
    if (!active())
        return CALL(close, -1, fd);
    struct fdent e;
    struct stat st;
    BEGIN_REC(e0);
    int state = classify(fd, &e, &st);
    END_REC(e0);
    int ret = CALL(close, -1, fd);
    BEGIN_REC(err);
    cache_forget(fd);
    if (state == FD_RECORDED) {
        struct rec r;
        rec_init(&r, K_CLOSE, ret, err, fd);
        fill_file(&r, &st);
        emit_simple(&r, NULL, NULL);
    }
    END_REC(err);
    return ret;
}

static void after_dup(int oldfd, int newfd, int ret, int err)
{
    struct fdent e;
    struct stat st;
    int target = ret >= 0 ? ret : newfd;
    if (ret >= 0)
        cache_forget(ret);
    if (classify(oldfd, &e, &st) != FD_RECORDED)
        return;
    if (ret >= 0)
        cache_put(ret, &e);
    struct rec r;
    rec_init(&r, K_DUP, ret, err, target);
    r.a = (uint64_t)(int64_t)oldfd;
    fill_file(&r, &st);
    emit_simple(&r, NULL, NULL);
}

EXPORT int dup(int oldfd)
{
    if (!active())
        return CALL(dup, -1, oldfd);
    int ret = CALL(dup, -1, oldfd);
    BEGIN_REC(err);
    after_dup(oldfd, -1, ret, err);
    END_REC(err);
    return ret;
}

EXPORT int dup2(int oldfd, int newfd)
{
    if (!active() || oldfd == newfd)
        return CALL(dup2, -1, oldfd, newfd);
    int ret = CALL(dup2, -1, oldfd, newfd);
    BEGIN_REC(err);
    after_dup(oldfd, newfd, ret, err);
    END_REC(err);
    return ret;
}

EXPORT int dup3(int oldfd, int newfd, int flags)
{
    if (!active())
        return CALL(dup3, -1, oldfd, newfd, flags);
    int ret = CALL(dup3, -1, oldfd, newfd, flags);
    BEGIN_REC(err);
    after_dup(oldfd, newfd, ret, err);
    END_REC(err);
    return ret;
}

EXPORT int close_range(unsigned first, unsigned last, int flags)
{
    int ret = CALL(close_range, -1, first, last, flags);
    if (!active() || ret < 0 || (flags & CLOSE_RANGE_CLOEXEC))
        return ret;
    BEGIN_REC(err);
    pthread_mutex_lock(&g_mu);
    for (unsigned i = first; i <= last && i < NCACHE; i++)
        g_cache[i].state = FD_UNKNOWN;
    pthread_mutex_unlock(&g_mu);
    END_REC(err);
    return ret;
}

EXPORT void closefrom(int lowfd)
{
    void (*f)(int) = REAL(closefrom);
    if (f)
        f(lowfd);
    if (!active() || lowfd < 0)
        return;
    BEGIN_REC(err);
    pthread_mutex_lock(&g_mu);
    for (int i = lowfd; i < NCACHE; i++)
        g_cache[i].state = FD_UNKNOWN;
    pthread_mutex_unlock(&g_mu);
    END_REC(err);
}

/* ---- fcntl ----------------------------------------------------------- */

enum { ARG_NONE, ARG_INT, ARG_PTR };

static int fcntl_arg_kind(int cmd)
{
    switch (cmd) {
    case F_GETFD: case F_GETFL: case F_GETOWN: case F_GETSIG:
    case F_GETLEASE: case F_GETPIPE_SZ: case F_GET_SEALS:
        return ARG_NONE;
    case F_DUPFD: case F_DUPFD_CLOEXEC: case F_SETFD: case F_SETFL:
    case F_SETOWN: case F_SETSIG: case F_SETLEASE: case F_NOTIFY:
    case F_SETPIPE_SZ: case F_ADD_SEALS:
        return ARG_INT;
    default:
        return ARG_PTR;
    }
}

static int fcntl_common(int (*real)(int, int, ...), int fd, int cmd, int kind,
                        int iarg, void *parg)
{
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    int ret = kind == ARG_NONE  ? real(fd, cmd)
              : kind == ARG_INT ? real(fd, cmd, iarg)
                                : real(fd, cmd, parg);
    if (!active())
        return ret;
    BEGIN_REC(err);
    if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) {
        after_dup(fd, -1, ret, err);
    } else if (cmd == F_SETFL && ret == 0) {
        struct stat st;
        if (fstat(fd, &st) == 0)
            cache_forget_file(st.st_dev, st.st_ino);
    }
    END_REC(err);
    return ret;
}

/* The argument is read with the type the command takes: an int, a pointer,
 * or nothing (reading one that was not passed is undefined). */
#define FCNTL_BODY(name)                                                 \
    int kind = fcntl_arg_kind(cmd), iarg = 0;                            \
    void *parg = NULL;                                                   \
    if (kind != ARG_NONE) {                                              \
        va_list ap;                                                      \
        va_start(ap, cmd);                                               \
        if (kind == ARG_INT)                                             \
            iarg = va_arg(ap, int);                                      \
        else                                                             \
            parg = va_arg(ap, void *);                                   \
        va_end(ap);                                                      \
    }                                                                    \
    return fcntl_common(REAL(name), fd, cmd, kind, iarg, parg)

EXPORT int fcntl(int fd, int cmd, ...)
{
    FCNTL_BODY(fcntl);
}

EXPORT int fcntl64(int fd, int cmd, ...)
{
    FCNTL_BODY(fcntl64);
}

/* ---- writes ---------------------------------------------------------- */

#define WRITE_BODY(call, fd, iov, cnt, mode, off, rwf)                   \
    do {                                                                 \
        if (!active())                                                   \
            return call;                                                 \
        ssize_t ret_ = call;                                             \
        BEGIN_REC(e_);                                                   \
        after_write(fd, iov, cnt, mode, off, rwf, ret_, e_);             \
        END_REC(e_);                                                     \
        return ret_;                                                     \
    } while (0)

EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
    struct iovec v = {(void *)buf, n};
    WRITE_BODY(CALL(write, -1, fd, buf, n), fd, &v, 1, OFF_POS, 0, 0);
}

EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    struct iovec v = {(void *)buf, n};
    WRITE_BODY(CALL(pwrite, -1, fd, buf, n, off), fd, &v, 1, OFF_GIVEN, off, 0);
}

EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
    struct iovec v = {(void *)buf, n};
    WRITE_BODY(CALL(pwrite64, -1, fd, buf, n, off), fd, &v, 1, OFF_GIVEN, off, 0);
}

EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    WRITE_BODY(CALL(writev, -1, fd, iov, cnt), fd, iov, cnt, OFF_POS, 0, 0);
}

EXPORT ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
    WRITE_BODY(CALL(pwritev, -1, fd, iov, cnt, off), fd, iov, cnt, OFF_GIVEN, off, 0);
}

EXPORT ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off64_t off)
{
    WRITE_BODY(CALL(pwritev64, -1, fd, iov, cnt, off), fd, iov, cnt, OFF_GIVEN, off, 0);
}

EXPORT ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
    WRITE_BODY(CALL(pwritev2, -1, fd, iov, cnt, off, flags), fd, iov, cnt,
               OFF_GIVEN, off, flags);
}

EXPORT ssize_t pwritev64v2(int fd, const struct iovec *iov, int cnt, off64_t off,
                           int flags)
{
    WRITE_BODY(CALL(pwritev64v2, -1, fd, iov, cnt, off, flags), fd, iov, cnt,
               OFF_GIVEN, off, flags);
}

/* send* only ever ACK: a socket is never a recorded file. */
static void after_send(int fd, const struct iovec *iov, int cnt, ssize_t ret, int err)
{
    struct fdent e;
    struct stat st;
    if (classify(fd, &e, &st) == FD_ACK)
        emit_ack(fd, &e, ret, err, ret >= 0 ? iov : NULL, ret >= 0 ? cnt : 0);
}

EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
    ssize_t ret = CALL(send, -1, fd, buf, n, flags);
    if (!active())
        return ret;
    BEGIN_REC(err);
    struct iovec v = {(void *)buf, n};
    after_send(fd, &v, 1, ret, err);
    END_REC(err);
    return ret;
}

EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags,
                      const struct sockaddr *to, socklen_t tolen)
{
    ssize_t ret = CALL(sendto, -1, fd, buf, n, flags, to, tolen);
    if (!active())
        return ret;
    BEGIN_REC(err);
    struct iovec v = {(void *)buf, n};
    after_send(fd, &v, 1, ret, err);
    END_REC(err);
    return ret;
}

EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
    ssize_t ret = CALL(sendmsg, -1, fd, msg, flags);
    if (!active())
        return ret;
    BEGIN_REC(err);
    if (ret >= 0)
        after_send(fd, msg->msg_iov, (int)msg->msg_iovlen, ret, err);
    else
        after_send(fd, NULL, 0, ret, err);
    END_REC(err);
    return ret;
}

/* ---- fd-based operations --------------------------------------------- */

/* The record for an fd-based call, or 0 when fd is not recorded. */
static int fd_rec(struct rec *r, int kind, int fd, int64_t ret, int err)
{
    struct fdent e;
    struct stat st;
    if (classify(fd, &e, &st) != FD_RECORDED)
        return 0;
    rec_init(r, kind, ret, err, fd);
    fill_file(r, &st);
    return 1;
}

#define FD_OP(call, kind, fd, fields)                                    \
    do {                                                                 \
        if (!active())                                                   \
            return call;                                                 \
        __typeof__(call) ret_ = call;                                    \
        BEGIN_REC(e_);                                                   \
        struct rec r;                                                    \
        if (fd_rec(&r, kind, fd, ret_, e_)) {                            \
            fields;                                                      \
            emit_simple(&r, NULL, NULL);                                 \
        }                                                                \
        END_REC(e_);                                                     \
        return ret_;                                                     \
    } while (0)

EXPORT int fsync(int fd) { FD_OP(CALL(fsync, -1, fd), K_FSYNC, fd, (void)0); }

EXPORT int fdatasync(int fd) { FD_OP(CALL(fdatasync, -1, fd), K_FDATASYNC, fd, (void)0); }

EXPORT int ftruncate(int fd, off_t len)
{
    FD_OP(CALL(ftruncate, -1, fd, len), K_TRUNCATE, fd, r.a = (uint64_t)len);
}

EXPORT int ftruncate64(int fd, off64_t len)
{
    FD_OP(CALL(ftruncate64, -1, fd, len), K_TRUNCATE, fd, r.a = (uint64_t)len);
}

EXPORT int fallocate(int fd, int mode, off_t off, off_t len)
{
    FD_OP(CALL(fallocate, -1, fd, mode, off, len), K_FALLOCATE, fd,
          (r.a = (uint64_t)(unsigned)mode, r.b = (uint64_t)off, r.c = (uint64_t)len));
}

EXPORT int fallocate64(int fd, int mode, off64_t off, off64_t len)
{
    FD_OP(CALL(fallocate64, -1, fd, mode, off, len), K_FALLOCATE, fd,
          (r.a = (uint64_t)(unsigned)mode, r.b = (uint64_t)off, r.c = (uint64_t)len));
}

EXPORT int sync_file_range(int fd, off64_t off, off64_t n, unsigned int flags)
{
    FD_OP(CALL(sync_file_range, -1, fd, off, n, flags), K_SYNC_FILE_RANGE, fd,
          (r.a = (uint64_t)off, r.b = (uint64_t)n, r.c = flags));
}

/* It returns an error number instead of setting errno. */
static void after_posix_fallocate(int fd, off64_t off, off64_t len, int rc)
{
    struct rec r;
    if (!fd_rec(&r, K_POSIX_FALLOCATE, fd, rc ? -1 : 0, rc))
        return;
    r.b = (uint64_t)off;
    r.c = (uint64_t)len;
    struct statfs sf;
    if (fstatfs(fd, &sf) == 0)
        r.d = (uint64_t)sf.f_type;
    emit_simple(&r, NULL, NULL);
}

EXPORT int posix_fallocate(int fd, off_t off, off_t len)
{
    int (*f)(int, off_t, off_t) = REAL(posix_fallocate);
    int rc = f ? f(fd, off, len) : ENOSYS;
    if (!active())
        return rc;
    BEGIN_REC(err);
    after_posix_fallocate(fd, off, len, rc);
    END_REC(err);
    return rc;
}

EXPORT int posix_fallocate64(int fd, off64_t off, off64_t len)
{
    int (*f)(int, off64_t, off64_t) = REAL(posix_fallocate64);
    int rc = f ? f(fd, off, len) : ENOSYS;
    if (!active())
        return rc;
    BEGIN_REC(err);
    after_posix_fallocate(fd, off, len, rc);
    END_REC(err);
    return rc;
}

EXPORT int syncfs(int fd)
{
    int ret = CALL(syncfs, -1, fd);
    if (!active())
        return ret;
    BEGIN_REC(err);
    struct stat st;
    if (fstat(fd, &st) == 0 && (uint64_t)st.st_dev == g_root_dev) {
        struct rec r;
        rec_init(&r, K_SYNCFS, ret, err, fd);
        r.dev = st.st_dev;
        emit_simple(&r, NULL, NULL);
    }
    END_REC(err);
    return ret;
}

EXPORT void sync(void)
{
    void (*f)(void) = REAL(sync);
    if (f)
        f();
    if (!active())
        return;
    BEGIN_REC(err);
    struct rec r;
    rec_init(&r, K_SYNC, 0, 0, -1);
    emit_simple(&r, NULL, NULL);
    END_REC(err);
}

/* ---- path-based operations ------------------------------------------- */

static int lstat_at(int dirfd, const char *path, struct stat *st, int flags)
{
    return path ? fstatat(dirfd, path, st, flags) : -1;
}

static void truncate_common(int ret, int err, const char *path, off64_t len)
{
    char p[PBUF];
    if (abs_path(AT_FDCWD, path, p, sizeof p) < 0 || !under_root(p))
        return;
    struct rec r;
    rec_init(&r, K_TRUNCATE, ret, err, -1);
    r.a = (uint64_t)len;
    struct stat st;
    if (stat(path, &st) == 0)
        fill_file(&r, &st);
    emit_simple(&r, p, NULL);
}

EXPORT int truncate(const char *path, off_t len)
{
    int ret = CALL(truncate, -1, path, len);
    if (!active())
        return ret;
    BEGIN_REC(err);
    truncate_common(ret, err, path, len);
    END_REC(err);
    return ret;
}

EXPORT int truncate64(const char *path, off64_t len)
{
    int ret = CALL(truncate64, -1, path, len);
    if (!active())
        return ret;
    BEGIN_REC(err);
    truncate_common(ret, err, path, len);
    END_REC(err);
    return ret;
}

/* unlink, unlinkat, rmdir: the inode is taken just before the call. */
#define REMOVE_BODY(call, dirfd, path, kind)                             \
    do {                                                                 \
        if (!active())                                                   \
            return call;                                                 \
        char p_[PBUF];                                                   \
        struct stat st_;                                                 \
        int rec_, have_ = 0;                                             \
        BEGIN_REC(e0_);                                                  \
        rec_ = abs_path(dirfd, path, p_, sizeof p_) == 0 && under_root(p_); \
        if (rec_)                                                        \
            have_ = lstat_at(dirfd, path, &st_, AT_SYMLINK_NOFOLLOW) == 0; \
        END_REC(e0_);                                                    \
        int ret_ = call;                                                 \
        BEGIN_REC(e_);                                                   \
        if (rec_) {                                                      \
            struct rec r;                                                \
            rec_init(&r, kind, ret_, e_, -1);                            \
            if (have_)                                                   \
                fill_file(&r, &st_);                                     \
            emit_simple(&r, p_, NULL);                                   \
        }                                                                \
        END_REC(e_);                                                     \
        return ret_;                                                     \
    } while (0)

EXPORT int unlink(const char *path)
{
    REMOVE_BODY(CALL(unlink, -1, path), AT_FDCWD, path, K_UNLINK);
}

EXPORT int rmdir(const char *path)
{
    REMOVE_BODY(CALL(rmdir, -1, path), AT_FDCWD, path, K_RMDIR);
}

EXPORT int unlinkat(int dirfd, const char *path, int flags)
{
    REMOVE_BODY(CALL(unlinkat, -1, dirfd, path, flags), dirfd, path,
                (flags & AT_REMOVEDIR) ? K_RMDIR : K_UNLINK);
}

static void after_mkdir(int ret, int err, int dirfd, const char *path, mode_t mode)
{
    char p[PBUF];
    if (abs_path(dirfd, path, p, sizeof p) < 0 || !under_root(p))
        return;
    struct rec r;
    rec_init(&r, K_MKDIR, ret, err, -1);
    r.b = mode;
    struct stat st;
    if (ret == 0 && lstat_at(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0)
        fill_file(&r, &st);
    emit_simple(&r, p, NULL);
}

EXPORT int mkdir(const char *path, mode_t mode)
{
    int ret = CALL(mkdir, -1, path, mode);
    if (!active())
        return ret;
    BEGIN_REC(err);
    after_mkdir(ret, err, AT_FDCWD, path, mode);
    END_REC(err);
    return ret;
}

EXPORT int mkdirat(int dirfd, const char *path, mode_t mode)
{
    int ret = CALL(mkdirat, -1, dirfd, path, mode);
    if (!active())
        return ret;
    BEGIN_REC(err);
    after_mkdir(ret, err, dirfd, path, mode);
    END_REC(err);
    return ret;
}

struct two_paths {
    char p1[PBUF], p2[PBUF];
    int rec;
    struct stat st1, st2;
    int have1, have2;
};

/* rename: both inodes just before the call. */
static void rename_pre(struct two_paths *t, int od, const char *op, int nd,
                       const char *np)
{
    int ok1 = abs_path(od, op, t->p1, sizeof t->p1) == 0;
    int ok2 = abs_path(nd, np, t->p2, sizeof t->p2) == 0;
    if (!ok1)
        t->p1[0] = '\0';
    if (!ok2)
        t->p2[0] = '\0';
    t->rec = (ok1 && under_root(t->p1)) || (ok2 && under_root(t->p2));
    t->have1 = t->have2 = 0;
    if (t->rec) {
        t->have1 = lstat_at(od, op, &t->st1, AT_SYMLINK_NOFOLLOW) == 0;
        t->have2 = lstat_at(nd, np, &t->st2, AT_SYMLINK_NOFOLLOW) == 0;
    }
}

static void rename_post(struct two_paths *t, int ret, int err, unsigned flags)
{
    if (!t->rec)
        return;
    struct rec r;
    rec_init(&r, K_RENAME, ret, err, -1);
    if (t->have1)
        fill_file(&r, &t->st1);
    if (t->have2)
        r.ino2 = t->st2.st_ino;
    r.a = flags;
    emit_simple(&r, t->p1, t->p2);
}

#define RENAME_BODY(call, od, op, nd, np, flags)                         \
    do {                                                                 \
        if (!active())                                                   \
            return call;                                                 \
        struct two_paths *t_ = malloc(sizeof *t_);                       \
        if (!t_)                                                         \
            return call;                                                 \
        BEGIN_REC(e0_);                                                  \
        rename_pre(t_, od, op, nd, np);                                  \
        END_REC(e0_);                                                    \
        int ret_ = call;                                                 \
        BEGIN_REC(e_);                                                   \
        rename_post(t_, ret_, e_, flags);                                \
        free(t_);                                                        \
        END_REC(e_);                                                     \
        return ret_;                                                     \
    } while (0)

EXPORT int rename(const char *op, const char *np)
{
    RENAME_BODY(CALL(rename, -1, op, np), AT_FDCWD, op, AT_FDCWD, np, 0);
}

EXPORT int renameat(int od, const char *op, int nd, const char *np)
{
    RENAME_BODY(CALL(renameat, -1, od, op, nd, np), od, op, nd, np, 0);
}

EXPORT int renameat2(int od, const char *op, int nd, const char *np, unsigned flags)
{
    RENAME_BODY(CALL(renameat2, -1, od, op, nd, np, flags), od, op, nd, np, flags);
}

static void link_post(int ret, int err, int od, const char *op, int nd,
                      const char *np, int flags)
{
    struct two_paths *t = malloc(sizeof *t);
    if (!t)
        return;
    int empty = (flags & AT_EMPTY_PATH) && op && op[0] == '\0';
    int rec = 0;
    struct fdent e;
    struct stat st;
    if (empty) {
        t->p1[0] = '\0';
        rec = classify(od, &e, &st) == FD_RECORDED;
    } else if (abs_path(od, op, t->p1, sizeof t->p1) == 0) {
        rec = under_root(t->p1);
    } else {
        t->p1[0] = '\0';
    }
    if (abs_path(nd, np, t->p2, sizeof t->p2) == 0)
        rec |= under_root(t->p2);
    else
        t->p2[0] = '\0';
    if (rec) {
        struct rec r;
        rec_init(&r, K_LINK, ret, err, empty ? od : -1);
        r.a = (uint64_t)(unsigned)flags;
        if (ret == 0 && lstat_at(nd, np, &st, AT_SYMLINK_NOFOLLOW) == 0)
            fill_file(&r, &st);
        else if (empty && fstat(od, &st) == 0)
            fill_file(&r, &st);
        else if (!empty && lstat_at(od, op, &st,
                                    (flags & AT_SYMLINK_FOLLOW) ? 0
                                                                : AT_SYMLINK_NOFOLLOW) == 0)
            fill_file(&r, &st);
        emit_simple(&r, t->p1, t->p2);
    }
    free(t);
}

EXPORT int link(const char *op, const char *np)
{
    int ret = CALL(link, -1, op, np);
    if (!active())
        return ret;
    BEGIN_REC(err);
    link_post(ret, err, AT_FDCWD, op, AT_FDCWD, np, 0);
    END_REC(err);
    return ret;
}

EXPORT int linkat(int od, const char *op, int nd, const char *np, int flags)
{
    int ret = CALL(linkat, -1, od, op, nd, np, flags);
    if (!active())
        return ret;
    BEGIN_REC(err);
    link_post(ret, err, od, op, nd, np, flags);
    END_REC(err);
    return ret;
}

/* ---- what the recorder cannot follow: LIMIT -------------------------- */

static void emit_limit(const char *name, const char *path2, int fd, int64_t ret,
                       int err, const struct stat *st)
{
    struct rec r;
    rec_init(&r, K_LIMIT, ret, err, fd);
    if (st)
        fill_file(&r, st);
    emit_simple(&r, name, path2);
}

/* LIMIT name when fd is recorded, with its path. */
static void limit_if_recorded(const char *name, int fd, int64_t ret, int err)
{
    struct fdent e;
    struct stat st;
    char p[PATH_MAX + 16];
    if (classify(fd, &e, &st) != FD_RECORDED)
        return;
    if (fd_path(fd, p, sizeof p) < 0)
        p[0] = '\0';
    emit_limit(name, p, fd, ret, err, &st);
}

static void *mmap_common(void *ret, int err, size_t len, int prot, int flags, int fd)
{
    int type = flags & MAP_TYPE;
    if (ret == MAP_FAILED || !(prot & PROT_WRITE) ||
        (type != MAP_SHARED && type != MAP_SHARED_VALIDATE) || (flags & MAP_ANONYMOUS))
        return ret;
    struct fdent e;
    struct stat st;
    if (classify(fd, &e, &st) != FD_RECORDED)
        return ret;
    char p[PATH_MAX + 16];
    if (fd_path(fd, p, sizeof p) < 0)
        p[0] = '\0';
    emit_limit("mmap-shared-writable", p, fd, 0, err, &st);
    pthread_mutex_lock(&g_mu);
    for (int i = 0; i < NMAPS; i++)
        if (g_maps[i].len == 0) {
            g_maps[i].start = (uintptr_t)ret;
            g_maps[i].len = len;
            g_maps[i].ino = st.st_ino;
            g_maps[i].dev = st.st_dev;
            break;
        }
    pthread_mutex_unlock(&g_mu);
    return ret;
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    void *ret = CALL(mmap, MAP_FAILED, addr, len, prot, flags, fd, off);
    if (!active())
        return ret;
    BEGIN_REC(err);
    mmap_common(ret, err, len, prot, flags, fd);
    END_REC(err);
    return ret;
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
    void *ret = CALL(mmap64, MAP_FAILED, addr, len, prot, flags, fd, off);
    if (!active())
        return ret;
    BEGIN_REC(err);
    mmap_common(ret, err, len, prot, flags, fd);
    END_REC(err);
    return ret;
}

static int map_overlaps(uintptr_t a, size_t len, struct stat *st, int drop)
{
    int hit = 0;
    pthread_mutex_lock(&g_mu);
    for (int i = 0; i < NMAPS; i++) {
        if (g_maps[i].len == 0 || a >= g_maps[i].start + g_maps[i].len ||
            a + len <= g_maps[i].start)
            continue;
        if (!hit && st) {
            memset(st, 0, sizeof *st);
            st->st_ino = g_maps[i].ino;
            st->st_dev = g_maps[i].dev;
        }
        hit = 1;
        if (drop && a <= g_maps[i].start &&
            a + len >= g_maps[i].start + g_maps[i].len)
            g_maps[i].len = 0;
    }
    pthread_mutex_unlock(&g_mu);
    return hit;
}

EXPORT int msync(void *addr, size_t len, int flags)
{
    int ret = CALL(msync, -1, addr, len, flags);
    if (!active())
        return ret;
    BEGIN_REC(err);
    struct stat st;
    if (map_overlaps((uintptr_t)addr, len, &st, 0))
        emit_limit("msync", NULL, -1, ret, err, &st);
    END_REC(err);
    return ret;
}

EXPORT int munmap(void *addr, size_t len)
{
    int ret = CALL(munmap, -1, addr, len);
    if (!active() || ret != 0)
        return ret;
    BEGIN_REC(err);
    map_overlaps((uintptr_t)addr, len, NULL, 1);
    END_REC(err);
    return ret;
}

static int writing_mode(const char *mode)
{
    return mode && (strchr(mode, 'w') || strchr(mode, 'a') || strchr(mode, '+'));
}

/* ---- read-back: bytes the kernel wrote that the preload never held ---- */

/* Reads n bytes of fd's file at off into a new buffer, through fd or, when
 * fd cannot be read (write-only), a read-only descriptor of its own on
 * /proc/self/fd/N. NULL unless all n bytes were read. */
static char *read_back(int fd, uint64_t off, size_t n)
{
    ssize_t (*rp)(int, void *, size_t, off_t) = REAL(pread);
    int (*ro)(int, const char *, int, ...) = REAL(openat);
    int (*rc)(int) = REAL(close);
    char *buf = malloc(n ? n : 1);
    if (!buf || !rp)
        goto fail;
    int rfd = fd, own = -1;
    for (int pass = 0; pass < 2; pass++) {
        size_t got = 0;
        while (got < n) {
            ssize_t k = rp(rfd, buf + got, n - got, (off_t)(off + got));
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0)
                break;
            got += (size_t)k;
        }
        if (got == n) {
            if (own >= 0)
                rc(own);
            return buf;
        }
        if (pass == 1 || !ro || !rc)
            break;
        char link[64];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        own = ro(AT_FDCWD, link, O_RDONLY | O_CLOEXEC);
        if (own < 0)
            break;
        rfd = own;
    }
    if (own >= 0)
        rc(own);
fail:
    free(buf);
    return NULL;
}

/* ---- copy_file_range, sendfile, splice ------------------------------- */

/* After a copy into outfd: n > 0 bytes went to the file at *off_given
 * (the value before the call) or at the descriptor's position. They are
 * read back and recorded as the WRITE a pwrite of them gives; when they
 * cannot be read, LIMIT copy-range as before. Nothing for n <= 0. */
static void after_copy(int outfd, int has_off, int64_t off_before, ssize_t n, int err)
{
    struct fdent e;
    struct stat st;
    if (n <= 0 || classify(outfd, &e, &st) != FD_RECORDED)
        return;
    uint64_t at;
    if (has_off) {
        at = (uint64_t)off_before;
    } else if (e.flags & O_APPEND) {
        at = (uint64_t)st.st_size - (uint64_t)n;
    } else {
        off_t pos = lseek(outfd, 0, SEEK_CUR);
        if (pos < (off_t)n) {
            limit_if_recorded("copy-range", outfd, n, err);
            return;
        }
        at = (uint64_t)pos - (uint64_t)n;
    }
    char *buf = read_back(outfd, at, (size_t)n);
    if (!buf) {
        limit_if_recorded("copy-range", outfd, n, err);
        return;
    }
    struct rec r;
    rec_init(&r, K_WRITE, n, err, outfd);
    fill_file(&r, &st);
    r.a = at;
    r.b = (uint64_t)n;
    r.d = (uint64_t)(unsigned)e.flags;
    struct iovec v = {buf, (size_t)n};
    emit(&r, NULL, NULL, &v, 1, (size_t)n);
    free(buf);
}

#define COPY_BODY(call, outfd, outoff)                                   \
    do {                                                                 \
        if (!active())                                                   \
            return call;                                                 \
        int has_ = (outoff) != NULL;                                     \
        int64_t before_ = has_ ? (int64_t) * (outoff) : 0;               \
        ssize_t ret_ = call;                                             \
        BEGIN_REC(e_);                                                   \
        after_copy(outfd, has_, before_, ret_, e_);                      \
        END_REC(e_);                                                     \
        return ret_;                                                     \
    } while (0)

EXPORT ssize_t copy_file_range(int in, off64_t *in_off, int out, off64_t *out_off,
                               size_t len, unsigned flags)
{
    COPY_BODY(CALL(copy_file_range, -1, in, in_off, out, out_off, len, flags), out,
              out_off);
}

/* sendfile's offset is the input's: the output is written at its position. */
EXPORT ssize_t sendfile(int out, int in, off_t *off, size_t n)
{
    COPY_BODY(CALL(sendfile, -1, out, in, off, n), out, (off_t *)NULL);
}

EXPORT ssize_t sendfile64(int out, int in, off64_t *off, size_t n)
{
    COPY_BODY(CALL(sendfile64, -1, out, in, off, n), out, (off64_t *)NULL);
}

EXPORT ssize_t splice(int in, loff_t *in_off, int out, loff_t *out_off, size_t len,
                      unsigned flags)
{
    COPY_BODY(CALL(splice, -1, in, in_off, out, out_off, len, flags), out, out_off);
}

/* ---- stdio streams --------------------------------------------------- */

/* glibc's stdio opens, writes and closes through internal calls no preload
 * sees. A stream opened for writing on a recorded file is remembered here;
 * its open gets the OPEN record the open(2) glibc makes would give, and at
 * each fflush/fclose (and at exit) the file's whole contents are recorded
 * as one WRITE at offset 0: a stream's bytes reach the kernel when it is
 * flushed. fclose then gives the CLOSE. */
#define NSTREAMS 256
static struct { FILE *f; int fd; uint64_t dev, ino; } g_streams[NSTREAMS];
static pthread_mutex_t g_stream_mu = PTHREAD_MUTEX_INITIALIZER;

static void stream_remember(FILE *f, int fd, const struct stat *st)
{
    pthread_mutex_lock(&g_stream_mu);
    int slot = -1;
    for (int i = 0; i < NSTREAMS; i++) {
        if (g_streams[i].f == f) {
            slot = i;
            break;
        }
        if (slot < 0 && !g_streams[i].f)
            slot = i;
    }
    if (slot >= 0) {
        g_streams[slot].f = f;
        g_streams[slot].fd = fd;
        g_streams[slot].dev = st->st_dev;
        g_streams[slot].ino = st->st_ino;
    }
    pthread_mutex_unlock(&g_stream_mu);
    if (slot < 0)
        report("remembering a stdio stream (more than 256 open)", ENFILE);
}

/* Whether f is remembered (its fd in *fd); drop forgets it. */
static int stream_find(FILE *f, int *fd, int drop)
{
    int hit = 0;
    pthread_mutex_lock(&g_stream_mu);
    for (int i = 0; i < NSTREAMS; i++)
        if (f && g_streams[i].f == f) {
            *fd = g_streams[i].fd;
            if (drop)
                g_streams[i].f = NULL;
            hit = 1;
            break;
        }
    pthread_mutex_unlock(&g_stream_mu);
    return hit;
}

/* The WRITE of fd's whole file at offset 0; LIMIT stdio-stream when it
 * cannot be read. */
static void stream_record(int fd)
{
    struct fdent e;
    struct stat st;
    if (classify(fd, &e, &st) != FD_RECORDED || !S_ISREG(st.st_mode))
        return;
    size_t n = (size_t)st.st_size;
    if (n == 0)
        return;
    char *buf = read_back(fd, 0, n);
    if (!buf) {
        limit_if_recorded("stdio-stream", fd, -1, EIO);
        return;
    }
    struct rec r;
    rec_init(&r, K_WRITE, (int64_t)n, 0, fd);
    fill_file(&r, &st);
    r.a = 0;
    r.b = n;
    /* At offset 0 whatever the stream's mode: not an append. */
    r.d = (uint64_t)(unsigned)(e.flags & ~O_APPEND);
    struct iovec v = {buf, n};
    emit(&r, NULL, NULL, &v, 1, n);
    free(buf);
}

/* LIMIT stdio-stream: a limit on granularity, not a loss. */
static void stream_limit(int fd, const char *path, const struct stat *st)
{
    char d[PBUF + 128];
    snprintf(d, sizeof d,
             "%s: a stdio stream; its writes are recorded as the whole file at each "
             "fflush/fclose (and at exit), not write by write",
             path);
    emit_limit("stdio-stream", d, fd, 0, 0, st);
}

/* The open(2) flags glibc gives a stream of this mode. */
static int mode_flags(const char *mode)
{
    int fl = strchr(mode, '+') ? O_RDWR : mode[0] == 'r' ? O_RDONLY : O_WRONLY;
    if (mode[0] == 'w')
        fl |= O_CREAT | O_TRUNC;
    else if (mode[0] == 'a')
        fl |= O_CREAT | O_APPEND;
    if (strchr(mode, 'x'))
        fl |= O_EXCL;
    if (strchr(mode, 'e'))
        fl |= O_CLOEXEC;
    return fl;
}

/* Before fopen/freopen with a path: whether it is recorded (ctx). */
static int stream_open_pre(struct open_ctx *c, const char *path, const char *mode)
{
    if (!path || !writing_mode(mode))
        return 0;
    open_pre(c, AT_FDCWD, path, mode_flags(mode));
    return c->rec;
}

static void stream_open_post(struct open_ctx *c, FILE *f, int err, const char *mode)
{
    int fd = f ? fileno(f) : -1;
    open_post(c, fd, err, mode_flags(mode), 0666);
    struct stat st;
    if (f && fd >= 0 && fstat(fd, &st) == 0) {
        stream_remember(f, fd, &st);
        stream_limit(fd, c->path, &st);
    }
}

#define FOPEN_BODY(call, path, mode)                                     \
    do {                                                                 \
        if (!active())                                                   \
            return call;                                                 \
        struct open_ctx c_;                                              \
        BEGIN_REC(e0_);                                                  \
        int rec_ = stream_open_pre(&c_, path, mode);                     \
        END_REC(e0_);                                                    \
        FILE *f_ = call;                                                 \
        if (rec_) {                                                      \
            BEGIN_REC(e_);                                               \
            stream_open_post(&c_, f_, e_, mode);                         \
            END_REC(e_);                                                 \
        }                                                                \
        return f_;                                                       \
    } while (0)

EXPORT FILE *fopen(const char *path, const char *mode)
{
    FOPEN_BODY(CALL(fopen, NULL, path, mode), path, mode);
}

EXPORT FILE *fopen64(const char *path, const char *mode)
{
    FOPEN_BODY(CALL(fopen64, NULL, path, mode), path, mode);
}

/* Closes stream's file as fclose would: its contents, then CLOSE. */
static void stream_closed(int fd, int ret, int err, const struct stat *st)
{
    cache_forget(fd);
    struct rec r;
    rec_init(&r, K_CLOSE, ret, err, fd);
    fill_file(&r, st);
    emit_simple(&r, NULL, NULL);
}

/* freopen flushes and closes the old stream first. */
#define FREOPEN_BODY(call, path, mode, stream)                           \
    do {                                                                 \
        if (!active())                                                   \
            return call;                                                 \
        int old_ = -1, had_;                                             \
        struct stat ost_;                                                \
        struct open_ctx c_;                                              \
        BEGIN_REC(e0_);                                                  \
        had_ = stream_find(stream, &old_, 1);                            \
        if (had_) {                                                      \
            CALL(fflush, EOF, stream);                                   \
            stream_record(old_);                                         \
            had_ = fstat(old_, &ost_) == 0;                              \
        }                                                                \
        int rec_ = stream_open_pre(&c_, path, mode);                     \
        END_REC(e0_);                                                    \
        FILE *f_ = call;                                                 \
        BEGIN_REC(e_);                                                   \
        if (had_)                                                        \
            stream_closed(old_, 0, 0, &ost_);                            \
        if (rec_)                                                        \
            stream_open_post(&c_, f_, e_, mode);                         \
        END_REC(e_);                                                     \
        return f_;                                                       \
    } while (0)

EXPORT FILE *freopen(const char *path, const char *mode, FILE *stream)
{
    FREOPEN_BODY(CALL(freopen, NULL, path, mode, stream), path, mode, stream);
}

EXPORT FILE *freopen64(const char *path, const char *mode, FILE *stream)
{
    FREOPEN_BODY(CALL(freopen64, NULL, path, mode, stream), path, mode, stream);
}

EXPORT FILE *fdopen(int fd, const char *mode)
{
    FILE *f = CALL(fdopen, NULL, fd, mode);
    if (!active())
        return f;
    BEGIN_REC(err);
    struct fdent e;
    struct stat st;
    char p[PATH_MAX + 16];
    if (f && writing_mode(mode) && classify(fd, &e, &st) == FD_RECORDED) {
        if (fd_path(fd, p, sizeof p) < 0)
            p[0] = '\0';
        stream_limit(fd, p, &st);
        stream_remember(f, fd, &st);
    }
    END_REC(err);
    return f;
}

/* Every remembered stream: flushed (flush) and its file recorded. */
static void streams_record_all(int flush)
{
    FILE *fs[NSTREAMS];
    int fds[NSTREAMS], n = 0;
    pthread_mutex_lock(&g_stream_mu);
    for (int i = 0; i < NSTREAMS; i++)
        if (g_streams[i].f) {
            fs[n] = g_streams[i].f;
            fds[n++] = g_streams[i].fd;
        }
    pthread_mutex_unlock(&g_stream_mu);
    for (int i = 0; i < n; i++) {
        if (flush)
            CALL(fflush, EOF, fs[i]);
        stream_record(fds[i]);
    }
}

EXPORT int fflush(FILE *f)
{
    int ret = CALL(fflush, EOF, f);
    if (!active())
        return ret;
    BEGIN_REC(err);
    int fd;
    if (!f)
        streams_record_all(0);
    else if (stream_find(f, &fd, 0))
        stream_record(fd);
    END_REC(err);
    return ret;
}

EXPORT int fclose(FILE *f)
{
    int fd;
    if (!active() || !stream_find(f, &fd, 1))
        return CALL(fclose, EOF, f);
    struct stat st;
    BEGIN_REC(e0);
    CALL(fflush, EOF, f);
    stream_record(fd);
    int have = fstat(fd, &st) == 0;
    END_REC(e0);
    int ret = CALL(fclose, EOF, f);
    if (have) {
        BEGIN_REC(err);
        stream_closed(fd, ret, err, &st);
        END_REC(err);
    }
    return ret;
}

/* Registered by the constructor: runs before glibc's own flush of the
 * streams at exit, so it flushes them itself. */
static void streams_at_exit(void)
{
    if (!active())
        return;
    BEGIN_REC(err);
    streams_record_all(1);
    END_REC(err);
}

EXPORT int io_uring_setup(unsigned entries, void *params)
{
    int ret = CALL(io_uring_setup, -1, entries, params);
    if (!active())
        return ret;
    BEGIN_REC(err);
    emit_limit("io_uring", "io_uring_setup", ret >= 0 ? ret : -1, ret, err, NULL);
    END_REC(err);
    return ret;
}

EXPORT int io_uring_queue_init(unsigned entries, void *ring, unsigned flags)
{
    int (*f)(unsigned, void *, unsigned) = REAL(io_uring_queue_init);
    int ret = f ? f(entries, ring, flags) : -ENOSYS; /* liburing: -errno */
    if (!active())
        return ret;
    BEGIN_REC(err);
    emit_limit("io_uring", "io_uring_queue_init", -1, ret < 0 ? -1 : ret,
               ret < 0 ? -ret : 0, NULL);
    END_REC(err);
    return ret;
}

/* ---- syscall() ------------------------------------------------------- */

enum { SC_FD0, SC_PATH0, SC_PATH01, SC_AT01, SC_AT0123, SC_ALWAYS };

static const struct sc { long nr; const char *name; int shape; } g_sc[] = {
    {SYS_write, "write", SC_FD0},
    {SYS_pwrite64, "pwrite64", SC_FD0},
    {SYS_writev, "writev", SC_FD0},
    {SYS_pwritev, "pwritev", SC_FD0},
#ifdef SYS_pwritev2
    {SYS_pwritev2, "pwritev2", SC_FD0},
#endif
    {SYS_fsync, "fsync", SC_FD0},
    {SYS_fdatasync, "fdatasync", SC_FD0},
    {SYS_sync_file_range, "sync_file_range", SC_FD0},
    {SYS_syncfs, "syncfs", SC_FD0},
    {SYS_sync, "sync", SC_ALWAYS},
    {SYS_ftruncate, "ftruncate", SC_FD0},
    {SYS_fallocate, "fallocate", SC_FD0},
#ifdef SYS_open
    {SYS_open, "open", SC_PATH0},
#endif
#ifdef SYS_creat
    {SYS_creat, "creat", SC_PATH0},
#endif
    {SYS_openat, "openat", SC_AT01},
#ifdef SYS_openat2
    {SYS_openat2, "openat2", SC_AT01},
#endif
    {SYS_truncate, "truncate", SC_PATH0},
#ifdef SYS_unlink
    {SYS_unlink, "unlink", SC_PATH0},
#endif
#ifdef SYS_rmdir
    {SYS_rmdir, "rmdir", SC_PATH0},
#endif
    {SYS_unlinkat, "unlinkat", SC_AT01},
#ifdef SYS_rename
    {SYS_rename, "rename", SC_PATH01},
#endif
#ifdef SYS_renameat
    {SYS_renameat, "renameat", SC_AT0123},
#endif
#ifdef SYS_renameat2
    {SYS_renameat2, "renameat2", SC_AT0123},
#endif
#ifdef SYS_link
    {SYS_link, "link", SC_PATH01},
#endif
    {SYS_linkat, "linkat", SC_AT0123},
#ifdef SYS_io_uring_setup
    {SYS_io_uring_setup, "io_uring_setup", SC_ALWAYS},
#endif
};

static int path_in_root(int dirfd, long ptr)
{
    char p[PBUF];
    return abs_path(dirfd, (const char *)ptr, p, sizeof p) == 0 && under_root(p);
}

static void after_syscall(long nr, const long *a, long ret, int err)
{
    const struct sc *s = NULL;
    for (size_t i = 0; i < sizeof g_sc / sizeof g_sc[0]; i++)
        if (g_sc[i].nr == nr)
            s = &g_sc[i];
    if (!s)
        return;
    /* A path that faulted in the kernel would fault here too. */
    int paths_ok = !(ret < 0 && err == EFAULT);
    int rec = 0, fd = -1;
    struct stat st, *stp = NULL;
    struct fdent e;
    switch (s->shape) {
    case SC_ALWAYS:
        rec = 1;
        break;
    case SC_FD0:
        fd = (int)a[0];
        if (nr == SYS_syncfs)
            rec = fstat(fd, &st) == 0 && (uint64_t)st.st_dev == g_root_dev;
        else
            rec = classify(fd, &e, &st) == FD_RECORDED;
        if (rec)
            stp = &st;
        break;
    case SC_PATH0:
        rec = paths_ok && path_in_root(AT_FDCWD, a[0]);
        break;
    case SC_PATH01:
        rec = paths_ok && (path_in_root(AT_FDCWD, a[0]) || path_in_root(AT_FDCWD, a[1]));
        break;
    case SC_AT01:
        rec = paths_ok && path_in_root((int)a[0], a[1]);
        break;
    case SC_AT0123:
        rec = paths_ok && (path_in_root((int)a[0], a[1]) || path_in_root((int)a[2], a[3]));
        break;
    }
    if (!rec)
        return;
    char what[64];
    snprintf(what, sizeof what, "syscall %ld (%s)", nr, s->name);
    emit_limit(strcmp(s->name, "io_uring_setup") == 0 ? "io_uring" : "raw-syscall", what, fd,
               ret, err, stp);
}

/* syscall() cannot know how many arguments it was given: like glibc's own
 * syscall(), it takes six longs (extra ones are harmless register or stack
 * reads on the ABIs glibc supports) and passes them all on. */
EXPORT long syscall(long nr, ...)
{
    long a[6];
    va_list ap;
    va_start(ap, nr);
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    long ret = CALL(syscall, -1, nr, a[0], a[1], a[2], a[3], a[4], a[5]);
    if (!active())
        return ret;
    BEGIN_REC(err);
    after_syscall(nr, a, ret, err);
    END_REC(err);
    return ret;
}

/* ---- raw system calls: Syscall User Dispatch ------------------------- */

/* Code outside libc's text that issues the syscall instruction itself
 * (rustix, Go, inline asm) never reaches the wrappers above. With
 * PR_SET_SYSCALL_USER_DISPATCH every such call raises SIGSYS before it
 * runs; the handler hands it to the wrapper a libc caller would reach, so
 * the record is the same, or else performs it through libc's syscall().
 * The setting is per thread and, on the kernels tried (6.18), NOT inherited
 * by threads or fork children: pthread_create, fork and the raw clones are
 * where it is turned on again. */

static void sud_limit(const char *name, const char *why)
{
    if (!active())
        return;
    BEGIN_REC(err);
    emit_limit(name, why, -1, 0, 0, NULL);
    END_REC(err);
}

#if defined(__x86_64__)

#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH 59
#define PR_SYS_DISPATCH_OFF 0
#define PR_SYS_DISPATCH_ON 1
#endif
#ifndef SYSCALL_DISPATCH_FILTER_ALLOW
#define SYSCALL_DISPATCH_FILTER_ALLOW 0
#define SYSCALL_DISPATCH_FILTER_BLOCK 1
#endif
#ifndef SYS_USER_DISPATCH
#define SYS_USER_DISPATCH 2
#endif
#ifndef CLONE_VM
#define CLONE_VM 0x100
#define CLONE_VFORK 0x4000
#endif

/* One selector for every thread; it stays BLOCK while the capture is on. */
static volatile char g_sel = SYSCALL_DISPATCH_FILTER_ALLOW;
static int g_sud;
static uintptr_t g_libc_lo, g_libc_len, g_ld_lo, g_ld_hi, g_vdso_lo, g_vdso_hi;
static uintptr_t g_restorer;
static long (*g_syscall)(long, ...);
static int (*g_prctl)(int, ...);
static int (*g_sigaction)(int, const struct sigaction *, struct sigaction *);

/* The handler runs on a signal stack (SA_ONSTACK) this thread gets unless
 * it has one: the stack trapped may be a goroutine's few kilobytes, and a
 * frame the kernel put there would overflow it. Go (with cgo) and Rust's
 * std adopt a signal stack that is already there. */
#define SUD_STACK (256 * 1024)
static __thread char *t_stack __attribute__((tls_model("initial-exec")));
static pthread_key_t g_stack_key;

static void stack_free(void *p)
{
    stack_t cur, off = {.ss_flags = SS_DISABLE};
    if (sigaltstack(NULL, &cur) == 0 && cur.ss_sp == p)
        sigaltstack(&off, NULL);
    int (*um)(void *, size_t) = REAL(munmap);
    if (um)
        um(p, SUD_STACK);
}

static void sud_thread_on(void)
{
    if (!__atomic_load_n(&g_sud, __ATOMIC_ACQUIRE))
        return;
    stack_t cur;
    if (!t_stack && sigaltstack(NULL, &cur) == 0 && (cur.ss_flags & SS_DISABLE)) {
        void *(*mm)(void *, size_t, int, int, int, off_t) = REAL(mmap);
        void *m = mm ? mm(NULL, SUD_STACK, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0)
                     : MAP_FAILED;
        stack_t st = {.ss_sp = m, .ss_size = SUD_STACK};
        if (m != MAP_FAILED && sigaltstack(&st, NULL) == 0) {
            t_stack = m;
            pthread_setspecific(g_stack_key, m);
        }
    }
    g_prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, g_libc_lo, g_libc_len, &g_sel);
}

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    const char *n = info->dlpi_name ? info->dlpi_name : "";
    int libc = strstr(n, "libc.so") != NULL, ld = strstr(n, "ld-linux") != NULL,
        vdso = strstr(n, "linux-vdso") != NULL;
    if (!libc && !ld && !vdso)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (libc && !g_libc_lo) {
            g_libc_lo = lo;
            g_libc_len = hi - lo;
        } else if (ld) {
            g_ld_lo = lo;
            g_ld_hi = hi;
        } else if (vdso) {
            g_vdso_lo = lo;
            g_vdso_hi = hi;
        }
    }
    return 0;
}

/* The SIGSYS disposition the program set (SIG_DFL at first): ours stays
 * installed, and a SIGSYS that is not a trap goes to this one. */
static struct sigaction g_prog_sys;

/* No lock: the handler reads it, and may have interrupted its holder. */
static void prog_sys_set(const struct sigaction *act, struct sigaction *old)
{
    struct sigaction o = g_prog_sys;
    if (act)
        g_prog_sys = *act;
    if (old)
        *old = o;
}

#define SIGSYS_BIT (1UL << (SIGSYS - 1))

static long sc_ret(long r)
{
    return r == -1 ? -errno : r;
}

static long sc_generic(long nr, const long *a)
{
    return sc_ret(g_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]));
}

/* The child of a raw clone with a new stack returns from libc's syscall()
 * into sud_clone_child, which puts back the registers the program had at
 * its syscall instruction and jumps after it, as the kernel would have. */
struct clone_frame {
    uint64_t ret;
    uint64_t rbx, rbp, r12, r13, r14, r15, rdi, rsi, rdx, r10, r8, r9, rip, rsp, rfl;
};
extern char sud_clone_child[] __attribute__((visibility("hidden")));
__asm__(".text\n"
        ".type sud_clone_child,@function\n"
        "sud_clone_child:\n"
        "  mov %rsp, %rax\n"
        "  mov 0(%rax), %rbx\n"
        "  mov 8(%rax), %rbp\n"
        "  mov 16(%rax), %r12\n"
        "  mov 24(%rax), %r13\n"
        "  mov 32(%rax), %r14\n"
        "  mov 40(%rax), %r15\n"
        "  mov 48(%rax), %rdi\n"
        "  mov 56(%rax), %rsi\n"
        "  mov 64(%rax), %rdx\n"
        "  mov 72(%rax), %r10\n"
        "  mov 80(%rax), %r8\n"
        "  mov 88(%rax), %r9\n"
        "  mov 96(%rax), %rcx\n"
        "  mov 112(%rax), %r11\n"
        "  mov 104(%rax), %rsp\n"
        "  xor %eax, %eax\n"
        "  jmp *%rcx\n"
        ".size sud_clone_child, .-sud_clone_child\n"
        ".previous\n");

static long sud_clone(long nr, const long *a, const greg_t *g)
{
    uint64_t args[16];
    unsigned long flags;
    uintptr_t top = 0;
    size_t size = 0;
    if (nr == SYS_clone3) {
        size = (size_t)a[1];
        /* Callers fall back to clone on ENOSYS. */
        if (size < 64 || size > sizeof args)
            return -ENOSYS;
        memcpy(args, (const void *)a[0], size);
        flags = args[0];
        if (args[5])
            top = args[5] + args[6];
    } else if (nr == SYS_clone) {
        flags = (unsigned long)a[0];
        top = (uintptr_t)a[1];
    } else {
        /* vfork: as clone(CLONE_VFORK) below; fork: as it is. */
        flags = nr == SYS_vfork ? CLONE_VFORK | SIGCHLD : SIGCHLD;
    }
    long r;
    if ((flags & CLONE_VM) && top) {
        struct clone_frame *f = (struct clone_frame *)((top - sizeof *f) & ~(uintptr_t)15);
        *f = (struct clone_frame){
            (uint64_t)(uintptr_t)sud_clone_child, g[REG_RBX], g[REG_RBP], g[REG_R12],
            g[REG_R13], g[REG_R14], g[REG_R15], g[REG_RDI], g[REG_RSI], g[REG_RDX],
            g[REG_R10], g[REG_R8], g[REG_R9], g[REG_RIP], top, g[REG_EFL]};
        if (nr == SYS_clone3) {
            args[6] = (uintptr_t)f - args[5];
            r = sc_ret(g_syscall(SYS_clone3, args, size));
        } else {
            r = sc_ret(g_syscall(SYS_clone, flags, f, a[2], a[3], a[4]));
        }
        /* Only the parent gets here. The child's TLS is not necessarily
         * glibc's: the handler could not run there. */
        if (r > 0)
            sud_limit("raw-syscall-capture-off",
                      "a thread made by a raw clone: its raw system calls are not captured");
        return r;
    }
    /* Without a new stack the child of CLONE_VM would run on this very
     * frame and the parent return through what it left: a copy instead. */
    flags &= ~(unsigned long)CLONE_VM;
    if (nr == SYS_clone3) {
        args[0] = flags;
        r = sc_ret(g_syscall(SYS_clone3, args, size));
    } else if (nr == SYS_clone) {
        r = sc_ret(g_syscall(SYS_clone, flags, a[1], a[2], a[3], a[4]));
    } else {
        r = sc_ret(g_syscall(SYS_clone, flags, 0, 0, 0, 0));
    }
    if (r == 0)
        sud_thread_on();
    return r;
}

/* A recorded call goes to its wrapper: the record is a libc caller's. */
static long sud_call(long nr, const long *a, greg_t *g)
{
    int fd = (int)a[0];
    const char *p0 = (const char *)a[0], *p1 = (const char *)a[1];
    switch (nr) {
    case SYS_write: return sc_ret(write(fd, (const void *)a[1], (size_t)a[2]));
    case SYS_pwrite64:
        return sc_ret(pwrite64(fd, (const void *)a[1], (size_t)a[2], (off64_t)a[3]));
    case SYS_writev: return sc_ret(writev(fd, (const struct iovec *)a[1], (int)a[2]));
    case SYS_pwritev:
        return sc_ret(pwritev64(fd, (const struct iovec *)a[1], (int)a[2], (off64_t)a[3]));
#ifdef SYS_pwritev2
    case SYS_pwritev2:
        return sc_ret(pwritev64v2(fd, (const struct iovec *)a[1], (int)a[2],
                                  (off64_t)a[3], (int)a[5]));
#endif
    case SYS_open: return sc_ret(open(p0, (int)a[1], (mode_t)a[2]));
    case SYS_openat: return sc_ret(openat(fd, p1, (int)a[2], (mode_t)a[3]));
    case SYS_creat: return sc_ret(creat(p0, (mode_t)a[1]));
    case SYS_close: return sc_ret(close(fd));
    case SYS_fsync: return sc_ret(fsync(fd));
    case SYS_fdatasync: return sc_ret(fdatasync(fd));
    case SYS_ftruncate: return sc_ret(ftruncate64(fd, (off64_t)a[1]));
    case SYS_truncate: return sc_ret(truncate64(p0, (off64_t)a[1]));
    case SYS_fallocate:
        return sc_ret(fallocate64(fd, (int)a[1], (off64_t)a[2], (off64_t)a[3]));
    case SYS_sync_file_range:
        return sc_ret(sync_file_range(fd, (off64_t)a[1], (off64_t)a[2], (unsigned)a[3]));
    case SYS_syncfs: return sc_ret(syncfs(fd));
    case SYS_sync: sync(); return 0;
    case SYS_rename: return sc_ret(rename(p0, p1));
    case SYS_renameat:
        return sc_ret(renameat(fd, p1, (int)a[2], (const char *)a[3]));
    case SYS_renameat2:
        return sc_ret(renameat2(fd, p1, (int)a[2], (const char *)a[3], (unsigned)a[4]));
    case SYS_link: return sc_ret(link(p0, p1));
    case SYS_linkat:
        return sc_ret(linkat(fd, p1, (int)a[2], (const char *)a[3], (int)a[4]));
    case SYS_unlink: return sc_ret(unlink(p0));
    case SYS_unlinkat: return sc_ret(unlinkat(fd, p1, (int)a[2]));
    case SYS_mkdir: return sc_ret(mkdir(p0, (mode_t)a[1]));
    case SYS_mkdirat: return sc_ret(mkdirat(fd, p1, (mode_t)a[2]));
    case SYS_rmdir: return sc_ret(rmdir(p0));
    case SYS_dup: return sc_ret(dup(fd));
    case SYS_dup2: return sc_ret(dup2(fd, (int)a[1]));
    case SYS_dup3: return sc_ret(dup3(fd, (int)a[1], (int)a[2]));
    case SYS_fcntl:
        if (a[1] == F_DUPFD || a[1] == F_DUPFD_CLOEXEC || a[1] == F_SETFL)
            return sc_ret(fcntl(fd, (int)a[1], (int)a[2]));
        break;
    case SYS_close_range:
        return sc_ret(close_range((unsigned)a[0], (unsigned)a[1], (int)a[2]));
    case SYS_sendto:
        return sc_ret(sendto(fd, (const void *)a[1], (size_t)a[2], (int)a[3],
                             (const struct sockaddr *)a[4], (socklen_t)a[5]));
    case SYS_sendmsg: return sc_ret(sendmsg(fd, (const struct msghdr *)a[1], (int)a[2]));
    case SYS_mmap: {
        void *m = mmap64((void *)a[0], (size_t)a[1], (int)a[2], (int)a[3], (int)a[4],
                         (off64_t)a[5]);
        return m == MAP_FAILED ? -errno : (long)m;
    }
    case SYS_munmap: return sc_ret(munmap((void *)a[0], (size_t)a[1]));
    case SYS_msync: return sc_ret(msync((void *)a[0], (size_t)a[1], (int)a[2]));
    case SYS_copy_file_range:
        return sc_ret(copy_file_range(fd, (off64_t *)a[1], (int)a[2], (off64_t *)a[3],
                                      (size_t)a[4], (unsigned)a[5]));
    case SYS_sendfile:
        return sc_ret(sendfile64(fd, (int)a[1], (off64_t *)a[2], (size_t)a[3]));
    case SYS_splice:
        return sc_ret(splice(fd, (loff_t *)a[1], (int)a[2], (loff_t *)a[3], (size_t)a[4],
                             (unsigned)a[5]));
    case SYS_clone:
    case SYS_clone3:
    case SYS_fork:
    case SYS_vfork:
        return sud_clone(nr, a, g);
    case SYS_rt_sigaction: {
        /* The kernel's struct: handler, flags, restorer, mask. */
        const uint64_t *act = (const uint64_t *)a[1];
        if (a[0] == SIGSYS && a[3] == 8) {
            struct sigaction n, o;
            if (act) {
                memset(&n, 0, sizeof n);
                n.sa_handler = (sighandler_t)(uintptr_t)act[0];
                n.sa_flags = (int)act[1];
                memcpy(&n.sa_mask, &act[3], 8);
            }
            prog_sys_set(act ? &n : NULL, &o);
            if (a[2]) {
                uint64_t *k = (uint64_t *)a[2];
                k[0] = (uint64_t)(uintptr_t)o.sa_handler;
                k[1] = (uint64_t)(unsigned)o.sa_flags;
                k[2] = (uint64_t)(uintptr_t)o.sa_restorer;
                memcpy(&k[3], &o.sa_mask, 8);
            }
            return 0;
        }
        if (!act)
            break;
        uint64_t mine[4] = {act[0], act[1], act[2], act[3] & ~SIGSYS_BIT};
        return sc_ret(g_syscall(nr, a[0], mine, a[2], a[3]));
    }
    case SYS_rt_sigprocmask: {
        /* A blocked SIGSYS would kill the program at its next raw call. */
        const uint64_t *set = (const uint64_t *)a[1];
        if (!set || a[0] == SIG_UNBLOCK)
            break;
        uint64_t mine = *set & ~SIGSYS_BIT;
        return sc_ret(g_syscall(nr, a[0], &mine, a[2], a[3]));
    }
    }
    long r = sc_generic(nr, a);
    if (active()) {
        /* openat2, io_uring_setup: the LIMIT syscall() gives them. */
        BEGIN_REC(err);
        after_syscall(nr, a, r < 0 && r > -4096 ? -1 : r, (int)-r);
        END_REC(err);
    }
    return r;
}

/* SA_NODEFER: a raw call made by a handler of the program that interrupted
 * this one traps again, and a blocked SIGSYS would kill instead. */
static void sud_body(int sig, siginfo_t *si, void *ctx)
{
    ucontext_t *uc = ctx;
    greg_t *g = uc->uc_mcontext.gregs;
    if (si->si_code != SYS_USER_DISPATCH) {
        /* Not a trap (kill, seccomp): the program's own disposition. */
        struct sigaction h;
        prog_sys_set(NULL, &h);
        if (h.sa_handler == SIG_IGN)
            return;
        if (h.sa_handler == SIG_DFL) {
            struct sigaction dfl = {.sa_handler = SIG_DFL};
            g_sigaction(sig, &dfl, NULL);
            raise(sig);
        } else if (h.sa_flags & SA_SIGINFO) {
            h.sa_sigaction(sig, si, ctx);
        } else {
            h.sa_handler(sig);
        }
        return;
    }
    int saved = errno;
    long nr = g[REG_RAX];
    long a[6] = {g[REG_RDI], g[REG_RSI], g[REG_RDX], g[REG_R10], g[REG_R8], g[REG_R9]};
    uintptr_t ip = (uintptr_t)g[REG_RIP];
    if (nr == SYS_rt_sigreturn) {
        /* Its frame is at the program's %rsp, not ours: let libc's own
         * restorer make the call from there. */
        g[REG_RIP] = (greg_t)g_restorer;
    } else if ((ip >= g_ld_lo && ip < g_ld_hi) || (ip >= g_vdso_lo && ip < g_vdso_hi)) {
        g[REG_RAX] = sc_generic(nr, a);
    } else {
        g[REG_RAX] = sud_call(nr, a, g);
    }
    errno = saved;
}

static void sud_handler(int sig, siginfo_t *si, void *ctx)
{
    sud_body(sig, si, ctx);
}

/* Turns the capture on for this thread and every later one; the LIMIT
 * raw-syscalls-not-captured when it cannot. */
static void sud_start(void)
{
    const char *off = getenv("FSPACE_CRASHTEST_NO_DISPATCH");
    if (off && *off && strcmp(off, "0") != 0) {
        sud_limit("raw-syscalls-not-captured", "turned off by FSPACE_CRASHTEST_NO_DISPATCH");
        return;
    }
    g_syscall = REAL(syscall);
    g_prctl = REAL(prctl);
    g_sigaction = REAL(sigaction);
    dl_iterate_phdr(phdr_cb, NULL);
    const char *why = NULL;
    struct sigaction sa = {.sa_sigaction = sud_handler,
                           .sa_flags = SA_SIGINFO | SA_NODEFER | SA_RESTART | SA_ONSTACK};
    struct sigaction old, now;
    if (!g_syscall || !g_prctl || !g_sigaction) {
        why = "libc's syscall, prctl or sigaction not found";
    } else if (!g_libc_lo) {
        why = "libc's text segment not found";
    } else if (g_sigaction(SIGSYS, NULL, &old) < 0 ||
               pthread_key_create(&g_stack_key, stack_free) != 0) {
        why = "reading SIGSYS's disposition failed";
    } else if (g_sigaction(SIGSYS, &sa, NULL) < 0 || g_sigaction(SIGSYS, NULL, &now) < 0 ||
               !now.sa_restorer) {
        why = "installing the SIGSYS handler failed";
    } else {
        g_restorer = (uintptr_t)now.sa_restorer;
        g_prog_sys = old;
        sigset_t s;
        sigemptyset(&s);
        sigaddset(&s, SIGSYS);
        pthread_sigmask(SIG_UNBLOCK, &s, NULL);
        g_sel = SYSCALL_DISPATCH_FILTER_BLOCK;
        if (g_prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, g_libc_lo, g_libc_len,
                    &g_sel) == 0) {
            __atomic_store_n(&g_sud, 1, __ATOMIC_RELEASE);
            sud_thread_on();
            return;
        }
        int e = errno;
        g_sel = SYSCALL_DISPATCH_FILTER_ALLOW;
        g_sigaction(SIGSYS, &old, NULL);
        why = e == EINVAL ? "prctl(PR_SET_SYSCALL_USER_DISPATCH): EINVAL (kernel before 5.11?)"
                          : "prctl(PR_SET_SYSCALL_USER_DISPATCH) failed";
    }
    sud_limit("raw-syscalls-not-captured", why);
}

/* A thread made by pthread_create starts without the capture. */
struct sud_start_arg {
    void *(*fn)(void *);
    void *arg;
};

static void *sud_thread_start(void *p)
{
    struct sud_start_arg s = *(struct sud_start_arg *)p;
    free(p);
    sud_thread_on();
    return s.fn(s.arg);
}

EXPORT int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *),
                          void *arg)
{
    int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *) =
        REAL(pthread_create);
    if (!real)
        return ENOSYS;
    struct sud_start_arg *s;
    if (!__atomic_load_n(&g_sud, __ATOMIC_ACQUIRE) || !(s = malloc(sizeof *s)))
        return real(t, attr, fn, arg);
    s->fn = fn;
    s->arg = arg;
    int rc = real(t, attr, sud_thread_start, s);
    if (rc)
        free(s);
    return rc;
}

static void strip_sigsys(sigset_t *dst, const sigset_t *src)
{
    *dst = *src;
    sigdelset(dst, SIGSYS);
}

EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    int (*real)(int, const struct sigaction *, struct sigaction *) = REAL(sigaction);
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    if (sig == SIGSYS && __atomic_load_n(&g_sud, __ATOMIC_ACQUIRE)) {
        prog_sys_set(act, old);
        return 0;
    }
    if (!act || !__atomic_load_n(&g_sud, __ATOMIC_ACQUIRE))
        return real(sig, act, old);
    struct sigaction mine = *act;
    strip_sigsys(&mine.sa_mask, &act->sa_mask);
    return real(sig, &mine, old);
}

EXPORT sighandler_t signal(int sig, sighandler_t h)
{
    sighandler_t (*real)(int, sighandler_t) = REAL(signal);
    if (sig == SIGSYS && __atomic_load_n(&g_sud, __ATOMIC_ACQUIRE)) {
        struct sigaction n = {.sa_handler = h, .sa_flags = SA_RESTART}, o;
        prog_sys_set(&n, &o);
        return o.sa_handler;
    }
    if (!real) {
        errno = ENOSYS;
        return SIG_ERR;
    }
    return real(sig, h);
}

#define MASK_BODY(name)                                                  \
    __typeof__(&name) real_ = REAL(name);                                \
    if (!real_)                                                          \
        return ENOSYS;                                                   \
    if (!set || how == SIG_UNBLOCK || !__atomic_load_n(&g_sud, __ATOMIC_ACQUIRE)) \
        return real_(how, set, old);                                     \
    sigset_t mine_;                                                      \
    strip_sigsys(&mine_, set);                                           \
    return real_(how, &mine_, old)

EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
    MASK_BODY(sigprocmask);
}

EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
    MASK_BODY(pthread_sigmask);
}

#else /* not x86_64 */

static void sud_thread_on(void)
{
}

static void sud_start(void)
{
    sud_limit("raw-syscalls-not-captured", "Syscall User Dispatch is used on x86_64 only");
}

#endif

/* ---- the constructor: START and INHERITED ---------------------------- */

static void scan_inherited(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d) {
        report("reading /proc/self/fd", errno);
        return;
    }
    int self = dirfd(d);
    int lfd = __atomic_load_n(&g_logfd, __ATOMIC_ACQUIRE);
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] < '0' || de->d_name[0] > '9')
            continue;
        int fd = atoi(de->d_name);
        if (fd == self || fd == lfd)
            continue;
        struct stat st;
        char p[PATH_MAX + 16];
        if (fstat(fd, &st) < 0 || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) ||
            fd_path(fd, p, sizeof p) < 0 || !under_root(p))
            continue;
        struct fdent e = {.dev = st.st_dev, .ino = st.st_ino,
                          .flags = get_fl(fd), .state = FD_RECORDED};
        cache_put(fd, &e);
        struct rec r;
        rec_init(&r, K_INHERITED, 0, 0, fd);
        fill_file(&r, &st);
        r.d = (uint64_t)(unsigned)e.flags;
        emit_simple(&r, p, NULL);
    }
    closedir(d);
}

__attribute__((constructor)) static void record_start(void)
{
    if (!active())
        return;
    BEGIN_REC(err);
    if (log_fd() >= 0) {
        struct rec r;
        rec_init(&r, K_START, 0, 0, -1);
        r.a = (uint64_t)getppid();
        char exe[PATH_MAX + 16];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = '\0';
        emit_simple(&r, exe, NULL);
        scan_inherited();
    }
    END_REC(err);
    atexit(streams_at_exit);
    sud_start();
}
