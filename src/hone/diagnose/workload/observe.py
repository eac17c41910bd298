"""Watch a workload and turn what the kernel counts into :class:`Signals`.

Three ways in, one window each: a command run to its end (``observe_command``), running
processes for a number of seconds (``observe_pids``, with every descendant: a pre-forking
server's workers, a database's backends), or the whole machine (``observe_system``). In each,
``perf stat`` counts software events and syscall tracepoints over the window, ``perf record``
keeps every block request (bio) so the observed processes' own can be picked out, and a
sampler reads /proc every :data:`TICK_S` seconds for what perf does not count (memory,
threads, sockets, per-process I/O bytes, machine-wide disk and network counters).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hone.core.errors import CapabilityError, HoneError
from hone.core.process import descendants, finish_process, require_command, run_process, start_process
from hone.diagnose.perfstat import Counter, parse_perf_stat_json
from hone.diagnose.workload import procfs
from hone.diagnose.workload.blockio import BioPattern, BioRecorder, pattern
from hone.diagnose.workload.signals import Signals

TICK_S = 0.5
ATTACH_ATTEMPTS = 3
MIN_AGE_S = 1.0
# Kernel writeback counts as the observed processes' from this many bytes they dirtied (perf's
# own result file, a few KiB, must not pull in the whole machine's writeback).
DIRTIED_BYTES = 1 << 20
TRACEFS_EVENTS = Path("/sys/kernel/tracing/events")
SOFTWARE = ["duration_time", "task-clock", "context-switches", "cpu-migrations", "page-faults", "major-faults"]
PMU = ["instructions", "cycles", "LLC-loads", "LLC-load-misses"]
# signal → the syscalls whose entry tracepoints are added up for it
SYSCALL_GROUPS = {
    "fsyncs_per_s": ["fsync", "fdatasync", "sync_file_range", "msync"],
    "event_waits_per_s": ["epoll_wait", "epoll_pwait", "epoll_pwait2", "poll", "ppoll", "select", "pselect6"],
    "accepts_per_s": ["accept", "accept4"],
    "file_opens_per_s": ["open", "openat", "openat2"],
}


@dataclass
class Observation:
    """One observation: how it was made and the signals it gave."""

    mode: str  # "command", "pids" or "system"
    command: list[str]
    pids: list[int]
    window_s: float
    started: float
    signals: Signals
    notes: list[str] = field(default_factory=list)
    returncode: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "command": self.command, "pids": self.pids, "window_s": round(self.window_s, 3),
                "started": self.started, "returncode": self.returncode, "signals": self.signals.to_json(),
                "notes": self.notes}


@dataclass
class _Tools:
    perf: str | None
    events: list[str]
    tracepoints: dict[str, list[str]]  # signal → tracepoint event names available
    pmu: bool
    why_no_tracepoints: str = ""
    why_no_perf: str = ""


def _tools(pmu: bool) -> _Tools:
    perf = shutil.which("perf")
    if perf is None:
        return _Tools(None, [], {}, False, why_no_tracepoints="perf is not installed",
                      why_no_perf="perf is not installed (Debian package linux-perf)")
    if not (TRACEFS_EVENTS / "syscalls").is_dir():
        why = ("tracefs is not mounted at /sys/kernel/tracing (hone analyse --mount-tracefs mounts it, journaled)"
               if not TRACEFS_EVENTS.is_dir() else "this kernel has no syscall tracepoints")
        return _Tools(perf, SOFTWARE + (PMU if pmu else []), {}, pmu, why_no_tracepoints=why)
    syscalls = TRACEFS_EVENTS / "syscalls"
    groups = {sig: [f"syscalls:sys_enter_{n}" for n in names if (syscalls / f"sys_enter_{n}").is_dir()]
              for sig, names in SYSCALL_GROUPS.items()}
    groups["syscalls_per_s"] = ["raw_syscalls:sys_enter"] if (TRACEFS_EVENTS / "raw_syscalls").is_dir() else []
    events = SOFTWARE + (PMU if pmu else []) + [e for evs in groups.values() for e in evs]
    return _Tools(perf, events, groups, pmu)


class _Sampler(threading.Thread):
    """Reads /proc every tick until stopped: per-process memory, threads, sockets, I/O and
    CPU ticks of the processes ``pids()`` returns (None: system-wide), and the run queue."""

    def __init__(self, pids: Callable[[], set[int] | None]) -> None:
        super().__init__(daemon=True)
        self.pids = pids
        self.stopping = threading.Event()
        self.seen: set[int] = set()
        self.first: dict[int, dict[str, int]] = {}
        self.last: dict[int, dict[str, int]] = {}
        self.at_start: set[int] | None = None
        self.processes = self.threads = self.connections = self.listening = 0
        self.memory_kb = 0
        self.run_queue: list[int] = []
        self.tcp_first: dict[int, procfs.TcpCounters] = {}
        self.tcp_last: dict[int, procfs.TcpCounters] = {}
        self.tcp_at_start: set[int] | None = None
        self.ss = shutil.which("ss")
        # per thread (pid, tid) → (run + run-queue ns, voluntary, involuntary switches): a thread
        # that exits keeps what it did (a per-process sum over live threads would lose it)
        self.task_first: dict[tuple[int, int], tuple[int, int, int]] = {}
        self.task_last: dict[tuple[int, int], tuple[int, int, int]] = {}
        self.ticks = 0

    def run(self) -> None:
        # A look every 0.1 s for the first 2 s, so a command of a second is sampled several times.
        waits = iter([0.1] * 20)
        while True:
            self.tick()
            if self.stopping.wait(next(waits, TICK_S)):
                break

    def stop(self) -> None:
        self.stopping.set()
        self.join(timeout=10)
        self.tick()  # the last look, after the workload's end (command mode: what is left)

    def tick(self) -> None:
        stat = procfs.parse_stat(procfs.read_text("/proc/stat"))
        if stat is not None:
            self.run_queue.append(stat.procs_running)
        pids = self.pids()
        if pids is None:
            return
        if self.at_start is None:
            self.at_start = set(pids)
        threads = memory = 0
        sockets: set[int] = set()
        alive = 0
        for pid in pids:
            counts = self._counts(pid)
            if counts is None:
                continue
            alive += 1
            self.seen.add(pid)
            self.first.setdefault(pid, counts)
            self.last[pid] = counts
            for tid, task in self._tasks(pid).items():
                self.task_first.setdefault((pid, tid), task if self.ticks == 0 else (0, 0, 0))
                self.task_last[(pid, tid)] = task
            threads += counts.get("Threads", 0)
            memory += counts.get("Pss", 0)
            sockets |= procfs.socket_inodes(pid)
        self.ticks += 1
        self.processes = max(self.processes, alive)
        self.threads = max(self.threads, threads)
        self.memory_kb = max(self.memory_kb, memory)
        if sockets:
            established, listening = _socket_states(sockets)
            self.connections = max(self.connections, established)
            self.listening = max(self.listening, listening)
            self._tcp(sockets)
        elif self.tcp_at_start is None:
            self.tcp_at_start = set()

    def _tcp(self, sockets: set[int]) -> None:
        """Per-socket TCP counters of the observed sockets (``ss``: the kernel's tcp_info)."""
        if self.ss is None:
            return
        res = run_process([self.ss, "-tinHe"], timeout=10)
        counters = {i: c for i, c in procfs.parse_ss(res.stdout).items() if i in sockets}
        if self.tcp_at_start is None:
            self.tcp_at_start = set(counters)
        for inode, c in counters.items():
            self.tcp_first.setdefault(inode, c)
            self.tcp_last[inode] = c

    def tcp_delta(self) -> tuple[int, int, int]:
        """(payload bytes, segments, data segments) of the observed sockets over the window;
        a socket opened during it counts from zero."""
        nbytes = segs = data = 0
        start = self.tcp_at_start or set()
        for inode, last in self.tcp_last.items():
            first = self.tcp_first[inode] if inode in start else procfs.TcpCounters(0, 0, 0, 0)
            nbytes += last.bytes_sent + last.bytes_received - first.bytes_sent - first.bytes_received
            segs += last.segs - first.segs
            data += last.data_segs - first.data_segs
        return nbytes, segs, data

    @staticmethod
    def _counts(pid: int) -> dict[str, int] | None:
        status = procfs.read_text(f"/proc/{pid}/status")
        parsed = procfs.parse_pid_stat(procfs.read_text(f"/proc/{pid}/stat"))
        if not status or parsed is None:
            return None
        out = {k: v for k, v in procfs.parse_keyed(status).items() if k in ("Threads", "VmRSS")}
        out["utime"], out["stime"] = parsed[1], parsed[2]
        pss = procfs.parse_keyed(procfs.read_text(f"/proc/{pid}/smaps_rollup")).get("Pss")
        out["Pss"] = pss if pss is not None else out.get("VmRSS", 0)
        out.update({f"io_{k}": v for k, v in procfs.parse_keyed(procfs.read_text(f"/proc/{pid}/io")).items()})
        out["at_ns"] = time.monotonic_ns()
        return out

    @staticmethod
    def _tasks(pid: int) -> dict[int, tuple[int, int, int]]:
        """Each thread's (ns on a CPU + ns runnable on a run queue, voluntary, involuntary switches)."""
        out = {}
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            return out
        for tid in tasks:
            st = procfs.parse_keyed(procfs.read_text(f"/proc/{pid}/task/{tid}/status"))
            sched = procfs.read_text(f"/proc/{pid}/task/{tid}/schedstat").split()
            if len(sched) >= 2 and st:
                out[int(tid)] = (int(sched[0]) + int(sched[1]), st.get("voluntary_ctxt_switches", 0),
                                 st.get("nonvoluntary_ctxt_switches", 0))
        return out

    def task_delta(self, index: int, pid: int | None = None) -> int:
        """Σ over threads (of ``pid``, or all) of last − first of field ``index`` of :meth:`_tasks`."""
        return sum(last[index] - self.task_first[key][index] for key, last in self.task_last.items()
                   if pid is None or key[0] == pid)

    def demand(self) -> float | None:
        """CPUs the observed processes wanted: Σ over processes of their threads' (time on a CPU
        + time runnable on a run queue) / the span the process was sampled over. Unlike CPU
        time per second it does not fall when other work on the machine takes the CPUs."""
        total, any_span = 0.0, False
        for pid, last in self.last.items():
            span = last["at_ns"] - self.first[pid]["at_ns"]
            if span >= TICK_S * 1e9 / 2:
                any_span = True
                total += self.task_delta(0, pid) / span
        return total if any_span else None

    def delta(self, key: str) -> int:
        """Sum over the processes seen of (last − first) of ``key``; a process that started
        after the window opened counts from zero."""
        total = 0
        for pid, last in self.last.items():
            start = self.first[pid].get(key, 0) if self.at_start is not None and pid in self.at_start else 0
            total += last.get(key, 0) - start
        return total


def _all_sockets() -> set[int]:
    """Every TCP and unix socket on the machine (system-wide observation)."""
    out = set()
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        out |= set(procfs.parse_tcp(procfs.read_text(name)))
    return out | set(procfs.parse_unix(procfs.read_text("/proc/net/unix")))


def _socket_states(inodes: set[int]) -> tuple[int, int]:
    """(established TCP + connected unix stream sockets, listening sockets) among ``inodes``."""
    tcp: dict[int, int] = {}
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        tcp.update(procfs.parse_tcp(procfs.read_text(name)))
    unix = procfs.parse_unix(procfs.read_text("/proc/net/unix"))
    established = listening = 0
    for inode in inodes:
        if inode in tcp:
            established += tcp[inode] == procfs.TCP_ESTABLISHED
            listening += tcp[inode] == procfs.TCP_LISTEN
        elif inode in unix:
            flags, state = unix[inode]
            listening += bool(flags & procfs.UNIX_LISTENING_FLAG)
            established += state == procfs.UNIX_CONNECTED and not flags & procfs.UNIX_LISTENING_FLAG
    return established, listening


@dataclass
class _Machine:
    """Machine-wide cumulative counters at one moment."""

    at: float
    disks: dict[str, procfs.DiskCounters]
    net: dict[str, tuple[int, int, int, int]]
    snmp: dict[str, int]
    stat: procfs.CpuTicks | None
    meminfo: dict[str, int]

    @classmethod
    def now(cls) -> _Machine:
        disks = procfs.parse_diskstats(procfs.read_text("/proc/diskstats"), procfs.whole_disks())
        return cls(time.perf_counter(), disks,
                   procfs.parse_net_dev(procfs.read_text("/proc/net/dev")),
                   procfs.parse_snmp(procfs.read_text("/proc/net/snmp")),
                   procfs.parse_stat(procfs.read_text("/proc/stat")),
                   procfs.parse_keyed(procfs.read_text("/proc/meminfo")))


def _machine_signals(sig: Signals, a: _Machine, b: _Machine, window: float, *, system: bool) -> None:
    """Disk, network, memory and (system-wide) CPU figures from two machine snapshots."""
    reads = sum(b.disks[d].reads - a.disks[d].reads for d in b.disks if d in a.disks)
    writes = sum(b.disks[d].writes - a.disks[d].writes for d in b.disks if d in a.disks)
    rsect = sum(b.disks[d].read_sectors - a.disks[d].read_sectors for d in b.disks if d in a.disks)
    wsect = sum(b.disks[d].write_sectors - a.disks[d].write_sectors for d in b.disks if d in a.disks)
    busy = max((b.disks[d].io_ms - a.disks[d].io_ms for d in b.disks if d in a.disks), default=None)
    requests = reads + writes
    sig.set("disk_avg_request_kb", (rsect + wsect) * procfs.SECTOR / 1024 / requests if requests else None,
            "no disk requests in the window")
    sig.set("disk_busy_pct", busy / 10 / window if busy is not None else None, "no disk in /proc/diskstats")
    if system:
        net = [(b.net[i][k] - a.net[i][k]) for i in b.net if i in a.net for k in range(4)]
        nbytes, npackets = sum(net[0::4]) + sum(net[2::4]), sum(net[1::4]) + sum(net[3::4])
        sig.set("net_packets_per_s", npackets / window)
        sig.set("net_mb_s", nbytes / window / 2**20)
        sig.set("net_bytes_per_packet", nbytes / npackets if npackets else None, "no packets in the window")
    opens = [b.snmp.get(k, 0) - a.snmp.get(k, 0) for k in ("Tcp.ActiveOpens", "Tcp.PassiveOpens")]
    sig.set("tcp_opens_per_s", sum(opens) / window if b.snmp else None, "/proc/net/snmp unreadable")
    if "Cached" in b.meminfo:
        sig.set("page_cache_mb", b.meminfo["Cached"] / 1024)
    if system:
        sig.set("storage_read_mb_s", rsect * procfs.SECTOR / window / 2**20)
        sig.set("storage_write_mb_s", wsect * procfs.SECTOR / window / 2**20)
        if "MemTotal" in b.meminfo and "MemAvailable" in b.meminfo:
            sig.set("memory_mb", (b.meminfo["MemTotal"] - b.meminfo["MemAvailable"]) / 1024)
        if a.stat and b.stat:
            tick = os.sysconf("SC_CLK_TCK")
            busy_ticks = b.stat.busy - a.stat.busy
            sig.set("cpu_util", busy_ticks / tick / window)
            sig.set("sys_share_pct", (b.stat.system - a.stat.system) / busy_ticks * 100 if busy_ticks else None,
                    "no CPU time in the window")
            sig.set("ctx_switches_per_s", (b.stat.ctxt - a.stat.ctxt) / window)
            sig.set("wakeups_per_s", (b.stat.ctxt - a.stat.ctxt) / window)


def _perf_signals(sig: Signals, counters: Mapping[str, Counter], tools: _Tools, window: float, *,
                  system: bool) -> None:
    def value(event: str) -> float | None:
        c = counters.get(event)
        return c.value if c is not None else None

    if not system:
        task_ms = value("task-clock")
        sig.set("cpu_util", task_ms / 1000 / window if task_ms is not None else None, "perf task-clock not counted")
        switches = value("context-switches")
        sig.set("ctx_switches_per_s", switches / window if switches is not None else None, "not counted")
        cpu_s = (task_ms or 0) / 1000
        faults = value("page-faults")
        sig.set("page_faults_per_cpu_s", faults / cpu_s if faults is not None and cpu_s > 0 else None, "no CPU time")
    else:
        busy = sig.get("cpu_util")
        faults = value("page-faults")
        sig.set("page_faults_per_cpu_s", faults / window / busy if faults is not None and busy else None,
                "no CPU time")
    major = value("major-faults")
    sig.set("major_faults_per_s", major / window if major is not None else None, "perf major-faults not counted")
    for name in (*SYSCALL_GROUPS, "syscalls_per_s"):
        events = tools.tracepoints.get(name)
        if not events:
            sig.set(name, None, tools.why_no_tracepoints or "no such tracepoints on this kernel")
            continue
        counts = [value(e) for e in events]
        sig.set(name, sum(c for c in counts if c is not None) / window if any(c is not None for c in counts) else None,
                "tracepoints not counted")
    if tools.pmu:
        ins, cyc = value("instructions"), value("cycles")
        sig.set("ipc", ins / cyc if ins is not None and cyc else None, "not counted")
        loads, misses = value("LLC-loads"), value("LLC-load-misses")
        sig.set("llc_miss_pct", misses / loads * 100 if misses is not None and loads else None, "not counted")
    else:
        for name in ("ipc", "llc_miss_pct"):
            sig.set(name, None, "no hardware PMU (a VM without counters): cannot be measured here")


def _io_signals(sig: Signals, io: Mapping[str, int], window: float) -> None:
    mib = 2**20
    for name, key in (("storage_read_mb_s", "read_bytes"), ("storage_write_mb_s", "write_bytes"),
                      ("logical_read_mb_s", "rchar"), ("logical_write_mb_s", "wchar")):
        sig.set(name, io[key] / window / mib if key in io else None, "/proc/PID/io unreadable")
    calls = io.get("syscr", 0) + io.get("syscw", 0)
    sig.set("io_calls_per_s", calls / window if "syscr" in io else None, "/proc/PID/io unreadable")
    sig.set("bytes_per_io_call", (io.get("rchar", 0) + io.get("wchar", 0)) / calls if calls else None,
            "no read or write calls")


def _bio_signals(sig: Signals, p: BioPattern | None, why: str, window: float) -> None:
    if p is None:
        for name in ("bio_count", "bio_per_s", "bio_read_pct", "bio_avg_kb", "bio_seq_pct", "bio_run_kb"):
            sig.set(name, None, why)
        return
    sig.set("bio_count", p.count)
    sig.set("bio_per_s", p.count / window)
    sig.set("bio_read_pct", p.read_count / p.count * 100 if p.count else None, "no block requests")
    sig.set("bio_avg_kb", p.avg_kb, "no block requests")
    sig.set("bio_seq_pct", p.seq_pct, "fewer than two block requests from one task")
    sig.set("bio_run_kb", p.run_kb, "no block requests")


def _sampled_signals(sig: Signals, s: _Sampler, window: float, *, per_process_io: bool) -> None:
    sig.set("cpu_demand", s.demand(), "no process lived across two /proc samples")
    sig.set("processes", s.processes)
    sig.set("threads", s.threads)
    sig.set("memory_mb", s.memory_kb / 1024)
    sig.set("listen_sockets", s.listening)
    sig.set("connections", s.connections)
    if s.ss is None:
        why = "ss (iproute2) is not installed: no per-socket TCP counters"
        for name in ("net_packets_per_s", "net_mb_s", "net_bytes_per_packet"):
            sig.set(name, None, why)
    else:
        nbytes, segs, data = s.tcp_delta()
        sig.set("net_packets_per_s", segs / window)
        sig.set("net_mb_s", nbytes / window / 2**20)
        sig.set("net_bytes_per_packet", nbytes / data if data else None, "no TCP data segments in the window")
    if per_process_io:
        tick = os.sysconf("SC_CLK_TCK")
        user, system = s.delta("utime") / tick, s.delta("stime") / tick
        sig.set("sys_share_pct", system / (user + system) * 100 if user + system > 0 else None,
                "no CPU time in the window")
        vol, invol = s.task_delta(1), s.task_delta(2)
        sig.set("voluntary_switch_pct", vol / (vol + invol) * 100 if vol + invol else None, "no context switches")
        sig.set("wakeups_per_s", vol / window)
        _io_signals(sig, {k: s.delta(f"io_{k}") for k in ("read_bytes", "write_bytes", "rchar", "wchar", "syscr",
                                                          "syscw")}, window)


def _common_end(sig: Signals, s: _Sampler, a: _Machine, b: _Machine) -> None:
    sig.set("cpus", os.cpu_count() or 1)
    wakeups, util = sig.get("wakeups_per_s"), sig.get("cpu_util")
    reads = sig.get("logical_read_mb_s")
    sig.set("read_mb_per_cpu_s", reads / util if reads is not None and util else None,
            "no read figure or no CPU time")
    sig.set("cpu_us_per_wakeup", util * 1e6 / wakeups if wakeups and util is not None else None, "no wake-ups")
    sig.set("run_queue", sum(s.run_queue) / len(s.run_queue) if s.run_queue else None, "/proc/stat unreadable")
    total = b.meminfo.get("MemTotal")
    mem = sig.get("memory_mb")
    sig.set("memory_pct", mem * 1024 / total * 100 if total and mem is not None else None, "no memory figure")


def _perf_window(counters: Mapping[str, Counter], wall: float) -> float:
    """The time a command ran (perf's ``duration_time``: the workload alone, not perf's own
    start-up, which takes a second on a loaded machine), else the wall time around it. /proc
    figures are deltas over the wall time and come out as much higher."""
    duration = counters.get("duration_time")
    return duration.value / 1e9 if duration is not None and duration.value else wall


def _age_s(pid: int) -> float:
    """Seconds since ``pid`` started (0 when it is gone)."""
    text = procfs.read_text(f"/proc/{pid}/stat")
    rpar = text.rfind(")")
    uptime = procfs.read_text("/proc/uptime").split()
    try:
        start = int(text[rpar + 2:].split()[19]) / os.sysconf("SC_CLK_TCK")
        return float(uptime[0]) - start
    except (IndexError, ValueError):
        return 0.0


def _ppid(pid: int) -> int | None:
    parsed = procfs.parse_pid_stat(procfs.read_text(f"/proc/{pid}/stat"))
    return parsed[0] if parsed else None


class _Watch:
    """One window: ``perf stat`` around the workload (or a sleep), the bio recording and the /proc sampler."""

    def __init__(self, tools: _Tools, tmp: Path, pids: Callable[[], set[int] | None]) -> None:
        self.tools = tools
        self.tmp = tmp
        self.sampler = _Sampler(pids)
        self.bios = BioRecorder(tools.perf, tmp / "bio.data") if tools.perf and TRACEFS_EVENTS.is_dir() else None
        self.bio_why = ("tracefs is not mounted at /sys/kernel/tracing (hone analyse --mount-tracefs mounts it)"
                        if tools.perf else tools.why_no_perf)
        self.root: int | None = None  # the process started for the window

    def stat_argv(self, target: list[str]) -> list[str]:
        assert self.tools.perf
        return [self.tools.perf, "stat", "-j", "-o", str(self.tmp / "stat.json"), "-e", ",".join(self.tools.events),
                *target]

    def counters(self) -> dict[str, Counter]:
        path = self.tmp / "stat.json"
        return parse_perf_stat_json(path.read_text()) if path.exists() else {}


def _run_window(watch: _Watch, argv: list[str], *, timeout: float, env: Mapping[str, str] | None,
                cwd: str | None) -> tuple[int, float, _Machine, _Machine]:
    """Run ``argv`` (perf stat around the workload or a sleep) while recording and sampling."""
    if watch.bios:
        watch.bios.start()
        time.sleep(0.3)  # perf record needs a moment to open its events before the window starts
    try:
        return _run_workload(watch, argv, timeout=timeout, env=env, cwd=cwd)
    except BaseException:
        if watch.bios:
            watch.bios.abort()
        raise


def _run_workload(watch: _Watch, argv: list[str], *, timeout: float, env: Mapping[str, str] | None,
                  cwd: str | None) -> tuple[int, float, _Machine, _Machine]:
    a = _Machine.now()
    # The workload's output goes nowhere: a file would add writes of ours to what is observed.
    out = open(watch.tmp / "stderr.txt", "wb")  # noqa: SIM115 - closed below, after the process ends
    try:
        proc = start_process(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=out)
        watch.root = proc.pid
        watch.sampler.start()
        try:
            code = proc.wait(timeout=timeout)
        except Exception:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise HoneError(f"{argv[-1] if argv else 'the workload'}: timed out after {timeout:g} s",
                            hint="raise --timeout or shorten the workload") from None
        finally:
            b = _Machine.now()
            watch.sampler.stop()
            finish_process(proc)
    finally:
        out.close()
    return code, b.at - a.at, a, b


def _finish(watch: _Watch, obs: Observation, a: _Machine, b: _Machine, pids: set[int] | None, *,
            per_process_io: bool, write_dirtied: bool, system: bool = False) -> None:
    sig = obs.signals
    bios = watch.bios.stop() if watch.bios else []
    if watch.bios is None:
        _bio_signals(sig, None, watch.bio_why, obs.window_s)
    elif watch.bios.error:
        _bio_signals(sig, None, watch.bios.error, obs.window_s)
    else:
        _bio_signals(sig, pattern(bios, pids, include_writeback=write_dirtied), "", obs.window_s)
        if write_dirtied and pids is not None:
            obs.notes.append("writes of kernel writeback threads in the window count as the observed processes' "
                             "(they dirtied data); other processes' writeback may be among them")
    if not system:
        _sampled_signals(sig, watch.sampler, obs.window_s, per_process_io=per_process_io)
    _common_end(sig, watch.sampler, a, b)


def observe_command(argv: Sequence[str], *, pmu: bool = False, timeout: float = 600.0,
                    env: Mapping[str, str] | None = None, cwd: str | None = None) -> Observation:
    """Run ``argv`` to its end and observe it and its descendants. HoneError when it cannot
    start, times out, or perf is missing."""
    if not argv:
        raise HoneError("nothing to analyse", hint="hone analyse -- CMD ARGS…  |  --pid PID  |  --duration S")
    require_command(argv[0], cwd)
    tools = _tools(pmu)
    if tools.perf is None:
        raise CapabilityError(tools.why_no_perf)
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="hone-analyse-") as tmpdir:
        tmp = Path(tmpdir)

        def tree() -> set[int]:
            # the wrapper → perf → the command: everything below perf
            root = watch.root
            if root is None:
                return set()
            return {p for p in descendants(root)[1:] if _ppid(p) != root}

        watch = _Watch(tools, tmp, tree)
        wrapped = [sys.executable, "-m", "hone.diagnose._child_usage", str(tmp / "usage.json"), "--",
                   *watch.stat_argv(["--", *argv])]
        code, window, a, b = _run_window(watch, wrapped, timeout=timeout, env=env, cwd=cwd)
        usage = json.loads((tmp / "usage.json").read_text()) if (tmp / "usage.json").exists() else {}
        obs = Observation("command", list(argv), [], window, started, Signals(), returncode=code)
        counters = watch.counters()
        obs.window_s = window = _perf_window(counters, window)
        _machine_signals(obs.signals, a, b, window, system=False)
        _perf_signals(obs.signals, counters, tools, window, system=False)
        io = usage.get("io", {})
        _io_signals(obs.signals, io, window)
        user, system = usage.get("user_s", 0.0), usage.get("sys_s", 0.0)
        obs.signals.set("sys_share_pct", system / (user + system) * 100 if user + system > 0 else None,
                        "no CPU time")
        vol, invol = usage.get("voluntary_ctxt_switches", 0), usage.get("involuntary_ctxt_switches", 0)
        obs.signals.set("voluntary_switch_pct", vol / (vol + invol) * 100 if vol + invol else None,
                        "no context switches")
        obs.signals.set("wakeups_per_s", vol / window)
        _finish(watch, obs, a, b, watch.sampler.seen or None, per_process_io=False,
                write_dirtied=io.get("write_bytes", 0) >= DIRTIED_BYTES)
        if not watch.sampler.seen:
            obs.notes.append("the command ended before the first /proc sample: memory, threads and sockets not seen")
        if code != 0:
            tail = (tmp / "stderr.txt").read_text(errors="replace").strip().splitlines()[-3:]
            obs.notes.append(f"the command exited with code {code}" + (f": {' | '.join(tail)}" if tail else ""))
    obs.notes.append("I/O bytes and calls of a command include perf's own small share (read from the process "
                     "that reaps it)")
    return obs


