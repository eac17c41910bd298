"""Daemons that change kernel and device settings on their own: found before a study so its
measurements and its knobs are not changed underneath it, and recorded with every result.

Found two ways. By process: the executable a process runs (``/proc/PID/exe``, set by the
kernel at exec: a copy of another program renamed to ``irqbalance`` counts, ``exec -a
irqbalance sleep`` does not), or for a daemon written in a script language (tuned in Python,
ksmtuned in shell) the script: ``/proc/PID/comm`` (the kernel names a script's process after
the script file) together with the script's path in the command line. By systemd unit state
when systemd runs (``systemctl is-active``): oneshot units such as tlp and cpupower leave no
process but applied their settings at boot and re-apply them on events. Without systemd the
units are not checked and the result says so.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hone.core.process import run_process

_INTERPRETERS = ("python", "bash", "sh", "dash", "perl", "ruby")


@dataclass(frozen=True)
class Daemon:
    """One daemon: how to recognise it, and what it can change (``changes``: patterns over
    knob identities such as ``sysctl:net.*`` or ``sysfs:/sys/block/*``)."""

    name: str
    executables: tuple[str, ...]
    units: tuple[str, ...]
    what: str
    changes: tuple[str, ...]


DAEMONS: tuple[Daemon, ...] = (
    Daemon("tuned", ("tuned",), ("tuned.service",),
           "applies a tuning profile: sysctls, CPU governor and energy bias, disk scheduler and read-ahead, THP, "
           "IRQ affinity; re-applies it when it sees changes (dynamic tuning)",
           ("sysctl:*", "sysfs:/sys/devices/system/cpu/*", "sysfs:/sys/block/*", "sysfs:/sys/kernel/mm/*",
            "irq:*")),
    Daemon("bpftune", ("bpftune",), ("bpftune.service",),
           "watches the kernel with BPF and changes network sysctls on its own (TCP buffer sizes, congestion "
           "control, neighbour tables, backlogs)",
           ("sysctl:net.*",)),
    Daemon("irqbalance", ("irqbalance",), ("irqbalance.service",),
           "moves interrupts between CPUs every 10 s (/proc/irq/*/smp_affinity)",
           ("irq:*", "sysfs:/proc/irq/*")),
    Daemon("power-profiles-daemon", ("power-profiles-daemon",), ("power-profiles-daemon.service",),
           "switches CPU frequency policy and energy preference by power profile",
           ("sysfs:/sys/devices/system/cpu/*", "sysfs:/sys/firmware/acpi/platform_profile")),
    Daemon("thermald", ("thermald",), ("thermald.service",),
           "caps CPU frequency and power (RAPL, intel_pstate) when it judges the machine hot",
           ("sysfs:/sys/devices/system/cpu/*", "sysfs:/sys/class/powercap/*", "sysfs:/sys/class/thermal/*")),
    Daemon("tlp", ("tlp",), ("tlp.service",),
           "applies power settings at boot and on AC/battery changes: CPU governor, dirty-page sysctls, disk and "
           "PCIe power management",
           ("sysfs:/sys/devices/*", "sysfs:/sys/block/*", "sysfs:/sys/module/*", "sysctl:vm.*")),
    Daemon("cpupower", (), ("cpupower.service",), "sets the CPU frequency governor and limits at boot",
           ("sysfs:/sys/devices/system/cpu/*",)),
    Daemon("cpufreqd", ("cpufreqd",), ("cpufreqd.service", "cpufrequtils.service"),
           "switches the CPU frequency governor by rules (load, battery, temperature)",
           ("sysfs:/sys/devices/system/cpu/*",)),
    Daemon("ksmtuned", ("ksmtuned",), ("ksmtuned.service",),
           "starts, stops and paces kernel same-page merging by memory pressure",
           ("sysfs:/sys/kernel/mm/ksm/*",)),
    Daemon("numad", ("numad",), ("numad.service",),
           "moves processes and their memory between NUMA nodes",
           ("sysfs:/sys/kernel/mm/ksm/*", "sysctl:kernel.numa_balancing")),
    Daemon("atuned", ("atuned",), ("atuned.service",),
           "A-Tune's daemon: applies profiles and tuning results (sysctls, sysfs, service configuration files)",
           ("*",)),
)
BY_NAME = {d.name: d for d in DAEMONS}


