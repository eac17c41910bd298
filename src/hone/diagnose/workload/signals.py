"""The figures workload analysis works from: each with its unit, meaning and where it comes from.

Rates are per second of the observation window. "The observed processes" are the command and
its descendants (``-- CMD``), the given processes and their descendants (``--pid``), or every
process (system-wide). Figures marked machine-wide cover the whole machine in every mode:
the kernel does not account them per process.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class SignalDef:
    name: str
    unit: str
    meaning: str
    source: str


_DEFS = [
    SignalDef("window_s", "s", "length of the observation", "wall clock"),
    SignalDef("cpus", "CPUs", "online CPUs", "os.cpu_count"),
    SignalDef("cpu_util", "CPUs", "CPU time of the observed processes per second (1.0 = one CPU busy)",
              "perf task-clock; system-wide: /proc/stat"),
    SignalDef("cpu_demand", "CPUs", "CPUs the observed processes wanted: time on a CPU plus time waiting on a run "
              "queue, per second (not lowered by other work taking the CPUs)", "/proc/PID/task/*/schedstat"),
    SignalDef("sys_share_pct", "%", "kernel share of that CPU time", "wait4 / /proc/PID/stat / /proc/stat"),
    SignalDef("ctx_switches_per_s", "/s", "context switches", "perf context-switches"),
    SignalDef("wakeups_per_s", "/s", "voluntary context switches: times a task blocked and was woken again",
              "wait4 rusage; --pid: /proc/PID/task/*/status; system-wide: all switches, /proc/stat"),
    SignalDef("cpu_us_per_wakeup", "µs", "CPU time per wake-up: short = wakes, does a little, sleeps again "
              "(request/response)", "CPU time / voluntary context switches"),
    SignalDef("voluntary_switch_pct", "%", "switches where the task blocked (vs was preempted)",
              "wait4 rusage; --pid: /proc/PID/task/*/status"),
    SignalDef("page_faults_per_cpu_s", "/CPU-s", "page faults per CPU-second", "perf page-faults"),
    SignalDef("major_faults_per_s", "/s", "page faults that read from disk", "perf major-faults"),
    SignalDef("processes", "", "most observed processes seen at once", "/proc"),
    SignalDef("threads", "", "most observed threads seen at once", "/proc/PID/status Threads"),
    SignalDef("memory_mb", "MiB", "largest resident memory of the observed processes (PSS: shared pages split)",
              "/proc/PID/smaps_rollup; system-wide: MemTotal - MemAvailable"),
    SignalDef("memory_pct", "%", "memory_mb as a share of the machine's memory", "/proc/meminfo MemTotal"),
    SignalDef("page_cache_mb", "MiB", "page cache at the end (machine-wide)", "/proc/meminfo Cached"),
    SignalDef("storage_read_mb_s", "MiB/s", "bytes the observed processes caused to be read from storage",
              "/proc/PID/io read_bytes; system-wide: /proc/diskstats"),
    SignalDef("storage_write_mb_s", "MiB/s", "bytes the observed processes caused to be written to storage",
              "/proc/PID/io write_bytes; system-wide: /proc/diskstats"),
    SignalDef("logical_read_mb_s", "MiB/s", "bytes read by read-like calls (files from cache or disk, sockets, pipes)",
              "/proc/PID/io rchar"),
    SignalDef("read_mb_per_cpu_s", "MiB/CPU-s", "bytes read by read-like calls per CPU-second the processes got "
              "(not lowered when other work takes the CPUs)", "/proc/PID/io rchar / CPU time"),
    SignalDef("logical_write_mb_s", "MiB/s", "bytes written by write-like calls", "/proc/PID/io wchar"),
    SignalDef("io_calls_per_s", "/s", "read-like plus write-like system calls", "/proc/PID/io syscr + syscw"),
    SignalDef("bytes_per_io_call", "B", "bytes per read-like or write-like call", "(rchar + wchar) / (syscr + syscw)"),
    SignalDef("fsyncs_per_s", "/s", "fsync, fdatasync, sync_file_range and msync calls",
              "perf syscalls:sys_enter_* tracepoints"),
    SignalDef("event_waits_per_s", "/s", "epoll_wait, poll and select calls: an event loop waiting for sockets",
              "perf syscalls:sys_enter_* tracepoints"),
    SignalDef("accepts_per_s", "/s", "accept/accept4 calls: new connections taken", "perf syscalls tracepoints"),
    SignalDef("file_opens_per_s", "/s", "open/openat calls", "perf syscalls tracepoints"),
    SignalDef("syscalls_per_s", "/s", "all system calls", "perf raw_syscalls:sys_enter"),
    SignalDef("bio_count", "", "block requests (bios) the observed processes submitted", "perf block:block_bio_queue"),
    SignalDef("bio_per_s", "/s", "bios per second (≈ IOPS before merging)", "perf block:block_bio_queue"),
    SignalDef("bio_read_pct", "%", "share of those bios that read", "perf block:block_bio_queue"),
    SignalDef("bio_avg_kb", "KiB", "average bio size", "perf block:block_bio_queue"),
    SignalDef("bio_seq_pct", "%", "bios that start where the same task's previous bio on that device ended "
              "(within 128 KiB)", "perf block:block_bio_queue sectors"),
    SignalDef("bio_run_kb", "KiB", "KiB per contiguous run of those bios (a run ends where a bio does not start "
              "within 128 KiB after the same task's previous one): large = sequential, a few KiB = random",
              "perf block:block_bio_queue sectors"),
    SignalDef("disk_avg_request_kb", "KiB", "average request size on the disks (machine-wide)", "/proc/diskstats"),
    SignalDef("disk_busy_pct", "%", "time the busiest disk had requests in flight (machine-wide)",
              "/proc/diskstats io_ticks"),
    SignalDef("listen_sockets", "", "listening TCP and unix sockets the observed processes hold (system-wide: all)",
              "/proc/PID/fd, /proc/net/tcp{,6}, /proc/net/unix"),
    SignalDef("connections", "", "most established TCP and connected unix stream sockets held at once "
              "(system-wide: all, at the end)",
              "/proc/PID/fd, /proc/net/tcp{,6}, /proc/net/unix"),
    SignalDef("net_packets_per_s", "/s", "TCP segments received + sent by the observed processes' sockets "
              "(system-wide: packets on all interfaces, loopback included)",
              "ss -tie (the kernel's tcp_info per socket); system-wide: /proc/net/dev"),
    SignalDef("net_mb_s", "MiB/s", "TCP payload bytes received + sent by the observed processes' sockets "
              "(system-wide: bytes on all interfaces)", "ss -tie; system-wide: /proc/net/dev"),
    SignalDef("net_bytes_per_packet", "B", "payload bytes per data segment (system-wide: per packet)",
              "ss -tie bytes / data_segs; system-wide: /proc/net/dev"),
    SignalDef("tcp_opens_per_s", "/s", "TCP connections opened, actively and passively (machine-wide)",
              "/proc/net/snmp"),
    SignalDef("run_queue", "tasks", "mean runnable tasks (machine-wide)", "/proc/stat procs_running"),
    SignalDef("ipc", "insn/cycle", "instructions per cycle", "perf instructions, cycles (hardware PMU)"),
    SignalDef("llc_miss_pct", "%", "last-level cache load misses", "perf LLC-load-misses / LLC-loads (hardware PMU)"),
]
SIGNALS: dict[str, SignalDef] = {d.name: d for d in _DEFS}


@dataclass
class Signals:
    """Values by signal name, and for each signal without a value why it has none."""

    values: dict[str, float] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)

    def get(self, name: str) -> float | None:
        return self.values.get(name)

    def set(self, name: str, value: float | None, why_missing: str = "no data") -> None:
        if name not in SIGNALS:
            raise KeyError(f"unknown signal {name}")
        if value is None or value != value:
            self.values.pop(name, None)
            self.missing[name] = why_missing
        else:
            self.values[name] = float(value)
            self.missing.pop(name, None)

    def why(self, name: str) -> str:
        return self.missing.get(name, "not collected")

    def to_json(self) -> dict[str, Any]:
        return {"values": {k: round(v, 4) for k, v in sorted(self.values.items())},
                "missing": dict(sorted(self.missing.items()))}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Signals:
        return cls(dict(data.get("values", {})), dict(data.get("missing", {})))
