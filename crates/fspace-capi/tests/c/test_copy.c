/*
 * test_copy.c: fspace_copy_options_init, fspace_copy (holes kept, sparse
 * and reflink modes, an existing destination with and without force),
 * fspace_copy_report_get/_json/_free, and the sparse writer:
 * fspace_sparse_writer_new (flags 0 and each flag), _write, _write_at,
 * _skip, _seek, _set_len, _position, _finish, _free.
 *
 * Usage: test_copy DIR. Works in DIR/test_copy.PID, removed at the end.
 * Exit: 0 all checks passed, 1 a check failed, 77 not applicable here.
 */
#define _GNU_SOURCE 1
#include "check.h"
#define KiB 1024LL
#define MiB (1024LL * 1024LL)

static char g_work[4096];
static int g_caps_known = 0;
static bool g_caps[8];

/* The source: pattern [0, 128K), hole [128K, 512K), pattern [512K, 640K),
 * zeros written as data [640K, 768K), pattern [768K, SRC_LEN). */
#define SRC_LEN (800 * KiB + 123)

static int make_source(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0640);
    int rc = 0;
    unsigned char *zeros;
    if (fd < 0)
        return -1;
    zeros = (unsigned char *)calloc(1, (size_t)(128 * KiB));
    if (zeros == NULL) {
        close(fd);
        return -1;
    }
    /* from the end, so that no preallocation past EOF lands in the hole */
    if (write_pattern(fd, (unsigned long long)(768 * KiB), (size_t)(SRC_LEN - 768 * KiB), 2) != 0)
        rc = -1;
    if (pwrite(fd, zeros, (size_t)(128 * KiB), (off_t)(640 * KiB)) != (ssize_t)(128 * KiB))
        rc = -1;
    if (write_pattern(fd, (unsigned long long)(512 * KiB), (size_t)(128 * KiB), 2) != 0)
        rc = -1;
    if (write_pattern(fd, 0, (size_t)(128 * KiB), 2) != 0)
        rc = -1;
    if (fsync(fd) != 0)
        rc = -1;
    free(zeros);
    close(fd);
    return rc;
}

/* True if the two files have the same bytes. */
static int same_bytes(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    unsigned char *x = read_all(a, &na);
    unsigned char *y = read_all(b, &nb);
    int same = x != NULL && y != NULL && na == nb && memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return same;
}

/* Hole bytes of `path` as a map says, or -1 when holes are not reported. */
static long long map_holes(const char *path, uint64_t *shared)
{
    fspace_extent_map *m = NULL;
    fspace_extent_summary s;
    long long holes = -1;
    if (CHECK_OK(fspace_extent_map_new(path, FSPACE_MAP_SYNC, &m)) != 0)
        return -1;
    if (CHECK_OK(fspace_extent_map_summary(m, &s, sizeof s)) == 0) {
        if (s.fiemap || (g_caps_known && g_caps[FSPACE_CAP_SEEK_HOLE]))
            holes = (long long)s.holes;
        if (shared != NULL)
            *shared = s.fiemap ? s.shared : UINT64_MAX;
    }
    fspace_extent_map_free(m);
    return holes;
}

/* Whether [from, to) of `path` is all hole (1), all data (0), mixed (2),
 * or unknown because this filesystem does not report holes (-1). */
static int hole_state(const char *path, uint64_t from, uint64_t to)
{
    fspace_extent_map *m = NULL;
    fspace_extent_summary s;
    fspace_extent e;
    size_t i, n = 0;
    int hole = 0, data = 0;
    if (CHECK_OK(fspace_extent_map_new(path, FSPACE_MAP_SYNC, &m)) != 0)
        return -1;
    if (CHECK_OK(fspace_extent_map_summary(m, &s, sizeof s)) != 0 ||
        !(s.fiemap || (g_caps_known && g_caps[FSPACE_CAP_SEEK_HOLE]))) {
        fspace_extent_map_free(m);
        return -1;
    }
    CHECK_OK(fspace_extent_map_count(m, &n));
    for (i = 0; i < n; i++) {
        if (CHECK_OK(fspace_extent_map_get(m, i, &e, sizeof e)) != 0)
            break;
        if (e.offset < to && e.offset + e.length > from) {
            if (e.state == FSPACE_EXTENT_HOLE)
                hole = 1;
            else
                data = 1;
        }
    }
    fspace_extent_map_free(m);
    return hole && data ? 2 : hole ? 1 : 0;
}

