/*
 * test_abi.c: structs that grow without breaking programs (docs/capi.md,
 * "Structs that grow"): the options structs' size field and their _init
 * functions, the output structs' size argument, a program built against a
 * newer header (a larger struct) against this library, and sizes that are
 * no version of a struct.
 *
 * With FSPACE_ABI_GROWN=1 it runs against the ABI test's build of the
 * library (cargo feature abi-grown-test), whose structs each gained a
 * trailing uint64_t: the "newer" field below is then one the library knows.
 *
 * Usage: test_abi DIR. Works in DIR/test_abi.PID, removed at the end.
 * Exit: 0 all checks passed, 1 a check failed.
 */
#define _GNU_SOURCE 1
#include "check.h"

static int grown(void)
{
    const char *g = getenv("FSPACE_ABI_GROWN");
    return g != NULL && strcmp(g, "1") == 0;
}

static off_t size_of_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? st.st_size : -1;
}

/* An options struct as a program built against a newer header has it. */
struct newer_grow_options {
    fspace_grow_options o;
    uint64_t newer;
};
struct newer_copy_options {
    fspace_copy_options o;
    uint64_t newer;
};
struct newer_wal_options {
    fspace_wal_options o;
    uint64_t newer;
};

static void test_options(const char *work)
{
    char file[4096], copy[4096], wal_dir[4096];
    fspace_grow_options o;
    struct newer_grow_options big;
    fspace_copy_options co;
    struct newer_copy_options cbig;
    fspace_wal_options wo;
    struct newer_wal_options wbig;
    fspace_wal *wal = NULL;
    int rc;

    join(file, sizeof file, work, "grown-file");
    join(copy, sizeof copy, work, "copied-file");
    join(wal_dir, sizeof wal_dir, work, "wal");

    section("grow options: _init sets the caller's size");
    memset(&o, 0xab, sizeof o);
    CHECK_OK(fspace_grow_options_init(&o, sizeof o));
    CHECK(o.size == sizeof o);
    CHECK(o.strategy == FSPACE_STRATEGY_AUTO);
    CHECK(o.fallback && o.check_free_space && o.use_saved);
    CHECK(!o.sync && !o.create && o.untorn_unit == 0);

    section("grow options: a size that is no version of the struct");
    CHECK_RC(fspace_grow_options_init(&o, 0), -EINVAL);
    CHECK_RC(fspace_grow_options_init(&o, sizeof o - 4), -EINVAL);
    CHECK(strstr(fspace_last_error(), "size") != NULL);
    CHECK_RC(fspace_grow_options_init(&o, 1 << 20), -EINVAL);
    {
        /* A struct nobody set (zeroed): its size is 0, refused before
         * anything is done. */
        fspace_grow_options zero;
        memset(&zero, 0, sizeof zero);
        zero.create = true;
        CHECK_RC(fspace_grow(file, 4096, &zero, NULL), -EINVAL);
        CHECK(strstr(fspace_last_error(), "fspace_grow_options_init") != NULL);
        CHECK(size_of_file(file) == -1);
    }

    section("grow options: a program built against a newer header");
    memset(&big, 0xab, sizeof big);
    CHECK_OK(fspace_grow_options_init(&big.o, sizeof big));
    CHECK(big.o.size == sizeof big);
    CHECK(big.newer == 0); /* zeroed past the library's struct, or its default */
    big.o.create = true;
    CHECK_OK(fspace_grow(file, 4096, &big.o, NULL));
    CHECK(size_of_file(file) == 4096);
    big.newer = 1;
    rc = fspace_grow(file, 8192, &big.o, NULL);
    if (grown()) {
        /* The library knows the field (and ignores its value). */
        CHECK_RC(rc, 0);
        CHECK(size_of_file(file) == 8192);
    } else {
        /* A field it does not know, set: refused, nothing changed. */
        CHECK_RC(rc, -E2BIG);
        CHECK(strstr(fspace_last_error(), "does not know") != NULL);
        CHECK(size_of_file(file) == 4096);
    }

    /* Reserved bytes (where padding would be) must stay zero: refused,
       nothing changed. */
    big.newer = 0;
    big.o.reserved[0] = 1;
    CHECK_RC(fspace_grow(file, 8192, &big.o, NULL), -EINVAL);
    CHECK(strstr(fspace_last_error(), "reserved") != NULL);
    CHECK(size_of_file(file) == (grown() ? 8192 : 4096));
    big.o.reserved[0] = 0;

    section("copy options");
    CHECK_OK(fspace_copy_options_init(&co, sizeof co));
    CHECK(co.size == sizeof co && co.sparse == FSPACE_SPARSE_AUTO && !co.force);
    CHECK_OK(fspace_copy_options_init(&cbig.o, sizeof cbig));
    CHECK(cbig.o.size == sizeof cbig && cbig.newer == 0);
    cbig.newer = 7;
    rc = fspace_copy(file, copy, &cbig.o, NULL);
    CHECK_RC(rc, grown() ? 0 : -E2BIG);
    CHECK(size_of_file(copy) == (grown() ? size_of_file(file) : -1));
    unlink(copy);

    section("wal options");
    CHECK_OK(fspace_wal_options_init(&wo, sizeof wo));
    CHECK(wo.size == sizeof wo && wo.direct_io == -1 && wo.segment_size >= 65536);
    CHECK_OK(fspace_wal_options_init(&wbig.o, sizeof wbig));
    CHECK(wbig.newer == 0);
    wbig.o.segment_size = 1 << 20;
    wbig.newer = 1;
    rc = fspace_wal_open(wal_dir, &wbig.o, &wal);
    CHECK_RC(rc, grown() ? 0 : -E2BIG);
    if (rc == 0)
        CHECK_OK(fspace_wal_close(wal)); /* frees the handle too */
    wo.reserved[1] = 0x80;
    CHECK_RC(fspace_wal_open(wal_dir, &wo, &wal), -EINVAL);
    wo.reserved[1] = 0;
    rm_rf(wal_dir);
}

