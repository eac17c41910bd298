#!/bin/sh
# A-Tune's stopworkload for the private server: a clean shutdown, then wait for its pid file
# to go. Usage: stop.sh DIR
dir=$1
mariadb-admin --defaults-file="$dir/my.cnf" -uroot shutdown >/dev/null 2>&1
for _ in $(seq 1 120); do
  [ -e "$dir/run/mysqld.pid" ] || exit 0
  sleep 0.5
done
echo "mariadbd still running after 60 s" >&2
exit 1
