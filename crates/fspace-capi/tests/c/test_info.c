/*
 * test_info.c: fspace_version, fspace_last_error, fspace_strategy_name and
 * fspace_fs_info_* (facts, capabilities, the auto policy, JSON).
 *
 * Usage: test_info DIR. Works in DIR/test_info.PID, removed at the end.
 * Exit: 0 all checks passed, 1 a check failed, 77 not applicable here.
 */
#define _GNU_SOURCE 1
#include "check.h"
static int known_strategy(fspace_strategy s)
{
    return s == FSPACE_STRATEGY_SPARSE || s == FSPACE_STRATEGY_RESERVE ||
           s == FSPACE_STRATEGY_ALLOCATE || s == FSPACE_STRATEGY_WRITE_ZEROES ||
           s == FSPACE_STRATEGY_ZERO_FILL;
}

static void test_version_and_names(void)
{
    const char *v;
    section("version");
    v = fspace_version();
    CHECK(v != NULL);
    if (v != NULL) {
        CHECK(v[0] >= '0' && v[0] <= '9');
        CHECK(strchr(v, '.') != NULL);
        CHECK(fspace_version() == v); /* static storage */
    }

    section("last_error before any failure");
    CHECK(fspace_last_error() != NULL);
    CHECK(fspace_last_error() != NULL && fspace_last_error()[0] == '\0');

    section("strategy names");
    {
        static const struct { fspace_strategy s; const char *name; } names[] = {
            { FSPACE_STRATEGY_AUTO, "auto" },
            { FSPACE_STRATEGY_SPARSE, "sparse" },
            { FSPACE_STRATEGY_RESERVE, "reserve" },
            { FSPACE_STRATEGY_ALLOCATE, "allocate" },
            { FSPACE_STRATEGY_WRITE_ZEROES, "write-zeroes" },
            { FSPACE_STRATEGY_ZERO_FILL, "zero-fill" },
        };
        size_t i;
        for (i = 0; i < sizeof names / sizeof names[0]; i++) {
            const char *n = fspace_strategy_name(names[i].s);
            section("strategy name %u", (unsigned)names[i].s);
            CHECK(n != NULL);
            if (n != NULL)
                CHECK(strcmp(n, names[i].name) == 0);
        }
        section("unknown strategy name");
        CHECK(fspace_strategy_name(6) == NULL);
        CHECK(fspace_strategy_name(99) == NULL);
        CHECK(fspace_strategy_name(UINT32_MAX) == NULL);
    }
}

static void test_last_error(const char *work)
{
    char missing[4096];
    fspace_fs_info *info = (fspace_fs_info *)(uintptr_t)0x1;
    const char *msg;
    int rc;

    section("last_error after a failure");
    join(missing, sizeof missing, work, "no-such-dir/x");
    rc = fspace_fs_info_new(missing, &info);
    CHECK(rc == -ENOENT);
    CHECK(info == (fspace_fs_info *)(uintptr_t)0x1);
    msg = fspace_last_error();
    CHECK(msg != NULL && msg[0] != '\0');
    if (msg != NULL)
        CHECK(strstr(msg, "no-such-dir") != NULL);

    section("last_error is kept by a success");
    {
        char copy[4096];
        fspace_grow_options o;
        snprintf(copy, sizeof copy, "%s", msg);
        CHECK_OK(fspace_grow_options_init(&o, sizeof o));
        CHECK(strcmp(fspace_last_error(), copy) == 0);
    }

    section("last_error names the function for a NULL argument");
    rc = fspace_fs_info_new(NULL, &info);
    CHECK(rc == -EINVAL);
    CHECK(strstr(fspace_last_error(), "fspace_fs_info_new") != NULL);
}

/* The contract: no function reads or sets errno, whether it succeeds or
 * fails (the library's own calls may set it inside; it is put back). */
static void test_errno_untouched(const char *work)
{
    char missing[4096], file[4096];
    fspace_fs_info *info = NULL;
    fspace_grow_report *r = NULL;
    fspace_grow_options o;
    int rc;

    section("errno untouched by a success");
    join(file, sizeof file, work, "errno-file");
    CHECK_OK(fspace_grow_options_init(&o, sizeof o));
    o.create = true;
    errno = 4242;
    rc = fspace_grow(file, 65536, &o, &r);
    CHECK(errno == 4242);
    CHECK(rc == 0);
    errno = 4242;
    fspace_grow_report_free(r);
    CHECK(errno == 4242);
    errno = 4242;
    rc = fspace_fs_info_new(work, &info);
    CHECK(errno == 4242);
    CHECK(rc == 0);
    errno = 4242;
    fspace_fs_info_free(info);
    CHECK(errno == 4242);

    section("errno untouched by a failure");
    join(missing, sizeof missing, work, "no-such-dir/x");
    errno = 4242;
    rc = fspace_fs_info_new(missing, &info);
    CHECK(errno == 4242);
    CHECK(rc == -ENOENT);
    errno = 4242;
    rc = fspace_grow(missing, 4096, NULL, NULL);
    CHECK(errno == 4242);
    CHECK(rc == -ENOENT);
    unlink(file);
}

