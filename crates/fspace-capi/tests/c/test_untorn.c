/*
 * test_untorn.c: untorn (atomic) writes: fspace_untorn_facts_* (a
 * filesystem's, measured on a scratch file, and an existing file's),
 * fspace_untorn_answer_*, fspace_write_untorn, fspace_check_untorn_layout,
 * and growth with an untorn unit (fspace_grow_report_untorn, _untorn_note,
 * _untorn_layout_error).
 *
 * What the matrix's filesystems do on Linux 6.18 (docs/untorn.md): XFS
 * with reflink reports untorn writes supported and makes them by its
 * software path (the loop devices have no atomic writes); ext4 and ext3
 * report a unit of 0; btrfs, tmpfs and sshfs do not report. No buffered
 * write is untorn anywhere.
 *
 * Usage: test_untorn DIR. Works in DIR/test_untorn.PID, removed at the end.
 * Exit: 0 all checks passed, 1 a check failed, 77 not applicable here.
 */
#define _GNU_SOURCE 1
#include "check.h"
#define KiB 1024LL
#define MiB (1024LL * 1024LL)

static char g_fs[256];

static int fs_is(const char *name)
{
    return strcmp(g_fs, name) == 0;
}

/* The state the matrix's filesystems report, or -1 for one not known. */
static int expected_state(void)
{
    if (fs_is("xfs"))
        return FSPACE_UNTORN_SUPPORTED;
    if (fs_is("ext4") || fs_is("ext3"))
        return FSPACE_UNTORN_ZERO;
    if (fs_is("btrfs") || fs_is("tmpfs") || strstr(g_fs, "sshfs") != NULL)
        return FSPACE_UNTORN_NOT_REPORTED;
    return -1;
}

/* A page-aligned buffer of `len` bytes of `byte` (free it with free). */
static unsigned char *page_buf(size_t len, unsigned char byte)
{
    void *p = NULL;
    if (posix_memalign(&p, 4096, len) != 0)
        return NULL;
    memset(p, byte, len);
    return (unsigned char *)p;
}

/* Opens `path` for reading and writing with O_DIRECT; where the
 * filesystem refuses O_DIRECT, without it (the untorn write is refused
 * either way there, for the filesystem's limits first). */
static int open_direct(const char *path, int *direct)
{
    int fd = open(path, O_RDWR | O_DIRECT);
    *direct = fd >= 0;
    if (fd < 0)
        fd = open(path, O_RDWR);
    return fd;
}

static void test_names(void)
{
    static const struct { fspace_untorn_state s; const char *name; } names[] = {
        { FSPACE_UNTORN_UNKNOWN, "unknown" },
        { FSPACE_UNTORN_NOT_REPORTED, "not-reported" },
        { FSPACE_UNTORN_ZERO, "zero" },
        { FSPACE_UNTORN_SUPPORTED, "supported" },
    };
    size_t i;
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *n = fspace_untorn_state_name(names[i].s);
        section("state name %u", (unsigned)names[i].s);
        CHECK(n != NULL && strcmp(n, names[i].name) == 0);
    }
    section("unknown state name");
    CHECK(fspace_untorn_state_name(4) == NULL);
}

/* The filesystem's facts, measured on a scratch file in `work`; returns
 * the handle (free it) with its summary in *s, or NULL. */
