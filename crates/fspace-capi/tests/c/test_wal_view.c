/*
 * test_wal_view.c: fspace_wal_view_open (plain and
 * FSPACE_WAL_VIEW_TO_DAMAGE), _recovery, _json, _damage, _reader_new
 * (read with fspace_wal_reader_next), _free: beside a live writer; on a
 * log whose first segment is damaged; on a filesystem filled until the
 * log's writable open fails with -ENOSPC (its message says the records
 * are intact, and the view reads every committed one); bad input (NULL,
 * unknown flag, missing directory, a directory without a log, a file).
 *
 * Usage: test_wal_view DIR. Works in DIR/test_wal_view.PID, removed at the
 * end. Exit: 0 all checks passed, 1 a check failed.
 */
#define _GNU_SOURCE 1
#include "check.h"
#include <sys/statfs.h>
#include <sys/statvfs.h>

#define KiB 1024LL
#define MiB (1024LL * 1024LL)
#define NREC 120
#define MAXREC 2000

static char g_work[4096];

/* Record i (from 0): its length and bytes. */
static size_t rec_len(unsigned i)
{
    return (size_t)((i * 7919u) % (20u * 1024u)) + 1u;
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
    if (len != rec_len(i) || p == NULL)
        return 0;
    for (j = 0; j < len; j++)
        if (p[j] != pat(j, i))
            return 0;
    return 1;
}

static void options(fspace_wal_options *o)
{
    fspace_wal_options_init(o, sizeof *o);
    o->segment_size = (uint64_t)MiB;
    o->prepare_ahead = 1;
}

/* Commits records first..n-1 to `wal`, their LSNs into lsn[]; returns how
 * many were committed (stops at the first failure, whose code goes to
 * *rc). */
static unsigned commit_records(fspace_wal *wal, unsigned first, unsigned n, uint64_t *lsn,
                               int *rc)
{
    unsigned char *buf = (unsigned char *)malloc(32 * 1024);
    unsigned i;
    *rc = 0;
    if (buf == NULL)
        return 0;
    for (i = first; i < n; i++) {
        rec_fill(buf, i);
        *rc = fspace_wal_commit(wal, buf, rec_len(i), &lsn[i]);
        if (*rc != 0)
            break;
    }
    free(buf);
    return i - first;
}

/* Reads the view from `from` (an LSN) on: the records must be records
 * first.. in order with lsn[]; returns how many were read. */
static unsigned read_view(const fspace_wal_view *view, uint64_t from, unsigned first,
                          const uint64_t *lsn, unsigned total)
{
    fspace_wal_reader *rd = NULL;
    unsigned i = first;
    int rc;
    if (CHECK_OK(fspace_wal_view_reader_new(view, from, &rd)) != 0 || rd == NULL)
        return 0;
    for (;;) {
        uint64_t l = 0;
        const void *data = NULL;
        size_t len = 0;
        rc = fspace_wal_reader_next(rd, &l, &data, &len);
        if (rc != 1)
            break;
        if (i >= total || l != lsn[i] || !rec_is(data, len, i)) {
            fail_(__LINE__, "record %u read back differs: lsn %llu, len %zu", i,
                  (unsigned long long)l, len);
            break;
        }
        i++;
    }
    if (rc < 0)
        CHECK_OK(rc);
    fspace_wal_reader_free(rd);
    return i - first;
}

static void test_beside_a_writer(void)
{
    char dir[4096];
    fspace_wal_options o;
    fspace_wal *wal = NULL;
    fspace_wal_view *view = NULL;
    fspace_wal_reader *rd = NULL;
    fspace_wal_recovery_info info;
    const char *json = NULL, *msg = NULL;
    uint64_t lsn[NREC];
    unsigned n;
    int rc;

    section("view beside a writer");
    join(dir, sizeof dir, g_work, "live");
    options(&o);
    if (CHECK_OK(fspace_wal_open(dir, &o, &wal)) != 0)
        return;
    n = commit_records(wal, 0, NREC, lsn, &rc);
    CHECK_OK(rc);
    CHECK(n == NREC);
    /* The view takes no lock: it opens while the log is open. */
    if (CHECK_OK(fspace_wal_view_open(dir, 0, &view)) == 0) {
        memset(&info, 0xFF, sizeof info);
        CHECK_OK(fspace_wal_view_recovery(view, &info, sizeof info));
        CHECK(!info.created);
        CHECK(info.records == NREC);
        CHECK(info.first_lsn == lsn[0] && info.next_lsn == lsn[NREC - 1] + 1);
        CHECK(info.segments >= 2);
        CHECK_OK(fspace_wal_view_json(view, &json));
        CHECK(json != NULL && strstr(json, "\"read_only\": true") != NULL);
        CHECK_RC(fspace_wal_view_damage(view, &msg), 0);
        CHECK(msg == NULL);
        CHECK(read_view(view, 0, 0, lsn, NREC) == NREC);
        CHECK(read_view(view, lsn[50], 50, lsn, NREC) == NREC - 50);
        CHECK(read_view(view, lsn[NREC - 1] + 1, NREC, lsn, NREC) == 0);
        /* A reader outlives its view. */
        CHECK_OK(fspace_wal_view_reader_new(view, lsn[NREC - 1], &rd));
        fspace_wal_view_free(view);
        if (rd != NULL) {
            uint64_t l = 0;
            const void *data = NULL;
            size_t len = 0;
            CHECK_RC(fspace_wal_reader_next(rd, &l, &data, &len), 1);
            CHECK(l == lsn[NREC - 1] && rec_is(data, len, NREC - 1));
            CHECK_RC(fspace_wal_reader_next(rd, &l, &data, &len), 0);
            fspace_wal_reader_free(rd);
        }
    }
    CHECK_OK(fspace_wal_close(wal));
}

