# Port of GNU coreutils tests/cp/proc-zero-len.sh: a /proc file whose size
# is 0 copies its contents, not an empty file.
. "$(dirname "$0")/lib.sh"

touch empty || framework_failure_
f=/proc/cpuinfo
test -r $f || f=empty
cat $f > out || fail=1
cp $f exp || fail=1
test -s out && { rm -f out; echo nonempty > out; }
test -s exp && { rm -f exp; echo nonempty > exp; }
compare exp out || fail=1
Exit $fail
