#!/bin/bash
# usage: rocks_run.sh FS TAG BENCH [db_bench flags...]
FS=$1; TAG=$2; BENCH=$3; shift 3
D=/var/tmp/engres/mnt/$FS/rocks_$TAG; OUT=/var/tmp/engres/raw; rm -rf $D
strace -f -y -tt -e trace=openat,open,fallocate,ftruncate,pwrite64,pwritev,pwritev2,write,fsync,fdatasync,sync_file_range,rename,renameat,renameat2,unlink,unlinkat,io_submit,io_uring_enter -o $OUT/rocks_${FS}_$TAG.strace \
  db_bench --benchmarks=$BENCH --sync=1 --num=500 --value_size=1000 --threads=1 --db=$D "$@" 2>&1 | grep -E 'micros/op|Error|error|Invalid|not supported' | cut -c1-200
ls $D | tr '\n' ' '; echo
OPT=$(ls $D/OPTIONS-* 2>/dev/null | tail -1)
[ -n "$OPT" ] && grep -E '^\s*(recycle_log_file_num|allow_fallocate|fallocate_with_keep_size|wal_bytes_per_sync|bytes_per_sync|use_direct_io_for_flush_and_compaction|use_direct_reads|wal_recovery_mode|use_fsync|write_buffer_size|manual_wal_flush|strict_bytes_per_sync)=' $OPT | tr -s ' ' | tr '\n' ' '; echo
cp "$OPT" $OUT/rocks_${FS}_$TAG.OPTIONS 2>/dev/null