static void test_damage(void)
{
    char dir[4096], seg[4096];
    fspace_wal_options o;
    fspace_wal *wal = NULL;
    fspace_wal_view *view = NULL;
    fspace_wal_recovery_info info;
    const char *msg = NULL;
    uint64_t lsn[NREC];
    unsigned n, read;
    int rc, fd;

    section("view of a damaged log");
    join(dir, sizeof dir, g_work, "damaged");
    options(&o);
    if (CHECK_OK(fspace_wal_open(dir, &o, &wal)) != 0)
        return;
    n = commit_records(wal, 0, NREC, lsn, &rc);
    CHECK_OK(rc);
    CHECK_OK(fspace_wal_close(wal));
    if (n != NREC)
        return;
    /* Garbage in the middle of the first segment's records. */
    join(seg, sizeof seg, dir, "000000000001.seg");
    fd = open(seg, O_WRONLY);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    CHECK(write_pattern(fd, 256 * KiB, 4096, 99) == 0);
    close(fd);

    CHECK_RC(fspace_wal_view_open(dir, 0, &view), -EUCLEAN);
    CHECK(strstr(fspace_last_error(), seg) != NULL);
    if (CHECK_OK(fspace_wal_view_open(dir, FSPACE_WAL_VIEW_TO_DAMAGE, &view)) != 0)
        return;
    CHECK_RC(fspace_wal_view_damage(view, &msg), 1);
    CHECK(msg != NULL && strstr(msg, seg) != NULL);
    note("damage: %s", msg ? msg : "(none)");
    CHECK_OK(fspace_wal_view_recovery(view, &info, sizeof info));
    read = read_view(view, 0, 0, lsn, NREC);
    /* Every record before the damage, none after it. */
    CHECK(read > 0 && read < NREC);
    CHECK(info.next_lsn == lsn[0] + read);
    fspace_wal_view_free(view);
}

/* Free bytes of the filesystem holding `dir` (root may use them all). */
static unsigned long long free_bytes(const char *dir)
{
    struct statvfs st;
    sync();
    if (statvfs(dir, &st) != 0)
        return 0;
    return (unsigned long long)st.f_bfree * st.f_frsize;
}

