/*
 * test_extents.c: fspace_extent_map_new (flags 0, FSPACE_MAP_SYNC,
 * FSPACE_MAP_FORCE_SEEK), _count, _get, _summary, _json, _free on a file
 * with data, a hole and data; an empty file; a preallocated file.
 *
 * Usage: test_extents DIR. Works in DIR/test_extents.PID, removed at the end.
 * Exit: 0 all checks passed, 1 a check failed, 77 not applicable here.
 */
#define _GNU_SOURCE 1
#include "check.h"
#define KiB 1024LL
#define MiB (1024LL * 1024LL)

static char g_work[4096];
static int g_caps_known = 0;
static bool g_caps[8];

/* Data in [0, A) and [B, SIZE), a hole in [A, B). */
#define A (128 * KiB)
#define B (512 * KiB)
#define SIZE (640 * KiB)

static const char *state_name(fspace_extent_state s)
{
    static const char *const n[] = { "hole", "unwritten", "written", "shared",
                                     "delalloc", "inline", "data", "other" };
    return s < 8 ? n[s] : "?";
}

/* What a map says about the file: checked for consistency with itself. */
struct seen {
    size_t count;
    uint64_t hole_bytes;   /* sum of hole ranges */
    uint64_t data_ranges;  /* non-hole ranges */
    int hole_covers_gap;   /* [A, B) lies in hole ranges */
    int data_covered;      /* [0, A) and [B, SIZE) lie in non-hole ranges */
    int states_ok;         /* every state valid (DATA only from SEEK) */
};

/* Walks every range of `m`, checking they are contiguous, in order and
 * cover 0..size. */
static void walk(fspace_extent_map *m, uint64_t size, int fiemap, int with_gap, struct seen *out)
{
    size_t i, count = 0;
    uint64_t pos = 0;
    fspace_extent e;

    memset(out, 0, sizeof *out);
    out->hole_covers_gap = 1;
    out->data_covered = 1;
    out->states_ok = 1;
    if (CHECK_OK(fspace_extent_map_count(m, &count)) != 0)
        return;
    out->count = count;
    if (size > 0)
        CHECK(count >= 1);
    else
        CHECK(count == 0);
    for (i = 0; i < count; i++) {
        memset(&e, 0xA5, sizeof e);
        if (CHECK_OK(fspace_extent_map_get(m, i, &e, sizeof e)) != 0)
            return;
        note("  [%zu] %llu+%llu %s", i, (unsigned long long)e.offset, (unsigned long long)e.length,
             state_name(e.state));
        CHECK(e.offset == pos); /* contiguous, in order, from 0 */
        CHECK(e.length > 0);
        CHECK(e.state <= FSPACE_EXTENT_OTHER);
        if (e.state > FSPACE_EXTENT_OTHER)
            out->states_ok = 0;
        if (fiemap && e.state == FSPACE_EXTENT_DATA)
            out->states_ok = 0;
        if (!fiemap && e.state != FSPACE_EXTENT_DATA && e.state != FSPACE_EXTENT_HOLE)
            out->states_ok = 0;
        if (e.state == FSPACE_EXTENT_HOLE) {
            out->hole_bytes += e.length;
            /* a hole must not overlap the data */
            if (with_gap && (e.offset < (uint64_t)A || e.offset + e.length > (uint64_t)B))
                out->data_covered = 0;
        } else {
            out->data_ranges++;
            if (with_gap && e.offset < (uint64_t)B && e.offset + e.length > (uint64_t)A)
                out->hole_covers_gap = 0;
        }
        pos = e.offset + e.length;
    }
    CHECK(pos == size); /* covers 0..size */

    /* one past the end, and far past it */
    {
        fspace_extent keep;
        memset(&keep, 0x5A, sizeof keep);
        memcpy(&e, &keep, sizeof e);
        CHECK_RC(fspace_extent_map_get(m, count, &e, sizeof e), -ERANGE);
        CHECK(memcmp(&e, &keep, sizeof e) == 0);
        CHECK(fspace_last_error()[0] != '\0');
        CHECK_RC(fspace_extent_map_get(m, count + 1, &e, sizeof e), -ERANGE);
        CHECK_RC(fspace_extent_map_get(m, SIZE_MAX, &e, sizeof e), -ERANGE);
        CHECK(memcmp(&e, &keep, sizeof e) == 0);
    }
}

