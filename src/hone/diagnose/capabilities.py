"""What this machine lets hone observe: perf events, LBR, tracefs, bpftrace, audit, THP, CPU.

Every diagnose verb asks :func:`probe_capabilities` first and collects only what works,
then says plainly what it could not collect and why. Probes are small real commands
(``perf stat -e instructions true``), each with a timeout: a VM without a PMU answers
``<not supported>``, which is the fact we report.
"""

from __future__ import annotations

import gzip
import json
import os
import platform
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hone.core.errors import HoneError
from hone.core.process import run_process
from hone.diagnose.perfstat import parse_perf_stat_json
from hone.knobs import driver_for
from hone.run.journal import Journal, StateLock
from hone.spec.models import ScriptKnobSpec

if TYPE_CHECKING:
    from hone.knobs.base import KnobDriver

# Software events the kernel always provides (no PMU needed).
SOFTWARE_EVENTS = [
    "duration_time",  # perf's own wall clock of the workload (ns): excludes hone's launcher
    "user_time",  # ns, the workload only (perf ≥ 5.19)
    "system_time",
    "task-clock",
    "context-switches",
    "cpu-migrations",
    "page-faults",
    "minor-faults",
    "major-faults",
]
# Hardware/cache events behind the derived metrics (IPC, miss ratios); absent without a PMU.
HARDWARE_EVENTS = [
    "cycles",
    "instructions",
    "branches",
    "branch-misses",
    "cache-references",
    "cache-misses",
    "L1-dcache-loads",
    "L1-dcache-load-misses",
    "L1-icache-load-misses",
    "LLC-loads",
    "LLC-load-misses",
    "iTLB-loads",
    "iTLB-load-misses",
    "dTLB-loads",
    "dTLB-load-misses",
]
# Tracepoints counted by `hone profile` (syscalls by class) when the kernel exposes them.
TRACEPOINT_EVENTS = [
    "raw_syscalls:sys_enter",
    "syscalls:sys_enter_read",
    "syscalls:sys_enter_write",
    "syscalls:sys_enter_pread64",
    "syscalls:sys_enter_pwrite64",
    "syscalls:sys_enter_lseek",
    "syscalls:sys_enter_openat",
    "syscalls:sys_enter_fsync",
    "syscalls:sys_enter_futex",
    "syscalls:sys_enter_mmap",
]
TRACEFS = Path("/sys/kernel/tracing")
PROBE_TIMEOUT_S = 20.0


@dataclass
class Capabilities:
    """The probe's answer. ``events`` maps an event name to "ok" or why it is unusable."""

    perf: str | None = None
    perf_version: str | None = None
    events: dict[str, str] = field(default_factory=dict)
    pmu: bool = False
    pmu_why: str = ""
    lbr: bool = False
    lbr_why: str = ""
    cpu_clock_sampling: bool = False
    call_graph_dwarf: bool = False
    tracefs_mounted: bool = False
    tracefs_mounted_by_hone: bool = False
    debugfs_mounted: bool = False
    bpftrace: str | None = None
    bpftrace_why: str = ""
    inferno: dict[str, str | None] = field(default_factory=dict)
    kprobes: bool | None = None
    audit_kernel: bool | None = None
    auditctl: str | None = None
    thp_enabled: str | None = None
    thp_defrag: str | None = None
    cpu_model: str = ""
    cpus: int = 0
    governor: str | None = None
    kernel: str = ""
    perf_event_paranoid: int | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def supported_events(self) -> list[str]:
        return [e for e, status in self.events.items() if status == "ok"]

    def missing_events(self) -> dict[str, str]:
        """Unusable events and why (``<not supported>`` + the PMU explanation)."""
        return {e: s for e, s in self.events.items() if s != "ok"}

    def to_json(self) -> dict[str, Any]:
        return {"format": "hone-capabilities/1", **asdict(self)}


def _bracketed(path: Path) -> str | None:
    """The ``[selected]`` word of a sysfs choice file such as THP's ``enabled``."""
    try:
        text = path.read_text()
    except OSError:
        return None
    for word in text.split():
        if word.startswith("[") and word.endswith("]"):
            return word[1:-1]
    return text.strip() or None


def _mounted_types() -> dict[str, str]:
    """Mount point → filesystem type, from /proc/self/mounts."""
    out: dict[str, str] = {}
    try:
        for line in Path("/proc/self/mounts").read_text().splitlines():
            parts = line.split()
            if len(parts) >= 3:
                out[parts[1]] = parts[2]
    except OSError:
        pass
    return out


