# Port of GNU coreutils tests/cp/sparse-extents.sh: files with data, then
# a hole, with unwritten extents inside, beyond and covering the data,
# copy byte for byte in every sparse mode.
. "$(dirname "$0")/lib.sh"

touch sparse_chk || framework_failure_
seek_data_capable_ sparse_chk || skip_ 'insufficient SEEK_DATA support'
fallocate_capable_ || skip_ 'this file system lacks FALLOCATE support'

for sparse_arg in always auto never; do
  for alloc in '-l 4194304' '-l 1048576 -o 4194304' '-l 1'; do
    dd count=10 if=/dev/urandom iflag=fullblock of=unwritten.withdata status=none
    truncate -s 2MiB unwritten.withdata || framework_failure_
    fallocate $alloc -n unwritten.withdata || framework_failure_
    cp --reflink=never --sparse=$sparse_arg unwritten.withdata cp.test || fail=1
    test $(stat -c %s unwritten.withdata) = $(stat -c %s cp.test) || fail=1
    cmp unwritten.withdata cp.test || fail=1
    rm unwritten.withdata cp.test || framework_failure_
  done
done

Exit $fail
