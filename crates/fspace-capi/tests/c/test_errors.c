/*
 * test_errors.c: bad input through every function of the C API: NULL for
 * each required pointer (-EINVAL, outputs untouched), _free(NULL) and
 * fspace_wal_close(NULL), negative offsets and lengths (-EINVAL), offset +
 * length past INT64_MAX (-EFBIG), negative, closed and read-only
 * descriptors (-EBADF), directories, pipes and devices, unknown constants
 * (-EINVAL), missing paths (-ENOENT). After each failure: the message of
 * fspace_last_error() is new, non-empty and names the function or the
 * path, and nothing was created or changed.
 *
 * Usage: test_errors DIR. Works in DIR/test_errors.PID, removed at the end.
 * Exit: 0 all checks passed, 1 a check failed, 77 not applicable here.
 */
#define _GNU_SOURCE 1
#include "check.h"
#define KiB 1024LL
#define MiB (1024LL * 1024LL)

static char g_work[4096];
static char g_primer_path[4096];
static char g_primer[4096];
static int g_caps_known = 0;
static bool g_caps[8];

/* Sets the last error to a message no tested call gives, so that a
 * failure that leaves the message alone is seen. */
static void prime(void)
{
    fspace_fs_info *unused = NULL;
    fspace_fs_info_new(g_primer_path, &unused);
    snprintf(g_primer, sizeof g_primer, "%s", fspace_last_error());
}

static void expect_fail_(int rc, int want, const char *mention, const char *what, int line)
{
    const char *m;
    if (check_rc_(rc, want, what, line) != want)
        return;
    m = fspace_last_error();
    if (m == NULL || m[0] == '\0' || strcmp(m, g_primer) == 0) {
        fail_(line, "%s: no new message in fspace_last_error()", what);
    } else if (mention != NULL && strstr(m, mention) == NULL) {
        fail_(line, "%s: the message does not mention \"%s\": %s", what, mention, m);
    }
}

/* FAIL(call, -EXXX, "text"): the call fails with that errno and sets a new
 * message that contains "text" (the function's name or the path). */
#define FAIL(call, want, mention)                                      \
    do {                                                               \
        prime();                                                       \
        expect_fail_((call), (want), (mention), #call, __LINE__);      \
    } while (0)

/* Sentinels: outputs must be left as they were on failure. */
#define BAD_PTR(T) ((T *)(uintptr_t)0x1)

/* A file of `len` pattern bytes of `seed`. */
static void make_file(const char *path, size_t len, unsigned seed)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    CHECK(write_pattern(fd, 0, len, seed) == 0);
    close(fd);
}

/* True if `path` is exactly `len` pattern bytes of `seed`. */
static int file_is(const char *path, size_t len, unsigned seed)
{
    size_t n = 0;
    unsigned char *b = read_all(path, &n);
    int ok = b != NULL && n == len && is_pattern(b, 0, n, seed);
    free(b);
    return ok;
}

/* A descriptor number that is not open (opened, then closed). Only valid
 * while no other thread opens files. */
static int closed_fd(void)
{
    int fd = open("/dev/null", O_RDONLY);
    if (fd >= 0)
        close(fd);
    return fd;
}

static void test_info_errors(void)
{
    fspace_fs_info *info = BAD_PTR(fspace_fs_info);
    fspace_fs_facts facts, keep;
    char missing[4096];
    bool b = true;
    fspace_strategy s = 77;
    const char *j = "sentinel";

    section("fs_info_new");
    FAIL(fspace_fs_info_new(NULL, &info), -EINVAL, "fspace_fs_info_new");
    CHECK(info == BAD_PTR(fspace_fs_info));
    FAIL(fspace_fs_info_new(g_work, NULL), -EINVAL, "fspace_fs_info_new");
    join(missing, sizeof missing, g_work, "missing");
    FAIL(fspace_fs_info_new(missing, &info), -ENOENT, "missing");
    CHECK(info == BAD_PTR(fspace_fs_info));
    CHECK(file_size(missing) == -1);

    info = NULL;
    if (CHECK_OK(fspace_fs_info_new(g_work, &info)) != 0 || info == NULL)
        return;
    section("fs_info_get");
    memset(&facts, 0x5A, sizeof facts);
    memcpy(&keep, &facts, sizeof keep);
    FAIL(fspace_fs_info_get(NULL, &facts, sizeof facts), -EINVAL, "fspace_fs_info_get");
    CHECK(memcmp(&facts, &keep, sizeof facts) == 0);
    FAIL(fspace_fs_info_get(info, NULL, 0), -EINVAL, "fspace_fs_info_get");

    section("fs_info_capability");
    FAIL(fspace_fs_info_capability(NULL, FSPACE_CAP_FALLOCATE, &b), -EINVAL, "fspace_fs_info_capability");
    CHECK(b == true);
    FAIL(fspace_fs_info_capability(info, FSPACE_CAP_FALLOCATE, NULL), -EINVAL, "fspace_fs_info_capability");
    FAIL(fspace_fs_info_capability(info, 99, &b), -EINVAL, "fspace_fs_info_capability");
    CHECK(b == true);
    FAIL(fspace_fs_info_capability(NULL, 99, NULL), -EINVAL, "fspace_fs_info_capability");

    section("fs_info_auto_strategy");
    FAIL(fspace_fs_info_auto_strategy(NULL, FSPACE_INTENT_BULK, &s), -EINVAL, "fspace_fs_info_auto_strategy");
    CHECK(s == 77);
    FAIL(fspace_fs_info_auto_strategy(info, FSPACE_INTENT_BULK, NULL), -EINVAL, "fspace_fs_info_auto_strategy");
    FAIL(fspace_fs_info_auto_strategy(info, 3, &s), -EINVAL, "fspace_fs_info_auto_strategy");
    CHECK(s == 77);

    section("fs_info_json");
    FAIL(fspace_fs_info_json(NULL, &j), -EINVAL, "fspace_fs_info_json");
    CHECK(strcmp(j, "sentinel") == 0);
    FAIL(fspace_fs_info_json(info, NULL), -EINVAL, "fspace_fs_info_json");

    section("fs_info_free(NULL)");
    fspace_fs_info_free(NULL);
    fspace_fs_info_free(info);
}