static void check_copy_report(fspace_copy_report *r, fspace_copy_summary *s)
{
    const char *json = NULL, *again = NULL;
    memset(s, 0xA5, sizeof *s);
    CHECK_OK(fspace_copy_report_get(r, s, sizeof *s));
    CHECK(s->method <= FSPACE_COPY_DEVICE);
    CHECK(s->write_syscalls <= s->syscalls);
    if (s->method == FSPACE_COPY_CLONE) /* a clone does not count holes */
        CHECK(s->holes == UINT64_MAX && s->hole_bytes == UINT64_MAX && s->data_extents == UINT64_MAX);
    else
        CHECK(s->hole_bytes <= s->len);
    CHECK(s->bytes_cloned <= s->len);
    CHECK(s->bytes_offloaded <= s->len);
    CHECK(s->bytes_copied <= s->len);
    if (s->method == FSPACE_COPY_CLONE)
        CHECK(s->bytes_cloned > 0);
    if (s->method == FSPACE_COPY_COPY_FILE_RANGE)
        CHECK(s->bytes_offloaded > 0);
    if (CHECK_OK(fspace_copy_report_json(r, &json)) == 0) {
        CHECK(starts_with_char(json, '{'));
        CHECK_OK(fspace_copy_report_json(r, &again));
        CHECK(again == json);
    }
}

