/* What one hand-off between two threads costs on this machine: the time from one thread
 * signalling another until that thread runs (issue 40: a group-commit follower sleeps, the
 * flusher wakes it). Four variants, alternating within each round (the order rotates):
 *   cond   ping-pong between 2 threads through one pthread mutex + condvar;
 *   futex  the same through a raw futex (FUTEX_WAIT / FUTEX_WAKE on an int, the waker
 *          always calls FUTEX_WAKE);
 *   spin   the same on an atomic int, both threads spinning (no sleep: the floor when
 *          both threads have a CPU);
 *   bcast  one thread wakes 7 threads sleeping on a condvar (pthread_cond_broadcast) and
 *          sleeps until all 7 ran (the last one signals it back): the cost of waking a group.
 * cond/futex/spin print ns per hand-off (round trip / 2); bcast prints ns per whole cycle
 * (the broadcast, 7 wake-ups, the hand-off back). "sleeps" = waits that really slept per
 * hand-off (futex: FUTEX_WAIT returned 0; cond: pthread_cond_wait called).
 * PIN: none (default, the scheduler places the threads), same (every thread on CPU 0),
 * split (the main thread on CPU 0, the others on CPU 1: every wake-up crosses CPUs).
 * Last lines: median (min-max) over the rounds, and 2 CPUs / hand-off as a ceiling.
 *
 * cc -O2 -Wall -Wextra -pthread -o /tmp/handoff bench/micro/handoff.c
 * /tmp/handoff [rounds] [seconds] [PIN]   (defaults: 5 rounds, 1 s per variant and round, none)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NV 4
#define GROUP 7
static const char *names[NV] = {"cond", "futex", "spin", "bcast7"};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER, cv_main = PTHREAD_COND_INITIALIZER;
static _Atomic int turn; /* 1: the partner's turn, 0: the main thread's */
static _Atomic int stop;
static long gen, done;   /* bcast: generation and count of woken threads, under mu */
static long part_sleeps; /* sleeps of the partner thread (read after join) */
static int pin;          /* 0 none, 1 same, 2 split */

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void die(const char *what, int err) {
    fprintf(stderr, "handoff: %s: %s\n", what, strerror(err));
    exit(1);
}

/* 1 if FUTEX_WAIT slept and was woken, 0 if the word had already changed */
static int fwait(_Atomic int *w, int val) {
    if (syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0) == 0) return 1;
    if (errno != EAGAIN && errno != EINTR) die("FUTEX_WAIT", errno);
    return 0;
}

static void fwake(_Atomic int *w) {
    if (syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0) < 0) die("FUTEX_WAKE", errno);
}

static inline void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void *partner(void *arg) {
    int v = *(int *)arg;
    long sl = 0;
    if (v == 0) {
        pthread_mutex_lock(&mu);
        for (;;) {
            while (turn != 1) pthread_cond_wait(&cv, &mu), sl++;
            if (stop) break;
            turn = 0;
            pthread_cond_signal(&cv);
        }
        pthread_mutex_unlock(&mu);
    } else if (v == 1) {
        for (;;) {
            while (atomic_load(&turn) != 1) sl += fwait(&turn, 0);
            if (stop) break;
            atomic_store(&turn, 0);
            fwake(&turn);
        }
    } else if (v == 2) {
        for (;;) {
            while (atomic_load_explicit(&turn, memory_order_acquire) != 1) relax();
            if (stop) break;
            atomic_store_explicit(&turn, 0, memory_order_release);
        }
    } else {
        pthread_mutex_lock(&mu);
        long my = gen;
        if (++done == GROUP) pthread_cond_signal(&cv_main);
        for (;;) {
            while (gen == my && !stop) pthread_cond_wait(&cv, &mu);
            if (stop) break;
            my = gen;
            if (++done == GROUP) pthread_cond_signal(&cv_main);
        }
        pthread_mutex_unlock(&mu);
    }
    if (v != 3) part_sleeps = sl;
    return NULL;
}

