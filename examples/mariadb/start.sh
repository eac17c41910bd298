#!/bin/sh
# A-Tune's startworkload for the private server: mariadbd in the background (no systemd
# here), then wait until it answers. Usage: start.sh DIR
dir=$1
mariadbd --defaults-file="$dir/my.cnf" >>"$dir/run/stdout.log" 2>&1 &
pid=$!
for _ in $(seq 1 120); do
  mariadb-admin --defaults-file="$dir/my.cnf" -uroot ping >/dev/null 2>&1 && exit 0
  kill -0 "$pid" 2>/dev/null || { echo "mariadbd exited; the end of $dir/run/error.log:" >&2; tail -3 "$dir/run/error.log" >&2; exit 1; }
  sleep 0.5
done
echo "mariadbd did not answer within 60 s" >&2
exit 1
