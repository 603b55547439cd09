# Port of GNU coreutils tests/cp/fiemap-empty.sh (disabled there since
# coreutils 8.x; its expectations are what fspace copy --keep-allocation
# does): a fallocated, never-written file copies quickly with
# --sparse=always; fallocated space with data copies exactly; a file of
# unwritten extents and a hole keeps its allocation within one block, and
# with --sparse=always allocates at most one block.
# Adapted: --keep-allocation stands where cp kept allocation by default
# (fspace's default makes unwritten extents holes, as cp does today); the
# big file is 100 MiB instead of 300 (the matrix's filesystems are small);
# filefrag's "unwritten" check decides as in the original.
. "$(dirname "$0")/lib.sh"

fallocate_capable_ || skip_ 'this file system lacks FALLOCATE support'
fallocate -l 16MiB space.test || skip_ 'no room for the test'
filefrag -v space.test 2>/dev/null | grep -F 'unwritten' > /dev/null ||
  skip_ 'this file system does not report empty extents as "unwritten"'
rm space.test

fallocate -l 100MiB empty.big || framework_failure_
timeout 3 cp --sparse=always empty.big cp.test || fail=1
test $(stat -c %s empty.big) = $(stat -c %s cp.test) || fail=1
rm empty.big cp.test

touch unwritten.withdata && fallocate -l 10MiB -n unwritten.withdata || framework_failure_
dd count=10 if=/dev/urandom conv=notrunc iflag=fullblock of=unwritten.withdata status=none
cp --keep-allocation unwritten.withdata cp.test || fail=1
test $(stat -c %s unwritten.withdata) = $(stat -c %s cp.test) || fail=1
cmp unwritten.withdata cp.test || fail=1
rm unwritten.withdata cp.test

fallocate -l 10MiB empty.withholes
truncate -s 20M empty.withholes
sync
sectors_per_block=$(expr $(stat -c %o .) / 512)
cp --keep-allocation empty.withholes cp.test || fail=1
sync
test $(stat -c %s empty.withholes) = $(stat -c %s cp.test) || fail=1
alloc_diff=$(expr $(stat -c %b empty.withholes) - $(stat -c %b cp.test))
alloc_diff=$(echo $alloc_diff | tr -d -- -)
test $alloc_diff -le $sectors_per_block || { echo "allocation differs by $alloc_diff sectors"; fail=1; }
cp --sparse=always empty.withholes cp.test || fail=1
sync
test $(stat -c %s empty.withholes) = $(stat -c %s cp.test) || fail=1
test $(stat -c %b cp.test) -le $sectors_per_block || fail=1
rm empty.withholes cp.test

Exit $fail
