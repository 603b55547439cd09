# Port of GNU coreutils tests/cp/copy-FMR.sh: a file of 600 small data
# runs between holes copies without a memory error under valgrind, byte
# for byte.
. "$(dirname "$0")/lib.sh"

command -v valgrind >/dev/null || skip_ "valgrind is required"
perl -e 'for (1..600) { sysseek (*STDOUT, 4096, 1)' \
     -e '&& syswrite (*STDOUT, "a" x 1024) or die "$!"}' > j || fail=1
valgrind --quiet --error-exitcode=3 "$FSPACE" copy --force --reflink=never j j2 > /dev/null || fail=1
cmp j j2 || fail=1
Exit $fail
