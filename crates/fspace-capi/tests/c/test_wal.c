/*
 * test_wal.c: fspace_wal_options_init, fspace_wal_open (creating the
 * directory), _append, _commit, _sync, _sync_to, _durable_lsn, _next_lsn,
 * _max_record, _recovery, _reader_new/_next/_free over several segments,
 * _release_before, _close, reopening (recovery), _free (no sync), records
 * too large, a second open of the same directory, commits from threads.
 *
 * Usage: test_wal DIR. Works in DIR/test_wal.PID, removed at the end.
 * Exit: 0 all checks passed, 1 a check failed, 77 not applicable here.
 */
#define _GNU_SOURCE 1
#include "check.h"
#include <pthread.h>

#define KiB 1024LL
#define MiB (1024LL * 1024LL)

static char g_work[4096];
static char g_log[4096];

/* Record number i (from 0): its length and bytes. */
static size_t rec_len(unsigned i)
{
    if (i == 5)
        return 0; /* an empty record */
    return (size_t)((i * 7919u) % (40u * 1024u)) + 1u;
}

static void rec_fill(unsigned char *buf, unsigned i)
{
    size_t j, n = rec_len(i);
    for (j = 0; j < n; j++)
        buf[j] = pat(j, i);
}

static int rec_is(const void *data, size_t len, unsigned i)
{
    const unsigned char *p = (const unsigned char *)data;
    size_t j;
    if (len != rec_len(i))
        return 0;
    if (len > 0 && p == NULL)
        return 0;
    for (j = 0; j < len; j++)
        if (p[j] != pat(j, i))
            return 0;
    return 1;
}

/* LSN of record i, once known (records are numbered in append order). */
#define NREC 150
static uint64_t g_lsn[NREC + 1];
/* The record "late", committed after record NREC (0: not yet). */
static uint64_t g_late_lsn = 0;

/* Segment files in a log directory (live or prepared, not hidden). */
static int count_segments(const char *dir)
{
    int segs = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    if (d == NULL)
        return -1;
    while ((e = readdir(d)) != NULL)
        if (strstr(e->d_name, ".seg") != NULL && e->d_name[0] != '.')
            segs++;
    closedir(d);
    note("%s: %d segment files", dir, segs);
    return segs;
}

static void options(fspace_wal_options *o)
{
    fspace_wal_options_init(o, sizeof *o);
    o->segment_size = (uint64_t)MiB;
}

/* Reads every record from `from`: they must be records first..last in
 * order with their payloads. Returns the number read. */
static unsigned read_expect(fspace_wal *wal, uint64_t from, unsigned first, unsigned last)
{
    fspace_wal_reader *rd = NULL;
    unsigned i = first, n = 0;
    int rc;
    if (CHECK_OK(fspace_wal_reader_new(wal, from, &rd)) != 0 || rd == NULL)
        return 0;
    for (;;) {
        uint64_t lsn = 0;
        const void *data = NULL;
        size_t len = 0;
        rc = fspace_wal_reader_next(rd, &lsn, &data, &len);
        if (rc != 1)
            break;
        if (i > last) {
            if (i == last + 1 && last == NREC && g_late_lsn != 0) {
                CHECK(lsn == g_late_lsn && len == 4 && data != NULL && memcmp(data, "late", 4) == 0);
                i++;
                n++;
                continue;
            }
            CHECK(!"more records than appended");
            break;
        }
        if (lsn != g_lsn[i] || !rec_is(data, len, i)) {
            fail_(__LINE__, "record %u read back differs: lsn %llu (want %llu), len %zu (want %zu)", i,
                  (unsigned long long)lsn, (unsigned long long)g_lsn[i], len, rec_len(i));
            break;
        }
        i++;
        n++;
    }
    CHECK(rc == 0 || rc == 1);
    if (rc < 0)
        CHECK_OK(rc);
    CHECK(i == last + 1 + (last == NREC && g_late_lsn != 0 ? 1 : 0));
    /* the end stays the end */
    {
        uint64_t lsn = 77;
        const void *data = &lsn;
        size_t len = 77;
        CHECK_RC(fspace_wal_reader_next(rd, &lsn, &data, &len), 0);
    }
    fspace_wal_reader_free(rd);
    return n;
}

