#!/usr/bin/env bash
# What A-Tune's prepare.sh does for its MariaDB pair, on a private server: build/examples/mariadb
# holds my.cnf (the file the pair's sed commands edit), the data directory and the pair with its
# paths filled in. Starts the server (the job tunes a running service) and loads sysbench's
# tables once. `make example-mariadb` stops the server after the job.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
example=$root/examples/mariadb
dir=$root/build/examples/mariadb
for tool in mariadbd mariadb-install-db sysbench; do
  command -v $tool >/dev/null || {
    echo "setup: $tool is not installed (Debian packages mariadb-server, sysbench; make example-mariadb installs them)" >&2; exit 1; }
done
mkdir -p "$dir/run"
render() { sed -e "s#@DIR@#$dir#g" -e "s#@EXAMPLE@#$example#g" "$1" > "$2"; }
# A copy that is already there is kept unless the example's file is newer: an interrupted
# run leaves its changes for `hone rollback`, which needs the file it changed.
if [[ ! -f $dir/my.cnf || $example/my.cnf -nt $dir/my.cnf ]]; then render "$example/my.cnf" "$dir/my.cnf"; fi
render "$example/mariadb_client.yaml" "$dir/mariadb_client.yaml"
render "$example/mariadb_server.yaml" "$dir/mariadb_server.yaml"
if [[ ! -d $dir/data/mysql ]]; then
  rm -rf "$dir/data"
  timeout 300 mariadb-install-db --defaults-file="$dir/my.cnf" --auth-root-authentication-method=normal >"$dir/run/install.log" 2>&1 \
    || { echo "setup: mariadb-install-db failed; see $dir/run/install.log" >&2; exit 1; }
fi
admin=(mariadb-admin --defaults-file="$dir/my.cnf" -uroot)
"${admin[@]}" ping >/dev/null 2>&1 || timeout 90 sh "$example/start.sh" "$dir"
sql=(mariadb --defaults-file="$dir/my.cnf" -uroot)
if [[ $("${sql[@]}" -N -e "select count(*) from information_schema.tables where table_schema='sbtest'") != 8 ]]; then
  "${sql[@]}" -e "drop database if exists sbtest; create database sbtest"
  echo "setup: loading 8 sysbench tables of 100 000 rows (~10 s)"
  timeout 600 sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=33306 --mysql-user=root --mysql-db=sbtest \
    --tables=8 --table-size=100000 --threads=2 oltp_read_write prepare >"$dir/run/prepare.log"
fi
echo "setup: MariaDB on 127.0.0.1:33306 ready; the A-Tune pair is in $dir"