static void test_copy(void)
{
    char src[4096], dst[4096], other[4096], sub[4096], inside[4096];
    fspace_copy_options o;
    fspace_copy_report *r = NULL;
    fspace_copy_summary s;
    struct stat ss, ds;
    int rc;

    section("copy_options_init");
    memset(&o, 0xFF, sizeof o);
    CHECK_OK(fspace_copy_options_init(&o, sizeof o));
    CHECK(o.sparse == FSPACE_SPARSE_AUTO);
    CHECK(o.reflink == FSPACE_REFLINK_AUTO);
    CHECK(o.force == false);
    /* documented: "Copy mode, owner and times (default false)", "fsync
     * the copy before it appears and its directory after (default false)" */
    CHECK(o.preserve == false);
    CHECK(o.sync == false);
    o.preserve = true;
    o.sync = true;

    join(src, sizeof src, g_work, "src");
    join(dst, sizeof dst, g_work, "dst");
    join(other, sizeof other, g_work, "other");
    section("make the source");
    if (make_source(src) != 0) {
        CHECK(!"make the source");
        return;
    }
    CHECK(chmod(src, 0640) == 0);

    section("copy with the defaults");
    rc = CHECK_OK(fspace_copy(src, dst, &o, &r));
    if (rc == 0 && r != NULL) {
        check_copy_report(r, &s);
        note("copy: method %u, %u fallbacks, cloned %llu offloaded %llu copied %llu, holes %llu (%llu bytes)",
             (unsigned)s.method, (unsigned)s.fallbacks, (unsigned long long)s.bytes_cloned,
             (unsigned long long)s.bytes_offloaded, (unsigned long long)s.bytes_copied,
             (unsigned long long)s.holes, (unsigned long long)s.hole_bytes);
        CHECK(s.len == (uint64_t)SRC_LEN);
        CHECK(s.method != FSPACE_COPY_NONE);
        CHECK(s.replaced == false);
        CHECK(s.synced == true);
        CHECK(s.preserved == true);
        CHECK(s.src_allocated > 0);
        if (g_caps_known && !g_caps[FSPACE_CAP_FICLONE])
            CHECK(s.method != FSPACE_COPY_CLONE);
        if (s.method == FSPACE_COPY_CLONE)
            CHECK(s.bytes_cloned == (uint64_t)SRC_LEN || s.bytes_cloned >= (uint64_t)(SRC_LEN - 4 * KiB));
        else
            CHECK(s.bytes_cloned + s.bytes_offloaded + s.bytes_copied >= (uint64_t)(256 * KiB));
        fspace_copy_report_free(r);
    }
    CHECK(file_size(dst) == SRC_LEN);
    CHECK(same_bytes(src, dst));
    if (stat(src, &ss) == 0 && stat(dst, &ds) == 0) {
        CHECK((ss.st_mode & 07777) == (ds.st_mode & 07777));
        CHECK(ss.st_mtime == ds.st_mtime);
    }
    {
        long long h = map_holes(dst, NULL);
        note("copy: the copy has %lld hole bytes", h);
        /* the source's hole is kept where holes can be seen */
        if (h >= 0)
            CHECK(h >= 384 * KiB);
    }

    section("copy onto an existing destination without force");
    {
        int fd = open(other, O_WRONLY | O_CREAT | O_EXCL, 0600);
        CHECK(fd >= 0);
        if (fd >= 0) {
            CHECK(write_pattern(fd, 0, 5000, 9) == 0);
            close(fd);
        }
    }
    r = (fspace_copy_report *)(uintptr_t)0x1;
    CHECK_RC(fspace_copy(src, other, &o, &r), -EEXIST);
    CHECK(r == (fspace_copy_report *)(uintptr_t)0x1);
    CHECK(strstr(fspace_last_error(), "other") != NULL);
    CHECK(file_size(other) == 5000);
    {
        size_t n = 0;
        unsigned char *b = read_all(other, &n);
        CHECK(b != NULL && n == 5000 && is_pattern(b, 0, 5000, 9));
        free(b);
    }
    /* options NULL: the defaults, so the same refusal */
    CHECK_RC(fspace_copy(src, other, NULL, NULL), -EEXIST);
    CHECK(file_size(other) == 5000);

    section("copy onto an existing destination with force");
    o.force = true;
    r = NULL;
    if (CHECK_OK(fspace_copy(src, other, &o, &r)) == 0 && r != NULL) {
        check_copy_report(r, &s);
        CHECK(s.replaced == true);
        CHECK(s.len == (uint64_t)SRC_LEN);
        fspace_copy_report_free(r);
    }
    CHECK(same_bytes(src, other));
    if (stat(other, &ds) == 0)
        CHECK((ds.st_mode & 07777) == 0640);
    o.force = false;

    section("copy with options NULL: the documented defaults");
    unlink(other);
    r = NULL;
    if (CHECK_OK(fspace_copy(src, other, NULL, &r)) == 0 && r != NULL) {
        check_copy_report(r, &s);
        CHECK(s.replaced == false);
        CHECK(s.preserved == false); /* default preserve: false */
        CHECK(s.synced == false);    /* default sync: false */
        fspace_copy_report_free(r);
    }
    CHECK(same_bytes(src, other));
    if (stat(other, &ds) == 0)
        CHECK((ds.st_mode & 07777) == 0640);

    section("copy into a directory");
    join(sub, sizeof sub, g_work, "sub");
    join(inside, sizeof inside, sub, "src");
    CHECK(mkdir(sub, 0755) == 0);
    CHECK_OK(fspace_copy(src, sub, &o, NULL));
    CHECK(same_bytes(src, inside));
    unlink(inside);
    rmdir(sub);

    section("copy onto itself");
    CHECK_RC(fspace_copy(src, src, &o, NULL), -EINVAL);
    CHECK(file_size(src) == SRC_LEN);

    section("copy sparse always, reflink never");
    unlink(dst);
    o.sparse = FSPACE_SPARSE_ALWAYS;
    o.reflink = FSPACE_REFLINK_NEVER;
    o.preserve = false;
    o.sync = false;
    r = NULL;
    if (CHECK_OK(fspace_copy(src, dst, &o, &r)) == 0 && r != NULL) {
        check_copy_report(r, &s);
        note("sparse always: method %u, zero bytes holed %llu, holes %llu (%llu bytes)", (unsigned)s.method,
             (unsigned long long)s.zero_bytes_holed, (unsigned long long)s.holes,
             (unsigned long long)s.hole_bytes);
        CHECK(s.method != FSPACE_COPY_CLONE);
        CHECK(s.bytes_cloned == 0);
        CHECK(s.synced == false);
        CHECK(s.preserved == false);
        /* the zeros written as data in the source are found */
        CHECK(s.zero_bytes_holed >= (uint64_t)(128 * KiB));
        CHECK(s.hole_bytes >= (uint64_t)(128 * KiB));
        fspace_copy_report_free(r);
    }
    CHECK(same_bytes(src, dst));
    {
        long long h = map_holes(dst, NULL);
        if (h >= 0)
            CHECK(h >= 512 * KiB); /* the hole and the zeros */
    }

    section("copy sparse never");
    unlink(dst);
    o.sparse = FSPACE_SPARSE_NEVER;
    o.reflink = FSPACE_REFLINK_AUTO;
    r = NULL;
    if (CHECK_OK(fspace_copy(src, dst, &o, &r)) == 0 && r != NULL) {
        check_copy_report(r, &s);
        CHECK(s.holes == 0);
        CHECK(s.hole_bytes == 0);
        CHECK(s.zero_bytes_holed == 0);
        CHECK(s.method != FSPACE_COPY_CLONE);
        fspace_copy_report_free(r);
    }
    CHECK(same_bytes(src, dst));
    {
        long long h = map_holes(dst, NULL);
        if (h >= 0)
            CHECK(h == 0);
    }

    section("copy reflink always");
    unlink(dst);
    o.sparse = FSPACE_SPARSE_AUTO;
    o.reflink = FSPACE_REFLINK_ALWAYS;
    r = (fspace_copy_report *)(uintptr_t)0x1;
    rc = fspace_copy(src, dst, &o, &r);
    note("reflink always: %d (%s)", rc, errname(rc));
    if (g_caps_known)
        CHECK((rc == 0) == (g_caps[FSPACE_CAP_FICLONE] ? 1 : 0));
    if (rc == 0) {
        uint64_t shared = 0;
        CHECK(r != NULL && r != (fspace_copy_report *)(uintptr_t)0x1);
        if (r != NULL && r != (fspace_copy_report *)(uintptr_t)0x1) {
            check_copy_report(r, &s);
            CHECK(s.method == FSPACE_COPY_CLONE);
            CHECK(s.bytes_cloned > 0);
            fspace_copy_report_free(r);
        }
        CHECK(same_bytes(src, dst));
        map_holes(src, &shared);
        if (shared != UINT64_MAX)
            CHECK(shared >= (uint64_t)(256 * KiB)); /* the source's data is shared now */
    } else {
        CHECK(rc == -EOPNOTSUPP);
        CHECK(r == (fspace_copy_report *)(uintptr_t)0x1);
        CHECK(file_size(dst) == -1); /* nothing is left at dst */
    }

    section("copy an empty file");
    {
        char empty[4096], ecopy[4096];
        int fd;
        join(empty, sizeof empty, g_work, "empty");
        join(ecopy, sizeof ecopy, g_work, "empty-copy");
        fd = open(empty, O_WRONLY | O_CREAT | O_EXCL, 0644);
        CHECK(fd >= 0);
        if (fd >= 0)
            close(fd);
        fspace_copy_options_init(&o, sizeof o);
        r = NULL;
        if (CHECK_OK(fspace_copy(empty, ecopy, &o, &r)) == 0 && r != NULL) {
            check_copy_report(r, &s);
            CHECK(s.len == 0);
            CHECK(s.method == FSPACE_COPY_NONE);
            fspace_copy_report_free(r);
        }
        CHECK(file_size(ecopy) == 0);
        unlink(empty);
        unlink(ecopy);
    }

    section("copy leaves no temporary file");
    CHECK_ENTRIES(g_work, 2 + (file_size(dst) >= 0)); /* src, other[, dst] */
    unlink(src);
    unlink(dst);
    unlink(other);
}

