#!/usr/bin/env python3
"""Smoke test of libfspace-record.so against a Python and two C programs.

Usage: smoke.py PATH/TO/libfspace-record.so
Builds nothing but its small C programs (with gcc); exits non-zero on the
first failed assertion.
"""
import errno
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import decode  # noqa: E402

PY_PROG = r'''
import mmap, os, sys
root, outside = sys.argv[1], sys.argv[2]
f = os.path.join(root, "f")
fd = os.open(f, os.O_CREAT | os.O_RDWR, 0o644)
print("ino f", os.fstat(fd).st_ino, file=sys.stderr)
os.write(fd, b"hello")
os.pwrite(fd, b"XY", 100)
os.fsync(fd)
os.fdatasync(fd)
os.ftruncate(fd, 50)
os.posix_fallocate(fd, 0, 4096)
os.rename(f, os.path.join(root, "g"))
os.link(os.path.join(root, "g"), os.path.join(root, "h"))
os.unlink(os.path.join(root, "h"))
os.mkdir(os.path.join(root, "d"), 0o750)
print("ino d", os.stat(os.path.join(root, "d")).st_ino, file=sys.stderr)
os.rmdir(os.path.join(root, "d"))
dfd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
os.fsync(dfd)
os.close(dfd)
print("ack 1", flush=True)
r, w = os.pipe()
os.write(w, b"piped")
os.close(w); os.close(r)
m = mmap.mmap(fd, 4096, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ | mmap.PROT_WRITE)
m[0:1] = b"M"
m.close()
os.close(fd)
o = os.open(os.path.join(outside, "o"), os.O_CREAT | os.O_WRONLY, 0o644)
os.write(o, b"outside")
os.fsync(o)
os.close(o)
os.rename(os.path.join(outside, "o"), os.path.join(outside, "o2"))
pid = os.fork()
if pid == 0:
    c = os.open(os.path.join(root, "child"), os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
    os.write(c, b"from child")
    os.close(c)
    os._exit(0)
_, st = os.waitpid(pid, 0)
assert st == 0
print("child", pid, file=sys.stderr)
inh = os.open(os.path.join(root, "inh"), os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o644)
os.set_inheritable(inh, True)
pid = os.fork()
if pid == 0:
    os.execv(sys.executable, [sys.executable, "-c",
             "import os, sys; os.write(int(sys.argv[1]), b'inherited')", str(inh)])
_, st = os.waitpid(pid, 0)
assert st == 0
print("exec", pid, file=sys.stderr)
'''

C_PROG = r'''
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#define CHECK(x) do { if (!(x)) { fprintf(stderr, "FAILED %s line %d errno %d\n", #x, __LINE__, errno); exit(1); } } while (0)
int main(int argc, char **argv) {
    (void)argc;
    int dir = open(argv[1], O_RDONLY | O_DIRECTORY);
    CHECK(dir >= 0);
    errno = 0;
    CHECK(openat(dir, "missing", O_RDONLY) == -1 && errno == ENOENT);
    int fd = openat(dir, "c1", O_CREAT | O_WRONLY | O_EXCL, 0640);
    CHECK(fd >= 3);
    errno = 4321;
    CHECK(write(fd, "abc", 3) == 3);
    CHECK(errno == 4321);  /* the preload gives errno back untouched */
    struct iovec v[2] = {{"hello ", 6}, {"world", 5}};
    CHECK(pwritev2(fd, v, 2, 4096, RWF_DSYNC) == 11);
    CHECK(renameat2(dir, "c1", dir, "c2", RENAME_NOREPLACE) == 0);
    CHECK(sync_file_range(fd, 0, 8192, SYNC_FILE_RANGE_WRITE) == 0);
    CHECK(syncfs(fd) == 0);
    sync();
    CHECK(dup2(fd, 10) == 10);
    CHECK(write(10, "dup", 3) == 3);
    CHECK(syscall(SYS_write, fd, "raw", 3) == 3);
    /* Over the recorder's own descriptor: it must reopen its file. */
    CHECK(dup2(fd, 900) == 900);
    CHECK(write(900, "900", 3) == 3);
    /* IOV_MAX pieces: more than one writev of the record can carry. */
    static char bytes[IOV_MAX];
    static struct iovec many[IOV_MAX];
    for (int i = 0; i < IOV_MAX; i++) {
        bytes[i] = 'A' + i % 26;
        many[i] = (struct iovec){&bytes[i], 1};
    }
    CHECK(writev(fd, many, IOV_MAX) == IOV_MAX);
    CHECK(writev(fd, many, 100) == 100);
    errno = 0;
    CHECK(unlinkat(dir, "nothere", 0) == -1 && errno == ENOENT);
    CHECK(close(10) == 0 && close(900) == 0 && close(fd) == 0);
    printf("c done\n");
    return 0;
}
'''