/* runs variant v for secs; returns ns per hand-off (bcast: per cycle); *sleeps per hand-off */
static double run(int v, double secs, double *sleeps) {
    pthread_t th[GROUP];
    int nth = v == 3 ? GROUP : 1, err;
    long n = 0, sl = 0;
    double t0, t1;
    atomic_store(&turn, 0);
    atomic_store(&stop, 0);
    gen = done = part_sleeps = 0;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    if (pin) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(pin == 2 ? 1 : 0, &set);
        if ((err = pthread_attr_setaffinity_np(&attr, sizeof set, &set)))
            die("pthread_attr_setaffinity_np", err);
    }
    for (int i = 0; i < nth; i++)
        if ((err = pthread_create(&th[i], &attr, partner, &v))) die("pthread_create", err);
    pthread_attr_destroy(&attr);
    if (v == 0 || v == 3) pthread_mutex_lock(&mu);
    if (v == 3)
        while (done < GROUP) pthread_cond_wait(&cv_main, &mu); /* all 7 asleep */
    t0 = now();
    do {
        for (int k = 0; k < 256; k++, n++) {
            if (v == 0) {
                turn = 1;
                pthread_cond_signal(&cv);
                while (turn == 1) pthread_cond_wait(&cv, &mu), sl++;
            } else if (v == 1) {
                atomic_store(&turn, 1);
                fwake(&turn);
                while (atomic_load(&turn) == 1) sl += fwait(&turn, 1);
            } else if (v == 2) {
                atomic_store_explicit(&turn, 1, memory_order_release);
                while (atomic_load_explicit(&turn, memory_order_acquire) == 1) relax();
            } else {
                done = 0;
                gen++;
                pthread_cond_broadcast(&cv);
                while (done < GROUP) pthread_cond_wait(&cv_main, &mu);
            }
        }
    } while ((t1 = now()) - t0 < secs);
    atomic_store(&stop, 1);
    atomic_store(&turn, 1);
    if (v == 0 || v == 3) {
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
    } else if (v == 1) {
        fwake(&turn);
    }
    for (int i = 0; i < nth; i++)
        if ((err = pthread_join(th[i], NULL))) die("pthread_join", err);
    *sleeps = v == 3 ? 0 : (double)(sl + part_sleeps) / (2.0 * n);
    return (t1 - t0) * 1e9 / (v == 3 ? n : 2.0 * n);
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 5;
    double secs = argc > 2 ? atof(argv[2]) : 1.0;
    const char *pins = argc > 3 ? argv[3] : "none";
    pin = !strcmp(pins, "same") ? 1 : !strcmp(pins, "split") ? 2 : strcmp(pins, "none") ? -1 : 0;
    if (rounds < 1 || rounds > 100 || !(secs > 0) || pin < 0) {
        fprintf(stderr, "usage: %s [rounds 1-100] [seconds > 0] [none|same|split]\n", argv[0]);
        return 2;
    }
    if (pin) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(0, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0) die("sched_setaffinity", errno);
    }
    double ns[NV][100], sl[NV][100];
    printf("# pin %s; ns per hand-off (bcast7: per cycle of waking 7 and being woken back); "
           "sleeps per hand-off\n", pins);
    printf("# round  cond_ns  futex_ns  spin_ns  bcast7_ns  cond_sleeps  futex_sleeps  order\n");
    for (int r = 0; r < rounds; r++) {
        char order[64] = "";
        for (int i = 0; i < NV; i++) {
            int v = (i + r) % NV; /* rotate the order each round */
            ns[v][r] = run(v, secs, &sl[v][r]);
            strcat(order, names[v]);
            if (i < NV - 1) strcat(order, ",");
        }
        printf("%7d %8.0f %9.0f %8.0f %10.0f %12.2f %13.2f  %s\n", r + 1, ns[0][r], ns[1][r],
               ns[2][r], ns[3][r], sl[0][r], sl[1][r], order);
        fflush(stdout);
    }
    printf("# summary over %d rounds of %.1f s: median (min-max)\n", rounds, secs);
    for (int v = 0; v < NV; v++) {
        double s[100];
        memcpy(s, ns[v], rounds * sizeof *s);
        qsort(s, rounds, sizeof *s, cmp);
        double med = rounds % 2 ? s[rounds / 2] : (s[rounds / 2 - 1] + s[rounds / 2]) / 2;
        printf("%-6s %8.0f ns (%.0f-%.0f)", names[v], med, s[0], s[rounds - 1]);
        if (v < 2)
            printf("  ceiling 2 CPUs / hand-off = %.0f hand-offs/s (%.0f-%.0f)", 2e9 / med,
                   2e9 / s[rounds - 1], 2e9 / s[0]);
        if (v == 3) printf("  = %.0f ns per woken thread", med / GROUP);
        printf("\n");
    }
    return 0;
}
