"""When to switch a device's read-ahead: A-Tune's readahead_tune thresholds, per device.

A-Tune judges each file over a window (``read-time-threshold``, 500 ms; at least
``total-read-threshold`` reads, 10) and marks it random when its sequential share is at or
below ``lower-bound-percentage`` (30) and clears the mark at or above
``upper-bound-percentage`` (70); files under ``filesz-threshold`` (4 MiB) are always read
ahead. Here the same thresholds decide one device's ``read_ahead_kb``: every interval, the
files that qualify (enough accesses, large enough) pool their accesses; a share at or below
``lower_pct`` selects ``random_kb``, at or above ``upper_pct`` ``sequential_kb``, and
between the two the device keeps what it has (hysteresis). No qualifying file: no change.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from hone.core.errors import HoneError

Mode = Literal["random", "sequential"]


@dataclass(frozen=True)
class ReadaheadPolicy:
    """The controller's parameters (the knobs a spec can tune)."""

    lower_pct: float = 30.0  # A-Tune lower-bound-percentage
    upper_pct: float = 70.0  # A-Tune upper-bound-percentage
    min_file_kb: int = 4096  # A-Tune filesz-threshold: smaller files do not count
    min_reads: int = 10  # A-Tune total-read-threshold: fewer accesses in an interval do not count
    interval_s: float = 0.5  # A-Tune read-time-threshold
    random_kb: int = 16
    sequential_kb: int = 1024

    def check(self) -> None:
        """HoneError naming the first parameter out of its domain."""
        if not 0 < self.lower_pct < self.upper_pct < 100:
            raise HoneError(f"--lower {self.lower_pct:g} / --upper {self.upper_pct:g}: expected 0 < lower < upper"
                            " < 100 (sequential share, %)")
        if self.min_reads < 1:
            raise HoneError(f"--min-reads {self.min_reads}: expected at least 1")
        if self.min_file_kb < 0:
            raise HoneError(f"--min-file-kb {self.min_file_kb}: expected 0 or more")
        if not 0.05 <= self.interval_s <= 3600:
            raise HoneError(f"--interval {self.interval_s:g}: expected 0.05 to 3600 seconds")
        for flag, kb in (("--random-kb", self.random_kb), ("--sequential-kb", self.sequential_kb)):
            if not 4 <= kb <= 1 << 20:
                # 0 would make the kernel read a page at a time, even for a large read(2)
                raise HoneError(f"{flag} {kb}: expected 4 to 1048576 KB")

    def size_of(self, mode: Mode) -> int:
        return self.random_kb if mode == "random" else self.sequential_kb

    @property
    def adaptive(self) -> bool:
        """False when both sizes are one: the device is held there, nothing to observe."""
        return self.random_kb != self.sequential_kb


@dataclass(frozen=True)
class FileSample:
    """One file's accesses in one interval, with what is known of its size."""

    reads: int
    sequential: int
    size_bytes: int | None  # None: its reader is gone; the extent read stands in
    extent_bytes: int = 0
    label: str = ""


@dataclass(frozen=True)
class Decision:
    """What an interval's evidence says: a mode, or None to keep the current one."""

    mode: Mode | None
    share: float  # pooled sequential share of the qualifying files, 0..1 (0 without any)
    files: int  # qualifying files
    reads: int  # their accesses
    labels: tuple[str, ...] = ()


def qualifies(policy: ReadaheadPolicy, f: FileSample) -> bool:
    size = f.size_bytes if f.size_bytes is not None else f.extent_bytes
    return f.reads >= policy.min_reads and size >= policy.min_file_kb * 1024


def decide(policy: ReadaheadPolicy, samples: Sequence[FileSample], current: Mode | None) -> Decision:
    """The mode the device should be in after this interval (hysteresis: between the bounds,
    and without evidence, ``current`` stays)."""
    chosen = [f for f in samples if qualifies(policy, f)]
    reads = sum(f.reads for f in chosen)
    if not reads:
        return Decision(current, 0.0, 0, 0)
    share = sum(min(f.sequential, f.reads) for f in chosen) / reads  # a report can split a count
    mode: Mode | None = current
    if share * 100 <= policy.lower_pct:
        mode = "random"
    elif share * 100 >= policy.upper_pct:
        mode = "sequential"
    busiest = sorted(chosen, key=lambda f: -f.reads)[:3]
    return Decision(mode, share, len(chosen), reads, tuple(f.label for f in busiest if f.label))


__all__ = ["Decision", "FileSample", "Mode", "ReadaheadPolicy", "decide", "qualifies"]