# The same operations made with inline syscall instructions (argv[3] "raw":
# what rustix or Go do, caught by Syscall User Dispatch) or through libc.
RAW_PROG = r'''
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#define CHECK(x) do { if (!(x)) { fprintf(stderr, "FAILED %s line %d errno %d\n", #x, __LINE__, errno); exit(1); } } while (0)
static long rs(long nr, long a, long b, long c, long d, long e) {
    long r;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    __asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
                     : "rcx", "r11", "memory");
    return r;
}
static int raw;
static long do_openat(const char *p, int fl, int mode) {
    return raw ? rs(SYS_openat, AT_FDCWD, (long)p, fl, mode, 0) : openat(AT_FDCWD, p, fl, mode);
}
static long do_write(int fd, const char *s) {
    return raw ? rs(SYS_write, fd, (long)s, strlen(s), 0, 0) : write(fd, s, strlen(s));
}
static int fd;
static void *thread(void *a) {
    (void)a;
    CHECK(do_write(fd, "thread") == 6);
    return NULL;
}
int main(int argc, char **argv) {
    CHECK(argc == 4);
    raw = strcmp(argv[3], "raw") == 0;
    char r1[4096], r2[4096], out[4096];
    snprintf(r1, sizeof r1, "%s/r1", argv[1]);
    snprintf(r2, sizeof r2, "%s/r2", argv[1]);
    snprintf(out, sizeof out, "%s/o", argv[2]);
    errno = 4321;
    fd = do_openat(r1, O_CREAT | O_WRONLY | O_EXCL, 0640);
    CHECK(fd >= 3);
    CHECK(do_write(fd, "raw1") == 4);
    CHECK((raw ? rs(SYS_pwrite64, fd, (long)"PW", 2, 100, 0) : pwrite64(fd, "PW", 2, 100)) == 2);
    CHECK((raw ? rs(SYS_fdatasync, fd, 0, 0, 0, 0) : fdatasync(fd)) == 0);
    CHECK((raw ? rs(SYS_renameat2, AT_FDCWD, (long)r1, AT_FDCWD, (long)r2, RENAME_NOREPLACE)
               : renameat2(AT_FDCWD, r1, AT_FDCWD, r2, RENAME_NOREPLACE)) == 0);
    CHECK(do_write(1, "out\n") == 4);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, thread, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    /* A failure comes back as -errno in rax, as from the kernel. */
    CHECK((raw ? rs(SYS_openat, AT_FDCWD, (long)r1, O_RDONLY, 0, 0) == -ENOENT
               : openat(AT_FDCWD, r1, O_RDONLY) == -1));
    int o = do_openat(out, O_CREAT | O_WRONLY, 0644);
    CHECK(o >= 0);
    CHECK(do_write(o, "outside") == 7);
    CHECK((raw ? rs(SYS_close, o, 0, 0, 0, 0) : close(o)) == 0);
    CHECK((raw ? rs(SYS_close, fd, 0, 0, 0, 0) : close(fd)) == 0);
    if (raw)
        CHECK(errno == 4321);  /* a raw call leaves errno alone */
    return 0;
}
'''

