# Port of GNU coreutils tests/cp/sparse.sh: --sparse=always makes a copy no
# less sparse than the source, and every mix of zero and data blocks at
# every run length copies byte for byte, from a dense and from a sparse
# source. Adapted: a conflict of options (--sparse with --reflink=always)
# is a usage error in fspace (exit 2), where cp exits 1.
. "$(dirname "$0")/lib.sh"

size=$(expr 128 \* 1024 + 1)
dd bs=1 seek=$size of=sparse < /dev/null 2> /dev/null || framework_failure_

cp_no_reflink() { cp --reflink=never "$@"; }

cp_no_reflink --sparse=always sparse copy || fail=1
test $(stat --printf %b copy) -le $(stat --printf %b sparse) || fail=1

returns_ 2 cp --sparse=always --reflink sparse copy 2>/dev/null || fail=1
returns_ 2 cp --sparse=never --reflink sparse copy 2>/dev/null || fail=1

maxn=128
hole_size=$(stat -c %o copy)
dd if=/dev/zero bs=$hole_size count=$maxn of=zeros status=none || framework_failure_
tr '\0' 'U' < zeros > nonzero || framework_failure_

for pattern in 1 0; do
  test "$pattern" = 1 && pattern="$(printf '%s\n%s' nonzero zeros)"
  test "$pattern" = 0 && pattern="$(printf '%s\n%s' zeros nonzero)"
  for n in 1 2 4 11 32 $maxn; do
    parts=$(expr $maxn / $n)
    rm -f file.in
    for i in $(yes "$pattern" | head -n$parts); do
      dd iflag=fullblock if=$i of=file.in conv=notrunc oflag=append \
         bs=$hole_size count=$n status=none || framework_failure_
    done
    cp_no_reflink --sparse=always file.in sparse.out || fail=1
    cp_no_reflink --sparse=always sparse.out sparse.out2 || fail=1
    cmp file.in sparse.out || fail=1
    cmp file.in sparse.out2 || fail=1
  done
done

Exit $fail
