/* The kernel's floor for the log's write pattern on one filesystem.
 *
 * Every commit is one write + fdatasync into a pre-written 64 MiB file:
 *   bare   8192 bytes at 8192-aligned offsets (the bare overwrite);
 *   pages  an 8208-byte record (8 KiB + 16-byte header) appended after the
 *          last, written as fspace's log writes it: whole 4 KiB pages from
 *          the page holding the previous end, padded to a page;
 *   tail   the same bytes, but the partial page not padded (ends at the record);
 *   fresh  only the record's own bytes (no rewrite of the previous page);
 *   skip   the record's own bytes padded to a page: the previous page is
 *          not written again, and the last page is written whole (no
 *          read-before-write if it is not cached).
 * Modes alternate in each round (the order rotates); prints commits/s and each mode ÷ bare.
 * No checksums, no locks: only the system calls the log makes.
 *
 * cc -O2 -o /tmp/log_pages bench/micro/log_pages.c
 * /tmp/log_pages DIR [rounds] [seconds]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FILE_SIZE (64L << 20)
#define PAGE 4096L
#define REC 8208L

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static double run(int fd, const char *buf, int mode, double secs) {
    long end = 0, n = 0;
    double t0 = now();
    while (now() - t0 < secs) {
        for (int k = 0; k < 64; k++) {
            long off, len;
            if (mode == 0) {
                off = (n * 8192) % FILE_SIZE;
                len = 8192;
            } else {
                if (end + REC + PAGE > FILE_SIZE) end = 0;
                long new_end = end + REC;
                off = mode >= 3 ? end : end / PAGE * PAGE;
                long stop = mode == 1 || mode == 4 ? (new_end + PAGE - 1) / PAGE * PAGE : new_end;
                len = stop - off;
                end = new_end;
            }
            if (pwrite(fd, buf, len, off) != len || fdatasync(fd) != 0) {
                perror("pwrite/fdatasync");
                exit(1);
            }
            n++;
        }
    }
    return n / (now() - t0);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR [rounds] [seconds]\n", argv[0]);
        return 2;
    }
    int rounds = argc > 2 ? atoi(argv[2]) : 5;
    double secs = argc > 3 ? atof(argv[3]) : 2.0;
    char path[4096];
    snprintf(path, sizeof path, "%s/log_pages.tmp", argv[1]);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
        perror(path);
        return 1;
    }
    static char buf[3 * 8192];
    memset(buf, 'x', sizeof buf);
    for (long off = 0; off < FILE_SIZE; off += sizeof buf)
        if (pwrite(fd, buf, sizeof buf, off) != (ssize_t)sizeof buf) return 1;
    fdatasync(fd);
    printf("# round  bare/s  pages/s  tail/s  fresh/s  skip/s  pages÷bare  tail÷bare  fresh÷bare  "
           "skip÷bare\n");
    for (int r = 0; r < rounds; r++) {
        double v[5];
        for (int i = 0; i < 5; i++) {
            int m = (i + r) % 5; /* rotate the order each round */
            v[m] = run(fd, buf, m, secs);
        }
        printf("%7d %7.0f %8.0f %7.0f %8.0f %7.0f %11.3f %10.3f %11.3f %10.3f\n", r + 1, v[0], v[1],
               v[2], v[3], v[4], v[1] / v[0], v[2] / v[0], v[3] / v[0], v[4] / v[0]);
    }
    unlink(path);
    return 0;
}
