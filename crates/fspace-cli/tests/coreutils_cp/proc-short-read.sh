# Port of GNU coreutils tests/cp/proc-short-read.sh: a /proc file larger
# than its first read copies whole.
. "$(dirname "$0")/lib.sh"

proc_large=/proc/cpuinfo
test -r $proc_large || skip_ "your system lacks $proc_large"
cp $proc_large 1 || fail=1
cat $proc_large > 2 || fail=1
del_varying='/MHz/d; /[Bb][Oo][Gg][Oo][Mm][Ii][Pp][Ss]/d;'
sed "$del_varying" 1 > proc.cp || framework_failure_
sed "$del_varying" 2 > proc.cat || framework_failure_
compare proc.cp proc.cat || fail=1
Exit $fail
