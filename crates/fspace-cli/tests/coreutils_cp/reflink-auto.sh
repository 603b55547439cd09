# Port of GNU coreutils tests/cp/reflink-auto.sh: across filesystems,
# --reflink (always) fails, --reflink=auto copies (also with
# --sparse=always), and of two --reflink options the last one wins.
. "$(dirname "$0")/lib.sh"

a_other="$OTHER_DIR/a"
rm -f "$a_other" || framework_failure_
echo non_zero_size > "$a_other" || framework_failure_

returns_ 1 cp --reflink "$a_other" b 2>/dev/null || fail=1
cp --reflink=auto "$a_other" b || fail=1
test -s b || fail=1
cp --reflink=auto --sparse=always "$a_other" b || fail=1
test -s b || fail=1
cp --reflink=auto --reflink=never "$a_other" b || fail=1
test -s b || fail=1
Exit $fail
