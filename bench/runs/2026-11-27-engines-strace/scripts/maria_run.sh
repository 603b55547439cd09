#!/bin/bash
# usage: maria_run.sh FS TAG [extra mariadbd options...]
FS=$1; TAG=$2; shift 2
M=/var/tmp/engres/mnt/$FS; D=$M/maria_$TAG; SOCK=/var/tmp/engres/sock/maria.sock
OUT=/var/tmp/engres/raw; mkdir -p $OUT /var/tmp/engres/sock
TRC="strace -f -y -tt -e trace=openat,open,fallocate,ftruncate,pwrite64,pwritev,pwritev2,write,fsync,fdatasync,sync_file_range,rename,renameat,renameat2,unlink,unlinkat,io_submit,io_uring_enter,io_uring_setup,io_setup"
rm -rf $D; mkdir -p $D
COMMON="--no-defaults --datadir=$D --socket=$SOCK --skip-networking --user=root --innodb-buffer-pool-size=64M --log-error=$M/maria_$TAG.err"
$TRC -o $OUT/maria_${FS}_${TAG}_install.strace mariadb-install-db $COMMON --innodb-log-file-size=32M "$@" --auth-root-authentication-method=normal --skip-test-db >/dev/null 2>$M/maria_$TAG.install.err || { echo INSTALL FAILED; tail -5 $M/maria_$TAG.install.err; }
$TRC -o $OUT/maria_${FS}_${TAG}.strace mariadbd $COMMON --innodb-log-file-size=48M --innodb-flush-log-at-trx-commit=1 "$@" &
for i in $(seq 60); do mariadb -S $SOCK -uroot -e 'select 1' >/dev/null 2>&1 && break; sleep 0.5; done
mariadb -S $SOCK -uroot -e "create database if not exists sbtest; select 'MARK-SETUP'" >/dev/null
SB="sysbench oltp_insert --mysql-socket=$SOCK --mysql-user=root --mysql-db=sbtest --tables=2 --table-size=2000 --threads=1"
$SB prepare >/dev/null
mariadb -S $SOCK -uroot -e "select 'MARK-RUN'" >/dev/null
$SB --time=3 run | grep -E 'transactions:|queries:'
mariadb -S $SOCK -uroot -Nse "select 'MARK-SHOW', @@version, @@innodb_flush_method, @@innodb_log_file_buffering, @@innodb_doublewrite, @@innodb_flush_log_at_trx_commit, @@innodb_log_file_size, @@innodb_use_native_aio, @@innodb_data_file_path, @@innodb_log_write_ahead_size" 2>&1
mariadb -S $SOCK -uroot -e "shutdown"
wait
grep -iE 'O_DIRECT|buffer|log file|fallocate|error|warn|io_uring|aio' $M/maria_$TAG.err | head -20
ls -la $D | grep -E 'ib|sbtest' ; ls -la $D/sbtest