static void test_grow_errors(void)
{
    char file[4096], missing[4096], nodir[4096], fifo[4096];
    fspace_grow_options o;
    fspace_grow_report *r = BAD_PTR(fspace_grow_report);
    const size_t len = 10000;
    int fd, ro, dfd, p[2];

    join(file, sizeof file, g_work, "grow-file");
    join(missing, sizeof missing, g_work, "grow-missing");
    join(nodir, sizeof nodir, g_work, "no-such-dir/grow-missing");
    make_file(file, len, 1);

    section("grow_options_init(NULL)");
    FAIL(fspace_grow_options_init(NULL, 0), -EINVAL, "fspace_grow_options_init");

    section("grow: NULL path, negative target");
    FAIL(fspace_grow(NULL, 100, NULL, &r), -EINVAL, "fspace_grow");
    CHECK(r == BAD_PTR(fspace_grow_report));
    FAIL(fspace_grow(file, -1, NULL, &r), -EINVAL, "fspace_grow");
    FAIL(fspace_grow(file, INT64_MIN, NULL, &r), -EINVAL, "fspace_grow");
    CHECK(r == BAD_PTR(fspace_grow_report));
    CHECK(file_is(file, len, 1));

    section("grow: unknown constants");
    fspace_grow_options_init(&o, sizeof o);
    o.strategy = 6;
    FAIL(fspace_grow(file, 100000, &o, &r), -EINVAL, "fspace_grow");
    o.strategy = UINT32_MAX;
    FAIL(fspace_grow(file, 100000, &o, &r), -EINVAL, "fspace_grow");
    fspace_grow_options_init(&o, sizeof o);
    o.intent = 3;
    FAIL(fspace_grow(file, 100000, &o, &r), -EINVAL, "fspace_grow");
    CHECK(r == BAD_PTR(fspace_grow_report));
    CHECK(file_is(file, len, 1));
    /* with create: nothing is created either */
    o.create = true;
    FAIL(fspace_grow(missing, 100000, &o, &r), -EINVAL, "fspace_grow");
    fspace_grow_options_init(&o, sizeof o);
    o.create = true;
    FAIL(fspace_grow(missing, -5, &o, &r), -EINVAL, "fspace_grow");
    CHECK(file_size(missing) == -1);
    CHECK(r == BAD_PTR(fspace_grow_report));

    /* untorn units that are not a power of two of at least 512 */
    {
        static const uint32_t bad_units[] = { 3000, 256, 1, 12288, UINT32_MAX };
        size_t i;
        for (i = 0; i < sizeof bad_units / sizeof bad_units[0]; i++) {
            section("grow: untorn unit %u", (unsigned)bad_units[i]);
            fspace_grow_options_init(&o, sizeof o);
            o.untorn_unit = bad_units[i];
            FAIL(fspace_grow(file, 100000, &o, &r), -EINVAL, "power of two");
            o.create = true;
            FAIL(fspace_grow(missing, 100000, &o, &r), -EINVAL, "power of two");
            CHECK(file_size(missing) == -1);
        }
        CHECK(r == BAD_PTR(fspace_grow_report));
        CHECK(file_is(file, len, 1));
        /* as the section above left them, for the next one */
        fspace_grow_options_init(&o, sizeof o);
        o.create = true;
    }

    section("grow: missing files");
    FAIL(fspace_grow(missing, 100000, NULL, &r), -ENOENT, "grow-missing");
    CHECK(file_size(missing) == -1);
    FAIL(fspace_grow(nodir, 100000, &o, &r), -ENOENT, "grow-missing"); /* create, no directory */
    CHECK(file_size(nodir) == -1);
    CHECK(r == BAD_PTR(fspace_grow_report));

    section("grow: not regular files");
    FAIL(fspace_grow(g_work, 100000, NULL, &r), -EISDIR, g_work);
    FAIL(fspace_grow("/dev/null", 100000, NULL, &r), -EINVAL, "/dev/null");
    CHECK(r == BAD_PTR(fspace_grow_report));

    section("grow: a FIFO (-ENXIO)");
    join(fifo, sizeof fifo, g_work, "fifo");
    if (mkfifo(fifo, 0644) == 0) {
        /* the header: "-ENXIO (a FIFO: opened without blocking, it has no
         * reader)" */
        FAIL(fspace_grow(fifo, 100000, NULL, &r), -ENXIO, "fifo");
        CHECK(r == BAD_PTR(fspace_grow_report));
        unlink(fifo);
    } else {
        note("mkfifo: %s (no FIFO check here)", strerror(errno));
    }

    section("grow_fd: bad descriptors");
    FAIL(fspace_grow_fd(-1, file, 100000, NULL, &r), -EBADF, "fspace_grow_fd");
    FAIL(fspace_grow_fd(INT32_MIN, NULL, 100000, NULL, &r), -EBADF, "fspace_grow_fd");
    FAIL(fspace_grow_fd(closed_fd(), NULL, 100000, NULL, &r), -EBADF, "/proc/self/fd/");
    CHECK(r == BAD_PTR(fspace_grow_report));
    ro = open(file, O_RDONLY);
    CHECK(ro >= 0);
    if (ro >= 0) {
        FAIL(fspace_grow_fd(ro, file, 100000, NULL, &r), -EBADF, "grow-file");
        fspace_grow_options_init(&o, sizeof o);
        o.strategy = FSPACE_STRATEGY_ZERO_FILL;
        /* path NULL: the message names the file the descriptor is open on */
        FAIL(fspace_grow_fd(ro, NULL, 100000, &o, &r), -EBADF, "grow-file");
        CHECK(r == BAD_PTR(fspace_grow_report));
        CHECK(file_is(file, len, 1));
        section("grow_fd: a read-only descriptor, sparse growth");
        /* the header: "-EBADF (negative, closed or read-only descriptor)" */
        fspace_grow_options_init(&o, sizeof o);
        o.intent = FSPACE_INTENT_SPARSE;
        FAIL(fspace_grow_fd(ro, file, 100000, &o, &r), -EBADF, "grow-file");
        fspace_grow_options_init(&o, sizeof o);
        o.strategy = FSPACE_STRATEGY_SPARSE;
        FAIL(fspace_grow_fd(ro, file, 100000, &o, &r), -EBADF, "grow-file");
        CHECK(r == BAD_PTR(fspace_grow_report));
        CHECK(file_is(file, len, 1));
        close(ro);
    }

    section("grow_fd: bad arguments");
    fd = open(file, O_RDWR);
    CHECK(fd >= 0);
    if (fd >= 0) {
        FAIL(fspace_grow_fd(fd, file, -1, NULL, &r), -EINVAL, "fspace_grow_fd");
        fspace_grow_options_init(&o, sizeof o);
        o.strategy = 99;
        FAIL(fspace_grow_fd(fd, file, 100000, &o, &r), -EINVAL, "fspace_grow_fd");
        fspace_grow_options_init(&o, sizeof o);
        o.intent = 99;
        FAIL(fspace_grow_fd(fd, NULL, 100000, &o, &r), -EINVAL, "fspace_grow_fd");
        CHECK(r == BAD_PTR(fspace_grow_report));
        CHECK(lseek(fd, 0, SEEK_CUR) == 0);
        close(fd);
    }
    CHECK(file_is(file, len, 1));

    section("grow_fd: a directory, a pipe");
    dfd = open(g_work, O_RDONLY | O_DIRECTORY);
    CHECK(dfd >= 0);
    if (dfd >= 0) {
        FAIL(fspace_grow_fd(dfd, NULL, 100000, NULL, &r), -EISDIR, g_work);
        close(dfd);
    }
    if (pipe(p) == 0) {
        FAIL(fspace_grow_fd(p[1], NULL, 100000, NULL, &r), -EINVAL, "/proc/self/fd/");
        close(p[0]);
        close(p[1]);
    }
    CHECK(r == BAD_PTR(fspace_grow_report));

    section("grow report getters");
    r = NULL;
    if (CHECK_OK(fspace_grow(file, 20000, NULL, &r)) == 0 && r != NULL) {
        fspace_grow_summary s, keep;
        const char *txt = "sentinel";
        memset(&s, 0x5A, sizeof s);
        memcpy(&keep, &s, sizeof keep);
        FAIL(fspace_grow_report_get(NULL, &s, sizeof s), -EINVAL, "fspace_grow_report_get");
        CHECK(memcmp(&s, &keep, sizeof s) == 0);
        FAIL(fspace_grow_report_get(r, NULL, 0), -EINVAL, "fspace_grow_report_get");
        FAIL(fspace_grow_report_reason(NULL, &txt), -EINVAL, "fspace_grow_report_reason");
        CHECK(strcmp(txt, "sentinel") == 0);
        FAIL(fspace_grow_report_reason(r, NULL), -EINVAL, "fspace_grow_report_reason");
        FAIL(fspace_grow_report_json(NULL, &txt), -EINVAL, "fspace_grow_report_json");
        CHECK(strcmp(txt, "sentinel") == 0);
        FAIL(fspace_grow_report_json(r, NULL), -EINVAL, "fspace_grow_report_json");
        {
            fspace_untorn_ready u, ukeep;
            memset(&u, 0x5A, sizeof u);
            memcpy(&ukeep, &u, sizeof u);
            FAIL(fspace_grow_report_untorn(NULL, &u, sizeof u), -EINVAL, "fspace_grow_report_untorn");
            FAIL(fspace_grow_report_untorn(r, NULL, 0), -EINVAL, "fspace_grow_report_untorn");
            /* grown without an untorn unit: nothing to say */
            FAIL(fspace_grow_report_untorn(r, &u, sizeof u), -ENODATA, "untorn unit");
            CHECK(memcmp(&u, &ukeep, sizeof u) == 0);
        }
        fspace_grow_report_free(r);
    }
    fspace_grow_report_free(NULL);
    unlink(file);
    CHECK_ENTRIES(g_work, 0);
}