/* An output struct as a program built against a newer header has it. */
struct newer_facts {
    fspace_fs_facts f;
    uint64_t newer;
};

static void test_outputs(const char *work)
{
    fspace_fs_info *info = NULL;
    fspace_fs_facts facts;
    struct newer_facts big;

    if (CHECK_OK(fspace_fs_info_new(work, &info)) != 0)
        return;

    section("output struct: the caller's size");
    CHECK_OK(fspace_fs_info_get(info, &facts, sizeof facts));
    CHECK(facts.block_size > 0);

    section("output struct: a program built against a newer header");
    memset(&big, 0xab, sizeof big);
    CHECK_OK(fspace_fs_info_get(info, &big.f, sizeof big));
    CHECK(big.f.block_size == facts.block_size);
    CHECK(big.newer == 0); /* the library's zeros, or its grown field's 0 */
    /* Every byte is a field: the reserved ones (where padding would be)
       are written as zeros, not left as the caller's 0xab. */
    for (size_t i = 0; i < sizeof big.f.reserved; i++)
        CHECK(big.f.reserved[i] == 0);

    section("output struct: a size that is no version of it");
    CHECK_RC(fspace_fs_info_get(info, &facts, 0), -EINVAL);
    CHECK_RC(fspace_fs_info_get(info, &facts, sizeof facts - 1), -EINVAL);
    CHECK_RC(fspace_fs_info_get(info, &facts, 1 << 20), -EINVAL);
    fspace_fs_info_free(info);
}

int main(int argc, char **argv)
{
    char work[4096];

    g_prog = "test_abi";
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    make_work_dir(work, sizeof work, argv[1]);
    test_options(work);
    test_outputs(work);
    rm_rf(work);
    return g_failed ? 1 : 0;
}
