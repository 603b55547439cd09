# Port of GNU coreutils tests/cp/fiemap-FMR.sh (the same file as
# copy-FMR.sh there, written for cp's extent-map copy): a file of 600 small
# data runs copies under valgrind without a memory error, byte for byte.
# Adapted: run with fspace's defaults (clone where possible, else the
# extent walk), where copy-FMR.sh forbids cloning.
. "$(dirname "$0")/lib.sh"

command -v valgrind >/dev/null || skip_ "valgrind is required"
perl -e 'for (1..600) { sysseek (*STDOUT, 4096, 1)' \
     -e '&& syswrite (*STDOUT, "a" x 1024) or die "$!"}' > j || fail=1
valgrind --quiet --error-exitcode=3 "$FSPACE" copy --force j j2 > /dev/null || fail=1
cmp j j2 || fail=1
Exit $fail