static void test_range_errors(void)
{
    char file[4096];
    fspace_range_summary s, keep;
    const size_t len = 10000;
    int fd, ro, dfd, nul, ap, p[2];

    join(file, sizeof file, g_work, "range-file");
    make_file(file, len, 2);
    memset(&s, 0x5A, sizeof s);
    memcpy(&keep, &s, sizeof keep);

    section("allocate_range: bad descriptors");
    FAIL(fspace_allocate_range(-1, 0, 4096, &s, sizeof s), -EBADF, "fspace_allocate_range");
    FAIL(fspace_allocate_range(closed_fd(), 0, 4096, &s, sizeof s), -EBADF, "/proc/self/fd/");
    ro = open(file, O_RDONLY);
    CHECK(ro >= 0);
    if (ro >= 0) {
        /* the message names the file the descriptor is open on */
        FAIL(fspace_allocate_range(ro, 0, 100000, &s, sizeof s), -EBADF, "range-file");
        close(ro);
    }
    CHECK(memcmp(&s, &keep, sizeof s) == 0);
    CHECK(file_is(file, len, 2));

    fd = open(file, O_RDWR);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    section("allocate_range: negative or empty ranges");
    FAIL(fspace_allocate_range(fd, -1, 4096, &s, sizeof s), -EINVAL, "fspace_allocate_range");
    FAIL(fspace_allocate_range(fd, INT64_MIN, 4096, &s, sizeof s), -EINVAL, "fspace_allocate_range");
    FAIL(fspace_allocate_range(fd, 0, 0, &s, sizeof s), -EINVAL, "fspace_allocate_range");
    FAIL(fspace_allocate_range(fd, 0, -1, &s, sizeof s), -EINVAL, "fspace_allocate_range");
    FAIL(fspace_allocate_range(fd, 4096, INT64_MIN, &s, sizeof s), -EINVAL, "fspace_allocate_range");

    section("allocate_range: past INT64_MAX");
    FAIL(fspace_allocate_range(fd, INT64_MAX, 1, &s, sizeof s), -EFBIG, "fspace_allocate_range");
    FAIL(fspace_allocate_range(fd, 1, INT64_MAX, &s, sizeof s), -EFBIG, "fspace_allocate_range");
    FAIL(fspace_allocate_range(fd, INT64_MAX / 2 + 1, INT64_MAX / 2 + 1, &s, sizeof s), -EFBIG, "fspace_allocate_range");
    FAIL(fspace_allocate_range(fd, INT64_MAX, INT64_MAX, &s, sizeof s), -EFBIG, "fspace_allocate_range");
    CHECK(memcmp(&s, &keep, sizeof s) == 0);
    CHECK(file_is(file, len, 2));
    CHECK(lseek(fd, 0, SEEK_CUR) == 0);
    close(fd);

    section("allocate_range: a directory");
    dfd = open(g_work, O_RDONLY | O_DIRECTORY);
    CHECK(dfd >= 0);
    if (dfd >= 0) {
        int rc;
        prime();
        rc = fspace_allocate_range(dfd, 0, 4096, &s, sizeof s);
        /* fallocate(2) checks the descriptor is open for writing before it
         * checks the file type, and a directory can only be opened
         * read-only: EBADF (EISDIR is what the man page lists for a
         * directory) */
        CHECK(rc == -EBADF || rc == -EISDIR);
        CHECK(strcmp(fspace_last_error(), g_primer) != 0);
        close(dfd);
    }

    section("allocate_range: a pipe");
    if (pipe(p) == 0) {
        FAIL(fspace_allocate_range(p[1], 0, 4096, &s, sizeof s), -ESPIPE, "/proc/self/fd/");
        /* the read end is not open for writing */
        FAIL(fspace_allocate_range(p[0], 0, 4096, &s, sizeof s), -EBADF, "/proc/self/fd/");
        close(p[0]);
        close(p[1]);
    }

    section("allocate_range: a character device");
    nul = open("/dev/null", O_WRONLY);
    if (nul >= 0) {
        FAIL(fspace_allocate_range(nul, 0, 4096, &s, sizeof s), -ENODEV, "/dev/null");
        close(nul);
    }
    CHECK(memcmp(&s, &keep, sizeof s) == 0);

    section("allocate_range: an O_APPEND descriptor");
    ap = open(file, O_WRONLY | O_APPEND);
    CHECK(ap >= 0);
    if (ap >= 0) {
        int rc;
        prime();
        rc = fspace_allocate_range(ap, 0, 100000, &s, sizeof s);
        /* fallocate works on it; a fill (where fallocate does not) would
         * write at EOF, so it is refused with EBADF */
        if (g_caps_known)
            CHECK(rc == (g_caps[FSPACE_CAP_FALLOCATE] ? 0 : -EBADF));
        else
            CHECK(rc == 0 || rc == -EBADF);
        if (rc != 0) {
            CHECK(memcmp(&s, &keep, sizeof s) == 0);
            CHECK(file_is(file, len, 2));
            CHECK(strstr(fspace_last_error(), "O_APPEND") != NULL);
        } else {
            CHECK(file_size(file) == 100000);
        }
        close(ap);
    }
    unlink(file);
    CHECK_ENTRIES(g_work, 0);
}

