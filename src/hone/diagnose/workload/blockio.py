"""Block I/O pattern of chosen processes: ``perf record -e block:block_bio_queue -a``.

Why bios and not /proc/diskstats alone: diskstats counts the whole device (every process on
the machine) and cannot tell sequential from random; each ``block_bio_queue`` event carries
the submitting task, the device, the direction and the start sector, so the observed
processes' own requests can be picked out and each compared with where that task's previous
request on that device ended. Reads are submitted by the reading task (readahead included);
buffered writes are written back by kernel threads, which are counted for the observed
processes only when they dirtied data themselves (see :func:`pattern`).
"""

from __future__ import annotations

import re
import signal
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path

from hone.core.process import finish_process, run_process, start_process
from hone.diagnose.workload.procfs import SECTOR

EVENT = "block:block_bio_queue"
# A request starting at most this many sectors past the previous one's end still counts as
# sequential (readahead and filesystem allocation leave small gaps): 256 sectors = 128 KiB.
GAP_SECTORS = 256
_LINE = re.compile(r"^\s*(?P<comm>.*?)\s+(?P<pid>\d+)/(?P<tid>\d+)\s+\S*block_bio_queue:\s+(?P<dev>\d+,\d+)\s+"
                   r"(?P<rwbs>[A-Z]+)\s+(?P<sector>\d+)\s+\+\s+(?P<n>\d+)")
_KERNEL_WRITERS = ("kworker", "jbd2", "flush-", "writeback")


@dataclass(frozen=True)
class Bio:
    comm: str
    pid: int
    tid: int
    dev: str
    write: bool
    sector: int
    sectors: int


def parse_script(text: str) -> list[Bio]:
    """Bios from ``perf script -F comm,pid,tid,event,trace`` (flushes without data left out)."""
    out = []
    for line in text.splitlines():
        m = _LINE.match(line)
        if not m or int(m["n"]) == 0:
            continue
        rwbs = m["rwbs"]
        if "R" not in rwbs and "W" not in rwbs:  # discards, flushes
            continue
        out.append(Bio(m["comm"], int(m["pid"]), int(m["tid"]), m["dev"], "W" in rwbs, int(m["sector"]),
                       int(m["n"])))
    return out


@dataclass(frozen=True)
class BioPattern:
    """What the chosen bios show. ``seq_pct``: share of bios (after each stream's first) that
    start within :data:`GAP_SECTORS` after the previous bio of the same task, device and
    direction ended; None when fewer than two bios in a stream."""

    count: int
    read_count: int
    bytes: int
    avg_kb: float | None
    seq_pct: float | None
    judged: int
    kernel_writeback: bool
    # KiB read or written per contiguous run (a run ends where a bio does not follow on): large
    # for a sequential reader even when its file is in several extents or its bios are few and
    # large, a few KiB for random I/O. None without bios.
    run_kb: float | None = None


def pattern(bios: Iterable[Bio], pids: Collection[int] | None, *, include_writeback: bool = False) -> BioPattern:
    """The pattern of the bios of ``pids`` (None: every bio). With ``include_writeback`` the
    writes of kernel writeback threads count too (the observed processes dirtied data that
    the kernel writes for them)."""
    chosen = []
    for b in bios:
        if pids is None or b.pid in pids or (include_writeback and b.write and b.comm.startswith(_KERNEL_WRITERS)):
            chosen.append(b)
    last_end: dict[tuple[int, str, bool], int] = {}
    seq = judged = 0
    for b in chosen:
        key = (b.tid, b.dev, b.write)
        end = last_end.get(key)
        if end is not None:
            judged += 1
            seq += 0 <= b.sector - end <= GAP_SECTORS
        last_end[key] = b.sector + b.sectors
    total = sum(b.sectors for b in chosen) * SECTOR
    runs = len(chosen) - seq
    return BioPattern(len(chosen), sum(not b.write for b in chosen), total,
                      total / len(chosen) / 1024 if chosen else None,
                      seq / judged * 100 if judged else None, judged, include_writeback,
                      total / 1024 / runs if runs else None)


class BioRecorder:
    """``perf record`` of every bio on the machine from :meth:`start` to :meth:`stop`."""

    def __init__(self, perf: str, out: Path) -> None:
        self.perf = perf
        self.out = out
        self.proc = None  # type: ignore[var-annotated]
        self.error: str | None = None

    def start(self) -> None:
        self.proc = start_process([self.perf, "record", "-q", "-e", EVENT, "-a", "-o", str(self.out)],
                                  stdout=-3, stderr=-1)  # DEVNULL, PIPE

    def abort(self) -> None:
        """Stop recording and keep nothing (the window was cut short)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()
            finish_process(self.proc)
        self.proc = None

    def stop(self) -> list[Bio]:
        """Stop recording (SIGINT: perf writes its file) and return the bios."""
        if self.proc is None:
            return []
        self.proc.send_signal(signal.SIGINT)
        try:
            _, err = self.proc.communicate(timeout=30)
        except Exception:
            self.proc.kill()
            self.proc.communicate()
            err = b""
        finish_process(self.proc)
        if not self.out.exists():
            self.error = f"perf record wrote nothing: {err.decode(errors='replace').strip()[-200:]}"
            return []
        res = run_process([self.perf, "script", "-i", str(self.out), "-F", "comm,pid,tid,event,trace"], timeout=120)
        if res.returncode != 0:
            self.error = f"perf script failed: {res.stderr_tail()}"
            return []
        return parse_script(res.stdout)
