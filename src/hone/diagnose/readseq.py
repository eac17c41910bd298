"""The ``readseq`` probe's reports: sequential and random page-cache reads per file and process.

:class:`ReadSeqObserver` runs ``probes/readseq.bt`` under bpftrace and yields one
:class:`Report` per interval (``hone adapt readahead`` decides on them); :func:`parse_reports`
turns the probe's text into reports, and :func:`format_report` renders the totals of a
whole run (``hone doctor --probe readseq``). Devices cross this module as the kernel's
``dev_t`` (major << 20 | minor), the value the tracepoints carry.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from hone.core.errors import CapabilityError
from hone.core.process import finish_process, start_process

PAGE = 4096
#: Seconds bpftrace may take to compile and attach before the observer gives up.
ATTACH_TIMEOUT_S = 30.0
#: Map entries bpftrace keeps (its default, 4096, would stop counting new files on a busy machine).
MAP_KEYS = 65536
SCRIPT = Path(str(resources.files("hone.diagnose") / "probes" / "readseq.bt"))
_ENTRY = re.compile(r"^@(reads|sequential|extent)\[(\d+), (\d+), (\d+)\]: (\d+)$")
_REPORT = re.compile(r"^readseq report (\d+)$")


def kernel_dev(major: int, minor: int) -> int:
    """The kernel's ``dev_t`` of a device, as tracepoints report it."""
    return (major << 20) | minor


def dev_name(kdev: int) -> str:
    """``major:minor`` of a kernel ``dev_t``."""
    return f"{kdev >> 20}:{kdev & 0xFFFFF}"


@dataclass(frozen=True)
class FileReads:
    """One process's page-cache accesses to one file in one report."""

    pid: int
    dev: int  # kernel dev_t of the file's filesystem
    ino: int
    reads: int = 0  # accesses (a read's batch of pages, an mmap fault), a file's first one not counted
    sequential: int = 0
    extent_pages: int = 0  # the highest page index seen: the file is at least this long

    @property
    def share(self) -> float:
        """Sequential share of the accesses, 0..1 (0 without any)."""
        return min(self.sequential, self.reads) / self.reads if self.reads else 0.0


@dataclass
class Report:
    """One interval of the probe: ``nsecs`` is its end on the kernel's monotonic clock."""

    nsecs: int
    files: list[FileReads] = field(default_factory=list)


def parse_reports(lines: Iterable[str]) -> Iterator[Report]:
    """The probe's output, one report per ``readseq report`` line (entries before it)."""
    rows: dict[tuple[int, int, int], dict[str, int]] = {}
    for raw in lines:
        line = raw.strip()
        m = _ENTRY.match(line)
        if m:
            what, pid, dev, ino, value = m.group(1), *map(int, m.groups()[1:])
            rows.setdefault((pid, dev, ino), {})[what] = value
            continue
        m = _REPORT.match(line)
        if m:
            files = [FileReads(pid, dev, ino, v.get("reads", 0), v.get("sequential", 0), v.get("extent", 0))
                     for (pid, dev, ino), v in sorted(rows.items())]
            rows = {}
            yield Report(int(m.group(1)), files)


def totals(reports: Iterable[Report]) -> list[FileReads]:
    """Every file's counts summed over ``reports`` (per process and file)."""
    acc: dict[tuple[int, int, int], FileReads] = {}
    for report in reports:
        for f in report.files:
            key = (f.pid, f.dev, f.ino)
            old = acc.get(key)
            acc[key] = f if old is None else FileReads(f.pid, f.dev, f.ino, old.reads + f.reads,
                                                       old.sequential + f.sequential,
                                                       max(old.extent_pages, f.extent_pages))
    return sorted(acc.values(), key=lambda f: -f.reads)


