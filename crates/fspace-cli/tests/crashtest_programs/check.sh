# The checker of bugs.py: `check.sh PATTERN`, run in a crash state.
# Exit 0 accepts the state.
acked() { grep -q ok "$FSPACE_CRASH_ACKS"; }
case "$1" in
replace)
    d=$(cat data 2>/dev/null)
    case "$d" in old|new) ;; *) echo "data holds '$d'"; exit 1;; esac
    if acked && [ "$d" != new ]; then echo "acknowledged, but data holds '$d'"; exit 1; fi ;;
new-file|ack-first|sync-file-range)
    if acked && ! grep -q '^record$' log 2>/dev/null; then
        if [ -e log ]; then echo "acknowledged record missing: log holds $(wc -c < log) bytes"; else echo "acknowledged, but log is missing"; fi
        exit 1
    fi ;;
torn-page)
    a=$(tr -cd 'a' < page | wc -c); b=$(tr -cd 'b' < page | wc -c)
    if [ "$a" != 8192 ] && [ "$b" != 8192 ]; then echo "page mixes versions: $a bytes of the old, $b of the new"; exit 1; fi
    if acked && [ "$b" != 8192 ]; then echo "acknowledged, but the page is the old one"; exit 1; fi ;;
*) echo "unknown pattern $1"; exit 2 ;;
esac
exit 0
