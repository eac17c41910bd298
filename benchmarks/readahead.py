"""`make bench-readahead`: the adaptive read-ahead controller against fixed read-ahead.

On a private loop device (examples/readahead/loopdev.py: ext4 in a sparse file, direct I/O to
its backing file, a 1 GiB data file), `hone compare` runs examples/readahead/hone.yaml in
interleaved rounds with four variants of its service, `hone adapt readahead`:

* adaptive     the spec's defaults (A-Tune's thresholds; 16 KB random, 1024 KB sequential)
* no-advise    the same, without advising open files (a switch reaches files opened after it)
* fixed-128    both sizes 128 KB: the controller holds the device there, no probe
* fixed-1024   both sizes 1024 KB

The workload (mixed.py) alternates a random mmap reader and a sequential read(2) reader on
the data file with a 64 MiB page-cache budget. Prints each variant's MB/s (mean, 95% CI) and
hone's paired ratio against adaptive (CI, p, verdict); writes the same to --out.

    python benchmarks/readahead.py [--rounds 8] [--out benchmarks/readahead/results.md]

Root only (losetup, mount, read_ahead_kb, bpftrace). ~6-10 min with 8 rounds.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scipy import stats

REPO = Path(__file__).resolve().parents[1]
HONE = str(Path(sys.executable).with_name("hone"))
SPEC = REPO / "examples" / "readahead" / "hone.yaml"
LOOPDEV = REPO / "examples" / "readahead" / "loopdev.py"
WORK = REPO / "build" / "examples" / "readahead"
VARIANTS = [
    ("adaptive", ""),
    ("no-advise", "advise=no-advise"),
    ("fixed-128", "random_kb=128,sequential_kb=128"),
    ("fixed-1024", "random_kb=1024,sequential_kb=1024"),
]


def mean_ci(values: list[float]) -> tuple[float, float, float]:
    """Mean and its 95% t-interval."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, math.nan, math.nan
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n)
    return mean, mean - half, mean + half


def table(result: dict, device: str, rounds: int, seconds: float) -> str:
    rows = result["rows"][0]
    runs = {v["name"]: [r["metrics"].get("MBps") for r in v["runs"] if r.get("error") is None]
            for v in rows["variants"]}
    ratios = rows.get("comparisons", {})
    load = (result.get("fingerprint") or {}).get("loadavg") or []
    lines = [
        f"Measured {time.strftime('%Y-%m-%d')} on {platform.node()} ({os.cpu_count()} vCPUs, kernel "
        f"{platform.release()}), private loop device {device} (direct I/O), 1 GiB file, 64 MiB page-cache "
        f"budget; {rounds} interleaved rounds (`hone compare`, seed 1), {seconds / 60:.0f} min"
        + (f", 1-min load average {load[0]:.1f} at the start" if load else "") + ".",
        "",
        "Workload: examples/readahead/mixed.py, a random mmap reader (1500 page touches) and a sequential reader "
        "(512 MiB in 128 KiB reads) taking turns, two phases each; MB/s = bytes asked / seconds. Variants of the "
        "spec's service, `hone adapt readahead`: adaptive = its defaults (A-Tune's thresholds, 16 KB random, "
        "1024 KB sequential, open files advised); no-advise = without the advice; fixed-N = both sizes N KB "
        "(the controller holds N, no probe).",
        "",
        "| variant | MB/s (mean) | 95% CI | runs | vs adaptive (paired) | 95% CI | p | verdict |",
        "|---|---:|---|---:|---:|---|---:|---|",
    ]
    for name, _ in VARIANTS:
        vals = [v for v in runs.get(name, []) if v is not None]
        if not vals:
            lines.append(f"| {name} | - | - | 0 | | | | failed |")
            continue
        mean, lo, hi = mean_ci(vals)
        c = ratios.get(name)
        if c is None:
            lines.append(f"| {name} | {mean:.1f} | [{lo:.1f}, {hi:.1f}] | {len(vals)} | reference | | | |")
            continue
        clo, chi = c["ci_pct"]
        lines.append(f"| {name} | {mean:.1f} | [{lo:.1f}, {hi:.1f}] | {len(vals)} | {c['change_pct']:+.1f}% | "
                     f"[{clo:+.1f}%, {chi:+.1f}%] | {c['p_value']:.2g} | {c['verdict']} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "readahead" / "results.md")
    ap.add_argument("--keep-device", action="store_true", help="leave the loop device set up at the end")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("bench-readahead: needs root (a loop device, read_ahead_kb, bpftrace)", file=sys.stderr)
        return 2
    if shutil.which("bpftrace") is None:
        print("bench-readahead: bpftrace is not installed (scripts/setup.sh readahead)", file=sys.stderr)
        return 2
    device = subprocess.run([sys.executable, str(LOOPDEV), "setup", str(WORK), "--mib", "1024"], check=True,
                            capture_output=True, text=True, timeout=900).stdout.strip()
    env = {**os.environ, "PATH": f"{Path(HONE).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    started = time.monotonic()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            out_json = Path(tmp) / "compare.json"
            argv = [HONE, "compare", str(SPEC), *(f"--variant={n}:{v}" for n, v in VARIANTS),
                    "--rounds", str(args.rounds), "--max-rounds", str(args.rounds), "--warmup", "1",
                    "--seed", "1", "--export-json", str(out_json)]
            print("$ " + " ".join(argv[1:]), flush=True)
            code = subprocess.run(argv, env=env, check=False, timeout=6 * 3600).returncode
            if not out_json.exists():
                print(f"bench-readahead: hone compare failed (exit {code})", file=sys.stderr)
                return 1
            result = json.loads(out_json.read_text())
    finally:
        if not args.keep_device:
            subprocess.run([sys.executable, str(LOOPDEV), "teardown", str(WORK)], check=False, timeout=300)
    text = table(result, device, args.rounds, time.monotonic() - started)
    print()
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("# `make bench-readahead`: adaptive read-ahead vs fixed\n\n" + text + "\n")
    print(f"\nwritten to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