static fspace_untorn_facts *test_facts_of_fs(const char *work, fspace_untorn_summary *s)
{
    fspace_untorn_facts *f = NULL;
    const char *json = NULL;
    size_t i;
    int want;

    section("facts_of_fs");
    if (CHECK_OK(fspace_untorn_facts_of_fs(work, &f)) != 0 || f == NULL)
        return NULL;
    memset(s, 0xA5, sizeof *s);
    if (CHECK_OK(fspace_untorn_facts_get(f, s, sizeof *s)) != 0) {
        fspace_untorn_facts_free(f);
        return NULL;
    }
    CHECK(s->filesystem != NULL && s->filesystem[0] != '\0');
    CHECK(s->path != NULL && strcmp(s->path, work) == 0);
    snprintf(g_fs, sizeof g_fs, "%s", s->filesystem != NULL ? s->filesystem : "");
    note("%s: %s, unit %u..%u (opt %u, %u segments), source %u, hardware max %u, block %u, "
         "dio align %u, hint %u, reflink %d/%d, %zu trials",
         g_fs, fspace_untorn_state_name(s->state) ? fspace_untorn_state_name(s->state) : "?",
         s->unit_min, s->unit_max, s->unit_max_opt, s->segments_max, s->source, s->hardware_max,
         s->block_size, s->direct_io_align, s->extent_size_hint, s->reflink_known, s->reflink,
         s->trials);
    CHECK(s->scratch);
    CHECK(fspace_untorn_state_name(s->state) != NULL);
    want = expected_state();
    section("facts_of_fs: the state on %s", g_fs);
    if (want >= 0)
        CHECK(s->state == (fspace_untorn_state)want);
    CHECK(s->statx_errno == 0);
    if (s->state == FSPACE_UNTORN_SUPPORTED) {
        CHECK(s->unit_min > 0 && s->unit_min <= 4096);
        CHECK(s->unit_max >= 16384);
        CHECK(s->unit_min <= s->unit_max);
        CHECK(s->segments_max >= 1);
        CHECK((s->unit_min & (s->unit_min - 1)) == 0);
        CHECK((s->unit_max & (s->unit_max - 1)) == 0);
        if (fs_is("xfs")) {
            /* the matrix's loop devices have no atomic writes: XFS's
             * software path carries every size, and needs reflink */
            CHECK(s->source == FSPACE_UNTORN_SOURCE_FILESYSTEM);
            CHECK(s->hardware_max == 0);
            CHECK(s->reflink_known && s->reflink);
            CHECK(s->extent_size_hint != UINT32_MAX); /* XFS has hints */
            CHECK(s->direct_io_align != UINT32_MAX && s->direct_io_align > 0);
        }
    } else {
        CHECK(s->unit_min == 0 && s->unit_max == 0 && s->unit_max_opt == 0);
        CHECK(s->segments_max == 0);
        CHECK(s->source == FSPACE_UNTORN_SOURCE_NONE);
        CHECK(s->hardware_max == 0);
    }
    /* FUSE has no FS_IOC_FSGETXATTR (ext4, btrfs and tmpfs answer 0) */
    if (strstr(g_fs, "sshfs") != NULL)
        CHECK(s->extent_size_hint == UINT32_MAX);
    CHECK(s->block_size > 0);

    section("facts_of_fs: trials on %s", g_fs);
    CHECK(s->trials == 6); /* 8 and 16 KiB buffered, 4, 8, 16, 64 KiB direct */
    for (i = 0; i < s->trials; i++) {
        fspace_untorn_trial t;
        memset(&t, 0xA5, sizeof t);
        if (CHECK_OK(fspace_untorn_facts_trial(f, i, &t, sizeof t)) != 0)
            continue;
        note("trial %zu: %u bytes %s: %s (error %d)", i, t.size,
             t.io == FSPACE_IO_DIRECT ? "direct" : "buffered", t.ok ? "taken" : "refused", t.error);
        CHECK(t.io == FSPACE_IO_DIRECT || t.io == FSPACE_IO_BUFFERED);
        CHECK(t.size == 4096 || t.size == 8192 || t.size == 16384 || t.size == 65536);
        if (t.io == FSPACE_IO_BUFFERED) {
            /* no buffered write is untorn on this kernel */
            CHECK(!t.ok);
            CHECK(t.error == EOPNOTSUPP);
        } else if (s->state == FSPACE_UNTORN_SUPPORTED && t.size >= s->unit_min &&
                   t.size <= s->unit_max) {
            CHECK(t.ok);
            CHECK(t.error == 0);
        } else {
            CHECK(!t.ok);
        }
        if (t.ok && t.io == FSPACE_IO_DIRECT)
            CHECK(fs_is("xfs") || want < 0);
    }
    CHECK_RC(fspace_untorn_facts_trial(f, s->trials, NULL, 0), -EINVAL);
    {
        fspace_untorn_trial t;
        CHECK_RC(fspace_untorn_facts_trial(f, s->trials, &t, sizeof t), -ERANGE);
        CHECK_RC(fspace_untorn_facts_trial(f, SIZE_MAX, &t, sizeof t), -ERANGE);
    }

    section("facts_of_fs: json");
    if (CHECK_OK(fspace_untorn_facts_json(f, &json)) == 0 && json != NULL) {
        const char *again = NULL;
        const char *name = fspace_untorn_state_name(s->state);
        char want_state[64];
        CHECK(starts_with_char(json, '{'));
        snprintf(want_state, sizeof want_state, "\"state\": \"%s\"", name ? name : "?");
        CHECK(strstr(json, want_state) != NULL);
        CHECK(strstr(json, "\"tried\"") != NULL);
        CHECK_OK(fspace_untorn_facts_json(f, &again));
        CHECK(again == json); /* owned by the handle */
    }

    section("facts_of_fs leaves no scratch file behind");
    CHECK_ENTRIES(work, 0);
    return f;
}