static void check_summary(fspace_extent_map *m, const struct seen *w, uint64_t size,
                          fspace_extent_summary *s)
{
    memset(s, 0xA5, sizeof *s);
    if (CHECK_OK(fspace_extent_map_summary(m, s, sizeof *s)) != 0)
        return;
    note("  summary: size %llu allocated %lld written %lld unwritten %lld holes %llu shared %lld "
         "delalloc %lld extents %llu beyond %lld fiemap %d",
         (unsigned long long)s->size, (long long)s->allocated, (long long)s->written,
         (long long)s->unwritten, (unsigned long long)s->holes, (long long)s->shared,
         (long long)s->delalloc, (unsigned long long)s->extents, (long long)s->beyond_eof,
         s->fiemap ? 1 : 0);
    CHECK(s->size == size);
    if (s->holes == UINT64_MAX) {
        /* unknown: SEEK_HOLE may be blind here (sshfs) and found none */
        CHECK(!s->fiemap);
        CHECK(w->data_ranges <= 1);
    } else {
        CHECK(s->holes == w->hole_bytes);
        CHECK(s->holes <= s->size);
    }
    CHECK(s->extents == w->data_ranges);
    if (s->fiemap) {
        /* FIEMAP measures everything */
        CHECK(s->allocated == s->size - s->holes);
        CHECK(s->written != UINT64_MAX);
        CHECK(s->unwritten != UINT64_MAX);
        CHECK(s->shared != UINT64_MAX);
        CHECK(s->delalloc != UINT64_MAX);
        CHECK(s->beyond_eof != UINT64_MAX);
        if (s->written != UINT64_MAX && s->unwritten != UINT64_MAX && s->delalloc != UINT64_MAX)
            CHECK(s->written + s->unwritten + s->delalloc <= s->allocated);
        if (s->shared != UINT64_MAX && s->written != UINT64_MAX)
            CHECK(s->shared <= s->written);
    } else {
        /* SEEK_DATA cannot tell written from unwritten */
        CHECK(s->written == UINT64_MAX);
        CHECK(s->unwritten == UINT64_MAX);
        CHECK(s->allocated == UINT64_MAX || s->allocated <= s->size);
    }
}

static void check_json(fspace_extent_map *m)
{
    const char *json = NULL, *again = NULL;
    if (CHECK_OK(fspace_extent_map_json(m, &json)) == 0) {
        CHECK(starts_with_char(json, '{'));
        CHECK_OK(fspace_extent_map_json(m, &again));
        CHECK(again == json);
    }
}

/* Whether this filesystem tells holes at all (else a map shows none). */
static int reports_holes(const fspace_extent_summary *s)
{
    if (s->fiemap)
        return 1;
    return g_caps_known ? (g_caps[FSPACE_CAP_SEEK_HOLE] ? 1 : 0) : (s->holes > 0);
}

