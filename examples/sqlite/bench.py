#!/usr/bin/env python3
"""An embedded SQLite workload: batched inserts, then point and range queries.

Prints `ops/s: N` and `p95_ms: X` (per-transaction latency). Every knob arrives as a
command-line argument; the database lives in a fresh temporary directory.
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import tempfile
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=6000)
    ap.add_argument("--queries", type=int, default=1500)
    ap.add_argument("--journal-mode", default="DELETE")
    ap.add_argument("--synchronous", default="FULL")
    ap.add_argument("--cache-size", type=int, default=-2000)
    ap.add_argument("--page-size", type=int, default=4096)
    ap.add_argument("--temp-store", default="DEFAULT")
    ap.add_argument("--mmap-size", type=int, default=0)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()

    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="hone-sqlite-") as tmp:
        db = sqlite3.connect(os.path.join(tmp, "bench.db"), isolation_level=None)
        db.execute(f"PRAGMA page_size={args.page_size}")
        db.execute(f"PRAGMA journal_mode={args.journal_mode}")
        db.execute(f"PRAGMA synchronous={args.synchronous}")
        db.execute(f"PRAGMA cache_size={args.cache_size}")
        db.execute(f"PRAGMA temp_store={args.temp_store}")
        db.execute(f"PRAGMA mmap_size={args.mmap_size}")
        db.execute("CREATE TABLE kv (id INTEGER PRIMARY KEY, k TEXT, v BLOB, n INTEGER)")
        db.execute("CREATE INDEX kv_k ON kv(k)")
        db.execute("CREATE INDEX kv_n ON kv(n)")
        latencies = []
        start = time.perf_counter()
        ops = 0
        for lo in range(0, args.rows, args.batch):
            t0 = time.perf_counter()
            db.execute("BEGIN")
            db.executemany(
                "INSERT INTO kv (k, v, n) VALUES (?, ?, ?)",
                [(f"key{rng.randrange(10**9)}", os.urandom(64), i) for i in range(lo, min(lo + args.batch, args.rows))],
            )
            db.execute("COMMIT")
            latencies.append(time.perf_counter() - t0)
            ops += min(args.batch, args.rows - lo)
        for _ in range(args.queries):
            t0 = time.perf_counter()
            n = rng.randrange(args.rows)
            db.execute("SELECT count(*), sum(length(v)) FROM kv WHERE n BETWEEN ? AND ?", (n, n + 50)).fetchone()
            db.execute("SELECT v FROM kv WHERE k >= ? ORDER BY k LIMIT 5", (f"key{rng.randrange(10**9)}",)).fetchall()
            latencies.append(time.perf_counter() - t0)
            ops += 2
        elapsed = time.perf_counter() - start
        db.close()
    latencies.sort()
    p95 = latencies[int(0.95 * (len(latencies) - 1))] * 1000
    print(f"ops/s: {ops / elapsed:.1f}")
    print(f"p95_ms: {p95:.3f}")


if __name__ == "__main__":
    main()