/* The one answer per page size and I/O path: untorn only through
 * O_DIRECT on XFS. */
static void test_answers(fspace_untorn_facts *f, const fspace_untorn_summary *s)
{
    static const int64_t pages[] = { 8192, 16384 };
    static const fspace_io_path ios[] = { FSPACE_IO_DIRECT, FSPACE_IO_BUFFERED };
    size_t p, i;

    for (p = 0; p < 2; p++) {
        for (i = 0; i < 2; i++) {
            fspace_untorn_answer *a = NULL;
            fspace_untorn_verdict v;
            const char *json = NULL;
            int yes = fs_is("xfs") && ios[i] == FSPACE_IO_DIRECT;
            section("answer for %lld bytes %s on %s", (long long)pages[p],
                    ios[i] == FSPACE_IO_DIRECT ? "direct" : "buffered", g_fs);
            if (CHECK_OK(fspace_untorn_answer_new(f, pages[p], ios[i], &a)) != 0 || a == NULL)
                continue;
            memset(&v, 0xA5, sizeof v);
            if (CHECK_OK(fspace_untorn_answer_get(a, &v, sizeof v)) == 0) {
                note("%s", v.reason);
                CHECK(v.page_size == (uint64_t)pages[p]);
                CHECK(v.io == ios[i]);
                if (expected_state() >= 0)
                    CHECK(v.untorn == (yes != 0));
                CHECK(v.reason != NULL && v.reason[0] != '\0');
                CHECK(v.limit_name != NULL);
                /* the filesystem's facts carry a trial of each */
                CHECK(v.trial_made);
                if (v.untorn) {
                    CHECK(v.limit == FSPACE_UNTORN_LIMIT_NONE);
                    CHECK(v.limit_name[0] == '\0');
                    CHECK(v.confirmed);
                    CHECK(v.path != FSPACE_WRITE_PATH_NONE);
                    if (fs_is("xfs"))
                        CHECK(v.path == FSPACE_WRITE_PATH_SOFTWARE);
                } else {
                    CHECK(v.limit != FSPACE_UNTORN_LIMIT_NONE);
                    CHECK(v.limit_name[0] != '\0');
                    CHECK(v.path == FSPACE_WRITE_PATH_NONE);
                    CHECK(!v.confirmed);
                }
                if (ios[i] == FSPACE_IO_BUFFERED) {
                    CHECK(v.limit == FSPACE_UNTORN_LIMIT_BUFFERED);
                    CHECK(strcmp(v.limit_name, "buffered") == 0);
                    CHECK(strstr(v.reason, "only with O_DIRECT") != NULL);
                } else if (s->state != FSPACE_UNTORN_SUPPORTED) {
                    CHECK(v.limit == FSPACE_UNTORN_LIMIT_NOT_SUPPORTED);
                    CHECK(strcmp(v.limit_name, "not-supported") == 0);
                }
            }
            if (CHECK_OK(fspace_untorn_answer_json(a, &json)) == 0 && json != NULL) {
                CHECK(starts_with_char(json, '{'));
                CHECK(strstr(json, v.untorn ? "\"untorn\": true" : "\"untorn\": false") != NULL);
            }
            fspace_untorn_answer_free(a);
        }
    }

    section("answer: sizes the limits do not take");
    {
        static const struct { int64_t size; fspace_untorn_limit limit; } odd[] = {
            { 12288, FSPACE_UNTORN_LIMIT_NOT_POWER_OF_TWO },
            { 0, FSPACE_UNTORN_LIMIT_NOT_POWER_OF_TWO },
            { 1LL << 40, FSPACE_UNTORN_LIMIT_ABOVE_MAXIMUM },
        };
        for (i = 0; i < sizeof odd / sizeof odd[0]; i++) {
            fspace_untorn_answer *a = NULL;
            fspace_untorn_verdict v;
            if (CHECK_OK(fspace_untorn_answer_new(f, odd[i].size, FSPACE_IO_DIRECT, &a)) != 0 || a == NULL)
                continue;
            if (CHECK_OK(fspace_untorn_answer_get(a, &v, sizeof v)) == 0) {
                CHECK(!v.untorn);
                CHECK(v.limit == (s->state == FSPACE_UNTORN_SUPPORTED ? odd[i].limit
                                                                      : FSPACE_UNTORN_LIMIT_NOT_SUPPORTED));
                /* no trial of these sizes */
                CHECK(!v.trial_made);
            }
            fspace_untorn_answer_free(a);
        }
    }
}

