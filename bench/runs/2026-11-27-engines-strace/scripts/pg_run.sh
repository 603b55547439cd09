#!/bin/bash
# usage: pg_run.sh FS TAG "extra -c settings for postgresql.auto.conf lines"
FS=$1; TAG=$2; shift 2
B=/usr/lib/postgresql/15/bin
M=/var/tmp/engres/mnt/$FS
D=$M/pg_$TAG
S=/var/tmp/engres/sock; mkdir -p $S; chown postgres $S
OUT=/var/tmp/engres/raw; mkdir -p $OUT
PORT=55432
chown postgres $M
rm -rf $D
runuser -u postgres -- $B/initdb -D $D -A trust -U postgres >/dev/null || exit 1
cat >> $D/postgresql.conf <<EOC
port=$PORT
listen_addresses=''
unix_socket_directories='$S'
synchronous_commit=on
shared_buffers=32MB
max_wal_size=64MB
min_wal_size=32MB
EOC
for kv in "$@"; do echo "$kv" >> $D/postgresql.conf; done
TR="strace -f -y -tt -e trace=openat,open,fallocate,ftruncate,pwrite64,pwritev,pwritev2,write,fsync,fdatasync,sync_file_range,rename,renameat,renameat2,unlink,unlinkat,io_submit,io_uring_enter -o $OUT/pg_${FS}_$TAG.strace"
$TR runuser -u postgres -- $B/pg_ctl -D $D -l $M/pg_$TAG.log -w start >/dev/null &
sleep 0.5
for i in $(seq 30); do runuser -u postgres -- $B/pg_isready -h $S -p $PORT -q && break; sleep 0.3; done
P="runuser -u postgres -- psql -h $S -p $PORT -U postgres -X -q -At"
$P -c "select 'MARK-BEGIN-INIT'" >/dev/null
runuser -u postgres -- $B/pgbench -h $S -p $PORT -U postgres -i -s 1 -q postgres 2>&1 | tail -1
$P -c "select 'MARK-CHECKPOINT1', pg_switch_wal(); checkpoint;" >/dev/null
runuser -u postgres -- $B/pgbench -h $S -p $PORT -U postgres -c 1 -T 3 -M prepared postgres 2>&1 | grep -E 'transactions actually|tps'
$P -c "select 'MARK-CHECKPOINT2', pg_switch_wal(); checkpoint;" >/dev/null
$P -c "select 'MARK-SHOW'" -c "SHOW wal_sync_method" -c "SHOW wal_init_zero" -c "SHOW wal_recycle" -c "SHOW full_page_writes" -c "SHOW wal_level" -c "SHOW wal_segment_size" -c "SHOW wal_block_size" -c "select pg_current_wal_lsn()" | tr '\n' ' '; echo
ls $D/pg_wal | tr '\n' ' '; echo
runuser -u postgres -- $B/pg_ctl -D $D -w stop -m fast >/dev/null
wait
