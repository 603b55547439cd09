/* Several durable O_DIRECT writes in flight at once (issue 40: a log written TigerBeetle's
 * way keeps up to Q durable writes in flight at distinct offsets instead of one).
 *
 * One 64 MiB file in DIR, written with zeros (O_DIRECT) and fdatasync'd first, then opened
 * with O_DIRECT. Q threads (Q = 1, 2, 4, 8) each issue pwritev2(RWF_DSYNC) of 8 KiB from a
 * 4096-aligned buffer; thread i writes 8 KiB slots i, i+Q, i+2Q, ... (wrapping at the end of
 * the file), so the offsets in flight are always distinct. Each Q runs for SECONDS, the values
 * of Q alternate within a round (the order rotates). Prints per round and Q: durable writes/s,
 * per-write latency p50/p99 (µs, clock_gettime around each pwritev2) and writes/s ÷ Q=1 of
 * the same round; last lines: median (min-max) over the rounds. The file is removed at the end.
 *
 * cc -O2 -Wall -Wextra -pthread -o /tmp/dsync_inflight bench/micro/dsync_inflight.c
 * /tmp/dsync_inflight DIR [rounds] [seconds]      (defaults: 5 rounds, 1 s per Q and round)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define FILE_SIZE (64L << 20)
#define WSIZE 8192L
#define SLOTS (FILE_SIZE / WSIZE)
#define NQ 4
#define MAXLAT (1L << 19) /* latencies kept per thread and run */
#define MAXR 20
static const int qs[NQ] = {1, 2, 4, 8};

static int fd;
static const char *path;
static _Atomic int stop;
static pthread_barrier_t start;

struct worker {
    pthread_t th;
    int id, q;
    long n;
    float *lat; /* µs */
    char *buf;
};

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void *work(void *arg) {
    struct worker *w = arg;
    struct iovec iov = {w->buf, WSIZE};
    long slot = w->id;
    pthread_barrier_wait(&start);
    while (!atomic_load(&stop)) {
        double t0 = now();
        ssize_t got = pwritev2(fd, &iov, 1, slot * WSIZE, RWF_DSYNC);
        double t1 = now();
        if (got != WSIZE) {
            fprintf(stderr, "dsync_inflight: pwritev2(RWF_DSYNC) %s at %ld: %s\n", path,
                    slot * WSIZE, got < 0 ? strerror(errno) : "short write");
            unlink(path);
            exit(1);
        }
        if (w->n < MAXLAT) w->lat[w->n] = (t1 - t0) * 1e6;
        w->n++;
        slot = (slot + w->q) % SLOTS;
    }
    return NULL;
}

