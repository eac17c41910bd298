"""``hone adapt readahead``: switch one device's read-ahead as its readers' pattern changes.

The ``readseq`` probe (page-cache tracepoints, :mod:`hone.diagnose.readseq`) reports every
interval how sequential each process's accesses to each file on the device were;
:func:`hone.adapt.policy.decide` turns a report into a mode; a change of mode writes the
device's ``read_ahead_kb`` through the journal (original first, read back), and gives
``POSIX_FADV_NORMAL`` to the open files whose own pattern agrees with the new mode, so
readers that opened them before the switch take the new window too
(:mod:`hone.adapt.openfiles`). At the end — the duration, Ctrl-C, SIGTERM — the device gets
its value back and the advised files the device's window; after ``kill -9``, ``hone
rollback`` restores the device. The machine lock is held throughout.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from hone.adapt.device import BlockDevice
from hone.adapt.openfiles import FileAdvisor, file_facts
from hone.adapt.policy import Decision, FileSample, Mode, ReadaheadPolicy, decide
from hone.core.errors import CapabilityError, HoneError
from hone.core.faults import crash_point
from hone.diagnose.capabilities import TRACEFS, tracefs_mount_knob
from hone.diagnose.readseq import PAGE, FileReads, ReadSeqObserver, Report
from hone.knobs import KnobDriver
from hone.knobs.base import same_text
from hone.run.journal import Journal, MachineLock

#: The longest run without --duration (the probe needs an end of its own): a year.
FOREVER_S = 366 * 86400.0
#: Files whose path and size are remembered between reports.
FACTS_KEPT = 4096


@dataclass
class Switch:
    """One change of the device's read-ahead."""

    at_s: float  # seconds since the controller started watching
    from_kb: int
    to_kb: int
    mode: Mode
    share: float
    files: int
    reads: int
    advised: int  # open files that took the new window
    labels: tuple[str, ...] = ()


@dataclass
class AdaptSummary:
    device: str
    original_kb: int
    policy: ReadaheadPolicy
    switches: list[Switch] = field(default_factory=list)
    seconds: float = 0.0
    reports: int = 0
    in_mode_s: dict[str, float] = field(default_factory=dict)  # random/sequential/original/held -> seconds
    advise_failed: int = 0
    restored: bool = False
    probe_error: str = ""  # why the probe ended before the run did ("": it did not)


