"""Run pgbench with a per-transaction log and print its throughput and latency percentiles.

pgbench's summary has only the mean latency; the percentiles come from its ``-l`` log
(one line per transaction, the latency in µs in the third column), written to a temporary
directory that is removed afterwards. Usage: ``pgbench_p99.py PGBENCH_ARGS...`` (without
``-l``); prints ``tps: X``, ``latency_p50_ms: X``, ``latency_p99_ms: X``, ``transactions: N``.
"""

from __future__ import annotations

import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def main(args: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="pgbench-log-") as tmp:
        argv = ["pgbench", *args, "-l", f"--log-prefix={tmp}/tx"]
        # the run's own -T plus pgbench's vacuum and connection set-up, with room to spare
        out = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
        if out.returncode != 0:
            sys.stderr.write(out.stderr)
            return out.returncode
        tps = re.search(r"tps = ([0-9.]+) \(without initial connection time\)", out.stdout)
        lat = [int(line.split()[2]) for f in Path(tmp).glob("tx*") for line in f.read_text().splitlines() if line]
    if tps is None or len(lat) < 100:
        sys.stderr.write(out.stdout + out.stderr + f"\npgbench_p99: {len(lat)} transactions logged\n")
        return 1
    cuts = statistics.quantiles(lat, n=100, method="inclusive")
    print(f"tps: {float(tps.group(1)):.1f}")
    print(f"latency_p50_ms: {cuts[49] / 1000:.4f}")
    print(f"latency_p99_ms: {cuts[98] / 1000:.4f}")
    print(f"transactions: {len(lat)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
