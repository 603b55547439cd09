/*
 * check.h: the check style shared by the C API's test programs (each
 * program is still one .c file; this is its test harness, as liburing's
 * test/helpers.h): CHECK macros that print one line per failed check,
 * naming the program, the line, the section and fspace_last_error(), and
 * helpers for the work directory.
 */
#ifndef FSPACE_TEST_CHECK_H
#define FSPACE_TEST_CHECK_H

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
    case E2BIG: return "-E2BIG";
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

/* What the filesystem under `dir` supports, for checks that adapt to it:
 * caps[FSPACE_CAP_*]. Returns 1 when every capability could be read. */
static inline int load_caps(const fspace_fs_info *info, bool caps[8])
{
    int c, known = 1;
    for (c = 0; c < 8; c++)
        if (fspace_fs_info_capability(info, (fspace_capability)c, &caps[c]) != 0)
            known = 0;
    return known;
}

#endif /* FSPACE_TEST_CHECK_H */
