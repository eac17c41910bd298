"""``python -m hone.diagnose._child_usage OUT.json -- ARGV…``: run ARGV, record what
``os.wait4`` and ``/proc/self/io`` know about it, exit with its exit code.

Why a wrapper: :func:`hone.core.process.run_process` keeps CPU times and RSS but not the
voluntary/involuntary context switches or the I/O syscall counts, and those exist only in
the parent that reaps the child. The kernel adds a reaped child's I/O accounting
(rchar, wchar, syscr, syscw) to its parent's, so the difference across the wait is the
child's (and its descendants'). The wrapper sits outside ``perf stat``, so perf's own small
share (reading /proc, writing its result file) is included; that is documented in the
profile output.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path


def _proc_io() -> dict[str, int]:
    out: dict[str, int] = {}
    try:
        for line in Path("/proc/self/io").read_text().splitlines():
            key, _, value = line.partition(":")
            out[key.strip()] = int(value)
    except (OSError, ValueError):
        pass
    return out


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: python -m hone.diagnose._child_usage OUT.json -- ARGV...", file=sys.stderr)
        return 2
    out, cmd = argv[0], argv[2:]
    before = _proc_io()
    start = time.perf_counter()
    try:
        pid = os.posix_spawnp(cmd[0], cmd, os.environ)
    except OSError as exc:
        print(f"cannot start {cmd[0]}: {exc}", file=sys.stderr)
        return 127
    # Forward SIGTERM/SIGINT so a killed wrapper does not orphan the workload.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda s, f: os.kill(pid, s))
    while True:
        try:
            _, status, usage = os.wait4(pid, 0)
            break
        except InterruptedError:
            continue
    wall = time.perf_counter() - start
    after = _proc_io()
    record = {
        "wall_s": wall,
        "user_s": usage.ru_utime,
        "sys_s": usage.ru_stime,
        "max_rss_kb": usage.ru_maxrss,
        "voluntary_ctxt_switches": usage.ru_nvcsw,
        "involuntary_ctxt_switches": usage.ru_nivcsw,
        "minor_faults": usage.ru_minflt,
        "major_faults": usage.ru_majflt,
        "io": {k: after[k] - before.get(k, 0) for k in after},
    }
    Path(out).write_text(json.dumps(record))
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