# What raw callers do besides file calls: a signal restorer outside libc,
# every signal blocked, a thread made by a raw clone, raw fork and vfork, a
# SIGSYS handler of its own.
HARD_PROG = r'''
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#define CHECK(x) do { if (!(x)) { fprintf(stderr, "FAILED %s line %d errno %d\n", #x, __LINE__, errno); exit(1); } } while (0)
static long rs(long nr, long a, long b, long c, long d, long e) {
    long r;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    __asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
                     : "rcx", "r11", "memory");
    return r;
}
/* A restorer of our own, outside libc, as Go has. */
void my_restorer(void);
__asm__(".text\nmy_restorer:\n mov $15, %eax\n syscall\n hlt\n");
static volatile int got;
static void on_usr1(int s) { (void)s; got++; }
static volatile int got_sys;
static void on_sys(int s) { (void)s; got_sys++; }
struct ksa { void *h; unsigned long flags; void *restorer; unsigned long mask; };
static int fd;
static volatile int child_done;
/* Child of the raw clone: on its own stack, no libc. */
static void child_fn(void) {
    rs(SYS_write, fd, (long)"clone", 5, 0, 0);
    child_done = 1;
    rs(SYS_exit, 0, 0, 0, 0, 0);
}
static long raw_clone(unsigned long flags, void *stack_top) {
    long r;
    register long r10 __asm__("r10") = 0;
    register long r8 __asm__("r8") = 0;
    __asm__ volatile("syscall\n"
                     "test %%rax, %%rax\n"
                     "jnz 1f\n"
                     "call *%%rbx\n"
                     "hlt\n"
                     "1:\n"
                     : "=a"(r)
                     : "a"(SYS_clone), "D"(flags), "S"(stack_top), "d"(0), "r"(r10), "r"(r8),
                       "b"(child_fn)
                     : "rcx", "r11", "memory");
    return r;
}
int main(int argc, char **argv) {
    CHECK(argc == 2);
    char p[4096];
    snprintf(p, sizeof p, "%s/h", argv[1]);
    fd = rs(SYS_openat, AT_FDCWD, (long)p, O_CREAT | O_WRONLY | O_APPEND, 0644, 0);
    CHECK(fd >= 0);
    /* 1. Own restorer: its rt_sigreturn is a raw call; a full sa_mask. */
    struct ksa sa = {(void *)on_usr1, 0x04000000 /* SA_RESTORER */, (void *)my_restorer, ~0UL};
    CHECK(rs(SYS_rt_sigaction, SIGUSR1, (long)&sa, 0, 8, 0) == 0);
    CHECK(rs(SYS_kill, rs(SYS_getpid, 0, 0, 0, 0, 0), SIGUSR1, 0, 0, 0) == 0);
    CHECK(got == 1);
    CHECK(rs(SYS_write, fd, (long)"after-signal", 12, 0, 0) == 12);
    /* 2. Every signal blocked, SIGSYS included: must not kill. */
    unsigned long all = ~0UL, old = 0;
    CHECK(rs(SYS_rt_sigprocmask, SIG_BLOCK, (long)&all, (long)&old, 8, 0) == 0);
    CHECK(rs(SYS_write, fd, (long)"blocked", 7, 0, 0) == 7);
    CHECK(rs(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, 8, 0) == 0);
    /* 3. A thread made by a raw clone on its own stack. */
    size_t sz = 1 << 16;
    char *stack = malloc(sz);
    long tid = raw_clone(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
                         CLONE_SYSVSEM, stack + sz);
    CHECK(tid > 0);
    while (!child_done)
        usleep(1000);
    /* 4. Raw fork and vfork: the children's raw calls are captured. */
    long pid = rs(SYS_fork, 0, 0, 0, 0, 0);
    if (pid == 0) {
        rs(SYS_write, fd, (long)"forked", 6, 0, 0);
        rs(SYS_exit_group, 0, 0, 0, 0, 0);
    }
    CHECK(pid > 0);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && st == 0);
    pid = rs(SYS_vfork, 0, 0, 0, 0, 0);
    if (pid == 0)
        rs(SYS_exit_group, 3, 0, 0, 0, 0);
    CHECK(pid > 0);
    CHECK(waitpid(pid, &st, 0) == pid && WEXITSTATUS(st) == 3);
    /* 5. A SIGSYS handler of the program's own: it gets the SIGSYS that is
     * not a trap, and the raw calls after it are still captured. */
    struct sigaction ss, q;
    memset(&ss, 0, sizeof ss);
    ss.sa_handler = on_sys;
    CHECK(sigaction(SIGSYS, &ss, NULL) == 0);
    CHECK(raise(SIGSYS) == 0 && got_sys == 1);
    CHECK(sigaction(SIGSYS, NULL, &q) == 0 && q.sa_handler == on_sys);
    CHECK(rs(SYS_write, fd, (long)"end", 3, 0, 0) == 3);
    printf("hard done %ld\n", tid);
    return 0;
}
'''


