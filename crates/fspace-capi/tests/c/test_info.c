/*
 * test_info.c: fspace_version, fspace_last_error, fspace_strategy_name and
 * fspace_fs_info_* (facts, capabilities, the auto policy, JSON).
 *
 * Usage: test_info DIR. Works in DIR/test_info.PID, removed at the end.
 * Exit: 0 all checks passed, 1 a check failed, 77 not applicable here.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <fspace.h>

/* ---- the shared check style (the same block in every test program) ---- */

static int g_failed = 0;
static const char *g_prog = "test";
static char g_section[256] = "";

/* Names the part of the program that runs, for the failure lines. */
static void section(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_section, sizeof g_section, fmt, ap);
    va_end(ap);
}

/* Prints a line when FSPACE_TEST_VERBOSE is set (not a failure). */
static inline void note(const char *fmt, ...)
{
    va_list ap;
    if (getenv("FSPACE_TEST_VERBOSE") == NULL)
        return;
    fprintf(stderr, "%s: note: ", g_prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static void check_(int ok, const char *what, int line)
{
    if (!ok) {
        fprintf(stderr, "%s:%d [%s]: check failed: %s\n", g_prog, line, g_section, what);
        g_failed = 1;
    }
}

static const char *errname(int rc)
{
    switch (-rc) {
    case 0: return "0";
    case EINVAL: return "-EINVAL";
    case EFBIG: return "-EFBIG";
    case EBADF: return "-EBADF";
    case ENOENT: return "-ENOENT";
    case EEXIST: return "-EEXIST";
    case EISDIR: return "-EISDIR";
    case ENOTDIR: return "-ENOTDIR";
    case ENOSPC: return "-ENOSPC";
    case EOPNOTSUPP: return "-EOPNOTSUPP";
    case ERANGE: return "-ERANGE";
    case EBUSY: return "-EBUSY";
    case EAGAIN: return "-EAGAIN";
    case EMSGSIZE: return "-EMSGSIZE";
    case ESPIPE: return "-ESPIPE";
    case ENODEV: return "-ENODEV";
    case ENODATA: return "-ENODATA";
    case EIO: return "-EIO";
    case EUCLEAN: return "-EUCLEAN";
    case ENXIO: return "-ENXIO";
    case EPERM: return "-EPERM";
    default: return rc > 0 ? "positive" : "?";
    }
}

static int check_rc_(int rc, int want, const char *what, int line)
{
    if (rc != want) {
        fprintf(stderr,
                "%s:%d [%s]: check failed: %s returned %d (%s), expected %d (%s); last error: %s\n",
                g_prog, line, g_section, what, rc, errname(rc), want, errname(want),
                fspace_last_error());
        g_failed = 1;
    }
    return rc;
}

/* CHECK(cond): a named check. CHECK_RC(call, -EXXX): the call returns that.
 * CHECK_OK(call): it returns 0. The last two return the call's result. */
#define CHECK(cond) check_((cond) ? 1 : 0, #cond, __LINE__)
#define CHECK_RC(expr, want) check_rc_((expr), (want), #expr, __LINE__)
#define CHECK_OK(expr) check_rc_((expr), 0, #expr, __LINE__)

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st; (void)flag; (void)ftw;
    if (remove(path) != 0)
        fprintf(stderr, "%s: cleanup: remove %s: %s\n", g_prog, path, strerror(errno));
    return 0;
}

/* Removes a directory tree (no symbolic links followed). */
static void rm_rf(const char *path)
{
    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* out = dir/name (exits on overflow: a test bug, not a failure). */
static void join(char *out, size_t n, const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    if (a + 1 + b + 1 > n) {
        fprintf(stderr, "%s: path too long: %s/%s\n", g_prog, dir, name);
        exit(2);
    }
    memcpy(out, dir, a);
    out[a] = '/';
    memcpy(out + a + 1, name, b + 1);
}

/* Makes DIR/PROG.PID (exits 1 if it cannot). */
static void make_work_dir(char *out, size_t n, const char *dir)
{
    char name[64];
    snprintf(name, sizeof name, "%s.%ld", g_prog, (long)getpid());
    join(out, n, dir, name);
    if (mkdir(out, 0755) != 0) {
        fprintf(stderr, "%s: mkdir %s: %s\n", g_prog, out, strerror(errno));
        exit(1);
    }
}

/* The length of a file, or -1 if it does not exist. */
static inline long long file_size(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    return (long long)st.st_size;
}

/* A non-zero byte that depends on its offset and a seed. */
static inline unsigned char pat(unsigned long long off, unsigned seed)
{
    return (unsigned char)((off * 131u + seed * 17u + (off >> 12)) % 251u + 1u);
}

/* Writes `len` pattern bytes at `off` with pwrite; returns 0 on success. */
static inline int write_pattern(int fd, unsigned long long off, size_t len, unsigned seed)
{
    unsigned char *buf = (unsigned char *)malloc(len ? len : 1);
    size_t i, done = 0;
    if (buf == NULL)
        return -1;
    for (i = 0; i < len; i++)
        buf[i] = pat(off + i, seed);
    while (done < len) {
        ssize_t w = pwrite(fd, buf + done, len - done, (off_t)(off + done));
        if (w <= 0) {
            free(buf);
            return -1;
        }
        done += (size_t)w;
    }
    free(buf);
    return 0;
}

/* Reads a whole file into a new buffer (free it); NULL on error. */
static inline unsigned char *read_all(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    unsigned char *buf;
    size_t done = 0;
    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return NULL;
    }
    buf = (unsigned char *)malloc((size_t)st.st_size + 1);
    if (buf == NULL) {
        close(fd);
        return NULL;
    }
    while (done < (size_t)st.st_size) {
        ssize_t r = pread(fd, buf + done, (size_t)st.st_size - done, (off_t)done);
        if (r <= 0)
            break;
        done += (size_t)r;
    }
    close(fd);
    if (done != (size_t)st.st_size) {
        free(buf);
        return NULL;
    }
    *len = done;
    return buf;
}

/* True if buf[from..to) is the pattern of `seed`. */
static inline int is_pattern(const unsigned char *buf, size_t from, size_t to, unsigned seed)
{
    size_t i;
    for (i = from; i < to; i++)
        if (buf[i] != pat(i, seed))
            return 0;
    return 1;
}

/* True if buf[from..to) is all zero. */
static inline int is_zero(const unsigned char *buf, size_t from, size_t to)
{
    size_t i;
    for (i = from; i < to; i++)
        if (buf[i] != 0)
            return 0;
    return 1;
}

/* The number of entries of a directory but . and .., or -1. */
static inline int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (d == NULL)
        return -1;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

/* A failed check described by a format: one line. */
static inline void fail_(int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s:%d [%s]: check failed: ", g_prog, line, g_section);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    g_failed = 1;
}

/* CHECK_ENTRIES(dir, n): `dir` has exactly n entries but . and .. (the
 * failure line lists them). */
static inline void check_entries_(const char *dir, int n, int line)
{
    char names[1024];
    size_t off = 0;
    DIR *d;
    struct dirent *e;
    int count = count_entries(dir);
    if (count == n)
        return;
    names[0] = '\0';
    d = opendir(dir);
    if (d != NULL) {
        while ((e = readdir(d)) != NULL) {
            int w;
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            w = snprintf(names + off, sizeof names - off, " %s", e->d_name);
            if (w < 0 || (size_t)w >= sizeof names - off)
                break;
            off += (size_t)w;
        }
        closedir(d);
    }
    fail_(line, "%s holds %d entries, expected %d:%s", dir, count, n, names);
}
#define CHECK_ENTRIES(dir, n) check_entries_((dir), (n), __LINE__)

/* True if `s` is a non-empty string whose first non-blank character is c. */
static inline int starts_with_char(const char *s, char c)
{
    if (s == NULL)
        return 0;
    while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r')
        s++;
    return *s == c;
}

/* ----------------------------------------------------------------------- */
static int known_strategy(fspace_strategy s)
{
    return s == FSPACE_STRATEGY_SPARSE || s == FSPACE_STRATEGY_RESERVE ||
           s == FSPACE_STRATEGY_ALLOCATE || s == FSPACE_STRATEGY_WRITE_ZEROES ||
           s == FSPACE_STRATEGY_ZERO_FILL;
}

static void test_version_and_names(void)
{
    const char *v;
    section("version");
    v = fspace_version();
    CHECK(v != NULL);
    if (v != NULL) {
        CHECK(v[0] >= '0' && v[0] <= '9');
        CHECK(strchr(v, '.') != NULL);
        CHECK(fspace_version() == v); /* static storage */
    }

    section("last_error before any failure");
    CHECK(fspace_last_error() != NULL);
    CHECK(fspace_last_error() != NULL && fspace_last_error()[0] == '\0');

    section("strategy names");
    {
        static const struct { fspace_strategy s; const char *name; } names[] = {
            { FSPACE_STRATEGY_AUTO, "auto" },
            { FSPACE_STRATEGY_SPARSE, "sparse" },
            { FSPACE_STRATEGY_RESERVE, "reserve" },
            { FSPACE_STRATEGY_ALLOCATE, "allocate" },
            { FSPACE_STRATEGY_WRITE_ZEROES, "write-zeroes" },
            { FSPACE_STRATEGY_ZERO_FILL, "zero-fill" },
        };
        size_t i;
        for (i = 0; i < sizeof names / sizeof names[0]; i++) {
            const char *n = fspace_strategy_name(names[i].s);
            section("strategy name %u", (unsigned)names[i].s);
            CHECK(n != NULL);
            if (n != NULL)
                CHECK(strcmp(n, names[i].name) == 0);
        }
        section("unknown strategy name");
        CHECK(fspace_strategy_name(6) == NULL);
        CHECK(fspace_strategy_name(99) == NULL);
        CHECK(fspace_strategy_name(UINT32_MAX) == NULL);
    }
}

static void test_last_error(const char *work)
{
    char missing[4096];
    fspace_fs_info *info = (fspace_fs_info *)(uintptr_t)0x1;
    const char *msg;
    int rc;

    section("last_error after a failure");
    join(missing, sizeof missing, work, "no-such-dir/x");
    rc = fspace_fs_info_new(missing, &info);
    CHECK(rc == -ENOENT);
    CHECK(info == (fspace_fs_info *)(uintptr_t)0x1);
    msg = fspace_last_error();
    CHECK(msg != NULL && msg[0] != '\0');
    if (msg != NULL)
        CHECK(strstr(msg, "no-such-dir") != NULL);

    section("last_error is kept by a success");
    {
        char copy[4096];
        fspace_grow_options o;
        snprintf(copy, sizeof copy, "%s", msg);
        CHECK_OK(fspace_grow_options_init(&o));
        CHECK(strcmp(fspace_last_error(), copy) == 0);
    }

    section("last_error names the function for a NULL argument");
    rc = fspace_fs_info_new(NULL, &info);
    CHECK(rc == -EINVAL);
    CHECK(strstr(fspace_last_error(), "fspace_fs_info_new") != NULL);
}

static void test_fs_info(const char *work)
{
    char fs_type[256];
    fspace_fs_info *info = NULL;
    fspace_fs_facts facts;
    char file[4096];
    int fd;
    fspace_capability cap;
    fspace_intent intent;
    const char *json = NULL;
    int measured = 1;

    section("fs_info_new on the directory");
    if (CHECK_OK(fspace_fs_info_new(work, &info)) != 0 || info == NULL)
        return;

    section("fs_info_get");
    memset(&facts, 0xA5, sizeof facts);
    if (CHECK_OK(fspace_fs_info_get(info, &facts)) == 0) {
        CHECK(facts.fs_type != NULL && facts.fs_type[0] != '\0');
        CHECK(facts.mount_point != NULL);
        CHECK(facts.source != NULL);
        CHECK(facts.block_size > 0);
        CHECK(facts.total_bytes > 0);
        CHECK(facts.total_bytes >= facts.free_bytes);
        CHECK(facts.total_bytes >= facts.free_bytes_root);
        CHECK(facts.free_bytes_root >= facts.free_bytes);
        CHECK(facts.magic != 0);
        CHECK(facts.read_only == false); /* we write there */
        if (facts.fs_type != NULL && facts.mount_point != NULL) {
            /* what we know of the matrix filesystems */
            if (strcmp(facts.fs_type, "btrfs") == 0)
                CHECK(facts.copy_on_write);
            if (strcmp(facts.fs_type, "ext4") == 0 || strcmp(facts.fs_type, "xfs") == 0 ||
                strcmp(facts.fs_type, "tmpfs") == 0) {
                CHECK(!facts.copy_on_write);
                CHECK(!facts.network);
            }
            if (strncmp(facts.fs_type, "fuse", 4) == 0)
                CHECK(facts.network);
            if (facts.mount_point[0] != '\0')
                CHECK(strncmp(work, facts.mount_point, strlen(facts.mount_point)) == 0);
        }
        note("%s on %s (%s), block %llu, %llu of %llu bytes free",
                facts.fs_type ? facts.fs_type : "?", facts.mount_point ? facts.mount_point : "?",
                facts.source ? facts.source : "?", (unsigned long long)facts.block_size,
                (unsigned long long)facts.free_bytes, (unsigned long long)facts.total_bytes);
    }

    section("fs_info_get twice gives the same strings");
    {
        fspace_fs_facts again;
        if (CHECK_OK(fspace_fs_info_get(info, &again)) == 0) {
            CHECK(again.fs_type == facts.fs_type);
            CHECK(again.block_size == facts.block_size);
            CHECK(again.magic == facts.magic);
        }
    }

    section("capabilities");
    {
        bool sup[8];
        for (cap = FSPACE_CAP_FALLOCATE; cap <= FSPACE_CAP_FICLONE; cap++) {
            bool b = true;
            int rc;
            section("capability %u", (unsigned)cap);
            rc = fspace_fs_info_capability(info, cap, &b);
            if (rc == -ENODATA) {
                /* documented for a filesystem where nothing can be measured,
                 * which is not the case of a directory we can write to */
                measured = 0;
            }
            CHECK_OK(rc);
            sup[cap] = b;
        }
        if (measured) {
            char line[512];
            int off = 0;
            static const char *const names[8] = { "fallocate", "keep-size", "punch-hole", "zero-range",
                                                  "write-zeroes", "seek-hole", "fiemap", "ficlone" };
            for (cap = 0; cap < 8; cap++)
                off += snprintf(line + off, sizeof line - (size_t)off, " %s=%d", names[cap], sup[cap] ? 1 : 0);
            note("capabilities:%s", line);
            section("capabilities agree with the filesystem");
            if (facts.fs_type != NULL) {
                if (strcmp(facts.fs_type, "ext4") == 0 || strcmp(facts.fs_type, "xfs") == 0 ||
                    strcmp(facts.fs_type, "btrfs") == 0) {
                    CHECK(sup[FSPACE_CAP_FALLOCATE]);
                    CHECK(sup[FSPACE_CAP_PUNCH_HOLE]);
                    CHECK(sup[FSPACE_CAP_FIEMAP]);
                    CHECK(sup[FSPACE_CAP_SEEK_HOLE]);
                }
                if (strcmp(facts.fs_type, "tmpfs") == 0) {
                    CHECK(sup[FSPACE_CAP_FALLOCATE]);
                    CHECK(!sup[FSPACE_CAP_FIEMAP]);
                }
                if (strcmp(facts.fs_type, "btrfs") == 0)
                    CHECK(sup[FSPACE_CAP_FICLONE]);
                if (strcmp(facts.fs_type, "ext3") == 0) /* ext4 without extents */
                    CHECK(!sup[FSPACE_CAP_FALLOCATE]);
                if (strstr(facts.fs_type, "sshfs") != NULL) {
                    CHECK(!sup[FSPACE_CAP_FALLOCATE]);
                    CHECK(!sup[FSPACE_CAP_PUNCH_HOLE]);
                    CHECK(!sup[FSPACE_CAP_FIEMAP]);
                }
                /* keep-size without fallocate would be odd */
                if (sup[FSPACE_CAP_KEEP_SIZE])
                    CHECK(sup[FSPACE_CAP_FALLOCATE]);
            }
        }
        section("unknown capability");
        {
            bool b = true;
            CHECK_RC(fspace_fs_info_capability(info, 8, &b), -EINVAL);
            CHECK(b == true);
            CHECK_RC(fspace_fs_info_capability(info, 99, &b), -EINVAL);
            CHECK(b == true);
            CHECK(strstr(fspace_last_error(), "99") != NULL);
            b = false;
            CHECK_RC(fspace_fs_info_capability(info, UINT32_MAX, &b), -EINVAL);
            CHECK(b == false);
        }
    }

    section("auto strategy");
    for (intent = FSPACE_INTENT_BULK; intent <= FSPACE_INTENT_SPARSE; intent++) {
        fspace_strategy s = 12345;
        section("auto strategy for intent %u", (unsigned)intent);
        if (CHECK_OK(fspace_fs_info_auto_strategy(info, intent, &s)) == 0) {
            CHECK(known_strategy(s));
            note("auto for intent %u: %s", (unsigned)intent,
                    fspace_strategy_name(s) ? fspace_strategy_name(s) : "?");
            if (intent == FSPACE_INTENT_SPARSE)
                CHECK(s == FSPACE_STRATEGY_SPARSE);
            if (facts.fs_type != NULL && strstr(facts.fs_type, "sshfs") != NULL &&
                intent != FSPACE_INTENT_SPARSE)
                CHECK(s == FSPACE_STRATEGY_ZERO_FILL);
        }
    }
    section("auto strategy for an unknown intent");
    {
        fspace_strategy s = 12345;
        CHECK_RC(fspace_fs_info_auto_strategy(info, 3, &s), -EINVAL);
        CHECK(s == 12345);
        CHECK_RC(fspace_fs_info_auto_strategy(info, 99, &s), -EINVAL);
        CHECK(s == 12345);
    }

    section("json");
    if (CHECK_OK(fspace_fs_info_json(info, &json)) == 0) {
        const char *again = NULL;
        CHECK(json != NULL);
        if (json != NULL) {
            CHECK(starts_with_char(json, '{'));
            CHECK(json[strlen(json) - 1] == '}');
            if (facts.fs_type != NULL && strchr(facts.fs_type, '.') == NULL)
                CHECK(strstr(json, facts.fs_type) != NULL);
        }
        CHECK_OK(fspace_fs_info_json(info, &again));
        CHECK(again == json); /* owned by the handle, made once */
    }
    snprintf(fs_type, sizeof fs_type, "%s", facts.fs_type != NULL ? facts.fs_type : "");
    fspace_fs_info_free(info);

    section("fs_info_new on a file");
    join(file, sizeof file, work, "file");
    fd = open(file, O_WRONLY | O_CREAT | O_EXCL, 0644);
    CHECK(fd >= 0);
    if (fd >= 0) {
        fspace_fs_info *fi = NULL;
        CHECK(write(fd, "x", 1) == 1);
        close(fd);
        if (CHECK_OK(fspace_fs_info_new(file, &fi)) == 0 && fi != NULL) {
            fspace_fs_facts f2;
            bool b = false;
            if (CHECK_OK(fspace_fs_info_get(fi, &f2)) == 0) {
                CHECK(f2.magic == facts.magic);
                CHECK(f2.fs_type != NULL && strcmp(f2.fs_type, fs_type) == 0);
                CHECK(f2.block_size == facts.block_size);
            }
            if (measured)
                CHECK_OK(fspace_fs_info_capability(fi, FSPACE_CAP_SEEK_HOLE, &b));
            fspace_fs_info_free(fi);
        }
    }

    section("fs_info_new leaves no scratch file behind");
    /* the capability probe works on scratch files in the directory */
    CHECK_ENTRIES(work, 1); /* "file" */

    section("fs_info_free(NULL)");
    fspace_fs_info_free(NULL);
}

int main(int argc, char **argv)
{
    char work[4096];

    g_prog = "test_info";
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    test_version_and_names();
    make_work_dir(work, sizeof work, argv[1]);
    test_last_error(work);
    test_fs_info(work);
    rm_rf(work);
    return g_failed ? 1 : 0;
}