static void test_copy_errors(void)
{
    char src[4096], dst[4096], missing[4096], nodir[4096], slash[4096], other[4096];
    fspace_copy_options o;
    fspace_copy_report *r = BAD_PTR(fspace_copy_report);

    join(src, sizeof src, g_work, "copy-src");
    join(dst, sizeof dst, g_work, "copy-dst");
    join(other, sizeof other, g_work, "copy-other");
    join(missing, sizeof missing, g_work, "copy-missing");
    join(nodir, sizeof nodir, g_work, "no-such-dir/copy-dst");
    join(slash, sizeof slash, g_work, "not-a-dir/");
    make_file(src, 50000, 3);
    make_file(other, 3000, 4);

    section("copy_options_init(NULL)");
    FAIL(fspace_copy_options_init(NULL, 0), -EINVAL, "fspace_copy_options_init");

    section("copy: NULL paths");
    FAIL(fspace_copy(NULL, dst, NULL, &r), -EINVAL, "fspace_copy");
    FAIL(fspace_copy(src, NULL, NULL, &r), -EINVAL, "fspace_copy");
    FAIL(fspace_copy(NULL, NULL, NULL, NULL), -EINVAL, "fspace_copy");
    CHECK(r == BAD_PTR(fspace_copy_report));
    CHECK(file_size(dst) == -1);

    section("copy: unknown constants");
    fspace_copy_options_init(&o, sizeof o);
    o.sparse = 3;
    FAIL(fspace_copy(src, dst, &o, &r), -EINVAL, "fspace_copy");
    fspace_copy_options_init(&o, sizeof o);
    o.reflink = 3;
    FAIL(fspace_copy(src, dst, &o, &r), -EINVAL, "fspace_copy");
    o.reflink = UINT32_MAX;
    FAIL(fspace_copy(src, other, &o, &r), -EINVAL, "fspace_copy");
    CHECK(r == BAD_PTR(fspace_copy_report));
    CHECK(file_size(dst) == -1);
    CHECK(file_is(other, 3000, 4));

    section("copy: missing paths");
    FAIL(fspace_copy(missing, dst, NULL, &r), -ENOENT, "copy-missing");
    FAIL(fspace_copy(src, nodir, NULL, &r), -ENOENT, "no-such-dir");
    FAIL(fspace_copy(src, slash, NULL, &r), -ENOENT, "not-a-dir");
    CHECK(r == BAD_PTR(fspace_copy_report));
    CHECK(file_size(dst) == -1);

    section("copy: a directory as the source, the same file, an existing file");
    FAIL(fspace_copy(g_work, dst, NULL, &r), -EISDIR, g_work);
    FAIL(fspace_copy(src, src, NULL, &r), -EINVAL, "copy-src");
    FAIL(fspace_copy(src, other, NULL, &r), -EEXIST, "copy-other");
    CHECK(r == BAD_PTR(fspace_copy_report));
    CHECK(file_is(src, 50000, 3));
    CHECK(file_is(other, 3000, 4));
    CHECK(file_size(dst) == -1);

    section("copy report getters");
    r = NULL;
    if (CHECK_OK(fspace_copy(src, dst, NULL, &r)) == 0 && r != NULL) {
        fspace_copy_summary s, keep;
        const char *j = "sentinel";
        memset(&s, 0x5A, sizeof s);
        memcpy(&keep, &s, sizeof keep);
        FAIL(fspace_copy_report_get(NULL, &s, sizeof s), -EINVAL, "fspace_copy_report_get");
        CHECK(memcmp(&s, &keep, sizeof s) == 0);
        FAIL(fspace_copy_report_get(r, NULL, 0), -EINVAL, "fspace_copy_report_get");
        FAIL(fspace_copy_report_json(NULL, &j), -EINVAL, "fspace_copy_report_json");
        CHECK(strcmp(j, "sentinel") == 0);
        FAIL(fspace_copy_report_json(r, NULL), -EINVAL, "fspace_copy_report_json");
        fspace_copy_report_free(r);
    }
    fspace_copy_report_free(NULL);
    unlink(src);
    unlink(dst);
    unlink(other);
    CHECK_ENTRIES(g_work, 0);
}