/* The facts of an existing file: nothing written, no trials. */
static void test_facts_of_file(const char *file, const fspace_untorn_summary *fs)
{
    fspace_untorn_facts *f = NULL;
    fspace_untorn_summary s;
    fspace_untorn_answer *a = NULL;
    long long before = file_size(file);

    section("facts_new on a file");
    if (CHECK_OK(fspace_untorn_facts_new(file, &f)) != 0 || f == NULL)
        return;
    if (CHECK_OK(fspace_untorn_facts_get(f, &s, sizeof s)) == 0) {
        CHECK(!s.scratch);
        CHECK(s.trials == 0);
        CHECK(s.state == fs->state);
        CHECK(s.unit_min == fs->unit_min && s.unit_max == fs->unit_max);
        CHECK(s.path != NULL && strcmp(s.path, file) == 0);
        CHECK(s.filesystem != NULL && strcmp(s.filesystem, fs->filesystem) == 0);
    }
    section("answer from a file's facts: no trial");
    if (CHECK_OK(fspace_untorn_answer_new(f, 16384, FSPACE_IO_DIRECT, &a)) == 0 && a != NULL) {
        fspace_untorn_verdict v;
        if (CHECK_OK(fspace_untorn_answer_get(a, &v, sizeof v)) == 0) {
            CHECK(!v.trial_made && !v.confirmed);
            if (expected_state() >= 0)
                CHECK(v.untorn == (fs_is("xfs") != 0));
        }
        fspace_untorn_answer_free(a);
    }
    fspace_untorn_facts_free(f);
    CHECK(file_size(file) == before);
}