def format_report(output: str) -> str:
    """The probe's text of a whole run as one line per file, busiest first."""
    files = totals(parse_reports(output.splitlines()))
    if not files:
        return "no page-cache reads seen (O_DIRECT reads and files read in one go are not counted)"
    lines = ["pid      device  inode        accesses  sequential  size seen"]
    for f in files:
        lines.append(f"{f.pid:<8} {dev_name(f.dev):<7} {f.ino:<12} {f.reads:>8}  {f.sequential:>6} {f.share:>4.0%}"
                     f"  {(f.extent_pages + 1) * PAGE / 2**20:>7.1f} MiB")
    return "\n".join(lines)


class ReadSeqObserver:
    """``readseq.bt`` running under bpftrace, reporting every ``interval_s`` seconds.

    ``dev`` limits it to one filesystem device (kernel ``dev_t``; 0: every device). The
    probe ends itself after ``duration_s``; :meth:`stop` ends it sooner (SIGINT, so
    bpftrace detaches its probes). Use as a context manager.
    """

    def __init__(self, bpftrace: str, interval_s: float, duration_s: float, dev: int = 0, comm: str = "") -> None:
        self.argv = [bpftrace, str(SCRIPT), str(max(1, int(duration_s + 0.999))), comm[:15],
                     str(dev), str(max(10, round(interval_s * 1000)))]
        self._proc: subprocess.Popen[bytes] | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stderr: list[str] = []

    def start(self, timeout: float = ATTACH_TIMEOUT_S) -> None:
        """Start bpftrace and wait until its probes are attached (CapabilityError if not)."""
        env = {**os.environ, "BPFTRACE_MAP_KEYS_MAX": str(MAP_KEYS)}
        self._proc = start_process(self.argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE)
        threading.Thread(target=self._pump, args=(self._proc.stdout, self._lines), daemon=True).start()
        threading.Thread(target=self._pump, args=(self._proc.stderr, None), daemon=True).start()
        try:
            first = self._lines.get(timeout=timeout)
        except queue.Empty:
            first = None
        while first is not None and first.strip() != "readseq ready":
            first = self._lines.get(timeout=timeout)
        if first is None:
            self.stop()
            why = " | ".join(line for line in self._stderr if "RLIMIT_MEMLOCK" not in line)[-400:]
            raise CapabilityError(f"bpftrace could not attach the readseq probe: {why or 'no output'}",
                                  hint="hone doctor --capabilities says what this kernel can trace")

    def _pump(self, stream: object, sink: queue.Queue[str | None] | None) -> None:
        for raw in iter(stream.readline, b""):  # type: ignore[attr-defined]
            text = raw.decode(errors="replace")
            if sink is None:
                self._stderr.append(text.strip())
            else:
                sink.put(text)
        if sink is not None:
            sink.put(None)

    def _line_iter(self) -> Iterator[str]:
        while True:
            line = self._lines.get()
            if line is None:
                return
            yield line

    def reports(self) -> Iterator[Report]:
        """Each report as it comes; ends when the probe ends."""
        yield from parse_reports(self._line_iter())

    def failure(self) -> str:
        """Why bpftrace ended by itself ("" while it runs): its exit status and stderr."""
        proc = self._proc
        if proc is None:
            return ""
        try:
            proc.wait(timeout=5)  # its output ended: it is exiting
        except subprocess.TimeoutExpired:
            return ""
        tail = " | ".join(line for line in self._stderr if line and "RLIMIT_MEMLOCK" not in line)[-300:]
        return f"bpftrace exited with code {proc.returncode}" + (f": {tail}" if tail else "")

    def stop(self) -> None:
        proc = self._proc
        if proc is None:
            return
        self._proc = None
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGINT)
                proc.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                proc.kill()
                proc.wait(timeout=10)
        finish_process(proc)

    def __enter__(self) -> ReadSeqObserver:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


__all__ = ["FileReads", "ReadSeqObserver", "Report", "dev_name", "format_report", "kernel_dev", "parse_reports",
           "totals"]
