/*
 * test_grow.c: fspace_grow_options_init, fspace_grow (create, each
 * strategy with and without fallback, never shrinking, report NULL),
 * fspace_grow_report_get/_reason/_json/_fallback/_note/_free,
 * fspace_grow_fd (with and without a path) and fspace_allocate_range
 * (data, holes and beyond EOF).
 *
 * Usage: test_grow DIR. Works in DIR/test_grow.PID, removed at the end.
 * Exit: 0 all checks passed, 1 a check failed, 77 not applicable here.
 */
#define _GNU_SOURCE 1
#include "check.h"
#define KiB 1024LL
#define MiB (1024LL * 1024LL)

static char g_work[4096];
static fspace_fs_facts g_facts;
static fspace_fs_info *g_info = NULL;
static int g_caps_known = 0;
static bool g_caps[8];

static int known_strategy(fspace_strategy s)
{
    return s == FSPACE_STRATEGY_SPARSE || s == FSPACE_STRATEGY_RESERVE ||
           s == FSPACE_STRATEGY_ALLOCATE || s == FSPACE_STRATEGY_WRITE_ZEROES ||
           s == FSPACE_STRATEGY_ZERO_FILL;
}

static const char *sname(fspace_strategy s)
{
    const char *n = fspace_strategy_name(s);
    return n ? n : "?";
}

/* Makes `name` with `len` pattern bytes of `seed`; returns 0 on success. */
static int make_file(const char *path, long long len, unsigned seed)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int rc;
    if (fd < 0)
        return -1;
    rc = write_pattern(fd, 0, (size_t)len, seed);
    if (close(fd) != 0)
        rc = -1;
    return rc;
}

/* Checks that `path` is `len` bytes: pattern `seed` up to `data`, zeros after. */
static void check_content(const char *path, long long len, long long data, unsigned seed)
{
    size_t n = 0;
    unsigned char *buf = read_all(path, &n);
    CHECK(buf != NULL);
    if (buf == NULL)
        return;
    CHECK((long long)n == len);
    if ((long long)n >= data) {
        CHECK(is_pattern(buf, 0, (size_t)data, seed));
        CHECK(is_zero(buf, (size_t)data, n));
    }
    free(buf);
}

/* No temporary file of a creation is left in the work directory. */
static void check_no_temp(void)
{
    DIR *d = opendir(g_work);
    struct dirent *e;
    CHECK(d != NULL);
    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        if (strstr(e->d_name, "fspace-tmp") != NULL) {
            fail_(__LINE__, "a temporary file is left behind: %s", e->d_name);
        }
    }
    closedir(d);
}

/* The checks every report passes. */
/* Each fallback by index, as values: the strategy abandoned, a kind that
 * says "not possible here", the errno behind it, the sentence; -ERANGE
 * past the last. The notes likewise, each with a kind this header names. */
static void check_fallbacks_and_notes(fspace_grow_report *r, const fspace_grow_summary *s)
{
    uint32_t i;
    fspace_reason why;
    fspace_note n;
    fspace_strategy tried = 0;
    for (i = 0; i < s->fallbacks; i++) {
        memset(&why, 0xab, sizeof why);
        if (CHECK_OK(fspace_grow_report_fallback(r, i, &tried, &why, sizeof why)) != 0)
            continue;
        CHECK(known_strategy(tried) && tried != s->strategy);
        CHECK(why.kind == FSPACE_ERROR_UNSUPPORTED);
        CHECK(why.errnum == EOPNOTSUPP || why.errnum == ENOSYS || why.errnum == EINVAL);
        CHECK(why.text != NULL && why.text[0] != '\0');
        note("  fell back from %s: kind %u, errno %d: %s", sname(tried), (unsigned)why.kind,
             why.errnum, why.text ? why.text : "?");
    }
    CHECK_RC(fspace_grow_report_fallback(r, s->fallbacks, &tried, &why, sizeof why), -ERANGE);
    CHECK_RC(fspace_grow_report_fallback(r, 0, NULL, NULL, sizeof why), -EINVAL);
    CHECK_RC(fspace_grow_report_fallback(r, 0, NULL, &why, sizeof why - 1), -EINVAL);
    for (i = 0; i < 64; i++) {
        int rc = fspace_grow_report_note(r, i, &n, sizeof n);
        if (rc == -ERANGE)
            break;
        if (CHECK_OK(rc) != 0)
            break;
        CHECK(n.kind != FSPACE_NOTE_OTHER);
        CHECK(n.reserved[0] == 0 && n.reserved[3] == 0);
        CHECK(n.text != NULL && n.text[0] != '\0');
    }
    CHECK(i < 64);
    CHECK_RC(fspace_grow_report_note(r, 0, NULL, sizeof n), -EINVAL);
}