static void test_writer_errors(void)
{
    char file[4096];
    fspace_sparse_writer *w = BAD_PTR(fspace_sparse_writer);
    unsigned char data[256];
    int fd, dfd, ap, p[2];
    uint64_t pos = 0, keep_pos = 0;
    size_t i;

    for (i = 0; i < sizeof data; i++)
        data[i] = pat(i, 5);
    join(file, sizeof file, g_work, "writer-file");
    fd = open(file, O_RDWR | O_CREAT | O_EXCL, 0644);
    CHECK(fd >= 0);
    if (fd < 0)
        return;

    section("sparse_writer_new: bad arguments");
    FAIL(fspace_sparse_writer_new(fd, file, 0, NULL), -EINVAL, "fspace_sparse_writer_new");
    FAIL(fspace_sparse_writer_new(-1, file, 0, &w), -EBADF, "fspace_sparse_writer_new");
    FAIL(fspace_sparse_writer_new(closed_fd(), NULL, 0, &w), -EBADF, "/proc/self/fd/");
    FAIL(fspace_sparse_writer_new(fd, file, 4, &w), -EINVAL, "fspace_sparse_writer_new");
    FAIL(fspace_sparse_writer_new(fd, file, 0x80000000u, &w), -EINVAL, "fspace_sparse_writer_new");
    CHECK(w == BAD_PTR(fspace_sparse_writer));
    if (pipe(p) == 0) {
        FAIL(fspace_sparse_writer_new(p[1], NULL, 0, &w), -EINVAL, "/proc/self/fd/");
        close(p[0]);
        close(p[1]);
    }
    ap = open(file, O_WRONLY | O_APPEND);
    CHECK(ap >= 0);
    if (ap >= 0) {
        FAIL(fspace_sparse_writer_new(ap, file, 0, &w), -EINVAL, "writer-file");
        close(ap);
    }
    CHECK(w == BAD_PTR(fspace_sparse_writer));

    section("sparse_writer_new: a directory (-EISDIR)");
    dfd = open(g_work, O_RDONLY | O_DIRECTORY);
    CHECK(dfd >= 0);
    if (dfd >= 0) {
        /* the header: "-EISDIR (a directory)" */
        FAIL(fspace_sparse_writer_new(dfd, NULL, 0, &w), -EISDIR, g_work);
        CHECK(w == BAD_PTR(fspace_sparse_writer));
        close(dfd);
    }
    CHECK(file_size(file) == 0);

    w = NULL;
    if (CHECK_OK(fspace_sparse_writer_new(fd, file, 0, &w)) != 0 || w == NULL) {
        close(fd);
        return;
    }
    CHECK_OK(fspace_sparse_writer_write(w, data, 100));

    section("sparse writer: NULL arguments");
    FAIL(fspace_sparse_writer_write(NULL, data, 10), -EINVAL, "fspace_sparse_writer_write");
    FAIL(fspace_sparse_writer_write(w, NULL, 10), -EINVAL, "fspace_sparse_writer_write");
    FAIL(fspace_sparse_writer_write_at(NULL, 200, data, 10), -EINVAL, "fspace_sparse_writer_write_at");
    FAIL(fspace_sparse_writer_write_at(w, 200, NULL, 10), -EINVAL, "fspace_sparse_writer_write_at");
    FAIL(fspace_sparse_writer_skip(NULL, 10), -EINVAL, "fspace_sparse_writer_skip");
    FAIL(fspace_sparse_writer_seek(NULL, 200), -EINVAL, "fspace_sparse_writer_seek");
    FAIL(fspace_sparse_writer_set_len(NULL, 200), -EINVAL, "fspace_sparse_writer_set_len");
    pos = 0xABCDEF;
    FAIL(fspace_sparse_writer_position(NULL, &pos), -EINVAL, "fspace_sparse_writer_position");
    CHECK(pos == 0xABCDEF);
    FAIL(fspace_sparse_writer_position(w, NULL), -EINVAL, "fspace_sparse_writer_position");
    FAIL(fspace_sparse_writer_finish(NULL, NULL, 0), -EINVAL, "fspace_sparse_writer_finish");
    CHECK_OK(fspace_sparse_writer_position(w, &pos));
    CHECK(pos == 100);

    section("sparse writer: negative offsets and lengths");
    FAIL(fspace_sparse_writer_write_at(w, -1, data, 10), -EINVAL, "fspace_sparse_writer_write_at");
    FAIL(fspace_sparse_writer_write_at(w, INT64_MIN, data, 10), -EINVAL, "fspace_sparse_writer_write_at");
    FAIL(fspace_sparse_writer_skip(w, -1), -EINVAL, "fspace_sparse_writer_skip");
    FAIL(fspace_sparse_writer_seek(w, -1), -EINVAL, "fspace_sparse_writer_seek");
    FAIL(fspace_sparse_writer_set_len(w, -1), -EINVAL, "fspace_sparse_writer_set_len");
    CHECK_OK(fspace_sparse_writer_position(w, &pos));
    CHECK(pos == 100);

    section("sparse writer: a length no buffer can have");
    FAIL(fspace_sparse_writer_write(w, data, SIZE_MAX), -EFBIG, "fspace_sparse_writer_write");
    FAIL(fspace_sparse_writer_write_at(w, 0, data, SIZE_MAX), -EFBIG, "fspace_sparse_writer_write_at");
    FAIL(fspace_sparse_writer_write(w, data, (size_t)INT64_MAX + 1), -EFBIG, "fspace_sparse_writer_write");

    section("sparse writer: past INT64_MAX");
    FAIL(fspace_sparse_writer_skip(w, INT64_MAX), -EFBIG, "fspace_sparse_writer_skip");
    FAIL(fspace_sparse_writer_write_at(w, INT64_MAX, data, 1), -EFBIG, "fspace_sparse_writer_write_at");
    FAIL(fspace_sparse_writer_write_at(w, INT64_MAX - 5, data, 10), -EFBIG, "fspace_sparse_writer_write_at");
    CHECK_OK(fspace_sparse_writer_position(w, &pos));
    CHECK(pos == 100);

    section("sparse writer: seek back (allowed: the next write overwrites)");
    keep_pos = pos;
    /* the header: "moving back lets the next write overwrite what was
     * written there" */
    CHECK_OK(fspace_sparse_writer_seek(w, 50));
    CHECK_OK(fspace_sparse_writer_position(w, &pos));
    CHECK(pos == 50);
    CHECK_OK(fspace_sparse_writer_seek(w, keep_pos));

    section("sparse writer: write_at before the position overwrites");
    {
        unsigned char x[2];
        x[0] = 'X';
        x[1] = 'Y';
        CHECK_OK(fspace_sparse_writer_write_at(w, 10, x, 2));
        CHECK_OK(fspace_sparse_writer_position(w, &pos));
        CHECK(pos == 12);
        CHECK_OK(fspace_sparse_writer_seek(w, 100));
    }

    section("sparse writer: finish, then what it wrote");
    {
        fspace_sparse_stats st;
        CHECK_OK(fspace_sparse_writer_finish(w, &st, sizeof st));
        fspace_sparse_writer_free(w);
        close(fd);
        /* the first 100 bytes, with "XY" at 10: the failed calls changed
         * nothing */
        CHECK(file_size(file) == 100);
        {
            size_t n = 0;
            unsigned char *b = read_all(file, &n);
            CHECK(b != NULL && n == 100 && memcmp(b, data, 10) == 0 && b[10] == 'X' && b[11] == 'Y' &&
                  memcmp(b + 12, data + 12, 88) == 0);
            free(b);
        }
    }
    fspace_sparse_writer_free(NULL);
    unlink(file);
    CHECK_ENTRIES(g_work, 0);
}

