# Port of GNU coreutils tests/cp/sparse-to-pipe.sh: a sparse file copied
# into a FIFO arrives whole. Adapted: where the filesystem cannot hold a
# FIFO (sshfs: EPERM), the FIFO is made on the other filesystem; the copy
# still reads from this one.
. "$(dirname "$0")/lib.sh"

cleanup_() { kill $pid 2>/dev/null && wait $pid; }
pipe=pipe
mkfifo $pipe 2>/dev/null || { pipe=$OTHER_DIR/pipe; mkfifo $pipe; } || skip_ "mkfifo failed"
timeout 10 cat $pipe > copy & pid=$!
truncate -s1M sparse || framework_failure_
timeout 10 cp sparse $pipe || fail=1
wait $pid
cmp sparse copy || fail=1
Exit $fail