static void check_report(fspace_grow_report *r, fspace_grow_summary *s)
{
    const char *reason = NULL, *json = NULL;
    memset(s, 0, sizeof *s);
    CHECK_OK(fspace_grow_report_get(r, s, sizeof *s));
    CHECK(known_strategy(s->strategy));
    CHECK(s->requested == FSPACE_STRATEGY_AUTO || known_strategy(s->requested));
    CHECK(s->new_len >= s->old_len);
    CHECK(s->write_syscalls <= s->syscalls);
    if (CHECK_OK(fspace_grow_report_reason(r, &reason)) == 0) {
        CHECK(reason != NULL && reason[0] != '\0');
    }
    if (CHECK_OK(fspace_grow_report_json(r, &json)) == 0) {
        CHECK(starts_with_char(json, '{'));
        if (json != NULL) {
            CHECK(strstr(json, sname(s->strategy)) != NULL);
            CHECK(strstr(json, "fallbacks") != NULL);
        }
    }
    {
        const char *again = NULL;
        CHECK_OK(fspace_grow_report_json(r, &again));
        CHECK(again == json);
    }
    check_fallbacks_and_notes(r, s);
}

static void test_options_init(void)
{
    fspace_grow_options o;
    section("grow_options_init");
    memset(&o, 0xFF, sizeof o);
    CHECK_OK(fspace_grow_options_init(&o, sizeof o));
    CHECK(o.strategy == FSPACE_STRATEGY_AUTO);
    CHECK(o.intent == FSPACE_INTENT_BULK);
    CHECK(o.fallback == true);
    CHECK(o.sync == false);
    CHECK(o.create == false);
    CHECK(o.check_free_space == true);
    CHECK(o.use_saved == true);
}

static void test_create(void)
{
    char path[4096];
    fspace_grow_options o;
    fspace_grow_report *r = (fspace_grow_report *)(uintptr_t)0x1;
    fspace_grow_summary s;
    int rc;

    join(path, sizeof path, g_work, "created");

    section("grow a missing file without create");
    fspace_grow_options_init(&o, sizeof o);
    CHECK_RC(fspace_grow(path, MiB, &o, &r), -ENOENT);
    CHECK(r == (fspace_grow_report *)(uintptr_t)0x1);
    CHECK(file_size(path) == -1);
    CHECK(strstr(fspace_last_error(), "created") != NULL);

    section("grow with create");
    o.create = true;
    o.sync = true;
    r = NULL;
    rc = CHECK_OK(fspace_grow(path, MiB, &o, &r));
    if (rc == 0) {
        CHECK(r != NULL);
        if (r != NULL) {
            check_report(r, &s);
            CHECK(s.created == true);
            CHECK(s.synced == true);
            CHECK(s.old_len == 0);
            CHECK(s.new_len == (uint64_t)MiB);
            CHECK(s.requested == FSPACE_STRATEGY_AUTO);
            if (g_facts.network)
                CHECK(s.strategy == FSPACE_STRATEGY_ZERO_FILL);
            note("create: %s", sname(s.strategy));
        }
        fspace_grow_report_free(r);
        CHECK(file_size(path) == MiB);
        check_content(path, MiB, 0, 0);
    }
    check_no_temp();

    section("grow with create of an existing file");
    r = NULL;
    rc = CHECK_OK(fspace_grow(path, 2 * MiB, &o, &r));
    if (rc == 0 && r != NULL) {
        check_report(r, &s);
        CHECK(s.created == false);
        CHECK(s.old_len == (uint64_t)MiB);
        CHECK(s.new_len == (uint64_t)(2 * MiB));
    }
    fspace_grow_report_free(r);
    CHECK(file_size(path) == 2 * MiB);
    check_content(path, 2 * MiB, 0, 0);
    unlink(path);
}

/* The capability that says whether strategy `s` can work here, or -1. */
static int cap_of(fspace_strategy s)
{
    switch (s) {
    case FSPACE_STRATEGY_RESERVE: return FSPACE_CAP_KEEP_SIZE;
    case FSPACE_STRATEGY_ALLOCATE: return FSPACE_CAP_FALLOCATE;
    case FSPACE_STRATEGY_WRITE_ZEROES: return FSPACE_CAP_WRITE_ZEROES;
    default: return -1;
    }
}