class ReadaheadController:
    """One run of the controller on one device."""

    def __init__(self, device: BlockDevice, policy: ReadaheadPolicy, *, advise: bool = True,
                 journal: Journal | None = None, say: Callable[[str], None] = print) -> None:
        policy.check()
        self.device = device
        self.policy = policy
        self.advise = advise
        self.journal = journal or Journal()
        self.say = say
        self.driver: KnobDriver = device.driver()
        self.advisor = FileAdvisor()
        self.mode: Mode | None = None
        self._epoch_files: set[tuple[int, int, int]] = set()  # advised since the last switch
        self._facts: dict[tuple[int, int, int], tuple[str, int | None]] = {}

    # -- the run ---------------------------------------------------------------

    def run(self, duration_s: float | None = None) -> AdaptSummary:
        """Watch and switch until ``duration_s`` (None: until Ctrl-C or SIGTERM), then restore."""
        if os.geteuid() != 0:
            raise HoneError(f"hone adapt readahead writes {self.device.readahead}: run it as root")
        with MachineLock(purpose=f"hone adapt readahead {self.device.name}"):
            return self._locked(duration_s)

    def _locked(self, duration_s: float | None) -> AdaptSummary:
        res = self.driver.resource()
        self.journal.preflight([self.driver])
        self.journal.refuse_foreign([res])
        pre_active = any(e.resource == res for e in self.journal.active())
        start_text = self.driver.read() or "0"
        summary = AdaptSummary(self.device.name, int(start_text), self.policy)
        mounted = False
        observer: ReadSeqObserver | None = None
        t0 = time.monotonic()
        last = t0
        try:
            if self.policy.adaptive:
                bpftrace = shutil.which("bpftrace")
                if bpftrace is None:
                    raise CapabilityError("bpftrace is not installed (Debian: bpftrace)",
                                          hint="make bench-readahead installs it")
                mounted = self._ensure_tracefs()
                observer = ReadSeqObserver(bpftrace, self.policy.interval_s, duration_s or FOREVER_S,
                                           dev=self.device.dev or 0)
                observer.start()
                t0 = last = time.monotonic()
                self.say(f"hone adapt readahead: watching {self.device.name} (read_ahead_kb {start_text}; "
                         f"{self.policy.random_kb} KB at <= {self.policy.lower_pct:g}% sequential, "
                         f"{self.policy.sequential_kb} KB at >= {self.policy.upper_pct:g}%)")
                for report in observer.reports():
                    now = time.monotonic()
                    key = self.mode or "original"
                    summary.in_mode_s[key] = summary.in_mode_s.get(key, 0.0) + now - last
                    last = now
                    summary.reports += 1
                    switch = self.step(report, now - t0)
                    if switch is not None:
                        summary.switches.append(switch)
                if duration_s is None or time.monotonic() - t0 < duration_s - 2 * self.policy.interval_s:
                    summary.probe_error = observer.failure() or "bpftrace ended before the duration"
            else:
                self._write(self.policy.random_kb)
                t0 = last = time.monotonic()
                self.say(f"hone adapt readahead: holding {self.device.name} at {self.policy.random_kb} KB "
                         f"(was {start_text}; both sizes are one: nothing to observe)")
                self._sleep(duration_s)
        except KeyboardInterrupt:
            pass  # Ctrl-C or SIGTERM: the normal end of a run without --duration
        finally:
            with _signals_held():
                now = time.monotonic()
                key = self.mode or ("original" if self.policy.adaptive else "held")
                summary.in_mode_s[key] = summary.in_mode_s.get(key, 0.0) + now - last
                summary.seconds = now - t0
                if observer is not None:
                    observer.stop()
                crash_point("adapt.exiting")
                summary.restored = self._restore(res, pre_active, start_text, mounted)
                summary.advise_failed = self.advisor.failed
        return summary

    def _sleep(self, duration_s: float | None) -> None:
        end = time.monotonic() + (duration_s or FOREVER_S)
        while (left := end - time.monotonic()) > 0:
            time.sleep(min(left, 1.0))

    # -- one interval ------------------------------------------------------------

    def samples(self, report: Report) -> list[tuple[FileReads, FileSample]]:
        """The report's files on this device, each with its size (read from its reader)."""
        out = []
        for f in report.files:
            if f.dev not in self.device.devs:
                continue
            key = (f.pid, f.dev, f.ino)
            if key not in self._facts:
                if len(self._facts) >= FACTS_KEPT:
                    self._facts.clear()  # readers come and go: look the current ones up again
                facts = file_facts(f.pid, f.dev, f.ino)
                self._facts[key] = (facts.path, facts.size) if facts else (f"inode {f.ino}", None)
            label, size = self._facts[key]
            out.append((f, FileSample(f.reads, f.sequential, size, (f.extent_pages + 1) * PAGE, label)))
        return out

    def step(self, report: Report, at_s: float) -> Switch | None:
        """Decide on one report; switch (journaled) and advise the open files that agree."""
        pairs = self.samples(report)
        decision = decide(self.policy, [s for _, s in pairs], self.mode)
        switch = None
        if decision.mode is not None and decision.mode != self.mode:
            before = int(self.driver.read() or 0)
            kb = self.policy.size_of(decision.mode)
            self._write(kb)
            self.mode = decision.mode
            self._epoch_files.clear()
            crash_point("adapt.switched")
            switch = Switch(round(at_s, 2), before, kb, decision.mode, decision.share, decision.files,
                            decision.reads, 0, decision.labels)
        advised = self._advise_agreeing(pairs, decision) if self.advise and self.mode is not None else 0
        if switch is not None:
            switch.advised = advised
            self.say(_describe(switch, self.policy))
        return switch

    def _advise_agreeing(self, pairs: list[tuple[FileReads, FileSample]], decision: Decision) -> int:
        """NORMAL advice to qualifying files whose own share agrees with the device's mode and
        that were not advised since the last switch (a file the reader marked RANDOM keeps
        its mark while it reads randomly under a sequential device)."""
        took = 0
        for f, s in pairs:
            key = (f.pid, f.dev, f.ino)
            if key in self._epoch_files:
                continue
            own = decide(self.policy, [s], None).mode
            if own is None or own != self.mode:
                continue
            self._epoch_files.add(key)
            took += self.advisor.normal(f.pid, f.dev, f.ino)
        return took

    # -- changes and their undoing ---------------------------------------------------

    def _write(self, kb: int) -> None:
        if not same_text(self.driver.read(), str(kb)):
            self.journal.apply([(self.driver, str(kb))])

    def _ensure_tracefs(self) -> bool:
        """Mount tracefs (journaled) when it is not; True when this run mounted it."""
        if (TRACEFS / "events").is_dir():
            return False
        self.journal.write(tracefs_mount_knob(), "mounted")
        self.say(f"mounted tracefs at {TRACEFS} (journaled; unmounted at the end)")
        return True

    def _restore(self, res: str, pre_active: bool, start_text: str, mounted: bool) -> bool:
        """The device back to its value at the start, then the advised files to its window."""
        ok = True
        if pre_active:
            if not same_text(self.driver.read(), start_text):
                self.journal.apply([(self.driver, start_text)])
        else:
            mine = [e for e in self.journal.active() if e.resource == res]
            ok = all(o.ok for o in self.journal.restore(mine))
        if self.advisor.advised:
            self.advisor.reset()
        if mounted:
            tracefs = tracefs_mount_knob().resource()
            ok = all(o.ok for o in self.journal.restore([e for e in self.journal.active() if e.resource == tracefs]))\
                and ok
        return ok and same_text(self.driver.read(), start_text)


def _describe(s: Switch, policy: ReadaheadPolicy) -> str:
    files = ", ".join(s.labels) or f"{s.files} file(s)"
    advised = f"; {s.advised} open file(s) advised" if s.advised else ""
    return (f"[{s.at_s:7.2f} s] read_ahead_kb {s.from_kb} -> {s.to_kb} ({s.mode}: {s.share:.0%} of {s.reads} "
            f"accesses sequential in {files}{advised})")


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM wait while the device is restored (a second one must not cut it short)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, _ignore) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _ignore(signum: int, frame: object) -> None:
    pass


__all__ = ["AdaptSummary", "ReadaheadController", "Switch"]