static void test_fs_info(const char *work)
{
    char fs_type[256];
    fspace_fs_info *info = NULL;
    fspace_fs_facts facts;
    char file[4096];
    int fd;
    fspace_capability cap;
    fspace_intent intent;
    const char *json = NULL;
    int measured = 1;

    section("fs_info_new on the directory");
    if (CHECK_OK(fspace_fs_info_new(work, &info)) != 0 || info == NULL)
        return;

    section("fs_info_get");
    memset(&facts, 0xA5, sizeof facts);
    if (CHECK_OK(fspace_fs_info_get(info, &facts, sizeof facts)) == 0) {
        CHECK(facts.fs_type != NULL && facts.fs_type[0] != '\0');
        CHECK(facts.mount_point != NULL);
        CHECK(facts.source != NULL);
        CHECK(facts.block_size > 0);
        CHECK(facts.total_bytes > 0);
        CHECK(facts.total_bytes >= facts.free_bytes);
        CHECK(facts.total_bytes >= facts.free_bytes_root);
        CHECK(facts.free_bytes_root >= facts.free_bytes);
        CHECK(facts.magic != 0);
        CHECK(facts.read_only == false); /* we write there */
        if (facts.fs_type != NULL && facts.mount_point != NULL) {
            /* what we know of the matrix filesystems */
            if (strcmp(facts.fs_type, "btrfs") == 0)
                CHECK(facts.copy_on_write);
            if (strcmp(facts.fs_type, "ext4") == 0 || strcmp(facts.fs_type, "xfs") == 0 ||
                strcmp(facts.fs_type, "tmpfs") == 0) {
                CHECK(!facts.copy_on_write);
                CHECK(!facts.network);
            }
            if (strncmp(facts.fs_type, "fuse", 4) == 0)
                CHECK(facts.network);
            if (facts.mount_point[0] != '\0')
                CHECK(strncmp(work, facts.mount_point, strlen(facts.mount_point)) == 0);
        }
        note("%s on %s (%s), block %llu, %llu of %llu bytes free",
                facts.fs_type ? facts.fs_type : "?", facts.mount_point ? facts.mount_point : "?",
                facts.source ? facts.source : "?", (unsigned long long)facts.block_size,
                (unsigned long long)facts.free_bytes, (unsigned long long)facts.total_bytes);
    }

    section("fs_info_get twice gives the same strings");
    {
        fspace_fs_facts again;
        if (CHECK_OK(fspace_fs_info_get(info, &again, sizeof again)) == 0) {
            CHECK(again.fs_type == facts.fs_type);
            CHECK(again.block_size == facts.block_size);
            CHECK(again.magic == facts.magic);
        }
    }

    section("capabilities");
    {
        bool sup[8];
        for (cap = FSPACE_CAP_FALLOCATE; cap <= FSPACE_CAP_FICLONE; cap++) {
            bool b = true;
            int rc;
            section("capability %u", (unsigned)cap);
            rc = fspace_fs_info_capability(info, cap, &b);
            if (rc == -ENODATA) {
                /* documented for a filesystem where nothing can be measured,
                 * which is not the case of a directory we can write to */
                measured = 0;
            }
            CHECK_OK(rc);
            sup[cap] = b;
        }
        if (measured) {
            char line[512];
            int off = 0;
            static const char *const names[8] = { "fallocate", "keep-size", "punch-hole", "zero-range",
                                                  "write-zeroes", "seek-hole", "fiemap", "ficlone" };
            for (cap = 0; cap < 8; cap++)
                off += snprintf(line + off, sizeof line - (size_t)off, " %s=%d", names[cap], sup[cap] ? 1 : 0);
            note("capabilities:%s", line);
            section("capabilities agree with the filesystem");
            if (facts.fs_type != NULL) {
                if (strcmp(facts.fs_type, "ext4") == 0 || strcmp(facts.fs_type, "xfs") == 0 ||
                    strcmp(facts.fs_type, "btrfs") == 0) {
                    CHECK(sup[FSPACE_CAP_FALLOCATE]);
                    CHECK(sup[FSPACE_CAP_PUNCH_HOLE]);
                    CHECK(sup[FSPACE_CAP_FIEMAP]);
                    CHECK(sup[FSPACE_CAP_SEEK_HOLE]);
                }
                if (strcmp(facts.fs_type, "tmpfs") == 0) {
                    CHECK(sup[FSPACE_CAP_FALLOCATE]);
                    CHECK(!sup[FSPACE_CAP_FIEMAP]);
                }
                if (strcmp(facts.fs_type, "btrfs") == 0)
                    CHECK(sup[FSPACE_CAP_FICLONE]);
                if (strcmp(facts.fs_type, "ext3") == 0) /* ext4 without extents */
                    CHECK(!sup[FSPACE_CAP_FALLOCATE]);
                if (strstr(facts.fs_type, "sshfs") != NULL) {
                    CHECK(!sup[FSPACE_CAP_FALLOCATE]);
                    CHECK(!sup[FSPACE_CAP_PUNCH_HOLE]);
                    CHECK(!sup[FSPACE_CAP_FIEMAP]);
                }
                /* keep-size without fallocate would be odd */
                if (sup[FSPACE_CAP_KEEP_SIZE])
                    CHECK(sup[FSPACE_CAP_FALLOCATE]);
            }
        }
        section("unknown capability");
        {
            bool b = true;
            CHECK_RC(fspace_fs_info_capability(info, 8, &b), -EINVAL);
            CHECK(b == true);
            CHECK_RC(fspace_fs_info_capability(info, 99, &b), -EINVAL);
            CHECK(b == true);
            CHECK(strstr(fspace_last_error(), "99") != NULL);
            b = false;
            CHECK_RC(fspace_fs_info_capability(info, UINT32_MAX, &b), -EINVAL);
            CHECK(b == false);
        }
    }

    section("auto strategy");
    for (intent = FSPACE_INTENT_BULK; intent <= FSPACE_INTENT_SPARSE; intent++) {
        fspace_strategy s = 12345;
        section("auto strategy for intent %u", (unsigned)intent);
        if (CHECK_OK(fspace_fs_info_auto_strategy(info, intent, &s)) == 0) {
            CHECK(known_strategy(s));
            note("auto for intent %u: %s", (unsigned)intent,
                    fspace_strategy_name(s) ? fspace_strategy_name(s) : "?");
            if (intent == FSPACE_INTENT_SPARSE)
                CHECK(s == FSPACE_STRATEGY_SPARSE);
            if (facts.fs_type != NULL && strstr(facts.fs_type, "sshfs") != NULL &&
                intent != FSPACE_INTENT_SPARSE)
                CHECK(s == FSPACE_STRATEGY_ZERO_FILL);
        }
    }
    section("auto strategy for an unknown intent");
    {
        fspace_strategy s = 12345;
        CHECK_RC(fspace_fs_info_auto_strategy(info, 3, &s), -EINVAL);
        CHECK(s == 12345);
        CHECK_RC(fspace_fs_info_auto_strategy(info, 99, &s), -EINVAL);
        CHECK(s == 12345);
    }

    section("json");
    if (CHECK_OK(fspace_fs_info_json(info, &json)) == 0) {
        const char *again = NULL;
        CHECK(json != NULL);
        if (json != NULL) {
            CHECK(starts_with_char(json, '{'));
            CHECK(json[strlen(json) - 1] == '}');
            if (facts.fs_type != NULL && strchr(facts.fs_type, '.') == NULL)
                CHECK(strstr(json, facts.fs_type) != NULL);
        }
        CHECK_OK(fspace_fs_info_json(info, &again));
        CHECK(again == json); /* owned by the handle, made once */
    }
    snprintf(fs_type, sizeof fs_type, "%s", facts.fs_type != NULL ? facts.fs_type : "");
    fspace_fs_info_free(info);

    section("fs_info_new on a file");
    join(file, sizeof file, work, "file");
    fd = open(file, O_WRONLY | O_CREAT | O_EXCL, 0644);
    CHECK(fd >= 0);
    if (fd >= 0) {
        fspace_fs_info *fi = NULL;
        CHECK(write(fd, "x", 1) == 1);
        close(fd);
        if (CHECK_OK(fspace_fs_info_new(file, &fi)) == 0 && fi != NULL) {
            fspace_fs_facts f2;
            bool b = false;
            if (CHECK_OK(fspace_fs_info_get(fi, &f2, sizeof f2)) == 0) {
                CHECK(f2.magic == facts.magic);
                CHECK(f2.fs_type != NULL && strcmp(f2.fs_type, fs_type) == 0);
                CHECK(f2.block_size == facts.block_size);
            }
            if (measured)
                CHECK_OK(fspace_fs_info_capability(fi, FSPACE_CAP_SEEK_HOLE, &b));
            fspace_fs_info_free(fi);
        }
    }

    section("fs_info_new leaves no scratch file behind");
    /* the capability probe works on scratch files in the directory */
    CHECK_ENTRIES(work, 1); /* "file" */

    section("fs_info_free(NULL)");
    fspace_fs_info_free(NULL);
}

int main(int argc, char **argv)
{
    char work[4096];

    g_prog = "test_info";
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    test_version_and_names();
    make_work_dir(work, sizeof work, argv[1]);
    test_last_error(work);
    test_errno_untouched(work);
    test_fs_info(work);
    rm_rf(work);
    return g_failed ? 1 : 0;
}
