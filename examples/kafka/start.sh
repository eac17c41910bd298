#!/usr/bin/env bash
# A-Tune's startworkload for the private broker: the JVM in the background (no systemd here),
# its pid in DIR/run/kafka.pid; ready when its port takes connections and it answers a
# metadata request. Usage: start.sh DIR
dir=$1
mkdir -p "$dir/run"
port=$(sed -n 's/^listeners=PLAINTEXT:\/\/127.0.0.1:\([0-9]*\),.*/\1/p' "$dir/server.properties")
java -Xms512m -Xmx512m -cp "$dir/libs/*" kafka.Kafka "$dir/server.properties" >>"$dir/run/broker.log" 2>&1 &
pid=$!
echo "$pid" >"$dir/run/kafka.pid"
for _ in $(seq 1 120); do
  kill -0 "$pid" 2>/dev/null || { echo "the broker exited; the end of $dir/run/broker.log:" >&2; tail -5 "$dir/run/broker.log" >&2; exit 1; }
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    timeout 60 java -cp "$dir/libs/*" org.apache.kafka.tools.TopicCommand --bootstrap-server "127.0.0.1:$port" --list \
      >/dev/null 2>&1 && exit 0
  fi
  sleep 0.5
done
echo "the broker did not answer within 60 s" >&2
exit 1