def run(so, root, ops, argv, env_extra=None):
    env = dict(os.environ)
    env.update({"LD_PRELOAD": so, "FSPACE_CRASHTEST_ROOT": root,
                "FSPACE_CRASHTEST_OPS": ops})
    env.update(env_extra or {})
    p = subprocess.run(argv, env=env, capture_output=True, text=True)
    assert p.returncode == 0, (argv, p.returncode, p.stdout, p.stderr)
    assert "fspace-record" not in p.stderr, p.stderr
    return p


def one(recs, name, pred=lambda r: True, what=""):
    hits = [r for r in recs if r["name"] == name and pred(r)]
    assert len(hits) == 1, f"{name} {what}: {len(hits)} records:\n" + "\n".join(
        decode.line(r) for r in recs)
    return hits[0]


def check_python(so, tmp):
    root = os.path.realpath(os.path.join(tmp, "pyroot"))
    outside = os.path.join(tmp, "outside")
    os.mkdir(root)
    os.mkdir(outside)
    ops = os.path.join(tmp, "py-ops.bin")
    with open(ops, "wb") as f:
        f.write(b"FSPCTRW1")
    p = run(so, root, ops, [sys.executable, "-c", PY_PROG, root, outside])
    assert p.stdout == "ack 1\n", p.stdout
    info = dict(line.rsplit(" ", 1) for line in p.stderr.splitlines())
    ino_f, ino_d, child = int(info["ino f"]), int(info["ino d"]), int(info["child"])
    exec_pid = int(info["exec"])
    recs = decode.records(ops)
    me = recs[0]["pid"]
    assert recs[0]["name"] == "START" and recs[0]["a"] == os.getpid()
    assert recs[0]["path1"] == os.path.realpath(sys.executable)
    f, g, h, d = (os.path.join(root, n) for n in ("f", "g", "h", "d"))
    mine = [r for r in recs if r["pid"] == me]

    o = one(mine, "OPEN", lambda r: r["path1"] == f, "of f")
    fd = o["fd"]
    assert o["ret"] == fd >= 3 and o["c"] == 1 and o["ino"] == ino_f and o["b"] == 0o644
    assert o["a"] & os.O_CREAT and o["dev"] == os.stat(root).st_dev

    def on_f(r):
        return r["fd"] == fd and r["ino"] == ino_f

    w1 = one(mine, "WRITE", lambda r: on_f(r) and r["data"] == b"hello")
    assert (w1["a"], w1["b"], w1["ret"], w1["c"]) == (0, 5, 5, 0)
    assert not w1["d"] & os.O_APPEND and w1["d"] & os.O_ACCMODE == os.O_RDWR
    w2 = one(mine, "WRITE", lambda r: on_f(r) and r["data"] == b"XY")
    assert (w2["a"], w2["b"]) == (100, 2)
    one(mine, "FSYNC", on_f)
    one(mine, "FDATASYNC", on_f)
    t = one(mine, "TRUNCATE", on_f)
    assert t["a"] == 50
    pf = one(mine, "POSIX_FALLOCATE", on_f)
    assert (pf["ret"], pf["err"], pf["b"], pf["c"]) == (0, 0, 0, 4096) and pf["d"] != 0
    rn = one(mine, "RENAME", lambda r: r["path1"] == f)
    assert rn["path2"] == g and rn["ino"] == ino_f and rn["ino2"] == 0 and rn["ret"] == 0
    ln = one(mine, "LINK", lambda r: r["path2"] == h)
    assert ln["path1"] == g and ln["ino"] == ino_f
    ul = one(mine, "UNLINK", lambda r: r["path1"] == h)
    assert ul["ino"] == ino_f
    mk = one(mine, "MKDIR", lambda r: r["path1"] == d)
    assert mk["ino"] == ino_d and mk["b"] == 0o750
    rm = one(mine, "RMDIR", lambda r: r["path1"] == d)
    assert rm["ino"] == ino_d
    od = one(mine, "OPEN", lambda r: r["path1"] == root)
    assert od["ino"] == os.stat(root).st_ino and od["c"] == 0
    one(mine, "FSYNC", lambda r: r["fd"] == od["fd"] and r["ino"] == od["ino"])
    one(mine, "CLOSE", lambda r: r["fd"] == od["fd"] and r["ino"] == od["ino"])
    # One record per write call: an unbuffered stdout writes the newline apart.
    acks = [r for r in mine if r["name"] == "ACK" and r["a"] == 1]
    assert b"".join(r["data"] for r in acks) == b"ack 1\n", acks
    assert all(r["fd"] == 1 and r["b"] == len(r["data"]) for r in acks)
    ack = acks[0]
    pipe = one(mine, "ACK", lambda r: r["a"] == 3)
    assert pipe["data"] == b"piped"
    lim = one(mine, "LIMIT", lambda r: r["path1"] == "mmap-shared-writable")
    assert lim["ino"] == ino_f and lim["path2"] == g
    one(mine, "CLOSE", on_f)

    # Happens-before order within the process.
    order = [r["offset"] for r in (o, w1, w2, t, pf, rn, ln, ul, mk, rm, ack, lim)]
    assert order == sorted(order), order

    kids = [r for r in recs if r["pid"] == child]
    co = one(kids, "OPEN", lambda r: r["path1"] == os.path.join(root, "child"))
    assert co["c"] == 1 and co["ino"] == os.stat(os.path.join(root, "child")).st_ino
    cw = one(kids, "WRITE", lambda r: r["fd"] == co["fd"])
    assert cw["data"] == b"from child" and cw["a"] == 0

    # A process after exec: START, then the descriptor it inherited.
    ex = [r for r in recs if r["pid"] == exec_pid]
    assert ex[0]["name"] == "START" and ex[0]["a"] == me, decode.line(ex[0])
    inh_path = os.path.join(root, "inh")
    oi = one(mine, "OPEN", lambda r: r["path1"] == inh_path)
    ih = one(ex, "INHERITED")
    assert (ih["fd"], ih["ino"], ih["path1"]) == (oi["fd"], os.stat(inh_path).st_ino, inh_path)
    assert ih["d"] & os.O_APPEND and ih["offset"] < ex[-1]["offset"]
    wi = one(ex, "WRITE")
    assert wi["data"] == b"inherited" and wi["fd"] == oi["fd"] and wi["a"] == 0
    assert wi["d"] & os.O_APPEND

    # Nothing outside the root: no path, no inode of the outside file.
    ino_o = os.stat(os.path.join(outside, "o2")).st_ino
    for r in recs:
        if r["name"] in ("START", "LIMIT", "ACK", "SYNC"):
            continue
        for pth in (r["path1"], r["path2"]):
            assert pth == "" or pth == root or pth.startswith(root + "/"), decode.line(r)
        # The removed directory's inode number may be the outside file's now.
        assert r["ino"] != ino_o or (ino_o == ino_d and r["name"] in ("MKDIR", "RMDIR")), \
            decode.line(r)
        assert b"outside" not in r["data"], decode.line(r)
    return len(recs)