/* ---- the sparse writer ------------------------------------------------ */

/* What a script of writer calls should leave: a model of the file. */
struct model {
    unsigned char *bytes;
    size_t len;
};

static void model_put(struct model *m, size_t off, const unsigned char *data, size_t len)
{
    if (off + len > m->len)
        m->len = off + len;
    memcpy(m->bytes + off, data, len);
}

/* Runs the script on a fresh (or existing) file with `flags`; checks the
 * result. Returns the stats through `out`. */
static void writer_script(const char *path, uint32_t flags, int existing, fspace_sparse_stats *out)
{
    const size_t cap = (size_t)(1 * MiB);
    struct model m;
    unsigned char *data, *zeros;
    fspace_sparse_writer *w = NULL;
    uint64_t pos = 0;
    int fd, rc;
    size_t i;

    memset(out, 0, sizeof *out);
    m.bytes = (unsigned char *)calloc(1, cap);
    data = (unsigned char *)malloc((size_t)(256 * KiB));
    zeros = (unsigned char *)calloc(1, (size_t)(64 * KiB));
    if (m.bytes == NULL || data == NULL || zeros == NULL) {
        CHECK(!"out of memory");
        free(m.bytes);
        free(data);
        free(zeros);
        return;
    }
    m.len = 0;
    for (i = 0; i < (size_t)(256 * KiB); i++)
        data[i] = pat(i, 4);

    if (existing) {
        /* a file full of other bytes, longer than the result */
        fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
        CHECK(fd >= 0);
        if (fd >= 0) {
            CHECK(write_pattern(fd, 0, (size_t)(900 * KiB), 8) == 0);
            CHECK(fsync(fd) == 0);
        }
    } else {
        fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0644);
        CHECK(fd >= 0);
    }
    if (fd < 0)
        goto out;

    rc = CHECK_OK(fspace_sparse_writer_new(fd, flags & 4 ? NULL : path, flags & 3, &w));
    if (rc != 0 || w == NULL) {
        close(fd);
        goto out;
    }
    CHECK_OK(fspace_sparse_writer_position(w, &pos));
    CHECK(pos == 0);

    /* 10000 bytes of data, not block-aligned */
    CHECK_OK(fspace_sparse_writer_write(w, data, 10000));
    model_put(&m, 0, data, 10000);
    CHECK_OK(fspace_sparse_writer_position(w, &pos));
    CHECK(pos == 10000);

    /* nothing, with NULL */
    CHECK_OK(fspace_sparse_writer_write(w, NULL, 0));

    /* a hole of 100000 bytes */
    CHECK_OK(fspace_sparse_writer_skip(w, 100000));
    m.len = 110000;
    CHECK_OK(fspace_sparse_writer_position(w, &pos));
    CHECK(pos == 110000);
    CHECK_OK(fspace_sparse_writer_skip(w, 0));

    /* 5000 bytes at 300000: the gap is a hole */
    CHECK_OK(fspace_sparse_writer_write_at(w, 300000, data + 1000, 5000));
    model_put(&m, 300000, data + 1000, 5000);
    CHECK_OK(fspace_sparse_writer_position(w, &pos));
    CHECK(pos == 305000);

    /* 64 KiB of zeros as data (a hole when detected) */
    CHECK_OK(fspace_sparse_writer_write(w, zeros, (size_t)(64 * KiB)));
    model_put(&m, 305000, zeros, (size_t)(64 * KiB));
    CHECK_OK(fspace_sparse_writer_position(w, &pos));
    CHECK(pos == (uint64_t)(305000 + 64 * KiB));

    /* a large write (more than the buffer would take in one go) */
    CHECK_OK(fspace_sparse_writer_write(w, data, (size_t)(256 * KiB)));
    model_put(&m, (size_t)(305000 + 64 * KiB), data, (size_t)(256 * KiB));

    /* seek forward: the gap is a hole */
    CHECK_OK(fspace_sparse_writer_seek(w, 700000));
    if (m.len < 700000)
        m.len = 700000;
    CHECK_OK(fspace_sparse_writer_position(w, &pos));
    CHECK(pos == 700000);
    /* seeking where we are is allowed */
    CHECK_OK(fspace_sparse_writer_seek(w, 700000));

    CHECK_OK(fspace_sparse_writer_write(w, data + 7, 3000));
    model_put(&m, 700000, data + 7, 3000);

    /* the final length: a zero tail */
    CHECK_OK(fspace_sparse_writer_set_len(w, 800000));
    m.len = 800000;
    CHECK_OK(fspace_sparse_writer_position(w, &pos));
    CHECK(pos == 703000);

    memset(out, 0xA5, sizeof *out);
    rc = CHECK_OK(fspace_sparse_writer_finish(w, out, sizeof *out));
    if (rc == 0) {
        note("writer flags %u%s: written %llu zeros %llu holes %llu (%llu bytes) found %llu, %llu writes, %llu punches, block %llu, fresh %d",
             (unsigned)flags, existing ? " (existing file)" : "", (unsigned long long)out->bytes_written,
             (unsigned long long)out->zeros_written, (unsigned long long)out->holes,
             (unsigned long long)out->hole_bytes, (unsigned long long)out->zero_bytes_found,
             (unsigned long long)out->write_calls, (unsigned long long)out->punch_calls,
             (unsigned long long)out->block_size, out->fresh ? 1 : 0);
        CHECK(out->fresh == (existing ? false : true));
        CHECK(out->block_size >= 512 && out->block_size <= (uint64_t)MiB);
        CHECK(out->bytes_written >= out->zeros_written);
        CHECK(out->bytes_written <= 800000);
        CHECK(out->write_calls >= 1);
        CHECK(out->hole_bytes <= 800000);
        CHECK(out->bytes_written + out->hole_bytes >= 10000 + 5000 + 256 * KiB + 3000);
        if (flags & FSPACE_SPARSE_WRITER_NO_DETECT)
            CHECK(out->zero_bytes_found == 0);
        else
            CHECK(out->zero_bytes_found >= (uint64_t)(64 * KiB) - 2 * out->block_size);
        if (existing && g_caps_known && !g_caps[FSPACE_CAP_PUNCH_HOLE]) {
            /* no holes can be made in a file that has blocks: zeros */
            CHECK(out->holes == 0);
            CHECK(out->hole_bytes == 0);
            CHECK(out->zeros_written >= 100000 + (300000 - 110000));
        } else if (!(flags & FSPACE_SPARSE_WRITER_NO_HOLES)) {
            CHECK(out->holes >= 3); /* skip + write_at gap, seek gap, tail */
            CHECK(out->hole_bytes >= 100000 + (300000 - 110000) + (800000 - 703000));
        } else {
            /* "write zeros for skipped ranges too" */
            CHECK(out->zeros_written >= 100000);
        }
        if (!existing)
            CHECK(out->punch_calls == 0 || g_caps[FSPACE_CAP_PUNCH_HOLE]);
    }

    {
        char label[256];
        snprintf(label, sizeof label, "%s", g_section);
        section("%s: after finish", label);
    }
    {
        uint64_t keep = 0xABCDEF;
        fspace_sparse_stats st2;
        memset(&st2, 0x11, sizeof st2);
        CHECK_RC(fspace_sparse_writer_write(w, data, 10), -EINVAL);
        CHECK(strstr(fspace_last_error(), "finished") != NULL);
        CHECK_RC(fspace_sparse_writer_write(w, NULL, 0), -EINVAL);
        CHECK_RC(fspace_sparse_writer_write_at(w, 900000, data, 10), -EINVAL);
        CHECK_RC(fspace_sparse_writer_skip(w, 10), -EINVAL);
        CHECK_RC(fspace_sparse_writer_seek(w, 900000), -EINVAL);
        CHECK_RC(fspace_sparse_writer_set_len(w, 900000), -EINVAL);
        CHECK_RC(fspace_sparse_writer_position(w, &keep), -EINVAL);
        CHECK(keep == 0xABCDEF);
        CHECK_RC(fspace_sparse_writer_finish(w, &st2, sizeof st2), -EINVAL);
        CHECK_RC(fspace_sparse_writer_finish(w, NULL, 0), -EINVAL);
        {
            unsigned char b[sizeof st2];
            memset(b, 0x11, sizeof b);
            CHECK(memcmp(&st2, b, sizeof st2) == 0);
        }
    }
    fspace_sparse_writer_free(w);

    /* the descriptor's own offset is neither used nor moved */
    CHECK(lseek(fd, 0, SEEK_CUR) == 0);
    close(fd);

    {
        size_t n = 0;
        unsigned char *got = read_all(path, &n);
        CHECK(got != NULL);
        CHECK(n == m.len);
        CHECK(file_size(path) == (long long)m.len);
        if (got != NULL && n == m.len)
            CHECK(memcmp(got, m.bytes, n) == 0);
        free(got);
    }
    {
        /* the whole blocks of the skipped range [10000, 110000) */
        int skipped = hole_state(path, 12288, 106496);
        /* the whole blocks of the gap before write_at [110000, 300000) */
        int gap = hole_state(path, 110592, 299008);
        note("  skipped range: %d, write_at gap: %d (1 hole, 0 data, 2 mixed, -1 unknown)", skipped, gap);
        if (skipped >= 0) {
            if (flags & FSPACE_SPARSE_WRITER_NO_HOLES)
                CHECK(skipped == 0); /* written as zeros */
            else if (!existing || g_caps[FSPACE_CAP_PUNCH_HOLE])
                CHECK(skipped == 1);
            if (!existing || g_caps[FSPACE_CAP_PUNCH_HOLE])
                CHECK(gap == 1);
        }
    }