def observe_pids(pids: Sequence[int], duration: float, *, pmu: bool = False) -> Observation:
    """Observe running processes ``pids`` and their descendants for ``duration`` seconds."""
    for pid in pids:
        if not Path(f"/proc/{pid}").is_dir():
            raise HoneError(f"--pid {pid}: no such process")
    tools = _tools(pmu)
    if tools.perf is None:
        raise CapabilityError(tools.why_no_perf)

    def tree() -> set[int]:
        return {p for root in pids for p in descendants(root)}

    started = time.time()
    with tempfile.TemporaryDirectory(prefix="hone-analyse-") as tmpdir:
        for attempt in range(1, ATTACH_ATTEMPTS + 1):
            # perf stat -p refuses a pid that exited since the scan: a database's parallel workers
            # come and go many times a second. Processes younger than MIN_AGE_S are left to
            # perf's inheritance (it counts children forked after it attached to their parent).
            at_start = sorted(p for p in tree() if p in pids or _age_s(p) >= MIN_AGE_S)
            watch = _Watch(tools, Path(tmpdir), tree)
            argv = watch.stat_argv(["-p", ",".join(map(str, at_start)), "--", "sleep", f"{duration:g}"])
            code, window, a, b = _run_window(watch, argv, timeout=duration + 60, env=None, cwd=None)
            counters = watch.counters()
            if code == 0 and "duration_time" in counters:
                break
            if watch.bios:
                watch.bios.abort()
            if attempt == ATTACH_ATTEMPTS:
                tail = (Path(tmpdir) / "stderr.txt").read_text(errors="replace").strip().splitlines()[-2:]
                raise CapabilityError(f"perf stat -p {','.join(map(str, at_start))} failed {attempt} times"
                                      + (f": {' | '.join(tail)}" if tail else ""))
        window = duration  # perf's duration_time is summed over the watched threads with -p
        obs = Observation("pids", [], list(pids), window, started, Signals())
        _machine_signals(obs.signals, a, b, window, system=False)
        _perf_signals(obs.signals, counters, tools, window, system=False)
        s = watch.sampler
        _finish(watch, obs, a, b, s.seen, per_process_io=True,
                write_dirtied=s.delta("io_write_bytes") >= DIRTIED_BYTES)
    if len(at_start) > len(pids):
        obs.notes.append(f"observed {len(at_start)} processes: the {len(pids)} given and their descendants")
    obs.notes.append("processes that started and ended between two /proc samples are missing from the per-process "
                     "I/O, memory and socket figures (perf counts them)")
    return obs