static int cmpf(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static int cmpd(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* one run with q threads; returns writes/s, sets p50/p99 in µs */
static double run(struct worker *ws, float *all, int q, double secs, double *p50, double *p99) {
    int err;
    atomic_store(&stop, 0);
    pthread_barrier_init(&start, NULL, q + 1);
    for (int i = 0; i < q; i++) {
        ws[i].id = i;
        ws[i].q = q;
        ws[i].n = 0;
        if ((err = pthread_create(&ws[i].th, NULL, work, &ws[i]))) {
            fprintf(stderr, "dsync_inflight: pthread_create: %s\n", strerror(err));
            exit(1);
        }
    }
    pthread_barrier_wait(&start);
    double t0 = now();
    struct timespec d = {(time_t)secs, (long)((secs - (time_t)secs) * 1e9)};
    nanosleep(&d, NULL);
    atomic_store(&stop, 1);
    long total = 0, kept = 0;
    for (int i = 0; i < q; i++) {
        if ((err = pthread_join(ws[i].th, NULL))) {
            fprintf(stderr, "dsync_inflight: pthread_join: %s\n", strerror(err));
            exit(1);
        }
        long k = ws[i].n < MAXLAT ? ws[i].n : MAXLAT;
        memcpy(all + kept, ws[i].lat, k * sizeof *all);
        kept += k;
        total += ws[i].n;
    }
    double el = now() - t0;
    pthread_barrier_destroy(&start);
    qsort(all, kept, sizeof *all, cmpf);
    *p50 = kept ? all[kept / 2] : 0;
    *p99 = kept ? all[(long)(kept * 0.99)] : 0;
    return total / el;
}

static void summary(const char *what, double v[][MAXR], int q, int rounds, const char *fmt) {
    double s[MAXR];
    memcpy(s, v[q], rounds * sizeof *s);
    qsort(s, rounds, sizeof *s, cmpd);
    double med = rounds % 2 ? s[rounds / 2] : (s[rounds / 2 - 1] + s[rounds / 2]) / 2;
    printf("  %s ", what);
    printf(fmt, med);
    printf(" (");
    printf(fmt, s[0]);
    printf("-");
    printf(fmt, s[rounds - 1]);
    printf(")");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR [rounds] [seconds]\n", argv[0]);
        return 2;
    }
    int rounds = argc > 2 ? atoi(argv[2]) : 5;
    double secs = argc > 3 ? atof(argv[3]) : 1.0;
    if (rounds < 1 || rounds > MAXR || !(secs > 0)) {
        fprintf(stderr, "dsync_inflight: rounds must be 1-%d and seconds > 0\n", MAXR);
        return 2;
    }
    static char pbuf[4096];
    snprintf(pbuf, sizeof pbuf, "%s/dsync_inflight.tmp", argv[1]);
    path = pbuf;
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT, 0600);
    if (fd < 0) {
        perror(path);
        return 1;
    }
    char *zero = aligned_alloc(4096, 1 << 20);
    struct worker ws[8];
    float *all = malloc(8 * MAXLAT * sizeof *all);
    if (!zero || !all) {
        perror("malloc");
        return 1;
    }
    memset(zero, 0, 1 << 20);
    for (long off = 0; off < FILE_SIZE; off += 1 << 20)
        if (pwrite(fd, zero, 1 << 20, off) != 1 << 20) {
            perror(path);
            unlink(path);
            return 1;
        }
    if (fdatasync(fd) != 0) {
        perror(path);
        unlink(path);
        return 1;
    }
    for (int i = 0; i < 8; i++) {
        ws[i].buf = aligned_alloc(4096, WSIZE);
        ws[i].lat = malloc(MAXLAT * sizeof(float));
        if (!ws[i].buf || !ws[i].lat) {
            perror("malloc");
            return 1;
        }
        memset(ws[i].buf, 'a' + i, WSIZE);
    }
    double wps[NQ][MAXR], p50[NQ][MAXR], p99[NQ][MAXR], ratio[NQ][MAXR];
    printf("# %s: 8 KiB O_DIRECT pwritev2(RWF_DSYNC), Q threads, %.1f s per run\n", argv[1], secs);
    printf("# round  Q  writes/s  p50_us  p99_us  ratio_to_Q1\n");
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < NQ; i++) {
            int k = (i + r) % NQ; /* rotate the order each round */
            wps[k][r] = run(ws, all, qs[k], secs, &p50[k][r], &p99[k][r]);
        }
        for (int i = 0; i < NQ; i++) {
            int k = (i + r) % NQ;
            ratio[k][r] = wps[k][r] / wps[0][r];
            printf("%7d %2d %9.0f %7.1f %7.1f %12.3f\n", r + 1, qs[k], wps[k][r], p50[k][r],
                   p99[k][r], ratio[k][r]);
        }
        fflush(stdout);
    }
    printf("# summary over %d rounds: median (min-max)\n", rounds);
    for (int k = 0; k < NQ; k++) {
        printf("Q=%d", qs[k]);
        summary("writes/s", wps, k, rounds, "%.0f");
        summary("p50_us", p50, k, rounds, "%.1f");
        summary("p99_us", p99, k, rounds, "%.1f");
        summary("ratio", ratio, k, rounds, "%.2f");
        printf("\n");
    }
    close(fd);
    if (unlink(path) != 0) {
        perror(path);
        return 1;
    }
    return 0;
}