static void test_full_filesystem(void)
{
    char dir[4096], ballast[4096];
    fspace_wal_options o;
    fspace_wal *wal = NULL;
    fspace_wal_view *view = NULL;
    fspace_wal_recovery_info info;
    struct statfs sf;
    static uint64_t lsn[MAXREC];
    unsigned long long target;
    unsigned n;
    int rc, fd;
    char says[256];

    section("full filesystem");
    join(dir, sizeof dir, g_work, "full");
    join(ballast, sizeof ballast, g_work, "ballast");
    /* btrfs runs out of metadata space at its own pace (the Rust ENOSPC
     * tests leave it out too). */
    if (statfs(g_work, &sf) == 0 && sf.f_type == 0x9123683E) {
        note("btrfs: full filesystem not tried");
        return;
    }
    options(&o);
    if (CHECK_OK(fspace_wal_open(dir, &o, &wal)) != 0)
        return;
    n = commit_records(wal, 0, 1, lsn, &rc);
    CHECK_OK(rc);
    /* Take all the space but 256 KiB (less than a segment) with
     * fallocate(2); where it is not supported (ext4 without extents, FUSE)
     * filling would take minutes per build: not tried there. */
    fd = open(ballast, O_WRONLY | O_CREAT | O_EXCL, 0644);
    CHECK(fd >= 0);
    if (fd < 0) {
        fspace_wal_free(wal);
        return;
    }
    target = free_bytes(g_work);
    target = target > 256 * KiB ? target - 256 * KiB : 0;
    while (target > 0 && fallocate(fd, 0, 0, (off_t)target) != 0) {
        if (errno == EOPNOTSUPP) {
            note("fallocate not supported: full filesystem not tried");
            close(fd);
            unlink(ballast);
            CHECK_OK(fspace_wal_close(wal));
            return;
        }
        target = target > (unsigned long long)MiB ? target - (unsigned long long)MiB : 0;
    }
    close(fd);
    n += commit_records(wal, 1, MAXREC, lsn, &rc);
    CHECK_RC(rc, -ENOSPC);
    note("ENOSPC after %u commits: %s", n, fspace_last_error());
    (void)fspace_wal_close(wal); /* nothing is left to sync */
    wal = NULL;

    CHECK_RC(fspace_wal_open(dir, &o, &wal), -ENOSPC);
    if (wal != NULL)
        fspace_wal_free(wal);
    snprintf(says, sizeof says, "its %u records (LSN 1 to %u) are intact", n, n);
    CHECK(strstr(fspace_last_error(), says) != NULL);
    CHECK(strstr(fspace_last_error(), "fspace_wal_view_open") != NULL);
    CHECK(strstr(fspace_last_error(), dir) != NULL);
    note("writable open: %s", fspace_last_error());

    if (CHECK_OK(fspace_wal_view_open(dir, 0, &view)) == 0) {
        CHECK_OK(fspace_wal_view_recovery(view, &info, sizeof info));
        CHECK(info.records == n && info.first_lsn == 1 && info.next_lsn == n + 1);
        CHECK(read_view(view, 0, 0, lsn, n) == n);
        fspace_wal_view_free(view);
    }
    unlink(ballast);
}

static void test_bad_input(void)
{
    char missing[4096], empty[4096], file[4096];
    fspace_wal_view *view = NULL;
    fspace_wal_recovery_info info;
    fspace_wal_reader *rd = NULL;
    const char *s = NULL;
    int fd;

    section("bad input");
    join(missing, sizeof missing, g_work, "missing");
    join(empty, sizeof empty, g_work, "empty");
    join(file, sizeof file, g_work, "file");
    CHECK(mkdir(empty, 0755) == 0);
    fd = open(file, O_WRONLY | O_CREAT, 0644);
    CHECK(fd >= 0);
    if (fd >= 0)
        close(fd);

    CHECK_RC(fspace_wal_view_open(NULL, 0, &view), -EINVAL);
    CHECK_RC(fspace_wal_view_open(empty, 0, NULL), -EINVAL);
    CHECK_RC(fspace_wal_view_open(empty, 4, &view), -EINVAL);
    CHECK(strstr(fspace_last_error(), "unknown flags") != NULL);
    CHECK(view == NULL);
    CHECK_RC(fspace_wal_view_open(missing, 0, &view), -ENOENT);
    CHECK(strstr(fspace_last_error(), missing) != NULL);
    CHECK_RC(fspace_wal_view_open(empty, 0, &view), -ENOENT);
    CHECK(strstr(fspace_last_error(), empty) != NULL);
    CHECK(strstr(fspace_last_error(), "holds no log") != NULL);
    CHECK_RC(fspace_wal_view_open(file, FSPACE_WAL_VIEW_TO_DAMAGE, &view), -ENOTDIR);
    CHECK(strstr(fspace_last_error(), file) != NULL);
    CHECK(view == NULL);
    CHECK(count_entries(empty) == 0); /* nothing written */

    CHECK_RC(fspace_wal_view_recovery(NULL, &info, sizeof info), -EINVAL);
    CHECK_RC(fspace_wal_view_json(NULL, &s), -EINVAL);
    CHECK_RC(fspace_wal_view_damage(NULL, &s), -EINVAL);
    CHECK_RC(fspace_wal_view_reader_new(NULL, 0, &rd), -EINVAL);
    CHECK(s == NULL && rd == NULL);
    fspace_wal_view_free(NULL);
}

int main(int argc, char **argv)
{
    g_prog = "test_wal_view";
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    make_work_dir(g_work, sizeof g_work, argv[1]);
    test_bad_input();
    test_beside_a_writer();
    test_damage();
    test_full_filesystem();
    rm_rf(g_work);
    return g_failed ? 1 : 0;
}