out:
    free(m.bytes);
    free(data);
    free(zeros);
}

static void test_sparse_writer(void)
{
    static const uint32_t flag_sets[] = {
        0, FSPACE_SPARSE_WRITER_NO_DETECT, FSPACE_SPARSE_WRITER_NO_HOLES,
        FSPACE_SPARSE_WRITER_NO_DETECT | FSPACE_SPARSE_WRITER_NO_HOLES,
        4 /* flags 0 with a NULL path */,
    };
    size_t i;
    char path[4096];
    fspace_sparse_stats st;

    join(path, sizeof path, g_work, "sparse");
    for (i = 0; i < sizeof flag_sets / sizeof flag_sets[0]; i++) {
        section("sparse writer flags %u", (unsigned)flag_sets[i]);
        writer_script(path, flag_sets[i], 0, &st);
        unlink(path);
    }
    section("sparse writer over an existing file");
    writer_script(path, 0, 1, &st);
    unlink(path);
    section("sparse writer NO_HOLES over an existing file");
    writer_script(path, FSPACE_SPARSE_WRITER_NO_HOLES, 1, &st);
    unlink(path);

    section("sparse writer freed without finish");
    {
        int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0644);
        fspace_sparse_writer *w = NULL;
        unsigned char buf[4096];
        CHECK(fd >= 0);
        if (fd >= 0) {
            memset(buf, 7, sizeof buf);
            if (CHECK_OK(fspace_sparse_writer_new(fd, path, 0, &w)) == 0) {
                CHECK_OK(fspace_sparse_writer_write(w, buf, sizeof buf));
                CHECK_OK(fspace_sparse_writer_skip(w, 8192));
                fspace_sparse_writer_free(w); /* discards what is buffered; no leak */
            }
            close(fd);
        }
        unlink(path);
    }

    section("sparse writer of nothing");
    {
        int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0644);
        fspace_sparse_writer *w = NULL;
        CHECK(fd >= 0);
        if (fd >= 0) {
            if (CHECK_OK(fspace_sparse_writer_new(fd, path, 0, &w)) == 0) {
                CHECK_OK(fspace_sparse_writer_finish(w, NULL, 0));
                fspace_sparse_writer_free(w);
            }
            close(fd);
        }
        CHECK(file_size(path) == 0);
        unlink(path);
    }

    section("sparse writer of only a length");
    {
        int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0644);
        fspace_sparse_writer *w = NULL;
        CHECK(fd >= 0);
        if (fd >= 0) {
            if (CHECK_OK(fspace_sparse_writer_new(fd, path, 0, &w)) == 0) {
                CHECK_OK(fspace_sparse_writer_set_len(w, 300000));
                memset(&st, 0, sizeof st);
                CHECK_OK(fspace_sparse_writer_finish(w, &st, sizeof st));
                CHECK(st.bytes_written == 0);
                fspace_sparse_writer_free(w);
            }
            close(fd);
        }
        CHECK(file_size(path) == 300000);
        {
            size_t n = 0;
            unsigned char *b = read_all(path, &n);
            CHECK(b != NULL && n == 300000 && is_zero(b, 0, n));
            free(b);
        }
        unlink(path);
    }

    section("sparse_writer_free(NULL), copy_report_free(NULL)");
    fspace_sparse_writer_free(NULL);
    fspace_copy_report_free(NULL);
}

int main(int argc, char **argv)
{
    fspace_fs_info *info = NULL;

    g_prog = "test_copy";
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    make_work_dir(g_work, sizeof g_work, argv[1]);

    section("describe the filesystem");
    if (CHECK_OK(fspace_fs_info_new(g_work, &info)) == 0) {
        g_caps_known = load_caps(info, g_caps);
        fspace_fs_info_free(info);
    }

    test_copy();
    test_sparse_writer();

    CHECK_ENTRIES(g_work, 0);
    rm_rf(g_work);
    return g_failed ? 1 : 0;
}