static void map_holey(const char *path, uint32_t flags, const char *label)
{
    fspace_extent_map *m = NULL;
    struct seen w;
    fspace_extent_summary s;

    section("map %s (flags %u)", label, (unsigned)flags);
    note("map %s:", label);
    if (CHECK_OK(fspace_extent_map_new(path, flags, &m)) != 0 || m == NULL)
        return;
    memset(&s, 0, sizeof s);
    if (CHECK_OK(fspace_extent_map_summary(m, &s, sizeof s)) == 0) {
        walk(m, (uint64_t)SIZE, s.fiemap ? 1 : 0, 1, &w);
        CHECK(w.states_ok);
        check_summary(m, &w, (uint64_t)SIZE, &s);
        if (flags & FSPACE_MAP_FORCE_SEEK)
            CHECK(s.fiemap == false);
        if (g_caps_known && !(flags & FSPACE_MAP_FORCE_SEEK))
            CHECK((s.fiemap ? 1 : 0) == (g_caps[FSPACE_CAP_FIEMAP] ? 1 : 0));
        if (s.fiemap && (flags & FSPACE_MAP_SYNC))
            CHECK(s.delalloc == 0); /* flushed first */
        /* the data is never in a hole */
        CHECK(w.data_covered);
        if (reports_holes(&s)) {
            CHECK(s.holes == (uint64_t)(B - A));
            CHECK(w.hole_covers_gap);
            CHECK(s.extents >= 2);
            if (s.fiemap)
                CHECK(s.allocated == (uint64_t)(SIZE - (B - A)));
            else if (s.allocated != UINT64_MAX)
                /* from st_blocks: ext4 without extents counts its indirect
                 * blocks too */
                CHECK(s.allocated >= (uint64_t)(SIZE - (B - A)));
        } else {
            /* sshfs: no FIEMAP, SEEK_HOLE says all data: holes unknown */
            CHECK(s.fiemap == false);
            CHECK(s.holes == UINT64_MAX);
            CHECK(s.extents == 1);
        }
    }
    check_json(m);
    fspace_extent_map_free(m);
}

static void test_holey(void)
{
    char path[4096];
    int fd;

    join(path, sizeof path, g_work, "holey");
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    /* the tail first, so that no speculative preallocation past the end
     * of the first write lands in the hole */
    CHECK(write_pattern(fd, (unsigned long long)B, (size_t)(SIZE - B), 1) == 0);
    CHECK(write_pattern(fd, 0, (size_t)A, 1) == 0);
    close(fd);

    map_holey(path, 0, "unsynced");
    map_holey(path, FSPACE_MAP_SYNC, "sync");
    map_holey(path, FSPACE_MAP_FORCE_SEEK, "force-seek");
    map_holey(path, FSPACE_MAP_SYNC | FSPACE_MAP_FORCE_SEEK, "sync+force-seek");
    map_holey(path, 0, "after sync");

    section("mapping changes nothing");
    {
        size_t n = 0;
        unsigned char *buf = read_all(path, &n);
        CHECK(buf != NULL && n == (size_t)SIZE);
        if (buf != NULL && n == (size_t)SIZE) {
            CHECK(is_pattern(buf, 0, (size_t)A, 1));
            CHECK(is_zero(buf, (size_t)A, (size_t)B));
            CHECK(is_pattern(buf, (size_t)B, (size_t)SIZE, 1));
        }
        free(buf);
    }

    section("unknown map flag");
    {
        fspace_extent_map *m = (fspace_extent_map *)(uintptr_t)0x1;
        CHECK_RC(fspace_extent_map_new(path, 4, &m), -EINVAL);
        CHECK(m == (fspace_extent_map *)(uintptr_t)0x1);
        CHECK_RC(fspace_extent_map_new(path, UINT32_MAX, &m), -EINVAL);
        CHECK(m == (fspace_extent_map *)(uintptr_t)0x1);
    }
    unlink(path);
}

