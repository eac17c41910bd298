#!/bin/sh
# A-Tune's stopworkload for the private broker: SIGTERM (a clean shutdown), then wait for the
# process to go. Usage: stop.sh DIR
dir=$1
[ -f "$dir/run/kafka.pid" ] || exit 0
pid=$(cat "$dir/run/kafka.pid")
kill "$pid" 2>/dev/null || { rm -f "$dir/run/kafka.pid"; exit 0; }
for _ in $(seq 1 120); do
  kill -0 "$pid" 2>/dev/null || { rm -f "$dir/run/kafka.pid"; exit 0; }
  sleep 0.5
done
echo "the broker still runs after 60 s" >&2
exit 1
