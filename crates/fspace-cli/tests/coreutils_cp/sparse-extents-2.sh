# Port of GNU coreutils tests/cp/sparse-extents-2.sh: files of 1 to 100
# data runs of 1-21 KiB, each after a hole of its own size, copy without
# data loss with --sparse=always. Adapted: the filefrag extent comparison,
# which coreutils only warns about, is left out (crates/fspace-tests/tests/
# copy_keep_allocation.rs compares extent maps).
. "$(dirname "$0")/lib.sh"

for i in $(seq 1 2 21); do
  for j in 1 2 31 100; do
    perl -e '$n = '$i' * 1024; *F = *STDOUT;' \
         -e 'for (1..'$j') { sysseek (*F, $n, 1)' \
         -e '&& syswrite (*F, chr($_)x$n) or die "$!"}' > j1 || fail=1
    cp --reflink=never --sparse=always j1 j2 || fail=1
    cmp j1 j2 || fail_ "data loss i=$i j=$j"
  done
done

Exit $fail