/* Growth for untorn writes of 16 KiB, then the writes. */
static void test_grow_and_write(const char *work, const fspace_untorn_summary *fs)
{
    char file[4096];
    fspace_grow_options o;
    fspace_grow_report *r = NULL;
    fspace_untorn_ready u;
    unsigned char *before = NULL, *after = NULL;
    size_t n_before = 0, n_after = 0;
    int fd, direct = 0;

    join(file, sizeof file, work, "pages");
    section("grow with an untorn unit on %s", g_fs);
    CHECK_OK(fspace_grow_options_init(&o, sizeof o));
    CHECK(o.untorn_unit == 0);
    o.create = true;
    o.sync = true;
    o.untorn_unit = 16384;
    if (fs->state != FSPACE_UNTORN_SUPPORTED) {
        /* no untorn writes here: said first, with the reason, and nothing
         * is created (no "all units aligned" on space that can tear) */
        CHECK_RC(fspace_grow(file, 1 * MiB, &o, &r), -EOPNOTSUPP);
        CHECK(r == NULL);
        CHECK(strstr(fspace_last_error(), "takes no untorn writes") != NULL);
        CHECK(strstr(fspace_last_error(), "statx") != NULL);
        note("grow with an untorn unit: %s", fspace_last_error());
        CHECK(file_size(file) == -1);
        /* written log space without the unit, for the refusals below */
        o.untorn_unit = 0;
        o.intent = FSPACE_INTENT_LOG;
        if (CHECK_OK(fspace_grow(file, 1 * MiB, &o, NULL)) != 0)
            return;
        goto grown;
    }
    if (CHECK_OK(fspace_grow(file, 1 * MiB, &o, &r)) != 0 || r == NULL)
        return;
    memset(&u, 0xA5, sizeof u);
    if (CHECK_OK(fspace_grow_report_untorn(r, &u, sizeof u)) == 0) {
        note("ready: unit %u, state %u, %u collapses, hint %u, note \"%s\", layout %s: %llu of %llu units pass "
             "(holes %llu, unwritten %llu, split %llu, misaligned %llu, shared %llu, other %llu)%s%s",
             u.unit, u.state, u.collapses, u.extent_size_hint, u.hint_note, u.layout_known ? "known" : "unknown",
             (unsigned long long)u.layout.ok, (unsigned long long)u.layout.units,
             (unsigned long long)u.layout.holes, (unsigned long long)u.layout.unwritten,
             (unsigned long long)u.layout.split, (unsigned long long)u.layout.misaligned,
             (unsigned long long)u.layout.shared, (unsigned long long)u.layout.other,
             u.layout_error[0] ? ": " : "", u.layout_error);
        CHECK(u.unit == 16384);
        CHECK(u.state == fs->state);
        CHECK(u.hint_note != NULL && u.layout_error != NULL);
        if (u.layout_known) {
            CHECK(u.layout_error[0] == '\0');
            CHECK(u.layout.unit == 16384);
            CHECK(u.layout.units == (1 * MiB) / 16384);
            CHECK(u.layout.ok + u.layout.holes + u.layout.unwritten + u.layout.split +
                      u.layout.misaligned + u.layout.shared + u.layout.other ==
                  u.layout.units);
            CHECK(u.layout.passes == (u.layout.ok == u.layout.units));
            CHECK(u.layout.passes == (u.layout.first_bad == UINT64_MAX));
            /* written extents: intent log's plan */
            CHECK(u.layout.unwritten == 0);
        } else {
            CHECK(u.layout_error[0] != '\0');
            CHECK(u.layout.units == 0 && !u.layout.passes);
        }
        if (fs_is("xfs")) {
            CHECK(u.extent_size_hint == 16384);
            CHECK(u.hint_note[0] == '\0');
            /* every unit written, in one extent, at an aligned device
             * address: the growth collapses the blocks that put an extent
             * off the unit (on a fresh image, after the facts' scratch
             * file, the extent started off the unit without it) */
            CHECK(u.layout_known && u.layout.passes);
        } else if (fs_is("ext4") || fs_is("ext3") || fs_is("btrfs")) {
            CHECK(u.layout_known);
        } else if (fs_is("tmpfs") || strstr(g_fs, "sshfs") != NULL) {
            CHECK(!u.layout_known); /* no FIEMAP */
        }
        if (!fs_is("xfs"))
            CHECK(u.collapses == 0);
        {
            /* The same answers as values: a kind, an errno, the text. */
            fspace_reason why;
            fspace_note n;
            int rc = fspace_grow_report_untorn_layout_error(r, &why, sizeof why);
            if (u.layout_known) {
                CHECK_RC(rc, -ENODATA);
            } else if (CHECK_OK(rc) == 0) {
                CHECK(why.kind != FSPACE_ERROR_NONE);
                CHECK(why.text != NULL && strcmp(why.text, u.layout_error) == 0);
                note("layout error: kind %u, errno %d", (unsigned)why.kind, why.errnum);
            }
            rc = fspace_grow_report_untorn_note(r, FSPACE_UNTORN_NOTE_HINT, &n, sizeof n);
            if (u.hint_note[0] == '\0') {
                CHECK_RC(rc, -ENODATA);
            } else if (CHECK_OK(rc) == 0) {
                CHECK(n.kind == FSPACE_NOTE_HINT_NOT_SET);
                CHECK(strcmp(n.text, u.hint_note) == 0);
            }
            rc = fspace_grow_report_untorn_note(r, FSPACE_UNTORN_NOTE_ALIGNMENT, &n, sizeof n);
            if (rc == 0)
                CHECK(n.kind == FSPACE_NOTE_ALIGNMENT_STOPPED);
            else
                CHECK_RC(rc, -ENODATA);
            CHECK_RC(fspace_grow_report_untorn_note(r, 7, &n, sizeof n), -EINVAL);
        }
        if (strstr(g_fs, "sshfs") != NULL)
            CHECK(u.extent_size_hint == UINT32_MAX);
        else if (!fs_is("xfs"))
            CHECK(u.extent_size_hint == 0);
    }
    {
        const char *json = NULL;
        if (CHECK_OK(fspace_grow_report_json(r, &json)) == 0 && json != NULL)
            CHECK(strstr(json, "\"untorn\"") != NULL);
    }
    fspace_grow_report_free(r);
grown:
    CHECK(file_size(file) == 1 * MiB);
    test_facts_of_file(file, fs);

    section("check_untorn_layout on %s", g_fs);
    fd = open(file, O_RDONLY);
    CHECK(fd >= 0);
    if (fd >= 0) {
        fspace_untorn_layout l;
        int rc;
        memset(&l, 0xA5, sizeof l);
        /* the range rounded inwards to whole units: 1 KiB..1 MiB - 1 KiB
         * holds 62 whole 16 KiB units */
        rc = fspace_check_untorn_layout(fd, file, 1024, 1 * MiB - 2048, 16384, &l, sizeof l);
        if (fs->state != FSPACE_UNTORN_SUPPORTED) {
            /* refused first, with the reason, wherever there are none */
            CHECK(rc == -EOPNOTSUPP);
            CHECK(strstr(fspace_last_error(), "takes no untorn writes") != NULL);
        } else if (fs_is("tmpfs") || strstr(g_fs, "sshfs") != NULL) {
            CHECK(rc < 0); /* no FIEMAP */
            note("check_untorn_layout: %s", fspace_last_error());
        } else if (CHECK_OK(rc) == 0) {
            CHECK(l.unit == 16384);
            CHECK(l.start == 16384 && l.end == 1 * MiB - 16384);
            CHECK(l.units == 62);
            CHECK(l.passes == (l.ok == 62));
            CHECK(l.passes == (l.first_bad == UINT64_MAX));
            if (fs_is("xfs"))
                CHECK(l.passes && l.ok == 62);
            /* an empty range: no whole unit, does not pass */
            memset(&l, 0xA5, sizeof l);
            if (CHECK_OK(fspace_check_untorn_layout(fd, NULL, 100, 1000, 16384, &l, sizeof l)) == 0) {
                CHECK(l.units == 0 && l.ok == 0);
                CHECK(!l.passes);
                CHECK(l.first_bad == UINT64_MAX);
            }
        }
        close(fd);
    }

    /* the file as grown, to check that refused writes change nothing */
    before = read_all(file, &n_before);
    CHECK(before != NULL && n_before == (size_t)(1 * MiB));

    section("write_untorn on %s", g_fs);
    fd = open_direct(file, &direct);
    CHECK(fd >= 0);
    if (fd < 0)
        goto out;
    note("O_DIRECT %s", direct ? "accepted" : "refused");
    if (fs->state == FSPACE_UNTORN_SUPPORTED && direct) {
        static const struct { size_t size; int64_t at; unsigned char byte; } ok[] = {
            { 4096, 8192, 1 },
            { 16384, 65536, 2 },
        };
        size_t i;
        int64_t too_big = (int64_t)fs->unit_max * 2;
        unsigned char *big = page_buf((size_t)too_big, 9);
        CHECK(big != NULL);
        for (i = 0; i < 2; i++) {
            unsigned char *b = page_buf(ok[i].size, ok[i].byte);
            section("write_untorn: %zu bytes at %lld", ok[i].size, (long long)ok[i].at);
            CHECK(b != NULL);
            if (b != NULL) {
                errno = 4242;
                CHECK_OK(fspace_write_untorn(fd, file, b, ok[i].size, ok[i].at, FSPACE_UNTORN_DSYNC));
                CHECK(errno == 4242);
                memset(before + ok[i].at, ok[i].byte, ok[i].size);
            }
            free(b);
        }
        section("write_untorn: without DSYNC, path NULL");
        {
            unsigned char *b = page_buf(16384, 3);
            CHECK(b != NULL);
            if (b != NULL) {
                CHECK_OK(fspace_write_untorn(fd, NULL, b, 16384, 16 * 16384, 0));
                memset(before + 16 * 16384, 3, 16384);
                CHECK(fdatasync(fd) == 0);
            }
            free(b);
        }
        if (big != NULL) {
            static const struct { size_t size; int64_t at; const char *words; } bad[] = {
                { 16384, 4096, "is not a multiple of the write's size" },
                { 12288, 0, "is not a power of two" },
                { 0, 0, "is not a power of two" },
            };
            for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                section("write_untorn refused: %zu bytes at %lld", bad[i].size, (long long)bad[i].at);
                errno = 4242;
                CHECK_RC(fspace_write_untorn(fd, file, big, bad[i].size, bad[i].at, FSPACE_UNTORN_DSYNC),
                         -EINVAL);
                CHECK(errno == 4242);
                CHECK(strstr(fspace_last_error(), bad[i].words) != NULL);
                CHECK(strstr(fspace_last_error(), "pwritev2(RWF_ATOMIC)") != NULL);
                CHECK(strstr(fspace_last_error(), "pages") != NULL);
            }
            section("write_untorn refused: above the largest unit");
            CHECK_RC(fspace_write_untorn(fd, file, big, (size_t)too_big, 0, 0), -EINVAL);
            CHECK(strstr(fspace_last_error(), "is above the largest untorn unit here") != NULL);
            section("write_untorn refused: a buffer O_DIRECT cannot use");
            CHECK_RC(fspace_write_untorn(fd, file, big + 1, 4096, 0, 0), -EINVAL);
            CHECK(strstr(fspace_last_error(), "buffer's address") != NULL);
        }
        free(big);
    } else {
        unsigned char *b = page_buf(16384, 5);
        section("write_untorn refused where not supported (%s)", g_fs);
        CHECK(b != NULL);
        if (b != NULL) {
            CHECK_RC(fspace_write_untorn(fd, file, b, 16384, 0, FSPACE_UNTORN_DSYNC), -EOPNOTSUPP);
            CHECK(strstr(fspace_last_error(), "not supported here") != NULL);
            CHECK(strstr(fspace_last_error(), "pages") != NULL);
            /* a misaligned offset: the limits decide first */
            CHECK_RC(fspace_write_untorn(fd, file, b, 16384, 4096, 0), -EOPNOTSUPP);
        }
        free(b);
    }
    close(fd);

    section("write_untorn refused on a buffered descriptor (%s)", g_fs);
    fd = open(file, O_RDWR);
    CHECK(fd >= 0);
    if (fd >= 0) {
        unsigned char *b = page_buf(4096, 7);
        CHECK(b != NULL);
        if (b != NULL) {
            CHECK_RC(fspace_write_untorn(fd, file, b, 4096, 0, FSPACE_UNTORN_DSYNC), -EOPNOTSUPP);
            if (fs->state == FSPACE_UNTORN_SUPPORTED)
                CHECK(strstr(fspace_last_error(), "O_DIRECT") != NULL);
            else
                CHECK(strstr(fspace_last_error(), "not supported here") != NULL);
        }
        free(b);
        close(fd);
    }

    section("the file holds the untorn writes and nothing of the refused ones (%s)", g_fs);
    after = read_all(file, &n_after);
    CHECK(after != NULL && n_after == n_before);
    if (after != NULL && before != NULL && n_after == n_before)
        CHECK(memcmp(after, before, n_after) == 0);
