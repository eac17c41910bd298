"""Helpers of the read-ahead controller tests: readers (a process reading one file
sequentially or at random offsets until stopped: a real process, whose open file the
controller advises) and the controller itself on a loop device."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tests.conftest import HONE_BIN, LoopFs

#: Seconds a switch may take: bpftrace attaches in ~2 s, a decision takes an interval or two.
SWITCH_S = 20.0

_CODE = """
import os, random, sys
kind, path = sys.argv[1], sys.argv[2]
fd = os.open(path, os.O_RDONLY)
size, pos, rng = os.fstat(fd).st_size, 0, random.Random(1)
while True:
    if kind == "sequential":
        pos = pos if pos + 131072 <= size else 0
        os.pread(fd, 131072, pos)
        pos += 131072
    else:
        os.pread(fd, 4096, rng.randrange(size // 4096) * 4096)
"""


def start_reader(kind: str, path: Path) -> subprocess.Popen[bytes]:
    """``kind`` is ``sequential`` (128 KiB reads one after the other, from the start again at
    the end) or ``random`` (4 KiB reads at random pages)."""
    return subprocess.Popen([sys.executable, "-c", _CODE, kind, str(path)])


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.kill()
    proc.wait(timeout=10)


def wait_for(check: Callable[[], bool], timeout: float) -> bool:
    """Poll ``check`` every 0.1 s until it is true (True) or ``timeout`` s pass (False)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.1)
    return check()


def start_controller(loop: LoopFs, state_dir: Path, *extra: str, env: dict[str, str] | None = None
                     ) -> subprocess.Popen[str]:
    """``hone adapt readahead`` on the loop device: 0.2 s intervals, 16 KB random, 512 KB
    sequential, files from 1 MiB."""
    argv = [HONE_BIN, "adapt", "readahead", "--device", loop.device, "--interval", "0.2", "--random-kb", "16",
            "--sequential-kb", "512", "--min-file-kb", "1024", "--duration", "120", *extra]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "HONE_STATE_DIR": str(state_dir), "COLUMNS": "200", **(env or {})})


def readahead_is(loop: LoopFs, kb: str) -> Callable[[], bool]:
    return lambda: loop.readahead.read_text().strip() == kb