@dataclass
class Conflict:
    """A daemon found running (or its unit active): how it was found, and its processes."""

    daemon: str
    what: str
    changes: list[str]
    found: list[str] = field(default_factory=list)
    pids: list[int] = field(default_factory=list)

    def overlapping(self, idents: dict[str, str]) -> list[str]:
        """Names of the knobs (name → identity, ``sysctl:vm.swappiness``) this daemon can change."""
        return [name for name, ident in idents.items() if any(fnmatch.fnmatchcase(ident, p) for p in self.changes)]

    def to_json(self) -> dict[str, Any]:
        return {"daemon": self.daemon, "found": self.found, "pids": self.pids, "what": self.what,
                "changes": self.changes}


@dataclass
class ConflictScan:
    conflicts: list[Conflict]
    notes: list[str]

    def to_json(self) -> list[dict[str, Any]]:
        return [c.to_json() for c in self.conflicts]


def _read(path: str) -> str:
    try:
        return Path(path).read_text(errors="replace")
    except OSError:
        return ""


def _script(cmdline: list[str], name: str) -> bool:
    """The command line runs script ``name`` under an interpreter (``python3 -Es /usr/sbin/tuned``)."""
    if not cmdline or not os.path.basename(cmdline[0]).startswith(_INTERPRETERS):
        return False
    for arg in cmdline[1:]:
        if not arg.startswith("-"):
            return os.path.basename(arg) == name
    return False


def match_process(exe: str | None, comm: str, cmdline: list[str]) -> Daemon | None:
    """The daemon a process is, from its executable, or for a script its comm and command line."""
    base = os.path.basename(exe.removesuffix(" (deleted)")) if exe else ""
    for d in DAEMONS:
        if base in d.executables:
            return d
        if comm in d.executables and base.startswith(_INTERPRETERS) and _script(cmdline, comm):
            return d
    return None


def _processes() -> list[tuple[Daemon, int, str]]:
    found = []
    me = os.getpid()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        pid = int(entry.name)
        try:
            exe = os.readlink(f"/proc/{pid}/exe")
        except OSError:
            continue  # kernel threads, processes gone
        comm = _read(f"/proc/{pid}/comm").strip()
        cmdline = [a for a in _read(f"/proc/{pid}/cmdline").split("\0") if a]
        d = match_process(exe, comm, cmdline)
        if d is not None:
            found.append((d, pid, exe))
    return found


def _units(notes: list[str]) -> list[tuple[Daemon, str, str]]:
    """(daemon, unit, state) for each unit systemd reports active; a note when it cannot tell."""
    if not Path("/run/systemd/system").is_dir():
        init = _read("/proc/1/comm").strip() or "unknown"
        notes.append(f"systemd is not running (PID 1 is {init}): daemons found by process only, "
                     "oneshot units (tlp, cpupower) not checked")
        return []
    systemctl = shutil.which("systemctl")
    if systemctl is None:
        notes.append("systemctl not found: units not checked")
        return []
    units = [(d, u) for d in DAEMONS for u in d.units]
    try:
        res = run_process([systemctl, "is-active", *(u for _, u in units)], timeout=10)
    except Exception as exc:
        notes.append(f"systemctl is-active failed: {exc}")
        return []
    states = res.stdout.split()
    if len(states) != len(units):
        notes.append(f"systemctl is-active gave {len(states)} states for {len(units)} units: units not checked")
        return []
    return [(d, u, s) for (d, u), s in zip(units, states, strict=True) if s in ("active", "activating", "reloading")]


def detect_conflicts() -> ConflictScan:
    """Every daemon of :data:`DAEMONS` that runs here (by process or systemd unit)."""
    notes: list[str] = []
    by_daemon: dict[str, Conflict] = {}

    def conflict(d: Daemon) -> Conflict:
        return by_daemon.setdefault(d.name, Conflict(d.name, d.what, list(d.changes)))

    for d, pid, exe in _processes():
        c = conflict(d)
        c.pids.append(pid)
        c.found.append(f"process {pid} ({exe})")
    for d, unit, state in _units(notes):
        conflict(d).found.append(f"systemd unit {unit} {state}")
    return ConflictScan(sorted(by_daemon.values(), key=lambda c: c.daemon), notes)
