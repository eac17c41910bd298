#!/usr/bin/env bash
# The benchmark, as in A-Tune's Kafka case: a producer then a consumer against the broker, on a
# topic of this run's own (2 partitions, deleted afterwards). kafka-producer-perf-test sends
# RECORDS records of 1 KiB as fast as it can with producer.properties (acks=all), after a
# quarter as many untimed ones (a restarted broker and a new JVM start cold);
# kafka-consumer-perf-test reads them all back. Prints the four metrics the A-Tune pair weighs:
# producer_tps (records/s), delay and delay_p99 (send latency, ms), consumer_tps (records/s
# while fetching). Usage: bench.sh DIR [RECORDS]
set -euo pipefail
dir=$1
records=${2:-${RECORDS:-100000}}
warm=$((records / 4))
port=$(sed -n 's/^listeners=PLAINTEXT:\/\/127.0.0.1:\([0-9]*\),.*/\1/p' "$dir/server.properties")
cp=("$dir/libs/*")
topic=bench-$$-$RANDOM
trap 'timeout 60 java -cp "${cp[0]}" org.apache.kafka.tools.TopicCommand --bootstrap-server "127.0.0.1:$port" --delete --topic "$topic" >/dev/null 2>&1 || true' EXIT
out=$(timeout 300 java -cp "${cp[0]}" org.apache.kafka.tools.ProducerPerformance --topic "$topic" --num-records $((records + warm)) \
  --warmup-records "$warm" --record-size 1024 --throughput -1 --command-config "$dir/producer.properties" \
  --producer-props "bootstrap.servers=127.0.0.1:$port" 2>&1 | grep " steady state records sent, " | tail -1)
# "100000 steady state records sent, 11498.2 records/sec (11.23 MB/sec), 1904.25 ms avg latency, ..., 3125 ms 99th, ..."
re='sent, ([0-9.]+) records/sec .* ([0-9.]+) ms avg latency, .* ([0-9.]+) ms 99th,'
[[ $out =~ $re ]] || { echo "bench: no producer summary in: $out" >&2; exit 1; }
echo "producer_tps: ${BASH_REMATCH[1]}"
echo "delay: ${BASH_REMATCH[2]}"
echo "delay_p99: ${BASH_REMATCH[3]}"
line=$(timeout 300 java -cp "${cp[0]}" org.apache.kafka.tools.ConsumerPerformance --topic "$topic" \
  --bootstrap-server "127.0.0.1:$port" --num-records $((records + warm)) --timeout 60000 2>&1 | grep -E '^[0-9]{4}-' | tail -1)
# start.time, end.time, MB, MB.sec, nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
IFS=',' read -r -a f <<<"$line"
[[ ${#f[@]} -ge 10 ]] || { echo "bench: no consumer summary" >&2; exit 1; }
echo "consumer_tps: ${f[9]// /}"