static void test_strategies(void)
{
    static const fspace_strategy all[] = {
        FSPACE_STRATEGY_SPARSE, FSPACE_STRATEGY_RESERVE, FSPACE_STRATEGY_ALLOCATE,
        FSPACE_STRATEGY_WRITE_ZEROES, FSPACE_STRATEGY_ZERO_FILL,
    };
    const long long data = 64 * KiB + 100; /* not block-aligned on purpose */
    const long long target = data + MiB;
    size_t i;
    int fb;
    char path[4096];

    join(path, sizeof path, g_work, "strategy");
    for (i = 0; i < sizeof all / sizeof all[0]; i++) {
        for (fb = 1; fb >= 0; fb--) {
            fspace_strategy want = all[i];
            fspace_grow_options o;
            fspace_grow_report *r = (fspace_grow_report *)(uintptr_t)0x1;
            int rc, cap = cap_of(want);
            unsigned seed = (unsigned)(i * 2 + (unsigned)fb);
            int supported = cap < 0 ? 1 : (g_caps_known ? (g_caps[cap] ? 1 : 0) : -1);

            section("strategy %s, fallback %s", sname(want), fb ? "true" : "false");
            if (make_file(path, data, seed) != 0) {
                CHECK(!"make the file");
                continue;
            }
            fspace_grow_options_init(&o, sizeof o);
            o.strategy = want;
            o.fallback = fb ? true : false;
            rc = fspace_grow(path, target, &o, &r);
            note("%s fallback=%d: rc %d (%s)", sname(want), fb, rc, errname(rc));
            if (rc == 0) {
                fspace_grow_summary s;
                CHECK(r != NULL && r != (fspace_grow_report *)(uintptr_t)0x1);
                if (r == NULL || r == (fspace_grow_report *)(uintptr_t)0x1)
                    continue;
                check_report(r, &s);
                note("  used %s after %u fallbacks, %llu bytes written", sname(s.strategy),
                     (unsigned)s.fallbacks, (unsigned long long)s.bytes_written);
                CHECK(s.requested == want);
                CHECK(s.created == false);
                CHECK(s.synced == false);
                CHECK(s.old_len == (uint64_t)data);
                if (s.strategy == want) {
                    CHECK(s.fallbacks == 0);
                } else {
                    /* fell back: only when allowed, and it says so */
                    CHECK(fb);
                    CHECK(s.fallbacks > 0);
                    CHECK(s.strategy == FSPACE_STRATEGY_ZERO_FILL);
                    CHECK(want == FSPACE_STRATEGY_ALLOCATE || want == FSPACE_STRATEGY_WRITE_ZEROES);
                    CHECK(supported != 1);
                }
                if (!fb)
                    CHECK(s.strategy == want);
                if (s.strategy == want && supported == 0)
                    CHECK(!"succeeded although the capability was measured unsupported");
                if (s.strategy == FSPACE_STRATEGY_RESERVE) {
                    CHECK(s.new_len == (uint64_t)data);
                    CHECK(file_size(path) == data);
                    check_content(path, data, data, seed);
                } else {
                    CHECK(s.new_len == (uint64_t)target);
                    CHECK(file_size(path) == target);
                    check_content(path, target, data, seed);
                }
                if (s.strategy == FSPACE_STRATEGY_ZERO_FILL)
                    CHECK(s.bytes_written == (uint64_t)(target - data));
                else
                    CHECK(s.bytes_written == 0);
                if (s.strategy != FSPACE_STRATEGY_ZERO_FILL && s.strategy != FSPACE_STRATEGY_SPARSE)
                    CHECK(s.write_syscalls >= 1);
                fspace_grow_report_free(r);
            } else {
                /* unsupported here: refused, and nothing changed */
                CHECK(rc == -EOPNOTSUPP || rc == -EINVAL);
                CHECK(r == (fspace_grow_report *)(uintptr_t)0x1);
                CHECK(want != FSPACE_STRATEGY_SPARSE && want != FSPACE_STRATEGY_ZERO_FILL);
                /* allocate and write-zeroes fall back to zero-fill, which works */
                if (fb)
                    CHECK(want == FSPACE_STRATEGY_RESERVE);
                CHECK(supported != 1);
                CHECK(fspace_last_error()[0] != '\0');
                CHECK(file_size(path) == data);
                check_content(path, data, data, seed);
                {
                    struct stat st;
                    /* no blocks kept past the end (at most the last block
                     * and some slack for metadata-heavy filesystems) */
                    if (stat(path, &st) == 0)
                        CHECK((long long)st.st_blocks * 512 < target);
                }
            }
            if (fb == 0 && supported == 0)
                CHECK(rc != 0);
            unlink(path);
        }
    }
}