static void test_options(void)
{
    fspace_wal_options o;
    section("wal_options_init");
    memset(&o, 0xFF, sizeof o);
    CHECK_OK(fspace_wal_options_init(&o, sizeof o));
    CHECK(o.segment_size == (uint64_t)(16 * MiB));
    CHECK(o.prepare_ahead == 2);
    CHECK(o.recycle_pool == 4);
    CHECK(o.prepare_strategy == FSPACE_STRATEGY_AUTO);
    CHECK(o.direct_io == -1);
    CHECK(o.use_saved == true);
}

static unsigned char *g_buf; /* room for the largest record */

static void test_first_open(uint64_t *next_out, unsigned *first_kept)
{
    fspace_wal_options o;
    fspace_wal *wal = NULL;
    fspace_wal_recovery_info ri;
    uint64_t lsn = 0, next = 0, durable = 0, prev = 0;
    size_t maxrec = 0;
    unsigned i;
    int rc;

    *next_out = 0;
    *first_kept = 0;
    section("wal_open creates the log");
    options(&o);
    CHECK(file_size(g_log) == -1);
    if (CHECK_OK(fspace_wal_open(g_log, &o, &wal)) != 0 || wal == NULL)
        return;
    {
        struct stat st;
        CHECK(stat(g_log, &st) == 0 && S_ISDIR(st.st_mode));
    }

    section("recovery of a new log");
    memset(&ri, 0xA5, sizeof ri);
    CHECK_OK(fspace_wal_recovery(wal, &ri, sizeof ri));
    CHECK(ri.created == true);
    CHECK(ri.records == 0);
    CHECK(ri.discarded_bytes == 0);
    CHECK(ri.next_lsn >= 1);
    CHECK_OK(fspace_wal_next_lsn(wal, &next));
    CHECK(next == ri.next_lsn);
    CHECK_OK(fspace_wal_durable_lsn(wal, &durable));
    CHECK(durable == next - 1);
    CHECK_OK(fspace_wal_max_record(wal, &maxrec));
    CHECK(maxrec > (size_t)(512 * KiB) && maxrec < (size_t)MiB);
    note("new log: next lsn %llu, max record %zu", (unsigned long long)next, maxrec);
    {
        fspace_wal_reader *rd = NULL;
        uint64_t l = 0;
        const void *d = NULL;
        size_t n = 0;
        if (CHECK_OK(fspace_wal_reader_new(wal, 0, &rd)) == 0) {
            CHECK_RC(fspace_wal_reader_next(rd, &l, &d, &n), 0);
            fspace_wal_reader_free(rd);
        }
    }
    section("sync of an empty log");
    lsn = 99;
    CHECK_OK(fspace_wal_sync(wal, &lsn));
    CHECK(lsn == next - 1);

    section("append and commit");
    prev = next - 1;
    for (i = 0; i < NREC; i++) {
        rec_fill(g_buf, i);
        lsn = 0;
        if (i % 10 == 9) {
            rc = CHECK_OK(fspace_wal_commit(wal, rec_len(i) ? g_buf : NULL, rec_len(i), &lsn));
            if (rc == 0) {
                CHECK_OK(fspace_wal_durable_lsn(wal, &durable));
                CHECK(durable >= lsn);
            }
        } else {
            rc = CHECK_OK(fspace_wal_append(wal, rec_len(i) ? g_buf : NULL, rec_len(i), &lsn));
        }
        if (rc != 0)
            return;
        CHECK(lsn == prev + 1);
        g_lsn[i] = lsn;
        prev = lsn;
        if (i % 25 == 24) {
            CHECK_OK(fspace_wal_sync_to(wal, g_lsn[i - 3]));
            CHECK_OK(fspace_wal_durable_lsn(wal, &durable));
            CHECK(durable >= g_lsn[i - 3]);
        }
    }
    CHECK_OK(fspace_wal_next_lsn(wal, &next));
    CHECK(next == g_lsn[NREC - 1] + 1);

    section("append with lsn NULL, then sync");
    rec_fill(g_buf, NREC);
    CHECK_OK(fspace_wal_append(wal, g_buf, rec_len(NREC), NULL));
    g_lsn[NREC] = next;
    lsn = 0;
    CHECK_OK(fspace_wal_sync(wal, &lsn));
    CHECK(lsn == g_lsn[NREC]);
    CHECK_OK(fspace_wal_durable_lsn(wal, &durable));
    CHECK(durable == g_lsn[NREC]);
    CHECK_OK(fspace_wal_sync(wal, NULL));

    section("a record larger than max_record");
    {
        unsigned char *big = (unsigned char *)calloc(1, maxrec + 1);
        CHECK(big != NULL);
        if (big != NULL) {
            lsn = 12345;
            CHECK_RC(fspace_wal_append(wal, big, maxrec + 1, &lsn), -EMSGSIZE);
            CHECK(lsn == 12345);
            CHECK(fspace_last_error()[0] != '\0');
            CHECK_RC(fspace_wal_commit(wal, big, maxrec + 1, &lsn), -EMSGSIZE);
            CHECK(lsn == 12345);
            CHECK_OK(fspace_wal_next_lsn(wal, &next));
            CHECK(next == g_lsn[NREC] + 1);
            free(big);
        }
    }

    section("read everything back (several segments)");
    CHECK(read_expect(wal, 0, 0, NREC) == NREC + 1);
    {
        fspace_wal_recovery_info r2;
        CHECK_OK(fspace_wal_recovery(wal, &r2, sizeof r2));
        CHECK(r2.created == true); /* what opening found does not change */
    }
    /* the log holds about 3 MiB in 1 MiB segments */
    CHECK(count_segments(g_log) >= 3);

    section("read from the middle");
    CHECK(read_expect(wal, g_lsn[70], 70, NREC) == NREC + 1 - 70);

    section("a reader does not see later records");
    {
        fspace_wal_reader *rd = NULL;
        if (CHECK_OK(fspace_wal_reader_new(wal, g_lsn[NREC], &rd)) == 0 && rd != NULL) {
            uint64_t l = 0;
            const void *d = NULL;
            size_t n = 0;
            CHECK_OK(fspace_wal_commit(wal, "late", 4, &lsn));
            CHECK(lsn == g_lsn[NREC] + 1);
            g_late_lsn = lsn;
            CHECK_RC(fspace_wal_reader_next(rd, &l, &d, &n), 1);
            CHECK(l == g_lsn[NREC] && rec_is(d, n, NREC));
            CHECK_RC(fspace_wal_reader_next(rd, &l, &d, &n), 0);
            fspace_wal_reader_free(rd);
        }
        /* the late record is read by a new reader */
        rd = NULL;
        if (CHECK_OK(fspace_wal_reader_new(wal, lsn, &rd)) == 0 && rd != NULL) {
            uint64_t l = 0;
            const void *d = NULL;
            size_t n = 0;
            CHECK_RC(fspace_wal_reader_next(rd, &l, &d, &n), 1);
            CHECK(l == lsn && n == 4 && d != NULL && memcmp(d, "late", 4) == 0);
            fspace_wal_reader_free(rd);
        }
    }

    section("a second open of the same directory");
    {
        fspace_wal *again = (fspace_wal *)(uintptr_t)0x1;
        rc = fspace_wal_open(g_log, &o, &again);
        /* the header: -EAGAIN (another open log holds the directory's lock) */
        CHECK_RC(rc, -EAGAIN);
        CHECK(rc != 0);
        CHECK(again == (fspace_wal *)(uintptr_t)0x1);
        if (rc == 0)
            fspace_wal_close(again);
        CHECK(fspace_last_error()[0] != '\0');
    }

    section("release_before");
    {
        fspace_wal_release_info rel;
        fspace_wal_reader *rd = (fspace_wal_reader *)(uintptr_t)0x1;
        memset(&rel, 0xA5, sizeof rel);
        if (CHECK_OK(fspace_wal_release_before(wal, g_lsn[120], &rel, sizeof rel)) == 0) {
            note("released: %llu recycled, %llu deleted", (unsigned long long)rel.recycled,
                 (unsigned long long)rel.deleted);
            CHECK(rel.recycled + rel.deleted >= 1);
            CHECK(rel.recycled <= 4);
        }
        /* reading from a released LSN */
        CHECK_RC(fspace_wal_reader_new(wal, g_lsn[0], &rd), -ERANGE);
        CHECK(rd == (fspace_wal_reader *)(uintptr_t)0x1);
        CHECK(fspace_last_error()[0] != '\0');
        /* from 0: from the oldest kept record, which is at most record 120 */
        rd = NULL;
        if (CHECK_OK(fspace_wal_reader_new(wal, 0, &rd)) == 0 && rd != NULL) {
            uint64_t l = 0;
            const void *d = NULL;
            size_t n = 0;
            if (CHECK_RC(fspace_wal_reader_next(rd, &l, &d, &n), 1) == 1) {
                CHECK(l > g_lsn[0] && l <= g_lsn[120]);
                for (i = 0; i <= NREC && g_lsn[i] != l; i++)
                    ;
                CHECK(i <= NREC && rec_is(d, n, i));
                *first_kept = i;
            }
            fspace_wal_reader_free(rd);
        }
        /* the records kept read back */
        CHECK(read_expect(wal, g_lsn[120], 120, NREC) == NREC + 2 - 120);
        /* again: nothing more to release before the same LSN */
        memset(&rel, 0, sizeof rel);
        CHECK_OK(fspace_wal_release_before(wal, g_lsn[120], &rel, sizeof rel));
        CHECK(rel.recycled + rel.deleted == 0);
        CHECK_OK(fspace_wal_release_before(wal, g_lsn[0], NULL, 0));
    }

    section("release_before past what is durable");
    {
        fspace_wal_release_info rel;
        CHECK_OK(fspace_wal_durable_lsn(wal, &durable));
        memset(&rel, 0x5A, sizeof rel);
        /* the header: "an lsn past what is durable counts as the durable
         * LSN": allowed, and nothing not yet durable is released */
        CHECK_OK(fspace_wal_release_before(wal, durable + 1000, &rel, sizeof rel));
        {
            /* the last durable record is still there */
            fspace_wal_reader *rd = NULL;
            if (CHECK_OK(fspace_wal_reader_new(wal, durable, &rd)) == 0 && rd != NULL) {
                uint64_t l = 0;
                const void *d = NULL;
                size_t n = 0;
                CHECK_RC(fspace_wal_reader_next(rd, &l, &d, &n), 1);
                CHECK(l == durable);
                fspace_wal_reader_free(rd);
            }
        }
    }

    CHECK_OK(fspace_wal_next_lsn(wal, &next));
    *next_out = next;
    section("wal_close");
    CHECK_OK(fspace_wal_close(wal));
}

