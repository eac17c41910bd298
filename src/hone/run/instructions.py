"""Counting the instructions a command executes: perf when the PMU counts them, else valgrind.

The built-in metric ``instructions`` (:mod:`hone.core.metrics`) is repeatable where time is not:
valgrind's counts of one program repeat exactly or within a few parts per million on this
VM (a few instructions of the environment's size; thread scheduling), its CPU time moves by
5–25%. Which counter is used is decided once per process (:func:`instruction_counter`) and
never mixed within one comparison:

* ``perf stat -e instructions:u -x,`` around the command when the probe on ``true`` gets a
  number (a hardware PMU); the command runs at full speed, so its times stay its own.
* else ``valgrind --tool=cachegrind --cache-sim=no --branch-sim=no`` (``I refs``, the
  command and every child it starts): 5–50× slower (measured here: gzip 6.5×, a tight loop
  14×, sort 27×; python3's start-up 150×), so such a run's times and RSS are valgrind's, not
  the program's, and are never compared (:attr:`InstructionCounter.timed`).

valgrind 3.19 cannot decode AVX-512 (``-march=native`` on this CPU): such a run dies with
SIGILL and fails with a message that says so, instead of giving a count.
"""

from __future__ import annotations

import functools
import re
import shutil
import signal
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from hone.core.errors import CapabilityError
from hone.core.process import ProcessResult, run_process

#: The perf event counted: instructions retired in user space (the kernel's share depends on
#: the machine's state, not on the program's code).
PERF_EVENT = "instructions:u"
#: A valgrind run may take this many times the command's timeout (counting is 5–50× slower).
VALGRIND_TIMEOUT_FACTOR = 100
#: Typical slowdown under valgrind, as the warning and the notes quote it.
VALGRIND_SLOWDOWN = "5–50×"
SIGILL_HINT = "build without -march=native (or run where perf counts instructions) to get instruction counts"
PROBE_TIMEOUT_S = 20.0
_PSIGNAL = re.compile(r"^\S+: (.+)$")
_COMMAND = re.compile(r"^==\d+== Command: (\S+)", re.MULTILINE)


class InstructionsUnavailable(CapabilityError):
    """Neither perf nor valgrind can count instructions here."""


@dataclass(frozen=True)
class InstructionCounter:
    """How instructions are counted on this machine: ``name`` is ``perf`` or ``valgrind``,
    ``tool`` its path, ``why`` the reason it was chosen."""

    name: Literal["perf", "valgrind"]
    tool: str
    why: str
    event: str = PERF_EVENT

    @property
    def timed(self) -> bool:
        """True when a counted run's times are the program's own (perf); valgrind's are not."""
        return self.name == "perf"

    def describe(self) -> str:
        if self.name == "perf":
            return f"counted by perf stat -e {self.event} ({self.why})"
        return (f"counted by valgrind --tool=cachegrind (I refs; {self.why}); runs take {VALGRIND_SLOWDOWN}"
                " longer, so their times are valgrind's and are not compared")


# ---------------------------------------------------------------- cachegrind output (shared with hone pgo)


def parse_cachegrind(text: str) -> dict[str, int]:
    """Event totals from one ``cachegrind.out`` file (its ``events:`` and ``summary:`` lines)."""
    events: list[str] = []
    for line in text.splitlines():
        if line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith("summary:") and events:
            values = [int(v) for v in line.split()[1:]]
            return dict(zip(events, values, strict=False))
    return {}


def cannot_decode(valgrind_log: str) -> bool:
    """valgrind met an instruction it cannot decode (it then raises SIGILL in the program)."""
    return "unhandled instruction bytes" in valgrind_log or "Unrecognised instruction" in valgrind_log


def sigill_message(program: str) -> str:
    """The one line that says why valgrind gave no count for ``program``."""
    return (f"valgrind cannot run {program}: it died with SIGILL on an instruction it cannot decode"
            " (valgrind does not know AVX-512; was it built with -march=native?) — no instruction count")


# ---------------------------------------------------------------- choosing the counter


def _perf_value(text: str, event: str) -> tuple[float | None, str]:
    """(count, "ok") from ``perf stat -x,`` output for ``event``, or (None, why not)."""
    for line in text.splitlines():
        fields = line.split(",")
        if line.startswith("#") or len(fields) < 3 or fields[2] != event:
            continue
        try:
            value = float(fields[0])
        except ValueError:
            return None, fields[0].strip() or "no value"
        try:
            share = float(fields[4]) if len(fields) > 4 and fields[4] else 100.0
        except ValueError:
            share = 100.0
        if share < 100.0:  # multiplexed: perf scaled a partial count, an estimate
            return None, f"counted {share:.0f}% of the time (multiplexed), perf's figure is an estimate"
        return value, "ok"
    return None, "not reported by perf"


def probe_perf(perf: str, event: str = PERF_EVENT) -> str:
    """"ok" when ``perf stat -e EVENT -x,`` counts ``true``, else perf's answer (``<not supported>``)."""
    with tempfile.TemporaryDirectory(prefix="hone-instr-") as tmp:
        out = Path(tmp) / "perf.csv"
        res = run_process([perf, "stat", "-e", event, "-x,", "-o", str(out), "--", "true"], timeout=PROBE_TIMEOUT_S)
        if not res.ok:
            return res.stderr_tail(1) or res.describe_failure()
        value, status = _perf_value(out.read_text(errors="replace") if out.exists() else "", event)
    # "not counted" on `true` means nothing ran in its few microseconds, not absence.
    return "ok" if value is not None or status == "<not counted>" else status


