#!/bin/bash
# As the copy-enospc test does on btrfs: fallocate of (free - 24 MiB) fails, so the ballast is written.
M=/tmp/m-tests/mnt/btrfs
u() { echo "--- usage: $1 $(date +%T.%N)"; btrfs filesystem usage -b $M | grep -E "allocated|unallocated|Used:|Size:|Free \(statfs" ; }
D=$M/enospc-exp; mkdir -p $D
sync -f $M
free=$(( $(stat -f -c '%f*%S' $M) ))
keep=$((24<<20)); n=$(( (free-keep) >> 20 ))
fallocate -l $((free-keep)) $D/ballast || dd if=/dev/zero of=$D/ballast bs=1M count=$n status=none
sync -f $D/ballast
u after-ballast
for i in 1 2 3 4; do
  dd if=/tmp/m-tests-src of=$D/full.tmp bs=512k conv=fdatasync status=none 2>&1 | tail -1
  rm -f $D/full.tmp
done
u after-copies
rm -f $D/ballast; rmdir $D
u after-rm-nosync