out:
    free(before);
    free(after);
    unlink(file);
}

/* A fallocated file's units are unwritten: counted, named, not passing. */
static void test_layout_of_fallocated(const char *work)
{
    char file[4096];
    fspace_grow_options o;
    fspace_untorn_layout l;
    int fd;

    /* elsewhere refused before the layout is read (test_grow_and_write) */
    if (!fs_is("xfs"))
        return;
    section("check_untorn_layout of a fallocated file (%s)", g_fs);
    join(file, sizeof file, work, "fallocated");
    CHECK_OK(fspace_grow_options_init(&o, sizeof o));
    o.create = true;
    o.strategy = FSPACE_STRATEGY_ALLOCATE;
    o.fallback = false;
    if (CHECK_OK(fspace_grow(file, 1 * MiB, &o, NULL)) != 0)
        return;
    fd = open(file, O_RDONLY);
    CHECK(fd >= 0);
    if (fd >= 0) {
        if (CHECK_OK(fspace_check_untorn_layout(fd, file, 0, 1 * MiB, 16384, &l, sizeof l)) == 0) {
            CHECK(l.units == 64);
            CHECK(!l.passes);
            CHECK(l.first_bad == 0);
            CHECK(l.ok + l.holes + l.unwritten + l.split + l.misaligned + l.shared + l.other == l.units);
            if (!fs_is("btrfs"))
                CHECK(l.unwritten > 0);
        }
        close(fd);
    }
    unlink(file);
}

int main(int argc, char **argv)
{
    char work[4096];
    fspace_untorn_facts *f;
    fspace_untorn_summary s;

    g_prog = "test_untorn";
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    test_names();
    make_work_dir(work, sizeof work, argv[1]);
    f = test_facts_of_fs(work, &s);
    if (f != NULL) {
        test_answers(f, &s);
        test_grow_and_write(work, &s);
        fspace_untorn_facts_free(f);
    }
    test_layout_of_fallocated(work);
    CHECK_ENTRIES(work, 0);
    rm_rf(work);
    return g_failed ? 1 : 0;
}