static void test_reopen(uint64_t next_before, unsigned first_kept)
{
    fspace_wal_options o;
    fspace_wal *wal = NULL;
    fspace_wal_recovery_info ri;
    uint64_t next = 0, lsn = 0, durable = 0;

    section("reopen: recovery");
    options(&o);
    if (CHECK_OK(fspace_wal_open(g_log, &o, &wal)) != 0 || wal == NULL)
        return;
    memset(&ri, 0xA5, sizeof ri);
    CHECK_OK(fspace_wal_recovery(wal, &ri, sizeof ri));
    note("recovery: created %d, %llu segments, %llu records, first %llu, next %llu, discarded %llu",
         ri.created ? 1 : 0, (unsigned long long)ri.segments, (unsigned long long)ri.records,
         (unsigned long long)ri.first_lsn, (unsigned long long)ri.next_lsn,
         (unsigned long long)ri.discarded_bytes);
    CHECK(ri.created == false);
    CHECK(ri.next_lsn == next_before);
    CHECK(ri.first_lsn == g_lsn[first_kept]);
    CHECK(ri.records == next_before - g_lsn[first_kept]);
    CHECK(ri.segments >= 1);
    CHECK(ri.discarded_bytes == 0);
    CHECK_OK(fspace_wal_next_lsn(wal, &next));
    CHECK(next == next_before);
    CHECK_OK(fspace_wal_durable_lsn(wal, &durable));
    CHECK(durable == next_before - 1);

    section("reopen: read everything back");
    /* records first_kept..NREC, then "late" */
    {
        fspace_wal_reader *rd = NULL;
        unsigned i = first_kept;
        if (CHECK_OK(fspace_wal_reader_new(wal, 0, &rd)) == 0 && rd != NULL) {
            uint64_t l = 0;
            const void *d = NULL;
            size_t n = 0;
            while (i <= NREC && fspace_wal_reader_next(rd, &l, &d, &n) == 1) {
                CHECK(l == g_lsn[i] && rec_is(d, n, i));
                i++;
            }
            CHECK(i == NREC + 1);
            CHECK_RC(fspace_wal_reader_next(rd, &l, &d, &n), 1);
            CHECK(n == 4 && d != NULL && memcmp(d, "late", 4) == 0);
            CHECK_RC(fspace_wal_reader_next(rd, &l, &d, &n), 0);
            fspace_wal_reader_free(rd);
        }
    }

    section("reopen: append, then free without sync");
    CHECK_OK(fspace_wal_commit(wal, "kept", 4, &lsn));
    CHECK(lsn == next_before);
    CHECK_OK(fspace_wal_append(wal, "maybe", 5, &lsn));
    CHECK(lsn == next_before + 1);
    fspace_wal_free(wal);

    section("third open after free");
    wal = NULL;
    if (CHECK_OK(fspace_wal_open(g_log, &o, &wal)) != 0 || wal == NULL)
        return;
    CHECK_OK(fspace_wal_recovery(wal, &ri, sizeof ri));
    CHECK(ri.created == false);
    /* the committed record is durable; the appended one may or may not be */
    CHECK(ri.next_lsn == next_before + 1 || ri.next_lsn == next_before + 2);
    {
        fspace_wal_reader *rd = NULL;
        if (CHECK_OK(fspace_wal_reader_new(wal, next_before, &rd)) == 0 && rd != NULL) {
            uint64_t l = 0;
            const void *d = NULL;
            size_t n = 0;
            CHECK_RC(fspace_wal_reader_next(rd, &l, &d, &n), 1);
            CHECK(l == next_before && n == 4 && d != NULL && memcmp(d, "kept", 4) == 0);
            if (ri.next_lsn == next_before + 2) {
                CHECK_RC(fspace_wal_reader_next(rd, &l, &d, &n), 1);
                CHECK(l == next_before + 1 && n == 5 && d != NULL && memcmp(d, "maybe", 5) == 0);
            }
            CHECK_RC(fspace_wal_reader_next(rd, &l, &d, &n), 0);
            fspace_wal_reader_free(rd);
        }
    }
    /* release everything before the new records: only the current
     * segment is kept, and the records before are gone */
    CHECK_OK(fspace_wal_release_before(wal, next_before, NULL, 0));
    {
        fspace_wal_reader *rd = (fspace_wal_reader *)(uintptr_t)0x1;
        int rc = fspace_wal_reader_new(wal, g_lsn[first_kept], &rd);
        CHECK(rc == -ERANGE || rc == 0);
        if (rc == 0)
            fspace_wal_reader_free(rd);
        else
            CHECK(rd == (fspace_wal_reader *)(uintptr_t)0x1);
    }
    CHECK_OK(fspace_wal_close(wal));
}

