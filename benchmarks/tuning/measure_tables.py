"""Measure the tabular tuning problems once, on this machine; store them as CSV data.

* ``sqlite.csv`` — the SQLite demo workload (examples/sqlite/bench.py), every combination
  of journal_mode × synchronous × page_size × batch; value = wall seconds of one run
  (minimize), median of 2 runs.
* ``zlib.csv`` — compressing a fixed 2 MiB semi-compressible buffer with zlib: level ×
  chunk size × strategy × memLevel; value = compression CPU seconds + the time to send
  the output over a 20 MB/s link (minimize), median of 3 runs.

Run: ``python benchmarks/tuning/measure_tables.py [sqlite|zlib]`` (minutes, not hours).
"""

from __future__ import annotations

import csv
import itertools
import random
import statistics
import sys
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "src"))

from hone.core.process import run_process  # noqa: E402

SQLITE_SPACE = {
    "journal_mode": ["DELETE", "TRUNCATE", "WAL", "MEMORY"],
    "synchronous": ["OFF", "NORMAL", "FULL"],
    "page_size": [1024, 4096, 65536],
    "batch": [20, 50, 200, 1000],
}
ZLIB_SPACE = {
    "level": list(range(1, 10)),
    "chunk_kb": [4, 16, 64, 256, 1024],
    "strategy": ["default", "filtered", "huffman", "rle"],
    "mem_level": [1, 5, 9],
}


def write_table(out: Path, space: dict[str, list[Any]], measure: Callable[[dict[str, Any]], float]) -> None:
    """One CSV row per combination of ``space``: the knob values, then ``measure(cfg)``
    (flushed row by row, so an interrupted run keeps what it measured)."""
    keys = list(space)
    with out.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow([*keys, "value"])
        for combo in itertools.product(*space.values()):
            w.writerow([*combo, f"{measure(dict(zip(keys, combo, strict=True))):.5f}"])
            fh.flush()


def measure_sqlite(out: Path) -> None:
    def wall(cfg: dict[str, Any]) -> float:
        argv = [sys.executable, str(REPO / "examples/sqlite/bench.py"), "--rows", "2000", "--queries", "400",
                "--journal-mode", cfg["journal_mode"], "--synchronous", cfg["synchronous"],
                "--page-size", str(cfg["page_size"]), "--batch", str(cfg["batch"])]
        return statistics.median(run_process(argv, timeout=120, check=True).wall_s for _ in range(2))

    write_table(out, SQLITE_SPACE, wall)


def _payload() -> bytes:
    rng = random.Random(7)
    words = [bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9))) for _ in range(800)]
    text = b" ".join(rng.choice(words) for _ in range(200_000))
    noise = bytes(rng.getrandbits(8) for _ in range(300_000))
    return (text + noise)[: 2 * 1024 * 1024]


def measure_zlib(out: Path) -> None:
    data = _payload()
    strategies = {"default": zlib.Z_DEFAULT_STRATEGY, "filtered": zlib.Z_FILTERED, "huffman": zlib.Z_HUFFMAN_ONLY,
                  "rle": zlib.Z_RLE}

    def cost(cfg: dict[str, Any]) -> float:
        chunk = cfg["chunk_kb"] * 1024
        times = []
        for _ in range(3):
            t0 = time.process_time()
            size = 0
            for i in range(0, len(data), chunk):
                c = zlib.compressobj(cfg["level"], zlib.DEFLATED, 15, cfg["mem_level"], strategies[cfg["strategy"]])
                size += len(c.compress(data[i:i + chunk])) + len(c.flush())
            times.append(time.process_time() - t0)
        return statistics.median(times) + size / 20e6

    write_table(out, ZLIB_SPACE, cost)


if __name__ == "__main__":
    which = sys.argv[1:] or ["zlib", "sqlite"]
    if "zlib" in which:
        measure_zlib(HERE / "data" / "zlib.csv")
    if "sqlite" in which:
        measure_sqlite(HERE / "data" / "sqlite.csv")
