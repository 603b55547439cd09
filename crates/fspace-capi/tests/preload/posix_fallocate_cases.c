/*
 * posix_fallocate_cases DIR: calls posix_fallocate (as programs do: through
 * glibc's symbol, so LD_PRELOAD can replace it) on a list of good and bad
 * arguments in DIR, and prints one line per case: its name, the returned
 * error number, and whether errno was left alone. The test runs it with and
 * without libfspace-preload.so and requires the same lines: the preload
 * keeps glibc's contract.
 *
 * The last case, keeps_data, allocates a range covering data, a hole and
 * the part beyond EOF, then checks every byte, and prints the file's
 * allocated bytes on a separate "allocated" line (not compared).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[4096];

static void report(const char *name, int rc, int errno_kept)
{
    printf("%s rc=%d (%s) errno_kept=%d\n", name, rc, rc ? strerror(rc) : "ok", errno_kept);
}

static void run(const char *name, int fd, off_t offset, off_t len)
{
    errno = 4242;
    int rc = posix_fallocate(fd, offset, len);
    report(name, rc, errno == 4242);
}

static int open_file(const char *name, int flags)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, flags | O_CREAT, 0644);
    if (fd < 0) {
        perror(path);
        exit(2);
    }
    return fd;
}

static unsigned char byte_at(off_t off)
{
    return (unsigned char)(off * 7 + 1) | 1; /* never zero */
}

static int keeps_data(void)
{
    const off_t data1 = 0, data1_len = 64 << 10;
    const off_t data2 = 1 << 20, data2_len = (64 << 10) + 100;
    const off_t start = 32 << 10, len = 3 << 20;
    int fd = open_file("keeps_data", O_RDWR | O_TRUNC);
    static unsigned char buf[(64 << 10) + 100];
    for (off_t i = 0; i < data1_len; i++)
        buf[i] = byte_at(data1 + i);
    if (pwrite(fd, buf, data1_len, data1) != data1_len)
        return perror("pwrite"), 2;
    for (off_t i = 0; i < data2_len; i++)
        buf[i] = byte_at(data2 + i);
    if (pwrite(fd, buf, data2_len, data2) != data2_len)
        return perror("pwrite"), 2;
    errno = 4242;
    int rc = posix_fallocate(fd, start, len);
    int kept = errno == 4242;
    struct stat st;
    if (fstat(fd, &st) != 0)
        return perror("fstat"), 2;
    int bad = st.st_size != start + len;
    static unsigned char rbuf[1 << 16];
    for (off_t off = 0; off < st.st_size && !bad; off += sizeof rbuf) {
        ssize_t n = pread(fd, rbuf, sizeof rbuf, off);
        if (n <= 0)
            return perror("pread"), 2;
        for (ssize_t i = 0; i < n; i++) {
            off_t at = off + i;
            int is_data = (at >= data1 && at < data1 + data1_len) || (at >= data2 && at < data2 + data2_len);
            unsigned char want = is_data ? byte_at(at) : 0;
            if (rbuf[i] != want) {
                fprintf(stderr, "keeps_data: byte %lld is %u, want %u\n", (long long)at, rbuf[i], want);
                bad = 1;
                break;
            }
        }
    }
    printf("keeps_data rc=%d (%s) errno_kept=%d size=%lld bytes=%s\n", rc, rc ? strerror(rc) : "ok", kept,
           (long long)st.st_size, bad ? "CHANGED" : "kept");
    printf("allocated %lld\n", (long long)st.st_blocks * 512);
    close(fd);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    snprintf(dir, sizeof dir, "%s", argv[1]);

    int fd = open_file("ok", O_RDWR | O_TRUNC);
    run("ok_1MiB", fd, 0, 1 << 20);
    run("ok_again_inside", fd, 4096, 8192);
    run("ok_past_eof_gap", fd, 3 << 20, 4096);
    run("len_zero", fd, 0, 0);
    run("len_negative", fd, 0, -1);
    run("offset_negative", fd, -4096, 4096);
    run("end_overflows", fd, INT64_MAX - 10, 4096);
    run("fd_negative", -1, 0, 4096);
    close(fd);
    run("fd_closed", fd, 0, 4096);

    fd = open_file("ro", O_RDONLY);
    run("fd_read_only", fd, 0, 4096);
    close(fd);

    fd = open_file("append", O_WRONLY | O_APPEND | O_TRUNC);
    run("fd_append", fd, 0, 4096);
    close(fd);

    int p[2];
    if (pipe(p) != 0)
        return perror("pipe"), 2;
    run("pipe", p[1], 0, 4096);
    close(p[0]);
    close(p[1]);

    fd = open(dir, O_RDONLY | O_DIRECTORY);
    run("directory", fd, 0, 4096);
    close(fd);

    fd = open("/dev/null", O_WRONLY);
    run("char_device", fd, 0, 4096);
    close(fd);

    int rc = keeps_data();
    fflush(stdout);
    return rc;
}