/* ---- commits from several threads (fspace_wal is thread-safe) -------- */

#define THREADS 4
#define PER_THREAD 25

struct worker {
    fspace_wal *wal;
    unsigned id;
    int failures;
    uint64_t lsn[PER_THREAD];
};

/* The payload of record k of thread t: 2000 bytes. */
#define PAYLOAD 2000
static void payload(char *buf, unsigned t, unsigned k)
{
    size_t j;
    int n = snprintf(buf, PAYLOAD, "t%u-r%u:", t, k);
    for (j = (size_t)n; j < PAYLOAD; j++)
        buf[j] = (char)pat(j, t * 1000 + k);
}

static void *commit_worker(void *arg)
{
    struct worker *w = (struct worker *)arg;
    unsigned k;
    char msg[PAYLOAD];
    for (k = 0; k < PER_THREAD; k++) {
        payload(msg, w->id, k);
        if (fspace_wal_commit(w->wal, msg, sizeof msg, &w->lsn[k]) != 0)
            w->failures++;
    }
    return NULL;
}

static void test_threads(void)
{
    char dir[4096];
    fspace_wal_options o;
    fspace_wal *wal = NULL;
    struct worker w[THREADS];
    pthread_t t[THREADS];
    unsigned i, k, started = 0;
    uint64_t next = 0;

    section("commits from %d threads", THREADS);
    join(dir, sizeof dir, g_work, "threads");
    options(&o);
    o.segment_size = (uint64_t)(64 * KiB); /* the smallest */
    o.prepare_ahead = 1;
    if (CHECK_OK(fspace_wal_open(dir, &o, &wal)) != 0 || wal == NULL)
        return;
    for (i = 0; i < THREADS; i++) {
        w[i].wal = wal;
        w[i].id = i;
        w[i].failures = 0;
        if (pthread_create(&t[i], NULL, commit_worker, &w[i]) != 0) {
            CHECK(!"pthread_create");
            break;
        }
        started++;
    }
    for (i = 0; i < started; i++)
        pthread_join(t[i], NULL);
    for (i = 0; i < started; i++)
        CHECK(w[i].failures == 0);
    CHECK_OK(fspace_wal_next_lsn(wal, &next));
    CHECK(next >= 1 + THREADS * PER_THREAD);
    {
        /* every committed record is there once, at its LSN */
        fspace_wal_reader *rd = NULL;
        unsigned seen = 0;
        if (started == THREADS && CHECK_OK(fspace_wal_reader_new(wal, 0, &rd)) == 0 && rd != NULL) {
            uint64_t l = 0;
            const void *d = NULL;
            size_t n = 0;
            while (fspace_wal_reader_next(rd, &l, &d, &n) == 1) {
                char want[PAYLOAD];
                int found = 0;
                for (i = 0; i < THREADS && !found; i++)
                    for (k = 0; k < PER_THREAD && !found; k++)
                        if (w[i].lsn[k] == l) {
                            payload(want, i, k);
                            CHECK(n == PAYLOAD && memcmp(d, want, n) == 0);
                            found = 1;
                        }
                CHECK(found);
                seen++;
            }
            CHECK(seen == THREADS * PER_THREAD);
            fspace_wal_reader_free(rd);
        }
    }
    /* 200 KiB of records in 64 KiB segments */
    CHECK(count_segments(dir) >= 3);
    CHECK_OK(fspace_wal_close(wal));
}

int main(int argc, char **argv)
{
    uint64_t next = 0;
    unsigned first_kept = 0;

    g_prog = "test_wal";
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    make_work_dir(g_work, sizeof g_work, argv[1]);
    join(g_log, sizeof g_log, g_work, "log");
    g_buf = (unsigned char *)malloc((size_t)MiB);
    if (g_buf == NULL) {
        fprintf(stderr, "%s: out of memory\n", g_prog);
        rm_rf(g_work);
        return 1;
    }

    test_options();
    test_first_open(&next, &first_kept);
    if (next != 0)
        test_reopen(next, first_kept);
    test_threads();

    section("NULL handles");
    CHECK_OK(fspace_wal_close(NULL));
    fspace_wal_free(NULL);
    fspace_wal_reader_free(NULL);

    free(g_buf);
    rm_rf(g_work);
    return g_failed ? 1 : 0;
}
