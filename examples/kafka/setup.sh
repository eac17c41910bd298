#!/usr/bin/env bash
# What A-Tune's prepare.sh does for its Kafka pair, on a private broker: build/examples/kafka
# holds the broker's jars (Kafka 4.4 from Maven Central: Debian ships no Kafka), its
# server.properties and data, the producer's properties (the files the pair's sed commands
# edit) and the pair with its paths filled in. Starts the broker (the job tunes a running
# service). `make example-kafka` stops it after the job.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
example=$root/examples/kafka
dir=$root/build/examples/kafka
for tool in java mvn; do
  command -v $tool >/dev/null || {
    echo "setup: $tool is not installed (Debian packages openjdk-17-jre-headless, maven; make example-kafka installs them)" >&2; exit 1; }
done
mkdir -p "$dir/run"
if [[ ! -f $dir/libs/.complete ]]; then
  echo "setup: fetching Kafka's jars from Maven Central (~55 MB)"
  rm -rf "$dir/libs"
  timeout 900 mvn -q -B -f "$example/pom.xml" dependency:copy-dependencies -DoutputDirectory="$dir/libs" \
    -DincludeScope=runtime >"$dir/run/mvn.log" 2>&1 || { echo "setup: mvn failed; see $dir/run/mvn.log" >&2; exit 1; }
  touch "$dir/libs/.complete"
fi
render() { sed -e "s#@DIR@#$dir#g" -e "s#@EXAMPLE@#$example#g" "$1" > "$2"; }
# A copy that is already there is kept unless the example's file is newer: an interrupted
# run leaves its changes for `hone rollback`, which needs the file it changed.
for f in server.properties producer.properties; do
  if [[ ! -f $dir/$f || $example/$f -nt $dir/$f ]]; then render "$example/$f" "$dir/$f"; fi
done
render "$example/kafka_client.yaml" "$dir/kafka_client.yaml"
render "$example/kafka_server.yaml" "$dir/kafka_server.yaml"
if [[ ! -f $dir/data/meta.properties ]]; then
  rm -rf "$dir/data"
  cp=("$dir/libs/*")
  id=$(timeout 60 java -cp "${cp[0]}" kafka.tools.StorageTool random-uuid 2>/dev/null | tail -1)
  timeout 120 java -cp "${cp[0]}" kafka.tools.StorageTool format --standalone -t "$id" -c "$dir/server.properties" \
    >"$dir/run/format.log" 2>&1 || { echo "setup: formatting the log directory failed; see $dir/run/format.log" >&2; exit 1; }
fi
if ! { [[ -f $dir/run/kafka.pid ]] && kill -0 "$(cat "$dir/run/kafka.pid")" 2>/dev/null; }; then
  timeout 90 bash "$example/start.sh" "$dir"
fi
port=$(sed -n 's/^listeners=PLAINTEXT:\/\/127.0.0.1:\([0-9]*\),.*/\1/p' "$dir/server.properties")
echo "setup: Kafka on 127.0.0.1:$port ready; the A-Tune pair is in $dir"
