"""Pure parsers of the /proc files workload analysis reads, and the few reads that go with them.

Parsing takes text and returns numbers so tests can pin the formats; every reader returns an
empty result for a file that is absent or unreadable (a process that exited mid-sample).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

SECTOR = 512  # bytes: /proc/diskstats and block tracepoints count 512-byte sectors whatever the device


def read_text(path: str | Path) -> str:
    try:
        return Path(path).read_text()
    except (OSError, UnicodeDecodeError):
        return ""


@dataclass(frozen=True)
class DiskCounters:
    """One device's cumulative counters from /proc/diskstats (times in ms)."""

    reads: int
    read_sectors: int
    writes: int
    write_sectors: int
    io_ms: int


def parse_diskstats(text: str, disks: set[str] | None = None) -> dict[str, DiskCounters]:
    """Counters per device; only ``disks`` when given (whole disks, not partitions)."""
    out = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) < 14 or (disks is not None and f[2] not in disks):
            continue
        out[f[2]] = DiskCounters(int(f[3]), int(f[5]), int(f[7]), int(f[9]), int(f[12]))
    return out


def whole_disks() -> set[str]:
    """Block devices that are disks, not partitions, and not loop/ram/zram devices that are idle
    by construction (zram is swap in memory here)."""
    try:
        names = os.listdir("/sys/block")
    except OSError:
        return set()
    return {n for n in names if not n.startswith(("loop", "ram", "zram"))}


def parse_net_dev(text: str) -> dict[str, tuple[int, int, int, int]]:
    """Interface → (rx bytes, rx packets, tx bytes, tx packets) from /proc/net/dev."""
    out = {}
    for line in text.splitlines()[2:]:
        name, _, rest = line.partition(":")
        f = rest.split()
        if len(f) >= 10:
            out[name.strip()] = (int(f[0]), int(f[1]), int(f[8]), int(f[9]))
    return out


def parse_snmp(text: str) -> dict[str, int]:
    """``Tcp.ActiveOpens`` … from /proc/net/snmp (header line, value line per protocol)."""
    out: dict[str, int] = {}
    lines = text.splitlines()
    for head, values in zip(lines[::2], lines[1::2], strict=False):
        proto, _, names = head.partition(":")
        _, _, nums = values.partition(":")
        for name, num in zip(names.split(), nums.split(), strict=False):
            try:
                out[f"{proto}.{name}"] = int(num)
            except ValueError:
                continue
    return out


@dataclass(frozen=True)
class CpuTicks:
    """Machine-wide CPU ticks from /proc/stat and its running-task count."""

    user: int
    system: int
    idle: int
    iowait: int
    ctxt: int
    procs_running: int

    @property
    def busy(self) -> int:
        return self.user + self.system


def parse_stat(text: str) -> CpuTicks | None:
    vals: dict[str, list[int]] = {}
    for line in text.splitlines():
        f = line.split()
        if f and f[0] in ("cpu", "ctxt", "procs_running"):
            vals[f[0]] = [int(x) for x in f[1:]]
    cpu = vals.get("cpu")
    if not cpu or len(cpu) < 7:
        return None
    # user+nice, system+irq+softirq, idle, iowait
    return CpuTicks(cpu[0] + cpu[1], cpu[2] + cpu[5] + cpu[6], cpu[3], cpu[4], vals.get("ctxt", [0])[0],
                    vals.get("procs_running", [0])[0])


def parse_keyed(text: str) -> dict[str, int]:
    """``Key: 123 kB`` (meminfo, status, io) or ``key 123`` (vmstat) lines → key → first number."""
    out = {}
    for line in text.splitlines():
        key, sep, rest = line.partition(":")
        if not sep:
            key, _, rest = line.partition(" ")
        f = rest.split()
        if f:
            try:
                out[key.strip()] = int(f[0])
            except ValueError:
                continue
    return out


def parse_pid_stat(text: str) -> tuple[int, int, int] | None:
    """(parent pid, utime ticks, stime ticks) of one process from /proc/PID/stat."""
    rpar = text.rfind(")")
    if rpar < 0:
        return None
    f = text[rpar + 2:].split()
    try:
        return int(f[1]), int(f[11]), int(f[12])
    except (IndexError, ValueError):
        return None


def socket_inodes(pid: int) -> set[int]:
    """Inodes of the sockets process ``pid`` holds open (its fd links ``socket:[N]``)."""
    out = set()
    try:
        entries = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return out
    for fd in entries:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            out.add(int(target[8:-1]))
    return out


TCP_ESTABLISHED, TCP_LISTEN = 1, 10


def parse_tcp(text: str) -> dict[int, int]:
    """Socket inode → TCP state (1 established, 10 listen, …) from /proc/net/tcp or tcp6."""
    out = {}
    for line in text.splitlines()[1:]:
        f = line.split()
        if len(f) >= 10:
            try:
                out[int(f[9])] = int(f[3], 16)
            except ValueError:
                continue
    return out


UNIX_CONNECTED, UNIX_LISTENING_FLAG = 3, 0x10000


def parse_unix(text: str) -> dict[int, tuple[int, int]]:
    """Socket inode → (flags, state) of unix sockets from /proc/net/unix (state 3: connected;
    flag 0x10000: listening)."""
    out = {}
    for line in text.splitlines()[1:]:
        f = line.split()
        if len(f) >= 7:
            try:
                out[int(f[6])] = (int(f[3], 16), int(f[5], 16))
            except ValueError:
                continue
    return out


@dataclass(frozen=True)
class TcpCounters:
    """One TCP socket's cumulative counters as ``ss -tie`` prints them (from the kernel's tcp_info)."""

    bytes_sent: int
    bytes_received: int
    segs: int
    data_segs: int


def parse_ss(text: str) -> dict[int, TcpCounters]:
    """Socket inode → counters from ``ss -tinHe`` (a socket line with ``ino:N``, then an
    indented line of ``key:value`` fields)."""
    out: dict[int, TcpCounters] = {}
    inode: int | None = None
    for line in text.splitlines():
        if not line.startswith(("\t", " ")):
            inode = None
            for word in line.split():
                if word.startswith("ino:"):
                    try:
                        inode = int(word[4:])
                    except ValueError:
                        inode = None
            continue
        if inode is None or inode == 0:
            continue
        kv: dict[str, int] = {}
        for word in line.split():
            key, sep, value = word.partition(":")
            if sep and value.isdigit():
                kv[key] = int(value)
        out[inode] = TcpCounters(kv.get("bytes_sent", 0), kv.get("bytes_received", 0),
                                 kv.get("segs_out", 0) + kv.get("segs_in", 0),
                                 kv.get("data_segs_out", 0) + kv.get("data_segs_in", 0))
    return out
