"""Calibrate the doctor's thresholds that have no published value, from A/A runs here.

Sys-time share, context switches, migrations and page faults per CPU-second have no
textbook cut-off. This script runs ordinary, healthy workloads (a CPU-bound C loop,
Python start-up, sort, gzip) N times each under ``perf stat`` (A/A: the same command
again and again) and prints, per quantity, the range and the largest value seen. The
rule files in ``src/hone/diagnose/rules/`` set their thresholds above that range and cite
the numbers. Re-run on a new kind of machine: ``python benchmarks/diagnose_calibration.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from hone.diagnose.capabilities import probe_capabilities
from hone.diagnose.profile import profile_command

REPO = Path(__file__).resolve().parents[1]
QUANTITIES = ["sys_share_pct", "context_switches_per_cpu_s", "migrations_per_cpu_s", "page_faults_per_cpu_s",
              "syscalls_per_cpu_s", "cpu_utilization"]


def main(repeats: int = 8) -> None:
    caps = probe_capabilities()
    tmp = Path(tempfile.mkdtemp(prefix="hone-calib-"))
    binary = tmp / "cpu_hot"
    subprocess.run(["gcc", "-O2", "-o", str(binary), str(REPO / "tests/diagnose/programs/cpu_hot.c")], check=True)
    data = tmp / "data.txt"
    data.write_text("\n".join(str((i * 7919) % 100003) for i in range(300000)))
    workloads = {
        "cpu-bound C loop": [str(binary), "60000000"],
        "python start-up": [sys.executable, "-c", "import json, decimal"],
        "sort 300k lines": ["sort", "-n", str(data), "-o", str(tmp / "sorted.txt")],
        "gzip 2 MB": ["gzip", "-kf", str(data)],
    }
    table = {}
    for name, argv in workloads.items():
        result = profile_command(argv, caps, repeats=repeats)
        row = {}
        for q in QUANTITIES:
            s = result.derived[q].summary
            row[q] = None if s is None else {"min": round(s.min, 3), "median": round(s.median, 3),
                                             "max": round(s.max, 3), "cv": round(s.cv, 3)}
        table[name] = row
    print(json.dumps({"machine": caps.cpu_model, "kernel": caps.kernel, "repeats": repeats, "workloads": table},
                     indent=1))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 8)