def check_c(so, tmp):
    root = os.path.realpath(os.path.join(tmp, "croot"))
    os.mkdir(root)
    src, exe = os.path.join(tmp, "prog.c"), os.path.join(tmp, "prog")
    with open(src, "w") as f:
        f.write(C_PROG)
    subprocess.run(["gcc", "-O1", "-Wall", "-o", exe, src], check=True)

    # Without FSPACE_CRASHTEST_OPS the preload only forwards.
    plain = os.path.join(tmp, "plain")
    os.mkdir(plain)
    env = {k: v for k, v in os.environ.items() if not k.startswith("FSPACE_CRASHTEST")}
    env["LD_PRELOAD"] = so
    p = subprocess.run([exe, plain], env=env, capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout == "c done\n" and p.stderr == "", p

    ops = os.path.join(tmp, "c-ops.bin")
    with open(ops, "wb") as f:
        f.write(b"FSPCTRW1")
    p = run(so, root, ops, [exe, root])
    assert p.stdout == "c done\n"
    recs = decode.records(ops)
    c1, c2 = os.path.join(root, "c1"), os.path.join(root, "c2")
    ino = os.stat(c2).st_ino
    miss = one(recs, "OPEN", lambda r: r["path1"] == os.path.join(root, "missing"))
    assert miss["ret"] == -1 and miss["err"] == errno.ENOENT and miss["fd"] == -1
    o = one(recs, "OPEN", lambda r: r["path1"] == c1)
    fd = o["fd"]
    assert o["c"] == 1 and o["ino"] == ino and o["b"] == 0o640
    w = one(recs, "WRITE", lambda r: r["data"] == b"abc")
    assert w["a"] == 0 and w["fd"] == fd
    pw = one(recs, "WRITE", lambda r: r["data"] == b"hello world")
    assert (pw["a"], pw["b"], pw["c"], pw["ino"]) == (4096, 11, os.RWF_DSYNC, ino)
    rn = one(recs, "RENAME", lambda r: r["path1"] == c1)
    assert rn["path2"] == c2 and rn["a"] == 1 and rn["ino"] == ino  # RENAME_NOREPLACE
    sfr = one(recs, "SYNC_FILE_RANGE")
    assert (sfr["fd"], sfr["a"], sfr["b"], sfr["c"], sfr["ino"]) == (fd, 0, 8192, 2, ino)
    sfs = one(recs, "SYNCFS")
    assert sfs["fd"] == fd and sfs["dev"] == os.stat(root).st_dev
    one(recs, "SYNC")
    dp = one(recs, "DUP", lambda r: r["fd"] == 10)
    assert dp["a"] == fd and dp["ino"] == ino
    wd = one(recs, "WRITE", lambda r: r["data"] == b"dup")
    assert wd["fd"] == 10 and wd["a"] == 3 and wd["ino"] == ino
    raw = one(recs, "LIMIT", lambda r: r["path1"] == "raw-syscall")
    assert raw["path2"].endswith("(write)") and raw["fd"] == fd and raw["ino"] == ino
    assert raw["ret"] == 3
    w9 = one(recs, "WRITE", lambda r: r["data"] == b"900")
    assert w9["fd"] == 900 and w9["ino"] == ino and w9["a"] == 9
    pattern = bytes(ord("A") + i % 26 for i in range(1024))
    wm = one(recs, "WRITE", lambda r: r["b"] == 1024)
    assert (wm["a"], wm["ret"], wm["data"]) == (12, 1024, pattern)
    w100 = one(recs, "WRITE", lambda r: r["b"] == 100)
    assert (w100["a"], w100["data"]) == (12 + 1024, pattern[:100])
    ul = one(recs, "UNLINK")
    assert ul["ret"] == -1 and ul["err"] == errno.ENOENT and ul["ino"] == 0
    closes = [r["fd"] for r in recs if r["name"] == "CLOSE"]
    assert sorted(closes) == sorted([10, 900, fd]), closes
    return len(recs)


def check_raw(so, tmp):
    src, exe = os.path.join(tmp, "raw.c"), os.path.join(tmp, "raw")
    with open(src, "w") as f:
        f.write(RAW_PROG)
    subprocess.run(["gcc", "-O1", "-Wall", "-pthread", "-o", exe, src], check=True)
    runs = {}
    for mode in ("libc", "raw", "off"):
        root = os.path.realpath(os.path.join(tmp, mode + "root"))
        outside = os.path.join(tmp, mode + "out")
        os.mkdir(root)
        os.mkdir(outside)
        ops = os.path.join(tmp, mode + "-ops.bin")
        with open(ops, "wb") as f:
            f.write(b"FSPCTRW1")
        extra = {"FSPACE_CRASHTEST_NO_DISPATCH": "1"} if mode == "off" else {}
        p = run(so, root, ops, [exe, root, outside, "libc" if mode == "libc" else "raw"], extra)
        assert p.stdout == "out\n", p.stdout
        recs = decode.records(ops)
        assert recs[0]["name"] == "START", decode.line(recs[0])
        ino = os.stat(os.path.join(root, "r2")).st_ino
        ino_out = os.stat(os.path.join(outside, "o")).st_ino

        def norm(r):
            assert r["ino"] != ino_out and b"outside" not in r["data"], decode.line(r)
            return (r["name"], r["fd"], r["ret"], r["err"],
                    "F" if r["ino"] == ino else r["ino"], r["ino2"], r["a"], r["b"], r["c"],
                    r["d"], r["path1"].replace(root, "ROOT"),
                    r["path2"].replace(root, "ROOT"), r["data"])
        runs[mode] = [norm(r) for r in recs[1:]]
        if mode == "raw":
            # The thread's write is its own thread's record.
            tw = one(recs, "WRITE", lambda r: r["data"] == b"thread")
            assert tw["tid"] != tw["pid"] and tw["a"] == 4, decode.line(tw)
    libc, raw = runs["libc"], runs["raw"]
    names = [r[0] for r in libc]
    assert names == ["OPEN", "WRITE", "WRITE", "FDATASYNC", "RENAME", "ACK", "WRITE",
                     "OPEN", "CLOSE"], names
    assert raw == libc, "\n".join(map(str, raw + ["--- libc ---"] + libc))
    # Turned off: said once, and the raw calls are not seen.
    off = runs["off"]
    assert [r[0] for r in off] == ["LIMIT"] and off[0][10] == "raw-syscalls-not-captured", off
    return len(raw)


def check_hard(so, tmp):
    src, exe = os.path.join(tmp, "hard.c"), os.path.join(tmp, "hard")
    with open(src, "w") as f:
        f.write(HARD_PROG)
    subprocess.run(["gcc", "-O1", "-Wall", "-o", exe, src], check=True)
    root = os.path.realpath(os.path.join(tmp, "hardroot"))
    os.mkdir(root)
    ops = os.path.join(tmp, "hard-ops.bin")
    with open(ops, "wb") as f:
        f.write(b"FSPCTRW1")
    p = run(so, root, ops, [exe, root])
    assert p.stdout.startswith("hard done "), p.stdout
    recs = decode.records(ops)
    me = recs[0]["pid"]
    writes = [(r["pid"] == me, r["data"]) for r in recs if r["name"] == "WRITE"]
    # The raw clone's thread is not captured: said by a LIMIT.
    assert writes == [(True, b"after-signal"), (True, b"blocked"), (False, b"forked"),
                      (True, b"end")], writes
    lim = one(recs, "LIMIT", lambda r: r["path1"] == "raw-syscall-capture-off")
    assert "raw clone" in lim["path2"], decode.line(lim)
    return len(recs)


# Writes the kernel makes for the program (copy_file_range) and stdio's
# writes, which go through glibc's internal calls: read back and recorded.
COPY_PROG = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define CHECK(x) do { if (!(x)) { fprintf(stderr, "FAILED %s line %d errno %d\n", #x, __LINE__, errno); exit(1); } } while (0)
int main(int argc, char **argv) {
    CHECK(argc == 3);
    char p[4096];
    int in = open(argv[2], O_RDONLY);
    CHECK(in >= 0);
    /* (i) copy_file_range at the position, into a write-only descriptor. */
    snprintf(p, sizeof p, "%s/cp1", argv[1]);
    int out = open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    CHECK(out >= 0);
    ssize_t n;
    while ((n = copy_file_range(in, NULL, out, NULL, 30000, 0)) > 0)
        ;
    CHECK(n == 0);
    CHECK(close(out) == 0);
    /* ... and at an explicit offset, which it advances. */
    snprintf(p, sizeof p, "%s/cp2", argv[1]);
    out = open(p, O_CREAT | O_RDWR, 0644);
    CHECK(out >= 0);
    CHECK(write(out, "HEAD", 4) == 4);
    off64_t ioff = 0, ooff = 100;
    CHECK(copy_file_range(in, &ioff, out, &ooff, 50, 0) == 50);
    CHECK(ioff == 50 && ooff == 150);
    CHECK(lseek(out, 0, SEEK_CUR) == 4);
    CHECK(close(out) == 0 && close(in) == 0);
    /* (ii) stdio: fprintf + fclose; fputs + fflush + fsync + fclose. */
    snprintf(p, sizeof p, "%s/s1", argv[1]);
    FILE *a = fopen(p, "w");
    CHECK(a);
    CHECK(fprintf(a, "hello %d\n", 42) == 9);
    CHECK(fclose(a) == 0);
    snprintf(p, sizeof p, "%s/s2", argv[1]);
    FILE *b = fopen(p, "w");
    CHECK(b);
    CHECK(fputs("synced\n", b) >= 0);
    CHECK(fflush(b) == 0);
    CHECK(fsync(fileno(b)) == 0);
    CHECK(fputs("more\n", b) >= 0);
    CHECK(fclose(b) == 0);
    /* (iii) a stream still open at exit: glibc flushes it. */
    snprintf(p, sizeof p, "%s/s3", argv[1]);
    FILE *c = fopen(p, "w");
    CHECK(c);
    CHECK(fputs("left open\n", c) >= 0);
    printf("copy done\n");
    return 0;
}
"""


def final_contents(recs):
    """Each inode's bytes as the WRITE records (and O_TRUNC opens) leave them."""
    files = {}
    for r in recs:
        if r["name"] == "OPEN" and r["ret"] >= 0 and r["a"] & os.O_TRUNC:
            files[r["ino"]] = bytearray()
        elif r["name"] == "WRITE" and r["ret"] > 0:
            f = files.setdefault(r["ino"], bytearray())
            end = r["a"] + len(r["data"])
            if len(f) < end:
                f.extend(b"\0" * (end - len(f)))
            f[r["a"]:end] = r["data"]
    return files


def check_copy_stdio(so, tmp):
    src, exe = os.path.join(tmp, "copy.c"), os.path.join(tmp, "copy")
    with open(src, "w") as f:
        f.write(COPY_PROG)
    subprocess.run(["gcc", "-O1", "-Wall", "-o", exe, src], check=True)
    root = os.path.realpath(os.path.join(tmp, "copyroot"))
    os.mkdir(root)
    data = os.urandom(100000)
    source = os.path.join(tmp, "copy-source")
    with open(source, "wb") as f:
        f.write(data)
    ops = os.path.join(tmp, "copy-ops.bin")
    with open(ops, "wb") as f:
        f.write(b"FSPCTRW1")
    p = run(so, root, ops, [exe, root, source])
    assert p.stdout == "copy done\n", p.stdout
    recs = decode.records(ops)
    dump = "\n".join(decode.line(r) for r in recs)
    assert not any(r["name"] == "LIMIT" and r["path1"] == "copy-range" for r in recs), dump

    def ino(n):
        return os.stat(os.path.join(root, n)).st_ino

    # (i) copy_file_range: the bytes at the position, 30000 at a time.
    w1 = [(r["a"], r["b"], r["ret"], len(r["data"])) for r in recs
          if r["name"] == "WRITE" and r["ino"] == ino("cp1")]
    assert w1 == [(0, 30000, 30000, 30000), (30000, 30000, 30000, 30000),
                  (60000, 30000, 30000, 30000), (90000, 10000, 10000, 10000)], w1
    assert all(r["d"] & os.O_ACCMODE == os.O_WRONLY for r in recs
               if r["name"] == "WRITE" and r["ino"] == ino("cp1"))
    w2 = [(r["a"], r["data"]) for r in recs if r["name"] == "WRITE" and r["ino"] == ino("cp2")]
    assert w2 == [(0, b"HEAD"), (100, data[:50])], w2

    # (ii) stdio: an OPEN as glibc's open(2) makes, one WRITE of the whole
    # file at each flush and close, then CLOSE.
    def stream_ops(name):
        i = ino(name)
        return [(r["name"], r["a"], r["data"]) if r["name"] == "WRITE" else (r["name"],)
                for r in recs if r["ino"] == i and r["name"] != "LIMIT"]
    o1 = one(recs, "OPEN", lambda r: r["path1"] == os.path.join(root, "s1"))
    assert o1["c"] == 1 and o1["a"] & os.O_TRUNC and o1["fd"] >= 3
    assert stream_ops("s1") == [("OPEN",), ("WRITE", 0, b"hello 42\n"), ("CLOSE",)], \
        stream_ops("s1")
    assert stream_ops("s2") == [("OPEN",), ("WRITE", 0, b"synced\n"), ("FSYNC",),
                                ("WRITE", 0, b"synced\nmore\n"), ("CLOSE",)], stream_ops("s2")
    lim = one(recs, "LIMIT", lambda r: r["path1"] == "stdio-stream" and r["ino"] == ino("s1"))
    assert "whole file at each fflush/fclose" in lim["path2"], decode.line(lim)
    # (iii) the stream left open: recorded at exit, flushed.
    assert stream_ops("s3") == [("OPEN",), ("WRITE", 0, b"left open\n")], stream_ops("s3")

    final = final_contents(recs)
    for n in ("cp1", "cp2", "s1", "s2", "s3"):
        with open(os.path.join(root, n), "rb") as f:
            real = f.read()
        assert bytes(final[ino(n)]) == real, (n, len(final[ino(n)]), len(real))
    with open(os.path.join(root, "cp1"), "rb") as f:
        assert f.read() == data
    return len(recs)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: smoke.py PATH/TO/libfspace-record.so")
    so = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        n_py = check_python(so, tmp)
        n_c = check_c(so, tmp)
        n_raw = check_raw(so, tmp)
        n_hard = check_hard(so, tmp)
        n_copy = check_copy_stdio(so, tmp)
    print(f"ok: python program {n_py} records, C program {n_c} records, "
          f"raw-syscall program {n_raw} records, hard cases {n_hard} records, "
          f"copy and stdio program {n_copy} records")


if __name__ == "__main__":
    main()
