#!/bin/sh
# The benchmark: sysbench oltp_read_write on 8 tables of 100 000 rows (~230 MB, more than the
# default 128 MB buffer pool), 4 threads. An untimed 4 s read-only pass first: after a restart
# the buffer pool is cold, and a cold first run would be scored against warm ones.
set -e
sb="sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=33306 --mysql-user=root --mysql-db=sbtest --tables=8 --table-size=100000 --threads=4 --rand-type=uniform"
$sb --time=4 oltp_read_only run >/dev/null
$sb --time=10 oltp_read_write run
