# Port of GNU coreutils tests/cp/sparse-2.sh: a file with a trailing hole,
# then with one byte after it, copies exactly with --sparse always and
# never; zeros in data are found with --sparse=always, and --sparse=never
# neither clones nor offloads. Adapted: cp's --debug lines are read from
# fspace copy --json (zero_bytes_holed, method).
. "$(dirname "$0")/lib.sh"

touch sparse_chk
seek_data_capable_ sparse_chk || skip_ "insufficient SEEK_DATA support"

printf x > k || framework_failure_
dd bs=1k seek=128 of=k < /dev/null 2>/dev/null || framework_failure_

for append in no yes; do
  test $append = yes && printf y >> k
  for i in always never; do
    cp --reflink=never --sparse=$i k k2 || fail=1
    cmp k k2 || fail=1
  done
done

rm -f k
printf x > k || framework_failure_
dd bs=1k seek=1 of=k count=255 < /dev/zero 2>/dev/null || framework_failure_

cp --reflink=never --sparse=always --json k k2 || fail=1
cmp k k2 || fail=1
grep -E '"zero_bytes_holed": [1-9]' fspace-copy.out || { cat fspace-copy.out; fail=1; }

cp --sparse=never --json k k2 || fail=1
cmp k k2 || fail=1
grep '"method": "read_write"' fspace-copy.out || { cat fspace-copy.out; fail=1; }

Exit $fail