static void test_map_errors(void)
{
    char file[4096], missing[4096];
    fspace_extent_map *m = BAD_PTR(fspace_extent_map);

    join(file, sizeof file, g_work, "map-file");
    join(missing, sizeof missing, g_work, "map-missing");
    make_file(file, 20000, 6);

    section("extent_map_new: bad arguments");
    FAIL(fspace_extent_map_new(NULL, 0, &m), -EINVAL, "fspace_extent_map_new");
    FAIL(fspace_extent_map_new(file, 0, NULL), -EINVAL, "fspace_extent_map_new");
    FAIL(fspace_extent_map_new(file, 4, &m), -EINVAL, "fspace_extent_map_new");
    FAIL(fspace_extent_map_new(file, 0x80000000u, &m), -EINVAL, "fspace_extent_map_new");
    FAIL(fspace_extent_map_new(missing, 0, &m), -ENOENT, "map-missing");
    FAIL(fspace_extent_map_new(g_work, 0, &m), -EISDIR, g_work);
    CHECK(m == BAD_PTR(fspace_extent_map));
    CHECK(file_size(missing) == -1);

    section("extent map getters");
    m = NULL;
    if (CHECK_OK(fspace_extent_map_new(file, 0, &m)) == 0 && m != NULL) {
        size_t c = 12345;
        fspace_extent e, ekeep;
        fspace_extent_summary s, skeep;
        const char *j = "sentinel";
        memset(&e, 0x5A, sizeof e);
        memcpy(&ekeep, &e, sizeof e);
        memset(&s, 0x5A, sizeof s);
        memcpy(&skeep, &s, sizeof s);
        FAIL(fspace_extent_map_count(NULL, &c), -EINVAL, "fspace_extent_map_count");
        CHECK(c == 12345);
        FAIL(fspace_extent_map_count(m, NULL), -EINVAL, "fspace_extent_map_count");
        FAIL(fspace_extent_map_get(NULL, 0, &e, sizeof e), -EINVAL, "fspace_extent_map_get");
        FAIL(fspace_extent_map_get(m, 0, NULL, 0), -EINVAL, "fspace_extent_map_get");
        FAIL(fspace_extent_map_get(m, 999, &e, sizeof e), -ERANGE, "fspace_extent_map_get");
        CHECK(memcmp(&e, &ekeep, sizeof e) == 0);
        FAIL(fspace_extent_map_summary(NULL, &s, sizeof s), -EINVAL, "fspace_extent_map_summary");
        CHECK(memcmp(&s, &skeep, sizeof s) == 0);
        FAIL(fspace_extent_map_summary(m, NULL, 0), -EINVAL, "fspace_extent_map_summary");
        FAIL(fspace_extent_map_json(NULL, &j), -EINVAL, "fspace_extent_map_json");
        CHECK(strcmp(j, "sentinel") == 0);
        FAIL(fspace_extent_map_json(m, NULL), -EINVAL, "fspace_extent_map_json");
        fspace_extent_map_free(m);
    }
    fspace_extent_map_free(NULL);
    CHECK(file_is(file, 20000, 6));
    unlink(file);
    CHECK_ENTRIES(g_work, 0);
}

static void test_untorn_errors(void)
{
    char file[4096], missing[4096];
    fspace_untorn_facts *f = BAD_PTR(fspace_untorn_facts);
    fspace_untorn_answer *a = BAD_PTR(fspace_untorn_answer);
    fspace_untorn_layout l, lkeep;
    unsigned char page[4096];
    int fd;

    join(file, sizeof file, g_work, "untorn-file");
    join(missing, sizeof missing, g_work, "untorn-missing");
    make_file(file, 20000, 7);
    memset(page, 0x33, sizeof page);

    section("untorn_facts_new, _of_fs: bad arguments");
    FAIL(fspace_untorn_facts_new(NULL, &f), -EINVAL, "fspace_untorn_facts_new");
    FAIL(fspace_untorn_facts_new(file, NULL), -EINVAL, "fspace_untorn_facts_new");
    FAIL(fspace_untorn_facts_new(missing, &f), -ENOENT, "untorn-missing");
    FAIL(fspace_untorn_facts_of_fs(NULL, &f), -EINVAL, "fspace_untorn_facts_of_fs");
    FAIL(fspace_untorn_facts_of_fs(g_work, NULL), -EINVAL, "fspace_untorn_facts_of_fs");
    join(missing, sizeof missing, g_work, "no-such-dir/x");
    FAIL(fspace_untorn_facts_of_fs(missing, &f), -ENOENT, "no-such-dir");
    CHECK(f == BAD_PTR(fspace_untorn_facts));
    CHECK(fspace_untorn_state_name(4) == NULL);
    CHECK(fspace_untorn_state_name(UINT32_MAX) == NULL);

    section("untorn facts and answer getters");
    f = NULL;
    if (CHECK_OK(fspace_untorn_facts_new(file, &f)) == 0 && f != NULL) {
        fspace_untorn_summary s, skeep;
        fspace_untorn_trial t, tkeep;
        fspace_untorn_verdict v, vkeep;
        const char *j = "sentinel";
        memset(&s, 0x5A, sizeof s);
        memcpy(&skeep, &s, sizeof s);
        memset(&t, 0x5A, sizeof t);
        memcpy(&tkeep, &t, sizeof t);
        memset(&v, 0x5A, sizeof v);
        memcpy(&vkeep, &v, sizeof v);
        FAIL(fspace_untorn_facts_get(NULL, &s, sizeof s), -EINVAL, "fspace_untorn_facts_get");
        FAIL(fspace_untorn_facts_get(f, NULL, 0), -EINVAL, "fspace_untorn_facts_get");
        CHECK(memcmp(&s, &skeep, sizeof s) == 0);
        FAIL(fspace_untorn_facts_trial(NULL, 0, &t, sizeof t), -EINVAL, "fspace_untorn_facts_trial");
        FAIL(fspace_untorn_facts_trial(f, 0, NULL, 0), -EINVAL, "fspace_untorn_facts_trial");
        /* an existing file's facts have no trials */
        FAIL(fspace_untorn_facts_trial(f, 0, &t, sizeof t), -ERANGE, "fspace_untorn_facts_trial");
        CHECK(memcmp(&t, &tkeep, sizeof t) == 0);
        FAIL(fspace_untorn_facts_json(NULL, &j), -EINVAL, "fspace_untorn_facts_json");
        FAIL(fspace_untorn_facts_json(f, NULL), -EINVAL, "fspace_untorn_facts_json");
        CHECK(strcmp(j, "sentinel") == 0);

        a = BAD_PTR(fspace_untorn_answer);
        FAIL(fspace_untorn_answer_new(NULL, 16384, FSPACE_IO_DIRECT, &a), -EINVAL, "fspace_untorn_answer_new");
        FAIL(fspace_untorn_answer_new(f, 16384, FSPACE_IO_DIRECT, NULL), -EINVAL, "fspace_untorn_answer_new");
        FAIL(fspace_untorn_answer_new(f, -1, FSPACE_IO_DIRECT, &a), -EINVAL, "fspace_untorn_answer_new");
        FAIL(fspace_untorn_answer_new(f, 16384, 2, &a), -EINVAL, "I/O path");
        FAIL(fspace_untorn_answer_new(f, 16384, UINT32_MAX, &a), -EINVAL, "fspace_untorn_answer_new");
        CHECK(a == BAD_PTR(fspace_untorn_answer));
        a = NULL;
        if (CHECK_OK(fspace_untorn_answer_new(f, 16384, FSPACE_IO_BUFFERED, &a)) == 0 && a != NULL) {
            FAIL(fspace_untorn_answer_get(NULL, &v, sizeof v), -EINVAL, "fspace_untorn_answer_get");
            FAIL(fspace_untorn_answer_get(a, NULL, 0), -EINVAL, "fspace_untorn_answer_get");
            CHECK(memcmp(&v, &vkeep, sizeof v) == 0);
            FAIL(fspace_untorn_answer_json(NULL, &j), -EINVAL, "fspace_untorn_answer_json");
            FAIL(fspace_untorn_answer_json(a, NULL), -EINVAL, "fspace_untorn_answer_json");
            CHECK(strcmp(j, "sentinel") == 0);
            fspace_untorn_answer_free(a);
        }
        fspace_untorn_facts_free(f);
    }
    fspace_untorn_facts_free(NULL);
    fspace_untorn_answer_free(NULL);

    section("write_untorn: bad descriptors and arguments");
    FAIL(fspace_write_untorn(-1, file, page, sizeof page, 0, 0), -EBADF, "fspace_write_untorn");
    FAIL(fspace_write_untorn(INT32_MIN, NULL, page, sizeof page, 0, 0), -EBADF, "fspace_write_untorn");
    FAIL(fspace_write_untorn(closed_fd(), NULL, page, sizeof page, 0, 0), -EBADF, "/proc/self/fd/");
    fd = open(file, O_RDWR);
    CHECK(fd >= 0);
    if (fd >= 0) {
        FAIL(fspace_write_untorn(fd, file, NULL, 4096, 0, 0), -EINVAL, "fspace_write_untorn");
        FAIL(fspace_write_untorn(fd, file, page, sizeof page, -1, 0), -EINVAL, "fspace_write_untorn");
        FAIL(fspace_write_untorn(fd, file, page, sizeof page, INT64_MAX, 0), -EFBIG, "fspace_write_untorn");
        FAIL(fspace_write_untorn(fd, file, page, sizeof page, 0, 2), -EINVAL, "unknown flags");
        FAIL(fspace_write_untorn(fd, file, page, (size_t)INT64_MAX + 1, 0, 0), -EFBIG, "fspace_write_untorn");
        /* a descriptor without O_DIRECT, on any filesystem: refused, never
         * written plainly (EOPNOTSUPP: "not supported here" where the
         * filesystem has no untorn writes, "O_DIRECT" where it has) */
        FAIL(fspace_write_untorn(fd, NULL, page, sizeof page, 0, 0), -EOPNOTSUPP, "untorn-file");
        close(fd);
    }
    CHECK(file_is(file, 20000, 7));

    section("check_untorn_layout: bad arguments");
    memset(&l, 0x5A, sizeof l);
    memcpy(&lkeep, &l, sizeof l);
    FAIL(fspace_check_untorn_layout(-1, file, 0, 4096, 4096, &l, sizeof l), -EBADF, "fspace_check_untorn_layout");
    fd = open(file, O_RDONLY);
    CHECK(fd >= 0);
    if (fd >= 0) {
        FAIL(fspace_check_untorn_layout(fd, file, 0, 4096, 4096, NULL, 0), -EINVAL, "fspace_check_untorn_layout");
        FAIL(fspace_check_untorn_layout(fd, file, -1, 4096, 4096, &l, sizeof l), -EINVAL, "fspace_check_untorn_layout");
        FAIL(fspace_check_untorn_layout(fd, file, 0, -1, 4096, &l, sizeof l), -EINVAL, "fspace_check_untorn_layout");
        FAIL(fspace_check_untorn_layout(fd, file, 1, INT64_MAX, 4096, &l, sizeof l), -EFBIG, "fspace_check_untorn_layout");
        FAIL(fspace_check_untorn_layout(fd, NULL, 0, 16384, 3000, &l, sizeof l), -EINVAL, "power of two");
        FAIL(fspace_check_untorn_layout(fd, file, 0, 16384, 256, &l, sizeof l), -EINVAL, "power of two");
        FAIL(fspace_check_untorn_layout(fd, file, 0, 16384, 0, &l, sizeof l), -EINVAL, "power of two");
        close(fd);
    }
    CHECK(memcmp(&l, &lkeep, sizeof l) == 0);
    CHECK(file_is(file, 20000, 7));
    unlink(file);
    CHECK_ENTRIES(g_work, 0);
}