def _kernel_config() -> dict[str, str]:
    """``CONFIG_X`` → value from /proc/config.gz or /boot/config-$(uname -r); empty if neither."""
    text = ""
    try:
        text = gzip.decompress(Path("/proc/config.gz").read_bytes()).decode(errors="replace")
    except OSError:
        try:
            text = Path(f"/boot/config-{platform.release()}").read_text()
        except OSError:
            return {}
    config: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("CONFIG_") and "=" in line:
            key, _, value = line.partition("=")
            config[key] = value
        elif line.startswith("# CONFIG_") and line.endswith(" is not set"):
            config[line[2:].split()[0]] = "n"
    return config


def _probe_events(perf: str, events: list[str]) -> dict[str, str]:
    """Count ``events`` on ``true`` once; each gets "ok" or perf's reason."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        res = run_process([perf, "stat", "-j", "-o", out.name, "-e", ",".join(events), "--", "true"],
                          timeout=PROBE_TIMEOUT_S)
        text = Path(out.name).read_text() if res.ok else ""
    if not res.ok:
        # One bad name fails the whole list (e.g. an unknown tracepoint): probe one by one.
        if len(events) == 1:
            return {events[0]: "unknown to perf: " + (res.stderr_tail(1) or "perf stat failed")}
        status: dict[str, str] = {}
        for ev in events:
            status.update(_probe_events(perf, [ev]))
        return status
    counters = parse_perf_stat_json(text)
    status = {}
    for ev in events:
        c = counters.get(ev)
        if c is None:
            status[ev] = "not reported by perf"
        elif c.status in ("ok", "not counted"):
            # "not counted" on `true` means nothing happened in its few microseconds, not absence.
            status[ev] = "ok"
        else:
            status[ev] = c.status
    return status


# The tracefs mount as a knob, so the journal records it before the change and `hone rollback`
# undoes it (also after kill -9). Fixed argv scripts: the value reaches them as $1, never as text.
_TRACEFS_GET = 'if mountpoint -q "$1"; then echo mounted; else echo unmounted; fi'
_TRACEFS_SET = 'if [ "$2" = mounted ]; then mount -t tracefs nodev "$1"; else umount "$1"; fi'


def tracefs_mount_knob(mountpoint: Path = TRACEFS) -> KnobDriver:
    """A ``script`` knob whose value is ``mounted``/``unmounted`` (tracefs at ``mountpoint``)."""
    return driver_for(ScriptKnobSpec(
        name="tracefs-mount", kind="script", values=["unmounted", "mounted"],
        get=["sh", "-c", _TRACEFS_GET, "hone-tracefs", str(mountpoint)],
        set=["sh", "-c", _TRACEFS_SET, "hone-tracefs", str(mountpoint), "$value"],
        timeout=PROBE_TIMEOUT_S, description=f"tracefs mounted at {mountpoint} by hone doctor --mount-tracefs"))


def probe_capabilities(*, allow_mount: bool = False) -> Capabilities:
    """Probe the machine. With ``allow_mount`` a missing tracefs is mounted at
    /sys/kernel/tracing (a system change: the caller reports ``tracefs_mounted_by_hone``)."""
    caps = Capabilities(kernel=platform.release(), cpus=os.cpu_count() or 0)
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                caps.cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    gov = Path("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
    caps.governor = gov.read_text().strip() if gov.exists() else None
    if caps.governor is None:
        caps.notes.append("no cpufreq governor (no cpufreq driver; usual in a VM): frequency is not ours to set")
    caps.thp_enabled = _bracketed(Path("/sys/kernel/mm/transparent_hugepage/enabled"))
    caps.thp_defrag = _bracketed(Path("/sys/kernel/mm/transparent_hugepage/defrag"))
    try:
        caps.perf_event_paranoid = int(Path("/proc/sys/kernel/perf_event_paranoid").read_text())
    except (OSError, ValueError):
        pass
    config = _kernel_config()
    if config:
        caps.kprobes = config.get("CONFIG_KPROBES", "n") == "y"
        caps.audit_kernel = config.get("CONFIG_AUDIT", "n") == "y"
    caps.auditctl = shutil.which("auditctl")

    mounts = _mounted_types()
    caps.tracefs_mounted = mounts.get(str(TRACEFS)) == "tracefs" or (TRACEFS / "events").is_dir()
    caps.debugfs_mounted = mounts.get("/sys/kernel/debug") == "debugfs"
    if not caps.tracefs_mounted and allow_mount and os.geteuid() == 0:
        try:
            with StateLock(purpose="hone doctor --mount-tracefs"):
                Journal().write(tracefs_mount_knob(), "mounted")
        except HoneError as exc:  # KnobError too: mount refused, or another hone holds the state
            caps.notes.append(f"could not mount tracefs: {exc}")
        else:
            caps.tracefs_mounted = caps.tracefs_mounted_by_hone = True
            caps.notes.append(f"mounted tracefs at {TRACEFS} (journaled: `hone rollback` unmounts it)")
    elif not caps.tracefs_mounted:
        caps.notes.append(f"tracefs is not mounted at {TRACEFS}: tracepoints and bpftrace are unavailable"
                          " (hone doctor --mount-tracefs mounts it, as root)")

    for tool in ("inferno-collapse-perf", "inferno-flamegraph", "inferno-diff-folded"):
        caps.inferno[tool] = find_tool(tool)

    caps.perf = shutil.which("perf")
    if caps.perf is None:
        caps.pmu_why = caps.lbr_why = "perf is not installed (Debian: linux-perf)"
        caps.notes.append(caps.pmu_why)
    else:
        _probe_perf(caps, caps.perf)
    _probe_bpftrace(caps)
    return caps


def _probe_perf(caps: Capabilities, perf: str) -> None:
    ver = run_process([perf, "--version"], timeout=PROBE_TIMEOUT_S)
    caps.perf_version = ver.stdout.strip() or None
    tracing = caps.tracefs_mounted or caps.debugfs_mounted
    # One perf call for all events (one by one only if perf rejects the list).
    caps.events.update(_probe_events(perf, SOFTWARE_EVENTS + HARDWARE_EVENTS + (TRACEPOINT_EVENTS if tracing else [])))
    if not tracing:
        for ev in TRACEPOINT_EVENTS:
            caps.events[ev] = "tracefs not mounted"
    caps.pmu = caps.events.get("instructions") == "ok" and caps.events.get("cycles") == "ok"
    if not caps.pmu:
        caps.pmu_why = _pmu_explanation()
    with tempfile.TemporaryDirectory(prefix="hone-caps-") as tmp:
        # The three record probes are independent: run them side by side (each ~0.5 s).
        probes = {
            "cpu-clock": ["-F", "999", "-g", "-e", "cpu-clock"],
            "dwarf": ["--call-graph", "dwarf", "-e", "cpu-clock"],
            "lbr": ["-b"],
        }
        with ThreadPoolExecutor(max_workers=len(probes)) as pool:
            futures = {name: pool.submit(run_process, [perf, "record", "-q", *args, "-o",
                                                       str(Path(tmp) / f"{name}.data"), "--", "true"],
                                         timeout=PROBE_TIMEOUT_S)
                       for name, args in probes.items()}
            rec, dwarf, lbr = (futures[n].result() for n in probes)
        caps.cpu_clock_sampling = rec.ok
        caps.call_graph_dwarf = dwarf.ok
        caps.lbr = lbr.ok
        if not lbr.ok:
            caps.lbr_why = lbr.stderr_tail(2) or "perf record -b failed"


def _pmu_explanation() -> str:
    """Why hardware counters are missing, in the kernel's own words when dmesg has them."""
    res = run_process(["dmesg"], timeout=PROBE_TIMEOUT_S) if shutil.which("dmesg") else None
    if res is not None and res.ok:
        for line in res.stdout.splitlines():
            if "PMU not available" in line or "no PMU" in line.lower():
                return "no hardware PMU: kernel says " + line.split("]", 1)[-1].strip()
    virt = Path("/sys/hypervisor/type")
    hint = " (running under a hypervisor)" if virt.exists() or _is_vm() else ""
    return f"no hardware PMU{hint}: perf stat -e instructions answers <not supported>"


def _is_vm() -> bool:
    try:
        return " hypervisor" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


def _probe_bpftrace(caps: Capabilities) -> None:
    caps.bpftrace = shutil.which("bpftrace")
    if caps.bpftrace is None:
        caps.bpftrace_why = "bpftrace is not installed (Debian: bpftrace; make setup installs it)"
        return
    if not caps.tracefs_mounted:
        caps.bpftrace_why = "tracefs is not mounted"
        caps.bpftrace = None
        return
    res = run_process([caps.bpftrace, "-e", "tracepoint:raw_syscalls:sys_enter /pid == -1/ {} "
                       "interval:ms:100 { exit(); }"], timeout=PROBE_TIMEOUT_S)
    if not res.ok:
        caps.bpftrace_why = res.stderr_tail(2) or res.describe_failure()
        caps.bpftrace = None


def find_tool(name: str) -> str | None:
    """A tool on PATH, else in ~/.cargo/bin (where `make setup` installs inferno)."""
    found = shutil.which(name)
    if found:
        return found
    cargo = Path.home() / ".cargo" / "bin" / name
    return str(cargo) if cargo.exists() else None


def capabilities_json(caps: Capabilities) -> str:
    return json.dumps(caps.to_json(), indent=2)