static void test_never_shrinks(void)
{
    char path[4096];
    const long long len = 100 * KiB;
    fspace_grow_report *r = (fspace_grow_report *)(uintptr_t)0x1;
    int rc;

    join(path, sizeof path, g_work, "shrink");
    if (make_file(path, len, 7) != 0) {
        CHECK(!"make the file");
        return;
    }
    section("grow to a smaller target");
    rc = fspace_grow(path, 50 * KiB, NULL, &r);
    note("grow to a smaller size: %d (%s): %s", rc, errname(rc), rc ? fspace_last_error() : "");
    /* never shrinks: either left alone (0) or refused (-EINVAL) */
    CHECK(rc == 0 || rc == -EINVAL);
    if (rc == 0) {
        fspace_grow_summary s;
        CHECK(r != NULL && r != (fspace_grow_report *)(uintptr_t)0x1);
        if (r != NULL && r != (fspace_grow_report *)(uintptr_t)0x1) {
            CHECK_OK(fspace_grow_report_get(r, &s, sizeof s));
            CHECK(s.old_len == (uint64_t)len && s.new_len == (uint64_t)len);
            fspace_grow_report_free(r);
        }
    } else {
        CHECK(r == (fspace_grow_report *)(uintptr_t)0x1);
    }
    CHECK(file_size(path) == len);
    check_content(path, len, len, 7);

    section("grow to the same length");
    r = NULL;
    if (CHECK_OK(fspace_grow(path, len, NULL, &r)) == 0 && r != NULL) {
        fspace_grow_summary s;
        check_report(r, &s);
        CHECK(s.old_len == (uint64_t)len);
        CHECK(s.new_len == (uint64_t)len);
        CHECK(s.bytes_written == 0);
        fspace_grow_report_free(r);
    }
    CHECK(file_size(path) == len);
    check_content(path, len, len, 7);

    section("grow to 0 of a non-empty file");
    r = (fspace_grow_report *)(uintptr_t)0x1;
    rc = fspace_grow(path, 0, NULL, &r);
    CHECK(rc == 0 || rc == -EINVAL);
    if (rc == 0)
        fspace_grow_report_free(r);
    CHECK(file_size(path) == len);

    section("grow with report NULL and options NULL");
    CHECK_OK(fspace_grow(path, len + 300 * KiB, NULL, NULL));
    CHECK(file_size(path) == len + 300 * KiB);
    check_content(path, len + 300 * KiB, len, 7);
    unlink(path);
}