static void test_wal_errors(void)
{
    char dir[4096], file[4096], nodir[4096];
    fspace_wal_options o;
    fspace_wal *wal = BAD_PTR(fspace_wal);
    fspace_wal_reader *rd = BAD_PTR(fspace_wal_reader);
    uint64_t lsn = 777, next = 0, next2 = 0;

    join(dir, sizeof dir, g_work, "wal");
    join(file, sizeof file, g_work, "wal-file");
    join(nodir, sizeof nodir, g_work, "wal-file/wal");

    section("wal_options_init(NULL)");
    FAIL(fspace_wal_options_init(NULL, 0), -EINVAL, "fspace_wal_options_init");

    section("wal_open: bad arguments");
    fspace_wal_options_init(&o, sizeof o);
    o.segment_size = (uint64_t)(64 * KiB);
    o.prepare_ahead = 1;
    FAIL(fspace_wal_open(NULL, &o, &wal), -EINVAL, "fspace_wal_open");
    FAIL(fspace_wal_open(dir, &o, NULL), -EINVAL, "fspace_wal_open");
    CHECK(file_size(dir) == -1); /* nothing created */
    o.segment_size = 1000;
    FAIL(fspace_wal_open(dir, &o, &wal), -EINVAL, "wal");
    o.segment_size = (uint64_t)(64 * KiB) + 1;
    FAIL(fspace_wal_open(dir, &o, &wal), -EINVAL, "wal");
    o.segment_size = (uint64_t)(60 * KiB);
    FAIL(fspace_wal_open(dir, &o, &wal), -EINVAL, "wal");
    o.segment_size = 0;
    FAIL(fspace_wal_open(dir, &o, &wal), -EINVAL, "wal");
    o.segment_size = (uint64_t)(64 * KiB);
    o.prepare_ahead = 0;
    FAIL(fspace_wal_open(dir, &o, &wal), -EINVAL, "wal");
    o.prepare_ahead = 1;
    o.prepare_strategy = 6;
    FAIL(fspace_wal_open(dir, &o, &wal), -EINVAL, "fspace_wal_open");
    o.prepare_strategy = FSPACE_STRATEGY_AUTO;
    o.direct_io = 2;
    FAIL(fspace_wal_open(dir, &o, &wal), -EINVAL, "fspace_wal_open");
    o.direct_io = -2;
    FAIL(fspace_wal_open(dir, &o, &wal), -EINVAL, "fspace_wal_open");
    o.direct_io = -1;
    o.sync_method = FSPACE_SYNC_FSYNC + 1;
    FAIL(fspace_wal_open(dir, &o, &wal), -EINVAL, "sync_method");
    o.sync_method = FSPACE_SYNC_DIRECT_DSYNC;
    o.direct_io = 0;
    FAIL(fspace_wal_open(dir, &o, &wal), -EINVAL, "wal");
    o.direct_io = -1;
    o.sync_method = FSPACE_SYNC_AUTO;
    CHECK(wal == BAD_PTR(fspace_wal));
    CHECK(file_size(dir) == -1); /* nothing created */

    section("wal_open: not a directory, a parent that is a file");
    make_file(file, 1000, 7);
    FAIL(fspace_wal_open(file, &o, &wal), -ENOTDIR, "wal-file");
    CHECK(file_is(file, 1000, 7));
    FAIL(fspace_wal_open(nodir, &o, &wal), -ENOTDIR, "wal-file");
    CHECK(wal == BAD_PTR(fspace_wal));
    unlink(file);
    CHECK_ENTRIES(g_work, 0);

    wal = NULL;
    if (CHECK_OK(fspace_wal_open(dir, &o, &wal)) != 0 || wal == NULL)
        return;
    CHECK_OK(fspace_wal_next_lsn(wal, &next));

    section("wal: NULL arguments");
    FAIL(fspace_wal_append(NULL, "x", 1, &lsn), -EINVAL, "fspace_wal_append");
    FAIL(fspace_wal_append(wal, NULL, 1, &lsn), -EINVAL, "fspace_wal_append");
    FAIL(fspace_wal_commit(NULL, "x", 1, &lsn), -EINVAL, "fspace_wal_commit");
    FAIL(fspace_wal_commit(wal, NULL, 1, &lsn), -EINVAL, "fspace_wal_commit");
    /* a length no buffer can have: refused before it is used */
    FAIL(fspace_wal_append(wal, "x", SIZE_MAX, &lsn), -EFBIG, "fspace_wal_append");
    FAIL(fspace_wal_commit(wal, "x", SIZE_MAX, &lsn), -EFBIG, "fspace_wal_commit");
    CHECK(lsn == 777);
    FAIL(fspace_wal_sync(NULL, &lsn), -EINVAL, "fspace_wal_sync");
    CHECK(lsn == 777);
    FAIL(fspace_wal_sync_to(NULL, 1), -EINVAL, "fspace_wal_sync_to");
    FAIL(fspace_wal_durable_lsn(NULL, &lsn), -EINVAL, "fspace_wal_durable_lsn");
    FAIL(fspace_wal_durable_lsn(wal, NULL), -EINVAL, "fspace_wal_durable_lsn");
    FAIL(fspace_wal_next_lsn(NULL, &lsn), -EINVAL, "fspace_wal_next_lsn");
    FAIL(fspace_wal_next_lsn(wal, NULL), -EINVAL, "fspace_wal_next_lsn");
    CHECK(lsn == 777);
    {
        size_t n = 555;
        FAIL(fspace_wal_max_record(NULL, &n), -EINVAL, "fspace_wal_max_record");
        CHECK(n == 555);
        FAIL(fspace_wal_max_record(wal, NULL), -EINVAL, "fspace_wal_max_record");
    }
    {
        fspace_wal_recovery_info ri, keep;
        memset(&ri, 0x5A, sizeof ri);
        memcpy(&keep, &ri, sizeof keep);
        FAIL(fspace_wal_recovery(NULL, &ri, sizeof ri), -EINVAL, "fspace_wal_recovery");
        CHECK(memcmp(&ri, &keep, sizeof ri) == 0);
        FAIL(fspace_wal_recovery(wal, NULL, 0), -EINVAL, "fspace_wal_recovery");
    }
    {
        fspace_wal_release_info rel, keep;
        memset(&rel, 0x5A, sizeof rel);
        memcpy(&keep, &rel, sizeof keep);
        FAIL(fspace_wal_release_before(NULL, 1, &rel, sizeof rel), -EINVAL, "fspace_wal_release_before");
        CHECK(memcmp(&rel, &keep, sizeof rel) == 0);
    }
    FAIL(fspace_wal_reader_new(NULL, 0, &rd), -EINVAL, "fspace_wal_reader_new");
    FAIL(fspace_wal_reader_new(wal, 0, NULL), -EINVAL, "fspace_wal_reader_new");
    CHECK(rd == BAD_PTR(fspace_wal_reader));
    /* nothing was appended by the failures */
    CHECK_OK(fspace_wal_next_lsn(wal, &next2));
    CHECK(next2 == next);

    section("wal reader: NULL arguments do not consume a record");
    CHECK_OK(fspace_wal_commit(wal, "one", 3, &lsn));
    CHECK(lsn == next);
    rd = NULL;
    if (CHECK_OK(fspace_wal_reader_new(wal, 0, &rd)) == 0 && rd != NULL) {
        uint64_t l = 999;
        const void *d = "sentinel";
        size_t n = 999;
        FAIL(fspace_wal_reader_next(NULL, &l, &d, &n), -EINVAL, "fspace_wal_reader_next");
        FAIL(fspace_wal_reader_next(rd, NULL, &d, &n), -EINVAL, "fspace_wal_reader_next");
        FAIL(fspace_wal_reader_next(rd, &l, NULL, &n), -EINVAL, "fspace_wal_reader_next");
        FAIL(fspace_wal_reader_next(rd, &l, &d, NULL), -EINVAL, "fspace_wal_reader_next");
        CHECK(l == 999 && n == 999 && strcmp((const char *)d, "sentinel") == 0);
        CHECK_RC(fspace_wal_reader_next(rd, &l, &d, &n), 1);
        CHECK(l == next && n == 3 && memcmp(d, "one", 3) == 0);
        CHECK_RC(fspace_wal_reader_next(rd, &l, &d, &n), 0);
        fspace_wal_reader_free(rd);
    }
    fspace_wal_reader_free(NULL);

    section("wal: close(NULL), free(NULL)");
    CHECK_OK(fspace_wal_close(NULL));
    fspace_wal_free(NULL);
    CHECK_OK(fspace_wal_close(wal));
}

int main(int argc, char **argv)
{
    fspace_fs_info *info = NULL;

    g_prog = "test_errors";
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    make_work_dir(g_work, sizeof g_work, argv[1]);
    join(g_primer_path, sizeof g_primer_path, g_work, "primer-missing/primer");

    if (fspace_fs_info_new(g_work, &info) == 0) {
        g_caps_known = load_caps(info, g_caps);
        fspace_fs_info_free(info);
    }

    /* descriptors are checked closed before any thread runs (the log's
     * preparer opens files) */
    test_info_errors();
    test_grow_errors();
    test_range_errors();
    test_copy_errors();
    test_writer_errors();
    test_map_errors();
    test_untorn_errors();
    test_wal_errors();

    rm_rf(g_work);
    return g_failed ? 1 : 0;
}