def observe_system(duration: float, *, pmu: bool = False) -> Observation:
    """Observe the whole machine for ``duration`` seconds."""
    tools = _tools(pmu)
    if tools.perf is None:
        raise CapabilityError(tools.why_no_perf)
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="hone-analyse-") as tmpdir:
        watch = _Watch(tools, Path(tmpdir), lambda: None)
        argv = watch.stat_argv(["-a", "--", "sleep", f"{duration:g}"])
        _, window, a, b = _run_window(watch, argv, timeout=duration + 60, env=None, cwd=None)
        counters = watch.counters()
        window = duration  # perf's duration_time is summed over CPUs with -a
        obs = Observation("system", [], [], window, started, Signals())
        _machine_signals(obs.signals, a, b, window, system=True)
        _perf_signals(obs.signals, counters, tools, window, system=True)
        _finish(watch, obs, a, b, None, per_process_io=False, write_dirtied=False, system=True)
        obs.signals.set("cpu_demand", obs.signals.get("run_queue"), "/proc/stat unreadable")
        for name in ("logical_read_mb_s", "logical_write_mb_s", "io_calls_per_s", "bytes_per_io_call",
                     "voluntary_switch_pct", "processes", "threads", "read_mb_per_cpu_s"):
            obs.signals.set(name, None, "per-process figure: give --pid or a command")
        established, listening = _socket_states(_all_sockets())
        obs.signals.set("connections", established)
        obs.signals.set("listen_sockets", listening)
    obs.notes.append("system-wide: every process on the machine, hone's own included")
    return obs
