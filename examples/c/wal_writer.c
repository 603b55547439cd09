/*
 * wal_writer DIR N: a small write-ahead log writer on fspace's C API.
 *
 * Opens (recovering) or creates the segment log in DIR, says what recovery
 * found, commits N records durably (each commit returns once the record is
 * on stable storage; concurrent commits would share one fdatasync), reads
 * every record back, releases the segments before the last record, and
 * closes the log.
 *
 *   make                      # builds through pkg-config
 *   ./wal_writer /data/log 1000
 */
#include <fspace.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, int rc)
{
    /* rc is -errno; fspace_last_error() names the call, the path and the range. */
    fprintf(stderr, "wal_writer: %s failed (%d): %s\n", what, rc, fspace_last_error());
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s DIR N\n", argv[0]);
        return 2;
    }
    char *end;
    long n = strtol(argv[2], &end, 10);
    if (*argv[2] == '\0' || *end != '\0' || n < 0) {
        fprintf(stderr, "wal_writer: N must be a number of records, not \"%s\"\n", argv[2]);
        return 2;
    }

    struct fspace_wal_options opts;
    fspace_wal_options_init(&opts, sizeof opts);
    opts.segment_size = 1 << 20; /* small segments (the default is 16 MiB): less space per log */

    fspace_wal *wal;
    int rc = fspace_wal_open(argv[1], &opts, &wal);
    if (rc < 0)
        return fail("fspace_wal_open", rc);

    struct fspace_wal_recovery_info rec;
    fspace_wal_recovery(wal, &rec, sizeof rec);
    printf("%s %" PRIu64 " records in %" PRIu64 " segments, next LSN %" PRIu64 "\n",
           rec.created ? "created a new log:" : "recovered", rec.records, rec.segments, rec.next_lsn);

    uint64_t first = 0, last = 0;
    for (long i = 0; i < n; i++) {
        char record[64];
        int len = snprintf(record, sizeof record, "record %ld of run %" PRIu64, i, rec.next_lsn);
        rc = fspace_wal_commit(wal, record, (size_t)len, &last);
        if (rc < 0) {
            fspace_wal_free(wal); /* poisoned or full: stop without another sync */
            return fail("fspace_wal_commit", rc);
        }
        if (i == 0)
            first = last;
    }
    uint64_t durable;
    fspace_wal_durable_lsn(wal, &durable);
    if (n > 0)
        printf("committed %ld records, LSNs %" PRIu64 "..%" PRIu64 ", durable up to %" PRIu64 "\n", n, first,
               last, durable);
    else
        printf("committed 0 records\n");

    fspace_wal_reader *reader;
    rc = fspace_wal_reader_new(wal, 0, &reader);
    if (rc < 0) {
        fspace_wal_free(wal);
        return fail("fspace_wal_reader_new", rc);
    }
    uint64_t count = 0, lsn;
    const void *data;
    size_t len;
    while ((rc = fspace_wal_reader_next(reader, &lsn, &data, &len)) == 1)
        count++;
    fspace_wal_reader_free(reader);
    if (rc < 0) {
        fspace_wal_free(wal);
        return fail("fspace_wal_reader_next", rc);
    }
    printf("read back %" PRIu64 " records\n", count);

    struct fspace_wal_release_info released;
    rc = fspace_wal_release_before(wal, last, &released, sizeof released);
    if (rc < 0) {
        fspace_wal_free(wal);
        return fail("fspace_wal_release_before", rc);
    }
    printf("released %" PRIu64 " segments for reuse, deleted %" PRIu64 "\n", released.recycled,
           released.deleted);

    rc = fspace_wal_close(wal);
    if (rc < 0)
        return fail("fspace_wal_close", rc);
    return 0;
}