static void test_grow_fd(void)
{
    char path[4096];
    const long long len = 40 * KiB + 5;
    int fd;
    fspace_grow_report *r = NULL;
    fspace_grow_options o;

    join(path, sizeof path, g_work, "by-fd");
    if (make_file(path, len, 3) != 0) {
        CHECK(!"make the file");
        return;
    }
    fd = open(path, O_RDWR);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    CHECK(lseek(fd, 123, SEEK_SET) == 123);

    section("grow_fd with a path");
    if (CHECK_OK(fspace_grow_fd(fd, path, len + 200 * KiB, NULL, &r)) == 0 && r != NULL) {
        fspace_grow_summary s;
        const char *json = NULL;
        check_report(r, &s);
        CHECK(s.old_len == (uint64_t)len);
        CHECK(s.new_len == (uint64_t)(len + 200 * KiB));
        CHECK(s.created == false);
        if (CHECK_OK(fspace_grow_report_json(r, &json)) == 0 && json != NULL)
            CHECK(strstr(json, "by-fd") != NULL);
        fspace_grow_report_free(r);
    }
    CHECK(lseek(fd, 0, SEEK_CUR) == 123);
    CHECK(file_size(path) == len + 200 * KiB);
    check_content(path, len + 200 * KiB, len, 3);

    section("grow_fd without a path");
    r = NULL;
    fspace_grow_options_init(&o, sizeof o);
    o.strategy = FSPACE_STRATEGY_ZERO_FILL;
    o.create = true; /* ignored */
    o.sync = true;
    if (CHECK_OK(fspace_grow_fd(fd, NULL, len + 400 * KiB, &o, &r)) == 0 && r != NULL) {
        fspace_grow_summary s;
        check_report(r, &s);
        CHECK(s.strategy == FSPACE_STRATEGY_ZERO_FILL);
        CHECK(s.old_len == (uint64_t)(len + 200 * KiB));
        CHECK(s.new_len == (uint64_t)(len + 400 * KiB));
        CHECK(s.bytes_written == (uint64_t)(200 * KiB));
        CHECK(s.synced == true);
        CHECK(s.created == false);
        fspace_grow_report_free(r);
    }
    CHECK(lseek(fd, 0, SEEK_CUR) == 123);
    CHECK(file_size(path) == len + 400 * KiB);
    check_content(path, len + 400 * KiB, len, 3);

    section("grow_fd with report NULL, intent log");
    fspace_grow_options_init(&o, sizeof o);
    o.intent = FSPACE_INTENT_LOG;
    CHECK_OK(fspace_grow_fd(fd, path, len + 500 * KiB, &o, NULL));
    CHECK(file_size(path) == len + 500 * KiB);
    check_content(path, len + 500 * KiB, len, 3);

    section("grow_fd intent sparse");
    fspace_grow_options_init(&o, sizeof o);
    o.intent = FSPACE_INTENT_SPARSE;
    r = NULL;
    if (CHECK_OK(fspace_grow_fd(fd, path, len + 600 * KiB, &o, &r)) == 0 && r != NULL) {
        fspace_grow_summary s;
        check_report(r, &s);
        CHECK(s.strategy == FSPACE_STRATEGY_SPARSE);
        CHECK(s.bytes_written == 0);
        fspace_grow_report_free(r);
    }
    CHECK(file_size(path) == len + 600 * KiB);
    check_content(path, len + 600 * KiB, len, 3);
    close(fd);
    unlink(path);
}

/* A file of `total` bytes: pattern in [0, a) and [b, total), a hole in
 * [a, b) (made by not writing it). */
static int make_holey(const char *path, long long a, long long b, long long total, unsigned seed)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    int rc = 0;
    if (fd < 0)
        return -1;
    if (write_pattern(fd, 0, (size_t)a, seed) != 0)
        rc = -1;
    if (write_pattern(fd, (unsigned long long)b, (size_t)(total - b), seed) != 0)
        rc = -1;
    if (fsync(fd) != 0)
        rc = -1;
    close(fd);
    return rc;
}

/* Checks bytes [0, a) and [b, data_end) are the pattern, the rest zero. */
static void check_holey(const char *path, long long a, long long b, long long data_end, long long len,
                        unsigned seed)
{
    size_t n = 0;
    unsigned char *buf = read_all(path, &n);
    CHECK(buf != NULL);
    if (buf == NULL)
        return;
    CHECK((long long)n == len);
    if ((long long)n == len) {
        CHECK(is_pattern(buf, 0, (size_t)a, seed));
        CHECK(is_zero(buf, (size_t)a, (size_t)b));
        CHECK(is_pattern(buf, (size_t)b, (size_t)data_end, seed));
        CHECK(is_zero(buf, (size_t)data_end, n));
    }
    free(buf);
}

