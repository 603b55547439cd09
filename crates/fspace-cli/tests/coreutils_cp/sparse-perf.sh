# Port of GNU coreutils tests/cp/sparse-perf.sh: a sparse file on another
# filesystem copies exactly; a dense file that might look sparse copies
# exactly; a 1 TiB sparse file copies within 10 seconds. Adapted: cp's
# --debug "avoided" check is left out (fspace reports its method in JSON).
. "$(dirname "$0")/lib.sh"

other_partition_sparse=$OTHER_DIR/k
printf x > $other_partition_sparse || framework_failure_
truncate -s1M $other_partition_sparse || framework_failure_

cp $other_partition_sparse k2 || fail=1
cmp $other_partition_sparse k2 || fail=1

mls='might-look-sparse'
yes | head -n1M > "$mls" || framework_failure_
cp "$mls" "$mls.cp" || fail=1
cmp "$mls" "$mls.cp" || fail=1

timeout 10 truncate -s1T f || skip_ "unable to create a 1 TiB sparse file"
touch sparse_chk
seek_data_capable_ sparse_chk || skip_ "insufficient SEEK_DATA support"
timeout 10 cp --reflink=never f f2 || fail=1
test "$(stat --printf %s f)" = "$(stat --printf %s f2)" || fail=1

Exit $fail
