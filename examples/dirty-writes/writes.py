#!/usr/bin/env python3
"""A file-write workload in the spirit of seed 001's Kafka case: a producer appends
records to a log file and fsyncs every N records, while the page cache decides when dirty
pages go to disk (vm.dirty_background_ratio & co.).

Prints `write_mbps: X` (throughput, MB/s) and `p99_ms: Y` (99th percentile latency of one
append + periodic fsync, milliseconds).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=64, help="megabytes written")
    ap.add_argument("--record-kb", type=int, default=16)
    ap.add_argument("--fsync-every", type=int, default=256, help="records between fsyncs")
    ap.add_argument("--dir", default=None, help="where the log file goes (default: a temp dir)")
    args = ap.parse_args()
    record = os.urandom(args.record_kb * 1024)
    n = args.mb * 1024 // args.record_kb
    latencies = []
    with tempfile.TemporaryDirectory(prefix="hone-writes-", dir=args.dir) as tmp:
        path = os.path.join(tmp, "segment.log")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        start = time.perf_counter()
        for i in range(n):
            t0 = time.perf_counter()
            os.write(fd, record)
            if (i + 1) % args.fsync_every == 0:
                os.fsync(fd)
            latencies.append(time.perf_counter() - t0)
        os.fsync(fd)
        elapsed = time.perf_counter() - start
        os.close(fd)
    latencies.sort()
    print(f"write_mbps: {args.mb / elapsed:.2f}")
    print(f"p99_ms: {latencies[int(0.99 * (len(latencies) - 1))] * 1000:.3f}")


if __name__ == "__main__":
    main()