static void test_allocate_range(void)
{
    char path[4096];
    const long long a = 64 * KiB, b = 256 * KiB, eof = 320 * KiB;
    const long long off = 32 * KiB, len = 512 * KiB; /* ends at 544 KiB */
    const long long end = off + len;
    fspace_range_summary s;
    int fd, rc;
    struct stat st;

    join(path, sizeof path, g_work, "range");
    if (make_holey(path, a, b, eof, 5) != 0) {
        CHECK(!"make the file");
        return;
    }
    fd = open(path, O_RDWR);
    CHECK(fd >= 0);
    if (fd < 0)
        return;

    section("allocate_range over data, a hole and past EOF");
    memset(&s, 0xA5, sizeof s);
    rc = CHECK_OK(fspace_allocate_range(fd, off, len, &s, sizeof s));
    if (rc == 0) {
        note("allocate_range: %s, %llu holes filled, %llu bytes written, holes_known %d",
             sname(s.strategy), (unsigned long long)s.holes_filled,
             (unsigned long long)s.bytes_written, s.holes_known ? 1 : 0);
        CHECK(s.strategy == FSPACE_STRATEGY_ALLOCATE || s.strategy == FSPACE_STRATEGY_ZERO_FILL);
        CHECK(s.old_len == (uint64_t)eof);
        CHECK(s.new_len == (uint64_t)end);
        CHECK(s.write_syscalls <= s.syscalls);
        CHECK(s.write_syscalls >= 1);
        if (g_caps_known)
            CHECK((s.strategy == FSPACE_STRATEGY_ALLOCATE) == (g_caps[FSPACE_CAP_FALLOCATE] ? 1 : 0));
        if (s.strategy == FSPACE_STRATEGY_ALLOCATE) {
            CHECK(s.bytes_written == 0);
            CHECK(s.holes_filled == 0);
            CHECK(s.holes_known == true);
        } else {
            /* the part past EOF, and the hole: seen with SEEK_HOLE, or
             * where it cannot see holes (sshfs) found by reading (the
             * pattern may hold zero blocks of its own, written with the
             * zeros they hold) */
            if (s.holes_known) {
                CHECK(s.holes_filled == 1);
                CHECK(s.bytes_written == (uint64_t)((b - a) + (end - eof)));
            } else {
                CHECK(s.holes_filled >= 1);
                CHECK(s.bytes_written >= (uint64_t)((b - a) + (end - eof)));
            }
            if (g_caps_known && g_caps[FSPACE_CAP_SEEK_HOLE])
                CHECK(s.holes_known);
        }
        section("allocate_range: holes_known where SEEK_HOLE does not work");
        /* The header: holes_known is false when SEEK_HOLE could not show
         * the holes; the blocks that read as zeros were written instead.
         * The file has a hole at [a, b). */
        if (s.strategy == FSPACE_STRATEGY_ZERO_FILL && g_caps_known && !g_caps[FSPACE_CAP_SEEK_HOLE])
            CHECK(s.holes_known == false);
        section("allocate_range over data, a hole and past EOF");
        if (fstat(fd, &st) == 0) {
            CHECK(st.st_size == end);
            /* the range is allocated now */
            CHECK((long long)st.st_blocks * 512 >= len);
        }
    }
    CHECK(file_size(path) == end);
    check_holey(path, a, b, eof, end, 5);

    section("allocate_range inside the data, summary NULL");
    CHECK_OK(fspace_allocate_range(fd, 0, 4 * KiB, NULL, 0));
    CHECK(file_size(path) == end);
    check_holey(path, a, b, eof, end, 5);

    section("allocate_range starting past EOF");
    memset(&s, 0, sizeof s);
    rc = CHECK_OK(fspace_allocate_range(fd, end + 100 * KiB, 50 * KiB, &s, sizeof s));
    if (rc == 0) {
        CHECK(s.old_len == (uint64_t)end);
        CHECK(s.new_len == (uint64_t)(end + 150 * KiB));
        if (s.strategy == FSPACE_STRATEGY_ZERO_FILL)
            CHECK(s.bytes_written == (uint64_t)(50 * KiB));
    }
    CHECK(file_size(path) == end + 150 * KiB);
    check_holey(path, a, b, eof, end + 150 * KiB, 5);

    section("allocate_range of one byte at EOF");
    CHECK_OK(fspace_allocate_range(fd, end + 150 * KiB, 1, &s, sizeof s));
    CHECK(file_size(path) == end + 150 * KiB + 1);
    check_holey(path, a, b, eof, end + 150 * KiB + 1, 5);
    close(fd);
    unlink(path);
}

int main(int argc, char **argv)
{
    g_prog = "test_grow";
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    make_work_dir(g_work, sizeof g_work, argv[1]);

    section("describe the filesystem");
    memset(&g_facts, 0, sizeof g_facts);
    if (CHECK_OK(fspace_fs_info_new(g_work, &g_info)) == 0) {
        CHECK_OK(fspace_fs_info_get(g_info, &g_facts, sizeof g_facts));
        g_caps_known = load_caps(g_info, g_caps);
    }

    test_options_init();
    test_create();
    test_strategies();
    test_never_shrinks();
    test_grow_fd();
    test_allocate_range();

    fspace_fs_info_free(g_info);
    CHECK_ENTRIES(g_work, 0);
    rm_rf(g_work);
    return g_failed ? 1 : 0;
}