static void test_empty_and_dense(void)
{
    char path[4096];
    int fd;
    fspace_extent_map *m = NULL;
    fspace_extent_summary s;
    struct seen w;

    section("map an empty file");
    join(path, sizeof path, g_work, "empty");
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    CHECK(fd >= 0);
    if (fd >= 0)
        close(fd);
    if (CHECK_OK(fspace_extent_map_new(path, 0, &m)) == 0 && m != NULL) {
        memset(&s, 0, sizeof s);
        CHECK_OK(fspace_extent_map_summary(m, &s, sizeof s));
        walk(m, 0, s.fiemap ? 1 : 0, 0, &w);
        CHECK(w.count == 0);
        check_summary(m, &w, 0, &s);
        CHECK(s.holes == 0 && s.extents == 0);
        check_json(m);
        fspace_extent_map_free(m);
    }

    section("map a file that is all hole");
    fd = open(path, O_WRONLY);
    CHECK(fd >= 0);
    if (fd >= 0) {
        CHECK(ftruncate(fd, 256 * KiB) == 0);
        close(fd);
    }
    m = NULL;
    if (CHECK_OK(fspace_extent_map_new(path, FSPACE_MAP_SYNC, &m)) == 0 && m != NULL) {
        memset(&s, 0, sizeof s);
        CHECK_OK(fspace_extent_map_summary(m, &s, sizeof s));
        walk(m, (uint64_t)(256 * KiB), s.fiemap ? 1 : 0, 0, &w);
        check_summary(m, &w, (uint64_t)(256 * KiB), &s);
        if (reports_holes(&s)) {
            CHECK(w.count == 1);
            CHECK(s.holes == (uint64_t)(256 * KiB));
            CHECK(s.extents == 0);
        }
        fspace_extent_map_free(m);
    }
    unlink(path);

    section("map a preallocated file");
    join(path, sizeof path, g_work, "prealloc");
    {
        fspace_grow_options o;
        int rc;
        fspace_grow_options_init(&o, sizeof o);
        o.strategy = FSPACE_STRATEGY_ALLOCATE;
        o.fallback = false;
        o.create = true;
        rc = fspace_grow(path, MiB, &o, NULL);
        CHECK(rc == 0 || rc == -EOPNOTSUPP);
        if (g_caps_known)
            CHECK((rc == 0) == (g_caps[FSPACE_CAP_FALLOCATE] ? 1 : 0));
        if (rc == 0) {
            m = NULL;
            if (CHECK_OK(fspace_extent_map_new(path, FSPACE_MAP_SYNC, &m)) == 0 && m != NULL) {
                memset(&s, 0, sizeof s);
                CHECK_OK(fspace_extent_map_summary(m, &s, sizeof s));
                note("map prealloc:");
                walk(m, (uint64_t)MiB, s.fiemap ? 1 : 0, 0, &w);
                check_summary(m, &w, (uint64_t)MiB, &s);
                /* SEEK_DATA on tmpfs reports fallocated pages as holes
                 * (they are not uptodate), so only FIEMAP must say "no
                 * hole"; st_blocks says allocated either way */
                if (s.allocated != UINT64_MAX)
                    CHECK(s.allocated == (uint64_t)MiB);
                if (s.fiemap) {
                    CHECK(s.holes == 0);
                    /* fallocate gives unwritten extents */
                    CHECK(s.unwritten == (uint64_t)MiB);
                    CHECK(s.written == 0);
                }
                fspace_extent_map_free(m);
            }
        }
        unlink(path);
    }
}

static void test_not_files(void)
{
    char path[4096];
    fspace_extent_map *m = (fspace_extent_map *)(uintptr_t)0x1;

    section("map a directory");
    CHECK_RC(fspace_extent_map_new(g_work, 0, &m), -EISDIR);
    CHECK(m == (fspace_extent_map *)(uintptr_t)0x1);
    CHECK(strstr(fspace_last_error(), g_work) != NULL);

    section("map a missing file");
    join(path, sizeof path, g_work, "missing");
    CHECK_RC(fspace_extent_map_new(path, 0, &m), -ENOENT);
    CHECK(m == (fspace_extent_map *)(uintptr_t)0x1);
    CHECK(strstr(fspace_last_error(), "missing") != NULL);
    CHECK(file_size(path) == -1);

    section("map_free(NULL)");
    fspace_extent_map_free(NULL);
}

int main(int argc, char **argv)
{
    fspace_fs_info *info = NULL;

    g_prog = "test_extents";
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

    test_holey();
    test_empty_and_dense();
    test_not_files();

    CHECK_ENTRIES(g_work, 0);
    rm_rf(g_work);
    return g_failed ? 1 : 0;
}
