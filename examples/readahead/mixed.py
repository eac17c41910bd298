#!/usr/bin/env python3
"""A mixed read workload: a random reader and a sequential reader taking turns on one file.

Each phase opens the file once and keeps it open (a long-lived reader, like a database or
a search index). The random reader touches 4 KiB pages at random offsets through mmap
(Lucene, LMDB, MongoDB read this way: a page fault reads the file's read-ahead window
around the page); the sequential reader streams a range with read(2). A page-cache budget
stands in for a file larger than memory: whenever the device has read --budget-mib MiB
since the last eviction, the reader drops this file's pages (posix_fadvise DONTNEED; the
random reader first unmaps its touched pages), so no other file's cache is touched.

Prints the total as ``MB/s: N`` (bytes the readers asked for / seconds), and per phase.
"""

from __future__ import annotations

import argparse
import json
import mmap
import os
import random
import sys
import time

PAGE = 4096


class Budget:
    """Evict the file's pages once the device read ``limit`` bytes since the last eviction."""

    def __init__(self, path: str, limit: int) -> None:
        st = os.stat(path)
        self.stat = f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}/stat"
        self.limit = limit
        self.mark = self.read_bytes()
        self.evictions = 0

    def read_bytes(self) -> int:
        with open(self.stat) as fh:
            return int(fh.read().split()[2]) * 512

    def over(self) -> bool:
        if self.limit <= 0:
            return False
        now = self.read_bytes()
        if now - self.mark < self.limit:
            return False
        self.mark = now
        self.evictions += 1
        return True


def evict(fd: int) -> None:
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)


def random_phase(path: str, ops: int, rng: random.Random, budget: Budget) -> int:
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        m = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
        total = 0
        for i in range(ops):
            off = rng.randrange(0, size // PAGE) * PAGE
            total += m[off]  # one byte faults the page in
            if i % 16 == 0 and budget.over():
                m.madvise(mmap.MADV_DONTNEED)
                evict(fd)
        m.close()
        return ops * PAGE
    finally:
        os.close(fd)


def sequential_phase(path: str, nbytes: int, block: int, rng: random.Random, budget: Budget) -> int:
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        start = rng.randrange(0, max(1, (size - nbytes) // block)) * block if nbytes < size else 0
        done, pos = 0, start
        while done < nbytes:
            n = len(os.pread(fd, block, pos))
            if n == 0:
                pos = 0
                continue
            done += n
            pos += n
            if budget.over():
                os.posix_fadvise(fd, 0, max(0, pos - block), os.POSIX_FADV_DONTNEED)  # behind the reader
        return done
    finally:
        os.close(fd)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("--phases", type=int, default=4, help="phases in all, random first (default 4)")
    ap.add_argument("--seq-mib", type=int, default=256, help="MiB the sequential reader reads a phase")
    ap.add_argument("--rand-ops", type=int, default=2000, help="pages the random reader touches a phase")
    ap.add_argument("--block", type=int, default=1 << 20, help="bytes per read(2) of the sequential reader")
    ap.add_argument("--budget-mib", type=int, default=64, help="page-cache budget in MiB (0: none)")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--json", action="store_true", help="print one JSON object instead")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    budget = Budget(args.file, args.budget_mib << 20)
    with open(args.file, "rb") as fh:
        evict(fh.fileno())  # every run starts cold
    phases = []
    t0 = time.perf_counter()
    for i in range(args.phases):
        kind = "random" if i % 2 == 0 else "sequential"
        t = time.perf_counter()
        if kind == "random":
            n = random_phase(args.file, args.rand_ops, rng, budget)
        else:
            n = sequential_phase(args.file, args.seq_mib << 20, args.block, rng, budget)
        dt = time.perf_counter() - t
        phases.append({"kind": kind, "bytes": n, "seconds": round(dt, 4), "MBps": round(n / dt / 1e6, 2)})
    wall = time.perf_counter() - t0
    total = sum(p["bytes"] for p in phases)
    out = {"MBps": round(total / wall / 1e6, 2), "seconds": round(wall, 3), "evictions": budget.evictions,
           "phases": phases}
    if args.json:
        print(json.dumps(out))
    else:
        for p in phases:
            print(f"{p['kind']:<10} {p['bytes'] >> 20:>6} MiB {p['seconds']:>7.3f} s {p['MBps']:>8.1f} MB/s")
        print(f"evictions: {budget.evictions}")
        print(f"MB/s: {out['MBps']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