@functools.cache
def instruction_counter() -> InstructionCounter:
    """The counter of this machine, probed once per process: perf when it counts
    ``instructions:u``, else valgrind. Raises InstructionsUnavailable when neither can."""
    perf = shutil.which("perf")
    answer = probe_perf(perf) if perf else "perf is not installed"
    if perf and answer == "ok":
        return InstructionCounter("perf", perf, "hardware PMU")
    if perf is None:
        why = answer
    elif answer == "<not supported>":
        why = f"no PMU: perf stat -e {PERF_EVENT} answers {answer}"
    else:
        why = f"perf stat -e {PERF_EVENT} failed: {answer}"
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise InstructionsUnavailable(f"cannot count instructions: {why}, and valgrind is not installed",
                                      hint="apt-get install valgrind (scripts/setup.sh does)")
    return InstructionCounter("valgrind", valgrind, why)


_warned_slow = False
# Runs the command ("$@") and writes its exit status (128 + n: killed by signal n) to the file "$0".
_STATUS_WRAPPER = '"$@"; s=$?; echo "$s" > "$0"; exit "$s"'


def _warn_slow(counter: InstructionCounter) -> None:
    """Say once per process that counting by valgrind is slow."""
    global _warned_slow
    if not _warned_slow:
        _warned_slow = True
        print(f"warning: instructions are counted by valgrind ({counter.why}): each run takes {VALGRIND_SLOWDOWN}"
              " longer, and its times (and any figure the program measures itself) are valgrind's",
              file=sys.stderr, flush=True)


# ---------------------------------------------------------------- one counted run


@dataclass
class CountedCommand:
    """A command wrapped in the counter: run ``argv`` (with ``timeout``), then :meth:`finish`."""

    counter: InstructionCounter
    command: list[str]
    argv: list[str]
    timeout: float
    directory: Path

    def finish(self, result: ProcessResult) -> tuple[float | None, str | None]:
        """(instructions, None) of a finished run, or (None, why there is no count). A
        failed run is described with the command's own name, not the counter's."""
        own = replace(result, argv=self.command)
        if self.counter.name == "valgrind":
            for log in sorted(self.directory.glob("vg.*")):
                text = log.read_text(errors="replace")
                if cannot_decode(text):  # name the program that died (a child of a shell, say)
                    m = _COMMAND.search(text)
                    return None, sigill_message(m.group(1) if m else self.command[0])
            if not result.ok:
                return None, own.describe_failure()
            maps = [parse_cachegrind(p.read_text(errors="replace")) for p in sorted(self.directory.glob("cg.*"))]
            counts = [events["Ir"] for events in maps if "Ir" in events]
            if not counts:
                return None, f"cachegrind wrote no counts for {self.command[0]}"
            return float(sum(counts)), None
        exit_file = self.directory / "status"  # the shell's record of the command's exit status
        code = int(exit_file.read_text().strip() or 0) if exit_file.exists() else 0
        killed = next((sig for sig in signal.Signals if code == 128 + sig), None)
        if killed is None and result.ok:
            # perf stat exits 0 when the command dies of a signal; it says so (psignal) on stderr.
            m = _PSIGNAL.match(result.stderr.rstrip().rsplit("\n", 1)[-1])
            killed = next((sig for sig in signal.Signals if m and signal.strsignal(sig) == m.group(1)), None)
        if killed is not None:
            return None, f"{self.command[0]} was killed by signal {int(killed)} ({killed.name})"
        if not result.ok:
            return None, own.describe_failure()
        out = self.directory / "perf.csv"
        value, status = _perf_value(out.read_text(errors="replace") if out.exists() else "", self.counter.event)
        if value is None:
            return None, f"perf could not count {self.counter.event}: {status}"
        return value, None


@contextmanager
def counted_command(argv: list[str], timeout: float,
                    counter: InstructionCounter | None = None) -> Iterator[CountedCommand]:
    """``argv`` under the instruction counter (default :func:`instruction_counter`), with
    its output files in a private temporary directory that is removed afterwards."""
    counter = counter or instruction_counter()
    with tempfile.TemporaryDirectory(prefix="hone-instr-") as tmp:
        d = Path(tmp)
        if counter.name == "perf":
            # perf stat sometimes loses its command's death by a signal on a loaded machine (~3% of
            # runs here: no psignal line, a count as if it had finished); a shell around the command
            # writes its exit status to a file instead (the shell's few instructions count in every run)
            prefix = [counter.tool, "stat", "-e", counter.event, "-x,", "-o", str(d / "perf.csv"), "--",
                      "/bin/sh", "-c", _STATUS_WRAPPER, str(d / "status")]
            limit = timeout
        else:
            _warn_slow(counter)
            # Every process the command starts is counted (like cpu_time's waited-for children);
            # valgrind's own messages go to files, so the program's stderr stays its own.
            prefix = [counter.tool, "--tool=cachegrind", "--cache-sim=no", "--branch-sim=no", "--trace-children=yes",
                      f"--cachegrind-out-file={d}/cg.%p", f"--log-file={d}/vg.%p", "--"]
            limit = timeout * VALGRIND_TIMEOUT_FACTOR
        yield CountedCommand(counter, list(argv), [*prefix, *argv], limit, d)


__all__ = ["PERF_EVENT", "SIGILL_HINT", "VALGRIND_SLOWDOWN", "VALGRIND_TIMEOUT_FACTOR", "CountedCommand",
           "InstructionCounter", "InstructionsUnavailable", "cannot_decode", "counted_command", "instruction_counter",
           "parse_cachegrind", "probe_perf", "sigill_message"]
