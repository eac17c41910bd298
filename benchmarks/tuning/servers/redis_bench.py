"""Run redis-benchmark and print the mix's throughput and its worst 99th-percentile latency.

redis-benchmark reports each command separately; a user of the mix reads the requests per
second over all of it (requests / the sum of each command's time) and the worst command's
p99. Usage: ``redis_bench.py REDIS_BENCHMARK_ARGS...`` (without ``--csv``/``-q``); prints
``rps: X``, ``latency_p99_ms: X`` and one ``COMMAND_rps``/``COMMAND_p99_ms`` line per command.
"""

from __future__ import annotations

import csv
import io
import subprocess
import sys


def main(args: list[str]) -> int:
    # redis-benchmark spins forever when the server goes away: always under a timeout
    out = subprocess.run(["redis-benchmark", *args, "--csv"], capture_output=True, text=True, timeout=300, check=False)
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    if out.returncode != 0 or not rows:
        sys.stderr.write(out.stdout + out.stderr)
        return out.returncode or 1
    n = int(args[args.index("-n") + 1])
    seconds = sum(n / float(r["rps"]) for r in rows)
    print(f"rps: {n * len(rows) / seconds:.1f}")
    print(f"latency_p99_ms: {max(float(r['p99_latency_ms']) for r in rows):.3f}")
    for r in rows:
        print(f"{r['test']}_rps: {float(r['rps']):.1f}")
        print(f"{r['test']}_p99_ms: {float(r['p99_latency_ms']):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
